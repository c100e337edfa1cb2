//! Exit statuses (src/cli/exit.rs): 0 fine, 4 problems, 8 operational, 16 usage; over several
//! images the bitwise OR. One image, several, mixed; the rule policy flags; usage errors of
//! `check` and `fit`.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Fixtures: a clean image, one with errors (a file whose mode is 0), one with warnings only
/// (a stale superblock free-blocks count), a missing path and a file that is not ext2/3/4.
struct Fixtures {
    _dir: tempfile::TempDir,
    good: PathBuf,
    bad: PathBuf,
    warn: PathBuf,
    missing: PathBuf,
    junk: PathBuf,
}

fn fixtures() -> Option<Fixtures> {
    if !have("mke2fs") || !have("debugfs") {
        eprintln!("skipping: mke2fs/debugfs not installed");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("a"), b"hello").unwrap();
    std::fs::write(tree.join("sub/b"), b"world").unwrap();
    let t = tree.to_str().unwrap();
    let make = |name: &str| mkfs(dir.path(), name, 4 << 20, &["-t", "ext4", "-d", t]);
    let good = make("good.img");
    let bad = make("bad.img");
    debugfs_w(&bad, "sif /a mode 0");
    let warn = make("warn.img");
    debugfs_w(&warn, "ssv free_blocks_count 5");
    let junk = dir.path().join("junk.img");
    std::fs::write(&junk, vec![0x5Au8; 1 << 20]).unwrap();
    Some(Fixtures {
        missing: dir.path().join("missing.img"),
        good,
        bad,
        warn,
        junk,
        _dir: dir,
    })
}

fn e4(args: &[&str], images: &[&Path]) -> Output {
    run(Command::new(bin()).args(args).args(images))
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit status")
}

#[test]
fn check_exit_status_table() {
    let Some(f) = fixtures() else { return };
    let (g, b, w, m, j) = (
        f.good.as_path(),
        f.bad.as_path(),
        f.warn.as_path(),
        f.missing.as_path(),
        f.junk.as_path(),
    );
    // (images, expected status): one image, several, mixed.
    let table: &[(&[&Path], i32)] = &[
        (&[g], 0),
        (&[w], 0),
        (&[b], 4),
        (&[m], 8),
        (&[j], 8),
        (&[g, g], 0),
        (&[g, w], 0),
        (&[g, b], 4),
        (&[b, g], 4),
        (&[g, m], 8),
        (&[m, j], 8),
        (&[g, b, m], 12),
        (&[m, b, g], 12),
        (&[b, w, j, g], 12),
    ];
    for format in ["text", "json", "junit", "github"] {
        for (images, want) in table {
            let o = e4(&["check", "--format", format], images);
            assert_eq!(code(&o), *want, "check --format {format} {images:?}: {o:?}");
            let failed = images.iter().filter(|p| **p == m || **p == j).count();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(err.lines().count(), failed, "{images:?}: {err}");
        }
    }
    // --json is the shorthand of --format json, whatever the number of images.
    assert_eq!(code(&e4(&["check", "--json"], &[g, b, m])), 12);
}

#[test]
fn policy_flags_change_the_status() {
    let Some(f) = fixtures() else { return };
    let (b, w) = (f.bad.as_path(), f.warn.as_path());
    let table: &[(&[&str], &Path, i32)] = &[
        // Warnings alone pass; --werror / --deny make them fail.
        (&[], w, 0),
        (&["--werror"], w, 4),
        (&["--deny", "warnings"], w, 4),
        (&["--deny", "count"], w, 4),
        (&["--deny", "count.sb_free_blocks"], w, 4),
        (&["--deny", "count", "--allow", "usage"], w, 4),
        (&["--deny", "count", "--warn", "count.sb_free_blocks"], w, 0),
        // Errors fail; downgraded or allowed they do not.
        (&[], b, 4),
        (&["--warn", "inode,dir"], b, 0),
        (&["--warn", "inode"], b, 4),
        (&["--allow", "inode.mode", "--allow", "dir.filetype"], b, 0),
        (
            &["--allow", "inode", "--deny", "inode.mode", "--allow", "dir"],
            b,
            4,
        ),
        (&["--max-findings", "0"], b, 4),
    ];
    for (args, img, want) in table {
        let mut a = vec!["check"];
        a.extend_from_slice(args);
        let o = e4(&a, &[img]);
        assert_eq!(code(&o), *want, "{a:?} {}: {o:?}", img.display());
    }
    // Allowed rules vanish from the output; downgraded ones are printed as warnings.
    let o = e4(&["check", "--allow", "inode.mode"], &[b]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("[inode.mode]"), "{text}");
    assert!(text.contains("error[dir.filetype]"), "{text}");
    let o = e4(&["check", "--warn", "dir.filetype"], &[b]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("warning[dir.filetype]"), "{text}");
}

#[test]
fn usage_errors_exit_16() {
    let Some(f) = fixtures() else { return };
    let g = f.good.as_path();
    for (args, needle) in [
        (
            &["check", "--allow", "sb.magik"][..],
            "did you mean 'sb.magic'",
        ),
        (&["check", "--deny", "inod"][..], "did you mean 'inode'"),
        (&["check", "--warn", "nonsense.rule"][..], "--list-rules"),
        (&["check", "--allow", "sb", "--deny", "sb"][..], "both"),
        (&["check", "--format", "xml"][..], "xml"),
        (&["check", "--json", "--format", "text"][..], "--format"),
        (&["check", "--max-findings", "-1"][..], "-1"),
    ] {
        let o = e4(args, &[g]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 16, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(code(&e4(&["check"], &[])), 16);
}

#[test]
fn fit_usage_errors_exit_16() {
    for args in [
        &["fit"][..],
        &["fit", "--xattr", "user.a=12", "--inode-size", "300"],
        &["fit", "--xattr", "user.a=12", "--inode-size", "8192"],
        &["fit", "--profile", "selinx"],
        &["fit", "--xattr", "user.a=12", "--block-size", "0"],
        &["fit", "--xattr", "user.a=12", "--block-size", "3000"],
        &["fit", "--xattr", "user.a=12", "--extra-isize", "30"],
        &["fit", "--xattr", "user.a"],
        &["fit", "--xattr", "user.a=big"],
    ] {
        let o = e4(args, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 16, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let o = e4(&["fit", "--profile", "selinx"], &[]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("selinux"));
    // Still operational: an input that cannot be read.
    let o = e4(&["fit", "--from-image", "/nonexistent/x.img"], &[]);
    assert_eq!(code(&o), 8);
}
