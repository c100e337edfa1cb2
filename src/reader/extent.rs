//! Extent trees (header magic 0xF30A) and classic block maps: logical-to-physical mapping with
//! bounded walks.

use crate::error::{Error, Fault, Problem, ProblemKind, Result};
use crate::reader::ondisk::blockmap::{self, IBlockMap, DIRECT_BLOCKS};
use crate::reader::ondisk::extent::{entry_offset, ExtentTail, RawExtent, RawExtentIdx};
use crate::reader::ondisk::{self, OnDisk};

pub use crate::reader::ondisk::extent::{ExtentHeader, EXTENT_MAGIC};
/// Deepest tree ext4 allows.
pub const MAX_DEPTH: u16 = 5;

impl ExtentHeader {
    /// Decode the 12-byte header.
    pub fn parse(bytes: &[u8]) -> Result<ExtentHeader> {
        let header = match ExtentHeader::decode_fast(bytes) {
            Some(h) => h,
            None => ondisk::decode(bytes)?, // the Short error
        };
        if header.magic != EXTENT_MAGIC {
            return Err(Error::corrupt(
                crate::ProblemKind::ExtentTree,
                format!("bad extent header magic 0x{:04x}", header.magic),
            ));
        }
        if header.depth > MAX_DEPTH {
            return Err(Error::corrupt(
                crate::ProblemKind::ExtentTree,
                format!("extent tree depth {} exceeds {MAX_DEPTH}", header.depth),
            ));
        }
        let cap = (bytes.len() - ExtentHeader::SIZE) / RawExtent::SIZE;
        if usize::from(header.entries) > usize::from(header.max) || usize::from(header.max) > cap {
            return Err(Error::corrupt(
                crate::ProblemKind::ExtentTree,
                format!(
                    "extent node claims {} entries (max {}) but holds room for {cap}",
                    header.entries, header.max
                ),
            ));
        }
        Ok(header)
    }
}

/// A leaf extent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Logical.
    pub logical: u32,
    /// Len.
    pub len: u16,
    /// Uninit.
    pub uninit: bool,
    /// Physical.
    pub physical: u64,
}

/// An index entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtentIndex {
    /// Logical.
    pub logical: u32,
    /// Child.
    pub child: u64,
}

/// Leaf entries of a node (after a successful header parse).
pub fn leaf_entries(node: &[u8], header: &ExtentHeader) -> Vec<Extent> {
    leaf_iter(node, header).collect()
}

/// Leaf entries of a node, without collecting them.
pub fn leaf_iter<'a>(node: &'a [u8], header: &ExtentHeader) -> impl Iterator<Item = Extent> + 'a {
    (0..usize::from(header.entries))
        .map_while(|i| RawExtent::decode_fast_at(node, entry_offset(i)))
        .map(|raw| {
            let (len, uninit) = raw.length();
            Extent {
                logical: raw.block,
                len,
                uninit,
                physical: raw.start(),
            }
        })
}

/// Index entries of a node.
pub fn index_entries(node: &[u8], header: &ExtentHeader) -> Vec<ExtentIndex> {
    (0..usize::from(header.entries))
        .map_while(|i| RawExtentIdx::decode_fast_at(node, entry_offset(i)))
        .map(|ix| ExtentIndex {
            logical: ix.block,
            child: ix.leaf(),
        })
        .collect()
}

