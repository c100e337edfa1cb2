//! Group descriptor rules (`gd.*`), bitmap rules (`bitmap.*`) and count rules (`count.*`).
//!
//! Per-group work runs in parallel (rayon) and keeps nothing but the group's findings and its
//! free counts. The metadata intervals are kept coalesced (sorted, disjoint, touching ones
//! joined: flex_bg packs a flex group's bitmaps and tables side by side), which says whether
//! any two structures overlap; only then are the intervals listed and swept to name them (a
//! list of every group's intervals was 24 bytes per structure, 80 MB at 262,144 tiny groups).

use super::{Finding, Findings, RuleId};
use crate::reader::bitmap::{self, Kind, UninitMarks};
use crate::reader::fs::Filesystem;
use crate::reader::group::{GroupDesc, BG_BLOCK_UNINIT, BG_INODE_UNINIT};
use rayon::prelude::*;

/// What a metadata interval holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum What {
    Super,
    Descriptors,
    BlockBitmap,
    InodeBitmap,
    InodeTable,
}

impl What {
    fn name(self) -> &'static str {
        match self {
            What::Super => "superblock",
            What::Descriptors => "descriptor/reserved GDT blocks",
            What::BlockBitmap => "block bitmap",
            What::InodeBitmap => "inode bitmap",
            What::InodeTable => "inode table",
        }
    }
    fn is_fixed(self) -> bool {
        matches!(self, What::Super | What::Descriptors)
    }
}

/// Blocks `[start, end]` (inclusive) used by `what` of `group`.
#[derive(Clone, Copy, Debug)]
struct Interval {
    start: u64,
    end: u64,
    group: u32,
    what: What,
}

/// What one group contributes.
#[derive(Default)]
struct GroupResult {
    intervals: Vec<Interval>,
    /// Descriptor free counts (when the descriptor was readable).
    desc_free_blocks: u64,
    desc_free_inodes: u64,
    /// Descriptor is bad enough that a backup table should be suggested.
    bad: bool,
}

/// Blocks as sorted, disjoint, non-touching inclusive runs, with intervals not yet added.
#[derive(Default)]
struct BlockRuns {
    runs: Vec<(u64, u64)>,
    fresh: Vec<(u64, u64)>,
}

impl BlockRuns {
    /// Add `[start, end]`; true when an overlap is found now (the last ones added are
    /// judged by the next [`BlockRuns::settle`]).
    fn add(&mut self, start: u64, end: u64) -> bool {
        self.fresh.push((start, end));
        // Settled when the new ones outnumber the runs: each interval is sorted and swept a
        // bounded number of times (amortised n log n).
        if self.fresh.len() >= self.runs.len().max(4096) {
            return self.settle();
        }
        false
    }
    /// Join the new intervals into the runs; true when two of everything added share a block.
    fn settle(&mut self) -> bool {
        if self.fresh.is_empty() {
            return false;
        }
        let mut all = std::mem::take(&mut self.fresh);
        all.append(&mut self.runs);
        all.sort_unstable();
        let mut overlap = false;
        let mut runs: Vec<(u64, u64)> = Vec::with_capacity(all.len());
        for (start, end) in all {
            match runs.last_mut() {
                Some(last) if start <= last.1 => {
                    overlap = true;
                    last.1 = last.1.max(end);
                }
                Some(last) if last.1.checked_add(1) == Some(start) => last.1 = end,
                _ => runs.push((start, end)),
            }
        }
        runs.shrink_to_fit();
        self.runs = runs;
        overlap
    }
    /// Both sets of blocks; true when they share a block.
    fn merge(&mut self, mut later: BlockRuns) -> bool {
        let overlap = self.settle() | later.settle();
        self.fresh = later.runs;
        overlap | self.settle()
    }
}

/// What the groups contribute together (one per rayon worker, merged in group order).
#[derive(Default)]
struct Totals {
    findings: Findings,
    /// The blocks of every metadata interval so far.
    metadata: BlockRuns,
    /// Two intervals share a block (then [`all_intervals`] and [`overlaps`] name them).
    overlap: bool,
    bad: bool,
    free_blocks: u64,
    free_inodes: u64,
}

