//! The scan of every in-use inode, on the one inode-table walk ([`crate::reader::walk`]).
//!
//! It skips INODE_UNINIT groups and the unused tail of each inode table (`bg_itable_unused`) when
//! the filesystem has group descriptor checksums (the walk does), and visits the inodes whose
//! bit is set in the group's inode bitmap. Memory does not grow with the image: accumulators are per
//! worker thread, and every table they keep is capped by a constant. External xattr blocks are
//! decoded once through a bounded shared cache ([`XattrBlockCache`]). The xattr statistics of
//! `views::scan` and the placement model of `models::fit` are built on it.

use crate::error::{Problem, ProblemKind};
use crate::reader::fs::Filesystem;
use crate::reader::group::BG_INODE_UNINIT;
use crate::reader::inode::{self, Inode, XattrLocation};
use crate::reader::walk::{GroupEnd, TableVisitor};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Most problems kept verbatim (the rest are only counted).
pub const MAX_PROBLEMS: usize = 100;
/// What the scan itself saw, apart from what the visitor computes.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct ScanCounts {
    /// Groups in the filesystem.
    pub groups: u32,
    /// Groups skipped because their inode table is not initialised.
    pub groups_uninit: u32,
    /// Inodes visited (bit set in the inode bitmap).
    pub inodes_in_use: u64,
    /// Inode slots skipped as the unused tail of inode tables.
    pub inodes_unused_tail: u64,
    /// Inode-table bytes read.
    pub itable_bytes: u64,
    /// Number of problems met.
    pub problem_count: u64,
    /// The first [`MAX_PROBLEMS`] problems.
    pub problems: Vec<Problem>,
}

impl ScanCounts {
    /// Record a problem (kept up to the cap).
    pub fn problem(&mut self, msg: Problem) {
        self.problem_count += 1;
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(msg);
        }
    }
    fn merge(mut self, other: ScanCounts) -> ScanCounts {
        self.groups = self.groups.max(other.groups);
        self.groups_uninit += other.groups_uninit;
        self.inodes_in_use += other.inodes_in_use;
        self.inodes_unused_tail += other.inodes_unused_tail;
        self.itable_bytes += other.itable_bytes;
        self.problem_count += other.problem_count;
        for problem in other.problems {
            if self.problems.len() < MAX_PROBLEMS {
                self.problems.push(problem);
            }
        }
        self
    }
}

/// Bytes of inode records read at once: large enough that a cold device sees big sequential
/// requests, small enough that a hostile `inodes_per_group` cannot make one read huge.
pub const ITABLE_CHUNK_BYTES: u64 = 4 << 20;

/// The in-use part of one group's inode table: the slots before the unused tail, and the
/// group's inode bitmap saying which of them are in use. Records are read in chunks
/// ([`GroupInodes::read_chunk`]).
#[derive(Clone, Debug)]
pub struct GroupInodes {
    group: u32,
    /// Inode number of the table's first slot.
    first_ino: u64,
    /// Byte offset of the table in the source.
    table_off: u64,
    /// Slots covered (in use or not): the table up to the unused tail.
    slots: usize,
    bitmap: Vec<u8>,
    inode_size: usize,
}

/// Consecutive inode records of one group, read from the table.
#[derive(Clone, Debug)]
pub struct InodeChunk {
    /// Slot index (within the group) of the first record.
    first_slot: usize,
    table: Vec<u8>,
}

