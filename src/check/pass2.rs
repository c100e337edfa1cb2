//! Pass 2: every directory block of every in-use directory, as e2fsck's pass 2 checks it
//! (e2fsck/pass2.c `check_dir_block`, `check_dot`, `check_dotdot`, `check_name`,
//! `check_filetype`, `parse_int_node`, and the htree summary of `e2fsck_pass2`), with the kernel's
//! `ext4_check_dir_entry` and `dx_probe` (fs/ext4/dir.c, namei.c) conditions.
//!
//! Directories are checked in parallel (rayon), each on its own: entries are walked within the
//! block (each step advances at least 12 bytes), the index of an htree directory is walked from
//! its root with the depth bounded by the format's limit and every index block number bounded by
//! the directory size, and duplicate names are found with a set of 64-bit name hashes whose size
//! is capped per directory. References are counted into the shared [`InodeIndex`] for passes 3
//! and 4.
//!
//! Encrypted directories are judged by the policy pass 1 found (`check_encryption_policy`,
//! `encrypted_check_name`); encrypted casefolded ones keep each entry's hash after its name
//! (`EXT2_DIRENT_HASH`), which the leaf-range check uses instead of recomputing SipHash.

use super::context::{file_type_of_mode, Extras, InodeIndex, InodeSlot, Pass2Result};
use super::{Finding, Findings, RuleId};
use crate::reader::dir::{
    self, rec_len_from_disk, AreaEntries, AreaEntry, TAIL_FILE_TYPE, TAIL_SIZE,
};
use crate::reader::dirhash;
use crate::reader::features::{
    COMPAT_DIR_INDEX, INCOMPAT_CASEFOLD, INCOMPAT_FILETYPE, INCOMPAT_LARGEDIR,
};
use crate::reader::fs::Filesystem;
use crate::reader::group::BG_INODE_UNINIT;
use crate::reader::inode::{self, Inode, INDEX_FL, INLINE_DATA_FL};
use crate::reader::ondisk::dir::{
    DirEntry2, DirEntryHash, DxCountLimit, DxEntry, DxNode, DxRoot, DxTail,
};
use crate::reader::ondisk::dir::{InlineDirHeader, DX_ROOT_INFO_OFFSET};
use crate::reader::ondisk::{self, OnDisk};
use rayon::prelude::*;
use std::collections::HashSet;

/// Most distinct names remembered per directory for the duplicate check (8 bytes each).
pub const MAX_NAMES_PER_DIR: usize = 1 << 20;
/// Most blocks of one directory read (the block list costs 16 bytes a block): 4 GiB of
/// directory with 4 KiB blocks, far beyond what the kernel creates.
pub const MAX_DIR_BLOCKS: u64 = 1 << 20;
/// `EXT4_ENC_STRICT_MODE_FL` in `s_encoding_flags`.
const ENC_STRICT_MODE: u16 = 0x0001;
/// Encrypted names are at least one cipher block long (`EXT4_CRYPTO_BLOCK_SIZE`).
const CRYPTO_BLOCK: usize = 16;

/// Filesystem-wide facts every directory check needs.
struct Ctx {
    first_ino: u32,
    inodes_count: u32,
    ipg: u32,
    /// Per group: INODE_UNINIT (with descriptor checksums), and the first inode of the unused
    /// tail of the inode table.
    groups: Vec<(bool, u32)>,
    filetype: bool,
    metadata_csum: bool,
    dir_index: bool,
    /// Most indirect levels an htree may have (2, or 3 with largedir).
    htree_levels: u8,
    strict_encoding: bool,
    casefold_fs: bool,
    seed: [u32; 4],
    /// Metadata checksum seed of the filesystem.
    fs_seed: u32,
    s_flags: u32,
    bs: usize,
}

impl Ctx {
    fn new(fs: &Filesystem) -> Ctx {
        let sb = &fs.sb;
        let ipg = fs.geo.inodes_per_group;
        let gdt_csum = sb.has_group_desc_csum();
        let groups = (0..fs.group_count())
            .map(|group| {
                let base = u64::from(group) * u64::from(ipg) + 1;
                match fs.desc(group) {
                    Ok(desc) if gdt_csum => {
                        let unused = desc.itable_unused.min(ipg);
                        let first_unused = base + u64::from(ipg - unused);
                        (
                            desc.has_flag(BG_INODE_UNINIT),
                            u32::try_from(first_unused).unwrap_or(u32::MAX),
                        )
                    }
                    _ => (false, u32::MAX),
                }
            })
            .collect();
        Ctx {
            first_ino: sb.first_ino(),
            inodes_count: sb.inodes_count,
            ipg,
            groups,
            filetype: sb.has_incompat(INCOMPAT_FILETYPE),
            metadata_csum: sb.has_metadata_csum(),
            dir_index: sb.has_compat(COMPAT_DIR_INDEX),
            htree_levels: if sb.has_incompat(INCOMPAT_LARGEDIR) {
                3
            } else {
                2
            },
            strict_encoding: sb.encoding_flags & ENC_STRICT_MODE != 0,
            casefold_fs: sb.has_incompat(INCOMPAT_CASEFOLD),
            seed: dirhash::seed_words(&sb.hash_seed),
            fs_seed: fs.csum_seed(),
            s_flags: sb.flags,
            bs: fs.block_size() as usize,
        }
    }
}

/// Run pass 2 over every in-use directory of `index`, counting references into it.
pub fn run(
    fs: &Filesystem,
    index: &InodeIndex,
    extras: &Extras,
    findings: &mut Findings,
) -> Pass2Result {
    let ctx = Ctx::new(fs);
    let (found, lost_found, mut scratch) = (0..index.dir_count())
        .into_par_iter()
        .fold(
            || (Findings::default(), None, Scratch::default()),
            |(mut acc, mut lf, scratch), dir_index| {
                let mut check = DirCheck::new(&ctx, index, extras, index.dir(dir_index), scratch);
                check.run(fs);
                if check.lost_found.is_some() {
                    lf = check.lost_found;
                }
                acc = acc.merge(std::mem::take(&mut check.f));
                (acc, lf, check.into_scratch())
            },
        )
        .reduce(
            || (Findings::default(), None, Scratch::default()),
            |(found_a, lost_found_a, mut scratch_a), (found_b, lost_found_b, scratch_b)| {
                scratch_a.links.extend(scratch_b.links);
                (
                    found_a.merge(found_b),
                    lost_found_a.or(lost_found_b),
                    scratch_a,
                )
            },
        );
    let links = &mut scratch.links;
    *findings = std::mem::take(findings).merge(found);
    report_links_to_dirs(index, links, ctx.ipg, findings);
    // The root names itself as its own parent (e2fsck_pass2 sets it before the scan).
    if let Some(root) = index.get(dir::ROOT_INO) {
        root.set_parent(dir::ROOT_INO);
    }
    Pass2Result { lost_found }
}

/// Most names of directories remembered per worker for the link check (about 100 bytes each);
/// past it, a name is reported only when a first one is already known (see `link_to_dir`).
const MAX_LINK_CANDIDATES: usize = 1 << 17;

/// A name of a directory met in pass 2.
struct LinkCandidate {
    /// (directory holding the name, ordinal of the entry in it): the first name of a directory
    /// is the one with the lowest key, so in its parent as pass 3 sees it (the lowest
    /// directory inode holding a name).
    key: u64,
    /// The directory named.
    target: u32,
    /// The finding's message, should it be a second link.
    message: String,
}

