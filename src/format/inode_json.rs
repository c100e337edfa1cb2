//! The `inode --json` document: typed output structures (their JSON Schema is generated from
//! them, `docs/schema/inode.schema.json`) built from a [`Report`] of `debugfs_stat`.

use crate::format::json::{Flags, Mode, Named, SchemaVersion, Time};
use crate::reader::extent::MapKind;
use crate::reader::fileblocks::Fragmentation;
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, DataMap, XattrLocation};
use crate::reader::xattr;
use crate::views::inode::{Report, MAX_LISTED};
use schemars::JsonSchema;
use serde::Serialize;
use std::fmt::Write as _;

/// The `inode --json` document: one entry per requested target, found or not.
#[derive(Serialize, JsonSchema)]
pub struct InodeDocument {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// The image as given.
    pub image: String,
    /// One entry per target, in the order given.
    pub inodes: Vec<InodeEntry>,
}

/// A target: the inode found, or why it could not be shown.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum InodeEntry {
    /// The inode was read.
    Found(Box<InodeJson>),
    /// The target could not be resolved or read (exit status 8).
    Failed {
        /// The target as given.
        target: String,
        /// The inode number, when the target resolved to one.
        ino: Option<u32>,
        /// Why it could not be shown.
        error: String,
    },
}

/// One inode.
#[derive(Serialize, JsonSchema)]
pub struct InodeJson {
    /// The target as given.
    pub target: String,
    /// Inode number.
    pub ino: u32,
    /// File type from the mode.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `i_mode`.
    pub mode: Mode,
    /// Owner (with the high half).
    pub uid: u32,
    /// Group (with the high half).
    pub gid: u32,
    /// Size in bytes.
    pub size: u64,
    /// Hard links.
    pub links_count: u16,
    /// `i_flags`.
    pub flags: Flags,
    /// `i_generation`.
    pub generation: u32,
    /// `i_version` with its high half.
    pub version: u64,
    /// `i_blocks` as stored (with the high half).
    pub blocks_raw: u64,
    /// Blocks in 512-byte units, as `stat` counts them.
    pub blocks_512: u64,
    /// `i_file_acl`: the xattr block (0 when none).
    pub file_acl: u64,
    /// `i_extra_isize`.
    pub extra_isize: u16,
    /// `i_projid`.
    pub projid: u32,
    /// Access time.
    pub atime: Time,
    /// Modification time.
    pub mtime: Time,
    /// Change time.
    pub ctime: Time,
    /// Creation time.
    pub crtime: Time,
    /// Deletion time (0 when the inode is not deleted).
    pub dtime: Time,
    /// The inode checksum, with metadata_csum.
    pub checksum: Option<ChecksumJson>,
    /// Every xattr, where it lives and its value.
    pub xattrs: Vec<XattrJson>,
    /// Space for xattrs in the inode body and the external block.
    pub xattr_space: XattrSpaceJson,
    /// Where the data is.
    pub data: DataJson,
    /// The htree root of an indexed directory.
    pub htree: Option<HtreeJson>,
    /// What is wrong with the inode.
    pub problems: Vec<String>,
    /// The inode bitmap marks the inode in use (null when the bitmap cannot be read).
    pub allocated: Option<bool>,
    /// Extents and physically contiguous runs.
    pub fragmentation: Option<Fragmentation>,
}

/// A stored checksum and the one computed.
#[derive(Serialize, JsonSchema)]
pub struct ChecksumJson {
    /// As stored.
    pub stored: u32,
    /// As computed.
    pub computed: u32,
    /// They match.
    pub ok: bool,
}

/// One xattr of an inode.
#[derive(Serialize, JsonSchema)]
pub struct XattrJson {
    /// Full name with its prefix.
    pub name: String,
    /// Value size in bytes.
    pub value_size: u32,
    /// `inode`, `block` or `ea_inode`.
    pub location: &'static str,
    /// The xattr block, for `block`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<u64>,
    /// The inode holding the value, for `ea_inode`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ea_inode: Option<u32>,
    /// Bytes the entry takes where it is stored.
    pub used_bytes: usize,
    /// The value in hex (null when not read: values in EA inodes are not read).
    pub value_hex: Option<String>,
    /// The value decoded (ACLs, capabilities, SELinux labels), when the name has a known format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoded: Option<xattr::Decoded>,
    /// Why a value of a known format could not be decoded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_error: Option<String>,
}

/// Space for xattrs.
#[derive(Serialize, JsonSchema)]
pub struct XattrSpaceJson {
    /// The in-inode area.
    pub inode: xattr::Space,
    /// The external block, when there is one.
    pub block: Option<XattrBlockJson>,
}

