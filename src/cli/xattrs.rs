//! `e4inspect xattrs IMAGE`: scan every in-use inode and summarise where extended attributes live.

use anyhow::Context;
use e4inspect::format::json::SchemaVersion;
use e4inspect::format::table;
use e4inspect::reader::fs::Filesystem;
use e4inspect::views::scan::{self, FOOTPRINT_BUCKETS};
use schemars::JsonSchema;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// Scan all in-use inodes and report xattr placement, sizes and names.
#[derive(clap::Args, Debug, Clone)]
pub struct XattrsArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Output format.
    #[command(flatten)]
    pub output: super::OutputArgs,
    /// How many of the most common names to list.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub top: usize,
    /// Where the filesystem lies inside the image.
    #[command(flatten)]
    pub source: super::SourceArgs,
    /// Never show a progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Name (by path) the N inodes with the largest xattr footprint among those that spill to
    /// an xattr block or use an EA inode (0: none).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub list: usize,
    /// Add the scan's wall-clock time (`seconds`) to the JSON (it differs from run to run).
    #[arg(long)]
    pub timings: bool,
}

/// The listed inodes with their paths (one bounded walk of the tree for just these inodes).
fn named_largest(fs: &Filesystem, st: &scan::XattrStats) -> Vec<LargestJson> {
    let wanted = st.largest.iter().map(|l| l.ino).collect();
    let paths = scan::inode_paths_seen(fs, &wanted, &st.seen);
    st.largest
        .iter()
        .map(|l| LargestJson {
            ino: l.ino,
            path: paths.get(&l.ino).cloned(),
            footprint: l.footprint,
            spills_to_block: l.block,
            uses_ea_inode: l.ea_inode,
        })
        .collect()
}

/// An inode among the largest xattr footprints that spill out of the inode.
#[derive(Serialize, JsonSchema)]
pub struct LargestJson {
    /// Inode number.
    pub ino: u32,
    /// A path to it (null when unnamed or not found within the walk's bounds).
    pub path: Option<String>,
    /// Bytes of xattrs (entries, names and values) wherever they are.
    pub footprint: u64,
    /// It uses the external block.
    pub spills_to_block: bool,
    /// It has a value in an EA inode.
    pub uses_ea_inode: bool,
}

/// One bucket of the footprint histogram.
#[derive(Serialize, JsonSchema)]
pub struct BucketJson {
    /// Footprint range in bytes.
    pub range: String,
    /// Upper bound of the range (null for the last, open, bucket).
    pub max_bytes: Option<u64>,
    /// Inodes in the range.
    pub inodes: u64,
}

/// A frequent xattr name.
#[derive(Serialize, JsonSchema)]
pub struct NameJson {
    /// Full name with its prefix.
    pub name: String,
    /// Attributes with this name.
    pub count: u64,
    /// Sum of their value sizes.
    pub bytes: u64,
    /// Instances in the inode body.
    pub in_inode: u64,
    /// Instances in an external xattr block.
    pub in_block: u64,
    /// Instances whose value lives in an EA inode.
    pub in_ea_inode: u64,
}

/// Files by DOS attribute (`user.DOSATTRIB` values).
#[derive(Serialize, JsonSchema)]
pub struct DosSummaryJson {
    /// Values decoded.
    pub files: u64,
    /// Values that do not decode.
    pub undecodable: u64,
    /// Per `FILE_ATTRIBUTE_*` name, the values with it set (only attributes met).
    pub by_attribute: Vec<CountJson>,
}

/// Lustre layouts by stripe count (`trusted.lov` values).
#[derive(Serialize, JsonSchema)]
pub struct StripeSummaryJson {
    /// Layouts decoded.
    pub files: u64,
    /// Values that do not decode.
    pub undecodable: u64,
    /// Layouts per stripe count (a composite layout counts its largest component's).
    pub by_stripe_count: Vec<StripeCountJson>,
}

/// A named count.
#[derive(Serialize, JsonSchema)]
pub struct CountJson {
    /// The attribute (`ARCHIVE`, `HIDDEN` ...; `other bits`).
    pub attribute: String,
    /// Values with it.
    pub files: u64,
}

/// Layouts with one stripe count.
#[derive(Serialize, JsonSchema)]
pub struct StripeCountJson {
    /// `lmm_stripe_count`.
    pub stripe_count: u16,
    /// Layouts with it.
    pub files: u64,
}

