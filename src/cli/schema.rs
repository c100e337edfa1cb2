//! The JSON Schema of every `--json` document, generated from the output types (schemars) and
//! compared with the committed files in `docs/schema/`: the test fails when one is stale.
//!
//! Regenerate after changing an output type:
//! `E4INSPECT_BLESS=1 cargo test --release --bin e4inspect schema` (see `docs/json.md`).

use schemars::{generate::SchemaSettings, JsonSchema, Schema};
use serde_json::Value;

/// `(file stem, schema)` of every document: `docs/schema/<stem>.schema.json`.
pub fn all() -> Vec<(&'static str, Schema)> {
    vec![
        (
            "dump",
            strict::<e4inspect::format::json::Document<'static>>(),
        ),
        ("check", strict::<super::check::CheckDocument>()),
        ("check-rules", strict::<super::check::RulesDocument>()),
        (
            "inode",
            strict::<e4inspect::format::inode_json::InodeDocument>(),
        ),
        ("ls", strict::<super::ls::LsDocument>()),
        ("ncheck", strict::<super::ncheck::NcheckDocument>()),
        ("icheck", strict::<super::icheck::IcheckDocument>()),
        ("xattrs", strict::<super::xattrs::XattrsDocument>()),
        ("find", strict::<super::find::FindRecord>()),
        ("fit", strict::<e4inspect::format::fit::JsonOut>()),
        ("fit-profiles", strict::<super::fit::ProfileList>()),
        (
            "extract",
            strict::<super::extract::ExtractDocument<'static>>(),
        ),
        ("diff", strict::<super::diff::DiffDocument<'static>>()),
        ("advise", strict::<super::advise::AdviseDocument<'static>>()),
        ("freefrag", strict::<super::freefrag::FreefragDocument>()),
        ("journal", strict::<super::journal::JournalDocument>()),
        ("quota", strict::<super::quota::QuotaDocument>()),
    ]
}

/// The draft 2020-12 schema of `T`, where an object may carry only the keys its type declares
/// (`unevaluatedProperties: false`), so a key printed but not declared fails validation.
fn strict<T: JsonSchema>() -> Schema {
    let root = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = Value::from(root);
    let mut extended = Vec::new();
    refs_beside_properties(&value, &mut extended);
    if let Some(Value::Object(defs)) = value.get_mut("$defs") {
        for (name, def) in defs.iter_mut() {
            // A definition that another schema extends with its own keys (an internally
            // tagged variant adds its tag) is closed by that schema, not by itself.
            let piece = extended.iter().any(|r| r == &format!("#/$defs/{name}"));
            close_objects(def, piece);
        }
    }
    if let Value::Object(object) = &mut value {
        for (key, sub) in object.iter_mut().filter(|(key, _)| key.as_str() != "$defs") {
            let piece = matches!(key.as_str(), "anyOf" | "oneOf" | "allOf");
            close_objects(sub, piece);
        }
        if object.contains_key("properties") && !object.contains_key("additionalProperties") {
            object.insert("unevaluatedProperties".into(), Value::Bool(false));
        }
    }
    Schema::try_from(value).unwrap_or_default()
}

/// The `$ref`s that sit beside `properties` in one schema object (the object extends them).
fn refs_beside_properties(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            if object.contains_key("properties") {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    out.push(reference.clone());
                }
            }
            object.values().for_each(|x| refs_beside_properties(x, out));
        }
        Value::Array(items) => items.iter().for_each(|x| refs_beside_properties(x, out)),
        _ => {}
    }
}

/// Close every whole object schema: one with `properties` and no `additionalProperties`, unless
/// it is a piece of a flattened type (a member of `anyOf`/`oneOf`/`allOf` beside the parent's
/// own `properties`), where the parent's closing covers it.
fn close_objects(value: &mut Value, piece: bool) {
    let Value::Object(object) = value else {
        if let Value::Array(items) = value {
            items.iter_mut().for_each(|x| close_objects(x, piece));
        }
        return;
    };
    let has_props = object.contains_key("properties");
    if has_props && !piece && !object.contains_key("additionalProperties") {
        object.insert("unevaluatedProperties".into(), Value::Bool(false));
    }
    for (key, sub) in object.iter_mut() {
        let is_piece = has_props && matches!(key.as_str(), "anyOf" | "oneOf" | "allOf");
        close_objects(sub, is_piece);
    }
}

/// The committed text of a schema: pretty JSON with a final newline.
pub fn text(schema: &Schema) -> String {
    let mut pretty = serde_json::to_string_pretty(schema).unwrap_or_default();
    pretty.push('\n');
    pretty
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every committed schema equals the one generated from the types (or is rewritten, with
    /// `E4INSPECT_BLESS=1`).
    #[test]
    fn committed_schemas_are_current() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
        let bless = ["E4INSPECT_BLESS", "E4INSPECT_BLESS_SCHEMAS"]
            .iter()
            .any(|v| std::env::var_os(v).is_some());
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
             E4INSPECT_BLESS=1 cargo test --release --bin e4inspect schema"
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
        for entry in std::fs::read_dir(&dir).unwrap() {
            let file_name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(
                names.contains(&file_name),
                "docs/schema/{file_name} has no document type"
            );
        }
    }

    /// Every document's schema requires `schema_version` at the top level of an object.
    #[test]
    fn every_document_is_a_versioned_object() {
        for (name, schema) in super::all() {
            let value = schema.as_value();
            assert_eq!(value["type"], "object", "{name}");
            let required = value["required"].as_array().unwrap();
            assert!(
                required.iter().any(|k| k == "schema_version"),
                "{name}: schema_version not required"
            );
        }
    }
}
