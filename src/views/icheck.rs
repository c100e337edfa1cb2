//! Block numbers to the inodes that own them, as debugfs' `icheck` finds them
//! (`debugfs/icheck.c`, e2fsprogs 1.47.0), over the one parallel inode-table walk
//! ([`crate::reader::walk`]); and, beyond debugfs, what a block is when no inode owns it.
//!
//! debugfs scans the inodes in order. For each inode with links it counts its xattr block
//! (`i_file_acl`, with its high half on 64bit filesystems) whatever the inode is; then, for an
//! inode `ext2fs_inode_has_valid_blocks2` accepts (directory, regular file, symlink with
//! blocks, no inline data) and no dtime, every block `ext2fs_block_iterate3` reports: data
//! blocks, indirect blocks and extent tree blocks (uninitialised extents included). The first
//! inode in scan order to report a block owns it; the scan stops when every requested block has
//! an owner. An inode whose checksum fails ends the scan with an error and nothing is printed.
//!
//! Here each walk worker looks for the requested blocks in the inodes of its groups (runs of
//! data blocks are matched by range, never block by block); the first owner in inode order wins
//! when the workers' findings are merged.

use crate::error::ext2_err;
use crate::reader::extent::{self, ExtentHeader};
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, Inode};
use crate::reader::ondisk::inode::{
    record_checksum_ok, InodeBase, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG,
};
use crate::reader::walk::{self, GroupEnd, TableVisitor};
use std::collections::HashMap;

/// How an inode reaches a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Role {
    /// Its extended-attribute block (`i_file_acl`).
    XattrBlock,
    /// A data block at this logical block of the file.
    Data {
        /// Logical block in the file.
        logical: u64,
    },
    /// An indirect block of the classic block map.
    Indirect {
        /// 1 indirect, 2 double indirect, 3 triple indirect.
        level: u8,
    },
    /// A block of the extent tree (an index or leaf node below the root in the inode).
    ExtentTree,
}

/// The first inode (in scan order) that reports a block, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Owner {
    /// The inode.
    pub inode: u32,
    /// How it reaches the block.
    pub role: Role,
}

/// A failure debugfs reports on stderr and goes past (`while calling ext2fs_block_iterate`).
#[derive(Clone, Debug)]
pub struct InodeError {
    /// The inode whose blocks could not all be walked.
    pub inode: u32,
    /// What failed.
    pub error: String,
}

/// Errors kept per worker (the rest are counted only).
const MAX_ERRORS: usize = 64;

/// One worker's findings.
#[derive(Default)]
pub struct IcheckWorker {
    owners: HashMap<u64, Owner>,
    errors: Vec<InodeError>,
    /// The first inode the scan could not read, and why.
    scan_error: Option<(u32, String)>,
    group_used: u32,
    group_first: u32,
    group_table: u64,
}

struct IcheckVisitor<'a> {
    fs: &'a Filesystem,
    /// The bad blocks list (inodes in those inode-table blocks are skipped).
    bad: Vec<u64>,
    /// The requested blocks, sorted, without repeats.
    blocks: Vec<u64>,
    csum: bool,
}

/// `ext2fs_inode_has_valid_blocks2` on the base record.
fn has_valid_blocks(base: &InodeBase, file_acl: u64) -> bool {
    let file_type = base.mode & S_IFMT;
    if file_type != S_IFDIR && file_type != S_IFREG && file_type != S_IFLNK {
        return false;
    }
    if file_type == S_IFLNK {
        if file_acl == 0 {
            // With no xattr block, i_blocks says it (the low 32 bits, as libext2fs reads it).
            if base.blocks_lo == 0 {
                return false;
            }
        } else {
            let i_block1 =
                u32::from_le_bytes([base.block[4], base.block[5], base.block[6], base.block[7]]);
            let size = base.size_lo;
            let uses_blocks = size >= 60 || (size > 4 && i_block1 == 0);
            if !uses_blocks {
                return false;
            }
        }
    }
    base.flags & inode::INLINE_DATA_FL == 0
}

