//! Pass 1 (`e2fsck/pass1.c`: `e2fsck_pass1`, `check_blocks`, `scan_extent_node`,
//! `check_ext_attr`, `check_inode_extra_space`, `e2fsck_pass1_check_device_inode`,
//! `e2fsck_pass1_check_symlink`): every inode slot of the walk judged on its own — checksum,
//! in-use decision, dtime, mode and flags, the reserved inodes, the block map or extent tree, the
//! size and block count, and the extended attributes. Block claims go to the ownership bitmaps.
//!
//! What later passes need beyond the inode facts is collected in [`Extras`]: e2fsck's
//! `ea_inode_refs` (`inc_ea_inode_refs`, checked by pass 4), the encryption policy ID of every
//! encrypted inode (`encrypted_files.c` `add_encrypted_file`, compared by pass 2) and the
//! inodes that lie in bad blocks of the inode table (`inode_bb_map`).

use super::context::{Extras, GroupList, InodeFacts, InodeIndex, Pass1Result, UNRECOGNIZED_POLICY};
use super::ownership::{normalise, Claims, DenseClaims};
use super::progress::ProgressHook;
use super::walk::{self, GroupEnd, TableVisitor};
use super::{Finding, Findings, RuleId};
use crate::error::Fault;
use crate::reader::extent::{self, ExtentItem, MapKind, WalkLimits};
use crate::reader::features::*;
use crate::reader::fs::Filesystem;
use crate::reader::inode::{
    Inode, EA_INODE_FL, EXTENTS_FL, INDEX_FL, INLINE_DATA_FL, I_BLOCK_SIZE,
};
use crate::reader::xattr;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// `EXT4_FEATURE_RO_COMPAT_SHARED_BLOCKS`: blocks may be shared between files (read-only
/// deduplicated images), so multiply-claimed blocks are expected.
const RO_COMPAT_SHARED_BLOCKS: u32 = 0x4000;
use crate::reader::ondisk::inode::{
    APPEND_FL, BAD_INO, BOOT_LOADER_INO, CASEFOLD_FL, ENCRYPT_FL, IMMUTABLE_FL, RESIZE_INO,
    ROOT_INO, VERITY_FL,
};

/// What every inode check needs to know about the filesystem.
struct Ctx {
    first_ino: u32,
    block_size: u64,
    cluster_bits: u32,
    limits: WalkLimits,
    seed: Option<u32>,
    journal_ino: Option<u32>,
    quota_inos: [u32; 3],
    has_quota: bool,
    orphans: Vec<u32>,
    extents: bool,
    inline: bool,
    dir_index: bool,
    casefold: bool,
    huge_file: bool,
    ext_attr: bool,
    resize_inode: bool,
    prealloc_dir_blocks: u64,
    inode_size: usize,
    inodes_count: u32,
    imagic: bool,
    hurd: bool,
    largedir: bool,
    large_file: bool,
    bit64: bool,
    /// Quota types counted (quota feature and a quota inode for the type), as e2fsck's
    /// `quota_init_context`.
    quota_types: [bool; 3],
    /// Blocks of the bad-blocks list (inode 1), sorted, when it lists any.
    bad_blocks: Vec<u64>,
    /// What the walk's workers collect for passes 2 and 4 (rarely touched: EA-inode values,
    /// encrypted inodes, inodes in bad blocks).
    extras: Mutex<ExtrasAcc>,
}

impl Ctx {
    fn new(fs: &Filesystem, orphans: &[u32]) -> Ctx {
        let sb = &fs.sb;
        Ctx {
            first_ino: sb.first_ino(),
            block_size: fs.block_size(),
            cluster_bits: fs.geo.cluster_bits,
            limits: WalkLimits {
                first_data_block: fs.geo.first_data_block,
                blocks_count: fs.geo.blocks_count,
                csum_seed: None,
            },
            seed: sb.has_metadata_csum().then(|| fs.csum_seed()),
            // e2fsck's pass 1 treats inode 8 as the journal whenever s_journal_inum names it,
            // has_journal or not (a cleared flag is PR_0_JOURNAL_HAS_JOURNAL, before pass 1).
            journal_ino: (sb.journal_inum == 8
                || (sb.has_compat(COMPAT_HAS_JOURNAL) && sb.journal_inum != 0))
                .then_some(sb.journal_inum),
            quota_inos: [sb.usr_quota_inum, sb.grp_quota_inum, sb.prj_quota_inum],
            has_quota: sb.has_ro_compat(RO_COMPAT_QUOTA),
            orphans: orphans.to_vec(),
            extents: sb.has_incompat(INCOMPAT_EXTENTS),
            inline: sb.has_incompat(INCOMPAT_INLINE_DATA),
            dir_index: sb.has_compat(COMPAT_DIR_INDEX),
            casefold: sb.has_incompat(INCOMPAT_CASEFOLD),
            huge_file: sb.has_ro_compat(RO_COMPAT_HUGE_FILE),
            ext_attr: sb.has_compat(COMPAT_EXT_ATTR),
            resize_inode: sb.has_compat(COMPAT_RESIZE_INODE),
            prealloc_dir_blocks: u64::from(sb.prealloc_dir_blocks),
            inode_size: fs.geo.inode_size as usize,
            inodes_count: sb.inodes_count,
            imagic: sb.has_compat(COMPAT_IMAGIC_INODES),
            hurd: sb.creator_os == 1,
            largedir: sb.has_incompat(INCOMPAT_LARGEDIR),
            large_file: sb.has_ro_compat(RO_COMPAT_LARGE_FILE),
            bit64: sb.has_incompat(INCOMPAT_64BIT),
            quota_types: [sb.usr_quota_inum, sb.grp_quota_inum, sb.prj_quota_inum]
                .map(|i| i != 0 && sb.has_ro_compat(RO_COMPAT_QUOTA)),
            bad_blocks: bad_block_list(fs),
            extras: Mutex::new(ExtrasAcc::default()),
        }
    }
    fn is_orphan(&self, ino: u32) -> bool {
        self.orphans.binary_search(&ino).is_ok()
    }
    fn is_quota_ino(&self, ino: u32) -> bool {
        self.has_quota && self.quota_inos.contains(&ino)
    }
}

/// A worker's reusable buffers for mapping inodes (cleared per inode, so that the common inode
/// costs no allocation).
#[derive(Default)]
struct Scratch {
    mapped: Mapped,
    ext: extent::ExtentWalk,
}

/// What one xattr block is to the inodes that reference it.
#[derive(Clone, Copy, Debug)]
struct XattrRef {
    /// Number of in-use inodes referencing it.
    refs: u32,
    /// `h_refcount` (when the block parsed).
    refcount: Option<u32>,
    /// The first referencing inode (for the finding).
    first_ino: u32,
    /// Some entry keeps its value in an EA inode.
    ea_inodes: bool,
}

/// One walk worker's share of pass 1 (contiguous groups, merged in order).
#[derive(Default)]
struct Acc {
    findings: Findings,
    /// In-use inodes, one list per group walked (in order; merging workers moves lists, not
    /// inodes, and the lists are kept: see [`Pass1Result::index`]).
    inodes: GroupLists,
    /// The in-use inodes of the group being walked (sized once per group: growing it copied
    /// the group's facts several times over), and its directories.
    in_use: Vec<InodeFacts>,
    dirs: u32,
    claims: Claims,
    xattr_blocks: HashMap<u64, XattrRef>,
    /// (group, read, dirs)
    groups: Vec<(u32, bool, u32)>,
    /// The worker's buffers for mapping one inode (reused from inode to inode).
    scratch: Scratch,
    /// The worker's xattr block buffer.
    xattr_buf: Vec<u8>,
    /// Quota usage charged by the inodes this worker judged.
    quota: crate::models::quota::QuotaUsage,
    /// EA inodes the xattrs of the inode being judged use without a problem: e2fsck charges
    /// each to the owner as one more inode (`ea_ibody_quota->inodes++` in check_ea_in_inode,
    /// `ea_block_quota->inodes` per xattr block). Set by `check_xattrs`, taken by
    /// `charge_quota`.
    ea_quota_inodes: u64,
}

/// A worker's in-use lists, one per group walked, in order.
#[derive(Default)]
struct GroupLists {
    /// Inodes per group: each group's part of the index is built as its list comes in, while
    /// the list is in the worker's cache (0: built after the walk).
    ipg: u32,
    lists: Vec<GroupList>,
}

impl GroupLists {
    /// The in-use inodes of one group, by number.
    fn push(&mut self, facts: Vec<InodeFacts>) {
        self.lists.push(GroupList::new(facts, self.ipg));
    }
}

impl Acc {
    fn merge(mut self, later: Acc) -> Acc {
        self.findings = self.findings.merge(later.findings);
        self.inodes.lists.extend(later.inodes.lists);
        self.claims = self.claims.merge(later.claims);
        for (block, xref) in later.xattr_blocks {
            self.xattr_blocks
                .entry(block)
                .and_modify(|existing| {
                    existing.refs = existing.refs.saturating_add(xref.refs);
                    existing.first_ino = existing.first_ino.min(xref.first_ino);
                })
                .or_insert(xref);
        }
        self.groups.extend(later.groups);
        self.quota.merge(later.quota);
        self
    }
}

/// Pass 1 as the walk's visitor: every slot judged ([`check_inode`]), the in-use inodes kept
/// per group, block claims into the ownership bitmaps.
struct Pass1Visitor<'a> {
    fs: &'a Filesystem,
    ctx: &'a Ctx,
    /// The plain bitmaps the workers claim into on a small filesystem.
    dense: Option<Arc<DenseClaims>>,
}

