//! Operational errors of every image-reading command: one line on stderr, `e4inspect: PATH: ...`
//! naming the path once, exit 8 (issue 15, "Errors repeat themselves").

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// Each command that opens an image, with the arguments that follow the image.
const COMMANDS: &[(&str, &[&str])] = &[
    ("dump", &[]),
    ("check", &[]),
    ("inode", &["2"]),
    ("ls", &[]),
    ("cat", &["2"]),
    ("xattrs", &["--no-progress"]),
    ("journal", &[]),
    ("freefrag", &[]),
];

fn assert_one_line(cmd: &str, args: &[&str], image: &Path, case: &str) {
    let mut c = Command::new(bin());
    c.arg(cmd).arg(image).args(args);
    let o = run(&mut c);
    let err = String::from_utf8_lossy(&o.stderr);
    let what = format!("{cmd} on {case}");
    assert_eq!(
        o.status.code(),
        Some(8),
        "{what}: exit {:?}, stderr {err:?}",
        o.status.code()
    );
    assert_eq!(
        err.lines().count(),
        1,
        "{what}: expected one stderr line, got {err:?}"
    );
    let path = image.display().to_string();
    let prefix = format!("e4inspect: {path}: ");
    assert!(
        err.starts_with(&prefix),
        "{what}: expected {prefix:?} first, got {err:?}"
    );
    assert_eq!(
        err.matches(&path).count(),
        1,
        "{what}: path not named exactly once: {err:?}"
    );
    let rest = &err[prefix.len()..];
    assert!(
        !rest.trim().is_empty(),
        "{what}: says nothing after the path"
    );
    // No part of the message is said twice (the OS reason repeated after the library's text).
    let parts: Vec<&str> = rest.trim_end().split(": ").collect();
    for (i, p) in parts.iter().enumerate() {
        assert!(
            !parts[i + 1..].contains(p),
            "{what}: {p:?} repeated in {err:?}"
        );
    }
}

#[test]
fn operational_errors_are_one_line_naming_the_path_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let missing = d.join("missing.img");
    let zeros = d.join("zeros.img");
    std::fs::File::create(&zeros)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    for (cmd, args) in COMMANDS {
        assert_one_line(cmd, args, &missing, "a missing file");
        assert_one_line(cmd, args, d, "a directory");
        assert_one_line(cmd, args, &zeros, "zeros (bad magic)");
    }
    let missing_os = run(Command::new(bin()).arg("dump").arg(&missing));
    let err = String::from_utf8_lossy(&missing_os.stderr);
    assert_eq!(
        err.matches("os error 2").count(),
        1,
        "the OS reason must appear once: {err:?}"
    );
}
