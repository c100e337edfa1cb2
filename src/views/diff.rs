//! `diff A B`: two filesystems compared as a user sees them (each side an image or a directory
//! tree), and between two images the superblock fields that differ.
//!
//! Between two images, each image's inode tables are first walked with the shared inode walk
//! (`reader::walk`, both images at once, groups in parallel), keeping a fingerprint of each
//! in-use inode's metadata (the private `index` module). Then both trees are walked together,
//! directory by directory: each pair of directories is listed, sorted by name and merged, and each pair of
//! subdirectories is handed to a rayon task (the same per-directory parallel walk as
//! `extract`). Two paths whose fingerprints agree are not read again; the others are rendered
//! in full (`image_meta`) and compared field by field. Against a tree, the image side is read
//! inode by inode as the directories name them. A name on one side only is reported once, at
//! the top of what is missing (as `diff -r` says "Only in"). Contents of regular files of the
//! same size are compared by reading both sides' mapped segments in chunks (the private
//! `content` module): never held whole, and holes common to both sides are not read, so the work
//! follows the files' extents, never a size field.
//!
//! Times: between two images mtime, atime, ctime and crtime are compared; against a tree only
//! mtime, in whole seconds (no system call sets a ctime or crtime, reading a tree moves its
//! atimes, and `mke2fs -d` keeps whole seconds). A tree's
//! directory sizes are its filesystem's business and are not compared; an image's empty
//! `lost+found` missing from a tree is what `mke2fs -d` adds, not a change, and neither are the
//! root directory's times (`mke2fs -d` gives it the build's).

mod content;
mod index;

use super::extract::{self, MAX_DEPTH};
use crate::error::{Error, Result};
use crate::reader::dir::{ENCRYPT_FL, ROOT_INO};
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, DataMap, Inode};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One side of the comparison.
pub enum Side<'a> {
    /// A filesystem image (opened by the caller).
    Image(&'a Filesystem),
    /// A directory tree on a mounted filesystem.
    Tree(PathBuf),
}

/// Fields that can be left out of the comparison (`--ignore`).
pub const FIELDS: &[&str] = &[
    "type",
    "content",
    "size",
    "mode",
    "owner",
    "times",
    "mtime",
    "atime",
    "ctime",
    "crtime",
    "xattrs",
    "target",
    "links",
    "device",
    "inode",
    "superblock",
    "uuid",
    "hash_seed",
];

/// What a user sees of one path.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Meta {
    /// file, dir, symlink, fifo, socket, chardev, blockdev.
    #[serde(rename = "type")]
    pub kind: String,
    /// Size in bytes (not for directories).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Permission bits with setuid/setgid/sticky, octal.
    pub mode: String,
    /// Owner as `UID:GID`.
    pub owner: String,
    /// Modification time, `SECS.NSEC`.
    pub mtime: String,
    /// Access time (images only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atime: Option<String>,
    /// Change time (images only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctime: Option<String>,
    /// Creation time (images with large inodes only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crtime: Option<String>,
    /// Extended attributes, name to hex value (POSIX ACLs in the VFS form `getxattr` returns).
    pub xattrs: BTreeMap<String, String>,
    /// Symlink target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Device numbers `MAJOR:MINOR`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Link count.
    pub links: u64,
    /// Inode number.
    pub inode: u64,
}

/// What happened to one path.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Only in B.
    Added,
    /// Only in A.
    Removed,
    /// In both, differing in `fields`.
    Modified,
}

/// One changed path.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Change {
    /// Path from the root of the compared trees, starting with `/`.
    pub path: String,
    /// added, removed or modified.
    pub kind: Kind,
    /// Fields that differ (`xattr.NAME` for one attribute), for modified paths.
    pub fields: Vec<String>,
    /// The path in A (absent when added).
    pub a: Option<Meta>,
    /// The path in B (absent when removed).
    pub b: Option<Meta>,
}

/// One superblock field that differs between two images.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct SuperblockChange {
    /// The field as `dump --json` names it.
    pub field: String,
    /// In A.
    pub a: serde_json::Value,
    /// In B.
    pub b: serde_json::Value,
}

