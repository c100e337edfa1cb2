//! The one walk over the inode tables (e2fsck's `e2fsck_pass1` loop over
//! `ext2fs_get_next_inode_full`), driving a [`TableVisitor`]: every scan of every inode is one
//! (check pass 1's `Pass1Visitor`, the in-use inode scan under `xattrs` and `fit --from-image`,
//! [`crate::reader::itable::scan_in_use`]). It lives in the reader so that `models`, `check`
//! and `views` all drive the same engine.
//!
//! Groups are walked in parallel (rayon `fold`, then the workers' states merged in group order);
//! each group's table is read once, up to `bg_itable_unused` with descriptor checksums, skipping
//! INODE_UNINIT groups, as libext2fs' inode scan does.
//!
//! I/O strategy: on a warm run (the tables in the page cache, probed with `RWF_NOWAIT` or a
//! timed read) each worker copies its groups chunk by chunk (`TABLE_CHUNK`) into its reused
//! buffer, and nothing is hinted (reading in place through a bounded mapped window,
//! `TABLE_MAP_WINDOW`, is kept behind `MAP_WARM_TABLES`: on the 400,000-inode benchmark the
//! page-table work of mapping, checking residency and unmapping cost more CPU than the copy). On a cold
//! device an I/O leader thread (`Leader`) runs ahead of the workers: it hints the tables in
//! large requests, reads each group's table and hints the xattr blocks it points to, then hands
//! the table over. The strategy changes when bytes are read, never what a visitor sees: every
//! slot of every walked table, in order within its group.
//!
//! Memory: per worker, one chunk buffer and at most one mapped window; the leader holds at
//! most `LEADER_HELD` bytes of tables. What a visitor keeps is its own.

use crate::reader::fs::Filesystem;
use crate::reader::group::BG_INODE_UNINIT;
use crate::reader::ondisk::inode::InodeBase;
use rayon::prelude::*;
use std::collections::HashMap;

/// A scan the walk drives over the inode tables: pass 1 is one; any other scan of every inode
/// (xattrs, `fit --from-image`, `ncheck`, `diff`) plugs in the same way and gets the walk's I/O
/// strategy (see the module documentation) for free.
///
/// The walk calls, for each group in order within a worker: [`TableVisitor::group_start`] (only
/// when the table is about to be read), [`TableVisitor::inode`] for each slot read, and
/// [`TableVisitor::group_end`] once. Workers take contiguous ranges of groups; their states are
/// combined in group order with [`TableVisitor::merge`], so a visitor that appends in each
/// worker sees its results in group order.
pub trait TableVisitor: Sync {
    /// One worker's state.
    type Worker: Send;
    /// A new worker's state.
    fn worker(&self) -> Self::Worker;
    /// `later` walked the groups right after those of `earlier`.
    fn merge(&self, earlier: Self::Worker, later: Self::Worker) -> Self::Worker;
    /// Group `group`'s table is about to be read: `slots` slots (up to `bg_itable_unused`).
    fn group_start(&self, worker: &mut Self::Worker, group: u32, slots: u32);
    /// One slot of the table: inode `ino` of group `group` as stored (`inode_size` bytes; an
    /// unused slot too).
    fn inode(&self, worker: &mut Self::Worker, group: u32, ino: u32, raw: &[u8]);
    /// Group `group` is done: how its table was read.
    fn group_end(&self, worker: &mut Self::Worker, group: u32, end: GroupEnd);
}

/// How a group's inode table was walked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupEnd {
    /// Its descriptor cannot be read: nothing walked.
    NoDescriptor,
    /// Nothing to read: INODE_UNINIT (with descriptor checksums), or no slot in use.
    Empty,
    /// The table lies (partly) outside the image (the message says where): nothing walked.
    OutsideImage(String),
    /// Every slot read and visited.
    Read,
    /// A read failed (the message): the slots before it were visited.
    Partial(String),
}

/// A worker of the walk: the visitor's state and the worker's table buffer (reused from chunk
/// to chunk).
struct Worker<W> {
    visitor: W,
    table_buf: Vec<u8>,
}