/// `PR_2_LINK_DIR`: every name of a directory but its first, in the order of the names.
fn report_links_to_dirs(
    index: &InodeIndex,
    links: &mut [LinkCandidate],
    ipg: u32,
    findings: &mut Findings,
) {
    links.sort_unstable_by_key(|candidate| candidate.key);
    for candidate in links.iter_mut() {
        if index
            .get(candidate.target)
            .is_none_or(|t| t.first_link() == candidate.key)
        {
            continue;
        }
        let dir = (candidate.key >> 32) as u32;
        let group = (dir - 1) / ipg.max(1);
        let msg = std::mem::take(&mut candidate.message);
        findings.push_with(RuleId::DirLinkDir, || {
            Finding::inode(RuleId::DirLinkDir, group, dir, msg)
        });
    }
}

/// Role of one logical block of an htree directory, found by walking the index from the root.
#[derive(Clone, Copy, Debug, Default)]
struct DxBlock {
    /// Referenced by an index entry (count of references).
    refs: u8,
    /// Index node (not a leaf).
    node: bool,
    /// Hash range the parent assigns: names must hash in [min, max].
    min: u32,
    max: u32,
    /// First entry of its parent (no lower bound check, as in e2fsck).
    first: bool,
}

/// The checks of one directory.
struct DirCheck<'a> {
    ctx: &'a Ctx,
    index: &'a InodeIndex,
    extras: &'a Extras,
    slot: InodeSlot<'a>,
    ino: u32,
    encrypted: bool,
    /// The directory's encryption policy (pass 1's): names and entries are judged as
    /// encrypted only with one, as e2fsck does.
    policy: Option<u32>,
    /// Encrypted and casefolded: every entry but `.` and `..` carries its hash after the name.
    hash_in_dirent: bool,
    casefold: bool,
    /// No encryption policy, casefolding, stored hashes, nor root: an entry can be accepted by
    /// [`DirCheck::clean_entry`].
    fast: bool,
    /// The group the last entry's inode was in (see [`DirCheck::group_span_of`]).
    group_span: GroupSpan,
    names: NameSet,
    /// Entries checked so far (orders the names of directories, see `link_to_dir`).
    ordinal: u32,
    /// Names of directories met, judged after the pass.
    links: Vec<LinkCandidate>,
    /// The block being checked (reused from block to block and directory to directory).
    block_buf: Vec<u8>,
    lost_found: Option<u32>,
    f: Findings,
}

