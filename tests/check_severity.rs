//! Severities follow the stated rule of `docs/rules.md`: every case below damages a copy of a
//! populated ext4 image (`mke2fs -d`, pinned time and UUID) with `debugfs -w` or a byte edit, so
//! that `check` reports the named `warning` rule and exits 0 where `e2fsck -fn` exits 0 (or, for
//! the kernel-judged deviations, where e2fsck exits 4 and the kernel accepts the image);
//! `--deny warnings` and `--werror` turn each into exit 4. For every rule moved from error to
//! warning, the kernel mounts a copy read-write and reads every file (skipped, with the reason
//! printed, without root or loop mounts). The damage the kernel refuses stays an error: a commit
//! block failing its checksum in the last transaction (a torn commit) fails the mount.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::damage::{
    bmap, debugfs_copy, debugfs_script, e2fsck_fn, inode_of, kernel_reads_all, kernel_unavailable,
};
use common::{bin, have, mkfs, run};

/// The populated base image: files, a directory, a 300 KiB file, a device node and a FIFO.
fn base(dir: &Path) -> PathBuf {
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("d")).unwrap();
    for i in 1..=3 {
        std::fs::write(tree.join(format!("f{i}")), format!("hello {i}\n")).unwrap();
    }
    std::fs::write(tree.join("d/big"), vec![0x5au8; 300 * 1024]).unwrap();
    let img = mkfs(
        dir,
        "base.img",
        64 << 20,
        &["-t", "ext4", "-d", tree.to_str().unwrap()],
    );
    debugfs_script(&img, "mknod cdev c 1 3\nmknod fifo p\n");
    img
}

/// `base` with an empty directory `/e` that was removed while open (ext4_rmdir, then
/// ext4_orphan_add): unlinked, links count 0, the root's links count back to what it was,
/// `/e` on the orphan list.
fn orphan_dir(dir: &Path, base: &Path) -> PathBuf {
    let root_links = |img: &Path| {
        let text = String::from_utf8_lossy(&common::debugfs(img, "stat <2>").stdout).to_string();
        let after = text.split("Links: ").nth(1).expect("root links count");
        after
            .split_whitespace()
            .next()
            .unwrap()
            .parse::<u32>()
            .unwrap()
    };
    let links = root_links(base);
    let with_dir = debugfs_copy(dir, base, "with_dir", &["mkdir /e"]);
    let e = inode_of(&with_dir, "/e");
    debugfs_copy(
        dir,
        &with_dir,
        "orphan_dir",
        &[
            "unlink /e",
            &format!("sif <{e}> links_count 0"),
            &format!("sif <2> links_count {links}"),
            &format!("ssv last_orphan {e}"),
        ],
    )
}

/// `check ARGS IMG`: exit status and the (rule, severity) pairs found.
fn check(img: &Path, args: &[&str]) -> (i32, Vec<(String, String)>) {
    let out = run(Command::new(bin())
        .args(["check", "--json"])
        .args(args)
        .arg(img));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check --json {}: {e}: {}",
            img.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let found = v["images"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (out.status.code().unwrap_or(-1), found)
}

fn exit_of(img: &Path, args: &[&str]) -> i32 {
    let out = run(Command::new(bin()).arg("check").args(args).arg(img));
    out.status.code().unwrap_or(-1)
}

/// Write `bytes` at `off` in `img`.
fn poke(img: &Path, off: u64, bytes: &[u8]) {
    common::images::write_at(img, off, bytes);
}

/// One warning case: the damaged image, the rule it must report, extra `check` arguments, the
/// `e2fsck -fn` exit status, and whether the rule was an error before (the kernel must then
/// mount it read-write and read everything).
struct Case {
    image: PathBuf,
    rule: &'static str,
    args: &'static [&'static str],
    e2fsck: i32,
    moved: bool,
}

