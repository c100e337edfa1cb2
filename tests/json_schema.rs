//! placeholder
#[test]
fn builds() {
    let _ = jsonschema::validator_for(&serde_json::json!({}));
}
