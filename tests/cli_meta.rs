//! The shipped man page matches the clap definition; completions generate; the README example runs.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// The man pages in `man/`, by file name.
fn shipped_pages(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".1"))
        .map(|n| {
            let b = std::fs::read(dir.join(&n)).unwrap();
            (n, b)
        })
        .collect()
}

/// `man/` holds exactly the pages generated from the clap definition, one per command.
/// Regenerate with `E4INSPECT_BLESS=1 cargo test --release --test cli_meta` (or
/// `cargo run --release -- manpages man/` after removing the old pages).
#[test]
fn man_pages_are_current() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(Command::new(bin()).arg("manpages").arg(tmp.path()));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fresh = shipped_pages(tmp.path());
    let man = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    if std::env::var_os("E4INSPECT_BLESS").is_some() {
        std::fs::create_dir_all(&man).unwrap();
        for old in shipped_pages(&man).keys() {
            std::fs::remove_file(man.join(old)).unwrap();
        }
        for (name, roff) in &fresh {
            std::fs::write(man.join(name), roff).unwrap();
        }
    }
    let shipped = shipped_pages(&man);
    let names =
        |m: &std::collections::BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&shipped),
        names(&fresh),
        "man/ pages differ from the commands: regenerate with E4INSPECT_BLESS=1 cargo test --release --test cli_meta"
    );
    for (name, roff) in &fresh {
        assert!(
            shipped[name] == *roff,
            "man/{name} is stale: regenerate with E4INSPECT_BLESS=1 cargo test --release --test cli_meta"
        );
    }
    // One page per visible command, and the top page's SEE ALSO names only pages that exist.
    let help = run(Command::new(bin()).arg("--help"));
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(
        commands.contains(&"dump") && commands.contains(&"advise"),
        "{help}"
    );
    for c in &commands {
        assert!(
            shipped.contains_key(&format!("e4inspect-{c}.1")),
            "no page for {c}"
        );
    }
    let top = String::from_utf8_lossy(&shipped["e4inspect.1"]).to_string();
    let see_also = top
        .split(".SH \"SEE ALSO\"")
        .nth(1)
        .expect("SEE ALSO section");
    let mut named = 0;
    for part in see_also.split("\\fB").skip(1) {
        // `\%` keeps the name from being hyphenated; not part of it.
        let page = part.split("\\fR").next().unwrap().replace("\\-", "-");
        let page = page.trim_start_matches("\\%");
        if page.starts_with("e4inspect") {
            named += 1;
            assert!(
                shipped.contains_key(&format!("{page}.1")),
                "SEE ALSO names {page}(1), which is not in man/"
            );
        }
    }
    assert_eq!(named, commands.len(), "SEE ALSO: {see_also}");
}

#[test]
fn completions_offer_values_and_no_hidden_command() {
    for sh in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = run(Command::new(bin()).args(["completions", sh]));
        assert!(o.status.success(), "{sh}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("e4inspect") && text.contains("dump"),
            "{sh}: {text:.200}"
        );
        // The hidden man-page generator is not offered.
        assert!(!text.contains("manpages"), "{sh} offers the hidden command");
        if sh != "elvish" && sh != "powershell" {
            // Profile names are offered for --profile (fit and advise).
            for p in e4inspect::profiles::PROFILES {
                assert!(
                    text.contains(p.name),
                    "{sh}: profile {} not offered",
                    p.name
                );
            }
        }
    }
    // Sizes and counts do not complete to file names (zsh: an empty action, not _default).
    let zsh = run(Command::new(bin()).args(["completions", "zsh"]));
    let zsh = String::from_utf8_lossy(&zsh.stdout);
    let size_lines: Vec<&str> = zsh
        .lines()
        .filter(|l| l.contains("]:SIZE:") || l.contains("]:BYTES:") || l.contains("]:N:"))
        .collect();
    assert!(!size_lines.is_empty());
    for l in size_lines {
        assert!(!l.contains("_default") && !l.contains("_files"), "{l}");
    }
    // Rule options, where a command has them, offer every rule ID of the catalogue.
    for opt in ["--allow=", "--warn=", "--deny="] {
        for l in zsh.lines().filter(|l| l.contains(opt)) {
            for r in e4inspect::check::RULES {
                assert!(l.contains(r.id.as_str()), "{opt} does not offer {}", r.id);
            }
        }
    }
}