impl GroupInodes {
    /// Number of slots covered (in use or not).
    pub fn slots(&self) -> usize {
        self.slots
    }
    /// True when `slot`'s bitmap bit is set.
    pub fn in_use(&self, slot: usize) -> bool {
        self.bitmap
            .get(slot / 8)
            .is_some_and(|b| b & (1 << (slot % 8)) != 0)
    }
    /// Slots per chunk read.
    fn chunk_slots(&self) -> usize {
        (ITABLE_CHUNK_BYTES as usize / self.inode_size.max(1)).max(1)
    }
    /// The chunk holding `slot` (its first slot is a multiple of the chunk length).
    pub fn chunk_of(&self, slot: usize) -> usize {
        slot - slot % self.chunk_slots()
    }
    /// First slots of every chunk, in order.
    pub fn chunk_starts(&self) -> impl Iterator<Item = usize> {
        (0..self.slots).step_by(self.chunk_slots())
    }
    /// Read the records of the chunk starting at slot `first` (and hint the next one to the
    /// kernel, so a cold device reads ahead while this one is decoded).
    pub fn read_chunk(&self, fs: &Filesystem, first: usize) -> crate::Result<InodeChunk> {
        let count = self.chunk_slots().min(self.slots.saturating_sub(first));
        let isz = self.inode_size as u64;
        let off = self.table_off + first as u64 * isz;
        let len = count as u64 * isz;
        let next = first + count;
        if next < self.slots {
            let after = self.chunk_slots().min(self.slots - next) as u64 * isz;
            fs.source.will_need(off + len, after);
        }
        let table = fs.source.read(
            off,
            len,
            &format!(
                "inode table of group {} (slots {first}..{next})",
                self.group
            ),
        )?;
        Ok(InodeChunk {
            first_slot: first,
            table,
        })
    }
    /// Slot `slot` of `chunk` when its bitmap bit is set: its inode number and on-disk record.
    pub fn get<'c>(&self, chunk: &'c InodeChunk, slot: usize) -> Option<(u32, &'c [u8])> {
        if !self.in_use(slot) {
            return None;
        }
        let at = slot.checked_sub(chunk.first_slot)? * self.inode_size;
        let raw = chunk.table.get(at..at + self.inode_size)?;
        let ino = u32::try_from(self.first_ino + slot as u64).ok()?;
        Some((ino, raw))
    }
    /// Every in-use slot of `chunk`, in order.
    pub fn iter<'c>(&'c self, chunk: &'c InodeChunk) -> impl Iterator<Item = (u32, &'c [u8])> + 'c {
        let slots = chunk.table.len() / self.inode_size.max(1);
        (chunk.first_slot..chunk.first_slot + slots).filter_map(move |i| self.get(chunk, i))
    }
}

/// Which inodes of `group` the scan visits: none for an INODE_UNINIT group (with descriptor
/// checksums) or an empty table, else the table up to `bg_itable_unused` and the bitmap. What was
/// skipped or could not be read is recorded in `counts`.
pub fn group_inodes(fs: &Filesystem, group: u32, counts: &mut ScanCounts) -> Option<GroupInodes> {
    let ipg = fs.geo.inodes_per_group;
    let isz = u64::from(fs.geo.inode_size);
    let gd = match fs.desc(group) {
        Ok(d) => d,
        Err(e) => {
            counts.problem(Problem::new(
                ProblemKind::Group,
                format!("group {group}: {e}"),
            ));
            return None;
        }
    };
    let csum = fs.sb.has_group_desc_csum();
    if csum && gd.has_flag(BG_INODE_UNINIT) {
        counts.groups_uninit += 1;
        counts.inodes_unused_tail += u64::from(ipg);
        return None;
    }
    let mut used = ipg;
    if csum {
        if gd.itable_unused > ipg {
            counts.problem(Problem::new(
                ProblemKind::Group,
                format!(
                    "group {group}: itable_unused {} exceeds inodes per group {ipg}",
                    gd.itable_unused
                ),
            ));
        } else {
            used = ipg - gd.itable_unused;
        }
    }
    counts.inodes_unused_tail += u64::from(ipg - used);
    if used == 0 {
        return None;
    }
    let bitmap = match fs.block_uncached(gd.inode_bitmap) {
        Ok(b) => b,
        Err(e) => {
            counts.problem(Problem::new(
                ProblemKind::Group,
                format!("group {group}: inode bitmap: {e}"),
            ));
            return None;
        }
    };
    let Some(table_off) = gd.inode_table.checked_mul(fs.block_size()) else {
        counts.problem(Problem::new(
            ProblemKind::Group,
            format!(
                "group {group}: inode table block {} overflows",
                gd.inode_table
            ),
        ));
        return None;
    };
    let in_range = u64::from(used)
        .checked_mul(isz)
        .and_then(|len| table_off.checked_add(len))
        .is_some_and(|end| end <= fs.source.len());
    if !in_range {
        counts.problem(Problem::new(
            ProblemKind::Group,
            format!(
            "group {group}: inode table at block {} ({used} inodes) lies beyond the end of the image",
            gd.inode_table
        ),
        ));
        return None;
    }
    counts.itable_bytes += u64::from(used) * isz;
    Some(GroupInodes {
        group,
        first_ino: u64::from(group) * u64::from(ipg) + 1,
        table_off,
        slots: used as usize,
        bitmap,
        inode_size: isz as usize,
    })
}

