//! `e4inspect extract IMAGE PATH DEST`: copy a file or a subtree out of an image (debugfs
//! `rdump`), keeping metadata; see [`e4inspect::views::extract`].
//!
//! DEST as `cp` takes it: an existing directory receives `DEST/<basename of PATH>` (the root `/`
//! fills DEST itself, which must then be empty unless `--force`); a DEST that does not exist is
//! the name of the copy. Exit status: 0 everything extracted, 4 some entries skipped or damaged
//! (listed), 8 nothing could be done, 16 usage.

use anyhow::Context;
use e4inspect::format::json::SchemaVersion;
use e4inspect::reader::fs::Filesystem;
use e4inspect::views::extract::{self, ExtractOptions, Summary};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Copy a file or a whole subtree out of the image, keeping types, modes, owners (as root),
/// times, symlinks, hard links, holes and xattrs.
#[derive(clap::Args, Debug, Clone)]
pub struct ExtractArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Path inside the filesystem (or <INO>).
    pub path: String,
    /// Destination: an existing directory to copy into, or the name of the copy.
    pub dest: PathBuf,
    /// Replace existing destination entries (an existing directory is merged into).
    #[arg(long)]
    pub force: bool,
    /// Output format.
    #[command(flatten)]
    pub output: super::OutputArgs,
    /// Never show a progress bar.
    #[arg(long)]
    pub no_progress: bool,
    #[command(flatten)]
    pub source: super::SourceArgs,
}

fn parse_target(fs: &Filesystem, t: &str) -> anyhow::Result<(u32, Option<Vec<u8>>)> {
    use std::os::unix::ffi::OsStrExt;
    if let Some(n) = t.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
        let ino: u32 = n
            .parse()
            .with_context(|| format!("{t}: not an inode number"))?;
        return Ok((
            ino,
            (ino != e4inspect::reader::dir::ROOT_INO).then(|| format!("inode-{ino}").into_bytes()),
        ));
    }
    let ino = e4inspect::reader::namei::resolve_path(fs, t)?;
    let base = Path::new(t).file_name().map(|n| n.as_bytes().to_vec());
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

fn progress_bar(enabled: bool) -> indicatif::ProgressBar {
    let show = super::progress::enabled(!enabled);
    super::progress::bar(show, "extracting", super::progress::Unit::Bytes, None)
}

fn text(s: &Summary, out: &mut String) -> std::fmt::Result {
    writeln!(
        out,
        "Extracted {} files ({} bytes), {} directories, {} symlinks, {} hard links, {} FIFOs, {} device nodes, {} sockets",
        s.files, s.bytes, s.dirs, s.symlinks, s.hard_links, s.fifos, s.devices, s.sockets
    )?;
    writeln!(out, "Not restored: {}", s.not_restored)?;
    if s.skipped_count > 0 {
        writeln!(out, "Skipped {} entries:", s.skipped_count)?;
        for n in &s.skipped {
            writeln!(out, "  {}: {}", n.path.escape_debug(), n.reason)?;
        }
        if s.skipped_count > s.skipped.len() as u64 {
            writeln!(
                out,
                "  ... and {} more",
                s.skipped_count - s.skipped.len() as u64
            )?;
        }
    }
    if s.dropped_xattrs_count > 0 {
        writeln!(out, "Dropped {} xattrs:", s.dropped_xattrs_count)?;
        for (reason, n) in &s.dropped_by_reason {
            writeln!(out, "  {n} x {reason}")?;
        }
        for n in &s.dropped_xattrs {
            writeln!(
                out,
                "  {} {}: {}",
                n.path.escape_debug(),
                n.name.as_deref().unwrap_or("").escape_debug(),
                n.reason
            )?;
        }
        if s.dropped_xattrs_count > s.dropped_xattrs.len() as u64 {
            writeln!(
                out,
                "  ... and {} more",
                s.dropped_xattrs_count - s.dropped_xattrs.len() as u64
            )?;
        }
    }
    for n in &s.problems {
        writeln!(out, "Problem: {}: {}", n.path.escape_debug(), n.reason)?;
    }
    Ok(())
}

/// Run the subcommand.
pub fn run(args: &ExtractArgs) -> anyhow::Result<i32> {
    let fs = Filesystem::open(&args.image, &args.source.open_options())
        .with_context(|| format!("{}", args.image.display()))?;
    args.source.note_recovery(&fs);
    let (ino, base) = parse_target(&fs, &args.path)
        .with_context(|| format!("{}: {}", args.image.display(), args.path))?;
    let (dir, name) = destination(&args.dest, base, args.force)?;
    let opts = ExtractOptions {
        force: args.force,
        privileged: e4inspect::reader::os::at::effective_uid() == 0,
    };
    let pb = progress_bar(!args.no_progress);
    let entries_done = std::sync::atomic::AtomicU64::new(0);
    let progress = |entries: u64, b: u64| {
        if entries > 0 {
            let n = entries_done.fetch_add(entries, std::sync::atomic::Ordering::Relaxed) + entries;
            pb.set_message(format!("extracting: {} entries,", indicatif::HumanCount(n)));
        }
        if b > 0 {
            pb.inc(b);
        }
    };
    // A hidden bar still takes a lock per call: with no bar, report to nobody.
    let silent = |_: u64, _: u64| {};
    let report: &(dyn Fn(u64, u64) + Sync) = if pb.is_hidden() { &silent } else { &progress };
    let res = extract::extract(&fs, ino, &dir, name.as_deref(), opts, report);
    pb.finish_and_clear();
    let s = res.with_context(|| format!("extract {}", args.path))?;
    let mut out = String::new();
    if args.output.json() {
        let doc = ExtractDocument {
            schema_version: SchemaVersion,
            image: args.image.display().to_string(),
            path: args.path.clone(),
            dest: args.dest.display().to_string(),
            summary: &s,
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        text(&s, &mut out)?;
    }
    super::emit(&out)?;
    // File data or blocks a metadata-only image (e2image) does not hold: the copy is incomplete
    // for want of input, not for damage.
    let absent = s
        .problems
        .iter()
        .chain(&s.skipped)
        .any(|n| n.reason.contains(e4inspect::error::ABSENT));
    if absent {
        return Ok(super::EXIT_OPERATIONAL);
    }
    Ok(if s.skipped_count > 0 || !s.problems.is_empty() {
        super::EXIT_PROBLEMS
    } else {
        super::EXIT_OK
    })
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
