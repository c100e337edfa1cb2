//! An opened filesystem: source, superblock, geometry and lazily decoded descriptors.
//!
//! Opening follows libext2fs' `ext2fs_open2` checks and order, so that "can dumpe2fs open this?"
//! has the same answer here; a first strict attempt verifies the superblock checksum, a second one
//! ignores checksum errors (as dumpe2fs does) and remembers why the first failed.

use crate::error::{Error, LibError, Result};
use crate::reader::geometry::{Geometry, OpenFailure};
use crate::reader::group::{DescContext, GroupDesc};
use crate::reader::partition::{self, Partition};
use crate::reader::source::Source;
use crate::reader::superblock::{Superblock, SUPERBLOCK_OFFSET, SUPERBLOCK_SIZE};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// One filesystem block as read from the source (shared with the block cache).
pub type Block = Arc<[u8]>;

/// Bytes of blocks kept by [`BlockCache`]: metadata that is read again and again (descriptor
/// blocks, inode table blocks of scattered inodes, shared xattr blocks, directory blocks on a
/// path) is read from the source once.
const BLOCK_CACHE_BYTES: u64 = 8 << 20;
const BLOCK_CACHE_SHARDS: usize = 16;
/// Most groups whose decoded descriptors [`Filesystem::load_descriptors`] keeps (72 bytes
/// each: 18 MiB at most, a 32 TiB filesystem of 4 KiB blocks).
pub const MAX_CACHED_DESCS: usize = 1 << 18;
/// Most descriptor blocks read at once by [`Filesystem::load_descriptors`].
const DESC_READ_RUN: u64 = 256;
/// Most blocks one prefetch hint covers.
pub const PREFETCH_SPAN: u64 = 1024;

/// A bounded block cache shared by the scan's worker threads (sharded to keep lock hold times
/// short). When a shard is full an arbitrary entry makes room: metadata access has little
/// recency structure worth tracking, and the bound is what matters.
struct BlockCache {
    shards: Vec<Mutex<HashMap<u64, Block>>>,
    per_shard: usize,
}

impl BlockCache {
    fn new(block_size: u64) -> BlockCache {
        let entries = (BLOCK_CACHE_BYTES / block_size.max(1)).max(BLOCK_CACHE_SHARDS as u64);
        BlockCache {
            shards: (0..BLOCK_CACHE_SHARDS)
                .map(|_| Mutex::new(HashMap::new()))
                .collect(),
            per_shard: (entries as usize) / BLOCK_CACHE_SHARDS,
        }
    }

    fn shard(&self, blk: u64) -> Option<&Mutex<HashMap<u64, Block>>> {
        self.shards.get((blk % BLOCK_CACHE_SHARDS as u64) as usize)
    }

    fn get(&self, blk: u64) -> Option<Block> {
        let shard = self.shard(blk)?.lock().ok()?;
        shard.get(&blk).cloned()
    }

    fn put(&self, blk: u64, data: &Block) {
        let Some(Ok(mut shard)) = self.shard(blk).map(|m| m.lock()) else {
            return;
        };
        if shard.len() >= self.per_shard {
            if let Some(victim) = shard.keys().next().copied() {
                shard.remove(&victim);
            }
        }
        shard.insert(blk, Arc::clone(data));
    }
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("BlockCache")
            .field("per_shard", &self.per_shard)
            .finish()
    }
}

/// How to find and open the filesystem.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// Byte offset of the filesystem inside the source (skips partition detection).
    pub offset: Option<u64>,
    /// Partition number (1-based) of a partitioned disk image.
    pub partition: Option<u32>,
    /// Superblock block number (`-o superblock=N`); 0/None means the primary.
    pub superblock: Option<u64>,
    /// Block size to use with `superblock` (`-o blocksize=N`).
    pub blocksize: Option<u64>,
    /// Open despite unknown incompat features (`dumpe2fs -f`).
    pub force: bool,
    /// Read only the superblock, not the descriptor table (`dumpe2fs -h`).
    pub super_only: bool,
    /// Read the filesystem as after journal recovery when it needs recovery (`--replay`).
    pub replay: bool,
    /// The external journal device or image to replay (`--journal PATH`).
    pub journal: Option<std::path::PathBuf>,
}

