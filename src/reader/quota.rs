//! Quota files in format QFMT_VFS_V1 (lib/support/quotaio_v2.c `v2_check_file`/`v2_init_io`,
//! quotaio_tree.c `qtree_scan_dquots`/`report_tree`/`report_block` and `qtree_read_dquot`,
//! as debugfs' `list_quota`/`get_quota` and e2fsck read them): the quota inodes of the superblock
//! (`s_usr/grp/prj_quota_inum`), the header and info block, and the radix tree of 1 KiB blocks.
//!
//! Bounded on hostile trees: every tree and data block is followed at most once (a cycle or a
//! shared node ends), references beyond the file read as zeros without being remembered, and the
//! file is at most 2 GiB (`v2_init_io` refuses larger ones), so the work is at most a pass over
//! the blocks the file really has.

use crate::error::Result;
use crate::reader::fileblocks::{for_each_run, Run};
use crate::reader::fs::Filesystem;
use crate::reader::inode::Inode;
use crate::reader::ondisk::quota::{
    DiskDqHeader, DiskDqInfo, DiskDqblk, DiskDqdbHeader, DQSTR_IN_BLK, QT_BLKSIZE, QT_TREEDEPTH,
    QT_TREEOFF, QUOTA_MAGICS, V2_VERSION_R1,
};
use crate::reader::ondisk::{self, OnDisk};
use serde::Serialize;
use std::ops::ControlFlow;

/// The three quota types, in the superblock's order.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum QuotaType {
    /// `USRQUOTA`: per owner (i_uid).
    User,
    /// `GRPQUOTA`: per group (i_gid).
    Group,
    /// `PRJQUOTA`: per project (i_projid).
    Project,
}

impl QuotaType {
    /// All three, in order.
    pub const ALL: [QuotaType; 3] = [QuotaType::User, QuotaType::Group, QuotaType::Project];
    /// The name debugfs prints (`quota_type[]`).
    pub fn name(self) -> &'static str {
        match self {
            QuotaType::User => "user",
            QuotaType::Group => "group",
            QuotaType::Project => "project",
        }
    }
    /// Index (0 user, 1 group, 2 project).
    pub fn index(self) -> usize {
        self as usize
    }
    /// The header magic of its quota file.
    pub fn magic(self) -> u32 {
        QUOTA_MAGICS[self.index()]
    }
    /// The quota inode the superblock names for this type (0: none).
    pub fn inode(self, fs: &Filesystem) -> u32 {
        match self {
            QuotaType::User => fs.sb.usr_quota_inum,
            QuotaType::Group => fs.sb.grp_quota_inum,
            QuotaType::Project => fs.sb.prj_quota_inum,
        }
    }
}

/// The info block (`struct v2_disk_dqinfo`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct QuotaInfo {
    /// Block grace time, seconds.
    pub block_grace: u32,
    /// Inode grace time, seconds.
    pub inode_grace: u32,
    /// `dqi_flags`.
    pub flags: u32,
    /// Blocks in the file (`dqi_blocks`).
    pub blocks: u32,
    /// First free block (`dqi_free_blk`).
    pub free_block: u32,
    /// First block with a free entry (`dqi_free_entry`).
    pub free_entry: u32,
}

/// One ID's stored usage and limits (`struct util_dqblk` as `v2r1_disk2memdqblk` fills it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Dquot {
    /// The user, group or project ID.
    pub id: u32,
    /// Space used, bytes.
    pub space: u64,
    /// Space soft limit (`dqb_bsoftlimit`).
    pub space_soft: u64,
    /// Space hard limit (`dqb_bhardlimit`).
    pub space_hard: u64,
    /// Inodes used.
    pub inodes: u64,
    /// Inode soft limit.
    pub inodes_soft: u64,
    /// Inode hard limit.
    pub inodes_hard: u64,
    /// Block grace expiry (`dqb_btime`, seconds; 0 when not over the soft limit).
    pub space_grace_until: u64,
    /// Inode grace expiry (`dqb_itime`).
    pub inodes_grace_until: u64,
}

