//! `advise --from-dir`: the sampled tree's xattr sets drive the inode size at the requested share,
//! and its bytes per inode drive the inode ratio.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_e4inspect");

fn set_xattr(path: &std::path::Path, name: &str, len: usize) -> bool {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let p = CString::new(path.as_os_str().as_bytes()).unwrap();
    let n = CString::new(name).unwrap();
    let v = vec![b'x'; len];
    // SAFETY: valid NUL-terminated strings and a buffer of `len` bytes.
    unsafe { libc::setxattr(p.as_ptr(), n.as_ptr(), v.as_ptr().cast(), v.len(), 0) == 0 }
}

#[test]
fn sampled_tree_decides_inode_size_and_ratio() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    // 40 files with one 30-byte value (fits 256), 10 with an extra 200-byte value (needs 512).
    for i in 0..50 {
        let f = root.join(format!("f{i}"));
        std::fs::write(&f, vec![0u8; 200_000]).unwrap();
        if !set_xattr(&f, "user.DOSATTRIB", 30) {
            println!("SKIP: user xattrs not supported on {}", root.display());
            return;
        }
        if i < 10 {
            assert!(set_xattr(&f, "user.big", 200));
        }
    }
    let run = |share: &str| -> serde_json::Value {
        let out = Command::new(BIN)
            .args(["advise", "--size", "100G", "--from-dir"])
            .arg(&root)
            .args(["--fit-share", share, "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let row = |v: &serde_json::Value, s: u64| -> f64 {
        v["fit"]["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["inode_size"] == s)
            .unwrap()["share_all_in_inode"]
            .as_f64()
            .unwrap()
    };
    let all = run("100");
    assert_eq!(all["layout"]["inode_size"], 512);
    assert_eq!(all["fit"]["inodes"], 50);
    assert!((row(&all, 256) - 0.8).abs() < 1e-9, "{}", row(&all, 256));
    let most = run("80");
    assert_eq!(most["layout"]["inode_size"], 256);
    // 51 inodes (root dir + 50 files) holding 10 MB: about 196 KiB per inode, so the ratio is
    // 196 KiB / 1.25 rounded down to a power of two = 128 KiB.
    assert_eq!(most["layout"]["inode_ratio"], 131072);
}
