//! `e4inspect advise`: a verified mkfs.ext4 command line from a workload description.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use e4inspect::models::advise::{
    self, human_bytes, parse_kernel, parse_size, Advice, Raid, SampledSet, SetSampler, Workload,
};
use e4inspect::models::fit::{Attr, XattrSet};
use e4inspect::models::mkfs::MkfsConf;

/// Arguments of `e4inspect advise`.
#[derive(clap::Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["size", "device"])))]
#[command(group(clap::ArgGroup::new("population").args(["avg_file_size", "from_dir", "from_image"])))]
pub struct AdviseArgs {
    /// Size of the device the filesystem will fill (K/M/G/T/P suffixes, powers of 1024).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Device or image file whose size to use (also used in the printed command).
    #[arg(long, value_name = "PATH")]
    pub device: Option<PathBuf>,
    /// Block size override (bytes).
    #[arg(long, value_name = "BYTES")]
    pub block_size: Option<u32>,
    /// Inode size override (checked against the block size and the xattr fit).
    #[arg(long, value_name = "BYTES")]
    pub inode_size: Option<u32>,
    /// Journal size override (K/M/G suffixes; checked against mke2fs's limits).
    #[arg(long, value_name = "SIZE")]
    pub journal_size: Option<String>,
    /// Expected number of files (and directories). With --from-dir or --from-image it scales
    /// the sample: its xattr shares and bytes per file, this many files. Far below mke2fs's
    /// default count, the command lowers it with -N (2x the files + 1024). Digits, or k/M/G
    /// for thousands, millions, billions (30M = 30000000).
    #[arg(long, value_name = "N", conflicts_with = "avg_file_size", value_parser = parse_count)]
    pub files: Option<u64>,
    /// Average file size (K/M/G suffixes).
    #[arg(long, value_name = "SIZE")]
    pub avg_file_size: Option<String>,
    /// Sample a live tree: inode count, bytes per inode and every inode's xattrs (never follows
    /// symlinks, stays on one filesystem).
    #[arg(long, value_name = "DIR")]
    pub from_dir: Option<PathBuf>,
    /// Use an existing filesystem's usage: inodes in use, bytes per inode and every inode's
    /// xattrs.
    #[arg(long, value_name = "IMG")]
    pub from_image: Option<PathBuf>,
    /// Where the filesystem lies inside the --from-image image.
    #[command(flatten)]
    pub source: super::SourceArgs,
    /// Built-in xattr profiles, comma-separated (see `e4inspect fit --list-profiles`).
    #[arg(long, value_name = "NAME,...")]
    pub profile: Vec<String>,
    /// An xattr every inode carries: full name and value size, e.g. security.selinux=31.
    #[arg(long, value_name = "NAME=SIZE")]
    pub xattr: Vec<String>,
    /// Percentage of inodes (with xattrs) whose xattrs must all stay in the inode; the rest are
    /// named as outliers with what covering them would cost.
    #[arg(long, value_name = "PCT", default_value_t = 100.0 * advise::DEFAULT_FIT_SHARE)]
    pub fit_share: f64,
    /// RAID chunk size per disk (K/M suffixes).
    #[arg(long, value_name = "SIZE")]
    pub raid_chunk: Option<String>,
    /// Data disks per stripe (with --raid-chunk).
    #[arg(
        long,
        value_name = "N",
        requires = "raid_chunk",
        conflicts_with = "raid_level"
    )]
    pub raid_data_disks: Option<u32>,
    /// RAID level (0, 4, 5, 6, 10); the chunk defaults to mdadm's 512 KiB.
    #[arg(long, value_name = "L", requires = "raid_disks")]
    pub raid_level: Option<String>,
    /// Total disks in the array (with --raid-level).
    #[arg(long, value_name = "N", requires = "raid_level")]
    pub raid_disks: Option<u32>,
    /// Spinning disks.
    #[arg(long)]
    pub rotational: bool,
    /// Metadata-heavy load / many clients: larger journal.
    #[arg(long)]
    pub metadata_heavy: bool,
    /// Enable project quota.
    #[arg(long)]
    pub project_quota: bool,
    /// Directories with millions of entries (large_dir).
    #[arg(long)]
    pub large_dirs: bool,
    /// Oldest kernel that must mount the filesystem (e.g. 4.18): newer features are left out.
    #[arg(long, value_name = "VERSION")]
    pub kernel: Option<String>,
    /// Output format.
    #[command(flatten)]
    pub output: super::OutputArgs,
}

/// Bytes per inode a sample is counted with at least: a non-empty file takes a 4 KiB block
/// whatever its length, so tiny files do not ask for more inodes than blocks.
const SAMPLE_MIN_BYTES_PER_INODE: u64 = 4096;

