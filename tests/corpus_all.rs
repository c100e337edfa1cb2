//! Every image-reading subcommand (discovered from `e4inspect --help`) over every image of the
//! e2fsprogs test corpus (../shared/corpus/e2fsprogs): zero panics, zero signals, zero timeouts
//! (10 s each), exit 0/4/8 only. Skipped with a message when the corpus is absent.
//! `E4INSPECT_CORPUS=DIR` points elsewhere (a work tree whose parent has no shared/).

mod common;
mod robust;

use common::*;
use robust::*;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(10);

#[test]
fn every_command_on_every_corpus_image() {
    let root = std::env::var_os("E4INSPECT_CORPUS")
        .map(std::path::PathBuf::from)
        .or_else(corpus);
    let Some(root) = root.filter(|r| r.is_dir()) else {
        eprintln!("SKIP every_command_on_every_corpus_image: ../shared/corpus/e2fsprogs is absent");
        return;
    };
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("image.gz").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let bin = bin();
    let cmds = image_commands(&bin);
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let work = dir.path().to_path_buf();
    let results = parallel(names.clone(), threads(), |name| {
        let img = work.join(format!("{name}.img"));
        let gz = run(std::process::Command::new("gunzip")
            .arg("-c")
            .arg(root.join(&name).join("image.gz")));
        if !gz.status.success() || std::fs::write(&img, &gz.stdout).is_err() {
            let why = format!(
                "cannot decompress image.gz: {}",
                String::from_utf8_lossy(&gz.stderr)
            );
            return (name, Vec::new(), vec![why]);
        }
        let mut codes = Vec::new();
        let mut bad = Vec::new();
        for c in &cmds {
            let o = run_bounded(&bin, &c.args(&img), TIMEOUT, false);
            if let Some(why) = o.violation_for(c.style) {
                bad.push(format!("`{}`: {why}", c.label()));
            }
            codes.push((c.label(), o.code, o.elapsed));
        }
        let _ = std::fs::remove_file(&img);
        (name, codes, bad)
    });
    let mut bad = Vec::new();
    let mut slowest = (String::new(), Duration::ZERO);
    let mut hist = std::collections::BTreeMap::new();
    for (name, codes, b) in &results {
        for (label, code, t) in codes {
            *hist.entry((label.clone(), *code)).or_insert(0u32) += 1;
            if *t > slowest.1 {
                slowest = (format!("{name}: {label}"), *t);
            }
        }
        bad.extend(b.iter().map(|b| format!("{name} {b}")));
    }
    eprintln!(
        "corpus: {} images x {} commands in {:?}; slowest {} ({:?})",
        names.len(),
        cmds.len(),
        start.elapsed(),
        slowest.0,
        slowest.1
    );
    for ((label, code), n) in &hist {
        eprintln!("  {label:<20} exit {code:?}: {n}");
    }
    assert!(
        bad.is_empty(),
        "{} violations:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
