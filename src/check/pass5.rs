//! Pass 5 (`e2fsck/pass5.c`: `check_block_bitmaps`, `check_inode_bitmaps`): the on-disk bitmaps
//! and counts against the usage the walk computed — clusters claimed by metadata and inodes,
//! inodes in use, directories per group — with the differences printed as e2fsck prints them
//! (`-(1234--1240) +5000`: `-` marked but unused, `+` used but not marked).

use super::context::Pass1Result;
use super::ownership::ranges_text;
use super::{Finding, Findings, RuleId};
use crate::reader::bitmap::{self, UninitMarks};
use crate::reader::fs::Filesystem;
use crate::reader::group::GroupDesc;
use rayon::prelude::*;

/// Most difference ranges printed per group and kind.
const MAX_RANGES: usize = 32;

/// The computed in-use clusters, by high 32 bits (`RoaringTreemap::bitmaps`).
type Parts<'a> = std::collections::BTreeMap<u32, &'a roaring::RoaringBitmap>;

/// The computed in-use clusters from `start` on, as ascending inclusive ranges (a run of
/// thousands of clusters is one item, not thousands).
fn ranges_from<'a>(parts: &'a Parts<'a>, start: u64) -> impl Iterator<Item = (u64, u64)> + 'a {
    let hi0 = u32::try_from(start >> 32).unwrap_or(u32::MAX);
    parts.range(hi0..).flat_map(move |(&hi, bm)| {
        let lo = if hi == hi0 { start as u32 } else { 0 };
        let base = u64::from(hi) << 32;
        let mut it = bm.range(lo..);
        std::iter::from_fn(move || it.next_range())
            .map(move |r| (base | u64::from(*r.start()), base | u64::from(*r.end())))
    })
}

/// Bits `[first, first + len)` of the computed usage as a little-endian bitmap, consuming the
/// ranges that end below `first + len` from `used` (one that goes on stays for the next group).
fn expected_bitmap(
    used: &mut std::iter::Peekable<impl Iterator<Item = (u64, u64)>>,
    first: u64,
    len: u64,
    out: &mut Vec<u8>,
) {
    out.clear();
    out.resize(len.div_ceil(8) as usize, 0);
    let end = first.saturating_add(len);
    while let Some(&(run_start, run_end)) = used.peek() {
        if run_start >= end {
            break;
        }
        let (lo, hi) = (run_start.max(first), run_end.saturating_add(1).min(end));
        if lo < hi {
            bitmap::set_bits(out, (lo - first) as usize, (hi - first) as usize);
        }
        if run_end >= end {
            break;
        }
        used.next();
    }
}

