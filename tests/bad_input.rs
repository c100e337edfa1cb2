//! Bad input: one clear line on stderr, exit 8, never a panic; usage errors exit 16.

mod common;
use common::*;
use std::process::Command;

fn check_fails(path: &std::path::Path, what: &str) {
    let o = run(Command::new(bin()).arg("dump").arg(path));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(8),
        "{what}: exit {:?}, stderr {err}",
        o.status.code()
    );
    assert!(!err.contains("panicked"), "{what}: panic: {err}");
    assert_eq!(
        err.lines().count(),
        1,
        "{what}: expected one stderr line, got {err:?}"
    );
    assert!(
        err.contains(&*path.display().to_string()),
        "{what}: stderr lacks the path: {err}"
    );
}

#[test]
fn bad_inputs_exit_8_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    check_fails(&d.join("missing.img"), "missing path");
    check_fails(d, "directory");
    let empty = d.join("empty.img");
    std::fs::write(&empty, b"").unwrap();
    check_fails(&empty, "empty file");
    // deterministic pseudo-random bytes
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let rnd: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let r = d.join("random.img");
    std::fs::write(&r, &rnd).unwrap();
    check_fails(&r, "random bytes");
    if have("mkfs.vfat") || have("mkfs.fat") {
        let fat = d.join("fat.img");
        std::fs::File::create(&fat)
            .unwrap()
            .set_len(8 << 20)
            .unwrap();
        let tool = which("mkfs.vfat").or_else(|| which("mkfs.fat")).unwrap();
        let o = run(Command::new(tool).arg(&fat));
        if o.status.success() {
            check_fails(&fat, "FAT image");
        }
    } else {
        eprintln!("note: mkfs.vfat not installed; FAT case skipped");
    }
    if have("mke2fs") {
        let img = mkfs(d, "t.img", 16 << 20, &["-t", "ext4"]);
        // Truncated to the first 8 KiB: superblock readable, descriptors beyond the end.
        let bytes = std::fs::read(&img).unwrap();
        let t = d.join("trunc.img");
        std::fs::write(&t, &bytes[..2048]).unwrap();
        check_fails(&t, "truncated image");
    }
}

#[test]
fn unreadable_file_exits_8() {
    // root reads anything; only meaningful for other users.
    if unsafe_is_root() {
        eprintln!("SKIP: running as root, permission bits do not stop reads");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("noperm.img");
    std::fs::write(&p, vec![0u8; 4096]).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    check_fails(&p, "unreadable file");
}

fn unsafe_is_root() -> bool {
    run(Command::new("id").arg("-u")).stdout.starts_with(b"0\n")
}

#[test]
fn usage_errors_exit_16() {
    let o = run(Command::new(bin()).arg("dump"));
    assert_eq!(o.status.code(), Some(16));
    let o = run(Command::new(bin()).arg("no-such-command"));
    assert_eq!(o.status.code(), Some(16));
    let o = run(Command::new(bin()).arg("--help"));
    assert_eq!(o.status.code(), Some(0));
}