#[test]
fn shipped_fixture_dumps_like_dumpe2fs() {
    let img = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example.img");
    let e = run(Command::new(bin()).args(["dump", img]).env("TZ", "UTC"));
    assert_eq!(e.status.code(), Some(0));
    let text = String::from_utf8_lossy(&e.stdout);
    assert!(text.contains("Filesystem volume name:   example"));
    assert!(text.contains("Group 0: (Blocks 1-"));
    if have("dumpe2fs") {
        let d = run(Command::new(which("dumpe2fs").unwrap())
            .arg(img)
            .env("TZ", "UTC"));
        assert!(d.stdout == e.stdout, "fixture dump differs from dumpe2fs");
    }
}

#[test]
fn image_is_never_written() {
    // The source is opened O_RDONLY: a read-only copy works, and its bytes do not change.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("ro.img");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example.img"),
        &p,
    )
    .unwrap();
    let before = std::fs::read(&p).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    for args in [&["dump"][..], &["dump", "-h"], &["dump", "--json"]] {
        let o = run(Command::new(bin()).args(args).arg(&p));
        assert_eq!(o.status.code(), Some(0), "{args:?}");
    }
    assert!(std::fs::read(&p).unwrap() == before, "image changed");
}

/// `docs/rules.md` as generated from the catalogue (`e4inspect::check::RULES`) and the e2fsck
/// problem table (`e4inspect::check::problems::PROBLEMS`).
fn rules_markdown() -> String {
    use e4inspect::check::problems::{problem, Verdict};
    let mut md = String::from(
        "# Rule catalogue of `e4inspect check`\n\n\
         Generated from `src/check/rules.rs` and `src/check/problems.rs` by `tests/cli_meta.rs`\n\
         (regenerate with `E4INSPECT_BLESS=1 cargo test --release --test cli_meta`);\n\
         `e4inspect check --list-rules [--json]` prints the same catalogue. IDs are stable: CI\n\
         configurations match on them.\n\n\
         ## How severity is decided\n\n\
         A rule is an **error** (exit 4) when the kernel refuses the damage (the mount fails, or an\n\
         `EXT4-fs error` on first access); otherwise when one of its e2fsck problems is left\n\
         uncorrected by `e2fsck -n` (a prompted problem without `PR_NO_OK`: `fix_problem` calls\n\
         `ext2fs_unmark_valid` on the \"no\"; a `PR_FATAL` one, or one whose caller aborts);\n\
         otherwise when libext2fs refuses to open the filesystem. It is a **warning** (exit 0)\n\
         when the kernel repairs it itself (orphans, lazy free counters, journal recovery), or when\n\
         e2fsck reports it and accepts the \"no\" (`PR_NO_OK`, `PROMPT_NONE`, a journal problem met\n\
         before `ext2fs_mark_valid`). The unit test `severity_follows_the_stated_rule` derives every\n\
         severity from the columns below and fails on a mismatch; where the kernel's verdict\n\
         overrides e2fsck's, the deviation column says why. `check --deny warnings` (or\n\
         `--werror`) makes warnings fail too.\n\n\
         | rule | severity | description | enforced by | e2fsck problems (prompt, flags: -n verdict) | kernel | deviation from e2fsck |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    let verdict = |v: Verdict| match v {
        Verdict::Accepted => "accepted",
        Verdict::Uncorrected => "uncorrected",
        Verdict::Aborted => "aborts",
    };
    for r in e4inspect::check::RULES {
        let enforced: Vec<&str> = r.enforced_by.iter().map(|e| e.name()).collect();
        let problems: Vec<String> = r
            .e2fsck
            .iter()
            .map(|c| match problem(c) {
                Some(p) => format!(
                    "`{c}` ({}, {}: {})",
                    p.prompt,
                    p.flags,
                    verdict(p.verdict())
                ),
                None => format!("`{c}`"),
            })
            .collect();
        let or_dash = |v: String| if v.is_empty() { "-".to_string() } else { v };
        md.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            r.id,
            r.severity.name(),
            r.description.replace('|', "\\|"),
            or_dash(enforced.join(", ")),
            or_dash(problems.join("; ")),
            r.kernel.describe().replace('|', "\\|"),
            or_dash(r.deviation.replace('|', "\\|"))
        ));
    }
    md.push_str(
        "\nEnforced by: `kernel` = refused or reported at mount / first use; `libext2fs-open` =\n\
         `ext2fs_open2` refuses (dumpe2fs, debugfs, e2fsck fail); `libext2fs-check-desc` =\n\
         `ext2fs_check_desc` (e2fsck falls back to the backup descriptors); `e2fsck` = reported and\n\
         repaired by e2fsck; `-` = a convention of mke2fs and the kernel that nothing checks. The\n\
         e2fsck problem codes, prompts and flags are those of `e2fsck/problem.c` (e2fsprogs 1.47);\n\
         `E2FSCK_*` names what a caller does without a problem code (`E2FSCK_UNMARK_VALID`:\n\
         `ext2fs_unmark_valid`; `E2FSCK_READ_BITMAPS`, `E2FSCK_MMP_BUSY`: the check aborts).\n",
    );
    md
}

