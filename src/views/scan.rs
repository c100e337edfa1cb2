//! Parallel scan of every in-use inode, and the xattr statistics built on it.
//!
//! The scan walks groups in parallel (rayon): it skips INODE_UNINIT groups and the unused tail of
//! each inode table (`bg_itable_unused`) when the filesystem has group descriptor checksums, reads
//! each group's inode table in bounded chunks of positional reads (hinting the next chunk to the
//! kernel), and visits the
//! inodes whose bit is set in the group's inode bitmap. Memory does not grow with the image:
//! accumulators are per worker thread, and every table they keep is capped by a constant.

use crate::error::{Problem, ProblemKind};
use crate::reader::fs::Filesystem;
use crate::reader::group::BG_INODE_UNINIT;
use crate::reader::inode::{self, Inode, InodeBase, XattrLocation};
use crate::reader::ondisk;
use crate::reader::xattr;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Most problems kept verbatim (the rest are only counted).
pub const MAX_PROBLEMS: usize = 100;
/// Most distinct xattr names tracked.
pub const MAX_NAMES: usize = 4096;
/// Most distinct external xattr blocks tracked for sharing.
pub const MAX_BLOCKS: usize = 1 << 18;

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
    fn merge(mut self, o: ScanCounts) -> ScanCounts {
        self.groups = self.groups.max(o.groups);
        self.groups_uninit += o.groups_uninit;
        self.inodes_in_use += o.inodes_in_use;
        self.inodes_unused_tail += o.inodes_unused_tail;
        self.itable_bytes += o.itable_bytes;
        self.problem_count += o.problem_count;
        for p in o.problems {
            if self.problems.len() < MAX_PROBLEMS {
                self.problems.push(p);
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
    /// True when slot `i`'s bitmap bit is set.
    pub fn in_use(&self, i: usize) -> bool {
        self.bitmap
            .get(i / 8)
            .is_some_and(|b| b & (1 << (i % 8)) != 0)
    }
    /// Slots per chunk read.
    fn chunk_slots(&self) -> usize {
        (ITABLE_CHUNK_BYTES as usize / self.inode_size.max(1)).max(1)
    }
    /// The chunk holding slot `i` (its first slot is a multiple of the chunk length).
    pub fn chunk_of(&self, i: usize) -> usize {
        i - i % self.chunk_slots()
    }
    /// First slots of every chunk, in order.
    pub fn chunk_starts(&self) -> impl Iterator<Item = usize> {
        (0..self.slots).step_by(self.chunk_slots())
    }
    /// Read the records of the chunk starting at slot `first` (and hint the next one to the
    /// kernel, so a cold device reads ahead while this one is decoded).
    pub fn read_chunk(&self, fs: &Filesystem, first: usize) -> crate::Result<InodeChunk> {
        let n = self.chunk_slots().min(self.slots.saturating_sub(first));
        let isz = self.inode_size as u64;
        let off = self.table_off + first as u64 * isz;
        let len = n as u64 * isz;
        let next = first + n;
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
    /// Slot `i` of `chunk` when its bitmap bit is set: its inode number and on-disk record.
    pub fn get<'c>(&self, chunk: &'c InodeChunk, i: usize) -> Option<(u32, &'c [u8])> {
        if !self.in_use(i) {
            return None;
        }
        let at = i.checked_sub(chunk.first_slot)? * self.inode_size;
        let raw = chunk.table.get(at..at + self.inode_size)?;
        let ino = u32::try_from(self.first_ino + i as u64).ok()?;
        Some((ino, raw))
    }
    /// Every in-use slot of `chunk`, in order.
    pub fn iter<'c>(&'c self, chunk: &'c InodeChunk) -> impl Iterator<Item = (u32, &'c [u8])> + 'c {
        let slots = chunk.table.len() / self.inode_size.max(1);
        (chunk.first_slot..chunk.first_slot + slots).filter_map(move |i| self.get(chunk, i))
    }
}