/// The result of a comparison.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Report {
    /// Changed paths, sorted.
    pub changes: Vec<Change>,
    /// Superblock fields that differ (two images only; filled by the caller, which knows the
    /// superblock's JSON form, with [`object_changes`]).
    pub superblock: Vec<SuperblockChange>,
    /// Entries that could not be read on either side (the report is then incomplete).
    pub unreadable: Vec<String>,
}

/// What to compare.
#[derive(Clone, Debug, Default)]
pub struct DiffOptions {
    /// Fields left out (see [`FIELDS`]).
    pub ignore: BTreeSet<String>,
    /// Compare inode numbers (off by default: two builds seldom place files alike).
    pub inodes: bool,
}

impl DiffOptions {
    fn ignores(&self, field: &str) -> bool {
        let time = matches!(field, "mtime" | "atime" | "ctime" | "crtime");
        self.ignore.contains(field)
            || (time && self.ignore.contains("times"))
            || (field.starts_with("xattr.") && self.ignore.contains("xattrs"))
    }
}

/// One entry of a directory listing: where to find it on its side.
#[derive(Clone)]
enum Handle {
    Ino(u32),
    Path(PathBuf),
}

struct Walker<'a> {
    a: &'a Side<'a>,
    b: &'a Side<'a>,
    opts: &'a DiffOptions,
    images: bool,
    /// Between two images: each image's in-use inodes from the inode walk, `[a, b]`.
    index: Option<[index::Index; 2]>,
    changes: Mutex<Vec<Change>>,
    unreadable: Mutex<Vec<String>>,
    /// Paths of multiply linked non-directories, for the link-group comparison: (path, side,
    /// inode, member) with `member` false for the other side's inode of a path linked on one
    /// side only (kept to read it again by number).
    linked: Mutex<Vec<(String, bool, u64, bool)>>,
    /// Image directories already listed, per side: a directory reached twice (a loop, or a
    /// linked directory in a damaged image) is not descended again, as `extract` does, or a
    /// few loops would multiply the walk up to [`MAX_DEPTH`] levels.
    visited: [Mutex<HashSet<u32>>; 2],
    /// The first read of bytes a metadata-only image does not hold: the comparison fails.
    absent: Mutex<Option<String>>,
    /// Set with `absent`: the walk stops.
    stop: std::sync::atomic::AtomicBool,
}

fn kind_of(mode: u32) -> &'static str {
    match mode & 0o170000 {
        0o040000 => "dir",
        0o100000 => "file",
        0o120000 => "symlink",
        0o010000 => "fifo",
        0o140000 => "socket",
        0o020000 => "chardev",
        0o060000 => "blockdev",
        _ => "unknown",
    }
}

