//! Shared helpers for integration tests: the built binary, e2fsprogs tools, fixtures.
#![allow(dead_code)]

pub mod crash;
pub mod damage;
pub mod images;
pub mod trees;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Path of the e4inspect binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_e4inspect"))
}

/// True when `tool` is on PATH (or in /sbin, /usr/sbin).
pub fn have(tool: &str) -> bool {
    which(tool).is_some()
}

/// Full path of a tool.
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/sbin", "/usr/sbin"])
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file());
    found
}

/// Run a command, returning its output.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// Make a filesystem image of `size` bytes with `mke2fs ARGS` (reproducible: fixed time and UUID).
pub fn mkfs(dir: &Path, name: &str, size: u64, args: &[&str]) -> PathBuf {
    let img = dir.join(name);
    let f = std::fs::File::create(&img).unwrap();
    f.set_len(size).unwrap();
    drop(f);
    let mke2fs = which("mke2fs").expect("mke2fs");
    let out = run(Command::new(mke2fs)
        .args([
            "-q",
            "-F",
            "-U",
            "7d4c2a6e-1b3f-4e5d-9a8b-0c1d2e3f4a5b",
            "-E",
            "lazy_itable_init=1,lazy_journal_init=1",
        ])
        .args(args)
        .arg(&img)
        .env("E2FSPROGS_FAKE_TIME", "1700000000")
        .env("MKE2FS_CONFIG", "/etc/mke2fs.conf"));
    assert!(
        out.status.success(),
        "mke2fs {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    img
}

/// The e2fsprogs test corpus next to the repository (../shared/corpus/e2fsprogs), if present.
pub fn corpus() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/e2fsprogs");
    p.is_dir().then_some(p)
}

/// Decompress a corpus image into `dir`.
pub fn corpus_image(dir: &Path, name: &str) -> Option<PathBuf> {
    let c = corpus()?;
    let gz = c.join(name).join("image.gz");
    let out = run(Command::new("gunzip").arg("-c").arg(&gz));
    if !out.status.success() {
        return None;
    }
    let p = dir.join(format!("{name}.img"));
    std::fs::write(&p, out.stdout).ok()?;
    Some(p)
}

/// Names of the corpus images.
pub fn corpus_names() -> Vec<String> {
    let Some(c) = corpus() else { return Vec::new() };
    let mut v: Vec<String> = std::fs::read_dir(c)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("image.gz").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `e4inspect check --json IMG`: the exit status, the rule ID of every finding of the (single)
/// image in order, and the whole document.
pub fn check_rules(img: &Path) -> (i32, Vec<String>, serde_json::Value) {
    let out = Command::new(bin())
        .args(["check", "--json"])
        .arg(img)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check --json: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let rules = v["images"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect();
    (out.status.code().unwrap_or(-1), rules, v)
}

/// `debugfs -R REQUEST IMG` (read-only), its whole output.
pub fn debugfs(img: &Path, request: &str) -> Output {
    run(Command::new(which("debugfs").expect("debugfs"))
        .env("TZ", "UTC")
        .args(["-R", request])
        .arg(img))
}
