//! What passes 2, 3 and 4 share: the in-use inodes (as pass 1 decides them), and per inode the
//! directory references pass 2 counts (e2fsck's `inode_count` icount, `dir_info` parent and
//! dotdot), plus the path resolution that names inodes in findings.
//!
//! Memory: the walk's [`InodeFacts`] (16 bytes per in-use inode, taken over, not copied), one
//! 4-byte reference counter per in-use inode, 16 bytes per directory (parent, `..`, first name), and
//! the rank directory that finds an inode's slot: per group 12 bytes, plus, for groups where at
//! least one inode in 64 is in use, 12 bytes per 64 inodes of the group (at most 12 bytes per
//! in-use inode). A lookup is then a bit test and a popcount instead of a binary search over
//! every in-use inode; sparse groups fall back to a binary search within the group. Counters are
//! atomics so pass 2 runs over directories in parallel.

use super::walk::InodeFacts;
use crate::dir;
use crate::fs::Filesystem;
use crate::inode::Inode;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// File-type bits of i_mode.
pub const S_IFMT: u16 = 0xF000;
/// Directory type bits.
pub const S_IFDIR: u16 = 0x4000;

/// `ext2_file_type`: the directory entry file type for an inode mode (0 = unknown).
pub fn file_type_of_mode(mode: u16) -> u8 {
    match mode & S_IFMT {
        0x8000 => 1,
        0x4000 => 2,
        0x2000 => 3,
        0x6000 => 4,
        0x1000 => 5,
        0xC000 => 6,
        0xA000 => 7,
        _ => 0,
    }
}

/// One bitmap word of a dense group: which of its 64 inodes are in use, and how many in-use
/// inodes of the group come before it.
#[derive(Clone, Copy, Debug, Default)]
struct RankWord {
    bits: u64,
    rank: u32,
}

/// Where a group's in-use inodes are among the slots.
#[derive(Clone, Copy, Debug, Default)]
struct GroupRank {
    /// Slot of the group's first in-use inode.
    first: u32,
    /// Number of in-use inodes of the group.
    count: u32,
    /// First word in [`Rank::words`] of a dense group; `u32::MAX` for a sparse one.
    words: u32,
}

/// Inode number -> slot position, built once from the sorted inode numbers.
#[derive(Debug, Default)]
struct Rank {
    ipg: u32,
    groups: Vec<GroupRank>,
    words: Vec<RankWord>,
}

impl Rank {
    fn build(facts: &[InodeFacts], ipg: u32) -> Rank {
        let ipg = ipg.max(1);
        let group_of = |ino: u32| (ino.saturating_sub(1) / ipg) as usize;
        let ngroups = facts.last().map_or(0, |f| group_of(f.ino) + 1);
        let mut groups = vec![GroupRank::default(); ngroups];
        // The facts are sorted: one division per group, not per inode.
        let mut i = 0;
        while let Some(f) = facts.get(i) {
            let g = group_of(f.ino);
            let end = (g as u64 + 1) * u64::from(ipg);
            let count = facts[i..]
                .iter()
                .take_while(|f| u64::from(f.ino.saturating_sub(1)) < end)
                .count();
            groups[g] = GroupRank {
                first: i as u32,
                count: count as u32,
                words: u32::MAX,
            };
            i += count.max(1);
        }
        let words_per_group = ipg.div_ceil(64) as usize;
        let mut words = Vec::new();
        for g in groups.iter_mut() {
            // Dense when a word per 64 inodes costs at most one word per in-use inode.
            if g.count == 0 || (g.count as usize) < words_per_group {
                g.words = u32::MAX;
                continue;
            }
            let Ok(base) = u32::try_from(words.len()) else {
                g.words = u32::MAX;
                continue;
            };
            g.words = base;
            words.resize(words.len() + words_per_group, RankWord::default());
            let slots = &facts[g.first as usize..(g.first + g.count) as usize];
            let base_ino = slots.first().map_or(0, |f| (f.ino - 1) / ipg * ipg);
            for f in slots {
                let bit = f.ino - 1 - base_ino;
                words[base as usize + (bit / 64) as usize].bits |= 1 << (bit % 64);
            }
            let mut rank = 0;
            for w in &mut words[base as usize..base as usize + words_per_group] {
                w.rank = rank;
                rank += w.bits.count_ones();
            }
        }
        Rank { ipg, groups, words }
    }

    fn find(&self, facts: &[InodeFacts], ino: u32) -> Option<usize> {
        let n = ino.checked_sub(1)?;
        let g = n / self.ipg;
        self.find_in_group(facts, ino, g, n - g * self.ipg)
    }