fn cases(dir: &Path, base: &Path) -> Vec<Case> {
    let bs = 1024u64;
    let f2 = inode_of(base, "/f2");
    let f3 = inode_of(base, "/f3");
    let jsb = bmap(base, 8, 0) * bs;
    let d = |name: &str, reqs: &[&str]| debugfs_copy(dir, base, name, reqs);
    let case = |image, rule, e2fsck, moved| Case {
        image,
        rule,
        args: &[],
        e2fsck,
        moved,
    };
    let mut v = vec![
        // A truncation left unfinished: the inode is still linked, the list names it.
        case(
            d("orphan_truncate", &[&format!("ssv last_orphan {f2}")]),
            "state.orphan_list",
            0,
            true,
        ),
        // Two open-but-deleted files: unlinked, links count 0, chained through i_dtime. e2fsck -n
        // calls them deleted with bitmap differences (exit 4); the kernel frees them at mount.
        case(
            d(
                "orphan_unlinked",
                &[
                    "unlink /f2",
                    "unlink /f3",
                    &format!("sif <{f2}> links_count 0"),
                    &format!("sif <{f3}> links_count 0"),
                    &format!("sif <{f3}> dtime {f2}"),
                    &format!("ssv last_orphan {f3}"),
                ],
            ),
            "state.orphan_list",
            4,
            true,
        ),
        // An open directory removed (rmdir while in use): no entry names it, its links count
        // is 0, its parent's count already lost its `..`, and the list names it. Neither an
        // unconnected directory nor a wrong count on the parent: the kernel frees it at mount.
        case(orphan_dir(dir, base), "state.orphan_list", 4, true),
        case(d("errors", &["ssv state 3"]), "state.errors", 0, true),
        case(
            d(
                "error_record",
                &[
                    "ssv error_count 3",
                    "ssv first_error_time 1700000000",
                    "ssv first_error_func ext4_lookup",
                ],
            ),
            "state.error_record",
            0,
            false,
        ),
        case(
            d("kbytes", &["ssv kbytes_written 999999999999999"]),
            "state.kbytes_written",
            0,
            false,
        ),
        case(
            d(
                "free_counts",
                &[
                    "ssv free_blocks_count 99999999",
                    "ssv free_inodes_count 99999999",
                ],
            ),
            "sb.free_blocks_total",
            0,
            true,
        ),
        case(
            d("free_inodes", &["ssv free_inodes_count 99999999"]),
            "sb.free_inodes_total",
            0,
            true,
        ),
        case(
            d(
                "lazy_counts",
                &["ssv free_blocks_count 100", "ssv free_inodes_count 100"],
            ),
            "count.sb_free_blocks",
            0,
            false,
        ),
        case(
            d("future", &["ssv mtime 20990101", "ssv wtime 20990101"]),
            "sb.time_future",
            0,
            false,
        ),
        case(
            d("csum_redundant", &["feature uninit_bg"]),
            "sb.feature_csum_redundant",
            0,
            false,
        ),
        case(
            d(
                "immutable_dev",
                &["sif /cdev flags 0x10", "sif /fifo flags 0x20"],
            ),
            "inode.special_immutable",
            0,
            true,
        ),
        case(
            d("no_lost_found", &["rmdir /lost+found"]),
            "connect.lost_found",
            0,
            false,
        ),
        case(
            d("quota_feature", &["feature quota"]),
            "quota.feature",
            0,
            false,
        ),
    ];
    // needs_recovery on a journal with nothing in it: replayed by default, as is with --no-replay.
    let recover = d("needs_recovery", &["feature needs_recovery"]);
    v.push(case(recover.clone(), "journal.replayed", 0, false));
    v.push(Case {
        image: recover,
        rule: "state.needs_recovery",
        args: &["--no-replay"],
        e2fsck: 0,
        moved: true,
    });
    // s_errno in the journal superblock (-EIO), byte 0x20 (big-endian).
    let errno = d("journal_errno", &[]);
    poke(&errno, jsb + 0x20, &(-5i32).to_be_bytes());
    v.push(case(errno, "journal.errno", 0, false));
    // A backup superblock without its magic.
    let backup = d("backup_magic", &[]);
    poke(&backup, 8193 * bs + 56, &[0, 0]);
    v.push(case(backup, "sb.backup_invalid", 0, false));
    // Entries with file type 0 on a filesystem with the filetype feature (an ext2 made without
    // it, the feature set afterwards), as the Hurd writes them.
    let tree = dir.join("tree");
    let ext2 = mkfs(
        dir,
        "unset_filetype.img",
        16 << 20,
        &[
            "-t",
            "ext2",
            "-O",
            "^filetype",
            "-d",
            tree.to_str().unwrap(),
        ],
    );
    debugfs_script(&ext2, "feature filetype\n");
    v.push(case(ext2, "dir.filetype_unset", 0, true));
    v
}

