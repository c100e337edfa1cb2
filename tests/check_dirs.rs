//! `e4inspect check` passes 2-4 (directories, htree, connectivity, link counts) on generated
//! images: clean trees (htree, two-level htree, casefolded htree, metadata_csum, deep nesting,
//! 70,000 subdirectories with dir_nlink, largedir) give no finding and e2fsck -fn agrees; each
//! damage made with debugfs (link / unlink / set_inode_field) or a byte edit of a directory block
//! fires its rule, and e2fsck -fn complains about the same image.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{debugfs_w_text, e2fsck_complains, have};

const UUID: &str = "7d4c2a6e-1b3f-4e5d-9a8b-0c1d2e3f4a5b";

fn tools() -> bool {
    let ok = ["mke2fs", "debugfs", "e2fsck"].iter().all(|t| have(t));
    if !ok {
        eprintln!("SKIP: e2fsprogs (mke2fs, debugfs, e2fsck) not installed");
    }
    ok
}

/// The test tree: nested directories, small files, an empty file, a symlink, and `big` with
/// enough long names to need an htree once indexed.
fn populate(root: &Path, big: usize, name_len: usize) {
    std::fs::create_dir_all(root.join("a/b/c")).unwrap();
    std::fs::create_dir_all(root.join("big")).unwrap();
    for i in 1..=5 {
        std::fs::write(root.join(format!("f{i}")), format!("data {i}\n")).unwrap();
    }
    std::fs::write(root.join("f0"), b"").unwrap();
    std::fs::write(root.join("a/b/c/deep"), b"x\n").unwrap();
    std::os::unix::fs::symlink("f1", root.join("sl")).unwrap();
    for i in 0..big {
        let stem = format!("{i:06}-");
        let name = format!("{stem}{}", "n".repeat(name_len.saturating_sub(stem.len())));
        std::fs::write(root.join("big").join(name), b"").unwrap();
    }
}

/// mke2fs -d from a populated tree, then `e2fsck -fyD` to index the directories (mke2fs -d
/// writes linear directories); returns the image.
fn image(dir: &Path, name: &str, args: &str, mib: u64, big: usize, name_len: usize) -> PathBuf {
    let src = dir.join(format!("{name}.d"));
    populate(&src, big, name_len);
    let img = dir.join(format!("{name}.img"));
    std::fs::File::create(&img)
        .unwrap()
        .set_len(mib << 20)
        .unwrap();
    let out = Command::new("mke2fs")
        .env("E2FSPROGS_FAKE_TIME", "1700000000")
        .env("MKE2FS_CONFIG", "/etc/mke2fs.conf")
        .args(["-q", "-F", "-U", UUID])
        .args(args.split_whitespace())
        .arg("-d")
        .arg(&src)
        .arg(&img)
        .output()
        .unwrap();
    assert!(out.status.success(), "mke2fs {args}: {out:?}");
    index_dirs(&img);
    img
}

fn index_dirs(img: &Path) {
    let st = Command::new("e2fsck")
        .args(["-fyD"])
        .arg(img)
        .output()
        .unwrap();
    assert!(st.status.code().unwrap_or(8) < 4, "e2fsck -fyD: {st:?}");
}

/// `check --json`: exit code and (rule, severity, paths) of every finding.
fn check(img: &Path) -> (i32, Vec<(String, String, Vec<String>)>) {
    let out = Command::new(common::bin())
        .args(["check", "--json"])
        .arg(img)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let findings = v["images"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let paths = f["paths"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            (
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                paths,
            )
        })
        .collect();
    (out.status.code().unwrap_or(-1), findings)
}

fn assert_clean(img: &Path, what: &str) {
    assert!(!e2fsck_complains(img), "{what}: e2fsck -fn complains");
    let (code, f) = check(img);
    let errors: Vec<_> = f.iter().filter(|x| x.1 == "error").collect();
    assert!(
        code == 0 && errors.is_empty(),
        "{what}: exit {code}, {errors:?}"
    );
}

