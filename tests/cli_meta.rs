//! The shipped man page matches the clap definition; completions generate; the README example runs.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

#[test]
fn man_page_is_current() {
    let o = run(Command::new(bin()).arg("manpage"));
    assert!(o.status.success());
    let shipped = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/man/e4inspect.1"))
        .expect("man/e4inspect.1 exists");
    assert!(
        o.stdout == shipped,
        "man/e4inspect.1 is stale: regenerate with `cargo run --release -- manpage > man/e4inspect.1`"
    );
}

#[test]
fn completions_generate() {
    for sh in ["bash", "zsh", "fish"] {
        let o = run(Command::new(bin()).args(["completions", sh]));
        assert!(o.status.success(), "{sh}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("e4inspect") && text.contains("dump"),
            "{sh}: {text:.200}"
        );
    }
}

#[test]
fn shipped_fixture_dumps_like_dumpe2fs() {
    let img = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example.img");
    let e = run(Command::new(bin()).args(["dump", img]).env("TZ", "UTC"));
    assert_eq!(e.status.code(), Some(0));
    let text = String::from_utf8_lossy(&e.stdout);
    assert!(text.contains("Filesystem volume name:   example"));
    assert!(text.contains("Group 0: (Blocks 1-"));
    if have("dumpe2fs") {
        let d = run(Command::new(which("dumpe2fs").unwrap())
            .arg(img)
            .env("TZ", "UTC"));
        assert!(d.stdout == e.stdout, "fixture dump differs from dumpe2fs");
    }
}

#[test]
fn image_is_never_written() {
    // The source is opened O_RDONLY: a read-only copy works, and its bytes do not change.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("ro.img");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example.img"),
        &p,
    )
    .unwrap();
    let before = std::fs::read(&p).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    for args in [&["dump"][..], &["dump", "-h"], &["dump", "--json"]] {
        let o = run(Command::new(bin()).args(args).arg(&p));
        assert_eq!(o.status.code(), Some(0), "{args:?}");
    }
    assert!(std::fs::read(&p).unwrap() == before, "image changed");
}

/// The README's rule table is the catalogue (`check --list-rules --json`), row for row, so it
/// cannot drift from the code: regenerate it from that JSON when a rule is added.
#[test]
fn readme_rule_table_is_the_catalogue() {
    let out = common::run(Command::new(common::bin()).args(["check", "--list-rules", "--json"]));
    assert!(out.status.success());
    let rules: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes = |r: &serde_json::Value, key: &str, quote: bool| -> String {
        let v: Vec<String> = r[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let c = c.as_str().unwrap();
                if quote {
                    format!("`{c}`")
                } else {
                    c.to_string()
                }
            })
            .collect();
        if v.is_empty() {
            "-".into()
        } else {
            v.join(", ")
        }
    };
    let expected: Vec<String> = rules["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "| `{}` | {} | {} | {} | {} |",
                r["rule"].as_str().unwrap(),
                r["severity"].as_str().unwrap(),
                r["description"].as_str().unwrap(),
                codes(r, "enforced_by", false),
                codes(r, "e2fsck", true)
            )
        })
        .collect();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let table: Vec<String> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| rule | severity | description"))
        .skip(2)
        .take_while(|l| l.starts_with("| `"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        table, expected,
        "README rule table differs from check --list-rules"
    );
}
