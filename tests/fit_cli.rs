//! `e4inspect fit` end to end: the JSON contract, exit codes, and --from-image against
//! --from-dir on images populated with `mke2fs -d` from a generated tree.

use serde_json::Value;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_e4inspect"))
}

fn fit(args: &[&str]) -> Output {
    bin().arg("fit").args(args).output().expect("run e4inspect")
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(4),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

#[test]
fn json_contract_for_explicit_attributes() {
    let out = fit(&[
        "--profile",
        "selinux,capabilities",
        "--inode-size",
        "256,512",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    let r = v["results"].as_array().unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["inode_size"], 256);
    assert_eq!(r[0]["extra_isize"], 32);
    assert_eq!(r[0]["capacity_bytes"], 88);
    assert_eq!(r[0]["free_bytes"], 32);
    let p = r[0]["placements"].as_array().unwrap();
    assert_eq!(p[0]["name"], "security.selinux");
    assert_eq!(p[0]["value_size"], 31);
    assert_eq!(p[0]["location"], "inode");
    assert_eq!(p[1]["name"], "security.capability");
    assert_eq!(p[1]["location"], "block");
    assert_eq!(r[1]["inode_size"], 512);
    assert_eq!(r[1]["free_bytes"], 344 - 104);
    for x in r[1]["placements"].as_array().unwrap() {
        assert_eq!(x["location"], "inode");
    }
}

#[test]
fn xattr_from_file_size_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("label");
    std::fs::write(&f, vec![b'x'; 37]).unwrap();
    let arg = format!("security.selinux=@{}", f.display());
    let v = json(&fit(&["--xattr", &arg, "--inode-size", "256", "--json"]));
    assert_eq!(v["results"][0]["placements"][0]["value_size"], 37);
    // 24 + 40 = 64 <= 88
    assert_eq!(v["results"][0]["free_bytes"], 24);

    // Cannot be stored anywhere: exit 4 and location none.
    let out = fit(&[
        "--xattr",
        "user.a=900",
        "--xattr",
        "user.b=900",
        "--block-size",
        "1024",
        "--inode-size",
        "256",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(
        json(&out)["results"][0]["placements"][1]["location"],
        "none"
    );
    // The same with ea_inode: both go to EA inodes.
    let out = fit(&[
        "--xattr",
        "user.a=900",
        "--xattr",
        "user.b=900",
        "--block-size",
        "1024",
        "--inode-size",
        "256",
        "--ea-inode",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json(&out)["results"][0]["placements"][1]["location"],
        "ea_inode"
    );

    // Usage errors: 16; operational errors: 8, one line on stderr.
    assert_eq!(fit(&["--no-such-flag"]).status.code(), Some(16));
    assert_eq!(fit(&["--profile", "nope"]).status.code(), Some(16));
    assert_eq!(
        fit(&["--xattr", "user.a=12", "--inode-size", "300"])
            .status
            .code(),
        Some(16)
    );
    let out = fit(&["--from-image", "/nonexistent/image.img"]);
    assert_eq!(out.status.code(), Some(8));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

#[test]
fn list_profiles() {
    let v = json(&fit(&["--list-profiles", "--json"]));
    let names: Vec<&str> = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for want in [
        "selinux",
        "posix-acl",
        "posix-acl-default",
        "capabilities",
        "ima",
        "evm",
        "samba",
        "lustre-mdt",
        "lustre-ost",
        "overlayfs",
        "macos",
    ] {
        assert!(names.contains(&want), "{want} missing");
    }
    for p in v["profiles"].as_array().unwrap() {
        for a in p["attrs"].as_array().unwrap() {
            assert!(!a["source"].as_str().unwrap().is_empty());
        }
    }
    let text = fit(&["--list-profiles"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("user.org.netatalk.Metadata"));
}

fn lset(path: &Path, name: &str, value: &[u8]) -> std::io::Result<()> {
    let p = CString::new(path.as_os_str().as_bytes()).unwrap();
    let n = CString::new(name).unwrap();
    // SAFETY: valid C strings, buffer of value.len() bytes.
    let rc = unsafe {
        libc::lsetxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A POSIX ACL in the VFS form setxattr takes: user::rw-, user:UID:r--, group::r--, mask::r--,
/// other::---. On disk (ext4 compact form) it is 28 bytes.
fn vfs_acl(uid: u32) -> Vec<u8> {
    let mut v = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in [
        (1u16, 6u16, u32::MAX),
        (2, 4, uid),
        (4, 4, u32::MAX),
        (0x10, 4, u32::MAX),
        (0x20, 0, u32::MAX),
    ] {
        v.extend_from_slice(&tag.to_le_bytes());
        v.extend_from_slice(&perm.to_le_bytes());
        v.extend_from_slice(&id.to_le_bytes());
    }
    v
}

#[test]
fn from_image_agrees_with_from_dir_and_the_generator() {
    if Command::new("mke2fs").arg("-V").output().is_err() {
        eprintln!("SKIP from_image_agrees_with_from_dir_and_the_generator: mke2fs not found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    // Deterministic generator: sizes and names cycle through a fixed pattern.
    let sizes = [0usize, 3, 20, 31, 44, 60, 100, 200, 400, 900];
    let mut with_xattrs = 0u64;
    let mut total_attrs = 0u64;
    for i in 0..200usize {
        let p = tree.join(format!("f{i:03}"));
        std::fs::write(&p, vec![b'd'; i % 7 * 100]).unwrap();
        let n = i % 5;
        for k in 0..n {
            let name = format!("user.{}{}", "k".repeat(1 + (i + k) % 23), k);
            let v = vec![(i + k) as u8; sizes[(i * 3 + k) % sizes.len()]];
            if let Err(e) = lset(&p, &name, &v) {
                eprintln!("SKIP from_image_agrees_with_from_dir_and_the_generator: setxattr: {e}");
                return;
            }
        }
        let mut acl = false;
        if i % 11 == 0 && lset(&p, "system.posix_acl_access", &vfs_acl(1000 + i as u32)).is_ok() {
            acl = true;
        }
        if n > 0 || acl {
            with_xattrs += 1;
        }
        total_attrs += n as u64 + acl as u64;
    }
    let sub = tree.join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::os::unix::fs::symlink("../f001", sub.join("link")).unwrap();

    let from_dir = json(&fit(&[
        "--from-dir",
        tree.to_str().unwrap(),
        "--inode-size",
        "128,256,512,1024",
        "--json",
    ]));
    assert_eq!(from_dir["source"]["inodes_with_xattrs"], with_xattrs);

    for inode_size in ["128", "256", "512", "1024"] {
        let img = dir.path().join(format!("i{inode_size}.img"));
        std::fs::File::create(&img)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let st = Command::new("mke2fs")
            .env("E2FSPROGS_FAKE_TIME", "1700000000")
            .args(["-q", "-F", "-t", "ext4", "-b", "4096", "-I", inode_size])
            .args(["-U", "5a1e5a1e-0000-4000-8000-00000000f17e", "-d"])
            .arg(&tree)
            .arg(&img)
            .status()
            .unwrap();
        assert!(st.success());
        let v = json(&fit(&[
            "--from-image",
            img.to_str().unwrap(),
            "--inode-size",
            "128,256,512,1024",
            "--json",
        ]));
        let src = &v["source"];
        assert_eq!(src["inodes_with_xattrs"], with_xattrs, "I {inode_size}");
        assert_eq!(src["unreadable"], 0);
        // The model reproduces where mke2fs -d put every attribute.
        assert_eq!(src["model_agrees"], with_xattrs, "I {inode_size}");
        // Same per-size figures as the live tree (ACL sizes converted to the on-disk form).
        for (a, b) in v["results"]
            .as_array()
            .unwrap()
            .iter()
            .zip(from_dir["results"].as_array().unwrap())
        {
            assert_eq!(a["inode_size"], b["inode_size"]);
            let (ta, tb) = (&a["tree"], &b["tree"]);
            assert_eq!(ta["inodes"], tb["inodes"], "I {inode_size}");
            assert_eq!(ta["all_in_inode"], tb["all_in_inode"], "I {inode_size}");
            let attrs = |t: &Value| {
                ["attrs_inode", "attrs_block", "attrs_ea_inode", "attrs_none"]
                    .iter()
                    .map(|k| t[k].as_u64().unwrap())
                    .sum::<u64>()
            };
            assert_eq!(attrs(ta), total_attrs);
            // Counters that do not depend on the order the attributes are listed in (the image
            // gives on-disk order, the tree the host's listxattr order; which attribute of an
            // overfull set stays in-inode, and the bytes left, depend on that order).
            for k in [
                "inodes",
                "all_in_inode",
                "spill_to_block",
                "use_ea_inode",
                "not_stored",
            ] {
                assert_eq!(ta[k], tb[k], "I {inode_size}: {k}");
            }
            assert_eq!(attrs(tb), total_attrs);
        }
        // The image's own inode size is the reference for block I/O saved.
        assert_eq!(
            src["reference_inode_size"],
            inode_size.parse::<u64>().unwrap()
        );
    }
}

/// `fit --from-image` and `xattrs` count the scanned inodes one way: every in-use inode (by the
/// inode bitmap) of the walked tables, reserved inodes included; on a clean image that is the
/// superblock's inode count less its free inodes, as dumpe2fs reports them.
#[test]
fn scanned_inodes_are_counted_alike_by_fit_and_xattrs() {
    let img = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example.img");
    let fit_doc = json(&fit(&["--from-image", img, "--json"]));
    let out = bin()
        .args(["xattrs", "--json", "--no-progress", img])
        .output()
        .expect("run e4inspect");
    let xattrs_doc = json(&out);
    let scanned = xattrs_doc["inodes_scanned"]
        .as_u64()
        .expect("inodes_scanned");
    assert_eq!(fit_doc["source"]["inodes_scanned"].as_u64(), Some(scanned));
    let Ok(d) = Command::new("dumpe2fs").args(["-h", img]).output() else {
        println!("SKIP: no dumpe2fs to compare with the superblock's counts");
        return;
    };
    let text = String::from_utf8_lossy(&d.stdout);
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("dumpe2fs -h: no {name}"))
    };
    assert_eq!(scanned, field("Inode count:") - field("Free inodes:"));
}
