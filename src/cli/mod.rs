//! The command-line interface: one module per subcommand. Only this side prints.

pub mod advise;
pub mod check;
pub mod dump;
pub mod fit;
pub mod inode;
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

/// Parse a size with an optional K/M/G/T/P suffix (powers of 1024), or a plain byte count.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mul) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        Some('T') => (&t[..t.len() - 1], 1 << 40),
        Some('P') => (&t[..t.len() - 1], 1 << 50),
        _ => (t, 1),
    };
    let n: u64 = if let Some(h) = num.strip_prefix("0x") {
        u64::from_str_radix(h, 16).map_err(|e| format!("invalid size '{s}': {e}"))?
    } else {
        num.parse()
            .map_err(|e| format!("invalid size '{s}': {e}"))?
    };
    n.checked_mul(mul)
        .ok_or_else(|| format!("size '{s}' is too large"))
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