impl IcheckVisitor<'_> {
    /// Record `ino` as owner of the requested blocks in `[start, start + len)`.
    fn claim(&self, worker: &mut IcheckWorker, ino: u32, start: u64, len: u64, role: Role) {
        let from = self.blocks.partition_point(|&block| block < start);
        for &block in self.blocks[from..]
            .iter()
            .take_while(|&&block| block - start < len)
        {
            let role = match role {
                Role::Data { logical } => Role::Data {
                    logical: logical + (block - start),
                },
                r => r,
            };
            worker
                .owners
                .entry(block)
                .or_insert(Owner { inode: ino, role });
        }
    }

    fn error(worker: &mut IcheckWorker, inode: u32, error: String) {
        if worker.errors.len() < MAX_ERRORS {
            worker.errors.push(InodeError { inode, error });
        }
    }

    /// `ext2fs_block_iterate3` over an extent-mapped inode: each index entry's child reported
    /// before it is read; a node that cannot be read or fails `ext2fs_extent_header_verify` (or
    /// its checksum) ends the walk of the inode. A node is an index or a leaf by its level
    /// under the root's depth, as libext2fs reads it (the child's own depth field is not asked).
    fn extents(&self, worker: &mut IcheckWorker, ino: u32, inode: &Inode) {
        let root_depth = match lib_extent_header(&inode.block) {
            Ok(d) => d,
            Err(err) => return Self::error(worker, ino, err),
        };
        let seed = self.csum.then(|| inode.csum_seed(self.fs.csum_seed(), ino));
        let mut entered = std::collections::HashSet::new();
        let walk = ExtentWalk {
            max_depth: root_depth,
            seed,
        };
        if let Err(err) = self.extent_node(worker, ino, &inode.block, &walk, 0, &mut entered) {
            Self::error(worker, ino, err);
        }
    }

    fn extent_node(
        &self,
        worker: &mut IcheckWorker,
        ino: u32,
        node: &[u8],
        walk: &ExtentWalk,
        level: u16,
        entered: &mut std::collections::HashSet<u64>,
    ) -> Result<(), String> {
        let (max_depth, seed) = (walk.max_depth, walk.seed);
        let header = ExtentHeader::decode_fast(node).ok_or("extent header cut short")?;
        if level >= max_depth {
            for leaf in extent::leaf_iter(node, &header) {
                let role = Role::Data {
                    logical: u64::from(leaf.logical),
                };
                self.claim(worker, ino, leaf.physical, u64::from(leaf.len), role);
            }
            return Ok(());
        }
        if level >= MAX_EXTENT_LEVELS {
            return Err(format!(
                "extent tree deeper than {MAX_EXTENT_LEVELS} levels"
            ));
        }
        for ix in extent::index_entries(node, &header) {
            self.claim(worker, ino, ix.child, 1, Role::ExtentTree);
            // Why: a hostile tree whose index entries all point at the same child would be walked
            // (entries per node)^depth times. Walking a subtree again for the same inode claims
            // the same blocks for the same owner and meets the same first error, so each node is
            // entered once: the answer is unchanged and the time bounded by the blocks.
            if !entered.insert(ix.child) {
                continue;
            }
            let child = self.fs.block(ix.child).map_err(|e| e.to_string())?;
            lib_extent_header(&child)?;
            if let Some(seed) = seed {
                let ch = ExtentHeader::decode_fast(&child).ok_or("extent header cut short")?;
                if !extent::extent_block_csum(seed, &child, &ch).ok() {
                    return Err(ext2_err::EXTENT_CSUM_INVALID.to_string());
                }
            }
            self.extent_node(worker, ino, &child, walk, level + 1, entered)?;
        }
        Ok(())
    }

    /// The classic block map as `ext2fs_block_iterate3` walks it: direct blocks, then the
    /// indirect, double and triple indirect trees, each mapping block reported before it is
    /// checked and read. A bad or unreadable mapping block ends the loop of the block above it
    /// (not the walk: the next top-level tree is still walked).
    fn block_map(&self, worker: &mut IcheckWorker, ino: u32, inode: &Inode) {
        let map = inode.block_map();
        for (index, &block) in map.direct.iter().enumerate() {
            if block != 0 {
                let role = Role::Data {
                    logical: index as u64,
                };
                self.claim(worker, ino, u64::from(block), 1, role);
            }
        }
        let per = self.fs.block_size() / 4;
        let mut walk = IndWalk {
            seen: HashMap::new(),
            first_error: None,
        };
        let mut base = 12u64;
        for (top, level) in [(map.ind, 1u8), (map.dind, 2), (map.tind, 3)] {
            if top != 0 {
                let _ = self.ind_block(worker, ino, u64::from(top), level, base, &mut walk);
            }
            base = base.saturating_add(per.saturating_pow(u32::from(level)));
        }
        if let Some(err) = walk.first_error {
            Self::error(worker, ino, err);
        }
    }

    /// `block_iterate_ind` / `_dind` / `_tind`: Err is libext2fs' BLOCK_ERROR.
    fn ind_block(
        &self,
        worker: &mut IcheckWorker,
        ino: u32,
        blk: u64,
        level: u8,
        base: u64,
        walk: &mut IndWalk,
    ) -> Result<(), ()> {
        self.claim(worker, ino, blk, 1, Role::Indirect { level });
        // A mapping block met again reports the same blocks for the same inode: its first
        // outcome stands (and a cycle cannot loop).
        if let Some(&ok) = walk.seen.get(&blk) {
            return if ok { Ok(()) } else { Err(()) };
        }
        walk.seen.insert(blk, false);
        let fs = self.fs;
        if blk >= fs.geo.blocks_count || blk < fs.geo.first_data_block {
            walk.first_error
                .get_or_insert_with(|| ext2_err::BAD_IND_BLOCK.to_string());
            return Err(());
        }
        let data = match fs.block(blk) {
            Ok(d) => d,
            Err(e) => {
                walk.first_error.get_or_insert_with(|| e.to_string());
                return Err(());
            }
        };
        let per = data.len() / 4;
        let span = (per as u64).saturating_pow(u32::from(level) - 1);
        for slot in 0..per {
            let child = u32::from_le_bytes([
                data[4 * slot],
                data[4 * slot + 1],
                data[4 * slot + 2],
                data[4 * slot + 3],
            ]);
            if child == 0 {
                continue;
            }
            let lbase = base.saturating_add((slot as u64).saturating_mul(span));
            if level == 1 {
                self.claim(
                    worker,
                    ino,
                    u64::from(child),
                    1,
                    Role::Data { logical: lbase },
                );
            } else if self
                .ind_block(worker, ino, u64::from(child), level - 1, lbase, walk)
                .is_err()
            {
                return Err(());
            }
        }
        walk.seen.insert(blk, true);
        Ok(())
    }
}

