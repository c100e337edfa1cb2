//! `e4inspect check` over the e2fsprogs test images (../shared/corpus/e2fsprogs, LABELS.tsv):
//! every image labelled `sb`, `desc` or `bmcsum` is flagged with a finding of the matching family
//! (an error, but for `desc`, where e2fsck's own pre-pass-1 questions are warnings),
//! every `clean` image has no error-level finding, nothing panics or hangs. Prints the agreement
//! table (also for `count`, which is reported, not asserted).

mod common;
use common::corpus;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

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
    if common::wait_bounded(&mut child, limit).1 {
        return None;
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

/// Does a finding of the family a label names exist, at error level (for `desc`, at any level:
/// the descriptor questions e2fsck asks before pass 1 and forgets under `-n` are warnings by the
/// stated severity rule, `docs/rules.md`)?
fn flagged(class: &str, findings: &[(String, String)]) -> bool {
    findings.iter().any(|(rule, sev)| {
        (sev == "error" || class == "desc")
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

/// e2fsck -fn's class by its exit status: `Damaged` on exit 4, 8 or 12, `Warned` on exit 0 with
/// lines beyond its pass lines and summary, `Clean` otherwise; `None` when it does not finish in
/// time (it loops forever on some images). Also returns its first extra line.
fn e2fsck_class(img: &Path) -> (Option<Class>, String) {
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
    let class = match out.status.code() {
        Some(0) if extra.is_empty() => Class::Clean,
        Some(0) => Class::Warned,
        _ => Class::Damaged,
    };
    (Some(class), extra)
}

/// A verdict class: exit 4/8 (damaged), exit 0 with findings or messages (warned), or nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Damaged,
    Warned,
    Clean,
}

/// `check`'s class from its exit status and findings.
fn check_class(code: Option<i32>, findings: &[(String, String)]) -> Class {
    match code {
        Some(0) if findings.is_empty() => Class::Clean,
        Some(0) => Class::Warned,
        _ => Class::Damaged,
    }
}

/// Verdict agreement with e2fsck -fn over the whole corpus, by exit status class, with the kernel
/// as judge where `check` and e2fsck disagree on pass/fail (a copy loop-mounted read-write, every
/// file read: `common::damage::kernel_reads_all`). Prints the table and every disagreement
/// (docs/check-corpus.md explains them); asserts that no image both e2fsck and the kernel accept
/// fails, and agreement of at least 99%.
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
    let kernel = common::damage::kernel_unavailable();
    if let Some(why) = &kernel {
        eprintln!("SKIP: the kernel as judge: {why}");
    }
    let labels = std::fs::read_to_string(dir.join("LABELS.tsv")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // (e2fsck class, check class) -> count
    let mut table: BTreeMap<(Class, Class), u32> = BTreeMap::new();
    let mut disagreements = Vec::new();
    let mut wrongly_failed = Vec::new();
    let (mut n, mut agree) = (0u32, 0u32);
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
        let (e2, extra) = e2fsck_class(&img);
        let (code, findings, _) = run(&img);
        let ours = check_class(code, &findings);
        let Some(e2) = e2 else {
            std::fs::remove_file(&img).unwrap();
            disagreements.push(format!(
                "{name}: e2fsck -fn did not finish (check exit {code:?})"
            ));
            continue;
        };
        n += 1;
        *table.entry((e2, ours)).or_default() += 1;
        let e2_fails = e2 == Class::Damaged;
        let we_fail = ours == Class::Damaged;
        if e2_fails == we_fail {
            agree += 1;
        } else {
            // The kernel judges: does it mount a copy read-write and read every file?
            let judged = match &kernel {
                Some(_) => None,
                None => Some(common::damage::kernel_reads_all(&img)),
            };
            let kernel_fails = judged.as_ref().map(|r| r.is_err());
            if kernel_fails == Some(we_fail) {
                agree += 1;
            }
            if !e2_fails && kernel_fails == Some(false) && we_fail {
                wrongly_failed.push(name.to_string());
            }
            let mut rules: Vec<&str> = findings.iter().map(|f| f.0.as_str()).collect();
            rules.dedup();
            disagreements.push(format!(
                "{name}: e2fsck {e2:?} [{extra}], check {ours:?} {rules:?}, kernel {}",
                match &judged {
                    None => "not asked".to_string(),
                    Some(Ok(())) => "mounts rw and reads every file".to_string(),
                    Some(Err(e)) => format!("refuses ({e})"),
                }
            ));
        }
        std::fs::remove_file(&img).unwrap();
    }
    let classes = [Class::Damaged, Class::Warned, Class::Clean];
    println!("{n} images with an e2fsck -fn verdict");
    println!(
        "{:<16} {:>14} {:>14} {:>14}",
        "", "check damaged", "check warned", "check clean"
    );
    for e2 in classes {
        print!("{:<16}", format!("e2fsck {e2:?}"));
        for ours in classes {
            print!(" {:>14}", table.get(&(e2, ours)).copied().unwrap_or(0));
        }
        println!();
    }
    println!(
        "agreement (pass/fail, the kernel judging disagreements): {agree}/{n} ({:.1}%)",
        100.0 * f64::from(agree) / f64::from(n.max(1))
    );
    for d in &disagreements {
        println!("  {d}");
    }
    assert!(
        wrongly_failed.is_empty(),
        "failed although e2fsck and the kernel accept them: {wrongly_failed:?}"
    );
    assert!(
        f64::from(agree) >= 0.99 * f64::from(n),
        "agreement {agree}/{n} below 99%"
    );
}
