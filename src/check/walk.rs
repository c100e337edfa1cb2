//! The single walk over the inode tables that serves every pass of the full check (e2fsck's
//! `e2fsck_pass1` loop over `ext2fs_get_next_inode_full`).
//!
//! Groups are walked in parallel (rayon `fold`/`reduce`, so results come back in group order);
//! each group's table is read once, up to `bg_itable_unused` with descriptor checksums, skipping
//! INODE_UNINIT groups, as libext2fs' inode scan does. On a cold device an I/O leader thread
//! (`Leader`) runs ahead of the workers: it hints the tables in large requests, reads each
//! group's table and hints the xattr blocks it points to, then hands the table over; pass 1
//! hints each directory's blocks for pass 2 as it maps them. Every slot is judged by pass 1
//! (`pass1`); an inode is in use as e2fsck decides it: a reserved inode (below
//! `s_first_ino`), or one whose `i_links_count` is not zero.
//!
//! # What the walk leaves for the other passes
//!
//! [`Walk`] is the interface the directory passes (2, 3, 4) and pass 5 consume:
//!
//! - [`Walk::index`]: one [`InodeFacts`] (16 bytes) per in-use inode, reserved inodes
//!   included: mode (type), `i_links_count`, `i_flags`, and the number of blocks mapped; kept
//!   in the workers' per-group lists (never joined into one: that copy was a serial pass over
//!   every in-use inode), indexed by `dirtree::InodeIndex` (built while the
//!   ownership and xattr blocks are settled). Look one up with [`Walk::get`], iterate
//!   directories with [`Walk::dirs`].
//! - Directory blocks are not stored: a directory pass re-reads the inode
//!   (`fs.inode_raw(ino)`, [`crate::reader::inode::Inode::parse`]) and maps it with
//!   [`crate::reader::inode::data_map`] (bounded and cycle-safe), or [`Walk::dir_blocks`] which does
//!   both and returns the (logical, physical) runs.
//! - [`Walk::orphans`]: inodes on the orphan list or in the orphan file (pass 4 must not call
//!   them unreferenced).
//! - [`Walk::claims`]: the clusters claimed by metadata and inodes (pass 5's computed bitmap).
//! - [`Walk::group_read`]: whether each group's inode table was read (pass 5 compares only
//!   those).
//!
//! Memory: 16 bytes per in-use inode, the ownership bitmaps (see [`super::ownership`]), one
//! counter per distinct xattr block, and findings capped per rule while collecting.

use super::dirtree::{GroupList, InodeIndex};
use super::ownership::Claims;
use super::{pass1, Findings};
use crate::reader::fs::Filesystem;
use crate::reader::group::BG_INODE_UNINIT;
use crate::reader::inode::{DataMap, Inode};
use crate::reader::ondisk::inode::InodeBase;
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
    /// Every in-use inode, by number, with the counters of passes 2-4.
    pub index: InodeIndex,
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
    /// Quota usage per ID as e2fsck's pass 1 charges it (the types with a quota inode).
    pub quota: crate::models::quota::QuotaUsage,
}