/// What stays the same across one inode's extent walk.
struct ExtentWalk {
    /// The root's depth: a node at this level is a leaf.
    max_depth: u16,
    /// The inode's checksum seed, when extent blocks carry checksums.
    seed: Option<u32>,
}

/// Levels of extent index followed before giving up (libext2fs follows the root's depth; a
/// hostile depth must not recurse without bound).
const MAX_EXTENT_LEVELS: u16 = 32;

/// The mapping blocks met in one inode's block-map walk, and the first error.
struct IndWalk {
    seen: HashMap<u64, bool>,
    first_error: Option<String>,
}

/// `ext2fs_extent_header_verify` on a node of `node.len()` bytes: the magic, entries within
/// max, and max within two entries of what the node holds. The root's depth.
fn lib_extent_header(node: &[u8]) -> Result<u16, String> {
    let header = ExtentHeader::decode_fast(node).ok_or("extent header cut short")?;
    let cap = (node.len().saturating_sub(12) / 12) as u64;
    let (max, entries) = (u64::from(header.max), u64::from(header.entries));
    if header.magic != extent::EXTENT_MAGIC || entries > max || max > cap || max + 2 < cap {
        return Err("Corrupt extent header".to_string());
    }
    Ok(header.depth)
}

impl TableVisitor for IcheckVisitor<'_> {
    type Worker = IcheckWorker;
    fn worker(&self) -> IcheckWorker {
        IcheckWorker::default()
    }
    fn merge(&self, mut earlier: IcheckWorker, later: IcheckWorker) -> IcheckWorker {
        if earlier.scan_error.is_some() {
            return earlier;
        }
        for (block, owner) in later.owners {
            earlier.owners.entry(block).or_insert(owner);
        }
        let room = MAX_ERRORS.saturating_sub(earlier.errors.len());
        earlier.errors.extend(later.errors.into_iter().take(room));
        earlier.scan_error = later.scan_error;
        earlier
    }
    fn group_start(&self, worker: &mut IcheckWorker, group: u32, _slots: u32) {
        worker.group_first = group.saturating_mul(self.fs.geo.inodes_per_group) + 1;
        worker.group_used = super::ncheck::lib_slots(self.fs, group);
        worker.group_table = self.fs.desc(group).map_or(0, |d| d.inode_table);
        if worker.scan_error.is_none() {
            if let Some(err) = super::ncheck::table_error(self.fs, group)
                .or_else(|| super::ncheck::missing_table(self.fs, group))
            {
                worker.scan_error = Some((worker.group_first, err));
            }
        }
    }
    fn inode(&self, worker: &mut IcheckWorker, _group: u32, ino: u32, raw: &[u8]) {
        if worker.scan_error.is_some() || ino - worker.group_first >= worker.group_used {
            return;
        }
        if super::ncheck::in_bad_block(
            self.fs,
            &self.bad,
            worker.group_table,
            ino - worker.group_first,
        ) {
            return;
        }
        if self.csum && !record_checksum_ok(self.fs.csum_seed(), ino, raw) {
            worker.scan_error = Some((ino, ext2_err::INODE_CSUM_INVALID.to_string()));
            return;
        }
        let Some(base) = InodeBase::decode_fast(raw) else {
            return;
        };
        if base.links_count == 0 {
            return;
        }
        let high = if self.fs.sb.is_64bit() {
            u64::from(base.file_acl_high) << 32
        } else {
            0
        };
        let file_acl = u64::from(base.file_acl_lo) | high;
        if file_acl != 0 {
            self.claim(worker, ino, file_acl, 1, Role::XattrBlock);
        }
        if !has_valid_blocks(&base, file_acl) || base.dtime != 0 {
            return;
        }
        let inode = Inode::parse(raw);
        if inode.has_flag(inode::EXTENTS_FL) {
            self.extents(worker, ino, &inode);
        } else {
            self.block_map(worker, ino, &inode);
        }
    }
    fn group_end(&self, worker: &mut IcheckWorker, group: u32, end: GroupEnd) {
        if worker.scan_error.is_some() {
            return;
        }
        let first = group.saturating_mul(self.fs.geo.inodes_per_group) + 1;
        let error = match end {
            GroupEnd::Read => None,
            GroupEnd::Empty => super::ncheck::table_error(self.fs, group),
            GroupEnd::NoDescriptor => Some("cannot read the group descriptor".to_string()),
            GroupEnd::OutsideImage(m) | GroupEnd::Partial(m) => Some(m),
        };
        if let Some(err) = error {
            worker.scan_error = Some((first, err));
        }
    }
}