impl<'a> DirCheck<'a> {
    fn new(
        ctx: &'a Ctx,
        index: &'a InodeIndex,
        extras: &'a Extras,
        slot: InodeSlot<'a>,
        scratch: Scratch,
    ) -> DirCheck<'a> {
        let flags = slot.flags();
        let policy = extras.policy(slot.ino());
        let hash_in_dirent = flags & dir::ENCRYPT_FL != 0 && flags & dir::CASEFOLD_FL != 0;
        let casefold = ctx.casefold_fs && flags & dir::CASEFOLD_FL != 0;
        DirCheck {
            ctx,
            index,
            extras,
            slot,
            ino: slot.ino(),
            encrypted: flags & dir::ENCRYPT_FL != 0,
            policy,
            hash_in_dirent,
            casefold,
            fast: policy.is_none() && !casefold && !hash_in_dirent && slot.ino() != dir::ROOT_INO,
            group_span: GroupSpan::default(),
            names: scratch.names,
            ordinal: 0,
            links: scratch.links,
            block_buf: scratch.block_buf,
            lost_found: None,
            f: Findings::default(),
        }
    }

    /// What the next directory of this worker reuses.
    fn into_scratch(self) -> Scratch {
        Scratch {
            names: self.names.recycled(),
            links: self.links,
            block_buf: self.block_buf,
        }
    }

    fn report(&mut self, rule: RuleId, msg: String) {
        let group = (self.ino - 1) / self.ctx.ipg.max(1);
        let ino = self.ino;
        self.f
            .push_with(rule, || Finding::inode(rule, group, ino, msg));
    }

    /// Check the directory; returns the number of blocks read.
    fn run(&mut self, fs: &Filesystem) -> u64 {
        let raw = match fs.inode_raw(self.ino) {
            Ok(r) => r.to_vec(),
            Err(e) => {
                self.report(
                    RuleId::DirBlockUnreadable,
                    format!("directory inode unreadable: {e}"),
                );
                return 0;
            }
        };
        let inode = Inode::parse(&raw);
        if inode.has_flag(INLINE_DATA_FL) {
            self.check_inline(fs, &raw, &inode);
            return 0;
        }
        let nblocks = inode.size.div_ceil(self.ctx.bs as u64);
        if nblocks > MAX_DIR_BLOCKS {
            self.report(
                RuleId::DirBlockUnreadable,
                format!("directory size {} is {nblocks} blocks, more than the {MAX_DIR_BLOCKS} this checker reads: not checked", inode.size),
            );
            return 0;
        }
        let blocks = match dir::dir_blocks(fs, self.ino, &inode) {
            Ok(b) => b,
            Err(e) => {
                self.report(
                    RuleId::DirBlockUnreadable,
                    format!("directory blocks cannot be mapped: {e}"),
                );
                return 0;
            }
        };
        // INDEX without dir_index is pass 1's (inode.flags); such a directory reads linearly.
        let htree = inode.has_flag(INDEX_FL);
        let mut dx = if htree && self.ctx.dir_index {
            self.walk_index(fs, &inode, &blocks, nblocks)
        } else {
            None
        };
        self.check_holes(fs, &inode);
        let mut read = 0;
        let mut has_block0 = false;
        let mut data = std::mem::take(&mut self.block_buf);
        for &(logical, physical) in &blocks {
            if let Err(error) = read_dir_block(fs, physical, &mut data) {
                self.report(
                    RuleId::DirBlockUnreadable,
                    format!("logical block {logical} (block {physical}) cannot be read: {error}"),
                );
                continue;
            }
            read += 1;
            has_block0 |= logical == 0;
            let role = dx
                .as_mut()
                .and_then(|(_, v)| v.get(logical as usize).copied());
            self.check_block(
                &inode,
                logical,
                physical,
                &data,
                role,
                dx.as_ref().map(|d| d.0),
            );
        }
        self.block_buf = data;
        if !has_block0 && nblocks > 0 && blocks.is_empty() {
            self.report(
                RuleId::DirHole,
                "directory has no blocks mapped within its size: no '.' and '..' entries".into(),
            );
        } else if nblocks == 0 {
            self.report(
                RuleId::DirMissingDot,
                "directory has size 0: no '.' and '..' entries".into(),
            );
        }
        if let Some((_, roles)) = &dx {
            let present: HashSet<u64> = blocks.iter().map(|b| b.0).collect();
            self.check_dx_refs(roles, &present);
        }
        read
    }

    /// Logical blocks below the last mapped one that nothing maps (e2fsck's dblist holes),
    /// from the whole map (blocks past i_size included), range by range.
    fn check_holes(&mut self, fs: &Filesystem, inode: &Inode) {
        let mut ranges: Vec<(u64, u64)> = match inode::data_map(fs, self.ino, inode, None) {
            inode::DataMap::Extents(w) => w
                .leaves()
                .map(|e| (u64::from(e.logical), u64::from(e.len)))
                .collect(),
            inode::DataMap::Blocks(w) => w
                .runs
                .iter()
                .filter_map(|run| match run.kind {
                    crate::reader::extent::MapKind::Data(logical) => Some((logical, run.len)),
                    _ => None,
                })
                .collect(),
            _ => return,
        };
        ranges.sort_unstable();
        let mut expect = 0u64;
        let mut holes = 0u64;
        let mut first = None;
        for (logical, len) in ranges {
            if logical > expect {
                holes += logical - expect;
                first.get_or_insert(expect);
            }
            expect = expect.max(logical.saturating_add(len));
        }
        if let Some(first_hole) = first {
            self.report(
                RuleId::DirHole,
                format!("directory has {holes} unallocated block(s) below its last mapped block, the first at logical block {first_hole}"),
            );
        }
    }

    /// Index blocks: root at logical 0, then nodes; returns (hash version, role per block).
    fn walk_index(
        &mut self,
        fs: &Filesystem,
        inode: &Inode,
        blocks: &[(u64, u64)],
        nblocks: u64,
    ) -> Option<(u8, Vec<DxBlock>)> {
        let root = fs.block(physical_block(blocks, 0)?).ok()?.to_vec();
        let info = self.judge_dx_root(&root)?;
        let levels = info.indirect_levels;
        let effective_version = dirhash::effective_version(info.hash_version, self.ctx.s_flags);
        let slots = usize::try_from(nblocks)
            .ok()?
            .min(blocks.len().max(1) * 2)
            .max(1);
        let mut roles = vec![DxBlock::default(); slots];
        roles[0] = DxBlock {
            refs: 1,
            node: true,
            min: 0,
            max: u32::MAX,
            first: true,
        };
        // Breadth-first over index levels; every level's blocks are distinct logical blocks
        // below nblocks, so the walk reads at most nblocks blocks.
        let mut level = vec![(
            0u64,
            root,
            DX_ROOT_INFO_OFFSET + usize::from(info.info_length),
        )];
        for depth in 1..=levels + 1 {
            let mut next = Vec::new();
            for (lblk, data, at) in level {
                let entries = self.dx_entries(inode, lblk, &data, at)?;
                let (parent_min, parent_max) = (roles[lblk as usize].min, roles[lblk as usize].max);
                for (entry_index, &(hash, blk)) in entries.iter().enumerate() {
                    let next_min = entries
                        .get(entry_index + 1)
                        .map_or(parent_max, |e| e.0 & !1);
                    if blk as usize >= slots || u64::from(blk) >= nblocks || blk == 0 {
                        self.report(
                            RuleId::HtreeBlock,
                            format!("htree index block {lblk} entry {entry_index} points to logical block {blk}, not one of the directory's blocks 1..{nblocks}"),
                        );
                        continue;
                    }
                    if entry_index > 0 && ((hash & !1) < parent_min || (hash & !1) > parent_max) {
                        self.report(
                            RuleId::HtreeLeafHash,
                            format!("htree index block {lblk}: entry hash {hash:#010x} outside the range {parent_min:#010x}..{parent_max:#010x} its parent gives"),
                        );
                    }
                    let role = &mut roles[blk as usize];
                    role.refs = role.refs.saturating_add(1);
                    if role.refs > 1 {
                        // Named twice: the block keeps its first role, the count is reported
                        // by `check_dx_refs` (e2fsck: `DX_FLAG_REFERENCED`, `PR_2_HTREE_DUPREF`).
                        continue;
                    }
                    // The low bit of an entry's hash marks a hash collision continuing in the
                    // next block: ranges compare without it (`parse_int_node`).
                    *role = DxBlock {
                        refs: 1,
                        node: depth <= levels,
                        min: if entry_index == 0 {
                            parent_min
                        } else {
                            hash & !1
                        },
                        max: next_min,
                        first: entry_index == 0,
                    };
                    if depth <= levels {
                        match self.index_node(fs, blocks, blk, depth, levels) {
                            IndexNode::Node(node) => {
                                next.push((u64::from(blk), node, DxNode::SIZE))
                            }
                            IndexNode::NotANode => roles[blk as usize].node = false,
                            IndexNode::Unreadable => {}
                        }
                    }
                }
            }
            level = next;
            if level.is_empty() {
                break;
            }
        }
        Some((effective_version, roles))
    }

    /// The htree root's `dx_root_info` as e2fsck's `parse_int_node` / `handle_htree` judge it:
    /// `.` and `..` first, reserved field 0, info length at least 8, a hash version this
    /// filesystem can use, fewer indirect levels than the largedir feature allows. `None` when
    /// the tree cannot be walked (reported).
    fn judge_dx_root(&mut self, root: &[u8]) -> Option<crate::reader::ondisk::dir::DxRootInfo> {
        let header = ondisk::decode::<DxRoot>(root)
            .ok()
            .filter(|r| r.dot_name[0] == b'.' && r.dotdot_name[..2] == *b"..");
        let Some(header) = header else {
            self.report(
                RuleId::HtreeRoot,
                "htree root block lacks its '.' and '..' entries".into(),
            );
            return None;
        };
        let info = header.info;
        let (reserved, info_len, levels) =
            (info.reserved_zero, info.info_length, info.indirect_levels);
        if reserved != 0 || info_len < 8 {
            self.report(
                RuleId::HtreeRoot,
                format!("htree root: reserved field {reserved:#x}, info length {info_len} (must be 0 and at least 8)"),
            );
            return None;
        }
        let version = info.hash_version;
        // SipHash is only valid on an encrypted and casefolded directory (`ext4_hash_in_dirent`).
        let known = version <= dirhash::HASH_TEA
            || (version == dirhash::HASH_SIPHASH && self.casefold && self.encrypted);
        if !known {
            self.report(
                RuleId::HtreeHashVersion,
                format!("htree root: unsupported hash version {version}"),
            );
            return None;
        }
        self.check_needs_siphash(version);
        if info.unused_flags & 1 != 0 {
            self.report(
                RuleId::HtreeIncompat,
                format!(
                    "htree root: flags {:#04x} include the incompatible flag",
                    info.unused_flags
                ),
            );
        }
        if levels >= self.ctx.htree_levels {
            self.report(
                RuleId::HtreeDepth,
                format!(
                    "htree root: {levels} indirect levels, at most {} {}",
                    self.ctx.htree_levels - 1,
                    if self.ctx.htree_levels == 3 {
                        "with largedir"
                    } else {
                        "without largedir"
                    }
                ),
            );
            return None;
        }
        Some(info)
    }

    /// Index node `blk` (logical) at `depth`, read: an index node starts with a fake directory
    /// entry of inode 0 spanning the whole block (`struct dx_node`), as e2fsck's
    /// `parse_int_node` expects; one that does not is reported.
    fn index_node(
        &mut self,
        fs: &Filesystem,
        blocks: &[(u64, u64)],
        blk: u32,
        depth: u8,
        levels: u8,
    ) -> IndexNode {
        let Some(physical) = physical_block(blocks, u64::from(blk)) else {
            return IndexNode::Unreadable;
        };
        let Ok(data) = fs.block(physical) else {
            return IndexNode::Unreadable;
        };
        let data = data.to_vec();
        let fake = ondisk::decode::<DxNode>(&data).ok().map(|node| node.fake);
        if fake.is_none_or(|fake_entry| {
            fake_entry.inode != 0
                || rec_len_from_disk(fake_entry.rec_len, self.ctx.bs) != self.ctx.bs
        }) {
            self.report(
                RuleId::HtreeDepth,
                format!("htree block {blk} at depth {depth} is not an index node (the root has {levels} indirect levels)"),
            );
            return IndexNode::NotANode;
        }
        IndexNode::Node(data)
    }

    /// Count/limit, hash order and tail checksum of one index block; its (hash, block) pairs.
    fn dx_entries(
        &mut self,
        inode: &Inode,
        logical: u64,
        data: &[u8],
        at: usize,
    ) -> Option<Vec<(u32, u32)>> {
        let countlimit = ondisk::decode_at::<DxCountLimit>(data, at).ok();
        let limit = usize::from(countlimit.map_or(0, |c| c.limit));
        let count = usize::from(countlimit.map_or(0, |c| c.count));
        let tail = if self.ctx.metadata_csum {
            DxTail::SIZE
        } else {
            0
        };
        let expect = (self.ctx.bs.saturating_sub(at + tail)) / DxEntry::SIZE;
        if limit != expect {
            self.report(
                RuleId::HtreeLimit,
                format!("htree index block {logical}: limit {limit}, should be {expect}"),
            );
        }
        if count == 0 || count > expect {
            self.report(
                RuleId::HtreeCount,
                format!("htree index block {logical}: count {count}, should be 1..={expect}"),
            );
            if count == 0 {
                return None;
            }
        }
        let count = count.min(expect);
        if self.ctx.metadata_csum && limit == expect {
            let seed = extent_seed(self.ino, inode, self.ctx);
            let size = at + count * DxEntry::SIZE;
            let tail_at = at + limit * DxEntry::SIZE;
            if let Ok(dx_tail) = ondisk::decode_at::<DxTail>(data, tail_at) {
                let mut computed = crate::reader::csum::crc32c_raw(seed, &data[..size]);
                // dt_reserved, then the checksum field itself as zero (ext4_dx_csum).
                computed =
                    crate::reader::csum::crc32c_raw(computed, &dx_tail.reserved.to_le_bytes());
                computed = crate::reader::csum::crc32c_raw(computed, &[0; 4]);
                let stored = dx_tail.checksum;
                if computed != stored {
                    self.report(
                        RuleId::HtreeCsum,
                        format!(
                            "htree {} block {logical}: checksum {stored:#010x}, should be {computed:#010x}",
                            if logical == 0 { "root" } else { "node" }
                        ),
                    );
                }
            }
        }
        let mut prev = 0u32;
        let mut out = Vec::with_capacity(count);
        for entry_index in 0..count {
            let entry = ondisk::decode_at::<DxEntry>(data, at + DxEntry::SIZE * entry_index).ok();
            let hash = if entry_index == 0 {
                0
            } else {
                entry.map_or(0, |e| e.hash)
            };
            let blk = entry.map_or(0, |e| e.logical_block());
            if entry_index > 0 && (hash & !1) < prev {
                self.report(
                    RuleId::HtreeHashOrder,
                    format!("htree index block {logical}: entry {entry_index} hash {hash:#010x} below the previous {prev:#010x}"),
                );
            }
            prev = hash & !1;
            out.push((hash, blk));
        }
        Some(out)
    }

    fn check_dx_refs(&mut self, roles: &[DxBlock], present: &HashSet<u64>) {
        for (block, role) in roles.iter().enumerate().skip(1) {
            if role.refs > 1 {
                self.report(
                    RuleId::HtreeRefs,
                    format!(
                        "htree block {block} is referenced {} times by the index",
                        role.refs
                    ),
                );
            } else if role.refs == 0 && present.contains(&(block as u64)) {
                self.report(
                    RuleId::HtreeRefs,
                    format!("htree block {block} is not referenced by the index"),
                );
            }
        }
    }

    /// Entries of one directory block (all blocks, leaves of htrees included).
    fn check_block(
        &mut self,
        inode: &Inode,
        logical: u64,
        physical: u64,
        data: &[u8],
        role: Option<DxBlock>,
        hash_v: Option<u8>,
    ) {
        let is_index = role.is_some_and(|r| r.node);
        let bs = data.len();
        // The checksum tail of a leaf block.
        let mut area = data;
        if self.ctx.metadata_csum && !is_index {
            match dir::dirblock_csum(extent_seed(self.ino, inode, self.ctx), data) {
                Some(c) => {
                    if !c.ok() {
                        self.report(
                            RuleId::DirCsum,
                            format!("directory block {logical} (block {physical}): checksum {:#010x}, should be {:#010x}", c.stored, c.computed),
                        );
                    }
                    area = &data[..bs - TAIL_SIZE];
                }
                None => self.report(
                    RuleId::DirCsumMissing,
                    format!("directory block {logical} (block {physical}) has no checksum tail"),
                ),
            }
        }
        let leaf = role.filter(|r| !r.node && r.refs > 0).zip(hash_v);
        let mut dot_state = if logical == 0 { 0 } else { 2 };
        let mut hashes = LeafHashes::default();
        let mut it = AreaEntries::new(area, 12);
        let mut count = 0usize;
        // The block's own finding (an entry that does not fit) comes before every finding of
        // its entries: it is looked for ahead at the first entry the general path takes.
        // Entries no check finds fault with (`clean_entry`) report nothing.
        let mut bad_reported = false;
        while let Some(entry) = it.next() {
            let entry = &entry;
            count += 1;
            if is_tail(entry) {
                dot_state += 1;
                continue;
            }
            if self.fast && dot_state > 1 && self.clean_entry(entry) {
                if let (Some((leaf_role, version)), true) = (leaf, entry.inode != 0) {
                    self.note_leaf_hash(entry, leaf_role, version, area, &mut hashes);
                }
                dot_state += 1;
                continue;
            }
            if !bad_reported {
                bad_reported = true;
                let mut rest = it.clone();
                rest.by_ref().for_each(drop);
                self.report_bad_entry(logical, physical, rest.bad);
            }
            self.check_entry(entry, dot_state, logical);
            if self.hash_in_dirent && dot_state > 1 {
                self.check_dirent_hash_room(entry, logical);
            }
            if let (Some((leaf_role, version)), true) = (leaf, entry.inode != 0 && dot_state > 1) {
                self.note_leaf_hash(entry, leaf_role, version, area, &mut hashes);
            }
            dot_state += 1;
        }
        if !bad_reported {
            self.report_bad_entry(logical, physical, it.bad);
        }
        if let (Some((leaf_role, _)), Some((name, hash))) = (leaf, hashes.first_out) {
            self.report(
                RuleId::HtreeLeafHash,
                format!(
                    "htree leaf block {logical}: {} names hash outside the block's range {:#010x}..={:#010x} (hashes {:#010x}..={:#010x}; '{name}' hashes to {hash:#010x})",
                    hashes.out, leaf_role.min, leaf_role.max, hashes.low, hashes.high
                ),
            );
        }
        if logical == 0 && count < 2 && it.bad.is_none() {
            if count == 0 {
                self.report(RuleId::DirMissingDot, "block 0 has no '.' entry".into());
            }
            self.report(RuleId::DirMissingDotdot, "block 0 has no '..' entry".into());
        }
    }

    /// `(offset, rec_len, name_len)` of the entry of block `logical` (at `physical`) that does not fit.
    fn report_bad_entry(
        &mut self,
        logical: u64,
        physical: u64,
        bad: Option<(usize, usize, usize)>,
    ) {
        if let Some((off, rec_len, name_len)) = bad {
            self.report(
                RuleId::DirEntryCorrupt,
                format!("directory block {logical} (block {physical}), offset {off}: rec_len {rec_len}, name_len {name_len} do not fit (rec_len >= 12, multiple of 4, inside the block, >= name_len + 8)"),
            );
        }
    }

    /// Fold the hash of a leaf entry's name into the block's summary.
    fn note_leaf_hash(
        &self,
        entry: &AreaEntry<'_>,
        role: DxBlock,
        version: u8,
        area: &[u8],
        hashes: &mut LeafHashes,
    ) {
        let Some(hash) = self.leaf_hash(entry, version, area) else {
            return;
        };
        hashes.low = hashes.low.min(hash);
        hashes.high = hashes.high.max(hash);
        if (!role.first && hash < role.min) || hash > role.max {
            hashes.out += 1;
            if hashes.first_out.is_none() {
                hashes.first_out = Some((String::from_utf8_lossy(entry.name).into_owned(), hash));
            }
        }
    }

    /// An entry after `.` and `..` of a [`DirCheck::fast`] directory that no check of
    /// [`DirCheck::check_entry`] would report, taken with the same effects (ordinal, name
    /// remembered, reference counted): true. False, with nothing changed, when the entry needs
    /// the general path (anything to report, a directory, a full name set).
    fn clean_entry(&mut self, entry: &AreaEntry<'_>) -> bool {
        let ino = entry.inode;
        if ino == 0 {
            self.ordinal = self.ordinal.saturating_add(1);
            return true;
        }
        let ctx = self.ctx;
        if ino == self.ino
            || ino == dir::ROOT_INO
            || ino < ctx.first_ino
            || ino > ctx.inodes_count
            || matches!(entry.name, b"" | b"." | b"..")
            || self.names.full
        {
            return false;
        }
        let span = self.group_span_of(ino);
        if ino >= span.live_end || self.extras.is_bb_inode(ino) {
            return false;
        }
        let Some(target) = self.index.get_in_group(ino, span.group, ino - span.first) else {
            return false;
        };
        let want = if ctx.filetype {
            file_type_of_mode(target.mode())
        } else {
            0
        };
        if entry.file_type != want || target.is_dir() {
            return false;
        }
        let (print, plain) = scan_name(entry.name);
        if !plain || !self.names.insert(print) {
            return false;
        }
        if self.names.len() >= MAX_NAMES_PER_DIR {
            self.names.full = true;
        }
        self.ordinal = self.ordinal.saturating_add(1);
        target.count_reference();
        true
    }

    /// The group holding `ino` (at least 1), remembered from one entry to the next (the
    /// entries of a directory mostly name inodes of one group).
    fn group_span_of(&mut self, ino: u32) -> GroupSpan {
        let span = self.group_span;
        if span.first <= ino && ino < span.end {
            return span;
        }
        let ipg = self.ctx.ipg.max(1);
        let group = (ino - 1) / ipg;
        let first = group * ipg + 1;
        let end = first.saturating_add(ipg);
        let live_end = match self.ctx.groups.get(group as usize) {
            Some(&(true, _)) => first,
            Some(&(false, first_unused)) => first_unused.clamp(first, end),
            None => end,
        };
        self.group_span = GroupSpan {
            first,
            end,
            live_end,
            group,
        };
        self.group_span
    }

    /// The hash of a leaf entry's name: the one stored in the entry when the directory is
    /// encrypted and casefolded (SipHash keyed by the encryption key), else computed.
    fn leaf_hash(&self, entry: &AreaEntry<'_>, version: u8, area: &[u8]) -> Option<u32> {
        if self.hash_in_dirent {
            return stored_dirent_hash(area, entry).map(|(h, _)| h);
        }
        if version == dirhash::HASH_SIPHASH {
            return None;
        }
        let fold = self.casefold && !self.encrypted;
        dirhash::name_hash(entry.name, version, &self.ctx.seed, fold).map(|(h, _)| h)
    }

    /// A name for directory `target`: every name but the first (in the order of
    /// [`LinkCandidate::key`]) is another link (`PR_2_LINK_DIR`), decided once every directory
    /// has been read so that parallel scheduling cannot change which one is reported.
    fn link_to_dir(&mut self, target: InodeSlot<'_>, name: &EName<'_>, at: &EAt) {
        let key = (u64::from(self.ino) << 32) | u64::from(self.ordinal);
        target.offer_link(key);
        let msg = || {
            format!(
                "entry '{name}' ({at}) is another link to directory {}",
                target.ino()
            )
        };
        if self.links.len() < MAX_LINK_CANDIDATES {
            self.links.push(LinkCandidate {
                key,
                target: target.ino(),
                message: msg(),
            });
        } else if target.first_link() < key {
            // Past the bound (hostile input only): report what is already known to be a
            // second link.
            self.report(RuleId::DirLinkDir, msg());
        }
    }

    /// The entry checks of `check_dir_block`, in e2fsck's order.
    fn check_entry(&mut self, entry: &AreaEntry<'_>, dot_state: u32, logical: u64) {
        self.ordinal = self.ordinal.saturating_add(1);
        // Formatted only into a finding (this runs for every entry).
        let name = EName(entry.name);
        let at = EAt(logical, entry.offset);
        self.check_dot_entries(entry, dot_state, &name, &at);
        if entry.inode == 0 || !self.entry_inode_valid(entry, &name, &at) {
            return;
        }
        let dot = dot_state < 2;
        if !dot {
            self.check_special_name(entry, &name, &at);
        }
        let ipg = self.ctx.ipg.max(1);
        let group = (entry.inode - 1) / ipg;
        self.check_inode_initialized(entry, group, &name, &at);
        let Some(target) =
            self.index
                .get_in_group(entry.inode, group, (entry.inode - 1) - group * ipg)
        else {
            self.report(
                RuleId::DirUnusedInode,
                format!(
                    "entry '{name}' ({at}) names inode {}, which is not in use",
                    entry.inode
                ),
            );
            return;
        };
        if !dot {
            self.check_name(entry, &name, &at);
            self.check_encryption_policy(entry, target, &name, &at);
        }
        self.check_filetype(entry, target, &name, &at);
        if !dot && target.is_dir() {
            self.link_to_dir(target, &name, &at);
            target.offer_parent(self.ino);
        }
        if !dot {
            self.check_duplicate(entry, &name, &at);
            if self.ino == dir::ROOT_INO && entry.name == b"lost+found" {
                self.lost_found = Some(entry.inode);
            }
        }
        target.count_reference();
    }

    /// `check_dot` and `check_dotdot`: the first entry must be '.' naming the directory, the
    /// second '..' (whose inode is remembered for pass 3); a later entry naming the directory
    /// itself is a link to '.'. `dot_state` is the entry's position (0, 1, then 2 for the rest).
    fn check_dot_entries(
        &mut self,
        entry: &AreaEntry<'_>,
        dot_state: u32,
        name: &EName<'_>,
        at: &EAt,
    ) {
        if dot_state == 0 {
            if entry.inode == 0 || entry.name != b"." {
                self.report(
                    RuleId::DirMissingDot,
                    format!("first entry is '{name}' (inode {}), not '.'", entry.inode),
                );
            } else if entry.inode != self.ino {
                self.report(
                    RuleId::DirDotInode,
                    format!("'.' names inode {}, not the directory itself", entry.inode),
                );
            }
        } else if dot_state == 1 {
            if entry.inode == 0 || entry.name != b".." {
                self.report(
                    RuleId::DirMissingDotdot,
                    format!("second entry is '{name}' (inode {}), not '..'", entry.inode),
                );
            } else {
                self.slot.set_dotdot(entry.inode);
            }
        } else if entry.inode == self.ino {
            self.report(
                RuleId::DirLinkDot,
                format!("entry '{name}' ({at}) links to the directory itself"),
            );
        }
    }

    /// The entry's inode number is one an entry may name: the root or a non-reserved inode
    /// within the count, and not one lying in a bad block of the inode table (e2fsck clears
    /// such an entry, so nothing more is checked of it).
    fn entry_inode_valid(&mut self, entry: &AreaEntry<'_>, name: &EName<'_>, at: &EAt) -> bool {
        let ctx = self.ctx;
        if (entry.inode != dir::ROOT_INO && entry.inode < ctx.first_ino)
            || entry.inode > ctx.inodes_count
        {
            self.report(
                RuleId::DirBadInode,
                format!(
                    "entry '{name}' ({at}) has inode {}, outside 2 and {}..={}",
                    entry.inode, ctx.first_ino, ctx.inodes_count
                ),
            );
            return false;
        }
        if self.extras.is_bb_inode(entry.inode) {
            self.report(
                RuleId::DirBbInode,
                format!(
                    "entry '{name}' ({at}) names inode {}, which lies in a bad block of the inode table",
                    entry.inode
                ),
            );
            return false;
        }
        true
    }

    /// An entry past '..' named '.' or '..', linking to the root, or with an empty name: one
    /// finding at most, the first that applies in e2fsck's order.
    fn check_special_name(&mut self, entry: &AreaEntry<'_>, name: &EName<'_>, at: &EAt) {
        if entry.name == b"." {
            self.report(RuleId::DirDupDot, format!("second '.' entry ({at})"));
        } else if entry.name == b".." {
            self.report(RuleId::DirDupDot, format!("second '..' entry ({at})"));
        } else if entry.inode == dir::ROOT_INO {
            self.report(
                RuleId::DirLinkRoot,
                format!("entry '{name}' ({at}) links to the root directory"),
            );
        } else if entry.name.is_empty() {
            self.report(
                RuleId::DirNullName,
                format!("entry with an empty name ({at}), inode {}", entry.inode),
            );
        }
    }

    /// An entry naming an inode that its group's table does not hold yet: a group with
    /// INODE_UNINIT, or past the group's used part (`bg_itable_unused`).
    fn check_inode_initialized(
        &mut self,
        entry: &AreaEntry<'_>,
        group: u32,
        name: &EName<'_>,
        at: &EAt,
    ) {
        if let Some(&(uninit, first_unused)) = self.ctx.groups.get(group as usize) {
            if uninit {
                self.report(
                    RuleId::DirInodeUninit,
                    format!("entry '{name}' ({at}) names inode {} in group {group}, whose inode table is INODE_UNINIT", entry.inode),
                );
            } else if entry.inode >= first_unused {
                self.report(
                    RuleId::DirInodeUninit,
                    format!("entry '{name}' ({at}) names inode {} in the unused tail of group {group}'s inode table", entry.inode),
                );
            }
        }
    }

    fn check_name(&mut self, entry: &AreaEntry<'_>, name: &EName<'_>, at: &EAt) {
        if self.policy.is_some() {
            if entry.name.len() < CRYPTO_BLOCK {
                self.report(
                    RuleId::DirEncryptedName,
                    format!(
                        "encrypted entry '{name}' ({at}) is {} bytes, shorter than a cipher block",
                        entry.name.len()
                    ),
                );
            }
            return;
        }
        if entry.name.iter().any(|&b| b == b'/' || b == 0) {
            self.report(
                RuleId::DirBadName,
                format!(
                    "entry '{}' ({at}) has '/' or NUL in its name",
                    name.escape_debug()
                ),
            );
        }
        if self.casefold && self.ctx.strict_encoding && std::str::from_utf8(entry.name).is_err() {
            self.report(
                RuleId::DirEncodedName,
                format!(
                    "entry '{}' ({at}) is not valid UTF-8 in a strict casefolded directory",
                    name.escape_debug()
                ),
            );
        }
    }

    /// `check_encryption_policy`: in a directory with an encryption policy, entries name
    /// inodes of the same policy; an unencrypted one is an error only for regular files,
    /// directories and symlinks (the entry's file type says, or the mode without filetype).
    fn check_encryption_policy(
        &mut self,
        entry: &AreaEntry<'_>,
        target: InodeSlot<'_>,
        name: &EName<'_>,
        at: &EAt,
    ) {
        let Some(dir_policy) = self.policy else {
            return;
        };
        match self.extras.policy(target.ino()) {
            Some(p) if p == dir_policy => {}
            Some(_) => self.report(
                RuleId::DirEncryptionPolicy,
                format!(
                    "encrypted entry '{}' ({at}) names inode {}, which has a different encryption policy",
                    name.escape_debug(),
                    target.ino()
                ),
            ),
            None => {
                let ft = if self.ctx.filetype {
                    entry.file_type
                } else {
                    file_type_of_mode(target.mode())
                };
                if matches!(ft, 1 | 2 | 7) {
                    self.report(
                        RuleId::DirUnencryptedEntry,
                        format!(
                            "encrypted entry '{}' ({at}) names unencrypted inode {}",
                            name.escape_debug(),
                            target.ino()
                        ),
                    );
                }
            }
        }
    }

    /// An encrypted + casefolded directory's entries have room for the 8-byte hash after the
    /// name (`ext2fs_dir_rec_len(name_len, extended)`).
    fn check_dirent_hash_room(&mut self, entry: &AreaEntry<'_>, logical: u64) {
        let need = ((8 + entry.name.len() + 3) & !3) + 8;
        if entry.rec_len < need {
            self.report(
                RuleId::DirEntryCorrupt,
                format!(
                    "directory block {logical}, offset {}: rec_len {} leaves no room for the hash an encrypted casefolded entry carries (needs {need})",
                    entry.offset, entry.rec_len
                ),
            );
        }
    }

    /// `PR_1_HTREE_NEEDS_SIPHASH`: an encrypted casefolded htree hashes with SipHash.
    fn check_needs_siphash(&mut self, version: u8) {
        if self.hash_in_dirent && version != dirhash::HASH_SIPHASH {
            self.report(
                RuleId::HtreeSiphash,
                format!(
                    "htree root of an encrypted casefolded directory uses hash version {version} ({}), not siphash",
                    dirhash::version_name(version)
                ),
            );
        }
    }

    fn check_filetype(
        &mut self,
        entry: &AreaEntry<'_>,
        target: InodeSlot<'_>,
        name: &EName<'_>,
        at: &EAt,
    ) {
        if !self.ctx.filetype {
            if entry.file_type != 0 {
                self.report(
                    RuleId::DirFiletype,
                    format!(
                        "entry '{name}' ({at}) has file type {} without the filetype feature",
                        entry.file_type
                    ),
                );
            }
            return;
        }
        let want = file_type_of_mode(target.mode());
        // An unset type (0) is PR_2_SET_FILETYPE, which e2fsck -n accepts (PR_NO_OK).
        if entry.file_type == 0 && want != 0 {
            self.report(
                RuleId::DirFiletypeUnset,
                format!(
                    "entry '{name}' ({at}) has file type 0 (unknown), inode {} is type {want}",
                    entry.inode
                ),
            );
        } else if entry.file_type != want {
            self.report(
                RuleId::DirFiletype,
                format!(
                    "entry '{name}' ({at}) has file type {}, inode {} needs {want}",
                    entry.file_type, entry.inode
                ),
            );
        }
    }

    fn check_duplicate(&mut self, entry: &AreaEntry<'_>, name: &EName<'_>, at: &EAt) {
        if self.names.full {
            return;
        }
        let key = if self.casefold && !self.encrypted {
            match dirhash::casefold(entry.name) {
                Some(folded) => name_fingerprint(&folded),
                None => name_fingerprint(entry.name),
            }
        } else {
            name_fingerprint(entry.name)
        };
        if !self.names.insert(key) {
            self.report(
                RuleId::DirDuplicateName,
                format!("duplicate entry '{name}' ({at})"),
            );
        } else if self.names.len() >= MAX_NAMES_PER_DIR {
            self.names.full = true;
        }
    }

    /// Inline directories: the parent in the first 4 bytes of i_block, then entries in the rest
    /// of i_block and in `system.data`.
    fn check_inline(&mut self, fs: &Filesystem, raw: &[u8], inode: &Inode) {
        let parent = InlineDirHeader::parent_of(&inode.block);
        let dotdot = AreaEntry {
            offset: 0,
            inode: parent,
            rec_len: 4,
            file_type: 2,
            name: b"..",
        };
        // The '.' is implicit: the directory references itself.
        self.slot.count_reference();
        self.check_entry(&dotdot, 1, 0);
        for (area_index, area) in dir::inline_areas(fs, raw, inode).iter().enumerate() {
            if let (_, Some((off, rec_len, name_len))) = AreaEntries::survey(area, 8) {
                self.report(
                    RuleId::DirEntryCorrupt,
                    format!("inline directory {} area, offset {off}: rec_len {rec_len}, name_len {name_len} do not fit", if area_index == 0 { "i_block" } else { "system.data" }),
                );
            }
            for entry in AreaEntries::new(area, 8) {
                self.check_entry(&entry, 2, 0);
            }
        }
    }
}

