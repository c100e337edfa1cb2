//! The single walk over the inode tables that serves every pass of the full check (e2fsck's
//! `e2fsck_pass1` loop over `ext2fs_get_next_inode_full`).
//!
//! Groups are walked in parallel (rayon `fold`/`reduce`, so results come back in group order);
//! each group's table is read once, up to `bg_itable_unused` with descriptor checksums, skipping
//! INODE_UNINIT groups, as libext2fs' inode scan does. Every slot is judged by pass 1
//! (`pass1`); an inode is in use as e2fsck decides it: a reserved inode (below
//! `s_first_ino`), or one whose `i_links_count` is not zero.
//!
//! # What the walk leaves for the other passes
//!
//! [`Walk`] is the interface the directory passes (2, 3, 4) and pass 5 consume:
//!
//! - [`Walk::inodes`]: one [`InodeFacts`] (16 bytes) per in-use inode, sorted by inode number,
//!   reserved inodes included: mode (type), `i_links_count`, `i_flags`, and the number of
//!   blocks mapped. Look one up with [`Walk::get`], iterate directories with [`Walk::dirs`].
//! - Directory blocks are not stored: a directory pass re-reads the inode
//!   (`fs.inode_raw(ino)`, [`crate::inode::Inode::parse`]) and maps it with
//!   [`crate::inode::data_map`] (bounded and cycle-safe), or [`Walk::dir_blocks`] which does
//!   both and returns the (logical, physical) runs.
//! - [`Walk::orphans`]: inodes on the orphan list or in the orphan file (pass 4 must not call
//!   them unreferenced).
//! - [`Walk::claims`]: the clusters claimed by metadata and inodes (pass 5's computed bitmap).
//! - [`Walk::group_read`]: whether each group's inode table was read (pass 5 compares only
//!   those).
//!
//! Memory: 16 bytes per in-use inode, the ownership bitmaps (see [`super::ownership`]), one
//! counter per distinct xattr block, and findings capped per rule while collecting.

use super::ownership::Claims;
use super::{pass1, Findings};
use crate::fs::Filesystem;
use crate::group::BG_INODE_UNINIT;
use crate::inode::{DataMap, Inode};
use crate::ondisk::inode::InodeBase;
use rayon::prelude::*;
use std::collections::HashMap;

/// What the other passes need of one in-use inode (16 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InodeFacts {
    /// The inode number.
    pub ino: u32,
    /// `i_mode` (type in the top 4 bits).
    pub mode: u16,
    /// `i_links_count`.
    pub links_count: u16,
    /// `i_flags` (EXTENTS, INLINE_DATA, INDEX, ENCRYPT, CASEFOLD, ...).
    pub flags: u32,
    /// Blocks mapped (data and mapping/tree blocks; 0 for inline data and fast symlinks),
    /// saturated at `u32::MAX`.
    pub blocks: u32,
}

const _: () = assert!(std::mem::size_of::<InodeFacts>() <= 16);

