//! Directory-to-path naming as libext2fs' `ext2fs_get_pathname` does it
//! (`lib/ext2fs/get_pathname.c`), for debugfs' `ncheck`: the parent chain is followed through each
//! directory's `..` entry, each component looked up by inode number in its parent, at most 32
//! levels (deeper chains start with `...`). Its quirks are kept because debugfs prints them: the
//! root names itself `/` (so ncheck prints `//name` under it), a directory whose `..` is itself
//! names itself `.`, a parent that is not a directory is shown as `<P>/<D>`, a missing name as
//! `???`, and names end at their first NUL byte (C strings).
//!
//! Why not `check::paths` or `namei`: the check names inodes from the parent links pass 2 counted
//! (what e2fsck knows after its passes), `namei` resolves paths forward from the root; ncheck's
//! text depends on what `ext2fs_dir_iterate` meets in each directory on the way up.
//!
//! Lookups (one directory scanned for one child) are cached, so naming many directories under
//! the same parents scans each parent once per child asked for.

use crate::error::LibError;
use crate::reader::dir::{self, IterEntry, ROOT_INO};
use crate::reader::fs::Filesystem;
use crate::reader::inode::Inode;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Mutex;

/// Levels followed before a path starts with `...` (the `maxdepth` libext2fs starts with).
pub const MAX_DEPTH: i32 = 32;

/// The bytes of a name up to its first NUL (how C's `%.*s`, `strncpy` and `strcat` see it).
pub fn c_name(name: &[u8]) -> &[u8] {
    name.iter()
        .position(|&b| b == 0)
        .map_or(name, |n| &name[..n])
}