/// Which inodes of group `g` the scan visits: none for an INODE_UNINIT group (with descriptor
/// checksums) or an empty table, else the table up to `bg_itable_unused` and the bitmap. What was
/// skipped or could not be read is recorded in `counts`.
pub fn group_inodes(fs: &Filesystem, g: u32, counts: &mut ScanCounts) -> Option<GroupInodes> {
    let ipg = fs.geo.inodes_per_group;
    let isz = u64::from(fs.geo.inode_size);
    let gd = match fs.desc(g) {
        Ok(d) => d,
        Err(e) => {
            counts.problem(Problem::new(ProblemKind::Group, format!("group {g}: {e}")));
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
                    "group {g}: itable_unused {} exceeds inodes per group {ipg}",
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
                format!("group {g}: inode bitmap: {e}"),
            ));
            return None;
        }
    };
    let Some(table_off) = gd.inode_table.checked_mul(fs.block_size()) else {
        counts.problem(Problem::new(
            ProblemKind::Group,
            format!("group {g}: inode table block {} overflows", gd.inode_table),
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
            "group {g}: inode table at block {} ({used} inodes) lies beyond the end of the image",
            gd.inode_table
        ),
        ));
        return None;
    }
    counts.itable_bytes += u64::from(used) * isz;
    Some(GroupInodes {
        group: g,
        first_ino: u64::from(g) * u64::from(ipg) + 1,
        table_off,
        slots: used as usize,
        bitmap,
        inode_size: isz as usize,
    })
}

fn scan_group<T, V>(fs: &Filesystem, g: u32, acc: &mut T, counts: &mut ScanCounts, visit: &V)
where
    V: Fn(&mut T, &mut ScanCounts, u32, &[u8]),
{
    let Some(group) = group_inodes(fs, g, counts) else {
        return;
    };
    for first in group.chunk_starts() {
        let chunk = match group.read_chunk(fs, first) {
            Ok(c) => c,
            Err(e) => {
                counts.problem(Problem::new(ProblemKind::Group, e.to_string()));
                return;
            }
        };
        prefetch_xattr_blocks(fs, &group, &chunk);
        for (ino, raw) in group.iter(&chunk) {
            counts.inodes_in_use += 1;
            visit(acc, counts, ino, raw);
        }
    }
}

/// Ask the kernel now for the external xattr blocks the inodes of `chunk` point to: on a cold
/// device they are scattered single-block reads, and hinted together they are fetched in
/// parallel instead of one at a time as the visitor reaches them.
fn prefetch_xattr_blocks(fs: &Filesystem, group: &GroupInodes, chunk: &InodeChunk) {
    let mut blocks: Vec<u64> = group
        .iter(chunk)
        .filter_map(|(_, raw)| InodeBase::decode_fast(raw))
        .map(|base| base.file_acl())
        .filter(|&b| b != 0 && b < fs.geo.blocks_count)
        .collect();
    if blocks.is_empty() {
        return;
    }
    blocks.sort_unstable();
    blocks.dedup();
    fs.prefetch(blocks);
}

