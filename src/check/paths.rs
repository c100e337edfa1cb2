//! The paths that name inodes in findings (e2fsck's `print_pathname`, `ext2fs_get_pathname`):
//! resolved once, after the last pass, from the parent links pass 2 counted into the
//! [`InodeIndex`] and the directory entries read again.

use super::context::InodeIndex;
use super::Findings;
use crate::reader::dir;
use crate::reader::fs::Filesystem;
use crate::reader::inode::Inode;
use std::collections::{HashMap, HashSet};

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
    for (name, child) in dir::live_entries(fs, dir_ino, &raw, &inode) {
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
            .flat_map_iter(|dir_ino| {
                names_in_dir(fs, dir_ino, &non_dirs)
                    .into_iter()
                    .map(move |(c, n)| (c, dir_ino, n))
            })
            .collect();
        for (child, dir_ino, name) in found {
            let names = links.entry(child).or_default();
            if names.len() < MAX_PATHS_PER_INODE {
                names.push((dir_ino, name));
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
                .filter_map(|(dir_ino, name)| {
                    dir_path(fs, index, *dir_ino, &mut dir_paths)
                        .map(|p| join(&p, &name_string(name)))
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
    if let Some(cached) = cache.get(&ino) {
        return cached.clone();
    }
    // The chain up to the root, a known directory, a break or a loop (bounded).
    let mut chain = Vec::new();
    let mut seen = HashSet::new();
    let mut cur = ino;
    let prefix = loop {
        if cur == dir::ROOT_INO {
            break Some("/".to_string());
        }
        if let Some(cached) = cache.get(&cur) {
            break cached.clone();
        }
        let parent = index.get(cur).map_or(0, |s| s.parent());
        if parent == 0 || !seen.insert(cur) || chain.len() >= MAX_DEPTH {
            break None;
        }
        chain.push((cur, parent));
        cur = parent;
    };
    let mut path = prefix;
    for &(dir_ino, parent) in chain.iter().rev() {
        path = path.map(|parent_path| {
            let want: HashSet<u32> = [dir_ino].into();
            let name = names_in_dir(fs, parent, &want)
                .into_iter()
                .next()
                .map_or_else(|| format!("<{dir_ino}>"), |(_, n)| name_string(&n));
            join(&parent_path, &name)
        });
        cache.insert(dir_ino, path.clone());
    }
    cache.insert(ino, path.clone());
    path
}

/// Fill `paths` of every kept finding that names an inode.
pub fn annotate_paths(fs: &Filesystem, index: &InodeIndex, findings: &mut Findings) {
    let wanted: HashSet<u32> = findings.list.iter().filter_map(|x| x.inode).collect();
    if wanted.is_empty() {
        return;
    }
    let paths = resolve_paths(fs, index, &wanted);
    for finding in &mut findings.list {
        if let Some(finding_paths) = finding.inode.and_then(|i| paths.get(&i)) {
            finding.paths.clone_from(finding_paths);
        }
    }
}
