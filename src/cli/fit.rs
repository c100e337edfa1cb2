//! `e4inspect fit`: do these xattrs fit in-inode, exactly as the kernel decides?
//!
//! Sources: explicit attributes (`--xattr`), built-in profiles (`--profile`), every inode of an
//! image (`--from-image`) or of a live tree (`--from-dir`). With an image or a tree, explicit
//! attributes and profiles are added to every inode's own set (a what-if: "and if we also label
//! everything for SELinux?").
//!
//! Exit status: 0, or 4 when some attribute cannot be stored at all (location `none`) at some
//! requested inode size, 8 on operational errors, 16 on usage errors.

use super::exit::{as_usage, usage};
use anyhow::Context;
use e4inspect::format::fit::{self as fit_text, JsonOut, JsonResult, NamedFile, SourceSummary};
use e4inspect::format::json::SchemaVersion;
use e4inspect::models::fit::{self, Aggregate, Attr, FitParams, FitResult, Location, XattrSet};
use e4inspect::models::profiles;
use schemars::JsonSchema;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Arguments of `e4inspect fit`.
#[derive(clap::Args, Debug, Clone)]
#[command(about = "Model whether xattrs fit in-inode, exactly as the kernel places them")]
pub struct FitArgs {
    /// An attribute NAME=SIZE (bytes), or NAME=@FILE to take the size of FILE's contents;
    /// repeatable, set in the order given.
    #[arg(long = "xattr", value_name = "NAME=SIZE")]
    pub xattrs: Vec<String>,
    /// Built-in profiles, comma-separated (see --list-profiles).
    #[arg(long = "profile", value_name = "NAME[,NAME]")]
    pub profiles: Vec<String>,
    /// List the built-in profiles with each size and its source.
    #[arg(long)]
    pub list_profiles: bool,
    /// Take every in-use inode's xattr set from an ext2/3/4 image (its own geometry is the default).
    #[arg(long, value_name = "IMG", conflicts_with = "from_dir")]
    pub from_image: Option<PathBuf>,
    /// Where the filesystem lies inside the --from-image image.
    #[command(flatten)]
    pub source: super::SourceArgs,
    /// Take every inode's xattr set from a live directory tree (one filesystem, symlinks not
    /// followed).
    #[arg(long, value_name = "DIR")]
    pub from_dir: Option<PathBuf>,
    /// Inode sizes to evaluate, e.g. 256 or 128,256,512,1024,2048.
    #[arg(long, value_name = "N[,N]", value_delimiter = ',')]
    pub inode_size: Vec<u32>,
    /// i_extra_isize (default 32, as mke2fs sets; 28 on filesystems made before 2016).
    #[arg(long, value_name = "N")]
    pub extra_isize: Option<u16>,
    /// Filesystem block size (default 4096).
    #[arg(long, value_name = "N")]
    pub block_size: Option<u32>,
    /// Model the ea_inode feature (large values in EA inodes).
    #[arg(long)]
    pub ea_inode: bool,
    /// Model an inline-data file of BYTES bytes (default 60: system.data present but empty).
    #[arg(long, value_name = "BYTES", num_args = 0..=1, default_missing_value = "60")]
    pub inline_data: Option<u32>,
    /// Output format.
    #[command(flatten)]
    pub output: super::OutputArgs,
    /// With --from-image/--from-dir: name the N files needing the biggest inode among those whose
    /// xattrs do not all stay in the inode at the reference size (spill to the block, need an EA
    /// inode, or do not fit), largest first (0: none).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub list: usize,
    /// Never show a progress bar (one is shown on stderr only when it is a terminal).
    #[arg(long)]
    pub no_progress: bool,
}

const DEFAULT_SIZES: &[u32] = &[128, 256, 512, 1024, 2048];

/// Parse one `--xattr` argument.
fn parse_xattr(arg: &str) -> anyhow::Result<Attr> {
    let Some((name, size)) = arg.rsplit_once('=') else {
        return Err(usage(format!(
            "--xattr {arg:?}: expected NAME=SIZE or NAME=@FILE"
        )));
    };
    if name.is_empty() {
        return Err(usage(format!("--xattr {arg:?}: empty name")));
    }
    let size: u64 = if let Some(file) = size.strip_prefix('@') {
        std::fs::metadata(file)
            .with_context(|| format!("--xattr {name}: cannot stat {file}"))?
            .len()
    } else {
        size.parse()
            .map_err(|_| usage(format!("--xattr {arg:?}: {size:?} is not a size in bytes")))?
    };
    let size = u32::try_from(size).map_err(|_| usage(format!("--xattr {name}: size too large")))?;
    Ok(Attr::new(name, size))
}