/// Visit every in-use inode with `visit(acc, counts, ino, raw_record)`, one accumulator per worker
/// (from `init`), combined with `merge`. `progress` is called with the number of inode slots each
/// finished group covered.
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
    let groups = fs.group_count();
    let ipg = u64::from(fs.geo.inodes_per_group);
    let (acc, mut counts) = (0..groups)
        .into_par_iter()
        .fold(
            || (init(), ScanCounts::default()),
            |(mut acc, mut counts), g| {
                scan_group(fs, g, &mut acc, &mut counts, &visit);
                progress(ipg);
                (acc, counts)
            },
        )
        .reduce(
            || (init(), ScanCounts::default()),
            |(a, ca), (b, cb)| (merge(a, b), ca.merge(cb)),
        );
    counts.groups = groups;
    (acc, counts)
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
        let xa = inode::inode_xattrs(fs, &raw, &carrier);
        let mut out = DecodedBlock {
            info: xa.block.clone(),
            problems: xa.problems.clone(),
            ..DecodedBlock::default()
        };
        for x in &xa.items {
            out.cost += x.cost as u64;
            out.value_bytes += u64::from(x.value_size);
            if matches!(x.location, XattrLocation::EaInode(_)) {
                out.ea_value_bytes += u64::from(x.value_size);
            }
            out.entries.push(BlockEntry {
                name: x.name.clone(),
                value_size: x.value_size,
                location: x.location,
                cost: x.cost,
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
        if let Some(d) = sh.map.get(&blk) {
            return Arc::clone(d);
        }
        let d = Arc::new(DecodedBlock::decode(fs, blk));
        self.decoded.fetch_add(1, Ordering::Relaxed);
        let size = d.approx_bytes();
        if sh.map.len() >= CACHE_ENTRIES_PER_SHARD || sh.bytes + size > CACHE_BYTES_PER_SHARD {
            sh.map.clear();
            sh.bytes = 0;
        }
        sh.bytes += size;
        sh.map.insert(blk, Arc::clone(&d));
        d
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

/// Most directories [`inode_paths`] reads.
pub const MAX_PATH_WALK_DIRS: usize = 1 << 20;

/// Paths of the inodes in `wanted` (the first name found, breadth first from the root, so the
/// shortest), by one walk of the directory tree that stops once all are named. Bounded and
/// cycle-safe: each directory inode is read once, at most [`MAX_PATH_WALK_DIRS`] of them, and the
/// map holds only the wanted inodes. Unnamed inodes (unlinked, or beyond the bound) are absent.
#[allow(clippy::needless_borrow)] // `&raw`: ready for owned buffers from `Filesystem`
pub fn inode_paths(
    fs: &Filesystem,
    wanted: &std::collections::HashSet<u32>,
) -> HashMap<u32, String> {
    use std::collections::{HashSet, VecDeque};
    let mut found = HashMap::new();
    if wanted.is_empty() {
        return found;
    }
    if wanted.contains(&crate::reader::dir::ROOT_INO) {
        found.insert(crate::reader::dir::ROOT_INO, "/".to_string());
    }
    // Queue of (directory inode, its path); a directory's path is only kept while queued.
    let mut queue: VecDeque<(u32, Vec<u8>)> =
        VecDeque::from([(crate::reader::dir::ROOT_INO, Vec::new())]);
    let mut seen: HashSet<u32> = HashSet::from([crate::reader::dir::ROOT_INO]);
    let mut read = 0usize;
    while let Some((dino, dpath)) = queue.pop_front() {
        if found.len() == wanted.len() || read >= MAX_PATH_WALK_DIRS {
            break;
        }
        read += 1;
        let Ok(raw) = fs.inode_raw(dino) else {
            continue;
        };
        let inode = Inode::parse(&raw);
        if !inode.is_dir() || inode.has_flag(crate::reader::dir::ENCRYPT_FL) {
            continue;
        }
        let Ok(entries) = crate::views::extract::list_dir(fs, dino, &raw, &inode) else {
            continue;
        };
        for (name, ino) in entries {
            let mut p = dpath.clone();
            p.push(b'/');
            p.extend_from_slice(&name);
            if wanted.contains(&ino) && !found.contains_key(&ino) {
                found.insert(ino, String::from_utf8_lossy(&p).into_owned());
            }
            let is_dir = fs
                .inode_raw(ino)
                .map(|r| Inode::parse(&r).is_dir())
                .unwrap_or(false);
            if is_dir && seen.insert(ino) {
                queue.push_back((ino, p));
            }
        }
    }
    found
}

/// One inode named in a listing: its footprint and why it is listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Listed {
    /// Inode number.
    pub ino: u32,
    /// Entries, names and values in all locations.
    pub footprint: u64,
    /// Entries in the external block.
    pub block: bool,
    /// A value in an EA inode.
    pub ea_inode: bool,
}

/// Keep the `n` largest of `v` (by footprint, then inode number), sorted largest first.
pub fn keep_largest(v: &mut Vec<Listed>, n: usize) {
    v.sort_by(|a, b| b.footprint.cmp(&a.footprint).then(a.ino.cmp(&b.ino)));
    v.truncate(n);
}

/// Count and value bytes of one xattr name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NameStat {
    /// Count.
    pub count: u64,
    /// Sum of value sizes.
    pub bytes: u64,
}

/// How an external xattr block was used.
#[derive(Clone, Debug, Default)]
struct BlockUse {
    seen: u32,
    refcount: u32,
    /// The block's entries, counted `seen` times when the statistics are finished (so that a
    /// block shared by many inodes costs its entries once, not once per inode).
    contrib: Option<Arc<DecodedBlock>>,
}

/// Upper bounds (inclusive) of the footprint histogram buckets; the last bucket is "larger".
pub const FOOTPRINT_BUCKETS: [u64; 12] = [
    32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
];

/// Xattr statistics of a whole filesystem.
#[derive(Clone, Debug, Default)]
pub struct XattrStats {
    /// Inodes with at least one xattr.
    pub inodes_with_xattrs: u64,
    /// ... whose xattrs all live in the inode body.
    pub all_in_inode: u64,
    /// ... with entries in the external block.
    pub spill_to_block: u64,
    /// ... with a value in an EA inode.
    pub use_ea_inode: u64,
    /// Bytes (entries, names, padded values) used in inode bodies.
    pub bytes_in_inode: u64,
    /// Bytes used in external blocks, counted for each inode that references the block.
    pub bytes_in_blocks: u64,
    /// Value bytes held in EA inodes.
    pub bytes_in_ea_inodes: u64,
    /// Number of xattrs.
    pub xattr_count: u64,
    /// Sum of all value sizes.
    pub value_bytes: u64,
    /// Inodes that are EA value inodes (EA_INODE_FL).
    pub ea_value_inodes: u64,
    /// In-inode bytes still free, summed over inodes with an in-inode area.
    pub inode_bytes_free: u64,
    /// Per-inode footprint (body + block + EA value bytes) histogram, see [`FOOTPRINT_BUCKETS`].
    pub footprint_hist: [u64; FOOTPRINT_BUCKETS.len() + 1],
    /// Largest per-inode footprint.
    pub footprint_max: u64,
    /// Inodes whose xattrs could not (all) be read.
    pub inodes_with_problems: u64,
    names: HashMap<Box<[u8]>, NameStat>,
    /// Xattrs whose name was not tracked because [`MAX_NAMES`] distinct names were already seen.
    pub names_untracked: u64,
    blocks: HashMap<u64, BlockUse>,
    /// References to blocks not tracked because [`MAX_BLOCKS`] were already tracked.
    pub blocks_untracked: u64,
    /// External blocks read and parsed by the scan (each distinct block once while cached).
    pub blocks_decoded: u64,
    /// How many of the inodes that spill to a block or use an EA inode to keep in `largest`.
    pub list_max: usize,
    /// The largest of those inodes (footprint first), at most `list_max`.
    pub largest: Vec<Listed>,
}

/// Where one inode's xattrs live, as the scan saw them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InodePlacement {
    /// Entries in the external block.
    pub block: bool,
    /// A value in an EA inode.
    pub ea_inode: bool,
    /// Entries, names and values in all locations.
    pub footprint: u64,
}

