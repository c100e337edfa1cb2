//! `e4inspect advise`: a verified mkfs.ext4 command line from a workload description.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use comfy_table::ContentArrangement;
use e4inspect::format::table;

use e4inspect::advise::{self, human_bytes, parse_kernel, parse_size, Advice, Raid, Workload};
use e4inspect::fit::{Attr, XattrSet};
use e4inspect::mkfs::MkfsConf;

/// Arguments of `e4inspect advise`.
#[derive(clap::Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["size", "device"])))]
#[command(group(clap::ArgGroup::new("population").args(["files", "avg_file_size", "from_dir", "from_image"])))]
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
    /// Expected number of files (and directories).
    #[arg(long, value_name = "N")]
    pub files: Option<u64>,
    /// Average file size (K/M/G suffixes).
    #[arg(long, value_name = "SIZE")]
    pub avg_file_size: Option<String>,
    /// Sample a live tree: inode count, bytes per inode and every inode's xattrs (never follows
    /// symlinks, stays on one filesystem).
    #[arg(long, value_name = "DIR")]
    pub from_dir: Option<PathBuf>,
    /// Use an existing filesystem's usage: inodes in use and bytes per inode.
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
    /// Percentage of inodes whose xattrs must all fit in the inode (default 100).
    #[arg(long, value_name = "PCT", default_value_t = 100.0)]
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
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Parse `NAME=SIZE` (`NAME=@FILE` takes a file's size).
fn parse_xattr(s: &str) -> anyhow::Result<Attr> {
    let (n, v) = s
        .split_once('=')
        .with_context(|| format!("--xattr {s}: expected NAME=SIZE"))?;
    let size = if let Some(f) = v.strip_prefix('@') {
        std::fs::metadata(f)
            .with_context(|| format!("--xattr {s}: {f}"))?
            .len()
    } else {
        parse_size(v).with_context(|| format!("--xattr {s}"))?
    };
    let size = u32::try_from(size).context("xattr value too large")?;
    if e4inspect::xattr::split_name(n).is_none() {
        bail!("--xattr {s}: '{n}' is not a valid xattr name (user., trusted., security., system.)");
    }
    Ok(Attr::new(n, size))
}

/// Statistics of a sampled tree.
struct TreeSample {
    inodes: u64,
    bytes: u64,
    sets: Vec<XattrSet>,
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
    let mut s = TreeSample {
        inodes: 0,
        bytes: 0,
        sets: Vec::new(),
    };
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.dev() != dev || (m.nlink() > 1 && !m.is_dir() && !seen.insert(m.ino())) {
            continue;
        }
        s.inodes += 1;
        if m.is_file() {
            s.bytes += m.len();
        }
        // The same reader as `fit --from-dir`: complete lists and values, errors reported.
        let x = e4inspect::fit::path_xattrs(&p)?;
        if !x.is_empty() {
            s.sets.push(XattrSet {
                attrs: x,
                inline_data: None,
            });
        }
        if m.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                for e in rd.flatten() {
                    stack.push(e.path());
                }
            }
        }
    }
    Ok(s)
}

