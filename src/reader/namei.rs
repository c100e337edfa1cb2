//! Path resolution as libext2fs' `ext2fs_namei` does it for debugfs (`lib/ext2fs/namei.c`):
//! components are looked up from the root, a symbolic link met in an intermediate component is
//! followed (absolute targets from the root, relative ones from the directory holding the link),
//! the last component is followed only when asked (`ext2fs_namei_follow`). Nesting is limited to
//! [`MAX_NESTED_LINKS`] as `EXT2FS_MAX_NESTED_LINKS`; a total of [`MAX_FOLLOWS`] links per
//! resolution (the kernel's MAXSYMLINKS) also bounds wide link fan-out, which libext2fs does not.

use crate::error::{Error, Result};
use crate::reader::dir::{self, ROOT_INO};
use crate::reader::fileblocks;
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, Inode};

/// Deepest nesting of symbolic links (`EXT2FS_MAX_NESTED_LINKS`).
pub const MAX_NESTED_LINKS: u32 = 8;
/// Most links followed in one resolution.
pub const MAX_FOLLOWS: u32 = 40;
/// Longest symlink target read (ext4 keeps targets within one block).
const MAX_TARGET: u64 = 65536;

struct Namei<'a> {
    fs: &'a Filesystem,
    follows: u32,
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The target of symlink `ino` (fast, inline or in its first data block).
pub fn symlink_target(fs: &Filesystem, ino: u32, inode: &Inode) -> Result<Vec<u8>> {
    if !inode.is_symlink() {
        return Err(Error::Invalid(format!(
            "inode {ino} is not a symbolic link"
        )));
    }
    let size = inode.size;
    if size > MAX_TARGET.min(fs.block_size()) {
        return Err(Error::corrupt(
            crate::ProblemKind::Symlink,
            format!("symbolic link {ino}: target of {size} bytes is longer than a block"),
        ));
    }
    let len = size as usize;
    if inode.is_fast_symlink() && !inode.has_flag(inode::INLINE_DATA_FL) {
        return Ok(inode.block.get(..len).unwrap_or(&inode.block).to_vec());
    }
    if inode.has_flag(inode::INLINE_DATA_FL) {
        let raw = fs.inode_raw(ino)?;
        let xa = inode::inode_xattrs(fs, &raw, inode);
        let mut target = inode.block.to_vec();
        target.extend_from_slice(xa.inline_data().unwrap_or(&[]));
        target.truncate(len);
        return Ok(target);
    }
    let blk = fileblocks::map_block(fs, ino, inode, 0)?.ok_or_else(|| {
        Error::corrupt(
            crate::ProblemKind::Symlink,
            format!("symbolic link {ino}: no block holds its target"),
        )
    })?;
    let block = fs.block(blk)?;
    Ok(block.get(..len).unwrap_or(&block).to_vec())
}

impl Namei<'_> {
    /// Resolve `path` starting at `start` (absolute paths start at the root); `shown` is how the
    /// path reads in messages.
    fn walk(&mut self, start: u32, path: &[u8], follow_last: bool, depth: u32) -> Result<u32> {
        let (mut dir, rest) = match path.strip_prefix(b"/") {
            Some(r) => (ROOT_INO, r),
            None => (start, path),
        };
        let comps: Vec<&[u8]> = rest
            .split(|&c| c == b'/')
            .filter(|c| !c.is_empty())
            .collect();
        let mut shown: Vec<u8> = if path.starts_with(b"/") {
            b"/".to_vec()
        } else {
            Vec::new()
        };
        for (index, comp) in comps.iter().enumerate() {
            let raw = self.fs.inode_raw(dir)?;
            let di = Inode::parse(&raw);
            if !di.is_dir() {
                return Err(Error::Invalid(format!(
                    "not a directory: {} (inode {dir}, {})",
                    show(shown.strip_suffix(b"/").unwrap_or(&shown)),
                    di.type_name()
                )));
            }
            let parent_shown = match shown.as_slice() {
                [] => ".".to_string(),
                b"/" => "/".to_string(),
                s => show(s.strip_suffix(b"/").unwrap_or(s)),
            };
            shown.extend_from_slice(comp);
            let ino = dir::lookup(self.fs, dir, comp)?.ok_or_else(|| {
                Error::Invalid(format!(
                    "no such file or directory: `{}` is not in {parent_shown}",
                    show(comp)
                ))
            })?;
            let last = index + 1 == comps.len();
            if last && !follow_last {
                return Ok(ino);
            }
            let next = self.follow(dir, ino, depth)?;
            if last {
                return Ok(next);
            }
            dir = next;
            shown.push(b'/');
        }
        Ok(dir)
    }

    /// `follow_link`: the inode a link leads to, or `ino` itself when it is not a link.
    fn follow(&mut self, dir: u32, ino: u32, depth: u32) -> Result<u32> {
        let raw = self.fs.inode_raw(ino)?;
        let inode = Inode::parse(&raw);
        if !inode.is_symlink() {
            return Ok(ino);
        }
        if depth >= MAX_NESTED_LINKS || self.follows >= MAX_FOLLOWS {
            return Err(Error::Invalid(format!(
                "too many symbolic links (more than {MAX_NESTED_LINKS} nested or {MAX_FOLLOWS} in all)"
            )));
        }
        self.follows += 1;
        let target = symlink_target(self.fs, ino, &inode)?;
        let target = target.split(|&c| c == 0).next().unwrap_or(&[]);
        self.walk(dir, target, true, depth + 1)
    }
}

/// Resolve `path` from the root like `ext2fs_namei`: symlinks in intermediate components are
/// followed, the last component is not. Empty components (`a//b`) are skipped; `/` is the root.
pub fn resolve(fs: &Filesystem, path: &[u8]) -> Result<u32> {
    Namei { fs, follows: 0 }.walk(ROOT_INO, path, false, 0)
}

/// Resolve `path` and follow a symlink in the last component too (`ext2fs_namei_follow`).
pub fn resolve_follow(fs: &Filesystem, path: &[u8]) -> Result<u32> {
    Namei { fs, follows: 0 }.walk(ROOT_INO, path, true, 0)
}

/// Longest path we resolve, in components (guards against absurd input, not disk data).
const MAX_COMPONENTS: usize = 4096;

/// Resolve an absolute (or root-relative) path to an inode number as debugfs does
/// ([`resolve`]: symlinks in intermediate components are followed, the last component is not);
/// a path longer than 4096 names of 256 bytes is refused.
pub fn resolve_path(fs: &Filesystem, path: &str) -> Result<u32> {
    if path.len() > MAX_COMPONENTS * 256 {
        return Err(Error::Invalid("path too long".into()));
    }
    resolve(fs, path.as_bytes())
}

/// A command-line target: `<N>` or `N` (all digits) is an inode number, anything else a path.
pub fn parse_target(fs: &Filesystem, target: &str) -> Result<u32> {
    let digits = target
        .strip_prefix('<')
        .and_then(|s| s.strip_suffix('>'))
        .unwrap_or(target);
    if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
        return digits
            .parse::<u32>()
            .map_err(|_| Error::Invalid(format!("{target}: not an inode number")));
    }
    resolve(fs, target.as_bytes())
}
