//! Read-only proof: the image's bytes are identical before and after every command, a read-only
//! file (mode 444) works, and as root a read-only loop device works too, with `dump` on the
//! device equal to `dumpe2fs` on the device. Without root the device part is skipped with a
//! printed reason.

mod common;
mod robust;

use common::*;
use robust::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(30);

/// FNV-1a over the whole file: enough to see any changed byte.
fn digest(p: &Path) -> (u64, u64) {
    let b = std::fs::read(p).unwrap();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in &b {
        h ^= u64::from(*x);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (b.len() as u64, h)
}

/// The exit status that counts on a clean image: a command about a feature the image does not
/// have (`quota` without the quota feature) answers with one line and exit 8, as debugfs prints
/// "quota feature not enabled"; that is the right answer, not a failure to read.
fn exit_on_clean(o: &Outcome, style: Style) -> Option<i32> {
    // Two different images compared: differences are the answer, not a problem.
    if style == Style::Against && o.code == Some(4) {
        return Some(0);
    }
    let missing_feature = o.code == Some(8)
        && o.stderr.lines().count() == 1
        && o.stderr.contains("feature not enabled");
    if missing_feature {
        Some(0)
    } else {
        o.code
    }
}

fn images(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let f = dir.join("example.img");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example.img"),
        &f,
    )
    .unwrap();
    v.push(f);
    if have("mke2fs") {
        v.push(mkfs(
            dir,
            "ext4.img",
            8 << 20,
            &["-t", "ext4", "-O", "metadata_csum,64bit"],
        ));
        v.push(mkfs(
            dir,
            "ext2.img",
            2 << 20,
            &["-t", "ext2", "-b", "1024"],
        ));
    }
    v
}

#[test]
fn every_command_leaves_a_read_only_image_unchanged() {
    let bin = bin();
    let cmds = image_commands(&bin);
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    for img in images(dir.path()) {
        std::fs::set_permissions(&img, std::fs::Permissions::from_mode(0o444)).unwrap();
        let mtime = std::fs::metadata(&img).unwrap().modified().unwrap();
        for c in &cmds {
            let before = digest(&img);
            let o = run_bounded(&bin, &c.args(&img), TIMEOUT, false);
            assert!(
                o.violation_for(c.style).is_none(),
                "{} on {}: {:?}",
                c.label(),
                img.display(),
                o.violation_for(c.style)
            );
            assert_eq!(
                exit_on_clean(&o, c.style),
                Some(0),
                "{} on a clean read-only image: {}",
                c.label(),
                o.stderr
            );
            assert_eq!(
                digest(&img),
                before,
                "{} changed {}",
                c.label(),
                img.display()
            );
        }
        assert_eq!(std::fs::metadata(&img).unwrap().modified().unwrap(), mtime);
    }
}

struct Loop(String);
impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

#[test]
fn every_command_works_on_a_read_only_loop_device() {
    if !is_root() {
        eprintln!("SKIP every_command_works_on_a_read_only_loop_device: needs root for losetup");
        return;
    }
    if !have("losetup") || !have("dumpe2fs") {
        eprintln!(
            "SKIP every_command_works_on_a_read_only_loop_device: losetup or dumpe2fs missing"
        );
        return;
    }
    let bin = bin();
    let cmds = image_commands(&bin);
    let dir = tempfile::tempdir().unwrap();
    for img in images(dir.path()) {
        let o = run(Command::new("losetup")
            .args(["-r", "-f", "--show"])
            .arg(&img));
        if !o.status.success() {
            eprintln!(
                "SKIP every_command_works_on_a_read_only_loop_device: losetup -r failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return;
        }
        let dev = Loop(String::from_utf8_lossy(&o.stdout).trim().to_string());
        let devp = PathBuf::from(&dev.0);
        let ro = run(Command::new("blockdev").arg("--getro").arg(&devp));
        assert_eq!(
            String::from_utf8_lossy(&ro.stdout).trim(),
            "1",
            "{} is not read-only",
            dev.0
        );
        let before = digest(&img);
        for c in &cmds {
            let o = run_bounded(&bin, &c.args(&devp), TIMEOUT, false);
            assert!(
                o.violation_for(c.style).is_none(),
                "{} on {}: {:?}",
                c.label(),
                dev.0,
                o.violation_for(c.style)
            );
            assert_eq!(
                exit_on_clean(&o, c.style),
                Some(0),
                "{} on {}: {}",
                c.label(),
                dev.0,
                o.stderr
            );
        }
        let ours = run_bounded(&bin, &["dump".into(), devp.clone().into()], TIMEOUT, true);
        let theirs = run(Command::new(which("dumpe2fs").unwrap())
            .arg(&devp)
            .env("TZ", "UTC"));
        assert_eq!(ours.code, Some(0));
        assert!(
            ours.stdout == theirs.stdout,
            "dump of {} differs from dumpe2fs on the device",
            dev.0
        );
        drop(dev);
        assert_eq!(
            digest(&img),
            before,
            "{} changed through its loop device",
            img.display()
        );
    }
}
