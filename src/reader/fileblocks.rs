//! Streaming walks of a file's blocks: the extent tree or the classic direct/indirect map, visited
//! in the order of libext2fs' `ext2fs_block_iterate3` without ever collecting one entry per block.
//!
//! Memory is bounded by the tree's depth (at most [`MAX_DEPTH`] extent levels, three indirect
//! levels) plus the set of tree blocks already followed (every mapping block is read at most once,
//! so a cycle or a shared node ends). The visitor decides when to stop ([`ControlFlow::Break`]).
//! Consumers: `ls`/`cat`/path lookup (data runs), `inode` (debugfs' BLOCKS list streamed, the
//! fragmentation summary), directory reads.

use crate::error::{Error, Problem, ProblemKind, Result};
use crate::reader::extent::{self, ExtentHeader, MapKind, WalkLimits, MAX_DEPTH};
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, Inode};
use crate::reader::ondisk::blockmap::{BlockPointer, IBlockMap};
use crate::reader::ondisk::{self, OnDisk};
use std::collections::HashSet;
use std::ops::ControlFlow;

/// Problems kept per walk; the rest are only counted.
pub const MAX_PROBLEMS: usize = 64;

/// A run of data blocks: `len` blocks from `logical` map to `physical..physical+len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// First logical block of the run.
    pub logical: u64,
    /// Physical block `logical` maps to.
    pub physical: u64,
    /// Blocks in the run.
    pub len: u64,
    /// An uninitialised (unwritten) extent: reads as zeros.
    pub uninit: bool,
}

/// One step of a block-map walk, in `ext2fs_block_iterate3` order (mapping block before the data
/// it maps). Data runs are coalesced while logical and physical numbers both continue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapEvent {
    /// A run of data blocks.
    Data(Run),
    /// An indirect, double or triple indirect block.
    Mapping {
        /// Its level (indirect, double, triple).
        kind: MapKind,
        /// Where it lies.
        physical: u64,
    },
}

/// What a walk met besides the runs it reported.
#[derive(Clone, Debug, Default)]
pub struct WalkSummary {
    /// Blocks reported (data and mapping blocks), debugfs' TOTAL for block maps.
    pub total: u64,
    /// Up to [`MAX_PROBLEMS`] descriptions of what was wrong.
    pub problems: Vec<Problem>,
    /// Problems beyond those kept.
    pub problems_omitted: u64,
    /// True when the visitor stopped the walk.
    pub stopped: bool,
}

impl WalkSummary {
    fn problem(&mut self, problem: Problem) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(problem);
        } else {
            self.problems_omitted += 1;
        }
    }
}

struct Walker<'a, 'f> {
    fs: &'a Filesystem,
    limits: WalkLimits,
    seen: HashSet<u64>,
    sum: WalkSummary,
    visit: &'f mut dyn FnMut(MapEvent) -> ControlFlow<()>,
    /// Block-map data run being extended.
    pending: Option<Run>,
}

impl Walker<'_, '_> {
    fn in_range(&self, blk: u64) -> bool {
        blk >= self.limits.first_data_block && blk < self.limits.blocks_count
    }

    fn emit(&mut self, event: MapEvent) -> ControlFlow<()> {
        let flow = (self.visit)(event);
        if flow.is_break() {
            self.sum.stopped = true;
        }
        flow
    }

    fn flush(&mut self) -> ControlFlow<()> {
        match self.pending.take() {
            Some(r) => self.emit(MapEvent::Data(r)),
            None => ControlFlow::Continue(()),
        }
    }

    fn data_block(&mut self, logical: u64, physical: u64) -> ControlFlow<()> {
        self.sum.total += 1;
        if let Some(run) = self.pending.as_mut() {
            if run.logical + run.len == logical && run.physical + run.len == physical {
                run.len += 1;
                return ControlFlow::Continue(());
            }
        }
        self.flush()?;
        self.pending = Some(Run {
            logical,
            physical,
            len: 1,
            uninit: false,
        });
        ControlFlow::Continue(())
    }