/// What the scan found for the requested blocks.
#[derive(Clone, Debug, Default)]
pub struct Found {
    /// Each requested block with an owner: the first inode in scan order.
    pub owners: HashMap<u64, Owner>,
    /// Inodes whose blocks could not all be walked (debugfs says so and goes on).
    pub errors: Vec<InodeError>,
    /// The scan could not read inode N (why): debugfs then prints no table.
    pub scan_error: Option<(u32, String)>,
}

impl Found {
    /// debugfs' answer: the table is printed unless the scan failed before every block had an
    /// owner (it stops at the inode that gives the last block its owner).
    pub fn table_printed(&self, requested: &[u64]) -> bool {
        let Some((bad, _)) = self.scan_error else {
            return true;
        };
        let mut last = 0u32;
        for block in requested {
            match self.owners.get(block) {
                Some(o) => last = last.max(o.inode),
                None => return false,
            }
        }
        last < bad
    }

    /// The errors of inodes walked before the scan stopped (the last owner found, or the end).
    pub fn errors_before_stop(&self, requested: &[u64]) -> Vec<&InodeError> {
        let all_found = requested.iter().all(|b| self.owners.contains_key(b));
        let stop = if all_found {
            requested
                .iter()
                .filter_map(|b| self.owners.get(b))
                .map(|o| o.inode)
                .max()
                .unwrap_or(0)
        } else {
            u32::MAX
        };
        self.errors.iter().filter(|e| e.inode <= stop).collect()
    }
}