/// Build the workload from the arguments.
pub fn workload(args: &AdviseArgs) -> anyhow::Result<Workload> {
    let bytes = match (&args.size, &args.device) {
        (Some(s), _) => parse_size(s).with_context(|| format!("--size {s}"))?,
        (None, Some(d)) => e4inspect::source::Source::open(d)?.len(),
        (None, None) => bail!("give --size or --device"),
    };
    let mut w = Workload::new(bytes);
    w.block_size = args.block_size;
    w.inode_size = args.inode_size;
    if let Some(j) = &args.journal_size {
        let b = parse_size(j).with_context(|| format!("--journal-size {j}"))?;
        w.journal_mib = Some(b.div_ceil(1 << 20));
    }
    w.population.files = args.files;
    if let Some(a) = &args.avg_file_size {
        w.population.avg_file_size =
            Some(parse_size(a).with_context(|| format!("--avg-file-size {a}"))?);
    }
    if let Some(dir) = &args.from_dir {
        let s = sample_tree(dir)?;
        if let Some(avg) = s.bytes.checked_div(s.inodes) {
            w.population.avg_file_size = Some(avg.max(1));
        }
        w.population.sample = Some(format!(
            "{}: {} inodes, {} with xattrs, {} per inode",
            dir.display(),
            s.inodes,
            s.sets.len(),
            human_bytes(s.bytes / s.inodes.max(1))
        ));
        w.population.xattr_sets = s.sets;
    }
    if let Some(img) = &args.from_image {
        let fs = e4inspect::fs::Filesystem::open(img, &args.source.open_options())?;
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
            w.population.avg_file_size = Some(avg.max(1));
        }
        w.population.sample = Some(format!(
            "{}: {used_inodes} inodes in use, {} per inode",
            img.display(),
            human_bytes(used_bytes / used_inodes.max(1))
        ));
    }
    for p in &args.profile {
        for a in e4inspect::profiles::resolve(p)? {
            if w.xattrs.iter().all(|x| x.name != a.name) {
                w.xattrs.push(a);
            }
        }
        w.profiles
            .extend(p.split(',').map(|s| s.trim().to_string()));
    }
    for x in &args.xattr {
        w.xattrs.push(parse_xattr(x)?);
    }
    w.fit_share = args.fit_share / 100.0;
    if args.raid_chunk.is_some() && args.raid_data_disks.is_none() && args.raid_level.is_none() {
        bail!("--raid-chunk needs --raid-data-disks N or --raid-level L --raid-disks N");
    }
    if let (Some(c), Some(n)) = (&args.raid_chunk, args.raid_data_disks) {
        let chunk = parse_size(c).with_context(|| format!("--raid-chunk {c}"))?;
        w.raid = Some(Raid {
            chunk_bytes: chunk,
            data_disks: n,
            description: format!("chunk {}, {n} data disks", human_bytes(chunk)),
        });
    }
    if let (Some(l), Some(n)) = (&args.raid_level, args.raid_disks) {
        let chunk = args.raid_chunk.as_deref().map(parse_size).transpose()?;
        w.raid = Some(Raid::from_level(l, n, chunk)?);
    }
    w.rotational = args.rotational;
    w.metadata_heavy = args.metadata_heavy;
    w.project_quota = args.project_quota;
    w.large_dirs = args.large_dirs;
    if let Some(k) = &args.kernel {
        w.kernel = Some(parse_kernel(k)?);
    }
    Ok(w)
}

/// Compute the advice (no printing).
pub fn compute(args: &AdviseArgs) -> anyhow::Result<Advice> {
    let w = workload(args)?;
    let conf = MkfsConf::system();
    let a = advise::advise(&w, &conf)?;
    let dev = args.device.as_ref().map(|d| d.display().to_string());
    Ok(a.with_device(dev.as_deref()))
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.2}%", 100.0 * part as f64 / whole as f64)
    }
}