    /// [`Rank::find`] with `ino - 1` already split into group `group` and index `bit` in it.
    fn find_in_group(&self, facts: &[InodeFacts], ino: u32, group: u32, bit: u32) -> Option<usize> {
        let g = self.groups.get(group as usize)?;
        if g.count == 0 {
            return None;
        }
        let first = g.first as usize;
        if g.words == u32::MAX {
            let slots = facts.get(first..first + g.count as usize)?;
            return slots
                .binary_search_by_key(&ino, |f| f.ino)
                .ok()
                .map(|i| first + i);
        }
        let w = self.words.get(g.words as usize + (bit / 64) as usize)?;
        let below = w.bits & ((1u64 << (bit % 64)) - 1);
        ((w.bits >> (bit % 64)) & 1 != 0)
            .then(|| first + w.rank as usize + below.count_ones() as usize)
    }
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

/// The in-use inodes, sorted by number, with pass 2's counters.
#[derive(Debug, Default)]
pub struct InodeIndex {
    facts: Vec<InodeFacts>,
    /// Per slot: every directory entry naming it, `.` and `..` included (e2fsck's
    /// inode_count).
    counts: Vec<AtomicU32>,
    /// Slot positions of the directories, ascending.
    dirs: Vec<u32>,
    /// Per directory, in the order of `dirs`.
    links: Vec<DirLinks>,
    rank: Rank,
}

/// An in-use inode as pass 1 saw it, with pass 2's counters.
#[derive(Clone, Copy, Debug)]
pub struct InodeSlot<'a> {
    index: &'a InodeIndex,
    pos: usize,
}

impl<'a> InodeSlot<'a> {
    fn facts(&self) -> &'a InodeFacts {
        &self.index.facts[self.pos]
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
        self.mode() & S_IFMT == S_IFDIR
    }
    /// Every directory entry naming this inode, `.` and `..` included.
    pub fn refs(&self) -> u32 {
        self.index.counts[self.pos].load(Relaxed)
    }
    /// Record one reference from a directory entry.
    pub fn count_reference(&self) {
        self.index.counts[self.pos].fetch_add(1, Relaxed);
    }
    fn links(&self) -> Option<&'a DirLinks> {
        let pos = u32::try_from(self.pos).ok()?;
        let d = self.index.dirs.binary_search(&pos).ok()?;
        self.index.links.get(d)
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
        if let Some(l) = self.links() {
            l.dotdot.store(ino, Relaxed);
        }
    }
    /// For a directory: `dir` holds a name for it (the smallest such directory is kept).
    pub fn offer_parent(&self, dir: u32) {
        if let Some(l) = self.links() {
            let _ = l.parent.fetch_update(Relaxed, Relaxed, |cur| {
                (cur == 0 || dir < cur).then_some(dir)
            });
        }
    }
    /// For a directory: a name for it with ordering key `key` (the lowest is kept).
    pub fn offer_link(&self, key: u64) {
        if let Some(l) = self.links() {
            l.first_link.fetch_min(key, Relaxed);
        }
    }
    /// For a directory: the lowest key offered (`u64::MAX` = none).
    pub fn first_link(&self) -> u64 {
        self.links()
            .map_or(u64::MAX, |l| l.first_link.load(Relaxed))
    }
    /// For a directory: its parent is `dir`, whatever was recorded.
    pub fn set_parent(&self, dir: u32) {
        if let Some(l) = self.links() {
            l.parent.store(dir, Relaxed);
        }
    }
}

