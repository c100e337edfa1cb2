//! `e4inspect diff A B`: two filesystems compared as a user sees them (each an image or a
//! directory tree), and the superblock fields that differ between two images; see
//! [`e4inspect::views::diff`]. Exit status: 0 equal, 4 different, 8 a side unreadable (or the
//! comparison incomplete), 16 usage.

use anyhow::Context;
use e4inspect::format::json::SchemaVersion;
use e4inspect::reader::fs::Filesystem;
use e4inspect::views::diff::{self, Change, DiffOptions, Kind, Report, Side};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Compare two images, or an image and a directory tree: paths added, removed and modified
/// (with the fields that changed) and, between two images, the superblock fields that differ.
#[derive(clap::Args, Debug, Clone)]
pub struct DiffArgs {
    /// First side: an image (any input e4inspect reads) or a directory.
    pub a: PathBuf,
    /// Second side: an image or a directory.
    pub b: PathBuf,
    /// Leave a field out of the comparison (repeatable): type, content, size, mode, owner,
    /// times (or mtime, atime, ctime, crtime), xattrs, target, links, device, superblock, uuid,
    /// hash_seed, or any superblock field by its JSON name.
    #[arg(long, value_name = "FIELD")]
    pub ignore: Vec<String>,
    /// Also compare inode numbers (two images).
    #[arg(long)]
    pub inodes: bool,
    /// Output format.
    #[command(flatten)]
    pub output: super::OutputArgs,
    #[command(flatten)]
    pub source: super::SourceArgs,
}

/// The `diff --json` document.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct DiffDocument<'a> {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// Side A as given.
    pub a_path: String,
    /// Side B as given.
    pub b_path: String,
    /// The comparison.
    #[serde(flatten)]
    pub report: &'a Report,
}

fn describe(c: &Change) -> String {
    let (a, b) = (c.a.as_ref(), c.b.as_ref());
    let parts: Vec<String> = c
        .fields
        .iter()
        .map(|f| {
            let pick = |m: Option<&diff::Meta>| -> String {
                let Some(m) = m else { return "-".into() };
                match f.as_str() {
                    "type" => m.kind.clone(),
                    "size" => m.size.map_or("-".into(), |s| s.to_string()),
                    "mode" => m.mode.clone(),
                    "owner" => m.owner.clone(),
                    "mtime" => m.mtime.clone(),
                    "atime" => m.atime.clone().unwrap_or_default(),
                    "ctime" => m.ctime.clone().unwrap_or_default(),
                    "crtime" => m.crtime.clone().unwrap_or_default(),
                    "target" => m.target.clone().unwrap_or_default(),
                    "device" => m.device.clone().unwrap_or_default(),
                    "inode" => m.inode.to_string(),
                    "links" => m.links.to_string(),
                    x => match x.strip_prefix("xattr.") {
                        Some(n) => m.xattrs.get(n).cloned().unwrap_or_else(|| "(none)".into()),
                        None => String::new(),
                    },
                }
            };
            match f.as_str() {
                "content" => "content".to_string(),
                _ if f.starts_with("xattr.") => {
                    let n = &f["xattr.".len()..];
                    let has = |m: Option<&diff::Meta>| m.is_some_and(|m| m.xattrs.contains_key(n));
                    match (has(a), has(b)) {
                        (false, true) => format!("{f} added"),
                        (true, false) => format!("{f} removed"),
                        _ => format!("{f} changed"),
                    }
                }
                _ => format!("{f} {} -> {}", pick(a), pick(b)),
            }
        })
        .collect();
    parts.join(", ")
}

fn text(args: &DiffArgs, r: &Report, out: &mut String) -> std::fmt::Result {
    let (an, bn) = (args.a.display(), args.b.display());
    for c in &r.changes {
        let m =
            c.a.as_ref()
                .or(c.b.as_ref())
                .map_or("", |m| m.kind.as_str());
        match c.kind {
            Kind::Removed => writeln!(out, "Only in {an}: {} ({m})", c.path)?,
            Kind::Added => writeln!(out, "Only in {bn}: {} ({m})", c.path)?,
            Kind::Modified => writeln!(out, "Modified: {}: {}", c.path, describe(c))?,
        }
    }
    for s in &r.superblock {
        writeln!(out, "Superblock: {}: {} -> {}", s.field, s.a, s.b)?;
    }
    for u in &r.unreadable {
        writeln!(out, "Unreadable: {u}")?;
    }
    Ok(())
}

/// Open one side: a directory as a tree, anything else as an image.
fn open(p: &std::path::Path, args: &DiffArgs) -> anyhow::Result<Option<Filesystem>> {
    if std::fs::metadata(p).is_ok_and(|m| m.is_dir()) {
        return Ok(None);
    }
    let fs = Filesystem::open(p, &args.source.open_options())
        .with_context(|| format!("{}", p.display()))?;
    super::watch_reads(&fs);
    // --replay (and --journal) apply to each image side: each is shown as its next mount will.
    args.source.note_recovery(&fs);
    Ok(Some(fs))
}

/// Run the subcommand.
pub fn run(args: &DiffArgs) -> anyhow::Result<i32> {
    for f in &args.ignore {
        let superblock_field = f
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !diff::FIELDS.contains(&f.as_str()) && !superblock_field {
            anyhow::bail!(
                "--ignore {f}: not a field (one of {})",
                diff::FIELDS.join(", ")
            );
        }
    }
    let fa = open(&args.a, args)?;
    let fb = open(&args.b, args)?;
    fn side<'f>(fs: &'f Option<Filesystem>, p: &std::path::Path) -> Side<'f> {
        match fs {
            Some(f) => Side::Image(f),
            None => Side::Tree(p.to_path_buf()),
        }
    }
    let (sa, sb) = (side(&fa, &args.a), side(&fb, &args.b));
    let opts = DiffOptions {
        ignore: args.ignore.iter().cloned().collect(),
        inodes: args.inodes,
    };
    let mut report = diff::diff(&sa, &sb, &opts)?;
    if let (Some(x), Some(y)) = (&fa, &fb) {
        let as_map = |fs: &Filesystem| match serde_json::to_value(
            e4inspect::format::json::superblock(&fs.sb),
        ) {
            Ok(serde_json::Value::Object(m)) => Ok(m),
            Ok(_) => anyhow::bail!("superblock did not serialise to an object"),
            Err(e) => Err(e.into()),
        };
        report.superblock = diff::object_changes(&as_map(x)?, &as_map(y)?, &opts);
    }
    let mut out = String::new();
    if args.output.json() {
        let doc = DiffDocument {
            schema_version: SchemaVersion,
            a_path: args.a.display().to_string(),
            b_path: args.b.display().to_string(),
            report: &report,
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        text(args, &report, &mut out)?;
    }
    super::emit(&out)?;
    if !report.unreadable.is_empty() {
        super::say(format_args!(
            "diff incomplete: {} entries unreadable (first: {})",
            report.unreadable.len(),
            report.unreadable[0]
        ));
        return Ok(super::EXIT_OPERATIONAL);
    }
    Ok(
        if report.changes.is_empty() && report.superblock.is_empty() {
            super::EXIT_OK
        } else {
            super::EXIT_PROBLEMS
        },
    )
}
