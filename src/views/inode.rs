//! One inode, everything known about it, before any formatting: the record, its xattrs and
//! where they live, the data map (capped for block maps), checksums, the htree root, the bitmap
//! bit and the problems found; the formatter writes it as debugfs `stat` text or as JSON
//! (this layer does not name the formatter: see tests/layers.rs).

use crate::error::{Problem, ProblemKind};
use crate::reader::dir;
use crate::reader::extent::{BlockMapWalk, MapKind, MapRun};
use crate::reader::fileblocks::{self, Fragmentation, MapEvent};
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, DataMap, Inode};
use crate::reader::xattr;
use std::ops::ControlFlow;

/// Everything known about one inode, for both output forms.
pub struct Report<'a> {
    /// The inode number.
    pub ino: u32,
    /// Its raw record (base and large part).
    pub raw: &'a [u8],
    /// The decoded record.
    pub inode: Inode,
    /// Its extended attributes, in-inode and in the xattr block.
    pub xattrs: inode::InodeXattrs<'a>,
    /// Its data map (extent tree, block map, inline data).
    pub map: DataMap,
    /// The stored and the computed inode checksum, on metadata_csum filesystems.
    pub csum: Option<(u32, u32)>,
    /// The htree root of an indexed directory.
    pub htree: Option<dir::DxRoot>,
    /// Everything found wrong with the inode, one message each.
    pub problems: Vec<Problem>,
    /// Blocks the inode refers to that a metadata-only image (e2image) does not hold: not
    /// damage, and not in `problems`.
    pub absent: Vec<Problem>,
    /// Block-map runs beyond the [`MAX_LISTED`] kept in `map` (the text walks the map again).
    pub runs_omitted: u64,
    /// Extents and contiguous runs (files with a block map or extent tree).
    pub frag: Option<Fragmentation>,
    /// Whether the inode bitmap marks the inode in use (`None` when it cannot be read).
    pub allocated: Option<bool>,
    /// Each xattr's name as debugfs builds it (its own prefix table, cut at a NUL byte).
    pub debugfs_names: Vec<Vec<u8>>,
}

/// Runs or extents listed in JSON (and kept in memory) before the rest are only counted.
pub const MAX_LISTED: usize = 4096;

/// Walk a block map keeping at most [`MAX_LISTED`] runs; returns the walk and how many runs
/// were left out.
fn capped_block_map(fs: &Filesystem, ino: u32, inode: &Inode) -> (BlockMapWalk, u64) {
    let mut runs = Vec::new();
    let mut omitted = 0u64;
    let sum = fileblocks::walk_block_map(
        fs,
        &inode.block,
        inode::walk_limits(fs, ino, inode),
        &mut |event| {
            if runs.len() < MAX_LISTED {
                runs.push(map_run(event));
            } else {
                omitted += 1;
            }
            ControlFlow::Continue(())
        },
    );
    let mut problems = sum.problems;
    if sum.problems_omitted > 0 {
        problems.push(Problem::new(
            ProblemKind::BlockMap,
            format!("... and {} more block map problems", sum.problems_omitted),
        ));
    }
    (
        BlockMapWalk {
            runs,
            total: sum.total,
            problems,
        },
        omitted,
    )
}

/// A block-map walk event as a run of the data map.
pub fn map_run(event: MapEvent) -> MapRun {
    match event {
        MapEvent::Data(run) => MapRun {
            kind: MapKind::Data(run.logical),
            physical: run.physical,
            len: run.len,
        },
        MapEvent::Mapping { kind, physical } => MapRun {
            kind,
            physical,
            len: 1,
        },
    }
}

/// Is `ino` marked in use in its group's inode bitmap?
fn inode_allocated(fs: &Filesystem, ino: u32) -> Option<bool> {
    let ipg = fs.geo.inodes_per_group.max(1);
    let gd = fs.desc(ino.checked_sub(1)? / ipg).ok()?;
    let mut bm = Vec::new();
    crate::reader::bitmap::group_inode_bitmap(fs, &gd, &mut bm).ok()?;
    Some(crate::reader::bitmap::test_bit(
        &bm,
        ((ino - 1) % ipg) as usize,
    ))
}

/// libext2fs' name prefixes (`ext2fs_xattrs_read`): index 9 (encryption) and unknown indexes
/// have none, so their names print bare.
fn debugfs_prefix(index: u8) -> &'static [u8] {
    match index {
        1 => b"user.",
        2 => b"system.posix_acl_access",
        3 => b"system.posix_acl_default",
        4 => b"trusted.",
        5 => b"lustre.",
        6 => b"security.",
        7 => b"system.",
        8 => b"system.richacl",
        10 => b"gnu.",
        _ => b"",
    }
}

/// The names debugfs shows for the xattrs of an inode, in the order `inode_xattrs` lists them
/// (body, then block); empty when the areas cannot be read the same way.
fn debugfs_xattr_names(fs: &Filesystem, raw: &[u8], inode: &Inode) -> Vec<Vec<u8>> {
    let name = |idx: u8, raw_name: &[u8]| {
        let mut bytes = debugfs_prefix(idx).to_vec();
        bytes.extend_from_slice(raw_name);
        let end = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
        bytes.truncate(end);
        bytes
    };
    let mut out = Vec::new();
    if let Ok(ib) = xattr::parse_ibody(raw, inode.extra_isize) {
        out.extend(ib.entries.iter().map(|e| name(e.index, e.raw_name)));
    }
    let blk = inode.file_acl;
    if blk != 0 && blk >= fs.geo.first_data_block && blk < fs.geo.blocks_count {
        if let Ok(block) = fs.block(blk) {
            let seed = fs.sb.has_metadata_csum().then(|| fs.csum_seed());
            if let Ok(xb) = xattr::parse_block(&block, blk, seed) {
                out.extend(xb.entries.iter().map(|e| name(e.index, e.raw_name)));
            }
        }
    }
    out
}

