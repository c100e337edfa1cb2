//! Terminal behaviour of every command that prints a table (format::table): on a terminal (a
//! pseudo-terminal made by script(1)) the width follows COLUMNS, else the terminal's, and only
//! the longest column wraps; on a pipe a table keeps its natural width, one line per row,
//! whatever COLUMNS says. Borders are ASCII under
//! LANG=C or TERM=dumb and box drawing under a UTF-8 locale; no progress output on a pipe.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// An image with files carrying xattrs (tables in xattrs) and one damaged inode (a check summary).
fn image(dir: &Path) -> Option<PathBuf> {
    if !have("mke2fs") || !have("debugfs") {
        eprintln!("skipping: mke2fs/debugfs not installed");
        return None;
    }
    let tree = dir.join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    for i in 0..4 {
        std::fs::write(tree.join(format!("f{i}")), b"x").unwrap();
    }
    let img = mkfs(
        dir,
        "t.img",
        8 << 20,
        &["-t", "ext4", "-I", "256", "-d", tree.to_str().unwrap()],
    );
    let debugfs = which("debugfs").unwrap();
    for req in [
        "ea_set /f0 user.comment hello",
        "ea_set /f1 user.tag a-longer-value-than-the-first",
        "sif /f2 mode 0",
        "ssv free_blocks_count 5",
    ] {
        let out = run(Command::new(&debugfs).args(["-w", "-R", req]).arg(&img));
        assert!(out.status.success(), "{req}: {out:?}");
    }
    Some(img)
}

/// Run with a controlled terminal environment (stdout and stderr are pipes).
fn run_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    for k in ["COLUMNS", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "NO_COLOR"] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

/// Run on a terminal (a pseudo-terminal made by script(1), stderr discarded) with a controlled
/// environment; `None` (after a SKIP line) when script(1) is not there. Its output with the
/// terminal's `\r\n` line ends as `\n`.
fn run_tty(args: &[&str], env: &[(&str, &str)]) -> Option<String> {
    let Some(script) = which("script") else {
        eprintln!("SKIP: script(1) not installed (needed for a terminal)");
        return None;
    };
    let quote = |a: &str| format!("'{}'", a.replace('\'', "'\\''"));
    let mut line = quote(&bin().display().to_string());
    for a in args {
        line.push(' ');
        line.push_str(&quote(a));
    }
    line.push_str(" 2>/dev/null");
    let mut cmd = Command::new(script);
    cmd.args(["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .env("SHELL", "/bin/sh");
    for k in [
        "COLUMNS", "LINES", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "NO_COLOR",
    ] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(&mut cmd);
    Some(String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"))
}

/// The commands that print tables, on this image.
fn table_commands(img: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        v(&["check", img]),
        v(&["check", "--list-rules"]),
        v(&["xattrs", img]),
        v(&["fit", "--list-profiles"]),
        v(&["fit", "--profile", "selinux,posix-acl", "--from-image", img]),
        v(&["advise", "--size", "100G", "--files", "1000000"]),
    ]
}

/// Lines drawn as table borders or rows.
fn table_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            let c = l.chars().next();
            matches!(c, Some('+' | '|' | '┌' | '│' | '╞' | '├' | '└' | '╭' | '╰'))
        })
        .collect()
}

/// True when `l` contains a box-drawing character (U+2500..U+257F).
fn has_box_drawing(l: &str) -> bool {
    l.chars().any(|c| ('\u{2500}'..='\u{257F}').contains(&c))
}

#[test]
fn tables_fit_80_columns_in_ascii_under_lang_c_and_term_dumb() {
    let dir = tempfile::tempdir().unwrap();
    let Some(img) = image(dir.path()) else { return };
    let img = img.to_str().unwrap();
    let envs: [&[(&str, &str)]; 3] = [
        &[("COLUMNS", "80"), ("TERM", "dumb"), ("LANG", "C")],
        &[("COLUMNS", "80"), ("LANG", "C")],
        &[("COLUMNS", "80"), ("TERM", "dumb"), ("LANG", "en_US.UTF-8")],
    ];
    for env in envs {
        for args in table_commands(img) {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let Some(text) = run_tty(&a, env) else { return };
            let rows = table_lines(&text);
            assert!(!rows.is_empty(), "{a:?} {env:?}: no table in {text}");
            for l in &rows {
                assert!(l.chars().count() <= 80, "{a:?} {env:?}: {l:?}");
                // Borders are ASCII (cell text is whatever the command prints).
                assert!(!has_box_drawing(l), "{a:?} {env:?}: {l:?}");
            }
            // The same environment on a pipe: ASCII too, and no progress output.
            let o = run_env(&a, env);
            assert!(
                !has_box_drawing(&String::from_utf8_lossy(&o.stdout)),
                "{a:?} {env:?}"
            );
            assert!(o.stderr.is_empty() || !String::from_utf8_lossy(&o.stderr).contains('\r'));
        }
    }
}

