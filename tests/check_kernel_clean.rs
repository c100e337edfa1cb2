//! Clean images written by the kernel: mke2fs images of several layouts, loop-mounted and filled
//! (many directories, a directory large enough to be indexed, hard links, 255-byte names, fast
//! and slow symlinks, device nodes, small and large xattrs — values in EA inodes with
//! ea_inode —, sparse and extended files, deletions), unmounted; `e2fsck -fn` finds them clean
//! and `check` must report nothing. Skipped, with the reason printed, when loop mounts fail.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{have, mkfs};

/// (name, mke2fs arguments, size in MiB)
const LAYOUTS: &[(&str, &[&str], u64)] = &[
    ("ext4", &["-t", "ext4"], 64),
    (
        "ext4_1k_128",
        &["-t", "ext4", "-b", "1024", "-I", "128"],
        64,
    ),
    ("ext4_ea_inode", &["-t", "ext4", "-O", "ea_inode"], 64),
    ("ext4_inline", &["-t", "ext4", "-O", "inline_data"], 64),
    (
        "ext4_bigalloc",
        &["-t", "ext4", "-O", "bigalloc", "-C", "16384"],
        128,
    ),
    ("ext3", &["-t", "ext3", "-b", "2048"], 64),
    ("ext2", &["-t", "ext2", "-b", "1024"], 64),
];

struct Mount {
    dir: PathBuf,
    mounted: bool,
}

impl Mount {
    fn new(img: &Path, dir: PathBuf) -> Result<Mount, String> {
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-o", "loop"])
            .arg(img)
            .arg(&dir)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(Mount { dir, mounted: true })
    }
    fn unmount(&mut self) {
        if self.mounted {
            let st = Command::new("umount").arg(&self.dir).status().unwrap();
            assert!(st.success(), "umount {}", self.dir.display());
            self.mounted = false;
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(&self.dir).status();
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn setfattr(path: &Path, name: &str, value: &str) {
    let out = Command::new("setfattr")
        .args(["-n", name, "-v", value])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "setfattr {name} {}: {out:?}",
        path.display()
    );
}

/// Fill the mounted filesystem the way ordinary use does.
fn populate(root: &Path, layout: &str) {
    use std::fs;
    use std::os::unix::fs::symlink;
    for i in 0..60 {
        let d = root.join(format!("dir{i:03}/sub{}", i % 7));
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("small"), format!("file {i}\n")).unwrap();
    }
    // A directory large enough for an htree (several blocks of entries).
    let big = root.join("big");
    fs::create_dir(&big).unwrap();
    for i in 0..600 {
        fs::write(big.join(format!("entry-with-a-longish-name-{i:05}")), b"x").unwrap();
    }
    // Deletions: holes in directory blocks, freed inodes.
    for i in (0..600).step_by(3) {
        fs::remove_file(big.join(format!("entry-with-a-longish-name-{i:05}"))).unwrap();
    }
    // Hard links, across directories.
    let target = root.join("dir000/sub0/small");
    for i in 1..5 {
        fs::hard_link(&target, root.join(format!("dir00{i}/link{i}"))).unwrap();
    }
    // The longest names.
    fs::write(root.join("n".repeat(255)), b"long name\n").unwrap();
    fs::create_dir(root.join("d".repeat(255))).unwrap();
    // Symlinks: fast (in i_block) and slow (a block).
    symlink("dir000/sub0/small", root.join("fast-link")).unwrap();
    symlink("t".repeat(200), root.join("slow-link")).unwrap();
    // A device node and a FIFO.
    for (name, kind) in [("null-dev", "c"), ("fifo", "p")] {
        let mut c = Command::new("mknod");
        c.arg(root.join(name)).arg(kind);
        if kind == "c" {
            c.args(["1", "3"]);
        }
        assert!(c.status().unwrap().success(), "mknod {name}");
    }
    // Files of several sizes: sparse, extended, a few MiB.
    let f = fs::File::create(root.join("sparse")).unwrap();
    f.set_len(40 << 20).unwrap();
    let data: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
    fs::write(root.join("data"), &data).unwrap();
    // Extended attributes: small ones in the inode, more in a block, and a big value (an EA
    // inode with ea_inode).
    let x = root.join("xattrs");
    fs::write(&x, b"x").unwrap();
    setfattr(&x, "user.small", "v");
    for i in 0..6 {
        setfattr(&x, &format!("user.attr{i:02}"), &"w".repeat(100));
    }
    if layout == "ext4_ea_inode" {
        setfattr(&root.join("data"), "user.huge", &"h".repeat(9000));
        // The same value on two files: one shared EA inode or two, as the kernel decides.
        setfattr(&root.join("fast-link"), "trusted.dup", &"d".repeat(7000));
        setfattr(&target, "user.dup", &"d".repeat(7000));
    }
    // Shared xattr blocks: identical sets on several files.
    for i in 0..4 {
        let p = root.join(format!("dir00{i}/shared"));
        fs::write(&p, b"s").unwrap();
        for j in 0..5 {
            setfattr(&p, &format!("user.same{j}"), &"s".repeat(100));
        }
    }
}

#[test]
fn kernel_written_images_are_clean() {
    if !have("mke2fs") || !have("e2fsck") || !have("setfattr") || !have("mount") {
        eprintln!("skipped: needs mke2fs, e2fsck, setfattr and mount");
        return;
    }
    let tmp = std::env::temp_dir().join(format!("e4i-kclean-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut checked = 0;
    for &(name, args, mib) in LAYOUTS {
        let img = mkfs(&tmp, &format!("{name}.img"), mib << 20, args);
        let mnt = tmp.join(format!("mnt-{name}"));
        let mut m = match Mount::new(&img, mnt) {
            Ok(m) => m,
            Err(why) => {
                eprintln!("skipped {name}: loop mount failed: {why}");
                continue;
            }
        };
        populate(&m.dir, name);
        m.unmount();
        let e2 = Command::new("e2fsck")
            .arg("-fn")
            .arg(&img)
            .output()
            .unwrap();
        assert_eq!(
            e2.status.code(),
            Some(0),
            "{name}: e2fsck -fn is not clean:\n{}",
            String::from_utf8_lossy(&e2.stdout)
        );
        let out = Command::new(common::bin())
            .arg("check")
            .arg(&img)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: check reports:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("no findings"), "{name}: {text}");
        checked += 1;
        let _ = std::fs::remove_file(&img);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    if checked == 0 {
        eprintln!("skipped: no layout could be loop-mounted");
    }
}
