//! Directories: linear entry blocks (with the metadata_csum tail), htree index blocks (dx root and
//! dx node), inline directories, and path -> inode resolution.
//!
//! Names are raw bytes: casefolded and encrypted directories store names the kernel transforms, and
//! we never pretend to decode them. Every walk is bounded by the block it reads and the directory's
//! size; a malformed block ends in a problem, never a loop.

use crate::error::{Error, LibError, Problem, ProblemKind, Result};
use crate::reader::csum::crc32c_raw;
use crate::reader::extent::BlockCsum;
use crate::reader::fileblocks;
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, Inode};
use crate::reader::ondisk::dir::{
    DirEntry2, DirEntryTail, DxCountLimit, DxEntry, DxNode, DxRoot as RawDxRoot, InlineDirHeader,
    DX_ROOT_INFO_OFFSET,
};
use crate::reader::ondisk::{self, OnDisk};
use std::ops::ControlFlow;

pub use crate::reader::ondisk::inode::{CASEFOLD_FL, ENCRYPT_FL, ROOT_INO};
/// file_type of the checksum tail entry.
pub const TAIL_FILE_TYPE: u8 = crate::reader::ondisk::dir::TAIL_FILE_TYPE;
/// Size of the checksum tail entry.
pub const TAIL_SIZE: usize = DirEntryTail::SIZE;

/// One directory entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirEntry<'a> {
    /// Offset in the block.
    pub offset: usize,
    /// Inode.
    pub inode: u32,
    /// Rec len.
    pub rec_len: u32,
    /// File type.
    pub file_type: u8,
    /// Raw name bytes (casefolded or encrypted names are shown as stored).
    pub name: &'a [u8],
}

/// `ext4_rec_len_from_disk`: 64 KiB blocks encode lengths above 65535 in the low bits.
pub fn rec_len_from_disk(dlen: u16, block_size: usize) -> usize {
    let len = usize::from(dlen);
    if block_size < 65536 {
        return len;
    }
    if dlen == u16::MAX || dlen == 0 {
        return block_size;
    }
    (len & 65532) | ((len & 3) << 16)
}

/// Live entries of a directory as (name, inode) pairs, `.` and `..` included (what the check
/// names paths with). Blocks that do not parse are skipped.
pub fn live_entries(fs: &Filesystem, ino: u32, raw: &[u8], inode: &Inode) -> Vec<(Vec<u8>, u32)> {
    let mut out = Vec::new();
    if inode.has_flag(inode::INLINE_DATA_FL) {
        out.push((b"..".to_vec(), InlineDirHeader::parent_of(&inode.block)));
        for area in inline_areas(fs, raw, inode) {
            for entry in AreaEntries::new(&area, 0) {
                if entry.inode != 0 {
                    out.push((entry.name.to_vec(), entry.inode));
                }
            }
        }
        return out;
    }
    let Ok(blocks) = dir_blocks(fs, ino, inode) else {
        return out;
    };
    for (_, pblk) in blocks {
        let Ok(block) = fs.block(pblk) else { continue };
        for entry in AreaEntries::new(&block, 0) {
            if entry.inode != 0 {
                out.push((entry.name.to_vec(), entry.inode));
            }
        }
    }
    out
}

/// One raw entry of a directory area, as [`AreaEntries`] walks it.
#[derive(Clone, Copy, Debug)]
pub struct AreaEntry<'a> {
    /// Offset in the area.
    pub offset: usize,
    /// Inode number (0: an unused entry).
    pub inode: u32,
    /// Record length, decoded (`ext4_rec_len_from_disk`).
    pub rec_len: usize,
    /// File type byte.
    pub file_type: u8,
    /// Raw name bytes.
    pub name: &'a [u8],
}

/// The entries of an area (a block, or an inline area whose entries may be 8 bytes short of a
/// whole 12), in place: stops at the first entry whose lengths do not fit, kept in
/// [`AreaEntries::bad`] as (offset, rec_len, name_len). Each step advances at least 8 bytes.
#[derive(Clone)]
pub struct AreaEntries<'a> {
    area: &'a [u8],
    pos: usize,
    min_rec: usize,
    /// The first entry whose lengths do not fit: (offset, rec_len, name_len).
    pub bad: Option<(usize, usize, usize)>,
}

