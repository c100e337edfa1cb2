//! `inode` additions checked against debugfs: xattr names with control bytes (escaped exactly as
//! `debugfs stat` escapes them, never raw), the encryption-context index 9 printed bare, the
//! allocation state of an inode, the fragmentation summary; and the one-line error for compressed
//! or container inputs.

use std::path::Path;
use std::process::Command;

mod common;
use common::{bin, have, which};

fn stat_text(img: &Path, target: &str) -> (Vec<u8>, Vec<u8>) {
    let theirs = Command::new(which("debugfs").unwrap())
        .env("TZ", "UTC")
        .args(["-R", &format!("stat {target}")])
        .arg(img)
        .output()
        .unwrap()
        .stdout;
    let ours = Command::new(bin())
        .env("TZ", "UTC")
        .arg("inode")
        .arg(img)
        .arg(target)
        .output()
        .unwrap()
        .stdout;
    (theirs, ours)
}

fn debugfs_part(ours: &[u8]) -> &[u8] {
    let at = ours
        .windows(9)
        .position(|w| w == b"Details:\n")
        .unwrap_or(ours.len());
    &ours[..at]
}

/// Change the name index of the in-inode entry named `name` of `path` (no metadata_csum).
fn set_name_index(img: &Path, path: &str, name: &[u8], index: u8) {
    let o = Command::new(which("debugfs").unwrap())
        .args(["-R", &format!("imap {path}")])
        .arg(img)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout);
    let blk: u64 = t
        .split("located at block ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let off = u64::from_str_radix(t.split("offset 0x").nth(1).unwrap().trim(), 16).unwrap();
    let mut data = std::fs::read(img).unwrap();
    let base = (blk * 1024 + off) as usize;
    let rec = &mut data[base..base + 512];
    let at = (128..rec.len() - 16 - name.len())
        .find(|&i| usize::from(rec[i]) == name.len() && rec[i + 16..i + 16 + name.len()] == *name)
        .expect("entry found");
    rec[at + 1] = index;
    std::fs::write(img, data).unwrap();
}

