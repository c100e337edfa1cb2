//! Severities follow the stated rule of `docs/rules.md`: every case below damages a copy of a
//! populated ext4 image (`mke2fs -d`, pinned time and UUID) with `debugfs -w` or a byte edit, so
//! that `check` reports the named `warning` rule and exits 0 where `e2fsck -fn` exits 0 (or, for
//! the kernel-judged deviations, where e2fsck exits 4 and the kernel accepts the image);
//! `--deny warnings` and `--werror` turn each into exit 4. For every rule moved from error to
//! warning, the kernel mounts a copy read-write and reads every file (skipped, with the reason
//! printed, without root or loop mounts). The damage the kernel refuses stays an error: a commit
//! block failing its checksum in the last transaction (a torn commit) fails the mount.
//!
//! Warning rules that cannot be met alone are judged beside the error that carries the verdict
//! (a group count beyond the group size is also a wrong count, a BLOCK_UNINIT last group also
//! leaves its padding bits clear, the backup advice follows a bad primary table): the warning
//! stays a warning and the error fails the image, where e2fsck -fn exits 4. `journal.fast_commit`
//! needs a fast-commit area written by a live kernel; tests/replay.rs judges it on crash images.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::damage::{
    bmap, debugfs_copy, debugfs_script, e2fsck_fn, group_location, inode_of, kernel_reads_all,
    kernel_unavailable, or_byte, sb_number,
};
use common::{bin, missing_tool, mkfs, run};

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
/// `e2fsck -fn` exit status, and whether the kernel must mount a copy read-write and read
/// everything (every rule moved from error to warning because the kernel repairs or accepts the
/// damage, and the other rows it mounts at once: not an MMP block in use, where the kernel first
/// waits out two update intervals).
struct Case {
    image: PathBuf,
    rule: &'static str,
    args: &'static [&'static str],
    e2fsck: i32,
    kernel: bool,
    /// The image e2fsck and the kernel judge when they cannot read `image` (the filesystem an
    /// e2image file was taken from).
    source: Option<PathBuf>,
}

/// A copy of `base` named `name` with the `debugfs -w -f -` script `script` applied (edits that
/// need one session: a descriptor field and then its checksum).
fn scripted(dir: &Path, base: &Path, name: &str, script: &str) -> PathBuf {
    let img = debugfs_copy(dir, base, name, &[]);
    debugfs_script(&img, script);
    img
}

/// `mke2fs ARGS -d TREE` on `size` bytes (the tree `base` populated).
fn mkfs_tree(dir: &Path, name: &str, size: u64, args: &[&str]) -> PathBuf {
    let tree = dir.join("tree");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-d", tree.to_str().unwrap()]);
    mkfs(dir, name, size, &all)
}

