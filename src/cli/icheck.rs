//! `e4inspect icheck IMAGE BLOCK...`: the inode owning each block, byte-identical to
//! `debugfs -R "icheck BLOCK..."` (stdout); `--explain` says what each block is,
//! `--sector N` starts from a device sector as the kernel logs it, `--json` has it all.

use super::ncheck::MapsHeader;
use super::{c_strto, report_error, SourceArgs, EXIT_OK, EXIT_OPERATIONAL, EXIT_PROBLEMS};
use e4inspect::format::maps;
use e4inspect::reader::fs::Filesystem;
use e4inspect::views::icheck::{self, BlockInfo};
use e4inspect::views::ncheck;
use std::io::Write;
use std::path::PathBuf;

/// Print the inodes owning blocks, like `debugfs -R "icheck BLOCK..."` (or explained, or JSON).
#[derive(clap::Args, Debug, Clone)]
pub struct IcheckArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Filesystem block numbers: decimal, 0x hex or 0 octal (as debugfs reads them).
    #[arg(value_name = "BLOCK", value_parser = parse_block, allow_hyphen_values = true,
          required_unless_present = "sectors")]
    pub blocks: Vec<u64>,
    /// Say what each block is: the owner's role (data at logical block L, extent tree,
    /// indirect or xattr block, journal) and its paths, or the metadata it holds (superblock or
    /// backup, descriptors, reserved GDT, bitmaps or inode table of group G, MMP) or free.
    #[arg(long)]
    pub explain: bool,
    /// A device sector as the kernel logs it (`I/O error, dev sda, sector N`), counted from the
    /// start of the whole disk or image given: mapped through the partition (or --offset) to a
    /// filesystem block and explained. Repeatable.
    #[arg(long = "sector", value_name = "N", value_parser = parse_block)]
    pub sectors: Vec<u64>,
    /// Bytes per sector of --sector (the kernel logs 512-byte sectors whatever the device's).
    #[arg(long, value_name = "BYTES", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..))]
    pub sector_size: u64,
    /// Output format (JSON: every block explained, with its owner's paths).
    #[command(flatten)]
    pub output: super::OutputArgs,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// debugfs' `strtoblk`: `strtoull(s, &end, 0)` with nothing left over (a minus sign wraps).
fn parse_block(arg: &str) -> Result<u64, String> {
    let (value, rest) = c_strto(arg);
    if !rest.is_empty() || arg.is_empty() {
        return Err(format!("Bad block number - {arg}"));
    }
    Ok(if value < 0 {
        (value.max(-i128::from(u64::MAX)) as i64) as u64
    } else {
        u64::try_from(value).unwrap_or(u64::MAX)
    })
}

/// `icheck --json`.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct IcheckDocument {
    /// Schema version and image.
    #[serde(flatten)]
    pub header: MapsHeader,
    /// Byte offset of the filesystem in the image or device (the partition's start).
    pub filesystem_offset: u64,
    /// Filesystem block size.
    pub block_size: u64,
    /// One entry per block or sector asked for, in the order given.
    pub blocks: Vec<BlockEntry>,
    /// Why the scan was incomplete (an inode or directory it could not read).
    pub problems: Vec<String>,
}

/// One requested block (or sector) explained.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct BlockEntry {
    /// The sector asked for (with --sector).
    pub sector: Option<u64>,
    /// The block explained (none when a sector lies outside the filesystem).
    #[serde(rename = "block")]
    pub info: Option<BlockInfo>,
    /// Paths of the owning inode.
    pub paths: Vec<String>,
    /// The explanation as the text view words it.
    pub what: String,
}

/// A block or sector to report, with where it came from.
struct Target {
    sector: Option<u64>,
    block: Option<u64>,
    /// For a sector outside the filesystem: why.
    outside: Option<String>,
}

fn targets(fs: &Filesystem, args: &IcheckArgs) -> Vec<Target> {
    let mut list: Vec<Target> = args
        .blocks
        .iter()
        .map(|&b| Target {
            sector: None,
            block: Some(b),
            outside: None,
        })
        .collect();
    let base = fs.source.base();
    let bs = fs.block_size();
    let fs_bytes = fs.geo.blocks_count.saturating_mul(bs);
    for &sector in &args.sectors {
        let byte = u128::from(sector) * u128::from(args.sector_size);
        let rel = byte.checked_sub(u128::from(base));
        let target = match rel {
            Some(offset) if offset < u128::from(fs_bytes) => Target {
                sector: Some(sector),
                block: Some((offset / u128::from(bs)) as u64),
                outside: None,
            },
            _ => Target {
                sector: Some(sector),
                block: None,
                outside: Some(format!(
                    "byte {byte} of the disk is outside the filesystem (bytes {base} to {})",
                    u128::from(base) + u128::from(fs_bytes) - 1
                )),
            },
        };
        list.push(target);
    }
    list
}