impl<'a> AreaEntries<'a> {
    /// The entries of `area`; `min_rec` is the least record length (0: 12, a whole entry).
    pub fn new(area: &'a [u8], min_rec: usize) -> AreaEntries<'a> {
        AreaEntries {
            area,
            pos: 0,
            min_rec: if min_rec == 0 { 12 } else { min_rec },
            bad: None,
        }
    }
    /// The number of entries that fit and the first that does not, if any.
    pub fn survey(area: &'a [u8], min_rec: usize) -> (usize, Option<(usize, usize, usize)>) {
        let mut it = AreaEntries::new(area, min_rec);
        let count = it.by_ref().count();
        (count, it.bad)
    }
}

impl<'a> Iterator for AreaEntries<'a> {
    type Item = AreaEntry<'a>;

    fn next(&mut self) -> Option<AreaEntry<'a>> {
        let (area, pos) = (self.area, self.pos);
        let area_len = area.len();
        if pos >= area_len || self.bad.is_some() {
            return None;
        }
        let header = DirEntry2::decode_fast_at(area, pos);
        let rec_len = header.map_or(0, |h| rec_len_from_disk(h.rec_len, area_len.max(1024)));
        let name_len = header.map_or(0, |h| usize::from(h.name_len));
        let Some(head) = header.filter(|_| {
            rec_len >= self.min_rec
                && rec_len % 4 == 0
                && pos + rec_len <= area_len
                && name_len + 8 <= rec_len
        }) else {
            self.bad = Some((pos, rec_len, name_len));
            return None;
        };
        self.pos = pos + rec_len;
        Some(AreaEntry {
            offset: pos,
            inode: head.inode,
            rec_len,
            file_type: head.file_type,
            name: area.get(pos + 8..pos + 8 + name_len).unwrap_or(&[]),
        })
    }
}

/// The inline areas of an inline directory: i_block after the 4-byte parent, and `system.data`.
pub fn inline_areas(fs: &Filesystem, raw: &[u8], inode: &Inode) -> Vec<Vec<u8>> {
    let mut areas = vec![inode.block.get(4..).unwrap_or(&[]).to_vec()];
    let xa = inode::inode_xattrs(fs, raw, inode);
    if let Some(val) = xa.inline_data().filter(|d| !d.is_empty()) {
        areas.push(val.to_vec());
    }
    areas
}

/// A decoded linear directory block.
#[derive(Clone, Debug, Default)]
pub struct DirBlock<'a> {
    /// Live entries (inode != 0), in block order.
    pub entries: Vec<DirEntry<'a>>,
    /// The checksum tail, when the block has one and the caller gave a seed.
    pub csum: Option<BlockCsum>,
    /// Problems.
    pub problems: Vec<Problem>,
}

/// Checksum of a directory leaf block: crc32c(inode seed, block before the 12-byte tail).
pub fn dirblock_csum(seed: u32, block: &[u8]) -> Option<BlockCsum> {
    let tail_at = block.len().checked_sub(TAIL_SIZE)?;
    let tail: DirEntryTail = ondisk::decode_at(block, tail_at).ok()?;
    if !tail.is_tail() {
        return None;
    }
    Some(BlockCsum {
        stored: tail.checksum,
        computed: crc32c_raw(seed, block.get(..tail_at)?),
    })
}

/// Walk the entries of a linear directory block (also the leaf blocks of an htree, and the
/// dx root/node blocks, whose index lives inside entries with inode 0). `csum_seed` is the
/// directory's inode checksum seed with metadata_csum.
pub fn parse_dir_block(block: &[u8], csum_seed: Option<u32>) -> DirBlock<'_> {
    let bs = block.len();
    let mut out = DirBlock::default();
    let mut pos = 0usize;
    // Each step advances by at least 12 bytes, so the loop ends within bs/12 steps.
    while let Ok(entry) = ondisk::decode_at::<DirEntry2>(block, pos) {
        let ino = entry.inode;
        let rec_len = rec_len_from_disk(entry.rec_len, bs);
        let name_len = usize::from(entry.name_len);
        let file_type = entry.file_type;
        if rec_len < 12 || rec_len % 4 != 0 || pos + rec_len > bs || 8 + name_len > rec_len {
            out.problems.push(Problem::new(ProblemKind::Directory, format!(
                "directory entry at offset {pos}: rec_len {rec_len}, name_len {name_len} do not fit the block"
            )));
            break;
        }
        if ino != 0 {
            let at = pos + DirEntry2::SIZE;
            let name = block.get(at..at + name_len).unwrap_or(&[]);
            out.entries.push(DirEntry {
                offset: pos,
                inode: ino,
                rec_len: rec_len as u32,
                file_type,
                name,
            });
        }
        pos += rec_len;
    }
    if let Some(seed) = csum_seed {
        out.csum = dirblock_csum(seed, block);
        if let Some(csum) = out.csum.filter(|c| !c.ok()) {
            out.problems.push(Problem::new(
                ProblemKind::Directory,
                format!(
                    "directory block checksum 0x{:08x}, should be 0x{:08x}",
                    csum.stored, csum.computed
                ),
            ));
        }
    }
    out
}

