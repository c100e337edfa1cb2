//! `e4inspect check`: fsck-grade validation of the superblock, group descriptors, bitmaps, counts
//! and the journal superblock, reported as findings against a catalogue of stable rule IDs
//! ([`rules::RULES`]).
//!
//! The checker never refuses an image that libext2fs refuses: it decodes the primary superblock
//! directly, judges every field, and only then opens the filesystem (from a valid backup when the
//! primary is unusable) to walk the descriptors, one group at a time and in parallel. Every loop is
//! bounded by the group count, which the image size bounds in turn.

// Buffers read from the filesystem are borrowed as `&buf`, so the code stays right when
// `Filesystem::block` / `inode_raw` return owned buffers.
#![allow(clippy::needless_borrow)]

mod context;
mod groups;
mod journal;
mod mmp;
pub mod ownership;
mod pass1;
mod pass2;
mod pass3;
mod pass4;
mod pass5;
mod paths;
pub mod problems;
pub mod progress;
mod quota;
mod replayed;
pub mod rules;
pub mod state;
mod superblock;
pub mod walk;

use crate::error::{Error, Result};
use crate::reader::fs::{find_backup_superblocks, select_window, Filesystem, OpenOptions};
use crate::reader::source::Source;
use crate::reader::superblock::{Superblock, SUPERBLOCK_OFFSET, SUPERBLOCK_SIZE};
use context::CheckState;
pub use progress::{Phase, Progress, ProgressHook};
pub use rules::{Enforcer, Rule, RuleId, Severity, RULES};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// At most this many findings of one rule are kept per image (the rest are only counted), so a
/// hostile descriptor table cannot make the report grow without bound.
pub const MAX_FINDINGS_PER_RULE: u64 = 1000;

/// One problem found.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// Rule ID from the catalogue.
    pub rule: RuleId,
    /// Error or warning (from the catalogue).
    pub severity: Severity,
    /// Block group, when the finding concerns one.
    pub group: Option<u32>,
    /// Inode number, when the finding concerns one inode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inode: Option<u32>,
    /// Paths that reach the inode (hard links: several; none when unconnected or unnamed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// One-line explanation with stored and expected values.
    pub message: String,
    /// The values behind the message (`stored`, `expected`, `block`, ...).
    #[serde(flatten)]
    pub values: FindingValues,
}

/// The named values of a finding, sorted by name (a finding has a handful: a short list costs
/// a fraction of a map's node, and a hostile image can make thousands of findings alive at once).
/// Serialized as the JSON object a map of them makes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FindingValues(Vec<(&'static str, Value)>);

impl FindingValues {
    /// Set `key` to `value` (replacing a value already set, as a map would).
    pub fn insert(&mut self, key: &'static str, value: Value) {
        match self.0.binary_search_by(|(name, _)| name.cmp(&key)) {
            Ok(at) => self.0[at].1 = value,
            Err(at) => self.0.insert(at, (key, value)),
        }
    }
    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0
            .binary_search_by(|(name, _)| (*name).cmp(key))
            .ok()
            .map(|at| &self.0[at].1)
    }
    /// The (name, value) pairs, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        self.0.iter().map(|(name, value)| (*name, value))
    }
}

impl Serialize for FindingValues {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, value)| (*name, value)))
    }
}

impl schemars::JsonSchema for FindingValues {
    fn inline_schema() -> bool {
        <Map<String, Value> as schemars::JsonSchema>::inline_schema()
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        <Map<String, Value> as schemars::JsonSchema>::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Map<String, Value> as schemars::JsonSchema>::json_schema(generator)
    }
}