impl Dquot {
    fn from_disk(disk: &DiskDqblk) -> Dquot {
        // v2r1_mem2diskdqblk marks an all-zero entry used by setting dqb_itime to 1; reading
        // back, that lone 1 is dropped.
        let empty = DiskDqblk {
            itime: 1,
            ..DiskDqblk::default()
        };
        Dquot {
            id: disk.id,
            space: disk.curspace,
            space_soft: disk.bsoftlimit,
            space_hard: disk.bhardlimit,
            inodes: disk.curinodes,
            inodes_soft: disk.isoftlimit,
            inodes_hard: disk.ihardlimit,
            space_grace_until: disk.btime,
            inodes_grace_until: if *disk == empty { 0 } else { disk.itime },
        }
    }
    /// An ID without an entry reads as all zeros (`qtree_read_dquot`).
    pub fn empty(id: u32) -> Dquot {
        Dquot {
            id,
            ..Dquot::default()
        }
    }
}

/// Reads the quota file's 1 KiB blocks; blocks past its end (or unreadable) read as zeros, as
/// quotaio's `read_blk` fills a short read.
pub trait QuotaBlocks {
    /// Fill `buf` with quota block `blk`.
    fn read(&mut self, blk: u32, buf: &mut [u8; QT_BLKSIZE]);
    /// The file size in bytes.
    fn size(&self) -> u64;
}

/// A quota file held in memory (tests, fuzzing).
pub struct QuotaBytes<'a>(pub &'a [u8]);

impl QuotaBlocks for QuotaBytes<'_> {
    fn read(&mut self, blk: u32, buf: &mut [u8; QT_BLKSIZE]) {
        buf.fill(0);
        let off = blk as usize * QT_BLKSIZE;
        if let Some(src) = self.0.get(off..) {
            let len = src.len().min(QT_BLKSIZE);
            buf[..len].copy_from_slice(&src[..len]);
        }
    }
    fn size(&self) -> u64 {
        self.0.len() as u64
    }
}

/// The largest quota file `v2_init_io` accepts.
pub const MAX_FILE_SIZE: u64 = 1 << 31;

/// The header and info, checked as `v2_check_file` and `v2_init_io` do; the error is why
/// debugfs and e2fsck refuse to open the file.
pub fn read_info(
    src: &mut dyn QuotaBlocks,
    qtype: QuotaType,
) -> std::result::Result<QuotaInfo, String> {
    let mut block = [0u8; QT_BLKSIZE];
    src.read(0, &mut block);
    let size = src.size();
    let header: DiskDqHeader = ondisk::decode(&block).map_err(|e| e.to_string())?;
    if size < (DiskDqHeader::SIZE + DiskDqInfo::SIZE) as u64 {
        return Err(format!("the file is {size} bytes, shorter than its header"));
    }
    if header.magic != qtype.magic() || header.version != V2_VERSION_R1 {
        return Err(format!(
            "header magic 0x{:08x} version {}, should be 0x{:08x} version {V2_VERSION_R1}",
            header.magic,
            header.version,
            qtype.magic()
        ));
    }
    let disk_info: DiskDqInfo =
        ondisk::decode_at(&block, DiskDqHeader::SIZE).map_err(|e| e.to_string())?;
    let info = QuotaInfo {
        block_grace: disk_info.bgrace,
        inode_grace: disk_info.igrace,
        flags: disk_info.flags,
        blocks: disk_info.blocks,
        free_block: disk_info.free_blk,
        free_entry: disk_info.free_entry,
    };
    let file_blocks = size.div_ceil(QT_BLKSIZE as u64);
    if size > MAX_FILE_SIZE || u64::from(info.blocks) > file_blocks {
        return Err(format!("file size {size}; dqi_blocks {}", info.blocks));
    }
    if info.free_block >= info.blocks {
        return Err(format!(
            "free_blk {}; dqi_blocks {}",
            info.free_block, info.blocks
        ));
    }
    if info.free_entry >= info.blocks {
        return Err(format!(
            "free_entry {}; dqi_blocks {}",
            info.free_entry, info.blocks
        ));
    }
    Ok(info)
}