/// Where `group`'s walked slots are: `(slots, byte offset)` of the table up to
/// `bg_itable_unused` (with descriptor checksums), `(0, 0)` for INODE_UNINIT groups, `None` when
/// the descriptor cannot be read.
fn group_table(fs: &Filesystem, group: u32) -> Option<(u32, u64)> {
    let ipg = fs.geo.inodes_per_group;
    let gd = fs.desc(group).ok()?;
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

/// Walk group `group`'s inode table. `leader` is the I/O leader of a cold run; `None` when the
/// tables are in the page cache: then nothing is hinted and each worker reads its own chunks.
fn walk_group<V: TableVisitor>(
    fs: &Filesystem,
    visitor: &V,
    group: u32,
    worker: &mut Worker<V::Worker>,
    leader: Option<&Leader>,
) {
    let state = &mut worker.visitor;
    let Some((used, off)) = group_table(fs, group) else {
        visitor.group_end(state, group, GroupEnd::NoDescriptor);
        return;
    };
    if used == 0 {
        visitor.group_end(state, group, GroupEnd::Empty);
        return;
    }
    let inode_size = fs.geo.inode_size as usize;
    let total = u64::from(used) * inode_size as u64;
    let what = format!("inode table of group {group}");
    if let Err(err) = fs.source.ensure_inside(off, total, &what) {
        visitor.group_end(state, group, GroupEnd::OutsideImage(err.to_string()));
        return;
    }
    visitor.group_start(state, group, used);
    if let Some((leader, table)) = leader.and_then(|l| Some((l, l.take(group)?))) {
        // Read, and its xattr blocks hinted, by the leader.
        visit_slots(fs, visitor, state, group, 0, &table);
        leader.give_back(table);
        visitor.group_end(state, group, GroupEnd::Read);
        return;
    }
    // Cold media: ask for the whole table now, read it chunk by chunk below.
    if leader.is_some() {
        fs.source.will_need(off, total);
    }
    let table = GroupTable {
        group,
        off,
        used: used as usize,
        what,
    };
    let end = walk_chunks(fs, visitor, &table, worker, leader.is_some());
    visitor.group_end(&mut worker.visitor, group, end);
}

/// Where one group's table is: `used` slots at byte `off`.
struct GroupTable {
    group: u32,
    off: u64,
    used: usize,
    /// "inode table of group N", for read errors.
    what: String,
}

/// Visit a group's table chunk by chunk: warm (`cold` false), in place through a mapped window
/// of the page cache; cold, or where mapping is refused, copied into the worker's buffer.
/// [`GroupEnd::Partial`] when part of it could not be read (what was visited so far stays).
fn walk_chunks<V: TableVisitor>(
    fs: &Filesystem,
    visitor: &V,
    table: &GroupTable,
    worker: &mut Worker<V::Worker>,
    cold: bool,
) -> GroupEnd {
    let inode_size = fs.geo.inode_size as usize;
    let per_chunk = (TABLE_CHUNK / inode_size.max(1)).max(1);
    let (used, what) = (table.used, &table.what);
    let mut buf = std::mem::take(&mut worker.table_buf);
    let mut window: Option<TableWindow> = None;
    let mut try_map = !cold && MAP_WARM_TABLES;
    let mut hinted = cold;
    let mut done = 0usize;
    let mut end = GroupEnd::Read;
    while done < used {
        let count = per_chunk.min(used - done);
        let at = table.off + (done * inode_size) as u64;
        let mapped = if try_map {
            mapped_slots(fs, &mut window, table.off, used, inode_size, done, count)
        } else {
            None
        };
        let raw = match mapped {
            Some(raw) => raw,
            None => {
                // Mapping refused, or the table not cached after all: this group is read from
                // here on, its xattr blocks hinted as on a cold run.
                hinted |= try_map && window.is_none();
                try_map &= window.is_some();
                buf.resize(count * inode_size, 0);
                if let Err(err) = fs.source.read_into(at, &mut buf, what) {
                    end = GroupEnd::Partial(err.to_string());
                    break;
                }
                if hinted {
                    prefetch_xattr_blocks(fs, &buf, inode_size);
                }
                &buf[..]
            }
        };
        visit_slots(fs, visitor, &mut worker.visitor, table.group, done, raw);
        if window.as_ref().is_some_and(|w| !w.view.intact()) {
            // A page went away while mapped (the input shrank, an I/O error) and read as
            // zeros: the pread of the same bytes says what happened.
            buf.resize(count * inode_size, 0);
            let msg = match fs.source.read_into(at, &mut buf, what) {
                Err(e) => e.to_string(),
                Ok(()) => format!("{what}: byte offset {at}: the input changed while being read"),
            };
            end = GroupEnd::Partial(msg);
            break;
        }
        done += count;
    }
    worker.table_buf = buf;
    end
}

/// Whether a warm walk reads the tables in place through a mapped window (else it copies
/// each chunk into the worker's buffer). Off: on pop-400000 (100 MiB of tables) mapping,
/// populating, `mincore` and unmapping took ~28% of `xattrs`' CPU; the copies cost less
/// (xattrs ~59 -> ~54 ms user+sys, check ~82 -> ~79 ms, same sitting).
const MAP_WARM_TABLES: bool = false;

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
    count: usize,
) -> Option<&'w [u8]> {
    let inside = window
        .as_ref()
        .is_some_and(|w| done >= w.first && done + count <= w.first + w.slots);
    if !inside {
        // The old window is unmapped before the next is mapped.
        *window = None;
        let slots = (TABLE_MAP_WINDOW / isz.max(1)).max(count).min(used - done);
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
    let current = window.as_ref()?;
    current
        .view
        .bytes((done - current.first) * isz, count * isz)
}