impl InodeFacts {
    /// The type bits of the mode (`S_IFMT`).
    pub fn file_type(&self) -> u16 {
        self.mode & 0o170000
    }
    /// A directory.
    pub fn is_dir(&self) -> bool {
        self.file_type() == 0o040000
    }
    /// A regular file.
    pub fn is_reg(&self) -> bool {
        self.file_type() == 0o100000
    }
    /// A symbolic link.
    pub fn is_symlink(&self) -> bool {
        self.file_type() == 0o120000
    }
    /// The inode flag `flag` is set.
    pub fn has_flag(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
}

/// The result of the walk.
#[derive(Debug, Default)]
pub struct Walk {
    /// Every in-use inode, sorted by inode number.
    pub inodes: Vec<InodeFacts>,
    /// Inodes on the orphan list (`s_last_orphan` chain) or in the orphan file, sorted.
    pub orphans: Vec<u32>,
    /// Clusters claimed by metadata and by inodes.
    pub claims: Claims,
    /// Per group: its inode table was read (or it is INODE_UNINIT, nothing to read).
    pub group_read: Vec<bool>,
    /// Per group: in-use directories (pass 5's `bg_used_dirs_count`).
    pub group_dirs: Vec<u32>,
    /// EA-inode references, encryption policies and inodes in bad blocks (passes 2 and 4).
    pub extras: pass1::Extras,
}

impl Walk {
    /// Facts of inode `ino` when it is in use.
    pub fn get(&self, ino: u32) -> Option<&InodeFacts> {
        self.inodes
            .binary_search_by_key(&ino, |f| f.ino)
            .ok()
            .map(|i| &self.inodes[i])
    }
    /// Every in-use directory.
    pub fn dirs(&self) -> impl Iterator<Item = &InodeFacts> {
        self.inodes.iter().filter(|f| f.is_dir())
    }
    /// True when `ino` is on the orphan list or in the orphan file.
    pub fn is_orphan(&self, ino: u32) -> bool {
        self.orphans.binary_search(&ino).is_ok()
    }
    /// The data map of inode `ino`, re-read from disk (bounded, cycle-safe); what a directory
    /// pass reads a directory's blocks from.
    pub fn dir_blocks(fs: &Filesystem, ino: u32) -> crate::error::Result<DataMap> {
        let raw = fs.inode_raw(ino)?;
        let inode = Inode::parse(&raw);
        let xa = crate::inode::inode_xattrs(fs, &raw, &inode);
        Ok(crate::inode::data_map(fs, ino, &inode, xa.inline_data()))
    }
}

/// What one xattr block is to the inodes that reference it.
#[derive(Clone, Copy, Debug)]
pub(super) struct XattrRef {
    /// Number of in-use inodes referencing it.
    pub refs: u32,
    /// `h_refcount` (when the block parsed).
    pub refcount: Option<u32>,
    /// The first referencing inode (for the finding).
    pub first_ino: u32,
    /// Some entry keeps its value in an EA inode.
    pub ea_inodes: bool,
}

/// One worker's share of the walk (contiguous groups, merged in order).
#[derive(Default)]
pub(super) struct Acc {
    pub findings: Findings,
    /// In-use inodes, one list per group walked (in order; joined once at the end, so merging
    /// workers moves lists, not inodes).
    pub inodes: Vec<Vec<InodeFacts>>,
    pub claims: Claims,
    pub xattr_blocks: HashMap<u64, XattrRef>,
    /// (group, read, dirs)
    pub groups: Vec<(u32, bool, u32)>,
    /// The worker's inode-table read buffer (reused from chunk to chunk).
    pub table_buf: Vec<u8>,
    /// The worker's buffers for mapping one inode (reused from inode to inode).
    pub scratch: pass1::Scratch,
    /// The worker's xattr block buffer.
    pub xattr_buf: Vec<u8>,
}

impl Acc {
    fn merge(mut self, later: Acc) -> Acc {
        self.findings = self.findings.merge(later.findings);
        self.inodes.extend(later.inodes);
        self.claims = self.claims.merge(later.claims);
        for (b, r) in later.xattr_blocks {
            self.xattr_blocks
                .entry(b)
                .and_modify(|e| {
                    e.refs = e.refs.saturating_add(r.refs);
                    e.first_ino = e.first_ino.min(r.first_ino);
                })
                .or_insert(r);
        }
        self.groups.extend(later.groups);
        self
    }
}

/// Where group `g`'s walked slots are: `(slots, byte offset)` of the table up to
/// `bg_itable_unused` (with descriptor checksums), `(0, 0)` for INODE_UNINIT groups, `None` when
/// the descriptor cannot be read.
fn group_table(fs: &Filesystem, g: u32) -> Option<(u32, u64)> {
    let ipg = fs.geo.inodes_per_group;
    let gd = fs.desc(g).ok()?;
    let csum = fs.sb.has_group_desc_csum();
    if csum && gd.has_flag(BG_INODE_UNINIT) {
        return Some((0, 0));
    }
    let used = if csum && gd.itable_unused <= ipg {
        ipg - gd.itable_unused
    } else {
        ipg
    };
    Some((used, gd.inode_table.checked_mul(fs.block_size())?))
}

/// Bytes of inode table read at once: small enough to stay in the CPU cache between the copy
/// out of the page cache and the decoding (a whole 3 MiB table read at once was copied to
/// memory, faulted in, and read back), large enough that the reads stay few.
const TABLE_CHUNK: usize = 256 << 10;

fn walk_group(fs: &Filesystem, ctx: &pass1::Ctx, g: u32, acc: &mut Acc) {
    let Some((used, off)) = group_table(fs, g) else {
        acc.groups.push((g, false, 0));
        return;
    };
    if used == 0 {
        acc.groups.push((g, true, 0));
        return;
    }
    let isz = fs.geo.inode_size as usize;
    let total = u64::from(used) * isz as u64;
    if let Err(e) = fs
        .source
        .ensure_inside(off, total, &format!("inode table of group {g}"))
    {
        acc.findings.push(super::Finding::new(
            super::RuleId::InodeTableUnreadable,
            Some(g),
            e.to_string(),
        ));
        acc.groups.push((g, false, 0));
        return;
    }
    // Cold media: ask for the whole table now, read it chunk by chunk below.
    fs.source.will_need(off, total);
    let per_chunk = (TABLE_CHUNK / isz.max(1)).max(1);
    let first = u64::from(g) * u64::from(fs.geo.inodes_per_group) + 1;
    let mut buf = std::mem::take(&mut acc.table_buf);
    let mut in_use = Vec::new();
    let mut dirs = 0;
    let mut done = 0usize;
    while done < used as usize {
        let n = per_chunk.min(used as usize - done);
        buf.resize(n * isz, 0);
        let at = off + (done * isz) as u64;
        if let Err(e) = fs
            .source
            .read_into(at, &mut buf, &format!("inode table of group {g}"))
        {
            acc.findings.push(super::Finding::new(
                super::RuleId::InodeTableUnreadable,
                Some(g),
                e.to_string(),
            ));
            // What was judged so far stays; the group's usage is not compared.
            acc.table_buf = buf;
            acc.inodes.push(in_use);
            acc.groups.push((g, false, 0));
            return;
        }
        prefetch_xattr_blocks(fs, &buf, isz);
        for (i, raw) in buf.chunks_exact(isz).enumerate() {
            let Ok(ino) = u32::try_from(first + (done + i) as u64) else {
                break;
            };
            if let Some(facts) = pass1::check_inode(fs, ctx, g, ino, raw, acc) {
                dirs += u32::from(facts.is_dir());
                in_use.push(facts);
            }
        }
        done += n;
    }
    acc.table_buf = buf;
    acc.inodes.push(in_use);
    acc.groups.push((g, true, dirs));
}

/// Most inode-table bytes hinted ahead of the walk: enough to keep a fast device busy for the
/// whole walk of a populated filesystem, bounded so that a huge one does not push its first
/// tables out of the page cache before they are walked.
const TABLE_HINT_WINDOW: u64 = 128 << 20;
/// Bytes of inode table one hint covers (one request to the kernel's readahead).
const TABLE_HINT_PIECE: u64 = 4 << 20;

/// A thread that asks the kernel for every inode table the walk will read, from the start, so a
/// cold device reads them in large requests, in parallel with the walk, instead of group by group
/// as the workers reach them. Tables are coalesced where adjacent (flex_bg packs a flex group's
/// tables), cut in [`TABLE_HINT_PIECE`] pieces, and ordered round-robin over the parts of the
/// group range the rayon workers start from. A hint only: nothing is read, nothing can fail.
struct TableHints {
    /// (group, byte offset, bytes) of each piece, in the order to hint.
    pieces: Vec<(u32, u64, u64)>,
    /// Bytes of table walked so far (the walk's progress, to stay [`TABLE_HINT_WINDOW`] ahead).
    walked: std::sync::atomic::AtomicU64,
    /// Set when the walk is over.
    done: std::sync::atomic::AtomicBool,
}

impl TableHints {
    fn new(fs: &Filesystem) -> TableHints {
        let mut runs: Vec<(u32, u64, u64)> = Vec::new();
        if fs.source.takes_hints() {
            for g in 0..fs.geo.group_count {
                let Some((used, off)) = group_table(fs, g) else {
                    continue;
                };
                let len = u64::from(used) * u64::from(fs.geo.inode_size);
                if len == 0 || fs.source.ensure_inside(off, len, "").is_err() {
                    continue;
                }
                match runs.last_mut() {
                    Some(r) if r.1 + r.2 == off => r.2 += len,
                    _ => runs.push((g, off, len)),
                }
            }
        }
        let mut pieces = Vec::new();
        for (g, off, len) in runs {
            let mut at = 0;
            while at < len {
                let n = TABLE_HINT_PIECE.min(len - at);
                pieces.push((g, off + at, n));
                at += n;
            }
        }
        TableHints {
            pieces: round_robin(pieces, fs.geo.group_count, rayon::current_num_threads()),
            walked: 0.into(),
            done: false.into(),
        }
    }

