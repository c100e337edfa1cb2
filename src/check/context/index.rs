//! The inode index (e2fsck's `inode_used_map`, `inode_count` icount and `dir_info`): the
//! in-use inodes as pass 1 decides them, and per inode the directory references pass 2 counts
//! (parent and dotdot), read by passes 3 and 4 and by the path naming of findings.
//!
//! The index keeps the walk's lists, one per group, as the workers made them (joining them into
//! one list was a serial copy of every in-use inode), and each group's part of it (rank words,
//! directories, counters) is built by the worker that walked the group, as soon as its list is
//! complete and still in that worker's cache ([`GroupList`]). A slot is a group and a place in
//! it (16 bytes).
//!
//! Memory, per in-use inode: its [`InodeFacts`] (16 bytes, taken over, not copied) and a 4-byte
//! reference counter; for a directory 20 more bytes (its place, parent, `..`, first name). Per
//! group up to the last with an in-use inode: 104 bytes (its lists and two numbers). The rank
//! words that find an inode's slot: for groups where at least one inode in 64 is in use, 16
//! bytes per 64 inodes of the group (so at most 16 bytes per in-use inode). A lookup is then a
//! bit test and a popcount instead of a binary search; sparse groups fall back to a binary
//! search within the group. Counters are atomics so pass 2 runs over directories in parallel;
//! they count down from `i_links_count`, so pass 4 finds the inodes whose references differ by
//! reading the counters alone.

use super::facts::InodeFacts;
use crate::reader::ondisk::inode::mode_is_dir;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// One bitmap word of a dense group: which of its 64 inodes are in use, and how many in-use
/// inodes of the group come before it.
#[derive(Clone, Copy, Debug, Default)]
struct RankWord {
    bits: u64,
    rank: u32,
}

const _: () = assert!(std::mem::size_of::<RankWord>() <= 16);
const _: () = assert!(std::mem::size_of::<Segment>() <= 104);
const _: () = assert!(std::mem::size_of::<InodeSlot<'static>>() <= 16);

/// No rank words: a sparse group, searched by binary search.
const SPARSE: u32 = u32::MAX;

/// One group's in-use inodes, as the walk produced them (sorted, taken over, not copied), their
/// reference counters, and its directories with their links.
#[derive(Debug, Default)]
struct Segment {
    /// First word in [`InodeIndex::words`] of a dense group; [`SPARSE`] for a sparse one.
    words: u32,
    /// Position of the group's first directory among every group's directories.
    dir_first: u32,
    facts: Vec<InodeFacts>,
    /// Per slot: `i_links_count` less the directory entries naming the inode so far (`.` and
    /// `..` included; e2fsck's inode_count, kept as the difference, wrapping, so that pass 4
    /// finds the inodes whose counts disagree by reading the counters alone).
    counts: Vec<AtomicU32>,
    /// Slots (in `facts`) of the directories, ascending.
    dirs: Vec<u32>,
    /// Per directory, in the order of `dirs`.
    links: Vec<DirLinks>,
}

/// What the build finds in one group.
#[derive(Debug)]
struct GroupBuilt {
    /// The rank words (empty for a sparse group).
    words: Vec<RankWord>,
    /// Positions of the directories within the group.
    dirs: Vec<u32>,
    /// The reference counters, each starting at the inode's `i_links_count`.
    counts: Vec<AtomicU32>,
}

/// A directory's links as pass 2 finds them.
#[derive(Debug)]
struct DirLinks {
    /// The smallest directory inode holding a name for it (0 = none yet).
    parent: AtomicU32,
    /// The inode its `..` entry names (0 = none).
    dotdot: AtomicU32,
    /// The lowest key of the names pass 2 met for it (`u64::MAX` = none yet).
    first_link: AtomicU64,
}

impl Default for DirLinks {
    fn default() -> DirLinks {
        DirLinks {
            parent: AtomicU32::new(0),
            dotdot: AtomicU32::new(0),
            first_link: AtomicU64::new(u64::MAX),
        }
    }
}

/// The in-use inodes, by number, with pass 2's counters.
#[derive(Debug, Default)]
pub struct InodeIndex {
    /// Inodes per group (at least 1).
    ipg: u32,
    /// Per group, up to the last group with an in-use inode.
    segs: Vec<Segment>,
    /// The rank words of the dense groups.
    words: Vec<RankWord>,
    /// Number of directories.
    dir_count: usize,
}

/// An in-use inode as pass 1 saw it, with pass 2's counters: its group and its place there
/// (16 bytes, passed by value: a larger slot cost pass 2 a stall on every lookup).
#[derive(Clone, Copy, Debug)]
pub struct InodeSlot<'a> {
    seg: &'a Segment,
    /// Index in the group's `facts` (and `counts`).
    i: u32,
}