/// The inodes of one group, as the entry checks see them.
#[derive(Clone, Copy, Debug, Default)]
struct GroupSpan {
    /// First inode of the group.
    first: u32,
    /// Inode past the group's last.
    end: u32,
    /// Inode past the last that `PR_2_INOREF_BG_INO_UNINIT` / `PR_2_INOREF_IN_UNUSED` allow
    /// (`first` when the group's table is INODE_UNINIT, the unused tail's first otherwise).
    live_end: u32,
    group: u32,
}

/// The padding entry that holds a leaf block's checksum tail.
fn is_tail(entry: &AreaEntry<'_>) -> bool {
    entry.file_type == TAIL_FILE_TYPE && entry.inode == 0 && entry.rec_len == TAIL_SIZE
}

/// The hashes of one htree leaf block's names against the range its index gives.
struct LeafHashes {
    low: u32,
    high: u32,
    /// Names outside the range.
    out: u32,
    /// The first of them, with its hash.
    first_out: Option<(String, u32)>,
}

impl Default for LeafHashes {
    fn default() -> LeafHashes {
        LeafHashes {
            low: u32::MAX,
            high: 0,
            out: 0,
            first_out: None,
        }
    }
}

/// An entry's name, formatted (lossily) only when a finding needs it.
struct EName<'a>(&'a [u8]);