impl Totals {
    fn add(mut self, result: GroupResult) -> Totals {
        for interval in &result.intervals {
            if interval.end < interval.start {
                // Not an interval (a hostile location): the exact sweep decides.
                self.overlap = true;
                continue;
            }
            self.overlap |= self.metadata.add(interval.start, interval.end);
        }
        self.bad |= result.bad;
        self.free_blocks += result.desc_free_blocks;
        self.free_inodes += result.desc_free_inodes;
        self
    }
    fn merge(mut self, later: Totals) -> Totals {
        self.findings = self.findings.merge(later.findings);
        self.overlap |= later.overlap;
        self.overlap |= self.metadata.merge(later.metadata);
        self.bad |= later.bad;
        self.free_blocks += later.free_blocks;
        self.free_inodes += later.free_inodes;
        self
    }
}

/// Where `group`'s bitmaps and inode table may live: its own blocks, or the whole filesystem
/// with flex_bg (ext2fs_check_desc, ext4_check_descriptors).
fn allowed_range(fs: &Filesystem, group: u32) -> (u64, u64) {
    let geo = &fs.geo;
    if geo.flex_bg {
        (geo.first_data_block, geo.blocks_count.saturating_sub(1))
    } else {
        (geo.group_first_block(group), geo.group_last_block(group))
    }
}

/// Location rules of one descriptor; pushes the intervals of what is in range.
fn check_locations(
    fs: &Filesystem,
    gd: &GroupDesc,
    out: &mut Findings,
    intervals: &mut Vec<Interval>,
) -> bool {
    let group = gd.group;
    let (first, last) = allowed_range(fs, group);
    let ibpg = u64::from(fs.geo.inode_blocks_per_group.max(1));
    let mut ok = true;
    let where_ = if fs.geo.flex_bg {
        "filesystem"
    } else {
        "group"
    };
    for (rule, what, blk, len) in [
        (
            RuleId::GdBlockBitmapRange,
            What::BlockBitmap,
            gd.block_bitmap,
            1,
        ),
        (
            RuleId::GdInodeBitmapRange,
            What::InodeBitmap,
            gd.inode_bitmap,
            1,
        ),
        (
            RuleId::GdInodeTableRange,
            What::InodeTable,
            gd.inode_table,
            ibpg,
        ),
    ] {
        let end = blk.saturating_add(len - 1);
        if blk < first || end > last {
            ok = false;
            let extent = if len > 1 {
                format!("blocks {blk}-{end}")
            } else {
                format!("block {blk}")
            };
            out.push_with(rule, || {
                Finding::new(
                    rule,
                    Some(group),
                    format!(
                        "{} at {extent} is not in the {where_} (blocks {first}-{last})",
                        what.name()
                    ),
                )
                .with("block", blk)
                .with("first", first)
                .with("last", last)
            });
        } else {
            intervals.push(Interval {
                start: blk,
                end,
                group,
                what,
            });
        }
    }
    ok
}

/// Per-thread scratch buffers for the loaded bitmaps.
#[derive(Default)]
struct Scratch {
    block: Vec<u8>,
    inode: Vec<u8>,
    /// The on-disk blocks of the two bitmaps (read once: checksum, padding and counts).
    raw: [Vec<u8>; 2],
}

/// Bitmap checksum and padding rules, and the per-group counts against the loaded bitmaps.
fn check_bitmaps(
    fs: &Filesystem,
    gd: &GroupDesc,
    marks: &UninitMarks,
    scratch: &mut Scratch,
    out: &mut Findings,
) {
    let loaded = check_bitmap_blocks(fs, gd, scratch, out);
    // Counts against the bitmaps as libext2fs loads them (UNINIT-adjusted).
    if loaded_bitmap(fs, gd, Kind::Block, &loaded, scratch) {
        check_block_bitmap_counts(fs, gd, marks, scratch, out);
    }
    if loaded_bitmap(fs, gd, Kind::Inode, &loaded, scratch) {
        check_inode_bitmap_count(fs, gd, scratch, out);
    }
}