/// One external block referenced by several inodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SharedBlock {
    /// Block.
    pub block: u64,
    /// Inodes seen referencing it.
    pub inodes: u32,
    /// Its h_refcount.
    pub refcount: u32,
}

impl XattrStats {
    fn add_name(&mut self, key: &[u8], value_size: u32) {
        if let Some(s) = self.names.get_mut(key) {
            s.count += 1;
            s.bytes += u64::from(value_size);
        } else if self.names.len() < MAX_NAMES {
            self.names.insert(
                key.into(),
                NameStat {
                    count: 1,
                    bytes: u64::from(value_size),
                },
            );
        } else {
            self.names_untracked += 1;
        }
    }

    fn add_block(&mut self, blk: u64, refcount: u32) {
        if let Some(b) = self.blocks.get_mut(&blk) {
            if let Some(c) = b.contrib.take() {
                // Keep the invariant: references in `seen` are all counted once this is None.
                let n = u64::from(b.seen);
                b.seen = b.seen.saturating_add(1);
                self.count_block_entries(&c, n);
                return;
            }
            b.seen = b.seen.saturating_add(1);
        } else if self.blocks.len() < MAX_BLOCKS {
            self.blocks.insert(
                blk,
                BlockUse {
                    seen: 1,
                    refcount,
                    contrib: None,
                },
            );
        } else {
            self.blocks_untracked += 1;
        }
    }

