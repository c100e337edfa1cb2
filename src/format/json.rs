//! The JSON contract of every `--json` document: the version stamp, the shared shapes for decoded
//! values (enums, times, modes, UUIDs) and the `dump --json` document. Every document type derives
//! `schemars::JsonSchema`; the files in `docs/schema/` are generated from them (see
//! `docs/json.md`), so the schemas cannot drift from what is printed.

use crate::reader::fs::Filesystem;
use crate::reader::group::flag_names;
use crate::reader::superblock::Superblock;
pub use crate::reader::values::{
    iso8601_utc, uuid, uuid_schema, uuid_text, uuids, uuids_schema, Flags, Mode, Named, Time,
};
use schemars::JsonSchema;
use serde::Serialize;

/// Version of the JSON contract, the `schema_version` of every document. Bumped when a key is
/// removed or changes meaning; adding keys keeps it.
pub const SCHEMA_VERSION: u32 = 1;

/// The `schema_version` key: always [`SCHEMA_VERSION`] (a constant in the schema).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchemaVersion;

impl Serialize for SchemaVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(SCHEMA_VERSION)
    }
}

impl JsonSchema for SchemaVersion {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SchemaVersion".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Version of the e4inspect JSON contract.",
            "type": "integer",
            "const": SCHEMA_VERSION,
        })
    }
}

/// `s_state` decoded as dumpe2fs words it.
pub fn fs_state(raw: u16) -> Named {
    let mut name = if raw & 1 != 0 { "clean" } else { "not clean" }.to_string();
    if raw & 2 != 0 {
        name.push_str(" with errors");
    }
    if raw & 4 != 0 {
        name.push_str(" orphans being recovered");
    }
    Named::new(raw, name)
}

/// `s_errors` decoded.
pub fn errors_behavior(raw: u16) -> Named {
    let name = match raw {
        1 => "continue",
        2 => "remount-ro",
        3 => "panic",
        _ => "unknown",
    };
    Named::new(raw, name)
}

/// `s_creator_os` decoded.
pub fn creator_os(raw: u32) -> Named {
    let name = match raw {
        0 => "Linux",
        1 => "Hurd",
        2 => "Masix",
        3 => "FreeBSD",
        4 => "Lites",
        _ => "unknown",
    };
    Named::new(raw, name)
}

/// A directory hash version (`s_def_hash_version`, `dx_root.hash_version`) decoded.
pub fn hash_version(raw: u8) -> Named {
    let name = match raw {
        0 => "legacy",
        1 => "half_md4",
        2 => "tea",
        3 => "legacy_unsigned",
        4 => "half_md4_unsigned",
        5 => "tea_unsigned",
        6 => "siphash",
        _ => "unknown",
    };
    Named::new(raw, name)
}

/// `s_jnl_backup_type` decoded (`EXT3_JNL_BACKUP_BLOCKS`: the journal inode's block map).
pub fn jnl_backup_type(raw: u8) -> Named {
    let name = match raw {
        0 => "none",
        1 => "inode_blocks",
        _ => "unknown",
    };
    Named::new(raw, name)
}

/// `s_encoding` decoded (the casefold encoding).
pub fn encoding(raw: u16) -> Named {
    let name = match raw {
        0 => "none",
        1 => "utf8-12.1",
        _ => "unknown",
    };
    Named::new(raw, name)
}

/// `s_checksum_type` decoded.
pub fn checksum_type(raw: u8) -> Named {
    Named::new(raw, if raw == 1 { "crc32c" } else { "unknown" })
}

/// `s_rev_level` decoded.
pub fn revision(raw: u32) -> Named {
    let name = match raw {
        0 => "original",
        1 => "dynamic",
        _ => "unknown",
    };
    Named::new(raw, name)
}

