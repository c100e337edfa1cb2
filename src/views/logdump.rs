//! Walking the jbd2 log as debugfs' `logdump` does (debugfs/logdump.c, e2fsprogs 1.47.0:
//! `dump_journal`, `dump_descriptor_block`, `dump_revoke_block`, `dump_metadata_block`,
//! `dump_fc_block`), producing [`Event`]s that a formatter turns into debugfs' text or JSON.
//!
//! The walk follows debugfs step for step, including its quirks (the journal length clamped to
//! the journal file, the wrap arithmetic in 32 bits, the fast-commit area read from the last
//! `s_num_fc_blks` (or 256) blocks even without the fast-commit feature, names read up to a NUL).
//! Where debugfs would never stop, the walk stops and says why:
//! - an unknown block type makes debugfs print the same two lines forever: they are emitted once;
//! - a log that keeps going around the journal (possible only in crafted journals, or with `-O`
//!   when a transaction straddles the start) is cut after a budget proportional to the blocks the
//!   journal really has; holes are skipped in one step, so a huge sparse journal costs nothing.

use crate::error::{Error, Problem, ProblemKind, Result};
use crate::reader::csum::crc32c_raw;
use crate::reader::extent::{self, WalkLimits};
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, Inode};
use crate::reader::journal::{JournalSuperblock, JBD2_MAGIC};
use crate::reader::ondisk::journal::{self as jbd2, Header, RevokeHeader, TagFormat};
use crate::reader::source::Source;
use serde::Serialize;
use std::path::Path;

/// `s_jnl_backup_type` when `s_jnl_blocks` holds a copy of the journal inode's i_block and size.
const JNL_BACKUP_BLOCKS: u8 = 1;

/// debugfs' block buffer (EXT2_MAX_BLOCK_SIZE): names in fast-commit tags are read from it up to
/// a NUL, possibly past the block just read.
const BUF_SIZE: usize = 65536;

/// `logdump` flags.
#[derive(Clone, Copy, Debug, Serialize, schemars::JsonSchema)]
pub struct Options {
    /// `-a`: every tag and revoke record.
    pub all: bool,
    /// `-O`: go on past the end of the valid log.
    pub old: bool,
    /// `-S`: print the journal superblock first.
    pub superblock: bool,
    /// `-c`: hex dump of logged blocks (with `-a`).
    pub contents: bool,
    /// `-n N`: with `-O`, stop after N commit blocks (-1: no limit).
    pub count: i64,
    /// Verify descriptor, commit and data block checksums (for JSON; debugfs does not).
    pub verify: bool,
    /// What `-b BLOCK` / `-i FILESPEC` trace (debugfs' `block_to_dump`, `bitmap_to_dump`,
    /// `inode_block_to_dump`); with any of them, descriptor lines are not printed.
    pub trace: Trace,
}

/// debugfs' `ANY_BLOCK`: no block asked for.
pub const ANY_BLOCK: u64 = u64::MAX;

/// The blocks `logdump -b` / `-i` look for. Unset fields hold [`ANY_BLOCK`] (a 64-bit revoke
/// record of all ones matches it, as in debugfs); in JSON they are `null` ([`TraceJson`]).
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(into = "TraceJson")]
pub struct Trace {
    /// `-b`: the filesystem block traced.
    pub block: u64,
    /// The block bitmap of that block's group, and the block's bit in it.
    pub bitmap: u64,
    /// The block's bit in that bitmap.
    pub bitmap_bit: u32,
    /// `-i`: the inode, the block debugfs takes for its inode-table block and the byte offset in
    /// it (both computed with 128-byte inodes, as debugfs does whatever the inode size).
    pub inode: u32,
    /// The inode-table block holding that inode (128-byte inodes).
    pub inode_block: u64,
    /// The inode's byte offset in that block.
    pub inode_offset: u32,
}

impl Default for Trace {
    fn default() -> Self {
        Trace {
            block: ANY_BLOCK,
            bitmap: ANY_BLOCK,
            bitmap_bit: 0,
            inode: 0,
            inode_block: ANY_BLOCK,
            inode_offset: 0,
        }
    }
}

/// [`Trace`] as JSON: what was not asked for is `null`, not debugfs' all-ones sentinel (or a
/// zero inode, bit or offset that means nothing).
#[derive(Clone, Copy, Debug, Serialize, schemars::JsonSchema)]
pub struct TraceJson {
    /// `-b`: the filesystem block traced (null without `-b`).
    pub block: Option<u64>,
    /// The block bitmap of that block's group (null without `-b`, or when the block lies outside
    /// every group).
    pub bitmap: Option<u64>,
    /// The block's bit in that bitmap (null when `bitmap` is).
    pub bitmap_bit: Option<u32>,
    /// `-i`: the inode (null without `-i`).
    pub inode: Option<u32>,
    /// The inode-table block holding that inode, computed with 128-byte inodes as debugfs does
    /// (null without `-i`).
    pub inode_block: Option<u64>,
    /// The inode's byte offset in that block (null without `-i`).
    pub inode_offset: Option<u32>,
}

impl From<Trace> for TraceJson {
    fn from(trace: Trace) -> TraceJson {
        let set = |b: u64| (b != ANY_BLOCK).then_some(b);
        let inode_set = trace.inode_block != ANY_BLOCK;
        TraceJson {
            block: set(trace.block),
            bitmap: set(trace.bitmap),
            bitmap_bit: set(trace.bitmap).map(|_| trace.bitmap_bit),
            inode: inode_set.then_some(trace.inode),
            inode_block: set(trace.inode_block),
            inode_offset: inode_set.then_some(trace.inode_offset),
        }
    }
}

/// The schema of [`Trace`] is the one of what it serializes into.
impl schemars::JsonSchema for Trace {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        TraceJson::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        TraceJson::json_schema(generator)
    }
}

impl Trace {
    /// True when `-b` or `-i` was given (debugfs' `dump_descriptors = 0`).
    pub fn active(&self) -> bool {
        self.block != ANY_BLOCK || self.inode_block != ANY_BLOCK
    }

    /// Does a logged copy of filesystem block `fs_block` (32 bits in a tag) concern the trace?
    fn matches(&self, fs_block: u32) -> bool {
        let block = u64::from(fs_block);
        block == self.block || block == self.inode_block || block == self.bitmap
    }