fn time_text(secs: i64, nsec: u32) -> String {
    format!("{secs}.{nsec:09}")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The metadata of image inode `ino` as a user sees it (read again: for paths whose
/// fingerprints differ, and when one side is a tree).
fn image_meta(fs: &Filesystem, ino: u32) -> Result<Meta> {
    let raw = fs.inode_raw(ino)?;
    image_meta_of(fs, ino, &raw, &Inode::parse(&raw))
}

/// The metadata of image inode `ino` stored as `raw` (parsed as `inode`): what both
/// [`image_meta`] and the inode walk's fingerprints render.
fn image_meta_of(fs: &Filesystem, ino: u32, raw: &[u8], inode: &Inode) -> Result<Meta> {
    if inode.has_flag(ENCRYPT_FL) {
        return Err(Error::Invalid(format!(
            "inode {ino} is encrypted (fscrypt): not compared"
        )));
    }
    let extra = fs.sb.inode_size() > 128 && inode.extra_isize >= 8;
    let stamp = |secs: u32, time_extra: u32| {
        if extra {
            time_text(
                inode::time_secs(secs, time_extra),
                inode::time_nsec(time_extra),
            )
        } else {
            time_text(i64::from(secs as i32), 0)
        }
    };
    let xa = inode::inode_xattrs(fs, raw, inode);
    let mut xattrs = BTreeMap::new();
    for item in &xa.items {
        if item.name == "system.data"
            || item.name.starts_with("encryption.")
            || item.name.starts_with("index")
        {
            continue;
        }
        // At most XATTR_SIZE_MAX bytes (no larger value can be set), whatever the entry says.
        let value = extract::xattr_value(fs, item)
            .map_err(|why| Error::Invalid(format!("inode {ino}: xattr {}: {why}", item.name)))?;
        let value = if item.name.starts_with("system.posix_acl_") {
            extract::acl_to_vfs(&value)?
        } else {
            value
        };
        xattrs.insert(item.name.clone(), hex(&value));
    }
    let mode = u32::from(inode.mode);
    let kind = kind_of(mode);
    let target = (kind == "symlink")
        .then(|| extract::symlink_target(fs, ino, inode, &xa))
        .transpose()
        .map_err(|p| Error::Invalid(p.message))?
        .map(|t| String::from_utf8_lossy(&t).into_owned());
    let device = matches!(kind, "chardev" | "blockdev").then(|| {
        match inode::data_map(fs, ino, inode, None) {
            DataMap::Device { major, minor, .. } => format!("{major}:{minor}"),
            _ => "0:0".into(),
        }
    });
    let meta = Meta {
        kind: kind.into(),
        size: (kind != "dir").then_some(inode.size),
        mode: format!("{:04o}", mode & 0o7777),
        owner: format!("{}:{}", inode.uid, inode.gid),
        mtime: stamp(inode.mtime, inode.mtime_extra),
        atime: Some(stamp(inode.atime, inode.atime_extra)),
        ctime: Some(stamp(inode.ctime, inode.ctime_extra)),
        crtime: (fs.sb.inode_size() > 128 && inode.extra_isize >= 24).then(|| {
            time_text(
                inode::time_secs(inode.crtime, inode.crtime_extra),
                inode::time_nsec(inode.crtime_extra),
            )
        }),
        xattrs,
        target,
        device,
        links: u64::from(inode.links_count),
        inode: u64::from(ino),
    };
    Ok(meta)
}

fn tree_meta(path: &Path) -> Result<Meta> {
    use std::os::unix::fs::MetadataExt;
    let io = |op: &'static str| {
        let owned_path = path.to_path_buf();
        move |source| Error::Io {
            path: owned_path,
            op,
            source,
        }
    };
    let meta = std::fs::symlink_metadata(path).map_err(io("cannot stat"))?;
    let kind = kind_of(meta.mode());
    let mut xattrs = BTreeMap::new();
    for name in crate::reader::os::at::list_xattrs(path).map_err(io("cannot list xattrs"))? {
        let value =
            crate::reader::os::at::get_xattr(path, &name).map_err(io("cannot read xattr"))?;
        xattrs.insert(String::from_utf8_lossy(&name).into_owned(), hex(&value));
    }
    let target = (kind == "symlink")
        .then(|| std::fs::read_link(path).map_err(io("cannot read link")))
        .transpose()?
        .map(|t| String::from_utf8_lossy(t.as_os_str().as_bytes()).into_owned());
    let rdev = meta.rdev();
    let device = matches!(kind, "chardev" | "blockdev")
        .then(|| format!("{}:{}", libc::major(rdev), libc::minor(rdev)));
    Ok(Meta {
        kind: kind.into(),
        size: (kind != "dir").then_some(meta.size()),
        mode: format!("{:04o}", meta.mode() & 0o7777),
        owner: format!("{}:{}", meta.uid(), meta.gid()),
        mtime: time_text(meta.mtime(), meta.mtime_nsec() as u32),
        atime: None,
        ctime: None,
        crtime: None,
        xattrs,
        target,
        device,
        links: meta.nlink(),
        inode: meta.ino(),
    })
}

/// The fields in which `meta_a` and `meta_b` differ (content not included).
fn differing(meta_a: &Meta, meta_b: &Meta, opts: &DiffOptions, images: bool) -> Vec<String> {
    let mut fields = Vec::new();
    let mut check = |name: &str, same: bool| {
        if !same && !opts.ignores(name) {
            fields.push(name.to_string());
        }
    };
    check("type", meta_a.kind == meta_b.kind);
    if meta_a.kind != meta_b.kind {
        return fields;
    }
    check("size", meta_a.size == meta_b.size);
    check("mode", meta_a.mode == meta_b.mode);
    check("owner", meta_a.owner == meta_b.owner);
    // `mke2fs -d` keeps whole seconds: against a tree only the seconds are compared.
    let secs = |t: &str| t.split('.').next().unwrap_or(t).to_string();
    check(
        "mtime",
        if images {
            meta_a.mtime == meta_b.mtime
        } else {
            secs(&meta_a.mtime) == secs(&meta_b.mtime)
        },
    );
    if images {
        check("atime", meta_a.atime == meta_b.atime);
        check("ctime", meta_a.ctime == meta_b.ctime);
        check("crtime", meta_a.crtime == meta_b.crtime);
    }
    check("target", meta_a.target == meta_b.target);
    check("device", meta_a.device == meta_b.device);
    if opts.inodes && images {
        check("inode", meta_a.inode == meta_b.inode);
    }
    let names: BTreeSet<&String> = meta_a.xattrs.keys().chain(meta_b.xattrs.keys()).collect();
    for name in names {
        check(
            &format!("xattr.{name}"),
            meta_a.xattrs.get(name) == meta_b.xattrs.get(name),
        );
    }
    fields
}

/// What the directory walk knows of one path on one side before comparing: from the inode
/// walk's index (a fingerprint, the metadata not rendered), or the metadata read in full.
struct Seen {
    kind: &'static str,
    size: u64,
    links: u64,
    inode: u64,
    /// The fingerprint of the metadata (indexed image inodes only).
    fp: Option<[u64; 2]>,
    /// The metadata, when read in full.
    meta: Option<Meta>,
}

impl Seen {
    fn full(meta: Meta) -> Seen {
        Seen {
            kind: kind_name(&meta.kind),
            size: meta.size.unwrap_or(0),
            links: meta.links,
            inode: meta.inode,
            fp: None,
            meta: Some(meta),
        }
    }
}

/// The static name of a kind rendered by [`kind_of`].
fn kind_name(kind: &str) -> &'static str {
    [
        "dir", "file", "symlink", "fifo", "socket", "chardev", "blockdev",
    ]
    .into_iter()
    .find(|k| *k == kind)
    .unwrap_or("unknown")
}