/// Read both on-disk bitmaps of the group into `scratch.raw` and check their checksums and
/// tail padding; returns which were read (indexed by `Kind`).
fn check_bitmap_blocks(
    fs: &Filesystem,
    gd: &GroupDesc,
    scratch: &mut Scratch,
    out: &mut Findings,
) -> [bool; 2] {
    let bs = fs.geo.block_size as usize;
    let mut loaded = [false; 2];
    for (kind, nbytes) in [
        (Kind::Block, bitmap::block_nbytes(fs)),
        (Kind::Inode, bitmap::inode_nbytes(fs)),
    ] {
        let Some(loc) = bitmap::bitmap_source(fs, gd, kind) else {
            continue;
        };
        if !read_bitmap_block(fs, gd, kind, loc, scratch, out) {
            continue;
        }
        loaded[kind as usize] = true;
        let block = &scratch.raw[kind as usize];
        let bytes = block.get(..nbytes.min(bs)).unwrap_or(block);
        check_bitmap_checksum(fs, gd, kind, loc, bytes, out);
        check_bitmap_tail(gd.group, kind, loc, block, nbytes, out);
    }
    loaded
}

/// `block` or `inode`, for messages.
fn bitmap_name(kind: Kind) -> &'static str {
    if kind == Kind::Block {
        "block"
    } else {
        "inode"
    }
}

/// Read the `kind` bitmap block at `loc` into `scratch.raw`; false (with a finding) when it
/// cannot be read.
fn read_bitmap_block(
    fs: &Filesystem,
    gd: &GroupDesc,
    kind: Kind,
    loc: u64,
    scratch: &mut Scratch,
    out: &mut Findings,
) -> bool {
    let bs = fs.geo.block_size as usize;
    let block = &mut scratch.raw[kind as usize];
    block.resize(bs, 0);
    let read = loc
        .checked_mul(bs as u64)
        .ok_or_else(|| {
            crate::error::Error::corrupt(
                crate::error::ProblemKind::Structure,
                format!("block number {loc} overflows a byte offset"),
            )
        })
        .and_then(|off| fs.source.read_into(off, block, &format!("block {loc}")));
    match read {
        Ok(()) => true,
        Err(e) => {
            let name = bitmap_name(kind);
            out.push_with(RuleId::BitmapUnreadable, || {
                Finding::new(
                    RuleId::BitmapUnreadable,
                    Some(gd.group),
                    format!("{name} bitmap at block {loc} cannot be read: {e}"),
                )
                .with("block", loc)
            });
            false
        }
    }
}

/// The bitmap's checksum against the descriptor's. e2fsck skips the checksum of a group with
/// the UNINIT flag, valid descriptor or not.
fn check_bitmap_checksum(
    fs: &Filesystem,
    gd: &GroupDesc,
    kind: Kind,
    loc: u64,
    bytes: &[u8],
    out: &mut Findings,
) {
    let (flag, stored) = if kind == Kind::Block {
        (BG_BLOCK_UNINIT, gd.block_bitmap_csum)
    } else {
        (BG_INODE_UNINIT, gd.inode_bitmap_csum)
    };
    if !fs.sb.has_metadata_csum() || gd.has_flag(flag) {
        return;
    }
    let (group, name) = (gd.group, bitmap_name(kind));
    let want = bitmap::bitmap_checksum(fs, kind, bytes);
    if want != stored {
        let rule = if kind == Kind::Block {
            RuleId::BitmapBlockCsum
        } else {
            RuleId::BitmapInodeCsum
        };
        out.push_with(rule, || {
            Finding::new(
                rule,
                Some(group),
                format!("{name} bitmap checksum is 0x{stored:x}, should be 0x{want:x}"),
            )
            .with("stored", stored)
            .with("expected", want)
            .with("block", loc)
        });
    }
}

/// The bytes of the bitmap block past the bitmap are all 0xff.
fn check_bitmap_tail(
    group: u32,
    kind: Kind,
    loc: u64,
    block: &[u8],
    nbytes: usize,
    out: &mut Findings,
) {
    let name = bitmap_name(kind);
    let tail = block.get(nbytes..).unwrap_or(&[]);
    if let Some(pos) = tail.iter().position(|&b| b != 0xFF) {
        out.push_with(RuleId::BitmapTailPadding, || {
            Finding::new(
                RuleId::BitmapTailPadding,
                Some(group),
                format!(
                    "{name} bitmap block {loc}: byte {} is 0x{:02x}, bytes past {nbytes} should be 0xff",
                    nbytes + pos,
                    tail.get(pos).copied().unwrap_or(0)
                ),
            )
            .with("block", loc)
            .with("offset", nbytes + pos)
        });
    }
}