impl TableVisitor for Pass1Visitor<'_> {
    type Worker = Acc;

    fn worker(&self) -> Acc {
        Acc {
            claims: self.dense.as_ref().map(Claims::sharing).unwrap_or_default(),
            inodes: GroupLists {
                ipg: self.fs.geo.inodes_per_group,
                lists: Vec::new(),
            },
            ..Acc::default()
        }
    }

    fn merge(&self, earlier: Acc, later: Acc) -> Acc {
        earlier.merge(later)
    }

    fn group_start(&self, acc: &mut Acc, _group: u32, slots: u32) {
        acc.in_use = Vec::with_capacity(slots as usize);
        acc.dirs = 0;
    }

    fn inode(&self, acc: &mut Acc, group: u32, ino: u32, raw: &[u8]) {
        acc.dirs += u32::from(check_inode(self.fs, self.ctx, group, ino, raw, acc));
    }

    fn group_end(&self, acc: &mut Acc, group: u32, end: GroupEnd) {
        let (read, dirs) = match end {
            GroupEnd::NoDescriptor => (false, 0),
            GroupEnd::Empty => (true, 0),
            GroupEnd::OutsideImage(message) => {
                push_unreadable(acc, group, message);
                (false, 0)
            }
            GroupEnd::Read => {
                acc.inodes.push(std::mem::take(&mut acc.in_use));
                (true, acc.dirs)
            }
            GroupEnd::Partial(message) => {
                push_unreadable(acc, group, message);
                acc.inodes.push(std::mem::take(&mut acc.in_use));
                (false, 0)
            }
        };
        acc.groups.push((group, read, dirs));
    }
}

fn push_unreadable(acc: &mut Acc, group: u32, message: String) {
    acc.findings.push(Finding::new(
        RuleId::InodeTableUnreadable,
        Some(group),
        message,
    ));
}

/// Pass 1: walk every group's inodes, then settle what needs all of them: xattr block reference
/// counts and ownership, multiply-claimed blocks (pass 1B).
pub(super) fn run(
    fs: &Filesystem,
    orphans: Vec<u32>,
    findings: &mut Findings,
    progress: &ProgressHook,
) -> Pass1Result {
    let mut orphans = orphans;
    orphans.sort_unstable();
    orphans.dedup();
    let ctx = Ctx::new(fs, &orphans);
    check_quota_inums(fs, findings);
    let clusters = fs.geo.blocks_count.div_ceil(1 << fs.geo.cluster_bits);
    let visitor = Pass1Visitor {
        fs,
        ctx: &ctx,
        dense: DenseClaims::new(clusters).map(Arc::new),
    };
    let mut acc = walk::run(fs, &visitor, progress).unwrap_or_else(|| visitor.worker());
    drop(visitor);
    // The index is built while the claims and xattr blocks are settled (independent work).
    let lists = std::mem::take(&mut acc.inodes.lists);
    let ((), index) = rayon::join(
        || {
            acc.claims.settle();
            acc.claims.used.optimize();
            acc.claims.multi.optimize();
            super::ownership::claim_metadata(fs, &mut acc.claims);
            settle_xattr_blocks(fs, &ctx, &mut acc);
        },
        || InodeIndex::from_lists(lists, fs.geo.inodes_per_group),
    );
    let merged = std::mem::take(findings).merge(std::mem::take(&mut acc.findings));
    *findings = merged;
    let groups = fs.geo.group_count as usize;
    let mut group_read = vec![false; groups];
    let mut group_dirs = vec![0; groups];
    for (group, read, dirs) in acc.groups {
        group_read[group as usize] = read;
        group_dirs[group as usize] = dirs;
    }
    let result = Pass1Result {
        index,
        orphans,
        claims: acc.claims,
        group_read,
        group_dirs,
        extras: ctx.take_extras(),
        quota: acc.quota,
    };
    report_multiply_claimed(fs, &ctx, &result, findings);
    result
}

/// The blocks an inode maps, as pass 1 counts them.
#[derive(Debug, Default, PartialEq)]
struct Mapped {
    /// In-range block runs (data, mapping and tree blocks), `(start, len)`.
    ranges: Vec<(u64, u64)>,
    /// Last logical block mapped, and last initialised one.
    last_block: Option<u64>,
    last_init: Option<u64>,
    /// Problems of the map itself.
    problems: Vec<(RuleId, String)>,
    /// Warnings that do not make the map unusable.
    notes: Vec<(RuleId, String)>,
}

impl Mapped {
    fn clear(&mut self) {
        self.ranges.clear();
        self.last_block = None;
        self.last_init = None;
        self.problems.clear();
        self.notes.clear();
    }
    /// Claim the clusters the inode holds (see [`Mapped::clusters`]); returns their number.
    fn claim_clusters(&self, cluster_bits: u32, claims: &mut super::ownership::Claims) -> u64 {
        let mut count = 0u64;
        let mut claim = |&(start, len): &(u64, u64)| {
            claims.claim(start, len);
            count += len;
        };
        if cluster_bits == 0 {
            self.ranges.iter().for_each(&mut claim);
        } else {
            self.clusters(cluster_bits).iter().for_each(&mut claim);
        }
        count
    }
    fn problem(&mut self, rule: RuleId, msg: String) {
        if self.problems.len() < 16 {
            self.problems.push((rule, msg));
        }
    }
    fn data(&mut self, lblk: u64, len: u64, init: bool) {
        let last = lblk.saturating_add(len.saturating_sub(1));
        self.last_block = Some(self.last_block.map_or(last, |l| l.max(last)));
        if init {
            self.last_init = Some(self.last_init.map_or(last, |l| l.max(last)));
        }
    }
    /// Clusters the inode holds: every mapping counts without bigalloc (a block mapped twice is
    /// counted and claimed twice, as e2fsck does); with bigalloc each cluster once.
    fn clusters(&self, cluster_bits: u32) -> Vec<(u64, u64)> {
        if cluster_bits == 0 {
            return self.ranges.clone();
        }
        let mut claims: Vec<(u64, u64)> = self
            .ranges
            .iter()
            .map(|&(start, len)| {
                let first = start >> cluster_bits;
                let last = (start + len - 1) >> cluster_bits;
                (first, last - first + 1)
            })
            .collect();
        normalise(&mut claims);
        claims
    }
}

fn in_fs(ctx: &Ctx, start: u64, len: u64) -> bool {
    start >= ctx.limits.first_data_block
        && start
            .checked_add(len)
            .is_some_and(|e| e <= ctx.limits.blocks_count)
}

/// Map an extent-mapped inode: tree checks as `scan_extent_node` makes them.
fn map_extents(
    fs: &Filesystem,
    ctx: &Ctx,
    ino: u32,
    inode: &Inode,
    walk: &mut extent::ExtentWalk,
    mapped: &mut Mapped,
) {
    if let Some(header) = leaf_root(&inode.block) {
        // The tree is its root's leaf entries: the walk would list them and find nothing else
        // (no tree block to read or checksum, nothing to optimise at depth 0).
        let mut leaves = LeafCheck::default();
        for leaf in extent::leaf_iter(&inode.block, &header) {
            leaves.judge(ctx, inode, &leaf, mapped);
        }
        return;
    }
    map_extents_walked(fs, ctx, ino, inode, walk, mapped);
}

/// [`map_extents`] through the general tree walk (any root; what the leaf-root shortcut must
/// agree with, see `leaf_root_shortcut_agrees_with_the_walk`).
fn map_extents_walked(
    fs: &Filesystem,
    ctx: &Ctx,
    ino: u32,
    inode: &Inode,
    walk: &mut extent::ExtentWalk,
    mapped: &mut Mapped,
) {
    let mut limits = ctx.limits;
    // Only tree blocks carry checksums: no per-inode seed for a tree held in i_block.
    let has_tree_blocks =
        extent::ExtentHeader::decode_fast(&inode.block).is_some_and(|h| h.depth > 0);
    limits.csum_seed = ctx
        .seed
        .filter(|_| has_tree_blocks)
        .map(|s| extent::inode_csum_seed(s, ino, inode.generation));
    if let Err(error) = extent::walk_extents_into(&inode.block, &limits, |b| fs.block(b), walk) {
        mapped.problem(RuleId::ExtentHeader, format!("extent tree root: {error}"));
        return;
    }
    for problem in &walk.problems {
        if problem.fault == Fault::OutOfRange {
            continue; // judged below from the entries themselves
        }
        let rule = if problem.fault == Fault::Checksum {
            RuleId::ExtentChecksum
        } else {
            RuleId::ExtentHeader
        };
        mapped.problem(rule, problem.message.clone());
    }
    for node in &walk.nodes {
        mapped.ranges.push((node.block, 1));
    }
    if walk.problems.is_empty() {
        if let Some(why) = optimizable(ctx, walk) {
            mapped.notes.push((RuleId::ExtentOptimizable, why));
        }
    }
    let mut leaves = LeafCheck::default();
    let mut pending_index: Option<(u16, u32)> = None;
    for item in &walk.items {
        match *item {
            ExtentItem::Index {
                level,
                logical,
                child,
            } => {
                check_index_start(&mut pending_index, level, logical, mapped);
                if !in_fs(ctx, child, 1) {
                    mapped.problem(
                        RuleId::ExtentBlockRange,
                        format!("extent index (logical {logical}) points to block {child}, outside the filesystem"),
                    );
                }
                pending_index = Some((level, logical));
            }
            ExtentItem::Leaf {
                level,
                extent: leaf,
            } => {
                check_index_start(&mut pending_index, level, leaf.logical, mapped);
                leaves.judge(ctx, inode, &leaf, mapped);
            }
        }
    }
}

/// The header of an extent root that is a valid leaf (depth 0, entries within `max`, `max`
/// within i_block): the roots [`extent::ExtentHeader::parse`] accepts at depth 0. `None` sends
/// the inode through the general walk.
fn leaf_root(block: &[u8; I_BLOCK_SIZE]) -> Option<extent::ExtentHeader> {
    const ROOT_ENTRIES: u16 = ((I_BLOCK_SIZE - 12) / 12) as u16;
    extent::ExtentHeader::decode_fast(block).filter(|header| {
        header.magic == extent::EXTENT_MAGIC
            && header.depth == 0
            && header.entries <= header.max
            && header.max <= ROOT_ENTRIES
    })
}

/// The leaf entries of one tree, in order: what each adds to the map and what is wrong with it.
#[derive(Default)]
struct LeafCheck {
    /// End of the logical range mapped so far.
    next_logical: u64,
    /// Last (logical, physical) block mapped, for the bigalloc alignment rule.
    last_mapped: Option<(u64, u64)>,
}