impl<'a> Walker<'a> {
    fn meta(&self, side: &Side<'_>, handle: &Handle) -> Result<Meta> {
        match (side, handle) {
            (Side::Image(fs), Handle::Ino(ino)) => image_meta(fs, *ino),
            (Side::Tree(_), Handle::Path(p)) => tree_meta(p),
            _ => Err(Error::Invalid("mismatched side".into())),
        }
    }

    /// What the index says of `handle` on side `side_b` (false: A), else its metadata read in
    /// full.
    fn seen(&self, side_b: bool, handle: &Handle) -> Result<Seen> {
        if let (Some(index), Handle::Ino(ino)) = (&self.index, handle) {
            if let Some(entry) = index[usize::from(side_b)].get(*ino) {
                return Ok(Seen {
                    kind: kind_of(u32::from(entry.file_type)),
                    size: entry.size,
                    links: u64::from(entry.links),
                    inode: u64::from(*ino),
                    fp: Some(entry.fp),
                    meta: None,
                });
            }
        }
        self.meta(if side_b { self.b } else { self.a }, handle)
            .map(Seen::full)
    }

    /// The metadata of `seen` (`handle` on side `side_b`), read in full when it was not.
    fn full_meta(&self, side_b: bool, handle: &Handle, seen: &mut Seen) -> Result<Meta> {
        if let Some(meta) = &seen.meta {
            return Ok(meta.clone());
        }
        let meta = self.meta(if side_b { self.b } else { self.a }, handle)?;
        seen.meta = Some(meta.clone());
        Ok(meta)
    }