/// Map logical block `lblk` through the extent tree rooted in `root` (i_block, 60 bytes).
/// `read_block` returns a block's bytes. Walks at most MAX_DEPTH levels, each one level deeper than
/// its parent claims, so cycles end. Returns `None` for a hole.
pub fn map_extent<F, B>(root: &[u8], lblk: u32, mut read_block: F) -> Result<Option<u64>>
where
    F: FnMut(u64) -> Result<B>,
    B: std::ops::Deref<Target = [u8]>,
{
    let mut header = ExtentHeader::parse(root)?;
    let mut node: Vec<u8> = root.to_vec();
    let mut steps = 0;
    loop {
        if header.depth == 0 {
            for extent in leaf_entries(&node, &header) {
                let start = u64::from(extent.logical);
                if u64::from(lblk) >= start && u64::from(lblk) < start + u64::from(extent.len) {
                    if extent.uninit {
                        return Ok(None);
                    }
                    return Ok(Some(extent.physical + (u64::from(lblk) - start)));
                }
            }
            return Ok(None);
        }
        let idx = index_entries(&node, &header);
        let Some(ix) = idx.iter().rev().find(|ix| ix.logical <= lblk) else {
            return Ok(None);
        };
        steps += 1;
        if steps > MAX_DEPTH {
            return Err(Error::corrupt(
                crate::ProblemKind::ExtentTree,
                "extent tree deeper than allowed",
            ));
        }
        let child = read_block(ix.child)?;
        let ch = ExtentHeader::parse(&child)?;
        if ch.depth + 1 != header.depth {
            return Err(Error::corrupt(
                crate::ProblemKind::ExtentTree,
                format!(
                    "extent block {} has depth {}, its parent {}",
                    ix.child, ch.depth, header.depth
                ),
            ));
        }
        node = child.to_vec();
        header = ch;
    }
}

/// Map logical block `lblk` through a classic direct/indirect block map (`i_block` as 15 u32).
pub fn map_blockmap<F, B>(
    iblock: &[u8],
    block_size: u64,
    lblk: u32,
    mut read_block: F,
) -> Result<Option<u64>>
where
    F: FnMut(u64) -> Result<B>,
    B: std::ops::Deref<Target = [u8]>,
{
    let map: IBlockMap = ondisk::decode(iblock)?;
    let per = blockmap::pointers_per_block(block_size);
    let mut relative = u64::from(lblk);
    if let Some(&direct) = map
        .direct
        .get(relative as usize)
        .filter(|_| relative < DIRECT_BLOCKS as u64)
    {
        return Ok((direct != 0).then_some(u64::from(direct)));
    }
    relative -= DIRECT_BLOCKS as u64;
    // (levels of indirection, blocks covered)
    let mut levels = [
        (1u32, per),
        (2, per.saturating_mul(per)),
        (3, per.saturating_pow(3)),
    ];
    for (depth, span) in levels.iter_mut() {
        if relative < *span {
            let mut blk = u64::from(map.indirect(*depth).unwrap_or(0));
            let mut rem = relative;
            let mut div = *span / per;
            for _ in 0..*depth {
                if blk == 0 {
                    return Ok(None);
                }
                let block = read_block(blk)?;
                let idx = (rem / div.max(1)) as usize;
                rem %= div.max(1);
                div /= per;
                blk = u64::from(blockmap::pointer(&block, idx)?);
            }
            return Ok((blk != 0).then_some(blk));
        }
        relative -= *span;
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------------------
// Whole-tree walks
// ---------------------------------------------------------------------------------------------

/// What a walk needs to know to judge block numbers and checksums.
#[derive(Clone, Copy, Debug)]
pub struct WalkLimits {
    /// First valid block (s_first_data_block).
    pub first_data_block: u64,
    /// One past the last valid block.
    pub blocks_count: u64,
    /// Per-inode checksum seed (crc32c of the fs seed, inode number, generation) with metadata_csum.
    pub csum_seed: Option<u32>,
}

impl WalkLimits {
    fn in_range(&self, blk: u64) -> bool {
        blk >= self.first_data_block && blk < self.blocks_count
    }
}

/// The per-inode checksum seed ext4 uses for extent, directory and inode checksums (kept for
/// callers; see [`crate::reader::inode::Inode::csum_seed`]).
pub fn inode_csum_seed(fs_seed: u32, ino: u32, generation: u32) -> u32 {
    crate::reader::ondisk::inode::csum_seed(fs_seed, ino, generation)
}

/// Stored and computed checksum of a tree block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct BlockCsum {
    /// Stored.
    pub stored: u32,
    /// Computed.
    pub computed: u32,
}

impl BlockCsum {
    /// True when they agree.
    pub fn ok(&self) -> bool {
        self.stored == self.computed
    }
}

/// Checksum of an extent tree block: crc32c(inode seed, header + `max` entry slots); the result is
/// stored in the 4 bytes right after the last slot (`struct ext4_extent_tail`).
pub fn extent_block_csum(seed: u32, node: &[u8], header: &ExtentHeader) -> BlockCsum {
    let tail = entry_offset(usize::from(header.max));
    let computed =
        crate::reader::csum::crc32c_raw(seed, node.get(..tail.min(node.len())).unwrap_or(&[]));
    BlockCsum {
        stored: ondisk::decode_at::<ExtentTail>(node, tail).map_or(0, |t| t.checksum),
        computed,
    }
}

/// One entry met during a pre-order walk of an extent tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtentItem {
    /// An index entry in a node at `level` (0 = the root in i_block) pointing to tree block `child`.
    Index {
        /// Level.
        level: u16,
        /// Logical.
        logical: u32,
        /// Child.
        child: u64,
    },
    /// A leaf extent in a node at `level`.
    /// Leaf.
    Leaf {
        /// Depth of the node holding it (0 = the root in i_block).
        level: u16,
        /// The extent.
        extent: Extent,
    },
}

