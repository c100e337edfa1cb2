//! Man pages (clap_mangen) and shell completions (clap_complete), generated from the clap
//! definition so that they cannot drift from the command line.
//!
//! Both are made from [`documented`]: the command tree without hidden commands, with value hints
//! the parser itself does not need (profile names, rule IDs and families, sizes and counts that
//! are not file names). `e4inspect manpages DIR` writes one page per command (`e4inspect.1`,
//! `e4inspect-dump.1`, ...); `tests/cli_meta.rs` fails when `man/` differs and rewrites it with
//! `E4INSPECT_BLESS=1`.

use std::path::Path;

use clap::builder::PossibleValuesParser;
use clap::{Arg, Command, ValueHint};

/// The footer of every page.
const SOURCE: &str = concat!("e4inspect ", env!("CARGO_PKG_VERSION"));

/// Long options that take rule IDs or rule families (`check --allow/--warn/--deny ...`).
const RULE_ARGS: &[&str] = &["allow", "warn", "deny", "rule", "rules", "only", "skip"];

/// Value names of arguments that take a number, a size or a word: never a file name.
const NOT_A_PATH: &[&str] = &[
    "SIZE",
    "BYTES",
    "N",
    "PCT",
    "L",
    "VERSION",
    "NAME=SIZE",
    "CHUNK_KB",
    "N[,N]",
    "OPT[,OPT]",
];

/// The command tree as documented: hidden subcommands dropped (at every level), value hints
/// added.
pub fn documented(cmd: &Command) -> Command {
    let mut top = Command::new("e4inspect")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true);
    if let Some(about) = cmd.get_about() {
        top = top.about(about.clone());
    }
    if let Some(about) = cmd.get_long_about() {
        top = top.long_about(about.clone());
    }
    if let Some(help) = cmd.get_after_long_help() {
        top = top.after_long_help(help.clone());
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        top = top.subcommand(with_hints(sub.clone()));
    }
    top
}

/// Value hints on one subcommand's arguments.
fn with_hints(mut cmd: Command) -> Command {
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        cmd = cmd.mut_arg(id, hint);
    }
    cmd
}

fn hint(arg: Arg) -> Arg {
    let long = arg.get_long().unwrap_or_default();
    let value_name = arg
        .get_value_names()
        .and_then(|v| v.first())
        .map(|v| v.as_str().to_string());
    if long == "profile" {
        let names: Vec<&'static str> = e4inspect::models::profiles::PROFILES
            .iter()
            .map(|p| p.name)
            .collect();
        return arg.value_parser(PossibleValuesParser::new(names));
    }
    if RULE_ARGS.contains(&long) {
        let mut values: Vec<&'static str> = e4inspect::check::RULES
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        values.extend_from_slice(e4inspect::check::rules::FAMILIES);
        return arg.value_parser(PossibleValuesParser::new(values));
    }
    if value_name.is_some_and(|v| NOT_A_PATH.contains(&v.as_str())) {
        return arg.value_hint(ValueHint::Other);
    }
    arg
}

/// Example command lines of a page, each with what it shows.
type Examples = &'static [(&'static str, &'static str)];