/// What a scan of the tree found besides the entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanReport {
    /// Entries reported.
    pub entries: u64,
    /// Damage met (references past `dqi_blocks`, a tree block reached twice, a data block whose
    /// entry count disagrees with its used entries), at most [`MAX_PROBLEMS`].
    pub problems: Vec<String>,
}

/// Problems kept per scan.
pub const MAX_PROBLEMS: usize = 32;

impl ScanReport {
    fn problem(&mut self, describe: impl FnOnce() -> String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(describe());
        }
    }
}

fn refs(block: &[u8; QT_BLKSIZE]) -> impl Iterator<Item = u32> + '_ {
    block
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

fn entry_unused(entry: &[u8]) -> bool {
    entry.iter().all(|&b| b == 0)
}

struct Scan<'a, F> {
    src: &'a mut dyn QuotaBlocks,
    info: QuotaInfo,
    file_blocks: u64,
    /// Blocks already followed, one bit per block of the file.
    seen: Vec<u64>,
    visit: F,
    report: ScanReport,
    stop: bool,
}

impl<F: FnMut(&Dquot) -> ControlFlow<()>> Scan<'_, F> {
    /// True when `blk` was met before (and marks it); blocks past the file are never marked.
    fn seen_before(&mut self, blk: u32) -> bool {
        if u64::from(blk) >= self.file_blocks {
            return false;
        }
        let (index, bit) = (blk as usize / 64, 1u64 << (blk % 64));
        let Some(word) = self.seen.get_mut(index) else {
            return false;
        };
        let before = *word & bit != 0;
        *word |= bit;
        before
    }
    fn check_reference(&mut self, blk: u32) {
        if blk >= self.info.blocks {
            let blocks = self.info.blocks;
            self.report
                .problem(|| format!("illegal reference ({blk} >= {blocks})"));
        }
    }
    /// `report_tree`.
    fn tree(&mut self, blk: u32, depth: u32) {
        if self.stop {
            return;
        }
        if self.seen_before(blk) {
            self.report.problem(|| {
                format!("tree block {blk} is reached twice (a cycle or a shared node)")
            });
            return;
        }
        if u64::from(blk) >= self.file_blocks {
            // Reads as zeros: no references below.
            return;
        }
        let mut block = [0u8; QT_BLKSIZE];
        self.src.read(blk, &mut block);
        let children: Vec<u32> = refs(&block).filter(|&r| r != 0).collect();
        for child in children {
            self.check_reference(child);
            if depth == QT_TREEDEPTH - 1 {
                if !self.seen_before(child) && u64::from(child) < self.file_blocks {
                    self.data_block(child);
                }
            } else {
                self.tree(child, depth + 1);
            }
            if self.stop {
                return;
            }
        }
    }
    /// `report_block`.
    fn data_block(&mut self, blk: u32) {
        let mut block = [0u8; QT_BLKSIZE];
        self.src.read(blk, &mut block);
        let Ok(header) = ondisk::decode::<DiskDqdbHeader>(&block) else {
            return;
        };
        let mut used = 0u16;
        for index in 0..DQSTR_IN_BLK {
            let off = DiskDqdbHeader::SIZE + index * DiskDqblk::SIZE;
            let entry = &block[off..off + DiskDqblk::SIZE];
            if entry_unused(entry) {
                continue;
            }
            used += 1;
            let Ok(disk) = ondisk::decode::<DiskDqblk>(entry) else {
                continue;
            };
            self.report.entries += 1;
            if (self.visit)(&Dquot::from_disk(&disk)).is_break() {
                self.stop = true;
                return;
            }
        }
        if used != header.entries {
            let entries = header.entries;
            self.report
                .problem(|| format!("data block {blk} says {entries} entries, holds {used}"));
        }
    }
}