/// The count/limit header of an htree index block and its entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DxIndex {
    /// Limit.
    pub limit: u16,
    /// Count.
    pub count: u16,
    /// (hash, block) pairs; the first entry's hash is implicitly 0.
    pub entries: Vec<(u32, u32)>,
}

/// An htree root (logical block 0 of an indexed directory).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DxRoot {
    /// Hash version.
    pub hash_version: u8,
    /// Info length.
    pub info_length: u8,
    /// Indirect levels.
    pub indirect_levels: u8,
    /// Index.
    pub index: DxIndex,
}

fn dx_index(block: &[u8], at: usize) -> Result<DxIndex> {
    let cl: DxCountLimit = ondisk::decode_at(block, at)?;
    let (limit, count) = (cl.limit, cl.count);
    let room = block.len().saturating_sub(at) / DxEntry::SIZE;
    if count == 0 || count > limit || usize::from(limit) > room {
        return Err(Error::corrupt(
            crate::ProblemKind::Directory,
            format!("htree index: count {count}, limit {limit}, room for {room}"),
        ));
    }
    // The count/limit overlays the first entry's hash, which is implicitly 0.
    let entries = (0..usize::from(count))
        .map_while(|i| ondisk::decode_at::<DxEntry>(block, at + DxEntry::SIZE * i).ok())
        .enumerate()
        .map(|(i, e)| (if i == 0 { 0 } else { e.hash }, e.block))
        .collect();
    Ok(DxIndex {
        limit,
        count,
        entries,
    })
}

/// Decode a dx root block.
pub fn parse_dx_root(block: &[u8]) -> Result<DxRoot> {
    let root: RawDxRoot = ondisk::decode(block)?;
    // "." (rec_len 12) then ".." whose rec_len covers the rest; the root info follows.
    if root.dot_name[0] != b'.'
        || usize::from(root.dot.rec_len) != DirEntry2::SIZE + root.dot_name.len()
        || root.dotdot_name[..2] != *b".."
    {
        return Err(Error::corrupt(
            crate::ProblemKind::Directory,
            "htree root: no '.' and '..' entries",
        ));
    }
    let info_length = root.info.info_length;
    let levels = root.info.indirect_levels;
    if info_length != 8 {
        return Err(Error::corrupt(
            crate::ProblemKind::Directory,
            format!("htree root: info length {info_length}, should be 8"),
        ));
    }
    if levels > 2 {
        return Err(Error::corrupt(
            crate::ProblemKind::Directory,
            format!("htree root: {levels} indirect levels (at most 2 without large_dir, 3 with)"),
        ));
    }
    Ok(DxRoot {
        hash_version: root.info.hash_version,
        info_length,
        indirect_levels: levels,
        index: dx_index(block, DX_ROOT_INFO_OFFSET + usize::from(info_length))?,
    })
}

/// Decode a dx node block (an empty entry spanning the block, then the index).
pub fn parse_dx_node(block: &[u8]) -> Result<DxIndex> {
    let node: DxNode = ondisk::decode(block)?;
    if node.fake.inode != 0 || rec_len_from_disk(node.fake.rec_len, block.len()) != block.len() {
        return Err(Error::corrupt(
            crate::ProblemKind::Directory,
            "htree node: no empty entry spanning the block",
        ));
    }
    dx_index(block, DxNode::SIZE)
}

/// The (logical, physical) blocks of a directory, within its i_size, in logical order as the data
/// map lists them. Bounded by i_size / block size, by the number of blocks in the filesystem (a
/// directory cannot hold more) and by the map itself; the map is walked lazily, never expanded
/// beyond what is returned. Prefer [`for_each_dir_block`], which holds nothing.
pub fn dir_blocks(fs: &Filesystem, ino: u32, inode: &Inode) -> Result<Vec<(u64, u64)>> {
    let nblocks = inode.size.div_ceil(fs.block_size());
    let mut out = Vec::new();
    for_each_dir_block(fs, ino, inode, false, &mut |logical, physical| {
        if logical < nblocks {
            out.push((logical, physical));
        }
        ControlFlow::Continue(())
    })?;
    Ok(out)
}