/// What status 4 means for each command, and one or two examples (command line, what it
/// shows), for the EXIT STATUS and EXAMPLES sections of its page. A command without an entry
/// fails the unit test below.
const PAGE_EXTRAS: &[(&str, &str, Examples)] = &[
    (
        "dump",
        "the report was printed but met damage dumpe2fs reports and goes past (a checksum that \
         does not match, an unreadable bitmap). A read error that leaves the report incomplete \
         is 8",
        &[
            (
                "e4inspect dump -h disk.img",
                "the superblock and journal superblock only",
            ),
            (
                "e4inspect dump --json disk.img | jq .groups[0]",
                "the first group as JSON",
            ),
        ],
    ),
    (
        "check",
        "error-level findings, after --allow, --warn and --deny (warnings alone exit 0; \
         --werror makes them fail)",
        &[
            (
                "e4inspect check disk.img",
                "the full read-only fsck, findings and a summary",
            ),
            (
                "e4inspect check --deny warnings --format junit a.img b.img > check.xml",
                "a strict CI gate over two images, as JUnit XML",
            ),
        ],
    ),
    (
        "inode",
        "an inode or its xattrs are damaged (reported in the output)",
        &[
            (
                "e4inspect inode disk.img /etc/passwd",
                "the inode of a path, like debugfs stat",
            ),
            ("e4inspect inode --json disk.img 12", "inode 12 as JSON"),
        ],
    ),
    (
        "ls",
        "a damaged directory or inode was met (reported in the output)",
        &[(
            "e4inspect ls -l disk.img /home",
            "a long listing, like debugfs ls -l",
        )],
    ),
    (
        "cat",
        "a damaged inode or block map was met",
        &[(
            "e4inspect cat disk.img /etc/fstab > fstab",
            "a file's contents",
        )],
    ),
    (
        "xattrs",
        "damaged inodes or xattrs met during the scan",
        &[(
            "e4inspect xattrs disk.img",
            "every inode's xattrs summarised: names, sizes, where they live",
        )],
    ),
    (
        "fit",
        "an attribute set that cannot be stored at all (neither in-inode nor in an xattr block)",
        &[
            (
                "e4inspect fit --profile selinux,capabilities --inode-size 256,512",
                "whether a profile's xattrs fit in-inode for two inode sizes",
            ),
            (
                "e4inspect fit --from-image disk.img",
                "the xattrs of an existing image, re-placed",
            ),
        ],
    ),
    (
        "extract",
        "entries were skipped (with --strict also devices and owners an unprivileged run could \
         not recreate)",
        &[
            (
                "e4inspect extract disk.img /home ./out",
                "copy a subtree out, keeping metadata",
            ),
            (
                "e4inspect extract --tar home.tar disk.img /home",
                "the same as a pax archive, as any user",
            ),
        ],
    ),
    (
        "diff",
        "the inputs differ",
        &[
            (
                "e4inspect diff before.img after.img",
                "paths added, removed and modified, and superblock changes",
            ),
            (
                "e4inspect diff disk.img ./tree",
                "an image against a directory tree",
            ),
        ],
    ),
    (
        "advise",
        "not used",
        &[(
            "e4inspect advise --size 100G --files 1000000",
            "a verified mkfs.ext4 command line for a million files on 100 GiB",
        )],
    ),
    (
        "freefrag",
        "not used",
        &[(
            "e4inspect freefrag disk.img",
            "the free-space histogram, as e2freefrag prints it",
        )],
    ),
    (
        "quota",
        "not used (check compares the stored usage with the computed one)",
        &[
            (
                "e4inspect quota --type project disk.img",
                "every project ID, as debugfs list_quota prints it",
            ),
            (
                "e4inspect quota --type user disk.img 1000",
                "one user, as debugfs get_quota prints it",
            ),
        ],
    ),
    (
        "journal",
        "the log was cut short by damage or a read error inside it",
        &[(
            "e4inspect journal disk.img",
            "the jbd2 log, as debugfs logdump prints it",
        )],
    ),
    (
        "find",
        "damaged inodes or directories were met during the walk (listed on stderr)",
        &[
            (
                "e4inspect find disk.img /home --name '*.pdf' --size +10M",
                "large PDF files under /home",
            ),
            (
                "e4inspect find disk.img --xattr security.capability",
                "files with file capabilities",
            ),
        ],
    ),
    (
        "icheck",
        "a block number is out of range or an inode could not be read",
        &[
            (
                "e4inspect icheck disk.img 1234 5678",
                "the inodes owning two blocks, like debugfs icheck",
            ),
            (
                "e4inspect icheck --explain disk.img 1234",
                "what block 1234 is",
            ),
        ],
    ),
    (
        "ncheck",
        "an inode number is out of range or a directory could not be read",
        &[(
            "e4inspect ncheck disk.img 12 13",
            "the paths of inodes 12 and 13, like debugfs ncheck",
        )],
    ),
    (
        "completions",
        "not used",
        &[(
            "e4inspect completions bash > /etc/bash_completion.d/e4inspect",
            "install bash completions",
        )],
    ),
];

