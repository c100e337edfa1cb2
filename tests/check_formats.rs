//! `check --format text|json|junit|github`: the compiler-style lines, JUnit XML validated against
//! the JUnit schema CI servers use (tests/data/junit.xsd, with xmllint), GitHub annotations with
//! their escaping, and --max-findings.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn debugfs_w(img: &Path, req: &str) {
    let out = run(Command::new(which("debugfs").expect("debugfs"))
        .args(["-w", "-R", req])
        .arg(img));
    assert!(out.status.success(), "debugfs {req}: {out:?}");
}

/// (tempdir, clean image, damaged image): the damaged one has a file of mode 0 (inode.mode,
/// dir.filetype errors) and a stale free-blocks count (warnings). Names carry characters XML
/// and workflow commands must escape.
fn images() -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    if !have("mke2fs") || !have("debugfs") {
        eprintln!("skipping: mke2fs/debugfs not installed");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    for i in 0..5 {
        std::fs::write(tree.join(format!("f{i}")), b"data").unwrap();
    }
    let t = tree.to_str().unwrap();
    let good = mkfs(dir.path(), "good.img", 4 << 20, &["-t", "ext4", "-d", t]);
    let bad = mkfs(
        dir.path(),
        "b&<d>,x:'y\".img",
        4 << 20,
        &["-t", "ext4", "-d", t],
    );
    for i in 0..5 {
        debugfs_w(&bad, &format!("sif /f{i} mode 0"));
    }
    debugfs_w(&bad, "ssv free_blocks_count 5");
    Some((dir, good, bad))
}

fn check(args: &[&str], images: &[&Path]) -> Output {
    run(Command::new(bin())
        .arg("check")
        .args(args)
        .args(images)
        .env("COLUMNS", "80"))
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

#[test]
fn text_lines_are_compiler_style() {
    let Some((_d, good, bad)) = images() else {
        return;
    };
    let o = check(&[], &[&good, &bad]);
    assert_eq!(o.status.code(), Some(4));
    let text = stdout(&o);
    let name = bad.display().to_string();
    let findings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(&format!("{name}: ")) && l.contains('['))
        .collect();
    // IMAGE: SEVERITY[RULE] group N, inode M (PATH): message
    for l in &findings {
        let rest = &l[name.len() + 2..];
        let (sev, rest) = rest.split_once('[').unwrap();
        assert!(["error", "warning"].contains(&sev), "{l}");
        let (rule, rest) = rest.split_once(']').unwrap();
        assert!(rule.contains('.'), "{l}");
        assert!(rest.starts_with(": ") || rest.starts_with(" group "), "{l}");
    }
    let mode: Vec<&&str> = findings
        .iter()
        .filter(|l| l.contains("error[inode.mode]"))
        .collect();
    assert_eq!(mode.len(), 5, "{text}");
    assert!(
        mode.iter()
            .any(|l| l.contains("] group 0, inode 12 (/f0): ")),
        "{text}"
    );
    assert!(findings
        .iter()
        .any(|l| l.contains("warning[count.sb_free_blocks]: ")));
    assert!(text.contains(&format!("{}: no findings", good.display())));
    assert!(
        text.contains(&format!("{name}: 10 errors, 2 warnings")),
        "{text}"
    );
}

/// The summary table names the problem found (the first finding's message, with how many more),
/// never the catalogue's passing condition beside a failure; with no finding listed
/// (`--max-findings 0`) it says the condition is not met.
#[test]
fn summary_names_the_problem() {
    let Some((_d, _good, bad)) = images() else {
        return;
    };
    // Table rows, cells trimmed; a row wrapped to the terminal width (first cell empty) is
    // joined to the row it continues.
    let rows = |o: &Output| -> Vec<Vec<String>> {
        let mut rows: Vec<Vec<String>> = Vec::new();
        for l in stdout(o).lines().filter(|l| l.starts_with('│')) {
            let cells: Vec<String> = l
                .trim_matches('│')
                .split(['┆', '│'])
                .map(|c| c.trim().to_string())
                .collect();
            match rows.last_mut() {
                Some(prev) if cells[0].is_empty() => {
                    for (p, c) in prev.iter_mut().zip(cells) {
                        if !c.is_empty() {
                            p.push(' ');
                            p.push_str(&c);
                        }
                    }
                }
                _ => rows.push(cells),
            }
        }
        rows
    };
    let o = check(&[], &[&bad]);
    let text = stdout(&o);
    let table = rows(&o);
    let json = stdout(&check(&["--json"], &[&bad]));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let findings = doc["images"][0]["findings"].as_array().unwrap().clone();
    assert_eq!(
        table[0],
        ["rule", "severity", "findings", "problem"],
        "{text}"
    );
    assert!(table.len() > 2, "{text}");
    for row in &table[1..] {
        let id = &row[0];
        let rule = e4inspect::check::RULES
            .iter()
            .find(|r| r.id.as_str() == id)
            .unwrap();
        assert_ne!(row[3], rule.description, "{text}");
        let message = findings
            .iter()
            .find(|f| f["rule"] == id.as_str())
            .and_then(|f| f["message"].as_str())
            .unwrap_or_else(|| panic!("no finding for {id}: {json}"));
        let n: u64 = row[2].parse().unwrap();
        let expected = if n > 1 {
            format!("{message} (and {} more)", n - 1)
        } else {
            message.to_string()
        };
        assert_eq!(row[3], expected, "{text}");
    }
    let o = check(&["--max-findings", "0"], &[&bad]);
    for row in &rows(&o)[1..] {
        assert!(row[3].starts_with("not met: "), "{row:?}");
    }
}

