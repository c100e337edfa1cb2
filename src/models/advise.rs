//! `advise`: turn a workload description into an `mkfs.ext4` command line, with the reasoning
//! for every parameter and the layout mke2fs will produce ([`crate::models::mkfs::predict`]).
//!
//! The inode size comes from the xattr-fit model ([`crate::models::fit`]): the smallest power of two
//! (from 256, the size that holds nanosecond timestamps, `i_extra_isize` 32 and the project ID)
//! at which the requested share of inodes ([`DEFAULT_FIT_SHARE`] unless told) keeps every xattr
//! in the inode body. The inodes that still spill are named ([`Outlier`]) with what covering
//! them would cost in inode-table bytes, as predicted for the larger inode size.
//!
//! The inode count follows the expected population: raised with `-i` when mke2fs's default is
//! too small, lowered with `-N` to [`INODE_SAFETY_FACTOR`] x the population plus
//! [`INODE_SAFETY_HEADROOM`] when the default is at least [`LOWER_WHEN_DEFAULT_EXCEEDS`] times
//! that, saying how many inode-table bytes that returns.

use serde::Serialize;

use crate::models::fit::{self, Attr, FitParams, XattrSet};
use crate::models::mkfs::{self, Layout, MkfsConf, MkfsOptions};
use crate::{Error, Result};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// Headroom on the expected file count: directories, growth, and files smaller than average.
pub const INODE_HEADROOM: f64 = 1.25;
/// Share of inodes whose xattrs must all stay in the inode when `--fit-share` is not given: one
/// outlier in a hundred does not decide the inode size of every file.
pub const DEFAULT_FIT_SHARE: f64 = 0.99;
/// When the inode count is lowered below mke2fs's default, it is set to this many times the
/// expected population ...
pub const INODE_SAFETY_FACTOR: u64 = 2;
/// ... plus this many inodes (reserved inodes, lost+found, directories of a tiny population).
pub const INODE_SAFETY_HEADROOM: u64 = 1024;
/// The count is lowered only when mke2fs's default gives at least this many times the safe
/// count above; closer than that, the default is kept.
pub const LOWER_WHEN_DEFAULT_EXCEEDS: u64 = 2;
/// Outliers named individually (the rest are counted).
pub const MAX_NAMED_OUTLIERS: usize = 10;
/// mdadm's default chunk size, used when only a RAID level and disk count are given.
pub const MDADM_DEFAULT_CHUNK: u64 = 512 * 1024;

/// RAID geometry of the device under the filesystem.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Raid {
    /// Chunk (strip) size per disk, in bytes.
    pub chunk_bytes: u64,
    /// Disks holding data in one stripe.
    pub data_disks: u32,
    /// How the figures were obtained (for the rationale).
    pub description: String,
}

impl Raid {
    /// From a RAID level (0, 1, 4, 5, 6, 10) and the total disk count.
    pub fn from_level(level: &str, disks: u32, chunk_bytes: Option<u64>) -> Result<Raid> {
        let raid_level = level.trim().to_ascii_lowercase();
        let raid_level = raid_level
            .strip_prefix("raid")
            .unwrap_or(&raid_level)
            .to_string();
        let (data, min) = match raid_level.as_str() {
            "0" => (disks, 2),
            "4" | "5" => (disks.saturating_sub(1), 3),
            "6" => (disks.saturating_sub(2), 4),
            "10" => (disks / 2, 4),
            "1" => {
                return Err(Error::Invalid(
                    "RAID1 mirrors whole disks: it has no stripe, so there is nothing to align to; give no RAID options".into(),
                ))
            }
            _ => {
                return Err(Error::Invalid(format!(
                    "unknown RAID level '{level}' (use 0, 4, 5, 6 or 10)"
                )))
            }
        };
        if disks < min {
            return Err(Error::Invalid(format!(
                "RAID{raid_level} needs at least {min} disks, got {disks}"
            )));
        }
        let chunk = chunk_bytes.unwrap_or(MDADM_DEFAULT_CHUNK);
        Ok(Raid {
            chunk_bytes: chunk,
            data_disks: data,
            description: format!(
                "RAID{raid_level} of {disks} disks = {data} data disks, chunk {}{}",
                human_bytes(chunk),
                if chunk_bytes.is_none() {
                    " (mdadm default)"
                } else {
                    ""
                }
            ),
        })
    }
}

/// Where the population figures come from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Population {
    /// Expected number of files (and directories).
    pub files: Option<u64>,
    /// Average file size in bytes.
    pub avg_file_size: Option<u64>,
    /// Sampled xattr sets (from a tree or an image): inodes with xattrs, grouped or one by one.
    pub xattr_sets: Vec<SampledSet>,
    /// Inodes in the sample (with or without xattrs); scales outlier counts to `files`.
    pub sample_inodes: u64,
    /// Label of the sample, e.g. "/srv/share (12 345 files)".
    pub sample: Option<String>,
}

/// One xattr set of a sample, the inodes carrying it, and where it was seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SampledSet {
    /// The xattrs.
    pub set: XattrSet,
    /// Inodes carrying exactly this set.
    pub count: u64,
    /// Path of (the first of) those inodes, when known.
    pub path: Option<String>,
    /// Inode number in a sampled image.
    pub ino: Option<u32>,
}

/// Most distinct xattr sets a sample keeps: later inodes with a set already seen are still
/// counted, new sets beyond this are counted in [`SetSampler::unsampled`] only (memory stays
/// bounded whatever the tree or image holds).
pub const MAX_DISTINCT_SETS: usize = 100_000;

/// Groups a sample's inodes by identical xattr set (same names, value sizes, inline data),
/// keeping the first path or inode number of each set.
#[derive(Debug, Default)]
pub struct SetSampler {
    index: std::collections::HashMap<(Vec<Attr>, Option<u32>), usize>,
    sets: Vec<SampledSet>,
    /// Inodes whose set was new after [`MAX_DISTINCT_SETS`] distinct sets.
    pub unsampled: u64,
}

impl SetSampler {
    /// Count `count` inodes carrying `set`, first seen at `path` / `ino`.
    pub fn add(&mut self, set: XattrSet, count: u64, path: Option<String>, ino: Option<u32>) {
        if set.attrs.is_empty() {
            return;
        }
        let key = (set.attrs.clone(), set.inline_data);
        if let Some(&index) = self.index.get(&key) {
            if let Some(sampled) = self.sets.get_mut(index) {
                sampled.count += count;
            }
        } else if self.sets.len() < MAX_DISTINCT_SETS {
            self.index.insert(key, self.sets.len());
            self.sets.push(SampledSet {
                set,
                count,
                path,
                ino,
            });
        } else {
            self.unsampled += count;
        }
    }

    /// Take the sets `later` counted (a parallel scan's next worker, in group order): each is
    /// added as if met after these, so the first path or inode of a set stays the first met.
    pub fn merge(mut self, later: SetSampler) -> SetSampler {
        self.unsampled += later.unsampled;
        for sampled in later.sets {
            self.add(sampled.set, sampled.count, sampled.path, sampled.ino);
        }
        self
    }

    /// The grouped sets.
    pub fn finish(self) -> Vec<SampledSet> {
        self.sets
    }
}

impl SampledSet {
    /// One inode's set seen at `path`.
    pub fn at_path(set: XattrSet, path: impl Into<String>) -> SampledSet {
        SampledSet {
            set,
            count: 1,
            path: Some(path.into()),
            ino: None,
        }
    }
}