/// The in-use inode scan as a [`TableVisitor`] of the one walk ([`crate::reader::walk`]): at
/// each group's start it takes the group's inode bitmap ([`group_inodes`], which also keeps the
/// [`ScanCounts`] of what is skipped), and hands the walk's slots whose bit is set to `visit`.
struct InUse<'a, I, V, M> {
    fs: &'a Filesystem,
    init: I,
    visit: V,
    merge: M,
}

/// One worker of [`InUse`]: the caller's accumulator, the counts, and the bitmap of the group
/// being walked (`None` when its bitmap could not be read: its slots are not visited).
struct InUseWorker<T> {
    acc: T,
    counts: ScanCounts,
    group: Option<GroupInodes>,
    /// The group whose start was seen (so that `group_end` knows whether to account it).
    started: Option<u32>,
}

impl<T, I, V, M> TableVisitor for InUse<'_, I, V, M>
where
    T: Send,
    I: Fn() -> T + Sync,
    V: Fn(&mut T, &mut ScanCounts, u32, &[u8]) + Sync,
    M: Fn(T, T) -> T + Sync,
{
    type Worker = InUseWorker<T>;

    fn worker(&self) -> InUseWorker<T> {
        InUseWorker {
            acc: (self.init)(),
            counts: ScanCounts::default(),
            group: None,
            started: None,
        }
    }

    fn merge(&self, earlier: InUseWorker<T>, later: InUseWorker<T>) -> InUseWorker<T> {
        InUseWorker {
            acc: (self.merge)(earlier.acc, later.acc),
            counts: earlier.counts.merge(later.counts),
            group: None,
            started: None,
        }
    }

    fn group_start(&self, worker: &mut InUseWorker<T>, group: u32, _slots: u32) {
        worker.group = group_inodes(self.fs, group, &mut worker.counts);
        worker.started = Some(group);
    }

    fn inode(&self, worker: &mut InUseWorker<T>, group: u32, ino: u32, raw: &[u8]) {
        let Some(inodes) = &worker.group else { return };
        let first = u64::from(group) * u64::from(self.fs.geo.inodes_per_group) + 1;
        let slot = (u64::from(ino) - first) as usize;
        if inodes.in_use(slot) {
            worker.counts.inodes_in_use += 1;
            (self.visit)(&mut worker.acc, &mut worker.counts, ino, raw);
        }
    }

    fn group_end(&self, worker: &mut InUseWorker<T>, group: u32, end: GroupEnd) {
        if worker.started != Some(group) {
            // Not walked (no descriptor, nothing in use, table outside the image): the same
            // judgement of the descriptor says what was skipped and why.
            let _ = group_inodes(self.fs, group, &mut worker.counts);
        }
        if let GroupEnd::Partial(msg) = end {
            worker.counts.problem(Problem::new(ProblemKind::Group, msg));
        }
        worker.group = None;
        worker.started = None;
    }
}

