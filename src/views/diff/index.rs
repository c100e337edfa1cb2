//! The image side of `diff` between two images: each image's inode tables walked once with the
//! shared inode walk ([`crate::reader::walk`], the engine of `check` pass 1), both images at once,
//! keeping per in-use inode a [`Summary`]: its type, size, link count and a 128-bit fingerprint
//! of everything else the comparison looks at. The directory walk of `diff` then compares two
//! paths' fingerprints instead of reading and rendering both inodes; only paths whose
//! fingerprints differ are read again in full (and may still turn out equal: the fingerprint is
//! taken over the inode's rendered metadata, so equal fingerprints mean equal metadata, while
//! unequal ones only mean "look closer").
//!
//! The fingerprint is keyed with a per-run random key (`RandomState`), the same for both
//! images, so an image cannot be crafted to collide with another.
//!
//! Memory: one [`Summary`] (32 bytes) per rendered in-use inode of each image, sorted by inode number;
//! an in-use inode takes at least 128 bytes of inode table inside the image (the walk reads
//! only tables that lie inside it), so the index is bounded by the input's size, never by a
//! count field. Inodes of groups whose table cannot be read are simply not indexed: the
//! directory walk reads them one by one and reports what fails.

use super::{image_meta_of, DiffOptions, Meta};
use crate::reader::dir::ROOT_INO;
use crate::reader::fs::Filesystem;
use crate::reader::inode::{Inode, EA_INODE_FL};
use crate::reader::walk::{self, GroupEnd, TableVisitor};
use std::hash::BuildHasher;

/// What the walk keeps of one in-use inode (32 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Summary {
    /// The rendered metadata's fingerprint (inode number and link count left out, ignored
    /// fields left out).
    pub fp: [u64; 2],
    /// `i_size`.
    pub size: u64,
    /// The inode number.
    pub ino: u32,
    /// `i_mode & S_IFMT`.
    pub file_type: u16,
    /// `i_links_count`.
    pub links: u16,
}

/// Both images' fingerprint keys (two independent keys make 128 bits).
pub(super) struct Keys([std::collections::hash_map::RandomState; 2]);

impl Keys {
    pub fn new() -> Keys {
        Keys([Default::default(), Default::default()])
    }
}

/// The in-use inodes of one image, sorted by inode number. An inode that could not be rendered
/// (or whose group's table could not be read) is not in it: the directory walk reads it again
/// and reports why.
pub(super) struct Index(Vec<Summary>);

impl Index {
    /// The summary of inode `ino`, when the walk read and rendered it.
    pub fn get(&self, ino: u32) -> Option<Summary> {
        self.0
            .binary_search_by_key(&ino, |e| e.ino)
            .ok()
            .map(|i| self.0[i])
    }
}

/// The fingerprint of `meta` as compared under `opts`: every field [`super::differing`] may
/// name, less those ignored; the inode number only with `--inodes`; never the link count
/// (hard-link groups are compared apart).
pub(super) fn fingerprint(meta: &Meta, opts: &DiffOptions, keys: &Keys) -> [u64; 2] {
    let mut buf: Vec<u8> = Vec::with_capacity(256);
    let mut put = |name: &str, value: &[u8]| {
        if !opts.ignores(name) {
            // Length-prefixed, so that no two different sequences of fields feed the same bytes.
            for part in [name.as_bytes(), value] {
                buf.extend_from_slice(&(part.len() as u64).to_le_bytes());
                buf.extend_from_slice(part);
            }
        }
    };
    let opt = |field: &Option<String>| {
        field
            .as_deref()
            .map_or(b"\xff".to_vec(), |s| s.as_bytes().into())
    };
    put("type", meta.kind.as_bytes());
    put(
        "size",
        &meta
            .size
            .map_or(b"\xff".to_vec(), |s| s.to_le_bytes().into()),
    );
    put("mode", meta.mode.as_bytes());
    put("owner", meta.owner.as_bytes());
    put("mtime", meta.mtime.as_bytes());
    put("atime", &opt(&meta.atime));
    put("ctime", &opt(&meta.ctime));
    put("crtime", &opt(&meta.crtime));
    put("target", &opt(&meta.target));
    put("device", &opt(&meta.device));
    if opts.inodes {
        put("inode", &meta.inode.to_le_bytes());
    }
    for (name, value) in &meta.xattrs {
        put(&format!("xattr.{name}"), value.as_bytes());
    }
    [keys.0[0].hash_one(&buf), keys.0[1].hash_one(&buf)]
}

