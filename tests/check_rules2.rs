//! The rules of the second rule batch (encryption contexts and policies, in-inode xattr hashes,
//! EA-inode hashes, reference counts and charged blocks, inodes in bad blocks, SipHash htrees),
//! each on a mke2fs image damaged with `debugfs -w` and compared with `e2fsck -fn`'s verdict;
//! and the flag/feature mismatches e2fsck 1.47 accepts, which `check` accepts too.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{debugfs_text, e2fsck_verdict, have, write_at};

/// A v1 encryption context (28 bytes): version, modes, flags, key descriptor, nonce.
fn context_v1(key: u8) -> Vec<u8> {
    let mut c = vec![1, 1, 4, 0];
    c.extend([key; 8]);
    c.extend(b"0123456789abcdef");
    c
}

struct Fixture {
    dir: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Option<Fixture> {
        if !have("mke2fs") || !have("debugfs") || !have("e2fsck") {
            eprintln!("skipped: e2fsprogs not installed");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("e4i-rules2-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let src = dir.join("src");
        std::fs::create_dir_all(src.join("d")).unwrap();
        std::fs::write(src.join("f"), b"hello\n").unwrap();
        std::fs::write(src.join("d/a-rather-long-name-1"), b"one\n").unwrap();
        std::fs::write(src.join("d/a-rather-long-name-2"), b"two\n").unwrap();
        Some(Fixture { dir })
    }

    /// A 4 KiB-block image of the fixture tree made with `mke2fs ARGS -d`.
    fn image(&self, name: &str, args: &str) -> PathBuf {
        let img = self.dir.join(format!("{name}.img"));
        let _ = std::fs::remove_file(&img);
        let out = Command::new("mke2fs")
            .env("E2FSPROGS_FAKE_TIME", "1700000000")
            .env("MKE2FS_CONFIG", "/etc/mke2fs.conf")
            .args([
                "-q",
                "-F",
                "-b",
                "4096",
                "-U",
                "11111111-2222-3333-4444-555555555555",
            ])
            .args(args.split_whitespace())
            .arg("-d")
            .arg(self.dir.join("src"))
            .arg(&img)
            .arg("8M")
            .output()
            .unwrap();
        assert!(out.status.success(), "mke2fs {args}: {out:?}");
        img
    }

    fn file(&self, name: &str, data: &[u8]) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::write(&p, data).unwrap();
        p
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Run debugfs -w with one request per line.
fn debugfs(img: &Path, requests: &[String]) {
    let script = img.with_extension("cmds");
    std::fs::write(&script, requests.join("\n") + "\n").unwrap();
    let out = Command::new("debugfs")
        .arg("-w")
        .arg("-f")
        .arg(&script)
        .arg(img)
        .output()
        .unwrap();
    assert!(out.status.success(), "debugfs {requests:?}: {out:?}");
}

/// `check --json`: exit code and the rule of every finding.
fn check(img: &Path) -> (i32, Vec<String>) {
    let (rc, rules, _) = common::check_rules(img);
    (rc, rules)
}

/// Both e2fsck and check find the image clean.
fn assert_clean(img: &Path, what: &str) {
    let (e2, text) = e2fsck_verdict(img);
    assert!(!e2, "{what}: e2fsck complains:\n{text}");
    let (code, rules) = check(img);
    assert_eq!((code, rules.len()), (0, 0), "{what}: check finds {rules:?}");
}

/// e2fsck complains (with `e2fsck_says` in its output) and check reports `rule`.
fn assert_flagged(img: &Path, rule: &str, e2fsck_says: &str) {
    let (e2, text) = e2fsck_verdict(img);
    assert!(e2, "{rule}: e2fsck finds nothing");
    assert!(
        text.contains(e2fsck_says),
        "{rule}: e2fsck does not say '{e2fsck_says}':\n{text}"
    );
    let (code, rules) = check(img);
    assert_eq!(code, 4, "{rule}: check exit code");
    assert!(
        rules.iter().any(|r| r == rule),
        "{rule} not reported; check found {rules:?}; e2fsck said:\n{text}"
    );
}

fn set_context(path: &str, ctx_file: &Path) -> Vec<String> {
    vec![
        format!("ea_set -f {} {path} c", ctx_file.display()),
        format!("sif {path} flags 0x80800"),
    ]
}

#[test]
fn encryption_contexts_and_policies() {
    let Some(fx) = Fixture::new("enc") else {
        return;
    };
    let a = fx.file("ctxA", &context_v1(b'A'));
    let b = fx.file("ctxB", &context_v1(b'B'));
    let bad = fx.file("ctxbad", &[1, 1, 4]);
    let base = "-t ext4 -I 256 -O encrypt";

    // One policy on a directory and everything in it: clean for both.
    let img = fx.image("same", base);
    let mut cmds = set_context("/d", &a);
    cmds.extend(set_context("/d/a-rather-long-name-1", &a));
    cmds.extend(set_context("/d/a-rather-long-name-2", &a));
    debugfs(&img, &cmds);
    assert_clean(&img, "one encryption policy");

    // A file of another policy in the directory.
    let img = fx.image("mixed", base);
    let mut cmds = set_context("/d", &a);
    cmds.extend(set_context("/d/a-rather-long-name-1", &a));
    cmds.extend(set_context("/d/a-rather-long-name-2", &b));
    debugfs(&img, &cmds);
    assert_flagged(&img, "dir.encryption_policy", "different encryption policy");

    // An unencrypted file in the encrypted directory.
    let img = fx.image("unenc", base);
    let mut cmds = set_context("/d", &a);
    cmds.extend(set_context("/d/a-rather-long-name-1", &a));
    debugfs(&img, &cmds);
    assert_flagged(&img, "dir.unencrypted_entry", "unencrypted");

    // ENCRYPT without a context, with and without the encrypt feature (e2fsck does not ask
    // for the feature).
    for (name, args) in [("noctx", base), ("nofeature", "-t ext4 -I 256")] {
        let img = fx.image(name, args);
        debugfs(&img, &["sif /f flags 0x80800".to_string()]);
        assert_flagged(
            &img,
            "inode.encryption_context",
            "no encryption extended attribute",
        );
    }

    // A context too short for its version.
    let img = fx.image("corrupt", base);
    debugfs(&img, &set_context("/f", &bad));
    assert_flagged(
        &img,
        "inode.encryption_context",
        "corrupt encryption extended attribute",
    );
}

/// Byte offset of inode `path`'s slot in the image (`debugfs imap`).
fn inode_offset(img: &Path, path: &str) -> u64 {
    let out = debugfs_text(img, &format!("imap {path}"));
    let mut block = None;
    let mut offset = None;
    for w in out.split_whitespace().collect::<Vec<_>>().windows(2) {
        if w[0] == "block" {
            block = w[1].trim_end_matches(',').parse::<u64>().ok();
        }
        if w[0] == "offset" {
            offset = u64::from_str_radix(w[1].trim_start_matches("0x"), 16).ok();
        }
    }
    block.expect("imap block") * 4096 + offset.expect("imap offset")
}

#[test]
fn in_inode_xattr_hash() {
    let Some(fx) = Fixture::new("ihash") else {
        return;
    };
    let img = fx.image("ibody", "-t ext4 -I 256");
    debugfs(&img, &["ea_set /f user.x hello".to_string()]);
    // libext2fs stores e_hash 0 for in-inode entries: accepted by both.
    assert_clean(&img, "in-inode xattr with hash 0");
    // e_hash of the first entry: 128 + i_extra_isize (32) + magic (4) + 12.
    let off = inode_offset(&img, "/f");
    write_at(&img, off + 128 + 32 + 4 + 12, &0x1234_5678u32.to_le_bytes());
    debugfs(&img, &["sif /f checksum calc".to_string()]);
    assert_flagged(&img, "xattr.ibody_hash", "has a hash");
}

/// The EA inode holding `/f`'s big value (the in-use inode with EA_INODE_FL).
fn ea_inode_of(img: &Path) -> u32 {
    (12..64)
        .find(|n| {
            let s = debugfs_text(img, &format!("stat <{n}>"));
            s.lines().next().is_some_and(|l| {
                l.split("Flags: 0x")
                    .nth(1)
                    .and_then(|f| u32::from_str_radix(f.trim(), 16).ok())
                    .is_some_and(|f| f & 0x20_0000 != 0)
            })
        })
        .expect("an EA inode")
}

#[test]
fn ea_inodes() {
    let Some(fx) = Fixture::new("eainode") else {
        return;
    };
    let big = fx.file("big", &vec![b'v'; 6000]);
    let make = |name: &str| {
        let img = fx.image(name, "-t ext4 -I 256 -O ea_inode");
        debugfs(&img, &[format!("ea_set -f {} /f user.big", big.display())]);
        img
    };
    // debugfs 1.47.0 does not charge the value's blocks to the owner: both see i_blocks short.
    let img = make("uncharged");
    assert_flagged(&img, "inode.blocks", "i_blocks is 8, should be ");
    let (_, text) = e2fsck_verdict(&img);
    let charged: u64 = text
        .split("i_blocks is 8, should be ")
        .nth(1)
        .and_then(|t| t.split('.').next())
        .and_then(|n| n.parse().ok())
        .expect("e2fsck's i_blocks");
    assert!(charged > 8, "{text}");
    let set_blocks = format!("sif /f blocks {charged}");
    // Charged: clean for both.
    let img = make("charged");
    debugfs(&img, std::slice::from_ref(&set_blocks));
    assert_clean(&img, "EA inode value charged to its owner");
    let ea = ea_inode_of(&img);

    // The EA inode's stored reference count (i_ctime << 32 | i_version) off by some.
    let img = make("refcount");
    debugfs(&img, &[set_blocks.clone(), format!("sif <{ea}> version 7")]);
    assert_flagged(&img, "xattr.ea_inode_refcount", "reference count");

    // The value hash the entry's e_hash was computed with (the EA inode's i_atime) changed.
    let img = make("hash");
    debugfs(
        &img,
        &[set_blocks.clone(), format!("sif <{ea}> atime 12345")],
    );
    assert_flagged(&img, "xattr.ea_inode_hash", "has a hash");

    // The entry no longer visible (in-inode xattrs hidden by i_extra_isize 0): the EA inode is
    // unattached, as e2fsck's pass 4 finds it.
    let img = make("unattached");
    debugfs(&img, &["sif /f extra_isize 0".to_string()]);
    let (_, text) = e2fsck_verdict(&img);
    assert!(text.contains(&format!("Unattached inode {ea}")), "{text}");
    assert_flagged(&img, "link.unattached", "Unattached");
}

#[test]
fn inode_in_bad_block() {
    let Some(fx) = Fixture::new("bb") else {
        return;
    };
    let img = fx.image("bb", "-t ext4 -I 256 -O ^metadata_csum");
    // Enough files that the last one's inode is in another inode table block than the
    // reserved inodes and the root; that block, listed as a bad block.
    let files: Vec<String> = (0..40)
        .map(|i| format!("write /dev/null /file{i:02}"))
        .collect();
    debugfs(&img, &files);
    let off = inode_offset(&img, "/file39");
    let blk = off / 4096;
    assert_ne!(blk, inode_offset(&img, "/f") / 4096);
    debugfs(
        &img,
        &[
            format!("sif <1> block[0] {blk}"),
            "sif <1> size 4096".to_string(),
            "sif <1> blocks 8".to_string(),
        ],
    );
    assert_flagged(&img, "dir.bb_inode", "in a bad block");
}

#[test]
fn encrypted_casefolded_htree_needs_siphash() {
    let Some(fx) = Fixture::new("sip") else {
        return;
    };
    let img = fx.image("sip", "-t ext4 -I 256 -O casefold,encrypt");
    let a = fx.file("ctxA", &context_v1(b'A'));
    let mut cmds = vec![
        "mkdir /cf".to_string(),
        "sif /cf flags 0x40080000".to_string(),
    ];
    for i in 0..200 {
        cmds.push(format!("write /dev/null /cf/name-long-enough-{i:04}"));
    }
    debugfs(&img, &cmds);
    // Index it (e2fsck -fD), as a casefolded htree.
    let out = Command::new("e2fsck")
        .args(["-fyD"])
        .arg(&img)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    assert!(debugfs_text(&img, "stat /cf").contains("Flags: 0x40081000"));
    // Then make it encrypted too: its index should now be SipHash.
    let mut cmds = set_context("/cf", &a);
    cmds[1] = "sif /cf flags 0x40081800".to_string();
    debugfs(&img, &cmds);
    assert_flagged(&img, "htree.siphash", "SipHash");
}

/// Flag/feature mismatches e2fsck 1.47 accepts (no problem code exists): check accepts them too.
#[test]
fn flags_e2fsck_accepts_without_their_feature() {
    let Some(fx) = Fixture::new("flags") else {
        return;
    };
    // VERITY without the verity feature.
    let img = fx.image("verity", "-t ext4 -I 256");
    debugfs(&img, &["sif /f flags 0x180000".to_string()]);
    assert_clean(&img, "VERITY without the verity feature");
}

/// HUGE_FILE set: i_blocks is then read in filesystem blocks, with or without the feature as
/// e2fsck reads it; both flag the mismatch the flag creates.
#[test]
fn huge_file_flag() {
    let Some(fx) = Fixture::new("huge") else {
        return;
    };
    for (name, args) in [
        ("with", "-t ext4 -I 256 -O huge_file"),
        ("without", "-t ext4 -I 256 -O ^huge_file"),
    ] {
        let img = fx.image(name, args);
        debugfs(&img, &["sif /f flags 0xc0000".to_string()]);
        let (e2, text) = e2fsck_verdict(&img);
        let (code, rules) = check(&img);
        assert_eq!(
            e2,
            code == 4,
            "{name}: e2fsck {e2} ({text}) vs check {rules:?}"
        );
        if e2 {
            assert!(rules.iter().any(|r| r == "inode.blocks"), "{rules:?}");
        }
    }
}

/// Pass-1 flag and field checks of the second batch, each against e2fsck.
#[test]
fn flags_and_unused_fields() {
    let Some(fx) = Fixture::new("fields") else {
        return;
    };
    let cases: &[(&str, &str, &[&str], &str, &str)] = &[
        (
            "imagic",
            "-t ext4 -I 256",
            &["sif /f flags 0x82000"],
            "inode.imagic",
            "imagic flag set",
        ),
        (
            "faddr",
            "-t ext4 -I 256",
            &["sif /f faddr 5"],
            "inode.unused_fields",
            "i_faddr",
        ),
        (
            "blocks_hi",
            "-t ext4 -I 256 -O ^huge_file",
            &["sif /f blocks_hi 1"],
            "inode.unused_fields",
            "i_blocks_hi",
        ),
        (
            "file_acl_hi",
            "-t ext4 -I 256 -O ^64bit",
            &["sif /f file_acl_hi 1"],
            "inode.unused_fields",
            "i_file_acl_hi",
        ),
        (
            "dir_size_hi",
            "-t ext4 -I 256 -O ^64bit",
            &["sif /d size_hi 1"],
            "inode.unused_fields",
            "i_size_high",
        ),
        (
            "large_file",
            "-t ext4 -I 256",
            &["feature -large_file", "sif /f size 0x80000000"],
            "inode.large_file",
            "large files",
        ),
    ];
    for &(name, args, cmds, rule, says) in cases {
        let img = fx.image(name, args);
        let cmds: Vec<String> = cmds.iter().map(|c| c.to_string()).collect();
        debugfs(&img, &cmds);
        assert_flagged(&img, rule, says);
    }
}

/// A block-mapped file on a bigalloc filesystem.
#[test]
fn bigalloc_block_mapped_file() {
    let Some(fx) = Fixture::new("bigalloc") else {
        return;
    };
    let img = fx.image("bigalloc", "-t ext4 -I 256 -O bigalloc -C 16384");
    let stat = debugfs_text(&img, "stat /f");
    let first = stat
        .split("(0):")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse::<u64>().ok())
        .expect("first block of /f");
    let mut cmds = vec![
        "sif /f flags 0".to_string(),
        format!("sif /f block[0] {first}"),
    ];
    cmds.extend((1..6).map(|i| format!("sif /f block[{i}] 0")));
    debugfs(&img, &cmds);
    assert_flagged(&img, "inode.bigalloc_blockmap", "cannot be block mapped");
    // An extent moved one block within its cluster: ee_start_lo is i_block word 5.
    let img = fx.image("misaligned", "-t ext4 -I 256 -O bigalloc -C 16384");
    debugfs(&img, &[format!("sif /f block[5] {}", first + 1)]);
    assert_flagged(
        &img,
        "extent.misaligned_cluster",
        "violates cluster allocation",
    );
}

/// A pre-1970 time in the old encoding: e2fsck offers to fix it and exits 0; check warns.
#[test]
fn old_encoding_of_pre_1970_times() {
    let Some(fx) = Fixture::new("epoch") else {
        return;
    };
    let img = fx.image("epoch", "-t ext4 -I 256");
    debugfs(
        &img,
        &[
            "sif /f ctime 0x80000000".to_string(),
            "sif /f ctime_extra 3".to_string(),
        ],
    );
    let (e2, text) = e2fsck_verdict(&img);
    assert!(!e2, "e2fsck exit code: {text}");
    assert!(text.contains("likely pre-1970"), "{text}");
    let (code, rules) = check(&img);
    assert_eq!((code, rules), (0, vec!["inode.time_epoch".to_string()]));
}

/// The dx root's incompatible flag.
#[test]
fn htree_incompat_flag() {
    let Some(fx) = Fixture::new("dxflag") else {
        return;
    };
    let img = fx.image("dxflag", "-t ext4 -I 256 -O ^metadata_csum");
    let mut cmds = vec!["mkdir /h".to_string()];
    for i in 0..300 {
        cmds.push(format!("write /dev/null /h/name-long-enough-{i:04}"));
    }
    debugfs(&img, &cmds);
    let out = Command::new("e2fsck")
        .args(["-fyD"])
        .arg(&img)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    assert_clean(&img, "htree built by e2fsck -D");
    let root = debugfs_text(&img, "bmap /h 0")
        .trim()
        .parse::<u64>()
        .expect("dx root block");
    // dx_root_info.unused_flags: byte 31 of the root block.
    write_at(&img, root * 4096 + 31, &[1]);
    assert_flagged(&img, "htree.incompat_flag", "incompatible");
}

/// A directory entry naming an EA inode that an xattr references: e2fsck 1.47.0 accepts it
/// (later versions add `PR_2_EA_INODE_DIR_LINK`); check agrees with the installed e2fsck.
#[test]
fn directory_entry_naming_an_ea_inode() {
    let Some(fx) = Fixture::new("ealink") else {
        return;
    };
    let big = fx.file("big", &vec![b'v'; 6000]);
    let img = fx.image("ealink", "-t ext4 -I 256 -O ea_inode");
    debugfs(&img, &[format!("ea_set -f {} /f user.big", big.display())]);
    let (_, text) = e2fsck_verdict(&img);
    let charged = text
        .split("i_blocks is 8, should be ")
        .nth(1)
        .and_then(|t| t.split('.').next())
        .and_then(|n| n.parse::<u64>().ok())
        .expect("e2fsck's i_blocks");
    let ea = ea_inode_of(&img);
    debugfs(
        &img,
        &[
            format!("sif /f blocks {charged}"),
            format!("link <{ea}> /ealink"),
        ],
    );
    let (e2, text) = e2fsck_verdict(&img);
    let (code, rules) = check(&img);
    assert_eq!(e2, code == 4, "e2fsck:\n{text}\ncheck: {rules:?}");
}