/// A tree node read from disk (the root in i_block is not listed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtentNode {
    /// Block.
    pub block: u64,
    /// Level.
    pub level: u16,
    /// Header.
    pub header: ExtentHeader,
    /// With metadata_csum.
    pub csum: Option<BlockCsum>,
}

/// Result of walking a whole extent tree.
#[derive(Clone, Debug, Default)]
pub struct ExtentWalk {
    /// Depth of the tree (from the root header).
    pub depth: u16,
    /// The root header (in i_block); `None` until a walk has parsed it.
    pub root: Option<ExtentHeader>,
    /// Every index and leaf entry in pre-order (as debugfs lists them).
    pub items: Vec<ExtentItem>,
    /// Every tree block read.
    pub nodes: Vec<ExtentNode>,
    /// What was wrong; the walk skips a bad subtree and goes on with its siblings.
    pub problems: Vec<Problem>,
}

impl ExtentWalk {
    /// Leaf extents in order.
    pub fn leaves(&self) -> impl Iterator<Item = &Extent> {
        self.items.iter().filter_map(|item| match item {
            ExtentItem::Leaf { extent, .. } => Some(extent),
            ExtentItem::Index { .. } => None,
        })
    }
}

/// Walk the whole extent tree rooted in `root` (i_block). Bounded: every tree block is read at most
/// once (a block met twice is a cycle or a shared node and is reported, not followed), a child must
/// be exactly one level below its parent, depth is at most [`MAX_DEPTH`], and entries per node are
/// limited by the node's size. Errors only when the root itself is unusable.
pub fn walk_extents<F, B>(root: &[u8], limits: &WalkLimits, read_block: F) -> Result<ExtentWalk>
where
    F: FnMut(u64) -> Result<B>,
    B: std::ops::Deref<Target = [u8]>,
{
    let mut walk = ExtentWalk::default();
    walk_extents_into(root, limits, read_block, &mut walk)?;
    Ok(walk)
}

/// [`walk_extents`] into `walk`, reusing its buffers (cleared first): what a scan over many inodes
/// calls so that an inode costs no allocation. On `Err` (unusable root) `walk` is left empty.
pub fn walk_extents_into<F, B>(
    root: &[u8],
    limits: &WalkLimits,
    mut read_block: F,
    walk: &mut ExtentWalk,
) -> Result<()>
where
    F: FnMut(u64) -> Result<B>,
    B: std::ops::Deref<Target = [u8]>,
{
    walk.items.clear();
    walk.nodes.clear();
    walk.problems.clear();
    walk.depth = 0;
    walk.root = None;
    let header = ExtentHeader::parse(root)?;
    walk.depth = header.depth;
    walk.root = Some(header);
    // Tree blocks already read (cycle and shared-node detection): allocates only for trees
    // deeper than the root.
    let mut seen = std::collections::HashSet::new();
    walk_node(root, &header, 0, limits, &mut read_block, &mut seen, walk);
    Ok(())
}

