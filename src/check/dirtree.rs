//! What passes 2, 3 and 4 share: the in-use inodes (as pass 1 decides them), and per inode the
//! directory references pass 2 counts (e2fsck's `inode_count` icount, `dir_info` parent and
//! dotdot), plus the path resolution that names inodes in findings.
//!
//! Memory: one [`InodeSlot`] (28 bytes) per in-use inode, sorted by inode number so lookups are a
//! binary search, and nothing per free inode. Counters are atomics so pass 2 runs over
//! directories in parallel.

use crate::dir;
use crate::fs::Filesystem;
use crate::inode::Inode;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// File-type bits of i_mode.
pub const S_IFMT: u16 = 0xF000;
/// Directory type bits.
pub const S_IFDIR: u16 = 0x4000;

/// An in-use inode as pass 1 saw it, with pass 2's counters.
#[derive(Debug)]
pub struct InodeSlot {
    pub ino: u32,
    pub mode: u16,
    pub links_count: u16,
    pub flags: u32,
    /// No blocks mapped: e2fsck's "zero-length" for unattached inodes.
    pub no_blocks: bool,
    /// Every directory entry naming this inode, `.` and `..` included (e2fsck's inode_count).
    pub refs: AtomicU32,
    /// Entries other than `.` and `..` (names in directories).
    pub names: AtomicU32,
    /// For a directory: the smallest directory inode holding a name for it (0 = none yet).
    pub parent: AtomicU32,
    /// For a directory: the inode its `..` entry names (0 = none).
    pub dotdot: AtomicU32,
}

impl InodeSlot {
    /// A slot for an in-use inode, from what the walk kept of it.
    pub fn from_facts(f: &super::walk::InodeFacts) -> InodeSlot {
        InodeSlot {
            ino: f.ino,
            mode: f.mode,
            links_count: f.links_count,
            flags: f.flags,
            no_blocks: f.blocks == 0,
            refs: AtomicU32::new(0),
            names: AtomicU32::new(0),
            parent: AtomicU32::new(0),
            dotdot: AtomicU32::new(0),
        }
    }
    /// True for a directory.
    pub fn is_dir(&self) -> bool {
        self.mode & S_IFMT == S_IFDIR
    }
}

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

/// The in-use inodes, sorted by number.
#[derive(Debug, Default)]
pub struct InodeIndex {
    slots: Vec<InodeSlot>,
}

impl InodeIndex {
    /// Build from slots in any order (duplicates keep the first).
    pub fn from_slots(mut slots: Vec<InodeSlot>) -> InodeIndex {
        slots.sort_by_key(|s| s.ino);
        slots.dedup_by_key(|s| s.ino);
        InodeIndex { slots }
    }
    /// The slot of `ino` when it is in use.
    pub fn get(&self, ino: u32) -> Option<&InodeSlot> {
        self.slots
            .binary_search_by_key(&ino, |s| s.ino)
            .ok()
            .map(|i| &self.slots[i])
    }
    /// Every in-use inode, by number.
    pub fn slots(&self) -> &[InodeSlot] {
        &self.slots
    }
}

/// Record one reference from a directory entry (`dot` for `.` and `..`).
pub fn count_reference(slot: &InodeSlot, dot: bool) {
    slot.refs.fetch_add(1, Relaxed);
    if !dot {
        slot.names.fetch_add(1, Relaxed);
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
        let found: Vec<(u32, u32, Vec<u8>)> = index
            .slots()
            .par_iter()
            .filter(|s| s.is_dir())
            .flat_map_iter(|s| {
                names_in_dir(fs, s.ino, &non_dirs)
                    .into_iter()
                    .map(move |(c, n)| (c, s.ino, n))
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
        let parent = index.get(cur).map_or(0, |s| s.parent.load(Relaxed));
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
    let index = InodeIndex::from_slots(walk.inodes.iter().map(InodeSlot::from_facts).collect());
    drop(walk.inodes);
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