struct IndexVisitor<'a> {
    fs: &'a Filesystem,
    opts: &'a DiffOptions,
    keys: &'a Keys,
    first_ino: u32,
}

impl TableVisitor for IndexVisitor<'_> {
    type Worker = Vec<Summary>;

    fn worker(&self) -> Self::Worker {
        Vec::new()
    }

    fn merge(&self, mut earlier: Self::Worker, mut later: Self::Worker) -> Self::Worker {
        earlier.append(&mut later);
        earlier
    }

    fn group_start(&self, _: &mut Self::Worker, _: u32, _: u32) {}

    fn inode(&self, worker: &mut Self::Worker, _: u32, ino: u32, raw: &[u8]) {
        let inode = Inode::parse(raw);
        // Only what a directory entry can name: in use, not a reserved inode, not an EA inode.
        let reserved = ino < self.first_ino && ino != ROOT_INO;
        if inode.links_count == 0 || inode.mode == 0 || reserved || inode.has_flag(EA_INODE_FL) {
            return;
        }
        if let Ok(meta) = image_meta_of(self.fs, ino, raw, &inode) {
            worker.push(Summary {
                fp: fingerprint(&meta, self.opts, self.keys),
                size: inode.size,
                ino,
                file_type: inode.mode & 0o170000,
                links: inode.links_count,
            });
        }
    }

    // A group not read leaves its inodes out of the index: the directory walk reads them one by
    // one and reports what cannot be read.
    fn group_end(&self, _: &mut Self::Worker, _: u32, _: GroupEnd) {}
}

/// Walk the inode tables of `fs` (the groups in parallel) into its index.
fn index(fs: &Filesystem, opts: &DiffOptions, keys: &Keys) -> Index {
    let visitor = IndexVisitor {
        fs,
        opts,
        keys,
        first_ino: fs.sb.first_ino(),
    };
    let mut summaries = walk::run(fs, &visitor, &|_| {}).unwrap_or_default();
    // In group order already; sorted again in case a hostile geometry numbers slots oddly.
    if !summaries.is_sorted_by_key(|e| e.ino) {
        summaries.sort_unstable_by_key(|e| e.ino);
    }
    Index(summaries)
}

/// Both images' indexes, walked at the same time.
pub(super) fn index_both(
    fs_a: &Filesystem,
    fs_b: &Filesystem,
    opts: &DiffOptions,
    keys: &Keys,
) -> [Index; 2] {
    let (index_a, index_b) = rayon::join(|| index(fs_a, opts, keys), || index(fs_b, opts, keys));
    [index_a, index_b]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(inode: u64) -> Meta {
        Meta {
            kind: "file".into(),
            size: Some(3),
            mode: "0644".into(),
            owner: "0:0".into(),
            mtime: "1.000000000".into(),
            links: 1,
            inode,
            ..Meta::default()
        }
    }

    #[test]
    fn summaries_stay_small() {
        assert_eq!(std::mem::size_of::<Summary>(), 32);
    }

    #[test]
    fn fingerprints_follow_the_compared_fields() {
        let keys = Keys::new();
        let plain = DiffOptions::default();
        let fp = |m: &Meta, o: &DiffOptions| fingerprint(m, o, &keys);
        // Inode number and link count are not compared by default.
        let mut other = meta(99);
        other.links = 2;
        assert_eq!(fp(&meta(12), &plain), fp(&other, &plain));
        let inodes = DiffOptions {
            inodes: true,
            ..DiffOptions::default()
        };
        assert_ne!(fp(&meta(12), &inodes), fp(&meta(99), &inodes));
        // A changed time changes it, unless times are ignored.
        let mut later = meta(12);
        later.mtime = "2.000000000".into();
        assert_ne!(fp(&meta(12), &plain), fp(&later, &plain));
        let times = DiffOptions {
            ignore: ["times".to_string()].into(),
            ..DiffOptions::default()
        };
        assert_eq!(fp(&meta(12), &times), fp(&later, &times));
        // An xattr's name and value both count, and do not run into each other.
        let (mut name_ab, mut name_a) = (meta(12), meta(12));
        name_ab.xattrs.insert("user.ab".into(), "00".into());
        name_a.xattrs.insert("user.a".into(), "b00".into());
        assert_ne!(fp(&name_ab, &plain), fp(&name_a, &plain));
    }
}