    fn add_name_n(&mut self, key: &[u8], n: u64, bytes: u64) {
        if let Some(s) = self.names.get_mut(key) {
            s.count += n;
            s.bytes += bytes;
        } else if self.names.len() < MAX_NAMES {
            self.names.insert(key.into(), NameStat { count: n, bytes });
        } else {
            self.names_untracked += n;
        }
    }

    /// Count the entries of `b` for `n` referencing inodes.
    fn count_block_entries(&mut self, b: &DecodedBlock, n: u64) {
        for e in &b.entries {
            self.xattr_count += n;
            self.value_bytes += n * u64::from(e.value_size);
            match e.location {
                XattrLocation::EaInode(_) => self.bytes_in_ea_inodes += n * u64::from(e.value_size),
                _ => self.bytes_in_blocks += n * e.cost as u64,
            }
            let k = e.name.as_bytes();
            self.add_name_n(&k[..k.len().min(257)], n, n * u64::from(e.value_size));
        }
    }

    /// Account one inode's xattrs given as its in-inode part and its (cached) block, as
    /// [`XattrStats::add_inode`] accounts them; the block's entries are counted at
    /// [`XattrStats::finish`] once per distinct block. Returns the inode's footprint and whether it
    /// spills to the block / uses an EA inode.
    pub fn add_inode_split(
        &mut self,
        body: &inode::InodeXattrs<'_>,
        block: Option<&Arc<DecodedBlock>>,
    ) -> InodePlacement {
        if !body.problems.is_empty() || block.is_some_and(|b| !b.problems.is_empty()) {
            self.inodes_with_problems += 1;
        }
        if body.ibody_present {
            self.inode_bytes_free += body.inode_space.free as u64;
        }
        let block_entries = block.map_or(0, |b| b.entries.len());
        if body.items.is_empty() && block_entries == 0 {
            return InodePlacement::default();
        }
        self.inodes_with_xattrs += 1;
        let mut place = InodePlacement::default();
        let mut key = [0u8; 257];
        for x in &body.items {
            self.xattr_count += 1;
            self.value_bytes += u64::from(x.value_size);
            match x.location {
                XattrLocation::EaInode(_) => {
                    place.ea_inode = true;
                    self.bytes_in_ea_inodes += u64::from(x.value_size);
                    place.footprint += u64::from(x.value_size);
                }
                _ => self.bytes_in_inode += x.cost as u64,
            }
            place.footprint += x.cost as u64;
            let n = x.name.len().min(key.len());
            key[..n].copy_from_slice(&x.name.as_bytes()[..n]);
            self.add_name(&key[..n], x.value_size);
        }
        if let Some(b) = block {
            place.block = b.spills();
            place.ea_inode |= b.uses_ea_inode();
            place.footprint += b.footprint();
            if let Some(info) = &b.info {
                self.add_block_shared(info.block, info.refcount, b);
            } else {
                self.count_block_entries(b, 1);
            }
        }
        self.classify(&place);
        place
    }

    fn add_block_shared(&mut self, blk: u64, refcount: u32, b: &Arc<DecodedBlock>) {
        if let Some(u) = self.blocks.get_mut(&blk) {
            u.seen = u.seen.saturating_add(1);
            if u.contrib.is_none() {
                // Seen before through add_inode (entries already counted there): count this one.
                self.count_block_entries(b, 1);
            }
        } else if self.blocks.len() < MAX_BLOCKS {
            self.blocks.insert(
                blk,
                BlockUse {
                    seen: 1,
                    refcount,
                    contrib: Some(Arc::clone(b)),
                },
            );
        } else {
            self.blocks_untracked += 1;
            self.count_block_entries(b, 1);
        }
    }

    fn classify(&mut self, place: &InodePlacement) {
        if place.block {
            self.spill_to_block += 1;
        }
        if place.ea_inode {
            self.use_ea_inode += 1;
        }
        if !place.block && !place.ea_inode {
            self.all_in_inode += 1;
        }
        let bucket = FOOTPRINT_BUCKETS
            .iter()
            .position(|&b| place.footprint <= b)
            .unwrap_or(FOOTPRINT_BUCKETS.len());
        if let Some(h) = self.footprint_hist.get_mut(bucket) {
            *h += 1;
        }
        self.footprint_max = self.footprint_max.max(place.footprint);
    }

