//! `e4inspect check` on images whose fields ask for huge amounts of work or memory (issue 10,
//! item 4): memory stays bounded whatever the group count says. Memory is measured, not time:
//! the check runs under `prlimit --data` (RLIMIT_DATA counts the heap and anonymous mappings), so
//! an unbounded collection aborts the process instead of passing.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::process::Command;

mod common;
use common::{bin, have, mkfs};

/// Data-segment limit for one `check` run: the 64 MiB budget of the issue plus room for the
/// allocator and rayon's threads.
const DATA_LIMIT: u64 = 128 << 20;

/// The tighter limit of the tiny-groups image, checked with two rayon threads: the 64 MiB budget
/// with the binary and stacks left out (findings built only when kept, their values a short
/// list: main before that needed about 64 MB and aborts under this limit).
const TINY_GROUPS_DATA_LIMIT: u64 = 48 << 20;

/// Write little-endian u32 `v` at superblock offset `off`.
fn put_sb_u32(img: &Path, off: u64, v: u32) {
    let mut f = std::fs::OpenOptions::new().write(true).open(img).unwrap();
    f.seek(SeekFrom::Start(1024 + off)).unwrap();
    f.write_all(&v.to_le_bytes()).unwrap();
}

/// Run `check ARGS IMG` under a data limit of `limit` bytes with `threads` rayon threads
/// (None: rayon's default); (exit code, stdout).
fn check_limited(
    img: &Path,
    args: &[&str],
    limit: u64,
    threads: Option<u32>,
) -> (Option<i32>, String) {
    let mut cmd = Command::new("prlimit");
    if let Some(n) = threads {
        cmd.env("RAYON_NUM_THREADS", n.to_string());
    }
    let out = cmd
        .arg(format!("--data={limit}"))
        .arg(bin())
        .arg("check")
        .args(args)
        .arg(img)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn assert_bounded(img: &Path, what: &str) {
    assert_bounded_under(img, what, DATA_LIMIT, None);
}

/// [`assert_bounded`] under a data limit of `limit` bytes with `threads` rayon threads.
fn assert_bounded_under(img: &Path, what: &str, limit: u64, threads: Option<u32>) {
    for args in [&["--quick"][..], &[], &["--json"]] {
        let (code, out) = check_limited(img, args, limit, threads);
        assert_eq!(
            code,
            Some(4),
            "{what} {args:?}: exit {code:?} under a {limit}-byte data limit"
        );
        if args == ["--json"] {
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            let listed = v["images"][0]["findings"].as_array().unwrap().len() as u64;
            let rules = v["images"][0]["counts"].as_object().unwrap().len() as u64;
            assert!(
                listed <= rules * e4inspect::check::MAX_FINDINGS_PER_RULE,
                "{what}: {listed} findings listed for {rules} rules"
            );
        }
    }
}

fn tools() -> bool {
    for t in ["mke2fs", "prlimit"] {
        if !have(t) {
            eprintln!("SKIP: {t} not installed");
            return false;
        }
    }
    true
}

/// 65,536 groups of 8 blocks claimed on a 64 MiB image: hundreds of thousands of findings.
#[test]
fn many_tiny_groups_stay_bounded() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = mkfs(
        dir.path(),
        "groups.img",
        64 << 20,
        &["-t", "ext4", "-O", "^metadata_csum", "-b", "1024"],
    );
    let groups = 65536u32;
    put_sb_u32(&img, 0x00, groups * 8); // s_inodes_count
    put_sb_u32(&img, 0x04, groups * 8); // s_blocks_count_lo
    put_sb_u32(&img, 0x20, 8); // s_blocks_per_group
    put_sb_u32(&img, 0x24, 8); // s_clusters_per_group
    put_sb_u32(&img, 0x28, 8); // s_inodes_per_group
    assert_bounded_under(&img, "65536 tiny groups", TINY_GROUPS_DATA_LIMIT, Some(2));
}

/// `s_blocks_count_hi = 1` on a 64 MiB 64bit image: 2^32 blocks claimed.
#[test]
fn blocks_count_hi_stays_bounded() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for bs in ["1024", "4096"] {
        let img = mkfs(
            dir.path(),
            &format!("hi{bs}.img"),
            64 << 20,
            &["-t", "ext4", "-O", "64bit,^metadata_csum", "-b", bs],
        );
        put_sb_u32(&img, 0x150, 1); // s_blocks_count_hi
        assert_bounded(&img, &format!("blocks_count_hi=1, {bs}-byte blocks"));
    }
}
