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

fn describe(change: &Change) -> String {
    let (meta_a, meta_b) = (change.a.as_ref(), change.b.as_ref());
    let parts: Vec<String> = change
        .fields
        .iter()
        .map(|field| {
            let pick = |meta: Option<&diff::Meta>| -> String {
                let Some(meta) = meta else { return "-".into() };
                match field.as_str() {
                    "type" => meta.kind.clone(),
                    "size" => meta.size.map_or("-".into(), |s| s.to_string()),
                    "mode" => meta.mode.clone(),
                    "owner" => meta.owner.clone(),
                    "mtime" => meta.mtime.clone(),
                    "atime" => meta.atime.clone().unwrap_or_default(),
                    "ctime" => meta.ctime.clone().unwrap_or_default(),
                    "crtime" => meta.crtime.clone().unwrap_or_default(),
                    "target" => meta.target.clone().unwrap_or_default(),
                    "device" => meta.device.clone().unwrap_or_default(),
                    "inode" => meta.inode.to_string(),
                    "links" => meta.links.to_string(),
                    other => match other.strip_prefix("xattr.") {
                        Some(name) => meta
                            .xattrs
                            .get(name)
                            .cloned()
                            .unwrap_or_else(|| "(none)".into()),
                        None => String::new(),
                    },
                }
            };
            match field.as_str() {
                "content" => "content".to_string(),
                _ if field.starts_with("xattr.") => {
                    let xattr_name = &field["xattr.".len()..];
                    let has = |m: Option<&diff::Meta>| {
                        m.is_some_and(|m| m.xattrs.contains_key(xattr_name))
                    };
                    match (has(meta_a), has(meta_b)) {
                        (false, true) => format!("{field} added"),
                        (true, false) => format!("{field} removed"),
                        _ => format!("{field} changed"),
                    }
                }
                _ => format!("{field} {} -> {}", pick(meta_a), pick(meta_b)),
            }
        })
        .collect();
    parts.join(", ")
}

fn text(args: &DiffArgs, report: &Report, out: &mut String) -> std::fmt::Result {
    let (an, bn) = (args.a.display(), args.b.display());
    for change in &report.changes {
        let kind = change
            .a
            .as_ref()
            .or(change.b.as_ref())
            .map_or("", |m| m.kind.as_str());
        match change.kind {
            Kind::Removed => writeln!(out, "Only in {an}: {} ({kind})", change.path)?,
            Kind::Added => writeln!(out, "Only in {bn}: {} ({kind})", change.path)?,
            Kind::Modified => writeln!(out, "Modified: {}: {}", change.path, describe(change))?,
        }
    }
    for field_change in &report.superblock {
        writeln!(
            out,
            "Superblock: {}: {} -> {}",
            field_change.field, field_change.a, field_change.b
        )?;
    }
    for unreadable in &report.unreadable {
        writeln!(out, "Unreadable: {unreadable}")?;
    }
    Ok(())
}

/// Open one side: a directory as a tree, anything else as an image.
fn open(path: &std::path::Path, args: &DiffArgs) -> anyhow::Result<Option<Filesystem>> {
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Ok(None);
    }
    let fs = Filesystem::open(path, &args.source.open_options())
        .with_context(|| format!("{}", path.display()))?;
    super::watch_reads(&fs);
    // --replay (and --journal) apply to each image side: each is shown as its next mount will.
    args.source.note_recovery(&fs);
    Ok(Some(fs))
}

/// Run the subcommand.
pub fn run(args: &DiffArgs) -> anyhow::Result<i32> {
    for field in &args.ignore {
        let superblock_field = field
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !diff::FIELDS.contains(&field.as_str()) && !superblock_field {
            anyhow::bail!(
                "--ignore {field}: not a field (one of {})",
                diff::FIELDS.join(", ")
            );
        }
    }
    let fa = open(&args.a, args)?;
    let fb = open(&args.b, args)?;
    fn side<'f>(fs: &'f Option<Filesystem>, path: &std::path::Path) -> Side<'f> {
        match fs {
            Some(f) => Side::Image(f),
            None => Side::Tree(path.to_path_buf()),
        }
    }
    let (sa, sb) = (side(&fa, &args.a), side(&fb, &args.b));
    let opts = DiffOptions {
        ignore: args.ignore.iter().cloned().collect(),
        inodes: args.inodes,
    };
    let mut report = diff::diff(&sa, &sb, &opts)?;
    if let (Some(fs_a), Some(fs_b)) = (&fa, &fb) {
        let as_map = |fs: &Filesystem| match serde_json::to_value(
            e4inspect::format::json::superblock(&fs.sb),
        ) {
            Ok(serde_json::Value::Object(m)) => Ok(m),
            Ok(_) => anyhow::bail!("superblock did not serialise to an object"),
            Err(e) => Err(e.into()),
        };
        report.superblock = diff::object_changes(&as_map(fs_a)?, &as_map(fs_b)?, &opts);
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
