//! `e4inspect ls` against `debugfs -R "ls ..."` byte for byte (stdout, TZ=UTC) on generated images:
//! an htree directory, deleted entries (debugfs `rm` leaves them in the slack of their
//! neighbours), names with control and high bytes, inline-data directories, symlinks of several
//! lengths (paths through a symlinked directory), ext2/ext3 block maps and ext4 extents with
//! metadata_csum; then over the e2fsprogs corpus. Also: path-resolution errors (symlink loops, a
//! file used as a directory) and the JSON view.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{bin, have, which};

/// A tree exercising what `ls` prints.
pub fn make_tree(root: &Path) {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::symlink;
    let p = |s: &str| root.join(s);
    for d in ["big", "sub/deep", "inl", "names"] {
        std::fs::create_dir_all(p(d)).unwrap();
    }
    for i in 0..300 {
        std::fs::write(p(&format!("big/file-with-a-long-name-{i}")), i.to_string()).unwrap();
    }
    std::fs::write(p("small"), b"hello").unwrap();
    std::fs::write(p("sub/deep/file"), b"deep\n").unwrap();
    std::fs::write(p("inl/a"), b"a\n").unwrap();
    std::fs::write(
        p("rand"),
        (0..300_000u32)
            .map(|i| (i * 7 % 251) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    symlink("sub", p("symdir")).unwrap();
    symlink("/sub/deep", p("absdeep")).unwrap();
    symlink("loop2", p("loop1")).unwrap();
    symlink("loop1", p("loop2")).unwrap();
    symlink("x".repeat(59), p("link59")).unwrap();
    symlink("y".repeat(60), p("link60")).unwrap();
    symlink("z".repeat(500), p("link500")).unwrap();
    for lo in (1u32..256).step_by(16) {
        let name: Vec<u8> = (lo..(lo + 16).min(256))
            .map(|b| b as u8)
            .filter(|&b| b != b'/')
            .collect();
        std::fs::write(
            root.join("names").join(std::ffi::OsStr::from_bytes(&name)),
            b"",
        )
        .unwrap();
    }
}

/// Images of several kinds built from the tree, with a few entries removed afterwards.
fn images(dir: &Path) -> Vec<PathBuf> {
    let tree = dir.join("tree");
    make_tree(&tree);
    let mut out = Vec::new();
    for (name, args) in [
        ("ext4.img", &["-t", "ext4", "-b", "4096"][..]),
        (
            "inline.img",
            &["-t", "ext4", "-O", "inline_data", "-b", "1024", "-I", "256"],
        ),
        ("ext3.img", &["-t", "ext3", "-b", "1024"]),
        ("ext2.img", &["-t", "ext2", "-b", "2048"]),
    ] {
        let mut a = args.to_vec();
        a.extend(["-d", tree.to_str().unwrap()]);
        let img = common::mkfs(dir, name, 24 << 20, &a);
        for victim in [
            "/big/file-with-a-long-name-77",
            "/big/file-with-a-long-name-78",
            "/sub/deep/file",
        ] {
            let o = Command::new(which("debugfs").unwrap())
                .args(["-w", "-R", &format!("rm {victim}")])
                .arg(&img)
                .output()
                .unwrap();
            assert!(o.status.success());
        }
        out.push(img);
    }
    out
}

fn debugfs_ls(img: &Path, flags: &str, dir: &str) -> Vec<u8> {
    let o = Command::new(which("debugfs").unwrap())
        .env("TZ", "UTC")
        .args(["-R", &format!("ls {flags} {dir}")])
        .arg(img)
        .output()
        .unwrap();
    o.stdout
}

fn ours(img: &Path, flags: &str, dir: &str) -> (Vec<u8>, Option<i32>) {
    let o = Command::new(bin())
        .env("TZ", "UTC")
        .arg("ls")
        .args(flags.split_whitespace())
        .arg(img)
        .arg(dir)
        .output()
        .unwrap();
    (o.stdout, o.status.code())
}

const FLAGS: [&str; 8] = ["", "-l", "-d", "-p", "-r", "-l -d", "-p -d", "-d -r"];

#[test]
fn ls_matches_debugfs_on_generated_images() {
    if !have("debugfs") || !have("mke2fs") {
        eprintln!("SKIP: debugfs/mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for img in images(dir.path()) {
        for d in [
            "/",
            "/big",
            "/sub/deep",
            "/symdir/deep",
            "/inl",
            "/names",
            "<2>",
            "/lost+found",
        ] {
            for f in FLAGS {
                let want = debugfs_ls(&img, f, d);
                let (got, code) = ours(&img, f, d);
                assert!(
                    got == want,
                    "{} ls {f} {d}:\n--- debugfs\n{}\n--- e4inspect\n{}",
                    img.display(),
                    String::from_utf8_lossy(&want),
                    String::from_utf8_lossy(&got)
                );
                assert_eq!(code, Some(0), "{} ls {f} {d}", img.display());
                compared += 1;
            }
        }
        // Deleted entries really were found (the test would be empty otherwise).
        let (got, _) = ours(&img, "-d", "/big");
        assert!(
            String::from_utf8_lossy(&got).contains("<0>")
                || String::from_utf8_lossy(&got).contains('<')
        );
    }
    assert!(compared > 200);
}

#[test]
fn path_errors_are_named_once() {
    if !have("mke2fs") {
        eprintln!("SKIP: mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    make_tree(&tree);
    let img = common::mkfs(
        dir.path(),
        "p.img",
        24 << 20,
        &["-t", "ext4", "-d", tree.to_str().unwrap()],
    );
    let err = |args: &[&str]| {
        let o = Command::new(bin()).args(args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let i = img.to_str().unwrap();
    let (c, e) = err(&["inode", i, "/loop1/x"]);
    assert_eq!(c, Some(8));
    assert!(e.contains("too many symbolic links"), "{e}");
    let (c, e) = err(&["ls", i, "/small/x"]);
    assert_eq!(c, Some(8));
    assert!(e.contains("not a directory: /small"), "{e}");
    assert_eq!(e.matches("/small/x").count(), 1, "{e}");
    // A target that is not a directory is listed on its own (a symlink is not followed).
    for (t, ft) in [("/small", "(1)"), ("/absdeep", "(7)")] {
        let o = Command::new(bin())
            .args(["ls", "-l", i, t])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0));
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(text.lines().filter(|l| !l.is_empty()).count(), 1, "{text}");
        assert!(
            text.contains(ft) && text.trim_end().ends_with(&t[1..]),
            "{text}"
        );
    }
    let (c, e) = err(&["cat", i, "/sub/nothing"]);
    assert_eq!(c, Some(8));
    assert!(e.contains("no such file or directory"), "{e}");
    // Through a symlinked directory, relative and absolute.
    for p in [
        "/symdir/deep/file",
        "/absdeep/file",
        "/symdir/../symdir/deep/file",
    ] {
        let o = Command::new(bin()).args(["cat", i, p]).output().unwrap();
        assert_eq!(
            o.stdout,
            b"deep\n",
            "{p}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn json_lists_every_entry() {
    if !have("mke2fs") {
        eprintln!("SKIP: mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    make_tree(&tree);
    let img = common::mkfs(
        dir.path(),
        "j.img",
        24 << 20,
        &["-t", "ext4", "-d", tree.to_str().unwrap()],
    );
    let o = Command::new(bin())
        .args(["ls", "--json"])
        .arg(&img)
        .arg("/names")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    let a = v["listings"][0]["entries"].as_array().unwrap();
    // ".", "..", and the 16 files of odd names.
    assert_eq!(a.len(), 18);
    for e in a {
        assert!(e["inode"].as_u64().unwrap() > 0);
        assert!(e["mode"]["raw"].is_u64() && e["size"].is_u64() && e["mtime"]["raw"].is_i64());
        assert!(e["mode"]["octal"].is_string() && e["mtime"]["utc"].is_string());
        assert!(e["type"].is_string());
    }
    let on_disk: usize = std::fs::read_dir(tree.join("names")).unwrap().count();
    assert_eq!(a.len(), on_disk + 2);
}

#[test]
fn ls_matches_debugfs_on_corpus() {
    let Some(_) = common::corpus() else {
        eprintln!("SKIP: corpus not present");
        return;
    };
    if !have("debugfs") {
        eprintln!("SKIP: debugfs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut same, mut skipped) = (0, 0);
    for name in common::corpus_names() {
        let Some(img) = common::corpus_image(dir.path(), &name) else {
            continue;
        };
        for f in ["-l", "-d"] {
            let o = Command::new(which("debugfs").unwrap())
                .env("TZ", "UTC")
                .args(["-R", &format!("ls {f} /")])
                .arg(&img)
                .output()
                .unwrap();
            // Compare only where debugfs listed the root without complaint.
            let clean = o.status.success()
                && String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .all(|l| l.starts_with("debugfs "));
            let (got, code) = ours(&img, f, "/");
            if clean {
                assert!(
                    got == o.stdout,
                    "{name} ls {f} /:\n--- debugfs\n{}\n--- e4inspect\n{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&got)
                );
                same += 1;
            } else {
                skipped += 1;
                assert!(matches!(code, Some(0 | 4 | 8)), "{name}: exit {code:?}");
            }
        }
        std::fs::remove_file(&img).ok();
    }
    eprintln!("corpus: {same} listings identical, {skipped} where debugfs complained");
    assert!(same > 50);
}