/// Scan for the owners of `blocks` (any order, repeats allowed).
pub fn icheck(fs: &Filesystem, blocks: &[u64]) -> Found {
    let mut sorted = blocks.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let visitor = IcheckVisitor {
        fs,
        blocks: sorted,
        bad: super::ncheck::bad_blocks(fs),
        csum: fs.sb.has_metadata_csum(),
    };
    let Some(worker) = walk::run(fs, &visitor, &|_| {}) else {
        return Found::default();
    };
    Found {
        owners: worker.owners,
        errors: worker.errors,
        scan_error: worker.scan_error,
    }
}

/// A piece of filesystem metadata a block holds (beyond what inodes own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MetaKind {
    /// Before the first data block (the boot sector of a 1 KiB-block filesystem).
    BootBlock,
    /// The primary superblock (group 0).
    Superblock,
    /// A backup superblock.
    BackupSuperblock,
    /// A block of the primary group descriptor table.
    GroupDescriptors,
    /// A block of a backup copy of the group descriptor table.
    BackupGroupDescriptors,
    /// A block reserved for growing the descriptor table (held by the resize inode).
    ReservedGdt,
    /// A group's block bitmap.
    BlockBitmap,
    /// A group's inode bitmap.
    InodeBitmap,
    /// A block of a group's inode table.
    InodeTable,
    /// The multiple-mount protection block.
    Mmp,
    /// Past the last block of the filesystem.
    BeyondEnd,
}

/// One role of a block in the filesystem's own structures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Meta {
    /// What it is.
    pub kind: MetaKind,
    /// The group it belongs to (the group whose bitmap or table it is, the group holding the
    /// copy), where that applies.
    pub group: Option<u32>,
}

/// What a block is: its owner as debugfs finds it, the metadata it holds, its bitmap bit.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct BlockInfo {
    /// The block number.
    pub block: u64,
    /// The first inode reporting it (debugfs' answer), and how.
    pub owner: Option<Owner>,
    /// The owner is the internal journal's inode.
    pub journal: bool,
    /// Filesystem metadata it holds.
    pub metadata: Vec<Meta>,
    /// Its bit in the block bitmap (`None`: the bitmap could not be read or the block is
    /// outside the filesystem).
    pub allocated: Option<bool>,
}

/// Where each group's bitmaps and inode table lie: (first block, blocks, kind, group), sorted.
fn group_metadata(fs: &Filesystem) -> Vec<(u64, u64, MetaKind, u32)> {
    let mut ranges = Vec::new();
    for group in 0..fs.geo.group_count {
        let Ok(gd) = fs.desc(group) else { continue };
        ranges.push((gd.block_bitmap, 1, MetaKind::BlockBitmap, group));
        ranges.push((gd.inode_bitmap, 1, MetaKind::InodeBitmap, group));
        ranges.push((
            gd.inode_table,
            u64::from(fs.geo.inode_blocks_per_group),
            MetaKind::InodeTable,
            group,
        ));
    }
    ranges.sort_unstable_by_key(|t| (t.0, t.3));
    ranges
}

/// The superblock and descriptor copies of the block's own group.
fn layout_metadata(fs: &Filesystem, blk: u64, out: &mut Vec<Meta>) {
    let geo = &fs.geo;
    let Ok(group_no) = u32::try_from(geo.group_of_block(blk)) else {
        return;
    };
    let layout = geo.layout(group_no);
    let group = Some(group_no);
    let primary = group_no == 0;
    if layout.super_blk == blk && geo.bg_has_super(group_no) {
        let kind = if primary {
            MetaKind::Superblock
        } else {
            MetaKind::BackupSuperblock
        };
        out.push(Meta { kind, group });
    }
    if layout.old_desc_blk != 0 && blk >= layout.old_desc_blk {
        let at = blk - layout.old_desc_blk;
        let descs = if geo.meta_bg {
            u64::from(geo.first_meta_bg).min(geo.desc_blocks)
        } else {
            geo.desc_blocks
        };
        let kind = if at < descs {
            Some(if primary {
                MetaKind::GroupDescriptors
            } else {
                MetaKind::BackupGroupDescriptors
            })
        } else if !geo.meta_bg && at < descs + u64::from(geo.reserved_gdt_blocks) {
            Some(MetaKind::ReservedGdt)
        } else {
            None
        };
        if let Some(kind) = kind {
            out.push(Meta { kind, group });
        }
    }
    if layout.new_desc_blk != 0 && layout.new_desc_blk == blk {
        let kind = if group_no % geo.desc_per_block.max(1) == 0 {
            MetaKind::GroupDescriptors
        } else {
            MetaKind::BackupGroupDescriptors
        };
        out.push(Meta { kind, group });
    }
}