/// `ext2fs_dir_iterate(fs, dir, 0, ...)`: the live entries (inode != 0) of directory `dir`, read
/// as libext2fs reads it: the inode with its checksum verified (`ext2fs_check_directory`), then
/// every block (inline areas first with their synthetic `.` and `..`). An error ends the walk
/// (entries before it were visited).
pub fn lib_dir_iterate(
    fs: &Filesystem,
    dir: u32,
    visit: &mut dyn FnMut(IterEntry<'_>) -> ControlFlow<()>,
) -> Result<(), LibError> {
    let raw = fs.read_inode_checked(dir, false)?;
    let inode = Inode::parse(&raw);
    iterate_live(fs, dir, &raw, &inode, false, visit)
}

/// [`lib_dir_iterate`] for a directory whose record is in hand (already verified), in a scan
/// that walks each directory once: its blocks are read past the block cache
/// ([`dir::iterate_dir_inode_once`]).
pub fn lib_dir_iterate_inode(
    fs: &Filesystem,
    dir: u32,
    raw: &[u8],
    inode: &Inode,
    visit: &mut dyn FnMut(IterEntry<'_>) -> ControlFlow<()>,
) -> Result<(), LibError> {
    iterate_live(fs, dir, raw, inode, true, visit)
}

/// The live entries of a directory in hand; `once`: read past the block cache.
fn iterate_live(
    fs: &Filesystem,
    dir: u32,
    raw: &[u8],
    inode: &Inode,
    once: bool,
    visit: &mut dyn FnMut(IterEntry<'_>) -> ControlFlow<()>,
) -> Result<(), LibError> {
    if !inode.is_dir() {
        return Err(LibError::NoDirectory);
    }
    let iterate = if once {
        dir::iterate_dir_inode_once
    } else {
        dir::iterate_dir_inode
    };
    iterate(fs, dir, raw, inode, false, &mut |entry| {
        if entry.inode == 0 {
            ControlFlow::Continue(())
        } else {
            visit(entry)
        }
    })
    .map_err(LibError::from)
}

/// What one scan of a directory for a child found (`get_pathname_proc`'s results).
#[derive(Clone, Debug)]
enum Lookup {
    /// The inode is not a directory (`EXT2_ET_NO_DIRECTORY`).
    NotDir,
    /// The scan failed.
    Failed(LibError),
    /// The last `..` seen before the child (0: none) and the child's name (`None`: not found).
    Found { parent: u32, name: Option<Vec<u8>> },
}

/// Names directories as `ext2fs_get_pathname` does, caching the directory scans.
pub struct PathNamer<'a> {
    fs: &'a Filesystem,
    lookups: Mutex<HashMap<(u32, u32), Lookup>>,
}

impl<'a> PathNamer<'a> {
    /// A namer over `fs`.
    pub fn new(fs: &'a Filesystem) -> PathNamer<'a> {
        PathNamer {
            fs,
            lookups: Mutex::new(HashMap::new()),
        }
    }

    /// What a full walk of directory `dir` (already done without error) found: its last `..`
    /// entry names `parent`. Saves the scan `pathname(dir, 0)` would make.
    pub fn seed_parent(&self, dir: u32, parent: u32) {
        self.lookups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((dir, 0))
            .or_insert(Lookup::Found { parent, name: None });
    }

    /// `ext2fs_get_pathname(fs, dir, ino)`: the path of `ino` in `dir` (`ino` 0, or equal to
    /// `dir`: the path of `dir` itself), or the error libext2fs returns.
    pub fn pathname(&self, dir: u32, ino: u32) -> Result<Vec<u8>, LibError> {
        let ino = if dir == ino { 0 } else { ino };
        self.pathname_at(dir, ino, MAX_DEPTH)
    }

    /// `ext2fs_get_pathname_int`.
    fn pathname_at(&self, dir: u32, ino: u32, depth: i32) -> Result<Vec<u8>, LibError> {
        if dir == ino {
            return Ok(if dir == ROOT_INO {
                b"/".to_vec()
            } else {
                b".".to_vec()
            });
        }
        if dir == 0 || depth < 0 {
            return Ok(b"...".to_vec());
        }
        let (parent, name) = match self.lookup(dir, ino) {
            Lookup::NotDir => {
                return Ok(if ino != 0 {
                    format!("<{dir}>/<{ino}>").into_bytes()
                } else {
                    format!("<{dir}>").into_bytes()
                });
            }
            Lookup::Failed(e) => return Err(e),
            Lookup::Found { parent, name } => (parent, name),
        };
        let parent_name = self.pathname_at(parent, dir, depth - 1)?;
        if ino == 0 {
            return Ok(parent_name);
        }
        // The parent's name is left out when it is one character ("/" or "."): the root's
        // children are "/name", not "//name".
        let mut out = if parent_name.len() > 1 {
            parent_name
        } else {
            Vec::new()
        };
        out.push(b'/');
        out.extend_from_slice(name.as_deref().unwrap_or(b"???"));
        Ok(out)
    }

    /// Scan `dir` for `ino` (cached): the last `..` entry before it, and its name.
    fn lookup(&self, dir: u32, ino: u32) -> Lookup {
        if let Some(cached) = self
            .lookups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(dir, ino))
        {
            return cached.clone();
        }
        let mut parent = 0;
        let mut name = None;
        let result = lib_dir_iterate(self.fs, dir, &mut |entry| {
            if entry.name_len == 2 && entry.name.starts_with(b"..") {
                parent = entry.inode;
            }
            if entry.inode == ino {
                name = Some(c_name(entry.name).to_vec());
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        let lookup = match result {
            Ok(()) => Lookup::Found { parent, name },
            Err(LibError::NoDirectory) => Lookup::NotDir,
            Err(e) => Lookup::Failed(e),
        };
        self.lookups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((dir, ino), lookup.clone());
        lookup
    }
}

#[cfg(test)]
mod tests {
    use super::c_name;

    #[test]
    fn names_end_at_the_first_nul() {
        assert_eq!(c_name(b"abc"), b"abc");
        assert_eq!(c_name(b"ab\0c"), b"ab");
        assert_eq!(c_name(b"\0"), b"");
    }
}