/// Visit the (logical, physical) blocks of a directory in map order, as libext2fs'
/// `ext2fs_block_iterate3` feeds `ext2fs_dir_iterate2`: every mapped block, uninitialised extents
/// included (`all` also past i_size; otherwise only blocks inside i_size). At most as many blocks
/// as the filesystem has are visited, whatever the map claims.
pub fn for_each_dir_block(
    fs: &Filesystem,
    ino: u32,
    inode: &Inode,
    all: bool,
    visit: &mut dyn FnMut(u64, u64) -> ControlFlow<()>,
) -> Result<()> {
    let nblocks = inode.size.div_ceil(fs.block_size());
    let mut budget = fs.geo.blocks_count;
    let sum = fileblocks::for_each_run(fs, ino, inode, &mut |run| {
        for offset in 0..run.len {
            let logical = run.logical + offset;
            if !all && logical >= nblocks {
                break;
            }
            if budget == 0 {
                return ControlFlow::Break(());
            }
            budget -= 1;
            visit(logical, run.physical + offset)?;
        }
        ControlFlow::Continue(())
    })
    .map_err(|error| {
        Error::corrupt(
            crate::ProblemKind::Directory,
            format!("directory {ino}: {error}"),
        )
    })?;
    let _ = sum;
    Ok(())
}

/// A directory entry as `ext2fs_dir_iterate2` hands it to its callback (debugfs `ls`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IterEntry<'a> {
    /// Inode number (0 for an empty entry).
    pub inode: u32,
    /// rec_len as stored (not decoded), as debugfs prints it.
    pub rec_len_raw: u16,
    /// Length of the name in bytes.
    pub name_len: u8,
    /// File type byte (with the filetype feature).
    pub file_type: u8,
    /// The name's bytes.
    pub name: &'a [u8],
    /// Found in the slack of a live entry (DIRENT_DELETED_FILE).
    pub deleted: bool,
    /// Offset in the buffer.
    pub offset: usize,
}

/// How `ext2fs_process_dir_block` treats a buffer.
#[derive(Clone, Copy, Debug, Default)]
pub struct IterFlags {
    /// DIRENT_FLAG_INCLUDE_REMOVED: look for deleted entries in slack space.
    pub include_removed: bool,
    /// The buffer is part of an inline directory (no checksum tail there).
    pub inline: bool,
    /// The filesystem has metadata_csum (a 12-byte tail ends each leaf block).
    pub metadata_csum: bool,
}

/// Why a directory walk stopped early.
pub const DIR_CORRUPTED: LibError = LibError::DirCorrupted;

/// `ext2fs_get_rec_len`: the stored length below 64 KiB blocks (0 stays 0, a corrupt entry).
fn rec_len_lib(raw: u16, block_size: usize) -> usize {
    if block_size < 65536 {
        usize::from(raw)
    } else if raw == u16::MAX || raw == 0 {
        block_size
    } else {
        let len = usize::from(raw);
        (len & 65532) | ((len & 3) << 16)
    }
}

/// `ext2fs_validate_entry`: does a chain of plausible entries lead from `offset` exactly to
/// `final_offset`?
fn validate_entry(buf: &[u8], block_size: usize, mut offset: usize, final_offset: usize) -> bool {
    while offset < final_offset && offset + 12 <= block_size {
        // Fewer than 8 bytes left means offset >= final_offset - 4: no chain can end there.
        let Ok(entry) = ondisk::decode_at::<DirEntry2>(buf, offset) else {
            return false;
        };
        let rec_len = rec_len_lib(entry.rec_len, block_size);
        let name_len = usize::from(entry.name_len);
        offset += rec_len;
        if rec_len < 8 || rec_len % 4 != 0 || name_len + 8 > rec_len {
            return false;
        }
    }
    offset == final_offset
}