/// A file count: digits, or a decimal number with k/K, M or G (powers of 1000: 30M, 1.5G).
fn parse_count(arg: &str) -> Result<u64, String> {
    let text = arg.trim().replace('_', "");
    let (num, mult) = match text.chars().last() {
        Some('k' | 'K') => (&text[..text.len() - 1], 1e3),
        Some('m' | 'M') => (&text[..text.len() - 1], 1e6),
        Some('g' | 'G') => (&text[..text.len() - 1], 1e9),
        _ => (text.as_str(), 1.0),
    };
    if let (Ok(count), true) = (num.parse::<u64>(), mult == 1.0) {
        return Ok(count);
    }
    match num.parse::<f64>() {
        Ok(parsed) if parsed.is_finite() && parsed >= 0.0 && parsed * mult < 1.8e19 => {
            Ok((parsed * mult).round() as u64)
        }
        _ => Err(format!("'{arg}' is not a count (e.g. 250000, 30M, 1.5G)")),
    }
}

/// Parse `NAME=SIZE` (`NAME=@FILE` takes a file's size).
fn parse_xattr(arg: &str) -> anyhow::Result<Attr> {
    let (name, value) = arg
        .split_once('=')
        .with_context(|| format!("--xattr {arg}: expected NAME=SIZE"))?;
    let size = if let Some(file) = value.strip_prefix('@') {
        std::fs::metadata(file)
            .with_context(|| format!("--xattr {arg}: {file}"))?
            .len()
    } else {
        parse_size(value).with_context(|| format!("--xattr {arg}"))?
    };
    let size = u32::try_from(size).context("xattr value too large")?;
    if e4inspect::reader::xattr::split_name(name).is_none() {
        bail!("--xattr {arg}: '{name}' is not a valid xattr name (user., trusted., security., system.)");
    }
    Ok(Attr::new(name, size))
}

/// Statistics of a sampled tree.
struct TreeSample {
    inodes: u64,
    bytes: u64,
    sets: SetSampler,
}

fn sample_tree(root: &Path) -> anyhow::Result<TreeSample> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(root).with_context(|| format!("{}", root.display()))?;
    if !meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{}: not a directory", root.display()),
        )
        .into());
    }
    let dev = meta.dev();
    let mut sample = TreeSample {
        inodes: 0,
        bytes: 0,
        sets: SetSampler::default(),
    };
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(info) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if info.dev() != dev || (info.nlink() > 1 && !info.is_dir() && !seen.insert(info.ino())) {
            continue;
        }
        sample.inodes += 1;
        if info.is_file() {
            sample.bytes += info.len();
        }
        // The same reader as `fit --from-dir`: complete lists and values, errors reported.
        let xattrs = e4inspect::models::fit::path_xattrs(&path)?;
        if !xattrs.is_empty() {
            let set = XattrSet {
                attrs: xattrs,
                inline_data: None,
            };
            sample
                .sets
                .add(set, 1, Some(path.display().to_string()), None);
        }
        if info.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&path) {
                for entry in rd.flatten() {
                    stack.push(entry.path());
                }
            }
        }
    }
    Ok(sample)
}

/// Every in-use inode's xattr set in an image, inodes with the same set counted together and
/// labelled by the first inode's number (paths are looked up for the named outliers only).
fn image_xattr_sets(fs: &e4inspect::reader::fs::Filesystem) -> SetSampler {
    let cache = e4inspect::views::scan::XattrBlockCache::default();
    let (sets, _, _) = e4inspect::models::fit::image_set_groups_par(
        fs,
        &cache,
        1,
        SetSampler::default,
        |sets, group| {
            let ino = group.inodes.first().copied();
            sets.add(group.set, group.count, None, ino);
        },
        SetSampler::merge,
        &|_| {},
    );
    sets
}

/// The grouped sets, and a note for the sample label when some inodes' sets were not kept.
fn finish_sample(sampler: SetSampler) -> (Vec<SampledSet>, String) {
    let note = if sampler.unsampled > 0 {
        format!(
            " ({} inodes with xattr sets beyond the first {} distinct sets not modelled)",
            sampler.unsampled,
            advise::MAX_DISTINCT_SETS
        )
    } else {
        String::new()
    };
    (sampler.finish(), note)
}