    /// The entries of a directory, sorted by name.
    fn list(&self, side: &Side<'_>, handle: &Handle) -> Result<Vec<(Box<[u8]>, Handle)>> {
        let mut entries: Vec<(Box<[u8]>, Handle)> = match (side, handle) {
            (Side::Image(fs), Handle::Ino(ino)) => {
                let raw = fs.inode_raw(*ino)?;
                let inode = Inode::parse(&raw);
                extract::list_dir(fs, *ino, &raw, &inode)?
                    .into_iter()
                    .map(|(n, ino)| (n, Handle::Ino(ino)))
                    .collect()
            }
            (Side::Tree(_), Handle::Path(p)) => {
                let rd = std::fs::read_dir(p).map_err(|source| Error::Io {
                    path: p.clone(),
                    op: "cannot read directory",
                    source,
                })?;
                let mut entries = Vec::new();
                for entry in rd {
                    let entry = entry.map_err(|source| Error::Io {
                        path: p.clone(),
                        op: "cannot read directory",
                        source,
                    })?;
                    entries.push((
                        entry.file_name().as_bytes().into(),
                        Handle::Path(entry.path()),
                    ));
                }
                entries
            }
            _ => return Err(Error::Invalid("mismatched side".into())),
        };
        entries.sort_unstable_by(|x, y| x.0.cmp(&y.0));
        Ok(entries)
    }

    fn push(&self, change: Change) {
        self.changes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(change);
    }

    fn unreadable(&self, path: &str, err: &Error) {
        let line = format!("{path}: {err}");
        if err.is_absent() || line.contains(crate::error::ABSENT) {
            // A metadata-only image (e2image) lacks what is compared: no report can be made,
            // so the walk stops at the first such read and the comparison fails as a whole.
            self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let mut absent = self.absent.lock().unwrap_or_else(|p| p.into_inner());
            absent.get_or_insert(line);
            return;
        }
        self.unreadable
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(line);
    }

