//! The MMP block (`mmp.*`), the journal superblock's `s_start` and `s_errno`, and the bad-blocks
//! inode (`inode.bad_blocks_inode`): byte edits and `debugfs -w` edits of mke2fs images, each
//! judged by `check` and by `e2fsck -fn` (same verdict class: clean, warned = exit 0, damaged =
//! exit 4/8/12), and `dump`/`dump -b` against dumpe2fs on them.

mod common;
use common::images::write_at;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tools() -> bool {
    let ok = ["mke2fs", "debugfs", "e2fsck", "dumpe2fs"]
        .iter()
        .all(|t| have(t));
    if !ok {
        eprintln!("SKIP: e2fsprogs not installed");
    }
    ok
}

/// A superblock field as dumpe2fs -h prints it.
fn sb_field(img: &Path, name: &str) -> u64 {
    let out = run(Command::new(which("dumpe2fs").unwrap()).arg("-h").arg(img));
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} not in dumpe2fs -h"))
}

fn copy(src: &Path, name: &str) -> PathBuf {
    let dst = src.with_file_name(name);
    std::fs::copy(src, &dst).unwrap();
    dst
}

/// Judge `img` with both tools: the rules `check` reports must include `want` (or be empty when
/// `want` is None), and the verdicts must be in the same class.
fn judge(img: &Path, want: Option<&str>, expected_e2fsck: i32) {
    let (rc, rules, _) = check_rules(img);
    let e = e2fsck_exit(img);
    assert_eq!(e, expected_e2fsck, "{}: e2fsck -fn exit", img.display());
    match want {
        Some(r) => assert!(rules.iter().any(|x| x == r), "{}: {rules:?}", img.display()),
        None => assert!(rules.is_empty(), "{}: {rules:?}", img.display()),
    }
    // e2fsck 0 = clean or warned: exit 0 here; 4/8/12 = damaged: exit 4 here.
    let expect = if e == 0 { 0 } else { 4 };
    assert_eq!(rc, expect, "{}: check exit with {rules:?}", img.display());
}

#[test]
fn mmp_damage_matches_e2fsck() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for csum in [true, false] {
        let feat = if csum {
            "mmp,metadata_csum"
        } else {
            "mmp,^metadata_csum"
        };
        let base = mkfs(
            dir.path(),
            &format!("mmp-{csum}.img"),
            32 << 20,
            &["-t", "ext4", "-b", "1024", "-O", feat],
        );
        judge(&base, None, 0);
        let blk = sb_field(&base, "MMP block number:");
        let at = |off: u64| blk * 1024 + off;
        // mmp_seq: e2fsck's marker, an unknown value, a node's counter.
        let seq = |name: &str, v: u32| {
            let img = copy(&base, &format!("{name}-{csum}.img"));
            write_at(&img, at(4), &v.to_le_bytes());
            img
        };
        if csum {
            // Any edit breaks the checksum first.
            judge(&seq("seq5", 5), Some("mmp.checksum"), 12);
            let img = copy(&base, "csum.img");
            write_at(&img, at(1020), &0x1234u32.to_le_bytes());
            judge(&img, Some("mmp.checksum"), 12);
        } else {
            judge(&seq("fsck", 0xE24D_4D50), Some("mmp.sequence"), 12);
            judge(&seq("unknown", 0xF000_0000), Some("mmp.sequence"), 12);
            let img = seq("inuse", 5);
            judge(&img, Some("mmp.in_use"), 0);
            let (_, _, v) = check_rules(&img);
            let f = &v["images"][0]["findings"][0];
            assert!(f["node"].is_string() && f["time"]["utc"].is_string(), "{f}");
        }
        let img = copy(&base, &format!("magic-{csum}.img"));
        write_at(&img, at(0), &1u32.to_le_bytes());
        judge(&img, Some("mmp.magic"), 12);
        let img = copy(&base, &format!("range-{csum}.img"));
        debugfs_w(&img, "ssv mmp_block 99999999");
        judge(&img, Some("mmp.block_range"), 12);
    }
}

#[test]
fn mmp_block_dump_matches_dumpe2fs() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = mkfs(
        dir.path(),
        "mmp.img",
        32 << 20,
        &["-t", "ext4", "-O", "mmp"],
    );
    let a = run(Command::new(which("dumpe2fs").unwrap())
        .arg("-h")
        .arg(&img)
        .env("TZ", "UTC"));
    let b = run(Command::new(bin())
        .args(["dump", "-h"])
        .arg(&img)
        .env("TZ", "UTC"));
    assert!(String::from_utf8_lossy(&a.stdout).contains("mmp_node_name"));
    assert_eq!(
        String::from_utf8_lossy(&a.stdout),
        String::from_utf8_lossy(&b.stdout)
    );
}

