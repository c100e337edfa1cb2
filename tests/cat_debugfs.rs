//! `e4inspect cat` against `debugfs -R "cat FILE"` and against the source files themselves:
//! sparse files (holes inside and at the end, a block behind a triple-indirect map on ext2 with
//! 1 KiB blocks), fragmented files (written by debugfs into the holes left by removed files),
//! inline-data files, extent (ext4) and block-map (ext2/ext3) files, empty files.
//!
//! debugfs 1.47.0 writes all 60 bytes of i_block plus the `system.data` value for an inline file,
//! whatever its size; so does `e4inspect cat` (byte for byte), and `cat --exact-size` stops at
//! i_size (compared with the source file). Inline files of every size from 0 to 160 bytes, with
//! i_size then shrunk, grown and the `system.data` attribute removed, are compared too.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{bin, debugfs, debugfs_w, have};

fn pattern(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2654435761).wrapping_add(seed) >> 13) as u8)
        .collect()
}

/// Source files: name -> contents (sparse ones are written with holes).
fn make_tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    use std::io::{Seek, SeekFrom, Write};
    std::fs::create_dir_all(root.join("filler")).unwrap();
    let mut files = vec![
        ("empty".to_string(), Vec::new()),
        ("tiny".to_string(), b"hi\n".to_vec()),
        ("inline70".to_string(), pattern(70, 1)),
        ("one-block".to_string(), pattern(1000, 2)),
        ("medium".to_string(), pattern(300_000, 3)),
    ];
    for (name, c) in &files {
        std::fs::write(root.join(name), c).unwrap();
    }
    // Sparse: data at 1 MiB and 70 MiB (behind the triple indirect block with 1 KiB blocks),
    // size 80 MiB (a hole at the end).
    let mut sparse = vec![0u8; 80 << 20];
    let mut f = std::fs::File::create(root.join("sparse")).unwrap();
    f.set_len(80 << 20).unwrap();
    for (off, seed) in [(1usize << 20, 4u32), (70 << 20, 5)] {
        let d = pattern(5000, seed);
        f.seek(SeekFrom::Start(off as u64)).unwrap();
        f.write_all(&d).unwrap();
        sparse[off..off + d.len()].copy_from_slice(&d);
    }
    files.push(("sparse".into(), sparse));
    for i in 0..200 {
        std::fs::write(root.join(format!("filler/f{i:03}")), pattern(3000, i)).unwrap();
    }
    files
}

fn ours(img: &Path, path: &str) -> Vec<u8> {
    ours_with(img, path, &[])
}

