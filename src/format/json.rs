//! JSON views (stable field names) of the structures dumpe2fs shows.

use crate::fs::Filesystem;
use crate::group::flag_names;
use crate::superblock::{uuid_string, Superblock};
use serde_json::{json, Value};

/// The superblock: every raw field plus decoded names.
pub fn superblock(sb: &Superblock) -> Value {
    let mut v = serde_json::to_value(sb).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        let s = |b: &[u8]| String::from_utf8_lossy(crate::superblock::cstr(b)).into_owned();
        m.insert("volume_name".into(), json!(s(&sb.volume_name)));
        m.insert("last_mounted".into(), json!(s(&sb.last_mounted)));
        m.insert("mount_opts".into(), json!(s(&sb.mount_opts)));
        m.insert("first_error_func".into(), json!(s(&sb.first_error_func)));
        m.insert("last_error_func".into(), json!(s(&sb.last_error_func)));
        m.insert("uuid".into(), json!(uuid_string(&sb.uuid)));
        m.insert("journal_uuid".into(), json!(uuid_string(&sb.journal_uuid)));
        m.insert("hash_seed".into(), json!(uuid_string(&sb.hash_seed)));
        m.insert(
            "encrypt_pw_salt".into(),
            json!(uuid_string(&sb.encrypt_pw_salt)),
        );
        m.insert("blocks_count".into(), json!(sb.blocks_count()));
        m.insert("r_blocks_count".into(), json!(sb.r_blocks_count()));
        m.insert("free_blocks_count".into(), json!(sb.free_blocks_count()));
        m.insert("block_size".into(), json!(sb.block_size()));
        m.insert("cluster_size".into(), json!(sb.cluster_size()));
        m.insert("features".into(), json!(sb.feature_names()));
        m.insert(
            "default_mount_options".into(),
            json!(crate::features::mntopt_names(sb.default_mount_opts)),
        );
        m.insert("checksum_ok".into(), json!(sb.checksum_ok()));
        m.insert("computed_checksum".into(), json!(sb.computed_checksum()));
    }
    v
}

/// One group: descriptor fields, flags by name, layout, and checksum status.
pub fn group(fs: &Filesystem, g: u32) -> Value {
    let lay = fs.geo.layout(g);
    match fs.desc(g) {
        Ok(gd) => {
            let mut v = serde_json::to_value(&gd).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut v {
                m.insert("first_block".into(), json!(fs.geo.group_first_block(g)));
                m.insert("last_block".into(), json!(fs.geo.group_last_block(g)));
                m.insert("flag_names".into(), json!(flag_names(gd.flags)));
                m.insert("checksum_ok".into(), json!(gd.checksum_ok(&fs.ctx)));
                m.insert("superblock".into(), json!(lay.super_blk));
                m.insert("has_superblock".into(), json!(g == 0 || lay.super_blk != 0));
                m.insert("old_desc_block".into(), json!(lay.old_desc_blk));
                m.insert("new_desc_block".into(), json!(lay.new_desc_blk));
            }
            v
        }
        Err(e) => json!({"group": g, "error": e.to_string()}),
    }
}

/// Everything `dump --json` shows: superblock, geometry, journal superblock, groups.
pub fn dump(fs: &Filesystem, header_only: bool) -> Value {
    serde_json::to_value(document(fs, header_only)).unwrap_or(Value::Null)
}

/// The groups array, produced one group at a time while it is written.
struct Groups<'a>(&'a Filesystem, u32);

impl serde::Serialize for Groups<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq((0..self.1).map(|g| group(self.0, g)))
    }
}

/// What [`dump`] returns, as a serializable document whose `groups` are produced while it is
/// written: memory stays flat with the group count (65536 groups on an 8 TiB image would
/// otherwise be a few hundred MiB of `Value`s). Keys in the order `Value` sorts them.
#[derive(serde::Serialize)]
pub struct Document<'a> {
    geometry: Value,
    groups: Groups<'a>,
    journal: Value,
    superblock: Value,
    superblock_checksum_failure: Option<&'static str>,
}

/// The `dump --json` document for streaming with `serde_json::to_writer*`.
pub fn document(fs: &Filesystem, header_only: bool) -> Document<'_> {
    let journal =
        if fs.sb.has_compat(crate::features::COMPAT_HAS_JOURNAL) && fs.sb.journal_inum != 0 {
            match crate::journal::read_internal(fs, false) {
                Ok(b) => serde_json::to_value(crate::journal::JournalSuperblock::parse(&b))
                    .unwrap_or(Value::Null),
                Err(e) => json!({ "error": format!("{e:?}") }),
            }
        } else {
            Value::Null
        };
    let n = if header_only || !fs.has_descriptors() {
        0
    } else {
        fs.geo.group_count
    };
    Document {
        geometry: serde_json::to_value(&fs.geo).unwrap_or(Value::Null),
        groups: Groups(fs, n),
        journal,
        superblock: superblock(&fs.sb),
        superblock_checksum_failure: fs.strict_failure.map(|f| f.message()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Streaming the document writes exactly what serialising the `Value` writes.
    #[test]
    fn streamed_document_equals_value() {
        let p = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example.img");
        let fs = Filesystem::open(std::path::Path::new(p), &Default::default()).unwrap();
        for header_only in [false, true] {
            let streamed = serde_json::to_string_pretty(&document(&fs, header_only)).unwrap();
            let value = serde_json::to_string_pretty(&dump(&fs, header_only)).unwrap();
            assert_eq!(streamed, value);
            assert!(streamed.contains("\"groups\": ["));
        }
    }
}