    /// `-b BLOCK` on filesystem `fs`: the bitmap block and bit are those of the block's group
    /// (none when the block lies outside every group: debugfs would read past its descriptors).
    pub fn for_block(fs: &Filesystem, block: u64) -> Trace {
        let mut trace = Trace {
            block,
            ..Trace::default()
        };
        let fdb = fs.geo.first_data_block;
        let bpg = u64::from(fs.sb.blocks_per_group);
        if let Some(rel) = block.checked_sub(fdb) {
            if let Some(group) = rel.checked_div(bpg) {
                let desc = u32::try_from(group)
                    .ok()
                    .filter(|&group| group < fs.group_count())
                    .and_then(|group| fs.desc(group).ok());
                if let Some(loc) = desc.map(|d| d.block_bitmap) {
                    trace.bitmap = loc;
                    trace.bitmap_bit = (rel % bpg) as u32;
                }
            }
        }
        trace
    }

    /// `-i` for inode `ino` (debugfs: the inode table block and offset counted in 128-byte
    /// inodes); `None` when the group has no descriptor.
    pub fn for_inode(fs: &Filesystem, ino: u32, mut trace: Trace) -> Option<Trace> {
        let ipg = fs.sb.inodes_per_group;
        let group = ino.wrapping_sub(1).checked_div(ipg)?;
        let off = ino.wrapping_sub(1) % ipg;
        let per_block = (fs.block_size() / 128).max(1) as u32;
        let table = (group < fs.group_count())
            .then(|| fs.desc(group).ok())
            .flatten()?
            .inode_table;
        trace.inode = ino;
        trace.inode_block = table.wrapping_add(u64::from(off / per_block));
        trace.inode_offset = (off % per_block) * 128;
        Some(trace)
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            all: false,
            old: false,
            superblock: false,
            contents: false,
            count: -1,
            verify: false,
            trace: Trace::default(),
        }
    }
}

/// A checksum verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Csum {
    /// The checksum on disk.
    pub stored: u32,
    /// The checksum computed over the block.
    pub computed: u32,
    /// They match.
    pub ok: bool,
}

/// What the walk found, in debugfs' order.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// An ext2 superblock with journal_dev precedes the journal (external journal device).
    ExternalHeader {
        /// The device's UUID.
        #[serde(serialize_with = "crate::reader::values::uuid")]
        #[schemars(schema_with = "crate::reader::values::uuid_schema")]
        uuid: [u8; 16],
        /// Its block size.
        #[serde(rename = "block_size")]
        blocksize: u32,
        /// Its size in blocks.
        blocks_count: u64,
        /// `-a`: debugfs then prints the three fields.
        #[serde(skip)]
        details: bool,
    },
    /// The journal superblock (`-S`): raw bytes and the filesystem block size for the listing.
    Superblock {
        /// The superblock block as read.
        #[serde(skip)]
        raw: Vec<u8>,
        /// The filesystem's block size.
        fs_block_size: u32,
        /// The decoded fields.
        decoded: JournalSuperblock,
    },
    /// The journal superblock has no jbd2 magic: the walk ends.
    BadSuperblockMagic,
    /// The journal superblock's block size is unusable: the walk ends.
    BadBlockSize {
        /// The block size it gives.
        #[serde(rename = "block_size")]
        blocksize: u32,
    },
    /// The walk starts (`Journal starts at block B, transaction T`).
    Start {
        /// First log block.
        block: u32,
        /// First transaction ID.
        transaction: u32,
    },
    /// A block without the jbd2 magic: the log ends there.
    NoMagic {
        /// Its journal block number.
        block: u32,
    },
    /// A block of another transaction than expected: the log ends there.
    SequenceMismatch {
        /// The transaction ID it carries.
        found: u32,
        /// The one expected.
        expected: u32,
        /// Its journal block number.
        block: u32,
    },
    /// A log block with a header (descriptor, commit, revoke or other).
    Block {
        /// Its transaction ID.
        sequence: u32,
        /// The block type, with its name (`descriptor`, `commit`, `revoke`, ...).
        #[serde(serialize_with = "blocktype_json")]
        #[schemars(with = "crate::reader::values::Named")]
        blocktype: u32,
        /// Its journal block number.
        block: u32,
        /// Commit time (commit blocks): seconds and nanoseconds.
        #[serde(
            skip_serializing_if = "Option::is_none",
            serialize_with = "commit_time_json"
        )]
        #[schemars(with = "Option<crate::reader::values::Time>")]
        commit_time: Option<(u64, u32)>,
        /// Descriptor/revoke tail or commit block checksum, when verified.
        #[serde(skip_serializing_if = "Option::is_none")]
        checksum: Option<Csum>,
        /// Not printed (`-b`/`-i` given: debugfs' `dump_descriptors` is off).
        #[serde(skip)]
        quiet: bool,
    },
    /// `-b`/`-i` dumps: a descriptor block names the watched block.
    DescriptorDump {
        /// The transaction.
        transaction: u32,
        /// The descriptor's journal block.
        block: u32,
    },
    /// One descriptor tag: a filesystem block logged in the journal block that follows.
    Tag {
        /// Low 32 bits of the filesystem block.
        fs_block: u32,
        /// High 32 bits (64-bit journals).
        fs_block_high: u32,
        /// Where its copy lies in the journal.
        journal_block: u32,
        /// Tag flags.
        flags: u32,
        /// The tag's checksum of the logged block, when verified.
        #[serde(skip_serializing_if = "Option::is_none")]
        checksum: Option<Csum>,
        /// Without `-a` (a traced block): the transaction, which debugfs then prints.
        #[serde(skip_serializing_if = "Option::is_none")]
        sequence: Option<u32>,
    },
    /// `-b`: the traced block's bit in a logged copy of its block bitmap.
    BitmapBit {
        /// The traced filesystem block.
        block: u64,
        /// Its bit is set in the logged bitmap.
        set: bool,
    },
    /// `-i`: a logged copy of the inode's block; `raw` is the inode-sized record at debugfs'
    /// offset (zero-filled past the block's end).
    InodeCopy {
        /// The traced inode.
        ino: u32,
        /// Its record in the logged block.
        #[serde(skip)]
        raw: Vec<u8>,
    },
    /// `-c`: a logged block, as a hex dump.
    Contents {
        /// The block as logged.
        #[serde(skip)]
        data: Vec<u8>,
    },
    /// `-b` dumps: a revoke block names the watched block.
    RevokeDump {
        /// The transaction.
        transaction: u32,
        /// The revoke block's journal block.
        block: u32,
    },
    /// A revoke block's byte count is out of range: its records are not read.
    RevokeCountInvalid {
        /// The count it gives.
        count: u32,
    },
    /// One revoked filesystem block.
    Revoke {
        /// The block.
        fs_block: u64,
        /// Without `-a` (the traced block revoked): where and in which transaction.
        #[serde(skip_serializing_if = "Option::is_none")]
        at: Option<(u32, u32)>,
    },
    /// A block of a type logdump does not know.
    UnexpectedType {
        /// Its block type.
        #[serde(serialize_with = "blocktype_json")]
        #[schemars(with = "crate::reader::values::Named")]
        blocktype: u32,
        /// Its journal block number.
        block: u32,
    },
    /// `-a`: debugfs announces that every record is dumped.
    AllRecords {
        /// The count debugfs prints (-1 for all).
        count: i64,
    },
    /// Fast commit: the head tag.
    FcHead {
        /// Fast-commit features.
        features: u32,
        /// Transaction ID.
        tid: u32,
    },
    /// Fast commit: the tail tag.
    FcTail {
        /// Transaction ID.
        tid: u32,
    },
    /// Fast commit: blocks added to an inode.
    FcAddRange {
        /// The inode.
        ino: u32,
        /// First logical block.
        lblk: u32,
        /// First physical block.
        pblk: u64,
        /// Length in blocks.
        len: u64,
    },
    /// Fast commit: blocks removed from an inode.
    FcDelRange {
        /// The inode.
        ino: u32,
        /// First logical block.
        lblk: u32,
        /// Length in blocks.
        len: u32,
    },
    /// Fast commit: a directory entry created, linked or unlinked.
    FcDentry {
        /// The fast-commit tag (create, link, unlink).
        tag: u16,
        /// The directory.
        parent: u32,
        /// The entry's inode.
        ino: u32,
        /// The name, lossily decoded.
        name: String,
        /// The name's bytes.
        #[serde(skip)]
        raw_name: Vec<u8>,
    },
    /// Fast commit: an inode record.
    FcInode {
        /// The inode.
        ino: u32,
    },
    /// Fast commit: padding.
    FcPad,
    /// A read failed; debugfs says so on stderr (`logdump: ...`).
    ReadError {
        /// debugfs' message.
        message: String,
    },
    /// The walk stopped where debugfs would not have (see the module doc).
    Stopped {
        /// Why.
        reason: String,
    },
}