impl std::fmt::Display for EName<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&String::from_utf8_lossy(self.0))
    }
}

impl EName<'_> {
    /// The name with control characters escaped.
    fn escape_debug(&self) -> String {
        String::from_utf8_lossy(self.0).escape_debug().to_string()
    }
}

/// An entry's place (block, offset), formatted only when a finding needs it.
struct EAt(u64, usize);

impl std::fmt::Display for EAt {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "block {}, offset {}", self.0, self.1)
    }
}

/// The per-inode checksum seed of directory `ino` (metadata_csum).
fn extent_seed(ino: u32, inode: &Inode, ctx: &Ctx) -> u32 {
    crate::reader::extent::inode_csum_seed(ctx.fs_seed, ino, inode.generation)
}

/// `EXT2_DIRENT_HASHES`: the (hash, minor hash) an entry of an encrypted casefolded directory
/// stores after its name (at the next 4-byte boundary), when the entry holds them.
fn stored_dirent_hash(area: &[u8], entry: &AreaEntry<'_>) -> Option<(u32, u32)> {
    let off = (DirEntry2::SIZE + entry.name.len() + 3) & !3;
    if off + DirEntryHash::SIZE > entry.rec_len {
        return None;
    }
    let at = entry.offset + off;
    ondisk::decode_at::<DirEntryHash>(area, at)
        .ok()
        .map(|h| (h.hash, h.minor_hash))
}

