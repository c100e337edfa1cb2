//! Block ownership (e2fsck pass 1's `block_found_map`, pass 1B's duplicate search): every cluster
//! claimed once, by metadata or by one inode.
//!
//! Claims are kept in two compressed bitmaps: `used` (claimed at least once) and `multi` (claimed
//! more than once), so ownership costs at most 2 bits per allocated cluster — usually far less,
//! because roaring bitmaps store long runs (inode tables, big extents) as runs or dense 8 KiB
//! containers and leave empty ranges out. A plain bitmap would cost `blocks_count / 8` bytes
//! whatever is in use (256 MiB for an 8 TiB filesystem of 4 KiB blocks), and a hash set of
//! claimed blocks 16+ bytes per block. Metadata claims go to a third bitmap (`meta`), so that
//! metadata overlapping metadata stays the `gd.overlap` rule's business and only inode claims
//! that meet metadata or another inode are multiply claimed.
//!
//! During the inode walk of a filesystem of at most [`DENSE_MAX_CLUSTERS`] clusters, inode
//! claims go instead to two plain bitmaps shared by every worker ([`DenseClaims`], atomic
//! words): a claim is one `fetch_or` per 64 clusters where a roaring insert searched and
//! shifted an array container, and nothing is merged between workers. They cost 2 bits per
//! cluster of the filesystem (at most 32 MiB) and become the roaring `used` and `multi`
//! bitmaps when the walk ends ([`Claims::settle`]).

use crate::reader::features::INCOMPAT_MMP;
use crate::reader::fs::Filesystem;
use roaring::{RoaringBitmap, RoaringTreemap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Largest filesystem (in clusters) whose inode claims are kept in plain bitmaps during the
/// walk: 2 bits per cluster, 32 MiB at most (512 GiB of 4 KiB blocks).
pub const DENSE_MAX_CLUSTERS: u64 = 1 << 27;

/// Inode claims of a small filesystem as two plain bitmaps shared by the walk's workers.
pub struct DenseClaims {
    used: Vec<AtomicU64>,
    multi: Vec<AtomicU64>,
    clusters: u64,
}

impl std::fmt::Debug for DenseClaims {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "DenseClaims({} clusters)", self.clusters)
    }
}

impl DenseClaims {
    /// Bitmaps for `clusters` clusters; `None` above [`DENSE_MAX_CLUSTERS`].
    pub fn new(clusters: u64) -> Option<DenseClaims> {
        if clusters > DENSE_MAX_CLUSTERS {
            return None;
        }
        let words = usize::try_from(clusters.div_ceil(64)).ok()?;
        let zeros = || (0..words).map(|_| AtomicU64::new(0)).collect();
        Some(DenseClaims {
            used: zeros(),
            multi: zeros(),
            clusters,
        })
    }
    /// Claim clusters `[start, end)` (the caller keeps `end <= self.clusters`), word by word
    /// through `pending`: claims into the word it holds are gathered there (a cluster claimed
    /// twice meanwhile goes to `multi` at once), any other word flushes it first. Neighbouring
    /// small files claim neighbouring clusters, so one atomic operation serves many claims.
    fn claim(&self, start: u64, end: u64, pending: &mut Option<(usize, u64)>) {
        let mut cluster = start;
        while cluster < end {
            let word = (cluster / 64) as usize;
            let bit = cluster % 64;
            let count = (end - cluster).min(64 - bit);
            let mask = if count == 64 {
                !0
            } else {
                ((1u64 << count) - 1) << bit
            };
            match pending {
                Some((pw, held)) if *pw == word => {
                    let again = *held & mask;
                    if again != 0 {
                        self.mark_multi(word, again);
                    }
                    *held |= mask;
                }
                _ => {
                    self.flush(pending);
                    *pending = Some((word, mask));
                }
            }
            cluster += count;
        }
    }
    /// Write the gathered word of [`DenseClaims::claim`] into the shared bitmaps.
    fn flush(&self, pending: &mut Option<(usize, u64)>) {
        let Some((word, mask)) = pending.take() else {
            return;
        };
        let Some(used) = self.used.get(word) else {
            return;
        };
        let again = used.fetch_or(mask, Ordering::Relaxed) & mask;
        if again != 0 {
            self.mark_multi(word, again);
        }
    }
    fn mark_multi(&self, word: usize, bits: u64) {
        if let Some(multi) = self.multi.get(word) {
            multi.fetch_or(bits, Ordering::Relaxed);
        }
    }
    /// One bitmap as a roaring treemap (built per 2^32-cluster partition from its bytes).
    fn to_roaring(words: &[AtomicU64]) -> RoaringTreemap {
        const PER_PART: usize = (1 << 32) / 64;
        let parts = words.chunks(PER_PART).enumerate().map(|(hi, part)| {
            let bytes: Vec<u8> = part
                .iter()
                .flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes())
                .collect();
            (hi as u32, RoaringBitmap::from_lsb0_bytes(0, &bytes))
        });
        RoaringTreemap::from_bitmaps(parts)
    }
}