/// What the user told us about the workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// Size of the device or file the filesystem will fill.
    pub device_bytes: u64,
    /// `--block-size` override.
    pub block_size: Option<u32>,
    /// File population.
    pub population: Population,
    /// Xattrs every inode carries (profiles and `--xattr`), in the order they are set.
    pub xattrs: Vec<Attr>,
    /// Names of the profiles the xattrs came from (for the rationale).
    pub profiles: Vec<String>,
    /// Share of inodes whose xattrs must all fit in the inode (0 < share <= 1).
    pub fit_share: f64,
    /// RAID geometry.
    pub raid: Option<Raid>,
    /// Spinning disks.
    pub rotational: bool,
    /// Many clients / metadata-heavy load.
    pub metadata_heavy: bool,
    /// Project quota wanted.
    pub project_quota: bool,
    /// Directories with millions of entries.
    pub large_dirs: bool,
    /// Oldest kernel that must mount the filesystem.
    pub kernel: Option<(u32, u32)>,
    /// `--inode-size` override (checked, and checked against the xattr fit).
    pub inode_size: Option<u32>,
    /// `--journal-size` override in MiB.
    pub journal_mib: Option<u64>,
}

impl Workload {
    /// A workload with nothing but a size.
    pub fn new(device_bytes: u64) -> Workload {
        Workload {
            device_bytes,
            block_size: None,
            population: Population::default(),
            xattrs: Vec::new(),
            profiles: Vec::new(),
            fit_share: DEFAULT_FIT_SHARE,
            raid: None,
            rotational: false,
            metadata_heavy: false,
            project_quota: false,
            large_dirs: false,
            kernel: None,
            inode_size: None,
            journal_mib: None,
        }
    }
}

/// One row of the rationale table.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Rationale {
    /// The mke2fs parameter (`-I`, `-i`, `-J size=` ...).
    pub parameter: String,
    /// What we chose (`default` when we leave it to mke2fs).
    pub value: String,
    /// What mke2fs would use by itself.
    pub mke2fs_default: String,
    /// Why.
    pub why: String,
    /// Where the rule comes from.
    pub source: String,
}

/// The xattr-fit result for one inode size.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FitRow {
    /// Inode size.
    pub inode_size: u32,
    /// Share of inodes (with xattrs) keeping them all in the inode.
    pub share_all_in_inode: f64,
    /// For an explicit attribute list: body bytes usable / needed / free.
    #[serde(rename = "capacity_bytes")]
    pub usable_bytes: usize,
    /// Bytes the attribute list needs in the body (explicit list only; 0 for a sample).
    pub needed_bytes: usize,
    /// Whether this size meets the requested share.
    pub meets_share: bool,
}

/// The xattr-fit part of the advice.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FitAdvice {
    /// Requested share (0..=1).
    pub fit_share: f64,
    /// Smallest inode size meeting it.
    pub inode_size: u32,
    /// One row per candidate size (128 up to the block size).
    pub sizes: Vec<FitRow>,
    /// Inodes in the sample (1 for an explicit attribute list).
    pub inodes: u64,
    /// Placement of the explicit attribute list in the chosen inode size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placements: Option<fit::FitResult>,
    /// Inodes of the sample (or the explicit list) whose xattrs do not all stay in the inode at
    /// the inode size of the command.
    pub outlier_inodes: u64,
    /// `outlier_inodes` scaled from the sample to `--files`, when both were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outlier_inodes_expected: Option<u64>,
    /// The worst outliers (largest inode size needed first), at most [`MAX_NAMED_OUTLIERS`].
    pub outliers: Vec<Outlier>,
    /// What covering the outliers would cost, per larger inode size.
    pub cover_costs: Vec<CoverCost>,
}

/// An inode (or group of inodes) whose xattrs spill out of the inode at the advised size.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Outlier {
    /// Path in the sampled tree or image, or the profile/attribute list it stands for.
    pub path: Option<String>,
    /// Inode number in a sampled image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ino: Option<u32>,
    /// Inodes with this same set.
    pub inodes: u64,
    /// Body bytes the set needs to stay in the inode.
    pub needed_bytes: usize,
    /// Smallest inode size holding it all (`None`: no size up to the block size does).
    pub inode_size_needed: Option<u32>,
    /// Extra inode-table bytes that inode size costs over the advised layout (`None` when no
    /// size holds it, or mke2fs would refuse the larger size).
    pub extra_inode_table_bytes: Option<u64>,
}

/// The cost of choosing a larger inode size to cover outliers.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CoverCost {
    /// The larger inode size.
    pub inode_size: u32,
    /// Outlier inodes (in the sample) it would bring in-inode.
    pub outlier_inodes_covered: u64,
    /// Inode-table bytes added over the advised layout (predicted for mke2fs).
    pub extra_inode_table_bytes: Option<u64>,
    /// Inode tables as a share of the device at that size, in percent.
    pub inode_table_percent: Option<f64>,
}

/// The whole advice.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Advice {
    /// The command, copy-paste ready (device path or `DEVICE`).
    pub command: String,
    /// argv after `mkfs.ext4`, without the device.
    pub args: Vec<String>,
    /// The options as a structure.
    #[serde(skip)]
    pub options: MkfsOptions,
    /// Predicted layout of exactly that command.
    pub layout: Layout,
    /// What plain `mkfs.ext4 DEVICE` would have produced.
    pub default_layout: Option<Layout>,
    /// Parameter by parameter.
    pub rationale: Vec<Rationale>,
    /// The xattr-fit evidence, when xattrs were described.
    pub fit: Option<FitAdvice>,
    /// Things the user should know.
    pub warnings: Vec<String>,
    /// Where the mke2fs defaults were read.
    pub mke2fs_conf: String,
    /// Inode-table bytes the chosen inode count returns to data compared with the same
    /// command leaving the count to mke2fs (0 when the count was not lowered).
    pub inode_table_bytes_returned: u64,
}

/// Oldest mainline kernel that mounts a filesystem with each feature read-write.
pub const FEATURE_KERNELS: &[(&str, (u32, u32))] = &[
    ("extent", (2, 6)),
    ("flex_bg", (2, 6)),
    ("huge_file", (2, 6)),
    ("dir_nlink", (2, 6)),
    ("extra_isize", (2, 6)),
    ("64bit", (2, 6)),
    ("metadata_csum", (3, 18)),
    ("inline_data", (3, 8)),
    ("quota", (3, 6)),
    ("metadata_csum_seed", (4, 4)),
    ("project", (4, 5)),
    ("ea_inode", (4, 13)),
    ("large_dir", (4, 13)),
    ("casefold", (5, 2)),
    ("fast_commit", (5, 10)),
    ("orphan_file", (5, 15)),
];

fn feature_kernel(feature: &str) -> Option<(u32, u32)> {
    FEATURE_KERNELS
        .iter()
        .find(|(n, _)| *n == feature)
        .map(|&(_, k)| k)
}

/// Parse "5.15", "4.18.0-553.el8" or "3.10" into (major, minor).
pub fn parse_kernel(version: &str) -> Result<(u32, u32)> {
    let mut it = version.trim().split(['.', '-']);
    let maj = it.next().and_then(|x| x.parse().ok());
    let min = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
    match maj {
        Some(m) => Ok((m, min)),
        None => Err(Error::Invalid(format!(
            "kernel version '{version}' is not MAJOR.MINOR"
        ))),
    }
}

