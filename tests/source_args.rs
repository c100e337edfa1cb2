//! Every command that reads an image takes the same `--offset` / `--partition` (cli::SourceArgs):
//! `fit --from-image` and `advise --from-image` accept `--partition`, and `inode` accepts size
//! suffixes in `--offset` (`0K`) as `dump` does. Results through the partition table equal those
//! through the explicit byte offset.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Output};

const MIB: u64 = 1 << 20;

/// An MBR with two Linux partitions (so auto-detection needs --partition).
fn mbr(parts: &[(u64, u64)]) -> Vec<u8> {
    let mut m = vec![0u8; 512];
    for (i, (start, len)) in parts.iter().enumerate() {
        let e = 446 + 16 * i;
        m[e + 4] = 0x83;
        m[e + 8..e + 12].copy_from_slice(&((start / 512) as u32).to_le_bytes());
        m[e + 12..e + 16].copy_from_slice(&((len / 512) as u32).to_le_bytes());
    }
    m[510] = 0x55;
    m[511] = 0xAA;
    m
}

fn mkfs_at(path: &Path, offset: u64, size: u64, inodes: &str) {
    let o = run(Command::new(which("mke2fs").unwrap())
        .args(["-q", "-F", "-t", "ext4", "-N", inodes, "-E"])
        .arg(format!("offset={offset}"))
        .arg(path)
        .arg(format!("{}k", size / 1024))
        .env("E2FSPROGS_FAKE_TIME", "1700000000"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn e4(args: &[&str], image: &Path) -> Output {
    run(Command::new(bin()).args(args).arg(image).env("TZ", "UTC"))
}

fn e4_args(args: &[&str]) -> Output {
    run(Command::new(bin()).args(args).env("TZ", "UTC"))
}

fn ok(o: &Output, what: &str) -> Vec<u8> {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout.clone()
}

#[test]
fn image_arguments_are_the_same_everywhere() {
    if !have("mke2fs") {
        eprintln!("SKIP: mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let disk = dir.path().join("disk.img");
    std::fs::File::create(&disk)
        .unwrap()
        .set_len(64 * MIB)
        .unwrap();
    let second = 32 * MIB;
    write_at(&disk, 0, &mbr(&[(MIB, 24 * MIB), (second, 24 * MIB)]));
    mkfs_at(&disk, MIB, 24 * MIB, "2048");
    mkfs_at(&disk, second, 24 * MIB, "4096");
    let off = second.to_string();

    // fit --from-image: --partition 2 is the same filesystem as --offset.
    let by_part = e4(
        &["fit", "--json", "--partition", "2", "--from-image"],
        &disk,
    );
    let by_off = e4(&["fit", "--json", "--offset", &off, "--from-image"], &disk);
    assert_eq!(ok(&by_part, "fit --partition"), ok(&by_off, "fit --offset"));

    // advise --from-image likewise, and partition 2's inode count shows (not partition 1's).
    let adv = |extra: &[&str]| {
        let mut a = vec!["advise", "--json", "--size", "1G"];
        a.extend_from_slice(extra);
        a.push("--from-image");
        e4(&a, &disk)
    };
    let by_part = adv(&["--partition", "2"]);
    let by_off = adv(&["--offset", &off]);
    assert_eq!(
        ok(&by_part, "advise --partition"),
        ok(&by_off, "advise --offset")
    );

    // inode and xattrs: --partition and --offset with a size suffix.
    let k = format!("{}K", second / 1024);
    let d = disk.to_str().unwrap();
    let by_part = e4_args(&["inode", "--partition", "2", "--json", d, "2"]);
    let by_off = e4_args(&["inode", "--offset", &k, "--json", d, "2"]);
    assert_eq!(
        ok(&by_part, "inode --partition"),
        ok(&by_off, "inode --offset K")
    );
    let by_part = e4(
        &["xattrs", "--json", "--no-progress", "--partition", "2"],
        &disk,
    );
    assert!(!ok(&by_part, "xattrs --partition").is_empty());

    // --offset 0K on a bare filesystem image, as dump accepts it.
    let bare = dir.path().join("bare.img");
    std::fs::File::create(&bare)
        .unwrap()
        .set_len(8 * MIB)
        .unwrap();
    mkfs_at(&bare, 0, 8 * MIB, "512");
    let b = bare.to_str().unwrap();
    let plain = e4_args(&["inode", b, "2"]);
    let zero = e4_args(&["inode", "--offset", "0K", b, "2"]);
    assert_eq!(ok(&zero, "inode --offset 0K"), ok(&plain, "inode"));
}
