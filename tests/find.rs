//! `e4inspect find` against `find(1)`, `getfattr`, `lsattr` and debugfs on a read-only loop mount
//! of the same image, one predicate (and a few combinations) at a time: the same paths. Order:
//! ours is sorted (a directory before its contents, names byte by byte), find's is readdir
//! order, so both sides are compared as sorted lists (hard links give repeated inodes, so lists,
//! not sets). Needs root and loop mounts; prints `SKIP: reason` otherwise.

mod common;

use common::trees::{is_root, loop_mount, loop_mount_rw};
use common::{have, mkfs, run};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Run a shell tool that must succeed.
fn sh(cmd: &str, args: &[&str], cwd: &Path) {
    let out = run(Command::new(cmd).args(args).current_dir(cwd));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Populate a read-write mount with every kind of file and the attributes the predicates test.
fn populate(m: &Path) {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::{chown, symlink};
    let w = |p: &str, len: usize| {
        std::fs::write(m.join(p), vec![b'x'; len]).unwrap();
    };
    for d in ["a/b/c", "big", "empty", "own"] {
        std::fs::create_dir_all(m.join(d)).unwrap();
    }
    w("a/one.txt", 0);
    w("a/two.txt", 1);
    w("a/b/s511", 511);
    w("a/b/s512", 512);
    w("a/b/s513", 513);
    w("a/b/c/k2049", 2049);
    w("a/.hidden", 3);
    w("a/x[1]", 4);
    w("a/star*", 5);
    std::fs::write(m.join(std::ffi::OsStr::from_bytes(b"a/caf\xe9")), b"e").unwrap();
    let sparse = std::fs::File::create(m.join("a/big1M")).unwrap();
    sparse.set_len((1 << 20) + 1).unwrap();
    for i in 0..300 {
        w(&format!("big/file-{i:04}"), i % 7);
    }
    std::fs::hard_link(m.join("a/one.txt"), m.join("big/hl")).unwrap();
    symlink("one.txt", m.join("a/l1")).unwrap();
    symlink("nowhere", m.join("a/dangling")).unwrap();
    sh("mkfifo", &["a/fifo"], m);
    sh("mknod", &["a/cdev", "c", "1", "3"], m);
    sh("mknod", &["a/bdev", "b", "7", "0"], m);
    drop(std::os::unix::net::UnixListener::bind(m.join("a/sock")).unwrap());
    for (p, u, g) in [
        ("own/u1000", 1000, 1000),
        ("own/u2000", 2000, 50),
        ("own/g7", 0, 7),
    ] {
        w(p, 10);
        chown(m.join(p), Some(u), Some(g)).unwrap();
    }
    chown(m.join("own"), Some(1000), Some(1000)).unwrap();
    let set = |p: &str, n: &str, v: &str| sh("setfattr", &["-n", n, "-v", v, p], m);
    set("a/one.txt", "user.color", "red");
    set("a/two.txt", "user.color", "blue");
    set("own/u1000", "user.color", "red");
    set("a/b", "user.color", "reddish");
    set("a/b/s511", "user.bin", "0x00ff10");
    set("a/b/s512", "user.big", &"y".repeat(3000));
    set("a/b/s513", "user.big", &"z".repeat(2000));
    set("a/b/s513", "user.color", "red");
    set("a/b/s513", "trusted.t", "tv");
    for (p, t) in [
        ("a/two.txt", "@1600000000"),
        ("a/b/s511", "@1650000000"),
        ("a/b/s512", "@1650000001"),
        ("own/g7", "@1700000000"),
    ] {
        sh("touch", &["-h", "-d", t, p], m);
    }
    sh("chattr", &["+a", "a/b/s511"], m);
    sh("chattr", &["+d", "a/two.txt"], m);
}

/// The image, mounted read-only, or why the test cannot run.
struct Fixture {
    img: PathBuf,
    mnt: common::trees::Mount,
    _dir: tempfile::TempDir,
}

fn fixture() -> Result<Fixture, String> {
    if !is_root() {
        return Err("loop mounts need root".into());
    }
    for t in [
        "mke2fs", "find", "getfattr", "setfattr", "lsattr", "chattr", "debugfs", "mknod",
    ] {
        if !have(t) {
            return Err(format!("{t} missing"));
        }
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let img = mkfs(
        dir.path(),
        "find.img",
        64 << 20,
        &["-t", "ext4", "-b", "4096", "-I", "256", "-O", "inline_data"],
    );
    let rw_dir = dir.path().join("rw");
    {
        let rw = loop_mount_rw(&img, &rw_dir)?;
        populate(&rw.dir);
    }
    let mnt = loop_mount(&img, &dir.path().join("ro"))?;
    Ok(Fixture {
        img,
        mnt,
        _dir: dir,
    })
}

/// Lines of `out` split on `sep`, sorted.
fn sorted_lines(out: &[u8], sep: u8) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = out
        .split(|&b| b == sep)
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    v.sort();
    v
}

/// `e4inspect find IMG START ARGS`: its paths, sorted (and checked to come out in the order
/// documented: component by component).
fn ours(f: &Fixture, start: &str, args: &[&str]) -> Vec<Vec<u8>> {
    let out = run(Command::new(common::bin())
        .arg("find")
        .arg(&f.img)
        .arg(start)
        .args(args));
    assert_eq!(
        out.status.code(),
        Some(0),
        "find {start} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Vec<&[u8]> = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let key = |p: &[u8]| -> Vec<u8> { p.iter().map(|&b| if b == b'/' { 0 } else { b }).collect() };
    assert!(
        printed.windows(2).all(|w| key(w[0]) <= key(w[1])),
        "find {start} {args:?}: not in the documented order"
    );
    sorted_lines(&out.stdout, b'\n')
}

/// `find START ARGS` run in the mount, its paths made absolute in the image, sorted.
fn theirs(f: &Fixture, start: &str, args: &[&str]) -> Vec<Vec<u8>> {
    let rel = if start == "/" { "." } else { &start[1..] };
    let out = run(Command::new("find")
        .arg(rel)
        .args(args)
        .current_dir(&f.mnt.dir)
        .env("LC_ALL", "C")
        .env("TZ", "UTC"));
    assert!(out.status.success(), "find {args:?} failed");
    let mut v: Vec<Vec<u8>> = sorted_lines(&out.stdout, b'\n')
        .into_iter()
        .map(|p| {
            if p == b"." {
                b"/".to_vec()
            } else if let Some(r) = p.strip_prefix(b"./") {
                [b"/", r].concat()
            } else {
                [b"/", &p[..]].concat()
            }
        })
        .collect();
    v.sort();
    v
}

fn text(v: &[Vec<u8>]) -> String {
    v.iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Ours and find's agree (and the case is not vacuous: find printed something).
fn same(f: &Fixture, start: &str, ours_args: &[&str], find_args: &[&str]) {
    let (a, b) = (ours(f, start, ours_args), theirs(f, start, find_args));
    assert!(
        !b.is_empty() || find_args.iter().any(|a| a.starts_with("-inum")),
        "{find_args:?}: find printed nothing: the case tests nothing"
    );
    assert!(
        a == b,
        "e4inspect find {start} {ours_args:?} vs find {find_args:?}\n--- ours\n{}\n--- find\n{}",
        text(&a),
        text(&b)
    );
}

#[test]
fn find_matches_find_on_a_mount() {
    let f = match fixture() {
        Ok(f) => f,
        Err(why) => {
            println!("SKIP: {why}");
            return;
        }
    };
    // No test, a start below the root, names.
    same(&f, "/", &[], &[]);
    same(&f, "/a", &[], &[]);
    same(&f, "/a/b/", &[], &[]);
    same(&f, "/a/one.txt", &[], &[]);
    // Names: from /a, whose own name is tested as find tests it (from the root, find run in the
    // mount tests "." where we test "/").
    for g in [
        "*.txt",
        "s51?",
        "[!b]*",
        r"x\[1]",
        r"star\*",
        ".*",
        "*",
        "[[:alpha:]]*",
    ] {
        same(&f, "/a", &["--name", g], &["-name", g]);
    }
    for g in ["*.txt", "file-01[0-4]?", "*[0-9]"] {
        same(&f, "/", &["--name", g], &["-name", g]);
    }
    // Types, alone and together.
    for t in ["f", "d", "l", "p", "c", "b", "s", "f,l"] {
        same(&f, "/", &["--type", t], &["-type", t]);
    }
    // Owners.
    for (o, v) in [
        ("uid", "1000"),
        ("uid", "+500"),
        ("gid", "-10"),
        ("gid", "7"),
    ] {
        same(&f, "/", &[&format!("--{o}"), v], &[&format!("-{o}"), v]);
    }
    // Sizes, with find's rounding up to units.
    for s in [
        "-1M", "1M", "1", "2", "+1", "513c", "-512c", "+2k", "3k", "0", "+1G",
    ] {
        if s == "+1G" {
            assert!(ours(&f, "/", &["--size", s]).is_empty());
            continue;
        }
        same(&f, "/", &["--size", s], &["-size", s]);
    }
    // Times: against a file in the image, and against dates.
    same(&f, "/", &["--newer", "/a/b/s511"], &["-newer", "a/b/s511"]);
    same(
        &f,
        "/",
        &["--newer", "@1650000000"],
        &["-newermt", "@1650000000"],
    );
    same(
        &f,
        "/",
        &["--newer", "2022-01-01"],
        &["-newermt", "2022-01-01 00:00:00"],
    );
    // Inode numbers (of a hard-linked file: both names).
    let ino = std::fs::symlink_metadata(f.mnt.dir.join("a/one.txt"))
        .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
        .unwrap_or(0)
        .to_string();
    same(&f, "/", &["--inode", &ino], &["-inum", &ino]);
    same(&f, "/", &["--inode", "+100"], &["-inum", "+100"]);
    // Combined.
    same(
        &f,
        "/",
        &["--type", "f", "--name", "s*", "--size", "+1", "--uid", "0"],
        &["-type", "f", "-name", "s*", "-size", "+1", "-uid", "0"],
    );
    same(
        &f,
        "/own",
        &["--uid", "1000", "--type", "f"],
        &["-uid", "1000", "-type", "f"],
    );
}

#[test]
fn print0_is_find_print0() {
    let f = match fixture() {
        Ok(f) => f,
        Err(why) => {
            println!("SKIP: {why}");
            return;
        }
    };
    let out = run(Command::new(common::bin())
        .args(["find", "--print0", "--name", "caf*"])
        .arg(&f.img));
    let theirs = run(Command::new("find")
        .args([".", "-name", "caf*", "-print0"])
        .current_dir(&f.mnt.dir));
    let theirs: Vec<u8> = theirs.stdout.strip_prefix(b".").unwrap_or(&[]).to_vec();
    assert!(!theirs.is_empty());
    assert_eq!(
        out.stdout, theirs,
        "raw bytes of a non-UTF-8 name, NUL-ended"
    );
}

/// `getfattr -R -h -d -m - -e hex .` in the mount: path (absolute in the image) to its xattrs
/// (name to hex value).
fn getfattr_all(mnt: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let out = run(Command::new("getfattr")
        .args(["-R", "-h", "-d", "-m", "-", "-e", "hex", "."])
        .current_dir(mnt));
    let mut map: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut cur = String::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some(p) = line.strip_prefix("# file: ") {
            cur = format!("/{}", p.strip_prefix("./").unwrap_or(p));
        } else if let Some((n, v)) = line.split_once('=') {
            map.entry(cur.clone())
                .or_default()
                .insert(n.to_string(), v.trim_start_matches("0x").to_string());
        }
    }
    map
}

fn hex(s: &[u8]) -> String {
    s.iter().map(|b| format!("{b:02x}")).collect()
}

fn as_paths(v: Vec<String>) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = v.into_iter().map(String::into_bytes).collect();
    v.sort();
    v
}

#[test]
fn xattr_tests_match_getfattr() {
    let f = match fixture() {
        Ok(f) => f,
        Err(why) => {
            println!("SKIP: {why}");
            return;
        }
    };
    let attrs = getfattr_all(&f.mnt.dir);
    let want = |pred: &dyn Fn(&BTreeMap<String, String>) -> bool| {
        as_paths(
            attrs
                .iter()
                .filter(|(_, a)| pred(a))
                .map(|(p, _)| p.clone())
                .collect(),
        )
    };
    let has = |n: &'static str| move |a: &BTreeMap<String, String>| a.contains_key(n);
    let red = hex(b"red");
    let cases: Vec<(Vec<&str>, Vec<Vec<u8>>)> = vec![
        (vec!["--xattr", "user.color"], want(&has("user.color"))),
        (vec!["--xattr", "trusted.t"], want(&has("trusted.t"))),
        (
            vec!["--xattr", "user.color=red"],
            want(&|a| a.get("user.color") == Some(&red)),
        ),
        (
            vec!["--xattr", "user.color=0x726564"],
            want(&|a| a.get("user.color") == Some(&red)),
        ),
        (
            vec!["--xattr", "user.color=~^red"],
            want(&|a| a.get("user.color").is_some_and(|v| v.starts_with(&red))),
        ),
        (
            vec!["--xattr", "user.bin=0x00ff10"],
            want(&|a| a.get("user.bin").map(String::as_str) == Some("00ff10")),
        ),
        (
            vec!["--xattr", "user.big=~^z+$"],
            want(&|a| a.get("user.big").is_some_and(|v| v.starts_with("7a"))),
        ),
        (
            vec!["--xattr", "user.color=red", "--xattr", "user.big"],
            want(&|a| a.get("user.color") == Some(&red) && a.contains_key("user.big")),
        ),
    ];
    for (args, expected) in cases {
        assert!(!expected.is_empty(), "{args:?}: getfattr found nothing");
        assert_eq!(ours(&f, "/", &args), expected, "{args:?}");
    }
    // JSON lines: the matching xattr and its value as getfattr reads it.
    let out = run(Command::new(common::bin())
        .args(["find", "--json", "--xattr", "user.color"])
        .arg(&f.img));
    let mut n = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let path = v["path"].as_str().unwrap_or_default();
        let x = &v["xattrs"][0];
        assert_eq!(x["name"], "user.color");
        assert_eq!(
            x["hex"].as_str(),
            attrs[path].get("user.color").map(String::as_str),
            "{path}"
        );
        let meta = std::fs::symlink_metadata(f.mnt.dir.join(&path[1..])).unwrap();
        assert_eq!(
            v["inode"].as_u64(),
            Some(std::os::unix::fs::MetadataExt::ino(&meta))
        );
        assert_eq!(
            v["size"].as_u64(),
            Some(std::os::unix::fs::MetadataExt::size(&meta))
        );
        n += 1;
    }
    assert_eq!(n, want(&has("user.color")).len());
}

