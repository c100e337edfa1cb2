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
use crate::reader::inode::{self, Inode, InodeBase, XattrLocation};
pub use crate::reader::itable::{
    group_inodes, inode_xattrs_cached, scan_in_use, BlockEntry, DecodedBlock, GroupInodes,
    InodeChunk, ScanCounts, SeenInodes, XattrBlockCache, ITABLE_CHUNK_BYTES, MAX_PROBLEMS,
};
use crate::reader::ondisk;
use crate::reader::samba;
use crate::reader::xattr::{self, summarize_value, ValueSummary};
use serde::Serialize;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// Most distinct xattr names tracked.
pub const MAX_NAMES: usize = 4096;
/// Most distinct external xattr blocks tracked for sharing.
pub const MAX_BLOCKS: usize = 1 << 18;

/// Most directories [`inode_paths`] reads.
pub const MAX_PATH_WALK_DIRS: usize = 1 << 20;

/// Paths of the inodes in `wanted` (the first name found, breadth first from the root, so the
/// shortest), by one walk of the directory tree that stops once all are named. Bounded and
/// cycle-safe: each directory inode is read once, at most [`MAX_PATH_WALK_DIRS`] of them, and the
/// map holds only the wanted inodes. Unnamed inodes (unlinked, or beyond the bound) are absent.
pub fn inode_paths(fs: &Filesystem, wanted: &HashSet<u32>) -> HashMap<u32, String> {
    inode_paths_seen(fs, wanted, &SeenInodes::default())
}

/// [`inode_paths`], told by `seen` which inodes a scan already visited and which of those are
/// directories: an entry naming one of them is not read again to learn whether it is a
/// directory (the other entries are). The same paths as [`inode_paths`]: `seen` holds what
/// the inode records said when the scan read them.
///
/// Breadth first, in batches of queued directories read in parallel (`dir_finds`); each
/// batch's findings are then taken in queue order, so the names and the queue are those of a
/// serial walk, directory after directory.
pub fn inode_paths_seen(
    fs: &Filesystem,
    wanted: &HashSet<u32>,
    seen_inodes: &SeenInodes,
) -> HashMap<u32, String> {
    use rayon::prelude::*;
    let mut walk = PathWalk {
        found: HashMap::new(),
        queue: VecDeque::from([(crate::reader::dir::ROOT_INO, Vec::new())]),
        queued: HashSet::from([crate::reader::dir::ROOT_INO]),
    };
    if wanted.is_empty() {
        return walk.found;
    }
    if wanted.contains(&crate::reader::dir::ROOT_INO) {
        walk.found
            .insert(crate::reader::dir::ROOT_INO, "/".to_string());
    }
    // A few directories per thread at once: enough to keep the threads busy, few enough that
    // little is read past the last wanted name, and that few directories' findings are held.
    let batch_max = (rayon::current_num_threads() * 8).clamp(8, 256);
    let mut sorted: Vec<u32> = wanted.iter().copied().collect();
    sorted.sort_unstable();
    let mut read = 0usize;
    while walk.found.len() < wanted.len() && read < MAX_PATH_WALK_DIRS && !walk.queue.is_empty() {
        let batch_len = walk
            .queue
            .len()
            .min(batch_max)
            .min(MAX_PATH_WALK_DIRS - read);
        read += batch_len;
        let batch: Vec<(u32, Vec<u8>)> = walk.queue.drain(..batch_len).collect();
        let finds: Vec<Option<DirFinds>> = batch
            .par_iter()
            .map(|(dino, _)| dir_finds(fs, *dino, &sorted, &walk, seen_inodes))
            .collect();
        for ((_, dpath), found_in_dir) in batch.iter().zip(finds) {
            if walk.found.len() == wanted.len() {
                break;
            }
            if let Some(found_in_dir) = found_in_dir {
                walk.take(dpath, found_in_dir);
            }
        }
    }
    walk.found
}

/// The state of [`inode_paths_seen`]'s walk between batches.
struct PathWalk {
    /// The wanted inodes named so far.
    found: HashMap<u32, String>,
    /// Directories still to read, with their paths (a path is only kept while queued).
    queue: VecDeque<(u32, Vec<u8>)>,
    /// Directories ever queued (each is read once: cycle-safe).
    queued: HashSet<u32>,
}