    /// Count the entries of shared blocks once per referencing inode (after all inodes were
    /// added and partial results merged). Idempotent.
    pub fn finish(&mut self) {
        let pending: Vec<(Arc<DecodedBlock>, u64)> = self
            .blocks
            .values_mut()
            .filter_map(|u| u.contrib.take().map(|c| (c, u64::from(u.seen))))
            .collect();
        for (b, n) in pending {
            self.count_block_entries(&b, n);
        }
    }

    /// Account one inode's xattrs.
    pub fn add_inode(&mut self, xa: &inode::InodeXattrs<'_>) {
        if !xa.problems.is_empty() {
            self.inodes_with_problems += 1;
        }
        if xa.ibody_present {
            self.inode_bytes_free += xa.inode_space.free as u64;
        }
        if xa.items.is_empty() {
            return;
        }
        self.inodes_with_xattrs += 1;
        let (mut in_block, mut in_ea) = (false, false);
        let mut footprint = 0u64;
        let mut key = [0u8; 257];
        for x in &xa.items {
            self.xattr_count += 1;
            self.value_bytes += u64::from(x.value_size);
            match x.location {
                XattrLocation::Inode => self.bytes_in_inode += x.cost as u64,
                XattrLocation::Block(_) => {
                    in_block = true;
                    self.bytes_in_blocks += x.cost as u64;
                }
                XattrLocation::EaInode(_) => {
                    in_ea = true;
                    self.bytes_in_ea_inodes += u64::from(x.value_size);
                    footprint += u64::from(x.value_size);
                }
            }
            footprint += x.cost as u64;
            let n = x.name.len().min(key.len());
            key[..n].copy_from_slice(&x.name.as_bytes()[..n]);
            self.add_name(&key[..n], x.value_size);
        }
        // Entries in the block count as a spill even when their values live in EA inodes.
        if let Some(b) = &xa.block {
            in_block |= b.space.used > 0;
            self.add_block(b.block, b.refcount);
        }
        if in_block {
            self.spill_to_block += 1;
        }
        if in_ea {
            self.use_ea_inode += 1;
        }
        if !in_block && !in_ea {
            self.all_in_inode += 1;
        }
        let bucket = FOOTPRINT_BUCKETS
            .iter()
            .position(|&b| footprint <= b)
            .unwrap_or(FOOTPRINT_BUCKETS.len());
        if let Some(h) = self.footprint_hist.get_mut(bucket) {
            *h += 1;
        }
        self.footprint_max = self.footprint_max.max(footprint);
    }

    /// Combine two partial results.
    pub fn merge(mut self, o: XattrStats) -> XattrStats {
        self.inodes_with_xattrs += o.inodes_with_xattrs;
        self.all_in_inode += o.all_in_inode;
        self.spill_to_block += o.spill_to_block;
        self.use_ea_inode += o.use_ea_inode;
        self.bytes_in_inode += o.bytes_in_inode;
        self.bytes_in_blocks += o.bytes_in_blocks;
        self.bytes_in_ea_inodes += o.bytes_in_ea_inodes;
        self.xattr_count += o.xattr_count;
        self.value_bytes += o.value_bytes;
        self.ea_value_inodes += o.ea_value_inodes;
        self.inode_bytes_free += o.inode_bytes_free;
        for (a, b) in self.footprint_hist.iter_mut().zip(o.footprint_hist) {
            *a += b;
        }
        self.footprint_max = self.footprint_max.max(o.footprint_max);
        self.inodes_with_problems += o.inodes_with_problems;
        self.names_untracked += o.names_untracked;
        for (k, v) in o.names {
            if let Some(s) = self.names.get_mut(&k) {
                s.count += v.count;
                s.bytes += v.bytes;
            } else if self.names.len() < MAX_NAMES {
                self.names.insert(k, v);
            } else {
                self.names_untracked += v.count;
            }
        }
        self.blocks_untracked += o.blocks_untracked;
        self.blocks_decoded = self.blocks_decoded.max(o.blocks_decoded);
        self.list_max = self.list_max.max(o.list_max);
        self.largest.extend(o.largest);
        keep_largest(&mut self.largest, self.list_max);
        for (k, v) in o.blocks {
            let Some(s) = self.blocks.get_mut(&k) else {
                if self.blocks.len() < MAX_BLOCKS {
                    self.blocks.insert(k, v);
                } else {
                    self.blocks_untracked += u64::from(v.seen);
                    if let Some(c) = &v.contrib {
                        self.count_block_entries(c, u64::from(v.seen));
                    }
                }
                continue;
            };
            // Invariant: with `contrib` every reference in `seen` is still to be counted,
            // without it every one was. When the two sides differ, count the pending side now.
            let flush = match (&s.contrib, &v.contrib) {
                (Some(c), None) => Some((Arc::clone(c), s.seen)),
                (None, Some(c)) => Some((Arc::clone(c), v.seen)),
                _ => None,
            };
            s.seen = s.seen.saturating_add(v.seen);
            if let Some((c, n)) = flush {
                s.contrib = None;
                self.count_block_entries(&c, u64::from(n));
            }
        }
        self
    }