/// The descriptor's free blocks count, and the last group's padding, against the block bitmap
/// as loaded (in `scratch.block`).
fn check_block_bitmap_counts(
    fs: &Filesystem,
    gd: &GroupDesc,
    marks: &UninitMarks,
    scratch: &mut Scratch,
    out: &mut Findings,
) {
    let geo = &fs.geo;
    let group = gd.group;
    let bits = geo.cluster_bits;
    let clusters = (geo.group_last_block(group) >> bits)
        .saturating_sub(geo.group_first_block(group) >> bits)
        + 1;
    let cpg = u64::from(geo.clusters_per_group);
    let first = (geo.first_data_block >> bits) + u64::from(group) * cpg;
    marks.apply(first, cpg, &mut scratch.block);
    let used_bits = clusters.min(cpg) as usize;
    let free = bitmap::count_free(&scratch.block, used_bits);
    if free != u64::from(gd.free_blocks_count) {
        out.push_with(RuleId::CountGroupFreeBlocks, || {
            Finding::new(
                RuleId::CountGroupFreeBlocks,
                Some(group),
                format!(
                    "free blocks count is {}, the bitmap has {free} free",
                    gd.free_blocks_count
                ),
            )
            .with("stored", gd.free_blocks_count)
            .with("counted", free)
        });
    }
    if group + 1 == geo.group_count && clusters < cpg {
        let unset = (used_bits..cpg as usize).find(|&i| !bitmap::test_bit(&scratch.block, i));
        if let Some(bit) = unset {
            out.push_with(RuleId::BitmapBlockPadding, || {
                Finding::new(
                    RuleId::BitmapBlockPadding,
                    Some(group),
                    format!(
                        "padding at the end of the block bitmap is not set (bit {bit} of {cpg}, the filesystem ends at bit {used_bits})"
                    ),
                )
                .with("bit", bit)
            });
        }
    }
}

/// The descriptor's free inodes count against the inode bitmap as loaded.
fn check_inode_bitmap_count(
    fs: &Filesystem,
    gd: &GroupDesc,
    scratch: &Scratch,
    out: &mut Findings,
) {
    let (geo, group) = (&fs.geo, gd.group);
    let free = bitmap::count_free(&scratch.inode, geo.inodes_per_group as usize);
    if free != u64::from(gd.free_inodes_count) {
        out.push_with(RuleId::CountGroupFreeInodes, || {
            Finding::new(
                RuleId::CountGroupFreeInodes,
                Some(group),
                format!(
                    "free inodes count is {}, the bitmap has {free} free",
                    gd.free_inodes_count
                ),
            )
            .with("stored", gd.free_inodes_count)
            .with("counted", free)
        });
    }
}

/// The group's `kind` bitmap as libext2fs loads it (before the BLOCK_UNINIT marks), made from
/// the block [`check_bitmaps`] read (`loaded`), or zeros when libext2fs does not read it; false
/// when the block could not be read.
fn loaded_bitmap(
    fs: &Filesystem,
    gd: &GroupDesc,
    kind: Kind,
    loaded: &[bool; 2],
    scratch: &mut Scratch,
) -> bool {
    let nbytes = match kind {
        Kind::Block => bitmap::block_nbytes(fs),
        Kind::Inode => bitmap::inode_nbytes(fs),
    };
    let from_disk = bitmap::bitmap_source(fs, gd, kind).is_some();
    if from_disk && !loaded[kind as usize] {
        return false;
    }
    let Scratch {
        block, inode, raw, ..
    } = scratch;
    let out = match kind {
        Kind::Block => block,
        Kind::Inode => inode,
    };
    out.clear();
    out.resize(nbytes, 0);
    if from_disk {
        let src = &raw[kind as usize];
        let copied = nbytes.min(src.len());
        out[..copied].copy_from_slice(&src[..copied]);
    }
    true
}

/// Descriptor `g` of the table copy read relative to `group_block` (a backup superblock's block).
fn backup_desc(fs: &Filesystem, group_block: u64, group: u32) -> Option<GroupDesc> {
    let geo = &fs.geo;
    let per = u64::from(geo.desc_per_block.max(1));
    let ds = u64::from(geo.desc_size);
    let blk = geo.descriptor_block_loc(group_block, u64::from(group) / per);
    let off = blk
        .checked_mul(geo.block_size)?
        .checked_add((u64::from(group) % per) * ds)?;
    let raw = fs.source.try_read(off, ds)?;
    Some(GroupDesc::parse_from_backup(&fs.ctx, group, &raw))
}