impl Walk {
    /// Facts of inode `ino` when it is in use.
    pub fn get(&self, ino: u32) -> Option<&InodeFacts> {
        self.index.get(ino).map(|s| s.facts())
    }
    /// Every in-use inode, the groups in parallel.
    pub fn par_inodes(&self) -> impl ParallelIterator<Item = &InodeFacts> {
        (0..self.index.group_count())
            .into_par_iter()
            .flat_map_iter(|g| self.index.group_slots(g).map(|s| s.facts()))
    }
    /// Every in-use directory.
    pub fn dirs(&self) -> impl Iterator<Item = &InodeFacts> {
        self.index.dirs().map(|s| s.facts())
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
        let xa = crate::reader::inode::inode_xattrs(fs, &raw, &inode);
        Ok(crate::reader::inode::data_map(
            fs,
            ino,
            &inode,
            xa.inline_data(),
        ))
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
    /// In-use inodes, one list per group walked (in order; merging workers moves lists, not
    /// inodes, and the lists are kept: see [`Walk::index`]).
    pub inodes: GroupLists,
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
    /// Quota usage charged by the inodes this worker judged.
    pub quota: crate::models::quota::QuotaUsage,
}

/// A worker's in-use lists, one per group walked, in order.
#[derive(Default)]
pub(super) struct GroupLists {
    /// Inodes per group: each group's part of the index is built as its list comes in, while
    /// the list is in the worker's cache (0: built after the walk).
    pub ipg: u32,
    pub lists: Vec<GroupList>,
}

impl GroupLists {
    /// The in-use inodes of one group, by number.
    pub fn push(&mut self, facts: Vec<InodeFacts>) {
        self.lists.push(GroupList::new(facts, self.ipg));
    }
}

impl Acc {
    fn merge(mut self, later: Acc) -> Acc {
        self.findings = self.findings.merge(later.findings);
        self.inodes.lists.extend(later.inodes.lists);
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
        self.quota.merge(later.quota);
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

/// Walk group `g`'s inode table. `leader` is the I/O leader of a cold run; `None` when the tables
/// are in the page cache: then nothing is hinted and each worker reads its own chunks.
fn walk_group(fs: &Filesystem, ctx: &pass1::Ctx, g: u32, acc: &mut Acc, leader: Option<&Leader>) {
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
    let first = u64::from(g) * u64::from(fs.geo.inodes_per_group) + 1;
    // Sized once: growing it copied the group's facts several times over.
    let mut in_use = Vec::with_capacity(used as usize);
    let mut dirs = 0;
    if let Some((leader, table)) = leader.and_then(|l| Some((l, l.take(g)?))) {
        // Read, and its xattr blocks hinted, by the leader.
        judge_slots(fs, ctx, g, first, &table, acc, &mut in_use, &mut dirs);
        leader.give_back(table);
        acc.inodes.push(in_use);
        acc.groups.push((g, true, dirs));
        return;
    }
    // Cold media: ask for the whole table now, read it chunk by chunk below.
    if leader.is_some() {
        fs.source.will_need(off, total);
    }
    let read_whole = walk_chunks(
        fs,
        ctx,
        g,
        off,
        used as usize,
        acc,
        leader,
        &mut in_use,
        &mut dirs,
    );
    acc.inodes.push(in_use);
    acc.groups
        .push((g, read_whole, if read_whole { dirs } else { 0 }));
}

/// Judge group `g`'s table (`used` slots at byte `off`) chunk by chunk: warm (no `leader`), in
/// place through a mapped window of the page cache; cold, or where mapping is refused, copied
/// into the worker's buffer. False when part of it could not be read (reported; what was
/// judged so far stays, and the group's usage is not compared).
#[allow(clippy::too_many_arguments)]
fn walk_chunks(
    fs: &Filesystem,
    ctx: &pass1::Ctx,
    g: u32,
    off: u64,
    used: usize,
    acc: &mut Acc,
    leader: Option<&Leader>,
    in_use: &mut Vec<InodeFacts>,
    dirs: &mut u32,
) -> bool {
    let isz = fs.geo.inode_size as usize;
    let per_chunk = (TABLE_CHUNK / isz.max(1)).max(1);
    let what = format!("inode table of group {g}");
    let first = u64::from(g) * u64::from(fs.geo.inodes_per_group) + 1;
    let mut buf = std::mem::take(&mut acc.table_buf);
    let mut window: Option<TableWindow> = None;
    let mut try_map = leader.is_none();
    let mut hinted = leader.is_some();
    let mut done = 0usize;
    let mut whole = true;
    while done < used {
        let n = per_chunk.min(used - done);
        let at = off + (done * isz) as u64;
        let mapped = if try_map {
            mapped_slots(fs, &mut window, off, used, isz, done, n)
        } else {
            None
        };
        let raw = match mapped {
            Some(raw) => raw,
            None => {
                // Mapping refused, or the table not cached after all: this group is read from
                // here on, its xattr blocks hinted as on a cold run.
                try_map &= window.is_some();
                hinted |= !try_map;
                buf.resize(n * isz, 0);
                if let Err(e) = fs.source.read_into(at, &mut buf, &what) {
                    push_unreadable(acc, g, e.to_string());
                    whole = false;
                    break;
                }
                if hinted {
                    prefetch_xattr_blocks(fs, &buf, isz);
                }
                &buf[..]
            }
        };
        judge_slots(fs, ctx, g, first + done as u64, raw, acc, in_use, dirs);
        if window.as_ref().is_some_and(|w| !w.view.intact()) {
            // A page went away while mapped (the input shrank, an I/O error) and read as
            // zeros: the pread of the same bytes says what happened.
            buf.resize(n * isz, 0);
            let msg = match fs.source.read_into(at, &mut buf, &what) {
                Err(e) => e.to_string(),
                Ok(()) => format!("{what}: byte offset {at}: the input changed while being read"),
            };
            push_unreadable(acc, g, msg);
            whole = false;
            break;
        }
        done += n;
    }
    acc.table_buf = buf;
    whole
}

fn push_unreadable(acc: &mut Acc, g: u32, message: String) {
    acc.findings.push(super::Finding::new(
        super::RuleId::InodeTableUnreadable,
        Some(g),
        message,
    ));
}

/// Bytes of inode table a worker keeps mapped at once on a warm run (a bound on the mapping,
/// whatever a group's table size).
const TABLE_MAP_WINDOW: usize = 8 << 20;

/// A worker's mapped window over slots `[first, first + slots)` of one group's table.
struct TableWindow {
    first: usize,
    slots: usize,
    view: crate::reader::source::View,
}

/// The `n` slots from slot `done` of the table at byte `off` (`used` slots of `isz` bytes), read
/// in place through `window`, mapped anew when they are not inside it; `None` when they cannot
/// be mapped or faulted in, or the new window is not all in the page cache (the caller reads
/// them; `window` is then `None`, and the group is read from there on).
fn mapped_slots<'w>(
    fs: &Filesystem,
    window: &'w mut Option<TableWindow>,
    off: u64,
    used: usize,
    isz: usize,
    done: usize,
    n: usize,
) -> Option<&'w [u8]> {
    let inside = window
        .as_ref()
        .is_some_and(|w| done >= w.first && done + n <= w.first + w.slots);
    if !inside {
        // The old window is unmapped before the next is mapped.
        *window = None;
        let slots = (TABLE_MAP_WINDOW / isz.max(1)).max(n).min(used - done);
        let at = off + (done * isz) as u64;
        let view = fs.source.map(at, (slots * isz) as u64)?;
        if !view.resident() {
            // Not cached after all (the warm probe saw another part): read, and hinted.
            fs.source.will_need(at, ((used - done) * isz) as u64);
            return None;
        }
        *window = Some(TableWindow {
            first: done,
            slots,
            view,
        });
    }
    let w = window.as_ref()?;
    w.view.bytes((done - w.first) * isz, n * isz)
}

/// Judge the inode slots in `raw` (whole records), the first being inode `first`; in-use ones
/// are appended to `in_use`, directories counted in `dirs`.
#[allow(clippy::too_many_arguments)]
fn judge_slots(
    fs: &Filesystem,
    ctx: &pass1::Ctx,
    g: u32,
    first: u64,
    raw: &[u8],
    acc: &mut Acc,
    in_use: &mut Vec<InodeFacts>,
    dirs: &mut u32,
) {
    let isz = fs.geo.inode_size as usize;
    for (i, slot) in raw.chunks_exact(isz.max(1)).enumerate() {
        let Ok(ino) = u32::try_from(first + i as u64) else {
            break;
        };
        *dirs += u32::from(pass1::check_inode(fs, ctx, g, ino, slot, acc, in_use));
    }
}

/// Most inode-table bytes hinted ahead of the leader's reading position: enough to keep a fast
/// device streaming, bounded so that a huge filesystem does not push tables out of the page
/// cache before they are walked.
const TABLE_HINT_WINDOW: u64 = 32 << 20;
/// Bytes of inode table one hint covers (one request to the kernel's readahead).
const TABLE_HINT_PIECE: u64 = 4 << 20;
/// Most bytes of tables the leader holds read but not yet taken by a worker: a few groups, enough
/// lead for the xattr blocks to arrive, few enough that the buffers stay few (they are reused).
const LEADER_HELD: u64 = 6 << 20;
/// Largest group table the leader reads whole (larger ones are left to the workers' chunks).
const LEADER_MAX_TABLE: u64 = 16 << 20;

/// A group's table as the leader has it.
enum Slot {
    /// The leader is reading it (a worker that needs it waits).
    Reading,
    /// Read (and its xattr blocks hinted): the worker takes it.
    Ready(Vec<u8>),
    /// A worker reads it itself (the leader was not there first, or its read failed).
    Worker,
}

#[derive(Default)]
struct LeaderState {
    slots: HashMap<u32, Slot>,
    /// Bytes in `Ready` slots.
    held: u64,
    /// Buffers the workers gave back, for the leader's next reads.
    spare: Vec<Vec<u8>>,
    done: bool,
}

/// The walk's I/O leader: a thread that runs ahead of the rayon workers on a cold device. It hints
/// the inode tables (coalesced where adjacent, as flex_bg packs them, in [`TABLE_HINT_PIECE`]
/// requests, [`TABLE_HINT_WINDOW`] ahead), reads each group's table whole, hints the xattr
/// blocks its live inodes point to, and hands the table to the worker that walks the group. So
/// the scattered xattr blocks are requested a whole group (and more) before pass 1 needs them,
/// instead of one chunk before, behind the table reads in the device queue. Groups are taken in
/// the order the workers reach them (round-robin over the parts of the group range the rayon
/// workers start from). A worker that finds its group not taken by the leader reads it itself,
/// as before: the leader changes when bytes are read, never what is judged, and a read error is
/// left for the worker to report.
struct Leader {
    /// (group, byte offset, bytes) of each group table, in the order to read.
    plan: Vec<(u32, u64, u64)>,
    state: std::sync::Mutex<LeaderState>,
    changed: std::sync::Condvar,
}

impl Leader {
    fn new(fs: &Filesystem) -> Leader {
        let isz = u64::from(fs.geo.inode_size);
        let plan = (0..fs.geo.group_count)
            .filter_map(|g| {
                let (used, off) = group_table(fs, g)?;
                let len = u64::from(used) * isz;
                let ok = len != 0 && len <= LEADER_MAX_TABLE;
                (ok && fs.source.ensure_inside(off, len, "").is_ok()).then_some((g, off, len))
            })
            .collect();
        Leader {
            plan: round_robin(plan, fs.geo.group_count, rayon::current_num_threads()),
            state: Default::default(),
            changed: Default::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LeaderState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Read the plan's tables; the xattr block numbers of each go to `xattr_hints` (another
    /// thread hints them: on an image file a hint may wait for the host filesystem's own mapping
    /// blocks, and the tables must not wait with it).
    fn run(&self, fs: &Filesystem, xattr_hints: std::sync::mpsc::Sender<Vec<u64>>) {
        let mut hints = TableHints::new(&self.plan);
        for (i, &(g, off, len)) in self.plan.iter().enumerate() {
            hints.advance(fs, i);
            let mut buf = {
                let mut st = self.lock();
                while !st.done && st.held > LEADER_HELD {
                    st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                if st.done {
                    return;
                }
                if st.slots.contains_key(&g) {
                    continue;
                }
                st.slots.insert(g, Slot::Reading);
                st.spare.pop().unwrap_or_default()
            };
            buf.resize(len as usize, 0);
            let table = match fs.source.read_into(off, &mut buf, "inode table") {
                Ok(()) => {
                    let blocks = xattr_blocks(fs, &buf, fs.geo.inode_size as usize);
                    if !blocks.is_empty() {
                        let _ = xattr_hints.send(blocks);
                    }
                    Some(buf)
                }
                Err(_) => None,
            };
            let mut st = self.lock();
            match table {
                Some(t) if !st.done => {
                    st.held += len;
                    st.slots.insert(g, Slot::Ready(t));
                }
                _ => {
                    st.slots.insert(g, Slot::Worker);
                }
            }
            drop(st);
            self.changed.notify_all();
        }
    }

    /// True when the tables are in the page cache (a warm run): then nothing is worth waiting
    /// for ahead of the workers, and their own chunked reads cost less than the leader's
    /// copies, so no leader runs. The probe is the end of the plan's last table (the
    /// first one's start was read when the filesystem was opened: root, journal and resize
    /// inodes live there), asked with [`crate::reader::source::Source::cached`] (`RWF_NOWAIT`) and
    /// timed where the kernel cannot say.
    fn warm(&self, fs: &Filesystem) -> bool {
        let Some(&(_, off, len)) = self.plan.last() else {
            return true;
        };
        let n = len.min(PROBE_BYTES);
        let at = off + (len - n);
        if let Some(cached) = fs.source.cached(at, n) {
            return cached;
        }
        // Written first, so that faulting the buffer in is not timed.
        let mut probe = vec![1u8; n as usize];
        let started = std::time::Instant::now();
        let ok = fs.source.read_into(at, &mut probe, "inode table").is_ok();
        ok && from_page_cache(probe.len() as u64, started.elapsed())
    }

    /// The table of group `g` when the leader read it (waiting while it reads it); `None` when
    /// the worker is to read it itself.
    fn take(&self, g: u32) -> Option<Vec<u8>> {
        let mut st = self.lock();
        loop {
            match st.slots.remove(&g) {
                Some(Slot::Reading) => {
                    st.slots.insert(g, Slot::Reading);
                    st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                Some(Slot::Ready(t)) => {
                    st.held = st.held.saturating_sub(t.len() as u64);
                    drop(st);
                    self.changed.notify_all();
                    return Some(t);
                }
                Some(Slot::Worker) | None => {
                    st.slots.insert(g, Slot::Worker);
                    return None;
                }
            }
        }
    }

    /// A table taken with [`Leader::take`], judged: its buffer serves again.
    fn give_back(&self, table: Vec<u8>) {
        let mut st = self.lock();
        if !st.done {
            st.spare.push(table);
        }
    }

    fn stop(&self) {
        let mut st = self.lock();
        st.done = true;
        st.slots.clear();
        st.spare.clear();
        st.held = 0;
        drop(st);
        self.changed.notify_all();
    }
}

/// Bytes at the end of the last planned table that [`Leader::warm`] probes.
const PROBE_BYTES: u64 = 64 << 10;
/// Least bytes per microsecond (4 GB/s) that say a read came from the page cache: a copy in
/// memory, faster than the devices this tool reads (a cold sequential read of a virtio disk
/// measured ~1.7 GB/s, plus its latency).
const PAGE_CACHE_BYTES_PER_US: u64 = 4096;

/// `len` bytes read in `took` came from the page cache (a judgement for the leader's strategy
/// only: a wrong one costs time, never changes what is judged).
fn from_page_cache(len: u64, took: std::time::Duration) -> bool {
    let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    us < 20 + len / PAGE_CACHE_BYTES_PER_US
}

/// The leader's readahead hints: the plan's tables, coalesced where adjacent, in pieces of at
/// most [`TABLE_HINT_PIECE`], kept [`TABLE_HINT_WINDOW`] bytes ahead of the table being read.
struct TableHints {
    /// (index in the plan of the first table covered, byte offset, bytes).
    pieces: Vec<(usize, u64, u64)>,
    /// Pieces hinted so far.
    next: usize,
    /// Plan index -> bytes of the plan before it (to measure the window).
    before: Vec<u64>,
}

impl TableHints {
    fn new(plan: &[(u32, u64, u64)]) -> TableHints {
        let mut runs: Vec<(usize, u64, u64)> = Vec::new();
        let mut before = Vec::with_capacity(plan.len() + 1);
        let mut total = 0u64;
        for (i, &(_, off, len)) in plan.iter().enumerate() {
            before.push(total);
            total += len;
            match runs.last_mut() {
                Some(r) if r.1.checked_add(r.2) == Some(off) => r.2 += len,
                _ => runs.push((i, off, len)),
            }
        }
        before.push(total);
        let mut pieces = Vec::new();
        for (i, off, len) in runs {
            let mut at = 0;
            while at < len {
                let n = TABLE_HINT_PIECE.min(len - at);
                pieces.push((i, off + at, n));
                at += n;
            }
        }
        TableHints {
            pieces,
            next: 0,
            before,
        }
    }

    /// The leader is about to read plan entry `i`: hint what lies within the window from it.
    fn advance(&mut self, fs: &Filesystem, i: usize) {
        let limit = self.before[i] + TABLE_HINT_WINDOW;
        while let Some(&(j, off, len)) = self.pieces.get(self.next) {
            if self.before[j] > limit {
                break;
            }
            fs.source.will_need(off, len);
            self.next += 1;
        }
    }
}

/// `pieces` (in group order) reordered round-robin over `parts` equal parts of the group range,
/// the order in which `parts` workers splitting the range reach them.
fn round_robin(pieces: Vec<(u32, u64, u64)>, groups: u32, parts: usize) -> Vec<(u32, u64, u64)> {
    let parts = parts.clamp(1, 64);
    let per = u64::from(groups).div_ceil(parts as u64).max(1);
    let mut lanes: Vec<std::collections::VecDeque<(u32, u64, u64)>> =
        vec![Default::default(); parts];
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

/// Ask the kernel now for the xattr blocks the live inodes of a chunk point to: scattered
/// single-block reads that pass 1 would otherwise wait for one at a time (cold media, or a page
/// cache that lost them); hinted together they are fetched in parallel.
fn prefetch_xattr_blocks(fs: &Filesystem, chunk: &[u8], isz: usize) {
    let blocks = xattr_blocks(fs, chunk, isz);
    if !blocks.is_empty() {
        fs.prefetch(blocks);
    }
}

/// The xattr blocks the live inodes of `chunk` point to, sorted, without repeats.
fn xattr_blocks(fs: &Filesystem, chunk: &[u8], isz: usize) -> Vec<u64> {
    let mut blocks: Vec<u64> = chunk
        .chunks_exact(isz)
        .filter_map(InodeBase::links_and_file_acl)
        .filter(|&(links, _)| links != 0)
        .map(|(_, b)| b)
        .filter(|&b| b != 0 && b < fs.geo.blocks_count)
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    blocks
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
        inodes: GroupLists {
            ipg: fs.geo.inodes_per_group,
            lists: Vec::new(),
        },
        ..Acc::default()
    };
    let leader = Leader::new(fs);
    // Warm (the tables in the page cache): no leader, no hints (each cost a page-cache lookup
    // per page hinted), nothing to wait for.
    let cold = fs.source.takes_hints() && !leader.warm(fs);
    let mut acc = std::thread::scope(|s| {
        if cold {
            let (tx, rx) = std::sync::mpsc::channel::<Vec<u64>>();
            s.spawn(move || rx.into_iter().for_each(|blocks| fs.prefetch(blocks)));
            s.spawn(|| leader.run(fs, tx));
        }
        let acc = (0..fs.geo.group_count)
            .into_par_iter()
            .fold(new_acc, |mut acc, g| {
                walk_group(fs, &ctx, g, &mut acc, cold.then_some(&leader));
                progress.advance(u64::from(fs.geo.inodes_per_group));
                acc
            })
            .reduce(Acc::default, Acc::merge);
        leader.stop();
        acc
    });
    drop(dense);
    // The index is built while the claims and xattr blocks are settled (independent work).
    let lists = std::mem::take(&mut acc.inodes.lists);
    let ((), index) = rayon::join(
        || {
            acc.claims.settle();
            acc.table_buf = Vec::new();
            acc.claims.used.optimize();
            acc.claims.multi.optimize();
            super::ownership::claim_metadata(fs, &mut acc.claims);
            pass1::settle_xattr_blocks(fs, &ctx, &mut acc);
        },
        || InodeIndex::from_lists(lists, fs.geo.inodes_per_group),
    );
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
        index,
        orphans,
        claims: acc.claims,
        group_read,
        group_dirs,
        extras: ctx.take_extras(),
        quota: acc.quota,
    };
    pass1::report_multiply_claimed(fs, &ctx, &walk, f);
    walk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_alternates_between_the_workers_starting_points() {
        let pieces: Vec<_> = (0..8u32).map(|g| (g, u64::from(g) * 10, 10)).collect();
        let order: Vec<u32> = round_robin(pieces, 8, 2).iter().map(|p| p.0).collect();
        assert_eq!(order, vec![0, 4, 1, 5, 2, 6, 3, 7]);
        let one: Vec<u32> = round_robin(vec![(3, 0, 1), (1, 5, 1)], 4, 1)
            .iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(one, vec![3, 1]);
    }

    #[test]
    fn table_hints_coalesce_adjacent_tables_in_bounded_pieces() {
        let mib = 1u64 << 20;
        // Three adjacent 3 MiB tables, then one elsewhere.
        let plan = vec![
            (0, 0, 3 * mib),
            (1, 3 * mib, 3 * mib),
            (2, 6 * mib, 3 * mib),
            (3, 100 * mib, mib),
        ];
        let h = TableHints::new(&plan);
        let spans: Vec<(u64, u64)> = h.pieces.iter().map(|p| (p.1, p.2)).collect();
        assert_eq!(
            spans,
            vec![
                (0, 4 * mib),
                (4 * mib, 4 * mib),
                (8 * mib, mib),
                (100 * mib, mib)
            ]
        );
        assert!(h.pieces.iter().all(|p| p.2 <= TABLE_HINT_PIECE));
        assert_eq!(h.before, vec![0, 3 * mib, 6 * mib, 9 * mib, 10 * mib]);
    }

    #[test]
    fn page_cache_speed_threshold() {
        use std::time::Duration;
        // 64 KiB in 5 us: a copy in memory; in 300 us: a device.
        assert!(from_page_cache(64 << 10, Duration::from_micros(5)));
        assert!(!from_page_cache(64 << 10, Duration::from_micros(300)));
    }
}