/// The superblock: every raw field, plus decoded names, UUID strings and times.
#[derive(Serialize, JsonSchema)]
pub struct SuperblockJson<'a> {
    /// The raw fields, named as in `struct ext4_super_block` without the `s_` prefix.
    #[serde(flatten)]
    pub raw: &'a Superblock,
    /// `s_volume_name`.
    pub volume_name: String,
    /// `s_last_mounted`.
    pub last_mounted: String,
    /// `s_mount_opts`.
    pub mount_opts: String,
    /// `s_first_error_func`.
    pub first_error_func: String,
    /// `s_last_error_func`.
    pub last_error_func: String,
    /// `s_uuid`.
    #[serde(serialize_with = "uuid")]
    #[schemars(schema_with = "uuid_schema")]
    pub uuid: [u8; 16],
    /// `s_journal_uuid`.
    #[serde(serialize_with = "uuid")]
    #[schemars(schema_with = "uuid_schema")]
    pub journal_uuid: [u8; 16],
    /// `s_hash_seed`.
    #[serde(serialize_with = "uuid")]
    #[schemars(schema_with = "uuid_schema")]
    pub hash_seed: [u8; 16],
    /// `s_encrypt_pw_salt`.
    #[serde(serialize_with = "uuid")]
    #[schemars(schema_with = "uuid_schema")]
    pub encrypt_pw_salt: [u8; 16],
    /// `s_state`.
    pub state: Named,
    /// `s_errors`.
    pub errors: Named,
    /// `s_creator_os`.
    pub creator_os: Named,
    /// `s_rev_level`.
    pub rev_level: Named,
    /// `s_def_hash_version`.
    pub def_hash_version: Named,
    /// `s_checksum_type`.
    pub checksum_type: Named,
    /// `s_jnl_backup_type`.
    pub jnl_backup_type: Named,
    /// `s_encoding`.
    pub encoding: Named,
    /// `s_mtime` (with `s_mtime_hi`).
    pub mtime: Time,
    /// `s_wtime` (with `s_wtime_hi`).
    pub wtime: Time,
    /// `s_lastcheck` (with `s_lastcheck_hi`).
    pub lastcheck: Time,
    /// `s_mkfs_time` (with `s_mkfs_time_hi`).
    pub mkfs_time: Time,
    /// `s_first_error_time` (with its high byte).
    pub first_error_time: Time,
    /// `s_last_error_time` (with its high byte).
    pub last_error_time: Time,
    /// Blocks (64-bit count).
    pub blocks_count: u64,
    /// Reserved blocks (64-bit count).
    pub r_blocks_count: u64,
    /// Free blocks (64-bit count).
    pub free_blocks_count: u64,
    /// Block size in bytes.
    pub block_size: u64,
    /// Cluster size in bytes.
    pub cluster_size: u64,
    /// Feature names, as dumpe2fs lists them.
    pub features: Vec<String>,
    /// Default mount option names.
    pub default_mount_options: Vec<String>,
    /// The stored checksum matches (true without metadata_csum).
    pub checksum_ok: bool,
    /// The checksum computed over the superblock.
    pub computed_checksum: u32,
}

/// A superblock time: the low 32 bits and the high byte.
fn sb_time(lo: u32, hi: u8) -> Time {
    Time::secs(i64::from(lo) | (i64::from(hi) << 32))
}

/// The superblock view of `sb`.
pub fn superblock(sb: &Superblock) -> SuperblockJson<'_> {
    let cstring =
        |b: &[u8]| String::from_utf8_lossy(crate::reader::superblock::cstr(b)).into_owned();
    SuperblockJson {
        raw: sb,
        volume_name: cstring(&sb.volume_name),
        last_mounted: cstring(&sb.last_mounted),
        mount_opts: cstring(&sb.mount_opts),
        first_error_func: cstring(&sb.first_error_func),
        last_error_func: cstring(&sb.last_error_func),
        uuid: sb.uuid,
        journal_uuid: sb.journal_uuid,
        hash_seed: sb.hash_seed,
        encrypt_pw_salt: sb.encrypt_pw_salt,
        state: fs_state(sb.state),
        errors: errors_behavior(sb.errors),
        creator_os: creator_os(sb.creator_os),
        rev_level: revision(sb.rev_level),
        def_hash_version: hash_version(sb.def_hash_version),
        checksum_type: checksum_type(sb.checksum_type),
        jnl_backup_type: jnl_backup_type(sb.jnl_backup_type),
        encoding: encoding(sb.encoding),
        mtime: sb_time(sb.mtime, sb.mtime_hi),
        wtime: sb_time(sb.wtime, sb.wtime_hi),
        lastcheck: sb_time(sb.lastcheck, sb.lastcheck_hi),
        mkfs_time: sb_time(sb.mkfs_time, sb.mkfs_time_hi),
        first_error_time: sb_time(sb.first_error_time, sb.first_error_time_hi),
        last_error_time: sb_time(sb.last_error_time, sb.last_error_time_hi),
        blocks_count: sb.blocks_count(),
        r_blocks_count: sb.r_blocks_count(),
        free_blocks_count: sb.free_blocks_count(),
        block_size: sb.block_size(),
        cluster_size: sb.cluster_size(),
        features: sb.feature_names(),
        default_mount_options: crate::reader::features::mntopt_names(sb.default_mount_opts),
        checksum_ok: sb.checksum_ok(),
        computed_checksum: sb.computed_checksum(),
    }
}

/// One group: descriptor fields, flags by name, layout, and checksum status; or why the
/// descriptor could not be read.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum GroupJson {
    /// The descriptor as read.
    Read(GroupRead),
    /// The descriptor could not be read.
    Unreadable {
        /// Group number.
        group: u32,
        /// Why.
        error: String,
    },
}

/// A readable group descriptor and where the group's metadata is.
#[derive(Serialize, JsonSchema)]
pub struct GroupRead {
    /// The descriptor's fields (64-bit values combined).
    #[serde(flatten)]
    pub desc: crate::reader::group::GroupDesc,
    /// First block of the group.
    pub first_block: u64,
    /// Last block of the group.
    pub last_block: u64,
    /// `bg_flags`.
    pub flags: Flags,
    /// The descriptor checksum matches.
    pub checksum_ok: bool,
    /// Superblock (copy) block, 0 when the group has none (group 0 may be block 0).
    pub superblock: u64,
    /// The group holds the superblock or a backup of it.
    pub has_superblock: bool,
    /// First block of the classic descriptor table copy, 0 when none.
    pub old_desc_block: u64,
    /// The meta_bg descriptor block, 0 when none.
    pub new_desc_block: u64,
}

