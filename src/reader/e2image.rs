//! The normal e2image format (`e2image DEVICE FILE`, read by `dumpe2fs -i` and `debugfs -i`),
//! presented as the filesystem's disk, with everything the file does not hold absent.
//!
//! The file (misc/e2image.c `write_image_file`, lib/ext2fs/imager.c) is, in units of the
//! filesystem's block size `fs_blocksize`:
//! - block 0: the header ([`E2ImageHeader`]);
//! - block 1: the superblock (at the start of the block, not at byte 1024), then the whole
//!   descriptor table, one block after the other (`ext2fs_image_super_write`; meta_bg tables
//!   too, which is why libext2fs reads them contiguously with `EXT2_FLAG_IMAGE_FILE`);
//! - from `offset_inode`: every group's inode table, group after group (written sparse);
//! - from `offset_blockmap` and `offset_inodemap`: the block and inode bitmaps as one packed bit
//!   string each (`ext2fs_image_bitmap_write`: clusters from `s_first_data_block`, inodes from
//!   1), padded to a block.
//!
//! libext2fs reads such a file with `EXT2_FLAG_IMAGE_FILE` (lib/ext2fs/openfs.c: the
//! superblock at block 1 whatever `offset_super` says, descriptors from block 2;
//! lib/ext2fs/inode.c: inode `N` at block `offset_inode / blocksize + (N - 1) / inodes per
//! block`; lib/ext2fs/rw_bitmaps.c: the packed bitmaps), and every other block from the image
//! file at its filesystem offset, which is garbage. Here the file is mapped back onto the disk
//! it came from instead: the superblock at byte 1024, each descriptor block, inode table and
//! bitmap block where the descriptors put it (a bitmap block's bytes past its group's bits are
//! the 0xff padding ext2fs writes), and any other byte is absent ([`ReadFailure::Absent`]), so
//! a view that needs a directory block says that it is not present instead of decoding garbage.

use crate::error::{Error, Result};
use crate::reader::container::{Access, ContainerKind, Disk, ReadFailure};
use crate::reader::geometry::Geometry;
use crate::reader::group::{DescContext, GroupDesc};
use crate::reader::ondisk::e2image::{E2ImageHeader, E2IMAGE_MAGIC};
use crate::reader::ondisk::OnDisk;
use crate::reader::source::Source;
use crate::reader::superblock::{Superblock, SUPERBLOCK_OFFSET, SUPERBLOCK_SIZE};

/// Most block groups indexed. Each group maps three ranges (fewer once flex_bg neighbours
/// merge); this bounds the index to ~150 MiB for a hostile file, and covers 256 TiB of 4 KiB
/// blocks.
pub const MAX_GROUPS: u32 = 1 << 21;

/// True when `head` (the first bytes of a file) opens an e2image file.
pub fn is_e2image(head: &[u8]) -> bool {
    head.get(..4) == Some(&E2IMAGE_MAGIC.to_le_bytes()[..])
}

/// One range of the disk the file holds: `len` bytes at disk byte `virt`, of which the first
/// `held` come from file byte `src` and the rest are 0xff (a bitmap block's padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    virt: u64,
    len: u64,
    src: u64,
    held: u64,
}

impl Run {
    fn end(&self) -> u64 {
        self.virt.saturating_add(self.len)
    }
}

/// A normal e2image file, read as the disk it describes.
pub struct E2Image {
    file: Source,
    size: u64,
    runs: Vec<Run>,
}

impl std::fmt::Debug for E2Image {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("E2Image")
            .field("size", &self.size)
            .field("runs", &self.runs.len())
            .finish()
    }
}