impl<'a> InodeSlot<'a> {
    /// What pass 1 recorded of the inode.
    pub fn facts(&self) -> &'a InodeFacts {
        &self.seg.facts[self.i as usize]
    }
    /// The inode number.
    pub fn ino(&self) -> u32 {
        self.facts().ino
    }
    /// `i_mode`.
    pub fn mode(&self) -> u16 {
        self.facts().mode
    }
    /// `i_links_count`.
    pub fn links_count(&self) -> u16 {
        self.facts().links_count
    }
    /// `i_flags`.
    pub fn flags(&self) -> u32 {
        self.facts().flags
    }
    /// No blocks mapped: e2fsck's "zero-length" for unattached inodes.
    pub fn no_blocks(&self) -> bool {
        self.facts().blocks == 0
    }
    /// True for a directory.
    pub fn is_dir(&self) -> bool {
        mode_is_dir(self.mode())
    }
    /// Every directory entry naming this inode, `.` and `..` included.
    pub fn refs(&self) -> u32 {
        u32::from(self.links_count()).wrapping_sub(self.count().load(Relaxed))
    }
    /// Record one reference from a directory entry.
    pub fn count_reference(&self) {
        self.count().fetch_sub(1, Relaxed);
    }
    fn count(&self) -> &'a AtomicU32 {
        &self.seg.counts[self.i as usize]
    }
    /// Position among the group's directories.
    fn dir_index(&self) -> Option<usize> {
        self.seg.dirs.binary_search(&self.i).ok()
    }
    fn links(&self) -> Option<&'a DirLinks> {
        self.seg.links.get(self.dir_index()?)
    }
    /// For a directory: the smallest directory inode holding a name for it (0 = none).
    pub fn parent(&self) -> u32 {
        self.links().map_or(0, |l| l.parent.load(Relaxed))
    }
    /// For a directory: the inode its `..` entry names (0 = none).
    pub fn dotdot(&self) -> u32 {
        self.links().map_or(0, |l| l.dotdot.load(Relaxed))
    }
    /// For a directory: record the inode its `..` names.
    pub fn set_dotdot(&self, ino: u32) {
        if let Some(links) = self.links() {
            links.dotdot.store(ino, Relaxed);
        }
    }
    /// For a directory: `dir` holds a name for it (the smallest such directory is kept).
    pub fn offer_parent(&self, dir: u32) {
        if let Some(links) = self.links() {
            let _ = links.parent.fetch_update(Relaxed, Relaxed, |cur| {
                (cur == 0 || dir < cur).then_some(dir)
            });
        }
    }
    /// For a directory: a name for it with ordering key `key` (the lowest is kept).
    pub fn offer_link(&self, key: u64) {
        if let Some(links) = self.links() {
            links.first_link.fetch_min(key, Relaxed);
        }
    }
    /// For a directory: the lowest key offered (`u64::MAX` = none).
    pub fn first_link(&self) -> u64 {
        self.links()
            .map_or(u64::MAX, |l| l.first_link.load(Relaxed))
    }
    /// For a directory: its parent is `dir`, whatever was recorded.
    pub fn set_parent(&self, dir: u32) {
        if let Some(links) = self.links() {
            links.parent.store(dir, Relaxed);
        }
    }
}

