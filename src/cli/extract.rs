//! `e4inspect extract IMAGE PATH DEST`: copy a file or a subtree out of an image (debugfs
//! `rdump`), keeping metadata; see [`e4inspect::views::extract`].
//!
//! DEST as `cp` takes it: an existing directory receives `DEST/<basename of PATH>` (the root `/`
//! fills DEST itself, which must then be empty unless `--force`); a DEST that does not exist is
//! the name of the copy. `--tar OUT` (or `--format tar`, DEST naming the archive) writes a pax
//! archive instead ([`e4inspect::views::tar`]), `-` meaning stdout. Exit status: 0 everything
//! extracted, 4 some entries skipped or damaged (listed), 8 nothing could be done, 16 usage.

use anyhow::Context;
use e4inspect::format::json::SchemaVersion;
use e4inspect::reader::fs::Filesystem;
use e4inspect::views::extract::{self, ExtractOptions, Summary};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Copy a file or a whole subtree out of the image, keeping types, modes, owners (as root),
/// times, symlinks, hard links, holes and xattrs; or write it as a pax archive (`--tar`), which
/// keeps everything without privilege.
#[derive(clap::Args, Debug, Clone)]
pub struct ExtractArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Path inside the filesystem (or <INO>); `/` by default with --tar.
    #[arg(required_unless_present = "tar")]
    pub path: Option<String>,
    /// Destination: an existing directory to copy into, or the name of the copy (with
    /// `--format tar`: the archive, `-` or absent for stdout).
    #[arg(required_unless_present_any = ["tar", "format"])]
    pub dest: Option<PathBuf>,
    /// Write a POSIX pax archive to OUT (`-`: stdout) instead of files: owners, devices, xattrs
    /// and holes kept whoever runs it.
    #[arg(long, value_name = "OUT", conflicts_with = "dest")]
    pub tar: Option<PathBuf>,
    /// Without privilege, also fail (exit 4) when device nodes cannot be made or owners kept.
    #[arg(long)]
    pub strict: bool,
    /// Replace existing destination entries (an existing directory is merged into).
    #[arg(long)]
    pub force: bool,
    /// Output: text or json summary of files written, or tar (a pax archive to DEST or stdout).
    #[command(flatten)]
    pub output: super::OutputArgs<ExtractFormat>,
    /// Never show a progress bar.
    #[arg(long)]
    pub no_progress: bool,
    #[command(flatten)]
    pub source: super::SourceArgs,
}

/// `extract --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExtractFormat {
    /// Files written, a text summary.
    Text,
    /// Files written, a JSON summary (docs/schema/extract.schema.json).
    Json,
    /// A POSIX pax archive (GNU sparse 1.0 for holes, SCHILY.xattr for xattrs).
    Tar,
}

impl super::OutputFormat for ExtractFormat {
    const TEXT: Self = ExtractFormat::Text;
    const JSON: Self = ExtractFormat::Json;
}

impl ExtractArgs {
    /// Where the archive goes: `--tar OUT`, or with `--format tar` DEST (stdout when absent).
    fn tar_out(&self) -> Option<PathBuf> {
        self.tar.clone().or_else(|| {
            (self.output.format() == ExtractFormat::Tar)
                .then(|| self.dest.clone().unwrap_or_else(|| PathBuf::from("-")))
        })
    }
}

fn parse_target(fs: &Filesystem, target: &str) -> anyhow::Result<(u32, Option<Vec<u8>>)> {
    use std::os::unix::ffi::OsStrExt;
    if let Some(number) = target.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
        let ino: u32 = number
            .parse()
            .with_context(|| format!("{target}: not an inode number"))?;
        return Ok((
            ino,
            (ino != e4inspect::reader::dir::ROOT_INO).then(|| format!("inode-{ino}").into_bytes()),
        ));
    }
    let ino = e4inspect::reader::namei::resolve_path(fs, target)?;
    let base = Path::new(target).file_name().map(|n| n.as_bytes().to_vec());
    Ok((
        ino,
        base.filter(|_| ino != e4inspect::reader::dir::ROOT_INO),
    ))
}

/// Where the copy goes: the directory to create in, and the name (None: into it).
fn destination(
    dest: &Path,
    base: Option<Vec<u8>>,
    force: bool,
) -> anyhow::Result<(PathBuf, Option<Vec<u8>>)> {
    use std::os::unix::ffi::OsStrExt;
    match std::fs::metadata(dest) {
        Ok(m) if m.is_dir() => Ok((dest.to_path_buf(), base)),
        Ok(_) if !force => anyhow::bail!(
            "{}: exists and is not a directory: use --force to replace it",
            dest.display()
        ),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("{}", dest.display()))
        }
        _ => {
            let name = dest
                .file_name()
                .with_context(|| format!("{}: no file name to create", dest.display()))?;
            let parent = match dest.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            Ok((parent, Some(name.as_bytes().to_vec())))
        }
    }
}