/// An opened ext2/3/4 filesystem.
#[derive(Debug)]
pub struct Filesystem {
    /// The (windowed) source.
    pub source: Source,
    /// The superblock in use.
    pub sb: Superblock,
    /// Derived geometry.
    pub geo: Geometry,
    /// Descriptor decoding context (checksum seed, sizes).
    pub ctx: DescContext,
    /// Block number of the superblock in use when given with `-o superblock`, else 0.
    pub sb_block: u64,
    /// Why a strict open (with checksum verification) failed, when it did.
    pub strict_failure: Option<OpenFailure>,
    /// The partition used, when the source was a partitioned disk image.
    pub partition: Option<Partition>,
    /// Base block the descriptor table is read relative to.
    group_block: u64,
    /// Adds 1 to the classic table location (1 KiB blocks with first_data_block 0).
    zero_adjust: u64,
    /// True when descriptors were read (not `super_only`, not a journal device).
    has_descs: bool,
    /// Recently read blocks.
    cache: BlockCache,
    /// Every descriptor decoded once ([`Filesystem::load_descriptors`]), for scans that look at
    /// each group several times.
    descs: OnceLock<Vec<GroupDesc>>,
    /// The journal replay applied to the reads (`OpenOptions::replay` on a filesystem that
    /// needed recovery).
    pub replayed: Option<Arc<crate::reader::replay::Plan>>,
}

/// Pick the filesystem inside `src`: an explicit offset, the whole source, or a partition.
pub fn select_window(src: Source, opts: &OpenOptions) -> Result<(Source, Option<Partition>)> {
    if let Some(off) = opts.offset {
        return Ok((src.window(off, None)?, None));
    }
    let table = partition::read_table(&src);
    if let Some(number) = opts.partition {
        let Some((_, parts)) = table else {
            return Err(Error::Invalid(format!(
                "{}: --partition {number} given, but the image has no MBR or GPT partition table",
                src.path().display()
            )));
        };
        let Some(part) = parts.iter().find(|p| p.number == number).cloned() else {
            return Err(Error::Invalid(format!(
                "{}: no partition {number}; the table has: {}",
                src.path().display(),
                describe(&parts)
            )));
        };
        return Ok((src.window(part.offset, Some(part.size))?, Some(part)));
    }
    if partition::has_ext_magic(&src, 0) {
        return Ok((src, None));
    }
    if let Some((kind, parts)) = table.filter(|(_, p)| !p.is_empty()) {
        let ext: Vec<&Partition> = parts.iter().filter(|p| p.has_ext_magic).collect();
        if ext.len() == 1 {
            if let Some(part) = ext.first().map(|p| (*p).clone()) {
                return Ok((src.window(part.offset, Some(part.size))?, Some(part)));
            }
        }
        let what = if ext.is_empty() {
            "no partition holds an ext2/3/4 filesystem"
        } else {
            "several partitions hold ext2/3/4 filesystems; choose one with --partition N"
        };
        return Err(Error::NotExt(format!(
            "{}: whole-disk image with a {:?} partition table: {what}: {}",
            src.path().display(),
            kind,
            describe(&parts)
        )));
    }
    Ok((src, None))
}

