//! `diff A B` against edits made with `debugfs -w` (exactly the edited paths, with the edited
//! fields), the same image twice (exit 0, no output), two `mke2fs -d` builds of one tree with
//! different UUIDs and times (no path change once times are ignored, the superblock fields
//! listed), and an image against the tree it was built from (no change).

mod common;

use common::{bin, debugfs_script, have, run, which};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn small_tree(dir: &Path) -> PathBuf {
    let t = dir.join("tree");
    std::fs::create_dir_all(t.join("sub")).unwrap();
    for (name, body) in [
        ("plain", "plain\n"),
        ("own", "own\n"),
        ("xat", "x\n"),
        ("w", "original contents\n"),
        ("gone", "bye\n"),
        ("r", "renamed\n"),
        ("hl1", "linked\n"),
    ] {
        std::fs::write(t.join(name), body).unwrap();
    }
    std::fs::hard_link(t.join("hl1"), t.join("hl2")).unwrap();
    std::fs::hard_link(t.join("hl1"), t.join("sub/hl3")).unwrap();
    std::os::unix::fs::symlink("plain", t.join("link")).unwrap();
    t
}

fn build(dir: &Path, tree: &Path, name: &str, uuid: &str, time: &str) -> PathBuf {
    let img = dir.join(name);
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let out = run(Command::new(which("mke2fs").unwrap())
        .args([
            "-q", "-F", "-t", "ext4", "-b", "4096", "-I", "256", "-U", uuid, "-d",
        ])
        .arg(tree)
        .arg(&img)
        .env("E2FSPROGS_FAKE_TIME", time)
        .env("MKE2FS_CONFIG", "/etc/mke2fs.conf"));
    assert!(out.status.success(), "{out:?}");
    img
}

fn diff_json(a: &Path, b: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = run(Command::new(bin())
        .arg("diff")
        .args(extra)
        .arg("--json")
        .arg(a)
        .arg(b));
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), v)
}

/// `path -> (kind, fields)` of a diff document.
fn changes(v: &serde_json::Value) -> BTreeMap<String, (String, Vec<String>)> {
    v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let fields = c["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap().to_string())
                .collect();
            (
                c["path"].as_str().unwrap().to_string(),
                (c["kind"].as_str().unwrap().to_string(), fields),
            )
        })
        .collect()
}

fn tools() -> bool {
    if !have("mke2fs") || !have("debugfs") {
        eprintln!("SKIP: mke2fs or debugfs missing");
        return false;
    }
    true
}

#[test]
fn debugfs_edits_are_reported_path_by_path_field_by_field() {
    if !tools() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let tree = small_tree(t.path());
    let a = build(
        t.path(),
        &tree,
        "a.img",
        "7d4c2a6e-1b3f-4e5d-9a8b-0c1d2e3f4a5b",
        "1700000000",
    );
    debugfs_script(&a, "ea_set /xat user.foo bar\nea_set /xat user.gone x\n");
    let b = t.path().join("b.img");
    std::fs::copy(&a, &b).unwrap();
    debugfs_script(
        &b,
        "sif /plain mode 0100600\n\
         sif /own uid 4242\n\
         ea_set /xat user.foo changed\n\
         ea_rm /xat user.gone\n\
         ea_set /xat user.new added\n\
         rm /gone\n\
         ln /r /r2\n\
         unlink /r\n\
         unlink /hl2\n\
         sif /hl1 links_count 2\n\
         rm /link\n\
         symlink /link own\n",
    );
    // File written in place: its one block overwritten with the same length of other bytes.
    let blocks = run(Command::new(which("debugfs").unwrap())
        .args(["-R", "blocks /w"])
        .arg(&b));
    let block: u64 = String::from_utf8_lossy(&blocks.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    common::images::write_at(&b, block * 4096, b"ORIGINAL CONTENTS\n");

    let (code, v) = diff_json(&a, &b, &[]);
    assert_eq!(code, 4, "{v}");
    let got = changes(&v);
    let s = |x: &[&str]| x.iter().map(|f| f.to_string()).collect::<Vec<_>>();
    let m = |x: &[&str]| ("modified".to_string(), s(x));
    let want: BTreeMap<String, (String, Vec<String>)> = [
        ("/plain", m(&["mode"])),
        ("/own", m(&["owner"])),
        (
            "/xat",
            m(&["xattr.user.foo", "xattr.user.gone", "xattr.user.new"]),
        ),
        ("/w", m(&["content"])),
        ("/gone", ("removed".to_string(), vec![])),
        ("/r", ("removed".to_string(), vec![])),
        ("/r2", ("added".to_string(), vec![])),
        ("/hl2", ("removed".to_string(), vec![])),
        ("/hl1", m(&["links"])),
        ("/sub/hl3", m(&["links"])),
        (
            "/link",
            m(&["size", "mtime", "atime", "ctime", "crtime", "target"]),
        ),
    ]
    .into_iter()
    .map(|(p, k)| (p.to_string(), k))
    .collect();
    assert_eq!(got, want, "{v}");
    // The retargeted symlink carries both targets.
    let link = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == "/link")
        .unwrap();
    assert_eq!(
        (&link["a"]["target"], &link["b"]["target"]),
        (&"plain".into(), &"own".into())
    );
    // Freed blocks and inodes: the superblock counts differ.
    let fields: Vec<&str> = v["superblock"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert!(
        fields.iter().any(|f| f.contains("free_inodes")),
        "{fields:?}"
    );
    // The text form names the same paths.
    let out = run(Command::new(bin()).arg("diff").arg(&a).arg(&b));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Modified: /plain: mode 0644 -> 0600"),
        "{text}"
    );
    assert!(
        text.contains(&format!("Only in {}: /gone (file)", a.display())),
        "{text}"
    );
    // --ignore: the mode change is gone, the rest stays.
    let (_, v) = diff_json(&a, &b, &["--ignore", "mode", "--ignore", "xattrs"]);
    let got = changes(&v);
    assert!(
        !got.contains_key("/plain") && !got.contains_key("/xat"),
        "{v}"
    );
    assert!(got.contains_key("/own"));
}