#[test]
fn warning_rules_pass_where_e2fsck_and_the_kernel_do() {
    for t in ["mke2fs", "debugfs", "e2fsck"] {
        if !have(t) {
            eprintln!("SKIP: {t} is not installed");
            return;
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let base = base(tmp.path());
    let (rc, found) = check(&base, &[]);
    assert_eq!((rc, found.len()), (0, 0), "base image: {found:?}");
    let kernel = kernel_unavailable();
    if let Some(why) = &kernel {
        eprintln!("SKIP: kernel mounts: {why}");
    }
    let mut failures = Vec::new();
    for c in cases(tmp.path(), &base) {
        let what = format!("{} ({})", c.image.display(), c.rule);
        let e2fsck = e2fsck_fn(&c.image);
        if e2fsck != c.e2fsck {
            failures.push(format!(
                "{what}: e2fsck -fn exits {e2fsck}, not {}",
                c.e2fsck
            ));
        }
        let rule = e4inspect::check::rules::rule(c.rule).unwrap();
        if rule.severity != e4inspect::check::Severity::Warning {
            failures.push(format!("{what}: the rule is not a warning"));
        }
        let (rc, found) = check(&c.image, c.args);
        if !found.iter().any(|(r, _)| r == c.rule) {
            failures.push(format!("{what}: not reported: {found:?}"));
        }
        if rc != 0 || found.iter().any(|(_, s)| s != "warning") {
            failures.push(format!("{what}: exit {rc}, findings {found:?}"));
        }
        for strict in [&["--deny", "warnings"][..], &["--werror"][..]] {
            let args: Vec<&str> = c
                .args
                .iter()
                .copied()
                .chain(strict.iter().copied())
                .collect();
            let rc = exit_of(&c.image, &args);
            if rc != 4 {
                failures.push(format!("{what}: {strict:?} exits {rc}, not 4"));
            }
        }
        if c.moved && kernel.is_none() {
            if let Err(why) = kernel_reads_all(&c.image) {
                failures.push(format!("{what}: the kernel does not accept it: {why}"));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// A torn last transaction whose commit block fails its checksum (journal checksum v3, written by
/// debugfs's journal commands): e2fsck -n does not replay and exits 0, but the kernel refuses the
/// mount ("journal transaction N is corrupt"), so `journal.unreplayable` stays an error. A commit
/// block with the wrong sequence only ends the log: nothing is reported but the replay.
#[test]
fn a_torn_commit_the_kernel_refuses_stays_an_error() {
    for t in ["mke2fs", "debugfs", "e2fsck"] {
        if !have(t) {
            eprintln!("SKIP: {t} is not installed");
            return;
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let base = base(tmp.path());
    let data = tmp.path().join("data");
    std::fs::write(&data, vec![0xa5u8; 4096]).unwrap();
    let two = debugfs_copy(tmp.path(), &base, "two_transactions", &[]);
    let d = data.display();
    debugfs_script(
        &two,
        &format!("jo -c\njw -b 200,201 {d}\njc\njo\njw -b 300 {d}\njc\n"),
    );
    // Transaction 2: descriptor at journal block 5, data at 6, commit at 7.
    let commit = bmap(&two, 8, 7) * 1024;
    let torn = tmp.path().join("torn_commit.img");
    std::fs::copy(&two, &torn).unwrap();
    poke(&torn, commit + 16, &[0xde, 0xad]);
    let stale = tmp.path().join("wrong_sequence.img");
    std::fs::copy(&two, &stale).unwrap();
    poke(&stale, commit + 8, &9u32.to_be_bytes());

    assert_eq!(e2fsck_fn(&torn), 0);
    let (rc, found) = check(&torn, &[]);
    assert_eq!(rc, 4, "{found:?}");
    assert!(found
        .iter()
        .any(|(r, s)| r == "journal.unreplayable" && s == "error"));
    let (rc, found) = check(&stale, &[]);
    assert_eq!(
        (rc, found),
        (
            0,
            vec![("journal.replayed".to_string(), "warning".to_string())]
        )
    );
    match kernel_unavailable() {
        Some(why) => eprintln!("SKIP: kernel mounts: {why}"),
        None => {
            assert!(
                kernel_reads_all(&torn).is_err(),
                "the kernel mounted the torn commit"
            );
            kernel_reads_all(&stale).unwrap();
        }
    }
}