/// `--spills` against debugfs: the files with xattrs (getfattr) whose inode names an xattr block
/// (`File ACL:` in debugfs stat; this image has no EA inodes).
#[test]
fn spills_match_debugfs() {
    let f = match fixture() {
        Ok(f) => f,
        Err(why) => {
            println!("SKIP: {why}");
            return;
        }
    };
    let attrs = getfattr_all(&f.mnt.dir);
    let mut expected = Vec::new();
    for p in attrs.keys() {
        let out = run(Command::new("debugfs")
            .args(["-R", &format!("stat \"{p}\"")])
            .arg(&f.img));
        let stat = String::from_utf8_lossy(&out.stdout);
        let acl = stat
            .split("File ACL: ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or("0");
        if acl != "0" {
            expected.push(p.clone());
        }
    }
    let expected = as_paths(expected);
    assert!(
        !expected.is_empty(),
        "no file spills: the case tests nothing"
    );
    assert_eq!(ours(&f, "/", &["--spills"]), expected);
}

/// `--flags` against `lsattr -d` of every file and directory.
#[test]
fn flags_and_projid_match_lsattr() {
    let f = match fixture() {
        Ok(f) => f,
        Err(why) => {
            println!("SKIP: {why}");
            return;
        }
    };
    let listed = theirs(&f, "/", &["(", "-type", "f", "-o", "-type", "d", ")"]);
    let rel: Vec<String> = listed
        .iter()
        .map(|p| format!(".{}", String::from_utf8_lossy(p)))
        .filter(|p| !p.contains('\u{fffd}'))
        .collect();
    let out = run(Command::new("lsattr")
        .args(["-d"])
        .args(&rel)
        .current_dir(&f.mnt.dir));
    // "-----a--------e------- ./path"
    let rows: Vec<(String, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (flags, path) = (it.next()?, it.next()?);
            let path = path.strip_prefix('.').unwrap_or(path);
            let path = if path.is_empty() { "/" } else { path };
            Some((flags.to_string(), path.to_string()))
        })
        .collect();
    assert_eq!(rows.len(), rel.len(), "lsattr listed every path");
    let want = |pred: &dyn Fn(&(String, String)) -> bool| {
        as_paths(
            rows.iter()
                .filter(|r| pred(r))
                .map(|r| r.1.clone())
                .collect(),
        )
    };
    for (args, letter) in [
        (["--flags", "a"], 'a'),
        (["--flags", "NODUMP"], 'd'),
        (["--flags", "e"], 'e'),
        (["--flags", "N"], 'N'),
        (["--flags", "I"], 'I'),
    ] {
        let expected = want(&|r| r.0.contains(letter));
        assert!(!expected.is_empty(), "{args:?}: lsattr shows no such flag");
        // Files whose name does not survive the lossy listing are left out of both sides.
        let got: Vec<Vec<u8>> = ours(&f, "/", &[args[0], args[1], "--type", "f,d"])
            .into_iter()
            .filter(|p| std::str::from_utf8(p).is_ok())
            .collect();
        assert_eq!(got, expected, "{args:?}");
    }
}