/// The explicit attribute list: profiles first, then --xattr, each name once (later wins).
fn explicit_attrs(args: &FitArgs) -> anyhow::Result<Vec<Attr>> {
    let mut out: Vec<Attr> = Vec::new();
    let mut add = |attr: Attr| {
        if let Some(old) = out.iter_mut().find(|o| o.name == attr.name) {
            *old = attr;
        } else {
            out.push(attr);
        }
    };
    for profile in &args.profiles {
        for attr in profiles::resolve(profile).map_err(as_usage)? {
            add(attr);
        }
    }
    for spec in &args.xattrs {
        add(parse_xattr(spec)?);
    }
    Ok(out)
}

/// The `fit --list-profiles --json` document.
#[derive(Serialize, JsonSchema)]
pub struct ProfileList {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// Every profile `--profile` accepts.
    pub profiles: &'static [profiles::Profile],
}

fn list_profiles(out: &mut String, json: bool) -> anyhow::Result<i32> {
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&ProfileList {
                schema_version: SchemaVersion,
                profiles: profiles::PROFILES
            })?
        )?;
        return Ok(0);
    }
    writeln!(out, "{}", fit_text::profile_table())?;
    Ok(0)
}

use super::emit;

/// The `n` files needing the biggest inode, kept while scanning.
struct Largest {
    n: usize,
    v: Vec<NamedFile>,
}

impl Largest {
    fn new(count: usize) -> Largest {
        Largest {
            n: count,
            v: Vec::new(),
        }
    }
    fn trim(&mut self) {
        self.v.sort_by(|a, b| {
            b.verdict
                .rank()
                .cmp(&a.verdict.rank())
                .then(a.ino.cmp(&b.ino))
                .then(a.path.cmp(&b.path))
        });
        self.v.truncate(self.n);
    }
    fn offer(&mut self, verdict: fit::SetVerdict, ino: Option<u32>, path: Option<String>) {
        if self.n == 0 || !verdict.needs_naming() {
            return;
        }
        self.v.push(NamedFile { ino, path, verdict });
        if self.v.len() >= 2 * self.n {
            self.trim();
        }
    }
    /// Take the files `other` kept (another worker's share).
    fn absorb(&mut self, other: Largest) {
        self.v.extend(other.v);
        self.trim();
    }
    fn finish(mut self) -> Vec<NamedFile> {
        self.trim();
        self.v
    }
}

/// Run `e4inspect fit`.
pub fn run(args: &FitArgs) -> anyhow::Result<i32> {
    let mut out = String::new();
    let code = run_to(&mut out, args)?;
    emit(&out)?;
    Ok(code)
}

/// Reject geometry values no filesystem can have before any work (usage errors, exit 16).
fn check_geometry_args(args: &FitArgs) -> anyhow::Result<()> {
    let pow2_in = |v: u32, lo: u32, hi: u32| v.is_power_of_two() && (lo..=hi).contains(&v);
    if let Some(bs) = args.block_size {
        if !pow2_in(bs, 1024, 65536) {
            return Err(usage(format!(
                "--block-size {bs}: must be a power of two from 1024 to 65536"
            )));
        }
    }
    for &is in &args.inode_size {
        if !pow2_in(is, 128, 65536) {
            return Err(usage(format!(
                "--inode-size {is}: must be a power of two from 128 to 65536"
            )));
        }
        if let Some(bs) = args.block_size.filter(|&bs| is > bs) {
            return Err(usage(format!(
                "--inode-size {is} is larger than --block-size {bs}"
            )));
        }
    }
    if let Some(ex) = args.extra_isize.filter(|ex| ex % 4 != 0) {
        return Err(usage(format!(
            "--extra-isize {ex}: must be a multiple of 4"
        )));
    }
    Ok(())
}

fn run_to(out: &mut String, args: &FitArgs) -> anyhow::Result<i32> {
    if args.list_profiles {
        return list_profiles(out, args.output.json());
    }
    check_geometry_args(args)?;
    let explicit = explicit_attrs(args)?;
    let image = match &args.from_image {
        Some(img) => Some(
            e4inspect::reader::fs::Filesystem::open(img, &args.source.open_options())
                .with_context(|| format!("{}", img.display()))?,
        ),
        None => None,
    };
    if let Some(fs) = &image {
        super::watch_reads(fs);
        args.source.note_recovery(fs);
    }
    let base = base_params(args, image.as_ref());
    let sizes = inode_sizes(args, image.as_ref(), base.block_size);
    let params = size_params(args, &base, &sizes)?;
    if image.is_none() && args.from_dir.is_none() && explicit.is_empty() {
        return Err(usage(
            "nothing to fit: give --xattr, --profile, --from-image or --from-dir",
        ));
    }
    let results: Vec<FitResult> = params
        .iter()
        .map(|p| fit::place(p, &explicit))
        .collect::<e4inspect::Result<_>>()?;

    let mut agg: Option<(Aggregate, SourceSummary)> = None;
    if let Some(fs) = &image {
        agg = Some(scan_image(fs, args, &base, &sizes, &explicit)?);
    } else if let Some(dir) = &args.from_dir {
        agg = Some(scan_dir(dir, &base, &sizes, &explicit, args)?);
    }

    let none = results.iter().any(|r| r.count(Location::None) > 0)
        || agg
            .as_ref()
            .is_some_and(|(a, _)| a.sizes.iter().any(|s| s.not_stored > 0));
    if args.output.json() {
        write_json(out, results, agg)?;
    } else {
        if !explicit.is_empty() {
            fit_text::write_explicit(out, &results)?;
        }
        if let Some((aggregate, summary)) = &agg {
            fit_text::write_aggregate(out, aggregate, summary)?;
        }
    }
    Ok(if none {
        super::EXIT_PROBLEMS
    } else {
        super::EXIT_OK
    })
}