    /// Names by descending count (then bytes, then name), at most `n`.
    pub fn top_names(&self, n: usize) -> Vec<(String, NameStat)> {
        let mut v: Vec<(String, NameStat)> = self
            .names
            .iter()
            .map(|(k, s)| (String::from_utf8_lossy(k).into_owned(), *s))
            .collect();
        v.sort_by(|a, b| {
            b.1.count
                .cmp(&a.1.count)
                .then(b.1.bytes.cmp(&a.1.bytes))
                .then(a.0.cmp(&b.0))
        });
        v.truncate(n);
        v
    }

    /// Number of distinct names tracked.
    pub fn distinct_names(&self) -> usize {
        self.names.len()
    }

    /// Distinct external blocks seen.
    pub fn distinct_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// External blocks referenced by more than one inode, or whose refcount disagrees with the
    /// references seen (only meaningful when no reference went untracked), most shared first.
    pub fn shared_blocks(&self) -> Vec<SharedBlock> {
        let mut v: Vec<SharedBlock> = self
            .blocks
            .iter()
            .filter(|(_, u)| u.seen > 1 || u.refcount > 1)
            .map(|(&block, u)| SharedBlock {
                block,
                inodes: u.seen,
                refcount: u.refcount,
            })
            .collect();
        v.sort_by(|a, b| b.inodes.cmp(&a.inodes).then(a.block.cmp(&b.block)));
        v
    }
}

/// Quick test whether a raw inode may carry xattrs (in-inode magic or an xattr block).
fn may_have_xattrs(base: &InodeBase, raw: &[u8]) -> bool {
    if base.file_acl() != 0 {
        return true;
    }
    if raw.len() <= ondisk::inode::BASE_SIZE {
        return false;
    }
    let extra = usize::from(ondisk::inode::large_in_record(raw).extra_isize);
    ondisk::decode_at::<ondisk::xattr::IbodyHeader>(raw, ondisk::inode::BASE_SIZE + extra)
        .is_ok_and(|h| h.magic == xattr::MAGIC)
}

/// Scan every in-use inode and gather xattr statistics.
pub fn xattr_stats(fs: &Filesystem, progress: &(dyn Fn(u64) + Sync)) -> (XattrStats, ScanCounts) {
    xattr_stats_listing(fs, 0, progress)
}