fn walk_node<F, B>(
    node: &[u8],
    header: &ExtentHeader,
    level: u16,
    limits: &WalkLimits,
    read_block: &mut F,
    seen: &mut std::collections::HashSet<u64>,
    walk: &mut ExtentWalk,
) where
    F: FnMut(u64) -> Result<B>,
    B: std::ops::Deref<Target = [u8]>,
{
    if header.depth == 0 {
        walk_leaf(node, header, level, limits, walk);
        return;
    }
    for index in index_entries(node, header) {
        walk.items.push(ExtentItem::Index {
            level,
            logical: index.logical,
            child: index.child,
        });
        let Some((child, child_header)) =
            read_child(&index, header.depth, limits, read_block, seen, walk)
        else {
            continue;
        };
        let csum = limits
            .csum_seed
            .map(|seed| extent_block_csum(seed, &child, &child_header));
        if let Some(csum) = csum.filter(|c| !c.ok()) {
            walk.problems.push(
                Problem::new(
                    ProblemKind::ExtentTree,
                    format!(
                        "extent tree block {}: checksum 0x{:08x}, should be 0x{:08x}",
                        index.child, csum.stored, csum.computed
                    ),
                )
                .with_fault(Fault::Checksum),
            );
        }
        walk.nodes.push(ExtentNode {
            block: index.child,
            level: level + 1,
            header: child_header,
            csum,
        });
        walk_node(
            &child,
            &child_header,
            level + 1,
            limits,
            read_block,
            seen,
            walk,
        );
    }
}

/// The extents of a leaf node, each one whose blocks leave the filesystem reported (and kept:
/// e2fsck's `scan_extent_node` judges them, `PR_1_EXTENT_BAD_START_BLK` / `_ENDS_BEYOND`).
fn walk_leaf(
    node: &[u8],
    header: &ExtentHeader,
    level: u16,
    limits: &WalkLimits,
    walk: &mut ExtentWalk,
) {
    for extent in leaf_iter(node, header) {
        let end = extent.physical.checked_add(u64::from(extent.len));
        if extent.len > 0
            && (!limits.in_range(extent.physical)
                || end.is_none_or(|end| end > limits.blocks_count))
        {
            walk.problems.push(Problem::new(ProblemKind::ExtentTree, format!(
                "extent (logical {}, {} blocks) maps to blocks {}..{} outside the filesystem (0..{})",
                extent.logical,
                extent.len,
                extent.physical,
                extent.physical.saturating_add(u64::from(extent.len)),
                limits.blocks_count
            )).with_fault(Fault::OutOfRange));
        }
        walk.items.push(ExtentItem::Leaf { level, extent });
    }
}

/// The child node an index entry points to, read and its header decoded, when it can be
/// followed: inside the filesystem, not met before in this tree (a cycle or a node shared by
/// two parents would make the walk unbounded), readable, one level below its parent (the
/// kernel's `ext4_ext_check` on `eh_depth`). Otherwise the reason is a problem and `None`.
fn read_child<F, B>(
    index: &ExtentIndex,
    parent_depth: u16,
    limits: &WalkLimits,
    read_block: &mut F,
    seen: &mut std::collections::HashSet<u64>,
    walk: &mut ExtentWalk,
) -> Option<(B, ExtentHeader)>
where
    F: FnMut(u64) -> Result<B>,
    B: std::ops::Deref<Target = [u8]>,
{
    let blk = index.child;
    let problem = |message: String| Problem::new(ProblemKind::ExtentTree, message);
    if !limits.in_range(blk) {
        walk.problems.push(
            problem(format!(
                "extent index (logical {}) points to block {blk} outside the filesystem",
                index.logical
            ))
            .with_fault(Fault::OutOfRange),
        );
        return None;
    }
    if !seen.insert(blk) {
        walk.problems.push(problem(format!(
            "extent tree block {blk} is referenced more than once (cycle or shared node)"
        )));
        return None;
    }
    let child = match read_block(blk) {
        Ok(child) => child,
        Err(e) => {
            walk.problems
                .push(problem(format!("extent tree block {blk}: {e}")));
            return None;
        }
    };
    let child_header = match ExtentHeader::parse(&child) {
        Ok(child_header) => child_header,
        Err(e) => {
            walk.problems
                .push(problem(format!("extent tree block {blk}: {e}")));
            return None;
        }
    };
    if child_header.depth + 1 != parent_depth {
        walk.problems.push(problem(format!(
            "extent tree block {blk} has depth {}, but its parent has depth {parent_depth}",
            child_header.depth
        )));
        return None;
    }
    Some((child, child_header))
}

