//! The bad blocks list (inode 1) in `e4inspect dump`: the "Bad blocks:" line and `-b`, against
//! dumpe2fs, on images made with `mke2fs -l LIST` and on the corpus.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

fn same(img: &Path, flags: &[&str]) -> Result<(), String> {
    let a = run(Command::new(which("dumpe2fs").unwrap())
        .args(flags)
        .arg(img)
        .env("TZ", "UTC"));
    let b = run(Command::new(bin())
        .arg("dump")
        .args(flags)
        .arg(img)
        .env("TZ", "UTC"));
    if a.stdout != b.stdout {
        return Err(format!(
            "{} {flags:?}:\n--- dumpe2fs\n{}\n--- e4inspect\n{}",
            img.display(),
            String::from_utf8_lossy(&a.stdout),
            String::from_utf8_lossy(&b.stdout)
        ));
    }
    if a.status.success() != b.status.success() {
        return Err(format!("{} {flags:?}: exit status differs", img.display()));
    }
    Ok(())
}

#[test]
fn bad_block_lists_from_mke2fs() {
    if !have("mke2fs") || !have("dumpe2fs") {
        eprintln!("SKIP: mke2fs/dumpe2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, u64, Vec<&str>, Vec<u64>)> = vec![
        (
            "1k",
            16 << 20,
            vec!["-t", "ext2", "-b", "1024"],
            vec![100, 200, 201, 5000],
        ),
        (
            "4k",
            64 << 20,
            vec!["-t", "ext4"],
            vec![3000, 3001, 9999, 12000],
        ),
        ("none", 16 << 20, vec!["-t", "ext4"], vec![]),
        // Enough entries to need an indirect block in inode 1.
        (
            "many",
            32 << 20,
            vec!["-t", "ext3", "-b", "1024"],
            (20000..20040).collect(),
        ),
    ];
    for (name, size, args, list) in cases {
        let bb = dir.path().join(format!("{name}.bb"));
        let text: String = list.iter().map(|b| format!("{b}\n")).collect();
        std::fs::write(&bb, text).unwrap();
        let mut a = args.clone();
        let bbs = bb.to_str().unwrap().to_string();
        a.extend(["-l", bbs.as_str()]);
        let img = mkfs(dir.path(), &format!("{name}.img"), size, &a);
        for flags in [&["-b"][..], &["-h"], &[], &["-b", "-x"]] {
            same(&img, flags).unwrap();
        }
        // Not an empty comparison: the listed blocks are there.
        let out = run(Command::new(bin()).args(["dump", "-b"]).arg(&img));
        let got: Vec<u64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(got, list, "{name}");
    }
}

#[test]
fn corpus_bad_blocks_match_dumpe2fs() {
    let Some(c) = corpus() else {
        eprintln!("SKIP: corpus not available");
        return;
    };
    if !have("dumpe2fs") {
        eprintln!("SKIP: dumpe2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut with_list = 0;
    for n in [
        "f_bbfile",
        "f_bb_in_bb",
        "f_badprimary",
        "f_badtable",
        "f_dupsuper",
        "f_zero_group",
    ] {
        let gz = c.join(n).join("image.gz");
        if !gz.is_file() {
            continue;
        }
        let out = run(Command::new("gunzip").arg("-c").arg(&gz));
        let img = dir.path().join(format!("{n}.img"));
        std::fs::write(&img, out.stdout).unwrap();
        let h = run(Command::new(which("dumpe2fs").unwrap()).arg("-h").arg(&img));
        if String::from_utf8_lossy(&h.stdout).contains("Bad blocks:") {
            with_list += 1;
        }
        for flags in [&["-b"][..], &["-h"], &[]] {
            if let Err(e) = same(&img, flags) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        with_list > 0,
        "no corpus image with a bad blocks list was compared"
    );
}
