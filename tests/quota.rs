//! Quotas: `e4inspect quota` against `debugfs -R "list_quota TYPE"` / `get_quota TYPE ID` for the
//! three types on ext4 1k and 4k, bigalloc and many IDs (images made with
//! `mke2fs -O quota,project -E quotatype=usrquota:grpquota:prjquota -d TREE`, project IDs set with
//! `debugfs sif projid` and the quota files made consistent by `e2fsck -fy`), and the `quota.*`
//! rules of `check` against `e2fsck -fn` on copies damaged with `debugfs -w`.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tools() -> bool {
    let ok = ["mke2fs", "debugfs", "e2fsck"].iter().all(|t| have(t));
    if !ok {
        eprintln!("SKIP: e2fsprogs not installed");
    }
    ok
}

/// A tree with `n` small files owned by varied users and groups (chown needs root).
fn tree(dir: &Path, n: u32) -> Option<PathBuf> {
    let t = dir.join("tree");
    std::fs::create_dir_all(t.join("sub")).unwrap();
    for i in 0..n {
        let p = t.join(format!("sub/f{i}"));
        std::fs::write(&p, vec![b'x'; (i as usize % 7) * 1500 + 1]).unwrap();
        if std::os::unix::fs::chown(&p, Some(1000 + i % 97), Some(5000 + i % 13)).is_err() {
            eprintln!("SKIP: chown needs root");
            return None;
        }
    }
    std::fs::write(t.join("big"), vec![7u8; 200_000]).unwrap();
    Some(t)
}

fn debugfs(img: &Path, req: &str) -> Vec<u8> {
    run(Command::new(which("debugfs").unwrap())
        .args(["-R", req])
        .arg(img))
    .stdout
}

fn debugfs_w(img: &Path, req: &str) {
    let out = run(Command::new(which("debugfs").unwrap())
        .args(["-w", "-R", req])
        .arg(img));
    assert!(out.status.success(), "debugfs -w {req}");
}

fn e2fsck(img: &Path, opt: &str) -> i32 {
    run(Command::new(which("e2fsck").unwrap()).arg(opt).arg(img))
        .status
        .code()
        .unwrap_or(-1)
}

/// A quota image, project IDs set on some files, made consistent by e2fsck -fy.
fn quota_image(dir: &Path, name: &str, n: u32, args: &[&str]) -> Option<PathBuf> {
    let t = tree(dir, n)?;
    let mut a: Vec<&str> = args.to_vec();
    a.extend([
        "-O",
        "quota,project",
        "-E",
        "quotatype=usrquota:grpquota:prjquota",
        "-d",
    ]);
    let ts = t.to_str().unwrap().to_string();
    a.push(&ts);
    let img = mkfs(dir, name, 64 << 20, &a);
    for i in (0..n).step_by(5) {
        debugfs_w(&img, &format!("sif /sub/f{i} projid {}", 40 + i % 9));
    }
    let rc = e2fsck(&img, "-fy");
    assert!(rc <= 1, "e2fsck -fy {name}: {rc}");
    assert_eq!(e2fsck(&img, "-fn"), 0, "{name} not clean after e2fsck -fy");
    Some(img)
}

fn ours(img: &Path, args: &[&str]) -> Vec<u8> {
    let out = run(Command::new(bin()).arg("quota").args(args).arg(img));
    assert!(
        out.status.success(),
        "quota {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn same_as_debugfs(img: &Path) {
    for t in ["user", "group", "project"] {
        let want = debugfs(img, &format!("list_quota {t}"));
        let text = String::from_utf8_lossy(&want);
        assert!(text.lines().count() > 2, "{t}: {text}");
        assert_eq!(
            text,
            String::from_utf8_lossy(&ours(img, &["--type", t])),
            "{} list_quota {t}",
            img.display()
        );
        // get_quota for a listed ID and for one without an entry.
        let first_id = text
            .lines()
            .nth(2)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        for id in [first_id, "4000000"] {
            let want = debugfs(img, &format!("get_quota {t} {id}"));
            let img_s = img.to_str().unwrap();
            let got = run(Command::new(bin()).args(["quota", "--type", t, img_s, id])).stdout;
            assert_eq!(
                String::from_utf8_lossy(&want),
                String::from_utf8_lossy(&got),
                "get_quota {t} {id}"
            );
        }
    }
    // JSON: the same entries.
    let out = run(Command::new(bin()).args(["quota", "--json"]).arg(img));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let q = v["quotas"].as_array().unwrap();
    assert_eq!(q.len(), 3);
    for (i, t) in ["user", "group", "project"].iter().enumerate() {
        let rows = String::from_utf8_lossy(&debugfs(img, &format!("list_quota {t}")))
            .lines()
            .count()
            - 1;
        assert_eq!(q[i]["entries"].as_array().unwrap().len(), rows, "{t}");
    }
}

#[test]
fn quota_listing_matches_debugfs() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, u32, &[&str]); 4] = [
        ("1k", 60, &["-t", "ext4", "-b", "1024"]),
        ("4k", 60, &["-t", "ext4"]),
        (
            "bigalloc",
            40,
            &["-t", "ext4", "-O", "bigalloc", "-C", "16384"],
        ),
        // Many IDs: several data blocks and tree branches per type.
        ("many", 900, &["-t", "ext4", "-N", "4096"]),
    ];
    for (name, n, args) in cases {
        let sub = dir.path().join(name);
        std::fs::create_dir_all(&sub).unwrap();
        let Some(img) = quota_image(&sub, &format!("{name}.img"), n, args) else {
            return;
        };
        same_as_debugfs(&img);
        let (rc, rules, _) = check_rules(&img);
        assert_eq!((rc, rules.len()), (0, 0), "{name}: {rules:?}");
    }
}