/// `--projid` against debugfs: project IDs set with `debugfs -w sif` on an image with the project
/// feature (this kernel may lack the quota support to mount one), read back with debugfs stat.
#[test]
fn projid_matches_debugfs() {
    if !have("mke2fs") || !have("debugfs") {
        println!("SKIP: mke2fs/debugfs missing");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = mkfs(
        dir.path(),
        "p.img",
        16 << 20,
        &["-t", "ext4", "-I", "256", "-O", "project"],
    );
    let dbg = |cmd: &str, write: bool| {
        let mut c = Command::new("debugfs");
        if write {
            c.arg("-w");
        }
        String::from_utf8_lossy(&run(c.args(["-R", cmd]).arg(&img)).stdout).into_owned()
    };
    for d in ["/a", "/b", "/a/c"] {
        dbg(&format!("mkdir {d}"), true);
    }
    for (p, id) in [("/a", "77"), ("/a/c", "77"), ("/b", "5")] {
        dbg(&format!("sif {p} projid {id}"), true);
    }
    let every = ours_img(&img, &[]);
    let projid = |p: &[u8]| {
        let stat = dbg(&format!("stat \"{}\"", String::from_utf8_lossy(p)), false);
        stat.split("Project:")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or("0")
            .to_string()
    };
    for (arg, pass) in [("77", "77"), ("+10", "77"), ("5", "5")] {
        let expected: Vec<Vec<u8>> = every
            .iter()
            .filter(|p| {
                let id: u64 = projid(p).parse().unwrap_or(0);
                match arg.strip_prefix('+') {
                    Some(n) => id > n.parse().unwrap_or(0),
                    None => id.to_string() == arg,
                }
            })
            .cloned()
            .collect();
        assert!(!expected.is_empty(), "{pass}: debugfs shows none");
        assert_eq!(
            ours_img(&img, &["--projid", arg]),
            expected,
            "--projid {arg}"
        );
    }
}

/// `e4inspect find IMG / ARGS`, sorted.
fn ours_img(img: &Path, args: &[&str]) -> Vec<Vec<u8>> {
    let out = run(Command::new(common::bin()).arg("find").arg(img).args(args));
    assert_eq!(out.status.code(), Some(0));
    sorted_lines(&out.stdout, b'\n')
}