/// What one worker carries from directory to directory.
#[derive(Default)]
struct Scratch {
    names: NameSet,
    links: Vec<LinkCandidate>,
    block_buf: Vec<u8>,
}

/// Read directory block `block` into `buf` straight from the source (no cache: each directory
/// block is read once); on any failure the block cache's read gives the block or the error.
fn read_dir_block(fs: &Filesystem, block: u64, buf: &mut Vec<u8>) -> crate::error::Result<()> {
    let bs = fs.block_size();
    buf.resize(usize::try_from(bs).unwrap_or(0), 0);
    let direct = block
        .checked_mul(bs)
        .is_some_and(|off| fs.source.read_into(off, buf, "directory block").is_ok());
    if !direct {
        let cached = fs.block(block)?;
        buf.clear();
        buf.extend_from_slice(&cached);
    }
    Ok(())
}

/// A set grown past this many slots by one large directory is dropped rather than cleared for the
/// next (clearing costs its whole capacity, once per directory).
const NAME_SET_KEEP: usize = 1 << 16;

/// The names of one directory met so far, as 64-bit fingerprints (the duplicate check): an
/// open-addressing table (linear probing, at most half full) indexed by the fingerprint's top
/// bits, with 0 kept aside as the empty mark. A worker reuses one set from directory to
/// directory.
#[derive(Default)]
struct NameSet {
    slots: Vec<u64>,
    len: usize,
    has_zero: bool,
    /// [`MAX_NAMES_PER_DIR`] reached: no further names are remembered.
    full: bool,
}