/// The rank words, directories and counters of group `g` (its `facts`), in one pass over them;
/// `None` when the facts are not strictly ascending inodes of that group (then the index is
/// built the slow way).
fn build_group(facts: &[InodeFacts], group: usize, ipg: u32) -> Option<GroupBuilt> {
    let base = u64::try_from(group).ok()? * u64::from(ipg);
    let words_per_group = ipg.div_ceil(64) as usize;
    // Dense when a word per 64 inodes costs at most one word per in-use inode.
    let dense = facts.len() >= words_per_group;
    let mut words = if dense {
        vec![RankWord::default(); words_per_group]
    } else {
        Vec::new()
    };
    let mut dirs = Vec::new();
    let mut counts = Vec::with_capacity(facts.len());
    let mut prev: Option<u32> = None;
    for (index, fact) in facts.iter().enumerate() {
        let bit = u64::from(fact.ino).checked_sub(1)?.checked_sub(base)?;
        if bit >= u64::from(ipg) || prev.is_some_and(|p| p >= fact.ino) {
            return None;
        }
        prev = Some(fact.ino);
        if dense {
            words[(bit / 64) as usize].bits |= 1 << (bit % 64);
        }
        if fact.is_dir() {
            dirs.push(u32::try_from(index).ok()?);
        }
        counts.push(AtomicU32::new(u32::from(fact.links_count)));
    }
    let mut rank = 0;
    for word in &mut words {
        word.rank = rank;
        rank += word.bits.count_ones();
    }
    Some(GroupBuilt {
        words,
        dirs,
        counts,
    })
}

/// `facts` sorted by inode number (duplicates keeping the first, inode 0 dropped) and split
/// into one list per group.
fn by_group(mut facts: Vec<InodeFacts>, ipg: u32) -> Vec<Vec<InodeFacts>> {
    let ipg = ipg.max(1);
    if !facts.is_sorted_by(|a, b| a.ino < b.ino) {
        facts.sort_by_key(|f| f.ino);
        facts.dedup_by_key(|f| f.ino);
    }
    let mut groups: Vec<Vec<InodeFacts>> = Vec::new();
    for fact in facts.into_iter().filter(|fact| fact.ino != 0) {
        let group = ((fact.ino - 1) / ipg) as usize;
        if groups.len() <= group {
            groups.resize_with(group + 1, Vec::new);
        }
        groups[group].push(fact);
    }
    groups
}

/// One group's in-use inodes as a walk worker finished them (sorted by number), with the
/// group's part of the index built right then, while the list is in the worker's cache (built
/// later, reading every list again cost more than building it).
#[derive(Debug, Default)]
pub struct GroupList {
    facts: Vec<InodeFacts>,
    /// The group and its part of the index; `None` when not built (the inodes per group not
    /// given, or the list is not strictly ascending inodes of one group).
    built: Option<(usize, GroupBuilt)>,
}

impl GroupList {
    /// Take over a group's list; with `ipg` (the inodes per group, 0 = unknown) build its part
    /// of the index now. A list sized for every slot of its group gives back what it did not
    /// use.
    pub fn new(mut facts: Vec<InodeFacts>, ipg: u32) -> GroupList {
        if facts.capacity() - facts.len() > facts.len() / 8 {
            facts.shrink_to_fit();
        }
        let built = facts.first().filter(|_| ipg != 0).and_then(|first| {
            let group = (first.ino.max(1) - 1) / ipg;
            Some((group as usize, build_group(&facts, group as usize, ipg)?))
        });
        GroupList { facts, built }
    }
}

/// Lists (in group order, at most one per group) placed at their group's index, up to the
/// last group with an in-use inode. A list that lands on a taken group is appended to it and
/// loses its built part (the build then sorts it out).
fn place_lists(lists: Vec<GroupList>, ipg: u32) -> Vec<(Vec<InodeFacts>, Option<GroupBuilt>)> {
    let mut out: Vec<(Vec<InodeFacts>, Option<GroupBuilt>)> = Vec::new();
    for mut list in lists {
        let Some(first) = list.facts.first() else {
            continue;
        };
        let group = list
            .built
            .as_ref()
            .map_or(((first.ino.max(1) - 1) / ipg) as usize, |b| b.0);
        if out.len() <= group {
            out.resize_with(group + 1, Default::default);
        }
        let slot = &mut out[group];
        if slot.0.is_empty() {
            *slot = (list.facts, list.built.map(|b| b.1));
        } else {
            slot.0.append(&mut list.facts);
            slot.1 = None;
        }
    }
    out
}

impl InodeIndex {
    /// Build from in-use inodes in any order (sorted, duplicates keeping the first).
    /// `ipg` is the inodes per group.
    pub fn new(facts: Vec<InodeFacts>, ipg: u32) -> InodeIndex {
        // Sorted, unique, non-zero and split by group, the lists pass every test of the build.
        let groups = by_group(facts, ipg)
            .into_iter()
            .map(|g| (g, None))
            .collect();
        InodeIndex::build(groups, ipg).unwrap_or_default()
    }

