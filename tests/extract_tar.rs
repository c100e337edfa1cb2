//! `extract --tar` run without privilege on an image with every kind of file, unpacked by GNU
//! tar as root and compared with a read-only loop mount of the same image: listing (type, mode,
//! owner, size, mtime, link target), contents, xattrs (ACLs and capabilities included), hard-link
//! identity, the sparse file's allocation and device numbers; `tar -tvf` and `bsdtar -tvf` list
//! the archive without a warning.

mod common;

use common::trees::{self, every_kind_tools, find_listing, xattr_listing};
use common::{bin, have, run, which};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

/// Paths grouped by inode number (the hard-link groups of a tree), each group sorted.
fn link_groups(root: &Path, paths: &[String]) -> Vec<Vec<String>> {
    let mut by_ino: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for p in paths {
        let m = std::fs::symlink_metadata(root.join(p)).unwrap();
        if m.nlink() > 1 && !m.is_dir() {
            by_ino.entry(m.ino()).or_default().push(p.clone());
        }
    }
    let mut g: Vec<Vec<String>> = by_ino.into_values().collect();
    g.iter_mut().for_each(|v| v.sort());
    g.sort();
    g
}

#[test]
fn unprivileged_archive_unpacks_to_the_mounted_tree() {
    if let Err(why) = every_kind_tools() {
        eprintln!("SKIP: {why}");
        return;
    }
    for t in ["tar", "bsdtar", "setpriv", "getfattr", "diff"] {
        if !have(t) {
            eprintln!("SKIP: {t} missing");
            return;
        }
    }
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        t.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let tree = trees::every_kind_tree(t.path());
    let img = trees::image_of(t.path(), &tree, "every.img", &[]);
    std::fs::set_permissions(&img, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let mnt = match trees::loop_mount(&img, &t.path().join("mnt")) {
        Ok(m) => m,
        Err(why) => {
            eprintln!("SKIP: {why}");
            return;
        }
    };
    // The archive, written by nobody into a directory only nobody can write.
    let outdir = t.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    std::os::unix::fs::chown(&outdir, Some(65534), Some(65534)).unwrap();
    let archive = outdir.join("every.tar");
    let out = run(Command::new(which("setpriv").unwrap())
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(bin())
        .arg("extract")
        .arg("--tar")
        .arg(&archive)
        .arg(&img)
        .arg("--json"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["skipped_count"], 0, "{s}");
    assert_eq!(s["dropped_xattrs_count"], 0, "{s}");
    assert_eq!(s["devices"], 2, "{s}");
    assert_eq!(s["fifos"], 1, "{s}");
    assert!(
        s["notes"][0]
            .as_str()
            .unwrap()
            .contains("1 sockets not archived"),
        "{s}"
    );

    // Both listers read it without a word on stderr.
    for lister in ["tar", "bsdtar"] {
        let out = run(Command::new(which(lister).unwrap())
            .arg("-tvf")
            .arg(&archive));
        assert!(out.status.success(), "{lister}: {out:?}");
        assert!(
            out.stderr.is_empty(),
            "{lister} -tvf warned: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let x = t.path().join("x");
    std::fs::create_dir(&x).unwrap();
    let out = run(Command::new(which("tar").unwrap())
        .args(["--xattrs", "--xattrs-include=*", "--acls", "-xpf"])
        .arg(&archive)
        .arg("-C")
        .arg(&x));
    assert!(out.status.success(), "tar -x: {out:?}");
    assert!(
        out.stderr.is_empty(),
        "tar -x warned: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let want = find_listing(&mnt.dir);
    let got = find_listing(&x);
    assert_eq!(got, want);
    let diff = run(Command::new("diff")
        .args(["-r", "--no-dereference"])
        .arg(&mnt.dir)
        .arg(&x));
    let text = String::from_utf8_lossy(&diff.stdout);
    // diff -r names special files it does not compare; anything else is a difference.
    let real: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("special file while file") && !l.contains("is a fifo while"))
        .filter(|l| !l.starts_with("Only in") || !l.ends_with(": sock"))
        .collect();
    assert!(real.is_empty(), "diff -r: {real:?}");

    let paths: Vec<String> = want
        .iter()
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    let xattrs = xattr_listing(&x, &paths);
    assert_eq!(xattrs, xattr_listing(&mnt.dir, &paths));
    // What the comparison covers is there: the setuid binary's capability, ACLs (access and
    // default), user/trusted/security xattrs.
    let of = |p: &str| {
        xattrs
            .iter()
            .find(|l| l.starts_with(&format!("{p}: ")))
            .unwrap()
    };
    assert!(
        of("./setuidbin").contains("security.capability=0x"),
        "{xattrs:?}"
    );
    assert!(
        of("./aclfile").contains("system.posix_acl_access=0x"),
        "{xattrs:?}"
    );
    assert!(
        of("./acldir").contains("system.posix_acl_default=0x"),
        "{xattrs:?}"
    );
    for n in ["user.foo", "trusted.t", "security.s"] {
        assert!(of("./xat").contains(&format!("{n}=0x")), "{xattrs:?}");
    }
    // ... and the setuid mode, the non-ASCII and 255-byte names, the long symlink.
    let line = |p: &str| {
        got.iter()
            .find(|l| l.starts_with(&format!("{p} ")))
            .cloned()
    };
    assert!(
        line("./setuidbin").is_some_and(|l| l.contains(" f 4755 ")),
        "{got:?}"
    );
    assert!(line("./ünïcødé-名前").is_some(), "{got:?}");
    assert!(line(&format!("./{}", "n".repeat(255))).is_some(), "{got:?}");
    assert!(
        line("./longlink").is_some_and(|l| l.ends_with("a/target")),
        "{got:?}"
    );
    assert_eq!(link_groups(&x, &paths), link_groups(&mnt.dir, &paths));
    assert_eq!(link_groups(&x, &paths).len(), 1);
    let alloc = |root: &Path| std::fs::metadata(root.join("sparse")).unwrap().blocks();
    assert_eq!(alloc(&x), alloc(&mnt.dir));
    assert!(
        alloc(&x) * 512 < 1 << 20,
        "sparse file allocated {}",
        alloc(&x) * 512
    );
    for dev in ["cdev", "bdev"] {
        let rdev = |root: &Path| std::fs::symlink_metadata(root.join(dev)).unwrap().rdev();
        assert_eq!(rdev(&x), rdev(&mnt.dir), "{dev}");
    }
    // Owners come back as numbers (the image's names exist on no host).
    let plain = std::fs::metadata(x.join("plain")).unwrap();
    assert_eq!((plain.uid(), plain.gid()), (1234, 5678));
    // The names from the image's /etc/passwd and /etc/group are in the archive.
    let out = run(Command::new(which("tar").unwrap())
        .arg("-tvf")
        .arg(&archive));
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(listing.contains("e4tuser/e4tstaff"), "{listing}");
}

#[test]
fn archive_to_stdout_of_one_file_and_a_subtree() {
    if !have("mke2fs") || !have("tar") {
        eprintln!("SKIP: mke2fs or tar missing");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("src");
    std::fs::create_dir_all(tree.join("d/e")).unwrap();
    std::fs::write(tree.join("d/e/f"), "data\n").unwrap();
    std::fs::write(tree.join("top"), "top\n").unwrap();
    let img = trees::image_of(t.path(), &tree, "small.img", &[]);
    // One file, to stdout: one member under its base name; the summary on stderr.
    let out = run(Command::new(bin())
        .args(["extract", "--tar", "-"])
        .arg(&img)
        .arg("/d/e/f"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("Extracted 1 files"));
    let one = t.path().join("one.tar");
    std::fs::write(&one, &out.stdout).unwrap();
    let list = run(Command::new(which("tar").unwrap()).arg("-tf").arg(&one));
    assert_eq!(String::from_utf8_lossy(&list.stdout), "f\n", "{list:?}");
    // --format tar with DEST naming the archive: a subtree as ./ and its contents.
    let archive = t.path().join("d.tar");
    let out = run(Command::new(bin())
        .args(["extract", "--format", "tar"])
        .arg(&img)
        .arg("/d")
        .arg(&archive));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = run(Command::new(which("tar").unwrap()).arg("-tf").arg(&archive));
    let names = String::from_utf8_lossy(&out.stdout);
    assert_eq!(names, "./\ne/\ne/f\n");
}

/// Overwrite the name `from` with `to` (same length) in the directory block of `dir` in `img`.
fn rename_in_dir_block(img: &Path, dir: &str, from: &[u8], to: &[u8]) {
    assert_eq!(from.len(), to.len());
    let out = run(Command::new(which("debugfs").unwrap())
        .args(["-R", &format!("blocks {dir}")])
        .arg(img));
    let block: u64 = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let bytes = std::fs::read(img).unwrap();
    let start = (block * 4096) as usize;
    let at = bytes[start..start + 4096]
        .windows(from.len())
        .position(|w| w == from)
        .unwrap_or_else(|| panic!("{from:?} not in the block of {dir}"));
    common::images::write_at(img, (start + at) as u64, to);
}

#[test]
fn hostile_names_never_reach_the_archive() {
    if !have("mke2fs") || !have("debugfs") || !have("tar") {
        eprintln!("SKIP: mke2fs, debugfs or tar missing");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("src");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    // Names of the lengths of the hostile names they become below.
    for (name, body) in [
        ("HH", "dotdot\n"),
        ("H", "dot\n"),
        ("slash", "slash\n"),
        ("ABS_ETC_", "absolute\n"),
        ("UPUPUPx", "climb\n"),
        ("NUL", "nul\n"),
        ("keep", "kept\n"),
        ("sub/inner", "inner\n"),
    ] {
        std::fs::write(tree.join(name), body).unwrap();
    }
    std::fs::hard_link(tree.join("keep"), tree.join("sub/keep2")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", tree.join("abslink")).unwrap();
    std::os::unix::fs::symlink("../../../../etc/shadow", tree.join("uplink")).unwrap();
    // No directory checksums, so the edited blocks read as they are.
    let img = trees::image_of(t.path(), &tree, "hostile.img", &["-O", "^metadata_csum"]);
    for (from, to) in [
        (&b"HH"[..], &b".."[..]),
        (b"H\0", b".\0"),
        (b"slash", b"s/l/a"),
        (b"ABS_ETC_", b"/etc/pwn"),
        (b"UPUPUPx", b"../../x"),
        (b"NUL", b"N\0L"),
    ] {
        rename_in_dir_block(&img, "/", from, to);
    }
    rename_in_dir_block(&img, "/sub", b"inner", b"/../x");

    // What extract to a directory skips, and its exit status.
    let dest = t.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    let plain = run(Command::new(bin())
        .args(["extract", "--json", "--no-progress"])
        .arg(&img)
        .arg("/")
        .arg(&dest));
    let plain_summary: serde_json::Value = serde_json::from_slice(&plain.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&plain.stderr)));
    let archive = t.path().join("hostile.tar");
    let out = run(Command::new(bin())
        .args(["extract", "--json", "--no-progress", "--tar"])
        .arg(&archive)
        .arg(&img));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(
        out.status.code(),
        plain.status.code(),
        "{s}\n{plain_summary}"
    );
    assert_eq!(out.status.code(), Some(4), "{s}");
    // The names with a '/' or a NUL inside are skipped and listed, as extract lists them.
    assert_eq!(s["skipped_count"], 5, "{s}");
    assert_eq!(s["skipped_count"], plain_summary["skipped_count"]);
    assert_eq!(s["skipped_by_reason"], plain_summary["skipped_by_reason"]);
    let reasons: Vec<&str> = s["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons.iter().all(|r| r.contains("single path component")),
        "{reasons:?}"
    );

    // Every member name (and hard-link name) is relative, with no '..' and no empty component.
    let mut names = Vec::new();
    let mut symlinks = Vec::new();
    let mut ar = tar::Archive::new(std::fs::File::open(&archive).unwrap());
    for e in ar.entries().unwrap() {
        let e = e.unwrap();
        let name = e.path_bytes().into_owned();
        if e.header().entry_type() == tar::EntryType::Symlink {
            symlinks.push(e.link_name_bytes().unwrap().into_owned());
        }
        if e.header().entry_type() == tar::EntryType::Link {
            names.push(e.link_name_bytes().unwrap().into_owned());
        }
        names.push(name);
    }
    for n in &names {
        let text = String::from_utf8_lossy(n);
        assert!(!n.starts_with(b"/") && !n.contains(&0), "member {text:?}");
        let trimmed = text.strip_suffix('/').unwrap_or(&text);
        for c in trimmed.split('/') {
            assert!(
                c != ".." && !c.is_empty() && (c != "." || trimmed == "."),
                "member {text:?}"
            );
        }
    }
    let names: Vec<String> = names
        .iter()
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    for kept in ["keep", "sub/inner", "sub/keep2", "abslink", "uplink"] {
        // "sub/inner" became "/../x": skipped; the others stay.
        assert_eq!(
            names.iter().any(|n| n == kept),
            kept != "sub/inner",
            "{kept}: {names:?}"
        );
    }
    // Symlink targets are data, kept as they are (what a symlink points to is the unpacker's
    // business: GNU tar and bsdtar refuse to write through them).
    symlinks.sort();
    assert_eq!(
        symlinks,
        [b"../../../../etc/shadow".to_vec(), b"/etc/passwd".to_vec()]
    );
    // GNU tar unpacks it without complaint, and only the safe names land.
    let x = t.path().join("x");
    std::fs::create_dir(&x).unwrap();
    let out = run(Command::new(which("tar").unwrap())
        .arg("-xf")
        .arg(&archive)
        .arg("-C")
        .arg(&x));
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "tar -x: {out:?}"
    );
    let mut top: Vec<String> = std::fs::read_dir(&x)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(
        top,
        ["abslink", "keep", "lost+found", "sub", "uplink"],
        "{top:?}"
    );
}
