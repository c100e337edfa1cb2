//! `e4inspect cat IMAGE PATH|<INO>`: a file's contents on stdout, like `debugfs -R "cat FILE"`.

use anyhow::Context;
use e4inspect::contents::{self, CopyError};
use e4inspect::fs::Filesystem;
use e4inspect::inode::Inode;
use e4inspect::namei;
use std::io::Write;
use std::path::PathBuf;

/// Write a file's contents to stdout (holes as zeros, inline data, any size).
#[derive(clap::Args, Debug, Clone)]
pub struct CatArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// A path from the root (symlinks in intermediate components are followed) or `<INO>`.
    #[arg(value_name = "PATH|<INO>")]
    pub target: String,
    #[command(flatten)]
    pub source: super::SourceArgs,
}

/// Run the subcommand: 0 fine, 8 when the file could not be found or read.
pub fn run(args: &CatArgs) -> anyhow::Result<i32> {
    let fs = Filesystem::open(&args.image, &args.source.open_options())
        .with_context(|| format!("{}", args.image.display()))?;
    let what = || format!("{}: {}", args.image.display(), args.target);
    let ino = namei::parse_target(&fs, &args.target).with_context(what)?;
    let raw = fs.inode_raw(ino).with_context(what)?;
    let inode = Inode::parse(raw);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let res = contents::copy_contents(&fs, ino, &inode, &mut out)
        .and_then(|_| out.flush().map_err(CopyError::Write));
    match res {
        Ok(()) => Ok(0),
        Err(CopyError::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        Err(CopyError::Write(e)) => Err(e).context("writing to stdout"),
        Err(CopyError::Read(e)) => Err(e).with_context(what),
    }
}