impl NameSet {
    /// Remember `h`; false when it was already there.
    #[inline]
    fn insert(&mut self, fingerprint: u64) -> bool {
        if fingerprint == 0 {
            let fresh = !self.has_zero;
            self.has_zero = true;
            self.len += usize::from(fresh);
            return fresh;
        }
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let bits = self.slots.len().trailing_zeros();
        let mask = self.slots.len() - 1;
        let mut slot_index = (fingerprint >> (64 - bits)) as usize;
        loop {
            let slot = &mut self.slots[slot_index];
            if *slot == 0 {
                *slot = fingerprint;
                self.len += 1;
                return true;
            }
            if *slot == fingerprint {
                return false;
            }
            slot_index = (slot_index + 1) & mask;
        }
    }

    /// Twice the slots (64 at first), every fingerprint placed again.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(64);
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        let (len, has_zero) = (self.len, self.has_zero);
        self.len = 0;
        for fingerprint in old.into_iter().filter(|&fingerprint| fingerprint != 0) {
            self.insert(fingerprint);
        }
        self.len = len;
        self.has_zero = has_zero;
    }

    /// Number of names remembered.
    fn len(&self) -> usize {
        self.len
    }

    /// Empty again, for the next directory.
    fn recycled(mut self) -> NameSet {
        if self.slots.len() > NAME_SET_KEEP {
            return NameSet::default();
        }
        self.slots.fill(0);
        self.len = 0;
        self.has_zero = false;
        self.full = false;
        self
    }
}