/// "1.5 GiB"-style rendering (powers of 1024).
pub fn human_bytes(bytes: u64) -> String {
    const U: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut scaled = bytes as f64;
    let mut unit = 0;
    while scaled >= 1024.0 && unit + 1 < U.len() {
        scaled /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else if scaled.fract() == 0.0 {
        format!("{} {}", scaled as u64, U[unit])
    } else {
        format!("{scaled:.1} {}", U[unit])
    }
}

fn floor_pow2(value: u64) -> u64 {
    if value == 0 {
        0
    } else {
        1u64 << (63 - value.leading_zeros())
    }
}

/// The inode sizes mke2fs accepts for a block size: 128, 256, ... up to the block size.
fn inode_ladder(block_size: u32) -> Vec<u32> {
    let mut ladder = Vec::new();
    let mut size = 128u32;
    while size <= block_size {
        ladder.push(size);
        size *= 2;
    }
    ladder
}

/// The fit model's parameters for `block_size` (ea_inode off, default extra isize per size).
fn fit_base(block_size: u32) -> FitParams {
    FitParams {
        block_size,
        ..FitParams::new(256)
    }
}

/// The sets to evaluate: the sample with the explicit attributes (profiles, `--xattr`) added to
/// every set that lacks them, or the explicit list alone as one inode when there is no sample.
pub fn evaluated_sets(xattrs: &[Attr], sample: &[SampledSet]) -> Vec<SampledSet> {
    if sample.is_empty() {
        if xattrs.is_empty() {
            return Vec::new();
        }
        return vec![SampledSet {
            set: XattrSet {
                attrs: xattrs.to_vec(),
                inline_data: None,
            },
            count: 1,
            path: None,
            ino: None,
        }];
    }
    sample
        .iter()
        .map(|sampled| {
            let mut sampled = sampled.clone();
            for attr in xattrs {
                if sampled.set.attrs.iter().all(|x| x.name != attr.name) {
                    sampled.set.attrs.push(attr.clone());
                }
            }
            sampled
        })
        .collect()
}

/// Evaluate the xattr description at every inode size from 128 to the block size and pick the
/// smallest (never below `floor`) that meets `share`. Outliers are left empty here: they depend
/// on the final inode size ([`name_outliers`]).
pub fn fit_inode_size(
    xattrs: &[Attr],
    sample: &[SampledSet],
    share: f64,
    block_size: u32,
    floor: u32,
) -> Result<FitAdvice> {
    let ladder = inode_ladder(block_size);
    let base = fit_base(block_size);
    let explicit = sample.is_empty();
    let sets = evaluated_sets(xattrs, sample);
    let mut ev = fit::Evaluator::new(base, &ladder, floor.min(block_size))?;
    for sampled in &sets {
        ev.add_counted(&sampled.set, sampled.count);
    }
    let agg = ev.finish();
    let mut rows = Vec::new();
    let mut chosen = None;
    for st in &agg.sizes {
        let (usable, needed) = if explicit {
            let mut params = base;
            params.inode_size = st.inode_size;
            params.extra_isize = fit::default_extra_isize(st.inode_size);
            let placed = fit::place(&params, xattrs)?;
            (placed.usable_bytes, placed.needed_bytes)
        } else {
            (st.usable_bytes, 0)
        };
        // Integer comparison as the fit model does: all_in_inode / inodes >= share.
        let meets = st.inodes == 0 || st.all_in_inode as f64 >= share * st.inodes as f64 - 1e-9;
        if meets && chosen.is_none() && st.inode_size >= floor {
            chosen = Some(st.inode_size);
        }
        rows.push(FitRow {
            inode_size: st.inode_size,
            share_all_in_inode: st.share_all_in_inode,
            usable_bytes: usable,
            needed_bytes: needed,
            meets_share: meets,
        });
    }
    let Some(inode_size) = chosen else {
        let best = rows.last().map(|r| r.share_all_in_inode).unwrap_or(0.0);
        return Err(Error::Invalid(format!(
            "the xattrs do not fit in-inode for {:.1}% of inodes at any inode size up to the block size ({block_size}): at most {:.1}% fit. Lower --fit-share, use a larger --block-size, or accept the external xattr block",
            share * 100.0,
            best * 100.0
        )));
    };
    let placements = if explicit {
        let mut params = base;
        params.inode_size = inode_size;
        params.extra_isize = fit::default_extra_isize(inode_size);
        Some(fit::place(&params, xattrs)?)
    } else {
        None
    };
    Ok(FitAdvice {
        fit_share: share,
        inode_size,
        sizes: rows,
        inodes: agg.inodes_with_xattrs,
        placements,
        outlier_inodes: 0,
        outlier_inodes_expected: None,
        outliers: Vec::new(),
        cover_costs: Vec::new(),
    })
}

/// What [`name_outliers`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OutlierScan {
    /// The worst sets, at most [`MAX_NAMED_OUTLIERS`].
    pub named: Vec<Outlier>,
    /// Inodes whose xattrs spill at the inode size.
    pub total: u64,
    /// Per larger inode size on the ladder: outlier inodes it would hold all in-inode.
    pub covered: Vec<(u32, u64)>,
}

/// The sets whose xattrs do not all stay in an inode of `inode_size` bytes, worst first (the
/// largest inode size needed, then the most bytes), with the total of inodes they stand for.
pub fn name_outliers(sets: &[SampledSet], block_size: u32, inode_size: u32) -> Result<OutlierScan> {
    let ladder = inode_ladder(block_size);
    let mut ev = fit::Evaluator::new(fit_base(block_size), &ladder, inode_size.min(block_size))?;
    let mut found: Vec<(fit::SetVerdict, &SampledSet)> = Vec::new();
    let mut scan = OutlierScan::default();
    for sampled in sets {
        let verdict = ev.add_counted(&sampled.set, sampled.count);
        if verdict.needs_naming() {
            scan.total += sampled.count;
            found.push((verdict, sampled));
        }
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.0.rank()));
    scan.named = found
        .iter()
        .take(MAX_NAMED_OUTLIERS)
        .map(|(verdict, sampled)| Outlier {
            path: sampled.path.clone(),
            ino: sampled.ino,
            inodes: sampled.count,
            needed_bytes: verdict.needed_bytes,
            inode_size_needed: verdict.smallest_all_in_inode,
            extra_inode_table_bytes: None,
        })
        .collect();
    for &size in ladder.iter().filter(|&&l| l > inode_size) {
        let covered: u64 = found
            .iter()
            .filter(|(v, _)| v.smallest_all_in_inode.is_some_and(|need| need <= size))
            .map(|(_, s)| s.count)
            .sum();
        if covered > 0 {
            scan.covered.push((size, covered));
        }
        if covered == scan.total {
            break;
        }
    }
    Ok(scan)
}

/// Build the advice for a workload: the steps below follow the order of mke2fs' own decisions
/// (block size, features, inode size and count, journal, RAID geometry, reserved blocks), each
/// recording its rationale, then the result is checked against the mke2fs predictor.
pub fn advise(workload: &Workload, conf: &MkfsConf) -> Result<Advice> {
    check_workload(workload)?;
    let mut draft = Draft::new(workload, conf);
    let bs = draft.block_size(conf)?;
    draft.kernel_features();
    let (inode_size, fit_advice) = draft.inode_size(bs)?;
    let wanted_inodes = draft.inode_count(inode_size)?;
    draft.journal(bs)?;
    draft.raid(bs)?;
    draft.workload_features()?;
    draft.reserved_blocks();
    draft.finish(conf, wanted_inodes, fit_advice)
}

