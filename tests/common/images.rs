//! Containers made by the real tools for the tests: e2image files (normal, `-Q`, `-r`) and
//! qcow2 images written by qemu-img, and whole-disk images with MBR/GPT tables.

use super::{run, which};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A populated tree for `mke2fs -d`: nested directories, small files, a 3 MB file, fast and slow
/// symlinks, a hard link, an xattr too large for the inode (when `setfattr` is installed).
pub fn populated_tree(dir: &Path) -> PathBuf {
    let t = dir.join("tree");
    std::fs::create_dir_all(t.join("d1/d2/d3")).unwrap();
    for i in 0..40 {
        std::fs::write(t.join(format!("d1/f{i}")), format!("file {i}\n")).unwrap();
    }
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(t.join("big"), big).unwrap();
    std::os::unix::fs::symlink("d1/f1", t.join("fast")).unwrap();
    std::os::unix::fs::symlink("x".repeat(100), t.join("slow")).unwrap();
    std::fs::hard_link(t.join("d1/f2"), t.join("d1/d2/hard")).unwrap();
    if which("setfattr").is_some() {
        let _ = Command::new("setfattr")
            .args(["-n", "user.big", "-v", &"v".repeat(300)])
            .arg(t.join("d1/f3"))
            .status();
    }
    t
}

/// Run `e2image ARGS SRC DST` and return DST.
pub fn e2image(args: &[&str], src: &Path, dst: &Path) -> PathBuf {
    let o = run(Command::new(which("e2image").expect("e2image"))
        .args(args)
        .arg(src)
        .arg(dst));
    assert!(
        o.status.success(),
        "e2image {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    dst.to_path_buf()
}

/// Run `qemu-img convert -O FORMAT ARGS SRC DST` and return DST.
pub fn qemu_convert(format: &str, args: &[&str], src: &Path, dst: &Path) -> PathBuf {
    let o = run(Command::new("qemu-img")
        .args(["convert", "-O", format])
        .args(args)
        .arg(src)
        .arg(dst));
    assert!(
        o.status.success(),
        "qemu-img convert -O {format} {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    dst.to_path_buf()
}

/// Write `bytes` at byte `off` of the file at `path`.
pub fn write_at(path: &Path, off: u64, bytes: &[u8]) {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(off)).unwrap();
    f.write_all(bytes).unwrap();
}

/// An MBR boot sector with these (type, start byte, length) partitions.
pub fn mbr(parts: &[(u8, u64, u64)]) -> Vec<u8> {
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

/// Write a protective MBR and a GPT with Linux partitions at these (start byte, length) ranges.
pub fn gpt(path: &Path, parts: &[(u64, u64)]) {
    const LINUX: [u8; 16] = [
        0xAF, 0x3D, 0xC6, 0x0F, 0x83, 0x84, 0x72, 0x47, 0x8E, 0x79, 0x3D, 0x69, 0xD8, 0x47, 0x7D,
        0xE4,
    ];
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

/// A whole-disk image of `size` bytes holding the filesystem image `fs` at byte `offset`, with
/// the partition table written by `table`.
pub fn disk_with(path: &Path, size: u64, fs: &Path, offset: u64, table: impl FnOnce(&Path)) {
    std::fs::File::create(path).unwrap().set_len(size).unwrap();
    table(path);
    write_at(path, offset, &std::fs::read(fs).unwrap());
}