/// What a block-map entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    /// A run of data blocks starting at this logical block.
    Data(u64),
    /// Indirect block (blockcnt -1 in libext2fs).
    Ind,
    /// Double indirect block (-2).
    Dind,
    /// Triple indirect block (-3).
    Tind,
}

/// A run of blocks from a classic block map: data runs are coalesced when both logical and
/// physical numbers are contiguous; mapping blocks are always runs of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapRun {
    /// Kind.
    pub kind: MapKind,
    /// Physical.
    pub physical: u64,
    /// Len.
    pub len: u64,
}

/// Result of walking a block map.
#[derive(Clone, Debug, Default)]
pub struct BlockMapWalk {
    /// Runs in the order libext2fs' block iterator reports them (mapping block before its children).
    pub runs: Vec<MapRun>,
    /// Number of blocks reported (data and mapping), debugfs' TOTAL.
    pub total: u64,
    /// Problems.
    pub problems: Vec<Problem>,
}

impl BlockMapWalk {
    fn push_data(&mut self, lblk: u64, blk: u64) {
        self.total += 1;
        if let Some(MapRun {
            kind: MapKind::Data(start),
            physical,
            len,
        }) = self.runs.last_mut()
        {
            if *start + *len == lblk && *physical + *len == blk {
                *len += 1;
                return;
            }
        }
        self.runs.push(MapRun {
            kind: MapKind::Data(lblk),
            physical: blk,
            len: 1,
        });
    }
}

/// Walk a classic direct/indirect block map (`i_block` as 15 u32) completely. Bounded: each mapping
/// block is followed at most once, and mapping blocks outside the filesystem end that branch (as
/// libext2fs' iterator does) with a problem recorded.
pub fn walk_blockmap<F, B>(
    iblock: &[u8],
    block_size: u64,
    limits: &WalkLimits,
    read_block: F,
) -> BlockMapWalk
where
    F: FnMut(u64) -> Result<B>,
    B: std::ops::Deref<Target = [u8]>,
{
    let mut walker = BlockMapWalker {
        per_block: blockmap::pointers_per_block(block_size).max(1),
        limits,
        read_block,
        seen: std::collections::HashSet::new(),
        walk: BlockMapWalk::default(),
    };
    let map: IBlockMap = match ondisk::decode(iblock) {
        Ok(map) => map,
        Err(e) => {
            walker
                .walk
                .problems
                .push(Problem::new(ProblemKind::BlockMap, e.to_string()));
            return walker.walk;
        }
    };
    for (lblk, &blk) in (0u64..).zip(map.direct.iter()) {
        if blk != 0 {
            walker.walk.push_data(lblk, u64::from(blk));
        }
    }
    let mut base = DIRECT_BLOCKS as u64;
    for depth in 1..=3u32 {
        let blk = u64::from(map.indirect(depth).unwrap_or(0));
        let span = walker.per_block.saturating_pow(depth);
        if blk != 0 {
            walker.map_level(blk, depth, base);
        }
        base = base.saturating_add(span);
    }
    walker.walk
}

/// The state of one [`walk_blockmap`]: what bounds it (the filesystem's range, each mapping
/// block followed once) and what it found.
struct BlockMapWalker<'a, F> {
    /// Block numbers per mapping block (block size / 4).
    per_block: u64,
    limits: &'a WalkLimits,
    read_block: F,
    /// Mapping blocks already followed: a second reference is a cycle or a shared block.
    seen: std::collections::HashSet<u64>,
    walk: BlockMapWalk,
}