fn text(summary: &Summary, out: &mut String) -> std::fmt::Result {
    writeln!(
        out,
        "Extracted {} files ({} bytes), {} directories, {} symlinks, {} hard links, {} FIFOs, {} device nodes, {} sockets",
        summary.files, summary.bytes, summary.dirs, summary.symlinks, summary.hard_links, summary.fifos, summary.devices, summary.sockets
    )?;
    if !summary.not_restored.is_empty() {
        writeln!(out, "Not restored: {}", summary.not_restored)?;
    }
    for note in &summary.notes {
        writeln!(out, "Note: {note}")?;
    }
    if summary.skipped_count > 0 {
        writeln!(out, "Skipped {} entries:", summary.skipped_count)?;
        for skipped in &summary.skipped {
            writeln!(out, "  {}: {}", skipped.path.escape_debug(), skipped.reason)?;
        }
        if summary.skipped_count > summary.skipped.len() as u64 {
            writeln!(
                out,
                "  ... and {} more",
                summary.skipped_count - summary.skipped.len() as u64
            )?;
        }
    }
    if summary.dropped_xattrs_count > 0 {
        writeln!(out, "Dropped {} xattrs:", summary.dropped_xattrs_count)?;
        for (reason, count) in &summary.dropped_by_reason {
            writeln!(out, "  {count} x {reason}")?;
        }
        for dropped in &summary.dropped_xattrs {
            writeln!(
                out,
                "  {} {}: {}",
                dropped.path.escape_debug(),
                dropped.name.as_deref().unwrap_or("").escape_debug(),
                dropped.reason
            )?;
        }
        if summary.dropped_xattrs_count > summary.dropped_xattrs.len() as u64 {
            writeln!(
                out,
                "  ... and {} more",
                summary.dropped_xattrs_count - summary.dropped_xattrs.len() as u64
            )?;
        }
    }
    for problem in &summary.problems {
        writeln!(
            out,
            "Problem: {}: {}",
            problem.path.escape_debug(),
            problem.reason
        )?;
    }
    Ok(())
}

/// The entries a whole-filesystem extraction visits, for the bar's total: the inodes in use
/// less the reserved ones (hard links make it a slight underestimate).
fn entry_total(fs: &Filesystem, ino: u32) -> Option<u64> {
    (ino == e4inspect::reader::dir::ROOT_INO).then(|| {
        let used = fs.sb.inodes_count.saturating_sub(fs.sb.free_inodes_count);
        u64::from(used.saturating_sub(fs.sb.first_ino().saturating_sub(1)))
    })
}

/// A bar counting entries (out of `total` when known), bytes in its message.
fn progress_bar(enabled: bool, total: Option<u64>) -> indicatif::ProgressBar {
    let show = super::progress::enabled(!enabled);
    super::progress::bar(show, "extracting", super::progress::Unit::Entries, total)
}

/// Run the subcommand.
pub fn run(args: &ExtractArgs) -> anyhow::Result<i32> {
    let fs = Filesystem::open(&args.image, &args.source.open_options())
        .with_context(|| format!("{}", args.image.display()))?;
    super::watch_reads(&fs);
    args.source.note_recovery(&fs);
    let path = args.path.clone().unwrap_or_else(|| "/".into());
    let (ino, base) =
        parse_target(&fs, &path).with_context(|| format!("{}: {}", args.image.display(), path))?;
    if let Some(line) = absent_target(&fs, ino) {
        // Nothing of it can be copied: refused before an archive or a directory is begun.
        super::say(format_args!("{}: {path}: {line}", args.image.display()));
        return Ok(super::EXIT_OPERATIONAL);
    }
    let pb = progress_bar(!args.no_progress, entry_total(&fs, ino));
    let bytes_done = std::sync::atomic::AtomicU64::new(0);
    let progress = |entries: u64, bytes: u64| {
        if bytes > 0 {
            let total = bytes_done.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed) + bytes;
            pb.set_message(format!("extracting {},", indicatif::HumanBytes(total)));
        }
        if entries > 0 {
            pb.inc(entries);
        }
    };
    // A hidden bar still takes a lock per call: with no bar, report to nobody.
    let silent = |_: u64, _: u64| {};
    let report: &(dyn Fn(u64, u64) + Sync) = if pb.is_hidden() { &silent } else { &progress };
    let tar_out = args.tar_out();
    let (res, dest) = match &tar_out {
        Some(out) => (write_archive(&fs, ino, base, out, report), out.clone()),
        None => {
            let dest = args.dest.clone().unwrap_or_else(|| PathBuf::from("."));
            let (dir, name) = destination(&dest, base, args.force)?;
            let opts = ExtractOptions {
                force: args.force,
                privileged: e4inspect::reader::os::at::effective_uid() == 0,
            };
            let extracted = extract::extract(&fs, ino, &dir, name.as_deref(), opts, report)
                .map_err(anyhow::Error::from);
            (extracted, dest)
        }
    };
    pb.finish_and_clear();
    let summary = res.with_context(|| format!("extract {path}"))?;
    if let Some(line) = first_absent(&summary) {
        // An incomplete copy for want of input (e2image): one line, not a partial summary.
        super::say(format_args!("{}: {line}", args.image.display()));
        return Ok(super::EXIT_OPERATIONAL);
    }
    let mut out = String::new();
    if args.output.json() {
        let doc = ExtractDocument {
            schema_version: SchemaVersion,
            image: args.image.display().to_string(),
            path,
            dest: dest.display().to_string(),
            summary: &summary,
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        text(&summary, &mut out)?;
    }
    if tar_out.as_deref() == Some(Path::new("-")) {
        // The archive is on stdout: the summary goes beside it.
        eprint!("{out}");
    } else {
        super::emit(&out)?;
    }
    Ok(exit_status(&summary, args.strict))
}

