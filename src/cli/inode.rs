//! `e4inspect inode IMAGE INODE|PATH...`: what `debugfs -R "stat <N>"` shows, then where every
//! xattr lives, the in-inode xattr space, checksums and anything found wrong (the text and JSON
//! come from [`e4inspect::format::debugfs_stat`]).

use super::emit;
use anyhow::Context;
use e4inspect::format::debugfs_stat::{debugfs_text, details_text};
use e4inspect::format::inode_json::{json_of, InodeDocument, InodeEntry};
use e4inspect::format::json::SchemaVersion;
use e4inspect::reader::fs::Filesystem;
use e4inspect::views::inode::report;
use std::io::Write;
use std::path::PathBuf;

/// Show inodes like `debugfs -R "stat <N>"`, with xattr locations and space.
#[derive(clap::Args, Debug, Clone)]
pub struct InodeArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Inode numbers (`12` or `<12>`) or paths from the root (`/etc/passwd`).
    #[arg(required = true, value_name = "INODE|PATH")]
    pub targets: Vec<String>,
    /// Output format.
    #[command(flatten)]
    pub output: super::OutputArgs,
    /// Where the filesystem lies inside the image.
    #[command(flatten)]
    pub source: super::SourceArgs,
}

/// Run the subcommand: 0 fine, 4 when any inode has problems, 8 when an inode could not be read.
pub fn run(args: InodeArgs) -> anyhow::Result<i32> {
    let opts = args.source.open_options();
    let fs = Filesystem::open(&args.image, &opts)
        .with_context(|| format!("{}", args.image.display()))?;
    super::watch_reads(&fs);
    args.source.note_recovery(&fs);
    let mut status = 0;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut js = Vec::new();
    let mut first = true;
    for target in &args.targets {
        let raw = e4inspect::reader::namei::parse_target(&fs, target)
            .map_err(anyhow::Error::from)
            .and_then(|ino| Ok((ino, fs.inode_raw(ino)?)));
        let record = raw
            .as_ref()
            .map_err(|e| anyhow::anyhow!("{e:#}"))
            .and_then(|(ino, raw)| Ok(report(&fs, *ino, raw)?));
        let record = match record {
            Ok(record) => record,
            Err(e) => {
                super::report_target(&args.image, target, &e);
                status = 8;
                if args.output.json() {
                    js.push(InodeEntry::Failed {
                        target: target.clone(),
                        ino: raw.as_ref().ok().map(|(ino, _)| *ino),
                        error: format!("{e:#}"),
                    });
                }
                continue;
            }
        };
        if !record.problems.is_empty() && status == 0 {
            status = 4;
        }
        // What a metadata-only image does not hold is said, once per block, without failing:
        // the record itself is complete.
        for absent in &record.absent {
            super::say(format_args!(
                "{}: inode {}: {absent}",
                args.image.display(),
                record.ino
            ));
        }
        if args.output.json() {
            js.push(InodeEntry::Found(Box::new(json_of(&fs, target, &record))));
        } else {
            let res = (|| {
                if !first {
                    out.write_all(b"\n")?;
                }
                debugfs_text(&fs, &record, &mut out)?;
                out.write_all(details_text(&fs, &record).as_bytes())
            })();
            first = false;
            match res {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(status),
                r => r.context("writing to stdout")?,
            }
        }
    }
    match out.flush() {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(status),
        r => r.context("writing to stdout")?,
    }
    drop(out);
    if args.output.json() {
        let doc = InodeDocument {
            schema_version: SchemaVersion,
            image: args.image.display().to_string(),
            inodes: js,
        };
        emit(&(serde_json::to_string_pretty(&doc)? + "\n"))?;
    }
    Ok(status)
}
