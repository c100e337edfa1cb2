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
    let csum = crc32c_raw(fs.ctx.seed, bytes);
    let full = match kind {
        Kind::Block => fs.ctx.desc_size >= 0x3A,
        Kind::Inode => fs.ctx.desc_size >= 0x3C,
    };
    if full {
        csum
    } else {
        csum & 0xFFFF
    }
}

/// The on-disk bitmap bytes of a group (only the first `nbytes`), or `None` when not read.
fn disk_bitmap(fs: &Filesystem, gd: &GroupDesc, kind: Kind) -> Option<Result<Vec<u8>>> {
    let loc = bitmap_source(fs, gd, kind)?;
    let nbytes = match kind {
        Kind::Block => block_nbytes(fs),
        Kind::Inode => inode_nbytes(fs),
    };
    // Read once per scan: bypass the block cache, which keeps metadata that is read again.
    Some(fs.block_uncached(loc).map(|mut block| {
        block.truncate(nbytes);
        block
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
    let res = (0..fs.geo.group_count)
        .into_par_iter()
        .find_map_first(|group| {
            let gd = match fs.desc(group) {
                Ok(gd) => gd,
                Err(_) => return Some(ReadFailure::Read(Kind::Block, group)),
            };
            for kind in [Kind::Block, Kind::Inode] {
                match disk_bitmap(fs, &gd, kind) {
                    None => {}
                    Some(Err(_)) => return Some(ReadFailure::Read(kind, group)),
                    Some(Ok(bytes)) => {
                        let stored = match kind {
                            Kind::Block => gd.block_bitmap_csum,
                            Kind::Inode => gd.inode_bitmap_csum,
                        };
                        if csum && bitmap_checksum(fs, kind, &bytes) != stored {
                            return Some(ReadFailure::Csum(kind, group));
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
                |mut marks: Vec<(u64, u64)>, group| -> Result<Vec<(u64, u64)>> {
                    let gd = fs.desc(group)?;
                    if !gd.has_flag(BG_BLOCK_UNINIT) {
                        return Ok(marks);
                    }
                    let single = |blk: u64, out: &mut Vec<(u64, u64)>| {
                        let cluster = blk >> bits;
                        if cluster >= start && cluster <= end {
                            out.push((cluster, 1));
                        }
                    };
                    let range = |blk: u64, num: u64, out: &mut Vec<(u64, u64)>| {
                        let first = blk >> bits;
                        let past = blk.saturating_add(num).saturating_add((1 << bits) - 1) >> bits;
                        let count = past.saturating_sub(first);
                        if count == 0 || first < start || first > end || first + count - 1 > end {
                            return;
                        }
                        out.push((first, count));
                    };
                    let lay = geo.layout(group);
                    if lay.super_blk != 0 || group == 0 {
                        single(lay.super_blk, &mut marks);
                    }
                    if group == 0 && geo.block_size == 1024 && bits > 0 {
                        single(0, &mut marks);
                    }
                    if lay.old_desc_blk != 0 {
                        // num_blocks is an int in libext2fs; clamp at the end of the filesystem.
                        let mut num = geo.old_desc_blocks() & 0xFFFF_FFFF;
                        if lay.old_desc_blk + num >= geo.blocks_count {
                            num = geo.blocks_count.saturating_sub(lay.old_desc_blk);
                        }
                        range(lay.old_desc_blk, num, &mut marks);
                    }
                    if lay.new_desc_blk != 0 {
                        single(lay.new_desc_blk, &mut marks);
                    }
                    if gd.inode_table != 0 {
                        range(
                            gd.inode_table,
                            u64::from(geo.inode_blocks_per_group),
                            &mut marks,
                        );
                    }
                    for bitmap_blk in [gd.block_bitmap, gd.inode_bitmap] {
                        if bitmap_blk != 0 && bitmap_blk < geo.blocks_count {
                            single(bitmap_blk, &mut marks);
                        }
                    }
                    Ok(marks)
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
        for &(mark_start, mark_len) in self.ranges.get(from..).unwrap_or(&[]) {
            if mark_start >= last {
                break;
            }
            let overlap_start = mark_start.max(first);
            let overlap_end = (mark_start + mark_len).min(last);
            if overlap_start < overlap_end {
                set_bits(
                    bitmap,
                    (overlap_start - first) as usize,
                    (overlap_end - first) as usize,
                );
            }
        }
    }
}

/// Set bits `[from, to)` of a little-endian bitmap (bits past its end are ignored): whole bytes
/// at once, so a run of thousands of clusters (a flex group's inode tables) costs a `memset`.
pub fn set_bits(bitmap: &mut [u8], from: usize, to: usize) {
    let to = to.min(bitmap.len() * 8);
    let mut bit = from;
    while bit < to && bit % 8 != 0 {
        bitmap[bit / 8] |= 1 << (bit % 8);
        bit += 1;
    }
    let whole_end = to / 8 * 8;
    if bit < whole_end {
        bitmap[bit / 8..whole_end / 8].fill(0xff);
        bit = whole_end;
    }
    while bit < to {
        bitmap[bit / 8] |= 1 << (bit % 8);
        bit += 1;
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
    let nbytes = out.len();
    let first = (fs.geo.first_data_block >> fs.geo.cluster_bits)
        + u64::from(gd.group) * u64::from(fs.geo.clusters_per_group);
    marks.apply(first, (nbytes * 8) as u64, out);
    Ok(())
}

/// A group's inode bitmap (inodes_per_group / 8 bytes) as libext2fs holds it after loading.
pub fn group_inode_bitmap(fs: &Filesystem, gd: &GroupDesc, out: &mut Vec<u8>) -> Result<()> {
    load_into(fs, gd, Kind::Inode, inode_nbytes(fs), out)
}

/// The first `nbytes` bytes of a group's on-disk bitmap read straight into `out` (reused by the
/// caller: no allocation per group), or zeros when libext2fs does not read it.
fn load_into(
    fs: &Filesystem,
    gd: &GroupDesc,
    kind: Kind,
    nbytes: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    out.clear();
    out.resize(nbytes, 0);
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
    let len = nbytes.min(bs as usize);
    fs.source
        .read_into(off, &mut out[..len], &format!("block {loc}"))
}

/// Test bit `bit` of a little-endian bitmap (out-of-range bits read as set).
pub fn test_bit(bitmap: &[u8], bit: usize) -> bool {
    bitmap
        .get(bit / 8)
        .is_none_or(|b| b & (1 << (bit % 8)) != 0)
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
        .map(|chunk| {
            let mut any = 0u64;
            let mut all = u64::MAX;
            for word_bytes in chunk.chunks_exact(8) {
                let value = word(word_bytes);
                any |= value;
                all &= value;
            }
            if any == 0 {
                512
            } else if all == u64::MAX {
                0
            } else {
                chunk
                    .chunks_exact(8)
                    .map(|w| u64::from(word(w).count_zeros()))
                    .sum()
            }
        })
        .sum();
    free += rest.iter().map(|b| u64::from(b.count_zeros())).sum::<u64>();
    for bit in full * 8..nbits {
        if !test_bit(bitmap, bit) {
            free += 1;
        }
    }
    free
}

/// Eight bytes as a little-endian word (`bytes` is 8 bytes long).
fn word(bytes: &[u8]) -> u64 {
    let mut array = [0u8; 8];
    array.copy_from_slice(bytes);
    u64::from_le_bytes(array)
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
        let marks = UninitMarks {
            ranges: vec![(0, 3), (10, 4), (20, 1)],
            max_len: 4,
        };
        let mut bitmap = vec![0u8; 2];
        marks.apply(8, 16, &mut bitmap);
        assert_eq!(bitmap, vec![0b0011_1100, 0b0001_0000]);
        assert_eq!(count_free(&bitmap, 16), 11);
        assert!(test_bit(&bitmap, 100));
    }

    #[test]
    fn count_free_matches_bit_by_bit() {
        let mut bitmap = vec![0u8; 200];
        for (index, byte) in bitmap.iter_mut().enumerate() {
            *byte = match index / 64 {
                0 => 0,
                1 => 0xff,
                _ => (index * 37) as u8,
            };
        }
        for nbits in [0, 7, 64, 512, 513, 1000, 1600, 1605] {
            let slow = (0..nbits).filter(|&i| !test_bit(&bitmap, i)).count() as u64;
            assert_eq!(count_free(&bitmap, nbits), slow, "{nbits}");
        }
    }

    #[test]
    fn set_bits_matches_bit_by_bit() {
        for (from, to) in [(0, 0), (3, 5), (0, 8), (5, 27), (8, 64), (1, 63), (60, 200)] {
            let mut fast = vec![0u8; 8];
            set_bits(&mut fast, from, to);
            let mut slow = vec![0u8; 8];
            for bit in from..to.min(64) {
                slow[bit / 8] |= 1 << (bit % 8);
            }
            assert_eq!(fast, slow, "{from}..{to}");
        }
    }
}
