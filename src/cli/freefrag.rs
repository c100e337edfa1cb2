//! `e4inspect freefrag`: free-space fragmentation, byte-identical to `e2freefrag [-c N]`, or JSON.

use super::{report_error, SourceArgs, EXIT_OK, EXIT_OPERATIONAL, EXIT_USAGE};
use e4inspect::format::e2freefrag;
use e4inspect::format::json::SchemaVersion;
use e4inspect::reader::fs::Filesystem;
use e4inspect::views::freefrag;
use std::io::Write;
use std::path::PathBuf;

/// Report free-space fragmentation: free extents by size and free chunks (e2freefrag).
#[derive(clap::Args, Debug, Clone)]
pub struct FreefragArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Chunk size in KiB (a power of 2, at least the block size); adds the chunk lines.
    /// Decimal, 0x hex or 0 octal, as e2freefrag's strtoull.
    #[arg(short = 'c', value_name = "CHUNK_KB", value_parser = parse_c_number)]
    pub chunk_kb: Option<u64>,
    /// Output format.
    #[command(flatten)]
    pub output: super::OutputArgs,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// strtoull(s, &end, 0) with nothing left over.
fn parse_c_number(arg: &str) -> Result<u64, String> {
    let text = arg.trim_start();
    let parsed = if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16)
    } else if text.len() > 1 && text.starts_with('0') {
        u64::from_str_radix(&text[1..], 8)
    } else {
        text.parse::<u64>()
    };
    parsed.map_err(|_| format!("bad chunk size '{arg}'"))
}

/// Run the command; returns the exit status.
pub fn run(args: &FreefragArgs) -> anyhow::Result<i32> {
    let mut open = args.source.open_options();
    // e2freefrag opens with EXT2_FLAG_FORCE and without ignoring checksum errors.
    open.force = true;
    let fs = match Filesystem::open(&args.image, &open) {
        Ok(fs) => fs,
        Err(e) => {
            report_error(&args.image, &e);
            return Ok(EXIT_OPERATIONAL);
        }
    };
    super::watch_reads(&fs);
    args.source.note_recovery(&fs);
    if let Some(failure) = fs.strict_failure {
        report_error(
            &args.image,
            &format!("{} while opening filesystem", failure.message()),
        );
        return Ok(EXIT_OPERATIONAL);
    }
    if fs.geo.journal_dev {
        report_error(
            &args.image,
            &"Filesystem has unsupported feature(s) while opening filesystem (a journal device)",
        );
        return Ok(EXIT_OPERATIONAL);
    }
    let chunk_bytes = match freefrag::chunk_bytes(args.chunk_kb, fs.block_size()) {
        Ok(c) => c,
        Err(m) => {
            super::say(format_args!("{m}"));
            return Ok(EXIT_USAGE);
        }
    };
    let device = args.image.display().to_string();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if !args.output.json() {
        e2freefrag::write_header(&mut out, &device, fs.block_size())?;
    }
    let res = freefrag::check_block_bitmaps(&fs)
        .map_err(|freefrag::Failure::ReadBitmap(m)| m.to_string())
        .and_then(|()| freefrag::report(&fs, chunk_bytes).map_err(|e| e.to_string()));
    let rep = match res {
        Ok(r) => r,
        Err(m) => {
            out.flush()?;
            report_error(&args.image, &format!("{m} while reading block bitmap"));
            return Ok(EXIT_OPERATIONAL);
        }
    };
    let written = if args.output.json() {
        let doc = FreefragDocument {
            schema_version: SchemaVersion,
            image: device,
            report: rep,
        };
        serde_json::to_writer_pretty(&mut out, &doc)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        e2freefrag::write_report(&mut out, &rep)
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => Ok(EXIT_OK),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(EXIT_OK),
        Err(e) => Err(e.into()),
    }
}

/// The `freefrag --json` document.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct FreefragDocument {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// The image as given.
    pub image: String,
    /// What e2freefrag prints.
    pub report: e4inspect::views::freefrag::Report,
}