    /// True once the comparison cannot be completed (see [`Walker::unreadable`]).
    fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Compare one path present on both sides; recurse into a pair of directories.
    fn pair<'s>(
        &'s self,
        scope: &rayon::Scope<'s>,
        path: String,
        ha: Handle,
        hb: Handle,
        depth: u32,
    ) {
        if self.stopped() {
            return;
        }
        let (mut sa, mut sb) = match (self.seen(false, &ha), self.seen(true, &hb)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return self.unreadable(&path, &e),
        };
        // Equal fingerprints: equal metadata, nothing to read again.
        let same_meta = sa.fp.is_some() && sa.fp == sb.fp;
        let mut fields = Vec::new();
        if !same_meta {
            let metas = self
                .full_meta(false, &ha, &mut sa)
                .and_then(|a| Ok((a, self.full_meta(true, &hb, &mut sb)?)));
            let (ma, mb) = match metas {
                Ok(m) => m,
                Err(e) => return self.unreadable(&path, &e),
            };
            fields = differing(&ma, &mb, self.opts, self.images);
            if path == "/" && !self.images {
                // The top of a tree is where the image was built from, not part of it:
                // `mke2fs -d` gives the root directory the build's times.
                fields.retain(|f| f != "mtime");
            }
        }
        if sa.kind == "file"
            && sb.kind == "file"
            && sa.size == sb.size
            && !self.opts.ignores("content")
        {
            let same = content::Content::open(self.a, &ha)
                .and_then(|x| Ok((x, content::Content::open(self.b, &hb)?)))
                .and_then(|(x, y)| content::same(&x, &y, sa.size));
            match same {
                Ok(true) => {}
                Ok(false) => fields.push("content".into()),
                Err(e) => return self.unreadable(&path, &e),
            }
        }
        let member = |s: &Seen| s.kind != "dir" && s.links > 1;
        if member(&sa) || member(&sb) {
            let mut linked = self.linked.lock().unwrap_or_else(|p| p.into_inner());
            for (seen, side_b) in [(&sa, false), (&sb, true)] {
                linked.push((path.clone(), side_b, seen.inode, member(seen)));
            }
        }
        let both_dirs = sa.kind == "dir" && sb.kind == "dir";
        if !fields.is_empty() {
            let metas = self
                .full_meta(false, &ha, &mut sa)
                .and_then(|a| Ok((a, self.full_meta(true, &hb, &mut sb)?)));
            let (ma, mb) = match metas {
                Ok(m) => m,
                Err(e) => return self.unreadable(&path, &e),
            };
            self.push(Change {
                path: path.clone(),
                kind: Kind::Modified,
                fields,
                a: Some(ma),
                b: Some(mb),
            });
        }
        if both_dirs {
            if depth >= MAX_DEPTH {
                return self.unreadable(
                    &path,
                    &Error::Invalid(format!("deeper than {MAX_DEPTH} levels: not compared")),
                );
            }
            if !self.first_visit(false, &ha) | !self.first_visit(true, &hb) {
                return self.unreadable(
                    &path,
                    &Error::Invalid(
                        "directory reached twice (a loop or a linked directory): not descended again"
                            .into(),
                    ),
                );
            }
            scope.spawn(move |s| self.dirs(s, path, ha, hb, depth + 1));
        }
    }

    /// True the first time image directory `handle` of side `side_b` is to be listed (always
    /// for a tree: its directories cannot loop).
    fn first_visit(&self, side_b: bool, handle: &Handle) -> bool {
        match handle {
            Handle::Ino(ino) => self.visited[usize::from(side_b)]
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(*ino),
            Handle::Path(_) => true,
        }
    }

    fn one_side(&self, path: String, handle: &Handle, in_b: bool) {
        let side = if in_b { self.b } else { self.a };
        match self.meta(side, handle) {
            Ok(m) => {
                // What `mke2fs -d` adds to every image: an empty lost+found at the root.
                let made_by_mke2fs = !self.images
                    && path == "/lost+found"
                    && matches!(side, Side::Image(_))
                    && m.kind == "dir"
                    && self.list(side, handle).is_ok_and(|v| v.is_empty());
                if made_by_mke2fs {
                    return;
                }
                if m.kind != "dir" && m.links > 1 {
                    // Its other names on this side lose (or gain) a link-group member.
                    self.linked.lock().unwrap_or_else(|p| p.into_inner()).push((
                        path.clone(),
                        in_b,
                        m.inode,
                        true,
                    ));
                }
                self.push(Change {
                    path,
                    kind: if in_b { Kind::Added } else { Kind::Removed },
                    fields: Vec::new(),
                    a: (!in_b).then(|| m.clone()),
                    b: in_b.then_some(m),
                })
            }
            Err(e) => self.unreadable(&path, &e),
        }
    }

    /// Merge the listings of a pair of directories.
    fn dirs<'s>(
        &'s self,
        scope: &rayon::Scope<'s>,
        path: String,
        ha: Handle,
        hb: Handle,
        depth: u32,
    ) {
        if self.stopped() {
            return;
        }
        let (la, lb) = match (self.list(self.a, &ha), self.list(self.b, &hb)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return self.unreadable(&path, &e),
        };
        let child = |name: &[u8]| {
            let name_text = String::from_utf8_lossy(name);
            if path == "/" {
                format!("/{name_text}")
            } else {
                format!("{path}/{name_text}")
            }
        };
        let (mut pos_a, mut pos_b) = (0, 0);
        while pos_a < la.len() || pos_b < lb.len() {
            let ord = match (la.get(pos_a), lb.get(pos_b)) {
                (Some(x), Some(y)) => x.0.cmp(&y.0),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            match ord {
                std::cmp::Ordering::Less => {
                    self.one_side(child(&la[pos_a].0), &la[pos_a].1, false);
                    pos_a += 1;
                }
                std::cmp::Ordering::Greater => {
                    self.one_side(child(&lb[pos_b].0), &lb[pos_b].1, true);
                    pos_b += 1;
                }
                std::cmp::Ordering::Equal => {
                    self.pair(
                        scope,
                        child(&la[pos_a].0),
                        la[pos_a].1.clone(),
                        lb[pos_b].1.clone(),
                        depth,
                    );
                    pos_a += 1;
                    pos_b += 1;
                }
            }
        }
    }

    /// Paths whose hard-link group (the other names of their inode) differs between the sides.
    ///
    /// Each side's groups are built once (inode to its sorted names) and a path's two groups
    /// are compared by reference to those lists, each pair of groups once: a hostile image
    /// whose 65,000 names share one inode costs one pass over them, not a copy of the group
    /// per name.
    fn link_groups(&self) {
        if self.opts.ignores("links") {
            return;
        }
        let linked = std::mem::take(&mut *self.linked.lock().unwrap_or_else(|p| p.into_inner()));
        let mut groups: [HashMap<u64, Vec<&str>>; 2] = Default::default();
        let mut ino_of: [HashMap<&str, u64>; 2] = Default::default();
        let mut member_of: [HashMap<&str, u64>; 2] = Default::default();
        for (path, side_b, ino, member) in &linked {
            let side = usize::from(*side_b);
            if *member {
                groups[side].entry(*ino).or_default().push(path);
                member_of[side].insert(path, *ino);
            }
            ino_of[side].insert(path, *ino);
        }
        for group in groups.iter_mut().flat_map(|group| group.values_mut()) {
            group.sort_unstable();
        }
        // The group of `path` on side `side`, `path` itself included (alone when not linked there).
        let group_of = |side: usize, path: &str| -> Option<&Vec<&str>> {
            member_of[side]
                .get(path)
                .and_then(|ino| groups[side].get(ino))
        };
        let mut same_pair: HashMap<(Option<u64>, Option<u64>), bool> = HashMap::new();
        let mut differ: BTreeMap<&str, [Option<u64>; 2]> = BTreeMap::new();
        for (path, _, _, _) in &linked {
            let member = |side: usize| member_of[side].get(path.as_str()).copied();
            let key = (member(0), member(1));
            let same = *same_pair.entry(key).or_insert_with(|| {
                match (group_of(0, path), group_of(1, path)) {
                    (Some(x), Some(y)) => x == y,
                    // Linked on one side only: the same when no other name shares it.
                    (Some(group), None) | (None, Some(group)) => group.len() == 1,
                    (None, None) => true,
                }
            });
            if !same {
                let ino = |side: usize| ino_of[side].get(path.as_str()).copied();
                differ.insert(path, [ino(0), ino(1)]);
            }
        }
        let mut changes = self.changes.lock().unwrap_or_else(|p| p.into_inner());
        let at: HashMap<String, usize> = changes
            .iter()
            .enumerate()
            .map(|(i, c)| (c.path.clone(), i))
            .collect();
        for (path, inos) in differ {
            match at.get(path).map(|&i| &mut changes[i]) {
                Some(c) if c.kind == Kind::Modified => c.fields.push("links".into()),
                Some(_) => {} // added or removed: said already
                None => {
                    let meta_a = self.meta_again(self.a, path, inos[0]);
                    let meta_b = self.meta_again(self.b, path, inos[1]);
                    changes.push(Change {
                        path: path.to_string(),
                        kind: Kind::Modified,
                        fields: vec!["links".into()],
                        a: meta_a,
                        b: meta_b,
                    });
                }
            }
        }
    }

    /// The metadata of `path` on a side read again (for link-group changes): by the inode
    /// number the walk met it with on an image, by its path in a tree.
    fn meta_again(&self, side: &Side<'_>, path: &str, ino: Option<u64>) -> Option<Meta> {
        match side {
            Side::Image(fs) => match ino.and_then(|i| u32::try_from(i).ok()) {
                Some(ino) => image_meta(fs, ino).ok(),
                None => crate::reader::namei::resolve_path(fs, path)
                    .ok()
                    .and_then(|ino| image_meta(fs, ino).ok()),
            },
            Side::Tree(root) => tree_meta(&root.join(path.trim_start_matches('/'))).ok(),
        }
    }
}

