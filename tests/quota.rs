//! Quotas: `e4inspect quota` against `debugfs -R "list_quota TYPE"` / `get_quota TYPE ID` for the
//! three types on ext4 1k and 4k, bigalloc and many IDs (images made with
//! `mke2fs -O quota,project -E quotatype=usrquota:grpquota:prjquota -d TREE`, project IDs set with
//! `debugfs sif projid` and the quota files made consistent by `e2fsck -fy`), and the `quota.*`
//! rules of `check` against `e2fsck -fn` on copies damaged with `debugfs -w`.

mod common;
use common::*;
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