#[test]
fn quota_damage_matches_e2fsck() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(base) = quota_image(dir.path(), "q.img", 40, &["-t", "ext4", "-b", "1024"]) else {
        return;
    };
    let edits: [(&str, &str, &str); 6] = [
        ("uid", "sif /sub/f1 uid 4242", "quota.usage"),
        ("gid", "sif /sub/f2 gid 4343", "quota.usage"),
        ("projid", "sif /sub/f3 projid 777", "quota.usage"),
        ("rm", "rm /big", "quota.usage"),
        ("unlink", "unlink /sub/f4", "link.unattached"),
        ("blocks", "sif /sub/f6 blocks 100", "inode.blocks"),
    ];
    for (name, req, rule) in edits {
        let img = dir.path().join(format!("{name}.img"));
        std::fs::copy(&base, &img).unwrap();
        debugfs_w(&img, req);
        let e = e2fsck(&img, "-fn");
        let (rc, rules, v) = check_rules(&img);
        assert_eq!(e, 4, "{name}: e2fsck -fn");
        assert_eq!(rc, 4, "{name}: {rules:?}");
        assert!(rules.iter().any(|r| r == rule), "{name}: {rules:?}");
        if rule == "quota.usage" {
            let f = v["images"][0]["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["rule"] == "quota.usage")
                .unwrap();
            assert!(
                f["computed"]["space"].is_u64() && f.get("stored").is_some(),
                "{f}"
            );
        }
    }
}

/// `e2fsck -fn`'s quota warnings for quota type `qtype` (0 user, 1 group, 2 project): ID ->
/// its "actual" (computed) `space,inodes`, or None for "Missing quota entry".
fn e2fsck_quota_warnings(img: &Path, qtype: u32) -> BTreeMap<u32, Option<String>> {
    // The warnings go to stderr, the questions to stdout: one pipe keeps their order.
    let fsck = run(Command::new("sh")
        .args(["-c", "exec \"$0\" -fn \"$1\" 2>&1"])
        .arg(which("e2fsck").unwrap())
        .arg(img));
    let log = String::from_utf8_lossy(&fsck.stdout).to_string();
    // Each type's warnings come just before its "Update quota info for quota type N" question
    // (a type without warnings has no question).
    let pieces: Vec<&str> = log.split("Update quota info for quota type ").collect();
    let text = (1..pieces.len())
        .find(|&i| pieces[i].starts_with(&qtype.to_string()))
        .map_or("", |i| pieces[i - 1]);
    let mut want = BTreeMap::new();
    for l in text.lines() {
        if let Some(rest) = l.split("Usage inconsistent for ID ").nth(1) {
            let (id, rest) = rest.split_once(':').unwrap();
            let actual = rest
                .split_once("actual (")
                .unwrap()
                .1
                .split_once(')')
                .unwrap()
                .0;
            want.insert(id.parse::<u32>().unwrap(), Some(actual.replace(' ', "")));
        } else if let Some(id) = l.split("Missing quota entry ID ").nth(1) {
            want.insert(id.trim().parse::<u32>().unwrap(), None);
        }
    }
    want
}

/// `quota --computed --type T` on `img`: ID -> (has a stored entry, computed `space,inodes`)
/// for the lines that differ, checking that the rest of every line is debugfs' own.
fn computed_differences(img: &Path, t: &str) -> (i32, BTreeMap<u32, (bool, String)>) {
    let o = run(Command::new(bin())
        .args(["quota", "--computed", "--type", t])
        .arg(img));
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let reference = String::from_utf8_lossy(&debugfs(img, &format!("list_quota {t}"))).to_string();
    let mut got = BTreeMap::new();
    for l in text.lines() {
        let Some((head, note)) = l.split_once("   != computed ") else {
            assert!(reference.lines().any(|r| r == l), "line not debugfs': {l}");
            continue;
        };
        let nums: Vec<&str> = note.split_whitespace().collect();
        let id: u32 = head.split_whitespace().next().unwrap().parse().unwrap();
        let stored = !head.contains("(no entry)");
        if stored {
            assert!(reference.lines().any(|r| r == head), "{head}");
        }
        got.insert(id, (stored, format!("{},{}", nums[0], nums[1])));
    }
    (o.status.code().unwrap_or(-1), got)
}