/// What one directory contributes to the walk, in entry order: the first entry naming each
/// wanted inode not yet found, and the first entry naming each directory not yet queued. A
/// directory holding millions of entries for the same inode keeps one of them.
#[derive(Default)]
struct DirFinds {
    named: Vec<(u32, Box<[u8]>)>,
    subdirs: Vec<(u32, Box<[u8]>)>,
    /// The inodes in `named`, and in `subdirs`.
    named_set: HashSet<u32>,
    subdir_set: HashSet<u32>,
}

impl DirFinds {
    /// Take entry `name` -> `ino` when it is the first to name a wanted inode (`wanted`,
    /// sorted) the walk has not named, or the first to name a directory not yet queued: a
    /// directory by `known_dir` (what the scan saw), else by `read_is_dir` (asked only for an
    /// inode not already queued). Most entries are files the scan saw: no lookup is made for
    /// them but the wanted one.
    fn consider(
        &mut self,
        name: &[u8],
        ino: u32,
        (wanted, walk): (&[u32], &PathWalk),
        known_dir: Option<bool>,
        read_is_dir: impl FnOnce(u32) -> bool,
    ) {
        if wanted.binary_search(&ino).is_ok()
            && !walk.found.contains_key(&ino)
            && self.named_set.insert(ino)
        {
            self.named.push((ino, name.into()));
        }
        if known_dir == Some(false) || walk.queued.contains(&ino) || self.subdir_set.contains(&ino)
        {
            return;
        }
        if known_dir.unwrap_or_else(|| read_is_dir(ino)) {
            self.subdir_set.insert(ino);
            self.subdirs.push((ino, name.into()));
        }
    }
}

impl PathWalk {
    /// Take one directory's findings (directories in queue order, as a serial walk would).
    fn take(&mut self, dpath: &[u8], findings: DirFinds) {
        let join = |name: &[u8]| {
            let mut path = Vec::with_capacity(dpath.len() + 1 + name.len());
            path.extend_from_slice(dpath);
            path.push(b'/');
            path.extend_from_slice(name);
            path
        };
        for (ino, name) in findings.named {
            self.found
                .entry(ino)
                .or_insert_with(|| String::from_utf8_lossy(&join(&name)).into_owned());
        }
        for (ino, name) in findings.subdirs {
            if self.queued.insert(ino) {
                self.queue.push_back((ino, join(&name)));
            }
        }
    }
}

/// Read directory `dino` for [`inode_paths_seen`]; `None` when it is not a readable directory
/// (not one, encrypted, or a block that cannot be read: then none of its entries count, as
/// when the whole listing is refused).
fn dir_finds(
    fs: &Filesystem,
    dino: u32,
    wanted: &[u32],
    walk: &PathWalk,
    seen_inodes: &SeenInodes,
) -> Option<DirFinds> {
    let raw = fs.inode_raw(dino).ok()?;
    let inode = Inode::parse(&raw);
    if !inode.is_dir() || inode.has_flag(crate::reader::dir::ENCRYPT_FL) {
        return None;
    }
    let mut findings = DirFinds::default();
    crate::views::extract::each_dir_entry(fs, dino, &raw, &inode, &mut |name, ino| {
        findings.consider(name, ino, (wanted, walk), seen_inodes.is_dir(ino), |ino| {
            fs.inode_raw(ino)
                .map(|r| Inode::parse(&r).is_dir())
                .unwrap_or(false)
        });
    })
    .ok()?;
    Some(findings)
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
pub fn keep_largest(listed: &mut Vec<Listed>, keep: usize) {
    listed.sort_by(|a, b| b.footprint.cmp(&a.footprint).then(a.ino.cmp(&b.ino)));
    listed.truncate(keep);
}

/// Count and value bytes of one xattr name, and where its instances live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NameStat {
    /// Count.
    pub count: u64,
    /// Sum of value sizes.
    pub bytes: u64,
    /// Instances whose entry and value are in the inode body.
    pub in_inode: u64,
    /// Instances whose entry and value are in an external xattr block.
    pub in_block: u64,
    /// Instances whose value lives in an EA inode (the entry in the inode or the block).
    pub in_ea_inode: u64,
}

impl NameStat {
    /// `n` instances at `loc` with `bytes` of values.
    fn at(loc: XattrLocation, count: u64, bytes: u64) -> NameStat {
        let mut stat = NameStat {
            count,
            bytes,
            ..NameStat::default()
        };
        match loc {
            XattrLocation::Inode => stat.in_inode = count,
            XattrLocation::Block(_) => stat.in_block = count,
            XattrLocation::EaInode(_) => stat.in_ea_inode = count,
        }
        stat
    }
    fn absorb(&mut self, other: &NameStat) {
        self.count += other.count;
        self.bytes += other.bytes;
        self.in_inode += other.in_inode;
        self.in_block += other.in_block;
        self.in_ea_inode += other.in_ea_inode;
    }
}