/// The external xattr block.
#[derive(Serialize, JsonSchema)]
pub struct XattrBlockJson {
    /// Block number.
    pub block: u64,
    /// `h_refcount`.
    pub refcount: u32,
    /// `h_hash`.
    pub hash: u32,
    /// Capacity, used and free bytes.
    #[serde(flatten)]
    pub space: xattr::Space,
    /// The block checksum matches (null without metadata_csum).
    pub checksum_ok: Option<bool>,
    /// The entries are sorted as the kernel keeps them.
    pub sorted: bool,
}

/// Where an inode's data is.
#[derive(Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DataJson {
    /// An extent tree.
    Extents {
        /// Tree depth.
        depth: u16,
        /// The leaf extents (at most 4096).
        extents: Vec<ExtentJson>,
        /// Leaf extents not listed.
        extents_omitted: usize,
        /// The index and leaf blocks (at most 4096).
        tree_blocks: Vec<TreeBlockJson>,
        /// Tree blocks not listed.
        tree_blocks_omitted: usize,
    },
    /// A block map.
    Blocks {
        /// Blocks mapped.
        total: u64,
        /// Runs (at most 4096).
        runs: Vec<RunJson>,
        /// Runs not listed.
        runs_omitted: u64,
    },
    /// Inline data.
    Inline {
        /// Bytes.
        size: u64,
    },
    /// A symlink target in `i_block`.
    FastSymlink {
        /// The target.
        target: String,
    },
    /// A symlink target in inline data.
    InlineSymlink {
        /// The target.
        target: String,
    },
    /// A device number.
    Device {
        /// Major number.
        major: u32,
        /// Minor number.
        minor: u32,
        /// Stored in the new (large) encoding.
        new_style: bool,
    },
    /// The map could not be read.
    Unreadable {
        /// Why.
        error: String,
    },
}

/// A leaf extent.
#[derive(Serialize, JsonSchema)]
pub struct ExtentJson {
    /// First logical block.
    pub logical: u32,
    /// Blocks.
    pub len: u16,
    /// First physical block.
    pub physical: u64,
    /// Unwritten (preallocated).
    pub uninit: bool,
}

/// An extent tree block.
#[derive(Serialize, JsonSchema)]
pub struct TreeBlockJson {
    /// Block number.
    pub block: u64,
    /// Level from the root.
    pub level: u16,
    /// `eh_depth`.
    pub depth: u16,
    /// `eh_entries`.
    pub entries: u16,
    /// `eh_max`.
    pub max: u16,
    /// The block checksum matches (null without metadata_csum).
    pub checksum_ok: Option<bool>,
}

/// A run of a block map.
#[derive(Serialize, JsonSchema)]
pub struct RunJson {
    /// `data`, `ind`, `dind` or `tind`.
    pub kind: &'static str,
    /// First logical block (data runs).
    pub logical: Option<u64>,
    /// First physical block.
    pub physical: u64,
    /// Blocks.
    pub len: u64,
}

/// The htree root of an indexed directory.
#[derive(Serialize, JsonSchema)]
pub struct HtreeJson {
    /// `dx_root.hash_version`.
    pub hash_version: Named,
    /// Levels of index below the root.
    pub indirect_levels: u8,
    /// Entries in the root.
    pub count: u16,
    /// Room in the root.
    pub limit: u16,
    /// Blocks the root points to.
    pub blocks: Vec<u32>,
}

fn xattr_json(item: &inode::XattrItem<'_>) -> XattrJson {
    let decoded = item
        .value
        .as_deref()
        .and_then(|val| xattr::decode_value(&item.name, val));
    let (decoded, decode_error) = match decoded {
        Some(Ok(d)) => (Some(d), None),
        Some(Err(e)) => (None, Some(e.to_string())),
        None => (None, None),
    };
    XattrJson {
        name: item.name.clone(),
        value_size: item.value_size,
        location: item.location.kind(),
        block: match item.location {
            XattrLocation::Block(b) => Some(b),
            _ => None,
        },
        ea_inode: match item.location {
            XattrLocation::EaInode(n) => Some(n),
            _ => None,
        },
        used_bytes: item.cost,
        value_hex: item.value.as_deref().map(hex),
        decoded,
        decode_error,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut text, byte| {
            let _ = write!(text, "{byte:02x}");
            text
        })
}