impl E2Image {
    /// Open the e2image file in `file` (its first bytes pass [`is_e2image`]).
    pub fn open(file: Source) -> Result<E2Image> {
        let bad = |message: String| Error::Container {
            path: file.path().to_path_buf(),
            message: format!("e2image file: {message}"),
        };
        let raw = file.read_partial(0, E2ImageHeader::SIZE as u64);
        let hdr: E2ImageHeader = crate::reader::ondisk::decode(&raw)
            .map_err(|_| bad("the file is shorter than its header".into()))?;
        if hdr.magic_number != E2IMAGE_MAGIC {
            return Err(bad(format!("bad magic 0x{:08x}", hdr.magic_number)));
        }
        let bs = u64::from(hdr.fs_blocksize);
        if !(1024..=65536).contains(&bs) || !bs.is_power_of_two() {
            return Err(bad(format!(
                "fs_blocksize {} is not a filesystem block size",
                hdr.fs_blocksize
            )));
        }
        // libext2fs reads the superblock at block 1 of the file, whatever offset_super says.
        let sb_raw = file
            .read(bs, SUPERBLOCK_SIZE as u64, "e2image superblock")
            .map_err(|e| bad(e.to_string()))?;
        let sb = Superblock::parse(&sb_raw)?;
        let mut runs = vec![Run {
            virt: SUPERBLOCK_OFFSET,
            len: SUPERBLOCK_SIZE as u64,
            src: bs,
            held: SUPERBLOCK_SIZE as u64,
        }];
        // Without a usable geometry only the superblock is mapped: opening the filesystem then
        // fails as it would on the raw disk, with its own message.
        let size = match Geometry::new(&sb, true) {
            Ok(geo) if geo.block_size == bs => {
                if geo.group_count > MAX_GROUPS {
                    return Err(bad(format!(
                        "{} block groups: more than the {MAX_GROUPS} this reader indexes",
                        geo.group_count
                    )));
                }
                map_groups(&file, &hdr, &sb, &geo, &mut runs).map_err(bad)?;
                geo.blocks_count.saturating_mul(bs)
            }
            _ => sb
                .blocks_count()
                .saturating_mul(sb.block_size_checked().unwrap_or(bs))
                .max(SUPERBLOCK_OFFSET + SUPERBLOCK_SIZE as u64),
        };
        Ok(E2Image {
            file,
            size,
            runs: merge(runs),
        })
    }

    /// The run holding disk byte `pos`, or the start of the next run (the end of the absent
    /// range) when none does.
    fn run_at(&self, pos: u64) -> std::result::Result<&Run, u64> {
        let after = self.runs.partition_point(|r| r.virt <= pos);
        if let Some(run) = after.checked_sub(1).and_then(|j| self.runs.get(j)) {
            if pos < run.end() {
                return Ok(run);
            }
        }
        Err(self.runs.get(after).map_or(self.size, |r| r.virt))
    }
}

/// Map the descriptor table, and each group's inode table and bitmaps, onto the disk.
fn map_groups(
    file: &Source,
    hdr: &E2ImageHeader,
    sb: &Superblock,
    geo: &Geometry,
    runs: &mut Vec<Run>,
) -> std::result::Result<(), String> {
    let bs = geo.block_size;
    let group_block = geo.first_data_block;
    let zero_adjust = u64::from(group_block == 0 && bs == 1024);
    let table_bytes = geo
        .desc_blocks
        .checked_mul(bs)
        .filter(|&n| n.checked_add(2 * bs).is_some_and(|end| end <= file.len()))
        .ok_or_else(|| {
            format!(
                "the descriptor table ({} blocks) lies beyond the end of the file ({} bytes)",
                geo.desc_blocks,
                file.len()
            )
        })?;
    let ctx = DescContext::new(sb);
    let desc_size = u64::from(geo.desc_size);
    for index in 0..geo.desc_blocks {
        let at = crate::reader::fs::desc_block_loc(geo, group_block, zero_adjust, index);
        if let Some(virt) = at.checked_mul(bs) {
            runs.push(Run {
                virt,
                len: bs,
                src: (2 + index) * bs,
                held: bs,
            });
        }
    }
    let itb = u64::from(geo.inode_blocks_per_group);
    let inode_base = u64::from(hdr.offset_inode) / bs * bs;
    let bmap_base = u64::from(hdr.offset_blockmap) / bs * bs;
    let imap_base = u64::from(hdr.offset_inodemap) / bs * bs;
    let bmap_bytes = u64::from(geo.clusters_per_group / 8);
    let imap_bytes = u64::from(geo.inodes_per_group / 8);
    // The table is read in runs of descriptor blocks (bounded by the file's size, checked above).
    let per_block = u64::from(geo.desc_per_block.max(1));
    let mut group: u64 = 0;
    let mut table_off = 0u64;
    while table_off < table_bytes && group < u64::from(geo.group_count) {
        let chunk = (table_bytes - table_off).min(256 * bs);
        let raw = file
            .read(2 * bs + table_off, chunk, "e2image descriptor table")
            .map_err(|e| e.to_string())?;
        for raw_desc in raw.chunks_exact(desc_size as usize) {
            if group >= u64::from(geo.group_count) || group / per_block >= geo.desc_blocks {
                break;
            }
            let gd = GroupDesc::parse(&ctx, group as u32, raw_desc);
            let mut add = |blk: u64, len: u64, src: u64, held: u64| {
                if blk != 0 && blk < geo.blocks_count {
                    if let Some(virt) = blk.checked_mul(bs) {
                        runs.push(Run {
                            virt,
                            len,
                            src,
                            held,
                        });
                    }
                }
            };
            add(
                gd.inode_table,
                itb * bs,
                inode_base + group * itb * bs,
                itb * bs,
            );
            add(
                gd.block_bitmap,
                bs,
                bmap_base + group * bmap_bytes,
                bmap_bytes.min(bs),
            );
            add(
                gd.inode_bitmap,
                bs,
                imap_base + group * imap_bytes,
                imap_bytes.min(bs),
            );
            group += 1;
        }
        table_off += chunk;
    }
    Ok(())
}