/// Text for a roff text line: backslashes and minus signs escaped, `code` in bold, and a line
/// starting with a control character guarded.
fn roff_text(line: &str) -> String {
    let mut out = String::new();
    let mut bold = false;
    for ch in line.chars() {
        match ch {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            '`' => {
                out.push_str(if bold { "\\fR" } else { "\\fB" });
                bold = !bold;
            }
            ch => out.push(ch),
        }
    }
    if bold {
        out.push_str("\\fR");
    }
    if out.starts_with('.') || out.starts_with('\'') {
        out.insert_str(0, "\\&");
    }
    out
}

/// `--help`'s after-help text as man sections: a line `HEADING:` starts a section, `- ` starts
/// a bullet (lines indented further continue it), other lines are filled paragraphs. The
/// terminal layout (hard line breaks at 100 columns) is not kept: man fills to its width.
fn help_sections(text: &str) -> String {
    let mut roff = String::new();
    for line in text.lines() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        if body.is_empty() {
            continue;
        }
        if indent == 0 && body.ends_with(':') {
            roff.push_str(&format!(".SH \"{}\"\n", body.trim_end_matches(':')));
        } else if let Some(item) = body.strip_prefix("- ") {
            roff.push_str(".IP \\(bu 2\n");
            roff.push_str(&roff_text(item));
            roff.push('\n');
        } else {
            if indent <= 2 && last_was_bullet(&roff) {
                roff.push_str(".PP\n");
            }
            roff.push_str(&roff_text(body));
            roff.push('\n');
        }
    }
    roff
}

/// True when the roff so far ends inside a bullet item (an `.IP` with no `.PP`/`.SH` after it).
fn last_was_bullet(roff: &str) -> bool {
    roff.lines()
        .rev()
        .find(|l| l.starts_with('.'))
        .is_some_and(|l| l.starts_with(".IP"))
}

/// The EXAMPLES of the top page: one line per everyday task (each command's page has more).
const TOP_EXAMPLES: Examples = &[
    (
        "e4inspect dump -h disk.img",
        "the superblock as dumpe2fs -h prints it",
    ),
    (
        "e4inspect check --deny warnings --format junit a.img b.img > check.xml",
        "a read-only fsck as a CI gate, as JUnit XML (exit 4 on problems)",
    ),
    (
        "e4inspect fit --profile selinux,capabilities --inode-size 256,512",
        "whether a profile's xattrs fit in-inode for two inode sizes",
    ),
    (
        "e4inspect find disk.img --xattr security.capability",
        "files with file capabilities",
    ),
    (
        "e4inspect icheck --sector 123456 /dev/sdb1",
        "the file holding a sector a kernel I/O error names",
    ),
];

/// An EXAMPLES section: each command line in bold with what it shows.
fn examples_section(examples: Examples) -> String {
    let mut roff = String::from(".SH EXAMPLES\n");
    for (cmd, what) in examples {
        roff.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}\n",
            roff_text(cmd),
            roff_text(what)
        ));
    }
    roff
}

/// The EXIT STATUS and EXAMPLES sections of command `name`'s page.
fn command_sections(name: &str) -> String {
    let Some((_, four, examples)) = PAGE_EXTRAS.iter().find(|(n, _, _)| *n == name) else {
        return String::new();
    };
    let statuses = [
        ("0", "fine (warnings alone do not fail)"),
        ("4", four),
        (
            "8",
            "operational error: an input cannot be opened or read, is not ext2/3/4 or is \
             truncated, an output cannot be written (one line on stderr)",
        ),
        (
            "16",
            "usage error: an unknown option or a value out of range",
        ),
    ];
    let mut roff = String::from(".SH \"EXIT STATUS\"\n");
    for (code, what) in statuses {
        roff.push_str(&format!(".TP\n.B {code}\n{}\n", roff_text(what)));
    }
    roff.push_str(".PP\n");
    roff.push_str(&roff_text(
        "The values are bits: over several images the status is the OR of each image's \
         (4 | 8 = 12). A closed output pipe is not an error. See docs/exit-status.md.",
    ));
    roff.push('\n');
    roff.push_str(&examples_section(examples));
    if name == "check" {
        roff.push_str(&rules_section());
    }
    roff
}