fn cases(dir: &Path, base: &Path) -> Vec<Case> {
    let bs = 1024u64;
    let f2 = inode_of(base, "/f2");
    let f3 = inode_of(base, "/f3");
    let jsb = bmap(base, 8, 0) * bs;
    let d = |name: &str, reqs: &[&str]| debugfs_copy(dir, base, name, reqs);
    let case = |image, rule, e2fsck, kernel| Case {
        image,
        rule,
        args: &[],
        e2fsck,
        kernel,
        source: None,
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
        kernel: true,
        source: None,
    });
    // s_errno in the journal superblock (-EIO), byte 0x20 (big-endian).
    let errno = d("journal_errno", &[]);
    poke(&errno, jsb + 0x20, &(-5i32).to_be_bytes());
    v.push(case(errno, "journal.errno", 0, false));
    // A backup superblock without its magic.
    let backup = d("backup_magic", &[]);
    poke(&backup, 8193 * bs + 56, &[0, 0]);
    v.push(case(backup, "sb.backup_invalid", 0, false));
    // An empty orphan file with orphan_present set (a filesystem copied while mounted): e2fsck
    // asks to clear the flag (exit 4), the kernel clears it at mount.
    let orphan_file = mkfs_tree(
        dir,
        "orphan_file.img",
        64 << 20,
        &["-t", "ext4", "-O", "orphan_file"],
    );
    debugfs_script(&orphan_file, "feature orphan_present\n");
    v.push(case(orphan_file, "state.orphan_file", 4, true));
    // Normal and qcow2 e2image files hold metadata only: neither e2fsck nor the kernel reads
    // them, so the filesystem they were taken from is judged.
    for (name, flag) in [("metadata.e2i", None), ("metadata.qcow2", Some("-Q"))] {
        let out = dir.join(name);
        let mut e2image = Command::new(common::which("e2image").unwrap());
        e2image.args(flag).arg(base).arg(&out);
        assert!(run(&mut e2image).status.success(), "e2image {flag:?}");
        v.push(Case {
            image: out,
            rule: "state.passes_skipped",
            args: &[],
            e2fsck: 0,
            kernel: false,
            source: Some(base.to_path_buf()),
        });
    }
    // Feature combinations e2fsck offers to fix and, answered no, accepts (PR_NO_OK).
    let seed = mkfs_tree(
        dir,
        "csum_seed.img",
        64 << 20,
        &["-t", "ext4", "-O", "^metadata_csum,uninit_bg"],
    );
    or_byte(&seed, 1024 + 0x61, 0x20);
    v.push(case(seed, "sb.feature_csum_seed", 0, true));
    // 64bit without extent: one ext2 group, so that 64-byte descriptors read the table as it is.
    let one = mkfs_tree(dir, "64bit_no_extents.img", 8 << 20, &["-t", "ext2"]);
    or_byte(&one, 1024 + 0x60, 0x80);
    poke(&one, 1024 + 0xFE, &64u16.to_le_bytes());
    v.push(case(one, "sb.feature_64bit_extents", 0, true));
    let meta_bg = mkfs_tree(
        dir,
        "resize_meta_bg.img",
        64 << 20,
        &["-t", "ext4", "-O", "meta_bg,^resize_inode"],
    );
    debugfs_script(&meta_bg, "feature resize_inode\n");
    v.push(case(meta_bg, "sb.feature_resize_meta_bg", 0, true));
    // Backups e2fsck -n does not compare: a superblock and a descriptor table of group 1.
    let sb1 = group_location(base, 1, "Backup superblock at ");
    let backup = d("backup_inodes_count", &[]);
    poke(&backup, sb1 * bs, &1u32.to_le_bytes());
    v.push(case(backup, "sb.backup_mismatch", 0, true));
    let gdt1 = group_location(base, 1, "Group descriptors at ");
    let backup_gd = d("backup_descriptor", &[]);
    poke(&backup_gd, gdt1 * bs, &[9, 9, 0, 0]);
    v.push(case(backup_gd, "gd.backup_mismatch", 0, true));
    // Descriptor flags answered "no" before e2fsck marks the filesystem valid.
    let ext2 = mkfs_tree(dir, "ext2.img", 16 << 20, &["-t", "ext2"]);
    let uninit = dir.join("uninit_without_csum.img");
    std::fs::copy(&ext2, &uninit).unwrap();
    debugfs_script(&uninit, "set_bg 1 flags 1\n");
    v.push(case(uninit, "gd.uninit_without_csum", 0, true));
    let unused = scripted(
        dir,
        base,
        "itable_unused",
        "set_bg 1 itable_unused 9000\nset_bg 1 checksum calc\n",
    );
    v.push(case(unused, "gd.itable_unused", 0, true));
    // Lazy superblock counters: the descriptors' sum and the computed totals both differ.
    let lazy = d(
        "lazy_counts_computed",
        &["ssv free_blocks_count 100", "ssv free_inodes_count 100"],
    );
    for rule in [
        "count.sb_free_inodes",
        "usage.free_blocks",
        "usage.free_inodes",
    ] {
        v.push(case(lazy.clone(), rule, 0, true));
    }
    // s_start set without needs_recovery: e2fsck ignores it, the kernel does not replay it.
    let start = d("journal_start", &[]);
    poke(&start, jsb + 0x1C, &7u32.to_be_bytes());
    v.push(case(start, "journal.start_without_recovery", 0, true));
    // A node's counter in the MMP sequence (no metadata_csum, so that the block stays valid).
    let mmp = mkfs_tree(
        dir,
        "mmp_in_use.img",
        64 << 20,
        &["-t", "ext4", "-O", "mmp,^metadata_csum"],
    );
    poke(
        &mmp,
        sb_number(&mmp, "MMP block number:") * bs + 4,
        &5u32.to_le_bytes(),
    );
    v.push(case(mmp, "mmp.in_use", 0, false));
    // A pre-1970 ctime in the old encoding (sign bit and both epoch bits).
    let epoch = d(
        "time_epoch",
        &["sif /f1 ctime 0x80000000", "sif /f1 ctime_extra 3"],
    );
    v.push(case(epoch, "inode.time_epoch", 0, true));
    // An extent tree of depth 1 whose leaf would fit in the inode after a punch.
    let sparse = dir.join("sparse_tree");
    std::fs::create_dir_all(&sparse).unwrap();
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::File::create(sparse.join("sparse")).unwrap();
        for i in 0..8u64 {
            f.seek(SeekFrom::Start(i * 8192)).unwrap();
            f.write_all(&[b'x'; 1024]).unwrap();
        }
    }
    let deep = mkfs(
        dir,
        "extent_optimizable.img",
        64 << 20,
        &["-t", "ext4", "-d", sparse.to_str().unwrap()],
    );
    debugfs_script(&deep, "punch /sparse 16 100\n");
    v.push(case(deep, "extent.optimizable", 0, true));
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
    if let Some(tool) = missing_tool(&["mke2fs", "debugfs", "e2fsck"]) {
        eprintln!("SKIP: {tool} is not installed");
        return;
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
        let judged = c.source.as_deref().unwrap_or(&c.image);
        let e2fsck = e2fsck_fn(judged);
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
        if c.kernel && kernel.is_none() {
            if let Err(why) = kernel_reads_all(judged) {
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
    if let Some(tool) = missing_tool(&["mke2fs", "debugfs", "e2fsck"]) {
        eprintln!("SKIP: {tool} is not installed");
        return;
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

/// An orphan file block whose tail fails (an inode number written into block 0 without updating
/// the metadata_csum checksum, orphan_present set; block 1 without its magic): e2fsck -fn finds
/// the block not clean and fails to initialize the orphan file (exit 4), the kernel refuses the
/// mount in `ext4_init_orphan_info` ("bad checksum", "bad magic"), so `state.orphan_file_block`
/// is an error. The clean orphan file, every block's checksum verified, has no finding.
#[test]
fn a_damaged_orphan_file_block_is_an_error() {
    if let Some(tool) = missing_tool(&["mke2fs", "debugfs", "e2fsck", "dumpe2fs"]) {
        eprintln!("SKIP: {tool} is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    base(dir);
    let clean = mkfs_tree(
        dir,
        "orphan_file_clean.img",
        64 << 20,
        &["-t", "ext4", "-O", "orphan_file,metadata_csum"],
    );
    assert_eq!(check(&clean, &[]), (0, vec![]), "the clean orphan file");
    let bs = sb_number(&clean, "Block size:");
    let ino = sb_number(&clean, "Orphan file inode:") as u32;
    let csum = dir.join("orphan_block_csum.img");
    std::fs::copy(&clean, &csum).unwrap();
    poke(&csum, bmap(&clean, ino, 0) * bs, &ino.to_le_bytes());
    debugfs_script(&csum, "feature orphan_present\n");
    let magic = dir.join("orphan_block_magic.img");
    std::fs::copy(&clean, &magic).unwrap();
    poke(&magic, bmap(&clean, ino, 1) * bs + bs - 8, &[0, 0, 0, 0]);
    assert_eq!(
        e4inspect::check::rules::rule("state.orphan_file_block")
            .unwrap()
            .severity,
        e4inspect::check::Severity::Error
    );
    let kernel = kernel_unavailable();
    if let Some(why) = &kernel {
        eprintln!("SKIP: kernel mounts: {why}");
    }
    for img in [&csum, &magic] {
        assert_eq!(e2fsck_fn(img), 4, "{}", img.display());
        let (rc, found) = check(img, &[]);
        assert_eq!(rc, 4, "{}: {found:?}", img.display());
        assert!(
            found
                .iter()
                .any(|(r, s)| r == "state.orphan_file_block" && s == "error"),
            "{}: {found:?}",
            img.display()
        );
        if kernel.is_none() {
            assert!(
                kernel_reads_all(img).is_err(),
                "the kernel mounted {}",
                img.display()
            );
        }
    }
}

/// A warning rule met beside the error that carries the verdict: the damaged image, the warning,
/// the error, and `e2fsck -fn`'s exit status.
struct Beside {
    image: PathBuf,
    warning: &'static str,
    error: &'static str,
    e2fsck: i32,
}

fn besides(dir: &Path, base: &Path) -> Vec<Beside> {
    let s = |name: &str, script: &str| scripted(dir, base, name, script);
    let beside = |image, warning, error| Beside {
        image,
        warning,
        error,
        e2fsck: 4,
    };
    let last = group_count(base) - 1;
    // The primary descriptor of group 1 names block 5 as its block bitmap (1 KiB blocks, 64-byte
    // descriptors at block 2): e2fsck falls back to the backup table, as the advice says.
    let primary = debugfs_copy(dir, base, "bad_primary_table", &[]);
    poke(&primary, 2 * 1024 + 64, &5u32.to_le_bytes());
    vec![
        beside(
            s(
                "free_blocks_range",
                "set_bg 1 free_blocks_count 40000\nset_bg 1 checksum calc\n",
            ),
            "gd.free_blocks_range",
            "count.group_free_blocks",
        ),
        beside(
            s(
                "free_inodes_range",
                "set_bg 1 free_inodes_count 60000\nset_bg 1 checksum calc\n",
            ),
            "gd.free_inodes_range",
            "count.group_free_inodes",
        ),
        beside(
            s(
                "used_dirs_range",
                "set_bg 1 used_dirs_count 60000\nset_bg 1 checksum calc\n",
            ),
            "gd.used_dirs_range",
            "usage.group_dirs",
        ),
        // The last group is one block short of a full group: BLOCK_UNINIT leaves the bits past
        // the end clear, which e2fsck's pass 5 fails.
        beside(
            s(
                "last_group_block_uninit",
                &format!("set_bg {last} flags 7\nset_bg {last} checksum calc\n"),
            ),
            "gd.last_group_block_uninit",
            "bitmap.block_padding",
        ),
        beside(primary, "sb.use_backup", "gd.overlap"),
    ]
}

/// The number of block groups of `img`.
fn group_count(img: &Path) -> u32 {
    let blocks = sb_number(img, "Block count:");
    let first = sb_number(img, "First block:");
    let per = sb_number(img, "Blocks per group:");
    (blocks - first).div_ceil(per) as u32
}

#[test]
fn warnings_beside_the_error_that_decides() {
    if let Some(tool) = missing_tool(&["mke2fs", "debugfs", "e2fsck", "dumpe2fs"]) {
        eprintln!("SKIP: {tool} is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let base = base(tmp.path());
    let mut failures = Vec::new();
    for c in besides(tmp.path(), &base) {
        let what = format!("{} ({} beside {})", c.image.display(), c.warning, c.error);
        let e2fsck = e2fsck_fn(&c.image);
        if e2fsck != c.e2fsck {
            failures.push(format!(
                "{what}: e2fsck -fn exits {e2fsck}, not {}",
                c.e2fsck
            ));
        }
        let rule = e4inspect::check::rules::rule(c.warning).unwrap();
        if rule.severity != e4inspect::check::Severity::Warning {
            failures.push(format!("{what}: the rule is not a warning"));
        }
        let (rc, found) = check(&c.image, &[]);
        let has = |r: &str, s: &str| found.iter().any(|(fr, fs)| fr == r && fs == s);
        if !has(c.warning, "warning") || !has(c.error, "error") || rc != 4 {
            failures.push(format!("{what}: exit {rc}, findings {found:?}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Bitmap bytes past the bitmap that are not 0xff: libext2fs flags the tail when it reads the
/// bitmaps and e2fsck's pass 5 asks to set it ("Padding at end of inode/block bitmap is not set",
/// no PR_NO_OK: exit 4), so `bitmap.tail_padding` is an error (it was a warning).
#[test]
fn bitmap_tail_padding_fails_as_e2fsck_does() {
    if let Some(tool) = missing_tool(&["mke2fs", "debugfs", "e2fsck", "dumpe2fs"]) {
        eprintln!("SKIP: {tool} is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let base = base(dir);
    // Inode bitmap of group 0: 2048 inodes per group fill 256 bytes of a 1 KiB block.
    let inode_tail = debugfs_copy(dir, &base, "inode_bitmap_tail", &[]);
    let ib = group_location(&base, 0, "Inode bitmap at ");
    poke(&inode_tail, ib * 1024 + 1020, &[0]);
    // Block bitmap: 8192 blocks per group fill 1 KiB of a 4 KiB block.
    let big = mkfs_tree(
        dir,
        "block_bitmap_tail.img",
        64 << 20,
        &["-t", "ext4", "-b", "4096", "-g", "8192"],
    );
    let bb = group_location(&big, 0, "Block bitmap at ");
    poke(&big, bb * 4096 + 4000, &[0]);
    assert_eq!(
        e4inspect::check::rules::rule("bitmap.tail_padding")
            .unwrap()
            .severity,
        e4inspect::check::Severity::Error
    );
    for img in [&inode_tail, &big] {
        assert_eq!(e2fsck_fn(img), 4, "{}", img.display());
        let (rc, found) = check(img, &[]);
        assert_eq!(
            (rc, found),
            (
                4,
                vec![("bitmap.tail_padding".to_string(), "error".to_string())]
            ),
            "{}",
            img.display()
        );
    }
}

/// A block device mounted while checked (read-only, so that nothing changes under either tool):
/// e2fsck -fn warns and exits 0, `check` reports `state.mounted` and exits 0.
#[test]
fn a_mounted_device_is_a_warning() {
    if let Some(tool) = missing_tool(&["mke2fs", "debugfs", "e2fsck"]) {
        eprintln!("SKIP: {tool} is not installed");
        return;
    }
    if let Some(why) = kernel_unavailable() {
        eprintln!("SKIP: {why}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let base = base(tmp.path());
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let out = run(Command::new("mount")
        .args(["-o", "loop,ro"])
        .arg(&base)
        .arg(&mnt));
    if !out.status.success() {
        eprintln!(
            "SKIP: loop mount refused: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return;
    }
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    let dev = mounts
        .lines()
        .find(|l| l.split_whitespace().nth(1) == mnt.to_str())
        .and_then(|l| l.split_whitespace().next())
        .map(PathBuf::from);
    // Unmounted before any assertion, even when a helper panics.
    let result = std::panic::catch_unwind(|| {
        let dev = dev.expect("the loop device in /proc/self/mounts");
        (
            e2fsck_fn(&dev),
            check(&dev, &[]),
            exit_of(&dev, &["--deny", "warnings"]),
        )
    });
    let _ = run(Command::new("umount").arg(&mnt));
    let (e2fsck, (rc, found), strict) = result.unwrap_or_else(|e| std::panic::resume_unwind(e));
    assert_eq!(e2fsck, 0);
    assert_eq!(
        (rc, found, strict),
        (
            0,
            vec![("state.mounted".to_string(), "warning".to_string())],
            4
        )
    );
}
