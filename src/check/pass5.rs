//! Pass 5 (`e2fsck/pass5.c`: `check_block_bitmaps`, `check_inode_bitmaps`): the on-disk bitmaps
//! and counts against the usage the walk computed — clusters claimed by metadata and inodes,
//! inodes in use, directories per group — with the differences printed as e2fsck prints them
//! (`-(1234--1240) +5000`: `-` marked but unused, `+` used but not marked).

use super::ownership::ranges_text;
use super::walk::Walk;
use super::{Finding, Findings, RuleId};
use crate::bitmap::{self, UninitMarks};
use crate::fs::Filesystem;
use rayon::prelude::*;

/// Most difference ranges printed per group and kind.
const MAX_RANGES: usize = 32;

#[derive(Default)]
struct Totals {
    findings: Findings,
    free_clusters: u64,
    free_inodes: u64,
}

impl Totals {
    fn merge(mut self, later: Totals) -> Totals {
        self.findings = self.findings.merge(later.findings);
        self.free_clusters += later.free_clusters;
        self.free_inodes += later.free_inodes;
        self
    }
}

/// Compare every group's bitmaps and counts, then the superblock totals.
pub(super) fn check(fs: &Filesystem, walk: &Walk, f: &mut Findings) {
    let bs = fs.geo.block_size as usize;
    if bitmap::block_nbytes(fs) > bs || bitmap::inode_nbytes(fs) > bs {
        return;
    }
    let Ok(marks) = UninitMarks::compute(fs) else {
        return;
    };
    let in_use = walk.claims.in_use();
    let t = (0..fs.geo.group_count)
        .into_par_iter()
        .fold(Totals::default, |mut t, g| {
            group(fs, walk, &in_use, &marks, g, &mut t);
            t
        })
        .reduce(Totals::default, Totals::merge);
    let merged = std::mem::take(f).merge(t.findings);
    *f = merged;
    let sb_free = fs.sb.free_blocks_count();
    let free_blocks = t.free_clusters << fs.geo.cluster_bits;
    if sb_free != free_blocks {
        f.push(
            Finding::new(
                RuleId::UsageFreeBlocks,
                None,
                format!("free blocks count wrong ({sb_free}, counted={free_blocks})"),
            )
            .with("stored", sb_free)
            .with("expected", free_blocks),
        );
    }
    let sb_free_i = u64::from(fs.sb.free_inodes_count);
    if sb_free_i != t.free_inodes {
        f.push(
            Finding::new(
                RuleId::UsageFreeInodes,
                None,
                format!(
                    "free inodes count wrong ({sb_free_i}, counted={})",
                    t.free_inodes
                ),
            )
            .with("stored", sb_free_i)
            .with("expected", t.free_inodes),
        );
    }
}

fn group(
    fs: &Filesystem,
    walk: &Walk,
    in_use: &roaring::RoaringTreemap,
    marks: &UninitMarks,
    g: u32,
    t: &mut Totals,
) {
    let Ok(gd) = fs.desc(g) else { return };
    let geo = &fs.geo;
    let mut buf = Vec::new();
    // Blocks (clusters).
    let first = (geo.first_data_block >> geo.cluster_bits)
        + u64::from(g) * u64::from(geo.clusters_per_group);
    let last_block = geo.group_last_block(g);
    let nclusters = ((last_block >> geo.cluster_bits) + 1).saturating_sub(first);
    if bitmap::group_block_bitmap(fs, &gd, marks, &mut buf).is_ok() {
        let mut minus = Vec::new();
        let mut plus = Vec::new();
        let mut used = 0u64;
        for i in 0..nclusters {
            let c = first + i;
            let want = in_use.contains(c);
            used += u64::from(want);
            let have = bitmap::test_bit(&buf, i as usize);
            if have && !want {
                minus.push(c << geo.cluster_bits);
            } else if want && !have {
                plus.push(c << geo.cluster_bits);
            }
        }
        diff(t, RuleId::UsageBlockBitmap, g, &minus, &plus, "block");
        let free = nclusters - used;
        t.free_clusters += free;
        let stored = u64::from(gd.free_blocks_count);
        if stored != free {
            t.findings.push(
                Finding::new(
                    RuleId::UsageGroupFreeBlocks,
                    Some(g),
                    format!("free blocks count wrong for group #{g} ({stored}, counted={free})"),
                )
                .with("stored", stored)
                .with("expected", free),
            );
        }
    }
    if !walk.group_read.get(g as usize).copied().unwrap_or(false) {
        return;
    }
    // Inodes.
    let ipg = geo.inodes_per_group;
    let first_ino = u64::from(g) * u64::from(ipg) + 1;
    let lo = walk
        .inodes
        .partition_point(|i| u64::from(i.ino) < first_ino);
    let hi = walk
        .inodes
        .partition_point(|i| u64::from(i.ino) < first_ino + u64::from(ipg));
    let used_inos = &walk.inodes[lo..hi];
    if bitmap::group_inode_bitmap(fs, &gd, &mut buf).is_ok() {
        let mut minus = Vec::new();
        let mut plus = Vec::new();
        let mut k = 0;
        for i in 0..u64::from(ipg) {
            let ino = first_ino + i;
            let want = used_inos.get(k).is_some_and(|f| u64::from(f.ino) == ino);
            k += usize::from(want);
            let have = bitmap::test_bit(&buf, i as usize);
            if have && !want {
                minus.push(ino);
            } else if want && !have {
                plus.push(ino);
            }
        }
        diff(t, RuleId::UsageInodeBitmap, g, &minus, &plus, "inode");
    }
    let free_i = u64::from(ipg) - used_inos.len() as u64;
    t.free_inodes += free_i;
    let stored = u64::from(gd.free_inodes_count);
    if stored != free_i {
        t.findings.push(
            Finding::new(
                RuleId::UsageGroupFreeInodes,
                Some(g),
                format!("free inodes count wrong for group #{g} ({stored}, counted={free_i})"),
            )
            .with("stored", stored)
            .with("expected", free_i),
        );
    }
    let dirs = walk.group_dirs.get(g as usize).copied().unwrap_or(0);
    if gd.used_dirs_count != dirs {
        t.findings.push(
            Finding::new(
                RuleId::UsageGroupDirs,
                Some(g),
                format!(
                    "directories count wrong for group #{g} ({}, counted={dirs})",
                    gd.used_dirs_count
                ),
            )
            .with("stored", gd.used_dirs_count)
            .with("expected", dirs),
        );
    }
}

fn diff(t: &mut Totals, rule: RuleId, g: u32, minus: &[u64], plus: &[u64], what: &str) {
    if minus.is_empty() && plus.is_empty() {
        return;
    }
    t.findings.push_with(rule, || {
        let (m, nm) = ranges_text(minus.iter().copied(), "-", MAX_RANGES);
        let (p, np) = ranges_text(plus.iter().copied(), "+", MAX_RANGES);
        let text = [m, p]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        Finding::new(rule, Some(g), format!("{what} bitmap differences: {text}"))
            .with("marked_unused", nm)
            .with("used_unmarked", np)
    });
}
