//! Block and inode bitmaps per group, exactly as libext2fs loads them (`ext2fs_read_bitmaps`):
//! a group whose BLOCK_UNINIT / INODE_UNINIT flag is honoured (checksum feature on and descriptor
//! checksum valid), or whose bitmap location lies past the end of the filesystem, reads as zeros;
//! afterwards every BLOCK_UNINIT group's superblock, descriptors, bitmaps and inode table are marked
//! in use (`mark_uninit_bg_group_blocks`), wherever they live.
//!
//! Nothing here holds a whole-filesystem bitmap: bitmaps are produced one group at a time and the
//! only state kept is the list of marks contributed by BLOCK_UNINIT groups.

use crate::error::{ext2_err, Error, ProblemKind, Result};
use crate::reader::csum::crc32c_raw;
use crate::reader::fs::Filesystem;
use crate::reader::group::{GroupDesc, BG_BLOCK_UNINIT, BG_INODE_UNINIT};
use rayon::prelude::*;
use serde::Serialize;

/// Which bitmap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum Kind {
    /// Block.
    Block,
    /// Inode.
    Inode,
}

/// Why `ext2fs_read_bitmaps` would fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum ReadFailure {
    /// Bitmap bytes per group exceed a block (EXT2_ET_CORRUPT_SUPERBLOCK).
    Prepare,
    /// The bitmap block could not be read (EXT2_ET_{BLOCK,INODE}_BITMAP_READ).
    Read(Kind, u32),
    /// Checksum mismatch (EXT2_ET_{BLOCK,INODE}_BITMAP_CSUM_INVALID).
    Csum(Kind, u32),
}

impl ReadFailure {
    /// The libext2fs message.
    pub fn message(self) -> &'static str {
        match self {
            ReadFailure::Prepare => ext2_err::CORRUPT_SUPERBLOCK,
            ReadFailure::Read(Kind::Block, _) => ext2_err::BLOCK_BITMAP_READ,
            ReadFailure::Read(Kind::Inode, _) => ext2_err::INODE_BITMAP_READ,
            ReadFailure::Csum(Kind::Block, _) => ext2_err::BLOCK_BITMAP_CSUM_INVALID,
            ReadFailure::Csum(Kind::Inode, _) => ext2_err::INODE_BITMAP_CSUM_INVALID,
        }
    }
}

/// Bytes of one group's block bitmap (clusters_per_group / 8).
pub fn block_nbytes(fs: &Filesystem) -> usize {
    (fs.geo.clusters_per_group / 8) as usize
}
/// Bytes of one group's inode bitmap (inodes_per_group / 8).
pub fn inode_nbytes(fs: &Filesystem) -> usize {
    (fs.geo.inodes_per_group / 8) as usize
}

/// Where a group's bitmap is read from: `None` when libext2fs uses zeros instead.
pub fn bitmap_source(fs: &Filesystem, gd: &GroupDesc, kind: Kind) -> Option<u64> {
    let (loc, flag) = match kind {
        Kind::Block => (gd.block_bitmap, BG_BLOCK_UNINIT),
        Kind::Inode => (gd.inode_bitmap, BG_INODE_UNINIT),
    };
    let honoured = fs.ctx.gdt_csum && gd.has_flag(flag) && gd.checksum_ok(&fs.ctx);
    if honoured || loc >= fs.geo.blocks_count || loc == 0 {
        None
    } else {
        Some(loc)
    }
}

/// Checksum of a bitmap as stored in descriptors: crc32c(seed, bytes), cut to 16 bits when the
/// descriptor has no room for the hi half.
pub fn bitmap_checksum(fs: &Filesystem, kind: Kind, bytes: &[u8]) -> u32 {
    let c = crc32c_raw(fs.ctx.seed, bytes);
    let full = match kind {
        Kind::Block => fs.ctx.desc_size >= 0x3A,
        Kind::Inode => fs.ctx.desc_size >= 0x3C,
    };
    if full {
        c
    } else {
        c & 0xFFFF
    }
}