/// Visit the inode slots in `raw` (whole records), the first being slot `first_slot` of group
/// `group`'s table.
fn visit_slots<V: TableVisitor>(
    fs: &Filesystem,
    visitor: &V,
    state: &mut V::Worker,
    group: u32,
    first_slot: usize,
    raw: &[u8],
) {
    let inode_size = fs.geo.inode_size as usize;
    let first = u64::from(group) * u64::from(fs.geo.inodes_per_group) + 1 + first_slot as u64;
    for (index, slot) in raw.chunks_exact(inode_size.max(1)).enumerate() {
        let Ok(ino) = u32::try_from(first + index as u64) else {
            break;
        };
        visitor.inode(state, group, ino, slot);
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
        for (index, &(group, off, len)) in self.plan.iter().enumerate() {
            hints.advance(fs, index);
            let mut buf = {
                let mut st = self.lock();
                while !st.done && st.held > LEADER_HELD {
                    st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                if st.done {
                    return;
                }
                if st.slots.contains_key(&group) {
                    continue;
                }
                st.slots.insert(group, Slot::Reading);
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
                    st.slots.insert(group, Slot::Ready(t));
                }
                _ => {
                    st.slots.insert(group, Slot::Worker);
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
        let probe_len = len.min(PROBE_BYTES);
        let at = off + (len - probe_len);
        if let Some(cached) = fs.source.cached(at, probe_len) {
            return cached;
        }
        // Written first, so that faulting the buffer in is not timed.
        let mut probe = vec![1u8; probe_len as usize];
        let started = std::time::Instant::now();
        let ok = fs.source.read_into(at, &mut probe, "inode table").is_ok();
        ok && from_page_cache(probe.len() as u64, started.elapsed())
    }

    /// The table of group `g` when the leader read it (waiting while it reads it); `None` when
    /// the worker is to read it itself.
    fn take(&self, group: u32) -> Option<Vec<u8>> {
        let mut st = self.lock();
        loop {
            match st.slots.remove(&group) {
                Some(Slot::Reading) => {
                    st.slots.insert(group, Slot::Reading);
                    st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                Some(Slot::Ready(t)) => {
                    st.held = st.held.saturating_sub(t.len() as u64);
                    drop(st);
                    self.changed.notify_all();
                    return Some(t);
                }
                Some(Slot::Worker) | None => {
                    st.slots.insert(group, Slot::Worker);
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
        for (index, &(_, off, len)) in plan.iter().enumerate() {
            before.push(total);
            total += len;
            match runs.last_mut() {
                Some(r) if r.1.checked_add(r.2) == Some(off) => r.2 += len,
                _ => runs.push((index, off, len)),
            }
        }
        before.push(total);
        let mut pieces = Vec::new();
        for (index, off, len) in runs {
            let mut at = 0;
            while at < len {
                let piece_len = TABLE_HINT_PIECE.min(len - at);
                pieces.push((index, off + at, piece_len));
                at += piece_len;
            }
        }
        TableHints {
            pieces,
            next: 0,
            before,
        }
    }

    /// The leader is about to read plan entry `index`: hint what lies within the window from it.
    fn advance(&mut self, fs: &Filesystem, index: usize) {
        let limit = self.before[index] + TABLE_HINT_WINDOW;
        while let Some(&(piece_index, off, len)) = self.pieces.get(self.next) {
            if self.before[piece_index] > limit {
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
    for piece in pieces {
        let lane = (u64::from(piece.0) / per).min(parts as u64 - 1) as usize;
        lanes[lane].push_back(piece);
    }
    let mut out = Vec::with_capacity(lanes.iter().map(|l| l.len()).sum());
    while lanes.iter().any(|l| !l.is_empty()) {
        for lane in &mut lanes {
            out.extend(lane.pop_front());
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

/// Walk every group's inode table with `visitor`, the groups in parallel; its workers' states
/// come back merged in group order (`None` when there is no group). `progress` is told a group's
/// inodes (`inodes_per_group`) as each group is done.
pub fn run<V: TableVisitor>(
    fs: &Filesystem,
    visitor: &V,
    progress: &(dyn Fn(u64) + Sync),
) -> Option<V::Worker> {
    // Every group's descriptor is looked at (the plan below, each worker's group, a visitor's
    // own lookups such as inode paths named after the walk): decoded once, each lookup is a
    // copy instead of a read, a decode and a checksum. Bounded; nothing kept when it cannot be.
    fs.load_descriptors();
    let leader = Leader::new(fs);
    // Warm (the tables in the page cache): no leader, no hints (each cost a page-cache lookup
    // per page hinted), nothing to wait for.
    let cold = fs.source.takes_hints() && !leader.warm(fs);
    std::thread::scope(|s| {
        if cold {
            let (tx, rx) = std::sync::mpsc::channel::<Vec<u64>>();
            s.spawn(move || rx.into_iter().for_each(|blocks| fs.prefetch(blocks)));
            s.spawn(|| leader.run(fs, tx));
        }
        let new_worker = || Worker {
            visitor: visitor.worker(),
            table_buf: Vec::new(),
        };
        let merged = (0..fs.geo.group_count)
            .into_par_iter()
            .fold(new_worker, |mut worker, group| {
                walk_group(fs, visitor, group, &mut worker, cold.then_some(&leader));
                progress(u64::from(fs.geo.inodes_per_group));
                worker
            })
            .map(|worker| worker.visitor)
            .reduce_with(|earlier, later| visitor.merge(earlier, later));
        leader.stop();
        merged
    })
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
        let hints = TableHints::new(&plan);
        let spans: Vec<(u64, u64)> = hints.pieces.iter().map(|p| (p.1, p.2)).collect();
        assert_eq!(
            spans,
            vec![
                (0, 4 * mib),
                (4 * mib, 4 * mib),
                (8 * mib, mib),
                (100 * mib, mib)
            ]
        );
        assert!(hints.pieces.iter().all(|p| p.2 <= TABLE_HINT_PIECE));
        assert_eq!(hints.before, vec![0, 3 * mib, 6 * mib, 9 * mib, 10 * mib]);
    }

    #[test]
    fn page_cache_speed_threshold() {
        use std::time::Duration;
        // 64 KiB in 5 us: a copy in memory; in 300 us: a device.
        assert!(from_page_cache(64 << 10, Duration::from_micros(5)));
        assert!(!from_page_cache(64 << 10, Duration::from_micros(300)));
    }
}