/// Per-decoder summaries of the values a scan met (cheap ones: a few fields of each value).
#[derive(Clone, Debug, Default)]
pub struct DecoderSummary {
    /// `user.DOSATTRIB` values decoded.
    pub dos_files: u64,
    /// `user.DOSATTRIB` values that do not decode.
    pub dos_undecodable: u64,
    /// Decoded values with each `FILE_ATTRIBUTE_*` bit of [`samba::FILE_ATTRIBUTES`] set (the last
    /// slot: values with bits outside the table).
    pub dos_by_attribute: [u64; samba::FILE_ATTRIBUTES.len() + 1],
    /// `trusted.lov` layouts decoded.
    pub lov_files: u64,
    /// `trusted.lov` values that do not decode.
    pub lov_undecodable: u64,
    /// Layouts by stripe count (at most 65,536 keys: the count is 16 bits).
    stripe_counts: HashMap<u16, u64>,
}

impl DecoderSummary {
    fn add(&mut self, summary: ValueSummary, count: u64) {
        match summary {
            ValueSummary::Dos(attrib) => {
                self.dos_files += count;
                let mut known = 0;
                for (slot, (bit, _)) in self.dos_by_attribute.iter_mut().zip(samba::FILE_ATTRIBUTES)
                {
                    known |= bit;
                    if attrib & bit != 0 {
                        *slot += count;
                    }
                }
                if attrib & !known != 0 {
                    if let Some(last) = self.dos_by_attribute.last_mut() {
                        *last += count;
                    }
                }
            }
            ValueSummary::DosUndecodable => self.dos_undecodable += count,
            ValueSummary::Stripes(c) => {
                self.lov_files += count;
                *self.stripe_counts.entry(c).or_default() += count;
            }
            ValueSummary::LovUndecodable => self.lov_undecodable += count,
        }
    }
    fn merge(&mut self, other: DecoderSummary) {
        self.dos_files += other.dos_files;
        self.dos_undecodable += other.dos_undecodable;
        for (slot, count) in self.dos_by_attribute.iter_mut().zip(other.dos_by_attribute) {
            *slot += count;
        }
        self.lov_files += other.lov_files;
        self.lov_undecodable += other.lov_undecodable;
        for (stripe_count, layouts) in other.stripe_counts {
            *self.stripe_counts.entry(stripe_count).or_default() += layouts;
        }
    }
    /// `(stripe count, layouts)` by ascending stripe count.
    pub fn stripe_counts(&self) -> Vec<(u16, u64)> {
        let mut counts: Vec<(u16, u64)> =
            self.stripe_counts.iter().map(|(&k, &n)| (k, n)).collect();
        counts.sort_unstable();
        counts
    }
    /// `(attribute name, values with it set)` for the attributes met, in table order.
    pub fn dos_attributes(&self) -> Vec<(String, u64)> {
        self.dos_by_attribute
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(index, &values)| {
                let name = samba::FILE_ATTRIBUTES
                    .get(index)
                    .map_or("other bits", |(_, name)| name);
                (name.to_string(), values)
            })
            .collect()
    }
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
    names: NameTable,
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
    /// Per-decoder summaries (files by DOS attribute, Lustre stripe counts).
    pub decoders: DecoderSummary,
    /// The inodes the scan visited and which are directories (for [`inode_paths_seen`]).
    pub seen: SeenInodes,
}

/// Names the name table remembers as last used (checked before the hash map: most inodes carry
/// the same few names, one after the other).
const RECENT_NAMES: usize = 4;

/// Statistics per xattr name, at most [`MAX_NAMES`] names: a name first met when the table is
/// full is not tracked (as a plain map capped the same way).
#[derive(Clone, Debug, Default)]
struct NameTable {
    /// `(name, statistics)` in the order the names were first met.
    entries: Vec<(Box<[u8]>, NameStat)>,
    /// Name to its index in `entries`.
    index: HashMap<Box<[u8]>, usize>,
    /// Indexes of the names last used, most recent first (a slot may repeat another or point at
    /// no entry yet: a hit is always checked against the entry's name).
    recent: [usize; RECENT_NAMES],
}

impl NameTable {
    /// Add `add` to name `key`'s statistics; false when the name is not tracked (the table was
    /// full when it was first met).
    fn add(&mut self, key: &[u8], add: &NameStat) -> bool {
        let Some(index) = self.find(key) else {
            return false;
        };
        if let Some((_, stat)) = self.entries.get_mut(index) {
            stat.absorb(add);
        }
        true
    }