/// The backup descriptor block that holds descriptor `group` (read once for the
/// `desc_per_block` groups it describes), when it lies wholly inside the image.
fn backup_desc_block(fs: &Filesystem, group_block: u64, group: u32) -> Option<Vec<u8>> {
    let geo = &fs.geo;
    let per = u64::from(geo.desc_per_block.max(1));
    let blk = geo.descriptor_block_loc(group_block, u64::from(group) / per);
    fs.source
        .try_read(blk.checked_mul(geo.block_size)?, geo.block_size)
}

/// Backup descriptor `group` from its block when it was read, else read on its own.
fn backup_desc_in(
    fs: &Filesystem,
    group_block: u64,
    block: Option<&[u8]>,
    group: u32,
) -> Option<GroupDesc> {
    let geo = &fs.geo;
    let per = geo.desc_per_block.max(1);
    let ds = geo.desc_size as usize;
    let at = (group % per) as usize * ds;
    match block.and_then(|b| b.get(at..at + ds)) {
        Some(raw) => Some(GroupDesc::parse_from_backup(&fs.ctx, group, raw)),
        None => backup_desc(fs, group_block, group),
    }
}

/// The first backup superblock's block (where `e2fsck -b` would start), if any.
fn first_backup(fs: &Filesystem) -> Option<u64> {
    // An e2image holds no backup: nothing to compare (the report says so).
    if fs.source.container().is_some_and(|k| k.metadata_only()) {
        return None;
    }
    let geo = &fs.geo;
    (1..geo.group_count)
        .find(|&group| geo.bg_has_super(group))
        .map(|group| geo.group_first_block(group))
}

fn check_group(
    fs: &Filesystem,
    group: u32,
    marks: Option<&UninitMarks>,
    backup: Option<(u64, Option<&[u8]>)>,
    scratch: &mut Scratch,
    out: &mut Findings,
) -> GroupResult {
    let mut result = GroupResult::default();
    super_and_descriptor_intervals(fs, group, &mut result);
    let gd = match fs.desc(group) {
        Ok(gd) => gd,
        Err(e) => {
            result.bad = true;
            out.push_with(RuleId::GdTableUnreadable, || {
                Finding::new(RuleId::GdTableUnreadable, Some(group), e.to_string())
            });
            return result;
        }
    };
    if !check_locations(fs, &gd, out, &mut result.intervals) {
        result.bad = true;
    }
    check_counts_in_range(fs, group, &gd, out);
    result.bad |= !check_checksum_and_uninit(fs, group, &gd, out);
    if let Some(marks) = marks {
        check_bitmaps(fs, &gd, marks, scratch, out);
    }
    check_backup_descriptor(fs, group, &gd, backup, out);
    result.desc_free_blocks = u64::from(gd.free_blocks_count);
    result.desc_free_inodes = u64::from(gd.free_inodes_count);
    result
}

/// The superblock and descriptor copies of `group` (what ext2fs_check_desc marks first).
fn super_and_descriptor_intervals(fs: &Filesystem, group: u32, result: &mut GroupResult) {
    let geo = &fs.geo;
    let lay = geo.layout(group);
    if geo.bg_has_super(group) {
        result.intervals.push(Interval {
            start: lay.super_blk,
            end: lay.super_blk,
            group,
            what: What::Super,
        });
    }
    if lay.old_desc_blk != 0 && geo.old_desc_blocks() > 0 {
        result.intervals.push(Interval {
            start: lay.old_desc_blk,
            end: lay.old_desc_blk + geo.old_desc_blocks() - 1,
            group,
            what: What::Descriptors,
        });
    }
    if lay.new_desc_blk != 0 {
        result.intervals.push(Interval {
            start: lay.new_desc_blk,
            end: lay.new_desc_blk,
            group,
            what: What::Descriptors,
        });
    }
}