impl LeafCheck {
    fn judge(&mut self, ctx: &Ctx, inode: &Inode, leaf: &extent::Extent, mapped: &mut Mapped) {
        let lblk = u64::from(leaf.logical);
        let len = u64::from(leaf.len);
        if len == 0 {
            mapped.problem(
                RuleId::ExtentEntry,
                format!("extent at logical {lblk} has length 0"),
            );
            return;
        }
        if lblk < self.next_logical {
            mapped.problem(
                RuleId::ExtentOrder,
                format!(
                    "extent at logical {lblk} ({len} blocks) overlaps or precedes the previous one (ends at {})",
                    self.next_logical
                ),
            );
        }
        self.next_logical = self.next_logical.max(lblk + len);
        if !in_fs(ctx, leaf.physical, len) || leaf.physical == 0 {
            mapped.problem(
                RuleId::ExtentBlockRange,
                format!(
                    "extent (logical {lblk}, {len} blocks) maps to blocks {}..{}, outside the filesystem (blocks {}..{})",
                    leaf.physical,
                    leaf.physical.saturating_add(len),
                    ctx.limits.first_data_block,
                    ctx.limits.blocks_count
                ),
            );
            return;
        }
        let expected = mapped.last_block.map_or(0, |l| l + 1);
        if inode.is_dir() && lblk > expected {
            mapped.problem(
                RuleId::ExtentDirHole,
                format!("directory block at logical {lblk} should be at {expected} (hole in the directory)"),
            );
        }
        if leaf.uninit && inode.is_dir() {
            mapped.problem(
                RuleId::ExtentUninitDir,
                format!("directory extent at logical {lblk} is marked uninitialised"),
            );
        }
        check_cluster_alignment(ctx, self.last_mapped, lblk, leaf.physical, len, mapped);
        self.last_mapped = Some((lblk + len - 1, leaf.physical + len - 1));
        mapped.ranges.push((leaf.physical, len));
        mapped.data(lblk, len, !leaf.uninit);
    }
}

/// e2fsck's `e2fsck_should_rebuild_extents`: a level whose nodes leave more than a block's worth
/// of entries free could be narrower; a level with fewer entries than an upper level could hold
/// could be shorter. (e2fsck offers the optimisation and exits 0: `PR_NOT_A_FIX`.)
fn optimizable(ctx: &Ctx, walk: &extent::ExtentWalk) -> Option<String> {
    let root = walk.root?;
    let depth = usize::from(root.depth).min(usize::from(extent::MAX_DEPTH));
    let mut num = [0u64; extent::MAX_DEPTH as usize + 1];
    let mut max = [0u64; extent::MAX_DEPTH as usize + 1];
    num[0] = u64::from(root.entries);
    max[0] = u64::from(root.max);
    for node in &walk.nodes {
        let level = usize::from(node.level).min(depth);
        num[level] += u64::from(node.header.entries);
        max[level] += u64::from(node.header.max);
    }
    let per_block = (ctx.block_size - 12) / 12;
    for level in 0..=depth {
        if max[level].saturating_sub(num[level]) > per_block {
            return Some(format!("extent tree (at level {level}) could be narrower"));
        }
        if (0..level).any(|j| num[level] < max[j]) {
            return Some(format!("extent tree (at level {level}) could be shorter"));
        }
    }
    None
}

/// An index entry's logical start must equal the first entry of its child
/// (`PR_1_EXTENT_INDEX_START_INVALID`).
fn check_index_start(
    pending: &mut Option<(u16, u32)>,
    level: u16,
    logical: u32,
    mapped: &mut Mapped,
) {
    if let Some((pl, plog)) = pending.take() {
        if level == pl + 1 && logical != plog {
            mapped.problem(
                RuleId::ExtentIndexStart,
                format!(
                    "extent index starts at logical {plog}, its first child entry at {logical}"
                ),
            );
        }
    }
}

/// Map a classic block-mapped inode.
fn map_blockmap(fs: &Filesystem, ctx: &Ctx, inode: &Inode, mapped: &mut Mapped) {
    let walk = extent::walk_blockmap(&inode.block, ctx.block_size, &ctx.limits, |b| fs.block(b));
    for problem in &walk.problems {
        mapped.problem(RuleId::BlockmapRange, problem.message.clone());
    }
    for run in &walk.runs {
        if !in_fs(ctx, run.physical, run.len) {
            if let MapKind::Data(l) = run.kind {
                mapped.problem(
                    RuleId::BlockmapRange,
                    format!(
                        "logical block {l} maps to block {}, outside the filesystem (blocks {}..{})",
                        run.physical, ctx.limits.first_data_block, ctx.limits.blocks_count
                    ),
                );
            }
            continue;
        }
        mapped.ranges.push((run.physical, run.len));
        if let MapKind::Data(l) = run.kind {
            mapped.data(l, run.len, true);
        }
    }
}

/// The inode's blocks, by its kind (`ext2fs_inode_has_valid_blocks2`).
fn map_inode(fs: &Filesystem, ctx: &Ctx, ino: u32, inode: &Inode) -> Mapped {
    let mut scratch = Scratch::default();
    map_inode_into(fs, ctx, ino, inode, &mut scratch);
    scratch.mapped
}

/// [`map_inode`] into the worker's scratch buffers (`scratch.mapped` holds the result).
fn map_inode_into(fs: &Filesystem, ctx: &Ctx, ino: u32, inode: &Inode, scratch: &mut Scratch) {
    let mapped = &mut scratch.mapped;
    mapped.clear();
    let ft = inode.file_type();
    let devlike = matches!(ft, 0o020000 | 0o060000 | 0o010000 | 0o140000);
    if devlike || inode.has_flag(INLINE_DATA_FL) || inode.is_fast_symlink() && inode.blocks_raw == 0
    {
        return;
    }
    if inode.is_symlink() && inode.size < I_BLOCK_SIZE as u64 && !inode.has_flag(EXTENTS_FL) {
        // ext2fs_inode_data_blocks2 == 0: a fast symlink whatever i_blocks says (the xattr block
        // aside); block-map symlinks below 60 bytes are judged by the symlink rule.
        let xattr_blocks =
            u64::from(inode.file_acl != 0) * ((ctx.block_size << ctx.cluster_bits) / 512);
        if inode.blocks_raw <= xattr_blocks {
            return;
        }
    }
    if inode.has_flag(EXTENTS_FL) {
        map_extents(fs, ctx, ino, inode, &mut scratch.ext, mapped);
    } else {
        map_blockmap(fs, ctx, inode, mapped);
    }
}

/// Judge one inode slot; the facts of an inode in use go to the worker's current group list.
/// Returns whether it is an in-use directory. (The facts are pushed here, where they are made:
/// returned, they were re-read through memory in other pieces than written, a stall on every
/// inode.)
fn check_inode(
    fs: &Filesystem,
    ctx: &Ctx,
    group: u32,
    ino: u32,
    raw: &[u8],
    acc: &mut Acc,
) -> bool {
    let keep = |acc: &mut Acc, facts: InodeFacts| {
        let dir = facts.is_dir();
        acc.in_use.push(facts);
        dir
    };
    if in_bad_block(fs, ctx, group, ino) {
        return keep(acc, record_bb_inode(ctx, ino));
    }
    let zero = raw.iter().all(|&b| b == 0);
    let inode = Inode::parse(raw);
    let check = InodeCheck {
        fs,
        ctx,
        group,
        ino,
        inode: &inode,
        raw,
    };
    if let Some(seed) = ctx.seed {
        if !zero && !inode.checksum_ok(seed, ino, raw) {
            check.push(acc, RuleId::InodeChecksum, || {
                "inode checksum does not match".to_string()
            });
        }
    }
    let reserved = ino < ctx.first_ino && ino != ROOT_INO;
    if reserved {
        let facts = check.check_reserved(acc);
        return keep(acc, facts);
    }
    // An unlinked inode on the orphan list (an open file deleted while mounted) is still in use
    // as the kernel finds it: its blocks and bitmap bits stay until ext4_orphan_cleanup frees
    // them at the next mount, so it is judged in use (e2fsck -n calls it deleted: the catalogue's
    // state.orphan_list deviation).
    let unlinked_orphan = inode.mode != 0 && ctx.is_orphan(ino);
    if inode.links_count == 0 && !ctx.is_quota_ino(ino) && !unlinked_orphan {
        // e2fsck_pass1: a slot with no links is free; with a mode but no dtime it is a deleted
        // inode the kernel did not finish (orphans are finished by the orphan list instead).
        if inode.dtime == 0 && inode.mode != 0 && !ctx.is_orphan(ino) {
            check.push(acc, RuleId::InodeZeroDtime, || {
                format!(
                    "deleted inode (links count 0, mode 0{:o}) has no deletion time",
                    inode.mode
                )
            });
        }
        return false;
    }
    if inode.dtime != 0 && !ctx.is_orphan(ino) {
        check.push(acc, RuleId::InodeDtime, || {
            format!(
                "in-use inode (links count {}) has a deletion time ({})",
                inode.links_count,
                super::state::utc_date(i64::from(inode.dtime))
            )
        });
    }
    if ino == ROOT_INO && !inode.is_dir() {
        check.push(acc, RuleId::InodeRootNotDir, || {
            format!("the root inode is not a directory (mode 0{:o})", inode.mode)
        });
    }
    check.check_mode_and_flags(acc);
    check.check_extra_isize(acc);
    check.check_more_flags(acc);
    check.check_unused_fields(acc);
    check.check_time_epochs(acc);
    let mut scratch = std::mem::take(&mut acc.scratch);
    map_inode_into(fs, ctx, ino, &inode, &mut scratch);
    let mapped = &scratch.mapped;
    if inode.is_dir() {
        prefetch_dir_blocks(fs, mapped);
    }
    check.check_bigalloc_blockmap(mapped, acc);
    check.check_type_specific(mapped, acc);
    let acl_blocks = check.check_xattrs(acc);
    if inode.has_flag(ENCRYPT_FL) {
        check.check_encryption_context(acc);
    }
    let (blocks, clusters) = check.finish_blocks(mapped, acl_blocks, true, acc);
    acc.scratch = scratch;
    check.charge_quota(clusters, acc);
    keep(acc, facts(ino, &inode, blocks))
}