    fn run(&self, fs: &Filesystem) {
        use std::sync::atomic::Ordering::Relaxed;
        let mut hinted = 0u64;
        for &(_, off, len) in &self.pieces {
            while hinted > self.walked.load(Relaxed) + TABLE_HINT_WINDOW {
                if self.done.load(Relaxed) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            if self.done.load(Relaxed) {
                return;
            }
            fs.source.will_need(off, len);
            hinted += len;
        }
    }

    /// Group `g` was walked.
    fn walked(&self, fs: &Filesystem, g: u32) {
        if let Some((used, _)) = group_table(fs, g) {
            let len = u64::from(used) * u64::from(fs.geo.inode_size);
            self.walked
                .fetch_add(len, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn stop(&self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// `pieces` (in group order) reordered round-robin over `parts` equal parts of the group range,
/// the order in which `parts` workers splitting the range reach them.
fn round_robin(pieces: Vec<(u32, u64, u64)>, groups: u32, parts: usize) -> Vec<(u32, u64, u64)> {
    let parts = parts.clamp(1, 64);
    let per = u64::from(groups).div_ceil(parts as u64).max(1);
    let mut lanes: Vec<std::collections::VecDeque<(u32, u64, u64)>> = vec![Default::default(); parts];
    for p in pieces {
        let lane = (u64::from(p.0) / per).min(parts as u64 - 1) as usize;
        lanes[lane].push_back(p);
    }
    let mut out = Vec::with_capacity(lanes.iter().map(|l| l.len()).sum());
    while lanes.iter().any(|l| !l.is_empty()) {
        for l in &mut lanes {
            out.extend(l.pop_front());
        }
    }
    out
}

/// The per-group lists of in-use inodes as one list (one allocation of the exact size).
fn join(parts: Vec<Vec<InodeFacts>>) -> Vec<InodeFacts> {
    let mut all = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    for p in parts {
        all.extend_from_slice(&p);
    }
    all
}

/// Ask the kernel now for the xattr blocks the live inodes of a chunk point to: scattered
/// single-block reads that pass 1 would otherwise wait for one at a time (cold media, or a page
/// cache that lost them); hinted together they are fetched in parallel.
fn prefetch_xattr_blocks(fs: &Filesystem, chunk: &[u8], isz: usize) {
    let mut blocks: Vec<u64> = chunk
        .chunks_exact(isz)
        .filter_map(InodeBase::links_and_file_acl)
        .filter(|&(links, _)| links != 0)
        .map(|(_, b)| b)
        .filter(|&b| b != 0 && b < fs.geo.blocks_count)
        .collect();
    if blocks.is_empty() {
        return;
    }
    blocks.sort_unstable();
    blocks.dedup();
    fs.prefetch(blocks);
}

/// Walk every group's inodes (pass 1), then settle what needs all of them: xattr block reference
/// counts and ownership, multiply-claimed blocks.
pub(super) fn run(
    fs: &Filesystem,
    orphans: Vec<u32>,
    f: &mut Findings,
    progress: &super::ProgressHook,
) -> Walk {
    let mut orphans = orphans;
    orphans.sort_unstable();
    orphans.dedup();
    let ctx = pass1::Ctx::new(fs, &orphans);
    pass1::check_quota_inums(fs, f);
    let clusters = fs.geo.blocks_count.div_ceil(1 << fs.geo.cluster_bits);
    let dense = super::ownership::DenseClaims::new(clusters).map(std::sync::Arc::new);
    let new_acc = || Acc {
        claims: dense.as_ref().map(Claims::sharing).unwrap_or_default(),
        ..Acc::default()
    };
    let ahead = TableHints::new(fs);
    let mut acc = std::thread::scope(|s| {
        s.spawn(|| ahead.run(fs));
        let acc = (0..fs.geo.group_count)
            .into_par_iter()
            .fold(new_acc, |mut acc, g| {
                walk_group(fs, &ctx, g, &mut acc);
                ahead.walked(fs, g);
                progress.advance(u64::from(fs.geo.inodes_per_group));
                acc
            })
            .reduce(Acc::default, Acc::merge);
        ahead.stop();
        acc
    });
    drop(dense);
    acc.claims.settle();
    acc.table_buf = Vec::new();
    acc.claims.used.optimize();
    acc.claims.multi.optimize();
    super::ownership::claim_metadata(fs, &mut acc.claims);
    pass1::settle_xattr_blocks(fs, &ctx, &mut acc);
    let merged = std::mem::take(f).merge(std::mem::take(&mut acc.findings));
    *f = merged;
    let groups = fs.geo.group_count as usize;
    let mut group_read = vec![false; groups];
    let mut group_dirs = vec![0; groups];
    for (g, read, dirs) in acc.groups {
        group_read[g as usize] = read;
        group_dirs[g as usize] = dirs;
    }
    let walk = Walk {
        inodes: join(acc.inodes),
        orphans,
        claims: acc.claims,
        group_read,
        group_dirs,
        extras: ctx.take_extras(),
    };
    pass1::report_multiply_claimed(fs, &ctx, &walk, f);
    walk
}
