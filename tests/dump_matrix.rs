//! `e4inspect dump` against the real dumpe2fs on a matrix of mke2fs layouts, with and without
//! -h and -x, under two time zones.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

fn compare(img: &Path, flags: &[&str], tz: &str) -> Result<(), String> {
    let d = run(Command::new(which("dumpe2fs").unwrap())
        .args(flags)
        .arg(img)
        .env("TZ", tz));
    let e = run(Command::new(bin())
        .arg("dump")
        .args(flags)
        .arg(img)
        .env("TZ", tz));
    if d.stdout != e.stdout {
        let dt = String::from_utf8_lossy(&d.stdout);
        let et = String::from_utf8_lossy(&e.stdout);
        let first = dt
            .lines()
            .zip(et.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| format!("line {}: dumpe2fs {a:?} / e4inspect {b:?}", i + 1))
            .unwrap_or_else(|| format!("lengths {} / {}", dt.len(), et.len()));
        return Err(format!("{} {flags:?} TZ={tz}: {first}", img.display()));
    }
    let want = if d.status.success() {
        0
    } else if d
        .stdout
        .ends_with(b"Couldn't find valid filesystem superblock.\n")
    {
        8
    } else {
        4
    };
    let got = e.status.code().unwrap_or(-1);
    if got != want {
        return Err(format!(
            "{} {flags:?}: exit {got}, expected {want}",
            img.display()
        ));
    }
    Ok(())
}

const MIB: u64 = 1 << 20;