/// Every entry of the tree in debugfs' `list_quota` order (`qtree_scan_dquots`), each data block
/// once; `visit` may stop the scan.
pub fn scan(
    src: &mut dyn QuotaBlocks,
    info: &QuotaInfo,
    visit: impl FnMut(&Dquot) -> ControlFlow<()>,
) -> ScanReport {
    let file_blocks = src.size().min(MAX_FILE_SIZE).div_ceil(QT_BLKSIZE as u64);
    let mut scanner = Scan {
        src,
        info: *info,
        file_blocks,
        seen: vec![0u64; file_blocks.div_ceil(64) as usize],
        visit,
        report: ScanReport::default(),
        stop: false,
    };
    scanner.tree(QT_TREEOFF, 0);
    scanner.report
}

/// The entry of `id` (`qtree_read_dquot`: zeros when the tree has none). At most
/// `QT_TREEDEPTH + 1` blocks are read.
pub fn find(src: &mut dyn QuotaBlocks, id: u32) -> Dquot {
    let mut blk = QT_TREEOFF;
    let mut block = [0u8; QT_BLKSIZE];
    for depth in 0..QT_TREEDEPTH {
        src.read(blk, &mut block);
        let shift = (QT_TREEDEPTH - depth - 1) * 8;
        let slot = ((id >> shift) & 0xff) as usize * 4;
        blk = u32::from_le_bytes([
            block[slot],
            block[slot + 1],
            block[slot + 2],
            block[slot + 3],
        ]);
        if blk == 0 {
            return Dquot::empty(id);
        }
    }
    src.read(blk, &mut block);
    for index in 0..DQSTR_IN_BLK {
        let off = DiskDqdbHeader::SIZE + index * DiskDqblk::SIZE;
        let entry = &block[off..off + DiskDqblk::SIZE];
        if entry_unused(entry) {
            continue;
        }
        if let Ok(disk) = ondisk::decode::<DiskDqblk>(entry) {
            if disk.id == id {
                return Dquot::from_disk(&disk);
            }
        }
    }
    Dquot::empty(id)
}

/// Most extents or block runs of a quota file remembered.
const MAX_RUNS: usize = 1 << 16;

/// A quota inode's blocks, read through the filesystem.
pub struct QuotaInodeBlocks<'a> {
    fs: &'a Filesystem,
    runs: Vec<Run>,
    size: u64,
}

impl<'a> QuotaInodeBlocks<'a> {
    /// Map inode `ino`'s blocks (the runs are kept; blocks are read on demand).
    pub fn new(fs: &'a Filesystem, ino: u32, inode: &Inode) -> Result<QuotaInodeBlocks<'a>> {
        let mut runs = Vec::new();
        for_each_run(fs, ino, inode, &mut |r| {
            runs.push(r);
            if runs.len() >= MAX_RUNS {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        runs.sort_unstable_by_key(|r| r.logical);
        Ok(QuotaInodeBlocks {
            fs,
            runs,
            size: inode.size,
        })
    }
    fn physical(&self, lblk: u64) -> Option<u64> {
        let after = self.runs.partition_point(|r| r.logical <= lblk);
        let run = self.runs.get(after.checked_sub(1)?)?;
        (lblk - run.logical < run.len && !run.uninit).then(|| run.physical + (lblk - run.logical))
    }
}

impl QuotaBlocks for QuotaInodeBlocks<'_> {
    fn read(&mut self, blk: u32, buf: &mut [u8; QT_BLKSIZE]) {
        buf.fill(0);
        let off = u64::from(blk) * QT_BLKSIZE as u64;
        if off >= self.size {
            return;
        }
        let want = (self.size - off).min(QT_BLKSIZE as u64) as usize;
        let bs = self.fs.block_size();
        let Some(physical) = self.physical(off / bs) else {
            return;
        };
        let Ok(data) = self.fs.block(physical) else {
            return;
        };
        let within = (off % bs) as usize;
        if let Some(src) = data.get(within..within + want) {
            buf[..want].copy_from_slice(src);
        }
    }
    fn size(&self) -> u64 {
        self.size
    }
}

/// Why a quota file could not be opened (debugfs' `quota_file_open` failing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QuotaOpenError {
    /// The superblock names no inode for the type.
    NoInode,
    /// The inode number is out of range.
    BadInode(u32),
    /// The inode cannot be read or mapped.
    Unreadable(u32, String),
    /// The inode is not a regular file in use.
    NotRegular(u32, u16),
    /// Header or info refused (`v2_check_file`, `v2_init_io`).
    Corrupt(u32, String),
}

impl std::fmt::Display for QuotaOpenError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuotaOpenError::NoInode => {
                write!(
                    formatter,
                    "the superblock names no quota inode of this type"
                )
            }
            QuotaOpenError::BadInode(i) => {
                write!(formatter, "quota inode number {i} is out of range")
            }
            QuotaOpenError::Unreadable(i, e) => write!(formatter, "quota inode {i}: {e}"),
            QuotaOpenError::NotRegular(i, m) => {
                write!(
                    formatter,
                    "quota inode {i} has mode 0{m:o}, not a regular file"
                )
            }
            QuotaOpenError::Corrupt(i, e) => write!(formatter, "quota inode {i} corrupted: {e}"),
        }
    }
}