    /// One mapping block of depth `depth` (1 = indirect) covering logical blocks from `base`.
    fn map_level(&mut self, blk: u64, depth: u32, base: u64, per: u64) -> ControlFlow<()> {
        let (kind, name) = match depth {
            1 => (MapKind::Ind, "indirect"),
            2 => (MapKind::Dind, "double indirect"),
            _ => (MapKind::Tind, "triple indirect"),
        };
        self.flush()?;
        self.sum.total += 1;
        self.emit(MapEvent::Mapping {
            kind,
            physical: blk,
        })?;
        if !self.in_range(blk) {
            self.sum.problem(Problem::new(
                ProblemKind::BlockMap,
                format!("{name} block {blk} (logical {base}) is outside the filesystem"),
            ));
            return ControlFlow::Continue(());
        }
        if !self.seen.insert(blk) {
            self.sum.problem(Problem::new(
                ProblemKind::BlockMap,
                format!("{name} block {blk} is referenced more than once (cycle or shared block)"),
            ));
            return ControlFlow::Continue(());
        }
        let fs = self.fs;
        let data = match fs.block(blk) {
            Ok(b) => b,
            Err(e) => {
                self.sum.problem(Problem::new(
                    ProblemKind::BlockMap,
                    format!("{name} block {blk}: {e}"),
                ));
                return ControlFlow::Continue(());
            }
        };
        let span = per.saturating_pow(depth - 1);
        for index in 0..per {
            let slot = BlockPointer::SIZE.saturating_mul(index as usize);
            let child =
                u64::from(ondisk::decode_at::<BlockPointer>(&data, slot).map_or(0, |p| p.0));
            if child == 0 {
                continue;
            }
            let lbase = base.saturating_add(index.saturating_mul(span));
            if depth == 1 {
                self.data_block(lbase, child)?;
            } else {
                self.map_level(child, depth - 1, lbase, per)?;
            }
        }
        ControlFlow::Continue(())
    }

    fn extent_node(&mut self, node: &[u8], header: &ExtentHeader, level: u16) -> ControlFlow<()> {
        if header.depth == 0 {
            for extent in extent::leaf_entries(node, header) {
                if extent.len == 0 {
                    continue;
                }
                self.sum.total += u64::from(extent.len);
                self.emit(MapEvent::Data(Run {
                    logical: u64::from(extent.logical),
                    physical: extent.physical,
                    len: u64::from(extent.len),
                    uninit: extent.uninit,
                }))?;
            }
            return ControlFlow::Continue(());
        }
        for ix in extent::index_entries(node, header) {
            if !self.in_range(ix.child) {
                self.sum.problem(Problem::new(
                    ProblemKind::ExtentTree,
                    format!(
                        "extent index (logical {}) points to block {} outside the filesystem",
                        ix.logical, ix.child
                    ),
                ));
                continue;
            }
            if !self.seen.insert(ix.child) {
                self.sum.problem(Problem::new(
                    ProblemKind::ExtentTree,
                    format!(
                        "extent tree block {} is referenced more than once (cycle or shared node)",
                        ix.child
                    ),
                ));
                continue;
            }
            let fs = self.fs;
            let child = match fs.block(ix.child) {
                Ok(b) => b,
                Err(e) => {
                    self.sum.problem(Problem::new(
                        ProblemKind::ExtentTree,
                        format!("extent tree block {}: {e}", ix.child),
                    ));
                    continue;
                }
            };
            let ch = match ExtentHeader::parse(&child) {
                Ok(ch) if ch.depth + 1 == header.depth && level < MAX_DEPTH => ch,
                Ok(ch) => {
                    self.sum.problem(Problem::new(
                        ProblemKind::ExtentTree,
                        format!(
                            "extent tree block {} has depth {}, but its parent has depth {}",
                            ix.child, ch.depth, header.depth
                        ),
                    ));
                    continue;
                }
                Err(e) => {
                    self.sum.problem(Problem::new(
                        ProblemKind::ExtentTree,
                        format!("extent tree block {}: {e}", ix.child),
                    ));
                    continue;
                }
            };
            self.extent_node(&child, &ch, level + 1)?;
        }
        ControlFlow::Continue(())
    }
}