/// A jbd2 block type with its name (JSON).
fn blocktype_json<S: serde::Serializer>(
    block_type: &u32,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    let name = match *block_type {
        1 => "descriptor",
        2 => "commit",
        3 => "superblock_v1",
        4 => "superblock_v2",
        5 => "revoke",
        _ => "unknown",
    };
    crate::reader::values::Named::new(*block_type, name).serialize(serializer)
}

/// A commit time as seconds, nanoseconds and ISO 8601 UTC (JSON).
fn commit_time_json<S: serde::Serializer>(
    time: &Option<(u64, u32)>,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    time.map(|(sec, nsec)| {
        crate::reader::values::Time::with_nsec(i64::try_from(sec).unwrap_or(i64::MAX), nsec)
    })
    .serialize(serializer)
}

/// Where the journal is read from.
pub trait JournalSource {
    /// Read `size` bytes at `offset` as `read_journal_block` does; `Err` is debugfs' message.
    fn read(&self, offset: u64, size: usize) -> std::result::Result<Vec<u8>, Problem>;
    /// Length in bytes used for the `maxlen` clamp (inode size, or fstat's st_size).
    fn byte_len(&self) -> u64;
    /// Blocks of `bs` bytes that hold data (bounds the walk).
    fn mapped_blocks(&self, bs: u32) -> u64;
    /// First journal block at or after `block` that may hold data (`None`: cannot tell).
    fn next_data_block(&self, block: u64, bs: u32) -> Option<u64>;
}

fn short_read(got: usize, size: usize) -> Problem {
    Problem::new(
        ProblemKind::Journal,
        format!("short read (read {got}, expected {size}) while reading journal"),
    )
}

/// The journal inode of a filesystem, read like ext2fs_file_read.
pub struct InternalJournal<'a> {
    fs: &'a Filesystem,
    ino: u32,
    inode: Inode,
    verify_csum: bool,
    /// Initialised data runs (logical start, length) when the whole map could be walked.
    runs: Option<Vec<(u64, u64)>>,
    mapped: u64,
}

impl<'a> InternalJournal<'a> {
    /// Open inode `ino` (checksums verified unless `ignore_csum`); the error is libext2fs'.
    pub fn open(
        fs: &'a Filesystem,
        ino: u32,
        ignore_csum: bool,
    ) -> std::result::Result<Self, crate::error::LibError> {
        let raw = fs.read_inode_checked(ino, ignore_csum)?;
        Ok(Self::with_inode(fs, ino, Inode::parse(&raw), ignore_csum))
    }

    /// `logdump -s`: the journal inode rebuilt from the superblock's backup (`s_jnl_blocks`) as
    /// debugfs builds it: i_block and the size from the backup, a regular file, no flags, so
    /// that an extent-mapped journal's backup is read as a block map (and fails as in debugfs).
    /// `Err` (debugfs' message) when the superblock holds no backup.
    pub fn from_backup(
        fs: &'a Filesystem,
        ino: u32,
    ) -> std::result::Result<Self, crate::error::LibError> {
        if fs.sb.jnl_backup_type != JNL_BACKUP_BLOCKS {
            return Err(crate::error::LibError::NoJournalBackup);
        }
        // debugfs builds the inode from s_jnl_blocks: a regular file, mode 0600, one link, the
        // 15 block pointers, i_size_high from word 15 and i_size from word 16, no flags.
        let words = &fs.sb.jnl_blocks;
        let mut inode = Inode::parse(&[0u8; 128]);
        inode.mode = 0o100600;
        inode.links_count = 1;
        inode.size = (u64::from(words[15]) << 32) | u64::from(words[16]);
        for (slot, word) in inode.block.chunks_exact_mut(4).zip(&words[..15]) {
            slot.copy_from_slice(&word.to_le_bytes());
        }
        Ok(Self::with_inode(fs, ino, inode, true))
    }

    fn with_inode(fs: &'a Filesystem, ino: u32, inode: Inode, ignore_csum: bool) -> Self {
        let mut journal = InternalJournal {
            fs,
            ino,
            inode,
            verify_csum: !ignore_csum && fs.sb.has_metadata_csum(),
            runs: None,
            mapped: 0,
        };
        journal.collect_runs();
        journal
    }

    fn limits(&self) -> WalkLimits {
        WalkLimits {
            first_data_block: self.fs.geo.first_data_block,
            blocks_count: self.fs.geo.blocks_count,
            csum_seed: self.verify_csum.then(|| {
                extent::inode_csum_seed(self.fs.csum_seed(), self.ino, self.inode.generation)
            }),
        }
    }

