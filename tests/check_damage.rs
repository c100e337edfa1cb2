//! `e4inspect check` on fresh mke2fs images of several layouts: undamaged ones report nothing;
//! one field damaged at a time (debugfs set_bg / ssv, or a byte edit) fires exactly the rule
//! that covers it.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

const UUID: &str = "11111111-2222-3333-4444-555555555555";

mod common;
use common::{debugfs_text, debugfs_w, have};

/// (name, mke2fs arguments, size in MiB)
const LAYOUTS: &[(&str, &str, u64)] = &[
    ("flex64csum", "-t ext4 -b 4096 -g 4096", 64),
    ("noflex32csum", "-t ext4 -O ^flex_bg,^64bit -b 1024", 32),
    (
        "uninit_bg",
        "-t ext4 -O ^metadata_csum,uninit_bg -b 1024",
        32,
    ),
    ("meta_bg", "-t ext4 -O meta_bg,^resize_inode -b 1024", 32),
    ("bigalloc", "-t ext4 -O bigalloc -b 4096 -C 65536", 64),
    ("ext2", "-t ext2 -b 1024", 32),
    ("ext3", "-t ext3 -b 2048", 32),
];

fn mkfs(dir: &Path, layout: &str) -> PathBuf {
    let (_, args, mib) = LAYOUTS.iter().find(|l| l.0 == layout).expect("layout");
    let img = dir.join(format!("{layout}.img"));
    let f = std::fs::File::create(&img).unwrap();
    f.set_len(mib << 20).unwrap();
    let st = Command::new("mke2fs")
        .env("E2FSPROGS_FAKE_TIME", "1700000000")
        .env("MKE2FS_CONFIG", "/etc/mke2fs.conf")
        .args(["-q", "-F", "-U", UUID])
        .args(args.split_whitespace())
        .arg(&img)
        .status()
        .unwrap();
    assert!(st.success(), "mke2fs {args}");
    img
}

fn poke(img: &Path, off: u64, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().write(true).open(img).unwrap();
    f.seek(SeekFrom::Start(off)).unwrap();
    f.write_all(bytes).unwrap();
}

fn peek(img: &Path, off: u64, n: usize) -> Vec<u8> {
    let mut f = std::fs::File::open(img).unwrap();
    f.seek(SeekFrom::Start(off)).unwrap();
    let mut b = vec![0u8; n];
    f.read_exact(&mut b).unwrap();
    b
}

fn or_byte(img: &Path, off: u64, bits: u8) {
    let b = peek(img, off, 1)[0];
    poke(img, off, &[b | bits]);
}

/// A field of `dumpe2fs` output for `group` (e.g. "Block bitmap at ").
fn dumpe2fs_loc(img: &Path, group: u32, what: &str) -> u64 {
    let out = Command::new("dumpe2fs").arg(img).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut in_group = false;
    for line in text.lines() {
        if line.starts_with("Group ") {
            in_group = line.starts_with(&format!("Group {group}:"));
        }
        if in_group {
            if let Some(p) = line.find(what) {
                let rest = &line[p + what.len()..];
                let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                return n.parse().unwrap();
            }
        }
    }
    panic!("{what} of group {group} not found");
}

fn check(img: &Path) -> (i32, Vec<String>, serde_json::Value) {
    common::check_rules(img)
}

fn expect(img: &Path, rule: &str, what: &str) {
    if let Err(e) = try_expect(img, rule, what) {
        panic!("{e}");
    }
}

fn try_expect(img: &Path, rule: &str, what: &str) -> Result<(), String> {
    let (rc, rules, v) = check(img);
    if !rules.iter().any(|r| r == rule) {
        return Err(format!(
            "{what}: expected {rule}, got {rules:?} (exit {rc}) {}",
            v["images"][0]["error"]
        ));
    }
    let sev = e4inspect::check::rules::rule(rule).unwrap().severity;
    if sev == e4inspect::check::Severity::Error && rc != 4 {
        return Err(format!("{what}: exit status {rc}, expected 4"));
    }
    Ok(())
}