fn invalid<T>(message: String) -> Result<T> {
    Err(Error::Invalid(message))
}

/// Workload values no advice can start from.
fn check_workload(workload: &Workload) -> Result<()> {
    if workload.device_bytes < 8 * MIB {
        return invalid(format!(
            "device too small: {} (advice starts at 8 MiB; below that ext4 has no room for a journal worth having)",
            human_bytes(workload.device_bytes)
        ));
    }
    if !(workload.fit_share > 0.0 && workload.fit_share <= 1.0) {
        return invalid(format!(
            "--fit-share must be in (0, 100] percent, got {}",
            workload.fit_share * 100.0
        ));
    }
    Ok(())
}

/// The advice being built: options chosen so far, their rationale and warnings, against what
/// mke2fs would do by default on this device.
struct Draft<'a> {
    w: &'a Workload,
    o: MkfsOptions,
    why: Vec<Rationale>,
    warnings: Vec<String>,
    features: Vec<String>,
    default_layout: Option<Layout>,
    /// Larger inode sizes and the outlier inodes each would cover (for the cost in `finish`).
    cover: Vec<(u32, u64)>,
    /// Inode-table bytes the inode count returns (set in `finish`).
    returned: u64,
}

impl<'a> Draft<'a> {
    fn new(workload: &'a Workload, conf: &MkfsConf) -> Self {
        Draft {
            w: workload,
            o: MkfsOptions::default(),
            why: Vec::new(),
            warnings: Vec::new(),
            features: Vec::new(),
            default_layout: mkfs::predict(workload.device_bytes, &MkfsOptions::default(), conf)
                .ok(),
            cover: Vec::new(),
            returned: 0,
        }
    }

    /// A value of mke2fs' default layout, `-` when mke2fs would refuse the device.
    fn dflt(&self, value_of: &dyn Fn(&Layout) -> String) -> String {
        self.default_layout
            .as_ref()
            .map(value_of)
            .unwrap_or_else(|| "-".into())
    }

    /// Does the target kernel know feature `feature`?
    fn kernel_ok(&self, feature: &str) -> bool {
        match (self.w.kernel, feature_kernel(feature)) {
            (Some(k), Some(need)) => k >= need,
            _ => true,
        }
    }

    /// `-b`: 4 KiB unless requested.
    fn block_size(&mut self, conf: &MkfsConf) -> Result<u32> {
        let bs = match self.w.block_size {
            Some(b) => {
                if !(1024..=65536).contains(&b) || !b.is_power_of_two() {
                    return invalid(format!(
                        "block size {b} must be a power of two from 1024 to 65536"
                    ));
                }
                b
            }
            None => 4096,
        };
        let default_bs = self.default_layout.as_ref().map(|l| l.block_size);
        if default_bs != Some(bs) {
            self.o.block_size = Some(bs);
        }
        self.why.push(Rationale {
            parameter: "-b".into(),
            value: if self.o.block_size.is_some() {
                bs.to_string()
            } else {
                format!("default ({bs})")
            },
            mke2fs_default: self.dflt(&|l| l.block_size.to_string()),
            why: if self.w.block_size.is_some() {
                "requested".into()
            } else if self.o.block_size.is_some() {
                "4 KiB = the page size; mke2fs.conf's 'small' type (< 512 MiB) would pick 1 KiB blocks, which multiply metadata and cap files at 16 GiB".into()
            } else {
                "4 KiB = the page size, what mke2fs picks for this size".into()
            },
            source: format!("mke2fs.conf [fs_types] ({})", conf.origin),
        });
        if bs > 4096 {
            self.warnings.push(format!(
                "block size {bs} is larger than the 4 KiB page: Linux before 6.x cannot mount it"
            ));
        }
        Ok(bs)
    }

    /// Kernel compatibility: switch off default features the target kernel does not know.
    fn kernel_features(&mut self) {
        if let Some(kernel) = self.w.kernel {
            if let Some(dl) = &self.default_layout {
                for feature in &dl.features {
                    if let Some(need) = feature_kernel(feature) {
                        if kernel < need {
                            self.features.push(format!("^{feature}"));
                            self.why.push(Rationale {
                                parameter: format!("-O ^{feature}"),
                                value: "off".into(),
                                mke2fs_default: "on".into(),
                                why: format!(
                                    "kernel {}.{} predates {feature} (needs {}.{})",
                                    kernel.0, kernel.1, need.0, need.1
                                ),
                                source: "kernel fs/ext4 feature history".into(),
                            });
                        }
                    }
                }
            }
        }
    }

    /// What the xattrs were described by: the sample's label, or the profiles and attributes.
    fn xattr_label(&self) -> String {
        if self.w.population.xattr_sets.is_empty() {
            let names: Vec<String> = self
                .w
                .xattrs
                .iter()
                .map(|a| format!("{}={}", a.name, a.value_size))
                .collect();
            let prof = if self.w.profiles.is_empty() {
                String::new()
            } else {
                format!("profiles {}: ", self.w.profiles.join(","))
            };
            format!("{prof}{}", names.join(" "))
        } else {
            self.w
                .population
                .sample
                .clone()
                .unwrap_or_else(|| "the sampled xattr sets".into())
        }
    }

    /// Name the inodes whose xattrs spill at the final `inode_size`, and remember what larger
    /// sizes would cover them (costed in `finish`).
    fn outliers(&mut self, fa: &mut FitAdvice, bs: u32, inode_size: u32) -> Result<()> {
        let mut sets = evaluated_sets(&self.w.xattrs, &self.w.population.xattr_sets);
        if self.w.population.xattr_sets.is_empty() {
            let label = self.xattr_label();
            for sampled in &mut sets {
                sampled.path = Some(label.clone());
            }
        }
        let scan = name_outliers(&sets, bs, inode_size)?;
        fa.outlier_inodes = scan.total;
        let sample = self.w.population.sample_inodes;
        fa.outlier_inodes_expected = match (self.w.population.files, sample) {
            (Some(files), n) if n > 0 && !self.w.population.xattr_sets.is_empty() => {
                Some((u128::from(scan.total) * u128::from(files)).div_ceil(u128::from(n)) as u64)
            }
            _ => None,
        };
        fa.outliers = scan.named;
        self.cover = scan.covered;
        Ok(())
    }