/// One inode slot being judged: what every finding about it names and every check reads (the
/// part of e2fsck's `struct problem_context` pass 1 fills per inode: `ino`, `inode`, `group`),
/// with the filesystem and its facts. The checks of one inode are its methods, each taking the
/// worker's accumulator.
#[derive(Clone, Copy)]
struct InodeCheck<'a> {
    fs: &'a Filesystem,
    ctx: &'a Ctx,
    /// The block group whose table holds the slot.
    group: u32,
    ino: u32,
    inode: &'a Inode,
    /// The whole on-disk record (the in-inode xattrs and checksum are read from it).
    raw: &'a [u8],
}

impl InodeCheck<'_> {
    /// A finding about this inode (kept up to [`super::MAX_FINDINGS_PER_RULE`] per rule: the
    /// message is made only when kept).
    fn push(&self, acc: &mut Acc, rule: RuleId, msg: impl FnOnce() -> String) {
        acc.findings
            .push_with(rule, || Finding::inode(rule, self.group, self.ino, msg()));
    }

    /// Reserved inodes (below `s_first_ino`, not the root): always in use; the bad-blocks, resize,
    /// journal and quota inodes hold blocks, the others must be clear.
    fn check_reserved(&self, acc: &mut Acc) -> InodeFacts {
        let InodeCheck {
            fs,
            ctx,
            ino,
            inode,
            ..
        } = *self;
        let blank = inode.links_count == 0 && inode.blocks_raw == 0 && inode.block[..4] == [0; 4];
        if ino == BAD_INO {
            let faults = crate::reader::inode::bad_blocks_inode_faults(inode);
            if !faults.is_empty() {
                self.push(acc, RuleId::InodeBadBlocksInode, || {
                    format!(
                        "the bad-blocks inode looks invalid: it has {}",
                        faults.join(", ")
                    )
                });
            }
            let mapped = map_inode_blockmap_only(fs, ctx, inode);
            claim_only(ctx, &mapped, acc);
            return facts(ino, inode, 0);
        }
        if ino == RESIZE_INO {
            if inode.mode != 0 && !inode.is_reg() {
                self.push(acc, RuleId::InodeReserved, || {
                    format!("resize inode has mode 0{:o}", inode.mode)
                });
            }
            if ctx.resize_inode {
                // Only the double-indirect block is the inode's own (the reserved GDT blocks are
                // metadata).
                let dind = u64::from(u32::from_le_bytes(
                    inode.block[52..56].try_into().unwrap_or([0; 4]),
                ));
                if dind != 0 && in_fs(ctx, dind, 1) {
                    acc.claims.claim(dind >> ctx.cluster_bits, 1);
                }
            }
            return facts(ino, inode, 0);
        }
        let holds_blocks = Some(ino) == ctx.journal_ino || ctx.is_quota_ino(ino);
        if holds_blocks {
            if !inode.is_reg() {
                self.push(acc, RuleId::InodeReserved, || {
                    format!(
                        "{} inode has mode 0{:o}, should be a regular file",
                        if Some(ino) == ctx.journal_ino {
                            "journal"
                        } else {
                            "quota"
                        },
                        inode.mode
                    )
                });
            }
            let mapped = map_inode(fs, ctx, ino, inode);
            let acl = self.check_xattrs(acc);
            let (blocks, _) = self.finish_blocks(&mapped, acl, false, acc);
            return facts(ino, inode, blocks);
        }
        let journal_slot = ino == 8 || ctx.quota_inos[..2].contains(&ino) || matches!(ino, 3 | 4);
        if journal_slot && !blank {
            self.push(acc, RuleId::InodeReserved, || {
                "reserved journal/quota inode is not clear although the feature is off".to_string()
            });
        } else if inode.mode != 0 && (ino != BOOT_LOADER_INO || inode.is_dir()) {
            self.push(acc, RuleId::InodeReserved, || {
                format!("reserved inode has mode 0{:o}, should be 0", inode.mode)
            });
        }
        if !blank && inode.mode != 0 {
            let mapped = map_inode(fs, ctx, ino, inode);
            claim_only(ctx, &mapped, acc);
        }
        facts(ino, inode, 0)
    }

    /// Mode and flag combinations (`e2fsck_pass1` before `check_blocks`).
    fn check_mode_and_flags(&self, acc: &mut Acc) {
        let InodeCheck { ctx, inode, .. } = *self;
        let ft = inode.file_type();
        if !matches!(
            ft,
            0o100000 | 0o040000 | 0o120000 | 0o020000 | 0o060000 | 0o010000 | 0o140000
        ) {
            self.push(acc, RuleId::InodeMode, || {
                format!("mode 0{:o} is not a valid file type", inode.mode)
            });
        }
        let flag = |acc: &mut Acc, why: &str| {
            self.push(acc, RuleId::InodeFlags, || {
                format!("flags 0x{:08x}: {why}", inode.flags)
            })
        };
        if inode.has_flag(EXTENTS_FL) && !ctx.extents {
            flag(acc, "EXTENTS set without the extents feature");
        }
        if inode.has_flag(INLINE_DATA_FL) && !ctx.inline {
            flag(acc, "INLINE_DATA set without the inline_data feature");
        }
        if inode.has_flag(INLINE_DATA_FL) && inode.has_flag(EXTENTS_FL) {
            flag(acc, "both INLINE_DATA and EXTENTS set");
        }
        if inode.has_flag(INDEX_FL) && (!inode.is_dir() || !ctx.dir_index) {
            flag(
                acc,
                "INDEX (htree) set on a non-directory or without dir_index",
            );
        }
        if inode.has_flag(CASEFOLD_FL) && (!inode.is_dir() || !ctx.casefold) {
            flag(acc, "CASEFOLD set on a non-directory or without casefold");
        }
        let special = matches!(ft, 0o020000 | 0o060000 | 0o010000 | 0o140000);
        // PR_1_SET_IMMUTABLE carries PR_NO_OK: e2fsck -n accepts it, so it is its own
        // (warning) rule.
        if special && inode.has_flag(IMMUTABLE_FL | APPEND_FL) {
            self.push(acc, RuleId::InodeSpecialImmutable, || {
                format!(
                    "flags 0x{:08x}: IMMUTABLE or APPEND set on a device, FIFO or socket",
                    inode.flags
                )
            });
        }
        if special && inode.size != 0 {
            self.push(acc, RuleId::InodeSize, || {
                format!(
                    "device, FIFO or socket with size {} (should be 0)",
                    inode.size
                )
            });
        }
    }

    /// `check_inode_extra_space`: i_extra_isize in [4, inode size - 128], a multiple of 4.
    fn check_extra_isize(&self, acc: &mut Acc) {
        let InodeCheck { ctx, inode, .. } = *self;
        if ctx.inode_size <= 128 {
            return;
        }
        let extra = usize::from(inode.extra_isize);
        let max = ctx.inode_size - 128;
        if extra != 0 && (extra < 4 || extra > max || extra % 4 != 0) {
            self.push(acc, RuleId::InodeExtraIsize, || {
                format!("i_extra_isize is {extra}, should be a multiple of 4 in [4, {max}]")
            });
        }
    }

    /// Flag/feature pairs `e2fsck_pass1` checks beyond [`check_mode_and_flags`]: IMAGIC without
    /// imagic_inodes (`PR_1_SET_IMAGIC`).
    fn check_more_flags(&self, acc: &mut Acc) {
        let InodeCheck { ctx, inode, .. } = *self;
        if inode.has_flag(IMAGIC_FL) && !ctx.imagic {
            self.push(acc, RuleId::InodeImagic, || {
                format!(
                    "flags 0x{:08x}: IMAGIC set without the imagic_inodes feature",
                    inode.flags
                )
            });
        }
    }

    /// Fields the filesystem's features leave unused, which e2fsck's pass 1 marks bad and pass 2
    /// (`e2fsck_process_bad_inode`) reports: `i_faddr`, a directory's `i_size_high` without
    /// largedir, `i_blocks_hi` without huge_file, `i_file_acl_hi` without 64bit; and a regular
    /// file of 2 GiB or more without large_file (`PR_2_FEATURE_LARGE_FILES`).
    fn check_unused_fields(&self, acc: &mut Acc) {
        let InodeCheck { ctx, inode, .. } = *self;
        // The high halves as the record holds them (Inode keeps them joined to the low halves).
        let faddr = inode.obso_faddr;
        let size_high = (inode.size >> 32) as u32;
        let blocks_hi = (inode.blocks_raw >> 32) as u16;
        let file_acl_hi = (inode.file_acl >> 32) as u16;
        let mut set: Vec<String> = Vec::new();
        if faddr != 0 {
            set.push(format!("i_faddr {:#x}", faddr));
        }
        if inode.is_dir() && !ctx.largedir && size_high != 0 {
            set.push(format!(
                "i_size_high {:#x} (directory, no largedir)",
                size_high
            ));
        }
        if !ctx.hurd && !ctx.huge_file && blocks_hi != 0 {
            set.push(format!("i_blocks_hi {:#x} (no huge_file)", blocks_hi));
        }
        if !ctx.hurd && !ctx.bit64 && file_acl_hi != 0 {
            set.push(format!("i_file_acl_hi {:#x} (no 64bit)", file_acl_hi));
        }
        if !set.is_empty() {
            self.push(acc, RuleId::InodeUnusedFields, || {
                format!("unused fields set: {}", set.join(", "))
            });
        }
        if inode.is_reg() && !ctx.large_file && inode.size >= 0x8000_0000 {
            self.push(acc, RuleId::InodeLargeFile, || {
                format!(
                    "regular file of {} bytes (2 GiB or more) without the large_file feature",
                    inode.size
                )
            });
        }
    }

    /// `check_inode_extra_space`'s timestamp test: a time with bit 31 set whose `_extra` word has
    /// both epoch bits set is a pre-1970 time written in the encoding older kernels used (e2fsck
    /// asks while the clock is before 2242). Checked, as e2fsck does, on inodes larger than 128
    /// bytes whose `i_extra_isize` leaves room for an xattr header.
    fn check_time_epochs(&self, acc: &mut Acc) {
        let InodeCheck { ctx, inode, .. } = *self;
        if ctx.inode_size <= 128 {
            return;
        }
        let max = ctx.inode_size - 128;
        let extra = usize::from(inode.extra_isize);
        if extra != 0 && (extra < 4 || extra > max || extra % 4 != 0) || extra + 4 >= max {
            return;
        }
        let large = &inode.in_record;
        let old_encoding = |t: u32, x: u32| t & 0x8000_0000 != 0 && x & 3 == 3;
        if !(old_encoding(inode.atime, large.atime_extra)
            || old_encoding(inode.ctime, large.ctime_extra)
            || old_encoding(large.crtime, large.crtime_extra)
            || old_encoding(inode.mtime, large.mtime_extra))
        {
            return;
        }
        // (name, seconds, extra): atime, ctime, crtime, mtime, as the record holds them.
        let bad: Vec<&str> = [
            ("atime", inode.atime, large.atime_extra),
            ("ctime", inode.ctime, large.ctime_extra),
            ("crtime", large.crtime, large.crtime_extra),
            ("mtime", inode.mtime, large.mtime_extra),
        ]
        .into_iter()
        .filter(|&(_, t, x)| old_encoding(t, x))
        .map(|(n, _, _)| n)
        .collect();
        if !bad.is_empty() {
            self.push(acc, RuleId::InodeTimeEpoch, || {
                format!(
                    "{} beyond 2310-04-04: likely a pre-1970 time in the old encoding",
                    bad.join(", ")
                )
            });
        }
    }

    /// `PR_1_NO_BIGALLOC_BLOCKMAP_FILES`: on bigalloc, an inode whose blocks are mapped by a
    /// classic block map.
    fn check_bigalloc_blockmap(&self, mapped: &Mapped, acc: &mut Acc) {
        let InodeCheck { ctx, inode, .. } = *self;
        if ctx.cluster_bits == 0 || inode.has_flag(EXTENTS_FL) || mapped.ranges.is_empty() {
            return;
        }
        self.push(acc, RuleId::InodeBigallocBlockmap, || {
            "block-mapped inode on a bigalloc filesystem (only extent-mapped files can hold clusters)"
                .to_string()
        });
    }

    /// Symlinks and device inodes (`e2fsck_pass1_check_symlink`,
    /// `e2fsck_pass1_check_device_inode`).
    fn check_type_specific(&self, mapped: &Mapped, acc: &mut Acc) {
        let InodeCheck { inode, .. } = *self;
        let ft = inode.file_type();
        if matches!(ft, 0o020000 | 0o060000 | 0o010000 | 0o140000)
            && inode.has_flag(INDEX_FL | EXTENTS_FL | INLINE_DATA_FL)
        {
            self.push(acc, RuleId::InodeDevice, || {
                format!(
                    "device, FIFO or socket inode with flags 0x{:08x} (INDEX, EXTENTS or INLINE_DATA)",
                    inode.flags
                )
            });
        }
        if !inode.is_symlink() || inode.has_flag(INLINE_DATA_FL) {
            return;
        }
        let target_len = if mapped.ranges.is_empty() && !inode.has_flag(EXTENTS_FL) {
            // Fast symlink: the target in i_block.
            if inode.size >= I_BLOCK_SIZE as u64 {
                None
            } else {
                Some(strnlen(&inode.block))
            }
        } else {
            slow_symlink_len(self.fs, self.ctx, inode, mapped)
        };
        if target_len != Some(inode.size) {
            self.push(acc, RuleId::InodeSymlink, || {
                format!(
                    "symlink of size {} whose target is {}",
                    inode.size,
                    target_len.map_or("unreadable or longer than a block".to_string(), |len| {
                        format!("{len} bytes long")
                    })
                )
            });
        }
    }

    /// In-inode xattrs and the xattr block; returns the clusters they add to i_blocks: the xattr
    /// block, and the values kept in EA inodes (charged to the owner, as the kernel's quota
    /// accounting and e2fsck's `check_large_ea_inode` count them).
    fn check_xattrs(&self, acc: &mut Acc) -> Option<u64> {
        let InodeCheck {
            ctx, inode, raw, ..
        } = *self;
        let mut ibody_quota = 0;
        acc.ea_quota_inodes = 0;
        let mut inline_attr = false;
        if raw.len() > 128
            && inode.extra_isize != 0
            && usize::from(inode.extra_isize) + 128 <= raw.len()
            && (inode.extra_isize % 4 != 0 || xattr::ibody_has_magic(raw, inode.extra_isize))
        {
            // (Without the magic and with a valid i_extra_isize the parse would find no entries.)
            match xattr::parse_ibody_unnamed(raw, inode.extra_isize) {
                Ok(ib) => {
                    let (clusters, ea_inodes) = self.check_ibody_entries(&ib, acc);
                    ibody_quota = clusters;
                    acc.ea_quota_inodes = ea_inodes;
                    inline_attr = ib.entries.iter().any(|e| e.has_full_name("system.data"));
                }
                Err(e) => self.push(acc, RuleId::XattrIbody, || {
                    format!("in-inode extended attributes: {e}")
                }),
            }
        }
        if inode.has_flag(INLINE_DATA_FL) && ctx.inline && !inline_attr {
            self.push(acc, RuleId::InodeInlineData, || {
                "INLINE_DATA is set but the inode has no system.data attribute".to_string()
            });
        }
        let blk = inode.file_acl;
        if blk == 0 {
            return Some(ibody_quota);
        }
        if !ctx.ext_attr || !in_fs(ctx, blk, 1) {
            self.push(acc, RuleId::XattrBlockRange, || {
                format!(
                    "i_file_acl is block {blk}, {}",
                    if ctx.ext_attr {
                        "outside the filesystem"
                    } else {
                        "without the ext_attr feature"
                    }
                )
            });
            return Some(ibody_quota);
        }
        let block_ea = match acc.xattr_blocks.get_mut(&blk) {
            Some(r) => {
                r.refs = r.refs.saturating_add(1);
                r.ea_inodes
            }
            None => {
                let xattr_ref = self.read_xattr_block(blk, acc);
                let ea_inodes = xattr_ref.ea_inodes;
                acc.xattr_blocks.insert(blk, xattr_ref);
                ea_inodes
            }
        };
        let (block_quota, block_ea_inodes) = if block_ea {
            block_ea_quota(ctx, blk)
        } else {
            (0, 0)
        };
        acc.ea_quota_inodes += block_ea_inodes;
        Some(ibody_quota + 1 + block_quota)
    }

    /// In-inode entries (`check_ea_in_inode`): a non-zero `e_hash` of an in-inode value matches
    /// its name and value (padded to 4 bytes, as stored); values in EA inodes are checked and
    /// counted. Returns the clusters of the EA-inode values charged to this inode, and how many
    /// EA inodes are.
    fn check_ibody_entries(&self, ib: &xattr::Ibody<'_>, acc: &mut Acc) -> (u64, u64) {
        let InodeCheck {
            ctx, inode, raw, ..
        } = *self;
        let first = 128 + usize::from(inode.extra_isize) + 4;
        let mut quota = (0, 0);
        for entry in &ib.entries {
            if entry.value_inum != 0 {
                count_ea_inode_ref(ctx, &mut lock(&ctx.extras), entry.value_inum);
                if let Some(clusters) = self.check_ea_inode_value(entry, acc) {
                    quota.0 += clusters;
                    quota.1 += 1;
                }
                continue;
            }
            if entry.hash == 0 {
                continue;
            }
            let start = first + usize::from(entry.value_offs);
            let padded = (entry.value_size as usize).div_ceil(4) * 4;
            let value = raw
                .get(start..start.saturating_add(padded).min(raw.len()))
                .unwrap_or(&[]);
            let value = if entry.value_size == 0 {
                &[][..]
            } else {
                value
            };
            if entry.hash != xattr::entry_hash(entry.raw_name, value, false)
                && entry.hash != xattr::entry_hash(entry.raw_name, value, true)
            {
                self.push(acc, RuleId::XattrIbodyHash, || {
                    format!(
                        "in-inode xattr {} has hash {:#010x}, which matches neither its name nor its value",
                        entry.full_name(),
                        entry.hash
                    )
                });
            }
        }
        quota
    }

    /// An entry whose value lives in an EA inode (`check_large_ea_inode`): the EA inode number in
    /// range; `e_hash` = hash of the name and the EA inode's value hash (its `i_atime`), or the EA
    /// inode points back to the owner (Lustre's older format: `i_mtime` = owner, same generation);
    /// the EA inode in use with EA_INODE. Returns the clusters charged to the owner for the value
    /// (0 when only a back-reference vouches for it), or `None` after a problem: e2fsck then
    /// charges neither the value nor the EA inode.
    fn check_ea_inode_value(&self, entry: &xattr::Entry<'_>, acc: &mut Acc) -> Option<u64> {
        let InodeCheck { fs, ctx, ino, .. } = *self;
        let ea_ino = entry.value_inum;
        if ea_ino < ctx.first_ino || ea_ino > ctx.inodes_count {
            self.push(acc, RuleId::XattrEaInode, || {
                format!(
                    "xattr {} names EA inode {ea_ino}, outside the normal inodes",
                    entry.full_name()
                )
            });
            return None;
        }
        let raw = match fs.inode_raw(ea_ino) {
            Ok(r) => r,
            Err(err) => {
                self.push(acc, RuleId::XattrEaInode, || {
                    format!("EA inode {ea_ino}: {err}")
                });
                return None;
            }
        };
        let ea = Inode::parse(&raw);
        let value_hash = ea.atime.to_le_bytes();
        let hash_ok = entry.hash == xattr::entry_hash(entry.raw_name, &value_hash, false)
            || entry.hash == xattr::entry_hash(entry.raw_name, &value_hash, true);
        let backref = ea.mtime == ino && ea.generation == self.inode.generation;
        let flagged = ea.has_flag(EA_INODE_FL);
        if !hash_ok && !backref && flagged {
            self.push(acc, RuleId::XattrEaInodeHash, || {
                format!(
                    "xattr {} has hash {:#010x}, which matches neither its name with EA inode {ea_ino}'s value hash {:#010x} nor a back-reference",
                    entry.full_name(),
                    entry.hash,
                    ea.atime
                )
            });
            return None;
        }
        if !flagged || ea.links_count == 0 {
            self.push(acc, RuleId::XattrEaInode, || {
                format!(
                    "EA inode {ea_ino} is not a live EA inode (flags 0x{:x}, links {})",
                    ea.flags, ea.links_count
                )
            });
            return None;
        }
        if hash_ok {
            let cluster = ctx.block_size << ctx.cluster_bits;
            Some(u64::from(entry.value_size).div_ceil(cluster))
        } else {
            Some(0)
        }
    }

    /// Parse and judge xattr block `blk` (once per worker; the first referencing inode is named).
    fn read_xattr_block(&self, blk: u64, acc: &mut Acc) -> XattrRef {
        let InodeCheck { fs, ctx, ino, .. } = *self;
        let mut xref = XattrRef {
            refs: 1,
            refcount: None,
            first_ino: ino,
            ea_inodes: false,
        };
        // Read into the worker's buffer, past the block cache: a worker reads each xattr block
        // once (`acc.xattr_blocks`); a failed read is retried through the cache for its error.
        let mut data = std::mem::take(&mut acc.xattr_buf);
        data.resize(ctx.block_size as usize, 0);
        let read = blk
            .checked_mul(ctx.block_size)
            .and_then(|off| fs.source.read_into(off, &mut data, "xattr block").ok());
        if read.is_none() {
            match fs.block(blk) {
                Ok(b) => {
                    data.clear();
                    data.extend_from_slice(&b);
                }
                Err(e) => {
                    self.push(acc, RuleId::XattrBlock, || {
                        format!("xattr block {blk}: {e}")
                    });
                    acc.xattr_buf = data;
                    return xref;
                }
            }
        }
        self.judge_xattr_block(blk, &data, &mut xref, acc);
        acc.xattr_buf = data;
        xref
    }

    /// The checks of [`read_xattr_block`] on the block's bytes.
    fn judge_xattr_block(&self, blk: u64, data: &[u8], xref: &mut XattrRef, acc: &mut Acc) {
        let InodeCheck { ctx, .. } = *self;
        let xb = match xattr::parse_block(data, blk, ctx.seed) {
            Ok(xb) => xb,
            Err(entry) => {
                self.push(acc, RuleId::XattrBlock, || {
                    format!("xattr block {blk}: {entry}")
                });
                return;
            }
        };
        xref.refcount = Some(xb.header.refcount);
        if xb.header.blocks != 1 {
            self.push(acc, RuleId::XattrBlock, || {
                format!(
                    "xattr block {blk}: h_blocks is {}, should be 1",
                    xb.header.blocks
                )
            });
        }
        if let Some(csum) = xb.checksum.filter(|csum| !csum.ok()) {
            self.push(acc, RuleId::XattrChecksum, || {
                format!(
                    "xattr block {blk}: checksum 0x{:08x}, should be 0x{:08x}",
                    csum.stored, csum.computed
                )
            });
        }
        if !xb.bad_entry_hashes.is_empty() {
            self.push(acc, RuleId::XattrHash, || {
                format!(
                    "xattr block {blk}: {} entries whose hash does not match name and value",
                    xb.bad_entry_hashes.len()
                )
            });
        }
        let mut quota = (0, 0);
        for entry in xb.entries.iter().filter(|entry| entry.value_inum != 0) {
            xref.ea_inodes = true;
            if let Some(clusters) = self.check_ea_inode_value(entry, acc) {
                quota.0 += clusters;
                quota.1 += 1;
            }
        }
        if xref.ea_inodes {
            lock(&ctx.extras).block_quota.insert(blk, quota);
        }
    }

    /// The encryption context of an ENCRYPT inode (e2fsck `add_encrypted_file`): the xattr named
    /// "c" (index 9, or index 0 as libext2fs writes a name it has no prefix for), in the inode or
    /// its xattr block. Missing or malformed contexts are findings; valid ones get a policy ID
    /// (the context without its nonce), so pass 2 can compare a directory with its entries.
    fn check_encryption_context(&self, acc: &mut Acc) {
        let InodeCheck {
            fs,
            ctx,
            ino,
            inode,
            raw,
            ..
        } = *self;
        let policy = match encryption_context(fs, ctx, inode, raw) {
            None => {
                self.push(acc, RuleId::InodeEncryptionContext, || {
                    "ENCRYPT is set but the inode has no encryption context (xattr \"c\")"
                        .to_string()
                });
                return;
            }
            Some(None) => UNRECOGNIZED_POLICY,
            Some(Some(c)) => match policy_of_context(&c) {
                Ok(Some(p)) => policy_id(&mut lock(&ctx.extras), p),
                Ok(None) => UNRECOGNIZED_POLICY,
                Err(why) => {
                    self.push(acc, RuleId::InodeEncryptionContext, || {
                        format!("encryption context is corrupt: {why}")
                    });
                    return;
                }
            },
        };
        lock(&ctx.extras).policies.push((ino, policy));
    }

    /// Report the map's problems, claim its clusters, and check i_blocks (and i_size when `sizes`).
    /// Returns the number of blocks mapped and the clusters charged to the inode (its own, the xattr
    /// block and EA-inode values: e2fsck's `pb.num_blocks`).
    fn finish_blocks(
        &self,
        mapped: &Mapped,
        acl_blocks: Option<u64>,
        sizes: bool,
        acc: &mut Acc,
    ) -> (u64, u64) {
        let InodeCheck { ctx, inode, .. } = *self;
        for (rule, msg) in mapped.problems.iter().chain(&mapped.notes) {
            self.push(acc, *rule, || msg.clone());
        }
        let nclusters = mapped.claim_clusters(ctx.cluster_bits, &mut acc.claims);
        if mapped.problems.is_empty() {
            let per_cluster_512 = (ctx.block_size << ctx.cluster_bits) / 512;
            let have = inode.blocks_512(ctx.huge_file, ctx.block_size);
            if let Some(want) = acl_blocks
                .map(|a| (nclusters + a).saturating_mul(per_cluster_512))
                .filter(|&w| w != have)
            {
                self.push(acc, RuleId::InodeBlocks, || {
                    format!("i_blocks is {have} (512-byte units), the inode holds {want}")
                });
            }
            if sizes {
                self.check_size(mapped, acc);
            }
        }
        (
            mapped.ranges.iter().map(|r| r.1).sum(),
            nclusters + acl_blocks.unwrap_or(0),
        )
    }

    /// i_size against the mapped range (`check_blocks`' bad_size cases).
    fn check_size(&self, mapped: &Mapped, acc: &mut Acc) {
        let InodeCheck { ctx, inode, .. } = *self;
        let bs = ctx.block_size;
        let size = inode.size;
        if inode.has_flag(INLINE_DATA_FL) {
            return;
        }
        let bad = if inode.is_dir() {
            let nblock = size / bs;
            let want = mapped.last_block.map_or(0, |l| l + 1);
            if mapped.ranges.is_empty() {
                self.push(acc, RuleId::InodeZeroLengthDir, || {
                    "directory has no blocks".to_string()
                });
                return;
            }
            size % bs != 0 || nblock > want || want - nblock > ctx.prealloc_dir_blocks
        } else if inode.is_reg() {
            mapped
                .last_init
                .is_some_and(|l| size < l.saturating_mul(bs) && !inode.has_flag(VERITY_FL))
        } else {
            false
        };
        if bad {
            self.push(acc, RuleId::InodeSize, || {
                format!(
                    "i_size is {size}, the last block mapped is {}",
                    mapped
                        .last_block
                        .map_or("none".to_string(), |l| format!("logical {l}"))
                )
            });
        }
    }

    /// e2fsck's `check_blocks` end: charge an in-use inode (the root or a normal one, not the
    /// project quota inode nor an EA inode) with its clusters and itself (`quota_data_add`,
    /// `quota_data_inodes`).
    fn charge_quota(&self, clusters: u64, acc: &mut Acc) {
        let InodeCheck {
            ctx, ino, inode, ..
        } = *self;
        if !ctx.quota_types.iter().any(|&t| t)
            || ino == ctx.quota_inos[2]
            || inode.has_flag(EA_INODE_FL)
        {
            return;
        }
        if acc.quota.is_off() {
            acc.quota = crate::models::quota::QuotaUsage::new(ctx.quota_types);
        }
        let owner = crate::models::quota::Owner {
            uid: inode.uid,
            gid: inode.gid,
            projid: inode.projid,
        };
        let cluster_size = ctx.block_size << ctx.cluster_bits;
        let inodes = 1 + std::mem::take(&mut acc.ea_quota_inodes);
        acc.quota
            .add(owner, clusters.saturating_mul(cluster_size), inodes);
    }
}