    fn collect_runs(&mut self) {
        let fs = self.fs;
        let limits = self.limits();
        let mut runs: Vec<(u64, u64)> = Vec::new();
        let clean = if self.inode.has_flag(inode::EXTENTS_FL) {
            match extent::walk_extents(&self.inode.block, &limits, |b| fs.block(b)) {
                Ok(walk) => {
                    for leaf in walk.leaves() {
                        if !leaf.uninit && leaf.len > 0 {
                            runs.push((u64::from(leaf.logical), u64::from(leaf.len)));
                        }
                    }
                    walk.problems.is_empty()
                        && walk.nodes.iter().all(|n| n.csum.is_none_or(|c| c.ok()))
                }
                Err(_) => false,
            }
        } else {
            let walk =
                extent::walk_blockmap(&self.inode.block, fs.block_size(), &limits, |b| fs.block(b));
            for run in &walk.runs {
                if let extent::MapKind::Data(logical) = run.kind {
                    runs.push((logical, run.len));
                }
            }
            walk.problems.is_empty()
        };
        runs.sort_unstable();
        self.mapped = runs.iter().map(|run| run.1).sum();
        self.runs = clean.then_some(runs);
    }

    /// Physical block of journal block `lblk` (`None`: a hole or uninitialised).
    fn map(&self, lblk: u64) -> Result<Option<u64>> {
        let Ok(lblk32) = u32::try_from(lblk) else {
            return Ok(None);
        };
        let fs = self.fs;
        let geo = &fs.geo;
        let in_fs = |pblk: u64| pblk >= geo.first_data_block && pblk < geo.blocks_count;
        if self.inode.has_flag(inode::EXTENTS_FL) {
            let seed = extent::inode_csum_seed(fs.csum_seed(), self.ino, self.inode.generation);
            let verify = self.verify_csum;
            extent::map_extent(&self.inode.block, lblk32, |pblk| {
                if !in_fs(pblk) {
                    return Err(Error::corrupt(
                        crate::ProblemKind::Journal,
                        "Corrupt extent index",
                    ));
                }
                let blk = fs.block(pblk)?;
                if verify {
                    if let Ok(header) = extent::ExtentHeader::parse(&blk) {
                        if !extent::extent_block_csum(seed, &blk, &header).ok() {
                            return Err(Error::corrupt(
                                crate::ProblemKind::Journal,
                                crate::error::ext2_err::EXTENT_CSUM_INVALID,
                            ));
                        }
                    }
                }
                Ok(blk)
            })
        } else {
            extent::map_blockmap(&self.inode.block, fs.block_size(), lblk32, |pblk| {
                if !in_fs(pblk) {
                    return Err(Error::corrupt(
                        crate::ProblemKind::Journal,
                        "Illegal indirect block found",
                    ));
                }
                fs.block(pblk)
            })
        }
    }
}

impl JournalSource for InternalJournal<'_> {
    fn read(&self, offset: u64, size: usize) -> std::result::Result<Vec<u8>, Problem> {
        let bs = self.fs.block_size();
        let avail = self.inode.size.saturating_sub(offset).min(size as u64) as usize;
        let mut out = vec![0u8; avail];
        let mut pos = 0usize;
        while pos < avail {
            let abs = offset + pos as u64;
            let lblk = abs / bs;
            let within = (abs % bs) as usize;
            let len = (bs as usize - within).min(avail - pos);
            if let Some(pblk) = self.map(lblk).map_err(|err| {
                Problem::new(ProblemKind::Journal, format!("{err} while reading journal"))
            })? {
                let blk = self.fs.block(pblk).map_err(|_| {
                    Problem::new(
                        ProblemKind::Journal,
                        format!(
                            "{} while reading journal",
                            crate::error::ext2_err::SHORT_READ
                        ),
                    )
                })?;
                out[pos..pos + len].copy_from_slice(&blk[within..within + len]);
            }
            pos += len;
        }
        if avail != size {
            return Err(short_read(avail, size));
        }
        Ok(out)
    }

    fn byte_len(&self) -> u64 {
        self.inode.size
    }

    fn mapped_blocks(&self, bs: u32) -> u64 {
        self.mapped
            .saturating_mul(self.fs.block_size())
            .checked_div(u64::from(bs))
            .unwrap_or(0)
    }

    fn next_data_block(&self, block: u64, bs: u32) -> Option<u64> {
        let runs = self.runs.as_ref()?;
        let fsbs = self.fs.block_size();
        if u64::from(bs) != fsbs {
            return None;
        }
        let idx = runs.partition_point(|&(s, l)| s + l <= block);
        Some(match runs.get(idx) {
            Some(&(s, _)) => s.max(block),
            None => u64::MAX,
        })
    }
}

/// A journal in a file or on a device (`logdump -f`), read with pread.
pub struct ExternalJournal {
    src: Source,
}

impl ExternalJournal {
    /// Open the journal file or device at `path`, read-only.
    pub fn open(path: &Path) -> Result<ExternalJournal> {
        Ok(ExternalJournal {
            src: Source::open(path)?,
        })
    }
}

impl JournalSource for ExternalJournal {
    fn read(&self, offset: u64, size: usize) -> std::result::Result<Vec<u8>, Problem> {
        let got = self.src.read_partial(offset, size as u64).to_vec();
        if got.len() != size {
            return Err(short_read(got.len(), size));
        }
        Ok(got)
    }

    /// fstat's st_size: 0 for a block device, as debugfs sees it.
    fn byte_len(&self) -> u64 {
        if self.src.is_device() {
            0
        } else {
            self.src.len()
        }
    }

    fn mapped_blocks(&self, bs: u32) -> u64 {
        self.src.len() / u64::from(bs.max(1))
    }

    fn next_data_block(&self, block: u64, _bs: u32) -> Option<u64> {
        Some(block)
    }
}

/// A journal held in memory (tests, fuzzing).
pub struct MemJournal(pub Vec<u8>);

impl JournalSource for MemJournal {
    fn read(&self, offset: u64, size: usize) -> std::result::Result<Vec<u8>, Problem> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let got = self.0.get(start..).unwrap_or(&[]);
        let got = &got[..got.len().min(size)];
        if got.len() != size {
            return Err(short_read(got.len(), size));
        }
        Ok(got.to_vec())
    }
    fn byte_len(&self) -> u64 {
        self.0.len() as u64
    }
    fn mapped_blocks(&self, bs: u32) -> u64 {
        self.0.len() as u64 / u64::from(bs.max(1))
    }
    fn next_data_block(&self, block: u64, _: u32) -> Option<u64> {
        Some(block)
    }
}