#[test]
fn matrix_matches_dumpe2fs() {
    if !have("mke2fs") || !have("dumpe2fs") {
        eprintln!("SKIP: mke2fs/dumpe2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let layouts: Vec<(&str, u64, Vec<&str>)> = vec![
        ("ext2-1k", 8 * MIB, vec!["-t", "ext2", "-b", "1024"]),
        (
            "ext2-nosparse",
            16 * MIB,
            vec!["-t", "ext2", "-O", "^sparse_super,^resize_inode"],
        ),
        ("ext3", 32 * MIB, vec!["-t", "ext3"]),
        (
            "ext4",
            64 * MIB,
            vec!["-t", "ext4", "-L", "fixture", "-M", "/mnt/x"],
        ),
        ("ext4-2k", 48 * MIB, vec!["-t", "ext4", "-b", "2048"]),
        ("ext4-1k", 40 * MIB, vec!["-t", "ext4", "-b", "1024"]),
        ("ext4-64k", 256 * MIB, vec!["-t", "ext4", "-b", "65536"]),
        ("noflex", 64 * MIB, vec!["-t", "ext4", "-O", "^flex_bg"]),
        ("no64bit", 64 * MIB, vec!["-t", "ext4", "-O", "^64bit"]),
        (
            "metabg",
            96 * MIB,
            vec!["-t", "ext4", "-O", "meta_bg,^resize_inode", "-b", "1024"],
        ),
        (
            "sparse2",
            128 * MIB,
            vec!["-t", "ext4", "-O", "sparse_super2"],
        ),
        (
            "bigalloc",
            256 * MIB,
            vec!["-t", "ext4", "-O", "bigalloc", "-C", "16384"],
        ),
        (
            "bigalloc-1k",
            64 * MIB,
            vec!["-t", "ext4", "-b", "1024", "-O", "bigalloc", "-C", "4096"],
        ),
        (
            "uninit",
            64 * MIB,
            vec!["-t", "ext4", "-O", "^metadata_csum,uninit_bg"],
        ),
        (
            "csumseed",
            64 * MIB,
            vec!["-t", "ext4", "-O", "metadata_csum_seed"],
        ),
        ("inline", 64 * MIB, vec!["-t", "ext4", "-O", "inline_data"]),
        (
            "quota",
            64 * MIB,
            vec!["-t", "ext4", "-O", "quota,project", "-I", "256"],
        ),
        ("orphan", 64 * MIB, vec!["-t", "ext4", "-O", "orphan_file"]),
        ("casefold", 64 * MIB, vec!["-t", "ext4", "-O", "casefold"]),
        ("mmp", 64 * MIB, vec!["-t", "ext4", "-O", "mmp"]),
        (
            "fastcommit",
            64 * MIB,
            vec!["-t", "ext4", "-O", "fast_commit"],
        ),
        ("i128", 32 * MIB, vec!["-t", "ext4", "-I", "128"]),
        ("i512", 32 * MIB, vec!["-t", "ext4", "-I", "512"]),
        ("i1024", 32 * MIB, vec!["-t", "ext4", "-I", "1024"]),
        (
            "raid",
            64 * MIB,
            vec!["-t", "ext4", "-E", "stride=16,stripe_width=64", "-G", "4"],
        ),
        ("rev0", 16 * MIB, vec!["-t", "ext2", "-r", "0"]),
        ("huge-sparse", 2 << 40, vec!["-t", "ext4"]),
    ];
    let mut failures = Vec::new();
    for (name, size, args) in &layouts {
        let img = mkfs(d, &format!("{name}.img"), *size, args);
        for flags in [&[][..], &["-h"], &["-x"]] {
            for tz in ["UTC", "America/New_York"] {
                if *name == "huge-sparse" && tz != "UTC" {
                    continue;
                }
                if let Err(e) = compare(&img, flags, tz) {
                    failures.push(e);
                }
            }
        }
        std::fs::remove_file(&img).ok();
    }
    // External journal device (mke2fs wants a block device for -J device=: a loop device).
    let jdev = mkfs(
        d,
        "journal.img",
        8 * MIB,
        &["-O", "journal_dev", "-b", "4096"],
    );
    for flags in [&[][..], &["-h"]] {
        if let Err(e) = compare(&jdev, flags, "UTC") {
            failures.push(e);
        }
    }
    let lo = run(Command::new("losetup").args(["-f", "--show"]).arg(&jdev));
    if lo.status.success() {
        let loopdev = String::from_utf8_lossy(&lo.stdout).trim().to_string();
        let user = d.join("extjournal.img");
        std::fs::File::create(&user)
            .unwrap()
            .set_len(64 * MIB)
            .unwrap();
        let mk = run(Command::new(which("mke2fs").unwrap())
            .args(["-q", "-F", "-t", "ext4", "-b", "4096", "-J"])
            .arg(format!("device={loopdev}"))
            .arg(&user)
            .env("E2FSPROGS_FAKE_TIME", "1700000000"));
        run(Command::new("losetup").args(["-d", &loopdev]));
        assert!(
            mk.status.success(),
            "{}",
            String::from_utf8_lossy(&mk.stderr)
        );
        // The block device itself, read through BLKGETSIZE64, must dump like the file.
        for flags in [&[][..], &["-h"]] {
            if let Err(e) = compare(&user, flags, "UTC") {
                failures.push(e);
            }
        }
    } else {
        eprintln!("SKIP (external journal user): cannot attach a loop device (not root?)");
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn backup_superblock_matches_dumpe2fs() {
    if !have("mke2fs") || !have("dumpe2fs") {
        eprintln!("SKIP: mke2fs/dumpe2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // 1 KiB blocks: group 1's backup superblock is block 8193. Opening from a backup clears the
    // UNINIT flags in memory (as libext2fs does), which makes bitmap checksums fail: dumpe2fs says so.
    let img = mkfs(dir.path(), "b.img", 64 * MIB, &["-t", "ext4", "-b", "1024"]);
    for opt in [
        &["-o", "superblock=8193"][..],
        &["-o", "superblock=8193", "-o", "blocksize=1024"],
    ] {
        let mut flags: Vec<&str> = opt.to_vec();
        flags.push("-h");
        compare(&img, opt, "UTC").unwrap();
        compare(&img, &flags, "UTC").unwrap();
    }
}

#[test]
fn corpus_matches_dumpe2fs() {
    let names = corpus_names();
    if names.is_empty() || !have("dumpe2fs") {
        eprintln!("SKIP: ../shared/corpus/e2fsprogs or dumpe2fs not available");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut compared = 0;
    for n in &names {
        let Some(img) = corpus_image(dir.path(), n) else {
            continue;
        };
        for flags in [&[][..], &["-h"], &["-x"]] {
            // Only where dumpe2fs itself is deterministic (it prints uninitialised memory for
            // some broken bitmaps).
            let a = run(Command::new(which("dumpe2fs").unwrap())
                .args(flags)
                .arg(&img)
                .env("TZ", "UTC"));
            let b = run(Command::new(which("dumpe2fs").unwrap())
                .args(flags)
                .arg(&img)
                .env("TZ", "UTC"));
            if a.stdout != b.stdout {
                continue;
            }
            let e = run(Command::new(bin())
                .arg("dump")
                .args(flags)
                .arg(&img)
                .env("TZ", "UTC"));
            compared += 1;
            if e.stdout != a.stdout {
                failures.push(format!("{n} {flags:?}"));
            }
            let code = e.status.code();
            if code.is_none() || code == Some(101) {
                failures.push(format!("{n} {flags:?}: crashed"));
            }
            // dumpe2fs fails -> we fail too (8 without a superblock, 4 with trouble); succeeds -> 0
            let want_ok = a.status.success();
            if want_ok != (code == Some(0)) {
                failures.push(format!(
                    "{n} {flags:?}: exit {code:?}, dumpe2fs {:?}",
                    a.status.code()
                ));
            }
        }
        std::fs::remove_file(&img).ok();
    }
    eprintln!(
        "corpus: {compared} comparisons, {} mismatches",
        failures.len()
    );
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}
