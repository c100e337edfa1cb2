//! `e4inspect check`: a read-only fsck. The default runs every pass (state, superblock,
//! descriptors, bitmaps, counts, journal, then the inode walk: pass 1, block ownership, pass 5
//! from the computed usage, and the directory passes); `--quick` keeps the constant-work-per-group
//! checks only.
//!
//! Output for people and for CI: `--format text` (compiler-style lines
//! `IMAGE: error[RULE] group N, inode M (PATH): message` and a summary table), `json`, `junit`
//! (one test suite per image, one test case per rule family) or `github` (workflow
//! annotations). The rule policy (`--allow`, `--warn`, `--deny`) drops, downgrades or upgrades
//! rules or whole families before anything is printed or counted.
//!
//! Exit status (see `cli::exit`): per image 0 when no error-level finding remains (warnings alone
//! pass, as compiler warnings do; `--werror` or `--deny warnings` makes them fail), 4 when some
//! does, 8 when the image cannot be read; over several images the bitwise OR.

use super::exit::{self, usage, EXIT_OK, EXIT_OPERATIONAL, EXIT_PROBLEMS};
use e4inspect::check::rules::{family_rules, is_family, FAMILIES, QUICK_FAMILIES};
use e4inspect::check::{self, CheckOptions, Report, RuleId, Severity, RULES};
use e4inspect::format::json::SchemaVersion;
use e4inspect::format::{check_text, github, junit, table};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Output formats of `check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Compiler-style finding lines and a summary table.
    Text,
    /// One JSON document.
    Json,
    /// JUnit XML: one test suite per image, one test case per rule family.
    Junit,
    /// GitHub Actions workflow commands (annotations).
    Github,
}

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
    /// Check the bytes as they are when the image needs recovery. By default the journal's
    /// committed transactions are replayed in memory first (nothing is written), as e2fsck
    /// recovers before checking, and a `journal.replayed` warning says so.
    #[arg(long)]
    pub no_replay: bool,
    /// Output format.
    #[command(flatten)]
    pub output: super::OutputArgs<Format>,
    /// Count warnings as errors (the same as --deny warnings).
    #[arg(long)]
    pub werror: bool,
    /// Drop findings of these rules or families (comma-separated or repeated; `warnings` = every
    /// rule whose catalogue severity is warning).
    #[arg(long, value_name = "RULE|FAMILY", value_delimiter = ',')]
    pub allow: Vec<String>,
    /// Report these rules or families as warnings (they no longer fail the check).
    #[arg(long, value_name = "RULE|FAMILY", value_delimiter = ',')]
    pub warn: Vec<String>,
    /// Report these rules or families as errors (they fail the check).
    #[arg(long, value_name = "RULE|FAMILY", value_delimiter = ',')]
    pub deny: Vec<String>,
    /// List at most N findings per image (all are still counted; the summary says how many
    /// were left out).
    #[arg(long, value_name = "N")]
    pub max_findings: Option<u64>,
    /// Never show a progress bar (one is shown on stderr only when it is a terminal).
    #[arg(long)]
    pub no_progress: bool,
    #[command(flatten)]
    pub source: super::SourceArgs,
}

impl super::OutputFormat for Format {
    const TEXT: Self = Format::Text;
    const JSON: Self = Format::Json;
}

impl CheckArgs {
    fn format(&self) -> Format {
        self.output.format()
    }
}

// ---------------------------------------------------------------------------------------------
// Rule policy

/// What `--allow`/`--warn`/`--deny` make of a rule: dropped (`None`) or a severity.
type Level = Option<Severity>;

/// How specific a selector is: a rule beats its family, a family beats `warnings`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Specificity {
    Warnings,
    Family,
    Rule,
}

/// The effective level of every rule after the policy flags.
#[derive(Clone, Debug)]
pub struct Policy {
    levels: BTreeMap<RuleId, Level>,
}

/// The rules a selector names, and how specifically.
fn select(sel: &str) -> anyhow::Result<(Specificity, Vec<RuleId>)> {
    if sel == "warnings" {
        let ids = RULES
            .iter()
            .filter(|r| r.severity == Severity::Warning)
            .map(|r| r.id);
        return Ok((Specificity::Warnings, ids.collect()));
    }
    if is_family(sel) {
        return Ok((
            Specificity::Family,
            family_rules(sel).map(|r| r.id).collect(),
        ));
    }
    if let Some(rule) = check::rules::rule(sel) {
        return Ok((Specificity::Rule, vec![rule.id]));
    }
    let names = RULES
        .iter()
        .map(|r| r.id.as_str())
        .chain(FAMILIES.iter().copied())
        .chain(["warnings"]);
    let hint = match exit::suggest(sel, names) {
        Some(s) => format!(" (did you mean '{s}'?)"),
        None => String::new(),
    };
    Err(usage(format!(
        "unknown rule or family '{sel}'{hint}; `e4inspect check --list-rules` lists them"
    )))
}

impl Policy {
    /// The policy of these flags. The most specific selector decides a rule (`--allow inode
    /// --deny inode.mode` keeps inode.mode as an error); the same rule named at the same
    /// specificity by two different flags is a usage error.
    pub fn from_args(args: &CheckArgs) -> anyhow::Result<Policy> {
        let mut chosen: BTreeMap<RuleId, (Specificity, Level, String)> = BTreeMap::new();
        let werror = args.werror.then(|| "warnings".to_string());
        let flags: [(&str, Level, Vec<String>); 3] = [
            ("--allow", None, args.allow.clone()),
            ("--warn", Some(Severity::Warning), args.warn.clone()),
            (
                "--deny",
                Some(Severity::Error),
                args.deny.iter().cloned().chain(werror).collect(),
            ),
        ];
        for (flag, level, sels) in flags {
            for sel in sels {
                let sel = sel.trim();
                let (spec, ids) = select(sel)?;
                for id in ids {
                    let new = (spec, level, format!("{flag} {sel}"));
                    match chosen.get(&id) {
                        Some((s, l, by)) if *s == spec && *l != level => {
                            return Err(usage(format!(
                                "{id}: both {by} and {flag} {sel} apply; name the rule itself \
                                 to decide"
                            )));
                        }
                        Some((s, _, _)) if *s > spec => {}
                        _ => {
                            chosen.insert(id, new);
                        }
                    }
                }
            }
        }
        let levels = RULES
            .iter()
            .map(|r| {
                let level = chosen.get(&r.id).map_or(Some(r.severity), |c| c.1);
                (r.id, level)
            })
            .collect();
        Ok(Policy { levels })
    }

    /// The effective level of `id`.
    pub fn level(&self, id: RuleId) -> Level {
        self.levels.get(&id).copied().unwrap_or(Some(id.severity()))
    }

    /// Apply to a report: drop allowed rules, rewrite severities, recount.
    pub fn apply(&self, rep: &mut Report) {
        rep.findings.retain(|f| self.level(f.rule).is_some());
        for finding in &mut rep.findings {
            if let Some(severity) = self.level(finding.rule) {
                finding.severity = severity;
            }
        }
        rep.counts.retain(|id, _| self.level(*id).is_some());
        rep.errors = 0;
        rep.warnings = 0;
        for (id, count) in &rep.counts {
            match self.level(*id) {
                Some(Severity::Error) => rep.errors += count,
                Some(Severity::Warning) => rep.warnings += count,
                None => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// One image's outcome

/// What checking one image gave.
enum Outcome {
    Checked(Report),
    Failed { image: String, error: String },
}

/// Exit status of one image's outcome.
fn status(outcome: &Outcome) -> i32 {
    match outcome {
        // The report is incomplete: a read of the input failed (one line on stderr said so).
        Outcome::Checked(report) if report.read_failure.is_some() => EXIT_OPERATIONAL,
        Outcome::Checked(report) if report.errors > 0 => EXIT_PROBLEMS,
        Outcome::Checked(_) => EXIT_OK,
        Outcome::Failed { .. } => EXIT_OPERATIONAL,
    }
}

/// Findings counted (kept or not) minus those listed.
fn not_listed(rep: &Report) -> u64 {
    (rep.errors + rep.warnings).saturating_sub(rep.findings.len() as u64)
}

/// Keep at most `max` listed findings (errors first, then in report order).
fn limit_findings(rep: &mut Report, max: Option<u64>) {
    let Some(max) = max else { return };
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    if rep.findings.len() > max {
        rep.findings.sort_by_key(|f| f.severity);
        rep.findings.truncate(max);
    }
}

// ---------------------------------------------------------------------------------------------
// Text

fn plural(count: u64, word: &str) -> String {
    if count == 1 {
        format!("{count} {word}")
    } else {
        format!("{count} {word}s")
    }
}

fn list_rules(format: Format, out: &mut dyn Write) -> anyhow::Result<i32> {
    match format {
        Format::Json => {
            let doc = RulesDocument {
                schema_version: SchemaVersion,
                rules: RULES,
            };
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
            return Ok(EXIT_OK);
        }
        Format::Junit | Format::Github => {
            return Err(usage("--list-rules prints text or json"));
        }
        Format::Text => {}
    }
    let mut rules_table = table::table(&[
        "rule",
        "severity",
        "description",
        "enforced by",
        "e2fsck problem",
    ]);
    table::no_wrap(&mut rules_table, &[0]);
    for rule in RULES {
        let by: Vec<&str> = rule.enforced_by.iter().map(|e| e.name()).collect();
        rules_table.add_row(vec![
            rule.id.to_string(),
            rule.severity.name().to_string(),
            rule.description.to_string(),
            dash_if_empty(by.join(", ")),
            dash_if_empty(rule.e2fsck.join(", ")),
        ]);
    }
    writeln!(out, "{rules_table}")?;
    Ok(EXIT_OK)
}

fn dash_if_empty(text: String) -> String {
    if text.is_empty() {
        "-".to_string()
    } else {
        text
    }
}

/// The summary table: one row per rule with findings, with its effective severity and the
/// problem found.
fn summary(rep: &Report, policy: &Policy) -> table::Styled {
    let mut summary_table = table::table(&["rule", "severity", "findings", "problem"]);
    table::no_wrap(&mut summary_table, &[0]);
    for rule in RULES {
        if let (Some(&count), Some(sev)) = (rep.counts.get(&rule.id), policy.level(rule.id)) {
            summary_table.add_row(vec![
                rule.id.to_string(),
                sev.name().to_string(),
                count.to_string(),
                problem(rep, rule.id, count),
            ]);
        }
    }
    summary_table
}

/// Longest problem text in a summary row or a JUnit failure message (a finding can list
/// thousands of blocks; the full text stays on its finding line).
const PROBLEM_CHARS: usize = 100;

/// What is wrong for rule `id` with `count` findings: the first finding's message (its location is
/// on the finding line above the table), else, when no finding of the rule is listed, the
/// catalogue's passing condition marked as not met. The catalogue describes what holds on a
/// healthy filesystem; beside a failure that reads as its opposite.
fn problem(rep: &Report, id: RuleId, count: u64) -> String {
    let Some(first) = rep.findings.iter().find(|f| f.rule == id) else {
        return format!("not met: {}", id.rule().description);
    };
    let mut text = shorten(&first.message, PROBLEM_CHARS);
    if count > 1 {
        text.push_str(&format!(" (and {} more)", count - 1));
    }
    text
}

/// `text` cut to at most `max` characters, with "..." when cut.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}...", text[..cut].trim_end()),
        None => text.to_string(),
    }
}

/// The note on findings counted but not listed, if any.
fn not_listed_note(rep: &Report, max: Option<u64>) -> Option<String> {
    let count = not_listed(rep);
    (count > 0).then(|| {
        let why = match max {
            Some(m) => format!(
                "--max-findings {m}, and at most {} per rule",
                check::MAX_FINDINGS_PER_RULE
            ),
            None => format!("at most {} per rule", check::MAX_FINDINGS_PER_RULE),
        };
        format!(
            "{}: {} not listed ({why})",
            rep.image,
            plural(count, "more finding")
        )
    })
}

fn write_text(
    outcome: &Outcome,
    first: bool,
    args: &CheckArgs,
    policy: &Policy,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let max = args.max_findings;
    let Outcome::Checked(rep) = outcome else {
        return Ok(());
    };
    if !first {
        writeln!(out)?;
    }
    for finding in &rep.findings {
        writeln!(out, "{}", check_text::line(&rep.image, finding))?;
    }
    if let Some(note) = not_listed_note(rep, max) {
        writeln!(out, "{note}")?;
    }
    if rep.errors + rep.warnings == 0 {
        return writeln!(out, "{}: no findings", rep.image);
    }
    writeln!(out, "{}", summary(rep, policy))?;
    writeln!(
        out,
        "{}: {}, {}",
        rep.image,
        plural(rep.errors, "error"),
        plural(rep.warnings, "warning")
    )
}

// ---------------------------------------------------------------------------------------------
// GitHub annotations

fn write_github(outcome: &Outcome, max: Option<u64>, out: &mut dyn Write) -> std::io::Result<()> {
    let rep = match outcome {
        Outcome::Checked(rep) => rep,
        Outcome::Failed { image, error } => {
            let annotation = github::Annotation {
                level: github::Level::Error,
                file: image,
                title: "e4inspect check",
                message: error,
            };
            return github::write_annotation(out, &annotation);
        }
    };
    for finding in &rep.findings {
        let message = check_text::located_message(finding);
        let annotation = github::Annotation {
            level: match finding.severity {
                Severity::Error => github::Level::Error,
                Severity::Warning => github::Level::Warning,
            },
            file: &rep.image,
            title: finding.rule.as_str(),
            message: &message,
        };
        github::write_annotation(out, &annotation)?;
    }
    if let Some(note) = not_listed_note(rep, max) {
        writeln!(out, "{note}")?;
    }
    writeln!(
        out,
        "{}: {}, {}",
        rep.image,
        plural(rep.errors, "error"),
        plural(rep.warnings, "warning")
    )
}

// ---------------------------------------------------------------------------------------------
// JUnit

/// One test case for `family` of a checked image.
fn junit_case(rep: &Report, family: &str, quick: bool, policy: &Policy) -> junit::Case {
    let mut case = junit::Case {
        name: family.to_string(),
        classname: format!("e4inspect.check.{family}"),
        ..junit::Case::default()
    };
    if quick && !QUICK_FAMILIES.contains(&family) {
        case.skipped = Some("not run by --quick".into());
        return case;
    }
    if family_rules(family).all(|r| policy.level(r.id).is_none()) {
        case.skipped = Some("every rule of the family is allowed".into());
        return case;
    }
    for rule in family_rules(family) {
        let Some(&count) = rep.counts.get(&rule.id) else {
            continue;
        };
        let lines: Vec<String> = rep
            .findings
            .iter()
            .filter(|f| f.rule == rule.id)
            .map(|f| check_text::line(&rep.image, f))
            .collect();
        let mut text = lines.join("\n");
        let unlisted = count.saturating_sub(lines.len() as u64);
        if unlisted > 0 {
            text.push_str(&format!(
                "\n({} not listed)",
                plural(unlisted, "more finding")
            ));
        }
        match policy.level(rule.id) {
            Some(Severity::Error) => case.failures.push(junit::Problem {
                message: format!(
                    "{}: {} ({})",
                    rule.id,
                    plural(count, "finding"),
                    problem(rep, rule.id, count)
                ),
                kind: rule.id.to_string(),
                text,
            }),
            Some(Severity::Warning) => {
                case.output.push_str(&text);
                case.output.push('\n');
            }
            None => {}
        }
    }
    case
}

fn junit_suite(outcome: &Outcome, quick: bool, policy: &Policy) -> junit::Suite {
    match outcome {
        Outcome::Checked(rep) => junit::Suite {
            name: rep.image.clone(),
            cases: FAMILIES
                .iter()
                .map(|fam| junit_case(rep, fam, quick, policy))
                .collect(),
        },
        Outcome::Failed { image, error } => junit::Suite {
            name: image.clone(),
            cases: vec![junit::Case {
                name: "open".into(),
                classname: "e4inspect.check".into(),
                errors: vec![junit::Problem {
                    message: error.clone(),
                    kind: "operational".into(),
                    text: String::new(),
                }],
                ..junit::Case::default()
            }],
        },
    }
}

// ---------------------------------------------------------------------------------------------
// JSON

/// The one `check --json` document, whatever the number of images.
fn write_json(outcomes: Vec<Outcome>, out: &mut dyn Write) -> anyhow::Result<()> {
    let images = outcomes
        .into_iter()
        .map(|o| match o {
            Outcome::Checked(rep) => ImageResult::Checked(rep),
            Outcome::Failed { image, error } => ImageResult::Unreadable { image, error },
        })
        .collect();
    let doc = CheckDocument {
        schema_version: SchemaVersion,
        images,
    };
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Running

/// Run the command; returns the exit status (see the module documentation).
pub fn run(args: &CheckArgs) -> anyhow::Result<i32> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let status = run_to(args, &mut out)?;
    out.flush()?;
    Ok(status)
}

/// Check one image, with a progress bar on a terminal.
fn check_one(path: &std::path::Path, args: &CheckArgs, policy: &Policy) -> Outcome {
    let bar = Arc::new(super::progress::CheckBar::new(
        super::progress::enabled(args.no_progress),
        &path.display().to_string(),
    ));
    let opts = CheckOptions {
        offset: args.source.offset,
        partition: args.source.partition,
        now: None,
        quick: args.quick,
        progress: check::ProgressHook::new(bar.clone()),
        no_replay: args.no_replay,
        journal: args.source.journal.clone(),
    };
    let res = check::check_path(path, &opts);
    bar.finish();
    match res {
        Ok(mut rep) => {
            if let Some(failure) = &rep.read_failure {
                super::report_error(path, failure);
            }
            policy.apply(&mut rep);
            limit_findings(&mut rep, args.max_findings);
            Outcome::Checked(rep)
        }
        Err(e) => {
            super::report_error(path, &e);
            Outcome::Failed {
                image: path.display().to_string(),
                error: e.to_string(),
            }
        }
    }
}

/// Run the command, writing to `out`. Text and annotations are written image by image as each
/// is checked; JSON and JUnit, which are one document, at the end.
pub fn run_to(args: &CheckArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    let format = args.format();
    if args.list_rules {
        return list_rules(format, out);
    }
    let policy = Policy::from_args(args)?;
    let mut outcomes = Vec::new();
    for (index, path) in args.images.iter().enumerate() {
        let outcome = check_one(path, args, &policy);
        match format {
            Format::Text => write_text(&outcome, index == 0, args, &policy, out)?,
            Format::Github => write_github(&outcome, args.max_findings, out)?,
            Format::Json | Format::Junit => {}
        }
        outcomes.push(outcome);
    }
    let code = exit::combine(outcomes.iter().map(status));
    match format {
        Format::Json => write_json(outcomes, out)?,
        Format::Junit => {
            let report = junit::Report {
                name: "e4inspect check".into(),
                suites: outcomes
                    .iter()
                    .map(|o| junit_suite(o, args.quick, &policy))
                    .collect(),
            };
            junit::write(out, &report)?;
        }
        Format::Text | Format::Github => {}
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: CheckArgs,
    }

    fn args(extra: &[&str]) -> CheckArgs {
        let mut all = vec!["t", "x.img"];
        all.extend_from_slice(extra);
        T::parse_from(all).a
    }

    #[test]
    fn policy_levels_follow_specificity() {
        let policy =
            Policy::from_args(&args(&["--allow", "inode", "--deny", "inode.mode"])).unwrap();
        assert_eq!(policy.level(RuleId::InodeMode), Some(Severity::Error));
        assert_eq!(policy.level(RuleId::InodeChecksum), None);
        assert_eq!(policy.level(RuleId::SbMagic), Some(Severity::Error));
        let policy = Policy::from_args(&args(&["--warn", "gd.checksum,sb"])).unwrap();
        assert_eq!(policy.level(RuleId::GdChecksum), Some(Severity::Warning));
        assert_eq!(policy.level(RuleId::SbMagic), Some(Severity::Warning));
        let policy = Policy::from_args(&args(&["--werror"])).unwrap();
        assert_eq!(policy.level(RuleId::StateMounted), Some(Severity::Error));
    }

    #[test]
    fn policy_rejects_unknown_and_conflicting_selectors() {
        let err = Policy::from_args(&args(&["--allow", "sb.magik"])).unwrap_err();
        assert!(exit::is_usage(&err));
        assert!(err.to_string().contains("did you mean 'sb.magic'"), "{err}");
        let err = Policy::from_args(&args(&["--allow", "sb", "--deny", "sb"])).unwrap_err();
        assert!(exit::is_usage(&err), "{err}");
    }
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