/// The descriptor's free blocks, free inodes and directories fit in one group.
fn check_counts_in_range(fs: &Filesystem, group: u32, gd: &GroupDesc, out: &mut Findings) {
    let geo = &fs.geo;
    let bpg = u64::from(geo.blocks_per_group);
    let ipg = geo.inodes_per_group;
    for (rule, what, value, max) in [
        (
            RuleId::GdFreeBlocksRange,
            "free blocks count",
            u64::from(gd.free_blocks_count),
            bpg,
        ),
        (
            RuleId::GdFreeInodesRange,
            "free inodes count",
            u64::from(gd.free_inodes_count),
            u64::from(ipg),
        ),
        (
            RuleId::GdUsedDirsRange,
            "directory count",
            u64::from(gd.used_dirs_count),
            u64::from(ipg),
        ),
    ] {
        if value > max {
            out.push_with(rule, || {
                Finding::new(
                    rule,
                    Some(group),
                    format!("{what} is {value}, more than {max} per group"),
                )
                .with("stored", value)
                .with("max", max)
            });
        }
    }
}

/// The descriptor checksum, uninit flags without checksums, BLOCK_UNINIT on the last group and
/// the unused inodes count; false when the checksum is wrong.
fn check_checksum_and_uninit(
    fs: &Filesystem,
    group: u32,
    gd: &GroupDesc,
    out: &mut Findings,
) -> bool {
    let geo = &fs.geo;
    let ipg = geo.inodes_per_group;
    let csum = fs.ctx.gdt_csum;
    let checksum_ok = !csum || gd.checksum_ok(&fs.ctx);
    if !checksum_ok {
        out.push_with(RuleId::GdChecksum, || {
            Finding::new(
                RuleId::GdChecksum,
                Some(group),
                format!(
                    "checksum is 0x{:04x}, should be 0x{:04x}",
                    gd.checksum, gd.computed_checksum
                ),
            )
            .with("stored", gd.checksum)
            .with("expected", gd.computed_checksum)
        });
    }
    let uninit = gd.flags & (BG_BLOCK_UNINIT | BG_INODE_UNINIT);
    if !csum && (uninit != 0 || gd.itable_unused != 0) {
        out.push_with(RuleId::GdUninitWithoutCsum, || {
            Finding::new(
                RuleId::GdUninitWithoutCsum,
                Some(group),
                format!(
                    "flags 0x{:x} and unused inodes {} without uninit_bg or metadata_csum",
                    gd.flags, gd.itable_unused
                ),
            )
            .with("flags", gd.flags)
            .with("itable_unused", gd.itable_unused)
        });
    }
    if group + 1 == geo.group_count && gd.has_flag(BG_BLOCK_UNINIT) {
        out.push_with(RuleId::GdLastGroupBlockUninit, || {
            Finding::new(
                RuleId::GdLastGroupBlockUninit,
                Some(group),
                "the last group is marked BLOCK_UNINIT",
            )
        });
    }
    if csum && (gd.itable_unused > gd.free_inodes_count || gd.itable_unused > ipg) {
        out.push_with(RuleId::GdItableUnused, || {
            Finding::new(
                RuleId::GdItableUnused,
                Some(group),
                format!(
                    "unused inodes count is {}, at most {} (free inodes) and {ipg} (per group)",
                    gd.itable_unused, gd.free_inodes_count
                ),
            )
            .with("stored", gd.itable_unused)
            .with("free_inodes", gd.free_inodes_count)
        });
    }
    checksum_ok
}

/// The first backup descriptor table agrees with the primary on where the bitmaps and the inode
/// table are.
fn check_backup_descriptor(
    fs: &Filesystem,
    group: u32,
    gd: &GroupDesc,
    backup: Option<(u64, Option<&[u8]>)>,
    out: &mut Findings,
) {
    if let Some(found) =
        backup.and_then(|(blk, block)| backup_desc_in(fs, blk, block, group).map(|d| (blk, d)))
    {
        let (blk, bd) = found;
        let differ = [
            ("block bitmap", gd.block_bitmap, bd.block_bitmap),
            ("inode bitmap", gd.inode_bitmap, bd.inode_bitmap),
            ("inode table", gd.inode_table, bd.inode_table),
        ]
        .into_iter()
        .filter(|(_, p, b)| p != b)
        .map(|(w, p, b)| format!("{w} {b} vs {p}"))
        .collect::<Vec<_>>();
        if !differ.is_empty() {
            out.push_with(RuleId::GdBackupMismatch, || {
                Finding::new(
                    RuleId::GdBackupMismatch,
                    Some(group),
                    format!(
                        "the backup descriptor (superblock {blk}) disagrees with the primary: {} (backup vs primary)",
                        differ.join(", ")
                    ),
                )
                .with("superblock", blk)
            });
        }
    }
}