/// When the image is metadata-only (e2image) and does not hold target directory `ino`'s
/// blocks, why (a normal e2image file holds no directory block: nothing could be copied).
fn absent_target(fs: &Filesystem, ino: u32) -> Option<String> {
    if !fs.source.container().is_some_and(|k| k.metadata_only()) {
        return None;
    }
    let raw = fs.inode_raw(ino).ok()?;
    let inode = e4inspect::reader::inode::Inode::parse(&raw);
    if !inode.is_dir() {
        return None;
    }
    match extract::list_dir(fs, ino, &raw, &inode) {
        Err(e) if e.is_absent() || e.to_string().contains(e4inspect::error::ABSENT) => {
            Some(e.to_string())
        }
        _ => None,
    }
}

/// The first entry skipped or damaged for want of bytes a metadata-only image does not hold.
fn first_absent(summary: &Summary) -> Option<String> {
    summary
        .problems
        .iter()
        .chain(&summary.skipped)
        .find(|n| n.reason.contains(e4inspect::error::ABSENT))
        .map(|n| format!("{}: {}", n.path, n.reason))
}

/// 0 everything the caller could have was extracted; 4 entries skipped or damaged (with
/// `--strict` also device nodes not made and owners not kept); 8 an e2image lacked the data.
fn exit_status(summary: &Summary, strict: bool) -> i32 {
    // File data or blocks a metadata-only image (e2image) does not hold: the copy is incomplete
    // for want of input, not for damage.
    let absent = summary
        .problems
        .iter()
        .chain(&summary.skipped)
        .any(|n| n.reason.contains(e4inspect::error::ABSENT));
    if absent {
        return super::EXIT_OPERATIONAL;
    }
    let unprivileged_loss = summary.devices_not_made > 0 || summary.owners_not_kept > 0;
    if summary.skipped_count > 0 || !summary.problems.is_empty() || (strict && unprivileged_loss) {
        super::EXIT_PROBLEMS
    } else {
        super::EXIT_OK
    }
}

/// Write the archive to `out` (`-`: stdout), through one buffered writer.
fn write_archive(
    fs: &Filesystem,
    ino: u32,
    base: Option<Vec<u8>>,
    out: &Path,
    report: &(dyn Fn(u64, u64) + Sync),
) -> anyhow::Result<Summary> {
    let name = base.unwrap_or_else(|| format!("inode-{ino}").into_bytes());
    const BUF: usize = 1 << 20;
    if out == Path::new("-") {
        let writer = std::io::BufWriter::with_capacity(BUF, std::io::stdout().lock());
        return Ok(e4inspect::views::tar::write_tar(
            fs, ino, &name, writer, report,
        )?);
    }
    let file = std::fs::File::create(out).with_context(|| format!("{}", out.display()))?;
    let writer = std::io::BufWriter::with_capacity(BUF, file);
    e4inspect::views::tar::write_tar(fs, ino, &name, writer, report)
        .with_context(|| format!("{}", out.display()))
}

/// The `extract --json` document.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct ExtractDocument<'a> {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// The image as given.
    pub image: String,
    /// The file or subtree extracted, as given.
    pub path: String,
    /// Where it was written.
    pub dest: String,
    /// What was extracted, skipped and dropped.
    #[serde(flatten)]
    pub summary: &'a e4inspect::views::extract::Summary,
}