impl InodeIndex {
    /// Build from the walk's facts (sorted by inode number; re-sorted and de-duplicated if not,
    /// duplicates keeping the first). `ipg` is the inodes per group.
    pub fn new(mut facts: Vec<InodeFacts>, ipg: u32) -> InodeIndex {
        if !facts.is_sorted_by(|a, b| a.ino < b.ino) {
            facts.sort_by_key(|f| f.ino);
            facts.dedup_by_key(|f| f.ino);
        }
        let (rank, (counts, dirs)) = rayon::join(
            || Rank::build(&facts, ipg),
            || {
                let counts = (0..facts.len()).map(|_| AtomicU32::new(0)).collect();
                let dirs: Vec<u32> = facts
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.is_dir())
                    .filter_map(|(i, _)| u32::try_from(i).ok())
                    .collect();
                (counts, dirs)
            },
        );
        let links = dirs.iter().map(|_| DirLinks::default()).collect();
        InodeIndex {
            facts,
            counts,
            dirs,
            links,
            rank,
        }
    }
    /// The slot of `ino` when it is in use.
    pub fn get(&self, ino: u32) -> Option<InodeSlot<'_>> {
        self.rank
            .find(&self.facts, ino)
            .filter(|&pos| self.facts.get(pos).is_some_and(|f| f.ino == ino))
            .map(|pos| InodeSlot { index: self, pos })
    }
    /// [`InodeIndex::get`] for a caller that has split `ino - 1` by the inodes per group
    /// (`ino - 1 = group * ipg + index`) already.
    pub fn get_in_group(&self, ino: u32, group: u32, index: u32) -> Option<InodeSlot<'_>> {
        if index >= self.rank.ipg {
            return self.get(ino);
        }
        self.rank
            .find_in_group(&self.facts, ino, group, index)
            .filter(|&pos| self.facts.get(pos).is_some_and(|f| f.ino == ino))
            .map(|pos| InodeSlot { index: self, pos })
    }
    /// Every in-use inode, by number.
    pub fn slots(&self) -> impl ExactSizeIterator<Item = InodeSlot<'_>> + '_ {
        (0..self.facts.len()).map(move |pos| InodeSlot { index: self, pos })
    }
    /// Every in-use directory, by number.
    pub fn dirs(&self) -> impl ExactSizeIterator<Item = InodeSlot<'_>> + '_ {
        self.dirs.iter().map(move |&pos| InodeSlot {
            index: self,
            pos: pos as usize,
        })
    }
    /// Number of in-use directories.
    pub fn dir_count(&self) -> usize {
        self.dirs.len()
    }
    /// The `i`-th directory (in inode order).
    pub fn dir(&self, i: usize) -> InodeSlot<'_> {
        InodeSlot {
            index: self,
            pos: self.dirs[i] as usize,
        }
    }
    /// Position of directory `ino` among [`InodeIndex::dirs`].
    pub fn dir_position(&self, ino: u32) -> Option<usize> {
        let s = self.get(ino)?;
        self.dirs.binary_search(&u32::try_from(s.pos).ok()?).ok()
    }
}

/// Longest path we build, in components: deeper chains are cut with `...`.
const MAX_DEPTH: usize = 4096;
/// Paths listed per inode (hard links beyond are not named).
pub const MAX_PATHS_PER_INODE: usize = 4;

fn name_string(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

/// Names of `wanted` children found in directory `dir`: (child, name) pairs. Bounded by the
/// directory's blocks.
fn names_in_dir(fs: &Filesystem, dir_ino: u32, wanted: &HashSet<u32>) -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    let Ok(raw) = fs.inode_raw(dir_ino) else {
        return out;
    };
    let raw = raw.to_vec();
    let inode = Inode::parse(&raw);
    if !inode.is_dir() {
        return out;
    }
    for (name, child) in super::pass2::entries_of(fs, dir_ino, &raw, &inode) {
        if wanted.contains(&child) && name != b"." && name != b".." {
            out.push((child, name));
        }
    }
    out
}

/// Paths of the inodes in `wanted`, from the parent map pass 2 built. Runs only when there are
/// findings: one scan of every directory for the (non-directory) inodes wanted, then the parent
/// chains of the directories involved, each read once. Unconnected chains end in `???`.
pub fn resolve_paths(
    fs: &Filesystem,
    index: &InodeIndex,
    wanted: &HashSet<u32>,
) -> HashMap<u32, Vec<String>> {
    use rayon::prelude::*;
    let mut out: HashMap<u32, Vec<String>> = HashMap::new();
    if wanted.is_empty() {
        return out;
    }
    // Where each wanted inode is named: (dir, name), at most a few per inode.
    let non_dirs: HashSet<u32> = wanted
        .iter()
        .copied()
        .filter(|&i| i != dir::ROOT_INO && !index.get(i).is_some_and(|s| s.is_dir()))
        .collect();
    let mut links: HashMap<u32, Vec<(u32, Vec<u8>)>> = HashMap::new();
    if !non_dirs.is_empty() {
        let found: Vec<(u32, u32, Vec<u8>)> = (0..index.dir_count())
            .into_par_iter()
            .map(|i| index.dir(i).ino())
            .flat_map_iter(|d| {
                names_in_dir(fs, d, &non_dirs)
                    .into_iter()
                    .map(move |(c, n)| (c, d, n))
            })
            .collect();
        for (child, d, name) in found {
            let v = links.entry(child).or_default();
            if v.len() < MAX_PATHS_PER_INODE {
                v.push((d, name));
            }
        }
    }
    let mut dir_paths: HashMap<u32, Option<String>> = HashMap::new();
    for &ino in wanted {
        let paths: Vec<String> = if ino == dir::ROOT_INO {
            vec!["/".into()]
        } else if index.get(ino).is_some_and(|s| s.is_dir()) {
            dir_path(fs, index, ino, &mut dir_paths)
                .into_iter()
                .collect()
        } else {
            links
                .get(&ino)
                .into_iter()
                .flatten()
                .filter_map(|(d, name)| {
                    dir_path(fs, index, *d, &mut dir_paths).map(|p| join(&p, &name_string(name)))
                })
                .collect()
        };
        if !paths.is_empty() {
            out.insert(ino, paths);
        }
    }
    out
}

