//! `e4inspect check` over the e2fsprogs test images (../shared/corpus/e2fsprogs, LABELS.tsv):
//! every image labelled `sb`, `desc` or `bmcsum` is flagged with an error of the matching family,
//! every `clean` image has no error-level finding, nothing panics or hangs. Prints the agreement
//! table (also for `count`, which is reported, not asserted).

mod common;
use common::corpus;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run `check --json` with a deadline; (exit code, findings as (rule, severity)).
fn run(img: &Path) -> (Option<i32>, Vec<(String, String)>, String) {
    run_args(img, &[])
}

/// Run `cmd` to completion, or kill it after `limit` (`None`). Stdout is drained while waiting:
/// a report larger than the pipe buffer would otherwise block the child.
fn output_within(cmd: &mut Command, limit: Duration) -> Option<std::process::Output> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut b);
        b
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut out = child.wait_with_output().unwrap();
    out.stdout = reader.join().unwrap_or_default();
    Some(out)
}

/// `run` with extra arguments (`--quick`).
fn run_args(img: &Path, args: &[&str]) -> (Option<i32>, Vec<(String, String)>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_e4inspect"));
    cmd.args(["check", "--json"]).args(args).arg(img);
    let Some(out) = output_within(&mut cmd, Duration::from_secs(30)) else {
        return (None, Vec::new(), "timeout".into());
    };
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let findings = v["images"][0]["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| {
                    (
                        f["rule"].as_str().unwrap_or("").to_string(),
                        f["severity"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    (
        out.status.code(),
        findings,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Does an error-level finding of the family a label names exist?
fn flagged(class: &str, findings: &[(String, String)]) -> bool {
    findings.iter().any(|(rule, sev)| {
        sev == "error"
            && match class {
                // e2fsck's "Superblock has an invalid journal" is what the labels call `sb`
                // for f_badjourblks, f_miss_journal, f_jnl_etb_alloc_fail, j_corrupt_sb_magic.
                "sb" => rule.starts_with("sb.") || rule.starts_with("journal."),
                "desc" => rule.starts_with("gd."),
                "bmcsum" => rule == "bitmap.block_csum" || rule == "bitmap.inode_csum",
                "count" => rule.starts_with("count.group_") || rule.starts_with("usage.group_"),
                _ => false,
            }
    })
}

#[test]
fn corpus_agreement() {
    let Some(dir) = corpus() else {
        println!("SKIP: ../shared/corpus/e2fsprogs not found next to the repository");
        return;
    };
    let labels = std::fs::read_to_string(dir.join("LABELS.tsv")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // class -> (labelled, flagged, misses)
    let mut table: BTreeMap<&str, (u32, u32, Vec<String>)> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut images = 0;
    for line in labels.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, _, _, classes] = cols[..] else {
            continue;
        };
        let gz = dir.join(name).join("image.gz");
        if !gz.exists() {
            continue;
        }
        let img = tmp.path().join(format!("{name}.img"));
        let out = Command::new("gzip").arg("-dc").arg(&gz).output().unwrap();
        std::fs::write(&img, &out.stdout).unwrap();
        images += 1;
        let (code, findings, stderr) = run(&img);
        match code {
            Some(0 | 4 | 8) => {}
            other => problems.push(format!("{name}: exit {other:?} {stderr}")),
        }
        for class in classes.split(',') {
            if !["sb", "desc", "bmcsum", "count", "clean"].contains(&class) {
                continue;
            }
            let e = table.entry(class).or_default();
            e.0 += 1;
            let ok = if class == "clean" {
                !findings.iter().any(|(_, s)| s == "error") && code == Some(0)
            } else {
                flagged(class, &findings)
            };
            if ok {
                e.1 += 1;
            } else {
                let rules: Vec<&str> = findings.iter().map(|f| f.0.as_str()).collect();
                e.2.push(format!("{name} ({})", rules.join(" ")));
                if class != "count" {
                    problems.push(format!(
                        "{name}: class {class} not matched: {rules:?} {stderr}"
                    ));
                }
            }
        }
        std::fs::remove_file(&img).unwrap();
    }
    println!("{images} images checked");
    println!("{:<8} {:>9} {:>8}  misses", "class", "labelled", "agreed");
    for (class, (n, ok, misses)) in &table {
        println!("{class:<8} {n:>9} {ok:>8}  {}", misses.join(", "));
    }
    assert!(images > 0);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// e2fsck -fn's verdict, as the issue defines it: damaged when it exits non-zero or prints
/// anything beyond its pass lines and summary. `None` when it does not finish in time (it loops
/// forever on some images). Also returns its first extra line.
fn e2fsck_verdict(img: &Path) -> (Option<bool>, String) {
    let mut cmd = Command::new("e2fsck");
    cmd.arg("-fn").arg(img).env("TZ", "UTC");
    let Some(out) = output_within(&mut cmd, Duration::from_secs(120)) else {
        return (None, "e2fsck timed out".into());
    };
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let extra = text
        .lines()
        .find(|l| {
            !(l.is_empty()
                || l.starts_with("Pass ")
                || l.starts_with("e2fsck ")
                || l.contains(" files (") && l.ends_with(" blocks"))
        })
        .unwrap_or("")
        .to_string();
    (Some(!out.status.success() || !extra.is_empty()), extra)
}

/// Verdict agreement with e2fsck -fn over the whole corpus (issue 11): prints the table and every
/// disagreement (docs/check-corpus.md explains them); asserts no false alarm on an image e2fsck
/// calls clean and an agreement floor.
#[test]
fn e2fsck_verdict_agreement() {
    let Some(dir) = corpus() else {
        eprintln!("SKIP: e2fsprogs corpus not found (set E4INSPECT_CORPUS)");
        return;
    };
    if Command::new("e2fsck").arg("-V").output().is_err() {
        eprintln!("SKIP: e2fsck not installed");
        return;
    }
    let labels = std::fs::read_to_string(dir.join("LABELS.tsv")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // (e2fsck damaged, check damaged) -> count
    let mut table: BTreeMap<(bool, bool), u32> = BTreeMap::new();
    let mut disagreements = Vec::new();
    let mut false_alarms = Vec::new();
    let mut n = 0;
    for line in labels.lines().skip(1) {
        let Some(name) = line.split('\t').next() else {
            continue;
        };
        let gz = dir.join(name).join("image.gz");
        if !gz.exists() {
            continue;
        }
        let img = tmp.path().join(format!("{name}.img"));
        let out = Command::new("gzip").arg("-dc").arg(&gz).output().unwrap();
        std::fs::write(&img, &out.stdout).unwrap();
        let (e2, extra) = e2fsck_verdict(&img);
        // e2fsck -n never replays the journal ("skipping journal recovery"): compare with the
        // bytes as they are.
        let (code, findings, _) = run_args(&img, &["--no-replay"]);
        std::fs::remove_file(&img).unwrap();
        let Some(e2_damaged) = e2 else {
            disagreements.push(format!(
                "{name}: e2fsck -fn did not finish (check exit {code:?})"
            ));
            continue;
        };
        n += 1;
        // Exit 8 (cannot be read at all) counts as "damaged".
        let ours = matches!(code, Some(4 | 8));
        *table.entry((e2_damaged, ours)).or_default() += 1;
        if e2_damaged != ours {
            let rules: Vec<&str> = findings.iter().map(|f| f.0.as_str()).collect();
            let line = format!(
                "{name}: e2fsck {} [{extra}], check {} {rules:?}",
                if e2_damaged { "damaged" } else { "clean" },
                if ours { "damaged" } else { "clean" }
            );
            if ours {
                false_alarms.push(line.clone());
            }
            disagreements.push(line);
        }
    }
    let agree = table.get(&(true, true)).copied().unwrap_or(0)
        + table.get(&(false, false)).copied().unwrap_or(0);
    println!("{n} images with an e2fsck -fn verdict");
    println!("{:<16} {:>14} {:>14}", "", "check damaged", "check clean");
    for e2 in [true, false] {
        println!(
            "{:<16} {:>14} {:>14}",
            if e2 { "e2fsck damaged" } else { "e2fsck clean" },
            table.get(&(e2, true)).copied().unwrap_or(0),
            table.get(&(e2, false)).copied().unwrap_or(0)
        );
    }
    println!(
        "agreement: {agree}/{n} ({:.1}%)",
        100.0 * f64::from(agree) / f64::from(n.max(1))
    );
    for d in &disagreements {
        println!("  {d}");
    }
    assert!(
        false_alarms.is_empty(),
        "false alarms:\n{}",
        false_alarms.join("\n")
    );
    // Passes 2-4 (directories, connectivity, link counts) are issue 12; with them the target is
    // 95%. Without them, pass 1 and pass 5 alone reach 113 of 129.
    assert!(
        f64::from(agree) >= 0.95 * f64::from(n),
        "agreement {agree}/{n} below 95%"
    );
}
