//! `e4inspect check` over the e2fsprogs test images (../shared/corpus/e2fsprogs, LABELS.tsv):
//! every image labelled `sb`, `desc` or `bmcsum` is flagged with an error of the matching family,
//! every `clean` image has no error-level finding, nothing panics or hangs. Prints the agreement
//! table (also for `count`, which is reported, not asserted).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// CARGO_MANIFEST_DIR/../shared/corpus/e2fsprogs (CI clones the repository next to shared/), or
/// E4INSPECT_CORPUS when set (work trees elsewhere).
fn corpus() -> Option<PathBuf> {
    let p = std::env::var_os("E4INSPECT_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/e2fsprogs"),
        PathBuf::from,
    );
    p.join("LABELS.tsv").exists().then_some(p)
}

/// Run `check --json` with a deadline; (exit code, findings as (rule, severity)).
fn run(img: &Path) -> (Option<i32>, Vec<(String, String)>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_e4inspect"))
        .args(["check", "--json"])
        .arg(img)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            return (None, Vec::new(), "timeout".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let findings = v["findings"]
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
                "count" => rule.starts_with("count.group_"),
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