/// The on-disk bitmap bytes of a group (only the first `nbytes`), or `None` when not read.
fn disk_bitmap(fs: &Filesystem, gd: &GroupDesc, kind: Kind) -> Option<Result<Vec<u8>>> {
    let loc = bitmap_source(fs, gd, kind)?;
    let n = match kind {
        Kind::Block => block_nbytes(fs),
        Kind::Inode => inode_nbytes(fs),
    };
    // Read once per scan: bypass the block cache, which keeps metadata that is read again.
    Some(fs.block_uncached(loc).map(|mut b| {
        b.truncate(n);
        b
    }))
}

/// Replay `ext2fs_read_bitmaps`' error behaviour: the first failure in group order, if any.
/// With `ignore_csum`, checksum mismatches are not failures (EXT2_FLAG_IGNORE_CSUM_ERRORS).
pub fn read_check(fs: &Filesystem, ignore_csum: bool) -> std::result::Result<(), ReadFailure> {
    let bs = fs.geo.block_size as usize;
    if block_nbytes(fs) > bs || inode_nbytes(fs) > bs {
        return Err(ReadFailure::Prepare);
    }
    let csum = fs.sb.has_metadata_csum() && !ignore_csum;
    let res = (0..fs.geo.group_count).into_par_iter().find_map_first(|g| {
        let gd = match fs.desc(g) {
            Ok(gd) => gd,
            Err(_) => return Some(ReadFailure::Read(Kind::Block, g)),
        };
        for kind in [Kind::Block, Kind::Inode] {
            match disk_bitmap(fs, &gd, kind) {
                None => {}
                Some(Err(_)) => return Some(ReadFailure::Read(kind, g)),
                Some(Ok(bytes)) => {
                    let stored = match kind {
                        Kind::Block => gd.block_bitmap_csum,
                        Kind::Inode => gd.inode_bitmap_csum,
                    };
                    if csum && bitmap_checksum(fs, kind, &bytes) != stored {
                        return Some(ReadFailure::Csum(kind, g));
                    }
                }
            }
        }
        None
    });
    match res {
        Some(f) => Err(f),
        None => Ok(()),
    }
}

/// Cluster ranges that BLOCK_UNINIT groups mark in use, sorted by start.
#[derive(Clone, Debug, Default)]
pub struct UninitMarks {
    ranges: Vec<(u64, u64)>,
    /// Longest range, so lookups can start at the first range that may reach a window.
    max_len: u64,
}

impl UninitMarks {
    /// Collect the marks of every BLOCK_UNINIT group (mark_uninit_bg_group_blocks).
    pub fn compute(fs: &Filesystem) -> Result<UninitMarks> {
        let geo = &fs.geo;
        let bits = geo.cluster_bits;
        let start = geo.first_data_block >> bits;
        let end = geo.blocks_count.saturating_sub(1) >> bits;
        // One vector per worker (not per group): 65,536 groups are 65,536 allocations otherwise.
        let per_worker: Vec<Vec<(u64, u64)>> = (0..geo.group_count)
            .into_par_iter()
            .try_fold(
                Vec::new,
                |mut v: Vec<(u64, u64)>, g| -> Result<Vec<(u64, u64)>> {
                    let gd = fs.desc(g)?;
                    if !gd.has_flag(BG_BLOCK_UNINIT) {
                        return Ok(v);
                    }
                    let single = |blk: u64, v: &mut Vec<(u64, u64)>| {
                        let c = blk >> bits;
                        if c >= start && c <= end {
                            v.push((c, 1));
                        }
                    };
                    let range = |blk: u64, num: u64, v: &mut Vec<(u64, u64)>| {
                        let b = blk >> bits;
                        let e = blk.saturating_add(num).saturating_add((1 << bits) - 1) >> bits;
                        let n = e.saturating_sub(b);
                        if n == 0 || b < start || b > end || b + n - 1 > end {
                            return;
                        }
                        v.push((b, n));
                    };
                    let lay = geo.layout(g);
                    if lay.super_blk != 0 || g == 0 {
                        single(lay.super_blk, &mut v);
                    }
                    if g == 0 && geo.block_size == 1024 && bits > 0 {
                        single(0, &mut v);
                    }
                    if lay.old_desc_blk != 0 {
                        // num_blocks is an int in libext2fs; clamp at the end of the filesystem.
                        let mut num = geo.old_desc_blocks() & 0xFFFF_FFFF;
                        if lay.old_desc_blk + num >= geo.blocks_count {
                            num = geo.blocks_count.saturating_sub(lay.old_desc_blk);
                        }
                        range(lay.old_desc_blk, num, &mut v);
                    }
                    if lay.new_desc_blk != 0 {
                        single(lay.new_desc_blk, &mut v);
                    }
                    if gd.inode_table != 0 {
                        range(
                            gd.inode_table,
                            u64::from(geo.inode_blocks_per_group),
                            &mut v,
                        );
                    }
                    for b in [gd.block_bitmap, gd.inode_bitmap] {
                        if b != 0 && b < geo.blocks_count {
                            single(b, &mut v);
                        }
                    }
                    Ok(v)
                },
            )
            .collect::<Result<_>>()?;
        let mut ranges: Vec<(u64, u64)> = per_worker.concat();
        ranges.sort_unstable();
        let max_len = ranges.iter().map(|r| r.1).max().unwrap_or(0);
        Ok(UninitMarks { ranges, max_len })
    }

