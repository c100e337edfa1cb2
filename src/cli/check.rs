//! `e4inspect check`: a read-only fsck. The default runs every pass (state, superblock,
//! descriptors, bitmaps, counts, journal, then the inode walk: pass 1, block ownership, pass 5
//! from the computed usage, and the directory passes); `--quick` keeps the constant-work-per-group
//! checks only.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use e4inspect::check::{self, CheckOptions, Report, RULES};
use e4inspect::format::json::SchemaVersion;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `e4inspect check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Images or block devices to check (one result each).
    #[arg(required_unless_present = "list_rules")]
    pub images: Vec<PathBuf>,
    /// Print the rule catalogue (a table, or JSON with --json) and exit.
    #[arg(long)]
    pub list_rules: bool,
    /// Quick check: superblock, descriptors, bitmaps, counts and journal superblock only (constant
    /// work per group; no inode walk). The default is the full check: also filesystem state, every
    /// in-use inode (e2fsck pass 1), block ownership, and bitmaps and counts recomputed from the
    /// inodes (pass 5).
    #[arg(long)]
    pub quick: bool,
    /// JSON output: {schema_version, images: [...]}, one entry per image ({image, findings,
    /// errors, warnings, counts} or {image, error}) however many images are given
    /// (docs/schema/check.schema.json).
    #[arg(long)]
    pub json: bool,
    /// Count warnings as errors for the exit status.
    #[arg(long)]
    pub werror: bool,
    #[command(flatten)]
    pub source: super::SourceArgs,
}

fn list_rules(json: bool, out: &mut dyn Write) -> anyhow::Result<i32> {
    if json {
        let doc = RulesDocument {
            schema_version: SchemaVersion,
            rules: RULES,
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(0);
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "rule",
        "severity",
        "description",
        "enforced by",
        "e2fsck problem",
    ]);
    for r in RULES {
        let by: Vec<&str> = r.enforced_by.iter().map(|e| e.name()).collect();
        t.add_row(vec![
            r.id.to_string(),
            r.severity.name().to_string(),
            r.description.to_string(),
            dash_if_empty(by.join(", ")),
            dash_if_empty(r.e2fsck.join(", ")),
        ]);
    }
    writeln!(out, "{t}")?;
    Ok(0)
}

fn dash_if_empty(s: String) -> String {
    if s.is_empty() {
        "-".to_string()
    } else {
        s
    }
}

fn summary(rep: &Report) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec!["rule", "severity", "findings", "description"]);
    for r in RULES {
        if let Some(n) = rep.counts.get(&r.id) {
            t.add_row(vec![
                r.id.to_string(),
                r.severity.name().to_string(),
                n.to_string(),
                r.description.to_string(),
            ]);
        }
    }
    t
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The text report of one image.
fn write_text(
    rep: &Report,
    several: bool,
    first: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if several {
        if !first {
            writeln!(out)?;
        }
        writeln!(out, "{}:", rep.image)?;
    }
    for f in &rep.findings {
        writeln!(out, "{}", f.line())?;
    }
    let kept = rep.findings.len() as u64;
    let total = rep.errors + rep.warnings;
    if total > kept {
        writeln!(
            out,
            "({} more findings not listed; at most {} per rule)",
            total - kept,
            check::MAX_FINDINGS_PER_RULE
        )?;
    }
    if total == 0 {
        writeln!(out, "{}: no findings", rep.image)
    } else {
        writeln!(out, "{}", summary(rep))?;
        writeln!(
            out,
            "{}: {} error{}, {} warning{}",
            rep.image,
            rep.errors,
            plural(rep.errors),
            rep.warnings,
            plural(rep.warnings)
        )
    }
}

/// Run the command; returns the exit status (0 clean, 4 errors, 8 unreadable).
pub fn run(args: &CheckArgs) -> anyhow::Result<i32> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match run_to(args, &mut out).and_then(|s| out.flush().map(|()| s).map_err(Into::into)) {
        // A closed pipe (`check img | head`) ends quietly.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(0)
        }
        r => r,
    }
}

/// Run the command, writing to `out`.
pub fn run_to(args: &CheckArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    if args.list_rules {
        return list_rules(args.json, out);
    }
    let opts = CheckOptions {
        offset: args.source.offset,
        partition: args.source.partition,
        now: None,
        quick: args.quick,
    };
    let mut status = 0;
    let mut json = Vec::new();
    let several = args.images.len() > 1;
    for (i, path) in args.images.iter().enumerate() {
        match check::check_path(path, &opts) {
            Ok(rep) => {
                let bad = rep.errors > 0 || (args.werror && rep.warnings > 0);
                if bad {
                    status = status.max(super::EXIT_PROBLEMS);
                }
                if args.json {
                    json.push(ImageResult::Checked(rep));
                } else {
                    write_text(&rep, several, i == 0, out)?;
                }
            }
            Err(e) => {
                status = super::EXIT_OPERATIONAL;
                super::report_error(path, &e);
                if args.json {
                    json.push(ImageResult::Unreadable {
                        image: path.display().to_string(),
                        error: e.to_string(),
                    });
                }
            }
        }
    }
    if args.json {
        let doc = CheckDocument {
            schema_version: SchemaVersion,
            images: json,
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    }
    Ok(status)
}

/// The `check --json` document: the same shape for one image or several.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct CheckDocument {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// One entry per image, in the order given.
    pub images: Vec<ImageResult>,
}

/// The result for one image: its report, or why it could not be checked at all.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ImageResult {
    /// The image was checked.
    Checked(Report),
    /// The image could not be read (exit status 8).
    Unreadable {
        /// The image as given.
        image: String,
        /// Why it could not be checked.
        error: String,
    },
}

/// The `check --list-rules --json` document: the rule catalogue.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct RulesDocument {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// Every rule, in report order.
    pub rules: &'static [e4inspect::check::Rule],
}