/// Visit every in-use inode with `visit(acc, counts, ino, raw_record)`, one accumulator per worker
/// (from `init`), combined in group order with `merge`. `progress` is called with the number of
/// inode slots each finished group covered. The one walk ([`crate::reader::walk::run`]) reads the
/// tables (its warm/cold I/O strategy); only slots whose inode-bitmap bit is set are visited.
pub fn scan_in_use<T, I, V, M>(
    fs: &Filesystem,
    init: I,
    visit: V,
    merge: M,
    progress: &(dyn Fn(u64) + Sync),
) -> (T, ScanCounts)
where
    T: Send,
    I: Fn() -> T + Sync + Send,
    V: Fn(&mut T, &mut ScanCounts, u32, &[u8]) + Sync + Send,
    M: Fn(T, T) -> T + Sync + Send,
{
    let visitor = InUse {
        fs,
        init,
        visit,
        merge,
    };
    let worker =
        crate::reader::walk::run(fs, &visitor, progress).unwrap_or_else(|| visitor.worker());
    let mut counts = worker.counts;
    counts.groups = fs.group_count();
    (worker.acc, counts)
}

/// Most 64-bit words [`SeenInodes`] holds (two bits per inode slot up to the highest one
/// visited in each group: 2^25 slots, 8 MiB); past it nothing more is recorded.
const MAX_SEEN_WORDS: usize = 1 << 20;

/// Which inodes a scan visited, and which of them are directories (by their `i_mode` as the
/// scan read it): what `views::scan::inode_paths_seen` would otherwise read again for every directory
/// entry it meets. Per group, bits up to the highest slot visited (memory follows the tables
/// read, bounded by `MAX_SEEN_WORDS`, 8 MiB).
#[derive(Clone, Debug, Default)]
pub struct SeenInodes {
    /// Inodes per group of the filesystem (0 until the first inode is recorded).
    ipg: u32,
    /// `(group, visited bits, directory bits)`, by ascending group once merged.
    groups: Vec<(u32, Vec<u64>, Vec<u64>)>,
    words: usize,
}

impl SeenInodes {
    /// Record inode `ino` (of a filesystem with `ipg` inodes per group) as visited.
    pub fn add(&mut self, ipg: u32, ino: u32, is_dir: bool) {
        if ipg == 0 || ino == 0 || (self.ipg != 0 && self.ipg != ipg) {
            return;
        }
        self.ipg = ipg;
        let (group, slot) = ((ino - 1) / ipg, ((ino - 1) % ipg) as usize);
        if self.groups.last().is_none_or(|g| g.0 != group) {
            self.groups.push((group, Vec::new(), Vec::new()));
        }
        let word = slot / 64;
        let Some(entry) = self.groups.last_mut() else {
            return;
        };
        if word >= entry.1.len() {
            let more = word + 1 - entry.1.len();
            if self.words + 2 * more > MAX_SEEN_WORDS {
                return;
            }
            self.words += 2 * more;
            entry.1.resize(word + 1, 0);
            entry.2.resize(word + 1, 0);
        }
        let bit = 1u64 << (slot % 64);
        entry.1[word] |= bit;
        if is_dir {
            entry.2[word] |= bit;
        }
    }

    /// Whether inode `ino` is a directory, when it was visited (`None` otherwise).
    pub fn is_dir(&self, ino: u32) -> Option<bool> {
        if self.ipg == 0 || ino == 0 {
            return None;
        }
        let (group, slot) = ((ino - 1) / self.ipg, ((ino - 1) % self.ipg) as usize);
        let index = self.groups.binary_search_by_key(&group, |g| g.0).ok()?;
        let (_, visited, dirs) = &self.groups[index];
        let bit = 1u64 << (slot % 64);
        let word = slot / 64;
        (visited.get(word)? & bit != 0).then(|| dirs[word] & bit != 0)
    }

    /// `later` was recorded over the groups after those of `self`.
    pub fn merge(mut self, later: SeenInodes) -> SeenInodes {
        if self.ipg == 0 {
            return SeenInodes {
                words: self.words + later.words,
                ..later
            };
        }
        if later.ipg == self.ipg {
            self.groups.extend(later.groups);
            self.words += later.words;
        }
        // A group recorded twice (never, as workers take disjoint groups) is found once;
        // what is not found is read again: the answer is the same either way.
        self.groups.sort_by_key(|g| g.0);
        self
    }
}

