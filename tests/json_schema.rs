//! Every `--json` document validates against its committed schema in `docs/schema/` (generated
//! from the output types: `cargo test --bin e4inspect schema`), parses without a duplicate key,
//! is an object with `schema_version`, keeps one top-level shape whatever the number of inputs
//! and is the same from one run to the next. Over the fixture and, when present, over the
//! e2fsprogs conformance corpus (`../shared/corpus/e2fsprogs`).

mod common;

use common::{bin, run};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example.img");

/// A JSON value walked only to refuse an object with a key twice (serde_json keeps the last).
struct NoDuplicateKeys;

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicateKeysVisitor)
    }
}

struct NoDuplicateKeysVisitor;

impl<'de> Visitor<'de> for NoDuplicateKeysVisitor {
    type Value = NoDuplicateKeys;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        while a.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut seen = HashSet::new();
        while let Some(k) = a.next_key::<String>()? {
            if !seen.insert(k.clone()) {
                return Err(de::Error::custom(format!("duplicate key `{k}`")));
            }
            a.next_value::<NoDuplicateKeys>()?;
        }
        Ok(NoDuplicateKeys)
    }
}

/// Err naming the first key that appears twice in one object of `text`.
fn check_no_duplicate_keys(text: &str) -> Result<(), String> {
    serde_json::from_str::<NoDuplicateKeys>(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn duplicate_key_check_finds_duplicates() {
    assert!(check_no_duplicate_keys(r#"{"a":1,"b":{"c":[{"d":1,"d":2}]}}"#).is_err());
    assert!(check_no_duplicate_keys(r#"{"a":1,"b":{"a":[{"a":1}]}}"#).is_ok());
}

/// The validator of `docs/schema/<name>.schema.json`, built once.
fn validator(name: &str) -> &'static jsonschema::Validator {
    static CACHE: OnceLock<Mutex<HashMap<String, &'static jsonschema::Validator>>> =
        OnceLock::new();
    let mut m = CACHE.get_or_init(Default::default).lock().unwrap();
    m.entry(name.to_string()).or_insert_with(|| {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs/schema")
            .join(format!("{name}.schema.json"));
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let schema: Value = serde_json::from_str(&text).unwrap();
        // Formats are checked too (`uuid`, ...); schemars' numeric formats (`uint32`) are
        // unknown to the validator and ignored.
        let v = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap_or_else(|e| panic!("{}: not a valid schema: {e}", p.display()));
        Box::leak(Box::new(v))
    })
}

/// `text` as the document `schema` describes: no duplicate key, valid against the schema, an
/// object with `schema_version`; Err says what is wrong.
fn try_validate(schema: &str, text: &str) -> Result<Value, String> {
    check_no_duplicate_keys(text)?;
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let errors: Vec<String> = validator(schema)
        .iter_errors(&v)
        .take(5)
        .map(|e| {
            format!(
                "{} at {}",
                e.to_string().chars().take(300).collect::<String>(),
                e.instance_path
            )
        })
        .collect();
    if !errors.is_empty() {
        return Err(format!(
            "not valid against {schema}.schema.json: {errors:#?}"
        ));
    }
    if v["schema_version"] != 1 {
        return Err("no schema_version 1".into());
    }
    Ok(v)
}

/// [`try_validate`], panicking with `what` on failure.
fn validate(schema: &str, what: &str, text: &str) -> Value {
    try_validate(schema, text).unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn e4(args: &[&str]) -> Output {
    run(Command::new(bin()).args(args))
}

/// Run `e4inspect ARGS` (with `--json`) and validate stdout against `schema`.
fn json_of(schema: &str, args: &[&str]) -> (Value, Output) {
    let out = e4(args);
    let what = format!("e4inspect {}", args.join(" "));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = validate(schema, &what, &text);
    (v, out)
}

/// Run twice; the two documents are the same byte for byte (no timings, no ordering by hash).
fn deterministic(schema: &str, args: &[&str]) -> Value {
    let (v, first) = json_of(schema, args);
    let second = e4(args);
    assert_eq!(
        String::from_utf8_lossy(&first.stdout),
        String::from_utf8_lossy(&second.stdout),
        "e4inspect {} differs between two runs",
        args.join(" ")
    );
    v
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir()
        .join("e4inspect-json-schema")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn dump_documents() {
    let v = deterministic("dump", &["dump", "--json", FIXTURE]);
    let sb = &v["superblock"];
    assert!(sb["uuid"].is_string());
    assert!(sb["journal_uuid"].is_string());
    assert_eq!(sb["state"]["name"], "clean");
    assert_eq!(sb["errors"]["raw"], sb["errors"]["raw"].as_u64().unwrap());
    assert!(sb["mkfs_time"]["utc"].as_str().unwrap().ends_with('Z'));
    assert!(v["journal"]["uuid"].is_string(), "{}", v["journal"]);
    assert!(v["journal"]["block_size"].is_u64());
    assert!(!v["groups"].as_array().unwrap().is_empty());
    let h = deterministic("dump", &["dump", "--json", "-h", FIXTURE]);
    assert!(h["groups"].as_array().unwrap().is_empty());
}

#[test]
fn check_documents_have_one_shape() {
    let one = deterministic("check", &["check", "--json", FIXTURE]);
    assert_eq!(one["images"].as_array().unwrap().len(), 1);
    let (two, _) = json_of("check", &["check", "--json", FIXTURE, FIXTURE]);
    assert_eq!(two["images"].as_array().unwrap().len(), 2);
    let (missing, out) = json_of("check", &["check", "--json", FIXTURE, "/nonexistent.img"]);
    assert_eq!(out.status.code(), Some(8));
    let images = missing["images"].as_array().unwrap();
    assert_eq!(images.len(), 2);
    assert!(images[1]["error"].is_string());
}

#[test]
fn rule_catalogue_and_findings_name_the_rule_alike() {
    let rules = deterministic("check-rules", &["check", "--list-rules", "--json"]);
    let ids: HashSet<&str> = rules["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    assert!(ids.len() > 10);
    // A damaged copy of the fixture has findings; each names its rule with the same key.
    let d = scratch("check-rules");
    let img = d.join("bad.img");
    std::fs::copy(FIXTURE, &img).unwrap();
    if common::have("debugfs") {
        let st = run(Command::new(common::which("debugfs").unwrap())
            .args(["-w", "-R", "set_bg 0 checksum 1"])
            .arg(&img));
        assert!(st.status.success());
        let (v, out) = json_of("check", &["check", "--json", img.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(4));
        let findings = v["images"][0]["findings"].as_array().unwrap();
        assert!(!findings.is_empty());
        for f in findings {
            assert!(ids.contains(f["rule"].as_str().unwrap()), "{f}");
        }
    } else {
        eprintln!("debugfs not installed: the findings half is skipped");
    }
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn inode_reports_every_target() {
    let (v, out) = json_of(
        "inode",
        &[
            "inode",
            "--json",
            FIXTURE,
            "2",
            "/docs/big.txt",
            "/docs/nope",
            "<999999999>",
            "/docs/fastlink",
        ],
    );
    assert_eq!(out.status.code(), Some(8));
    let inodes = v["inodes"].as_array().unwrap();
    assert_eq!(inodes.len(), 5);
    assert_eq!(inodes[0]["ino"], 2);
    assert_eq!(inodes[0]["mode"]["octal"], "40755");
    assert_eq!(inodes[0]["target"], "2");
    assert!(inodes[1]["mtime"]["utc"]
        .as_str()
        .unwrap()
        .starts_with("2023-11-14T22:13:20"));
    assert!(inodes[2]["error"].is_string());
    assert!(inodes[3]["error"].is_string());
    assert_eq!(inodes[4]["data"]["kind"], "fast_symlink");
    deterministic(
        "inode",
        &["inode", "--json", FIXTURE, "2", "12", "/docs/big.txt"],
    );
}

#[test]
fn ls_lists_every_target_in_one_document() {
    let v = deterministic("ls", &["ls", "--json", FIXTURE]);
    assert_eq!(v["listings"].as_array().unwrap().len(), 1);
    let (v, out) = json_of(
        "ls",
        &["ls", "--json", FIXTURE, "/", "/docs/small.txt", "/nope"],
    );
    assert_eq!(out.status.code(), Some(8));
    let l = v["listings"].as_array().unwrap();
    assert_eq!(l.len(), 3);
    assert_eq!(l[1]["entries"][0]["name"], "small.txt");
    assert!(l[2]["error"].is_string());
}

#[test]
fn xattrs_timings_only_on_request() {
    let v = deterministic("xattrs", &["xattrs", "--json", "--no-progress", FIXTURE]);
    assert!(v.get("seconds").is_none());
    let (t, _) = json_of(
        "xattrs",
        &["xattrs", "--json", "--no-progress", "--timings", FIXTURE],
    );
    assert!(t["seconds"].is_f64());
}

/// `find --json` prints one object per line, each validating against find.schema.json.
#[test]
fn find_lines_each_validate() {
    let out = e4(&["find", "--json", "--xattr", "user.comment", FIXTURE]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut n = 0;
    for line in text.lines() {
        let v = validate("find", "find --json line", line);
        assert_eq!(v["xattrs"][0]["name"], "user.comment");
        n += 1;
    }
    assert!(n > 0, "the fixture has files with user.comment");
    let all = e4(&["find", "--json", FIXTURE]);
    for line in String::from_utf8_lossy(&all.stdout).lines() {
        validate("find", "find --json line", line);
    }
}

#[test]
fn fit_documents() {
    deterministic(
        "fit",
        &[
            "fit",
            "--json",
            "--xattr",
            "user.a=12",
            "--profile",
            "selinux",
        ],
    );
    deterministic("fit", &["fit", "--json", "--from-image", FIXTURE]);
    deterministic("fit-profiles", &["fit", "--list-profiles", "--json"]);
    // --from-dir once emitted `all_in_inode` twice in one object.
    let d = scratch("fit-dir");
    for i in 0..5 {
        std::fs::write(d.join(format!("f{i}")), b"x").unwrap();
    }
    let (v, out) = json_of("fit", &["fit", "--json", "--from-dir", d.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert!(v["results"][0]["tree"]["all_in_inode"].is_u64());
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn advise_document() {
    deterministic(
        "advise",
        &["advise", "--json", "--size", "10G", "--files", "100000"],
    );
}

#[test]
fn freefrag_and_journal_documents() {
    deterministic("freefrag", &["freefrag", "--json", FIXTURE]);
    let v = deterministic("journal", &["journal", "--json", FIXTURE]);
    assert!(v["events"].is_array());
}

/// `journal --json` says `null` for what was not asked (no `-b`, no `-i`), never debugfs'
/// all-ones sentinel; what was asked is a number.
#[test]
fn journal_trace_unset_is_null() {
    let v = deterministic("journal", &["journal", "--json", FIXTURE]);
    let trace = &v["options"]["trace"];
    for k in [
        "block",
        "bitmap",
        "bitmap_bit",
        "inode",
        "inode_block",
        "inode_offset",
    ] {
        assert!(trace[k].is_null(), "{k}: {trace}");
    }
    assert!(!v.to_string().contains(&u64::MAX.to_string()), "{v}");
    let (v, _) = json_of(
        "journal",
        &["journal", "--json", "-b", "100", "-i", "<12>", FIXTURE],
    );
    let trace = &v["options"]["trace"];
    assert_eq!(trace["block"], 100, "{trace}");
    assert!(
        trace["bitmap"].is_u64() && trace["bitmap_bit"].is_u64(),
        "{trace}"
    );
    assert_eq!(trace["inode"], 12, "{trace}");
    assert!(
        trace["inode_block"].is_u64() && trace["inode_offset"].is_u64(),
        "{trace}"
    );
}

/// Every value of `key` anywhere in `v`.
fn values_of<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == key {
                    out.push(x);
                }
                values_of(x, key, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| values_of(x, key, out)),
        _ => {}
    }
}

/// POSIX ACL tags are `{raw, name}` as every enumerated value, with libacl's names.
#[test]
fn acl_tags_are_named() {
    let v = deterministic("inode", &["inode", "--json", FIXTURE, "/docs/small.txt"]);
    let mut tags = Vec::new();
    values_of(&v, "tag", &mut tags);
    assert!(
        tags.len() >= 3,
        "the fixture's /docs/small.txt has an ACL: {v}"
    );
    let names = [
        (1, "user_obj"),
        (2, "user"),
        (4, "group_obj"),
        (8, "group"),
        (0x10, "mask"),
        (0x20, "other"),
    ];
    for t in tags {
        let raw = t["raw"].as_u64().unwrap_or_else(|| panic!("bare tag {t}"));
        let (_, name) = names.iter().find(|(r, _)| *r == raw).unwrap();
        assert_eq!(t["name"], *name, "{t}");
    }
}

/// Property names, enum values and constants anywhere in a schema.
fn schema_words(v: &Value, out: &mut HashSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("properties", Value::Object(p)) => out.extend(p.keys().cloned()),
                    ("enum", Value::Array(a)) => {
                        out.extend(a.iter().filter_map(|e| e.as_str().map(String::from)))
                    }
                    ("const", Value::String(c)) => {
                        out.insert(c.clone());
                    }
                    _ => {}
                }
                schema_words(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| schema_words(x, out)),
        _ => {}
    }
}

/// The places docs/guide.md names JSON fields: paragraphs and bullets about `--json`, the last
/// ("JSON fields") column of the decoder table, and the `# ...` comment of a `--json` command in
/// a code block.
fn guide_json_passages(guide: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut para = String::new();
    let mut fence = false;
    let mut json_table = false;
    let flush = |para: &mut String, out: &mut Vec<String>| {
        if para.contains("`--json`") || para.contains("--json` prints") {
            out.push(std::mem::take(para));
        }
        para.clear();
    };
    for line in guide.lines() {
        if line.starts_with("```") {
            fence = !fence;
            flush(&mut para, &mut out);
            continue;
        }
        if fence {
            // A comment showing a document's shape: `# [{name, inode, ...}]`.
            if let (true, Some((_, comment))) = (line.contains("--json"), line.split_once('#')) {
                if comment.contains(['{', '[']) {
                    out.push(format!("`{}`", comment.trim()));
                }
            }
            continue;
        }
        if line.starts_with('|') {
            // Only a table whose header names its last column "JSON fields".
            if line.contains("JSON fields") {
                json_table = true;
            } else if json_table {
                let cells: Vec<&str> = line.trim_matches('|').split('|').collect();
                out.push(cells[cells.len() - 1].to_string());
            }
            continue;
        }
        json_table = false;
        if line.trim().is_empty() || line.starts_with("- ") || line.starts_with('#') {
            flush(&mut para, &mut out);
        }
        para.push_str(line);
        para.push(' ');
    }
    flush(&mut para, &mut out);
    out
}

/// Every field name docs/guide.md shows for a JSON document exists in a schema of docs/schema
/// (as a property, or as an enum value where the guide lists values): a renamed or reshaped
/// field (`bytes_used` for `used_bytes`, the old `xattr_space`) fails here.
#[test]
fn guide_names_only_fields_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut known = HashSet::new();
    for e in std::fs::read_dir(root.join("docs/schema"))
        .unwrap()
        .flatten()
    {
        let v: Value = serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
        schema_words(&v, &mut known);
    }
    // Words in those passages that are not field names: values of Lustre's `magic` and a tool.
    const NOT_FIELDS: &[&str] = &["v1", "v3", "comp", "cp"];
    let guide = std::fs::read_to_string(root.join("docs/guide.md")).unwrap();
    let mut unknown = Vec::new();
    for passage in guide_json_passages(&guide) {
        for span in passage.split('`').skip(1).step_by(2) {
            let shape = span.contains(['{', '[', ',', ':']);
            // Commands, paths, option names and prose in backticks name no field.
            if span.contains('/') || span.starts_with('-') || (span.contains(' ') && !shape) {
                continue;
            }
            for word in span.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')) {
                let field = !word.is_empty()
                    && word.starts_with(|c: char| c.is_ascii_lowercase())
                    && word
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                // `s_*` are on-disk C names the guide maps fields to, not fields.
                if field
                    && !word.starts_with("s_")
                    && !known.contains(word)
                    && !NOT_FIELDS.contains(&word)
                {
                    unknown.push(format!("{word} (in `{span}`)"));
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "docs/guide.md names JSON fields no schema has:\n{}",
        unknown.join("\n")
    );
}

#[test]
fn extract_document() {
    let d = scratch("extract");
    let (v, out) = json_of(
        "extract",
        &[
            "extract",
            "--json",
            FIXTURE,
            "/docs",
            d.join("out").to_str().unwrap(),
        ],
    );
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(4),
        "{out:?}"
    );
    assert!(v["files"].as_u64().unwrap() > 0);
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn diff_document() {
    let d = scratch("diff");
    // An image against itself (no change), and against a tree (every path of the image added
    // to the side that lacks it): both documents validate.
    let (v, out) = json_of("diff", &["diff", "--json", FIXTURE, FIXTURE]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(v["changes"].as_array().unwrap().is_empty());
    std::fs::create_dir_all(d.join("empty")).unwrap();
    let (v, out) = json_of(
        "diff",
        &["diff", "--json", FIXTURE, d.join("empty").to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert!(!v["changes"].as_array().unwrap().is_empty());
    let _ = std::fs::remove_dir_all(d);
}

/// The corpus images, unpacked under the temp dir (once per run).
fn corpus_images() -> Option<Vec<(String, PathBuf)>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/e2fsprogs");
    let root = if root.is_dir() {
        root
    } else {
        PathBuf::from("/work/shared/corpus/e2fsprogs")
    };
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("image.gz").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    if names.is_empty() || !common::have("gunzip") {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("e4inspect-json-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut v = Vec::new();
    for n in names {
        let img = dir.join(format!("{n}.img"));
        let out = run(Command::new("sh")
            .arg("-c")
            .arg("gunzip -c \"$1\" > \"$2\"")
            .arg("sh")
            .arg(root.join(&n).join("image.gz"))
            .arg(&img));
        if out.status.success() {
            v.push((n, img));
        }
    }
    Some(v)
}

/// Every command's JSON over every corpus image: valid against its schema whatever the image
/// (damaged ones included), with no duplicate key. Commands that cannot open an image print no
/// document (exit 8); those are counted, and must not be all.
#[test]
fn corpus_documents_validate() {
    let Some(images) = corpus_images() else {
        eprintln!("corpus ../shared/corpus/e2fsprogs absent (or no gunzip): skipped");
        return;
    };
    let mut validated = 0;
    let mut no_document = 0;
    let mut failures = Vec::new();
    for (name, img) in &images {
        let p = img.to_str().unwrap();
        let runs: [(&str, Vec<&str>); 7] = [
            ("dump", vec!["dump", "--json", p]),
            ("check", vec!["check", "--json", p]),
            (
                "inode",
                vec![
                    "inode",
                    "--json",
                    p,
                    "2",
                    "7",
                    "8",
                    "11",
                    "12",
                    "/lost+found",
                ],
            ),
            ("ls", vec!["ls", "--json", "-d", p, "/"]),
            ("xattrs", vec!["xattrs", "--json", "--no-progress", p]),
            ("freefrag", vec!["freefrag", "--json", p]),
            ("journal", vec!["journal", "--json", p]),
        ];
        for (schema, args) in runs {
            let out = e4(&args);
            let text = String::from_utf8_lossy(&out.stdout);
            let what = format!("{name}: e4inspect {}", args.join(" "));
            if text.trim().is_empty() {
                if out.status.code() != Some(8) {
                    failures.push(format!("{what}: no document, exit {:?}", out.status.code()));
                }
                no_document += 1;
                continue;
            }
            match try_validate(schema, &text) {
                Ok(_) => validated += 1,
                Err(e) => failures.push(format!("{what}: {e}")),
            }
        }
    }
    let _ = std::fs::remove_dir_all(images[0].1.parent().unwrap());
    eprintln!(
        "{} images: {validated} documents validated, {no_document} runs without a document",
        images.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures: {failures:#?}",
        failures.len()
    );
    assert!(validated > no_document);
}