/// The fingerprints' starting state, random per process (as std's `RandomState` keys its
/// hashers), so names crafted to collide under a fixed mix cannot fake a duplicate.
fn fingerprint_key() -> u64 {
    use std::hash::BuildHasher;
    static KEY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *KEY.get_or_init(|| {
        std::collections::hash_map::RandomState::new().hash_one(0x6A09_E667_F3BC_C908u64)
    })
}

/// A 64-bit fingerprint of a name for the duplicate check: the length, then the name as
/// 64-bit words (the last one overlapping the one before when the length is not a multiple of
/// 8; names under 8 bytes as two overlapping halves or three bytes), each through a bijective
/// mixing step, so two names of one length that differ in a single word never collide; a last
/// step makes the top bits, which index [`NameSet`], depend on every bit.
#[inline]
fn name_fingerprint(name: &[u8]) -> u64 {
    scan_name(name).0
}

/// Per byte of `word`: the high bit set in (at least) the lowest zero byte; 0 when no byte is
/// zero.
#[inline]
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(0x0101_0101_0101_0101) & !word & 0x8080_8080_8080_8080
}

/// [`name_fingerprint`] of `name`, and whether the name is free of '/' and NUL, tested on the
/// same words the fingerprint reads (every byte of the name is in one of them).
#[inline]
fn scan_name(name: &[u8]) -> (u64, bool) {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    const SLASHES: u64 = 0x2F2F_2F2F_2F2F_2F2F;
    let odd = |packed: u64| zero_bytes(packed) | zero_bytes(packed ^ SLASHES);
    let step = |hash: u64, packed: u64| {
        let mixed = (hash ^ packed).wrapping_mul(K);
        mixed ^ (mixed >> 29)
    };
    let word = |bytes: &[u8]| {
        let mut le_bytes = [0u8; 8];
        le_bytes.copy_from_slice(bytes);
        u64::from_le_bytes(le_bytes)
    };
    let half = |bytes: &[u8]| {
        let mut le_bytes = [0u8; 4];
        le_bytes.copy_from_slice(bytes);
        u64::from(u32::from_le_bytes(le_bytes))
    };
    let len = name.len();
    // The length through a whole step of its own (xored straight into the first word, it
    // could cancel a one-bit difference of the data: '0000' and '10000').
    let mut hash = step(fingerprint_key(), len as u64);
    let mut bad = 0;
    match len {
        0 => {}
        1..=3 => {
            let packed = u64::from(name[0])
                | (u64::from(name[len / 2]) << 8)
                | (u64::from(name[len - 1]) << 16);
            hash = step(hash, packed);
            // The five bytes above the name's are neither 0 nor '/'.
            bad = odd(packed | 0xFFFF_FFFF_FF00_0000);
        }
        4..=8 => {
            let packed = half(&name[..4]) | (half(&name[len - 4..]) << 32);
            hash = step(hash, packed);
            bad = odd(packed);
        }
        _ => {
            let mut words = name.chunks_exact(8);
            for chunk in &mut words {
                let packed = word(chunk);
                hash = step(hash, packed);
                bad |= odd(packed);
            }
            if !words.remainder().is_empty() {
                let packed = word(&name[len - 8..]);
                hash = step(hash, packed);
                bad |= odd(packed);
            }
        }
    }
    (step(hash, hash >> 32), bad == 0)
}

/// What [`DirCheck::index_node`] found at an index entry's block.
enum IndexNode {
    /// The node's bytes, to walk at the next level.
    Node(Vec<u8>),
    /// Not an index node (reported): the block is judged as a leaf.
    NotANode,
    /// Unmapped or unreadable: not walked further, keeping the role given.
    Unreadable,
}

/// The physical block of logical block `lblk` in a directory's sorted (logical, physical) map.
fn physical_block(blocks: &[(u64, u64)], lblk: u64) -> Option<u64> {
    blocks
        .binary_search_by_key(&lblk, |b| b.0)
        .ok()
        .map(|i| blocks[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_differ_across_lengths_and_words() {
        let names: Vec<Vec<u8>> = (0..20_000u32)
            .flat_map(|number| {
                [
                    format!("{number}"),
                    format!("{number:04}"),
                    format!("1{number:04}"),
                    format!("{number:x}"),
                    format!("file_{number:08}.txt"),
                ]
            })
            .map(String::into_bytes)
            .chain((0..=255u8).map(|b| vec![b]))
            .chain([Vec::new(), b"0000".to_vec(), b"10000".to_vec()])
            .collect();
        let mut distinct: Vec<&Vec<u8>> = names.iter().collect();
        distinct.sort();
        distinct.dedup();
        let mut prints: Vec<u64> = distinct.iter().map(|n| name_fingerprint(n)).collect();
        prints.sort_unstable();
        prints.dedup();
        assert_eq!(prints.len(), distinct.len());
        assert_ne!(name_fingerprint(b"0000"), name_fingerprint(b"10000"));
    }

    #[test]
    fn scan_name_finds_every_slash_and_nul() {
        let bytes = [0u8, 1, b'.', b'/', b'0', b'a', 0x7F, 0x80, 0xAF, 0xD0, 0xFF];
        for len in 0..=40usize {
            let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(scan_name(&base).1);
            for at in 0..len {
                for &byte in &bytes {
                    let mut name = base.clone();
                    name[at] = byte;
                    let plain = !name.iter().any(|&c| c == b'/' || c == 0);
                    let (print, ok) = scan_name(&name);
                    assert_eq!(ok, plain, "{name:?}");
                    assert_eq!(print, name_fingerprint(&name));
                }
            }
        }
        // Names of the awkward bytes only (borrows across bytes), pseudo-random.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..50_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 24) as usize;
            let name: Vec<u8> = (0..len)
                .map(|i| bytes[((state >> (i * 2 % 60)) % bytes.len() as u64) as usize])
                .collect();
            let plain = !name.iter().any(|&c| c == b'/' || c == 0);
            assert_eq!(scan_name(&name).1, plain, "{name:?}");
        }
        assert!(scan_name(b"").1);
    }

    #[test]
    fn name_set_finds_repeats_through_growth_and_reuse() {
        let mut set = NameSet::default();
        for round in 0..2 {
            for fingerprint in (0..5_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)) {
                assert!(
                    set.insert(fingerprint),
                    "round {round}: {fingerprint:#x} is new"
                );
            }
            assert_eq!(set.len(), 5_000);
            assert!(!set.insert(0), "0 was inserted (i = 0)");
            assert!(!set.insert(7u64.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
            set = set.recycled();
            assert_eq!(set.len(), 0);
        }
    }
}