impl Finding {
    /// A finding of rule `rule` (its severity from the catalogue).
    pub fn new(rule: RuleId, group: Option<u32>, message: impl Into<String>) -> Finding {
        Finding {
            rule,
            severity: rule.severity(),
            group,
            inode: None,
            paths: Vec::new(),
            message: message.into(),
            values: FindingValues::default(),
        }
    }
    /// A finding about inode `ino` (in group `group`).
    pub fn inode(rule: RuleId, group: u32, ino: u32, message: impl Into<String>) -> Finding {
        let mut f = Finding::new(rule, Some(group), message);
        f.inode = Some(ino);
        f
    }
    /// Attach a value (shown in JSON).
    pub fn with(mut self, key: &'static str, v: impl Into<Value>) -> Finding {
        self.values.insert(key, v.into());
        self
    }
    /// Attach a time (seconds since the epoch) as the JSON contract writes times:
    /// `{"raw": secs, "utc": "2023-11-14T22:13:20Z"}`.
    pub fn with_time(self, key: &'static str, secs: i64) -> Finding {
        let t = crate::reader::values::Time::secs(secs);
        self.with(key, serde_json::json!({"raw": t.raw, "utc": t.utc}))
    }
}

/// Findings of one image, with per-rule counts (also of findings not kept).
///
/// The per-rule cap applies while collecting: a parallel walk gives every worker its own
/// `Findings` (rayon `fold`) and combines them in order with [`Findings::merge`] (`reduce`), so
/// memory is bounded by workers x rules x [`MAX_FINDINGS_PER_RULE`] whatever the group count,
/// and the kept findings are the first ones in walk order.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    list: Vec<Finding>,
    counts: BTreeMap<RuleId, u64>,
}

impl Findings {
    /// Record a finding (only counted once its rule has [`MAX_FINDINGS_PER_RULE`] kept).
    pub fn push(&mut self, f: Finding) {
        let n = self.counts.entry(f.rule).or_insert(0);
        *n += 1;
        if *n <= MAX_FINDINGS_PER_RULE {
            self.list.push(f);
        }
    }
    /// Count a finding without building it, when `want` says the rule is already full.
    /// `make` runs only when the finding will be kept.
    pub fn push_with(&mut self, rule: RuleId, make: impl FnOnce() -> Finding) {
        if self.kept_full(rule) {
            *self.counts.entry(rule).or_insert(0) += 1;
        } else {
            self.push(make());
        }
    }
    /// True when `rule` already has its quota of kept findings.
    pub fn kept_full(&self, rule: RuleId) -> bool {
        self.counts
            .get(&rule)
            .is_some_and(|&n| n >= MAX_FINDINGS_PER_RULE)
    }
    /// Record many.
    pub fn extend(&mut self, it: impl IntoIterator<Item = Finding>) {
        for f in it {
            self.push(f);
        }
    }
    /// Append `later` (findings that come after these in walk order), keeping the cap.
    pub fn merge(mut self, later: Findings) -> Findings {
        let mut kept: BTreeMap<RuleId, u64> = BTreeMap::new();
        for f in later.list {
            let base = self.counts.get(&f.rule).copied().unwrap_or(0);
            let k = kept.entry(f.rule).or_insert(0);
            *k += 1;
            if base + *k <= MAX_FINDINGS_PER_RULE {
                self.list.push(f);
            }
        }
        for (rule, n) in later.counts {
            *self.counts.entry(rule).or_insert(0) += n;
        }
        self
    }
    /// True when a finding of `rule` was recorded.
    pub fn has(&self, rule: RuleId) -> bool {
        self.counts.contains_key(&rule)
    }
    /// Number of findings of `rule` (kept or not).
    pub fn count(&self, rule: RuleId) -> u64 {
        self.counts.get(&rule).copied().unwrap_or(0)
    }
    /// Number of error-level findings of the `sb` family so far.
    fn sb_errors(&self) -> u64 {
        self.counts
            .iter()
            .filter(|(id, _)| id.family() == "sb" && id.severity() == Severity::Error)
            .map(|(_, n)| n)
            .sum()
    }
}

/// What to check and how to find it.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// Byte offset of the filesystem in the source.
    pub offset: Option<u64>,
    /// Partition number of a partitioned image.
    pub partition: Option<u32>,
    /// "Now" for the time-in-the-future rule (seconds since the epoch); None = the system clock.
    pub now: Option<u64>,
    /// Only the constant-work-per-group checks (superblock, descriptors, bitmaps, counts,
    /// journal superblock); no inode walk.
    pub quick: bool,
    /// Where to report progress (nothing by default).
    pub progress: ProgressHook,
    /// Check the bytes as they are even when the image needs recovery (by default the journal
    /// is replayed in memory first, as e2fsck recovers before checking).
    pub no_replay: bool,
    /// The external journal to replay (`--journal PATH`).
    pub journal: Option<std::path::PathBuf>,
}