#[test]
fn xattr_names_escaped_and_index_9_bare_like_debugfs() {
    if !have("debugfs") || !have("mke2fs") {
        eprintln!("SKIP: debugfs/mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let f = tree.join("f");
    std::fs::write(&f, b"x").unwrap();
    use std::os::unix::ffi::OsStrExt;
    let set = |n: &[u8], v: &[u8]| xattr_set(&f, n, v);
    if !set(b"user.a\x1b[31mb", b"1") {
        eprintln!("SKIP: the temporary directory takes no user xattrs");
        return;
    }
    set(b"user.nl\nx", b"v\x1bal");
    set(b"user.c", b"0123456789abcdef");
    set(b"user.\x01\x02\x03\x04", b"z");
    let _ = std::ffi::OsStr::from_bytes(b"");
    let img = common::mkfs(
        dir.path(),
        "x.img",
        8 << 20,
        &[
            "-t",
            "ext4",
            "-b",
            "1024",
            "-O",
            "^metadata_csum",
            "-I",
            "512",
            "-d",
            tree.to_str().unwrap(),
        ],
    );
    set_name_index(&img, "/f", b"c", 9);
    let (theirs, ours) = stat_text(&img, "/f");
    assert!(
        debugfs_part(&ours) == theirs.as_slice(),
        "--- debugfs\n{}\n--- e4inspect\n{}",
        String::from_utf8_lossy(&theirs),
        String::from_utf8_lossy(&ours)
    );
    assert!(
        String::from_utf8_lossy(&theirs).contains("\n  c (16)"),
        "index 9 printed bare"
    );
    assert!(
        !ours.contains(&0x1b) && !ours[..ours.len() - 1].contains(&b'\x01'),
        "raw control bytes in the text"
    );
    let o = Command::new(bin())
        .args(["inode", "--json"])
        .arg(&img)
        .arg("/f")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    let names: Vec<&str> = v["inodes"][0]["xattrs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"encryption.c"), "{names:?}");
    assert!(names.contains(&"user.a\x1b[31mb"), "{names:?}");
    // xattrs: names in the table are escaped too.
    let o = Command::new(bin())
        .args(["xattrs", "--no-progress"])
        .arg(&img)
        .output()
        .unwrap();
    assert!(!o.stdout.contains(&0x1b), "raw ESC in xattrs output");
}

fn xattr_set(path: &Path, name: &[u8], value: &[u8]) -> bool {
    use std::os::unix::ffi::OsStrExt;
    if !have("setfattr") {
        return false;
    }
    // setfattr takes the name as an argument (any bytes but NUL) and a 0x-hex value.
    let hex: String = value.iter().map(|b| format!("{b:02x}")).collect();
    Command::new("setfattr")
        .arg("-n")
        .arg(std::ffi::OsStr::from_bytes(name))
        .arg("-v")
        .arg(format!("0x{hex}"))
        .arg(path)
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

#[test]
fn allocation_and_fragmentation_in_details() {
    if !have("debugfs") || !have("mke2fs") {
        eprintln!("SKIP: debugfs/mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("filler")).unwrap();
    for i in 0..60 {
        std::fs::write(tree.join(format!("filler/{i}")), vec![1u8; 4096]).unwrap();
    }
    let img = common::mkfs(
        dir.path(),
        "f.img",
        16 << 20,
        &["-t", "ext4", "-b", "1024", "-d", tree.to_str().unwrap()],
    );
    let o = Command::new(bin())
        .args(["inode", "--json"])
        .arg(&img)
        .arg("/filler/2")
        .output()
        .unwrap();
    let freed = serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["inodes"][0]["ino"]
        .as_u64()
        .unwrap();
    for i in (0..60).step_by(2) {
        Command::new(which("debugfs").unwrap())
            .args(["-w", "-R", &format!("rm /filler/{i}")])
            .arg(&img)
            .output()
            .unwrap();
    }
    let src = dir.path().join("src");
    std::fs::write(&src, vec![7u8; 100_000]).unwrap();
    Command::new(which("debugfs").unwrap())
        .args(["-w", "-R", &format!("write {} frag", src.display())])
        .arg(&img)
        .output()
        .unwrap();
    let o = Command::new(bin())
        .args(["inode", "--json"])
        .arg(&img)
        .arg("/frag")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &v["inodes"][0]["fragmentation"];
    let leaves = v["inodes"][0]["data"]["extents"].as_array().unwrap().len() as u64;
    assert_eq!(f["extents"].as_u64(), Some(leaves));
    assert!(
        f["runs"].as_u64().unwrap() > 1 && f["runs"].as_u64().unwrap() <= leaves,
        "{f}"
    );
    assert_eq!(f["blocks"].as_u64(), Some(100_000u64.div_ceil(1024)));
    assert_eq!(v["inodes"][0]["allocated"], serde_json::json!(true));
    let text = String::from_utf8_lossy(
        &Command::new(bin())
            .arg("inode")
            .arg(&img)
            .arg("/frag")
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned();
    assert!(
        text.contains(&format!("  Fragmentation: {leaves} extents, ")),
        "{text}"
    );
    // A freed inode: its bitmap bit is clear.
    let o = Command::new(bin())
        .args(["inode"])
        .arg(&img)
        .arg(format!("<{freed}>"))
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("Allocation: UNALLOCATED"), "{t}");
}

#[test]
fn compressed_and_container_inputs_are_named() {
    if !have("mke2fs") || !have("gzip") {
        eprintln!("SKIP: mke2fs/gzip not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = common::mkfs(dir.path(), "c.img", 4 << 20, &["-t", "ext4"]);
    let st = Command::new("gzip").arg("-k").arg(&img).status().unwrap();
    assert!(st.success());
    let gz = dir.path().join("c.img.gz");
    for cmd in ["dump", "check", "inode", "xattrs", "ls", "cat"] {
        let mut c = Command::new(bin());
        c.arg(cmd).arg(&gz);
        if matches!(cmd, "inode" | "cat") {
            c.arg("/");
        }
        let o = c.output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(8), "{cmd}: {e}");
        assert!(
            e.contains("gzip-compressed image: decompress it first"),
            "{cmd}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{cmd}: {e}");
    }
    let q = dir.path().join("q.img");
    let mut d = b"QFI\xfb\x00\x00\x00\x03".to_vec();
    d.resize(1 << 20, 0);
    std::fs::write(&q, d).unwrap();
    // qcow2 is opened (tests/containers.rs): a damaged header is named in one line.
    let o = Command::new(bin()).arg("dump").arg(&q).output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(8), "{e}");
    assert!(e.contains("qcow2 image: cluster_bits 0"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}
