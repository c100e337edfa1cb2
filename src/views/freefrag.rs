//! Free-space fragmentation, as e2fprogs' `e2freefrag` computes it offline (misc/e2freefrag.c:
//! `scan_block_bitmap`, `update_chunk_stats`, `dump_chunk_info`).
//!
//! e2freefrag walks every block from `s_first_data_block` to the end in "chunks" of a fixed size,
//! asking the block bitmap (loaded like `ext2fs_read_block_bitmap`) whether each block is in use.
//! Maximal runs of free blocks are the free extents of the histogram; a chunk whose blocks are
//! all free counts as a free chunk. Two quirks are kept because the output must match:
//! - with bigalloc, e2freefrag shifts the block number to a cluster number and libext2fs'
//!   bitmap test shifts it again, so block `b` reads the bit of cluster `b >> (2 * cluster_bits)`;
//! - the first chunk starts at `s_first_data_block`, so with 1 KiB blocks it is one block short and
//!   never counts as free.
//!
//! Here the bitmap is read one group at a time, in parallel; each group yields a summary (free
//! run touching its start, free run touching its end, and statistics of the runs inside it), and
//! the summaries are joined in order. Memory stays bounded by a batch of groups.

use crate::error::{Error, Problem, ProblemKind, Result};
use crate::reader::bitmap::{self, Kind, UninitMarks};
use crate::reader::fs::Filesystem;
use rayon::prelude::*;
use serde::Serialize;

/// Histogram buckets (MAX_HIST in e2freefrag.h).
pub const MAX_HIST: usize = 32;
/// Chunk size used when none is given (DEFAULT_CHUNKSIZE, 1 MiB).
pub const DEFAULT_CHUNK_BYTES: u64 = 1 << 20;

/// `ul_log2`: the index of the highest set bit (0 for 0 and 1).
pub fn ul_log2(mut value: u64) -> u32 {
    let mut log = 0;
    value >>= 1;
    while value != 0 {
        log += 1;
        value >>= 1;
    }
    log
}

/// Why e2freefrag would stop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum Failure {
    /// `ext2fs_read_block_bitmap` failed (the libext2fs message).
    ReadBitmap(&'static str),
}

/// One histogram row.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Bucket {
    /// Row index (extents of `2^(index-1)` up to `2^index - 1` blocks).
    pub index: usize,
    /// Smallest extent size of the row, in KiB.
    pub min_kb: u64,
    /// Number of free extents.
    pub extents: u64,
    /// Free blocks in those extents.
    pub blocks: u64,
    /// Share of the superblock's free block count, in percent.
    pub percent: f64,
    /// The range as e2freefrag prints it (`   4K...    8K-`).
    #[serde(skip)]
    pub label: String,
}

/// Chunk figures (printed only when a chunk size was given).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Chunks {
    /// Chunk size in bytes.
    pub chunk_bytes: u64,
    /// Blocks per chunk.
    pub blocks_per_chunk: u32,
    /// Chunks in the filesystem.
    pub total: u64,
    /// Chunks entirely free.
    pub free: u64,
    /// Free chunks, percent of all.
    pub free_percent: f64,
}

/// Everything e2freefrag prints.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Report {
    /// Filesystem block size.
    pub block_size: u64,
    /// Blocks in the filesystem.
    pub total_blocks: u64,
    /// From the superblock, as e2freefrag prints it.
    pub free_blocks: u64,
    /// Free blocks, percent of all.
    pub free_percent: f64,
    /// Present when a chunk size was given.
    pub chunks: Option<Chunks>,
    /// Smallest free extent, KiB.
    pub min_extent_kb: u64,
    /// Largest free extent, KiB.
    pub max_extent_kb: u64,
    /// Average free extent, KiB.
    pub avg_extent_kb: u64,
    /// Free extents counted.
    pub free_extents: u64,
    /// Free chunks counted even when no chunk size was given (for the default 1 MiB).
    #[serde(skip)]
    pub default_free_chunks: u64,
    /// Free extents by power-of-two size.
    pub histogram: Vec<Bucket>,
}