#[test]
fn same_image_twice_is_silent_and_exit_0() {
    if !tools() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let tree = small_tree(t.path());
    let a = build(
        t.path(),
        &tree,
        "a.img",
        "7d4c2a6e-1b3f-4e5d-9a8b-0c1d2e3f4a5b",
        "1700000000",
    );
    let out = run(Command::new(bin()).arg("diff").arg(&a).arg(&a));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // An unreadable side: exit 8 with one line on stderr.
    let out = run(Command::new(bin())
        .arg("diff")
        .arg(&a)
        .arg(t.path().join("missing.img")));
    assert_eq!(out.status.code(), Some(8), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

#[test]
fn two_builds_of_one_tree_differ_only_in_the_superblock() {
    if !tools() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let tree = small_tree(t.path());
    let a = build(
        t.path(),
        &tree,
        "a.img",
        "7d4c2a6e-1b3f-4e5d-9a8b-0c1d2e3f4a5b",
        "1700000000",
    );
    let b = build(
        t.path(),
        &tree,
        "b.img",
        "0e3c4a5b-1111-4e5d-9a8b-0c1d2e3f4a5b",
        "1700000500",
    );
    let (code, v) = diff_json(&a, &b, &["--ignore", "times"]);
    assert_eq!(code, 4, "{v}");
    assert!(changes(&v).is_empty(), "{v}");
    let fields: Vec<&str> = v["superblock"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"uuid"), "{fields:?}");
    assert!(fields.contains(&"hash_seed"), "{fields:?}");
    // Without --ignore the build times show, on paths and in the superblock.
    let (_, v) = diff_json(&a, &b, &[]);
    assert!(changes(&v).contains_key("/"), "{v}");
    let sb: Vec<&str> = v["superblock"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert!(sb.iter().any(|f| f.contains("mkfs_time")), "{sb:?}");
    // Ignoring what a reproducible build varies: equal.
    let (code, v) = diff_json(
        &a,
        &b,
        &[
            "--ignore",
            "times",
            "--ignore",
            "uuid",
            "--ignore",
            "hash_seed",
        ],
    );
    assert_eq!(code, 0, "{v}");
}

#[test]
fn image_against_the_tree_it_was_built_from_is_unchanged() {
    if !tools() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let tree = small_tree(t.path());
    let a = build(
        t.path(),
        &tree,
        "a.img",
        "7d4c2a6e-1b3f-4e5d-9a8b-0c1d2e3f4a5b",
        "1700000000",
    );
    let out = run(Command::new(bin()).arg("diff").arg(&a).arg(&tree));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A change in the tree shows.
    std::fs::write(tree.join("plain"), "PLAIN\n").unwrap();
    let (code, v) = diff_json(&a, &tree, &["--ignore", "times"]);
    assert_eq!(code, 4);
    assert_eq!(
        changes(&v).get("/plain"),
        Some(&("modified".to_string(), vec!["content".to_string()]))
    );
}

#[test]
fn every_kind_image_against_its_tree() {
    if let Err(why) = common::trees::every_kind_tools() {
        eprintln!("SKIP: {why}");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let tree = common::trees::every_kind_tree(t.path());
    let img = common::trees::image_of(t.path(), &tree, "every.img", &[]);
    let out = run(Command::new(bin()).arg("diff").arg(&img).arg(&tree));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn inode_numbers_only_with_inodes_and_the_json_shape() {
    if !tools() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let tree = small_tree(t.path());
    let a = build(
        t.path(),
        &tree,
        "a.img",
        "7d4c2a6e-1b3f-4e5d-9a8b-0c1d2e3f4a5b",
        "1700000000",
    );
    let b = t.path().join("b.img");
    std::fs::copy(&a, &b).unwrap();
    // /plain moved to a new inode holding the same bytes (debugfs write takes the next free
    // inode while the old name still holds its own), its mode and owner as before.
    let host = t.path().join("plain.src");
    std::fs::write(&host, "plain\n").unwrap();
    debugfs_script(
        &b,
        &format!(
            "write {} /plain.new\nunlink /plain\nln /plain.new /plain\nunlink /plain.new\n\
             sif /plain mode 0100644\nsif /plain uid 0\nsif /plain gid 0\n",
            host.display()
        ),
    );
    let ignore = ["--ignore", "times", "--ignore", "superblock"];
    let (code, v) = diff_json(&a, &b, &ignore);
    assert_eq!(code, 0, "{v}");
    let with = [&ignore[..], &["--inodes"]].concat();
    let (code, v) = diff_json(&a, &b, &with);
    assert_eq!(code, 4, "{v}");
    let got = changes(&v);
    assert_eq!(
        got.get("/plain"),
        Some(&("modified".to_string(), vec!["inode".to_string()])),
        "{v}"
    );
    assert_eq!(got.len(), 1, "{v}");
    // The document: schema_version, changes with path, kind, fields, a and b, superblock.
    assert!(
        v["schema_version"].is_string() || v["schema_version"].is_number(),
        "{v}"
    );
    let c = &v["changes"][0];
    for key in ["path", "kind", "fields", "a", "b"] {
        assert!(c.get(key).is_some(), "{key} missing: {c}");
    }
    assert_ne!(c["a"]["inode"], c["b"]["inode"], "{c}");
    assert!(v["superblock"].as_array().unwrap().is_empty(), "{v}");
}

#[test]
fn replayed_crash_image_equals_its_e2fsck_recovery() {
    if let Some(why) = common::crash::unavailable() {
        eprintln!("SKIP: {why}");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    // The last changes are committed to the journal (commit=1, then a pause) but not yet
    // written home when the copy is taken (the kernel writes metadata home ~30 s later).
    let workload = r#"
mkdir "$M/d1"
for i in $(seq 1 20); do echo "file $i" > "$M/d1/f$i"; done
setfattr -n user.note -v hello "$M/d1/f1" 2>/dev/null || true
sync
echo more >> "$M/d1/f2"
mv "$M/d1/f3" "$M/d1/moved"
ln "$M/d1/f4" "$M/hard"
chmod 600 "$M/d1/f5"
rm -f "$M/d1/f6"
sleep 3
"#;
    let Some(c) = common::crash::make(
        t.path(),
        "diffcrash",
        64 << 20,
        &["-t", "ext4", "-b", "4096"],
        "commit=1",
        workload,
    ) else {
        return;
    };
    // Read as it is, the crash copy needs recovery (and lacks what the journal holds home).
    let (code, v) = diff_json(&c.crash, &c.fsck, &[]);
    assert_eq!(code, 4, "{v}");
    let features = v["superblock"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["field"] == "features")
        .unwrap_or_else(|| panic!("{v}"));
    assert!(features["a"].to_string().contains("needs_recovery"), "{v}");
    eprintln!(
        "crash copy as read: {} paths differ from the recovered copy",
        changes(&v).len()
    );
    // Replayed (each image side: the recovered copy has nothing to replay), no change.
    let out = run(Command::new(bin())
        .args(["diff", "--replay"])
        .arg(&c.crash)
        .arg(&c.fsck));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "{out:?}");
    // Either order.
    let (code, v) = diff_json(&c.fsck, &c.crash, &["--replay"]);
    assert_eq!(code, 0, "{v}");
}

/// A normal e2image file holds no directory or data block: `diff` (either side, or against a
/// tree) and `extract` (to a directory or as an archive) fail in one line on stderr, exit 8,
/// with nothing on stdout (no partial report) and no output begun.
#[test]
fn metadata_only_e2image_is_refused_in_one_line() {
    if !tools() || !have("e2image") {
        eprintln!("SKIP: e2image missing");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let tree = small_tree(t.path());
    let img = build(
        t.path(),
        &tree,
        "a.img",
        "7d4c2a6e-1b3f-4e5d-9a8b-0c1d2e3f4a5b",
        "1700000000",
    );
    let e2i = t.path().join("a.e2i");
    let o = run(Command::new(which("e2image").unwrap()).arg(&img).arg(&e2i));
    assert!(o.status.success(), "{o:?}");
    let dest = t.path().join("out");
    let tar = t.path().join("out.tar");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let cases: Vec<Vec<String>> = vec![
        vec!["diff".into(), s(&e2i), s(&img)],
        vec!["diff".into(), s(&img), s(&e2i)],
        vec!["diff".into(), s(&e2i), s(&tree)],
        vec!["extract".into(), s(&e2i), "/".into(), s(&dest)],
        vec!["extract".into(), "--tar".into(), "-".into(), s(&e2i)],
        vec!["extract".into(), "--tar".into(), s(&tar), s(&e2i)],
    ];
    for args in cases {
        let o = run(Command::new(bin()).args(&args));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(8), "{args:?}: {o:?}");
        assert!(o.stdout.is_empty(), "{args:?}: {o:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("not present in this metadata image"),
            "{args:?}: {err}"
        );
    }
    assert!(!dest.exists() && !tar.exists(), "output begun");
}