#[test]
fn undamaged_layouts_report_nothing() {
    if !have("mke2fs") {
        println!("SKIP: mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, _, _) in LAYOUTS {
        let img = mkfs(dir.path(), name);
        let (rc, rules, v) = check(&img);
        assert!(rules.is_empty(), "{name}: {v:#}");
        assert_eq!(rc, 0, "{name}");
        std::fs::remove_file(&img).unwrap();
    }
}

/// (layout, debugfs command or byte edit, expected rule)
enum Damage {
    Debugfs(&'static str),
    /// OR `bits` into the byte at superblock offset `off`.
    SbOr(u64, u8),
    /// Write bytes at superblock offset.
    Sb(u64, &'static [u8]),
}

#[test]
fn one_field_at_a_time() {
    if !have("mke2fs") || !have("debugfs") {
        println!("SKIP: mke2fs/debugfs not installed");
        return;
    }
    use Damage::*;
    let cases: &[(&str, Damage, &str)] = &[
        ("noflex32csum", Sb(0x38, &[0, 0]), "sb.magic"),
        ("flex64csum", Sb(0x3FC, &[1, 2, 3, 4]), "sb.checksum"),
        (
            "flex64csum",
            Debugfs("ssv checksum_type 2"),
            "sb.checksum_type",
        ),
        ("flex64csum", Debugfs("ssv rev_level 2"), "sb.rev_level"),
        ("flex64csum", SbOr(0x62, 0x80), "sb.incompat_unknown"),
        ("flex64csum", SbOr(0x66, 0x80), "sb.ro_compat_unknown"),
        (
            "flex64csum",
            Debugfs("ssv log_block_size 7"),
            "sb.block_size",
        ),
        (
            "flex64csum",
            Debugfs("ssv log_cluster_size 3"),
            "sb.cluster_size",
        ),
        (
            "flex64csum",
            Debugfs("ssv log_groups_per_flex 40"),
            "sb.log_groups_per_flex",
        ),
        ("flex64csum", Debugfs("ssv inode_size 100"), "sb.inode_size"),
        ("flex64csum", Debugfs("ssv first_ino 5"), "sb.first_ino"),
        (
            "flex64csum",
            Debugfs("ssv min_extra_isize 3"),
            "sb.extra_isize",
        ),
        ("flex64csum", Debugfs("ssv desc_size 48"), "sb.desc_size"),
        (
            "flex64csum",
            Debugfs("ssv blocks_per_group 4"),
            "sb.blocks_per_group",
        ),
        (
            "flex64csum",
            Debugfs("ssv inodes_per_group 1"),
            "sb.inodes_per_group",
        ),
        (
            "flex64csum",
            Debugfs("ssv first_data_block 1"),
            "sb.first_data_block",
        ),
        (
            "flex64csum",
            Debugfs("ssv blocks_count 99999999"),
            "sb.blocks_count_device",
        ),
        (
            "flex64csum",
            Debugfs("ssv inodes_count 1000"),
            "sb.inodes_count",
        ),
        (
            "flex64csum",
            Debugfs("ssv r_blocks_count 12000"),
            "sb.r_blocks_count",
        ),
        (
            "flex64csum",
            Debugfs("ssv reserved_gdt_blocks 5000"),
            "sb.reserved_gdt_blocks",
        ),
        (
            "meta_bg",
            Debugfs("ssv first_meta_bg 1000"),
            "sb.first_meta_bg",
        ),
        ("uninit_bg", SbOr(0x65, 0x04), "sb.feature_csum_redundant"),
        ("uninit_bg", SbOr(0x61, 0x20), "sb.feature_csum_seed"),
        ("ext2", SbOr(0x60, 0x80), "sb.feature_64bit_extents"),
        ("ext2", SbOr(0x65, 0x02), "sb.feature_bigalloc_extents"),
        (
            "flex64csum",
            Debugfs("ssv free_blocks_count 99999999"),
            "sb.free_blocks_total",
        ),
        (
            "flex64csum",
            Debugfs("ssv free_inodes_count 99999"),
            "sb.free_inodes_total",
        ),
        (
            "flex64csum",
            Debugfs("ssv mtime 20500101000000"),
            "sb.time_future",
        ),
        (
            "flex64csum",
            Debugfs("ssv free_blocks_count 100"),
            "count.sb_free_blocks",
        ),
        (
            "flex64csum",
            Debugfs("ssv free_inodes_count 100"),
            "count.sb_free_inodes",
        ),
        (
            "noflex32csum",
            Debugfs("set_bg 1 block_bitmap 5"),
            "gd.block_bitmap_range",
        ),
        (
            "noflex32csum",
            Debugfs("set_bg 1 inode_bitmap 5"),
            "gd.inode_bitmap_range",
        ),
        (
            "noflex32csum",
            Debugfs("set_bg 1 inode_table 5"),
            "gd.inode_table_range",
        ),
        (
            "flex64csum",
            Debugfs("set_bg 1 block_bitmap 99999999"),
            "gd.block_bitmap_range",
        ),
        (
            "flex64csum",
            Debugfs("set_bg 2 inode_table 16383"),
            "gd.inode_table_range",
        ),
        (
            "flex64csum",
            Debugfs("set_bg 1 block_bitmap 1"),
            "gd.overlap",
        ),
        ("ext2", Debugfs("set_bg 2 inode_bitmap 16390"), "gd.overlap"),
        (
            "flex64csum",
            Debugfs("set_bg 1 free_blocks_count 40000"),
            "gd.free_blocks_range",
        ),
        (
            "flex64csum",
            Debugfs("set_bg 1 free_inodes_count 60000"),
            "gd.free_inodes_range",
        ),
        (
            "flex64csum",
            Debugfs("set_bg 1 used_dirs_count 60000"),
            "gd.used_dirs_range",
        ),
        (
            "flex64csum",
            Debugfs("set_bg 1 checksum 0x1234"),
            "gd.checksum",
        ),
        (
            "uninit_bg",
            Debugfs("set_bg 1 checksum 0x1234"),
            "gd.checksum",
        ),
        (
            "ext2",
            Debugfs("set_bg 1 flags 1"),
            "gd.uninit_without_csum",
        ),
        (
            "flex64csum",
            Debugfs("set_bg 3 flags 2"),
            "gd.last_group_block_uninit",
        ),
        (
            "flex64csum",
            Debugfs("set_bg 1 itable_unused 9000"),
            "gd.itable_unused",
        ),
        (
            "flex64csum",
            Debugfs("set_bg 0 block_bitmap_csum 0x1234"),
            "bitmap.block_csum",
        ),
        (
            "flex64csum",
            Debugfs("set_bg 0 inode_bitmap_csum 0x1234"),
            "bitmap.inode_csum",
        ),
        (
            "bigalloc",
            Debugfs("set_bg 0 block_bitmap_csum 0x1234"),
            "bitmap.block_csum",
        ),
        (
            "flex64csum",
            Debugfs("set_bg 0 free_blocks_count 1"),
            "count.group_free_blocks",
        ),
        (
            "noflex32csum",
            Debugfs("set_bg 0 free_inodes_count 1"),
            "count.group_free_inodes",
        ),
        ("ext3", Debugfs("ssv journal_inum 5000000"), "journal.inode"),
        ("ext3", Debugfs("ssv journal_inum 12"), "journal.inode"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (layout, damage, rule) in cases {
        let img = mkfs(dir.path(), layout);
        match damage {
            Debugfs(cmd) => debugfs_w(&img, cmd),
            SbOr(off, bits) => or_byte(&img, 1024 + off, *bits),
            Sb(off, bytes) => poke(&img, 1024 + off, bytes),
        }
        let what = match damage {
            Debugfs(c) => format!("{layout}: {c}"),
            SbOr(o, b) => format!("{layout}: sb[0x{o:x}] |= 0x{b:x}"),
            Sb(o, b) => format!("{layout}: sb[0x{o:x}] = {b:?}"),
        };
        if let Err(e) = try_expect(&img, rule, &what) {
            failures.push(e);
        }
        std::fs::remove_file(&img).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bitmaps_backups_and_journal_by_byte_edits() {
    if !have("mke2fs") || !have("debugfs") || !have("dumpe2fs") {
        println!("SKIP: e2fsprogs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Last group's block bitmap padding (1 KiB blocks: the filesystem ends before the group does).
    let img = mkfs(dir.path(), "ext2");
    let bb = dumpe2fs_loc(&img, 3, "Block bitmap at ");
    poke(&img, bb * 1024 + 1023, &[0x7F]);
    expect(
        &img,
        "bitmap.block_padding",
        "ext2: last group padding bit cleared",
    );
    // Inode bitmap bytes after inodes_per_group / 8.
    let img = mkfs(dir.path(), "ext2");
    let ib = dumpe2fs_loc(&img, 1, "Inode bitmap at ");
    poke(&img, ib * 1024 + 1020, &[0]);
    expect(
        &img,
        "bitmap.tail_padding",
        "ext2: inode bitmap tail byte zeroed",
    );
    // A backup superblock that disagrees with the primary (group 1 at block 8193).
    let img = mkfs(dir.path(), "noflex32csum");
    poke(&img, 8193 * 1024, &[1, 0, 0, 0]);
    expect(&img, "sb.backup_mismatch", "backup inodes_count");
    // A backup descriptor table that disagrees with the primary (block 8194, group 0's bitmap).
    let img = mkfs(dir.path(), "noflex32csum");
    poke(&img, 8194 * 1024, &[9, 9, 0, 0]);
    expect(&img, "gd.backup_mismatch", "backup descriptor block bitmap");
    // Primary descriptor table damaged, backup intact: the advice names the backup.
    let img = mkfs(dir.path(), "noflex32csum");
    poke(&img, 2 * 1024 + 32, &[5, 0, 0, 0]);
    expect(
        &img,
        "gd.block_bitmap_range",
        "primary descriptor 1 block bitmap",
    );
    let (_, _, v) = check(&img);
    let advice = v["images"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "sb.use_backup")
        .unwrap_or_else(|| panic!("no sb.use_backup: {v:#}"));
    assert_eq!(advice["superblock"], 8193);
    // Zeroed primary superblock: findings from the backup, and the advice.
    let img = mkfs(dir.path(), "noflex32csum");
    poke(&img, 1024, &[0u8; 1024]);
    expect(&img, "sb.magic", "zeroed primary");
    let (_, _, v) = check(&img);
    assert_eq!(v["images"][0]["superblock_used"], 8193, "{v:#}");
    // Journal superblock: magic and block size.
    for (off, bytes, rule) in [
        (0u64, &[0u8, 0, 0, 0][..], "journal.superblock_magic"),
        (0xC, &[0, 0, 0x10, 0][..], "journal.block_size"),
        (0x10, &[0x7F, 0, 0, 0][..], "journal.maxlen"),
        (0x4, &[0, 0, 0, 9][..], "journal.superblock_type"),
        (0x28, &[0x80, 0, 0, 0][..], "journal.features"),
        (0x40, &[0, 0, 0, 3][..], "journal.users"),
    ] {
        let img = mkfs(dir.path(), "ext3");
        let out = debugfs_text(&img, "bmap <8> 0");
        let blk: u64 = out.trim().parse().unwrap_or_else(|_| panic!("bmap: {out}"));
        poke(&img, blk * 2048 + off, bytes);
        expect(&img, rule, &format!("journal superblock +0x{off:x}"));
    }
}

#[test]
fn unreadable_images_exit_8_and_list_rules_works() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.img");
    std::fs::write(&junk, vec![0x5Au8; 1 << 20]).unwrap();
    let bin = env!("CARGO_BIN_EXE_e4inspect");
    for p in [junk.as_path(), Path::new("/nonexistent/x.img"), dir.path()] {
        let out = Command::new(bin).arg("check").arg(p).output().unwrap();
        assert_eq!(out.status.code(), Some(8), "{}", p.display());
        assert!(!out.stderr.is_empty());
    }
    let out = Command::new(bin)
        .args(["check", "--list-rules", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    for id in [
        "sb.magic",
        "gd.block_bitmap_range",
        "gd.checksum",
        "bitmap.block_csum",
        "count.group_free_blocks",
        "journal.superblock_magic",
    ] {
        assert!(ids.contains(&id), "{id}");
    }
}
