//! `e4inspect ls IMAGE [PATH|<INO>]`: list a directory like `debugfs -R "ls [-l] [-d] [-p] [-r]"`,
//! byte for byte, or as JSON.

use anyhow::Context;
use e4inspect::format::debugfs_ls::{self, LsOptions};
use e4inspect::fs::Filesystem;
use e4inspect::namei;
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
    /// Print a JSON array of entries (name, inode, type, mode, size, times).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub source: super::SourceArgs,
}

/// Run the subcommand: 0 fine, 4 when a directory or an entry's inode could not be read, 8 when
/// the image could not be opened or a target does not resolve.
pub fn run(args: &LsArgs) -> anyhow::Result<i32> {
    let fs = super::cat::open_image(&args.image, &args.source)?;
    let mut status = 0;
    for t in &args.targets {
        let code = match list_one(&fs, args, t) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("e4inspect: {e:#}");
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

/// List one target; -1 when stdout was closed.
fn list_one(fs: &Filesystem, args: &LsArgs, target: &str) -> anyhow::Result<i32> {
    let what = || format!("{}: {target}", args.image.display());
    let ino = namei::parse_target(fs, target).with_context(what)?;
    let raw = fs.inode_raw(ino).with_context(what)?;
    let is_dir = e4inspect::inode::Inode::parse(&raw).is_dir();
    // A target that is not a directory is listed on its own, as ls(1) lists a file operand
    // (debugfs prints an empty listing and an error there), named by its last component.
    let name = target
        .rsplit('/')
        .find(|c| !c.is_empty())
        .unwrap_or(target)
        .as_bytes();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let res = if args.json {
        let (v, report) = if is_dir {
            debugfs_ls::list_json(fs, ino, args.deleted)
        } else {
            debugfs_ls::list_single_json(fs, ino, name)
        };
        serde_json::to_writer_pretty(&mut out, &v)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .map(|()| report)
    } else {
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
    for m in &report.stderr {
        eprintln!("e4inspect: {m}");
    }
    if let Some(e) = &report.error {
        eprintln!("e4inspect: {}: {e}", what());
    }
    Ok(if report.stderr.is_empty() && report.error.is_none() {
        0
    } else {
        4
    })
}
