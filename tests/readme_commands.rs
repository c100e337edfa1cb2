//! Every command shown in README.md and docs/*.md runs, against the shipped fixture, with the exit
//! status the text implies: 0, or the `# exit N` comment ending its line.
//!
//! Commands are the lines of `sh`/`bash`/`shell` code blocks, and the `$ ` lines of `console`
//! blocks, that start (after `VAR=value` assignments) with `e4inspect ` or
//! `cargo run --release -- `; `text` blocks are not run (usage synopses, other tools' output).
//! Each runs under `sh -c` in its own temporary directory holding `fixtures/` and `docs/`, with
//! the built binary first on `PATH` (`cargo run --release --` becomes that binary).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// One command found in a document.
#[derive(Debug)]
struct Shown {
    file: String,
    line: usize,
    text: String,
    expected: i32,
}

const RUN_PREFIX: &str = "cargo run --release -- ";

fn is_command(line: &str) -> bool {
    let mut rest = line.trim_start();
    // Leading environment assignments (TZ=UTC ...).
    while let Some((word, after)) = rest.split_once(' ') {
        if word.contains('=') && !word.starts_with('-') {
            rest = after.trim_start();
        } else {
            break;
        }
    }
    rest.starts_with("e4inspect ") || rest.starts_with(RUN_PREFIX)
}

/// The `# exit N` at the end of a line, or 0.
fn expected_status(line: &str) -> i32 {
    line.rsplit_once('#')
        .and_then(|(_, c)| c.trim().strip_prefix("exit "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

fn commands_in(file: &Path, name: &str) -> Vec<Shown> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(lang.trim().to_string()),
            };
            continue;
        }
        let cmd = match fence.as_deref() {
            Some("sh" | "bash" | "shell") => Some(line),
            Some("console") => line.strip_prefix("$ "),
            _ => None,
        };
        if let Some(cmd) = cmd.filter(|c| is_command(c)) {
            out.push(Shown {
                file: name.to_string(),
                line: i + 1,
                text: cmd.to_string(),
                expected: expected_status(cmd),
            });
        }
    }
    out
}

fn documents() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![(root.join("README.md"), "README.md".to_string())];
    let mut md: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    md.sort();
    for p in md {
        let name = format!("docs/{}", p.file_name().unwrap().to_string_lossy());
        docs.push((p, name));
    }
    docs
}

/// A scratch directory with the fixtures and docs the commands name.
fn scratch() -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    for name in ["fixtures", "docs"] {
        std::os::unix::fs::symlink(root.join(name), d.path().join(name)).unwrap();
    }
    d
}

fn run_shown(s: &Shown, bin_dir: &Path) -> Result<(), String> {
    let dir = scratch();
    let text = s.text.replace(RUN_PREFIX, "e4inspect ");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = common::run(
        Command::new("sh")
            .arg("-c")
            .arg(&text)
            .current_dir(dir.path())
            .env("PATH", path),
    );
    let code = o.status.code().unwrap_or(-1);
    if code == s.expected {
        Ok(())
    } else {
        Err(format!(
            "{}:{}: `{}` exited {code}, expected {}: {}",
            s.file,
            s.line,
            s.text,
            s.expected,
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

#[test]
fn every_shown_command_runs_with_its_status() {
    let bin_dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(common::bin(), bin_dir.path().join("e4inspect")).unwrap();
    let mut shown = Vec::new();
    for (path, name) in documents() {
        shown.extend(commands_in(&path, &name));
    }
    let readme: Vec<&Shown> = shown.iter().filter(|s| s.file == "README.md").collect();
    assert!(
        readme
            .iter()
            .any(|s| s.text == "cargo run --release -- dump fixtures/example.img"),
        "README lost the newcomer command"
    );
    assert!(readme.len() >= 10, "README shows {} commands", readme.len());
    let failures: Vec<String> = shown
        .iter()
        .filter_map(|s| run_shown(s, bin_dir.path()).err())
        .collect();
    eprintln!("{} commands run from README.md and docs/", shown.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn extraction_rules() {
    assert!(is_command("e4inspect dump x"));
    assert!(is_command("TZ=UTC cargo run --release -- inode x 12"));
    assert!(!is_command("cargo test --release"));
    assert!(!is_command(
        "truncate -s 8T fs.img && e4inspect dump fs.img"
    ));
    assert_eq!(expected_status("e4inspect check bad.img   # exit 4"), 4);
    assert_eq!(expected_status("e4inspect check x  # exit 4 on errors"), 0);
    assert_eq!(expected_status("e4inspect dump x"), 0);
}