    /// The xattr-fit step of `-I`: the smallest inode keeping the described xattrs in-inode, and
    /// why. `None` when no xattrs were described.
    fn xattr_fit(&self, bs: u32, floor: u32) -> Result<Option<(FitAdvice, String)>> {
        if self.w.xattrs.is_empty() && self.w.population.xattr_sets.is_empty() {
            return Ok(None);
        }
        let fa = fit_inode_size(
            &self.w.xattrs,
            &self.w.population.xattr_sets,
            self.w.fit_share,
            bs,
            floor,
        )?;
        let inode_size = fa.inode_size;
        let what = self.xattr_label();
        let row = fa.sizes.iter().find(|r| r.inode_size == inode_size);
        let smaller = fa.sizes.iter().find(|r| r.inode_size == inode_size / 2);
        let mut why = format!(
            "smallest size keeping all xattrs in-inode for {:.0}% of inodes ({what})",
            self.w.fit_share * 100.0
        );
        if let Some(fit_row) = row {
            if fit_row.needed_bytes > 0 {
                why.push_str(&format!(
                    "; needs {} of {} body bytes",
                    fit_row.needed_bytes, fit_row.usable_bytes
                ));
            }
        }
        if let Some(fit_row) = smaller {
            if !fit_row.meets_share && inode_size > floor {
                why.push_str(&format!(
                    "; {} would keep only {:.1}% in-inode (every spill costs a block read per lookup)",
                    fit_row.inode_size,
                    fit_row.share_all_in_inode * 100.0
                ));
            }
        }
        Ok(Some((fa, why)))
    }

    /// `-I`: xattr fit, then a requested size, then project quota's 256-byte floor.
    fn inode_size(&mut self, bs: u32) -> Result<(u32, Option<FitAdvice>)> {
        let floor = 256u32;
        let mut inode_size = floor;
        let mut inode_why = "256 bytes: nanosecond and post-2038 timestamps, i_extra_isize 32 (project ID, crtime) — mke2fs's default".to_string();
        let mut inode_src = "mke2fs.conf [defaults] inode_size".to_string();
        let fit_advice = match self.xattr_fit(bs, floor)? {
            Some((fa, s)) => {
                inode_size = fa.inode_size;
                inode_why = s;
                inode_src = "xattr-fit model (src/fit.rs); Samba 2004: up to 7x with xattrs in-inode; Lustre LU-8998".into();
                Some(fa)
            }
            None => None,
        };
        if let Some(req) = self.w.inode_size {
            if !(128..=65536).contains(&req) || !req.is_power_of_two() {
                return invalid(format!(
                    "inode size {req} must be a power of two from 128 to the block size"
                ));
            }
            if req > bs {
                return invalid(format!(
                    "inode size {req} is above the block size {bs}: mke2fs refuses it"
                ));
            }
            if let Some(fa) = &fit_advice {
                if req < fa.inode_size {
                    self.warnings.push(format!(
                        "--inode-size {req} is below the {} bytes the xattrs need at {:.0}%: they will spill to the external block",
                        fa.inode_size,
                        self.w.fit_share * 100.0
                    ));
                }
            }
            if self.w.project_quota && req < 256 {
                return invalid(
                    "project quota needs inodes of at least 256 bytes (i_extra_isize 32)".into(),
                );
            }
            inode_size = req;
            inode_why = "requested".into();
            inode_src = "--inode-size".into();
        }
        if self.w.project_quota && inode_size < 256 {
            inode_size = 256;
        }
        let default_is = self
            .default_layout
            .as_ref()
            .map(|l| l.inode_size)
            .unwrap_or(256);
        if inode_size != default_is {
            self.o.inode_size = Some(inode_size);
        }
        if inode_size > bs {
            return invalid(format!(
                "inode size {inode_size} is above the block size {bs}"
            ));
        }
        let mut fit_advice = fit_advice;
        if let Some(fa) = fit_advice.as_mut() {
            self.outliers(fa, bs, inode_size)?;
        }
        self.why.push(Rationale {
            parameter: "-I".into(),
            value: inode_size.to_string(),
            mke2fs_default: default_is.to_string(),
            why: inode_why,
            source: inode_src,
        });
        Ok((inode_size, fit_advice))
    }

    /// `-i`: from the expected file count or average size, with headroom. Returns the inode count
    /// asked for, when one was.
    fn inode_count(&mut self, inode_size: u32) -> Result<Option<u64>> {
        if let Some(files) = self.lower_inode_count() {
            return Ok(Some(files));
        }
        let needed = match (self.w.population.files, self.w.population.avg_file_size) {
            (Some(n), _) => Some((n as f64, format!("{n} files"))),
            (None, Some(avg)) => {
                if avg == 0 {
                    return invalid("--avg-file-size must be above 0".into());
                }
                Some((
                    self.w.device_bytes as f64 / avg as f64,
                    format!(
                        "{} / {} average",
                        human_bytes(self.w.device_bytes),
                        human_bytes(avg)
                    ),
                ))
            }
            _ => None,
        };
        let mut wanted_inodes = None;
        if let Some((needed, what)) = needed {
            let target = needed * INODE_HEADROOM;
            if needed > mkfs::MAX_32 as f64 {
                return invalid(format!(
                    "{needed:.0} inodes needed but ext4 holds at most 4294967295 (2^32-1) per filesystem; split the data over several filesystems"
                ));
            }
            let target = target.min(mkfs::MAX_32 as f64).max(16.0);
            wanted_inodes = Some(needed.ceil() as u64);
            let raw_ratio = (self.w.device_bytes as f64 / target).floor() as u64;
            let ratio = floor_pow2(raw_ratio).clamp(1024, 64 * MIB);
            if raw_ratio < 2 * u64::from(inode_size) {
                return invalid(format!(
                    "{what} need one inode per {} bytes, but an inode takes {inode_size}: the inode tables would fill the device. Use a larger device or fewer files",
                    raw_ratio
                ));
            }
            let default_ratio = self
                .default_layout
                .as_ref()
                .map(|l| l.inode_ratio)
                .unwrap_or(16384);
            // A stated count keeps the default when that suffices; a count derived from the
            // average size (a device-filling estimate) always sets the ratio.
            let use_default = self.w.population.files.is_some()
                && self
                    .default_layout
                    .as_ref()
                    .map(|l| l.inodes_count as f64 >= target)
                    .unwrap_or(false);
            if !use_default {
                self.o.inode_ratio = Some(ratio);
            }
            if ratio <= 4 * u64::from(inode_size) {
                self.warnings.push(format!(
                    "inode tables will take about {:.0}% of the device",
                    100.0 * f64::from(inode_size) / ratio as f64
                ));
            }
            self.why.push(Rationale {
                parameter: "-i".into(),
                value: if use_default {
                    format!("default ({default_ratio})")
                } else {
                    ratio.to_string()
                },
                mke2fs_default: default_ratio.to_string(),
                why: if use_default {
                    format!(
                        "the default already gives ≥ {target:.0} inodes ({what} + 25% for directories and growth)"
                    )
                } else {
                    format!(
                        "{what} + 25% for directories and growth = {target:.0} inodes: one per {raw_ratio} bytes, {}",
                        if ratio == 64 * MIB && raw_ratio > 64 * MIB {
                            "capped at mke2fs's maximum -i (64 MiB)"
                        } else if ratio == 1024 && raw_ratio < 1024 {
                            "raised to mke2fs's minimum -i (1024)"
                        } else {
                            "rounded down to a power of two"
                        }
                    )
                },
                source: "population estimate".into(),
            });
        }
        Ok(wanted_inodes)
    }