/// Physical block of logical block `l` of `path`.
fn bmap(img: &Path, path: &str, l: u64) -> u64 {
    let out = Command::new("debugfs")
        .args(["-R", &format!("bmap {path} {l}")])
        .arg(img)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn block_size(img: &Path) -> u64 {
    let out = Command::new("dumpe2fs")
        .arg("-h")
        .arg(img)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("Block size:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Overwrite bytes at `off` within block `blk`.
fn poke(img: &Path, blk: u64, off: u64, bytes: &[u8]) {
    use std::io::{Seek, SeekFrom, Write};
    let bs = block_size(img);
    let mut f = std::fs::OpenOptions::new().write(true).open(img).unwrap();
    f.seek(SeekFrom::Start(blk * bs + off)).unwrap();
    f.write_all(bytes).unwrap();
}

/// Offset of the entry named `name` in a linear directory block.
fn entry_offset(block: &[u8], name: &[u8]) -> usize {
    let mut pos = 0;
    while pos + 8 <= block.len() {
        let rec = u16::from_le_bytes([block[pos + 4], block[pos + 5]]) as usize;
        let nl = block[pos + 6] as usize;
        if &block[pos + 8..pos + 8 + nl] == name {
            return pos;
        }
        assert!(rec >= 8, "bad block");
        pos += rec;
    }
    panic!("{} not found", String::from_utf8_lossy(name));
}

fn read_block(img: &Path, blk: u64) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let bs = block_size(img);
    let mut f = std::fs::File::open(img).unwrap();
    f.seek(SeekFrom::Start(blk * bs)).unwrap();
    let mut b = vec![0; bs as usize];
    f.read_exact(&mut b).unwrap();
    b
}

/// A damage: how to apply it, and the rule it must fire.
type Damage = (&'static str, &'static dyn Fn(&Path), &'static str);

fn run_damages(base: &Path, dir: &Path, damages: &[Damage]) {
    let mut failures = Vec::new();
    for (name, apply, rule) in damages {
        let img = dir.join(format!("{name}.img"));
        std::fs::copy(base, &img).unwrap();
        apply(&img);
        if !e2fsck_complains(&img) {
            failures.push(format!("{name}: e2fsck -fn does not complain"));
        }
        let (code, f) = check(&img);
        let fired = f.iter().any(|x| x.0 == *rule);
        if !fired || code != 4 {
            let rules: Vec<&str> = f.iter().map(|x| x.0.as_str()).collect();
            failures.push(format!("{name}: want {rule}, exit {code}, got {rules:?}"));
        }
        std::fs::remove_file(&img).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn clean_trees_have_no_findings() {
    if !tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // One-level htree (1 KiB blocks), no metadata_csum.
    let img = image(
        d,
        "plain",
        "-t ext4 -O ^metadata_csum -b 1024 -N 2048",
        16,
        400,
        40,
    );
    assert!(debugfs_w_text(&img, "htree_dump /big").contains("Indirect levels: 0"));
    assert_clean(&img, "plain");
    // Two-level htree with metadata_csum (dx tails, leaf tails).
    let img = image(d, "twolevel", "-t ext4 -b 1024 -N 4096", 32, 3000, 200);
    assert!(
        debugfs_w_text(&img, "htree_dump /big").contains("Indirect levels: 1"),
        "expected a two-level htree"
    );
    assert_clean(&img, "twolevel");
    // largedir and 4 KiB blocks, ext2-style signed hash flag as mke2fs sets it.
    let img = image(
        d,
        "largedir",
        "-t ext4 -O large_dir -b 4096 -N 4096",
        32,
        2000,
        100,
    );
    assert_clean(&img, "largedir");
    // No filetype, no extents (block-mapped directories).
    let img = image(
        d,
        "ext2",
        "-t ext2 -O ^filetype -b 2048 -N 2048",
        16,
        300,
        30,
    );
    assert_clean(&img, "ext2");
}

#[test]
fn casefolded_htree_hashes_folded_names() {
    if !tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let src = d.join("cf.d");
    std::fs::create_dir_all(src.join("cf")).unwrap();
    let stems = [
        "Straße",
        "CAFÉ",
        "ǅemal",
        "Ångström",
        "ﬁle",
        "ΐota",
        "Hello",
    ];
    for i in 0..300 {
        let s = stems[i % stems.len()];
        std::fs::write(
            src.join("cf")
                .join(format!("{s}-{i:04}-{}", "X".repeat(30))),
            b"",
        )
        .unwrap();
    }
    let img = d.join("cf.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let out = Command::new("mke2fs")
        .env("E2FSPROGS_FAKE_TIME", "1700000000")
        .args([
            "-q", "-F", "-U", UUID, "-t", "ext4", "-O", "casefold", "-b", "1024", "-d",
        ])
        .arg(&src)
        .arg(&img)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // Mark the directory casefolded, then let e2fsck build its index with folded hashes.
    debugfs_w_text(&img, "set_inode_field /cf flags 0x40080000");
    index_dirs(&img);
    assert!(debugfs_w_text(&img, "htree_dump /cf").contains("Root node dump"));
    assert_clean(&img, "casefolded htree");
}

#[test]
fn deep_nesting_is_clean() {
    if !tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let src = d.join("deep.d");
    let mut p = src.clone();
    for _ in 0..1000 {
        p.push("d");
    }
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("leaf"), b"x").unwrap();
    let img = d.join("deep.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let out = Command::new("mke2fs")
        .args([
            "-q",
            "-F",
            "-t",
            "ext4",
            "-b",
            "1024",
            "-N",
            "2048",
            "-O",
            "inline_data",
            "-d",
        ])
        .arg(&src)
        .arg(&img)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_clean(&img, "1000 nested directories");
    // A finding deep down names the full path.
    debugfs_w_text(
        &img,
        &format!("sif /{} links_count 7", "d/".repeat(1000) + "leaf"),
    );
    let (_, f) = check(&img);
    let want = format!("/{}leaf", "d/".repeat(1000));
    assert!(
        f.iter()
            .any(|x| x.0 == "link.count" && x.2 == vec![want.clone()]),
        "{f:?}"
    );
}

/// 70,000 subdirectories in one directory: with dir_nlink the kernel stores 1 link. Made on a
/// loop mount (mke2fs -d inserts linearly, quadratic for one huge directory).
#[test]
fn seventy_thousand_subdirectories_with_dir_nlink() {
    if !tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let img = d.join("many.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    let st = Command::new("mke2fs")
        .args([
            "-q",
            "-F",
            "-t",
            "ext4",
            "-O",
            "^has_journal",
            "-b",
            "1024",
            "-N",
            "80000",
            "-I",
            "256",
        ])
        .arg(&img)
        .status()
        .unwrap();
    assert!(st.success());
    let mnt = d.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let m = Command::new("mount")
        .arg("-o")
        .arg("loop")
        .arg(&img)
        .arg(&mnt)
        .output();
    if !m.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("SKIP: cannot loop-mount ({m:?})");
        return;
    }
    let made = (|| -> std::io::Result<()> {
        std::fs::create_dir(mnt.join("many"))?;
        for i in 0..70_000 {
            std::fs::create_dir(mnt.join("many").join(format!("d{i}")))?;
        }
        Ok(())
    })();
    let um = Command::new("umount").arg(&mnt).status().unwrap();
    assert!(um.success(), "umount");
    made.unwrap();
    assert!(debugfs_w_text(&img, "stat /many").contains("Links: 1 "));
    assert_clean(&img, "70,000 subdirectories");
}

#[test]
fn directory_damage_fires_its_rule() {
    if !tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let base = image(
        d,
        "base",
        "-t ext4 -O ^metadata_csum -b 1024 -N 2048",
        16,
        400,
        40,
    );
    assert_clean(&base, "base");
    fn root_entry(img: &Path, name: &[u8]) -> (u64, usize) {
        let blk = bmap(img, "/", 0);
        (blk, entry_offset(&read_block(img, blk), name))
    }
    let damages: &[Damage] = &[
        (
            "links_count",
            &|i| drop(debugfs_w_text(i, "sif /f1 links_count 5")),
            "link.count",
        ),
        (
            "unlink_file",
            &|i| drop(debugfs_w_text(i, "unlink /f1")),
            "link.unattached",
        ),
        (
            "link_dir",
            &|i| drop(debugfs_w_text(i, "link /a/b /x")),
            "dir.link_dir",
        ),
        (
            "unused_inode",
            &|i| drop(debugfs_w_text(i, "sif /f2 links_count 0")),
            "dir.unused_inode",
        ),
        (
            "filetype",
            &|i| drop(debugfs_w_text(i, "sif /f0 mode 010644")),
            "dir.filetype",
        ),
        (
            "unlink_dir",
            &|i| drop(debugfs_w_text(i, "unlink /a/b")),
            "connect.unconnected_dir",
        ),
        (
            "clear_root",
            &|i| drop(debugfs_w_text(i, "clri <2>")),
            "connect.root",
        ),
        (
            "moved_dir",
            &|i| {
                debugfs_w_text(i, "link /a/b/c /c2");
                debugfs_w_text(i, "unlink /a/b/c");
            },
            "connect.dotdot",
        ),
        (
            "hole",
            &|i| drop(debugfs_w_text(i, "punch /lost+found 3 3")),
            "dir.hole",
        ),
        (
            "rec_len",
            &|i| {
                let (b, o) = root_entry(i, b"f1");
                poke(i, b, o as u64 + 4, &[5, 0]);
            },
            "dir.entry_corrupt",
        ),
        (
            "dot_name",
            &|i| poke(i, bmap(i, "/a", 0), 8, b"x"),
            "dir.missing_dot",
        ),
        (
            "dot_inode",
            &|i| poke(i, bmap(i, "/a", 0), 0, &11u32.to_le_bytes()),
            "dir.dot_inode",
        ),
        (
            "dotdot_name",
            &|i| poke(i, bmap(i, "/a", 0), 20, b"xx"),
            "dir.missing_dotdot",
        ),
        (
            "duplicate",
            &|i| {
                let (b, o) = root_entry(i, b"f2");
                poke(i, b, o as u64 + 8, b"f1");
            },
            "dir.duplicate_name",
        ),
        (
            "reserved_inode",
            &|i| {
                let (b, o) = root_entry(i, b"f3");
                poke(i, b, o as u64, &5u32.to_le_bytes());
            },
            "dir.bad_inode",
        ),
        (
            "slash_in_name",
            &|i| {
                let (b, o) = root_entry(i, b"f4");
                poke(i, b, o as u64 + 8, b"/");
            },
            "dir.bad_name",
        ),
        (
            "link_root",
            &|i| {
                let (b, o) = root_entry(i, b"f5");
                poke(i, b, o as u64, &2u32.to_le_bytes());
            },
            "dir.link_root",
        ),
        (
            "dx_limit",
            &|i| poke(i, bmap(i, "/big", 0), 32, &[123, 0]),
            "htree.limit",
        ),
        (
            "dx_count",
            &|i| poke(i, bmap(i, "/big", 0), 34, &[200, 0]),
            "htree.count",
        ),
        (
            "dx_levels",
            &|i| poke(i, bmap(i, "/big", 0), 30, &[2]),
            "htree.depth",
        ),
        (
            "dx_hash_version",
            &|i| poke(i, bmap(i, "/big", 0), 28, &[9]),
            "htree.hash_version",
        ),
        (
            "dx_reserved",
            &|i| poke(i, bmap(i, "/big", 0), 24, &[1]),
            "htree.root",
        ),
        (
            "dx_block",
            &|i| poke(i, bmap(i, "/big", 0), 44, &[0xff, 0x0f, 0, 0]),
            "htree.block",
        ),
        (
            "dx_dupref",
            &|i| poke(i, bmap(i, "/big", 0), 52, &[1, 0, 0, 0]),
            "htree.refs",
        ),
        (
            "dx_order",
            &|i| {
                let b = read_block(i, bmap(i, "/big", 0));
                let (h1, h2) = (b[40..44].to_vec(), b[48..52].to_vec());
                poke(i, bmap(i, "/big", 0), 40, &h2);
                poke(i, bmap(i, "/big", 0), 48, &h1);
            },
            "htree.hash_order",
        ),
        (
            "dx_leaf_hash",
            &|i| poke(i, bmap(i, "/big", 0), 40, &[0x10, 0, 0, 0]),
            "htree.leaf_hash",
        ),
        (
            // ENCRYPT without an encryption context: e2fsck 1.47.0 reports the missing
            // context (PR_1_MISSING_ENCRYPTION_XATTR) and then treats the directory as
            // unencrypted; tests/check_rules2.rs covers entries of a real policy.
            "encrypted_dir",
            &|i| drop(debugfs_w_text(i, "sif /a flags 0x80800")),
            "inode.encryption_context",
        ),
    ];
    run_damages(&base, d, damages);
}

#[test]
fn checksummed_directory_damage_fires_its_rule() {
    if !tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let base = image(d, "csum", "-t ext4 -b 1024 -N 2048", 16, 400, 40);
    assert_clean(&base, "csum");
    let damages: &[Damage] = &[
        (
            "leaf_csum",
            &|i| {
                let blk = bmap(i, "/a", 0);
                let b = read_block(i, blk);
                let o = entry_offset(&b, b"b");
                poke(i, blk, o as u64 + 8, b"q");
            },
            "dir.csum",
        ),
        (
            "dx_tail",
            &|i| {
                let blk = bmap(i, "/big", 0);
                let b = read_block(i, blk);
                let limit = u16::from_le_bytes([b[32], b[33]]) as u64;
                poke(i, blk, 32 + limit * 8, &[0x5a]);
            },
            "htree.csum",
        ),
    ];
    run_damages(&base, d, damages);
}