/// The result for one image.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Report {
    /// The image, as named on the command line.
    pub image: String,
    /// What was found, at most [`MAX_FINDINGS_PER_RULE`] per rule.
    pub findings: Vec<Finding>,
    /// Error-level findings (all, including those not kept).
    pub errors: u64,
    /// Warning-level findings.
    pub warnings: u64,
    /// Findings per rule ID (all, including those not kept).
    pub counts: BTreeMap<RuleId, u64>,
    /// Superblock the group checks used (0 = primary).
    pub superblock_used: u64,
    /// The quota usage per ID pass 1 computed (`None` when pass 1 did not run); for
    /// `e4inspect quota --computed`, not part of the check's JSON.
    #[serde(skip)]
    pub quota_usage: Option<Box<crate::models::quota::QuotaUsage>>,
    /// The first read of the input that failed (an I/O error, the input shrank while being
    /// read): the report is incomplete, whatever findings that failure became, and the command
    /// fails with this message (exit 8). Not part of the JSON report.
    #[serde(skip)]
    pub read_failure: Option<String>,
}

impl Report {
    fn new(image: String, f: Findings, superblock_used: u64) -> Report {
        let mut errors = 0;
        let mut warnings = 0;
        for (id, n) in &f.counts {
            match id.severity() {
                Severity::Error => errors += n,
                Severity::Warning => warnings += n,
            }
        }
        Report {
            image,
            findings: f.list,
            errors,
            warnings,
            counts: f.counts,
            superblock_used,
            quota_usage: None,
            read_failure: None,
        }
    }
}

/// Check the filesystem image or device at `path`. An `Err` means it cannot be read at all.
pub fn check_path(path: &Path, opts: &CheckOptions) -> Result<Report> {
    let src = Source::open(path)?;
    check_source(src, opts)
}

/// Check an opened source. A read of it that failed on the way (an I/O error, the input shrank)
/// is in [`Report::read_failure`], whatever the passes made of it.
pub fn check_source(src: Source, opts: &CheckOptions) -> Result<Report> {
    // Windows, clones and the replay overlay of `src` share its record of read failures.
    let input = src.clone();
    let mut report = check_opened(src, opts)?;
    report.read_failure = input.read_failure().map(str::to_string);
    Ok(report)
}

/// [`check_source`] without the read-failure verdict.
fn check_opened(src: Source, opts: &CheckOptions) -> Result<Report> {
    let image = src.path().display().to_string();
    let mut findings = Findings::default();
    let src = check_window(src, opts, &mut findings)?;
    let Some((sb_block, blocksize)) = choose_superblock(&src, &image, opts, &mut findings)? else {
        return Ok(Report::new(image, findings, 0));
    };
    let Some(fs) = open_for_check(src, sb_block, blocksize, &mut findings)? else {
        return Ok(Report::new(image, findings, sb_block));
    };
    // Every pass below looks at each descriptor: decode the table once (bounded; falls back to
    // reading descriptors one by one when too large or unreadable).
    fs.load_descriptors();
    if !check_backups_or_container(&fs, sb_block, &mut findings) {
        return Ok(Report::new(image, findings, sb_block));
    }
    let mut state = CheckState::new(&fs, findings, &opts.progress, opts.quick);
    for pass in PASSES {
        if pass.runs(&state) {
            (pass.run)(&mut state);
        }
    }
    let quota = (!opts.quick).then(|| Box::new(std::mem::take(&mut state.pass1.quota)));
    let mut report = Report::new(image, state.findings, sb_block);
    report.quota_usage = quota;
    Ok(report)
}

/// The part of the input to check (`--offset`, `--partition`), seen through the in-memory
/// journal replay unless `--no-replay` (e2fsck replays before its passes).
fn check_window(src: Source, opts: &CheckOptions, findings: &mut Findings) -> Result<Source> {
    let open = OpenOptions {
        offset: opts.offset,
        partition: opts.partition,
        ..OpenOptions::default()
    };
    let (src, _) = select_window(src, &open)?;
    Ok(if opts.no_replay {
        src
    } else {
        replayed::apply(src, opts.journal.as_deref(), findings)
    })
}