/// Run the command: 0 fine, 4 when inodes could not be walked (or the scan stopped early), 8
/// when the image cannot be opened.
pub fn run(args: &IcheckArgs) -> anyhow::Result<i32> {
    let fs = match Filesystem::open(&args.image, &args.source.open_options()) {
        Ok(fs) => fs,
        Err(e) => {
            report_error(&args.image, &e);
            return Ok(EXIT_OPERATIONAL);
        }
    };
    super::watch_reads(&fs);
    args.source.note_recovery(&fs);
    let targets = targets(&fs, args);
    let blocks: Vec<u64> = targets.iter().filter_map(|t| t.block).collect();
    let found = icheck::icheck(&fs, &blocks);
    let printed = found.table_printed(&blocks);
    let mut problems = scan_problems(&found, &blocks, printed, args);
    let plain = !args.explain && args.sectors.is_empty() && !args.output.json();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    if plain {
        if printed {
            maps::icheck_text(&blocks, &found, &mut out)?;
        }
    } else {
        let entries = explained_entries(&fs, &targets, &blocks, &found, &mut problems);
        if args.output.json() {
            let doc = IcheckDocument {
                header: MapsHeader::new(&args.image),
                filesystem_offset: fs.source.base(),
                block_size: fs.block_size(),
                blocks: entries,
                problems: problems.clone(),
            };
            serde_json::to_writer_pretty(&mut out, &doc)?;
            out.write_all(b"\n")?;
        } else {
            explain_text(&entries, !args.sectors.is_empty(), &mut out)?;
        }
    }
    out.flush()?;
    drop(out);
    for problem in &problems {
        report_error(&args.image, problem);
    }
    Ok(if problems.is_empty() {
        EXIT_OK
    } else {
        EXIT_PROBLEMS
    })
}

/// What went wrong in the walk, as debugfs words it: a block-iterate error for each inode before
/// the scan stopped, and the scan's own error (debugfs prints it only when the table was not
/// printed; the explained and JSON reports always carry it).
fn scan_problems(
    found: &icheck::Found,
    blocks: &[u64],
    printed: bool,
    args: &IcheckArgs,
) -> Vec<String> {
    let mut problems: Vec<String> = found
        .errors_before_stop(blocks)
        .iter()
        .map(|e| {
            format!(
                "icheck: {} while calling ext2fs_block_iterate (inode {})",
                e.error, e.inode
            )
        })
        .collect();
    if let Some((ino, err)) = &found.scan_error {
        if !printed || args.explain || args.output.json() || !args.sectors.is_empty() {
            let what = if *ino == 1 { "starting" } else { "doing" };
            problems.push(format!(
                "icheck: {err} while {what} inode scan (inode {ino})"
            ));
        }
    }
    problems
}

/// One entry per target (block or sector) for `--explain`, `--sector` and `--json`: what the
/// block is and the paths of its owner (walked once for all owners); path-walk problems are
/// added to `problems`.
fn explained_entries(
    fs: &Filesystem,
    targets: &[Target],
    blocks: &[u64],
    found: &icheck::Found,
    problems: &mut Vec<String>,
) -> Vec<BlockEntry> {
    let infos = icheck::explain(fs, blocks, found);
    let owners: Vec<u32> = infos
        .iter()
        .filter_map(|i| i.owner.map(|o| o.inode))
        .collect();
    let mut paths = if owners.is_empty() {
        ncheck::AllPaths::default()
    } else {
        let mut sorted = owners.clone();
        sorted.sort_unstable();
        sorted.dedup();
        ncheck::all_paths(fs, &sorted)
    };
    problems.append(&mut paths.problems);
    let mut infos = infos.into_iter();
    targets
        .iter()
        .map(|target| {
            let info = target.block.and_then(|_| infos.next());
            let owner_paths = info
                .as_ref()
                .and_then(|i| i.owner)
                .and_then(|o| paths.paths.get(&o.inode).cloned())
                .unwrap_or_default();
            let what = match (&info, &target.outside) {
                (Some(i), _) => maps::block_text(fs, i, &owner_paths),
                (None, Some(o)) => o.clone(),
                (None, None) => String::new(),
            };
            BlockEntry {
                sector: target.sector,
                info,
                paths: owner_paths,
                what,
            }
        })
        .collect()
}

/// The `--explain` / `--sector` table.
fn explain_text(entries: &[BlockEntry], sectors: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if sectors {
        out.write_all(b"Sector\tBlock\tInode number\tWhat it is\n")?;
    } else {
        out.write_all(b"Block\tInode number\tWhat it is\n")?;
    }
    for entry in entries {
        if sectors {
            match entry.sector {
                Some(s) => write!(out, "{s}\t")?,
                None => out.write_all(b"-\t")?,
            }
        }
        match &entry.info {
            Some(i) => {
                let ino = i
                    .owner
                    .map_or_else(|| "<block not found>".to_string(), |o| o.inode.to_string());
                writeln!(out, "{}\t{ino}\t{}", i.block, entry.what)?;
            }
            None => writeln!(out, "-\t-\t{}", entry.what)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_block;

    #[test]
    fn block_arguments_read_as_debugfs_reads_them() {
        assert_eq!(parse_block("16"), Ok(16));
        assert_eq!(parse_block("0x10"), Ok(16));
        assert_eq!(parse_block("010"), Ok(8));
        assert_eq!(parse_block("-1"), Ok(u64::MAX));
        assert!(parse_block("abc").is_err());
    }
}