/// Most blocks of one directory hinted by [`prefetch_dir_blocks`] (a hint never needs to cover a
/// hostile map).
const DIR_PREFETCH_BLOCKS: u64 = 4096;

/// Ask the kernel now for a directory's blocks (and its mapping blocks), just mapped: pass 2 reads
/// them after the walk, one block at a time, so a cold device would serve thousands of scattered
/// single-block reads on demand; hinted here they arrive while the walk goes on. A hint only.
fn prefetch_dir_blocks(fs: &Filesystem, mapped: &Mapped) {
    let mut budget = DIR_PREFETCH_BLOCKS;
    for &(start, len) in &mapped.ranges {
        let count = len.min(budget);
        if count == 0 {
            break;
        }
        budget -= count;
        fs.prefetch(start..start.saturating_add(count));
    }
}

fn facts(ino: u32, inode: &Inode, blocks: u64) -> InodeFacts {
    InodeFacts {
        ino,
        mode: inode.mode,
        links_count: inode.links_count,
        flags: inode.flags,
        blocks: u32::try_from(blocks).unwrap_or(u32::MAX),
    }
}

fn strnlen(bytes: &[u8]) -> u64 {
    bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len()) as u64
}

/// Length of a slow symlink's target: one data block, size below the block size.
fn slow_symlink_len(fs: &Filesystem, ctx: &Ctx, inode: &Inode, mapped: &Mapped) -> Option<u64> {
    if mapped.last_block != Some(0) || inode.size >= ctx.block_size {
        return None;
    }
    let blk = if inode.has_flag(EXTENTS_FL) {
        extent::map_extent(&inode.block, 0, |b| fs.block(b))
            .ok()
            .flatten()?
    } else {
        u64::from(u32::from_le_bytes(inode.block[0..4].try_into().ok()?))
    };
    let data = fs.block(blk).ok()?;
    Some(strnlen(&data))
}

