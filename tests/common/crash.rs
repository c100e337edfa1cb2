//! Crash images: an ext3/ext4 filesystem loop-mounted, changed across several `sync`s, and
//! copied while still mounted (as a snapshot of a running system is); beside it a copy recovered
//! by `e2fsck -E journal_only` and one recovered by a kernel mount and unmount.

pub use super::is_root;
use super::{have, run, which};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why crash images cannot be made here, if they cannot.
pub fn unavailable() -> Option<String> {
    if !is_root() {
        return Some("loop mounts need root".into());
    }
    for t in ["mke2fs", "e2fsck", "dumpe2fs", "debugfs", "mount", "umount"] {
        if !have(t) {
            return Some(format!("{t} is not installed"));
        }
    }
    None
}

/// The three images of one crash.
pub struct Crash {
    /// Copied while mounted (needs recovery).
    pub crash: PathBuf,
    /// Recovered by `e2fsck -E journal_only -y` (run at the crash copy's write time, so that the
    /// time e2fsck stamps is the one a read-only replay keeps).
    pub fsck: PathBuf,
    /// Recovered by the kernel (mounted and unmounted).
    pub kernel: PathBuf,
}

fn sh(script: &str) -> std::process::Output {
    run(Command::new("sh").arg("-c").arg(script))
}

/// Mount `img` on `mnt` with `opts`; false when the kernel refuses.
pub fn mount(img: &Path, mnt: &Path, opts: &str) -> bool {
    std::fs::create_dir_all(mnt).unwrap();
    let o = run(Command::new("mount")
        .args([
            "-o",
            &format!("loop{}{opts}", if opts.is_empty() { "" } else { "," }),
        ])
        .arg(img)
        .arg(mnt));
    if !o.status.success() {
        eprintln!(
            "mount {}: {}",
            img.display(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    o.status.success()
}

/// Unmount `mnt`. "target is busy" is retried for a few seconds: on a loaded machine a process
/// that just read the mount (a child the test waited for, udev's blkid probe of the loop device)
/// can still hold it for a moment after it exited.
pub fn umount(mnt: &Path) {
    let mut o = run(Command::new("umount").arg(mnt));
    for _ in 0..40 {
        if o.status.success() || !String::from_utf8_lossy(&o.stderr).contains("busy") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
        o = run(Command::new("umount").arg(mnt));
    }
    assert!(
        o.status.success(),
        "umount: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `s_wtime` of an image, seconds (from dumpe2fs -h).
pub fn write_time(img: &Path) -> Option<String> {
    let o = run(Command::new(which("dumpe2fs")?).arg("-h").arg(img));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let line = text.lines().find(|l| l.starts_with("Last write time:"))?;
    let when = line.trim_start_matches("Last write time:").trim();
    let d = run(Command::new("date")
        .args(["-d", when, "+%s"])
        .env("TZ", "UTC"));
    Some(String::from_utf8_lossy(&d.stdout).trim().to_string())
}

/// Make a crash image in `dir`: `mke2fs MKFS` on `size` bytes, mounted with `opts`, `workload`
/// run in the mount point (`$M`) with `sync`s of its own, then copied while mounted. `None`
/// (with the reason printed) when the kernel refuses the mount.
pub fn make(
    dir: &Path,
    name: &str,
    size: u64,
    mkfs: &[&str],
    opts: &str,
    workload: &str,
) -> Option<Crash> {
    let img = super::mkfs(dir, &format!("{name}.live"), size, mkfs);
    let mnt = dir.join(format!("{name}.mnt"));
    if !mount(&img, &mnt, opts) {
        eprintln!("SKIP {name}: the kernel refuses to mount it");
        return None;
    }
    let o = sh(&format!("M='{}'; set -e; {workload}", mnt.display()));
    let crash = dir.join(format!("{name}.crash"));
    // Copied while mounted: committed transactions not yet written home stay in the journal.
    let cp = sh(&format!(
        "cp --sparse=always '{}' '{}'",
        img.display(),
        crash.display()
    ));
    umount(&mnt);
    assert!(
        o.status.success(),
        "{name} workload: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(cp.status.success());
    let fsck = dir.join(format!("{name}.fsck"));
    let kernel = dir.join(format!("{name}.kernel"));
    std::fs::copy(&crash, &fsck).unwrap();
    std::fs::copy(&crash, &kernel).unwrap();
    let mut e = Command::new(which("e2fsck").unwrap());
    e.args(["-E", "journal_only", "-y"]).arg(&fsck);
    if let Some(t) = write_time(&crash) {
        e.env("E2FSCK_TIME", t);
    }
    run(&mut e);
    if mount(&kernel, &mnt, "") {
        umount(&mnt);
    }
    Some(Crash {
        crash,
        fsck,
        kernel,
    })
}

/// What a tree looks like: per relative path, its type and permissions, owner, size, mtime and
/// contents (or link target), and its extended attributes.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, p: &Path, out: &mut BTreeMap<PathBuf, String>) {
    let Ok(rd) = std::fs::read_dir(p) else {
        return;
    };
    for e in rd.flatten() {
        let path = e.path();
        let rel = path.strip_prefix(root).unwrap().to_path_buf();
        if rel == Path::new("lost+found") {
            continue;
        }
        let m = std::fs::symlink_metadata(&path).unwrap();
        let body = if m.file_type().is_symlink() {
            format!("-> {}", std::fs::read_link(&path).unwrap().display())
        } else if m.is_file() {
            let data = std::fs::read(&path).unwrap();
            format!("{} bytes, fnv {:016x}", data.len(), fnv(&data))
        } else {
            String::new()
        };
        let xattrs = run(Command::new("getfattr")
            .args(["-h", "-d", "-m", "-", "--absolute-names"])
            .arg(&path));
        let xattrs: Vec<String> = String::from_utf8_lossy(&xattrs.stdout)
            .lines()
            .filter(|l| l.contains('='))
            // A value stored in an EA inode (larger than a block) cannot be written to a
            // destination filesystem without ea_inode: extract says so and skips it.
            .filter(|l| l.len() < 3900)
            .map(str::to_string)
            .collect();
        out.insert(
            rel,
            format!(
                "mode {:o} uid {} gid {} mtime {}.{} {body} xattrs {xattrs:?}",
                m.mode(),
                m.uid(),
                m.gid(),
                m.mtime(),
                m.mtime_nsec(),
            ),
        );
        if m.is_dir() {
            walk(root, &path, out);
        }
    }
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}