/// Every group's metadata intervals, in group order (as [`check_group`] finds them): listed only
/// when the bitmap of [`Totals`] says two of them overlap.
fn all_intervals(fs: &Filesystem) -> Vec<Interval> {
    let mut result = GroupResult::default();
    // The findings were made by the group walk: these are not kept.
    let mut unused = Findings::default();
    for group in 0..fs.geo.group_count {
        super_and_descriptor_intervals(fs, group, &mut result);
        if let Ok(gd) = fs.desc(group) {
            check_locations(fs, &gd, &mut unused, &mut result.intervals);
        }
    }
    result.intervals
}

/// Sweep the metadata intervals for overlaps (what ext2fs_check_desc's block map catches).
fn overlaps(mut iv: Vec<Interval>, findings: &mut Findings) -> bool {
    iv.sort_unstable_by_key(|i| (i.start, !i.what.is_fixed(), i.group, i.what));
    let mut cur: Option<Interval> = None;
    let mut any = false;
    for interval in iv {
        if let Some(current) = cur {
            if interval.start <= current.end {
                // Two fixed structures cannot be blamed on a descriptor.
                if !(interval.what.is_fixed() && current.what.is_fixed()) {
                    any = true;
                    let (blame, other) = if interval.what.is_fixed() {
                        (current, interval)
                    } else {
                        (interval, current)
                    };
                    findings.push_with(RuleId::GdOverlap, || {
                        Finding::new(
                            RuleId::GdOverlap,
                            Some(blame.group),
                            format!(
                                "{} at block {} overlaps the {} of group {} (blocks {}-{})",
                                blame.what.name(),
                                blame.start,
                                other.what.name(),
                                other.group,
                                other.start,
                                other.end
                            ),
                        )
                        .with("block", blame.start)
                        .with("other_group", other.group)
                        .with("other", other.what.name())
                    });
                }
                if interval.end > current.end {
                    cur = Some(interval);
                }
                continue;
            }
        }
        cur = Some(interval);
    }
    any
}

/// Does the descriptor table copy that starts relative to `group_block` pass the location rules?
fn backup_table_ok(fs: &Filesystem, group_block: u64) -> bool {
    let mut iv = Vec::new();
    let mut unused = Findings::default();
    for group in 0..fs.geo.group_count {
        let Some(gd) = backup_desc(fs, group_block, group) else {
            return false;
        };
        if !check_locations(fs, &gd, &mut unused, &mut iv) {
            return false;
        }
    }
    let mut findings = Findings::default();
    !overlaps(iv, &mut findings)
}

/// Hint every block the group pass reads (bitmaps, and the backup descriptor table it compares
/// with), so that a cold device fetches them in parallel and in few requests (flex_bg packs a
/// flex group's bitmaps side by side) instead of one synchronous read per group.
fn prefetch_group_metadata(fs: &Filesystem, backup: Option<u64>) {
    let geo = &fs.geo;
    // By chunks of groups (flex groups keep their bitmaps near), so memory stays small.
    const CHUNK: u32 = 1 << 14;
    let mut blocks: Vec<u64> = Vec::new();
    for chunk in 0..geo.group_count.div_ceil(CHUNK) {
        blocks.clear();
        for group in chunk * CHUNK..(chunk * CHUNK).saturating_add(CHUNK).min(geo.group_count) {
            if let Ok(gd) = fs.desc(group) {
                for kind in [Kind::Block, Kind::Inode] {
                    blocks.extend(bitmap::bitmap_source(fs, &gd, kind));
                }
            }
        }
        blocks.sort_unstable();
        blocks.dedup();
        fs.prefetch(blocks.iter().copied());
    }
    if let Some(blk) = backup {
        let per = u64::from(geo.desc_per_block.max(1));
        let nblocks = u64::from(geo.group_count).div_ceil(per);
        fs.prefetch((0..nblocks).map(|i| geo.descriptor_block_loc(blk, i)));
    }
}