/// Iterate the entries of one directory buffer exactly as libext2fs' `ext2fs_process_dir_block`
/// does with DIRENT_FLAG_INCLUDE_EMPTY (entries with inode 0 included, the checksum tail left
/// out), optionally with deleted entries. Bounded: every step advances at least 4 bytes. Errors
/// with [`DIR_CORRUPTED`] where libext2fs aborts (entries already visited stay visited).
pub fn iterate_buffer(
    buf: &[u8],
    block_size: usize,
    flags: IterFlags,
    visit: &mut dyn FnMut(IterEntry<'_>) -> ControlFlow<()>,
) -> std::result::Result<ControlFlow<()>, LibError> {
    let buflen = buf.len();
    if buflen < 8 {
        return Err(DIR_CORRUPTED);
    }
    let csum_size = if flags.metadata_csum { TAIL_SIZE } else { 0 };
    let mut offset = 0usize;
    let mut next_real = 0usize;
    while offset < buflen - 8 {
        // offset + 8 < buflen: the header is always there.
        let header = ondisk::decode_at::<DirEntry2>(buf, offset).map_err(|_| DIR_CORRUPTED)?;
        let raw_rec = header.rec_len;
        let rec_len = rec_len_lib(raw_rec, block_size);
        let name_len = header.name_len;
        let file_type = header.file_type;
        if offset + rec_len > buflen
            || rec_len < 8
            || rec_len % 4 != 0
            || usize::from(name_len) + 8 > rec_len
        {
            return Err(DIR_CORRUPTED);
        }
        let ino = header.inode;
        let is_tail = ino == 0
            && !flags.inline
            && csum_size != 0
            && offset == buflen - csum_size
            && usize::from(raw_rec) == csum_size
            && name_len == 0
            && file_type == TAIL_FILE_TYPE;
        if !is_tail {
            let entry = IterEntry {
                inode: ino,
                rec_len_raw: raw_rec,
                name_len,
                file_type,
                name: buf
                    .get(offset + 8..offset + 8 + usize::from(name_len))
                    .unwrap_or(&[]),
                deleted: next_real > offset,
                offset,
            };
            if visit(entry).is_break() {
                return Ok(ControlFlow::Break(()));
            }
        }
        if next_real == offset {
            next_real += rec_len;
        }
        if flags.include_removed {
            let size = (usize::from(name_len) + 11) & !3;
            if rec_len != size {
                let final_offset = offset + rec_len;
                offset += size;
                while offset < final_offset
                    && !validate_entry(buf, block_size, offset, final_offset)
                {
                    offset += 4;
                }
                continue;
            }
        }
        offset += rec_len;
    }
    Ok(ControlFlow::Continue(()))
}

/// Walk every entry of directory `ino` as debugfs' `ls` sees them (`ext2fs_dir_iterate2` with
/// DIRENT_FLAG_INCLUDE_EMPTY, plus deleted entries with `include_removed`): inline directories
/// yield `.` and `..` first; block directories every mapped block in map order. A leaf block whose
/// checksum tail does not match ends the walk with an error, as libext2fs does.
pub fn iterate_dir(
    fs: &Filesystem,
    ino: u32,
    include_removed: bool,
    visit: &mut dyn FnMut(IterEntry<'_>) -> ControlFlow<()>,
) -> Result<()> {
    let raw = fs.inode_raw(ino)?;
    let inode = Inode::parse(&raw);
    if !inode.is_dir() {
        return Err(Error::Invalid(format!("inode {ino} is not a directory")));
    }
    iterate_dir_inode(fs, ino, &raw, &inode, include_removed, visit)
}

/// [`iterate_dir`] over directory `ino` already read (`raw` as stored, `inode` decoded from it):
/// what a scan that has the record in hand calls without reading it again. Its blocks go through
/// the block cache (a directory looked up again, as when naming paths, is read once).
pub fn iterate_dir_inode(
    fs: &Filesystem,
    ino: u32,
    raw: &[u8],
    inode: &Inode,
    include_removed: bool,
    visit: &mut dyn FnMut(IterEntry<'_>) -> ControlFlow<()>,
) -> Result<()> {
    iterate_dir_inode_with(fs, ino, raw, inode, include_removed, false, visit)
}

/// [`iterate_dir_inode`] for a scan that walks each directory once (`ncheck`'s walk of every
/// directory): the blocks are read past the block cache into one buffer, so that thousands of
/// directory blocks neither allocate one by one nor push out of the cache the blocks read again.
/// The entries and errors are the same.
pub fn iterate_dir_inode_once(
    fs: &Filesystem,
    ino: u32,
    raw: &[u8],
    inode: &Inode,
    include_removed: bool,
    visit: &mut dyn FnMut(IterEntry<'_>) -> ControlFlow<()>,
) -> Result<()> {
    iterate_dir_inode_with(fs, ino, raw, inode, include_removed, true, visit)
}

fn iterate_dir_inode_with(
    fs: &Filesystem,
    ino: u32,
    raw: &[u8],
    inode: &Inode,
    include_removed: bool,
    once: bool,
    visit: &mut dyn FnMut(IterEntry<'_>) -> ControlFlow<()>,
) -> Result<()> {
    let bs = fs.block_size() as usize;
    let mut flags = IterFlags {
        include_removed,
        inline: false,
        metadata_csum: fs.sb.has_metadata_csum(),
    };
    let fail = |message: &str| {
        Error::corrupt(
            crate::ProblemKind::Directory,
            format!("directory {ino}: {message}"),
        )
    };
    if inode.has_flag(inode::INLINE_DATA_FL) {
        flags.inline = true;
        return iterate_inline_dir(fs, ino, raw, inode, flags, visit);
    }
    let seed = dir_csum_seed(fs, ino, inode);
    let mut err = None;
    let mut once_buf = Vec::new();
    for_each_dir_block(fs, ino, inode, true, &mut |_, p| {
        let read = if once {
            fs.block_into(p, &mut once_buf).map(|()| None)
        } else {
            fs.block(p).map(Some)
        };
        let cached;
        let block: &[u8] = match read {
            Ok(Some(b)) => {
                cached = b;
                &cached
            }
            Ok(None) => &once_buf,
            Err(e) => {
                err = Some(e);
                return ControlFlow::Break(());
            }
        };
        if !dir_block_csum_verifies(seed, block) {
            err = Some(fail(&format!(
                "block {p}: {}",
                crate::error::ext2_err::DIR_CSUM_INVALID
            )));
            return ControlFlow::Break(());
        }
        match iterate_buffer(block, bs, flags, visit) {
            Ok(c) => c,
            Err(m) => {
                err = Some(fail(&format!("block {p}: {m}")));
                ControlFlow::Break(())
            }
        }
    })?;
    err.map_or(Ok(()), Err)
}

/// The entries of an inline-data directory: `.` and the parent kept in `i_block[0]` first (as
/// `ext2fs_inline_data_dir_iterate` makes them up), then the entries in the rest of `i_block`, then
/// those in the `system.data` xattr.
fn iterate_inline_dir(
    fs: &Filesystem,
    ino: u32,
    raw: &[u8],
    inode: &Inode,
    flags: IterFlags,
    visit: &mut dyn FnMut(IterEntry<'_>) -> ControlFlow<()>,
) -> Result<()> {
    let bs = fs.block_size() as usize;
    let fail = |message: &str| {
        Error::corrupt(
            crate::ProblemKind::Directory,
            format!("directory {ino}: {message}"),
        )
    };
    let parent = InlineDirHeader::parent_of(&inode.block);
    for (entry_ino, name) in [(ino, &b"."[..]), (parent, &b".."[..])] {
        let entry = IterEntry {
            inode: entry_ino,
            rec_len_raw: 12,
            name_len: name.len() as u8,
            file_type: 0,
            name,
            deleted: false,
            offset: 0,
        };
        if visit(entry).is_break() {
            return Ok(());
        }
    }
    let body = inode.block.get(4..).unwrap_or(&[]);
    if iterate_buffer(body, bs, flags, visit)
        .map_err(|e| fail(&e.to_string()))?
        .is_break()
    {
        return Ok(());
    }
    let xattrs = inode::inode_xattrs(fs, raw, inode);
    if let Some(value) = xattrs.inline_data().filter(|v| !v.is_empty()) {
        let _ = iterate_buffer(value, bs, flags, visit).map_err(|e| fail(&e.to_string()))?;
    }
    Ok(())
}

/// `ext2fs_dir_block_csum_verify`: true without metadata_csum; otherwise a leaf block's tail
/// checksum must match, and a leaf block without its checksum tail fails too (unless it is an
/// htree node, whose checksum lives in its dx tail: not verified here).
fn dir_block_csum_verifies(seed: Option<u32>, block: &[u8]) -> bool {
    match seed.map(|s| dirblock_csum(s, block)) {
        None => true,
        Some(None) => looks_like_dx_node(block),
        Some(Some(c)) => c.ok(),
    }
}

/// `__get_dx_countlimit`'s test: a dx node (one empty entry spanning the block) or a dx root
/// (`.` of 12 bytes, then `..` spanning the rest with an 8-byte root info).
fn looks_like_dx_node(block: &[u8]) -> bool {
    let bs = block.len();
    let Ok(first) = ondisk::decode_at::<DirEntry2>(block, 0) else {
        return false;
    };
    let rec = rec_len_lib(first.rec_len, bs);
    if rec == bs && first.name_len == 0 {
        return true;
    }
    if rec != 12 {
        return false;
    }
    let Ok(second) = ondisk::decode_at::<DirEntry2>(block, 12) else {
        return false;
    };
    rec_len_lib(second.rec_len, bs) == bs - 12 && second.name_len == 2
}

/// Entries of an inline directory: i_block holds the parent inode then entries; `system.data`
/// continues them. Returned as (name, inode) pairs, ".." included.
fn inline_dir_entries(fs: &Filesystem, raw: &[u8], inode: &Inode) -> Vec<(Vec<u8>, u32)> {
    let parent = ondisk::decode::<InlineDirHeader>(&inode.block).map_or(0, |h| h.parent);
    let mut out = vec![(b"..".to_vec(), parent)];
    let mut push = |area: &[u8]| {
        // Inline areas have no tail and may be any multiple of 4.
        let mut pos = 0;
        while let Ok(entry) = ondisk::decode_at::<DirEntry2>(area, pos) {
            let rec_len = usize::from(entry.rec_len);
            let name_len = usize::from(entry.name_len);
            if rec_len < DirEntry2::SIZE
                || pos + rec_len > area.len()
                || DirEntry2::SIZE + name_len > rec_len
            {
                break;
            }
            if entry.inode != 0 {
                let at = pos + DirEntry2::SIZE;
                out.push((
                    area.get(at..at + name_len).unwrap_or(&[]).to_vec(),
                    entry.inode,
                ));
            }
            pos += rec_len;
        }
    };
    push(inode.block.get(InlineDirHeader::SIZE..).unwrap_or(&[]));
    let xa = inode::inode_xattrs(fs, raw, inode);
    if let Some(value) = xa
        .items
        .iter()
        .find(|x| x.name == "system.data")
        .and_then(|x| x.value.as_deref())
    {
        push(value);
    }
    out
}

fn names_match(stored: &[u8], wanted: &[u8], casefold: bool) -> bool {
    stored == wanted || (casefold && stored.eq_ignore_ascii_case(wanted))
}

/// Look `name` up in directory `dir` (linear scan of every block: correct for htree directories
/// too, whatever the hash). Casefolded directories also match ASCII case-insensitively.
pub fn lookup(fs: &Filesystem, dir: u32, name: &[u8]) -> Result<Option<u32>> {
    let raw = fs.inode_raw(dir)?;
    let inode = Inode::parse(&raw);
    if !inode.is_dir() {
        return Err(Error::Invalid(format!("inode {dir} is not a directory")));
    }
    let casefold = inode.has_flag(CASEFOLD_FL);
    if name == b"." {
        return Ok(Some(dir));
    }
    if inode.has_flag(inode::INLINE_DATA_FL) {
        return Ok(inline_dir_entries(fs, &raw, &inode)
            .into_iter()
            .find(|(n, _)| names_match(n, name, casefold))
            .map(|(_, i)| i));
    }
    let mut found = None;
    let mut absent = None;
    for_each_dir_block(fs, dir, &inode, false, &mut |_, pblk| {
        let block = match fs.block(pblk) {
            Ok(b) => b,
            // Not held by a metadata-only image: the name may be there, so say so instead of
            // "no such file".
            Err(e) if e.is_absent() => {
                absent = Some(e);
                return ControlFlow::Break(());
            }
            Err(_) => return ControlFlow::Continue(()),
        };
        let db = parse_dir_block(&block, None);
        match db
            .entries
            .iter()
            .find(|e| names_match(e.name, name, casefold))
        {
            Some(e) => {
                found = Some(e.inode);
                ControlFlow::Break(())
            }
            None => ControlFlow::Continue(()),
        }
    })?;
    absent.map_or(Ok(found), Err)
}

/// Per-inode checksum seed for directory blocks of `ino`.
pub fn dir_csum_seed(fs: &Filesystem, ino: u32, inode: &Inode) -> Option<u32> {
    fs.sb
        .has_metadata_csum()
        .then(|| inode.csum_seed(fs.csum_seed(), ino))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(buf: &mut [u8], pos: usize, ino: u32, rec: u16, name: &[u8], ft: u8) {
        buf[pos..pos + 4].copy_from_slice(&ino.to_le_bytes());
        buf[pos + 4..pos + 6].copy_from_slice(&rec.to_le_bytes());
        buf[pos + 6] = name.len() as u8;
        buf[pos + 7] = ft;
        buf[pos + 8..pos + 8 + name.len()].copy_from_slice(name);
    }

    #[test]
    fn linear_block_with_tail() {
        let mut block = vec![0u8; 1024];
        put(&mut block, 0, 2, 12, b".", 2);
        put(&mut block, 12, 2, 12, b"..", 2);
        put(&mut block, 24, 0, 16, b"gone", 1);
        put(&mut block, 40, 12, 1024 - 40 - 12, b"caf\xc3\xa9", 1);
        put(&mut block, 1012, 0, 12, b"", TAIL_FILE_TYPE);
        let seed = 42;
        let csum = crc32c_raw(seed, &block[..1012]);
        block[1020..1024].copy_from_slice(&csum.to_le_bytes());
        let db = parse_dir_block(&block, Some(seed));
        assert!(db.problems.is_empty(), "{:?}", db.problems);
        assert_eq!(db.entries.len(), 3);
        assert_eq!(db.entries[2].name, b"caf\xc3\xa9");
        assert!(db.csum.unwrap().ok());
        assert!(!parse_dir_block(&block, Some(7)).problems.is_empty());
    }

    #[test]
    fn hostile_blocks_end() {
        let mut block = vec![0u8; 1024];
        put(&mut block, 0, 2, 0, b".", 2); // rec_len 0 would loop forever
        assert_eq!(parse_dir_block(&block, None).problems.len(), 1);
        put(&mut block, 0, 2, 2000, b".", 2);
        assert_eq!(parse_dir_block(&block, None).problems.len(), 1);
        put(&mut block, 0, 2, 12, &[b'x'; 200], 2);
        assert_eq!(parse_dir_block(&block, None).problems.len(), 1);
        for index in 0..64 {
            for value in [0u8, 3, 0xff] {
                let mut damaged = block.clone();
                damaged[index] = value;
                let _ = parse_dir_block(&damaged, Some(1));
                let _ = parse_dx_root(&damaged);
                let _ = parse_dx_node(&damaged);
            }
        }
        assert_eq!(rec_len_from_disk(0, 65536), 65536);
        assert_eq!(rec_len_from_disk(12, 4096), 12);
    }

    #[test]
    fn iterate_finds_deleted_entries_like_libext2fs() {
        let mut block = vec![0u8; 1024];
        put(&mut block, 0, 2, 12, b".", 2);
        put(&mut block, 12, 2, 12, b"..", 2);
        put(&mut block, 24, 12, 1000, b"a", 1);
        put(&mut block, 36, 13, 988, b"bb", 1); // left in the slack of "a" by an unlink
        let names = |removed: bool| {
            let mut found = Vec::new();
            let flags = IterFlags {
                include_removed: removed,
                ..IterFlags::default()
            };
            let result = iterate_buffer(&block, 1024, flags, &mut |entry| {
                found.push((entry.name.to_vec(), entry.deleted, entry.rec_len_raw));
                ControlFlow::Continue(())
            });
            assert!(result.is_ok());
            found
        };
        assert_eq!(names(false).len(), 3);
        let all = names(true);
        assert_eq!(all.len(), 4);
        assert_eq!(all[3], (b"bb".to_vec(), true, 988));
        // A corrupt rec_len stops the walk with libext2fs' error, after what came before.
        let mut corrupt = block.clone();
        corrupt[28..30].copy_from_slice(&3u16.to_le_bytes());
        let mut seen = 0;
        let result = iterate_buffer(&corrupt, 1024, IterFlags::default(), &mut |_| {
            seen += 1;
            ControlFlow::Continue(())
        });
        assert!(matches!(result, Err(LibError::DirCorrupted)), "{result:?}");
        assert_eq!(seen, 2);
        // Every byte pattern ends (each step advances at least 4 bytes).
        for index in 0..48 {
            let mut flipped = block.clone();
            flipped[index] ^= 0xA5;
            let flags = IterFlags {
                include_removed: true,
                ..IterFlags::default()
            };
            let _ = iterate_buffer(&flipped, 1024, flags, &mut |_| ControlFlow::Continue(()));
        }
    }

    #[test]
    fn dx_root_and_node() {
        let mut block = vec![0u8; 1024];
        put(&mut block, 0, 2, 12, b".", 2);
        put(&mut block, 12, 2, 1012, b"..", 2);
        block[24 + 4] = 1; // half_md4
        block[24 + 5] = 8;
        block[32..34].copy_from_slice(&123u16.to_le_bytes());
        block[34..36].copy_from_slice(&2u16.to_le_bytes());
        block[36..40].copy_from_slice(&1u32.to_le_bytes());
        block[40..44].copy_from_slice(&0x8000_0000u32.to_le_bytes());
        block[44..48].copy_from_slice(&2u32.to_le_bytes());
        let root = parse_dx_root(&block).unwrap();
        assert_eq!(root.hash_version, 1);
        assert_eq!(root.index.entries, vec![(0, 1), (0x8000_0000, 2)]);
        block[34] = 200; // count > limit
        assert!(parse_dx_root(&block).is_err());
        let mut node = vec![0u8; 1024];
        node[4..6].copy_from_slice(&1024u16.to_le_bytes());
        node[8..10].copy_from_slice(&127u16.to_le_bytes());
        node[10..12].copy_from_slice(&1u16.to_le_bytes());
        assert_eq!(parse_dx_node(&node).unwrap().count, 1);
        node[8..10].copy_from_slice(&500u16.to_le_bytes());
        assert!(parse_dx_node(&node).is_err());
    }
}