/// Walk the classic block map in `i_block`, reporting mapping blocks and coalesced data runs in
/// libext2fs' iteration order.
pub fn walk_block_map(
    fs: &Filesystem,
    iblock: &[u8],
    limits: WalkLimits,
    visit: &mut dyn FnMut(MapEvent) -> ControlFlow<()>,
) -> WalkSummary {
    let per = (fs.block_size() / 4).max(1);
    let mut walker = Walker {
        fs,
        limits,
        seen: HashSet::new(),
        sum: WalkSummary::default(),
        visit,
        pending: None,
    };
    let map = ondisk::decode::<IBlockMap>(iblock).ok();
    let slot = |i: usize| u64::from(map.and_then(|m| m.slot(i)).unwrap_or(0));
    let _ = (|| {
        for logical in 0..12u64 {
            let physical = slot(logical as usize);
            if physical != 0 {
                walker.data_block(logical, physical)?;
            }
        }
        let mut base = 12u64;
        for (index, depth) in [(12usize, 1u32), (13, 2), (14, 3)] {
            let blk = slot(index);
            if blk != 0 {
                walker.map_level(blk, depth, base, per)?;
            }
            base = base.saturating_add(per.saturating_pow(depth));
        }
        walker.flush()
    })();
    walker.sum
}

/// Walk the extent tree rooted in `i_block`, reporting every leaf extent (uninitialised ones
/// flagged) in tree order. Errors only when the root itself is unusable.
pub fn walk_extent_tree(
    fs: &Filesystem,
    iblock: &[u8],
    limits: WalkLimits,
    visit: &mut dyn FnMut(Run) -> ControlFlow<()>,
) -> Result<WalkSummary> {
    let header = ExtentHeader::parse(iblock)?;
    let mut adapt = |event: MapEvent| match event {
        MapEvent::Data(r) => visit(r),
        MapEvent::Mapping { .. } => ControlFlow::Continue(()),
    };
    let mut walker = Walker {
        fs,
        limits,
        seen: HashSet::new(),
        sum: WalkSummary::default(),
        visit: &mut adapt,
        pending: None,
    };
    let _ = walker.extent_node(iblock, &header, 0);
    Ok(walker.sum)
}

/// Walk the data runs of inode `ino` whatever its map (extents or block map), in logical order as
/// stored. Inline data, fast symlinks and device inodes have no blocks: an error says so.
pub fn for_each_run(
    fs: &Filesystem,
    ino: u32,
    inode: &Inode,
    visit: &mut dyn FnMut(Run) -> ControlFlow<()>,
) -> Result<WalkSummary> {
    if inode.has_flag(inode::INLINE_DATA_FL) {
        return Err(Error::Invalid(format!(
            "inode {ino} keeps its data inline, not in blocks"
        )));
    }
    let limits = inode::walk_limits(fs, ino, inode);
    if inode.has_flag(inode::EXTENTS_FL) {
        return walk_extent_tree(fs, &inode.block, limits, visit).map_err(|error| {
            Error::corrupt(
                crate::ProblemKind::BlockMap,
                format!("inode {ino}: extent tree root: {error}"),
            )
        });
    }
    let mut adapt = |event: MapEvent| match event {
        MapEvent::Data(r) => visit(r),
        MapEvent::Mapping { .. } => ControlFlow::Continue(()),
    };
    Ok(walk_block_map(fs, &inode.block, limits, &mut adapt))
}

/// Physical block of logical block `lblk` (`None` for a hole or an uninitialised extent), found by
/// walking only until it is passed.
pub fn map_block(fs: &Filesystem, ino: u32, inode: &Inode, lblk: u64) -> Result<Option<u64>> {
    let mut found = None;
    for_each_run(fs, ino, inode, &mut |run| {
        if lblk >= run.logical && lblk - run.logical < run.len {
            if !run.uninit {
                found = Some(run.physical + (lblk - run.logical));
            }
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })?;
    Ok(found)
}

/// Fragmentation of a file as filefrag counts it: `extents` data extents (block-map runs), and
/// `runs` after merging neighbours that continue both logically and physically.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Fragmentation {
    /// Data extents (block-map runs).
    pub extents: u64,
    /// Runs after merging logical and physical neighbours.
    pub runs: u64,
    /// Data blocks mapped.
    pub blocks: u64,
}

/// Count extents and physically contiguous runs of inode `ino`.
pub fn fragmentation(fs: &Filesystem, ino: u32, inode: &Inode) -> Result<Fragmentation> {
    let mut frag = Fragmentation::default();
    let mut last: Option<Run> = None;
    for_each_run(fs, ino, inode, &mut |run| {
        frag.extents += 1;
        frag.blocks += run.len;
        let joins = last.is_some_and(|prev| {
            prev.logical + prev.len == run.logical && prev.physical + prev.len == run.physical
        });
        if !joins {
            frag.runs += 1;
        }
        last = Some(run);
        ControlFlow::Continue(())
    })?;
    Ok(frag)
}