/// `dump -m` / `-m -i` against `dumpe2fs -m` / `-m -i`: stdout identical but for the program
/// name, exit 0/1/2 as ours 0/4/8, the same libext2fs message on stderr. Clean, in use by a
/// node that stopped (watched for 2 x 5 + 1 s, then clean), e2fsck running, an unknown
/// sequence, bad magic, bad checksum, no MMP at all.
#[test]
fn dump_mmp_check_matches_dumpe2fs() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csum = mkfs(
        dir.path(),
        "csum.img",
        32 << 20,
        &["-t", "ext4", "-O", "mmp"],
    );
    let plain = mkfs(
        dir.path(),
        "plain.img",
        32 << 20,
        &["-t", "ext4", "-O", "mmp,^metadata_csum"],
    );
    let none = mkfs(dir.path(), "none.img", 32 << 20, &["-t", "ext4"]);
    let mmp_at = |img: &Path| sb_field(img, "MMP block number:") * sb_field(img, "Block size:");
    let with = |src: &Path, name: &str, off: u64, bytes: &[u8]| {
        let img = copy(src, name);
        write_at(&img, mmp_at(&img) + off, bytes);
        img
    };
    let cases: Vec<(PathBuf, &[&str])> = vec![
        (csum.clone(), &["-m"]),
        (csum.clone(), &["-m", "-i"]),
        (csum.clone(), &["-m", "-i", "-x"]),
        (none, &["-m"]),
        (
            with(&csum, "magic.img", 0, &0x1234_5678u32.to_le_bytes()),
            &["-m"],
        ),
        (with(&csum, "sum.img", 100, b"x"), &["-m"]),
        (
            with(&plain, "fsck.img", 4, &0xE24D_4D50u32.to_le_bytes()),
            &["-m"],
        ),
        (
            with(&plain, "unknown.img", 4, &0xE24D_4D5Fu32.to_le_bytes()),
            &["-m"],
        ),
        (
            with(&plain, "stopped.img", 4, &42u32.to_le_bytes()),
            &["-m"],
        ),
    ];
    // Both tools watch a node's sequence for 11 s: run every case of both at once.
    let spawn = |exe: PathBuf, pre: &[&str], args: &[&str], img: &Path| {
        Command::new(exe)
            .args(pre)
            .args(args)
            .arg(img)
            .env("TZ", "UTC")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let running: Vec<_> = cases
        .iter()
        .map(|(img, args)| {
            (
                img,
                args,
                spawn(which("dumpe2fs").unwrap(), &[], args, img),
                spawn(bin(), &["dump"], args, img),
            )
        })
        .collect();
    let mut statuses = Vec::new();
    for (img, args, theirs, ours) in running {
        let (a, b) = (
            theirs.wait_with_output().unwrap(),
            ours.wait_with_output().unwrap(),
        );
        let what = format!("{} {args:?}", img.display());
        let expected = String::from_utf8_lossy(&a.stdout).replace("dumpe2fs: ", "e4inspect: ");
        assert_eq!(String::from_utf8_lossy(&b.stdout), expected, "{what}");
        let rc = a.status.code().unwrap();
        let mapped = [0, 4, 8][rc as usize];
        assert_eq!(b.status.code(), Some(mapped), "{what}: dumpe2fs exit {rc}");
        let theirs = String::from_utf8_lossy(&a.stderr);
        if let Some(msg) = theirs
            .lines()
            .find_map(|l| l.strip_prefix("dumpe2fs: ")?.split(" while trying").next())
            .filter(|_| rc != 0)
        {
            let ours = String::from_utf8_lossy(&b.stderr);
            assert!(
                ours.contains(msg.trim_end_matches('.')),
                "{what}: {ours} vs {theirs}"
            );
            assert_eq!(ours.lines().count(), 1, "{what}: one line: {ours}");
        }
        statuses.push(rc);
    }
    // The cases cover every outcome: clean, in use or damaged, unusable.
    for rc in [0, 1, 2] {
        assert!(statuses.contains(&rc), "{statuses:?}");
    }
}

#[test]
fn journal_superblock_start_and_errno_match_e2fsck() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = mkfs(dir.path(), "j.img", 32 << 20, &["-t", "ext4", "-b", "1024"]);
    let out = run(Command::new(which("debugfs").unwrap())
        .args(["-R", "bmap <8> 0"])
        .arg(&base));
    let jblk: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    // s_start (0x1C) and s_errno (0x20), big-endian.
    for (name, off, val, rule) in [
        ("start", 0x1C, 7i32, "journal.start_without_recovery"),
        ("errno", 0x20, -5i32, "journal.errno"),
    ] {
        let img = copy(&base, &format!("{name}.img"));
        write_at(&img, jblk * 1024 + off, &val.to_be_bytes());
        judge(&img, Some(rule), 0);
    }
}