    /// Set the bits of the marks that fall into `[first, first + nbits)` in `bitmap`.
    pub fn apply(&self, first: u64, nbits: u64, bitmap: &mut [u8]) {
        let last = first + nbits;
        // Ranges are sorted by start; one starting more than max_len before `first` cannot reach it.
        let from = self
            .ranges
            .partition_point(|&(s, _)| s < first.saturating_sub(self.max_len));
        for &(s, n) in self.ranges.get(from..).unwrap_or(&[]) {
            if s >= last {
                break;
            }
            let a = s.max(first);
            let b = (s + n).min(last);
            if a < b {
                set_bits(bitmap, (a - first) as usize, (b - first) as usize);
            }
        }
    }
}

/// Set bits `[from, to)` of a little-endian bitmap (bits past its end are ignored): whole bytes
/// at once, so a run of thousands of clusters (a flex group's inode tables) costs a `memset`.
pub fn set_bits(bitmap: &mut [u8], from: usize, to: usize) {
    let to = to.min(bitmap.len() * 8);
    let mut i = from;
    while i < to && i % 8 != 0 {
        bitmap[i / 8] |= 1 << (i % 8);
        i += 1;
    }
    let whole_end = to / 8 * 8;
    if i < whole_end {
        bitmap[i / 8..whole_end / 8].fill(0xff);
        i = whole_end;
    }
    while i < to {
        bitmap[i / 8] |= 1 << (i % 8);
        i += 1;
    }
}

/// A group's block bitmap (clusters_per_group / 8 bytes) as libext2fs holds it after loading.
pub fn group_block_bitmap(
    fs: &Filesystem,
    gd: &GroupDesc,
    marks: &UninitMarks,
    out: &mut Vec<u8>,
) -> Result<()> {
    load_into(fs, gd, Kind::Block, block_nbytes(fs), out)?;
    let n = out.len();
    let first = (fs.geo.first_data_block >> fs.geo.cluster_bits)
        + u64::from(gd.group) * u64::from(fs.geo.clusters_per_group);
    marks.apply(first, (n * 8) as u64, out);
    Ok(())
}

/// A group's inode bitmap (inodes_per_group / 8 bytes) as libext2fs holds it after loading.
pub fn group_inode_bitmap(fs: &Filesystem, gd: &GroupDesc, out: &mut Vec<u8>) -> Result<()> {
    load_into(fs, gd, Kind::Inode, inode_nbytes(fs), out)
}