#[test]
fn tables_use_box_drawing_under_utf8_and_follow_columns() {
    let dir = tempfile::tempdir().unwrap();
    let Some(img) = image(dir.path()) else { return };
    let img = img.to_str().unwrap();
    for width in [60usize, 80, 132] {
        let cols = width.to_string();
        let env = [
            ("COLUMNS", cols.as_str()),
            ("LANG", "en_US.UTF-8"),
            ("TERM", "xterm"),
        ];
        for args in table_commands(img) {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let Some(text) = run_tty(&a, &env) else {
                return;
            };
            let rows = table_lines(&text);
            assert!(!rows.is_empty(), "{a:?}: no table in {text}");
            assert!(
                rows.iter().any(|l| has_box_drawing(l)),
                "{a:?}: not box drawing: {text}"
            );
            for l in &rows {
                assert!(l.chars().count() <= width, "{a:?} COLUMNS={width}: {l:?}");
            }
        }
    }
    // The rule catalogue has long descriptions: it fills a wide terminal and wraps in a narrow one.
    let lines = |cols: &str| {
        let text = run_tty(
            &["check", "--list-rules"],
            &[("COLUMNS", cols), ("LANG", "C.UTF-8")],
        );
        text.unwrap_or_default().lines().count()
    };
    assert!(lines("60") > lines("200"));
}

#[test]
fn lc_all_overrides_lang_and_no_progress_on_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let Some(img) = image(dir.path()) else { return };
    let img = img.to_str().unwrap();
    let o = run_env(
        &["check", img],
        &[("LC_ALL", "C"), ("LANG", "en_US.UTF-8"), ("NO_COLOR", "1")],
    );
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!has_box_drawing(&text), "{text}");
    // No escape sequences (colour or cursor movement) on a pipe, and nothing on stderr: the
    // progress bar is for terminals only.
    assert!(!text.contains('\x1b'), "{text}");
    assert!(
        o.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run_env(&["xattrs", img], &[("LANG", "C.UTF-8")]);
    assert!(
        o.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The number of entries of `key` in the JSON document of `args` (summed over `outer` entries
/// when given: profiles hold attributes).
fn json_count(args: &[&str], outer: Option<&str>, key: &str) -> usize {
    let o = run_env(args, &[]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    match outer {
        Some(outer) => doc[outer]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x[key].as_array().unwrap().len())
            .sum(),
        None => doc[key].as_array().unwrap().len(),
    }
}

#[test]
fn piped_tables_keep_one_line_per_row() {
    // Off a terminal nothing wraps, COLUMNS set or not (a shell or harness may export it): a
    // table is its top border, header, separator, one line per row and bottom border, whatever
    // the length of its cells.
    let cases: [(&[&str], usize); 2] = [
        (
            &["check", "--list-rules"],
            json_count(&["check", "--list-rules", "--json"], None, "rules"),
        ),
        (
            &["fit", "--list-profiles"],
            json_count(
                &["fit", "--list-profiles", "--json"],
                Some("profiles"),
                "attrs",
            ),
        ),
    ];
    for (args, rows) in cases {
        assert!(rows > 0, "{args:?}");
        let envs = [
            &[("LANG", "C")][..],
            &[("LANG", "C.UTF-8")][..],
            &[("LANG", "C.UTF-8"), ("COLUMNS", "80")][..],
        ];
        for env in envs {
            let o = run_env(args, env);
            let text = String::from_utf8(o.stdout).unwrap();
            assert_eq!(
                table_lines(&text).len(),
                rows + 4,
                "{args:?} {env:?}: {text}"
            );
        }
    }
}
