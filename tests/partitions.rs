//! Whole-disk images: MBR and GPT partition tables written by the test, filesystems made inside
//! partitions with `mke2fs -E offset=`, compared with `dumpe2fs 'disk.img?offset=N'`.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

const MIB: u64 = 1 << 20;

fn blank(path: &Path, size: u64) {
    std::fs::File::create(path).unwrap().set_len(size).unwrap();
}

fn mbr(parts: &[(u8, u64, u64)]) -> Vec<u8> {
    let mut m = vec![0u8; 512];
    for (i, (kind, start, len)) in parts.iter().enumerate() {
        let e = 446 + 16 * i;
        m[e + 4] = *kind;
        m[e + 8..e + 12].copy_from_slice(&((start / 512) as u32).to_le_bytes());
        m[e + 12..e + 16].copy_from_slice(&((len / 512) as u32).to_le_bytes());
    }
    m[510] = 0x55;
    m[511] = 0xAA;
    m
}

const LINUX: [u8; 16] = [
    0xAF, 0x3D, 0xC6, 0x0F, 0x83, 0x84, 0x72, 0x47, 0x8E, 0x79, 0x3D, 0x69, 0xD8, 0x47, 0x7D, 0xE4,
];

fn gpt(path: &Path, parts: &[(u64, u64)]) {
    write_at(path, 0, &mbr(&[(0xEE, 512, 1 << 30)]));
    let mut h = vec![0u8; 92];
    h[..8].copy_from_slice(b"EFI PART");
    h[0x48..0x50].copy_from_slice(&2u64.to_le_bytes());
    h[0x50..0x54].copy_from_slice(&128u32.to_le_bytes());
    h[0x54..0x58].copy_from_slice(&128u32.to_le_bytes());
    write_at(path, 512, &h);
    for (i, (start, len)) in parts.iter().enumerate() {
        let mut e = vec![0u8; 128];
        e[..16].copy_from_slice(&LINUX);
        e[16] = i as u8 + 1;
        e[0x20..0x28].copy_from_slice(&(start / 512).to_le_bytes());
        e[0x28..0x30].copy_from_slice(&((start + len) / 512 - 1).to_le_bytes());
        write_at(path, 1024 + 128 * i as u64, &e);
    }
}

fn mkfs_at(path: &Path, offset: u64, size: u64) {
    let o = run(Command::new(which("mke2fs").unwrap())
        .args(["-q", "-F", "-t", "ext4", "-E"])
        .arg(format!("offset={offset}"))
        .arg(path)
        .arg(format!("{}k", size / 1024))
        .env("E2FSPROGS_FAKE_TIME", "1700000000"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn same_as_dumpe2fs(disk: &Path, offset: u64, extra: &[&str]) {
    let d = run(Command::new(which("dumpe2fs").unwrap())
        .arg(format!("{}?offset={offset}", disk.display()))
        .env("TZ", "UTC"));
    assert!(d.status.success());
    let e = run(Command::new(bin())
        .arg("dump")
        .args(extra)
        .arg(disk)
        .env("TZ", "UTC"));
    assert_eq!(
        e.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&e.stderr)
    );
    assert!(
        d.stdout == e.stdout,
        "dump of {} {extra:?} differs",
        disk.display()
    );
}

#[test]
fn mbr_and_gpt_disks() {
    if !have("mke2fs") || !have("dumpe2fs") {
        eprintln!("SKIP: mke2fs/dumpe2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // MBR: one Linux partition at 1 MiB -> used automatically.
    let m = dir.path().join("mbr.img");
    blank(&m, 64 * MIB);
    write_at(&m, 0, &mbr(&[(0x83, MIB, 40 * MIB)]));
    mkfs_at(&m, MIB, 40 * MIB);
    same_as_dumpe2fs(&m, MIB, &[]);
    // GPT: two ext4 partitions -> listed, --partition picks.
    let g = dir.path().join("gpt.img");
    blank(&g, 96 * MIB);
    gpt(&g, &[(MIB, 40 * MIB), (48 * MIB, 40 * MIB)]);
    mkfs_at(&g, MIB, 40 * MIB);
    mkfs_at(&g, 48 * MIB, 40 * MIB);
    let e = run(Command::new(bin()).arg("dump").arg(&g));
    assert_eq!(e.status.code(), Some(8));
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(
        err.contains("--partition") && err.contains("#1") && err.contains("#2"),
        "{err}"
    );
    same_as_dumpe2fs(&g, 48 * MIB, &["--partition", "2"]);
    same_as_dumpe2fs(&g, MIB, &["--offset", &MIB.to_string()]);
    // No partition holds ext: a clear message, not "bad magic".
    let n = dir.path().join("none.img");
    blank(&n, 8 * MIB);
    write_at(&n, 0, &mbr(&[(0x0c, MIB, 4 * MIB)]));
    let e = run(Command::new(bin()).arg("dump").arg(&n));
    assert_eq!(e.status.code(), Some(8));
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(
        err.contains("partition table") && err.contains("no partition holds"),
        "{err}"
    );
}