// ---------------------------------------------------------------------------------------------
// External xattr blocks, decoded once per distinct block
// ---------------------------------------------------------------------------------------------

/// One entry of an external xattr block, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockEntry {
    /// Full name with prefix.
    pub name: String,
    /// Value size in bytes.
    pub value_size: u32,
    /// `Block(n)`, or `EaInode(i)` when the value lives in an EA inode.
    pub location: XattrLocation,
    /// Bytes the entry takes in the block.
    pub cost: usize,
    /// The value's summary for the names that have one (read once per distinct block).
    pub summary: Option<crate::reader::xattr::ValueSummary>,
}

/// An external xattr block as every inode referencing it sees it, decoded once.
#[derive(Clone, Debug, Default)]
pub struct DecodedBlock {
    /// Header, space and checksum; `None` when the block could not be read or parsed.
    pub info: Option<inode::XattrBlockInfo>,
    /// Entries in on-disk order.
    pub entries: Vec<BlockEntry>,
    /// Damage found in the block (or its EA inodes), as `inode_xattrs` words it.
    pub problems: Vec<Problem>,
    /// Sum of entry costs.
    pub cost: u64,
    /// Sum of value sizes.
    pub value_bytes: u64,
    /// Value bytes held in EA inodes.
    pub ea_value_bytes: u64,
}

impl DecodedBlock {
    /// Decode block `blk` of `fs` exactly as [`inode::inode_xattrs`] reads an inode's block.
    pub fn decode(fs: &Filesystem, blk: u64) -> DecodedBlock {
        // An inode without an in-inode area whose only xattrs are the block's.
        let raw = [0u8; 128];
        let mut carrier = Inode::parse(&raw);
        carrier.file_acl = blk;
        let xa = inode::inode_xattrs_reading(fs, &raw, &carrier, true);
        let mut out = DecodedBlock {
            info: xa.block.clone(),
            problems: xa.problems.clone(),
            ..DecodedBlock::default()
        };
        for item in &xa.items {
            out.cost += item.cost as u64;
            out.value_bytes += u64::from(item.value_size);
            if matches!(item.location, XattrLocation::EaInode(_)) {
                out.ea_value_bytes += u64::from(item.value_size);
            }
            out.entries.push(BlockEntry {
                name: item.name.clone(),
                value_size: item.value_size,
                location: item.location,
                cost: item.cost,
                summary: item
                    .value
                    .as_deref()
                    .and_then(|v| crate::reader::xattr::summarize_value(&item.name, v)),
            });
        }
        out
    }

    /// True when some value lives in an EA inode.
    pub fn uses_ea_inode(&self) -> bool {
        self.ea_value_bytes > 0
            || self
                .entries
                .iter()
                .any(|e| matches!(e.location, XattrLocation::EaInode(_)))
    }

    /// True when the block holds entries (the inode spills to it).
    pub fn spills(&self) -> bool {
        !self.entries.is_empty() || self.info.as_ref().is_some_and(|i| i.space.used > 0)
    }

    /// Bytes the footprint of an inode gains from this block (entries and EA-inode values).
    pub fn footprint(&self) -> u64 {
        self.cost + self.ea_value_bytes
    }

    fn approx_bytes(&self) -> usize {
        std::mem::size_of::<DecodedBlock>()
            + self
                .entries
                .iter()
                .map(|e| e.name.len() + std::mem::size_of::<BlockEntry>())
                .sum::<usize>()
            + self.problems.iter().map(|p| p.message.len()).sum::<usize>()
    }
}

/// Shards of the block cache (by block number), each with its own lock.
const CACHE_SHARDS: usize = 16;
/// Blocks kept per shard.
const CACHE_ENTRIES_PER_SHARD: usize = 256;
/// Approximate bytes kept per shard (one oversized block may exceed it alone).
const CACHE_BYTES_PER_SHARD: usize = 2 << 20;

#[derive(Default)]
struct Shard {
    map: HashMap<u64, Arc<DecodedBlock>>,
    bytes: usize,
}