/// The geometry modelled: the image's own (else a 256-byte inode on 4 KiB blocks), with the
/// command line's block size, ea_inode and extra isize over it.
fn base_params(args: &FitArgs, image: Option<&e4inspect::reader::fs::Filesystem>) -> FitParams {
    let mut base = image.map_or_else(|| FitParams::new(256), fit::image_params);
    if let Some(bs) = args.block_size {
        base.block_size = bs;
    }
    if args.ea_inode {
        base.ea_inode = true;
    }
    if let Some(ex) = args.extra_isize {
        base.extra_isize = ex;
    }
    base
}

/// The inode sizes evaluated: `--inode-size`, else the usual sizes up to the block size (and
/// the image's own size).
fn inode_sizes(
    args: &FitArgs,
    image: Option<&e4inspect::reader::fs::Filesystem>,
    block_size: u32,
) -> Vec<u32> {
    if !args.inode_size.is_empty() {
        return args.inode_size.clone();
    }
    let own = image.map(|fs| fs.geo.inode_size);
    let mut sizes: Vec<u32> = DEFAULT_SIZES
        .iter()
        .copied()
        .chain(own)
        .filter(|&s| s <= block_size)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// One validated parameter set per inode size; a size the user's geometry makes impossible is
/// a usage error.
fn size_params(args: &FitArgs, base: &FitParams, sizes: &[u32]) -> anyhow::Result<Vec<FitParams>> {
    let user_geometry =
        !args.inode_size.is_empty() || args.block_size.is_some() || args.extra_isize.is_some();
    sizes
        .iter()
        .map(|&size| {
            let mut params = base.for_inode_size(size);
            params.inline_data = args.inline_data;
            params.validate().map(|_| params)
        })
        .collect::<e4inspect::Result<_>>()
        .map_err(|e| if user_geometry { as_usage(e) } else { e.into() })
}

/// The `fit --json` document: one result per size, with the scanned population beside it.
fn write_json(
    out: &mut String,
    results: Vec<FitResult>,
    agg: Option<(Aggregate, SourceSummary)>,
) -> anyhow::Result<()> {
    let json = JsonOut {
        schema_version: SchemaVersion,
        results: results
            .into_iter()
            .enumerate()
            .map(|(i, fit)| {
                let tree = agg.as_ref().and_then(|(a, _)| a.sizes.get(i).cloned());
                JsonResult { tree, fit }
            })
            .collect(),
        source: agg.map(|(_, s)| s),
    };
    writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
    Ok(())
}

fn progress(enabled: bool, what: &str, unit: super::progress::Unit) -> indicatif::ProgressBar {
    let show = enabled && super::progress::enabled(false);
    super::progress::bar(show, what, unit, None)
}

/// Add the explicit attributes the inode does not already carry.
fn with_explicit(mut set: XattrSet, explicit: &[Attr]) -> XattrSet {
    for attr in explicit {
        if set.attrs.iter().all(|x| x.name != attr.name) {
            set.attrs.push(attr.clone());
        }
    }
    set
}

fn scan_image(
    fs: &e4inspect::reader::fs::Filesystem,
    args: &FitArgs,
    base: &FitParams,
    sizes: &[u32],
    explicit: &[Attr],
) -> anyhow::Result<(Aggregate, SourceSummary)> {
    let own = fit::image_params(fs).for_inode_size(fs.geo.inode_size);
    let ev = fit::Evaluator::new(*base, sizes, own.inode_size)?;
    let pb = progress(
        !args.output.json(),
        "scanning",
        super::progress::Unit::Inodes,
    );
    let cache = e4inspect::views::scan::XattrBlockCache::default();
    // One worker's share of the image: its evaluator, the inodes whose on-disk placement the
    // model reproduces, and its largest files.
    let init = || (ev.clone(), 0u64, Largest::new(args.list));
    let visit = |(ev, agrees, largest): &mut (fit::Evaluator, u64, Largest),
                 group: fit::SetGroup| {
        if !group.set.attrs.is_empty() {
            // Does the model reproduce what is on disk (own geometry, on-disk order)?
            let mut params = own;
            params.extra_isize = group.extra_isize;
            params.inline_data = group.set.inline_data;
            if let Ok(placed) = fit::place(&params, &group.set.attrs) {
                let predicted: Vec<Location> =
                    placed.placements.iter().map(|x| x.location).collect();
                *agrees += group.count * (predicted == group.observed) as u64;
            }
        }
        let mut set = with_explicit(group.set, explicit);
        if args.inline_data.is_some() {
            set.inline_data = args.inline_data;
        }
        let verdict = ev.add_counted(&set, group.count);
        for &ino in &group.inodes {
            largest.offer(verdict, Some(ino), None);
        }
    };
    let merge = |(ev, agrees, mut largest): (fit::Evaluator, u64, Largest),
                 (ev2, agrees2, largest2): (fit::Evaluator, u64, Largest)| {
        largest.absorb(largest2);
        (ev.merge(ev2), agrees + agrees2, largest)
    };
    let ((ev, agrees, largest), walk, counts) =
        fit::image_set_groups_par(fs, &cache, args.list, init, visit, merge, &|n| pb.inc(n));
    pb.finish_and_clear();
    if let Some(why) = walk.absent {
        // A metadata-only image without the xattr blocks: no figure can be given for it.
        let image = args.from_image.clone().unwrap_or_default();
        anyhow::bail!("{}: {why}", image.display());
    }
    let mut named = largest.finish();
    let wanted = named.iter().filter_map(|n| n.ino).collect();
    let paths = e4inspect::views::scan::inode_paths_seen(fs, &wanted, &walk.seen);
    for file in &mut named {
        file.path = file.ino.and_then(|i| paths.get(&i).cloned());
    }
    let aggregate = ev.finish();
    let summary = SourceSummary {
        kind: "image",
        path: args.from_image.clone().unwrap_or_default(),
        // The in-use inodes walked, as `xattrs` counts them (reserved inodes included; the
        // model counts only the files among them).
        inodes_scanned: counts.inodes_in_use,
        inodes_with_xattrs: aggregate.inodes_with_xattrs,
        unreadable: walk.unreadable,
        reference_inode_size: aggregate.reference_inode_size,
        smallest_inode_size_for_100: aggregate.smallest_for_100,
        smallest_inode_size_for_99: aggregate.smallest_for_99,
        smallest_inode_size_for_90: aggregate.smallest_for_90,
        model_agrees: Some(agrees),
        files_not_all_in_inode: named,
        xattr_blocks_decoded: Some(walk.blocks_decoded),
        sets_evaluated: Some(walk.groups),
    };
    Ok((aggregate, summary))
}

fn scan_dir(
    dir: &std::path::Path,
    base: &FitParams,
    sizes: &[u32],
    explicit: &[Attr],
    args: &FitArgs,
) -> anyhow::Result<(Aggregate, SourceSummary)> {
    let reference = sizes.first().copied().unwrap_or(256);
    let mut ev = fit::Evaluator::new(*base, sizes, reference)?;
    let pb = progress(
        !args.no_progress,
        "reading xattrs",
        super::progress::Unit::Entries,
    );
    let mut unreadable = 0u64;
    let mut largest = Largest::new(args.list);
    let mut walk = fit::dir_xattr_sets(dir)?;
    while let Some(item) = walk.next() {
        pb.inc(1);
        match item {
            Ok(set) => {
                let verdict = ev.add_counted(&with_explicit(set, explicit), 1);
                if verdict.needs_naming() {
                    let path = walk.last_path().map(|p| p.display().to_string());
                    largest.offer(verdict, None, path);
                }
            }
            Err(_) => unreadable += 1,
        }
    }
    pb.finish_and_clear();
    let aggregate = ev.finish();
    let summary = SourceSummary {
        kind: "dir",
        path: dir.to_path_buf(),
        inodes_scanned: aggregate.inodes_scanned,
        inodes_with_xattrs: aggregate.inodes_with_xattrs,
        unreadable,
        reference_inode_size: aggregate.reference_inode_size,
        smallest_inode_size_for_100: aggregate.smallest_for_100,
        smallest_inode_size_for_99: aggregate.smallest_for_99,
        smallest_inode_size_for_90: aggregate.smallest_for_90,
        model_agrees: None,
        files_not_all_in_inode: largest.finish(),
        xattr_blocks_decoded: None,
        sets_evaluated: None,
    };
    Ok((aggregate, summary))
}