/// The RULES section of the check page: the families once and where the catalogue is (the
/// rule IDs are not listed per option: `--allow`, `--warn` and `--deny` take the same ones).
fn rules_section() -> String {
    let families: Vec<String> = e4inspect::check::rules::FAMILIES
        .iter()
        .map(|f| format!("`{f}`"))
        .collect();
    let mut roff = String::from(".SH RULES\n");
    roff.push_str(&roff_text(&format!(
        "--allow, --warn and --deny take rule IDs (`sb.magic`), families (the part before the \
         dot: {}) or `warnings`. `e4inspect check --list-rules` prints every rule with its \
         severity, what holds on a healthy filesystem, who enforces it and the e2fsck problem \
         codes; docs/rules.md holds the same catalogue.",
        // (No count: the page would go stale with every rule added.)
        families.join(", "),
    )));
    roff.push('\n');
    roff
}

/// One page: clap_mangen's sections, the after-help as sections of its own, then the page's
/// EXIT STATUS and EXAMPLES (`extra`), VERSION last.
fn render_page(cmd: &Command, extra: &str) -> std::io::Result<(String, Vec<u8>)> {
    let man = clap_mangen::Man::new(cmd.clone()).source(SOURCE);
    let mut roff = Vec::new();
    man.render_title(&mut roff)?;
    man.render_name_section(&mut roff)?;
    man.render_synopsis_section(&mut roff)?;
    man.render_description_section(&mut roff)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut roff)?;
    }
    if cmd.get_subcommands().next().is_some() {
        man.render_subcommands_section(&mut roff)?;
    }
    if let Some(after) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) {
        roff.extend_from_slice(help_sections(&after.to_string()).as_bytes());
    }
    roff.extend_from_slice(extra.as_bytes());
    if cmd.get_version().is_some() {
        man.render_version_section(&mut roff)?;
    }
    Ok((man.get_filename(), roff))
}

/// The documented tree as the man pages show it: rule options without their 180 possible values
/// (the check page lists the families once in RULES instead).
fn for_man(cmd: &Command) -> Command {
    let mut doc = documented(cmd).disable_help_subcommand(true);
    if let Some(check) = doc.find_subcommand_mut("check") {
        let mut edited = check.clone();
        for long in RULE_ARGS {
            let id = edited
                .get_arguments()
                .find(|a| a.get_long() == Some(long))
                .map(|a| a.get_id().to_string());
            if let Some(id) = id {
                edited = edited.mut_arg(id, |a| {
                    a.value_parser(clap::builder::NonEmptyStringValueParser::new())
                });
            }
        }
        *check = edited;
    }
    doc.build();
    doc
}

/// Every man page: (file name, roff). The top page's SEE ALSO names every command's page.
pub fn man_pages(cmd: &Command) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let doc = for_man(cmd);
    let mut pages = Vec::new();
    let mut see_also = Vec::new();
    for sub in doc.get_subcommands() {
        let (name, roff) = render_page(sub, &command_sections(sub.get_name()))?;
        see_also.push(name.clone());
        pages.push((name, roff));
    }
    let (top_name, mut roff) = render_page(&doc, &examples_section(TOP_EXAMPLES))?;
    // `.nh` and `\%`: a page name is never hyphenated nor broken at its own hyphen
    // (`e4inspect-` / `dump(1)` across two lines reads as two names).
    roff.extend_from_slice(b".SH \"SEE ALSO\"\n.nh\n");
    let refs: Vec<String> = see_also
        .iter()
        .map(|f| {
            let (name, section) = f.rsplit_once('.').unwrap_or((f, "1"));
            format!("\\fB\\%{}\\fR({section})", name.replace('-', "\\-"))
        })
        .collect();
    roff.extend_from_slice(refs.join(", ").as_bytes());
    roff.extend_from_slice(b", \\fBdumpe2fs\\fR(8), \\fBdebugfs\\fR(8), \\fBe2fsck\\fR(8), \\fBmke2fs\\fR(8), \\fBe2freefrag\\fR(8)\n");
    pages.insert(0, (top_name, roff));
    Ok(pages)
}

