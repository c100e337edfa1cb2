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
    fn from_disk(d: &DiskDqblk) -> Dquot {
        // v2r1_mem2diskdqblk marks an all-zero entry used by setting dqb_itime to 1; reading
        // back, that lone 1 is dropped.
        let empty = DiskDqblk {
            itime: 1,
            ..DiskDqblk::default()
        };
        Dquot {
            id: d.id,
            space: d.curspace,
            space_soft: d.bsoftlimit,
            space_hard: d.bhardlimit,
            inodes: d.curinodes,
            inodes_soft: d.isoftlimit,
            inodes_hard: d.ihardlimit,
            space_grace_until: d.btime,
            inodes_grace_until: if *d == empty { 0 } else { d.itime },
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
            let n = src.len().min(QT_BLKSIZE);
            buf[..n].copy_from_slice(&src[..n]);
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
    let mut b = [0u8; QT_BLKSIZE];
    src.read(0, &mut b);
    let size = src.size();
    let h: DiskDqHeader = ondisk::decode(&b).map_err(|e| e.to_string())?;
    if size < (DiskDqHeader::SIZE + DiskDqInfo::SIZE) as u64 {
        return Err(format!("the file is {size} bytes, shorter than its header"));
    }
    if h.magic != qtype.magic() || h.version != V2_VERSION_R1 {
        return Err(format!(
            "header magic 0x{:08x} version {}, should be 0x{:08x} version {V2_VERSION_R1}",
            h.magic,
            h.version,
            qtype.magic()
        ));
    }
    let d: DiskDqInfo = ondisk::decode_at(&b, DiskDqHeader::SIZE).map_err(|e| e.to_string())?;
    let info = QuotaInfo {
        block_grace: d.bgrace,
        inode_grace: d.igrace,
        flags: d.flags,
        blocks: d.blocks,
        free_block: d.free_blk,
        free_entry: d.free_entry,
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
    fn problem(&mut self, p: impl FnOnce() -> String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(p());
        }
    }
}

fn refs(b: &[u8; QT_BLKSIZE]) -> impl Iterator<Item = u32> + '_ {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

fn entry_unused(e: &[u8]) -> bool {
    e.iter().all(|&b| b == 0)
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
        let (w, bit) = (blk as usize / 64, 1u64 << (blk % 64));
        let Some(word) = self.seen.get_mut(w) else {
            return false;
        };
        let before = *word & bit != 0;
        *word |= bit;
        before
    }
    fn check_reference(&mut self, blk: u32) {
        if blk >= self.info.blocks {
            let n = self.info.blocks;
            self.report
                .problem(|| format!("illegal reference ({blk} >= {n})"));
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
        let mut b = [0u8; QT_BLKSIZE];
        self.src.read(blk, &mut b);
        let children: Vec<u32> = refs(&b).filter(|&r| r != 0).collect();
        for r in children {
            self.check_reference(r);
            if depth == QT_TREEDEPTH - 1 {
                if !self.seen_before(r) && u64::from(r) < self.file_blocks {
                    self.data_block(r);
                }
            } else {
                self.tree(r, depth + 1);
            }
            if self.stop {
                return;
            }
        }
    }
    /// `report_block`.
    fn data_block(&mut self, blk: u32) {
        let mut b = [0u8; QT_BLKSIZE];
        self.src.read(blk, &mut b);
        let Ok(h) = ondisk::decode::<DiskDqdbHeader>(&b) else {
            return;
        };
        let mut used = 0u16;
        for i in 0..DQSTR_IN_BLK {
            let off = DiskDqdbHeader::SIZE + i * DiskDqblk::SIZE;
            let e = &b[off..off + DiskDqblk::SIZE];
            if entry_unused(e) {
                continue;
            }
            used += 1;
            let Ok(d) = ondisk::decode::<DiskDqblk>(e) else {
                continue;
            };
            self.report.entries += 1;
            if (self.visit)(&Dquot::from_disk(&d)).is_break() {
                self.stop = true;
                return;
            }
        }
        if used != h.entries {
            let n = h.entries;
            self.report
                .problem(|| format!("data block {blk} says {n} entries, holds {used}"));
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
    let mut s = Scan {
        src,
        info: *info,
        file_blocks,
        seen: vec![0u64; file_blocks.div_ceil(64) as usize],
        visit,
        report: ScanReport::default(),
        stop: false,
    };
    s.tree(QT_TREEOFF, 0);
    s.report
}

/// The entry of `id` (`qtree_read_dquot`: zeros when the tree has none). At most
/// `QT_TREEDEPTH + 1` blocks are read.
pub fn find(src: &mut dyn QuotaBlocks, id: u32) -> Dquot {
    let mut blk = QT_TREEOFF;
    let mut b = [0u8; QT_BLKSIZE];
    for depth in 0..QT_TREEDEPTH {
        src.read(blk, &mut b);
        let shift = (QT_TREEDEPTH - depth - 1) * 8;
        let i = ((id >> shift) & 0xff) as usize * 4;
        blk = u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        if blk == 0 {
            return Dquot::empty(id);
        }
    }
    src.read(blk, &mut b);
    for i in 0..DQSTR_IN_BLK {
        let off = DiskDqdbHeader::SIZE + i * DiskDqblk::SIZE;
        let e = &b[off..off + DiskDqblk::SIZE];
        if entry_unused(e) {
            continue;
        }
        if let Ok(d) = ondisk::decode::<DiskDqblk>(e) {
            if d.id == id {
                return Dquot::from_disk(&d);
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
        let i = self.runs.partition_point(|r| r.logical <= lblk);
        let r = self.runs.get(i.checked_sub(1)?)?;
        (lblk - r.logical < r.len && !r.uninit).then(|| r.physical + (lblk - r.logical))
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
        let Some(p) = self.physical(off / bs) else {
            return;
        };
        let Ok(data) = self.fs.block(p) else { return };
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
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuotaOpenError::NoInode => {
                write!(f, "the superblock names no quota inode of this type")
            }
            QuotaOpenError::BadInode(i) => write!(f, "quota inode number {i} is out of range"),
            QuotaOpenError::Unreadable(i, e) => write!(f, "quota inode {i}: {e}"),
            QuotaOpenError::NotRegular(i, m) => {
                write!(f, "quota inode {i} has mode 0{m:o}, not a regular file")
            }
            QuotaOpenError::Corrupt(i, e) => write!(f, "quota inode {i} corrupted: {e}"),
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
            let e = &mut blocks[dblk as usize];
            e[off..off + 4].copy_from_slice(&id.to_le_bytes());
            e[off + 24..off + 32].copy_from_slice(&u64::from(id).to_le_bytes());
            e[off + 48..off + 56].copy_from_slice(&(u64::from(id) * 1024).to_le_bytes());
            e[off + 64..off + 72].copy_from_slice(&1u64.to_le_bytes());
            e[8..10].copy_from_slice(&(slot as u16 + 1).to_le_bytes());
            // The path.
            let mut blk = QT_TREEOFF as usize;
            for depth in 0..QT_TREEDEPTH {
                let i = ((id >> ((QT_TREEDEPTH - depth - 1) * 8)) & 0xff) as usize * 4;
                let cur = u32::from_le_bytes(blocks[blk][i..i + 4].try_into().unwrap());
                let next = if depth == QT_TREEDEPTH - 1 {
                    dblk
                } else if cur != 0 {
                    cur
                } else {
                    blocks.push([0; QT_BLKSIZE]);
                    (blocks.len() - 1) as u32
                };
                blocks[blk][i..i + 4].copy_from_slice(&next.to_le_bytes());
                blk = next as usize;
            }
        }
        let n = blocks.len() as u32;
        let h = &mut blocks[0];
        h[0..4].copy_from_slice(&qtype.magic().to_le_bytes());
        h[4..8].copy_from_slice(&V2_VERSION_R1.to_le_bytes());
        h[8..12].copy_from_slice(&604800u32.to_le_bytes());
        h[12..16].copy_from_slice(&604800u32.to_le_bytes());
        h[20..24].copy_from_slice(&n.to_le_bytes());
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
        let mut v = Vec::new();
        let r = scan(&mut src, &info, |d| {
            v.push(*d);
            ControlFlow::Continue(())
        });
        (v, r)
    }

    #[test]
    fn scan_and_find_agree_with_the_layout() {
        let ids: Vec<u32> = (0..40).map(|i| i * 1000 + 7).chain([0, u32::MAX]).collect();
        let f = build(QuotaType::Project, &ids);
        let (v, r) = list(&f, QuotaType::Project);
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        let mut got: Vec<u32> = v.iter().map(|d| d.id).collect();
        got.sort_unstable();
        let mut want = ids.clone();
        want.sort_unstable();
        assert_eq!(got, want);
        let mut src = QuotaBytes(&f);
        for &id in &ids {
            let d = find(&mut src, id);
            assert_eq!(
                (d.id, d.space, d.inodes),
                (id, u64::from(id) * 1024, u64::from(id))
            );
        }
        assert_eq!(find(&mut src, 5), Dquot::empty(5));
        assert!(read_info(&mut QuotaBytes(&f), QuotaType::User).is_err());
    }

    #[test]
    fn hostile_trees_end() {
        let mut f = build(QuotaType::User, &[1, 2, 3]);
        // Root points at itself in every slot, and at the header.
        for i in 0..256 {
            let v: u32 = if i % 2 == 0 { 1 } else { 0 };
            f[1024 + i * 4..1024 + i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        let (v, r) = list(&f, QuotaType::User);
        assert!(v.is_empty());
        assert!(!r.problems.is_empty());
        // References far past the file.
        let mut f = build(QuotaType::User, &[1, 2, 3]);
        for i in 0..256 {
            f[1024 + i * 4..1024 + i * 4 + 4].copy_from_slice(&(u32::MAX - i as u32).to_le_bytes());
        }
        let (_, r) = list(&f, QuotaType::User);
        assert!(r.problems.iter().any(|p| p.contains("illegal reference")));
        // A header claiming more blocks than the file has is refused.
        let mut f = build(QuotaType::User, &[1]);
        f[20..24].copy_from_slice(&1000u32.to_le_bytes());
        assert!(read_info(&mut QuotaBytes(&f), QuotaType::User).is_err());
    }
}