/// An opened quota file.
pub struct QuotaFile<'a> {
    /// Its type.
    pub qtype: QuotaType,
    /// Its inode.
    pub ino: u32,
    /// Header info.
    pub info: QuotaInfo,
    /// Its blocks.
    pub blocks: QuotaInodeBlocks<'a>,
}

/// Open the quota file of `qtype` named by the superblock.
pub fn open(
    fs: &Filesystem,
    qtype: QuotaType,
) -> std::result::Result<QuotaFile<'_>, QuotaOpenError> {
    let ino = qtype.inode(fs);
    if ino == 0 {
        return Err(QuotaOpenError::NoInode);
    }
    if ino > fs.sb.inodes_count {
        return Err(QuotaOpenError::BadInode(ino));
    }
    let raw = fs
        .inode_raw(ino)
        .map_err(|e| QuotaOpenError::Unreadable(ino, e.to_string()))?;
    let inode = Inode::parse(&raw);
    if !inode.is_reg() {
        return Err(QuotaOpenError::NotRegular(ino, inode.mode));
    }
    let mut blocks = QuotaInodeBlocks::new(fs, ino, &inode)
        .map_err(|e| QuotaOpenError::Unreadable(ino, e.to_string()))?;
    let info = read_info(&mut blocks, qtype).map_err(|e| QuotaOpenError::Corrupt(ino, e))?;
    Ok(QuotaFile {
        qtype,
        ino,
        info,
        blocks,
    })
}

#[cfg(test)]
pub(crate) mod testing {
    //! Build small quota files in memory, as `qtree_write_dquot` lays them out.
    use super::*;

