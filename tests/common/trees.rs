//! Source trees with every kind of file, images built from them with `mke2fs -d`, read-only loop
//! mounts, and a comparable listing of a tree (for `extract --tar` and `diff`).

pub use super::is_root;
use super::{have, run, which};
use std::path::{Path, PathBuf};
use std::process::Command;

fn sh(cmd: &str, args: &[&str]) {
    let tool = which(cmd).unwrap_or_else(|| PathBuf::from(cmd));
    let out = run(Command::new(tool).args(args));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The tools [`every_kind_tree`] needs, or the first one missing.
pub fn every_kind_tools() -> Result<(), String> {
    for t in ["mke2fs", "setfacl", "setfattr", "setcap", "mknod", "mkfifo"] {
        if !have(t) {
            return Err(format!("{t} missing"));
        }
    }
    if !is_root() {
        return Err("needs root (device nodes, trusted.* xattrs, capabilities)".into());
    }
    Ok(())
}

/// A tree with every kind of file (root only): a setuid binary with a file capability, POSIX
/// access and default ACLs, user/trusted/security xattrs, hard links across directories, a 50 MB
/// sparse file, character and block devices, a FIFO, a socket, long and short symlinks, non-ASCII
/// and 255-byte names, owners named by the tree's own /etc/passwd and /etc/group (names no host
/// has, so that tar keeps the numbers).
pub fn every_kind_tree(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let t = dir.join("tree");
    std::fs::create_dir_all(t.join("etc")).unwrap();
    let p = |n: &str| t.join(n).to_str().unwrap().to_string();
    std::fs::write(
        t.join("etc/passwd"),
        "root:x:0:0::/root:/bin/sh\ne4tuser:x:1234:1234::/:/bin/sh\ne4tbob:x:42:42::/:/bin/sh\n",
    )
    .unwrap();
    std::fs::write(
        t.join("etc/group"),
        "root:x:0:\ne4tstaff:x:5678:\ne4tgg:x:43:\n",
    )
    .unwrap();
    std::fs::write(t.join("plain"), "hello\n").unwrap();
    std::os::unix::fs::chown(t.join("plain"), Some(1234), Some(5678)).unwrap();
    std::fs::write(t.join("setuidbin"), vec![0x7fu8; 5000]).unwrap();
    std::fs::set_permissions(t.join("setuidbin"), PermissionsExt::from_mode(0o4755)).unwrap();
    sh("setcap", &["cap_net_raw+ep", &p("setuidbin")]);
    std::fs::write(t.join("aclfile"), "acl\n").unwrap();
    sh("setfacl", &["-m", "u:1000:r,g:100:rw", &p("aclfile")]);
    std::fs::create_dir(t.join("acldir")).unwrap();
    std::fs::set_permissions(t.join("acldir"), PermissionsExt::from_mode(0o2750)).unwrap();
    sh("setfacl", &["-d", "-m", "u:1000:rx", &p("acldir")]);
    std::fs::write(t.join("xat"), "x\n").unwrap();
    sh("setfattr", &["-n", "user.foo", "-v", "bar", &p("xat")]);
    sh("setfattr", &["-n", "trusted.t", "-v", "tv", &p("xat")]);
    sh("setfattr", &["-n", "security.s", "-v", "sv", &p("xat")]);
    std::fs::write(t.join("hl1"), "linked\n").unwrap();
    std::fs::hard_link(t.join("hl1"), t.join("hl2")).unwrap();
    std::fs::create_dir(t.join("sub")).unwrap();
    std::fs::set_permissions(t.join("sub"), PermissionsExt::from_mode(0o1777)).unwrap();
    std::fs::hard_link(t.join("hl1"), t.join("sub/hl3")).unwrap();
    let sparse = std::fs::File::create(t.join("sparse")).unwrap();
    sparse.set_len(50_000_000).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&sparse, b"middle", 20_000_000).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&sparse, b"end", 30_000_000).unwrap();
    sh("mknod", &[&p("cdev"), "c", "1", "3"]);
    sh("mknod", &[&p("bdev"), "b", "7", "0"]);
    sh("mkfifo", &[&p("fifo")]);
    let long = format!("{}target", "a/".repeat(1000));
    std::os::unix::fs::symlink(&long, t.join("longlink")).unwrap();
    std::os::unix::fs::symlink("plain", t.join("shortlink")).unwrap();
    std::os::unix::fs::lchown(t.join("shortlink"), Some(42), Some(43)).unwrap();
    std::fs::write(t.join("ünïcødé-名前"), "u\n").unwrap();
    std::fs::write(t.join("n".repeat(255)), "").unwrap();
    let deep = t.join("d".repeat(200)).join("e".repeat(200));
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("f"), "deep\n").unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(t.join("sock")).unwrap();
    t
}

/// `mke2fs -d TREE` into a 200 MB ext4 image with 256-byte inodes and 4 KiB blocks.
pub fn image_of(dir: &Path, tree: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "-t",
        "ext4",
        "-b",
        "4096",
        "-I",
        "256",
        "-d",
        tree.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    super::mkfs(dir, name, 200 << 20, &args)
}

/// A read-only loop mount, unmounted when dropped.
pub struct Mount {
    /// Where it is mounted.
    pub dir: PathBuf,
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

/// Mount `img` read-only at `dir`, or say why not.
pub fn loop_mount(img: &Path, dir: &Path) -> Result<Mount, String> {
    mount_with(img, dir, "ro,loop,noload")
}

/// Mount `img` read-write at `dir` (to build a test tree with the kernel: flags, project IDs),
/// or say why not. Unmounted when dropped.
pub fn loop_mount_rw(img: &Path, dir: &Path) -> Result<Mount, String> {
    mount_with(img, dir, "loop")
}

fn mount_with(img: &Path, dir: &Path, opts: &str) -> Result<Mount, String> {
    if !is_root() {
        return Err("loop mounts need root".into());
    }
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let out = run(Command::new("mount").args(["-o", opts]).arg(img).arg(dir));
    if !out.status.success() {
        return Err(format!(
            "cannot loop-mount: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(Mount {
        dir: dir.to_path_buf(),
    })
}

/// `find -printf '%p %y %m %U %G %s %T@ %l'` of a tree, sorted; directory sizes and sockets
/// left out (no archive or copy keeps them).
pub fn find_listing(root: &Path) -> Vec<String> {
    let out = run(Command::new("find")
        .arg(".")
        .args(["-printf", "%p\\t%y %m %U %G %s %T@ %l\\n"])
        .current_dir(root));
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (p, rest) = l.split_once('\t')?;
            let f: Vec<&str> = rest.splitn(7, ' ').collect();
            match f[0] {
                "s" => None,
                "d" => Some(format!(
                    "{p} d {} {} {} - {} {}",
                    f[1], f[2], f[3], f[5], f[6]
                )),
                _ => Some(format!("{p} {rest}")),
            }
        })
        .collect();
    v.sort();
    v
}

/// `getfattr -d -m - -e hex` of every path of `paths` under `root`, one block per path.
pub fn xattr_listing(root: &Path, paths: &[String]) -> Vec<String> {
    paths
        .iter()
        .map(|p| {
            let out = run(Command::new("getfattr")
                .args(["-h", "-d", "-m", "-", "-e", "hex", "--absolute-names"])
                .arg(root.join(p)));
            let text = String::from_utf8_lossy(&out.stdout);
            let attrs: Vec<&str> = text.lines().filter(|l| l.contains('=')).collect();
            format!("{p}: {}", attrs.join(" "))
        })
        .collect()
}