fn map_inode_blockmap_only(fs: &Filesystem, ctx: &Ctx, inode: &Inode) -> Mapped {
    let mut mapped = Mapped::default();
    if !inode.has_flag(EXTENTS_FL) {
        map_blockmap(fs, ctx, inode, &mut mapped);
    }
    mapped
}

fn claim_only(ctx: &Ctx, mapped: &Mapped, acc: &mut Acc) {
    mapped.claim_clusters(ctx.cluster_bits, &mut acc.claims);
}

/// After the walk: claim every xattr block once and compare `h_refcount` with the number of
/// in-use inodes that reference it (`PR_1_EXTATTR_REFCOUNT`).
fn settle_xattr_blocks(fs: &Filesystem, ctx: &Ctx, acc: &mut Acc) {
    let mut blocks: Vec<(u64, XattrRef)> = acc.xattr_blocks.drain().collect();
    blocks.sort_unstable_by_key(|b| b.0);
    for (blk, xattr_ref) in blocks {
        if xattr_ref.ea_inodes {
            count_block_ea_inode_refs(fs, ctx, blk);
        }
        acc.claims.claim(blk >> ctx.cluster_bits, 1);
        if let Some(rc) = xattr_ref.refcount.filter(|&rc| rc != xattr_ref.refs) {
            let group = ((u64::from(xattr_ref.first_ino) - 1)
                / u64::from(fs.geo.inodes_per_group.max(1))) as u32;
            acc.findings.push_with(RuleId::XattrRefcount, || {
                Finding::inode(
                    RuleId::XattrRefcount,
                    group,
                    xattr_ref.first_ino,
                    format!(
                        "xattr block {blk} has reference count {rc}, {} inode(s) refer to it",
                        xattr_ref.refs
                    ),
                )
                .with("block", blk)
            });
        }
    }
}