    /// A file with `ids` (each with space = id * 1024, inodes = id), one data block per
    /// 14 entries, tree blocks allocated as needed.
    pub fn build(qtype: QuotaType, ids: &[u32]) -> Vec<u8> {
        let mut blocks: Vec<[u8; QT_BLKSIZE]> = vec![[0; QT_BLKSIZE]; 2];
        let mut data: Option<(u32, usize)> = None;
        for &id in ids {
            // The data block for this entry.
            let (dblk, slot) = match data {
                Some((b, n)) if n < DQSTR_IN_BLK => (b, n),
                _ => {
                    blocks.push([0; QT_BLKSIZE]);
                    ((blocks.len() - 1) as u32, 0)
                }
            };
            data = Some((dblk, slot + 1));
            let off = DiskDqdbHeader::SIZE + slot * DiskDqblk::SIZE;
            let data_block = &mut blocks[dblk as usize];
            data_block[off..off + 4].copy_from_slice(&id.to_le_bytes());
            data_block[off + 24..off + 32].copy_from_slice(&u64::from(id).to_le_bytes());
            data_block[off + 48..off + 56].copy_from_slice(&(u64::from(id) * 1024).to_le_bytes());
            data_block[off + 64..off + 72].copy_from_slice(&1u64.to_le_bytes());
            data_block[8..10].copy_from_slice(&(slot as u16 + 1).to_le_bytes());
            // The path.
            let mut blk = QT_TREEOFF as usize;
            for depth in 0..QT_TREEDEPTH {
                let slot = ((id >> ((QT_TREEDEPTH - depth - 1) * 8)) & 0xff) as usize * 4;
                let cur = u32::from_le_bytes(blocks[blk][slot..slot + 4].try_into().unwrap());
                let next = if depth == QT_TREEDEPTH - 1 {
                    dblk
                } else if cur != 0 {
                    cur
                } else {
                    blocks.push([0; QT_BLKSIZE]);
                    (blocks.len() - 1) as u32
                };
                blocks[blk][slot..slot + 4].copy_from_slice(&next.to_le_bytes());
                blk = next as usize;
            }
        }
        let count = blocks.len() as u32;
        let header = &mut blocks[0];
        header[0..4].copy_from_slice(&qtype.magic().to_le_bytes());
        header[4..8].copy_from_slice(&V2_VERSION_R1.to_le_bytes());
        header[8..12].copy_from_slice(&604800u32.to_le_bytes());
        header[12..16].copy_from_slice(&604800u32.to_le_bytes());
        header[20..24].copy_from_slice(&count.to_le_bytes());
        blocks.concat()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::build;
    use super::*;

    fn list(file: &[u8], qtype: QuotaType) -> (Vec<Dquot>, ScanReport) {
        let mut src = QuotaBytes(file);
        let info = read_info(&mut src, qtype).unwrap();
        let mut dquots = Vec::new();
        let report = scan(&mut src, &info, |dquot| {
            dquots.push(*dquot);
            ControlFlow::Continue(())
        });
        (dquots, report)
    }

    #[test]
    fn scan_and_find_agree_with_the_layout() {
        let ids: Vec<u32> = (0..40).map(|i| i * 1000 + 7).chain([0, u32::MAX]).collect();
        let file = build(QuotaType::Project, &ids);
        let (dquots, report) = list(&file, QuotaType::Project);
        assert!(report.problems.is_empty(), "{:?}", report.problems);
        let mut got: Vec<u32> = dquots.iter().map(|d| d.id).collect();
        got.sort_unstable();
        let mut want = ids.clone();
        want.sort_unstable();
        assert_eq!(got, want);
        let mut src = QuotaBytes(&file);
        for &id in &ids {
            let dquot = find(&mut src, id);
            assert_eq!(
                (dquot.id, dquot.space, dquot.inodes),
                (id, u64::from(id) * 1024, u64::from(id))
            );
        }
        assert_eq!(find(&mut src, 5), Dquot::empty(5));
        assert!(read_info(&mut QuotaBytes(&file), QuotaType::User).is_err());
    }

    #[test]
    fn hostile_trees_end() {
        let mut file = build(QuotaType::User, &[1, 2, 3]);
        // Root points at itself in every slot, and at the header.
        for slot in 0..256 {
            let reference: u32 = if slot % 2 == 0 { 1 } else { 0 };
            file[1024 + slot * 4..1024 + slot * 4 + 4].copy_from_slice(&reference.to_le_bytes());
        }
        let (dquots, report) = list(&file, QuotaType::User);
        assert!(dquots.is_empty());
        assert!(!report.problems.is_empty());
        // References far past the file.
        let mut file = build(QuotaType::User, &[1, 2, 3]);
        for slot in 0..256 {
            file[1024 + slot * 4..1024 + slot * 4 + 4]
                .copy_from_slice(&(u32::MAX - slot as u32).to_le_bytes());
        }
        let (_, report) = list(&file, QuotaType::User);
        assert!(report
            .problems
            .iter()
            .any(|p| p.contains("illegal reference")));
        // A header claiming more blocks than the file has is refused.
        let mut file = build(QuotaType::User, &[1]);
        file[20..24].copy_from_slice(&1000u32.to_le_bytes());
        assert!(read_info(&mut QuotaBytes(&file), QuotaType::User).is_err());
    }
}
