//! `e4inspect dump`: dumpe2fs-identical output, or `--json`.

use super::{report_error, SourceArgs, EXIT_OK, EXIT_OPERATIONAL, EXIT_PROBLEMS};
use e4inspect::format::dumpe2fs::{self, DumpOptions};
use e4inspect::reader::fs::{Filesystem, OpenOptions};
use std::io::Write;
use std::path::PathBuf;

/// Print the superblock and block group descriptors, exactly as dumpe2fs 1.47.0 does.
#[derive(clap::Args, Debug)]
#[command(disable_help_flag = true)]
pub struct DumpArgs {
    /// Image file, partitioned disk image or block device.
    pub image: PathBuf,
    /// Print only the bad blocks list, one block per line (dumpe2fs -b).
    #[arg(short = 'b', long = "bad-blocks")]
    pub bad_blocks: bool,
    /// Print only the superblock information (dumpe2fs -h).
    #[arg(short = 'h', long = "header-only")]
    pub header_only: bool,
    /// Print block numbers in hexadecimal (dumpe2fs -x).
    #[arg(short = 'x', long)]
    pub hex: bool,
    /// One line per group: group:block:super:gdt:bbitmap:ibitmap:itable (dumpe2fs -g).
    #[arg(short = 'g', long = "group-summary")]
    pub group_only: bool,
    /// Check the multiple-mount protection block instead of dumping, as dumpe2fs -m (and
    /// e2mmpstatus): "it is safe to mount" and exit 0 when it is clean (a node's sequence is
    /// watched for twice the update interval first), exit 4 when it is in use or damaged (e2fsck
    /// running, a sequence that changed or is unknown, a bad checksum; dumpe2fs exits 1), 8 when
    /// there is no MMP block or it cannot be read (dumpe2fs exits 2).
    #[arg(short = 'm', long = "mmp-check")]
    pub mmp_check: bool,
    /// Open even with unknown incompat features (dumpe2fs -f).
    #[arg(short = 'f', long)]
    pub force: bool,
    /// The input is a normal e2image file (dumpe2fs -i). e2image files are recognised by their
    /// content with or without it; with it, any other input is refused as dumpe2fs refuses it.
    /// With -m (dumpe2fs -m -i): print the MMP block's fields and number instead of checking it.
    #[arg(short = 'i', long = "image-file")]
    pub image_file: bool,
    /// Extended options, as dumpe2fs: superblock=N, blocksize=N (comma separated, repeatable).
    #[arg(short = 'o', value_name = "OPT[,OPT]")]
    pub options: Vec<String>,
    /// Output format.
    #[command(flatten)]
    pub output: super::OutputArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

fn parse_ext_opts(opts: &[String], open: &mut OpenOptions) -> Result<(), String> {
    for tok in opts
        .iter()
        .flat_map(|s| s.split(','))
        .filter(|t| !t.is_empty())
    {
        let (key, value) = tok
            .split_once('=')
            .ok_or_else(|| format!("bad extended option '{tok}': expected KEY=VALUE"))?;
        let number =
            super::parse_size(value).map_err(|e| format!("bad extended option '{tok}': {e}"))?;
        match key {
            "superblock" | "sb" => open.superblock = Some(number),
            "blocksize" | "bs" => open.blocksize = Some(number),
            _ => {
                return Err(format!(
                    "bad extended option '{tok}'; valid: superblock=<num>, blocksize=<num>"
                ))
            }
        }
    }
    Ok(())
}

/// Run the command; returns the exit status.
pub fn run(args: &DumpArgs) -> anyhow::Result<i32> {
    let mut open = args.source.open_options();
    if let Err(err) = parse_ext_opts(&args.options, &mut open) {
        super::say(format_args!("{err}"));
        return Ok(super::EXIT_USAGE);
    }
    open.force = args.force;
    open.super_only = args.header_only || args.mmp_check;
    let fs = match Filesystem::open(&args.image, &open) {
        Ok(fs) => fs,
        Err(e) => {
            report_error(&args.image, &e);
            if matches!(e, e4inspect::Error::Open { .. }) && !args.output.json() {
                outln!("Couldn't find valid filesystem superblock.");
            }
            return Ok(EXIT_OPERATIONAL);
        }
    };
    super::watch_reads(&fs);
    let e2image = e4inspect::reader::container::ContainerKind::E2image;
    if args.image_file && !args.mmp_check && fs.source.container() != Some(e2image) {
        // dumpe2fs -i opens the file with ext2fs_open(EXT2_FLAG_IMAGE_FILE), which fails on
        // anything without the e2image header's magic.
        report_error(
            &args.image,
            &"Wrong magic number for Ext2 Image Header while trying to open it",
        );
        if !args.output.json() {
            outln!("Couldn't find valid filesystem superblock.");
        }
        return Ok(EXIT_OPERATIONAL);
    }
    args.source.note_recovery(&fs);
    if args.mmp_check {
        return mmp_check(&fs, args);
    }
    if args.output.json() {
        // Streamed: the groups are produced while they are written, so memory stays flat.
        let doc = e4inspect::format::json::document(
            &fs,
            &args.image.display().to_string(),
            args.header_only,
        );
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
        out.flush()?;
        if let Some(failure) = fs.source.read_failure() {
            // A part of the document is missing or marked unreadable: a failure.
            report_error(&args.image, &failure);
            return Ok(EXIT_OPERATIONAL);
        }
        return Ok(EXIT_OK);
    }
    let opts = DumpOptions {
        header_only: args.header_only,
        hex: args.hex,
        group_only: args.group_only,
        ignore_80col: std::env::var_os("DUMPE2FS_IGNORE_80COL").is_some(),
        device_name: args.image.display().to_string(),
        bad_blocks_only: args.bad_blocks,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let rep = dumpe2fs::dump(&fs, &opts, &mut out);
    let flushed = out.flush();
    let rep = match (rep, flushed) {
        (Ok(r), Ok(())) => r,
        (Err(e), _) | (_, Err(e)) => return Err(e.into()),
    };
    for message in &rep.stderr {
        report_error(&args.image, message);
    }
    // A part of the report is missing (`<unreadable: ...>` in the text, or a read the report
    // went past): a failure.
    // (An aborted dump has said why on stderr already.)
    let read_failure = rep.read_error.as_deref().or(fs.source.read_failure());
    if let Some(failure) = read_failure.filter(|_| !rep.aborted || rep.read_error.is_some()) {
        report_error(&args.image, &failure);
        return Ok(EXIT_OPERATIONAL);
    }
    Ok(if rep.aborted {
        EXIT_OPERATIONAL
    } else if rep.trouble {
        EXIT_PROBLEMS
    } else {
        EXIT_OK
    })
}

/// `dump -m` (`-m -i`): dumpe2fs' MMP check (check_mmp, print_mmp_block). Its stdout is
/// dumpe2fs' with our program name; its exit statuses 0/1/2 are ours 0/4/8.
fn mmp_check(fs: &Filesystem, args: &DumpArgs) -> anyhow::Result<i32> {
    use e4inspect::reader::mmp::{self, MmpStart};
    if !mmp::has_mmp(fs) {
        report_error(&args.image, &"MMP feature not enabled");
        return Ok(EXIT_OPERATIONAL);
    }
    if args.image_file {
        let mut out = Vec::new();
        let rep = dumpe2fs::mmp_info(fs, args.hex, &mut out)?;
        std::io::stdout().lock().write_all(&out)?;
        for message in &rep.stderr {
            report_error(&args.image, message);
        }
        return Ok(if rep.trouble {
            EXIT_OPERATIONAL
        } else {
            EXIT_OK
        });
    }
    let wait = |secs: u64| std::thread::sleep(std::time::Duration::from_secs(secs));
    let status = match mmp::start(fs, &wait) {
        MmpStart::Clean => {
            outln!(
                "e4inspect: it is safe to mount '{}', MMP is clean",
                args.image.display()
            );
            EXIT_OK
        }
        MmpStart::Refused { message, last } => {
            report_error(
                &args.image,
                &format!(
                    "{message}: MMP update by '{}{}' at {}",
                    last.node_name(),
                    last.device_name(),
                    e4inspect::format::sys::ctime(last.time as i64).trim_end()
                ),
            );
            EXIT_PROBLEMS
        }
        MmpStart::Unusable(e) => {
            report_error(&args.image, &e);
            EXIT_OPERATIONAL
        }
    };
    if let (EXIT_OK, Some(failure)) = (status, fs.strict_failure) {
        // dumpe2fs: a superblock opened only without checksums makes a clean check exit 2.
        report_error(&args.image, &failure.message());
        outln!("*** Run e2fsck now!\n");
        return Ok(EXIT_OPERATIONAL);
    }
    Ok(status)
}