/// Everything known about inode `ino` whose raw record is `raw`; an error when its data map or
/// htree root cannot be read at all.
pub fn report<'a>(fs: &Filesystem, ino: u32, raw: &'a [u8]) -> crate::Result<Report<'a>> {
    let inode = Inode::parse(raw);
    let xattrs = inode::inode_xattrs(fs, raw, &inode);
    let (map, runs_omitted) = data_map(fs, ino, &inode, &xattrs);
    let frag = matches!(map, DataMap::Blocks(_) | DataMap::Extents(_))
        .then(|| fileblocks::fragmentation(fs, ino, &inode).ok())
        .flatten();
    let mut problems = xattrs.problems.clone();
    let csum = checksums(fs, ino, raw, &mut problems);
    if raw.len() > 128 && 128 + usize::from(inode.extra_isize) > raw.len() {
        problems.push(Problem::new(
            ProblemKind::Inode,
            format!(
                "i_extra_isize {} exceeds the {}-byte inode",
                inode.extra_isize,
                raw.len()
            ),
        ));
    }
    match &map {
        DataMap::Extents(w) => problems.extend(w.problems.iter().cloned()),
        DataMap::Blocks(w) => problems.extend(w.problems.iter().cloned()),
        DataMap::Unreadable(e) => problems.push(e.clone()),
        _ => {}
    }
    if inode.has_flag(inode::INLINE_DATA_FL) && xattrs.inline_data().is_none() {
        problems.push(Problem::new(
            ProblemKind::InlineData,
            "INLINE_DATA flag set but no system.data attribute",
        ));
    }
    let htree = htree_root(fs, ino, &inode, &mut problems);
    let debugfs_names = debugfs_xattr_names(fs, raw, &inode);
    // Blocks an e2image does not hold are not damage: reported apart from the problems.
    let (absent, problems) = problems
        .into_iter()
        .partition(|p| p.message.contains(crate::error::ABSENT));
    Ok(Report {
        ino,
        raw,
        inode,
        xattrs,
        map,
        csum,
        htree,
        problems,
        absent,
        runs_omitted,
        frag,
        allocated: inode_allocated(fs, ino),
        debugfs_names,
    })
}

/// The inode's data map and how many block-map runs were left out of it. A block map is walked
/// with a cap (a hostile indirect tree must not fill memory); devices, fast symlinks, extents
/// and inline data go through [`inode::data_map`].
fn data_map(
    fs: &Filesystem,
    ino: u32,
    inode: &Inode,
    xattrs: &inode::InodeXattrs<'_>,
) -> (DataMap, u64) {
    let block_mapped = !inode.has_flag(inode::EXTENTS_FL)
        && !inode.has_flag(inode::INLINE_DATA_FL)
        && !inode.is_fast_symlink()
        && !matches!(inode.file_type(), 0o060000 | 0o020000);
    if block_mapped {
        let (walk, omitted) = capped_block_map(fs, ino, inode);
        (DataMap::Blocks(walk), omitted)
    } else {
        (inode::data_map(fs, ino, inode, xattrs.inline_data()), 0)
    }
}

/// The stored and computed checksums on metadata_csum filesystems; a mismatch is a problem.
fn checksums(
    fs: &Filesystem,
    ino: u32,
    raw: &[u8],
    problems: &mut Vec<Problem>,
) -> Option<(u32, u32)> {
    if !fs.sb.has_metadata_csum() {
        return None;
    }
    let stored = inode::stored_checksum(raw);
    let computed = inode::inode_checksum(fs.csum_seed(), ino, raw);
    if !inode::inode_checksum_ok(fs.csum_seed(), ino, raw) {
        problems.push(Problem::new(
            ProblemKind::Inode,
            format!("inode checksum 0x{stored:08x}, should be 0x{computed:08x}"),
        ));
    }
    Some((stored, computed))
}

/// The htree root of an indexed directory; an unreadable root is a problem.
fn htree_root(
    fs: &Filesystem,
    ino: u32,
    inode: &Inode,
    problems: &mut Vec<Problem>,
) -> Option<dir::DxRoot> {
    if !(inode.is_dir() && inode.has_flag(inode::INDEX_FL)) {
        return None;
    }
    let root = fileblocks::map_block(fs, ino, inode, 0).and_then(|mapped| {
        let block = mapped.ok_or_else(|| {
            crate::Error::corrupt(crate::ProblemKind::Directory, "no logical block 0")
        })?;
        dir::parse_dx_root(&fs.block(block)?)
    });
    match root {
        Ok(r) => Some(r),
        Err(e) => {
            problems.push(Problem::new(
                ProblemKind::Directory,
                format!("htree root: {e}"),
            ));
            None
        }
    }
}

/// The report debugfs `logdump -i` prints for a logged copy `copy` of inode `ino`: the record
/// as logged, but the xattrs of the inode as the filesystem holds it now (`disk`; debugfs reads
/// them by number).
pub fn logged_report<'a>(
    fs: &Filesystem,
    ino: u32,
    copy: &'a [u8],
    disk: &'a [u8],
) -> crate::Result<Report<'a>> {
    let mut logged = report(fs, ino, copy)?;
    let on_disk = Inode::parse(disk);
    logged.xattrs = inode::inode_xattrs(fs, disk, &on_disk);
    logged.debugfs_names = debugfs_xattr_names(fs, disk, &on_disk);
    Ok(logged)
}
