//! `e4inspect freefrag` against the installed e2freefrag: generated images of every block size,
//! bigalloc, fragmented free space (every other file deleted with debugfs), several -c values,
//! and every corpus image where e2freefrag's output is deterministic.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const MIB: u64 = 1 << 20;

fn unpack(dir: &Path, corpus: &Path, name: &str) -> Option<PathBuf> {
    let out = run(Command::new("gunzip")
        .arg("-c")
        .arg(corpus.join(name).join("image.gz")));
    let p = dir.join(format!("{name}.img"));
    (out.status.success() && std::fs::write(&p, out.stdout).is_ok()).then_some(p)
}

fn names(corpus: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(corpus)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().join("image.gz").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Compare stdout and success; `Err` describes the first difference.
fn compare(img: &Path, flags: &[&str]) -> Result<(), String> {
    let a = run(Command::new(which("e2freefrag").unwrap())
        .args(flags)
        .arg(img));
    let b = run(Command::new(bin()).arg("freefrag").args(flags).arg(img));
    if a.stdout != b.stdout {
        let at = String::from_utf8_lossy(&a.stdout);
        let bt = String::from_utf8_lossy(&b.stdout);
        let first = at
            .lines()
            .zip(bt.lines())
            .find(|(x, y)| x != y)
            .map(|(x, y)| format!("e2freefrag {x:?} / e4inspect {y:?}"))
            .unwrap_or_else(|| format!("lengths {} / {}", at.len(), bt.len()));
        return Err(format!("{} {flags:?}: {first}", img.display()));
    }
    if a.status.success() != b.status.success() {
        return Err(format!(
            "{} {flags:?}: exit {:?} / e2freefrag {:?}",
            img.display(),
            b.status.code(),
            a.status.code()
        ));
    }
    Ok(())
}

/// Files of growing sizes, so deleting every other one leaves free space in pieces.
fn populate(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let mut x: u32 = 12345;
    for i in 1..=120u32 {
        let len = (i as usize) * 3000;
        let data: Vec<u8> = (0..len)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (x >> 16) as u8
            })
            .collect();
        std::fs::write(src.join(format!("f{i}")), data).unwrap();
    }
    src
}

fn fragment(img: &Path) {
    let cmds: String = (1..=120)
        .step_by(2)
        .map(|i| format!("rm /f{i}\n"))
        .collect();
    let f = img.with_extension("cmds");
    std::fs::write(&f, cmds).unwrap();
    let out = run(Command::new(which("debugfs").unwrap())
        .arg("-w")
        .arg("-f")
        .arg(&f)
        .arg(img));
    assert!(out.status.success(), "debugfs rm failed");
}

#[test]
fn generated_images_match_e2freefrag() {
    if !have("mke2fs") || !have("e2freefrag") || !have("debugfs") {
        eprintln!("SKIP: mke2fs, debugfs or e2freefrag not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = populate(dir.path());
    let src_s = src.to_str().unwrap();
    let layouts: Vec<(&str, u64, Vec<&str>)> = vec![
        ("1k", 64 * MIB, vec!["-t", "ext4", "-b", "1024"]),
        ("2k", 64 * MIB, vec!["-t", "ext4", "-b", "2048"]),
        ("4k", 128 * MIB, vec!["-t", "ext4"]),
        ("64k", 256 * MIB, vec!["-t", "ext4", "-b", "65536"]),
        ("ext2", 64 * MIB, vec!["-t", "ext2"]),
        ("noflex", 128 * MIB, vec!["-t", "ext4", "-O", "^flex_bg"]),
        (
            "big16k",
            256 * MIB,
            vec!["-t", "ext4", "-O", "bigalloc", "-C", "16384"],
        ),
        (
            "big1k",
            64 * MIB,
            vec!["-t", "ext4", "-b", "1024", "-O", "bigalloc", "-C", "4096"],
        ),
    ];
    let mut failures = Vec::new();
    let mut compared = 0;
    for (name, size, args) in &layouts {
        let mut a: Vec<&str> = args.clone();
        a.extend(["-d", src_s]);
        let img = mkfs(dir.path(), &format!("{name}.img"), *size, &a);
        for fragmented in [false, true] {
            if fragmented {
                fragment(&img);
            }
            for c in [None, Some("1"), Some("4"), Some("64"), Some("4096")] {
                let flags: Vec<&str> = c.map(|c| vec!["-c", c]).unwrap_or_default();
                compared += 1;
                if let Err(e) = compare(&img, &flags) {
                    failures.push(e);
                }
            }
        }
    }
    eprintln!("generated: {compared} comparisons");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn json_carries_the_same_figures() {
    if !have("mke2fs") {
        eprintln!("SKIP: mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = populate(dir.path());
    let img = mkfs(
        dir.path(),
        "j.img",
        64 * MIB,
        &["-t", "ext4", "-d", src.to_str().unwrap()],
    );
    fragment(&img);
    let text = run(Command::new(bin()).args(["freefrag", "-c", "64"]).arg(&img));
    let json = run(Command::new(bin())
        .args(["freefrag", "--json", "-c", "64"])
        .arg(&img));
    assert!(text.status.success() && json.status.success());
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let r = &v["report"];
    let t = String::from_utf8_lossy(&text.stdout);
    let field = |label: &str| -> u64 {
        t.lines()
            .find_map(|l| l.strip_prefix(label))
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no {label} in {t}"))
    };
    assert_eq!(
        r["free_extents"].as_u64(),
        Some(field("Num. free extent: "))
    );
    assert_eq!(r["free_blocks"].as_u64(), Some(field("Free blocks: ")));
    assert_eq!(r["chunks"]["free"].as_u64(), Some(field("Free chunks: ")));
    let hist_blocks: u64 = r["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["blocks"].as_u64().unwrap())
        .sum();
    let text_blocks: u64 = t
        .lines()
        .skip_while(|l| !l.starts_with("Extent Size Range"))
        .skip(1)
        .map(|l| {
            l.split_whitespace()
                .rev()
                .nth(1)
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(hist_blocks, text_blocks);
    assert!(hist_blocks > 0);
}

#[test]
fn bad_chunk_sizes_are_usage_errors() {
    if !have("mke2fs") {
        eprintln!("SKIP: mke2fs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = mkfs(dir.path(), "c.img", 16 * MIB, &["-t", "ext4", "-b", "4096"]);
    for c in ["3", "1", "abc"] {
        let o = run(Command::new(bin()).args(["freefrag", "-c", c]).arg(&img));
        assert_eq!(o.status.code(), Some(16), "-c {c}");
        assert!(o.stdout.is_empty(), "-c {c}");
    }
}

#[test]
fn corpus_matches_e2freefrag() {
    let Some(c) = corpus() else {
        eprintln!("SKIP: corpus not available");
        return;
    };
    if !have("e2freefrag") {
        eprintln!("SKIP: e2freefrag not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut compared = 0;
    for n in names(&c) {
        let Some(img) = unpack(dir.path(), &c, &n) else {
            continue;
        };
        for flags in [&[][..], &["-c", "64"]] {
            let run_e2 = || {
                run(Command::new(which("e2freefrag").unwrap())
                    .args(flags)
                    .arg(&img))
                .stdout
            };
            if run_e2() != run_e2() {
                continue;
            }
            compared += 1;
            if let Err(e) = compare(&img, flags) {
                failures.push(e);
            }
        }
        std::fs::remove_file(&img).ok();
    }
    eprintln!("corpus: {compared} comparisons");
    assert!(compared > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