    /// Index of `key` in `entries`, inserting it when there is room.
    fn find(&mut self, key: &[u8]) -> Option<usize> {
        let hit = self
            .recent
            .iter()
            .position(|&i| self.entries.get(i).is_some_and(|(k, _)| k.as_ref() == key));
        let index = match hit {
            Some(slot) => self.recent[slot],
            None => match self.index.get(key) {
                Some(&index) => index,
                None if self.entries.len() < MAX_NAMES => {
                    self.entries.push((key.into(), NameStat::default()));
                    self.index.insert(key.into(), self.entries.len() - 1);
                    self.entries.len() - 1
                }
                None => return None,
            },
        };
        // Move it to the front (the slot it had, or the last one, makes room).
        let from = hit.unwrap_or(RECENT_NAMES - 1);
        self.recent.copy_within(..from, 1);
        self.recent[0] = index;
        Some(index)
    }
}

/// Longest name key kept in the name table (bytes of the full name).
const MAX_KEY: usize = 257;
/// Bytes of the stack buffer a full name is built in: any prefix and a 255-byte name.
const NAME_BUF: usize = 320;

/// An xattr of the inode body as the statistics count it (its name given beside it).
struct BodyItem<'a> {
    value_size: u32,
    location: XattrLocation,
    cost: usize,
    value: Option<&'a [u8]>,
}

/// The full name of `e` (`xattr::full_name`'s) built in `buf`, when its index has a prefix and
/// the stored name is UTF-8 (then the lossy conversion `full_name` makes changes nothing). The
/// prefix is a whole `str`, so the joined bytes are UTF-8 exactly when the stored name is: one
/// check of the joined name says both.
fn stack_name<'b>(entry: &xattr::Entry<'_>, buf: &'b mut [u8; NAME_BUF]) -> Option<&'b str> {
    let prefix = xattr::index_prefix(entry.index)?.as_bytes();
    let len = prefix.len() + entry.raw_name.len();
    let out = buf.get_mut(..len)?;
    out[..prefix.len()].copy_from_slice(prefix);
    out[prefix.len()..].copy_from_slice(entry.raw_name);
    std::str::from_utf8(out).ok()
}