#[test]
fn invalid_bad_blocks_inode_matches_e2fsck_and_dumpe2fs() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bb = dir.path().join("bb.txt");
    std::fs::write(&bb, "3000\n3001\n").unwrap();
    let bbs = bb.to_str().unwrap();
    let base = mkfs(
        dir.path(),
        "bb.img",
        16 << 20,
        &["-t", "ext4", "-b", "1024", "-l", bbs],
    );
    judge(&base, None, 0);
    for (name, field, e2fsck_exit) in [
        ("mode", "mode 0100644", 4),
        ("links", "links_count 1", 4),
        ("uid", "uid 5", 4),
        ("gid", "gid 7", 4),
        ("acl", "file_acl 1234", 4),
        // ext2fs_block_iterate3 refuses inline data: e2fsck aborts (12), dumpe2fs lists nothing.
        ("inline", "flags 0x10000000", 12),
    ] {
        let img = copy(&base, &format!("bb-{name}.img"));
        debugfs_w(&img, &format!("sif <1> {field}"));
        judge(&img, Some("inode.bad_blocks_inode"), e2fsck_exit);
        for flags in [&["-b"][..], &["-h"]] {
            let a = run(Command::new(which("dumpe2fs").unwrap())
                .args(flags)
                .arg(&img)
                .env("TZ", "UTC"));
            let b = run(Command::new(bin())
                .arg("dump")
                .args(flags)
                .arg(&img)
                .env("TZ", "UTC"));
            assert_eq!(
                String::from_utf8_lossy(&a.stdout),
                String::from_utf8_lossy(&b.stdout),
                "{name} {flags:?}"
            );
            if name != "inline" && flags == ["-b"] {
                assert_eq!(String::from_utf8_lossy(&b.stdout), "3000\n3001\n");
            }
        }
    }
}

/// A journal superblock claiming more blocks than the journal has ("journal too short"), and a
/// fast-commit area that leaves fewer than 1024 blocks of log ("incorrect fast commit blocks"):
/// e2fsck -fn cannot proceed (exit 12, PR_0_JOURNAL_BAD_SUPER), `check` names the rule.
#[test]
fn journal_too_small_or_too_big_for_its_log_matches_e2fsck() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = mkfs(
        dir.path(),
        "jl.img",
        48 << 20,
        &[
            "-t",
            "ext4",
            "-b",
            "1024",
            "-J",
            "size=4",
            "-O",
            "^metadata_csum,fast_commit",
        ],
    );
    judge(&base, None, 0);
    let out = run(Command::new(which("debugfs").unwrap())
        .args(["-R", "bmap <8> 0"])
        .arg(&base));
    let jblk: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let at = |off: u64| jblk * 1024 + off;
    // s_maxlen (0x10) past the journal inode's 4096 blocks.
    let img = copy(&base, "maxlen.img");
    write_at(&img, at(0x10), &5000u32.to_be_bytes());
    judge(&img, Some("journal.maxlen"), 12);
    // The journal's fast_commit feature (incompat 0x20 at 0x28) with s_num_fc_blks (0x54):
    // 64 leaves a log of 4032 blocks (clean); 4000 leaves 96.
    for (fc, want, rc) in [
        (64u32, None, 0),
        (4000, Some("journal.fast_commit_blocks"), 12),
    ] {
        let img = copy(&base, &format!("fc-{fc}.img"));
        write_at(&img, at(0x28), &0x20u32.to_be_bytes());
        write_at(&img, at(0x54), &fc.to_be_bytes());
        judge(&img, want, rc);
    }
}

/// A journal inode that is unallocated on disk and restored only by the log (corpus `f_journal`:
/// e2fsck replays from the superblock's backup of the journal blocks, `-n` cannot proceed, exit
/// 12): the kernel loads the inode before recovering and refuses the mount ("special inode
/// unallocated"), so `check` judges it on disk, before its in-memory replay.
#[test]
fn journal_inode_unallocated_before_replay_is_refused() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(img) = corpus_image(dir.path(), "f_journal") else {
        eprintln!("SKIP: corpus image f_journal not found");
        return;
    };
    judge(&img, Some("journal.inode"), 12);
    let (_, _, v) = check_rules(&img);
    let inode = v["images"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "journal.inode")
        .unwrap();
    assert_eq!(inode["severity"], "error", "{inode}");
    match damage::kernel_unavailable() {
        Some(why) => eprintln!("SKIP: the kernel as judge: {why}"),
        None => assert!(
            damage::kernel_reads_all(&img).is_err(),
            "the kernel mounted f_journal"
        ),
    }
}
