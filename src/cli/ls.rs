//! `e4inspect ls IMAGE [PATH|<INO>]`: list a directory like `debugfs -R "ls [-l] [-d] [-p] [-r]"`,
//! byte for byte, or as JSON.

use anyhow::Context;
use e4inspect::format::debugfs_ls::{self, LsEntry, LsOptions};
use e4inspect::format::json::SchemaVersion;
use e4inspect::reader::fs::Filesystem;
use e4inspect::reader::namei;
use std::io::Write;
use std::path::PathBuf;

/// List a directory like `debugfs -R "ls"` (or as JSON).
#[derive(clap::Args, Debug, Clone)]
pub struct LsArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Directories: paths from the root (symlinks in intermediate components are followed) or
    /// inode numbers as `<12>`; several are listed one after another, anything else as a single
    /// entry.
    #[arg(default_value = "/", value_name = "PATH|<INO>")]
    pub targets: Vec<String>,
    /// Long listing: inode, mode, file type, owner, size and modification time.
    #[arg(short = 'l')]
    pub long: bool,
    /// Also list deleted entries found in the slack of live ones (inode shown in `<>`).
    #[arg(short = 'd')]
    pub deleted: bool,
    /// Parseable output: `/inode/mode/uid/gid/name/size/` lines.
    #[arg(short = 'p')]
    pub parse: bool,
    /// Raw names: no `<encrypted (N)>` placeholders in encrypted directories.
    #[arg(short = 'r')]
    pub raw: bool,
    /// Output format.
    #[command(flatten)]
    pub output: super::OutputArgs,
    #[command(flatten)]
    pub source: super::SourceArgs,
}

/// Run the subcommand: 0 fine, 4 when a directory or an entry's inode could not be read, 8 when
/// the image could not be opened or a target does not resolve.
pub fn run(args: &LsArgs) -> anyhow::Result<i32> {
    let fs = Filesystem::open(&args.image, &args.source.open_options())
        .with_context(|| format!("{}", args.image.display()))?;
    super::watch_reads(&fs);
    args.source.note_recovery(&fs);
    if args.output.json() {
        return run_json(&fs, args);
    }
    let mut status = 0;
    for target in &args.targets {
        let code = match list_one(&fs, args, target) {
            Ok(c) => c,
            Err(e) => {
                super::say(format_args!("{}", super::one_line(&e)));
                8
            }
        };
        if code < 0 {
            return Ok(status); // stdout closed
        }
        status = status.max(code);
    }
    Ok(status)
}

/// The `ls --json` document: one listing per target, however many targets are given.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct LsDocument {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// The image as given.
    pub image: String,
    /// One listing per target, in the order given.
    pub listings: Vec<Listing>,
}

/// The listing of one target, or why it could not be listed.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Listing {
    /// The target as given.
    pub target: String,
    /// Its inode number, when the target was found.
    pub inode: Option<u32>,
    /// The entries (a target that is not a directory is listed as its own single entry).
    pub entries: Vec<LsEntry>,
    /// Inodes of entries that could not be read (their entries carry no inode data).
    pub problems: Vec<String>,
    /// Why the target could not be listed, or why the listing ended early.
    pub error: Option<String>,
    /// The listing ended at blocks a metadata-only image does not hold (exit 8, not damage).
    #[serde(skip)]
    #[schemars(skip)]
    pub absent: bool,
}