/// `docs/rules.md` is the catalogue, row for row, so it cannot drift from the code; and
/// `check --list-rules --json` lists the same IDs in the same order.
#[test]
fn rule_catalogue_page_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let md = rules_markdown();
    if std::env::var_os("E4INSPECT_BLESS").is_some() {
        std::fs::write(&path, &md).unwrap();
    }
    let shipped = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        shipped == md,
        "docs/rules.md is stale: regenerate with E4INSPECT_BLESS=1 cargo test --release --test cli_meta"
    );
    let out = common::run(Command::new(common::bin()).args(["check", "--list-rules", "--json"]));
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut at = 0;
    for r in e4inspect::check::RULES {
        let quoted = format!("\"{}\"", r.id);
        let found = text[at..].find(&quoted);
        assert!(
            found.is_some(),
            "--list-rules lacks {} (or its order differs)",
            r.id
        );
        at += found.unwrap_or(0) + quoted.len();
    }
}

/// `--format json` is `--json` and `--format text` the default, on every command that prints
/// either; giving both flags is a usage error (16).
#[test]
fn format_flag_is_the_json_shorthand_everywhere() {
    let img = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example.img");
    let lines: [&[&str]; 10] = [
        &["dump", img],
        &["find", img],
        &["check", img],
        &["inode", img, "2"],
        &["ls", img, "/"],
        &["xattrs", img],
        &["fit", "--profile", "selinux", "--inode-size", "256"],
        &["advise", "--size", "1G", "--files", "1000"],
        &["freefrag", img],
        &["journal", img],
    ];
    let out = |args: &[&str], extra: &[&str]| {
        let mut c = Command::new(common::bin());
        c.arg(args[0]).args(extra).args(&args[1..]);
        c.output().unwrap()
    };
    for args in lines {
        let json = out(args, &["--json"]);
        let format_json = out(args, &["--format", "json"]);
        assert_eq!(json.status.code(), format_json.status.code(), "{args:?}");
        assert!(
            json.stdout == format_json.stdout,
            "{args:?}: --format json differs"
        );
        assert!(
            json.stdout.starts_with(b"{"),
            "{args:?}: not a JSON document"
        );
        let text = out(args, &[]);
        let format_text = out(args, &["--format", "text"]);
        assert!(
            text.stdout == format_text.stdout,
            "{args:?}: --format text differs"
        );
        let both = out(args, &["--json", "--format", "json"]);
        assert_eq!(both.status.code(), Some(16), "{args:?}: both flags");
    }
}