impl<F, B> BlockMapWalker<'_, F>
where
    F: FnMut(u64) -> Result<B>,
    B: std::ops::Deref<Target = [u8]>,
{
    /// The mapping block `blk` at `depth` (1 indirect, 2 double, 3 triple) whose first pointer
    /// maps logical block `base`, and below it (`block_iterate_ind` and its siblings).
    fn map_level(&mut self, blk: u64, depth: u32, base: u64) {
        let (kind, name) = match depth {
            1 => (MapKind::Ind, "indirect"),
            2 => (MapKind::Dind, "double indirect"),
            _ => (MapKind::Tind, "triple indirect"),
        };
        // libext2fs reports the mapping block first, then refuses to read it when out of range.
        self.walk.total += 1;
        self.walk.runs.push(MapRun {
            kind,
            physical: blk,
            len: 1,
        });
        if !self.limits.in_range(blk) {
            self.walk.problems.push(Problem::new(
                ProblemKind::BlockMap,
                format!("{name} block {blk} (logical {base}) is outside the filesystem"),
            ));
            return;
        }
        if !self.seen.insert(blk) {
            self.walk.problems.push(Problem::new(
                ProblemKind::BlockMap,
                format!("{name} block {blk} is referenced more than once (cycle or shared block)"),
            ));
            return;
        }
        let data = match (self.read_block)(blk) {
            Ok(data) => data,
            Err(e) => {
                self.walk.problems.push(Problem::new(
                    ProblemKind::BlockMap,
                    format!("{name} block {blk}: {e}"),
                ));
                return;
            }
        };
        let span = self.per_block.saturating_pow(depth - 1);
        for (index, child) in (0..self.per_block).zip(blockmap::pointers(&data)) {
            let child = u64::from(child);
            if child == 0 {
                continue;
            }
            let child_base = base.saturating_add(index.saturating_mul(span));
            if depth == 1 {
                self.walk.push_data(child_base, child);
            } else {
                self.map_level(child, depth - 1, child_base);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(buf: &mut [u8], entries: u16, max: u16, depth: u16) {
        buf[0..2].copy_from_slice(&EXTENT_MAGIC.to_le_bytes());
        buf[2..4].copy_from_slice(&entries.to_le_bytes());
        buf[4..6].copy_from_slice(&max.to_le_bytes());
        buf[6..8].copy_from_slice(&depth.to_le_bytes());
    }
    fn index(buf: &mut [u8], slot: usize, logical: u32, child: u32) {
        let offset = 12 + 12 * slot;
        buf[offset..offset + 4].copy_from_slice(&logical.to_le_bytes());
        buf[offset + 4..offset + 8].copy_from_slice(&child.to_le_bytes());
    }
    fn leaf(buf: &mut [u8], slot: usize, logical: u32, len: u16, phys: u32) {
        let offset = 12 + 12 * slot;
        buf[offset..offset + 4].copy_from_slice(&logical.to_le_bytes());
        buf[offset + 4..offset + 6].copy_from_slice(&len.to_le_bytes());
        buf[offset + 8..offset + 12].copy_from_slice(&phys.to_le_bytes());
    }
    const LIM: WalkLimits = WalkLimits {
        first_data_block: 0,
        blocks_count: 100,
        csum_seed: None,
    };

    #[test]
    fn two_level_tree_and_checksums() {
        let mut root = [0u8; 60];
        header(&mut root, 1, 4, 1);
        index(&mut root, 0, 0, 10);
        let mut blk = vec![0u8; 1024];
        header(&mut blk, 2, 84, 0);
        leaf(&mut blk, 0, 0, 3, 20);
        leaf(&mut blk, 1, 5, 32768 + 2, 30);
        let seed = 0xdead_beef;
        let csum = extent_block_csum(seed, &blk, &ExtentHeader::parse(&blk).unwrap());
        let tail = 12 + 12 * 84;
        blk[tail..tail + 4].copy_from_slice(&csum.computed.to_le_bytes());
        let lim = WalkLimits {
            csum_seed: Some(seed),
            ..LIM
        };
        let walk = walk_extents(&root, &lim, |requested| {
            assert_eq!(requested, 10);
            Ok(&blk[..])
        })
        .unwrap();
        assert!(walk.problems.is_empty(), "{:?}", walk.problems);
        assert_eq!(walk.items.len(), 3);
        assert!(walk.nodes[0].csum.unwrap().ok());
        let leaves: Vec<_> = walk.leaves().copied().collect();
        assert!(leaves[1].uninit && leaves[1].len == 2);
        // Same tree, wrong checksum seed: reported, not fatal.
        let bad = WalkLimits {
            csum_seed: Some(1),
            ..LIM
        };
        let walk = walk_extents(&root, &bad, |_| Ok(&blk[..])).unwrap();
        assert_eq!(walk.problems.len(), 1);
        assert_eq!(walk.problems[0].fault, Fault::Checksum);
    }

    #[test]
    fn cycles_depth_and_range_end() {
        // A node that points to itself at the same depth, and a root that lies about depth.
        let mut node = vec![0u8; 1024];
        header(&mut node, 2, 84, 1);
        index(&mut node, 0, 0, 7);
        index(&mut node, 1, 9, 7);
        let mut root = [0u8; 60];
        header(&mut root, 3, 4, 2);
        index(&mut root, 0, 0, 7);
        index(&mut root, 1, 5, 7);
        index(&mut root, 2, 9, 1000);
        let walk = walk_extents(&root, &LIM, |_| Ok(&node[..])).unwrap();
        // block 7 read once; its children (7 again) are refused as repeats.
        assert_eq!(walk.nodes.len(), 1);
        assert!(walk
            .problems
            .iter()
            .any(|p| p.message.contains("more than once")));
        assert!(walk.problems.iter().any(|p| p.fault == Fault::OutOfRange));
        // Depth mismatch.
        let mut flat = vec![0u8; 1024];
        header(&mut flat, 0, 84, 0);
        let walk = walk_extents(&root, &LIM, |_| Ok(&flat[..])).unwrap();
        assert!(walk.problems.iter().any(|p| p.message.contains("depth")));
        // Garbage root is an error.
        assert!(walk_extents(&[0u8; 60], &LIM, |_| Ok(&flat[..])).is_err());
    }

    #[test]
    fn blockmap_walk_order_and_bounds() {
        let mut ib = [0u8; 60];
        for index in 0..12u32 {
            ib[4 * index as usize..4 * index as usize + 4]
                .copy_from_slice(&(20 + index).to_le_bytes());
        }
        ib[48..52].copy_from_slice(&40u32.to_le_bytes()); // IND
        ib[52..56].copy_from_slice(&41u32.to_le_bytes()); // DIND -> itself
        let mut ind = vec![0u8; 1024];
        ind[0..4].copy_from_slice(&32u32.to_le_bytes());
        ind[4..8].copy_from_slice(&33u32.to_le_bytes());
        let mut dind = vec![0u8; 1024];
        dind[0..4].copy_from_slice(&41u32.to_le_bytes());
        let walk = walk_blockmap(&ib, 1024, &LIM, |requested| {
            Ok(if requested == 40 { &ind[..] } else { &dind[..] })
        });
        assert_eq!(
            walk.runs[0],
            MapRun {
                kind: MapKind::Data(0),
                physical: 20,
                len: 12
            }
        );
        assert_eq!(walk.runs[1].kind, MapKind::Ind);
        assert_eq!(walk.runs[2].kind, MapKind::Data(12));
        assert_eq!(walk.runs[2].len, 2);
        assert!(walk
            .problems
            .iter()
            .any(|p| p.message.contains("more than once")));
        // A triple indirect block past the end: reported.
        let mut ib2 = [0u8; 60];
        ib2[56..60].copy_from_slice(&5000u32.to_le_bytes());
        let walk = walk_blockmap(&ib2, 1024, &LIM, |_| Ok(&ind[..]));
        assert_eq!(walk.total, 1);
        assert_eq!(walk.problems.len(), 1);
    }
}