/// Group `group` of `fs`.
pub fn group(fs: &Filesystem, group: u32) -> GroupJson {
    let lay = fs.geo.layout(group);
    match fs.desc(group) {
        Ok(gd) => GroupJson::Read(GroupRead {
            first_block: fs.geo.group_first_block(group),
            last_block: fs.geo.group_last_block(group),
            flags: Flags::new(gd.flags, flag_names(gd.flags)),
            checksum_ok: gd.checksum_ok(&fs.ctx),
            superblock: lay.super_blk,
            has_superblock: group == 0 || lay.super_blk != 0,
            old_desc_block: lay.old_desc_blk,
            new_desc_block: lay.new_desc_blk,
            desc: gd,
        }),
        Err(e) => GroupJson::Unreadable {
            group,
            error: e.to_string(),
        },
    }
}

/// The groups array, produced one group at a time while it is written.
pub struct Groups<'a>(&'a Filesystem, u32);

impl Serialize for Groups<'_> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_seq((0..self.1).map(|g| group(self.0, g)))
    }
}

impl JsonSchema for Groups<'_> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Groups".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Vec<GroupJson>>::json_schema(generator)
    }
}

/// The journal superblock, or why it could not be read.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum JournalJson {
    /// The decoded journal superblock.
    Read(crate::reader::journal::JournalSuperblock),
    /// The journal could not be read.
    Unreadable {
        /// Why.
        error: String,
    },
}

/// Why the journal superblock could not be read, in dumpe2fs' words.
fn journal_failure(failure: &crate::reader::journal::JournalFailure) -> String {
    use crate::reader::journal::JournalFailure as F;
    match failure {
        F::ReadInode(m) => format!("{m} while reading journal inode"),
        F::ReadSuper(m) => format!("{m} while reading journal super block"),
        F::BadMagic => "Journal superblock magic number invalid!".to_string(),
    }
}

/// The `dump --json` document, for streaming with `serde_json::to_writer*`: its `groups` are
/// produced while it is written, so memory stays flat with the group count (65536 groups on an
/// 8 TiB image would otherwise be a few hundred MiB of values).
#[derive(Serialize, JsonSchema)]
pub struct Document<'a> {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// The image, device or file read.
    pub image: String,
    /// The superblock.
    pub superblock: SuperblockJson<'a>,
    /// Quantities derived from the superblock.
    pub geometry: &'a crate::reader::geometry::Geometry,
    /// The journal superblock (internal journal only; null without one).
    pub journal: Option<JournalJson>,
    /// Every group (none with `--header-only`).
    pub groups: Groups<'a>,
    /// Why the primary superblock was not used, when a backup was.
    pub superblock_checksum_failure: Option<&'static str>,
}

/// The `dump --json` document of `fs` read from `image`.
pub fn document<'a>(fs: &'a Filesystem, image: &str, header_only: bool) -> Document<'a> {
    let journal = if fs
        .sb
        .has_compat(crate::reader::features::COMPAT_HAS_JOURNAL)
        && fs.sb.journal_inum != 0
    {
        Some(match crate::reader::journal::read_internal(fs, false) {
            Ok(b) => JournalJson::Read(crate::reader::journal::JournalSuperblock::parse(&b)),
            Err(e) => JournalJson::Unreadable {
                error: journal_failure(&e),
            },
        })
    } else {
        None
    };
    let group_count = if header_only || !fs.has_descriptors() {
        0
    } else {
        fs.geo.group_count
    };
    Document {
        schema_version: SchemaVersion,
        image: image.to_string(),
        superblock: superblock(&fs.sb),
        geometry: &fs.geo,
        journal,
        groups: Groups(fs, group_count),
        superblock_checksum_failure: fs.strict_failure.map(|f| f.message()),
    }
}

/// [`document`] as a `Value` (for callers that inspect it; the CLI streams the document).
pub fn dump(fs: &Filesystem, header_only: bool) -> serde_json::Value {
    serde_json::to_value(document(fs, "", header_only)).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document has no key twice: the decoded superblock values replace the raw ones.
    #[test]
    fn superblock_keys_are_unique() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example.img");
        let fs = Filesystem::open(std::path::Path::new(path), &Default::default()).unwrap();
        let text = serde_json::to_string(&document(&fs, path, false)).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let key_count = doc["superblock"].as_object().unwrap().len();
        let sb_text = serde_json::to_string(&superblock(&fs.sb)).unwrap();
        assert_eq!(sb_text.matches("\"uuid\":").count(), 1);
        assert_eq!(sb_text.matches("\"state\":").count(), 1);
        assert!(key_count > 100, "{key_count} superblock keys");
        assert_eq!(doc["schema_version"], SCHEMA_VERSION);
    }
}
