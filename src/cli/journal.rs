//! `e4inspect journal`: the jbd2 log, byte-identical to `debugfs -R "logdump [-acOS] [-n N]
//! [-f JOURNAL]"` on stdout, or JSON.

use super::{report_error, SourceArgs, EXIT_OK, EXIT_OPERATIONAL, EXIT_PROBLEMS};
use e4inspect::format::json::SchemaVersion;
use e4inspect::format::logdump as text;
use e4inspect::fs::Filesystem;
use e4inspect::logdump::{self, DebugfsOpen, Event, ExternalJournal, InternalJournal, Options};
use std::io::Write;
use std::path::PathBuf;

/// Dump the journal: superblock, transactions with descriptor, revoke and commit blocks, tags,
/// and the fast-commit area (debugfs logdump).
#[derive(clap::Args, Debug, Clone)]
pub struct JournalArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Every tag and revoke record (logdump -a).
    #[arg(short = 'a')]
    pub all: bool,
    /// Hex dump of each logged block, with -a (logdump -c).
    #[arg(short = 'c')]
    pub contents: bool,
    /// Go on past the end of the valid log into old transactions (logdump -O).
    #[arg(short = 'O')]
    pub old: bool,
    /// Print the journal superblock first (logdump -S).
    #[arg(short = 'S')]
    pub superblock: bool,
    /// With -O: stop after N transactions (logdump -n).
    #[arg(short = 'n', value_name = "N", allow_hyphen_values = true, value_parser = parse_count)]
    pub count: Option<i64>,
    /// Read the journal from this external journal device or file (logdump -f).
    #[arg(short = 'f', long = "journal-device", value_name = "PATH")]
    pub journal_device: Option<PathBuf>,
    /// Emit JSON events (with checksums of descriptor, commit and data blocks verified).
    #[arg(long)]
    pub json: bool,
    /// Output format: text or json (`--json` is the shorthand for `--format json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::TextOrJson>,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// strtol(s, &end, 10) with nothing left over.
fn parse_count(s: &str) -> Result<i64, String> {
    s.trim_start()
        .parse::<i64>()
        .map_err(|_| format!("Bad log counts number - {s}"))
}

/// Run the command; returns the exit status.
pub fn run(args: &JournalArgs) -> anyhow::Result<i32> {
    let opts = Options {
        all: args.all,
        old: args.old,
        superblock: args.superblock || args.json,
        contents: args.contents,
        count: args.count.unwrap_or(-1),
        verify: args.json,
    };
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let fs = Filesystem::open(&args.image, &args.source.open_options());
    // What debugfs makes of the filesystem before logdump runs.
    let mut opened: Option<(&Filesystem, bool)> = None;
    if let Ok(fs) = &fs {
        match logdump::debugfs_open(fs) {
            DebugfsOpen::Open {
                retried,
                ignore_csum,
            } => {
                if retried && !args.json {
                    writeln!(w, "Checksum errors in superblock!  Retrying...")?;
                }
                opened = Some((fs, ignore_csum));
            }
            DebugfsOpen::Fails(m) => {
                if fs.strict_failure.is_some() && !fs.geo.journal_dev && !args.json {
                    writeln!(w, "Checksum errors in superblock!  Retrying...")?;
                }
                w.flush()?;
                report_error(&args.image, &m);
            }
        }
    } else if let Err(e) = &fs {
        report_error(&args.image, e);
    }
    let fs_bs = opened.map(|(fs, _)| fs.block_size() as u32);
    let external;
    let internal;
    let src: &dyn logdump::JournalSource = if let Some(p) = &args.journal_device {
        external = match ExternalJournal::open(p) {
            Ok(j) => j,
            Err(e) => {
                w.flush()?;
                report_error(p, &e);
                return Ok(EXIT_OPERATIONAL);
            }
        };
        &external
    } else {
        let Some((fs, ignore)) = opened else {
            w.flush()?;
            return Ok(EXIT_OPERATIONAL);
        };
        let ino = fs.sb.journal_inum;
        if ino == 0 {
            // debugfs asks blkid for the device by journal UUID, then by device number.
            let Some(p) = logdump::find_external_journal(&fs.sb.journal_uuid, fs.sb.journal_dev)
            else {
                w.flush()?;
                // No journal at all is nothing to show (exit 0); an external journal that cannot
                // be found is a journal that cannot be read (exit 8).
                if !fs.sb.has_compat(e4inspect::features::COMPAT_HAS_JOURNAL) {
                    report_error(&args.image, &"filesystem has no journal");
                    if args.json {
                        // Still one document: a journal of kind `none`, with nothing in it.
                        let doc = JournalDocument {
                            schema_version: SchemaVersion,
                            image: args.image.display().to_string(),
                            journal: "none",
                            options: opts,
                            events: Vec::new(),
                            outcome: logdump::Outcome::default(),
                        };
                        serde_json::to_writer_pretty(&mut w, &doc)?;
                        writeln!(w)?;
                        w.flush()?;
                    }
                    return Ok(EXIT_OK);
                }
                let msg = format!(
                    "filesystem has no journal here: it is external (UUID {}) and no device \
                     holds it; name it with --journal-device PATH",
                    e4inspect::superblock::uuid_string(&fs.sb.journal_uuid)
                );
                report_error(&args.image, &msg);
                return Ok(EXIT_OPERATIONAL);
            };
            if !args.json {
                writeln!(w, "Using external journal found at {}", p.display())?;
            }
            external = match ExternalJournal::open(&p) {
                Ok(j) => j,
                Err(e) => {
                    w.flush()?;
                    report_error(&p, &e);
                    return Ok(EXIT_OPERATIONAL);
                }
            };
            &external
        } else {
            internal = match InternalJournal::open(fs, ino, ignore) {
                Ok(j) => j,
                Err(m) => {
                    w.flush()?;
                    report_error(&args.image, &format!("{m} while reading inode {ino}"));
                    return Ok(EXIT_OPERATIONAL);
                }
            };
            &internal
        }
    };
    let stderr = std::io::stderr();
    let outcome = if args.json {
        let mut events = Vec::new();
        let o = logdump::walk(src, fs_bs, opts, &mut |e| {
            events.push(e);
            Ok(())
        })?;
        let doc = JournalDocument {
            schema_version: SchemaVersion,
            image: args.image.display().to_string(),
            journal: if args.journal_device.is_some() {
                "external"
            } else {
                "internal"
            },
            options: opts,
            events,
            outcome: o.clone(),
        };
        serde_json::to_writer_pretty(&mut w, &doc)?;
        writeln!(w)?;
        o
    } else {
        let mut err = stderr.lock();
        let r = logdump::walk(src, fs_bs, opts, &mut |e: Event| {
            text::write_event(&mut w, &mut err, &e)
        });
        match r {
            Ok(o) => o,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(EXIT_OK),
            Err(e) => return Err(e.into()),
        }
    };
    match w.flush() {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(EXIT_OK),
        Err(e) => return Err(e.into()),
    }
    Ok(if outcome.cut_short || outcome.read_error {
        EXIT_PROBLEMS
    } else {
        EXIT_OK
    })
}

/// The `journal --json` document.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct JournalDocument {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// The image as given.
    pub image: String,
    /// `internal` (the journal inode), `external` (`--journal-device`), or `none` (the
    /// filesystem has no journal: no events).
    pub journal: &'static str,
    /// The logdump options in effect.
    pub options: logdump::Options,
    /// What the walk found, in debugfs' order.
    pub events: Vec<logdump::Event>,
    /// How the walk ended.
    pub outcome: logdump::Outcome,
}