/// [`xattr_stats`], also keeping the `list` largest inodes that spill to a block or use an EA
/// inode ([`XattrStats::largest`]).
pub fn xattr_stats_listing(
    fs: &Filesystem,
    list: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> (XattrStats, ScanCounts) {
    let cache = XattrBlockCache::default();
    let init = || XattrStats {
        list_max: list,
        ..XattrStats::default()
    };
    let (mut st, counts) = scan_in_use(
        fs,
        init,
        |st: &mut XattrStats, counts: &mut ScanCounts, ino, raw| {
            let Some(base) = InodeBase::decode_fast(raw) else {
                counts.problem(Problem::new(
                    ProblemKind::Inode,
                    format!("inode {ino}: record shorter than an inode"),
                ));
                return;
            };
            if base.flags & inode::EA_INODE_FL != 0 {
                st.ea_value_inodes += 1;
            }
            if !may_have_xattrs(&base, raw) {
                return;
            }
            let ind = Inode::parse(raw);
            let (body, block) = inode_xattrs_cached(fs, raw, &ind, &cache);
            for p in body
                .problems
                .iter()
                .chain(block.iter().flat_map(|b| b.problems.iter()))
            {
                counts.problem(p.clone().within(format!("inode {ino}")));
            }
            let place = st.add_inode_split(&body, block.as_ref());
            if st.list_max > 0 && (place.block || place.ea_inode) {
                st.largest.push(Listed {
                    ino,
                    footprint: place.footprint,
                    block: place.block,
                    ea_inode: place.ea_inode,
                });
                if st.largest.len() >= 2 * st.list_max {
                    let n = st.list_max;
                    keep_largest(&mut st.largest, n);
                }
            }
        },
        XattrStats::merge,
        progress,
    );
    st.finish();
    keep_largest(&mut st.largest, list);
    st.blocks_decoded = cache.decoded();
    (st, counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::inode::{InodeXattrs, XattrBlockInfo, XattrItem};

    fn one(name: String, loc: XattrLocation, size: u32) -> InodeXattrs<'static> {
        InodeXattrs {
            items: vec![XattrItem {
                name,
                value_size: size,
                location: loc,
                cost: if matches!(loc, XattrLocation::EaInode(_)) {
                    20
                } else {
                    20 + size as usize
                },
                value: None,
            }],
            ..InodeXattrs::default()
        }
    }

    #[test]
    fn placement_counts_and_histogram() {
        let mut st = XattrStats::default();
        st.add_inode(&one("user.a".into(), XattrLocation::Inode, 4));
        let mut b = one("user.big".into(), XattrLocation::Block(9), 300);
        b.block = Some(XattrBlockInfo {
            block: 9,
            refcount: 2,
            hash: 0,
            space: xattr::Space {
                capacity: 4060,
                used: 320,
                free: 3740,
            },
            checksum: None,
            sorted: true,
        });
        st.add_inode(&b);
        st.add_inode(&b);
        st.add_inode(&one("trusted.v".into(), XattrLocation::EaInode(77), 5000));
        st.add_inode(&InodeXattrs::default());
        assert_eq!(st.inodes_with_xattrs, 4);
        assert_eq!(st.all_in_inode, 1);
        assert_eq!(st.spill_to_block, 2);
        assert_eq!(st.use_ea_inode, 1);
        assert_eq!(st.bytes_in_inode, 24);
        assert_eq!(st.bytes_in_blocks, 640);
        assert_eq!(st.bytes_in_ea_inodes, 5000);
        assert_eq!(st.footprint_hist[0], 1); // 24 bytes
        assert_eq!(st.footprint_hist[4], 2); // 320 bytes
        assert_eq!(st.footprint_hist[8], 1); // 20 + 5000 bytes
        let sh = st.shared_blocks();
        assert_eq!(
            sh,
            vec![SharedBlock {
                block: 9,
                inodes: 2,
                refcount: 2
            }]
        );
        assert_eq!(st.top_names(1)[0].0, "user.big");
    }

    #[test]
    fn name_table_is_capped() {
        let mut a = XattrStats::default();
        let mut b = XattrStats::default();
        for i in 0..MAX_NAMES + 100 {
            a.add_inode(&one(format!("user.n{i}"), XattrLocation::Inode, 1));
            b.add_inode(&one(format!("user.m{i}"), XattrLocation::Inode, 1));
        }
        assert_eq!(a.distinct_names(), MAX_NAMES);
        assert_eq!(a.names_untracked, 100);
        let m = a.merge(b);
        assert_eq!(m.distinct_names(), MAX_NAMES);
        assert_eq!(m.names_untracked, 100 + 100 + MAX_NAMES as u64);
        assert_eq!(m.xattr_count, 2 * (MAX_NAMES as u64 + 100));
    }
}
