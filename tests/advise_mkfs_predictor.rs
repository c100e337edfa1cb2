//! The layout predictor (src/mkfs.rs) against the real mke2fs 1.47.0 over a matrix of sizes and
//! options wider than what `advise` recommends: -b 1024..65536, -I, -i, -N, -T, -m, -G, -J size=,
//! fast_commit, ^flex_bg, ^64bit, ^resize_inode, odd sizes that are not whole pages, sizes that
//! make the last group too small, and sizes that force blocks-per-group to shrink.

use std::path::Path;
use std::process::Command;

use e4inspect::mkfs::{predict, MkfsConf, MkfsOptions};
use e4inspect::superblock::Superblock;

fn sb_of(img: &Path) -> Superblock {
    use std::io::{Read, Seek, SeekFrom};
    let mut raw = vec![0u8; 1024];
    let mut f = std::fs::File::open(img).unwrap();
    f.seek(SeekFrom::Start(1024)).unwrap();
    f.read_exact(&mut raw).unwrap();
    Superblock::parse(&raw).expect("superblock")
}

#[test]
fn predictor_matches_mke2fs_over_an_option_matrix() {
    if Command::new("mke2fs").arg("-V").output().is_err() {
        println!("SKIP: mke2fs not installed");
        return;
    }
    let conf = MkfsConf::system();
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("p.img");
    const K: u64 = 1024;
    const M: u64 = 1 << 20;
    const G: u64 = 1 << 30;
    let cases: &[(u64, &str)] = &[
        (300 * K, ""),
        (M, ""),
        (2500 * K + 512, ""),
        (3 * M, ""),
        (8 * M, ""),
        (50 * M, ""),
        (64 * M, "-b 65536"),
        (64 * M, "-T news"),
        (64 * M, "-T huge"),
        (100 * M + 3 * K, "-b 1024"),
        (100 * M, "-i 1024"),
        (100 * M, "-b 4096"),
        (511 * M, ""),
        (512 * M, ""),
        (G, "-i 1024"),
        (G, "-I 128"),
        (G, "-I 1024"),
        (G, "-N 100"),
        (G, "-N 1000000"),
        (G, "-J size=64"),
        (G, "-O fast_commit"),
        (G, "-O fast_commit -J size=64"),
        (G, "-b 1024 -O fast_commit"),
        (G, "-T largefile"),
        (G, "-T largefile4"),
        (G, "-m 0.3"),
        (G, "-m 0"),
        (G, "-G 4"),
        (G, "-O ^flex_bg"),
        (G, "-O ^has_journal"),
        (G, "-O ^64bit"),
        (G, "-O ^resize_inode"),
        (G, "-b 2048 -I 2048"),
        (G + 40 * K, "-b 1024"),
        (3000 * M, ""),
        (5 * G, "-b 1024"),
        (10 * G, "-i 4096 -I 512"),
        (128 * G + 200 * K, ""),
        (200 * G, "-T small"),
        (G * 1024 + 7 * 4096, "-i 65536"),
    ];
    let mut failures = Vec::new();
    for (bytes, opts) in cases {
        let args: Vec<String> = opts.split_whitespace().map(String::from).collect();
        let o = MkfsOptions::from_args(&args).unwrap();
        let l = predict(*bytes, &o, &conf).unwrap_or_else(|e| panic!("{bytes} {opts}: {e}"));
        let _ = std::fs::remove_file(&img);
        std::fs::File::create(&img)
            .unwrap()
            .set_len(*bytes)
            .unwrap();
        let out = Command::new("mke2fs")
            .env("E2FSPROGS_FAKE_TIME", "1700000000")
            .args([
                "-t",
                "ext4",
                "-F",
                "-q",
                "-E",
                "lazy_itable_init=1,lazy_journal_init=1",
            ])
            .args(&args)
            .arg(&img)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{bytes} {opts}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let sb = sb_of(&img);
        let bs = 1024u64 << sb.log_block_size;
        let journal = if sb.jnl_backup_type == 1 {
            ((u64::from(sb.jnl_blocks[15]) << 32) | u64::from(sb.jnl_blocks[16])) / bs
        } else {
            0
        };
        let got = (
            bs,
            sb.blocks_count(),
            u64::from(sb.blocks_per_group),
            u64::from(sb.inodes_count),
            u64::from(sb.inodes_per_group),
            u64::from(sb.inode_size),
            journal,
            sb.r_blocks_count(),
            u64::from(sb.reserved_gdt_blocks),
            u64::from(sb.overhead_clusters),
            sb.log_groups_per_flex,
        );
        let want = (
            u64::from(l.block_size),
            l.blocks_count,
            l.blocks_per_group,
            l.inodes_count,
            l.inodes_per_group,
            u64::from(l.inode_size),
            l.journal_blocks,
            l.reserved_blocks,
            l.reserved_gdt_blocks,
            l.overhead_blocks.unwrap_or(0),
            l.flex_bg_size
                .map(|g| g.trailing_zeros() as u8)
                .unwrap_or(0),
        );
        if got != want {
            failures.push(format!(
                "{bytes} {opts}:\n  mke2fs    {got:?}\n  predicted {want:?}"
            ));
        }
    }
    let _ = std::fs::remove_file(&img);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn predictor_refuses_what_mke2fs_refuses() {
    if Command::new("mke2fs").arg("-V").output().is_err() {
        println!("SKIP: mke2fs not installed");
        return;
    }
    let conf = MkfsConf::system();
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("r.img");
    const M: u64 = 1 << 20;
    const G: u64 = 1 << 30;
    let cases: &[(u64, &str)] = &[
        (16 * 1024, ""),
        (64 * 1024, ""),
        (G, "-N 5000000"),
        (G, "-J size=600"),
        (G, "-J size=3"),
        (G, "-I 384"),
        (64 * M, "-b 1024 -I 2048"),
        (G, "-i 512"),
        (G, "-G 3"),
        (G, "-O ^flex_bg -G 4"),
    ];
    for (bytes, opts) in cases {
        let args: Vec<String> = opts.split_whitespace().map(String::from).collect();
        let o = MkfsOptions::from_args(&args).unwrap();
        assert!(
            predict(*bytes, &o, &conf).is_err(),
            "predicted ok: {bytes} {opts}"
        );
        let _ = std::fs::remove_file(&img);
        std::fs::File::create(&img)
            .unwrap()
            .set_len(*bytes)
            .unwrap();
        let out = Command::new("mke2fs")
            .args(["-t", "ext4", "-F", "-q"])
            .args(&args)
            .arg(&img)
            .output()
            .unwrap();
        assert!(!out.status.success(), "mke2fs accepted {bytes} {opts}");
    }
    let _ = std::fs::remove_file(&img);
}