/// Decoded external xattr blocks keyed by block number, shared by the rayon workers of a scan:
/// a block referenced by many inodes is read and parsed once. Bounded: `CACHE_SHARDS` shards
/// of at most `CACHE_ENTRIES_PER_SHARD` blocks and about `CACHE_BYTES_PER_SHARD` bytes; a
/// full shard is emptied (blocks are then decoded again when met again).
pub struct XattrBlockCache {
    shards: Vec<Mutex<Shard>>,
    decoded: AtomicU64,
    lookups: AtomicU64,
}

impl Default for XattrBlockCache {
    fn default() -> Self {
        XattrBlockCache {
            shards: (0..CACHE_SHARDS).map(|_| Mutex::default()).collect(),
            decoded: AtomicU64::new(0),
            lookups: AtomicU64::new(0),
        }
    }
}

impl XattrBlockCache {
    /// The decoded block `blk` (decoding it under the shard lock, so that concurrent workers
    /// meeting the same block decode it once).
    pub fn get(&self, fs: &Filesystem, blk: u64) -> Arc<DecodedBlock> {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let Some(shard) = self.shards.get((blk % CACHE_SHARDS as u64) as usize) else {
            return Arc::new(DecodedBlock::decode(fs, blk));
        };
        let mut sh = shard.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(cached) = sh.map.get(&blk) {
            return Arc::clone(cached);
        }
        let cached = Arc::new(DecodedBlock::decode(fs, blk));
        self.decoded.fetch_add(1, Ordering::Relaxed);
        let size = cached.approx_bytes();
        if sh.map.len() >= CACHE_ENTRIES_PER_SHARD || sh.bytes + size > CACHE_BYTES_PER_SHARD {
            sh.map.clear();
            sh.bytes = 0;
        }
        sh.bytes += size;
        sh.map.insert(blk, Arc::clone(&cached));
        cached
    }

    /// Blocks decoded so far (each distinct block once while it stays cached).
    pub fn decoded(&self) -> u64 {
        self.decoded.load(Ordering::Relaxed)
    }

    /// Lookups so far (one per inode with an xattr block).
    pub fn lookups(&self) -> u64 {
        self.lookups.load(Ordering::Relaxed)
    }
}

/// An inode's xattrs split in two: the in-inode part (and its problems), and its external block
/// from `cache` (shared with every other inode referencing it).
pub fn inode_xattrs_cached<'a>(
    fs: &'a Filesystem,
    raw: &'a [u8],
    inode: &Inode,
    cache: &XattrBlockCache,
) -> (inode::InodeXattrs<'a>, Option<Arc<DecodedBlock>>) {
    let mut body_only = inode.clone();
    body_only.file_acl = 0;
    let body = inode::inode_xattrs(fs, raw, &body_only);
    let block = (inode.file_acl != 0).then(|| cache.get(fs, inode.file_acl));
    (body, block)
}

#[cfg(test)]
mod tests {
    use super::SeenInodes;

    #[test]
    fn seen_inodes_answer_only_for_visited_inodes() {
        // Two workers over groups 0 and 2 of a filesystem with 100 inodes per group.
        let mut first = SeenInodes::default();
        first.add(100, 2, true);
        first.add(100, 11, false);
        let mut second = SeenInodes::default();
        second.add(100, 201, true);
        second.add(100, 270, false);
        let seen = first.merge(second);
        assert_eq!(seen.is_dir(2), Some(true));
        assert_eq!(seen.is_dir(11), Some(false));
        assert_eq!(seen.is_dir(201), Some(true));
        assert_eq!(seen.is_dir(270), Some(false));
        // Not visited: in a visited group, in a group not visited, past the bits kept, 0.
        assert_eq!(seen.is_dir(3), None);
        assert_eq!(seen.is_dir(150), None);
        assert_eq!(seen.is_dir(299), None);
        assert_eq!(seen.is_dir(0), None);
        assert_eq!(SeenInodes::default().is_dir(2), None);
    }
}
