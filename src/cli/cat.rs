//! `e4inspect cat IMAGE PATH|<INO>`: a file's contents on stdout, like `debugfs -R "cat FILE"`.

use anyhow::Context;
use e4inspect::reader::fs::Filesystem;
use e4inspect::reader::inode::Inode;
use e4inspect::reader::namei;
use e4inspect::views::contents::{self, CopyError};
use std::io::Write;
use std::path::PathBuf;

/// Write a file's contents to stdout (holes as zeros, inline data, any size).
#[derive(clap::Args, Debug, Clone)]
pub struct CatArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Paths from the root (symlinks in intermediate components are followed) or `<INO>`;
    /// several are written one after another.
    #[arg(required = true, value_name = "PATH|<INO>")]
    pub targets: Vec<String>,
    /// Stop inline-data files at their size (debugfs writes the whole inline area: the 60 bytes
    /// of i_block and the system.data value, whatever the size).
    #[arg(long)]
    pub exact_size: bool,
    #[command(flatten)]
    pub source: super::SourceArgs,
}

/// Open the filesystem of `image`; the error names the image once (messages about the input
/// often name it already).
pub(crate) fn open_image(
    image: &std::path::Path,
    source: &super::SourceArgs,
) -> anyhow::Result<Filesystem> {
    let fs = Filesystem::open(image, &source.open_options()).map_err(|e| {
        let shown = image.display().to_string();
        if e.to_string().starts_with(&shown) {
            anyhow::Error::new(e)
        } else {
            anyhow::Error::new(e).context(shown)
        }
    })?;
    super::watch_reads(&fs);
    source.note_recovery(&fs);
    Ok(fs)
}

/// Run the subcommand: 0 fine, 8 when a file could not be found or read.
pub fn run(args: &CatArgs) -> anyhow::Result<i32> {
    let fs = open_image(&args.image, &args.source)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut status = 0;
    // stdout as a file, for copies inside the kernel (a pipe or a file; a terminal refuses).
    let direct = {
        use std::os::fd::AsFd;
        std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(std::fs::File::from)
    };
    let inline = if args.exact_size {
        contents::InlineSize::ISize
    } else {
        contents::InlineSize::Area
    };
    for target in &args.targets {
        let what = || format!("{}: {target}", args.image.display());
        let res = namei::parse_target(&fs, target)
            .and_then(|ino| Ok((ino, fs.inode_raw(ino)?)))
            .map_err(CopyError::Read)
            .and_then(|(ino, raw)| {
                contents::copy_contents_to(
                    &fs,
                    ino,
                    &Inode::parse(&raw),
                    inline,
                    &mut out,
                    direct.as_ref(),
                )
            });
        match res {
            Ok(_) => {}
            Err(CopyError::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                return Ok(status)
            }
            Err(CopyError::Write(e)) => return Err(e).context("writing to stdout"),
            Err(CopyError::Read(e)) => {
                super::say(format_args!("{}: {e}", what()));
                status = 8;
            }
        }
    }
    match out.flush() {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(status),
        r => {
            r.context("writing to stdout")?;
            Ok(status)
        }
    }
}