/// The superblock rules on the primary superblock, then the superblock the group walk uses:
/// `(0, None)`, the primary, when its geometry is sound, else the first valid backup's block and
/// block size; `None` when there is no usable one. An input with neither the ext2 magic nor a
/// backup is an error (naming the container when it is one).
fn choose_superblock(
    src: &Source,
    image: &str,
    opts: &CheckOptions,
    findings: &mut Findings,
) -> Result<Option<(u64, Option<u64>)>> {
    let raw = src.read(
        SUPERBLOCK_OFFSET,
        SUPERBLOCK_SIZE as u64,
        "primary superblock",
    )?;
    let sb = Superblock::parse(&raw)?;
    let now = opts.now.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs())
    });
    opts.progress.phase(Phase::Metadata, None);
    if !opts.quick {
        state::check_mounted(src.path(), src.is_device(), findings);
        state::check_superblock(&sb, findings);
    }
    let primary_geometry = superblock::check(&sb, src.len(), now, findings);
    let primary_bad = findings.sb_errors() > 0;
    // A container is named before looking for backups: the payload of a VHDX or VMDK can hold a
    // backup superblock at a raw offset, which would make its own bytes look damaged.
    if sb.magic != crate::reader::superblock::EXT2_MAGIC {
        if let Some(container) = crate::reader::container::identify_source(src) {
            return Err(Error::NotExt(format!("{image}: {container}")));
        }
    }
    let backups = if primary_bad {
        find_backup_superblocks(src)
    } else {
        Vec::new()
    };
    if sb.magic != crate::reader::superblock::EXT2_MAGIC && backups.is_empty() {
        if let Some(container) = crate::reader::container::identify_source(src) {
            return Err(Error::NotExt(format!("{image}: {container}")));
        }
        return Err(Error::NotExt(format!(
            "{image}: no ext2/3/4 superblock (magic 0x{:04x} at byte 1024) and no valid backup superblock",
            sb.magic
        )));
    }
    if primary_bad {
        findings.push(superblock::use_backup_finding(&backups));
    }
    // Walk the groups with the primary superblock when its geometry is sound, else a backup.
    Ok(if primary_geometry {
        Some((0, None))
    } else {
        backups
            .first()
            .map(|&(block, block_size)| (block, Some(block_size)))
    })
}