/// Render the text report.
pub fn render(a: &Advice) -> String {
    let mut out = String::new();
    out.push_str(&a.command);
    out.push_str("\n\n");
    let mut t = table::styled();
    t.set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec![
            "parameter",
            "chosen",
            "mke2fs default",
            "why",
            "source",
        ]);
    for r in &a.rationale {
        t.add_row(vec![
            r.parameter.clone(),
            r.value.clone(),
            r.mke2fs_default.clone(),
            r.why.clone(),
            r.source.clone(),
        ]);
    }
    out.push_str(&t.to_string());
    out.push_str("\n\nPredicted layout (mke2fs 1.47.0):\n");
    let l = &a.layout;
    let bs = u64::from(l.block_size);
    let mut t = table::styled();
    t.set_header(vec!["", "this command", "plain mkfs.ext4"]);
    let d = a.default_layout.as_ref();
    let row =
        |t: &mut comfy_table::Table, k: &str, f: &dyn Fn(&e4inspect::mkfs::Layout) -> String| {
            t.add_row(vec![
                k.to_string(),
                f(l),
                d.map(f).unwrap_or_else(|| "-".into()),
            ]);
        };
    row(&mut t, "block size", &|l| l.block_size.to_string());
    row(&mut t, "blocks", &|l| {
        format!(
            "{} ({})",
            l.blocks_count,
            human_bytes(l.blocks_count * u64::from(l.block_size))
        )
    });
    row(&mut t, "block groups", &|l| {
        format!("{} x {} blocks", l.groups, l.blocks_per_group)
    });
    row(&mut t, "flex_bg size", &|l| {
        l.flex_bg_size
            .map(|g| g.to_string())
            .unwrap_or("off".into())
    });
    row(&mut t, "inode size", &|l| l.inode_size.to_string());
    row(&mut t, "inodes", &|l| {
        format!("{} ({} per group)", l.inodes_count, l.inodes_per_group)
    });
    row(&mut t, "inode tables", &|l| {
        format!(
            "{} blocks/group, {} ({:.2}% of the device)",
            l.inode_blocks_per_group,
            human_bytes(l.inode_table_bytes),
            l.inode_table_percent()
        )
    });
    row(&mut t, "journal", &|l| {
        if l.journal_blocks == 0 {
            "none".into()
        } else {
            format!(
                "{} blocks ({})",
                l.journal_blocks,
                human_bytes(l.journal_blocks * u64::from(l.block_size))
            )
        }
    });
    row(&mut t, "reserved for root", &|l| {
        format!(
            "{} blocks ({})",
            l.reserved_blocks,
            pct(l.reserved_blocks, l.blocks_count)
        )
    });
    row(&mut t, "reserved GDT blocks", &|l| {
        l.reserved_gdt_blocks.to_string()
    });
    row(
        &mut t,
        "RAID stride / width",
        &|l| match (l.stride, l.stripe_width) {
            (Some(s), Some(w)) => format!("{s} / {w}"),
            _ => "-".into(),
        },
    );
    row(&mut t, "metadata overhead", &|l| match l.overhead_blocks {
        Some(o) => format!("{o} blocks ({})", pct(o, l.blocks_count)),
        None => "-".into(),
    });
    row(&mut t, "space for data", &|l| match l.data_blocks {
        Some(b) => human_bytes(b * u64::from(l.block_size)),
        None => "-".into(),
    });
    out.push_str(&t.to_string());
    out.push('\n');
    let _ = bs;
    if let Some(f) = &a.fit {
        out.push_str(&format!(
            "\nXattr fit (share required: {:.0}%):\n",
            f.fit_share * 100.0
        ));
        let mut t = table::styled();
        t.set_header(vec![
            "inode size",
            "usable bytes",
            "needed bytes",
            "all in-inode",
            "",
        ]);
        for r in &f.sizes {
            t.add_row(vec![
                r.inode_size.to_string(),
                r.usable_bytes.to_string(),
                if r.needed_bytes > 0 {
                    r.needed_bytes.to_string()
                } else {
                    "-".into()
                },
                format!("{:.1}%", r.share_all_in_inode * 100.0),
                if r.inode_size == f.inode_size {
                    "<- chosen".into()
                } else {
                    String::new()
                },
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    for w in &a.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// 16 for a refused or malformed request, 8 when a device, image or tree cannot be read.
fn exit_code(e: &anyhow::Error) -> i32 {
    for cause in e.chain() {
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
    let a = match compute(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("e4inspect: {}", super::one_line(&e));
            return Ok(exit_code(&e));
        }
    };
    if args.json {
        let doc = AdviseDocument {
            schema_version: e4inspect::format::json::SchemaVersion,
            advice: &a,
        };
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        super::emit(&render(&a))?;
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
    pub advice: &'a e4inspect::advise::Advice,
}