    /// Build from one list per group (`groups[g]`: group `g`'s in-use inodes, by number),
    /// taken over as they are.
    #[cfg(test)]
    fn from_groups(groups: Vec<Vec<InodeFacts>>, ipg: u32) -> InodeIndex {
        let lists = groups.into_iter().map(|g| GroupList::new(g, 0)).collect();
        InodeIndex::from_lists(lists, ipg)
    }

    /// Build from the walk's lists, in group order, taken over as they are (their parts built
    /// already, or built here in parallel). Lists that are not strictly ascending inodes of
    /// their group (not what the walk makes) are sorted out through [`InodeIndex::new`].
    pub fn from_lists(lists: Vec<GroupList>, ipg: u32) -> InodeIndex {
        let ipg = ipg.max(1);
        InodeIndex::build(place_lists(lists, ipg), ipg).unwrap_or_else(|unbuilt| {
            let all: Vec<InodeFacts> = unbuilt.into_iter().flat_map(|group| group.0).collect();
            InodeIndex::new(all, ipg)
        })
    }

    /// The groups not built yet are built in parallel, each in one pass over its inodes (its
    /// counters allocated and faulted in by the worker that builds it): nothing here touches
    /// every inode serially.
    #[allow(clippy::type_complexity)]
    fn build(
        mut groups: Vec<(Vec<InodeFacts>, Option<GroupBuilt>)>,
        ipg: u32,
    ) -> Result<InodeIndex, Vec<(Vec<InodeFacts>, Option<GroupBuilt>)>> {
        use rayon::prelude::*;
        let ipg = ipg.max(1);
        while groups.last().is_some_and(|g| g.0.is_empty()) {
            groups.pop();
        }
        // Inode numbers are unique: every count fits in 32 bits.
        let total: usize = groups.iter().map(|g| g.0.len()).sum();
        if u32::try_from(total).is_err() {
            return Err(groups);
        }
        let built = groups
            .par_iter_mut()
            .enumerate()
            .map(|(g, (facts, built))| built.take().or_else(|| build_group(facts, g, ipg)))
            .collect::<Option<Vec<GroupBuilt>>>();
        let Some(built) = built else {
            return Err(groups);
        };
        let mut words = Vec::new();
        let mut dir_count = 0usize;
        let mut segs = Vec::with_capacity(groups.len());
        for ((facts, _), group_built) in groups.into_iter().zip(built) {
            let at = if group_built.words.is_empty() {
                SPARSE
            } else {
                u32::try_from(words.len()).unwrap_or(SPARSE)
            };
            if at != SPARSE {
                words.extend_from_slice(&group_built.words);
            }
            let dir_first = dir_count as u32;
            dir_count += group_built.dirs.len();
            segs.push(Segment {
                words: at,
                dir_first,
                facts,
                counts: group_built.counts,
                links: group_built
                    .dirs
                    .iter()
                    .map(|_| DirLinks::default())
                    .collect(),
                dirs: group_built.dirs,
            });
        }
        Ok(InodeIndex {
            ipg,
            segs,
            words,
            dir_count,
        })
    }