/// Write every man page into `dir`.
pub fn write_man_pages(cmd: &Command, dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for (name, roff) in man_pages(cmd)? {
        std::fs::write(dir.join(&name), roff)?;
        names.push(name);
    }
    Ok(names)
}

/// The completion script for `shell`.
pub fn completions(cmd: &Command, shell: clap_complete::Shell) -> Vec<u8> {
    let mut doc = documented(cmd);
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut doc, "e4inspect", &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every documented command has its EXIT STATUS and EXAMPLES entry, and every example
    /// names its own command.
    #[test]
    fn every_command_has_exit_status_and_examples() {
        use clap::CommandFactory;
        let doc = documented(&crate::Cli::command());
        for sub in doc.get_subcommands() {
            let name = sub.get_name();
            let entry = PAGE_EXTRAS.iter().find(|(n, _, _)| *n == name);
            let (_, _, examples) =
                entry.unwrap_or_else(|| panic!("no PAGE_EXTRAS entry for {name}"));
            assert!(!examples.is_empty() && examples.len() <= 2, "{name}");
            for (cmd, _) in *examples {
                assert!(cmd.starts_with(&format!("e4inspect {name} ")), "{cmd}");
            }
        }
        assert_eq!(PAGE_EXTRAS.len(), doc.get_subcommands().count());
    }

    /// Every example of the top page is a command line the parser accepts (up to a redirection).
    #[test]
    fn top_examples_parse() {
        use clap::CommandFactory;
        for (line, _) in TOP_EXAMPLES {
            let words: Vec<&str> = line.split_whitespace().take_while(|w| *w != ">").collect();
            let parsed = crate::Cli::command().try_get_matches_from(&words);
            assert!(parsed.is_ok(), "{line}: {parsed:?}");
        }
    }

    /// The after-help becomes sections, bullets and filled paragraphs, never hard-broken lines
    /// of the terminal layout inside one paragraph's indentation.
    #[test]
    fn after_help_becomes_sections() {
        let roff = help_sections(
            "EXIT STATUS:\n  0 fine; 4 problems\n  found.\n\nNOTES:\n  Intro:\n  - one `a-b`\n    continued\n  - two\n  After.",
        );
        assert_eq!(
            roff,
            ".SH \"EXIT STATUS\"\n0 fine; 4 problems\nfound.\n.SH \"NOTES\"\nIntro:\n.IP \\(bu 2\none \\fBa\\-b\\fR\ncontinued\n.IP \\(bu 2\ntwo\n.PP\nAfter.\n"
        );
        assert_eq!(roff_text(".x \\ y"), "\\&.x \\e y");
    }

    #[test]
    fn rule_options_offer_the_catalogue_and_sizes_no_files() {
        let cmd = Command::new("e4inspect")
            .subcommand(
                Command::new("check")
                    .arg(Arg::new("allow").long("allow").value_name("RULE"))
                    .arg(Arg::new("size").long("size").value_name("SIZE")),
            )
            .subcommand(Command::new("secret").hide(true));
        let doc = documented(&cmd);
        assert!(doc.find_subcommand("secret").is_none());
        let check = doc.find_subcommand("check").unwrap();
        let allow = check
            .get_arguments()
            .find(|a| a.get_id() == "allow")
            .unwrap();
        let values: Vec<String> = allow
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        for rule in e4inspect::check::RULES {
            assert!(values.iter().any(|v| v == rule.id.as_str()), "{}", rule.id);
        }
        assert!(values.iter().any(|v| v == "sb"));
        let size = check
            .get_arguments()
            .find(|a| a.get_id() == "size")
            .unwrap();
        assert_eq!(size.get_value_hint(), ValueHint::Other);
    }
}