    /// `-N`: when the expected file count (`--files`, scaling a sample if there is one) is far
    /// below mke2fs's default, ask for [`INODE_SAFETY_FACTOR`] x the files plus
    /// [`INODE_SAFETY_HEADROOM`]. Returns the file count when it lowered.
    fn lower_inode_count(&mut self) -> Option<u64> {
        let files = self.w.population.files?;
        let default = self.default_layout.as_ref()?.inodes_count;
        let safe = files
            .checked_mul(INODE_SAFETY_FACTOR)?
            .checked_add(INODE_SAFETY_HEADROOM)?;
        if safe > mkfs::MAX_32 || default < safe.saturating_mul(LOWER_WHEN_DEFAULT_EXCEEDS) {
            return None;
        }
        self.o.inodes = Some(safe);
        self.why.push(Rationale {
            parameter: "-N".into(),
            value: safe.to_string(),
            mke2fs_default: format!("{default} inodes"),
            why: format!(
                "{files} files x {INODE_SAFETY_FACTOR} + {INODE_SAFETY_HEADROOM} headroom = {safe} inodes (mke2fs rounds up to whole inode-table blocks per group); the default is {:.1}x that",
                default as f64 / safe as f64
            ),
            source: "population estimate (--files)".into(),
        });
        Some(files)
    }

    /// Say what the inode count returns to data (against the same command with the count
    /// left to mke2fs), and what larger inode sizes covering the outliers would cost.
    fn cost_alternatives(&mut self, conf: &MkfsConf, layout: &Layout, fit: Option<&mut FitAdvice>) {
        let workload = self.w;
        let mut unlowered = self.o.clone();
        unlowered.inodes = None;
        unlowered.inode_ratio = None;
        let returned = mkfs::predict(workload.device_bytes, &unlowered, conf)
            .map(|l| l.inode_table_bytes.saturating_sub(layout.inode_table_bytes))
            .unwrap_or(0);
        self.returned = returned;
        if returned > 0 {
            if let Some(rationale) = self
                .why
                .iter_mut()
                .find(|rationale| rationale.parameter == "-N" || rationale.parameter == "-i")
            {
                rationale.why.push_str(&format!(
                    "; returns {} of inode tables to data ({:.2}% of the device)",
                    human_bytes(returned),
                    100.0 * returned as f64 / workload.device_bytes as f64
                ));
            }
        }
        let Some(fa) = fit else { return };
        for &(size, covered) in &self.cover {
            let mut options = self.o.clone();
            options.inode_size = Some(size);
            let cover_layout = mkfs::predict(workload.device_bytes, &options, conf).ok();
            fa.cover_costs.push(CoverCost {
                inode_size: size,
                outlier_inodes_covered: covered,
                extra_inode_table_bytes: cover_layout.as_ref().map(|cover_layout| {
                    cover_layout
                        .inode_table_bytes
                        .saturating_sub(layout.inode_table_bytes)
                }),
                inode_table_percent: cover_layout.as_ref().map(Layout::inode_table_percent),
            });
        }
        for outlier in &mut fa.outliers {
            outlier.extra_inode_table_bytes = outlier.inode_size_needed.and_then(|need| {
                fa.cover_costs
                    .iter()
                    .find(|c| c.inode_size == need)
                    .and_then(|c| c.extra_inode_table_bytes)
            });
        }
        if fa.outlier_inodes > 0 {
            self.warnings.push(outlier_warning(fa, layout.inode_size));
        }
    }

    /// `-J size=`: requested, or larger for metadata-heavy loads.
    fn journal(&mut self, bs: u32) -> Result<()> {
        if let Some(mib) = self.w.journal_mib {
            let blocks = mib * 1024 / (u64::from(bs) / 1024);
            if !(mkfs::JOURNAL_MIN_BLOCKS..=mkfs::JOURNAL_MAX_BLOCKS).contains(&blocks) {
                return invalid(format!(
                    "journal of {mib} MiB = {blocks} blocks of {bs} bytes: mke2fs allows {} to {} blocks",
                    mkfs::JOURNAL_MIN_BLOCKS,
                    mkfs::JOURNAL_MAX_BLOCKS
                ));
            }
            self.o.journal_size_mib = Some(mib);
            self.why.push(Rationale {
                parameter: "-J size=".into(),
                value: format!("{mib} MiB"),
                mke2fs_default: self
                    .dflt(&|l| format!("{} MiB", l.journal_blocks * u64::from(l.block_size) / MIB)),
                why: "requested".into(),
                source: "--journal-size".into(),
            });
        } else if self.w.metadata_heavy {
            let default_j = mkfs::default_journal_blocks(self.w.device_bytes / u64::from(bs))
                .unwrap_or(0)
                * u64::from(bs)
                / MIB;
            let four_pct = self.w.device_bytes / 25 / MIB;
            let mib = floor_pow2(four_pct).min(4096).max(default_j);
            if mib > default_j && mib > 0 {
                self.o.journal_size_mib = Some(mib);
            }
            self.why.push(Rationale {
                parameter: "-J size=".into(),
                value: format!("{mib} MiB"),
                mke2fs_default: format!("{default_j} MiB"),
                why: "metadata-heavy / many clients: a larger journal lets more metadata transactions batch before a checkpoint stalls writers; about 4% of the device, capped at 4 GiB (device stays ≥ 4x the journal)".into(),
                source: "Andreas Dilger (ext3-users, 2004); mkfs.lustre MDT journal sizing".into(),
            });
        } else if let Some(dl) = &self.default_layout {
            self.why.push(Rationale {
                parameter: "-J size=".into(),
                value: format!(
                    "default ({} MiB)",
                    dl.journal_blocks * u64::from(dl.block_size) / MIB
                ),
                mke2fs_default: format!(
                    "{} MiB",
                    dl.journal_blocks * u64::from(dl.block_size) / MIB
                ),
                why: "ext2fs_default_journal_size scales with the device; no metadata-heavy hint"
                    .into(),
                source: "e2fsprogs lib/ext2fs/mkjournal.c".into(),
            });
        }
        Ok(())
    }

    /// `-E stride,stripe_width` from the RAID geometry.
    fn raid(&mut self, bs: u32) -> Result<()> {
        if let Some(raid) = &self.w.raid {
            if raid.chunk_bytes < u64::from(bs) || raid.chunk_bytes % u64::from(bs) != 0 {
                return invalid(format!(
                    "RAID chunk {} is not a multiple of the block size {bs}",
                    human_bytes(raid.chunk_bytes)
                ));
            }
            if raid.data_disks == 0 {
                return invalid("RAID with no data disk".into());
            }
            let stride = raid.chunk_bytes / u64::from(bs);
            let sw = stride * u64::from(raid.data_disks);
            if stride > u64::from(u32::MAX) || sw > u64::from(u32::MAX) {
                return invalid("RAID stride or stripe width out of range".into());
            }
            self.o.stride = Some(stride as u32);
            self.o.stripe_width = Some(sw as u32);
            self.why.push(Rationale {
                parameter: "-E stride,stripe_width".into(),
                value: format!("{stride},{sw}"),
                mke2fs_default: "from device topology (none on a file)".into(),
                why: format!(
                    "{}: stride = chunk / block size, stripe width = stride x data disks, so the allocator fills whole stripes (no read-modify-write)",
                    raid.description
                ),
                source: "mke2fs(8) -E stride, stripe_width".into(),
            });
        }
        Ok(())
    }

