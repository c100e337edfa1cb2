//! Passes 2-4 over the e2fsprogs test images (../shared/corpus/e2fsprogs): every image on which
//! `e2fsck -fn` reports a directory problem in pass 2 (or 3A), a connectivity problem in pass 3,
//! or a reference-count problem in pass 4 is flagged by `check` with an error of the matching
//! family (`dir.`/`htree.`, `connect.`, `link.`). Prints the table per pass.
//!
//! e2fsck reports some pass-1 inode problems in pass 2, where it can name the path
//! (`e2fsck_process_bad_inode`: illegal device/FIFO/socket, invalid symlink, i_file_acl, ...) and
//! then calls the entry's file type wrong ("should be 0"): those lines are pass 1's (`inode.*`,
//! `xattr.*`), not directory damage, and are not counted here. Images involving the bad-blocks list
//! ("located in a bad block": `dir.bb_inode`) and EA inodes no xattr references (pass 4
//! "Unattached inode" of an EA_INODE: `link.unattached`) are asserted like the rest.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;
use common::{corpus, have};

/// Decompress corpus image `name` into `tmp`.
fn corpus_image(dir: &Path, tmp: &Path, name: &str) -> Option<std::path::PathBuf> {
    let out = Command::new("gunzip")
        .arg("-c")
        .arg(dir.join(name).join("image.gz"))
        .output()
        .ok()?;
    let p = tmp.join(format!("{name}.img"));
    std::fs::write(&p, out.stdout).ok()?;
    Some(p)
}

/// Run a command with a deadline; (exit code, stdout).
fn run_with_deadline(cmd: &mut Command, secs: u64) -> (Option<i32>, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut s);
        s
    });
    let code = match common::wait_bounded(&mut child, Duration::from_secs(secs)) {
        (_, true) => None,
        (st, false) => st.code(),
    };
    let s = reader.join().unwrap_or_default();
    (code, String::from_utf8_lossy(&s).into_owned())
}

/// A pass-2 line that is a pass-1 inode problem shown with its path.
fn bad_inode_line(l: &str) -> bool {
    const PATTERNS: &[&str] = &[
        "is an illegal",
        "Symlink ",
        "i_file_acl",
        "i_faddr",
        "i_blocks_hi",
        "i_size_high",
        "i_dir_acl",
        "Extended attribute block",
        "should be 0).",
        "has a bad extended attribute",
        "has an invalid extended attribute",
        "Filesystem contains large files",
        "revision 0 filesystem",
    ];
    PATTERNS.iter().any(|p| l.contains(p))
}

/// The passes (2, 3, 4) in which e2fsck -fn reported problems of this checker's families.
fn e2fsck_passes(out: &str) -> Vec<char> {
    let mut pass = '0';
    let mut found = Vec::new();
    for l in out.lines() {
        if let Some(rest) = l.strip_prefix("Pass ") {
            pass = match rest.get(..2) {
                Some("3A") => '2', // directory rehash: duplicates and bad htrees
                _ => rest.chars().next().unwrap_or('0'),
            };
            continue;
        }
        let l = l.trim();
        if l.is_empty() || !matches!(pass, '2' | '3' | '4') {
            continue;
        }
        // Prompts on their own line ("Fix? no", "Connect to /lost+found? no") belong to the
        // message above.
        if l.ends_with("? no") && !l.contains(". ") {
            continue;
        }
        if l.starts_with("Marking ") || l.starts_with("Will ") || l.starts_with("Cannot proceed") {
            continue;
        }
        if pass == '2' && bad_inode_line(l) {
            continue;
        }
        if !found.contains(&pass) {
            found.push(pass);
        }
    }
    found
}

fn family_matches(pass: char, rule: &str) -> bool {
    match pass {
        '2' => rule.starts_with("dir.") || rule.starts_with("htree."),
        '3' => rule.starts_with("connect."),
        _ => rule.starts_with("link."),
    }
}

#[test]
fn corpus_directory_families() {
    let Some(dir) = corpus() else {
        eprintln!("SKIP: ../shared/corpus/e2fsprogs not found next to the repository");
        return;
    };
    if !have("e2fsck") {
        eprintln!("SKIP: e2fsck not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("image.gz").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // pass -> (images e2fsck flags, images we flag, misses)
    let mut table: BTreeMap<char, (u32, u32, Vec<String>)> = BTreeMap::new();
    for name in &names {
        let Some(img) = corpus_image(&dir, tmp.path(), name) else {
            continue;
        };
        let (code, out) = run_with_deadline(Command::new("e2fsck").arg("-fn").arg(&img), 60);
        let passes = e2fsck_passes(&out);
        // e2fsck -n never replays the journal, so its verdict is on the bytes as they are.
        let (_, json) = run_with_deadline(
            Command::new(common::bin())
                .args(["check", "--json", "--no-replay"])
                .arg(&img),
            60,
        );
        std::fs::remove_file(&img).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
        let rules: Vec<String> = v["images"][0]["findings"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|f| f["severity"] == "error")
                    .filter_map(|f| f["rule"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        if code == Some(0) {
            continue;
        }
        for &p in &passes {
            let e = table.entry(p).or_default();
            e.0 += 1;
            if rules.iter().any(|r| family_matches(p, r)) {
                e.1 += 1;
            } else {
                e.2.push(format!("{name} ({})", rules.join(" ")));
            }
        }
    }
    println!("pass  e2fsck  check  misses");
    for (p, (n, ok, misses)) in &table {
        println!("{p:>4}  {n:>6}  {ok:>5}  {}", misses.join(", "));
    }
    assert!(!table.is_empty(), "no image with pass 2-4 problems");
    let misses: Vec<&String> = table.values().flat_map(|t| &t.2).collect();
    assert!(misses.is_empty(), "not flagged: {misses:?}");
}