/// Run statistics, merged across groups.
#[derive(Clone, Debug)]
struct Stats {
    count: [u64; MAX_HIST],
    blocks: [u64; MAX_HIST],
    min: u64,
    max: u64,
    sum: u64,
    runs: u64,
    free_chunks: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            count: [0; MAX_HIST],
            blocks: [0; MAX_HIST],
            min: u64::MAX,
            max: 0,
            sum: 0,
            runs: 0,
            free_chunks: 0,
        }
    }
}

impl Stats {
    fn merge(&mut self, other: &Stats) {
        for bucket in 0..MAX_HIST {
            self.count[bucket] += other.count[bucket];
            self.blocks[bucket] += other.blocks[bucket];
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum = self.sum.wrapping_add(other.sum);
        self.runs += other.runs;
        self.free_chunks += other.free_chunks;
    }
}

/// The chunk grid as e2freefrag's loop lays it out.
#[derive(Clone, Copy, Debug)]
struct Grid {
    first: u64,
    blocks: u64,
    bic: u64,
    /// End of chunk 0 (which starts at `first`).
    c0_end: u64,
    total: u64,
}

impl Grid {
    fn new(first: u64, blocks: u64, bic: u64, chunk_shift: u32) -> Grid {
        let num0 = bic.min(blocks);
        Grid {
            first,
            blocks,
            bic,
            c0_end: num0.max(first + 1),
            total: (blocks + bic) >> chunk_shift,
        }
    }

    /// Number of full-size chunks lying entirely in the free run `[start, end)`.
    fn full_chunks_in(&self, start: u64, end: u64) -> u64 {
        let mut count = 0;
        if self.c0_end - self.first == self.bic && start <= self.first && self.c0_end <= end {
            count += 1;
        }
        let end = end.min(self.blocks);
        if self.total < 2 || end < self.c0_end + self.bic {
            return count;
        }
        let lo = if start > self.c0_end {
            (start - self.c0_end).div_ceil(self.bic)
        } else {
            0
        };
        let hi = ((end - self.bic - self.c0_end) / self.bic).min(self.total - 2);
        if hi >= lo {
            count += hi - lo + 1;
        }
        count
    }