/// Result of a walk.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Outcome {
    /// True when the walk was cut where debugfs would have gone on.
    pub cut_short: bool,
    /// True when a read failed.
    pub read_error: bool,
}

type Emit<'e> = dyn FnMut(Event) -> std::io::Result<()> + 'e;

struct Walker<'s, 'e> {
    src: &'s dyn JournalSource,
    opts: Options,
    emit: &'e mut Emit<'e>,
    buf: Vec<u8>,
    jsb: Vec<u8>,
    blocksize: u32,
    maxlen: u32,
    first: u32,
    fmt: TagFormat,
    csum_seed: u32,
    budget: u64,
    out: Outcome,
    /// The filesystem's inode size (the record an `-i` copy is cut to).
    inode_size: usize,
}

impl Walker<'_, '_> {
    fn wrap(&mut self, blocknr: &mut u32) {
        if *blocknr >= self.maxlen {
            *blocknr = blocknr.wrapping_sub(self.maxlen.wrapping_sub(self.first));
        }
    }

    /// Read into debugfs' buffer.
    fn read_buf(&mut self, offset: u64, size: usize) -> std::io::Result<bool> {
        match self.src.read(offset, size) {
            Ok(data) => {
                let len = data.len().min(BUF_SIZE);
                self.buf[..len].copy_from_slice(&data[..len]);
                Ok(true)
            }
            Err(problem) => {
                self.out.read_error = true;
                (self.emit)(Event::ReadError {
                    message: problem.message,
                })?;
                Ok(false)
            }
        }
    }

    fn spend(&mut self) -> std::io::Result<bool> {
        if self.budget == 0 {
            self.out.cut_short = true;
            (self.emit)(Event::Stopped {
                reason: "the log goes around the journal more than twice; debugfs would go on"
                    .into(),
            })?;
            return Ok(false);
        }
        self.budget -= 1;
        Ok(true)
    }

    fn block_offset(&self, blocknr: u32) -> u64 {
        u64::from(blocknr) * u64::from(self.blocksize)
    }

    fn block_csum(&self, block: &[u8], zero_at: usize) -> u32 {
        let mut copy = block.to_vec();
        if let Some(field) = copy.get_mut(zero_at..zero_at + 4) {
            field.fill(0);
        }
        crc32c_raw(self.csum_seed, &copy)
    }

    fn header_checksum(&self, blocktype: u32) -> Option<Csum> {
        if !self.opts.verify || !(self.fmt.csum_v2 || self.fmt.csum_v3) {
            return None;
        }
        let bs = self.blocksize as usize;
        let block = &self.buf[..bs];
        let (at, stored) = match blocktype {
            jbd2::DESCRIPTOR_BLOCK | jbd2::REVOKE_BLOCK => (
                bs - jbd2::BlockTail::SIZE,
                jbd2::BlockTail::of(block).checksum,
            ),
            jbd2::COMMIT_BLOCK => (
                jbd2::Commit::CHECKSUM_OFFSET,
                jbd2::Commit::parse(block).chksum[0],
            ),
            _ => return None,
        };
        let computed = self.block_csum(block, at);
        Some(Csum {
            stored,
            computed,
            ok: stored == computed,
        })
    }

    fn run(&mut self, fs_block_size: Option<u32>) -> std::io::Result<()> {
        if !self.read_buf(0, 2048)? {
            return Ok(());
        }
        let mut blocksize: u32 = 1024;
        let mut blocknr: u32 = 0;
        // An external journal device starts with an ext2 superblock (journal_dev feature).
        let ext2 = crate::reader::ondisk::decode::<crate::reader::ondisk::superblock::Superblock>(
            self.buf.get(1024..2048).unwrap_or(&[]),
        )
        .ok()
        .filter(|sb| {
            sb.magic == crate::reader::ondisk::superblock::EXT2_MAGIC
                && sb.has_incompat(crate::reader::features::INCOMPAT_JOURNAL_DEV)
        });
        if let Some(sb) = ext2.filter(|_| Header::parse(&self.buf).magic != JBD2_MAGIC) {
            blocksize = 1024u32.wrapping_shl(sb.log_block_size);
            blocknr = if blocksize == 1024 { 2 } else { 1 };
            (self.emit)(Event::ExternalHeader {
                uuid: sb.uuid,
                blocksize,
                blocks_count: sb.blocks_count(),
                details: self.opts.all,
            })?;
        }
        match self
            .src
            .read(u64::from(blocknr) * u64::from(blocksize), 1024)
        {
            Ok(j) => self.jsb = j,
            Err(m) => {
                self.out.read_error = true;
                return (self.emit)(Event::ReadError { message: m.message });
            }
        }
        let jsb = JournalSuperblock::parse(&self.jsb);
        if self.opts.superblock {
            (self.emit)(Event::Superblock {
                raw: self.jsb.clone(),
                fs_block_size: fs_block_size.unwrap_or(jsb.blocksize),
                decoded: jsb.clone(),
            })?;
        }
        if jsb.magic != JBD2_MAGIC {
            return (self.emit)(Event::BadSuperblockMagic);
        }
        self.blocksize = jsb.blocksize;
        let bad = match fs_block_size {
            Some(b) => self.blocksize != b,
            None => {
                self.blocksize == 0
                    || !self.blocksize.is_power_of_two()
                    || self.blocksize as usize > BUF_SIZE
            }
        };
        if bad {
            return (self.emit)(Event::BadBlockSize {
                blocksize: self.blocksize,
            });
        }
        let mut transaction = jsb.sequence;
        blocknr = jsb.start;
        let total_len = self.src.byte_len() / u64::from(self.blocksize);
        self.maxlen = u64::from(jsb.maxlen).min(total_len) as u32;
        self.first = jsb.first;
        self.fmt = TagFormat::from_incompat(jsb.feature_incompat);
        self.csum_seed = crc32c_raw(!0, &jsb.uuid);
        let mapped = self.src.mapped_blocks(self.blocksize);
        self.budget = 2 * (u64::from(self.maxlen).min(mapped) + 64) + 4 * 1024;
        (self.emit)(Event::Start {
            block: blocknr,
            transaction,
        })?;
        let mut walk_log = true;
        if blocknr == 0 {
            if self.opts.old {
                blocknr = 1;
            } else {
                walk_log = false;
            }
        }
        if walk_log && !self.walk_log(blocknr, &mut transaction)? {
            return Ok(());
        }
        self.fast_commit(transaction)
    }