/// Every target in one JSON document; the exit status is the worst of the targets'.
fn run_json(fs: &Filesystem, args: &LsArgs) -> anyhow::Result<i32> {
    let mut status = 0;
    let mut listings = Vec::new();
    for target in &args.targets {
        let listing = listing(fs, args, target);
        for message in &listing.problems {
            super::say(format_args!("{message}"));
        }
        if let Some(err) = &listing.error {
            super::say(format_args!("{}: {target}: {err}", args.image.display()));
        }
        status = status.max(
            match (&listing.inode, &listing.error, listing.problems.is_empty()) {
                (None, _, _) => 8,
                _ if listing.absent => 8,
                (Some(_), Some(_), _) | (Some(_), None, false) => 4,
                _ => 0,
            },
        );
        listings.push(listing);
    }
    let doc = LsDocument {
        schema_version: SchemaVersion,
        image: args.image.display().to_string(),
        listings,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let res = serde_json::to_writer_pretty(&mut out, &doc)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match res {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(status),
        r => r.map(|()| status).context("writing to stdout"),
    }
}

/// The listing of `target`.
fn listing(fs: &Filesystem, args: &LsArgs, target: &str) -> Listing {
    let mut result = Listing {
        target: target.to_string(),
        inode: None,
        entries: Vec::new(),
        problems: Vec::new(),
        error: None,
        absent: false,
    };
    let found = namei::parse_target(fs, target)
        .map_err(|e| e.to_string())
        .and_then(|ino| {
            fs.inode_raw(ino)
                .map(|raw| (ino, raw))
                .map_err(|e| e.to_string())
        });
    let (ino, raw) = match found {
        Ok(x) => x,
        Err(e) => {
            result.error = Some(e);
            return result;
        }
    };
    result.inode = Some(ino);
    let (entries, report) = if e4inspect::reader::inode::Inode::parse(&raw).is_dir() {
        debugfs_ls::list_json(fs, ino, args.deleted)
    } else {
        debugfs_ls::list_single_json(fs, ino, last_component(target))
    };
    result.entries = entries;
    result.problems = report.stderr;
    result.error = report.error;
    result.absent = report.absent;
    result
}

/// The last component of a path target (a file operand is named by it, as ls(1) names it).
fn last_component(target: &str) -> &[u8] {
    target
        .rsplit('/')
        .find(|c| !c.is_empty())
        .unwrap_or(target)
        .as_bytes()
}

/// List one target; -1 when stdout was closed.
fn list_one(fs: &Filesystem, args: &LsArgs, target: &str) -> anyhow::Result<i32> {
    let what = || format!("{}: {target}", args.image.display());
    let ino = namei::parse_target(fs, target).with_context(what)?;
    let raw = fs.inode_raw(ino).with_context(what)?;
    let is_dir = e4inspect::reader::inode::Inode::parse(&raw).is_dir();
    // A target that is not a directory is listed on its own, as ls(1) lists a file operand
    // (debugfs prints an empty listing and an error there), named by its last component.
    let name = last_component(target);
    // From a metadata-only image (e2image) a directory whose blocks it does not hold is refused
    // in one line, not listed in part: the listing is kept until the walk is done.
    if fs.source.container().is_some_and(|k| k.metadata_only()) {
        let mut held = Vec::new();
        let report = list_to(fs, args, ino, is_dir, name, &mut held)?;
        if report.absent {
            let err = report.error.unwrap_or_default();
            super::say(format_args!("{}: {err}", what()));
            return Ok(8);
        }
        return finish_listing(&held, report, &what());
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let res = {
        let opts = LsOptions {
            long: args.long,
            deleted: args.deleted,
            parse: args.parse,
            raw: args.raw,
        };
        if is_dir {
            debugfs_ls::list(fs, ino, opts, &mut out)
        } else {
            debugfs_ls::list_single(fs, ino, name, opts, &mut out)
        }
    };
    let report = match res.and_then(|r| out.flush().map(|()| r)) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(-1),
        Err(e) => return Err(e).context("writing to stdout"),
    };
    for message in &report.stderr {
        super::say(format_args!("{message}"));
    }
    if let Some(err) = &report.error {
        super::say(format_args!("{}: {err}", what()));
    }
    Ok(if report.stderr.is_empty() && report.error.is_none() {
        0
    } else {
        4
    })
}

/// List `ino` into `out` (see [`list_one`]); write errors are those of `out`.
fn list_to(
    fs: &Filesystem,
    args: &LsArgs,
    ino: u32,
    is_dir: bool,
    name: &[u8],
    out: &mut dyn Write,
) -> anyhow::Result<debugfs_ls::LsReport> {
    let opts = LsOptions {
        long: args.long,
        deleted: args.deleted,
        parse: args.parse,
        raw: args.raw,
    };
    let listed = if is_dir {
        debugfs_ls::list(fs, ino, opts, out)
    } else {
        debugfs_ls::list_single(fs, ino, name, opts, out)
    };
    listed.context("listing")
}

/// Write a listing kept in memory and report as [`list_one`] does; -1 when stdout was closed.
fn finish_listing(held: &[u8], report: debugfs_ls::LsReport, what: &str) -> anyhow::Result<i32> {
    let mut out = std::io::stdout().lock();
    match out.write_all(held).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(-1),
        r => r.context("writing to stdout")?,
    }
    for message in &report.stderr {
        super::say(format_args!("{message}"));
    }
    if let Some(err) = &report.error {
        super::say(format_args!("{what}: {err}"));
    }
    Ok(if report.stderr.is_empty() && report.error.is_none() {
        0
    } else {
        4
    })
}