    fn add_run(&self, st: &mut Stats, start: u64, len: u64) {
        if len == 0 {
            return;
        }
        let idx = ((ul_log2(len) + 1) as usize).min(MAX_HIST - 1);
        st.count[idx] += 1;
        st.blocks[idx] += len;
        st.min = st.min.min(len);
        st.max = st.max.max(len);
        st.sum = st.sum.wrapping_add(len);
        st.runs += 1;
        st.free_chunks += self.full_chunks_in(start, start + len);
    }
}

/// What one group contributes.
#[derive(Debug, Default)]
struct Segment {
    start: u64,
    len: u64,
    /// Free blocks from the start.
    prefix: u64,
    /// Free blocks up to the end.
    suffix: u64,
    inner: Stats,
}

/// How block numbers map to bitmap bits.
#[derive(Clone, Copy, Debug)]
struct BitMap {
    /// Block `b` reads the bit of unit `b >> shift`.
    shift: u32,
    /// First unit the bitmap covers (first_data_block >> cluster_bits).
    start_unit: u64,
    units_per_group: u64,
}

/// Next index in `[from, limit)` whose bit equals `set` (or `limit`).
fn next_bit(bm: &[u8], mut from: u64, limit: u64, set: bool) -> u64 {
    while from < limit {
        if from % 64 == 0 && from + 64 <= limit {
            let byte = (from / 8) as usize;
            if let Some(word) = bm.get(byte..byte + 8) {
                let mut raw = [0u8; 8];
                raw.copy_from_slice(word);
                let mut bits = u64::from_le_bytes(raw);
                if !set {
                    bits = !bits;
                }
                if bits == 0 {
                    from += 64;
                    continue;
                }
                return from + u64::from(bits.trailing_zeros());
            }
        }
        if bitmap::test_bit(bm, from as usize) == set {
            return from;
        }
        from += 1;
    }
    limit
}

fn group_segment(
    fs: &Filesystem,
    group: u32,
    map: BitMap,
    grid: &Grid,
    marks: &UninitMarks,
    buf: &mut Vec<u8>,
) -> Result<Option<Segment>> {
    let u_lo = map.start_unit + u64::from(group) * map.units_per_group;
    let u_hi = u_lo + map.units_per_group;
    let b_lo = (u_lo << map.shift).max(grid.first);
    let b_hi = u_hi
        .checked_shl(map.shift)
        .filter(|v| v >> map.shift == u_hi)
        .unwrap_or(u64::MAX)
        .min(grid.blocks);
    if b_lo >= b_hi {
        return Ok(None);
    }
    let gd = fs.desc(group)?;
    bitmap::group_block_bitmap(fs, &gd, marks, buf)?;
    let mut seg = Segment {
        start: b_lo,
        len: b_hi - b_lo,
        ..Segment::default()
    };
    // Walk free runs of units, converted to block runs clipped to [b_lo, b_hi).
    let first_u = (b_lo >> map.shift) - u_lo;
    let last_u = ((b_hi - 1) >> map.shift) - u_lo + 1;
    let mut unit = first_u;
    let mut runs: Vec<(u64, u64)> = Vec::new();
    while unit < last_u {
        let free_at = next_bit(buf, unit, last_u, false);
        if free_at >= last_u {
            break;
        }
        let used_at = next_bit(buf, free_at, last_u, true);
        let bs = ((u_lo + free_at) << map.shift).max(b_lo);
        let be = ((u_lo + used_at) << map.shift).min(b_hi);
        if be > bs {
            runs.push((bs, be - bs));
        }
        unit = used_at;
    }
    for (index, &(run_start, run_len)) in runs.iter().enumerate() {
        let touches_start = run_start == b_lo;
        let touches_end = run_start + run_len == b_hi;
        if touches_start {
            seg.prefix = run_len;
        }
        if touches_end {
            seg.suffix = run_len;
        }
        if !touches_start && !touches_end {
            grid.add_run(&mut seg.inner, run_start, run_len);
        }
        let _ = index;
    }
    Ok(Some(seg))
}

/// Replay `ext2fs_read_block_bitmap`'s failure behaviour (block bitmaps only; checksums verified).
pub fn check_block_bitmaps(fs: &Filesystem) -> std::result::Result<(), Failure> {
    let nbytes = bitmap::block_nbytes(fs);
    if nbytes > fs.geo.block_size as usize {
        return Err(Failure::ReadBitmap(bitmap::ReadFailure::Prepare.message()));
    }
    let csum = fs.sb.has_metadata_csum();
    let bad = (0..fs.geo.group_count)
        .into_par_iter()
        .find_map_first(|group| {
            let read = bitmap::ReadFailure::Read(Kind::Block, group);
            let Ok(gd) = fs.desc(group) else {
                return Some(read);
            };
            let loc = bitmap::bitmap_source(fs, &gd, Kind::Block)?;
            let Ok(block) = fs.block_uncached(loc) else {
                return Some(read);
            };
            let bytes = block.get(..nbytes).unwrap_or(&block);
            if csum && bitmap::bitmap_checksum(fs, Kind::Block, bytes) != gd.block_bitmap_csum {
                return Some(bitmap::ReadFailure::Csum(Kind::Block, group));
            }
            None
        });
    match bad {
        Some(f) => Err(Failure::ReadBitmap(f.message())),
        None => Ok(()),
    }
}

/// Validate a `-c` chunk size (KiB) as e2freefrag does; returns the chunk size in bytes
/// (0 = none given). Errors are e2freefrag's messages.
pub fn chunk_bytes(chunk_kb: Option<u64>, block_size: u64) -> std::result::Result<u64, Problem> {
    let Some(kb) = chunk_kb else { return Ok(0) };
    if kb & kb.wrapping_sub(1) != 0 {
        return Err(Problem::new(
            ProblemKind::Request,
            "chunk size must be a power of 2.",
        ));
    }
    let bytes = kb.wrapping_mul(1024);
    if bytes != 0 && bytes < block_size {
        return Err(Problem::new(
            ProblemKind::Request,
            "chunksize must be greater than or equal to filesystem blocksize.",
        ));
    }
    if bytes != 0 && bytes / block_size > i32::MAX as u64 {
        return Err(Problem::new(
            ProblemKind::Request,
            "chunk size too large: more than 2^31 blocks per chunk",
        ));
    }
    Ok(bytes)
}

/// Compute the report. `chunk_bytes` is 0 for e2freefrag's default (no chunk lines).
pub fn report(fs: &Filesystem, chunk_bytes: u64) -> Result<Report> {
    let bs = fs.geo.block_size;
    let bs_bits = ul_log2(bs);
    let cbytes = if chunk_bytes != 0 {
        chunk_bytes
    } else {
        DEFAULT_CHUNK_BYTES
    };
    let chunk_bits = ul_log2(cbytes);
    let bic = (cbytes >> bs_bits).max(1);
    let blocks = fs.geo.blocks_count;
    let first = fs.geo.first_data_block;
    if first >= blocks {
        return Err(Error::corrupt(
            crate::ProblemKind::Group,
            "first data block is past the end of the filesystem",
        ));
    }
    let grid = Grid::new(first, blocks, bic, chunk_bits.saturating_sub(bs_bits));
    let cb = fs.geo.cluster_bits;
    let map = BitMap {
        shift: 2 * cb,
        start_unit: first >> cb,
        units_per_group: u64::from(fs.geo.clusters_per_group.max(1)),
    };
    let marks = UninitMarks::compute(fs)?;
    let mut total = Stats::default();
    // The free run still open at the end of the groups joined so far: (start, len).
    let mut open: (u64, u64) = (0, 0);
    // Blocks below the first unit the bitmap covers read as free (libext2fs warns and says 0).
    let below = (map.start_unit << map.shift).clamp(first, blocks);
    if below > first {
        open = (first, below - first);
    }
    const BATCH: u32 = 1024;
    let groups = fs.geo.group_count;
    let mut g0 = 0u32;
    while g0 < groups {
        let g1 = g0.saturating_add(BATCH).min(groups);
        let segs: Vec<Option<Segment>> = (g0..g1)
            .into_par_iter()
            .map_init(Vec::new, |buf, group| {
                group_segment(fs, group, map, &grid, &marks, buf)
            })
            .collect::<Result<_>>()?;
        let mut done = false;
        for seg in segs.into_iter().flatten() {
            if open.1 == 0 {
                open.0 = seg.start;
            }
            if seg.prefix == seg.len {
                open.1 += seg.len;
                continue;
            }
            open.1 += seg.prefix;
            grid.add_run(&mut total, open.0, open.1);
            total.merge(&seg.inner);
            open = (seg.start + seg.len - seg.suffix, seg.suffix);
            if seg.start + seg.len >= blocks {
                done = true;
            }
        }
        if done {
            break;
        }
        g0 = g1;
    }
    grid.add_run(&mut total, open.0, open.1);
    Ok(build_report(fs, chunk_bytes, &grid, &total))
}

fn build_report(fs: &Filesystem, chunk_bytes: u64, grid: &Grid, st: &Stats) -> Report {
    let bs = fs.geo.block_size;
    let bs_bits = ul_log2(bs);
    let total_blocks = fs.sb.blocks_count();
    let free_blocks = fs.sb.free_blocks_count();
    let chunks = (chunk_bytes != 0).then(|| Chunks {
        chunk_bytes,
        blocks_per_chunk: grid.bic as u32,
        total: grid.total,
        free: st.free_chunks,
        free_percent: st.free_chunks as f64 * 100.0 / grid.total as f64,
    });
    let scale = bs >> 10;
    let (min, max, avg) = match st.sum.checked_div(st.runs) {
        Some(avg) => (
            st.min.wrapping_mul(scale),
            st.max.wrapping_mul(scale),
            avg.wrapping_mul(scale),
        ),
        None => (0, 0, 0),
    };
    let mut histogram = Vec::new();
    let units = b"KMGTPEZY";
    let mut unit = 0usize;
    let mut shift_units = 10u32;
    let mut start: u64 = 0;
    for bucket in 0..MAX_HIST {
        let end_log2 = (bucket as u32 + bs_bits).saturating_sub(shift_units);
        let end: u64 = 1u64 << end_log2.min(63);
        let unit_char = char::from(*units.get(unit).unwrap_or(&b'?'));
        if st.count[bucket] != 0 {
            let end_str = if bucket == MAX_HIST - 1 {
                "max ".to_string()
            } else {
                format!("{end:>5}{unit_char}-")
            };
            histogram.push(Bucket {
                index: bucket,
                min_kb: start << (shift_units - 10),
                extents: st.count[bucket],
                blocks: st.blocks[bucket],
                percent: st.blocks[bucket] as f64 * 100.0 / free_blocks as f64,
                label: format!("{start:>5}{unit_char}...{end_str:>7}"),
            });
        }
        start = end;
        if start == 1 << 10 {
            start = 1;
            shift_units += 10;
            unit += 1;
        }
    }
    Report {
        block_size: bs,
        total_blocks,
        free_blocks,
        free_percent: free_blocks as f64 * 100.0 / total_blocks as f64,
        chunks,
        min_extent_kb: min,
        max_extent_kb: max,
        avg_extent_kb: avg,
        free_extents: st.runs,
        default_free_chunks: st.free_chunks,
        histogram,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Count free chunks the way e2freefrag's loop does, block by block.
    fn brute(first: u64, blocks: u64, bic: u64, free: &dyn Fn(u64) -> bool) -> u64 {
        let chunks = (blocks + bic) / bic;
        let mut csb = 0u64;
        let mut full = 0;
        for chunk in 0..chunks {
            let num = if csb + bic > blocks {
                blocks - csb
            } else {
                bic
            };
            let mut cf = 0;
            let mut blk = 0;
            while blk < num {
                if chunk == 0 && blk == 0 {
                    blk = first;
                    csb = blk;
                }
                if free(csb) {
                    cf += 1;
                }
                blk += 1;
                csb += 1;
            }
            if cf == bic {
                full += 1;
            }
        }
        full
    }

    #[test]
    fn chunk_grid_matches_the_loop() {
        for first in [0u64, 1] {
            for bic in [1u64, 2, 4, 8] {
                for blocks in [5u64, 8, 17, 33] {
                    let grid = Grid::new(first, blocks, bic, ul_log2(bic));
                    // Free pattern: every block except multiples of 7.
                    let free = |b: u64| b % 7 != 3;
                    let mut st = Stats::default();
                    let mut run_start = first;
                    while run_start < blocks {
                        if !free(run_start) {
                            run_start += 1;
                            continue;
                        }
                        let mut run_end = run_start;
                        while run_end < blocks && free(run_end) {
                            run_end += 1;
                        }
                        grid.add_run(&mut st, run_start, run_end - run_start);
                        run_start = run_end;
                    }
                    assert_eq!(
                        st.free_chunks,
                        brute(first, blocks, bic, &free),
                        "first {first} bic {bic} blocks {blocks}"
                    );
                }
            }
        }
    }

    #[test]
    fn log2_and_chunk_sizes() {
        assert_eq!(ul_log2(0), 0);
        assert_eq!(ul_log2(1), 0);
        assert_eq!(ul_log2(1024), 10);
        assert_eq!(ul_log2(1025), 10);
        assert!(chunk_bytes(Some(3), 4096).is_err());
        assert!(chunk_bytes(Some(1), 4096).is_err());
        assert_eq!(chunk_bytes(Some(4), 4096), Ok(4096));
        assert_eq!(chunk_bytes(Some(0), 4096), Ok(0));
        assert_eq!(chunk_bytes(None, 1024), Ok(0));
    }

    #[test]
    fn next_bit_finds_runs() {
        let bm = [0xFFu8, 0x0F, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(next_bit(&bm, 0, 128, false), 12);
        assert_eq!(next_bit(&bm, 12, 128, true), 71);
        assert_eq!(next_bit(&bm, 72, 128, true), 128);
    }
}