/// Paths for the image inodes named as outliers.
fn name_image_outliers(advice: &mut Advice, img: &Path, source: &super::SourceArgs) {
    let Some(fit) = advice.fit.as_mut() else {
        return;
    };
    let wanted: std::collections::HashSet<u32> = fit
        .outliers
        .iter()
        .filter_map(|outlier| outlier.ino)
        .collect();
    if wanted.is_empty() {
        return;
    }
    let Ok(fs) = e4inspect::reader::fs::Filesystem::open(img, &source.open_options()) else {
        return;
    };
    super::watch_reads(&fs);
    let paths = e4inspect::views::scan::inode_paths(&fs, &wanted);
    for outlier in &mut fit.outliers {
        if outlier.path.is_none() {
            outlier.path = outlier.ino.and_then(|i| paths.get(&i).cloned());
        }
    }
}

/// Build the workload from the arguments.
pub fn workload(args: &AdviseArgs) -> anyhow::Result<Workload> {
    let mut workload = Workload::new(target_bytes(args)?);
    workload.block_size = args.block_size;
    workload.inode_size = args.inode_size;
    if let Some(journal_size) = &args.journal_size {
        let bytes =
            parse_size(journal_size).with_context(|| format!("--journal-size {journal_size}"))?;
        workload.journal_mib = Some(bytes.div_ceil(1 << 20));
    }
    workload.population.files = args.files;
    if let Some(avg) = &args.avg_file_size {
        workload.population.avg_file_size =
            Some(parse_size(avg).with_context(|| format!("--avg-file-size {avg}"))?);
    }
    if let Some(dir) = &args.from_dir {
        sample_from_dir(&mut workload, dir)?;
    }
    if let Some(img) = &args.from_image {
        sample_from_image(&mut workload, img, &args.source)?;
    }
    add_xattrs(&mut workload, args)?;
    workload.fit_share = args.fit_share / 100.0;
    workload.raid = raid(args)?;
    workload.rotational = args.rotational;
    workload.metadata_heavy = args.metadata_heavy;
    workload.project_quota = args.project_quota;
    workload.large_dirs = args.large_dirs;
    if let Some(kernel) = &args.kernel {
        workload.kernel = Some(parse_kernel(kernel)?);
    }
    Ok(workload)
}

/// The size the filesystem will fill: `--size`, else the size of `--device`.
fn target_bytes(args: &AdviseArgs) -> anyhow::Result<u64> {
    Ok(match (&args.size, &args.device) {
        (Some(size), _) => parse_size(size).with_context(|| format!("--size {size}"))?,
        (None, Some(device)) => e4inspect::reader::source::Source::open(device)?.len(),
        (None, None) => bail!("give --size or --device"),
    })
}

/// `--from-dir`: the tree's inode count, bytes per inode and xattr sets.
fn sample_from_dir(workload: &mut Workload, dir: &Path) -> anyhow::Result<()> {
    let sample = sample_tree(dir)?;
    let (sets, note) = finish_sample(sample.sets);
    let with_xattrs: u64 = sets.iter().map(|x| x.count).sum();
    if let Some(avg) = sample.bytes.checked_div(sample.inodes) {
        workload.population.avg_file_size = Some(avg.max(SAMPLE_MIN_BYTES_PER_INODE));
    }
    workload.population.sample = Some(format!(
        "{}: {} inodes, {with_xattrs} with xattrs, {} per inode{note}",
        dir.display(),
        sample.inodes,
        human_bytes(sample.bytes / sample.inodes.max(1))
    ));
    workload.population.xattr_sets = sets;
    workload.population.sample_inodes = sample.inodes;
    Ok(())
}

/// `--from-image`: the image's inodes in use, bytes per inode and xattr sets.
fn sample_from_image(
    workload: &mut Workload,
    img: &Path,
    source: &super::SourceArgs,
) -> anyhow::Result<()> {
    let fs = e4inspect::reader::fs::Filesystem::open(img, &source.open_options())?;
    super::watch_reads(&fs);
    source.note_recovery(&fs);
    let sb = &fs.sb;
    // Free counts above the totals mean a damaged superblock, not a workload: an operational
    // error (exit 8), not a refused request.
    if u64::from(sb.free_inodes_count) > u64::from(sb.inodes_count)
        || sb.free_blocks_count() > sb.blocks_count()
    {
        return Err(e4inspect::Error::corrupt(e4inspect::ProblemKind::Superblock, format!(
            "{}: superblock free counts exceed the totals (free inodes {} of {}, free blocks {} of {}); run `e4inspect check`",
            img.display(),
            sb.free_inodes_count,
            sb.inodes_count,
            sb.free_blocks_count(),
            sb.blocks_count()
        ))
        .into());
    }
    let used_inodes = u64::from(sb.inodes_count.saturating_sub(sb.free_inodes_count));
    let used_bytes = sb
        .blocks_count()
        .saturating_sub(sb.free_blocks_count())
        .saturating_mul(fs.block_size());
    if let Some(avg) = used_bytes.checked_div(used_inodes) {
        workload.population.avg_file_size = Some(avg.max(SAMPLE_MIN_BYTES_PER_INODE));
    }
    let (sets, note) = finish_sample(image_xattr_sets(&fs));
    workload.population.sample = Some(format!(
        "{}: {used_inodes} inodes in use, {} with xattrs, {} per inode{note}",
        img.display(),
        sets.iter().map(|s| s.count).sum::<u64>(),
        human_bytes(used_bytes / used_inodes.max(1))
    ));
    workload.population.xattr_sets = sets;
    workload.population.sample_inodes = used_inodes;
    Ok(())
}