    /// `-O` for project quota and large directories; flex_bg notes for rotational disks.
    fn workload_features(&mut self) -> Result<()> {
        if self.w.project_quota {
            if !self.kernel_ok("project") {
                return invalid("--project-quota needs kernel 4.5 or later".into());
            }
            self.features.push("quota".into());
            self.features.push("project".into());
            self.why.push(Rationale {
                parameter: "-O quota,project".into(),
                value: "on".into(),
                mke2fs_default: "off".into(),
                why:
                    "project quota: the project ID lives in i_extra_isize space, hence inodes ≥ 256"
                        .into(),
                source: "ext4 project quota (kernel 4.5); Lustre 2014 measurements".into(),
            });
        }
        if self.w.large_dirs {
            if self.kernel_ok("large_dir") {
                self.features.push("large_dir".into());
                self.why.push(Rationale {
                    parameter: "-O large_dir".into(),
                    value: "on".into(),
                    mke2fs_default: "off".into(),
                    why: "directories beyond ~10 million entries need a 3-level htree".into(),
                    source: "kernel 4.13 large_dir".into(),
                });
            } else {
                self.warnings.push(
                    "large_dir needs kernel 4.13; directories stay limited to a 2-level htree"
                        .into(),
                );
            }
        }
        if self.w.rotational {
            self.why.push(Rationale {
                parameter: "-G".into(),
                value: "default".into(),
                mke2fs_default: self.dflt(&|l| l.flex_bg_size.map(|g| g.to_string()).unwrap_or("-".into())),
                why: "rotational: flex_bg already packs bitmaps and inode tables of 16 groups together, so fsck and inode scans seek less".into(),
                source: "mke2fs.conf flex_bg_size".into(),
            });
        }
        self.o.features = std::mem::take(&mut self.features);
        Ok(())
    }

    /// `-m`: 1% on data volumes of a TiB or more.
    fn reserved_blocks(&mut self) {
        if self.w.device_bytes >= TIB {
            self.o.reserved_percent = Some(1.0);
            self.why.push(Rationale {
                parameter: "-m".into(),
                value: "1".into(),
                mke2fs_default: "5".into(),
                why: format!(
                    "a data volume of {}: 1% ({}) still keeps root's reserve and fragmentation headroom; 5% would lock away {}",
                    human_bytes(self.w.device_bytes),
                    human_bytes(self.w.device_bytes / 100),
                    human_bytes(self.w.device_bytes / 20)
                ),
                source: "mke2fs(8) -m".into(),
            });
        }
    }

    /// Check the options against the mke2fs predictor and assemble the advice.
    fn finish(
        mut self,
        conf: &MkfsConf,
        wanted_inodes: Option<u64>,
        fit_advice: Option<FitAdvice>,
    ) -> Result<Advice> {
        let workload = self.w;
        let layout = mkfs::predict(workload.device_bytes, &self.o, conf).map_err(|e| {
            Error::Invalid(format!(
                "mke2fs would refuse {}: {e}",
                self.o.to_args().join(" ")
            ))
        })?;
        let mut fit_advice = fit_advice;
        self.cost_alternatives(conf, &layout, fit_advice.as_mut());
        if let Some(want) = wanted_inodes {
            if layout.inodes_count < want {
                self.warnings.push(format!(
                    "only {} inodes fit (ext4 caps the count at 2^32-1 and per group); {want} were asked for",
                    layout.inodes_count
                ));
            }
        }
        if let Some(journal_mib) = self.o.journal_size_mib {
            if workload.device_bytes < 4 * journal_mib * MIB {
                self.warnings
                    .push("the device is less than 4x the journal".into());
            }
        }
        if workload.device_bytes < 64 * MIB && workload.metadata_heavy {
            self.warnings.push(
                "a metadata-heavy load on a device under 64 MiB: consider a bigger device".into(),
            );
        }
        let args = self.o.to_args();
        Ok(Advice {
            command: String::new(),
            args,
            options: self.o,
            layout,
            default_layout: self.default_layout,
            rationale: self.why,
            fit: fit_advice,
            warnings: self.warnings,
            mke2fs_conf: conf.origin.clone(),
            inode_table_bytes_returned: self.returned,
        })
    }
}

/// One line on the inodes left out of the inode, and the cheapest size covering all of them.
fn outlier_warning(fa: &FitAdvice, inode_size: u32) -> String {
    let share = 100.0 * fa.outlier_inodes as f64 / fa.inodes.max(1) as f64;
    let mut warning = format!(
        "{} of {} inodes with xattrs ({share:.1}%) keep some outside the inode at {inode_size} bytes (one extra block read per lookup)",
        fa.outlier_inodes, fa.inodes
    );
    if let Some(expected) = fa.outlier_inodes_expected {
        warning.push_str(&format!(", about {expected} at the expected file count"));
    }
    match fa
        .cover_costs
        .iter()
        .find(|cover| cover.outlier_inodes_covered == fa.outlier_inodes)
    {
        Some(cover) => match cover.extra_inode_table_bytes {
            Some(extra_bytes) => warning.push_str(&format!(
                "; covering them all needs -I {} (+{} of inode tables, {:.1}% of the device)",
                cover.inode_size,
                human_bytes(extra_bytes),
                cover.inode_table_percent.unwrap_or(0.0)
            )),
            None => warning.push_str(&format!(
                "; covering them all needs -I {}, which mke2fs would refuse here",
                cover.inode_size
            )),
        },
        None => warning.push_str("; no inode size up to the block size holds them all"),
    }
    warning
}

impl Advice {
    /// Fill in `command` for a device path (or the `DEVICE` placeholder).
    pub fn with_device(mut self, device: Option<&str>) -> Advice {
        let mut command = String::from("mkfs.ext4");
        for arg in &self.args {
            command.push(' ');
            command.push_str(&shell_quote(arg));
        }
        command.push(' ');
        command.push_str(&shell_quote(device.unwrap_or("DEVICE")));
        self.command = command;
        self
    }
}