/// Sort the runs by disk offset and join neighbours that continue each other on the disk and
/// in the file (flex_bg places a flex group's inode tables, and its bitmaps, side by side).
fn merge(mut runs: Vec<Run>) -> Vec<Run> {
    runs.sort_unstable_by_key(|r| (r.virt, r.src));
    let mut out: Vec<Run> = Vec::with_capacity(runs.len());
    for run in runs {
        if let Some(last) = out.last_mut() {
            let contiguous = last.held == last.len
                && run.held == run.len
                && last.end() == run.virt
                && last.src.checked_add(last.len) == Some(run.src);
            if contiguous {
                last.len += run.len;
                last.held += run.held;
                continue;
            }
        }
        out.push(run);
    }
    out.shrink_to_fit();
    out
}

impl Disk for E2Image {
    fn kind(&self) -> ContainerKind {
        ContainerKind::E2image
    }

    fn len(&self) -> u64 {
        self.size
    }

    fn takes_hints(&self) -> bool {
        self.file.takes_hints()
    }

    /// The hint goes to the part of each run the range covers.
    fn will_need(&self, offset: u64, len: u64) {
        let end = offset.saturating_add(len);
        let first = self.runs.partition_point(|r| r.end() <= offset);
        for run in self.runs.iter().skip(first).take_while(|r| r.virt < end) {
            let from = offset.max(run.virt) - run.virt;
            let to = end.min(run.end()) - run.virt;
            if from < run.held {
                self.file.will_need(run.src + from, to.min(run.held) - from);
            }
        }
    }

    /// Everything outside the mapped runs is absent, metadata or not: the file holds no
    /// directory, extent, xattr, journal or data block.
    fn read_at(
        &self,
        offset: u64,
        buf: &mut [u8],
        _access: Access,
    ) -> std::result::Result<(), ReadFailure> {
        let mut done = 0usize;
        while done < buf.len() {
            let pos = offset + done as u64;
            let rest = (buf.len() - done) as u64;
            let run = match self.run_at(pos) {
                Ok(r) => r,
                Err(next) => {
                    return Err(ReadFailure::Absent {
                        offset: pos,
                        len: next.saturating_sub(pos).clamp(1, rest),
                    })
                }
            };
            let len = (run.end() - pos).min(rest) as usize;
            let Some(dst) = buf.get_mut(done..done + len) else {
                break;
            };
            fill_from_run(&self.file, run, pos, dst)?;
            done += len;
        }
        Ok(())
    }
}

/// Fill `dst` with the disk bytes at `pos` that `run` holds (file bytes, then padding).
fn fill_from_run(file: &Source, run: &Run, pos: u64, dst: &mut [u8]) -> Result<()> {
    let within = pos - run.virt;
    let from_file = run.held.saturating_sub(within).min(dst.len() as u64) as usize;
    let (held, pad) = dst.split_at_mut(from_file);
    if !held.is_empty() {
        file.read_into(run.src + within, held, "e2image file")?;
    }
    pad.fill(0xff);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_only_when_contiguous_on_both_sides() {
        let run = |virt, len, src, held| Run {
            virt,
            len,
            src,
            held,
        };
        let merged = merge(vec![
            run(8192, 4096, 20480, 4096),
            run(4096, 4096, 16384, 4096),
            run(16384, 4096, 24576, 4096),
            run(20480, 4096, 28672, 512),
        ]);
        assert_eq!(
            merged,
            vec![
                run(4096, 8192, 16384, 8192),
                run(16384, 4096, 24576, 4096),
                run(20480, 4096, 28672, 512)
            ]
        );
    }

    #[test]
    fn hostile_headers_are_refused_without_panic() {
        let mut bytes = vec![0u8; 8192];
        bytes[..4].copy_from_slice(&E2IMAGE_MAGIC.to_le_bytes());
        for bsz in [0u32, 512, 3000, 1 << 20, u32::MAX] {
            bytes[204..208].copy_from_slice(&bsz.to_le_bytes());
            let src = Source::from_bytes(&bytes).unwrap();
            assert!(E2Image::open(src).is_err(), "block size {bsz}");
        }
        // A valid block size but no superblock: opens with nothing but the superblock mapped.
        bytes[204..208].copy_from_slice(&1024u32.to_le_bytes());
        let img = E2Image::open(Source::from_bytes(&bytes).unwrap()).unwrap();
        let mut buf = [0u8; 16];
        assert!(matches!(
            img.read_at(0, &mut buf, Access::Metadata),
            Err(ReadFailure::Absent { offset: 0, .. })
        ));
        assert!(img.read_at(1024, &mut buf, Access::Metadata).is_ok());
    }
}