fn join(dir: &str, name: &str) -> String {
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Path of directory `ino` by its parent chain; components are looked up in each parent. None
/// when the chain does not reach the root (unconnected, or a loop).
fn dir_path(
    fs: &Filesystem,
    index: &InodeIndex,
    ino: u32,
    cache: &mut HashMap<u32, Option<String>>,
) -> Option<String> {
    if let Some(p) = cache.get(&ino) {
        return p.clone();
    }
    // The chain up to the root, a known directory, a break or a loop (bounded).
    let mut chain = Vec::new();
    let mut seen = HashSet::new();
    let mut cur = ino;
    let prefix = loop {
        if cur == dir::ROOT_INO {
            break Some("/".to_string());
        }
        if let Some(p) = cache.get(&cur) {
            break p.clone();
        }
        let parent = index.get(cur).map_or(0, |s| s.parent());
        if parent == 0 || !seen.insert(cur) || chain.len() >= MAX_DEPTH {
            break None;
        }
        chain.push((cur, parent));
        cur = parent;
    };
    let mut path = prefix;
    for &(d, parent) in chain.iter().rev() {
        path = path.map(|p| {
            let want: HashSet<u32> = [d].into();
            let name = names_in_dir(fs, parent, &want)
                .into_iter()
                .next()
                .map_or_else(|| format!("<{d}>"), |(_, n)| name_string(&n));
            join(&p, &name)
        });
        cache.insert(d, path.clone());
    }
    cache.insert(ino, path.clone());
    path
}

/// Passes 2, 3 and 4 over the in-use inodes the walk found, then the paths of every
/// inode-level finding of the whole check (resolved only when there are such findings).
pub fn check_namespace(fs: &Filesystem, walk: super::walk::Walk, f: &mut super::Findings) {
    let orphans = walk.orphans;
    let extras = walk.extras;
    let index = InodeIndex::new(walk.inodes, fs.geo.inodes_per_group);
    let p2 = super::pass2::run(fs, &index, &extras, f);
    super::pass3::run(&index, &p2, fs.geo.inodes_per_group, f);
    super::pass4::run(fs, &index, &orphans, &extras, f);
    annotate_paths(fs, &index, f);
}

/// Fill `paths` of every kept finding that names an inode.
pub fn annotate_paths(fs: &Filesystem, index: &InodeIndex, f: &mut super::Findings) {
    let wanted: HashSet<u32> = f.list.iter().filter_map(|x| x.inode).collect();
    if wanted.is_empty() {
        return;
    }
    let paths = resolve_paths(fs, index, &wanted);
    for x in &mut f.list {
        if let Some(p) = x.inode.and_then(|i| paths.get(&i)) {
            x.paths.clone_from(p);
        }
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
            let want = inos.binary_search(&ino).ok();
            let got = index.get(ino).map(|s| s.pos);
            assert_eq!(got, want, "inode {ino}");
            if ino > 0 {
                let g = (ino - 1) / ipg;
                let got = index.get_in_group(ino, g, ino - 1 - g * ipg).map(|s| s.pos);
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
    fn unsorted_facts_are_sorted_and_deduplicated() {
        let index = InodeIndex::new(facts(&[9, 3, 9, 1]), 8);
        let inos: Vec<u32> = index.slots().map(|s| s.ino()).collect();
        assert_eq!(inos, [1, 3, 9]);
        assert!(index.get(9).is_some() && index.get(2).is_none());
    }

    #[test]
    fn first_link_and_parent_keep_the_lowest() {
        let index = InodeIndex::new(facts(&[2, 7, 14]), 8);
        let d = index.get(14).unwrap();
        d.offer_parent(7);
        d.offer_parent(2);
        d.offer_link(9 << 32);
        d.offer_link(3 << 32 | 5);
        assert_eq!((d.parent(), d.first_link()), (2, 3 << 32 | 5));
        let file = index.get(2);
        assert!(file.is_some_and(|f| !f.is_dir() && f.first_link() == u64::MAX));
    }
}