fn describe(parts: &[Partition]) -> String {
    if parts.is_empty() {
        return "(no partitions)".into();
    }
    parts
        .iter()
        .map(|part| {
            format!(
                "#{} at byte {} ({} bytes, type {}{}{})",
                part.number,
                part.offset,
                part.size,
                part.kind,
                if part.linux { ", Linux" } else { "" },
                if part.has_ext_magic { ", ext2/3/4" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl Filesystem {
    /// Open the filesystem at `path`.
    pub fn open(path: &Path, opts: &OpenOptions) -> Result<Filesystem> {
        let src = Source::open(path)?;
        Self::from_source(src, opts)
    }

    /// Open the filesystem in an already opened source.
    pub fn from_source(src: Source, opts: &OpenOptions) -> Result<Filesystem> {
        let (src, part) = select_window(src, opts)?;
        if opts.replay {
            let journal = opts.journal.as_deref();
            if let Some((src, plan)) = crate::reader::replay::replay_source(src.clone(), journal)? {
                let again = OpenOptions {
                    offset: Some(0),
                    partition: None,
                    replay: false,
                    ..opts.clone()
                };
                let mut fs = Self::from_source(src, &again)?;
                fs.partition = part;
                fs.replayed = Some(Arc::new(plan));
                return Ok(fs);
            }
        }
        let sb_block = opts.superblock.unwrap_or(0);
        let attempt = |strict: bool| -> std::result::Result<Parts, OpenFailure> {
            if sb_block != 0 && opts.blocksize.is_none() {
                let mut last = OpenFailure::BadMagic;
                let mut bs = 1024;
                while bs <= 65536 {
                    match try_open(&src, opts, sb_block, Some(bs), strict) {
                        Ok(fs) => return Ok(fs),
                        Err(e) => last = e,
                    }
                    bs *= 2;
                }
                Err(last)
            } else {
                try_open(&src, opts, sb_block, opts.blocksize, strict)
            }
        };
        let first = match attempt(true) {
            Ok(p) => Ok((p, None)),
            Err(strict) => attempt(false).map(|p| (p, Some(strict))),
        };
        let (opened, strict_failure) = match first {
            Ok(x) => x,
            Err(failure) => {
                if let Some(container) = crate::reader::container::identify_source(&src) {
                    return Err(Error::NotExt(container.to_string()));
                }
                let mut hint = if failure == OpenFailure::ShortRead {
                    short_read_detail(&src, sb_block, opts.blocksize)
                } else {
                    String::new()
                };
                if sb_block == 0 {
                    hint.push_str(&backup_hint(&src));
                }
                if failure == OpenFailure::BadMagic && hint.is_empty() {
                    if let Some(other) = foreign_filesystem(&src) {
                        hint = format!(" (the image holds {other}, not ext2/3/4)");
                    }
                }
                return Err(Error::Open { failure, hint });
            }
        };
        let cache = BlockCache::new(opened.geo.block_size);
        let fs = Filesystem {
            cache,
            source: src,
            sb: opened.sb,
            geo: opened.geo,
            ctx: opened.ctx,
            sb_block,
            strict_failure,
            partition: part,
            group_block: opened.group_block,
            zero_adjust: opened.zero_adjust,
            has_descs: opened.has_descs,
            descs: OnceLock::new(),
            replayed: None,
        };
        if fs.has_descs {
            // The descriptor table is read group by group, on demand: ask for all of it now.
            fs.prefetch((0..fs.geo.desc_blocks).map(|i| fs.desc_block_loc(i)));
        }
        Ok(fs)
    }

    /// Block size in bytes.
    pub fn block_size(&self) -> u64 {
        self.geo.block_size
    }
    /// Number of block groups.
    pub fn group_count(&self) -> u32 {
        self.geo.group_count
    }
    /// Metadata checksum seed.
    pub fn csum_seed(&self) -> u32 {
        self.ctx.seed
    }
    /// True when the descriptor table was read at open.
    pub fn has_descriptors(&self) -> bool {
        self.has_descs
    }
    /// True when opened from a backup superblock (`-o superblock=N`, N != 0).
    pub fn from_backup(&self) -> bool {
        self.sb_block > 1
    }

    /// Byte offset of block `blk` in the source; a block number past `u64` bytes is corrupt.
    fn block_offset(&self, blk: u64) -> Result<u64> {
        blk.checked_mul(self.geo.block_size).ok_or_else(|| {
            Error::corrupt(
                crate::ProblemKind::Structure,
                format!("block number {blk} overflows a byte offset"),
            )
        })
    }

    /// One filesystem block (through the bounded block cache).
    pub fn block(&self, blk: u64) -> Result<Block> {
        if let Some(cached) = self.cache.get(blk) {
            return Ok(cached);
        }
        let bs = self.geo.block_size;
        let off = self.block_offset(blk)?;
        let data: Block = self.source.read(off, bs, &format!("block {blk}"))?.into();
        self.cache.put(blk, &data);
        Ok(data)
    }

    /// One filesystem block read straight from the source, bypassing the cache (data read once:
    /// bitmaps, file contents).
    pub fn block_uncached(&self, blk: u64) -> Result<Vec<u8>> {
        let bs = self.geo.block_size;
        let off = self.block_offset(blk)?;
        self.source.read(off, bs, &format!("block {blk}"))
    }

    /// [`Filesystem::block_uncached`] into `buf` (resized to one block): a scan that reads many
    /// blocks once each (`ncheck`'s directory walk) allocates nothing per block and leaves the
    /// cache to the blocks read again.
    pub fn block_into(&self, blk: u64, buf: &mut Vec<u8>) -> Result<()> {
        let bs = self.geo.block_size;
        let off = self.block_offset(blk)?;
        buf.resize(usize::try_from(bs).unwrap_or(0), 0);
        self.source.read_into(off, buf, &format!("block {blk}"))
    }

    /// Tell the kernel that these blocks are about to be read, so that a cold device reads them
    /// in parallel and ahead of use. Consecutive blocks are coalesced into one request (flex_bg
    /// places the bitmaps of a flex group side by side); at most [`PREFETCH_SPAN`] blocks per
    /// request. A hint only: nothing is read here and nothing can fail.
    pub fn prefetch(&self, blocks: impl IntoIterator<Item = u64>) {
        let bs = self.geo.block_size;
        let mut run: Option<(u64, u64)> = None;
        let flush = |pending: Option<(u64, u64)>| {
            if let Some((start, len)) = pending {
                if let (Some(off), Some(byte_len)) = (start.checked_mul(bs), len.checked_mul(bs)) {
                    self.source.will_need(off, byte_len);
                }
            }
        };
        for blk in blocks {
            run = match run {
                Some((start, len))
                    if start.checked_add(len) == Some(blk) && len < PREFETCH_SPAN =>
                {
                    Some((start, len + 1))
                }
                other => {
                    flush(other);
                    Some((blk, 1))
                }
            };
        }
        flush(run);
    }

    /// Block holding descriptor block `index` of the table in use.
    pub fn desc_block_loc(&self, index: u64) -> u64 {
        desc_block_loc(&self.geo, self.group_block, self.zero_adjust, index)
    }

    /// Raw bytes of descriptor `group` (desc_size bytes).
    pub fn desc_raw(&self, group: u32) -> Result<Vec<u8>> {
        if group >= self.geo.group_count {
            return Err(Error::Invalid(format!(
                "group {group} out of range (the filesystem has {} groups)",
                self.geo.group_count
            )));
        }
        let per = u64::from(self.geo.desc_per_block.max(1));
        let index = u64::from(group) / per;
        let within = (u64::from(group) % per) * u64::from(self.geo.desc_size);
        let blk = self.desc_block_loc(index);
        let block = self.block(blk)?;
        let start = usize::try_from(within).unwrap_or(usize::MAX);
        start
            .checked_add(self.geo.desc_size as usize)
            .and_then(|end| block.get(start..end))
            .map(<[u8]>::to_vec)
            .ok_or_else(|| {
                Error::corrupt(
                    crate::ProblemKind::Group,
                    format!("group descriptor {group} lies outside block {blk}"),
                )
            })
    }

    /// Decoded descriptor of `group`, as libext2fs presents it.
    pub fn desc(&self, group: u32) -> Result<GroupDesc> {
        if let Some(gd) = self.descs.get().and_then(|d| d.get(group as usize)) {
            return Ok(gd.clone());
        }
        let raw = self.desc_raw(group)?;
        Ok(self.decode_desc(group, &raw))
    }

    fn decode_desc(&self, group: u32, raw: &[u8]) -> GroupDesc {
        if self.from_backup() {
            GroupDesc::parse_from_backup(&self.ctx, group, raw)
        } else {
            GroupDesc::parse(&self.ctx, group, raw)
        }
    }

    /// Decode every descriptor once, so that later [`Filesystem::desc`] calls cost a copy
    /// instead of a cache lookup, a decode and a checksum (a check looks at each of 65,536
    /// groups of an 8 TiB filesystem four times). The table is read in runs of consecutive
    /// descriptor blocks, in parallel. Nothing is kept when the table holds more than
    /// [`MAX_CACHED_DESCS`] groups (memory stays bounded) or when any block cannot be read
    /// (`desc` then reports the error for the group concerned). Returns whether it is loaded.
    pub fn load_descriptors(&self) -> bool {
        use rayon::prelude::*;
        if self.descs.get().is_some() {
            return true;
        }
        let groups = self.geo.group_count;
        if !self.has_descs || groups as usize > MAX_CACHED_DESCS || groups == 0 {
            return false;
        }
        let per = u64::from(self.geo.desc_per_block.max(1));
        let ds = self.geo.desc_size as usize;
        let nblocks = u64::from(groups).div_ceil(per);
        // Runs of consecutive descriptor blocks, at most DESC_READ_RUN blocks each.
        let mut runs: Vec<(u64, u64, u64)> = Vec::new(); // (first index, location, blocks)
        for index in 0..nblocks {
            let loc = self.desc_block_loc(index);
            match runs.last_mut() {
                Some(r) if r.1 + r.2 == loc && r.2 < DESC_READ_RUN => r.2 += 1,
                _ => runs.push((index, loc, 1)),
            }
        }
        let bs = self.geo.block_size;
        let decoded: Option<Vec<Vec<GroupDesc>>> = runs
            .par_iter()
            .map(|&(first, loc, count)| {
                let data = self
                    .source
                    .read(loc.checked_mul(bs)?, count * bs, "group descriptors")
                    .ok()?;
                let mut out = Vec::with_capacity((count * per) as usize);
                for block in 0..count {
                    for slot in 0..per {
                        let group = (first + block) * per + slot;
                        if group >= u64::from(groups) {
                            break;
                        }
                        let at = (block * bs + slot * ds as u64) as usize;
                        let raw = data.get(at..at + ds)?;
                        out.push(self.decode_desc(group as u32, raw));
                    }
                }
                Some(out)
            })
            .collect();
        let Some(parts) = decoded else {
            return false;
        };
        // Sized once, each part freed as it is copied (a collected flatten grew by doubling:
        // twice the table at its peak on 262,144 groups).
        let mut all: Vec<GroupDesc> = Vec::with_capacity(groups as usize);
        for part in parts {
            all.extend(part);
        }
        if all.len() != groups as usize {
            return false;
        }
        let _ = self.descs.set(all);
        true
    }

    /// Location of inode `ino` (byte offset in the source), bounds-checked against the inode count.
    pub fn inode_offset(&self, ino: u32) -> Result<u64> {
        if ino == 0 || u64::from(ino) > self.geo.inodes_count() {
            return Err(Error::Invalid(format!(
                "inode {ino} out of range (1..={})",
                self.geo.inodes_count()
            )));
        }
        let ipg = self.geo.inodes_per_group;
        let group = (ino - 1) / ipg;
        let index = (ino - 1) % ipg;
        let gd = self.desc(group)?;
        gd.inode_table
            .checked_mul(self.geo.block_size)
            .and_then(|o| o.checked_add(u64::from(index) * u64::from(self.geo.inode_size)))
            .ok_or_else(|| {
                Error::corrupt(
                    crate::ProblemKind::Group,
                    format!("inode table of group {group} overflows"),
                )
            })
    }

    /// Read inode `ino` with ext2fs_read_inode's checks (descriptor's inode table inside the
    /// filesystem, checksum unless `ignore_csum`); the error is libext2fs' message.
    pub fn read_inode_checked(
        &self,
        ino: u32,
        ignore_csum: bool,
    ) -> std::result::Result<Vec<u8>, LibError> {
        if ino == 0 || ino > self.sb.inodes_count {
            return Err(LibError::IllegalInode);
        }
        let ipg = self.geo.inodes_per_group.max(1);
        let group = (ino - 1) / ipg;
        if group > self.geo.group_count {
            return Err(LibError::IllegalInode);
        }
        let gd = self.desc(group)?;
        let table = gd.inode_table;
        if table == 0 {
            return Err(LibError::MissingInodeTable);
        }
        if table < self.geo.first_data_block
            || table.saturating_add(u64::from(self.geo.inode_blocks_per_group))
                > self.geo.blocks_count
        {
            return Err(LibError::BadInodeTable);
        }
        let off = table
            .saturating_mul(self.geo.block_size)
            .saturating_add(u64::from((ino - 1) % ipg) * u64::from(self.geo.inode_size));
        let raw = self.inode_at(off, ino).map_err(|error| match error {
            Error::Truncated { .. } => LibError::ShortRead,
            other => LibError::from(other),
        })?;
        if !ignore_csum
            && self.sb.has_metadata_csum()
            && !crate::reader::ondisk::inode::record_checksum_ok(self.ctx.seed, ino, &raw)
        {
            return Err(LibError::InodeCsumInvalid);
        }
        Ok(raw)
    }

    /// The on-disk bytes of inode `ino` (inode_size bytes).
    pub fn inode_raw(&self, ino: u32) -> Result<Vec<u8>> {
        let off = self.inode_offset(ino)?;
        self.inode_at(off, ino)
    }

    /// The inode record at byte offset `off`, through the block cache (inode tables are
    /// block-aligned and an inode never straddles a block).
    fn inode_at(&self, off: u64, ino: u32) -> Result<Vec<u8>> {
        let bs = self.geo.block_size.max(1);
        let isz = u64::from(self.geo.inode_size);
        let within = off % bs;
        if within + isz > bs {
            return self.source.read(off, isz, &format!("inode {ino}"));
        }
        let block = self
            .block(off / bs)
            .map_err(|e| e.reading(format!("inode {ino}")))?;
        let start = within as usize;
        Ok(block
            .get(start..start + isz as usize)
            .map(<[u8]>::to_vec)
            .unwrap_or_default())
    }
}

/// Where descriptor block `index` is read from, as ext2fs_open2 reads the table.
pub(crate) fn desc_block_loc(
    geo: &Geometry,
    group_block: u64,
    zero_adjust: u64,
    index: u64,
) -> u64 {
    let classic = if geo.meta_bg {
        u64::from(geo.first_meta_bg).min(geo.desc_blocks)
    } else {
        geo.desc_blocks
    };
    if index < classic {
        group_block + zero_adjust + 1 + index
    } else {
        geo.descriptor_block_loc(group_block, index)
    }
}

/// What one open attempt establishes.
struct Parts {
    sb: Superblock,
    geo: Geometry,
    ctx: DescContext,
    group_block: u64,
    zero_adjust: u64,
    has_descs: bool,
}

fn try_open(
    src: &Source,
    opts: &OpenOptions,
    sb_block: u64,
    blocksize: Option<u64>,
    strict: bool,
) -> std::result::Result<Parts, OpenFailure> {
    let sb_off = if sb_block == 0 {
        SUPERBLOCK_OFFSET
    } else {
        let bs = blocksize.unwrap_or(1024);
        sb_block.checked_mul(bs).ok_or(OpenFailure::ShortRead)?
    };
    let raw = src
        .try_read(sb_off, SUPERBLOCK_SIZE as u64)
        .ok_or(OpenFailure::ShortRead)?;
    let sb = Superblock::parse(&raw).map_err(|_| OpenFailure::ShortRead)?;
    if strict {
        let mut fail = None;
        if !sb.checksum_type_ok() {
            fail = Some(OpenFailure::UnknownCsum);
        }
        if !sb.checksum_ok() {
            fail = Some(OpenFailure::SbCsumInvalid);
        }
        if sb.magic != crate::reader::superblock::EXT2_MAGIC {
            fail = Some(OpenFailure::BadMagic);
        }
        if let Some(failure) = fail {
            return Err(failure);
        }
    }
    let geo = Geometry::new(&sb, opts.force)?;
    if let Some(bs) = blocksize {
        if bs != geo.block_size {
            return Err(OpenFailure::UnexpectedBlockSize);
        }
    }
    let mut group_block = if sb_block == 0 { 0 } else { sb_block };
    if group_block == 0 {
        group_block = geo.first_data_block;
    }
    let zero_adjust = u64::from(group_block == 0 && geo.block_size == 1024);
    let ctx = DescContext::new(&sb);
    let has_descs = !opts.super_only && !geo.journal_dev;
    if has_descs && geo.desc_blocks > 0 {
        // libext2fs reads the whole table at open: every descriptor block must exist. Locations
        // grow with the block index, so the first and the last bound them all.
        let bs = geo.block_size;
        let last = desc_block_loc(&geo, group_block, zero_adjust, geo.desc_blocks - 1);
        let first = desc_block_loc(&geo, group_block, zero_adjust, 0);
        for blk in [first, last] {
            let ok = blk
                .checked_mul(bs)
                .and_then(|o| src.try_read(o, bs))
                .is_some();
            if !ok {
                return Err(OpenFailure::ShortRead);
            }
        }
    }
    Ok(Parts {
        sb,
        geo,
        ctx,
        group_block,
        zero_adjust,
        has_descs,
    })
}

/// Look for backup superblocks that would open, to advise `-o superblock=N -o blocksize=B`.
pub fn find_backup_superblocks(src: &Source) -> Vec<(u64, u64)> {
    let mut found = Vec::new();
    let mut bs: u64 = 1024;
    while bs <= 65536 {
        let bpg = bs * 8;
        let first = u64::from(bs == 1024);
        for group in [1u64, 3, 5, 7, 9, 25, 27, 49, 81, 125, 243, 343] {
            let blk = first + group * bpg;
            let Some(raw) = blk.checked_mul(bs).and_then(|o| src.try_read(o, 1024)) else {
                continue;
            };
            let Ok(sb) = Superblock::parse(&raw) else {
                continue;
            };
            if sb.block_size_checked() == Some(bs)
                && Geometry::new(&sb, false).is_ok()
                && (u64::from(sb.block_group_nr) == group
                    // mke2fs before 1.41 left s_block_group_nr 0 in backups: accept one whose
                    // own geometry puts group g's first block exactly here.
                    || (sb.block_group_nr == 0
                        && u64::from(sb.first_data_block) + group * u64::from(sb.blocks_per_group)
                            == blk))
            {
                found.push((blk, bs));
            }
        }
        bs *= 2;
    }
    found
}

/// Name the structure and byte range that a short read hit (superblock or descriptor table).
fn short_read_detail(src: &Source, sb_block: u64, blocksize: Option<u64>) -> String {
    if let Some(failure) = src.read_failure() {
        // The bytes are inside the input but could not be read (I/O error, the input shrank).
        return format!(": {failure}");
    }
    let len = src.len();
    let sb_off = if sb_block == 0 {
        SUPERBLOCK_OFFSET
    } else {
        sb_block.saturating_mul(blocksize.unwrap_or(1024))
    };
    let Some(raw) = src.try_read(sb_off, SUPERBLOCK_SIZE as u64) else {
        return format!(
            ": the superblock at byte offset {sb_off} (1024 bytes) lies beyond the end of the image ({len} bytes)"
        );
    };
    let Ok(sb) = Superblock::parse(&raw) else {
        return String::new();
    };
    let Ok(geo) = Geometry::new(&sb, true) else {
        return String::new();
    };
    let group_block = if sb_block == 0 {
        geo.first_data_block
    } else {
        sb_block
    };
    let zero_adjust = u64::from(group_block == 0 && geo.block_size == 1024);
    for index in [0, geo.desc_blocks.saturating_sub(1)] {
        let blk = desc_block_loc(&geo, group_block, zero_adjust, index);
        let off = blk.saturating_mul(geo.block_size);
        if src.try_read(off, geo.block_size).is_none() {
            return format!(
                ": group descriptor block {index} (block {blk}, byte offset {off}, {} bytes) lies beyond the end of the image ({len} bytes): image truncated?",
                geo.block_size
            );
        }
    }
    String::new()
}

/// Recognise a few other filesystems and containers by their magic, for a clearer message.
pub fn foreign_filesystem(src: &Source) -> Option<&'static str> {
    let at =
        |off: u64, magic: &[u8]| src.try_read(off, magic.len() as u64).as_deref() == Some(magic);
    let found = [
        (0x52, &b"FAT32   "[..], "a FAT32 filesystem"),
        (0x36, b"FAT1", "a FAT filesystem"),
        (0x36, b"FAT ", "a FAT filesystem"),
        (3, b"NTFS    ", "an NTFS filesystem"),
        (3, b"EXFAT   ", "an exFAT filesystem"),
        (0, b"XFSB", "an XFS filesystem"),
        (0x10040, b"_BHRfS_M", "a btrfs filesystem"),
        (0, b"LUKS\xba\xbe", "a LUKS container"),
        (0, b"hsqs", "a squashfs image"),
        (0x8001, b"CD001", "an ISO 9660 image"),
        (4086, b"SWAPSPACE2", "a swap area"),
        (
            0,
            b"QFI\xfb",
            "a qcow2 image (convert it with qemu-img first)",
        ),
    ];
    found.iter().find(|(o, m, _)| at(*o, m)).map(|(_, _, n)| *n)
}

fn backup_hint(src: &Source) -> String {
    if src.len() < 2048 {
        return String::new();
    }
    let backups = find_backup_superblocks(src);
    if backups.is_empty() {
        return String::new();
    }
    let list: Vec<String> = backups
        .iter()
        .take(4)
        .map(|(blk, bs)| format!("-o superblock={blk} -o blocksize={bs}"))
        .collect();
    format!(
        "; the primary superblock is unusable, but backup superblocks look valid: try {}",
        list.join(", or ")
    )
}