/// Our differences are e2fsck's warnings: the same IDs, e2fsck's "actual" as our computed
/// value, "Missing quota entry" as `(no entry)`.
fn assert_same_warnings(img: &Path, t: &str, qtype: u32) {
    let want = e2fsck_quota_warnings(img, qtype);
    let (rc, got) = computed_differences(img, t);
    assert_eq!(rc, if want.is_empty() { 0 } else { 4 }, "{t}: {got:?}");
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{} {t}: ours {got:?}, e2fsck {want:?}",
        img.display()
    );
    for (id, actual) in &want {
        let (stored, computed) = &got[id];
        match actual {
            Some(a) => assert!(
                *stored && a == computed,
                "ID {id}: {computed} vs e2fsck {a}"
            ),
            None => assert!(!stored, "ID {id} has an entry"),
        }
    }
}

/// `quota --computed`: on a consistent image the output is debugfs' alone (exit 0); after
/// `debugfs sif uid` the IDs whose line gets `!= computed SPACE INODES` (or that follow as
/// `(no entry)`) are those `e2fsck -fn` warns about for user quota, with e2fsck's "actual"
/// values; the debugfs part of each line is unchanged; JSON entries carry `computed` there.
#[test]
fn computed_usage_shows_where_it_differs() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(base) = quota_image(dir.path(), "c.img", 20, &["-t", "ext4"]) else {
        return;
    };
    let clean = run(Command::new(bin())
        .args(["quota", "--computed", "--type", "user"])
        .arg(&base));
    assert_eq!(clean.status.code(), Some(0));
    assert_eq!(clean.stdout, debugfs(&base, "list_quota user"));

    let img = dir.path().join("uid.img");
    std::fs::copy(&base, &img).unwrap();
    debugfs_w(&img, "sif /sub/f1 uid 4242");
    assert!(!e2fsck_quota_warnings(&img, 0).is_empty());
    assert_same_warnings(&img, "user", 0);
    assert_same_warnings(&img, "group", 1);

    let j = run(Command::new(bin())
        .args(["quota", "--computed", "--json", "--type", "user"])
        .arg(&img));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    let file = &v["quotas"][0];
    let mut ids: Vec<u64> = file["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e.get("computed").is_some())
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    if let Some(m) = file["missing"].as_array() {
        ids.extend(m.iter().map(|e| e["id"].as_u64().unwrap()));
    }
    ids.sort_unstable();
    let want: Vec<u64> = e2fsck_quota_warnings(&img, 0)
        .keys()
        .map(|&i| u64::from(i))
        .collect();
    assert_eq!(ids, want, "{v}");
}

/// EA inodes are charged as e2fsck charges them (the value's clusters and one inode to the
/// owner of the xattr, never the EA inode itself): a quota image with values stored in EA
/// inodes (`debugfs ea_set -f`) made consistent by `e2fsck -fy` is clean for both tools, and
/// after the owner's uid or the EA inode's changes the warnings are e2fsck's.
#[test]
fn ea_inodes_are_charged_as_e2fsck_does() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(t) = tree(dir.path(), 8) else {
        return;
    };
    let img = mkfs(
        dir.path(),
        "ea.img",
        64 << 20,
        &[
            "-t",
            "ext4",
            "-I",
            "256",
            "-O",
            "ea_inode,quota,project",
            "-E",
            "quotatype=usrquota:grpquota:prjquota",
            "-d",
            t.to_str().unwrap(),
        ],
    );
    let value = dir.path().join("value");
    for (i, len) in [(1, 9000), (2, 60_000), (3, 5000)] {
        std::fs::write(&value, vec![b'v'; len]).unwrap();
        debugfs_w(
            &img,
            &format!("ea_set -f {} /sub/f{i} user.big{i}", value.display()),
        );
    }
    let rc = e2fsck(&img, "-fy");
    assert!(rc <= 1, "e2fsck -fy: {rc}");
    assert_eq!(e2fsck(&img, "-fn"), 0, "not clean after e2fsck -fy");
    let (rc, rules, _) = check_rules(&img);
    assert_eq!(rc, 0, "{rules:?}");
    let f2 = run(Command::new(bin())
        .args(["inode", "--json"])
        .arg(&img)
        .arg("/sub/f2"));
    let f2 = String::from_utf8_lossy(&f2.stdout).to_string();
    assert!(f2.contains("\"ea_inode\""), "no EA inode made: {f2}");
    for (name, req) in [
        ("owner", "sif /sub/f2 uid 4242"),
        ("group", "sif /sub/f1 gid 4343"),
        ("projid", "sif /sub/f3 projid 77"),
    ] {
        let copy = dir.path().join(format!("ea-{name}.img"));
        std::fs::copy(&img, &copy).unwrap();
        debugfs_w(&copy, req);
        assert_eq!(e2fsck(&copy, "-fn"), 4, "{name}");
        for (t, q) in [("user", 0), ("group", 1), ("project", 2)] {
            assert_same_warnings(&copy, t, q);
        }
    }
}