/// Run the descriptor, bitmap and count rules. Returns the BLOCK_UNINIT marks when the bitmaps
/// can be loaded (pass 5 needs them too).
pub(super) fn check(fs: &Filesystem, out: &mut Findings) -> Option<UninitMarks> {
    let geo = &fs.geo;
    // The bitmaps can be loaded only when every descriptor can be read, and libext2fs refuses
    // bitmaps larger than a block.
    let bs = geo.block_size as usize;
    let marks = if bitmap::block_nbytes(fs) <= bs && bitmap::inode_nbytes(fs) <= bs {
        UninitMarks::compute(fs).ok()
    } else {
        None
    };
    let backup = if fs.from_backup() {
        None
    } else {
        first_backup(fs)
    };
    prefetch_group_metadata(fs, backup);
    // Fold each group into a per-worker accumulator at once, so the per-rule cap holds while
    // collecting (65,536 groups of findings are never all alive together). Groups go by
    // descriptor block, so that each backup descriptor block is read once, not once per group.
    let per = geo.desc_per_block.max(1);
    let acc = (0..geo.group_count.div_ceil(per))
        .into_par_iter()
        .fold(
            || (Scratch::default(), Totals::default()),
            |(mut scratch, mut totals), chunk| {
                let first = chunk * per;
                let block = backup.and_then(|blk| backup_desc_block(fs, blk, first));
                for group in first..first.saturating_add(per).min(geo.group_count) {
                    let backup_loc = backup.map(|blk| (blk, block.as_deref()));
                    let result = check_group(
                        fs,
                        group,
                        marks.as_ref(),
                        backup_loc,
                        &mut scratch,
                        &mut totals.findings,
                    );
                    totals = totals.add(result);
                }
                (scratch, totals)
            },
        )
        .map(|(_, totals)| totals)
        .reduce(Totals::default, Totals::merge);
    let Totals {
        findings,
        mut metadata,
        mut overlap,
        mut bad,
        free_blocks,
        free_inodes,
    } = acc;
    overlap |= metadata.settle();
    drop(metadata);
    let merged = std::mem::take(out).merge(findings);
    *out = merged;
    if overlap {
        bad |= overlaps(all_intervals(fs), out);
    }
    if bad {
        suggest_backup_table(fs, out);
    }
    let sb_free_blocks = fs.sb.free_blocks_count();
    let sum_blocks = free_blocks << geo.cluster_bits;
    if sb_free_blocks != sum_blocks {
        out.push_with(RuleId::CountSbFreeBlocks, || {
            Finding::new(
                RuleId::CountSbFreeBlocks,
                None,
                format!(
                    "superblock free blocks count is {sb_free_blocks}, the descriptors sum to {sum_blocks}"
                ),
            )
            .with("stored", sb_free_blocks)
            .with("expected", sum_blocks)
        });
    }
    let sb_free_inodes = u64::from(fs.sb.free_inodes_count);
    if sb_free_inodes != free_inodes {
        out.push_with(RuleId::CountSbFreeInodes, || {
            Finding::new(
                RuleId::CountSbFreeInodes,
                None,
                format!(
                    "superblock free inodes count is {sb_free_inodes}, the descriptors sum to {free_inodes}"
                ),
            )
            .with("stored", sb_free_inodes)
            .with("expected", free_inodes)
        });
    }
    marks
}

/// The primary descriptor table is bad: say which backup table passes the location rules.
fn suggest_backup_table(fs: &Filesystem, out: &mut Findings) {
    let geo = &fs.geo;
    if fs.from_backup() {
        return;
    }
    let mut tried = 0;
    for group in 1..geo.group_count {
        if !geo.bg_has_super(group) {
            continue;
        }
        tried += 1;
        if tried > 2 {
            break;
        }
        let sb_blk = geo.group_first_block(group);
        if backup_table_ok(fs, sb_blk) {
            out.push_with(RuleId::SbUseBackup, || {
                Finding::new(
                    RuleId::SbUseBackup,
                    None,
                    format!(
                        "the primary descriptor table is bad; the backup with -o superblock={sb_blk} -o blocksize={} passes the location checks (e2fsck -b {sb_blk} -B {})",
                        geo.block_size, geo.block_size
                    ),
                )
                .with("superblock", sb_blk)
                .with("blocksize", geo.block_size)
            });
            return;
        }
    }
}