    /// The main loop; false when the walk must end without the fast-commit area.
    fn walk_log(&mut self, mut blocknr: u32, transaction: &mut u32) -> std::io::Result<bool> {
        let first_blocknr = blocknr;
        let mut cur_counts: i64 = 0;
        let mut no_magic_seen = false;
        let skip_no_magic = self.opts.old && self.opts.count != -1;
        loop {
            if self.opts.old && self.opts.count != -1 && cur_counts >= self.opts.count {
                break;
            }
            // 1.47.0 stops here only once a commit was seen (later versions test for a wrap).
            if blocknr == first_blocknr && cur_counts != 0 && skip_no_magic {
                (self.emit)(Event::AllRecords { count: cur_counts })?;
                break;
            }
            if !self.spend()? {
                return Ok(false);
            }
            let bs = self.blocksize as usize;
            if !self.read_buf(self.block_offset(blocknr), bs)? {
                break;
            }
            let header = Header::parse(&self.buf[..bs]);
            if header.magic != JBD2_MAGIC {
                if !no_magic_seen {
                    no_magic_seen = true;
                    (self.emit)(Event::NoMagic { block: blocknr })?;
                }
                if skip_no_magic {
                    blocknr = blocknr.wrapping_add(1);
                    self.wrap(&mut blocknr);
                    blocknr = self.skip_holes(blocknr, first_blocknr, cur_counts != 0);
                    continue;
                }
                break;
            }
            if header.sequence != *transaction {
                (self.emit)(Event::SequenceMismatch {
                    found: header.sequence,
                    expected: *transaction,
                    block: blocknr,
                })?;
                if !self.opts.old {
                    break;
                }
            }
            let commit_time = (header.blocktype == jbd2::COMMIT_BLOCK).then(|| {
                let commit = jbd2::Commit::parse(&self.buf[..bs]);
                (commit.commit_sec, commit.commit_nsec)
            });
            let checksum = self.header_checksum(header.blocktype);
            (self.emit)(Event::Block {
                sequence: header.sequence,
                blocktype: header.blocktype,
                block: blocknr,
                commit_time,
                checksum,
                quiet: self.opts.trace.active(),
            })?;
            match header.blocktype {
                jbd2::DESCRIPTOR_BLOCK => {
                    blocknr = self.descriptor(blocknr, *transaction)?;
                }
                jbd2::COMMIT_BLOCK => {
                    cur_counts += 1;
                    *transaction = transaction.wrapping_add(1);
                    blocknr = blocknr.wrapping_add(1);
                    self.wrap(&mut blocknr);
                }
                jbd2::REVOKE_BLOCK => {
                    self.revoke(blocknr, *transaction)?;
                    blocknr = blocknr.wrapping_add(1);
                    self.wrap(&mut blocknr);
                }
                other => {
                    (self.emit)(Event::UnexpectedType {
                        blocktype: other,
                        block: blocknr,
                    })?;
                    self.out.cut_short = true;
                    (self.emit)(Event::Stopped {
                        reason: "debugfs repeats the last two lines forever here".into(),
                    })?;
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// In `-O -n` mode, blocks without a header are skipped one at a time; skip a run of holes
    /// at once (stopping at the first transaction's block when the loop would stop there).
    fn skip_holes(&mut self, blocknr: u32, first_blocknr: u32, may_stop: bool) -> u32 {
        if blocknr >= self.maxlen {
            return blocknr;
        }
        let Some(next) = self.src.next_data_block(u64::from(blocknr), self.blocksize) else {
            return blocknr;
        };
        let mut target = next.min(u64::from(self.maxlen)) as u32;
        if target <= blocknr {
            return blocknr;
        }
        if may_stop && first_blocknr >= blocknr && first_blocknr < target {
            target = first_blocknr;
        }
        let mut wrapped = target;
        self.wrap(&mut wrapped);
        wrapped
    }

    fn descriptor(&mut self, start: u32, transaction: u32) -> std::io::Result<u32> {
        let bs = self.blocksize as usize;
        let tag_size = self.fmt.tag_bytes();
        let csum_size = self.fmt.tail_bytes();
        let mut offset = Header::SIZE;
        let mut blocknr = start;
        if self.opts.all {
            (self.emit)(Event::DescriptorDump {
                transaction,
                block: blocknr,
            })?;
        }
        blocknr = blocknr.wrapping_add(1);
        self.wrap(&mut blocknr);
        loop {
            let tagp = offset;
            offset += tag_size;
            if offset > bs - csum_size {
                break;
            }
            let tag = self.fmt.parse(&self.buf[tagp..]);
            let flags = tag.flags & 0xFFFF;
            if flags & jbd2::FLAG_SAME_UUID == 0 {
                offset += 16;
            }
            self.metadata(blocknr, &tag, flags, transaction)?;
            blocknr = blocknr.wrapping_add(1);
            self.wrap(&mut blocknr);
            if flags & jbd2::FLAG_LAST_TAG != 0 {
                break;
            }
        }
        Ok(blocknr)
    }

    fn metadata(
        &mut self,
        log_block: u32,
        tag: &jbd2::Tag,
        flags: u32,
        transaction: u32,
    ) -> std::io::Result<()> {
        let trace = self.opts.trace;
        let traced = trace.matches(tag.blocknr);
        if !self.opts.all && !traced {
            return Ok(());
        }
        let bs = self.blocksize as usize;
        // debugfs reads the logged block for -a -c and for a traced block.
        let shown = (self.opts.contents && self.opts.all) || traced;
        let need_data = shown
            || (self.opts.verify && self.fmt.csum_v2)
            || (self.opts.verify && self.fmt.csum_v3);
        let data = if need_data {
            match self.src.read(self.block_offset(log_block), bs) {
                Ok(d) => Some(d),
                Err(m) => {
                    self.out.read_error = true;
                    if shown {
                        (self.emit)(Event::ReadError { message: m.message })?;
                    }
                    None
                }
            }
        } else {
            None
        };
        let checksum = match (&data, self.opts.verify) {
            (Some(d), true) if self.fmt.csum_v2 || self.fmt.csum_v3 => {
                let seed = crc32c_raw(self.csum_seed, &transaction.to_be_bytes());
                let mut computed = crc32c_raw(seed, d);
                if !self.fmt.csum_v3 {
                    computed &= 0xFFFF;
                }
                Some(Csum {
                    stored: tag.checksum,
                    computed,
                    ok: computed == tag.checksum,
                })
            }
            _ => None,
        };
        (self.emit)(Event::Tag {
            fs_block: tag.blocknr,
            fs_block_high: tag.blocknr_high,
            journal_block: log_block,
            flags,
            checksum,
            sequence: (!self.opts.all).then_some(transaction),
        })?;
        let Some(data) = data.filter(|_| shown) else {
            return Ok(());
        };
        let fs_block = u64::from(tag.blocknr);
        if fs_block == trace.bitmap {
            // ext2fs_test_bit on debugfs' 64 KiB buffer: past the block, read as clear here.
            let bit = trace.bitmap_bit as usize;
            let set = data.get(bit / 8).is_some_and(|b| b & (1 << (bit % 8)) != 0);
            (self.emit)(Event::BitmapBit {
                block: trace.block,
                set,
            })?;
        }
        if fs_block == trace.inode_block {
            let start = (trace.inode_offset as usize).min(data.len());
            let mut raw = data[start..].to_vec();
            raw.resize(self.inode_size, 0);
            (self.emit)(Event::InodeCopy {
                ino: trace.inode,
                raw,
            })?;
        }
        if self.opts.contents {
            (self.emit)(Event::Contents { data })?;
        }
        Ok(())
    }

    fn revoke(&mut self, blocknr: u32, transaction: u32) -> std::io::Result<()> {
        if self.opts.all {
            (self.emit)(Event::RevokeDump {
                transaction,
                block: blocknr,
            })?;
        }
        let is64 = self.fmt.is_64bit;
        let size = if is64 { 8 } else { 4 };
        let header = RevokeHeader::parse(&self.buf);
        let mut max = header.count;
        if max > self.blocksize {
            (self.emit)(Event::RevokeCountInvalid { count: max })?;
            max = self.blocksize;
        }
        let mut offset = RevokeHeader::SIZE as u32;
        while offset < max {
            let revoked = jbd2::revoke_entry(&self.buf[offset as usize..], is64);
            if self.opts.all || revoked == self.opts.trace.block {
                (self.emit)(Event::Revoke {
                    fs_block: revoked,
                    at: (!self.opts.all).then_some((blocknr, transaction)),
                })?;
            }
            offset += size;
        }
        Ok(())
    }

    fn fast_commit(&mut self, transaction: u32) -> std::io::Result<()> {
        let fc_blocks = match JournalSuperblock::parse(&self.jsb).num_fc_blks {
            0 => jbd2::DEFAULT_FAST_COMMIT_BLOCKS,
            v => v,
        };
        let mut blocknr = self.maxlen.wrapping_sub(fc_blocks).wrapping_add(1);
        let bs = self.blocksize as usize;
        while blocknr <= self.maxlen {
            if !self.spend()? {
                return Ok(());
            }
            if !self.read_buf(self.block_offset(blocknr), bs)? {
                return Ok(());
            }
            let done = self.fc_block(transaction)?;
            if !self.opts.old && done {
                break;
            }
            let Some(next) = blocknr.checked_add(1) else {
                break;
            };
            blocknr = next;
            // A run of holes reads as zeros: no tags, and done.
            if self.opts.old {
                if let Some(next_data) =
                    self.src.next_data_block(u64::from(blocknr), self.blocksize)
                {
                    if next_data > u64::from(blocknr) {
                        self.buf[..bs].fill(0);
                        match u32::try_from(next_data) {
                            Ok(next_data) if next_data <= self.maxlen => blocknr = next_data,
                            _ => break,
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// dump_fc_block; returns fc_done.
    fn fc_block(&mut self, transaction: u32) -> std::io::Result<bool> {
        let bs = self.blocksize as usize;
        let mut done = false;
        let mut cur = 0usize;
        while cur < bs {
            let tl = jbd2::FcTl::parse(self.buf.get(cur..).unwrap_or(&[]));
            let val = self.buf.get(cur + 4..).unwrap_or(&[]);
            let ev = match tl.tag {
                jbd2::FC_TAG_ADD_RANGE => {
                    let add = jbd2::FcAddRange::parse(val);
                    let len = if add.ee_len > 32768 {
                        add.ee_len - 32768
                    } else {
                        add.ee_len
                    };
                    Some(Event::FcAddRange {
                        ino: add.ino,
                        lblk: add.ee_block,
                        pblk: u64::from(add.ee_start) + (u64::from(add.ee_start_hi) << 32),
                        len: u64::from(len),
                    })
                }
                jbd2::FC_TAG_DEL_RANGE => {
                    let del = jbd2::FcDelRange::parse(val);
                    Some(Event::FcDelRange {
                        ino: del.ino,
                        lblk: del.lblk,
                        len: del.len,
                    })
                }
                jbd2::FC_TAG_LINK | jbd2::FC_TAG_UNLINK | jbd2::FC_TAG_CREAT => {
                    let dentry = jbd2::FcDentry::parse(val);
                    let name: Vec<u8> = val
                        .get(8..)
                        .unwrap_or(&[])
                        .iter()
                        .take_while(|&&c| c != 0)
                        .copied()
                        .collect();
                    Some(Event::FcDentry {
                        tag: tl.tag,
                        parent: dentry.parent_ino,
                        ino: dentry.ino,
                        name: String::from_utf8_lossy(&name).into_owned(),
                        raw_name: name,
                    })
                }
                jbd2::FC_TAG_INODE => Some(Event::FcInode {
                    ino: jbd2::FcInode::parse(val).ino,
                }),
                jbd2::FC_TAG_PAD => Some(Event::FcPad),
                jbd2::FC_TAG_TAIL => {
                    let tail = jbd2::FcTail::parse(val);
                    (self.emit)(Event::FcTail { tid: tail.tid })?;
                    if !self.opts.old && tail.tid < transaction {
                        return Ok(true);
                    }
                    None
                }
                jbd2::FC_TAG_HEAD => {
                    let head = jbd2::FcHead::parse(val);
                    (self.emit)(Event::FcHead {
                        features: head.features,
                        tid: head.tid,
                    })?;
                    if !self.opts.old && head.tid < transaction {
                        return Ok(true);
                    }
                    None
                }
                _ => {
                    done = true;
                    None
                }
            };
            if let Some(event) = ev {
                (self.emit)(event)?;
            }
            cur += FcTlSize + usize::from(tl.len);
        }
        Ok(done)
    }
}

#[allow(non_upper_case_globals)]
const FcTlSize: usize = jbd2::FcTl::SIZE;

/// Walk the journal in `src` as `logdump` does, handing each event to `emit`.
/// `fs_block_size` is the open filesystem's block size (`None` for `logdump -f` without one).
pub fn walk(
    src: &dyn JournalSource,
    fs_block_size: Option<u32>,
    inode_size: usize,
    opts: Options,
    emit: &mut dyn FnMut(Event) -> std::io::Result<()>,
) -> std::io::Result<Outcome> {
    let mut walker = Walker {
        src,
        opts,
        emit,
        buf: vec![0u8; BUF_SIZE],
        jsb: Vec::new(),
        blocksize: 1024,
        maxlen: 0,
        first: 0,
        fmt: TagFormat::from_incompat(0),
        csum_seed: 0,
        budget: 0,
        out: Outcome::default(),
        inode_size: inode_size.clamp(128, BUF_SIZE),
    };
    walker.run(fs_block_size)?;
    Ok(walker.out)
}

/// Where debugfs looks for an external journal (`blkid_get_devname` by the journal UUID, then
/// `blkid_devno_to_devname` by `s_journal_dev`): udev's by-uuid link, then the device numbered
/// `s_journal_dev` (glibc's dev_t encoding) as sysfs names it.
pub fn find_external_journal(uuid: &[u8; 16], journal_dev: u32) -> Option<std::path::PathBuf> {
    let by_uuid = Path::new("/dev/disk/by-uuid").join(crate::reader::superblock::uuid_string(uuid));
    if let Ok(path) = std::fs::canonicalize(&by_uuid) {
        return Some(path);
    }
    if journal_dev == 0 {
        return None;
    }
    let major = (journal_dev >> 8) & 0xfff;
    let minor = (journal_dev & 0xff) | ((journal_dev >> 12) & 0xfff00);
    let uevent = std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent")).ok()?;
    let name = uevent.lines().find_map(|l| l.strip_prefix("DEVNAME="))?;
    Some(Path::new("/dev").join(name))
}

/// How debugfs would open the filesystem before `logdump` runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DebugfsOpen {
    /// Opened; `retried` when the superblock checksum failed and debugfs retried ignoring
    /// checksums (it prints "Checksum errors in superblock!  Retrying...").
    Open {
        /// The superblock checksum failed and debugfs retried ignoring checksums.
        retried: bool,
        /// The filesystem is open with checksum errors ignored.
        ignore_csum: bool,
    },
    /// debugfs cannot open it (the message names why); logdump then prints nothing.
    Fails(String),
}

/// Replay debugfs' `open_filesystem` (superblock checksum retry, bitmaps read at open).
pub fn debugfs_open(fs: &Filesystem) -> DebugfsOpen {
    use crate::reader::geometry::OpenFailure;
    if fs.geo.journal_dev {
        return DebugfsOpen::Fails(crate::error::ext2_err::UNSUPP_FEATURE.into());
    }
    let (retried, ignore) = match fs.strict_failure {
        None => (false, false),
        Some(OpenFailure::SbCsumInvalid) => (true, true),
        Some(failure) => return DebugfsOpen::Fails(failure.message().into()),
    };
    if let Err(failure) = crate::reader::bitmap::read_check(fs, ignore) {
        return DebugfsOpen::Fails(format!(
            "{} while reading allocation bitmaps",
            failure.message()
        ));
    }
    DebugfsOpen::Open {
        retried,
        ignore_csum: ignore,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put32(buf: &mut [u8], off: usize, value: u32) {
        buf[off..off + 4].copy_from_slice(&value.to_be_bytes());
    }

    /// Random journals with a valid magic and random fields (block sizes down to 1 byte, any
    /// s_first/s_maxlen/s_start, random block headers): never a panic, always an end.
    #[test]
    fn random_journals_end() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..400 {
            let bs = 1u32 << (next() % 13);
            let len = 1024 + (next() % 16384) as usize;
            let mut journal: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            put32(&mut journal, 0, JBD2_MAGIC);
            put32(&mut journal, 12, bs);
            put32(&mut journal, 16, (next() % 64) as u32);
            put32(&mut journal, 20, (next() % 8) as u32);
            put32(&mut journal, 28, (next() % 16) as u32);
            put32(&mut journal, 0x28, (next() % 64) as u32);
            if round % 3 == 0 {
                put32(&mut journal, 0x54, (next() % 8) as u32);
            }
            // Plant headers at random block starts.
            for _ in 0..8 {
                let block_start = (next() as usize % 16) * bs as usize;
                if block_start + 12 <= journal.len() {
                    put32(&mut journal, block_start, JBD2_MAGIC);
                    put32(&mut journal, block_start + 4, 1 + (next() % 5) as u32);
                    let seq = JournalSuperblock::parse(&journal)
                        .sequence
                        .wrapping_add((next() % 3) as u32);
                    put32(&mut journal, block_start + 8, seq);
                }
            }
            for opts in [
                Options::default(),
                Options {
                    all: true,
                    old: true,
                    count: 2,
                    contents: true,
                    verify: true,
                    superblock: true,
                    trace: Trace {
                        block: 3,
                        bitmap: 2,
                        bitmap_bit: 9,
                        inode: 5,
                        inode_block: 4,
                        inode_offset: 900,
                    },
                },
            ] {
                for fsbs in [None, Some(bs)] {
                    let mut events = 0u64;
                    walk(&MemJournal(journal.clone()), fsbs, 256, opts, &mut |_| {
                        events += 1;
                        Ok(())
                    })
                    .unwrap();
                    assert!(events < 200_000, "round {round}: {events} events");
                }
            }
        }
    }

    /// A 16-block journal of 1 KiB blocks whose blocks all carry descriptor headers of the same
    /// sequence: debugfs loops forever; the walk must end.
    #[test]
    fn endless_log_is_bounded() {
        let bs = 1024;
        let mut journal = vec![0u8; 16 * bs];
        put32(&mut journal, 0, JBD2_MAGIC);
        put32(&mut journal, 4, 4);
        put32(&mut journal, 12, bs as u32);
        put32(&mut journal, 16, 16);
        put32(&mut journal, 20, 1);
        put32(&mut journal, 24, 7);
        put32(&mut journal, 28, 1);
        for block in 1..16 {
            put32(&mut journal, block * bs, JBD2_MAGIC);
            put32(&mut journal, block * bs + 4, 1);
            put32(&mut journal, block * bs + 8, 7);
            // one tag, LAST_TAG | SAME_UUID
            put32(&mut journal, block * bs + 16, 0x0A);
        }
        let mut events = 0;
        let out = walk(
            &MemJournal(journal),
            Some(1024),
            128,
            Options::default(),
            &mut |_| {
                events += 1;
                Ok(())
            },
        )
        .unwrap();
        assert!(out.cut_short);
        assert!(events < 10_000, "{events} events");
    }
}