    /// The slot of `ino` when it is in use.
    pub fn get(&self, ino: u32) -> Option<InodeSlot<'_>> {
        let offset = ino.checked_sub(1)?;
        let ipg = self.ipg.max(1);
        let group = offset / ipg;
        self.find_in_group(ino, group, offset - group * ipg)
    }

    /// [`InodeIndex::get`] for a caller that has split `ino - 1` by the inodes per group
    /// (`ino - 1 = group * ipg + index`) already.
    pub fn get_in_group(&self, ino: u32, group: u32, index: u32) -> Option<InodeSlot<'_>> {
        if index >= self.ipg {
            return self.get(ino);
        }
        self.find_in_group(ino, group, index)
    }

    /// `ino`'s slot, `ino - 1` being `bit` in group `group` (`bit` below the inodes per group):
    /// a bit test and a popcount in a dense group, a binary search within a sparse one.
    fn find_in_group(&self, ino: u32, group: u32, bit: u32) -> Option<InodeSlot<'_>> {
        let seg = self.segs.get(group as usize)?;
        let position = if seg.words == SPARSE {
            seg.facts.binary_search_by_key(&ino, |f| f.ino).ok()?
        } else {
            let word = self.words.get(seg.words as usize + (bit / 64) as usize)?;
            let below = word.bits & ((1u64 << (bit % 64)) - 1);
            if (word.bits >> (bit % 64)) & 1 == 0 {
                return None;
            }
            word.rank as usize + below.count_ones() as usize
        };
        seg.facts.get(position).filter(|f| f.ino == ino)?;
        Some(InodeSlot {
            seg,
            i: position as u32,
        })
    }

    /// Every in-use inode, by number.
    #[cfg(test)]
    fn slots(&self) -> impl Iterator<Item = InodeSlot<'_>> + '_ {
        (0..self.group_count()).flat_map(move |g| self.group_slots(g))
    }

    /// Number of groups with slots (every in-use inode is in a group below it).
    pub fn group_count(&self) -> usize {
        self.segs.len()
    }

    /// Number of in-use inodes in `group`.
    pub fn group_len(&self, group: usize) -> usize {
        self.segs.get(group).map_or(0, |s| s.facts.len())
    }

    /// `group`'s in-use inodes, by number (none past [`InodeIndex::group_count`]).
    pub fn group_slots(&self, group: usize) -> impl Iterator<Item = InodeSlot<'_>> + '_ {
        self.segs
            .get(group)
            .into_iter()
            .flat_map(|s| (0..s.facts.len() as u32).map(move |i| InodeSlot { seg: s, i }))
    }

    /// `group`'s in-use inodes whose references do not (yet) equal `i_links_count`, the
    /// directories, and the inodes below `below`: by number, found from the counters, the
    /// directory list and the group's first inodes, without reading every inode's facts.
    pub fn group_unsettled(
        &self,
        group: usize,
        below: u32,
    ) -> impl Iterator<Item = InodeSlot<'_>> + '_ {
        self.segs.get(group).into_iter().flat_map(move |seg| {
            let low = seg.facts.partition_point(|f| f.ino < below);
            let mut dirs = seg.dirs.iter().map(|&slot| slot as usize).peekable();
            seg.counts
                .iter()
                .enumerate()
                .filter(move |&(slot, count)| {
                    // Advanced at every slot, whatever decides.
                    let dir = dirs.next_if_eq(&slot).is_some();
                    dir || slot < low || count.load(Relaxed) != 0
                })
                .map(move |(slot, _)| InodeSlot {
                    seg,
                    i: slot as u32,
                })
        })
    }

    /// `group`'s in-use inodes as a little-endian bitmap of its `ipg` inodes (bit `bit`:
    /// inode `group * ipg + bit + 1`), into `out`: the rank words of a dense group, else set from the
    /// group's inodes.
    pub fn group_bitmap(&self, group: usize, out: &mut Vec<u8>) {
        let nbytes = (self.ipg as usize).div_ceil(8);
        out.clear();
        let Some(seg) = self.segs.get(group) else {
            out.resize(nbytes, 0);
            return;
        };
        if seg.words != SPARSE {
            let word_count = (self.ipg as usize).div_ceil(64);
            let words = &self.words[seg.words as usize..seg.words as usize + word_count];
            out.extend(words.iter().flat_map(|w| w.bits.to_le_bytes()));
            out.truncate(nbytes);
            return;
        }
        out.resize(nbytes, 0);
        let base = group as u64 * u64::from(self.ipg) + 1;
        for fact in &seg.facts {
            let bit = (u64::from(fact.ino) - base) as usize;
            out[bit / 8] |= 1 << (bit % 8);
        }
    }

    /// Every in-use directory, by number.
    pub fn dirs(&self) -> impl ExactSizeIterator<Item = InodeSlot<'_>> + '_ {
        (0..self.dir_count).map(move |i| self.dir(i))
    }
    /// Number of in-use directories.
    pub fn dir_count(&self) -> usize {
        self.dir_count
    }
    /// The `position`-th directory (in inode order; `position` below [`InodeIndex::dir_count`]).
    pub fn dir(&self, position: usize) -> InodeSlot<'_> {
        // The last group whose directories start at or before `position` holds it (groups without
        // directories before it start where it starts; those after it start past `position`).
        let group = self
            .segs
            .partition_point(|seg| seg.dir_first as usize <= position)
            - 1;
        let seg = &self.segs[group];
        InodeSlot {
            seg,
            i: seg.dirs[position - seg.dir_first as usize],
        }
    }
    /// Position of directory `ino` among [`InodeIndex::dirs`].
    pub fn dir_position(&self, ino: u32) -> Option<usize> {
        let slot = self.get(ino)?;
        Some(slot.seg.dir_first as usize + slot.dir_index()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(inos: &[u32]) -> Vec<InodeFacts> {
        inos.iter()
            .map(|&ino| InodeFacts {
                ino,
                mode: if ino % 7 == 0 { 0o040755 } else { 0o100644 },
                links_count: 1,
                flags: 0,
                blocks: 1,
            })
            .collect()
    }

    #[test]
    fn rank_lookup_agrees_with_a_search() {
        let ipg = 200;
        // Group 0 dense, group 1 sparse, group 2 empty, group 3 dense with gaps, group 5 one inode.
        let mut inos: Vec<u32> = (1..=200).collect();
        inos.extend([201, 333, 400]);
        inos.extend((601..=800).filter(|i| i % 3 != 0));
        inos.push(1_001);
        let index = InodeIndex::new(facts(&inos), ipg);
        for ino in 0..1_300 {
            let want = inos.binary_search(&ino).is_ok().then_some(ino);
            let got = index.get(ino).map(|s| s.ino());
            assert_eq!(got, want, "inode {ino}");
            if ino > 0 {
                let group = (ino - 1) / ipg;
                let got = index
                    .get_in_group(ino, group, ino - 1 - group * ipg)
                    .map(|s| s.ino());
                assert_eq!(got, want, "inode {ino} by group");
            }
        }
        let dirs: Vec<u32> = index.dirs().map(|s| s.ino()).collect();
        assert_eq!(
            dirs,
            inos.iter()
                .copied()
                .filter(|i| i % 7 == 0)
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn lists_by_group_are_taken_over_and_directories_count_across_groups() {
        let ipg = 100;
        let groups = vec![
            facts(&[1, 2, 7, 50]),
            vec![],
            facts(&[201, 210, 300]),
            vec![],
        ];
        let index = InodeIndex::from_groups(groups, ipg);
        assert_eq!(index.group_count(), 3);
        let slots: Vec<u32> = index.slots().map(|s| s.ino()).collect();
        assert_eq!(slots, [1, 2, 7, 50, 201, 210, 300]);
        let dirs: Vec<u32> = index.dirs().map(|s| s.ino()).collect();
        assert_eq!(dirs, [7, 210]);
        assert_eq!(index.dir(1).ino(), 210);
        assert_eq!(index.dir_position(210), Some(1));
        assert_eq!(index.dir_position(7), Some(0));
        assert_eq!(index.dir_position(201), None);
        assert!(index.group_slots(1).count() == 0 && index.group_slots(9).count() == 0);
        index.get(210).unwrap().count_reference();
        assert_eq!(
            index.group_slots(2).map(|s| s.refs()).collect::<Vec<_>>(),
            [0, 1, 0]
        );
    }

    #[test]
    fn group_bitmaps_of_dense_and_sparse_groups() {
        let ipg = 100;
        // Group 0 dense (words), group 1 sparse (two inodes), group 2 none.
        let dense: Vec<u32> = (1..=100).filter(|i| i % 3 != 0).collect();
        let mut inos = dense.clone();
        inos.extend([101, 200]);
        let index = InodeIndex::new(facts(&inos), ipg);
        let mut out = Vec::new();
        for group in 0..4usize {
            index.group_bitmap(group, &mut out);
            let mut want = vec![0u8; 13];
            for &ino in inos.iter().filter(|&&ino| (ino - 1) / ipg == group as u32) {
                let bit = (ino - 1 - group as u32 * ipg) as usize;
                want[bit / 8] |= 1 << (bit % 8);
            }
            assert_eq!(out, want, "group {group}");
        }
        assert_eq!(index.group_len(0), dense.len());
        assert_eq!((index.group_len(1), index.group_len(2)), (2, 0));
    }

    #[test]
    fn unsettled_slots_are_the_mismatched_the_directories_and_the_reserved() {
        // links_count 1 everywhere; 7 and 14 are directories.
        let index = InodeIndex::new(facts(&[1, 2, 5, 7, 9, 11, 14, 15]), 8);
        for ino in [1, 5, 9, 9, 11, 14] {
            index.get(ino).unwrap().count_reference();
        }
        let refs: Vec<u32> = index.slots().map(|s| s.refs()).collect();
        assert_eq!(refs, [1, 0, 1, 0, 2, 1, 1, 0]);
        let mut got = Vec::new();
        for group in 0..index.group_count() {
            got.extend(index.group_unsettled(group, 3).map(|s| s.ino()));
        }
        // 1, 2: below 3; 7, 14: directories; 2, 7, 9, 15: counts differ.
        assert_eq!(got, [1, 2, 7, 9, 14, 15]);
    }

    #[test]
    fn lists_built_by_the_walk_workers_equal_lists_built_after() {
        let ipg = 64;
        let inos: Vec<u32> = (1..=300).filter(|i| i % 5 != 1).collect();
        let lists = |ipg_now| {
            by_group(facts(&inos), ipg)
                .into_iter()
                .map(|g| GroupList::new(g, ipg_now))
                .collect::<Vec<_>>()
        };
        let (early, late) = (lists(ipg), lists(0));
        assert!(early.iter().all(|l| l.built.is_some()));
        assert!(late.iter().all(|l| l.built.is_none()));
        let (early_index, late_index) = (
            InodeIndex::from_lists(early, ipg),
            InodeIndex::from_lists(late, ipg),
        );
        for ino in 0..320 {
            assert_eq!(
                early_index.get(ino).map(|s| s.ino()),
                late_index.get(ino).map(|s| s.ino())
            );
            assert_eq!(early_index.dir_position(ino), late_index.dir_position(ino));
        }
        let mut bits = (Vec::new(), Vec::new());
        for group in 0..6 {
            early_index.group_bitmap(group, &mut bits.0);
            late_index.group_bitmap(group, &mut bits.1);
            assert_eq!(bits.0, bits.1);
        }
    }

    #[test]
    fn a_list_of_two_groups_from_a_worker_is_sorted_out() {
        // Not what the walk makes: the build finds it and sorts it out.
        let index = InodeIndex::from_lists(vec![GroupList::new(facts(&[3, 12, 11]), 10)], 10);
        let inos: Vec<u32> = index.slots().map(|s| s.ino()).collect();
        assert_eq!(inos, [3, 11, 12]);
        assert!(index.get(12).is_some() && index.get(11).is_some());
    }

    #[test]
    fn lists_out_of_their_group_or_order_are_sorted_out() {
        // Group 0's list holds an inode of group 1, group 1's is unsorted with a repeat.
        let groups = vec![facts(&[3, 12]), facts(&[15, 11, 15])];
        let index = InodeIndex::from_groups(groups, 10);
        let inos: Vec<u32> = index.slots().map(|s| s.ino()).collect();
        assert_eq!(inos, [3, 11, 12, 15]);
        assert!([3, 11, 12, 15]
            .iter()
            .all(|&i| index.get(i).is_some_and(|s| s.ino() == i)));
        assert!(index.get(13).is_none() && index.get(0).is_none());
    }

    #[test]
    fn unsorted_facts_are_sorted_and_deduplicated() {
        let index = InodeIndex::new(facts(&[9, 3, 9, 1]), 8);
        let inos: Vec<u32> = index.slots().map(|s| s.ino()).collect();
        assert_eq!(inos, [1, 3, 9]);
        assert!(index.get(9).is_some() && index.get(2).is_none());
    }

    #[test]
    fn first_link_and_parent_keep_the_lowest() {
        let index = InodeIndex::new(facts(&[2, 7, 14]), 8);
        let dir = index.get(14).unwrap();
        dir.offer_parent(7);
        dir.offer_parent(2);
        dir.offer_link(9 << 32);
        dir.offer_link(3 << 32 | 5);
        assert_eq!((dir.parent(), dir.first_link()), (2, 3 << 32 | 5));
        let file = index.get(2);
        assert!(file.is_some_and(|f| !f.is_dir() && f.first_link() == u64::MAX));
    }
}