/// Most (cluster, inode) pairs pass 1B collects to name claimants.
const MAX_DUP_PAIRS: usize = 1 << 20;

/// Pass 1B: when clusters are claimed twice, find every inode that claims them and report each
/// with the other claimants.
fn report_multiply_claimed(
    fs: &Filesystem,
    ctx: &Ctx,
    walk: &Pass1Result,
    findings: &mut Findings,
) {
    let dups = walk.claims.conflicts();
    if dups.is_empty() || fs.sb.has_ro_compat(RO_COMPAT_SHARED_BLOCKS) {
        return;
    }
    let mut pairs: Vec<(u64, u32)> = walk
        .par_inodes()
        .filter(|i| i.blocks > 0 || i.ino == RESIZE_INO || i.ino == BAD_INO)
        .flat_map_iter(|inode| {
            let mut out = Vec::new();
            for cluster in inode_clusters(fs, ctx, inode.ino) {
                for block in cluster.0..cluster.0 + cluster.1 {
                    if dups.contains(block) {
                        out.push((block, inode.ino));
                    }
                }
                if out.len() > 4096 {
                    break;
                }
            }
            out
        })
        .collect();
    pairs.truncate(MAX_DUP_PAIRS);
    pairs.sort_unstable();
    let mut by_ino: std::collections::BTreeMap<
        u32,
        (Vec<u64>, std::collections::BTreeSet<String>),
    > = Default::default();
    let mut start = 0;
    while start < pairs.len() {
        let cluster = pairs[start].0;
        let end = pairs[start..]
            .iter()
            .position(|p| p.0 != cluster)
            .map_or(pairs.len(), |k| start + k);
        let owners: Vec<u32> = pairs[start..end].iter().map(|p| p.1).collect();
        let meta = walk.claims.meta.contains(cluster);
        for &owner in &owners {
            let entry = by_ino.entry(owner).or_default();
            if entry.0.len() < 64 {
                entry.0.push(cluster << ctx.cluster_bits);
            }
            for &other in owners.iter().filter(|&&other| other != owner) {
                entry.1.insert(format!("inode {other}"));
            }
            if meta {
                entry.1.insert("filesystem metadata".to_string());
            }
        }
        start = end;
    }
    let ipg = u64::from(fs.geo.inodes_per_group.max(1));
    for (ino, (blocks, others)) in by_ino {
        let group = ((u64::from(ino) - 1) / ipg) as u32;
        let list: Vec<String> = blocks.iter().map(u64::to_string).collect();
        findings.push(
            Finding::inode(
                RuleId::BlockMultiplyClaimed,
                group,
                ino,
                format!(
                    "multiply-claimed block(s) {} shared with {}",
                    list.join(" "),
                    others.into_iter().collect::<Vec<_>>().join(", ")
                ),
            )
            .with("blocks", blocks),
        );
    }
}

/// The clusters inode `ino` claims (re-read; what pass 1 claimed for it).
fn inode_clusters(fs: &Filesystem, ctx: &Ctx, ino: u32) -> Vec<(u64, u64)> {
    let Ok(raw) = fs.inode_raw(ino) else {
        return Vec::new();
    };
    let inode = Inode::parse(&raw);
    let mapped = if ino == BAD_INO {
        map_inode_blockmap_only(fs, ctx, &inode)
    } else if ino == RESIZE_INO {
        // The resize inode claims only its double-indirect block here (pass 1 checks it alone).
        let dind = u64::from(inode.block_map().dind);
        let mut mapped = Mapped::default();
        if dind != 0 && ctx.resize_inode && in_fs(ctx, dind, 1) {
            mapped.ranges.push((dind, 1));
        }
        mapped
    } else {
        map_inode(fs, ctx, ino, &inode)
    };
    mapped.clusters(ctx.cluster_bits)
}