/// Summaries of decoded values.
#[derive(Serialize, JsonSchema)]
pub struct DecodersJson {
    /// Samba's DOS attributes.
    pub dos_attributes: DosSummaryJson,
    /// Lustre stripe counts.
    pub lustre_stripe_counts: StripeSummaryJson,
}

/// The `xattrs --json` document.
#[derive(Serialize, JsonSchema)]
pub struct XattrsDocument {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// The image as given.
    pub image: String,
    /// In-use inodes scanned: slots of the initialised part of the inode tables (INODE_UNINIT
    /// groups and the `bg_itable_unused` tail skipped) whose inode-bitmap bit is set, reserved
    /// inodes included. `fit --from-image` reports the same count.
    pub inodes_scanned: u64,
    /// Inodes with at least one xattr.
    pub inodes_with_xattrs: u64,
    /// ... whose xattrs all live in the inode body.
    pub all_in_inode: u64,
    /// ... that use the external block.
    pub spill_to_block: u64,
    /// ... with a value in an EA inode.
    pub use_ea_inode: u64,
    /// Xattr bytes in inode bodies.
    pub bytes_in_inode: u64,
    /// Xattr bytes in external blocks.
    pub bytes_in_blocks: u64,
    /// Value bytes in EA inodes.
    pub bytes_in_ea_inodes: u64,
    /// Attributes.
    pub xattr_count: u64,
    /// Sum of value sizes.
    pub value_bytes: u64,
    /// Free bytes left in the in-inode areas.
    pub inode_free_bytes: u64,
    /// EA inodes referenced.
    pub ea_value_inodes: u64,
    /// Inodes per footprint range.
    pub footprint_histogram: Vec<BucketJson>,
    /// The largest footprint.
    pub footprint_max: u64,
    /// The most frequent names.
    pub top_names: Vec<NameJson>,
    /// Distinct names seen.
    pub distinct_names: usize,
    /// Names not tracked once the name table was full.
    pub names_untracked: u64,
    /// Per-decoder summaries: files by DOS attribute, Lustre stripe counts.
    pub decoders: DecodersJson,
    /// Distinct external xattr blocks.
    pub xattr_blocks: usize,
    /// Blocks shared by several inodes.
    pub shared_blocks: Vec<scan::SharedBlock>,
    /// Blocks not tracked once the block table was full.
    pub blocks_untracked: u64,
    /// Inodes with damaged xattrs.
    pub inodes_with_problems: u64,
    /// The largest footprints among inodes that spill out of the inode.
    pub largest_spilling: Vec<LargestJson>,
    /// External xattr blocks decoded.
    pub xattr_blocks_decoded: u64,
    /// Groups in the filesystem.
    pub groups: u32,
    /// Groups skipped because their inode table is not initialised.
    pub groups_uninit: u32,
    /// Inode slots skipped as the unused tail of inode tables.
    pub inodes_unused_tail: u64,
    /// Inode-table bytes read.
    pub itable_bytes: u64,
    /// Problems met by the scan.
    pub problem_count: u64,
    /// The first problems (verbatim).
    pub problems: Vec<e4inspect::Problem>,
    /// Wall-clock seconds of the scan (only with `--timings`: not deterministic).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

fn bucket_label(bucket: usize) -> String {
    match (
        bucket.checked_sub(1).and_then(|j| FOOTPRINT_BUCKETS.get(j)),
        FOOTPRINT_BUCKETS.get(bucket),
    ) {
        (None, Some(hi)) => format!("1-{hi}"),
        (Some(lo), Some(hi)) => format!("{}-{hi}", lo + 1),
        (Some(lo), None) => format!("> {lo}"),
        (None, None) => String::new(),
    }
}

macro_rules! out {
    ($o:expr, $($t:tt)*) => {{
        let _ = writeln!($o, $($t)*);
    }};
}

/// What one scan found, gathered for both renderings.
struct Report {
    st: scan::XattrStats,
    counts: scan::ScanCounts,
    top: Vec<(String, scan::NameStat)>,
    shared: Vec<scan::SharedBlock>,
    largest: Vec<LargestJson>,
    secs: f64,
}

/// Run the subcommand: 0 fine, 4 when damaged xattrs or scan problems were met, 8 (one line, no
/// report) when a metadata-only image lacks an xattr block.
pub fn run(args: XattrsArgs) -> anyhow::Result<i32> {
    let opts = args.source.open_options();
    let fs = Filesystem::open(&args.image, &opts)
        .with_context(|| format!("{}", args.image.display()))?;
    super::watch_reads(&fs);
    args.source.note_recovery(&fs);
    let report = scan_image(&fs, &args);
    // Blocks a metadata-only image (e2image) does not hold leave the report incomplete: 8.
    // Its figures would count the absent blocks as holding nothing: one line instead.
    if let Some(problem) = report
        .counts
        .problems
        .iter()
        .find(|problem| problem.message.contains(e4inspect::error::ABSENT))
    {
        anyhow::bail!("{}: {}", args.image.display(), problem.message);
    }
    let status = if report.counts.problem_count > 0 {
        4
    } else {
        0
    };
    if args.output.json() {
        let doc = json_document(&args, report);
        super::emit(&(serde_json::to_string_pretty(&doc)? + "\n"))?;
    } else {
        super::emit(&text_report(&args, &report))?;
    }
    Ok(status)
}

/// Scan every in-use inode (with a progress bar when wanted) and name the largest spillers.
fn scan_image(fs: &Filesystem, args: &XattrsArgs) -> Report {
    let total = u64::from(fs.group_count()) * u64::from(fs.geo.inodes_per_group);
    let show = super::progress::enabled(args.no_progress);
    let bar = super::progress::bar(show, "scanning", super::progress::Unit::Inodes, Some(total));
    let start = Instant::now();
    let progress = |n: u64| bar.inc(n);
    let (st, counts) = scan::xattr_stats_listing(fs, args.list, &progress);
    bar.finish_and_clear();
    let largest = named_largest(fs, &st);
    let secs = start.elapsed().as_secs_f64();
    let top = st.top_names(args.top);
    let shared = st.shared_blocks();
    Report {
        st,
        counts,
        top,
        shared,
        largest,
        secs,
    }
}

/// The footprint histogram as JSON buckets.
fn histogram_json(st: &scan::XattrStats) -> Vec<BucketJson> {
    st.footprint_hist
        .iter()
        .enumerate()
        .map(|(i, &n)| BucketJson {
            range: bucket_label(i),
            max_bytes: FOOTPRINT_BUCKETS.get(i).copied(),
            inodes: n,
        })
        .collect()
}

/// The per-decoder summaries as JSON.
fn decoders_json(decoders: &scan::DecoderSummary) -> DecodersJson {
    DecodersJson {
        dos_attributes: DosSummaryJson {
            files: decoders.dos_files,
            undecodable: decoders.dos_undecodable,
            by_attribute: decoders
                .dos_attributes()
                .into_iter()
                .map(|(attribute, files)| CountJson { attribute, files })
                .collect(),
        },
        lustre_stripe_counts: StripeSummaryJson {
            files: decoders.lov_files,
            undecodable: decoders.lov_undecodable,
            by_stripe_count: decoders
                .stripe_counts()
                .into_iter()
                .map(|(stripe_count, files)| StripeCountJson {
                    stripe_count,
                    files,
                })
                .collect(),
        },
    }
}

/// The `--json` document of one scan.
fn json_document(args: &XattrsArgs, report: Report) -> XattrsDocument {
    let Report {
        st,
        counts,
        top,
        shared,
        largest,
        secs,
    } = report;
    XattrsDocument {
        schema_version: SchemaVersion,
        image: args.image.display().to_string(),
        inodes_scanned: counts.inodes_in_use,
        inodes_with_xattrs: st.inodes_with_xattrs,
        all_in_inode: st.all_in_inode,
        spill_to_block: st.spill_to_block,
        use_ea_inode: st.use_ea_inode,
        bytes_in_inode: st.bytes_in_inode,
        bytes_in_blocks: st.bytes_in_blocks,
        bytes_in_ea_inodes: st.bytes_in_ea_inodes,
        xattr_count: st.xattr_count,
        value_bytes: st.value_bytes,
        inode_free_bytes: st.inode_bytes_free,
        ea_value_inodes: st.ea_value_inodes,
        footprint_histogram: histogram_json(&st),
        footprint_max: st.footprint_max,
        top_names: top
            .iter()
            .map(|(name, stat)| NameJson {
                name: name.clone(),
                count: stat.count,
                bytes: stat.bytes,
                in_inode: stat.in_inode,
                in_block: stat.in_block,
                in_ea_inode: stat.in_ea_inode,
            })
            .collect(),
        distinct_names: st.distinct_names(),
        names_untracked: st.names_untracked,
        decoders: decoders_json(&st.decoders),
        xattr_blocks: st.distinct_blocks(),
        shared_blocks: shared,
        blocks_untracked: st.blocks_untracked,
        inodes_with_problems: st.inodes_with_problems,
        largest_spilling: largest,
        xattr_blocks_decoded: st.blocks_decoded,
        groups: counts.groups,
        groups_uninit: counts.groups_uninit,
        inodes_unused_tail: counts.inodes_unused_tail,
        itable_bytes: counts.itable_bytes,
        problem_count: counts.problem_count,
        problems: counts.problems,
        seconds: args.timings.then_some(secs),
    }
}

/// The whole text report.
fn text_report(args: &XattrsArgs, report: &Report) -> String {
    let mut text = String::new();
    text_summary(&mut text, args, report);
    text_histogram(&mut text, &report.st);
    text_top_names(&mut text, report);
    text_decoders(&mut text, report);
    text_shared_blocks(&mut text, report);
    text_largest(&mut text, args, &report.largest);
    text_problems(&mut text, &report.counts);
    text
}

/// Share of the inodes with xattrs, in percent.
fn percent_of_xattr_inodes(st: &scan::XattrStats, count: u64) -> f64 {
    if st.inodes_with_xattrs == 0 {
        0.0
    } else {
        100.0 * count as f64 / st.inodes_with_xattrs as f64
    }
}

/// The counts: inodes scanned, where their xattrs live, bytes used.
fn text_summary(text: &mut String, args: &XattrsArgs, report: &Report) {
    let (st, counts) = (&report.st, &report.counts);
    let pct = |n: u64| percent_of_xattr_inodes(st, n);
    out!(text, "Image: {}", args.image.display());
    out!(
        text,
        "Inodes scanned: {} ({} groups, {} uninitialised, {} unused inode slots skipped)",
        counts.inodes_in_use,
        counts.groups,
        counts.groups_uninit,
        counts.inodes_unused_tail
    );
    out!(
        text,
        "Inodes with xattrs: {} ({} xattrs, {} value bytes)",
        st.inodes_with_xattrs,
        st.xattr_count,
        st.value_bytes
    );
    out!(
        text,
        "  all in inode:    {:>10} ({:.1}%)",
        st.all_in_inode,
        pct(st.all_in_inode)
    );
    out!(
        text,
        "  spill to block:  {:>10} ({:.1}%)",
        st.spill_to_block,
        pct(st.spill_to_block)
    );
    out!(
        text,
        "  use EA inodes:   {:>10} ({:.1}%)",
        st.use_ea_inode,
        pct(st.use_ea_inode)
    );
    out!(text,
        "Bytes used: {} in inodes, {} in xattr blocks (per referencing inode), {} in EA inodes; {} in-inode bytes still free",
        st.bytes_in_inode, st.bytes_in_blocks, st.bytes_in_ea_inodes, st.inode_bytes_free
    );
    if st.ea_value_inodes > 0 {
        out!(text, "EA value inodes: {}", st.ea_value_inodes);
    }
}

/// The footprint histogram table (non-empty buckets).
fn text_histogram(text: &mut String, st: &scan::XattrStats) {
    let mut histogram = table::styled();
    histogram.set_header(vec!["xattr footprint (bytes)", "inodes"]);
    for (bucket, &inodes) in st.footprint_hist.iter().enumerate() {
        if inodes > 0 {
            histogram.add_row(vec![bucket_label(bucket), inodes.to_string()]);
        }
    }
    if st.inodes_with_xattrs > 0 {
        out!(
            text,
            "Per-inode footprint (entries + values, all locations), max {}:",
            st.footprint_max
        );
        out!(text, "{histogram}");
    }
}

/// The most common names table.
fn text_top_names(text: &mut String, report: &Report) {
    if report.top.is_empty() {
        return;
    }
    let st = &report.st;
    let mut names_table = table::styled();
    names_table.set_header(vec![
        "name",
        "count",
        "value bytes",
        "avg",
        "in inode",
        "in block",
        "in EA inode",
    ]);
    for (name, stat) in &report.top {
        names_table.add_row(vec![
            // Names come from disk: escaped as debugfs escapes them, never raw.
            e4inspect::format::escape::c_string(name.as_bytes()),
            stat.count.to_string(),
            stat.bytes.to_string(),
            format!("{:.1}", stat.bytes as f64 / stat.count.max(1) as f64),
            stat.in_inode.to_string(),
            stat.in_block.to_string(),
            stat.in_ea_inode.to_string(),
        ]);
    }
    out!(
        text,
        "Most common names ({} distinct{}):",
        st.distinct_names(),
        if st.names_untracked > 0 {
            format!(", {} xattrs with untracked names", st.names_untracked)
        } else {
            String::new()
        }
    );
    out!(text, "{names_table}");
}

/// Files by DOS attribute and Lustre layouts by stripe count, when the image has such values.
fn text_decoders(text: &mut String, report: &Report) {
    let decoders = &report.st.decoders;
    if decoders.dos_files + decoders.dos_undecodable > 0 {
        let attrs: Vec<String> = decoders
            .dos_attributes()
            .iter()
            .map(|(a, n)| format!("{a} {n}"))
            .collect();
        out!(
            text,
            "Samba DOS attributes (user.DOSATTRIB): {} files{}: {}",
            decoders.dos_files,
            if decoders.dos_undecodable > 0 {
                format!(", {} undecodable", decoders.dos_undecodable)
            } else {
                String::new()
            },
            if attrs.is_empty() {
                "none set".to_string()
            } else {
                attrs.join(", ")
            }
        );
    }
    if decoders.lov_files + decoders.lov_undecodable > 0 {
        let counts: Vec<String> = decoders
            .stripe_counts()
            .iter()
            .map(|(c, n)| format!("{c}: {n}"))
            .collect();
        out!(
            text,
            "Lustre layouts (trusted.lov) by stripe count: {}{}",
            counts.join(", "),
            if decoders.lov_undecodable > 0 {
                format!(" ({} undecodable)", decoders.lov_undecodable)
            } else {
                String::new()
            }
        );
    }
}

/// External xattr blocks and the first shared ones.
fn text_shared_blocks(text: &mut String, report: &Report) {
    let (st, shared) = (&report.st, &report.shared);
    out!(
        text,
        "External xattr blocks: {} distinct, {} shared by several inodes{}",
        st.distinct_blocks(),
        shared
            .iter()
            .filter(|shared_block| shared_block.inodes > 1)
            .count(),
        if st.blocks_untracked > 0 {
            format!(" ({} references untracked)", st.blocks_untracked)
        } else {
            String::new()
        }
    );
    for shared_block in shared.iter().take(10) {
        out!(
            text,
            "  block {}: {} inodes, refcount {}",
            shared_block.block,
            shared_block.inodes,
            shared_block.refcount
        );
    }
}

/// The inodes with the largest footprints among those spilling out of the inode.
fn text_largest(text: &mut String, args: &XattrsArgs, largest: &[LargestJson]) {
    if largest.is_empty() {
        return;
    }
    out!(
        text,
        "Largest xattr footprints among inodes spilling to a block or an EA inode (--list {}):",
        args.list
    );
    for entry in largest {
        out!(
            text,
            "  {:>8} bytes  inode {}  {}{}",
            entry.footprint,
            entry.ino,
            entry.path.as_deref().map_or_else(
                || "(no path found)".to_string(),
                |p| p.escape_debug().to_string()
            ),
            match (entry.spills_to_block, entry.uses_ea_inode) {
                (true, true) => "  [block, EA inode]",
                (true, _) => "  [block]",
                _ => "  [EA inode]",
            }
        );
    }
}

/// The problems the scan met, escaped.
fn text_problems(text: &mut String, counts: &scan::ScanCounts) {
    if counts.problem_count == 0 {
        return;
    }
    out!(text, "Problems: {}", counts.problem_count);
    for problem in &counts.problems {
        out!(
            text,
            "  {}",
            e4inspect::format::escape::c_string(problem.message.as_bytes())
        );
    }
}