/// Below this many clusters a claim is inserted one by one (cheaper than building a range
/// bitmap).
const SMALL_CLAIM: u64 = 64;

/// Clusters claimed by inodes and by metadata.
#[derive(Clone, Debug, Default)]
pub struct Claims {
    /// Claimed by at least one inode.
    pub used: RoaringTreemap,
    /// Claimed by more than one inode.
    pub multi: RoaringTreemap,
    /// Claimed by metadata (superblocks, descriptors, reserved GDT, bitmaps, inode tables, MMP).
    pub meta: RoaringTreemap,
    /// While the walk runs on a small filesystem: the shared plain bitmaps inode claims go to
    /// (`used` and `multi` stay empty until [`Claims::settle`]).
    dense: Option<Arc<DenseClaims>>,
    /// This worker's claims into one word of `dense` not yet written there (see
    /// [`DenseClaims::claim`]; flushed by [`Claims::settle`] and [`Claims::merge`]).
    pending: Option<(usize, u64)>,
}

impl Claims {
    /// Claims whose inode claims go to `dense` (shared with the other workers' claims).
    pub fn sharing(dense: &Arc<DenseClaims>) -> Claims {
        Claims {
            dense: Some(Arc::clone(dense)),
            ..Claims::default()
        }
    }
    /// Move the inode claims of the shared plain bitmaps (if any) into `used` and `multi`;
    /// claims made afterwards go to them directly.
    pub fn settle(&mut self) {
        self.flush();
        if let Some(dense) = self.dense.take() {
            let used = DenseClaims::to_roaring(&dense.used);
            // Claims past the plain bitmaps went to `used` directly.
            let again = &self.used & &used;
            self.multi |= again;
            self.multi |= DenseClaims::to_roaring(&dense.multi);
            self.used |= used;
        }
    }
    /// An inode claims clusters `[start, start + len)`.
    pub fn claim(&mut self, start: u64, len: u64) {
        if len == 0 {
            return;
        }
        let end = start.saturating_add(len);
        if let Some(dense) = self.dense.as_deref().filter(|dense| end <= dense.clusters) {
            dense.claim(start, end, &mut self.pending);
            return;
        }
        if len <= SMALL_CLAIM {
            for cluster in start..end {
                if !self.used.insert(cluster) {
                    self.multi.insert(cluster);
                }
            }
            return;
        }
        let mut range_map = RoaringTreemap::new();
        range_map.insert_range(start..end);
        let again = &self.used & &range_map;
        self.multi |= again;
        self.used |= range_map;
    }
    /// Metadata claims clusters `[start, start + len)`.
    pub fn claim_meta(&mut self, start: u64, len: u64) {
        if len > 0 {
            self.meta.insert_range(start..start.saturating_add(len));
        }
    }
    /// Combine the claims of two disjoint sets of inodes.
    pub fn merge(mut self, mut other: Claims) -> Claims {
        self.flush();
        other.flush();
        if self.dense.is_none() {
            self.dense = other.dense;
        }
        let again = &self.used & &other.used;
        self.multi |= again;
        self.multi |= other.multi;
        self.used |= other.used;
        self.meta |= other.meta;
        self
    }
    /// Write the claims gathered in `pending` into the shared bitmaps.
    fn flush(&mut self) {
        if let Some(dense) = self.dense.as_deref() {
            dense.flush(&mut self.pending);
        }
    }
    /// Clusters claimed more than once: by two inodes, or by an inode and metadata.
    pub fn conflicts(&self) -> RoaringTreemap {
        let mut clusters = &self.used & &self.meta;
        clusters |= &self.multi;
        clusters
    }
    /// Every claimed cluster (what the block bitmap should say).
    pub fn in_use(&self) -> RoaringTreemap {
        &self.used | &self.meta
    }
}

