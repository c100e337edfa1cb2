//! The command-line interface: one module per subcommand. Only this side prints.
//!
//! Every command writes its output through [`emit`] (or the [`outln!`] macro over it), a
//! `BufWriter` it flushes itself, or a `&mut dyn Write` handed to a formatter; write errors
//! propagate as errors, and `main` ends the program quietly with exit 0 when the error is a
//! closed pipe (`| head`), as ripgrep does.

/// `println!` for commands: through the one stdout writer, propagating write errors with `?`.
macro_rules! outln {
    () => {
        $crate::cli::emit("\n")?
    };
    ($($arg:tt)*) => {
        $crate::cli::emit(&format!("{}\n", format_args!($($arg)*)))?
    };
}

pub mod advise;
pub mod cat;
pub mod check;
pub mod docgen;
pub mod dump;
pub mod extract;
pub mod fit;
pub mod freefrag;
pub mod inode;
pub mod journal;
pub mod ls;
pub mod xattrs;

use std::path::Path;

/// Exit status: everything fine.
pub const EXIT_OK: i32 = 0;
/// Exit status: problems found (check) or the dump reported checksum trouble.
pub const EXIT_PROBLEMS: i32 = 4;
/// Exit status: operational error (not ext2/3/4, unreadable, truncated).
pub const EXIT_OPERATIONAL: i32 = 8;
/// Exit status: usage error.
pub const EXIT_USAGE: i32 = 16;

/// Options shared by every command that opens an image.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SourceArgs {
    /// Byte offset of the filesystem inside the image or device (skips partition detection).
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub offset: Option<u64>,
    /// Partition number of a whole-disk image (MBR or GPT), 1-based.
    #[arg(long, value_name = "N")]
    pub partition: Option<u32>,
}

impl SourceArgs {
    /// Library open options for these arguments.
    pub fn open_options(&self) -> e4inspect::fs::OpenOptions {
        e4inspect::fs::OpenOptions {
            offset: self.offset,
            partition: self.partition,
            ..Default::default()
        }
    }
}

/// Parse a size with an optional K/M/G/T/P suffix (powers of 1024), a byte count or `0x` hex
/// (clap value parser over [`e4inspect::advise::parse_size`]).
pub fn parse_size(s: &str) -> Result<u64, String> {
    e4inspect::advise::parse_size(s).map_err(|e| e.to_string())
}

/// One line on stderr for an operational error, naming the path.
pub fn report_error(path: &Path, err: &dyn std::fmt::Display) {
    let p = path.display().to_string();
    let msg = err.to_string();
    if msg.starts_with(&p) {
        eprintln!("e4inspect: {msg}");
    } else {
        eprintln!("e4inspect: {p}: {msg}");
    }
}

/// Write `text` to stdout and flush. Errors (a closed pipe among them) propagate; `main` turns
/// a closed pipe into a quiet exit 0.
pub fn emit(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// True when `err` (or anything it wraps) is a write to a closed pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        let io = cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind);
        let json = cause
            .downcast_ref::<serde_json::Error>()
            .and_then(serde_json::Error::io_error_kind);
        io == Some(std::io::ErrorKind::BrokenPipe) || json == Some(std::io::ErrorKind::BrokenPipe)
    })
}