/// The first `n` bytes of a group's on-disk bitmap read straight into `out` (reused by the
/// caller: no allocation per group), or zeros when libext2fs does not read it.
fn load_into(
    fs: &Filesystem,
    gd: &GroupDesc,
    kind: Kind,
    n: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    out.clear();
    out.resize(n, 0);
    let Some(loc) = bitmap_source(fs, gd, kind) else {
        return Ok(());
    };
    let bs = fs.geo.block_size;
    let off = loc.checked_mul(bs).ok_or_else(|| {
        Error::corrupt(
            ProblemKind::Structure,
            format!("block number {loc} overflows a byte offset"),
        )
    })?;
    if off.checked_add(bs).is_none_or(|end| end > fs.source.len()) {
        // The whole block must exist, as when libext2fs reads it.
        return fs.block_uncached(loc).map(|_| ());
    }
    let len = n.min(bs as usize);
    fs.source
        .read_into(off, &mut out[..len], &format!("block {loc}"))
}

/// Test bit `i` of a little-endian bitmap (out-of-range bits read as set).
pub fn test_bit(bitmap: &[u8], i: usize) -> bool {
    bitmap.get(i / 8).is_none_or(|b| b & (1 << (i % 8)) != 0)
}

/// Count zero bits among the first `nbits`.
pub fn count_free(bitmap: &[u8], nbits: usize) -> u64 {
    let full = (nbits / 8).min(bitmap.len());
    let bytes = bitmap.get(..full).unwrap_or(bitmap);
    // 64 bytes at a time: most of a bitmap is all free or all used, which an OR and an AND of
    // eight words tell without counting (the default x86-64 target has no popcnt instruction,
    // and 65,536 groups of 4 KiB bitmaps are 256 MiB of bits to count).
    let blocks = bytes.chunks_exact(64);
    let rest = blocks.remainder();
    let mut free: u64 = blocks
        .map(|b| {
            let mut any = 0u64;
            let mut all = u64::MAX;
            for w in b.chunks_exact(8) {
                let x = word(w);
                any |= x;
                all &= x;
            }
            if any == 0 {
                512
            } else if all == u64::MAX {
                0
            } else {
                b.chunks_exact(8)
                    .map(|w| u64::from(word(w).count_zeros()))
                    .sum()
            }
        })
        .sum();
    free += rest.iter().map(|b| u64::from(b.count_zeros())).sum::<u64>();
    for i in full * 8..nbits {
        if !test_bit(bitmap, i) {
            free += 1;
        }
    }
    free
}

/// Eight bytes as a little-endian word (`w` is 8 bytes long).
fn word(w: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(w);
    u64::from_le_bytes(a)
}

/// Error for a group whose bitmap cannot be produced.
pub fn unreadable(kind: Kind, group: u32) -> Error {
    Error::corrupt(
        crate::ProblemKind::Group,
        format!("cannot read the {kind:?} bitmap of group {group}").to_lowercase(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_apply_within_window() {
        let m = UninitMarks {
            ranges: vec![(0, 3), (10, 4), (20, 1)],
            max_len: 4,
        };
        let mut b = vec![0u8; 2];
        m.apply(8, 16, &mut b);
        assert_eq!(b, vec![0b0011_1100, 0b0001_0000]);
        assert_eq!(count_free(&b, 16), 11);
        assert!(test_bit(&b, 100));
    }

    #[test]
    fn count_free_matches_bit_by_bit() {
        let mut b = vec![0u8; 200];
        for (i, x) in b.iter_mut().enumerate() {
            *x = match i / 64 {
                0 => 0,
                1 => 0xff,
                _ => (i * 37) as u8,
            };
        }
        for nbits in [0, 7, 64, 512, 513, 1000, 1600, 1605] {
            let slow = (0..nbits).filter(|&i| !test_bit(&b, i)).count() as u64;
            assert_eq!(count_free(&b, nbits), slow, "{nbits}");
        }
    }

    #[test]
    fn set_bits_matches_bit_by_bit() {
        for (from, to) in [(0, 0), (3, 5), (0, 8), (5, 27), (8, 64), (1, 63), (60, 200)] {
            let mut fast = vec![0u8; 8];
            set_bits(&mut fast, from, to);
            let mut slow = vec![0u8; 8];
            for i in from..to.min(64) {
                slow[i / 8] |= 1 << (i % 8);
            }
            assert_eq!(fast, slow, "{from}..{to}");
        }
    }
}