/// Claim what e2fsck's `mark_table_blocks` marks: every group's superblock and descriptor
/// copies with the reserved GDT blocks, bitmaps and inode table, and the MMP block.
///
/// Groups are visited in parallel chunks, each merging its cluster ranges into sorted disjoint
/// runs; the runs go into the bitmap in order, as run containers (flex_bg packs the bitmaps and
/// inode tables of a flex group side by side: a few runs, where inserting them one by one
/// built an 8 KiB bitmap container per 64 Ki clusters, 32 MiB for an 8 TiB filesystem).
pub fn claim_metadata(fs: &Filesystem, claims: &mut Claims) {
    use rayon::prelude::*;
    let geo = &fs.geo;
    let groups = geo.group_count;
    let chunk = (groups / 64).clamp(256, 1 << 16);
    let mut runs: Vec<(u64, u64)> = (0..groups.div_ceil(chunk))
        .into_par_iter()
        .map(|chunk_index| {
            let mut chunk_runs = Vec::new();
            for group in
                chunk_index * chunk..(chunk_index * chunk).saturating_add(chunk).min(groups)
            {
                group_metadata(fs, group, &mut chunk_runs);
            }
            normalise(&mut chunk_runs);
            chunk_runs
        })
        .flatten_iter()
        .collect();
    if fs.sb.has_incompat(INCOMPAT_MMP) && fs.sb.mmp_block != 0 {
        meta_range(fs, fs.sb.mmp_block, 1, &mut runs);
    }
    normalise(&mut runs);
    for (start, len) in runs {
        claims.claim_meta(start, len);
    }
    claims.meta.optimize();
}

/// Blocks `[start, start + len)` as the clusters they touch (clipped to the filesystem).
fn meta_range(fs: &Filesystem, start: u64, len: u64, out: &mut Vec<(u64, u64)>) {
    let geo = &fs.geo;
    let cb = geo.cluster_bits;
    if len > 0 && start < geo.blocks_count {
        let end = start.saturating_add(len).min(geo.blocks_count);
        let first = start >> cb;
        let last = (end - 1) >> cb;
        out.push((first, last - first + 1));
    }
}

/// The metadata of `group` (`mark_table_blocks` for one group).
fn group_metadata(fs: &Filesystem, group: u32, out: &mut Vec<(u64, u64)>) {
    let geo = &fs.geo;
    let lay = geo.layout(group);
    if geo.bg_has_super(group) {
        meta_range(fs, lay.super_blk, 1, out);
    }
    if lay.old_desc_blk != 0 {
        meta_range(fs, lay.old_desc_blk, geo.old_desc_blocks(), out);
    }
    if lay.new_desc_blk != 0 {
        meta_range(fs, lay.new_desc_blk, 1, out);
    }
    if let Ok(gd) = fs.desc(group) {
        meta_range(fs, gd.block_bitmap, 1, out);
        meta_range(fs, gd.inode_bitmap, 1, out);
        meta_range(
            fs,
            gd.inode_table,
            u64::from(geo.inode_blocks_per_group),
            out,
        );
    }
}

