//! `e4inspect check`: fsck-grade validation of the superblock, group descriptors, bitmaps, counts
//! and the journal superblock, reported as findings against a catalogue of stable rule IDs
//! ([`rules::RULES`]).
//!
//! The checker never refuses an image that libext2fs refuses: it decodes the primary superblock
//! directly, judges every field, and only then opens the filesystem (from a valid backup when the
//! primary is unusable) to walk the descriptors, one group at a time and in parallel. Every loop is
//! bounded by the group count, which the image size bounds in turn.

mod groups;
mod journal;
pub mod rules;
mod superblock;

use crate::error::{Error, Result};
use crate::fs::{find_backup_superblocks, select_window, Filesystem, OpenOptions};
use crate::source::Source;
use crate::superblock::{Superblock, SUPERBLOCK_OFFSET, SUPERBLOCK_SIZE};
pub use rules::{Enforcer, Rule, Severity, RULES};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// At most this many findings of one rule are kept per image (the rest are only counted), so a
/// hostile descriptor table cannot make the report grow without bound.
pub const MAX_FINDINGS_PER_RULE: u64 = 1000;

/// One problem found.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// Rule ID from the catalogue.
    pub rule: &'static str,
    pub severity: Severity,
    /// Block group, when the finding concerns one.
    pub group: Option<u32>,
    /// One-line explanation with stored and expected values.
    pub message: String,
    /// The values behind the message (`stored`, `expected`, `block`, ...).
    #[serde(flatten)]
    pub values: Map<String, Value>,
}

impl Finding {
    /// A finding of rule `rule` (its severity from the catalogue).
    pub fn new(rule: &'static str, group: Option<u32>, message: impl Into<String>) -> Finding {
        let severity = rules::rule(rule).map_or(Severity::Error, |r| r.severity);
        debug_assert!(
            rules::rule(rule).is_some(),
            "rule {rule} not in the catalogue"
        );
        Finding {
            rule,
            severity,
            group,
            message: message.into(),
            values: Map::new(),
        }
    }
    /// Attach a value (shown in JSON).
    pub fn with(mut self, key: &str, v: impl Into<Value>) -> Finding {
        self.values.insert(key.to_string(), v.into());
        self
    }
    /// The text line: `rule group N: message`.
    pub fn line(&self) -> String {
        match self.group {
            Some(g) => format!("{} group {g}: {}", self.rule, self.message),
            None => format!("{}: {}", self.rule, self.message),
        }
    }
}

/// Findings of one image, with per-rule counts (also of findings not kept).
#[derive(Clone, Debug, Default)]
pub struct Findings {
    list: Vec<Finding>,
    counts: BTreeMap<&'static str, u64>,
}

impl Findings {
    /// Record a finding.
    pub fn push(&mut self, f: Finding) {
        let n = self.counts.entry(f.rule).or_insert(0);
        *n += 1;
        if *n <= MAX_FINDINGS_PER_RULE {
            self.list.push(f);
        }
    }
    /// Record many.
    pub fn extend(&mut self, it: impl IntoIterator<Item = Finding>) {
        for f in it {
            self.push(f);
        }
    }
    /// True when a finding of `rule` was recorded.
    pub fn has(&self, rule: &str) -> bool {
        self.counts.contains_key(rule)
    }
    /// Number of error-level findings of the `sb` family so far.
    fn sb_errors(&self) -> u64 {
        self.counts
            .iter()
            .filter(|(id, _)| {
                rules::family(id) == "sb"
                    && rules::rule(id).is_some_and(|r| r.severity == Severity::Error)
            })
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
}

/// The result for one image.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub image: String,
    pub findings: Vec<Finding>,
    /// Error-level findings (all, including those not kept).
    pub errors: u64,
    /// Warning-level findings.
    pub warnings: u64,
    /// Findings per rule ID (all, including those not kept).
    pub counts: BTreeMap<&'static str, u64>,
    /// Superblock the group checks used (0 = primary).
    pub superblock_used: u64,
}

impl Report {
    fn new(image: String, f: Findings, superblock_used: u64) -> Report {
        let mut errors = 0;
        let mut warnings = 0;
        for (id, n) in &f.counts {
            match rules::rule(id).map_or(Severity::Error, |r| r.severity) {
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
        }
    }
}

/// Check the filesystem image or device at `path`. An `Err` means it cannot be read at all.
pub fn check_path(path: &Path, opts: &CheckOptions) -> Result<Report> {
    let src = Source::open(path)?;
    check_source(src, opts)
}

/// Check an opened source.
pub fn check_source(src: Source, opts: &CheckOptions) -> Result<Report> {
    let image = src.path().display().to_string();
    let open = OpenOptions {
        offset: opts.offset,
        partition: opts.partition,
        ..OpenOptions::default()
    };
    let (src, _) = select_window(src, &open)?;
    let raw = src.read(
        SUPERBLOCK_OFFSET,
        SUPERBLOCK_SIZE as u64,
        "primary superblock",
    )?;
    let sb = Superblock::parse(&raw)?;
    let now = opts.now.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    });
    let mut f = Findings::default();
    let primary_geometry = superblock::check(&sb, src.len(), now, &mut f);
    let primary_bad = f.sb_errors() > 0;
    let backups = if primary_bad {
        find_backup_superblocks(&src)
    } else {
        Vec::new()
    };
    if sb.magic != crate::superblock::EXT2_MAGIC && backups.is_empty() {
        return Err(Error::NotExt(format!(
            "{image}: no ext2/3/4 superblock (magic 0x{:04x} at byte 1024) and no valid backup superblock",
            sb.magic
        )));
    }
    if primary_bad {
        f.push(superblock::use_backup_finding(&backups));
    }
    // Walk the groups with the primary superblock when its geometry is sound, else a backup.
    let (sb_block, blocksize) = if primary_geometry {
        (0, None)
    } else if let Some(&(blk, bs)) = backups.first() {
        (blk, Some(bs))
    } else {
        return Ok(Report::new(image, f, 0));
    };
    let open = OpenOptions {
        offset: Some(0),
        superblock: (sb_block != 0).then_some(sb_block),
        blocksize,
        force: true,
        ..OpenOptions::default()
    };
    let fs = match Filesystem::from_source(src, &open) {
        Ok(fs) => fs,
        Err(Error::Open { failure, .. }) => {
            f.push(
                Finding::new(
                    "gd.table_unreadable",
                    None,
                    format!("the descriptor table cannot be read: {}", failure.message()),
                )
                .with("superblock", sb_block),
            );
            return Ok(Report::new(image, f, sb_block));
        }
        Err(e) => return Err(e),
    };
    if sb_block == 0 {
        superblock::check_backups(&fs, &mut f);
    }
    groups::check(&fs, &mut f);
    journal::check(&fs, &mut f);
    Ok(Report::new(image, f, sb_block))
}