/// The superblock's quota inode numbers: 0, a reserved quota inode or a normal inode in range
/// (`e2fsck/super.c` `check_quota_inum`, `PR_0_INVALID_QUOTA_INO`).
fn check_quota_inums(fs: &Filesystem, findings: &mut Findings) {
    let sb = &fs.sb;
    for (what, ino) in [
        ("user", sb.usr_quota_inum),
        ("group", sb.grp_quota_inum),
        ("project", sb.prj_quota_inum),
    ] {
        let reserved = matches!(ino, 3 | 4);
        if ino != 0 && (ino > sb.inodes_count || (ino < sb.first_ino() && !reserved)) {
            findings.push(
                Finding::new(
                    RuleId::InodeQuotaInum,
                    None,
                    format!("the {what} quota inode number {ino} is invalid"),
                )
                .with("stored", ino),
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What pass 1 hands to passes 2 and 4 beyond the inode facts (e2fsck's `ea_inode_refs`,
// `encrypted_files` and `inode_bb_map`), and the checks that build it.

/// The workers' shared collection (behind a mutex: touched only by EA-inode values, encrypted
/// inodes and inodes in bad blocks).
#[derive(Default)]
struct ExtrasAcc {
    /// References per EA inode (only numbers of normal inodes: at most one counter per inode).
    ea_refs: HashMap<u32, u32>,
    policies: Vec<(u32, u32)>,
    policy_ids: HashMap<Vec<u8>, u32>,
    bb_inodes: Vec<u32>,
    /// (clusters, EA inodes) charged per xattr block holding EA-inode entries.
    block_quota: HashMap<u64, (u64, u64)>,
}

fn lock(mutex: &Mutex<ExtrasAcc>) -> std::sync::MutexGuard<'_, ExtrasAcc> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Ctx {
    /// Hand over what the walk collected (called once, after it).
    fn take_extras(&self) -> Extras {
        let mut collected = std::mem::take(&mut *lock(&self.extras));
        let mut ea_inode_refs: Vec<(u32, u32)> = collected.ea_refs.into_iter().collect();
        ea_inode_refs.sort_unstable();
        collected.policies.sort_unstable();
        collected.bb_inodes.sort_unstable();
        Extras {
            ea_inode_refs,
            policies: collected.policies,
            bb_inodes: collected.bb_inodes,
        }
    }
}

/// Most bad blocks remembered (8 bytes each).
const MAX_BAD_BLOCKS: usize = 1 << 20;

/// The data blocks of the bad-blocks inode (`ext2fs_read_bb_inode`), sorted; empty when it
/// lists none or cannot be read.
fn bad_block_list(fs: &Filesystem) -> Vec<u64> {
    let Ok(raw) = fs.inode_raw(BAD_INO) else {
        return Vec::new();
    };
    let inode = Inode::parse(&raw);
    if inode.has_flag(EXTENTS_FL) || inode.block.iter().all(|&b| b == 0) {
        return Vec::new();
    }
    let limits = WalkLimits {
        first_data_block: fs.geo.first_data_block,
        blocks_count: fs.geo.blocks_count,
        csum_seed: None,
    };
    let walk = extent::walk_blockmap(&inode.block, fs.block_size(), &limits, |block| {
        fs.block(block)
    });
    let mut bad_blocks: Vec<u64> = Vec::new();
    for run in &walk.runs {
        if let MapKind::Data(_) = run.kind {
            for block in run.physical..run.physical.saturating_add(run.len) {
                if bad_blocks.len() >= MAX_BAD_BLOCKS {
                    break;
                }
                bad_blocks.push(block);
            }
        }
    }
    bad_blocks.sort_unstable();
    bad_blocks.dedup();
    bad_blocks
}

/// e2fsck's inode scan (`EXT2_ET_BAD_BLOCK_IN_INODE_TABLE`): inode `ino` lies in an inode
/// table block that the bad-blocks list names.
fn in_bad_block(fs: &Filesystem, ctx: &Ctx, group: u32, ino: u32) -> bool {
    if ctx.bad_blocks.is_empty() {
        return false;
    }
    let Ok(gd) = fs.desc(group) else { return false };
    let ipg = u64::from(fs.geo.inodes_per_group.max(1));
    let index = (u64::from(ino) - 1) % ipg;
    let blk = gd
        .inode_table
        .saturating_add(index * ctx.inode_size as u64 / ctx.block_size);
    ctx.bad_blocks.binary_search(&blk).is_ok()
}

/// An inode in a bad block: in use, not judged (e2fsck marks it used and skips it; pass 2
/// reports the entries naming it, pass 4 leaves it alone).
fn record_bb_inode(ctx: &Ctx, ino: u32) -> InodeFacts {
    lock(&ctx.extras).bb_inodes.push(ino);
    InodeFacts {
        ino,
        mode: 0,
        links_count: 0,
        flags: 0,
        blocks: 0,
    }
}

/// The "c" xattr's value: None when absent, `Some(None)` when it lives in an EA inode (not
/// read: accepted as unrecognised), `Some(Some(bytes))` otherwise.
fn encryption_context(
    fs: &Filesystem,
    ctx: &Ctx,
    inode: &Inode,
    raw: &[u8],
) -> Option<Option<Vec<u8>>> {
    let is_ctx = |entry: &xattr::Entry<'_>| matches!(entry.index, 0 | 9) && entry.raw_name == b"c";
    let value = |entry: &xattr::Entry<'_>| {
        if entry.value_inum != 0 {
            None
        } else {
            Some(entry.value.unwrap_or(&[]).to_vec())
        }
    };
    if raw.len() > 128 && inode.extra_isize != 0 {
        if let Ok(ib) = xattr::parse_ibody_unnamed(raw, inode.extra_isize) {
            if let Some(entry) = ib.entries.iter().find(|entry| is_ctx(entry)) {
                return Some(value(entry));
            }
        }
    }
    let blk = inode.file_acl;
    if blk == 0 || !ctx.ext_attr || !in_fs(ctx, blk, 1) {
        return None;
    }
    let data = fs.block(blk).ok()?;
    let xb = xattr::parse_block(&data, blk, None).ok()?;
    let found = xb.entries.iter().find(|entry| is_ctx(entry)).map(value);
    found
}

/// `fscrypt_context_to_policy`: version 1 (28 bytes) or 2 (40 bytes) without the 16-byte
/// nonce; `Ok(None)` for a version this checker does not know; `Err` when corrupt.
fn policy_of_context(context: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let (want, policy_len) = match context.first() {
        None => return Err("empty".to_string()),
        Some(0) => return Err("version 0".to_string()),
        Some(1) => (28, 12),
        Some(2) => (40, 24),
        Some(_) => return Ok(None),
    };
    if context.len() != want {
        return Err(format!(
            "version {} context of {} bytes, should be {want}",
            context[0],
            context.len()
        ));
    }
    Ok(Some(context[..policy_len].to_vec()))
}

/// (clusters, EA inodes) charged by xattr block `blk` (computed when it was first read).
fn block_ea_quota(ctx: &Ctx, blk: u64) -> (u64, u64) {
    lock(&ctx.extras)
        .block_quota
        .get(&blk)
        .copied()
        .unwrap_or((0, 0))
}

/// The EA-inode references of xattr block `blk`, counted once however many inodes share it
/// (e2fsck's `inc_ea_inode_refs` when it first meets the block).
fn count_block_ea_inode_refs(fs: &Filesystem, ctx: &Ctx, blk: u64) {
    let Ok(data) = fs.block(blk) else { return };
    let Ok(xb) = xattr::parse_block(&data, blk, None) else {
        return;
    };
    let mut extras = lock(&ctx.extras);
    for entry in xb.entries.iter().filter(|entry| entry.value_inum != 0) {
        count_ea_inode_ref(ctx, &mut extras, entry.value_inum);
    }
}

/// One more xattr entry whose value is in EA inode `ea_ino` (a normal inode number; others
/// are `xattr.ea_inode` findings and cannot be EA inodes).
fn count_ea_inode_ref(ctx: &Ctx, extras: &mut ExtrasAcc, ea_ino: u32) {
    if ea_ino >= ctx.first_ino && ea_ino <= ctx.inodes_count {
        let refs = extras.ea_refs.entry(ea_ino).or_insert(0);
        *refs = refs.saturating_add(1);
    }
}

/// Most distinct encryption policies given their own ID; past it, IDs are a 32-bit hash of the
/// policy (so memory stays bounded by the cap, not by a hostile image's policy count).
const MAX_POLICY_IDS: usize = 1 << 16;

fn policy_id(extras: &mut ExtrasAcc, policy: Vec<u8>) -> u32 {
    if let Some(&id) = extras.policy_ids.get(&policy) {
        return id;
    }
    if extras.policy_ids.len() < MAX_POLICY_IDS {
        let id = extras.policy_ids.len() as u32;
        extras.policy_ids.insert(policy, id);
        return id;
    }
    // FNV-1a, folded into the IDs above the map's and below the special ones.
    let hash = policy.iter().fold(0x811c_9dc5u32, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    MAX_POLICY_IDS as u32 + hash % (UNRECOGNIZED_POLICY - 1 - MAX_POLICY_IDS as u32)
}

/// `EXT2_FEATURE_COMPAT_IMAGIC_INODES`.
const COMPAT_IMAGIC_INODES: u32 = 0x0002;
/// `EXT2_IMAGIC_FL`.
use crate::reader::ondisk::inode::IMAGIC_FL;

/// `has_unaligned_cluster_map` (bigalloc): an extent's offset within its logical cluster equals
/// its offset within its physical cluster, and an extent continuing the previous one's logical
/// cluster continues its physical cluster too (`PR_1_MISALIGNED_CLUSTER`).
fn check_cluster_alignment(
    ctx: &Ctx,
    last: Option<(u64, u64)>,
    lblk: u64,
    pblk: u64,
    len: u64,
    mapped: &mut Mapped,
) {
    let bits = ctx.cluster_bits;
    if bits == 0 {
        return;
    }
    let mask = (1u64 << bits) - 1;
    let misaligned = lblk & mask != pblk & mask
        || last.is_some_and(|(ll, lp)| {
            lblk & mask != 0 && lblk >> bits == ll >> bits && pblk >> bits != lp >> bits
        });
    if misaligned {
        mapped.problem(
            RuleId::ExtentMisalignedCluster,
            format!(
                "extent (logical {lblk}, {len} blocks) at block {pblk}: logical and physical blocks sit at different places in their clusters"
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift: reproducible noise without a dependency.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// An i_block: a depth-0 root with up to 4 extents near the filesystem's range (in range,
    /// past it, at 0, empty, uninitialised, overlapping, holes), then mutated at random bytes
    /// (header fields included, so that some roots are refused and go to the walk).
    fn random_root(state: &mut u64, blocks: u64) -> [u8; I_BLOCK_SIZE] {
        let mut root = [0u8; I_BLOCK_SIZE];
        let entries = (next(state) % 6) as u16;
        let max = [4, 4, 4, 3, 5, 0, entries][(next(state) % 7) as usize];
        let depth: u16 = [0, 0, 0, 0, 0, 0, 0, 1, 6][(next(state) % 9) as usize];
        let magic =
            [extent::EXTENT_MAGIC, extent::EXTENT_MAGIC, 0xF30B][(next(state) % 3) as usize];
        root[0..2].copy_from_slice(&magic.to_le_bytes());
        root[2..4].copy_from_slice(&entries.to_le_bytes());
        root[4..6].copy_from_slice(&max.to_le_bytes());
        root[6..8].copy_from_slice(&depth.to_le_bytes());
        let mut logical = 0u32;
        for index in 0..usize::from(entries.min(4)) {
            let offset = 12 + 12 * index;
            logical = match next(state) % 4 {
                0 => logical.saturating_sub(1),
                1 => logical + (next(state) % 3) as u32,
                _ => logical,
            };
            let len = match next(state) % 6 {
                0 => 0,
                1 => 0x8000 | (1 + next(state) % 4) as u16,
                _ => (1 + next(state) % 8) as u16,
            };
            let start = match next(state) % 6 {
                0 => 0,
                1 => blocks - 2,
                2 => blocks + next(state) % 100,
                _ => next(state) % blocks,
            };
            root[offset..offset + 4].copy_from_slice(&logical.to_le_bytes());
            root[offset + 4..offset + 6].copy_from_slice(&len.to_le_bytes());
            root[offset + 6..offset + 8].copy_from_slice(&((start >> 32) as u16).to_le_bytes());
            root[offset + 8..offset + 12].copy_from_slice(&(start as u32).to_le_bytes());
            logical += u32::from(len & 0x7FFF);
        }
        for _ in 0..next(state) % 3 {
            let at = (next(state) % I_BLOCK_SIZE as u64) as usize;
            root[at] = next(state) as u8;
        }
        root
    }

    #[test]
    fn leaf_root_shortcut_agrees_with_the_walk() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example.img");
        let fs = Filesystem::open(std::path::Path::new(path), &Default::default()).unwrap();
        let ctx = Ctx::new(&fs, &[]);
        let mut inode = Inode::parse(&[0u8; 256]);
        inode.flags = EXTENTS_FL;
        let (mut walk, mut m_fast, mut m_walk) = Default::default();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut shortcut = 0;
        for round in 0..20_000u32 {
            inode.mode = if round % 3 == 0 { 0o040755 } else { 0o100644 };
            inode.block = random_root(&mut state, fs.geo.blocks_count);
            shortcut += usize::from(leaf_root(&inode.block).is_some());
            m_fast = Mapped::default();
            map_extents(&fs, &ctx, 12, &inode, &mut walk, &mut m_fast);
            m_walk = Mapped::default();
            map_extents_walked(&fs, &ctx, 12, &inode, &mut walk, &mut m_walk);
            assert_eq!(m_fast, m_walk, "i_block {:02x?}", inode.block);
        }
        // Both outcomes of the shortcut's test were exercised.
        assert!(
            shortcut > 5_000 && shortcut < 19_000,
            "{shortcut} shortcuts"
        );
        drop((m_fast, m_walk));
    }
}