/// `--profile` and `--xattr`: the attributes every inode carries (a profile's name once).
fn add_xattrs(workload: &mut Workload, args: &AdviseArgs) -> anyhow::Result<()> {
    for profile in &args.profile {
        for attr in e4inspect::models::profiles::resolve(profile)? {
            if workload.xattrs.iter().all(|x| x.name != attr.name) {
                workload.xattrs.push(attr);
            }
        }
        workload
            .profiles
            .extend(profile.split(',').map(|s| s.trim().to_string()));
    }
    for xattr in &args.xattr {
        workload.xattrs.push(parse_xattr(xattr)?);
    }
    Ok(())
}

/// The RAID geometry: `--raid-chunk` with `--raid-data-disks`, or `--raid-level` with
/// `--raid-disks` (the level wins when both are given).
fn raid(args: &AdviseArgs) -> anyhow::Result<Option<Raid>> {
    if args.raid_chunk.is_some() && args.raid_data_disks.is_none() && args.raid_level.is_none() {
        bail!("--raid-chunk needs --raid-data-disks N or --raid-level L --raid-disks N");
    }
    let mut raid = None;
    if let (Some(chunk_text), Some(disks)) = (&args.raid_chunk, args.raid_data_disks) {
        let chunk = parse_size(chunk_text).with_context(|| format!("--raid-chunk {chunk_text}"))?;
        raid = Some(Raid {
            chunk_bytes: chunk,
            data_disks: disks,
            description: format!("chunk {}, {disks} data disks", human_bytes(chunk)),
        });
    }
    if let (Some(level), Some(disks)) = (&args.raid_level, args.raid_disks) {
        let chunk = args.raid_chunk.as_deref().map(parse_size).transpose()?;
        raid = Some(Raid::from_level(level, disks, chunk)?);
    }
    Ok(raid)
}

/// Compute the advice (no printing).
pub fn compute(args: &AdviseArgs) -> anyhow::Result<Advice> {
    let workload = workload(args)?;
    let conf = MkfsConf::system();
    let advice = advise::advise(&workload, &conf)?;
    let mut advice = advice;
    if let Some(img) = &args.from_image {
        name_image_outliers(&mut advice, img, &args.source);
    }
    let dev = args.device.as_ref().map(|d| d.display().to_string());
    Ok(advice.with_device(dev.as_deref()))
}

/// 16 for a refused or malformed request, 8 when a device, image or tree cannot be read.
fn exit_code(error: &anyhow::Error) -> i32 {
    for cause in error.chain() {
        if let Some(err) = cause.downcast_ref::<e4inspect::Error>() {
            return match err {
                e4inspect::Error::Invalid(_) => super::EXIT_USAGE,
                _ => super::EXIT_OPERATIONAL,
            };
        }
        if cause.downcast_ref::<std::io::Error>().is_some() {
            return super::EXIT_OPERATIONAL;
        }
    }
    super::EXIT_USAGE
}

/// Run `e4inspect advise`; returns the exit code.
pub fn run(args: &AdviseArgs) -> anyhow::Result<i32> {
    let advice = match compute(args) {
        Ok(advice) => advice,
        Err(error) => {
            super::say(format_args!("{}", super::one_line(&error)));
            return Ok(exit_code(&error));
        }
    };
    // Warnings first, on stderr: they lead what a terminal shows and survive `> advice.txt`
    // being read by a script (JSON keeps them in `warnings` too).
    for warning in &advice.warnings {
        eprintln!("e4inspect advise: warning: {warning}");
    }
    if args.output.json() {
        let doc = AdviseDocument {
            schema_version: e4inspect::format::json::SchemaVersion,
            advice: &advice,
        };
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        super::emit(&e4inspect::format::advise::render(&advice))?;
    }
    Ok(super::EXIT_OK)
}

/// The `advise --json` document.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct AdviseDocument<'a> {
    /// Version of the JSON contract.
    pub schema_version: e4inspect::format::json::SchemaVersion,
    /// The advice.
    #[serde(flatten)]
    pub advice: &'a e4inspect::models::advise::Advice,
}