/// Open the filesystem on the chosen superblock. A descriptor table that cannot be read is a
/// finding (the report stops there), not an error: `Ok(None)`.
fn open_for_check(
    src: Source,
    sb_block: u64,
    blocksize: Option<u64>,
    findings: &mut Findings,
) -> Result<Option<Filesystem>> {
    let open = OpenOptions {
        offset: Some(0),
        superblock: (sb_block != 0).then_some(sb_block),
        blocksize,
        force: true,
        ..OpenOptions::default()
    };
    match Filesystem::from_source(src, &open) {
        Ok(fs) => Ok(Some(fs)),
        Err(Error::Open { failure, .. }) => {
            findings.push(
                Finding::new(
                    RuleId::GdTableUnreadable,
                    None,
                    format!("the descriptor table cannot be read: {}", failure.message()),
                )
                .with("superblock", sb_block),
            );
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Compare the backup superblocks and descriptors with the primary ones, unless the input is
/// an e2image file, which lacks what the passes read. Returns whether the passes run.
fn check_backups_or_container(fs: &Filesystem, sb_block: u64, findings: &mut Findings) -> bool {
    // A normal e2image file holds the superblock, descriptors, bitmaps and inode tables only:
    // the passes that read other blocks are not run, and the report says so.
    if fs.source.container() == Some(crate::reader::container::ContainerKind::E2image) {
        groups::check(fs, findings);
        findings.push(Finding::new(
            RuleId::StatePassesSkipped,
            None,
            "not run on a normal e2image file, which holds only the superblock, descriptors, \
             bitmaps and inode tables: backup superblocks, journal, inodes (pass 1), \
             directories (passes 2-4), block and inode counts (pass 5)"
                .to_string(),
        ));
        return false;
    }
    if fs.source.container() == Some(crate::reader::container::ContainerKind::E2imageQcow2) {
        // e2image -Q copies the primary superblock and descriptors only: backups read as zeros.
        findings.push(Finding::new(
            RuleId::StatePassesSkipped,
            None,
            "backup superblocks and descriptors not compared: an e2image qcow2 file holds only \
             the primary ones"
                .to_string(),
        ));
    } else if sb_block == 0 {
        superblock::check_backups(fs, findings);
    }
    true
}

/// One pass of the check, as e2fsck.c's `pass_t`: it reads and extends the [`CheckState`].
struct Pass {
    /// What it checks.
    #[allow(dead_code)]
    name: &'static str,
    /// Runs with `--quick` too (constant work per group: no inode walk).
    quick: bool,
    run: fn(&mut CheckState<'_>),
}

impl Pass {
    /// True when the pass runs: every pass on a full check, the quick ones on `--quick`; the
    /// passes that walk the inodes not when the descriptor table cannot be read.
    fn runs(&self, state: &CheckState<'_>) -> bool {
        self.quick || !state.quick && !state.findings.has(RuleId::GdTableUnreadable)
    }
}

/// The passes, in order, once the filesystem is open (e2fsck.c's `e2fsck_passes`). Pass 5 runs
/// before the directory passes: it needs only pass 1's claims, and its findings come first in
/// the report. Each pass depends on [`context`] alone; what it leaves for the later ones goes
/// into the [`CheckState`].
const PASSES: &[Pass] = &[
    Pass {
        name: "descriptors, bitmaps and free counts",
        quick: true,
        run: |st| st.marks = groups::check(st.fs, &mut st.findings),
    },
    Pass {
        name: "journal superblock",
        quick: true,
        run: |st| journal::check(st.fs, &mut st.findings),
    },
    Pass {
        name: "MMP block",
        quick: true,
        run: |st| mmp::check(st.fs, &mut st.findings),
    },
    Pass {
        name: "orphan list and orphan file",
        quick: false,
        run: |st| st.orphans = state::check_orphans(st.fs, &mut st.findings),
    },
    Pass {
        name: "pass 1: inodes, one walk of the inode tables; pass 1B: multiply-claimed blocks",
        quick: false,
        run: run_pass1,
    },
    Pass {
        name: "pass 5: block and inode bitmaps, group counts",
        quick: false,
        run: |st| {
            st.progress.phase(Phase::Usage, None);
            pass5::check(st.fs, &st.pass1, st.marks.as_ref(), &mut st.findings);
        },
    },
    Pass {
        name: "quota files against the usage pass 1 charged (e2fsck's quota_compare_and_update)",
        quick: false,
        run: |st| quota::check(st.fs, &st.pass1.quota, &mut st.findings),
    },
    Pass {
        name: "pass 2: directory blocks and entries",
        quick: false,
        run: |st| {
            st.progress.phase(Phase::Directories, None);
            let p1 = &st.pass1;
            st.pass2 = pass2::run(st.fs, &p1.index, &p1.extras, &mut st.findings);
        },
    },
    Pass {
        name: "pass 3: directory connectivity",
        quick: false,
        run: |st| {
            let ipg = st.fs.geo.inodes_per_group;
            pass3::run(&st.pass1.index, &st.pass2, ipg, &mut st.findings);
        },
    },
    Pass {
        name: "pass 4: reference counts",
        quick: false,
        run: |st| {
            let p1 = &st.pass1;
            pass4::run(st.fs, &p1.index, &p1.orphans, &p1.extras, &mut st.findings);
        },
    },
    Pass {
        name: "paths of the inodes named in findings",
        quick: false,
        run: |st| paths::annotate_paths(st.fs, &st.pass1.index, &mut st.findings),
    },
];

fn run_pass1(st: &mut CheckState<'_>) {
    let fs = st.fs;
    let inodes = u64::from(fs.geo.group_count) * u64::from(fs.geo.inodes_per_group);
    st.progress.phase(Phase::Inodes, Some(inodes));
    let orphans = std::mem::take(&mut st.orphans);
    st.pass1 = pass1::run(fs, orphans, &mut st.findings, st.progress);
}
