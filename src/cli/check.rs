//! `e4inspect check`: validate superblocks, descriptors, bitmaps, counts and the journal superblock.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use e4inspect::check::{self, CheckOptions, Report, RULES};
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
    /// JSON output: one object per image ({image, findings, errors, warnings}); an array of them
    /// when several images are given.
    #[arg(long)]
    pub json: bool,
    /// Count warnings as errors for the exit status.
    #[arg(long)]
    pub werror: bool,
    #[command(flatten)]
    pub source: super::SourceArgs,
}

fn list_rules(json: bool) -> anyhow::Result<i32> {
    if json {
        outln!("{}", serde_json::to_string_pretty(RULES)?);
        return Ok(0);
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec!["rule", "severity", "description", "enforced by"]);
    for r in RULES {
        let by: Vec<&str> = r.enforced_by.iter().map(|e| e.name()).collect();
        t.add_row(vec![
            r.id.to_string(),
            r.severity.name().to_string(),
            r.description.to_string(),
            if by.is_empty() {
                "-".to_string()
            } else {
                by.join(", ")
            },
        ]);
    }
    outln!("{t}");
    Ok(0)
}

fn summary(rep: &Report) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec!["rule", "severity", "findings", "description"]);
    for r in RULES {
        if let Some(n) = rep.counts.get(r.id) {
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

/// Run the command; returns the exit status (0 clean, 4 errors, 8 unreadable).
pub fn run(args: &CheckArgs) -> anyhow::Result<i32> {
    if args.list_rules {
        return list_rules(args.json);
    }
    let opts = CheckOptions {
        offset: args.source.offset,
        partition: args.source.partition,
        now: None,
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
                    json.push(serde_json::to_value(&rep)?);
                    continue;
                }
                if several {
                    if i > 0 {
                        outln!();
                    }
                    outln!("{}:", rep.image);
                }
                for f in &rep.findings {
                    outln!("{}", f.line());
                }
                let kept = rep.findings.len() as u64;
                let total = rep.errors + rep.warnings;
                if total > kept {
                    outln!(
                        "({} more findings not listed; at most {} per rule)",
                        total - kept,
                        check::MAX_FINDINGS_PER_RULE
                    );
                }
                if total == 0 {
                    outln!("{}: no findings", rep.image);
                } else {
                    outln!("{}", summary(&rep));
                    outln!(
                        "{}: {} error{}, {} warning{}",
                        rep.image,
                        rep.errors,
                        if rep.errors == 1 { "" } else { "s" },
                        rep.warnings,
                        if rep.warnings == 1 { "" } else { "s" }
                    );
                }
            }
            Err(e) => {
                status = super::EXIT_OPERATIONAL;
                super::report_error(path, &e);
                if args.json {
                    json.push(serde_json::json!({
                        "image": path.display().to_string(),
                        "error": e.to_string(),
                        "findings": [],
                        "errors": 0,
                        "warnings": 0,
                    }));
                }
            }
        }
    }
    if args.json {
        let out = if several {
            serde_json::Value::Array(json)
        } else {
            json.pop().unwrap_or(serde_json::Value::Null)
        };
        outln!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(status)
}