/// Explain each block of `blocks` given what [`icheck`] found.
pub fn explain(fs: &Filesystem, blocks: &[u64], found: &Found) -> Vec<BlockInfo> {
    use crate::reader::bitmap;
    let table = group_metadata(fs);
    let marks = bitmap::UninitMarks::compute(fs).ok();
    let journal_ino = (fs
        .sb
        .has_compat(crate::reader::features::COMPAT_HAS_JOURNAL)
        && fs.sb.journal_inum != 0)
        .then_some(fs.sb.journal_inum);
    let mmp = (fs.sb.has_incompat(crate::reader::features::INCOMPAT_MMP) && fs.sb.mmp_block != 0)
        .then_some(fs.sb.mmp_block);
    let mut bitmaps: HashMap<u32, Option<Vec<u8>>> = HashMap::new();
    blocks
        .iter()
        .map(|&blk| {
            let owner = found.owners.get(&blk).copied();
            let mut metadata = Vec::new();
            let inside = blk < fs.geo.blocks_count;
            if !inside {
                metadata.push(Meta {
                    kind: MetaKind::BeyondEnd,
                    group: None,
                });
            } else if blk < fs.geo.first_data_block {
                metadata.push(Meta {
                    kind: MetaKind::BootBlock,
                    group: None,
                });
            } else {
                layout_metadata(fs, blk, &mut metadata);
                // No range is longer than an inode table: only those starting that close
                // before the block can hold it.
                let reach = u64::from(fs.geo.inode_blocks_per_group).max(1) - 1;
                let from = table.partition_point(|t| t.0 < blk.saturating_sub(reach));
                for range in table[from..].iter().take_while(|range| range.0 <= blk) {
                    if blk < range.0.saturating_add(range.1) {
                        metadata.push(Meta {
                            kind: range.2,
                            group: Some(range.3),
                        });
                    }
                }
                if mmp == Some(blk) {
                    metadata.push(Meta {
                        kind: MetaKind::Mmp,
                        group: None,
                    });
                }
            }
            let allocated = if inside && blk >= fs.geo.first_data_block {
                marks
                    .as_ref()
                    .and_then(|m| allocated(fs, m, blk, &mut bitmaps))
            } else {
                None
            };
            BlockInfo {
                block: blk,
                owner,
                journal: owner.is_some_and(|o| Some(o.inode) == journal_ino),
                metadata,
                allocated,
            }
        })
        .collect()
}

/// The block bitmap bit of `blk` (each group's bitmap read once).
fn allocated(
    fs: &Filesystem,
    marks: &crate::reader::bitmap::UninitMarks,
    blk: u64,
    cache: &mut HashMap<u32, Option<Vec<u8>>>,
) -> Option<bool> {
    let group = u32::try_from(fs.geo.group_of_block(blk)).ok()?;
    let bits = cache
        .entry(group)
        .or_insert_with(|| {
            let gd = fs.desc(group).ok()?;
            let mut buf = Vec::new();
            crate::reader::bitmap::group_block_bitmap(fs, &gd, marks, &mut buf).ok()?;
            Some(buf)
        })
        .as_ref()?;
    let first = (fs.geo.first_data_block >> fs.geo.cluster_bits)
        + u64::from(group) * u64::from(fs.geo.clusters_per_group);
    let bit = usize::try_from((blk >> fs.geo.cluster_bits).checked_sub(first)?).ok()?;
    Some(crate::reader::bitmap::test_bit(bits, bit))
}
