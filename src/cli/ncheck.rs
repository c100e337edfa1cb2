//! `e4inspect ncheck [-c] IMAGE INO...`: the paths of inodes, byte-identical to
//! `debugfs -R "ncheck [-c] INO..."` (stdout), or every path of each inode as JSON.

use super::{c_strto, report_error, SourceArgs, EXIT_OK, EXIT_OPERATIONAL, EXIT_PROBLEMS};
use e4inspect::format::json::SchemaVersion;
use e4inspect::format::maps;
use e4inspect::reader::fs::Filesystem;
use e4inspect::views::ncheck::{self, Request};
use std::io::Write;
use std::path::PathBuf;

/// Print the pathnames of inodes, like `debugfs -R "ncheck [-c] INO..."` (or as JSON).
#[derive(clap::Args, Debug, Clone)]
pub struct NcheckArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Inode numbers: decimal, 0x hex, 0 octal, or `<N>` (as debugfs reads them).
    #[arg(required = true, value_name = "INO", value_parser = parse_inode, allow_hyphen_values = true)]
    pub inodes: Vec<u32>,
    /// Check each entry's file type against its inode (`  <--- BAD FILETYPE`).
    #[arg(short = 'c')]
    pub check: bool,
    /// Output format (JSON: every path of each inode, the whole scan).
    #[command(flatten)]
    pub output: super::OutputArgs,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// debugfs' reading of an inode argument: `<N>` or a number as `strtol(arg, &end, 0)`, then
/// truncated to 32 bits as the C assignment does.
fn parse_inode(arg: &str) -> Result<u32, String> {
    let inner = arg
        .strip_prefix('<')
        .and_then(|t| t.strip_suffix('>'))
        .filter(|_| arg.len() > 2)
        .unwrap_or(arg);
    let (value, rest) = c_strto(inner);
    if !rest.is_empty() {
        return Err(format!("Invalid inode number - '{arg}'"));
    }
    let long = value.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    Ok(long as u32)
}

/// The fields the `--json` documents of the inode/block/path maps (`ncheck`, `icheck`) open
/// with.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct MapsHeader {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// The image as given.
    pub image: String,
}

impl MapsHeader {
    /// The header of a document about `image`.
    pub fn new(image: &std::path::Path) -> MapsHeader {
        MapsHeader {
            schema_version: SchemaVersion,
            image: image.display().to_string(),
        }
    }
}

/// `ncheck --json`.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct NcheckDocument {
    /// Schema version and image.
    #[serde(flatten)]
    pub header: MapsHeader,
    /// One entry per inode asked for, in the order given (repeats once).
    pub inodes: Vec<InodePaths>,
    /// What kept the scan from reading everything (a directory or inode it could not read).
    pub problems: Vec<String>,
}

/// The paths of one inode.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct InodePaths {
    /// The inode number.
    pub inode: u32,
    /// Every path naming it, in scan order (`/name` under the root); empty when no directory
    /// entry names it.
    pub paths: Vec<String>,
}

/// Run the command: 0 fine, 4 when a directory or inode could not be read on the way, 8 when
/// the image or a requested inode cannot be read.
pub fn run(args: &NcheckArgs) -> anyhow::Result<i32> {
    let fs = match Filesystem::open(&args.image, &args.source.open_options()) {
        Ok(fs) => fs,
        Err(e) => {
            report_error(&args.image, &e);
            return Ok(EXIT_OPERATIONAL);
        }
    };
    super::watch_reads(&fs);
    args.source.note_recovery(&fs);
    if args.output.json() {
        return run_json(&fs, args);
    }
    let expected = match ncheck::names_expected(&fs, &args.inodes) {
        Ok(n) => n,
        Err(e) => {
            report_error(&args.image, &format!("ncheck: {e}"));
            return Ok(EXIT_OPERATIONAL);
        }
    };
    let req = Request {
        inodes: args.inodes.clone(),
        check_filetype: args.check,
    };
    let report = ncheck::ncheck(&fs, &req, expected);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let errors = maps::ncheck_text(&report, &mut out).and_then(|e| out.flush().map(|()| e))?;
    for error in &errors {
        report_error(&args.image, error);
    }
    Ok(if errors.is_empty() {
        EXIT_OK
    } else {
        EXIT_PROBLEMS
    })
}

fn run_json(fs: &Filesystem, args: &NcheckArgs) -> anyhow::Result<i32> {
    let mut uniq = args.inodes.clone();
    uniq.sort_unstable();
    uniq.dedup();
    let mut all = ncheck::all_paths(fs, &uniq);
    let mut seen = std::collections::HashSet::new();
    let inodes = args
        .inodes
        .iter()
        .filter(|i| seen.insert(**i))
        .map(|&inode| InodePaths {
            inode,
            paths: all.paths.remove(&inode).unwrap_or_default(),
        })
        .collect();
    let status = if all.problems.is_empty() {
        EXIT_OK
    } else {
        EXIT_PROBLEMS
    };
    for problem in &all.problems {
        report_error(&args.image, problem);
    }
    let doc = NcheckDocument {
        header: MapsHeader::new(&args.image),
        inodes,
        problems: all.problems,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    serde_json::to_writer_pretty(&mut out, &doc)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::parse_inode;

    #[test]
    fn inode_arguments_read_as_debugfs_reads_them() {
        assert_eq!(parse_inode("12"), Ok(12));
        assert_eq!(parse_inode("<12>"), Ok(12));
        assert_eq!(parse_inode("0x0c"), Ok(12));
        assert_eq!(parse_inode("014"), Ok(12));
        assert_eq!(parse_inode("-1"), Ok(u32::MAX));
        assert!(parse_inode("12x").is_err());
        assert!(parse_inode("<>").is_err());
    }
}
