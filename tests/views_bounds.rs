//! Bounded work on hostile maps (issue 10, item 4), built inside the test with debugfs `sif` and
//! byte edits, measured with `/usr/bin/time` (peak RSS) and by output size, never by time:
//! - a directory with INDEX_FL, a huge i_size and a depth-2 extent tree mapping ~56 million
//!   blocks: `inode`, `inode --json`, `ls -l -d` stay small;
//! - a file whose triple-indirect map holds half a million alternating (never contiguous) data
//!   blocks: `inode --json` lists a capped number of runs and counts the rest; the debugfs text
//!   is streamed with bounded memory; `cat` of the same is bounded too (it reads what is mapped).

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::process::Command;

mod common;
use common::{bin, have, which};

const MAX_RSS_KB: u64 = 64 * 1024;

fn sif(img: &Path, path: &str, field: &str, value: u64) {
    let o = Command::new(which("debugfs").unwrap())
        .args(["-w", "-R", &format!("sif {path} {field} {value}")])
        .arg(img)
        .output()
        .unwrap();
    assert!(
        o.status.success() && !String::from_utf8_lossy(&o.stderr).contains("rror"),
        "sif {field}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn write_block(img: &Path, bs: u64, blk: u64, data: &[u8]) {
    let mut f = std::fs::OpenOptions::new().write(true).open(img).unwrap();
    f.seek(SeekFrom::Start(blk * bs)).unwrap();
    f.write_all(data).unwrap();
}

/// Run e4inspect under /usr/bin/time: (exit code, stdout bytes, peak RSS in KiB).
fn measured(args: &[&str], img: &Path, target: &str) -> (Option<i32>, usize, u64) {
    let rss = tempfile::NamedTempFile::new().unwrap();
    let o = Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(rss.path())
        .arg(bin())
        .args(args)
        .arg(img)
        .arg(target)
        .output()
        .unwrap();
    let kb = std::fs::read_to_string(rss.path()).unwrap();
    let kb: u64 = kb
        .lines()
        .last()
        .unwrap_or("0")
        .trim()
        .parse()
        .unwrap_or(u64::MAX);
    (o.status.code(), o.stdout.len(), kb)
}

fn extent_header(buf: &mut [u8], entries: u16, max: u16, depth: u16) {
    buf[0..2].copy_from_slice(&0xF30Au16.to_le_bytes());
    buf[2..4].copy_from_slice(&entries.to_le_bytes());
    buf[4..6].copy_from_slice(&max.to_le_bytes());
    buf[6..8].copy_from_slice(&depth.to_le_bytes());
}

#[test]
fn hostile_htree_directory_is_read_lazily() {
    if !have("debugfs") || !have("mke2fs") || !Path::new("/usr/bin/time").exists() {
        eprintln!("SKIP: needs debugfs, mke2fs and /usr/bin/time");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("d")).unwrap();
    let img = common::mkfs(
        dir.path(),
        "h.img",
        16 << 20,
        &[
            "-t",
            "ext4",
            "-b",
            "1024",
            "-O",
            "^metadata_csum",
            "-d",
            tree.to_str().unwrap(),
        ],
    );
    let bs = 1024u64;
    let (a, leaves) = (12_000u64, 12_001u64);
    // Depth-1 node: 84 index entries, each to its own leaf of 84 extents of 8000 blocks.
    let mut node = vec![0u8; bs as usize];
    extent_header(&mut node, 84, 84, 1);
    for i in 0..84u64 {
        let o = 12 + 12 * i as usize;
        node[o..o + 4].copy_from_slice(&((i * 84 * 8000) as u32).to_le_bytes());
        node[o + 4..o + 8].copy_from_slice(&((leaves + i) as u32).to_le_bytes());
    }
    write_block(&img, bs, a, &node);
    for i in 0..84u64 {
        let mut leaf = vec![0u8; bs as usize];
        extent_header(&mut leaf, 84, 84, 0);
        for j in 0..84u64 {
            let o = 12 + 12 * j as usize;
            leaf[o..o + 4].copy_from_slice(&(((i * 84 + j) * 8000) as u32).to_le_bytes());
            leaf[o + 4..o + 6].copy_from_slice(&8000u16.to_le_bytes());
            leaf[o + 8..o + 12].copy_from_slice(&1000u32.to_le_bytes());
        }
        write_block(&img, bs, leaves + i, &leaf);
    }
    // Root in i_block: depth 2, one index entry to the node above.
    sif(&img, "/d", "flags", 0x81000);
    sif(&img, "/d", "size", 0xFFFF_0000);
    sif(&img, "/d", "size_high", 0x7F);
    sif(&img, "/d", "block[0]", 0x0001_F30A);
    sif(&img, "/d", "block[1]", 0x0002_0004);
    sif(&img, "/d", "block[2]", 0);
    sif(&img, "/d", "block[3]", 0);
    sif(&img, "/d", "block[4]", a);
    sif(&img, "/d", "block[5]", 0);
    for args in [
        &["inode", "--json"][..],
        &["inode"],
        &["ls", "-l", "-d"],
        &["ls", "--json"],
    ] {
        let (code, out, kb) = measured(args, &img, "/d");
        eprintln!("{args:?}: exit {code:?}, {out} bytes out, {kb} KiB peak RSS");
        assert!(matches!(code, Some(0 | 4 | 8)), "{args:?}: exit {code:?}");
        assert!(kb < MAX_RSS_KB, "{args:?}: {kb} KiB peak RSS");
        assert!(out < 4 << 20, "{args:?}: {out} bytes of output");
    }
}

#[test]
fn wide_triple_indirect_map_is_summarised() {
    if !have("debugfs") || !have("mke2fs") || !Path::new("/usr/bin/time").exists() {
        eprintln!("SKIP: needs debugfs, mke2fs and /usr/bin/time");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("f"), b"x").unwrap();
    let img = common::mkfs(
        dir.path(),
        "t.img",
        16 << 20,
        &["-t", "ext2", "-b", "1024", "-d", tree.to_str().unwrap()],
    );
    let bs = 1024u64;
    let (tind, dind0, ind0) = (12_000u64, 12_001u64, 12_009u64);
    let words = |v: &mut Vec<u8>, i: usize, x: u64| {
        v[4 * i..4 * i + 4].copy_from_slice(&(x as u32).to_le_bytes())
    };
    let mut t = vec![0u8; 1024];
    for k in 0..8 {
        words(&mut t, k, dind0 + k as u64);
    }
    write_block(&img, bs, tind, &t);
    for k in 0..8u64 {
        let mut d = vec![0u8; 1024];
        for i in 0..256 {
            words(&mut d, i, ind0 + k * 256 + i as u64);
        }
        write_block(&img, bs, dind0 + k, &d);
        for i in 0..256u64 {
            let mut ind = vec![0u8; 1024];
            for j in 0..256 {
                // Alternating: every data block two away from the previous one.
                words(&mut ind, j, 200 + 2 * j as u64 + (i % 8));
            }
            write_block(&img, bs, ind0 + k * 256 + i, &ind);
        }
    }
    sif(&img, "/f", "block[TIND]", tind);
    sif(&img, "/f", "size", 1 << 30);
    let (code, out, kb) = measured(&["inode", "--json"], &img, "/f");
    eprintln!("inode --json: exit {code:?}, {out} bytes out, {kb} KiB peak RSS");
    assert!(matches!(code, Some(0 | 4)));
    assert!(out < 1 << 20, "{out} bytes of JSON");
    assert!(kb < MAX_RSS_KB, "{kb} KiB");
    let o = Command::new(bin())
        .args(["inode", "--json"])
        .arg(&img)
        .arg("/f")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let omitted = v["inodes"][0]["data"]["runs_omitted"].as_u64().unwrap();
    assert!(omitted > 500_000, "runs_omitted {omitted}");
    // The debugfs text lists everything, streamed.
    let (code, out, kb) = measured(&["inode"], &img, "/f");
    eprintln!("inode: exit {code:?}, {out} bytes out, {kb} KiB peak RSS");
    assert!(kb < MAX_RSS_KB, "{kb} KiB");
    assert!(out > 4 << 20, "the text lists every run ({out} bytes)");
}