fn ours_with(img: &Path, path: &str, flags: &[&str]) -> Vec<u8> {
    let o = Command::new(bin())
        .arg("cat")
        .args(flags)
        .arg(img)
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "cat {path}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

fn image(dir: &Path, tree: &Path, name: &str, args: &[&str]) -> PathBuf {
    let mut a = args.to_vec();
    a.extend(["-d", tree.to_str().unwrap()]);
    let img = common::mkfs(dir, name, 48 << 20, &a);
    // Free every other filler file, then let debugfs write a file into the gaps: fragmented.
    for i in (0..200).step_by(2) {
        debugfs_w(&img, &format!("rm /filler/f{i:03}"));
    }
    debugfs_w(
        &img,
        &format!("write {} frag", dir.join("frag.src").display()),
    );
    img
}

#[test]
fn cat_matches_debugfs_and_the_source() {
    if !have("debugfs") || !have("mke2fs") {
        eprintln!("SKIP: debugfs/mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    let mut files = make_tree(&tree);
    let frag = pattern(250_000, 9);
    std::fs::write(dir.path().join("frag.src"), &frag).unwrap();
    files.push(("frag".into(), frag));
    for (name, args) in [
        ("ext4.img", &["-t", "ext4", "-b", "4096"][..]),
        (
            "inline.img",
            &["-t", "ext4", "-O", "inline_data", "-I", "512", "-b", "1024"],
        ),
        ("ext3.img", &["-t", "ext3", "-b", "1024"]),
        ("ext2.img", &["-t", "ext2", "-b", "1024"]),
    ] {
        let img = image(dir.path(), &tree, name, args);
        let mut fragmented = false;
        for (f, want) in &files {
            let path = format!("/{f}");
            let got = ours(&img, &path);
            let theirs = debugfs(&img, &format!("cat {path}")).stdout;
            let stat = String::from_utf8_lossy(&debugfs(&img, &format!("stat {path}")).stdout)
                .into_owned();
            let inline = stat.contains("Size of inline data");
            assert!(theirs == got, "{name} {path}: differs from debugfs cat");
            let exact = ours_with(&img, &path, &["--exact-size"]);
            // mke2fs -d with inline_data leaves the first block of a sparse file allocated with
            // stale bytes (debugfs reads them too), so there the source is no oracle.
            if inline || name != "inline.img" {
                assert!(
                    exact == *want,
                    "{name} {path}: contents differ from the source"
                );
            }
            if f == "frag" {
                fragmented = stat.matches("):").count() > 2;
            }
        }
        assert!(fragmented, "{name}: the test file did not fragment");
    }
}

#[test]
fn cat_of_a_missing_or_inline_free_path_fails_cleanly() {
    if !have("mke2fs") {
        eprintln!("SKIP: mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = common::mkfs(dir.path(), "e.img", 8 << 20, &["-t", "ext4"]);
    let o = Command::new(bin())
        .args(["cat"])
        .arg(&img)
        .arg("/nope")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(8));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(e.lines().count(), 1, "{e}");
    // A directory's blocks, like debugfs.
    if have("debugfs") {
        assert_eq!(ours(&img, "/"), debugfs(&img, "cat /").stdout);
    }
}

/// Inline files of 0..=160 bytes (in i_block, spilling into `system.data`, or too big and in a
/// block), on 256- and 1024-byte inodes; then, with debugfs -w, i_size shrunk below and grown
/// beyond the inline area and `system.data` removed: `cat` equals debugfs `cat` byte for byte, and
/// `cat --exact-size` equals the source while the file is undamaged.
#[test]
fn inline_data_files_match_debugfs_byte_for_byte() {
    if !have("debugfs") || !have("mke2fs") {
        eprintln!("SKIP: debugfs/mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let sizes: Vec<usize> = (0..=160).step_by(4).chain([59, 61, 63, 159]).collect();
    for &n in &sizes {
        std::fs::write(tree.join(format!("f{n}")), pattern(n, n as u32)).unwrap();
    }
    for inode_size in ["256", "1024"] {
        let name = format!("inl{inode_size}.img");
        let img = common::mkfs(
            dir.path(),
            &name,
            8 << 20,
            &[
                "-t",
                "ext4",
                "-O",
                "inline_data",
                "-I",
                inode_size,
                "-d",
                tree.to_str().unwrap(),
            ],
        );
        let mut inline_seen = 0;
        for &n in &sizes {
            let path = format!("/f{n}");
            let theirs = debugfs(&img, &format!("cat {path}")).stdout;
            assert_eq!(ours(&img, &path), theirs, "{name} {path}");
            assert_eq!(
                ours_with(&img, &path, &["--exact-size"]),
                pattern(n, n as u32),
                "{name} {path}: --exact-size"
            );
            if theirs.len() >= 60 && theirs.len() != n {
                inline_seen += 1;
            }
        }
        assert!(
            inline_seen > 5,
            "{name}: too few inline files ({inline_seen})"
        );
        // Damage: sizes that disagree with the inline area, a missing system.data.
        let edits = [
            ("f8", "sif /f8 size 3"),
            ("f100", "sif /f100 size 20"),
            ("f12", "sif /f12 size 5000"),
            ("f100", "ea_rm /f100 system.data"),
            ("f64", "sif /f64 size 0"),
        ];
        for (f, req) in edits {
            debugfs_w(&img, req);
            let path = format!("/{f}");
            let theirs = debugfs(&img, &format!("cat {path}")).stdout;
            assert_eq!(ours(&img, &path), theirs, "{name} after {req}");
        }
    }
}
