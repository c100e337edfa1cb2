//! The JSON Schema of every `--json` document, generated from the output types (schemars) and
//! compared with the committed files in `docs/schema/`: the test fails when one is stale.
//!
//! Regenerate after changing an output type:
//! `E4INSPECT_BLESS_SCHEMAS=1 cargo test --release --bin e4inspect schema` (see `docs/json.md`).

use schemars::{schema_for, Schema};

/// `(file stem, schema)` of every document: `docs/schema/<stem>.schema.json`.
pub fn all() -> Vec<(&'static str, Schema)> {
    vec![
        ("dump", schema_for!(e4inspect::format::json::Document<'static>)),
        ("check", schema_for!(super::check::CheckDocument)),
        ("check-rules", schema_for!(super::check::RulesDocument)),
        ("inode", schema_for!(super::inode::InodeDocument)),
        ("ls", schema_for!(super::ls::LsDocument)),
        ("xattrs", schema_for!(super::xattrs::XattrsDocument)),
        ("fit", schema_for!(super::fit::JsonOut)),
        ("fit-profiles", schema_for!(super::fit::ProfileList)),
        ("extract", schema_for!(super::extract::ExtractDocument<'static>)),
        ("advise", schema_for!(super::advise::AdviseDocument<'static>)),
        ("freefrag", schema_for!(super::freefrag::FreefragDocument)),
        ("journal", schema_for!(super::journal::JournalDocument)),
    ]
}

/// The committed text of a schema: pretty JSON with a final newline.
pub fn text(schema: &Schema) -> String {
    let mut s = serde_json::to_string_pretty(schema).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every committed schema equals the one generated from the types (or is rewritten, with
    /// `E4INSPECT_BLESS_SCHEMAS=1`).
    #[test]
    fn committed_schemas_are_current() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
        let bless = std::env::var_os("E4INSPECT_BLESS_SCHEMAS").is_some();
        let mut stale = Vec::new();
        for (name, schema) in super::all() {
            let path = dir.join(format!("{name}.schema.json"));
            let want = super::text(&schema);
            if bless {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &want).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(want.as_str()) {
                stale.push(path.display().to_string());
            }
        }
        assert!(
            stale.is_empty(),
            "stale JSON schemas {stale:?}: regenerate with \
             E4INSPECT_BLESS_SCHEMAS=1 cargo test --release --bin e4inspect schema"
        );
    }

    /// No file in docs/schema/ is left over from a document that no longer exists.
    #[test]
    fn no_orphan_schema_files() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
        let names: Vec<String> = super::all()
            .iter()
            .map(|(n, _)| format!("{n}.schema.json"))
            .collect();
        for e in std::fs::read_dir(&dir).unwrap() {
            let f = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(names.contains(&f), "docs/schema/{f} has no document type");
        }
    }

    /// Every document's schema requires `schema_version` at the top level of an object.
    #[test]
    fn every_document_is_a_versioned_object() {
        for (name, schema) in super::all() {
            let v = schema.as_value();
            assert_eq!(v["type"], "object", "{name}");
            let required = v["required"].as_array().unwrap();
            assert!(
                required.iter().any(|k| k == "schema_version"),
                "{name}: schema_version not required"
            );
        }
    }
}