/// Merge sorted-or-not cluster ranges `(start, len)` of one inode into disjoint sorted runs, so an
/// inode whose blocks share a cluster (bigalloc) claims it once.
pub fn normalise(ranges: &mut Vec<(u64, u64)>) {
    ranges.retain(|r| r.1 > 0);
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for &(start, len) in ranges.iter() {
        let end = start.saturating_add(len);
        if let Some(last) = out.last_mut() {
            let last_end = last.0 + last.1;
            if start <= last_end {
                last.1 = end.max(last_end) - last.0;
                continue;
            }
        }
        out.push((start, len));
    }
    *ranges = out;
}

/// Format sorted values as ranges the way e2fsck prints bitmap differences: `1234--1240 5000`.
pub fn ranges_text(
    values: impl Iterator<Item = u64>,
    sign: &str,
    max_items: usize,
) -> (String, u64) {
    let mut parts = Vec::new();
    let mut count = 0u64;
    let mut run: Option<(u64, u64)> = None;
    let flush = |range: (u64, u64), parts: &mut Vec<String>| {
        if parts.len() < max_items {
            if range.0 == range.1 {
                parts.push(format!("{sign}{}", range.0));
            } else {
                parts.push(format!("{sign}({}--{})", range.0, range.1));
            }
        }
    };
    for value in values {
        count += 1;
        run = match run {
            Some((start, end)) if value == end + 1 => Some((start, value)),
            Some(range) => {
                flush(range, &mut parts);
                Some((value, value))
            }
            None => Some((value, value)),
        };
    }
    let mut more = false;
    if let Some(range) = run {
        more = parts.len() >= max_items;
        flush(range, &mut parts);
    }
    let mut text = parts.join(" ");
    if more {
        text.push_str(" ...");
    }
    (text, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_find_double_use() {
        let mut first = Claims::default();
        first.claim(10, 5);
        first.claim(14, 1);
        let mut second = Claims::default();
        second.claim(100, 200);
        second.claim(12, 1);
        second.claim_meta(299, 2);
        let merged = first.merge(second);
        let conflicts: Vec<u64> = merged.conflicts().iter().collect();
        assert_eq!(conflicts, vec![12, 14, 299]);
        assert_eq!(merged.in_use().len(), 5 + 200 + 1);
    }

    #[test]
    fn dense_claims_agree_with_roaring() {
        let dense = Arc::new(DenseClaims::new(1000).unwrap());
        let mut first = Claims::sharing(&dense);
        let mut second = Claims::sharing(&dense);
        let mut plain = Claims::default();
        // Runs across word boundaries, a whole word, repeats, and one past the bitmaps.
        for (start, len) in [
            (10, 5),
            (14, 1),
            (60, 70),
            (128, 64),
            (127, 2),
            (990, 20),
            (5, 1),
            (200, 1),
            (201, 1),
            (300, 1),
            (200, 1),
            (202, 3),
            (64, 1),
        ] {
            first.claim(start, len);
            second.claim(start + 1, len);
            plain.claim(start, len);
            plain.claim(start + 1, len);
        }
        let mut merged = first.merge(second);
        merged.settle();
        assert_eq!(merged.used, plain.used);
        assert_eq!(merged.multi, plain.multi);
        assert!(DenseClaims::new(DENSE_MAX_CLUSTERS + 1).is_none());
    }

    #[test]
    fn ranges_print_like_e2fsck() {
        let (text, count) = ranges_text([1234, 1235, 1236, 5000].into_iter(), "-", 10);
        assert_eq!(text, "-(1234--1236) -5000");
        assert_eq!(count, 4);
    }

    #[test]
    fn normalise_merges_overlaps() {
        let mut ranges = vec![(5, 2), (0, 3), (2, 1), (6, 4)];
        normalise(&mut ranges);
        assert_eq!(ranges, vec![(0, 3), (5, 5)]);
    }
}
