//! Damaged images for severity tests: `debugfs -w` edits and byte edits on a copy, `e2fsck -fn`'s
//! exit status, and the kernel's verdict (a read-write loop mount of a copy that reads every file).

use super::{run, which};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Copy `base` to `dir/NAME.img` and apply each `debugfs -w -R` request in turn.
pub fn debugfs_copy(dir: &Path, base: &Path, name: &str, requests: &[&str]) -> PathBuf {
    let img = dir.join(format!("{name}.img"));
    std::fs::copy(base, &img).unwrap();
    for r in requests {
        let out = run(Command::new(which("debugfs").expect("debugfs"))
            .args(["-w", "-R", r])
            .arg(&img));
        let err = String::from_utf8_lossy(&out.stderr);
        // debugfs prints its version banner on stderr and exits 0 even when a request fails.
        let failed = err.lines().skip(1).any(|l| !l.trim().is_empty());
        assert!(
            out.status.success() && !failed,
            "debugfs -w -R {r:?}: {err}"
        );
    }
    img
}

/// Run the `debugfs -w -f -` script `script` on `img` (requests that need one session).
pub fn debugfs_script(img: &Path, script: &str) {
    use std::io::Write;
    let mut child = Command::new(which("debugfs").expect("debugfs"))
        .args(["-w", "-f", "-"])
        .arg(img)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "debugfs -f: {script}");
}

/// The physical block of logical block `lblk` of inode `ino` (`debugfs bmap`).
pub fn bmap(img: &Path, ino: u32, lblk: u64) -> u64 {
    let out = run(Command::new(which("debugfs").expect("debugfs"))
        .args(["-R", &format!("bmap <{ino}> {lblk}")])
        .arg(img));
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("bmap <{ino}> {lblk}: {e}"))
}

/// The inode number of `path` in `img` (`debugfs stat`).
pub fn inode_of(img: &Path, path: &str) -> u32 {
    let out = run(Command::new(which("debugfs").expect("debugfs"))
        .args(["-R", &format!("stat {path}")])
        .arg(img));
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .skip_while(|w| *w != "Inode:")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no inode for {path}"))
}

/// `e2fsck -fn IMG`'s exit status.
pub fn e2fsck_fn(img: &Path) -> i32 {
    let out = run(Command::new(which("e2fsck").expect("e2fsck"))
        .arg("-fn")
        .arg(img));
    out.status.code().unwrap_or(-1)
}

/// Why the kernel cannot be asked here, if it cannot (not root, no mount).
pub fn kernel_unavailable() -> Option<String> {
    if !super::trees::is_root() {
        return Some("loop mounts need root".into());
    }
    if which("mount").is_none() || which("umount").is_none() {
        return Some("mount/umount missing".into());
    }
    None
}

/// The kernel's verdict on a copy of `img`: Ok when it mounts read-write (journal replay and
/// orphan cleanup included) and reads every file and directory without an error, Err with the
/// reason (the mount error, or the first read that failed). The copy is removed.
pub fn kernel_reads_all(img: &Path) -> Result<(), String> {
    let copy = img.with_extension("kernel.img");
    std::fs::copy(img, &copy).map_err(|e| e.to_string())?;
    let mnt = img.with_extension("mnt");
    std::fs::create_dir_all(&mnt).map_err(|e| e.to_string())?;
    let out = run(Command::new("mount")
        .args(["-o", "loop,rw"])
        .arg(&copy)
        .arg(&mnt));
    let result = if out.status.success() {
        let read = read_tree(&mnt);
        let _ = run(Command::new("umount").arg(&mnt));
        read
    } else {
        Err(format!(
            "mount refused: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    };
    let _ = std::fs::remove_file(&copy);
    let _ = std::fs::remove_dir(&mnt);
    result
}

fn read_tree(dir: &Path) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries {
        let e = e.map_err(|e| format!("{}: {e}", dir.display()))?;
        let p = e.path();
        let t = std::fs::symlink_metadata(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        if t.is_dir() {
            read_tree(&p)?;
        } else if t.is_file() {
            std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        } else if t.file_type().is_symlink() {
            std::fs::read_link(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        }
    }
    Ok(())
}

/// OR `bits` into the byte at `off` of `img` (a feature bit set without touching its neighbours).
pub fn or_byte(img: &Path, off: u64, bits: u8) {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(img).unwrap();
    f.seek(SeekFrom::Start(off)).unwrap();
    let mut b = [0u8];
    f.read_exact(&mut b).unwrap();
    super::images::write_at(img, off, &[b[0] | bits]);
}

/// The number after `what` in group `group`'s section of `dumpe2fs IMG` ("Inode bitmap at ").
pub fn group_location(img: &Path, group: u32, what: &str) -> u64 {
    let out = run(Command::new(which("dumpe2fs").expect("dumpe2fs")).arg(img));
    let text = String::from_utf8_lossy(&out.stdout);
    let head = format!("Group {group}:");
    text.lines()
        .skip_while(|l| !l.starts_with(&head))
        .skip(1)
        .take_while(|l| !l.starts_with("Group "))
        .find_map(|l| l.split(what).nth(1))
        .and_then(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .unwrap_or_else(|| panic!("no {what:?} in group {group} of {}", img.display()))
}

/// A number of `dumpe2fs -h IMG` ("MMP block number:").
pub fn sb_number(img: &Path, name: &str) -> u64 {
    let out = run(Command::new(which("dumpe2fs").expect("dumpe2fs"))
        .arg("-h")
        .arg(img));
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} not in dumpe2fs -h {}", img.display()))
}