fn data_json(report: &Report<'_>) -> DataJson {
    match &report.map {
        DataMap::Extents(walk) => DataJson::Extents {
            depth: walk.depth,
            extents: walk
                .leaves()
                .take(MAX_LISTED)
                .map(|leaf| ExtentJson {
                    logical: leaf.logical,
                    len: leaf.len,
                    physical: leaf.physical,
                    uninit: leaf.uninit,
                })
                .collect(),
            extents_omitted: walk.leaves().count().saturating_sub(MAX_LISTED),
            tree_blocks: walk
                .nodes
                .iter()
                .take(MAX_LISTED)
                .map(|node| TreeBlockJson {
                    block: node.block,
                    level: node.level,
                    depth: node.header.depth,
                    entries: node.header.entries,
                    max: node.header.max,
                    checksum_ok: node.csum.map(|c| c.ok()),
                })
                .collect(),
            tree_blocks_omitted: walk.nodes.len().saturating_sub(MAX_LISTED),
        },
        DataMap::Blocks(walk) => DataJson::Blocks {
            total: walk.total,
            runs_omitted: report.runs_omitted,
            runs: walk
                .runs
                .iter()
                .map(|run| {
                    let (kind, logical) = match run.kind {
                        MapKind::Data(l) => ("data", Some(l)),
                        MapKind::Ind => ("ind", None),
                        MapKind::Dind => ("dind", None),
                        MapKind::Tind => ("tind", None),
                    };
                    RunJson {
                        kind,
                        logical,
                        physical: run.physical,
                        len: run.len,
                    }
                })
                .collect(),
        },
        DataMap::Inline { size } => DataJson::Inline { size: *size },
        DataMap::FastSymlink(t) => DataJson::FastSymlink {
            target: String::from_utf8_lossy(t).into_owned(),
        },
        DataMap::InlineSymlink(t) => DataJson::InlineSymlink {
            target: String::from_utf8_lossy(t.split(|&c| c == 0).next().unwrap_or(&[]))
                .into_owned(),
        },
        DataMap::Device {
            major,
            minor,
            new_style,
        } => DataJson::Device {
            major: *major,
            minor: *minor,
            new_style: *new_style,
        },
        DataMap::Unreadable(e) => DataJson::Unreadable {
            error: e.to_string(),
        },
    }
}

/// The JSON entry of one found inode (`target` as the user gave it).
pub fn json_of(fs: &Filesystem, target: &str, report: &Report<'_>) -> InodeJson {
    let inode = &report.inode;
    let time = |secs: u32, extra: u32| {
        Time::with_nsec(inode::time_secs(secs, extra), inode::time_nsec(extra))
    };
    InodeJson {
        target: target.to_string(),
        ino: report.ino,
        kind: inode.type_name(),
        mode: Mode::new(inode.mode),
        uid: inode.uid,
        gid: inode.gid,
        size: inode.size,
        links_count: inode.links_count,
        flags: Flags::new(inode.flags, inode.flag_names()),
        generation: inode.generation,
        version: (u64::from(inode.version_hi) << 32) | u64::from(inode.version),
        blocks_raw: inode.blocks_raw,
        blocks_512: inode.blocks_512(
            fs.sb
                .has_ro_compat(crate::reader::features::RO_COMPAT_HUGE_FILE),
            fs.block_size(),
        ),
        file_acl: inode.file_acl,
        extra_isize: inode.extra_isize,
        projid: inode.projid,
        atime: time(inode.atime, inode.atime_extra),
        mtime: time(inode.mtime, inode.mtime_extra),
        ctime: time(inode.ctime, inode.ctime_extra),
        crtime: time(inode.crtime, inode.crtime_extra),
        dtime: Time::secs(i64::from(inode.dtime)),
        checksum: report.csum.map(|(stored, computed)| ChecksumJson {
            stored,
            computed,
            ok: inode::inode_checksum_ok(fs.csum_seed(), report.ino, report.raw),
        }),
        xattrs: report.xattrs.items.iter().map(xattr_json).collect(),
        xattr_space: XattrSpaceJson {
            inode: report.xattrs.inode_space,
            block: report
                .xattrs
                .block
                .as_ref()
                .map(|xattr_block| XattrBlockJson {
                    block: xattr_block.block,
                    refcount: xattr_block.refcount,
                    hash: xattr_block.hash,
                    space: xattr_block.space,
                    checksum_ok: xattr_block.checksum.map(|c| c.ok()),
                    sorted: xattr_block.sorted,
                }),
        },
        data: data_json(report),
        htree: report.htree.as_ref().map(|htree| HtreeJson {
            hash_version: crate::format::json::hash_version(htree.hash_version),
            indirect_levels: htree.indirect_levels,
            count: htree.index.count,
            limit: htree.index.limit,
            blocks: htree.index.entries.iter().map(|e| e.1).collect(),
        }),
        problems: report.problems.iter().map(ToString::to_string).collect(),
        allocated: report.allocated,
        fragmentation: report.frag,
    }
}