/// Quote one word for a POSIX shell when it needs it.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=,./:^+@%".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Parse a size with an optional K/M/G/T/P suffix (powers of 1024; `B`, `iB` accepted), a plain
/// byte count (exact, hex with `0x`), or a decimal fraction with a suffix (`1.5T`).
pub fn parse_size(text: &str) -> Result<u64> {
    let trimmed = text.trim();
    if let Some(hex) = trimmed
        .strip_prefix("0x")
        .or_else(|| trimmed.strip_prefix("0X"))
    {
        return u64::from_str_radix(hex, 16)
            .map_err(|_| Error::Invalid(format!("'{text}' is not a hexadecimal number")));
    }
    let t2 = trimmed.trim_end_matches(['b', 'B']).trim_end_matches('i');
    let (num, mult) = match t2.chars().last() {
        Some(suffix) if suffix.is_ascii_alphabetic() => {
            let factor: u64 = match suffix.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => GIB,
                'T' => TIB,
                'P' => 1 << 50,
                _ => return Err(Error::Invalid(format!("bad size suffix in '{text}'"))),
            };
            (&t2[..t2.len() - 1], factor)
        }
        _ => (t2, 1),
    };
    let num = num.trim();
    if let Ok(exact) = num.parse::<u64>() {
        return exact
            .checked_mul(mult)
            .ok_or_else(|| Error::Invalid(format!("size '{text}' out of range")));
    }
    let fraction: f64 = num
        .parse()
        .map_err(|_| Error::Invalid(format!("'{text}' is not a size (e.g. 4T, 512M, 1048576)")))?;
    if fraction.is_nan() || fraction < 0.0 || fraction * mult as f64 > u64::MAX as f64 {
        return Err(Error::Invalid(format!("size '{text}' out of range")));
    }
    Ok((fraction * mult as f64).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf() -> MkfsConf {
        MkfsConf::builtin()
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("4T").unwrap(), 4 * TIB);
        assert_eq!(parse_size("512M").unwrap(), 512 * MIB);
        assert_eq!(parse_size("1.5G").unwrap(), 3 * GIB / 2);
        assert_eq!(parse_size("100").unwrap(), 100);
        assert_eq!(parse_size("64KiB").unwrap(), 65536);
        assert!(parse_size("4X").is_err());
        assert!(parse_size("-1G").is_err());
    }

    #[test]
    fn plain_size_gives_defaults_and_4k_blocks() {
        let advice = advise(&Workload::new(100 * GIB), &conf()).unwrap();
        assert!(advice.args.is_empty(), "{:?}", advice.args);
        let advice = advise(&Workload::new(256 * MIB), &conf()).unwrap();
        assert_eq!(advice.args, vec!["-b", "4096"]);
        assert_eq!(advice.layout.block_size, 4096);
    }

    #[test]
    fn xattrs_raise_inode_size_to_smallest_fit() {
        let mut workload = Workload::new(100 * GIB);
        // 31-byte SELinux label (56 bytes) + 60-byte value: 56 + 80 = 136 > 88 usable at 256.
        workload.xattrs = vec![
            Attr::new("security.selinux", 31),
            Attr::new("user.DOSATTRIB", 60),
        ];
        let advice = advise(&workload, &conf()).unwrap();
        assert_eq!(advice.layout.inode_size, 512);
        let fit_advice = advice.fit.unwrap();
        let r256 = fit_advice
            .sizes
            .iter()
            .find(|r| r.inode_size == 256)
            .unwrap();
        assert!(!r256.meets_share);
        assert!(
            fit_advice
                .sizes
                .iter()
                .find(|r| r.inode_size == 512)
                .unwrap()
                .meets_share
        );
    }

    #[test]
    fn raid6_stride() {
        let mut workload = Workload::new(10 * TIB);
        workload.raid = Some(Raid::from_level("6", 8, Some(256 * 1024)).unwrap());
        let advice = advise(&workload, &conf()).unwrap();
        assert_eq!(advice.layout.stride, Some(64));
        assert_eq!(advice.layout.stripe_width, Some(384));
        assert!(Raid::from_level("6", 3, None).is_err());
    }

    #[test]
    fn refusals() {
        let mut workload = Workload::new(GIB);
        workload.population.files = Some(5_000_000_000);
        assert!(advise(&workload, &conf()).is_err());
        let mut workload = Workload::new(GIB);
        workload.population.files = Some(10_000_000);
        assert!(advise(&workload, &conf()).is_err());
        assert!(advise(&Workload::new(MIB), &conf()).is_err());
        let mut workload = Workload::new(GIB);
        workload.block_size = Some(3000);
        assert!(advise(&workload, &conf()).is_err());
        let mut workload = Workload::new(GIB);
        workload.xattrs = vec![Attr::new("user.big", 8000)];
        assert!(advise(&workload, &conf()).is_err());
    }

    #[test]
    fn kernel_drops_unknown_features() {
        let mut workload = Workload::new(100 * GIB);
        workload.kernel = Some((3, 10));
        let advice = advise(&workload, &conf()).unwrap();
        assert!(
            advice.args.contains(&"^metadata_csum".to_string()),
            "{:?}",
            advice.args
        );
        assert!(!advice
            .layout
            .features
            .contains(&"metadata_csum".to_string()));
    }

    #[test]
    fn files_set_inode_ratio() {
        let mut workload = Workload::new(100 * GIB);
        workload.population.files = Some(50_000_000);
        let advice = advise(&workload, &conf()).unwrap();
        assert!(advice.layout.inodes_count >= 50_000_000);
        assert_eq!(advice.options.inode_ratio, Some(1024));
    }

    fn sample_with_one_big(count: usize) -> Vec<SampledSet> {
        let mut sets: Vec<SampledSet> = (0..count)
            .map(|index| {
                let set = XattrSet {
                    attrs: vec![Attr::new("user.a", 20)],
                    inline_data: None,
                };
                SampledSet::at_path(set, format!("/s/f{index}"))
            })
            .collect();
        let big = XattrSet {
            attrs: vec![Attr::new("user.big", 3500)],
            inline_data: None,
        };
        sets.push(SampledSet::at_path(big, "/s/big"));
        sets
    }

    #[test]
    fn one_outlier_does_not_decide_the_inode_size() {
        let mut workload = Workload::new(100 * GIB);
        workload.population.xattr_sets = sample_with_one_big(206);
        workload.population.sample_inodes = 207;
        workload.population.avg_file_size = Some(MIB);
        let advice = advise(&workload, &conf()).unwrap();
        assert_eq!(advice.layout.inode_size, 256);
        let fit_advice = advice.fit.unwrap();
        assert_eq!(fit_advice.outlier_inodes, 1);
        assert_eq!(fit_advice.outliers[0].path.as_deref(), Some("/s/big"));
        assert_eq!(fit_advice.outliers[0].inode_size_needed, Some(4096));
        let cost = fit_advice.outliers[0].extra_inode_table_bytes.unwrap();
        assert_eq!(
            cost,
            fit_advice.cover_costs[0].extra_inode_table_bytes.unwrap()
        );
        assert!(cost > 0);
        assert!(advice.warnings.iter().any(|m| m.contains("-I 4096")));
        // At 100% the outlier decides, as asked.
        workload.fit_share = 1.0;
        assert_eq!(advise(&workload, &conf()).unwrap().layout.inode_size, 4096);
    }

    #[test]
    fn few_files_lower_the_inode_count() {
        for (size, files) in [(100 * GIB, 10u64), (8 * TIB, 30_000_000)] {
            let mut workload = Workload::new(size);
            workload.population.files = Some(files);
            let advice = advise(&workload, &conf()).unwrap();
            let safe = files * INODE_SAFETY_FACTOR + INODE_SAFETY_HEADROOM;
            assert_eq!(advice.options.inodes, Some(safe));
            let default_layout = advice.default_layout.as_ref().unwrap();
            assert!(
                advice.layout.inodes_count >= safe
                    && advice.layout.inodes_count < default_layout.inodes_count
            );
            assert_eq!(
                advice.inode_table_bytes_returned,
                default_layout.inode_table_bytes - advice.layout.inode_table_bytes
            );
        }
        // Near the default, the default stays.
        let mut workload = Workload::new(100 * GIB);
        workload.population.files = Some(2_000_000);
        let advice = advise(&workload, &conf()).unwrap();
        assert_eq!(
            (advice.options.inodes, advice.options.inode_ratio),
            (None, None)
        );
    }

    #[test]
    fn sampler_groups_identical_sets_and_keeps_the_first_path() {
        let mut sm = SetSampler::default();
        let set = |value_size: u32| XattrSet {
            attrs: vec![Attr::new("user.a", value_size)],
            inline_data: None,
        };
        sm.add(set(10), 1, Some("/a".into()), None);
        sm.add(set(10), 3, Some("/b".into()), None);
        sm.add(set(20), 1, Some("/c".into()), None);
        sm.add(XattrSet::default(), 5, None, None);
        let sets = sm.finish();
        assert_eq!(sets.len(), 2);
        assert_eq!((sets[0].count, sets[0].path.as_deref()), (4, Some("/a")));
        assert_eq!(sets[1].count, 1);
    }
}