/// Per-worker buffers, reused from group to group.
#[derive(Default)]
struct Scratch {
    have: Vec<u8>,
    want: Vec<u8>,
}

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
/// `marks` are the BLOCK_UNINIT marks (`None` when libext2fs could not load the bitmaps:
/// nothing to compare).
pub(super) fn check(
    fs: &Filesystem,
    walk: &Pass1Result,
    marks: Option<&UninitMarks>,
    out: &mut Findings,
) {
    let Some(marks) = marks else {
        return;
    };
    let in_use = walk.claims.in_use();
    let parts: std::collections::BTreeMap<u32, &roaring::RoaringBitmap> =
        in_use.bitmaps().collect();
    // Groups in chunks: each chunk walks the computed usage once, in order, from its first
    // cluster (a lookup per cluster costs minutes on an 8 TiB filesystem). At most 256 chunks,
    // and a chunk per group when there are fewer groups, so that a few large groups are shared
    // between the workers too; each worker reuses its buffers from chunk to chunk.
    let groups = fs.geo.group_count;
    let chunk = (groups / 256).max(1);
    let (totals, _) = (0..groups.div_ceil(chunk))
        .into_par_iter()
        .fold(
            || (Totals::default(), Scratch::default()),
            |(mut totals, mut scratch), chunk_index| {
                let g0 = chunk_index * chunk;
                let start = (fs.geo.first_data_block >> fs.geo.cluster_bits)
                    + u64::from(g0) * u64::from(fs.geo.clusters_per_group);
                let mut used = ranges_from(&parts, start).peekable();
                for group_nr in g0..(g0 + chunk).min(groups) {
                    group(
                        fs,
                        walk,
                        &mut used,
                        marks,
                        group_nr,
                        &mut scratch,
                        &mut totals,
                    );
                }
                (totals, scratch)
            },
        )
        .reduce(
            || (Totals::default(), Scratch::default()),
            |(a, s), (b, _)| (a.merge(b), s),
        );
    let merged = std::mem::take(out).merge(totals.findings);
    *out = merged;
    let sb_free = fs.sb.free_blocks_count();
    let free_blocks = totals.free_clusters << fs.geo.cluster_bits;
    if sb_free != free_blocks {
        out.push(
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
    if sb_free_i != totals.free_inodes {
        out.push(
            Finding::new(
                RuleId::UsageFreeInodes,
                None,
                format!(
                    "free inodes count wrong ({sb_free_i}, counted={})",
                    totals.free_inodes
                ),
            )
            .with("stored", sb_free_i)
            .with("expected", totals.free_inodes),
        );
    }
}

fn group(
    fs: &Filesystem,
    walk: &Pass1Result,
    in_use: &mut std::iter::Peekable<impl Iterator<Item = (u64, u64)>>,
    marks: &UninitMarks,
    group_nr: u32,
    scratch: &mut Scratch,
    totals: &mut Totals,
) {
    let Ok(gd) = fs.desc(group_nr) else { return };
    group_blocks(fs, in_use, marks, &gd, group_nr, scratch, totals);
    if !walk
        .group_read
        .get(group_nr as usize)
        .copied()
        .unwrap_or(false)
    {
        return;
    }
    group_inodes(fs, walk, &gd, group_nr, scratch, totals);
}

/// Group `group_nr`'s block (cluster) bitmap against the clusters pass 1 saw in use, and its free
/// blocks count (e2fsck's `check_block_bitmaps`, one group).
fn group_blocks(
    fs: &Filesystem,
    in_use: &mut std::iter::Peekable<impl Iterator<Item = (u64, u64)>>,
    marks: &UninitMarks,
    gd: &GroupDesc,
    group_nr: u32,
    scratch: &mut Scratch,
    totals: &mut Totals,
) {
    let geo = &fs.geo;
    // Blocks (clusters).
    let first = (geo.first_data_block >> geo.cluster_bits)
        + u64::from(group_nr) * u64::from(geo.clusters_per_group);
    let last_block = geo.group_last_block(group_nr);
    let nclusters = ((last_block >> geo.cluster_bits) + 1).saturating_sub(first);
    if bitmap::group_block_bitmap(fs, gd, marks, &mut scratch.have).is_ok() {
        expected_bitmap(in_use, first, nclusters, &mut scratch.want);
        let free = bitmap::count_free(&scratch.want, nclusters as usize);
        if !same_bits(&scratch.want, &scratch.have, nclusters) {
            let (minus, plus) = differences(&scratch.want, &scratch.have, nclusters, |i| {
                (first + i) << geo.cluster_bits
            });
            diff(
                totals,
                RuleId::UsageBlockBitmap,
                group_nr,
                &minus,
                &plus,
                "block",
            );
        }
        totals.free_clusters += free;
        let stored = u64::from(gd.free_blocks_count);
        if stored != free {
            totals.findings.push(
                Finding::new(
                    RuleId::UsageGroupFreeBlocks,
                    Some(group_nr),
                    format!(
                        "free blocks count wrong for group #{group_nr} ({stored}, counted={free})"
                    ),
                )
                .with("stored", stored)
                .with("expected", free),
            );
        }
    }
}

/// Group `group_nr`'s inode bitmap against the inodes pass 1 found in use, and its free inodes
/// and directories counts (e2fsck's `check_inode_bitmaps`, one group; only for a group whose
/// table pass 1 read).
fn group_inodes(
    fs: &Filesystem,
    walk: &Pass1Result,
    gd: &GroupDesc,
    group_nr: u32,
    scratch: &mut Scratch,
    totals: &mut Totals,
) {
    let geo = &fs.geo;
    // Inodes.
    let ipg = geo.inodes_per_group;
    let first_ino = u64::from(group_nr) * u64::from(ipg) + 1;
    if bitmap::group_inode_bitmap(fs, gd, &mut scratch.have).is_ok() {
        walk.index
            .group_bitmap(group_nr as usize, &mut scratch.want);
        if !same_bits(&scratch.want, &scratch.have, u64::from(ipg)) {
            let (minus, plus) = differences(&scratch.want, &scratch.have, u64::from(ipg), |i| {
                first_ino + i
            });
            diff(
                totals,
                RuleId::UsageInodeBitmap,
                group_nr,
                &minus,
                &plus,
                "inode",
            );
        }
    }
    let free_i = u64::from(ipg).saturating_sub(walk.index.group_len(group_nr as usize) as u64);
    totals.free_inodes += free_i;
    let stored = u64::from(gd.free_inodes_count);
    if stored != free_i {
        totals.findings.push(
            Finding::new(
                RuleId::UsageGroupFreeInodes,
                Some(group_nr),
                format!(
                    "free inodes count wrong for group #{group_nr} ({stored}, counted={free_i})"
                ),
            )
            .with("stored", stored)
            .with("expected", free_i),
        );
    }
    let dirs = walk.group_dirs.get(group_nr as usize).copied().unwrap_or(0);
    if gd.used_dirs_count != dirs {
        totals.findings.push(
            Finding::new(
                RuleId::UsageGroupDirs,
                Some(group_nr),
                format!(
                    "directories count wrong for group #{group_nr} ({}, counted={dirs})",
                    gd.used_dirs_count
                ),
            )
            .with("stored", gd.used_dirs_count)
            .with("expected", dirs),
        );
    }
}

/// The first `nbits` bits of `want` and `have` agree: the whole bytes compared at once (the
/// usual case, a clean group, costs one `memcmp`), then the bits of a partial last byte.
fn same_bits(want: &[u8], have: &[u8], nbits: u64) -> bool {
    let whole = (nbits / 8) as usize;
    let (Some(want_whole), Some(have_whole)) = (want.get(..whole), have.get(..whole)) else {
        return false;
    };
    if want_whole != have_whole {
        return false;
    }
    let rest = (nbits % 8) as u32;
    if rest == 0 {
        return true;
    }
    let mask = (1u8 << rest) - 1;
    match (want.get(whole), have.get(whole)) {
        (Some(a), Some(b)) => a & mask == b & mask,
        _ => false,
    }
}

/// Bits set on disk but not computed (`-`), and computed but not set (`+`), mapped to numbers.
fn differences(
    want: &[u8],
    have: &[u8],
    nbits: u64,
    num: impl Fn(u64) -> u64,
) -> (Vec<u64>, Vec<u64>) {
    let (mut minus, mut plus) = (Vec::new(), Vec::new());
    for (byte, &want_byte) in want.iter().enumerate() {
        let have_byte = have.get(byte).copied().unwrap_or(0xff);
        if want_byte == have_byte {
            continue;
        }
        for bit in 0..8 {
            let index = byte as u64 * 8 + bit;
            if index >= nbits || minus.len() + plus.len() >= MAX_DIFFS {
                break;
            }
            match (have_byte >> bit & 1, want_byte >> bit & 1) {
                (1, 0) => minus.push(num(index)),
                (0, 1) => plus.push(num(index)),
                _ => {}
            }
        }
    }
    (minus, plus)
}

/// Most differing bits collected per group (enough for the printed ranges).
const MAX_DIFFS: usize = 1 << 16;

fn diff(totals: &mut Totals, rule: RuleId, group_nr: u32, minus: &[u64], plus: &[u64], what: &str) {
    if minus.is_empty() && plus.is_empty() {
        return;
    }
    totals.findings.push_with(rule, || {
        let (minus_text, nm) = ranges_text(minus.iter().copied(), "-", MAX_RANGES);
        let (plus_text, np) = ranges_text(plus.iter().copied(), "+", MAX_RANGES);
        let text = [minus_text, plus_text]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        Finding::new(
            rule,
            Some(group_nr),
            format!("{what} bitmap differences: {text}"),
        )
        .with("marked_unused", nm)
        .with("used_unmarked", np)
    });
}