#[test]
fn max_findings_limits_the_listing_not_the_counts() {
    let Some((_d, _good, bad)) = images() else {
        return;
    };
    let o = check(&["--max-findings", "3"], &[&bad]);
    assert_eq!(o.status.code(), Some(4));
    let text = stdout(&o);
    let listed = text
        .lines()
        .filter(|l| l.contains("error[") || l.contains("warning["))
        .count();
    assert_eq!(listed, 3, "{text}");
    // Errors are listed first.
    assert!(!text.contains("warning["), "{text}");
    assert!(text.contains("9 more findings not listed"), "{text}");
    assert!(text.contains("10 errors, 2 warnings"), "{text}");
    let o = check(&["--max-findings", "3", "--format", "github"], &[&bad]);
    let ann = stdout(&o).lines().filter(|l| l.starts_with("::")).count();
    assert_eq!(ann, 3);
}

/// Validate `xml` against tests/data/junit.xsd with xmllint; false (after saying why) when
/// xmllint is not installed.
fn validate_junit(dir: &Path, xml: &str) -> bool {
    let Some(xmllint) = which("xmllint") else {
        eprintln!(
            "skipping schema validation: xmllint not installed (apt-get install libxml2-utils)"
        );
        return false;
    };
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/junit.xsd");
    let file = dir.join("report.xml");
    std::fs::write(&file, xml).unwrap();
    let out = run(Command::new(xmllint)
        .args(["--noout", "--schema"])
        .arg(&xsd)
        .arg(&file));
    assert!(
        out.status.success(),
        "JUnit report does not validate: {}\n{xml}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

#[test]
fn junit_validates_and_has_a_suite_per_image_and_a_case_per_family() {
    let Some((dir, good, bad)) = images() else {
        return;
    };
    let missing = dir.path().join("missing.img");
    let o = check(&["--format", "junit"], &[&good, &bad, &missing]);
    assert_eq!(o.status.code(), Some(12));
    let xml = stdout(&o);
    validate_junit(dir.path(), &xml);
    assert_eq!(xml.matches("<testsuite ").count(), 3, "{xml}");
    let families = e4inspect::check::rules::FAMILIES.len();
    let cases = xml.matches("<testcase ").count();
    assert_eq!(cases, 2 * families + 1, "{xml}");
    // The damaged image: two failed families (inode, dir), the name escaped.
    assert!(
        xml.contains(&format!(
            "/b&amp;&lt;d&gt;,x:&apos;y&quot;.img\" tests=\"{families}\""
        )),
        "{xml}"
    );
    assert!(xml.contains("type=\"inode.mode\""), "{xml}");
    assert!(xml.contains("type=\"dir.filetype\""), "{xml}");
    assert!(
        xml.contains(&format!(
            "<testsuites name=\"e4inspect check\" tests=\"{}\" failures=\"2\" errors=\"1\"",
            cases
        )),
        "{xml}"
    );
    // Warnings do not fail a case; they are in its output.
    assert!(xml.contains("<system-out>"), "{xml}");

    // --quick: the families that need the inode walk are skipped; allowed families too.
    let o = check(
        &["--format", "junit", "--quick", "--allow", "journal"],
        &[&bad],
    );
    let xml = stdout(&o);
    validate_junit(dir.path(), &xml);
    let quick = e4inspect::check::rules::QUICK_FAMILIES.len();
    let skipped = families - quick + 1;
    assert!(xml.contains(&format!("skipped=\"{skipped}\"")), "{xml}");
    assert!(xml.contains("every rule of the family is allowed"), "{xml}");
}

#[test]
fn github_annotations_are_escaped() {
    let Some((dir, good, bad)) = images() else {
        return;
    };
    let missing = dir.path().join("missing.img");
    let o = check(&["--format", "github"], &[&good, &bad, &missing]);
    assert_eq!(o.status.code(), Some(12));
    let text = stdout(&o);
    let file = bad
        .display()
        .to_string()
        .replace('%', "%25")
        .replace(':', "%3A")
        .replace(',', "%2C");
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(&format!("::error file={file},title=")))
        .collect();
    assert_eq!(errors.len(), 10, "{text}");
    assert!(
        errors.iter().any(|l| l.ends_with(
            ",title=inode.mode::group 0, inode 12 (/f0): mode 00 is not a valid file type"
        ) || l.contains(",title=inode.mode::group 0, inode 12 (/f0): ")),
        "{text}"
    );
    let warnings = text
        .lines()
        .filter(|l| l.starts_with("::warning file=") && l.contains(",title=count.sb_free_blocks::"))
        .count();
    assert_eq!(warnings, 1, "{text}");
    // An unreadable image is an error annotation too.
    assert!(text
        .lines()
        .any(|l| l.starts_with("::error file=") && l.contains("missing.img")));
    // Every workflow command is one line with no raw CR.
    assert!(!text.contains('\r'));
}

#[test]
fn json_is_still_one_document() {
    let Some((_d, good, bad)) = images() else {
        return;
    };
    for imgs in [&[good.as_path()][..], &[good.as_path(), bad.as_path()]] {
        let o = check(&["--format", "json", "--allow", "count"], imgs);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert!(!v.to_string().contains("count.sb_free_blocks"));
        let o2 = check(&["--json", "--allow", "count"], imgs);
        assert_eq!(o.stdout, o2.stdout);
    }
}