/// The fields that differ between two JSON objects (the superblocks of two images as `dump
/// --json` names them; checksums left out: they follow from the others), less those ignored
/// (`times`: any field naming a time; `uuid`, `hash_seed`, or a field by name).
pub fn object_changes(
    obj_a: &serde_json::Map<String, serde_json::Value>,
    obj_b: &serde_json::Map<String, serde_json::Value>,
    opts: &DiffOptions,
) -> Vec<SuperblockChange> {
    if opts.ignore.contains("superblock") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (key, va) in obj_a {
        let vb = obj_b.get(key).cloned().unwrap_or(serde_json::Value::Null);
        if *va == vb || key.contains("checksum") {
            continue;
        }
        let time = key.contains("time") || key.contains("lastcheck");
        let ignored = (time && opts.ignore.contains("times"))
            || (key.contains("uuid") && opts.ignore.contains("uuid"))
            || (key.contains("hash_seed") && opts.ignore.contains("hash_seed"))
            || opts.ignore.contains(key.as_str());
        if !ignored {
            out.push(SuperblockChange {
                field: key.clone(),
                a: va.clone(),
                b: vb,
            });
        }
    }
    out
}

/// Compare `side_a` with `side_b`. Fails (no partial report) when a side is a metadata-only
/// image that lacks blocks the comparison needs (a normal e2image file holds no directory or
/// data block).
pub fn diff(side_a: &Side<'_>, side_b: &Side<'_>, opts: &DiffOptions) -> Result<Report> {
    let root = |side: &Side<'_>| match side {
        Side::Image(_) => Handle::Ino(ROOT_INO),
        Side::Tree(p) => Handle::Path(p.clone()),
    };
    let (index, images) = match (side_a, side_b) {
        (Side::Image(x), Side::Image(y)) => {
            let keys = index::Keys::new();
            (Some(index::index_both(x, y, opts, &keys)), true)
        }
        _ => (None, false),
    };
    let walker = Walker {
        a: side_a,
        b: side_b,
        opts,
        images,
        index,
        changes: Mutex::new(Vec::new()),
        unreadable: Mutex::new(Vec::new()),
        linked: Mutex::new(Vec::new()),
        visited: Default::default(),
        absent: Mutex::new(None),
        stop: Default::default(),
    };
    let walker_ref = &walker;
    rayon::scope(|scope| walker_ref.pair(scope, "/".into(), root(side_a), root(side_b), 0));
    let absent = walker
        .absent
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    if let Some(line) = absent {
        return Err(Error::Invalid(line));
    }
    walker.link_groups();
    let mut changes = walker
        .changes
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    changes.sort_by(|x, y| x.path.cmp(&y.path));
    let mut unreadable = walker
        .unreadable
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    unreadable.sort();
    Ok(Report {
        changes,
        superblock: Vec::new(),
        unreadable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Meta {
        Meta {
            kind: "file".into(),
            size: Some(3),
            mode: "0644".into(),
            owner: "0:0".into(),
            mtime: "1.000000000".into(),
            atime: Some("2.000000000".into()),
            ..Meta::default()
        }
    }

    #[test]
    fn fields_that_differ_and_ignore() {
        let meta_a = meta();
        let mut meta_b = meta();
        meta_b.mode = "0600".into();
        meta_b.atime = Some("3.000000000".into());
        meta_b.xattrs.insert("user.x".into(), "00".into());
        let opts = DiffOptions::default();
        assert_eq!(
            differing(&meta_a, &meta_b, &opts, true),
            ["mode", "atime", "xattr.user.x"]
        );
        // Against a tree atime is not compared.
        assert_eq!(
            differing(&meta_a, &meta_b, &opts, false),
            ["mode", "xattr.user.x"]
        );
        let opts = DiffOptions {
            ignore: ["times", "xattrs"].iter().map(|s| s.to_string()).collect(),
            inodes: false,
        };
        assert_eq!(differing(&meta_a, &meta_b, &opts, true), ["mode"]);
    }
}