/// No value of `body` in an EA inode, and every name [`stack_name`] can build (checked without
/// building them).
fn plain_body(body: &xattr::Ibody<'_>) -> bool {
    body.entries.iter().all(|e| {
        e.value_inum == 0
            && xattr::index_prefix(e.index).is_some_and(|p| p.len() + e.raw_name.len() <= NAME_BUF)
            && std::str::from_utf8(e.raw_name).is_ok()
    })
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
    fn add_name(&mut self, key: &[u8], value_size: u32, loc: XattrLocation) {
        self.add_name_n(key, 1, u64::from(value_size), loc);
    }

    /// The summary of an item whose value was read, for the names that have one.
    fn summarize(&mut self, name: &str, value: Option<&[u8]>) {
        if let Some(sum) = value.and_then(|v| summarize_value(name, v)) {
            self.decoders.add(sum, 1);
        }
    }

    fn add_block(&mut self, blk: u64, refcount: u32) {
        if let Some(block_use) = self.blocks.get_mut(&blk) {
            if let Some(contrib) = block_use.contrib.take() {
                // Keep the invariant: references in `seen` are all counted once this is None.
                let refs = u64::from(block_use.seen);
                block_use.seen = block_use.seen.saturating_add(1);
                self.count_block_entries(&contrib, refs);
                return;
            }
            block_use.seen = block_use.seen.saturating_add(1);
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

    fn add_name_n(&mut self, key: &[u8], count: u64, bytes: u64, loc: XattrLocation) {
        if !self.names.add(key, &NameStat::at(loc, count, bytes)) {
            self.names_untracked += count;
        }
    }

    /// Count the entries of `b` for `n` referencing inodes.
    fn count_block_entries(&mut self, block: &DecodedBlock, count: u64) {
        for entry in &block.entries {
            self.xattr_count += count;
            self.value_bytes += count * u64::from(entry.value_size);
            match entry.location {
                XattrLocation::EaInode(_) => {
                    self.bytes_in_ea_inodes += count * u64::from(entry.value_size)
                }
                _ => self.bytes_in_blocks += count * entry.cost as u64,
            }
            let key = entry.name.as_bytes();
            self.add_name_n(
                &key[..key.len().min(257)],
                count,
                count * u64::from(entry.value_size),
                entry.location,
            );
            if let Some(sum) = entry.summary {
                self.decoders.add(sum, count);
            }
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
        let free = body.ibody_present.then_some(body.inode_space.free);
        if !self.begin_inode(!body.problems.is_empty(), free, body.items.len(), block) {
            return InodePlacement::default();
        }
        let mut place = InodePlacement::default();
        for parsed in &body.items {
            let item = BodyItem {
                value_size: parsed.value_size,
                location: parsed.location,
                cost: parsed.cost,
                value: parsed.value.as_deref(),
            };
            self.count_body_item(&mut place, &parsed.name, &item);
        }
        self.end_inode(place, block)
    }

    /// [`XattrStats::add_inode_split`] for an inode whose in-inode area `body` parsed without
    /// damage (as `parse_ibody_unnamed` gives it) and holds no value in an EA inode: the names
    /// are built on the stack, nothing is allocated per inode. `None` (nothing counted) when a
    /// name is not a known prefix and UTF-8 (the caller then takes the owned path).
    pub fn add_inode_body(
        &mut self,
        body: &xattr::Ibody<'_>,
        block: Option<&Arc<DecodedBlock>>,
    ) -> Option<InodePlacement> {
        let mut buf = [0u8; NAME_BUF];
        if !plain_body(body) {
            return None;
        }
        let free = body.present.then_some(body.space.free);
        if !self.begin_inode(false, free, body.entries.len(), block) {
            return Some(InodePlacement::default());
        }
        let mut place = InodePlacement::default();
        for entry in &body.entries {
            let item = BodyItem {
                value_size: entry.value_size,
                location: XattrLocation::Inode,
                cost: entry.cost(),
                value: entry.value,
            };
            let name = stack_name(entry, &mut buf)?;
            self.count_body_item(&mut place, name, &item);
        }
        Some(self.end_inode(place, block))
    }

    /// The start of one inode's accounting: its problems, the in-inode bytes still free (when
    /// the area is there), and whether it holds any xattr (`items` in the inode, or the
    /// block's); false when it holds none (nothing more to count).
    fn begin_inode(
        &mut self,
        problems: bool,
        free: Option<usize>,
        items: usize,
        block: Option<&Arc<DecodedBlock>>,
    ) -> bool {
        if problems || block.is_some_and(|b| !b.problems.is_empty()) {
            self.inodes_with_problems += 1;
        }
        if let Some(free) = free {
            self.inode_bytes_free += free as u64;
        }
        let block_entries = block.map_or(0, |b| b.entries.len());
        if items == 0 && block_entries == 0 {
            return false;
        }
        self.inodes_with_xattrs += 1;
        true
    }

    /// Count one xattr of the inode body named `name`.
    fn count_body_item(&mut self, place: &mut InodePlacement, name: &str, item: &BodyItem<'_>) {
        self.xattr_count += 1;
        self.value_bytes += u64::from(item.value_size);
        match item.location {
            XattrLocation::EaInode(_) => {
                place.ea_inode = true;
                self.bytes_in_ea_inodes += u64::from(item.value_size);
                place.footprint += u64::from(item.value_size);
            }
            _ => self.bytes_in_inode += item.cost as u64,
        }
        place.footprint += item.cost as u64;
        let key = name.as_bytes();
        self.add_name(
            &key[..key.len().min(MAX_KEY)],
            item.value_size,
            item.location,
        );
        self.summarize(name, item.value);
    }

    /// The end of one inode's accounting: its block, its placement class.
    fn end_inode(
        &mut self,
        mut place: InodePlacement,
        block: Option<&Arc<DecodedBlock>>,
    ) -> InodePlacement {
        if let Some(decoded) = block {
            place.block = decoded.spills();
            place.ea_inode |= decoded.uses_ea_inode();
            place.footprint += decoded.footprint();
            if let Some(info) = &decoded.info {
                self.add_block_shared(info.block, info.refcount, decoded);
            } else {
                self.count_block_entries(decoded, 1);
            }
        }
        self.classify(&place);
        place
    }

    fn add_block_shared(&mut self, blk: u64, refcount: u32, decoded: &Arc<DecodedBlock>) {
        if let Some(block_use) = self.blocks.get_mut(&blk) {
            block_use.seen = block_use.seen.saturating_add(1);
            if block_use.contrib.is_none() {
                // Seen before through add_inode (entries already counted there): count this one.
                self.count_block_entries(decoded, 1);
            }
        } else if self.blocks.len() < MAX_BLOCKS {
            // A block whose refcount says it is not shared is counted now, by this worker (the
            // leader then only merges counts); a shared one once per distinct block, at
            // `finish`, times its references. Either way each reference counts once.
            let contrib = if refcount > 1 {
                Some(Arc::clone(decoded))
            } else {
                self.count_block_entries(decoded, 1);
                None
            };
            self.blocks.insert(
                blk,
                BlockUse {
                    seen: 1,
                    refcount,
                    contrib,
                },
            );
        } else {
            self.blocks_untracked += 1;
            self.count_block_entries(decoded, 1);
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
        if let Some(slot) = self.footprint_hist.get_mut(bucket) {
            *slot += 1;
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
        for (block, refs) in pending {
            self.count_block_entries(&block, refs);
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
        for item in &xa.items {
            self.xattr_count += 1;
            self.value_bytes += u64::from(item.value_size);
            match item.location {
                XattrLocation::Inode => self.bytes_in_inode += item.cost as u64,
                XattrLocation::Block(_) => {
                    in_block = true;
                    self.bytes_in_blocks += item.cost as u64;
                }
                XattrLocation::EaInode(_) => {
                    in_ea = true;
                    self.bytes_in_ea_inodes += u64::from(item.value_size);
                    footprint += u64::from(item.value_size);
                }
            }
            footprint += item.cost as u64;
            let len = item.name.len().min(key.len());
            key[..len].copy_from_slice(&item.name.as_bytes()[..len]);
            self.add_name(&key[..len], item.value_size, item.location);
            self.summarize(&item.name, item.value.as_deref());
        }
        // Entries in the block count as a spill even when their values live in EA inodes.
        if let Some(block_info) = &xa.block {
            in_block |= block_info.space.used > 0;
            self.add_block(block_info.block, block_info.refcount);
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
        if let Some(slot) = self.footprint_hist.get_mut(bucket) {
            *slot += 1;
        }
        self.footprint_max = self.footprint_max.max(footprint);
    }

    /// Combine two partial results.
    pub fn merge(mut self, other: XattrStats) -> XattrStats {
        self.inodes_with_xattrs += other.inodes_with_xattrs;
        self.all_in_inode += other.all_in_inode;
        self.spill_to_block += other.spill_to_block;
        self.use_ea_inode += other.use_ea_inode;
        self.bytes_in_inode += other.bytes_in_inode;
        self.bytes_in_blocks += other.bytes_in_blocks;
        self.bytes_in_ea_inodes += other.bytes_in_ea_inodes;
        self.xattr_count += other.xattr_count;
        self.value_bytes += other.value_bytes;
        self.ea_value_inodes += other.ea_value_inodes;
        self.inode_bytes_free += other.inode_bytes_free;
        for (slot, count) in self.footprint_hist.iter_mut().zip(other.footprint_hist) {
            *slot += count;
        }
        self.footprint_max = self.footprint_max.max(other.footprint_max);
        self.inodes_with_problems += other.inodes_with_problems;
        self.names_untracked += other.names_untracked;
        self.decoders.merge(other.decoders);
        self.seen = std::mem::take(&mut self.seen).merge(other.seen);
        for (name, stat) in other.names.entries {
            if !self.names.add(&name, &stat) {
                self.names_untracked += stat.count;
            }
        }
        self.blocks_untracked += other.blocks_untracked;
        self.blocks_decoded = self.blocks_decoded.max(other.blocks_decoded);
        self.list_max = self.list_max.max(other.list_max);
        self.largest.extend(other.largest);
        keep_largest(&mut self.largest, self.list_max);
        for (block, incoming) in other.blocks {
            let Some(ours) = self.blocks.get_mut(&block) else {
                if self.blocks.len() < MAX_BLOCKS {
                    self.blocks.insert(block, incoming);
                } else {
                    self.blocks_untracked += u64::from(incoming.seen);
                    if let Some(contrib) = &incoming.contrib {
                        self.count_block_entries(contrib, u64::from(incoming.seen));
                    }
                }
                continue;
            };
            // Invariant: with `contrib` every reference in `seen` is still to be counted,
            // without it every one was. When the two sides differ, count the pending side now.
            let flush = match (&ours.contrib, &incoming.contrib) {
                (Some(contrib), None) => Some((Arc::clone(contrib), ours.seen)),
                (None, Some(contrib)) => Some((Arc::clone(contrib), incoming.seen)),
                _ => None,
            };
            ours.seen = ours.seen.saturating_add(incoming.seen);
            if let Some((contrib, refs)) = flush {
                ours.contrib = None;
                self.count_block_entries(&contrib, u64::from(refs));
            }
        }
        self
    }

    /// Names by descending count (then bytes, then name), at most `n`.
    pub fn top_names(&self, max: usize) -> Vec<(String, NameStat)> {
        let mut names: Vec<(String, NameStat)> = self
            .names
            .entries
            .iter()
            .map(|(k, s)| (String::from_utf8_lossy(k).into_owned(), *s))
            .collect();
        names.sort_by(|a, b| {
            b.1.count
                .cmp(&a.1.count)
                .then(b.1.bytes.cmp(&a.1.bytes))
                .then(a.0.cmp(&b.0))
        });
        names.truncate(max);
        names
    }

    /// Number of distinct names tracked.
    pub fn distinct_names(&self) -> usize {
        self.names.entries.len()
    }

    /// Distinct external blocks seen.
    pub fn distinct_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// External blocks referenced by more than one inode, or whose refcount disagrees with the
    /// references seen (only meaningful when no reference went untracked), most shared first.
    pub fn shared_blocks(&self) -> Vec<SharedBlock> {
        let mut shared: Vec<SharedBlock> = self
            .blocks
            .iter()
            .filter(|(_, u)| u.seen > 1 || u.refcount > 1)
            .map(|(&block, u)| SharedBlock {
                block,
                inodes: u.seen,
                refcount: u.refcount,
            })
            .collect();
        shared.sort_by(|a, b| b.inodes.cmp(&a.inodes).then(a.block.cmp(&b.block)));
        shared
    }
}

/// Quick test whether a raw inode may carry xattrs (in-inode magic or an xattr block).
pub(crate) fn may_have_xattrs(base: &InodeBase, raw: &[u8]) -> bool {
    may_have_xattrs_acl(base.file_acl(), raw)
}

/// [`may_have_xattrs`] given the inode's `i_file_acl`.
pub(crate) fn may_have_xattrs_acl(file_acl: u64, raw: &[u8]) -> bool {
    if file_acl != 0 {
        return true;
    }
    if raw.len() <= ondisk::inode::BASE_SIZE {
        return false;
    }
    let extra = usize::from(ondisk::inode::large_in_record(raw).extra_isize);
    // The in-inode header is its little-endian magic alone: read in place, as the binrw decode
    // of `IbodyHeader` would give it, without that decode's cost on every inode of the scan.
    let at = ondisk::inode::BASE_SIZE + extra;
    raw.get(at..at + 4)
        .is_some_and(|m| u32::from_le_bytes([m[0], m[1], m[2], m[3]]) == xattr::MAGIC)
}

impl XattrStats {
    /// Keep inode `ino` among the largest listed when it spills (bounded: trimmed to
    /// `list_max` whenever twice that many are held).
    fn list_largest(&mut self, ino: u32, place: InodePlacement) {
        if self.list_max > 0 && (place.block || place.ea_inode) {
            self.largest.push(Listed {
                ino,
                footprint: place.footprint,
                block: place.block,
                ea_inode: place.ea_inode,
            });
            if self.largest.len() >= 2 * self.list_max {
                let keep = self.list_max;
                keep_largest(&mut self.largest, keep);
            }
        }
    }
}

/// Count inode `ino`'s xattrs straight from its record (in-inode names borrowed, nothing
/// allocated per inode; the block through `cache`), as the owned path through
/// [`inode_xattrs_cached`] counts them; `None` (nothing counted) when the in-inode area is
/// damaged or not plain (a value in an EA inode, a name without a known prefix or not UTF-8):
/// the caller then takes the owned path, which says why.
fn add_inode_fast(
    fs: &Filesystem,
    cache: &XattrBlockCache,
    st: &mut XattrStats,
    counts: &mut ScanCounts,
    ino: u32,
    base: &InodeBase,
    raw: &[u8],
) -> Option<InodePlacement> {
    // `Inode::parse`'s i_extra_isize: the record's, 0 for a 128-byte record.
    let extra = if raw.len() > ondisk::inode::BASE_SIZE {
        ondisk::inode::large_in_record(raw).extra_isize
    } else {
        0
    };
    let body = xattr::parse_ibody_unnamed(raw, extra).ok()?;
    if !plain_body(&body) {
        return None;
    }
    let file_acl = base.file_acl();
    let block = (file_acl != 0).then(|| cache.get(fs, file_acl));
    let place = st.add_inode_body(&body, block.as_ref())?;
    for problem in block.iter().flat_map(|b| b.problems.iter()) {
        counts.problem(problem.clone().within(format!("inode {ino}")));
    }
    Some(place)
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
            st.seen.add(
                fs.geo.inodes_per_group,
                ino,
                ondisk::inode::mode_is_dir(base.mode),
            );
            if base.flags & inode::EA_INODE_FL != 0 {
                st.ea_value_inodes += 1;
            }
            if !may_have_xattrs(&base, raw) {
                return;
            }
            if let Some(place) = add_inode_fast(fs, &cache, st, counts, ino, &base, raw) {
                st.list_largest(ino, place);
                return;
            }
            let ind = Inode::parse(raw);
            let (body, block) = inode_xattrs_cached(fs, raw, &ind, &cache);
            for problem in body
                .problems
                .iter()
                .chain(block.iter().flat_map(|b| b.problems.iter()))
            {
                counts.problem(problem.clone().within(format!("inode {ino}")));
            }
            let place = st.add_inode_split(&body, block.as_ref());
            st.list_largest(ino, place);
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
        let mut spilling = one("user.big".into(), XattrLocation::Block(9), 300);
        spilling.block = Some(XattrBlockInfo {
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
        st.add_inode(&spilling);
        st.add_inode(&spilling);
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
    fn a_directory_naming_one_inode_a_million_times_keeps_one_entry() {
        let walk = PathWalk {
            found: HashMap::new(),
            queue: VecDeque::new(),
            queued: HashSet::from([2]),
        };
        let wanted = [12, 13];
        let mut finds = DirFinds::default();
        let mut asked = 0u32;
        for index in 0..1_000_000u32 {
            let name = format!("n{index}");
            // Inode 12 (wanted, a directory the scan did not see) a million times; inode 2
            // (queued already) and inode 14 (a file the scan saw) too.
            finds.consider(name.as_bytes(), 12, (&wanted, &walk), None, |_| {
                asked += 1;
                true
            });
            finds.consider(name.as_bytes(), 2, (&wanted, &walk), Some(true), |_| true);
            finds.consider(name.as_bytes(), 14, (&wanted, &walk), Some(false), |_| true);
        }
        finds.consider(b"last", 13, (&wanted, &walk), None, |_| false);
        assert_eq!(
            finds.named,
            vec![(12, b"n0".to_vec().into()), (13, b"last".to_vec().into())]
        );
        assert_eq!(finds.subdirs, vec![(12, b"n0".to_vec().into())]);
        assert_eq!(asked, 1);
        // Already named by the walk: not kept again.
        let walk = PathWalk {
            found: HashMap::from([(12, "/a".to_string())]),
            ..walk
        };
        let mut again = DirFinds::default();
        again.consider(b"again", 12, (&wanted, &walk), Some(false), |_| false);
        assert!(again.named.is_empty() && again.subdirs.is_empty());
    }

    #[test]
    fn name_table_recent_cache_agrees_with_the_map() {
        let mut st = XattrStats::default();
        let names = [
            "user.a", "user.b", "user.c", "user.d", "user.e", "user.a", "user.e",
        ];
        for (index, name) in names.iter().cycle().take(70).enumerate() {
            st.add_inode(&one((*name).into(), XattrLocation::Inode, index as u32 % 3));
        }
        let mut want: HashMap<&str, (u64, u64)> = HashMap::new();
        for (index, name) in names.iter().cycle().take(70).enumerate() {
            let counts = want.entry(name).or_default();
            counts.0 += 1;
            counts.1 += (index as u64) % 3;
        }
        let top = st.top_names(10);
        assert_eq!(top.len(), 5);
        for (name, stat) in top {
            assert_eq!((stat.count, stat.bytes), want[name.as_str()], "{name}");
            assert_eq!(stat.in_inode, stat.count);
        }
    }

    #[test]
    fn name_table_is_capped() {
        let mut first = XattrStats::default();
        let mut second = XattrStats::default();
        for index in 0..MAX_NAMES + 100 {
            first.add_inode(&one(format!("user.n{index}"), XattrLocation::Inode, 1));
            second.add_inode(&one(format!("user.m{index}"), XattrLocation::Inode, 1));
        }
        assert_eq!(first.distinct_names(), MAX_NAMES);
        assert_eq!(first.names_untracked, 100);
        let merged = first.merge(second);
        assert_eq!(merged.distinct_names(), MAX_NAMES);
        assert_eq!(merged.names_untracked, 100 + 100 + MAX_NAMES as u64);
        assert_eq!(merged.xattr_count, 2 * (MAX_NAMES as u64 + 100));
    }
}
