//! Read-only journal replay: the filesystem as the next mount (or `e2fsck -E journal_only`) will
//! see it, without writing a byte.
//!
//! The log is walked exactly as `jbd2_journal_recover` does (fs/jbd2/recovery.c, and its copy in
//! e2fsck/recovery.c): three passes from `s_start`/`s_sequence` (`do_one_pass` with PASS_SCAN,
//! PASS_REVOKE, PASS_REPLAY), descriptor tags of every layout (32/64-bit, csum v2/v3), SAME_UUID,
//! escaped blocks, revoke records (`scan_revoke_records`, `jbd2_journal_set_revoke`,
//! `jbd2_journal_test_revoke`), commit blocks with their v1 (`calc_chksums`) and v2/v3 checksums,
//! `async_commit`, and the end of the log at the first block without the magic or with another
//! sequence. Instead of writing, the replay pass records which journal block holds the newest
//! copy of each filesystem block: the [`Overlay`] maps block numbers to journal blocks (no copies:
//! its memory is bounded by the journal's size), and reads through it return the journal's copy.
//!
//! What e2fsck then writes is mirrored in two patches (`recover_ext3_journal`,
//! `e2fsck_journal_release`, `e2fsck_run_ext3_journal`, `e2fsck_clear_recover` in
//! e2fsck/journal.c): the journal superblock gets `s_start` 0 and `s_sequence` one past the end of
//! the log (`s_errno` -EINVAL when a commit failed its checksum), and the filesystem superblock
//! loses `needs_recovery`, loses `VALID_FS` when recovery failed, and counts the bytes recovery
//! wrote in `s_kbytes_written` (each replayed block and the journal superblock, as the I/O
//! statistics of e2fsck's channel do). The write time stays the one on disk: a recovery stamps
//! the time it runs, which no read-only view can know.
//!
//! Fast-commit blocks are scanned as e2fsck 1.47 scans them (`ext4_fc_replay_scan` through
//! `fc_do_one_pass`, e2fsck/journal.c and e2fsck/recovery.c) but not applied: applying them
//! rewrites extent trees (allocating tree blocks), directory blocks (`ext2fs_link`) and every
//! bitmap and summary count, which an overlay of journal blocks cannot express. What e2fsck would
//! apply is reported exactly instead, tag by tag ([`Plan::fast_commit`]); a scan e2fsck fails
//! (a HEAD of another transaction, a first TAIL with a wrong CRC, an unknown tag) fails recovery
//! here too ([`Failure::FastCommit`]), so that nothing is replayed, as e2fsck replays nothing.
//!
//! Hostile journals cost bounded time: each pass reads at most as many blocks as the log has
//! (a valid log never wraps onto itself), and the revoke table and the block map hold at most one
//! entry per record and tag read.

use crate::error::{Error, ProblemKind, Result};
use crate::reader::csum::crc32c_raw;
use crate::reader::extent::{self, WalkLimits};
use crate::reader::fs::{Filesystem, OpenOptions};
use crate::reader::inode::Inode;
use crate::reader::ondisk::journal::{
    self as jbd2, Commit, Header, RevokeHeader, TagFormat, JBD2_MAGIC,
};
use crate::reader::source::Source;
use std::collections::HashMap;
use std::path::Path;

/// Bytes of the journal superblock e2fsck rewrites.
pub const JSB_SIZE: usize = 1024;
/// Byte offset of `s_sequence` in the journal superblock.
const JSB_SEQUENCE: usize = 0x18;
/// Byte offset of `s_start`.
const JSB_START: usize = 0x1C;
/// Byte offset of `s_errno`.
const JSB_ERRNO: usize = 0x20;
/// Byte offset of `s_checksum`.
const JSB_CHECKSUM: usize = 0xFC;
/// -EINVAL, what e2fsck stores in `s_errno` when a transaction failed its commit checksum.
const EINVAL: i32 = 22;
/// Most failures kept for reporting (the count goes on).
const MAX_FAILURES: usize = 16;

/// One journal block, read by number.
pub trait LogRead {
    /// Journal blocks that can be read (the journal inode's size, or the device's).
    fn total_blocks(&self) -> u64;
    /// Journal block `n` (`block_size` bytes); the error is why it cannot be read.
    fn read_block(&self, block: u64) -> std::result::Result<Vec<u8>, String>;
}

/// Why part of the log could not be replayed (what the kernel prints, with where).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A block of the log could not be read (`jread`): a hole, past `s_maxlen`, an I/O error.
    Read {
        /// Journal block.
        log_block: u64,
        /// Why.
        why: String,
    },
    /// A descriptor block of a committed transaction failed its checksum (PASS_REPLAY).
    DescriptorChecksum {
        /// Transaction.
        tid: u32,
        /// Journal block.
        log_block: u64,
    },
    /// A descriptor or revoke block failed its checksum, and a later commit block says it
    /// belongs to this journal ("JBD2: Invalid checksum found in transaction").
    TransactionChecksum {
        /// Transaction.
        tid: u32,
        /// Journal block of its commit block.
        log_block: u64,
    },
    /// A logged data block failed its tag checksum: not replayed.
    DataChecksum {
        /// Transaction.
        tid: u32,
        /// The filesystem block it would have replaced.
        fs_block: u64,
        /// Journal block.
        log_block: u64,
    },
    /// A tag points outside the filesystem.
    Outside {
        /// Transaction.
        tid: u32,
        /// The block named by the tag.
        fs_block: u64,
        /// Journal block.
        log_block: u64,
    },
    /// A revoke block claims more bytes than a block holds (-EINVAL).
    RevokeCount {
        /// Transaction.
        tid: u32,
        /// Journal block.
        log_block: u64,
    },
    /// e2fsck's fast-commit scan returned an error, which fails the whole recovery
    /// (`fc_do_one_pass` in PASS_SCAN).
    FastCommit {
        /// The transaction the fast-commit area must follow (the end of the log).
        tid: u32,
        /// What the scan met.
        why: String,
        /// The kernel (Linux 6.x `ext4_fc_replay_scan`) ends the scan there and mounts: only a
        /// HEAD of another transaction, which e2fsck 1.47 treats as -EINVAL.
        kernel_accepts: bool,
    },
    /// A pass ended at another transaction than the scan (-EIO).
    PassMismatch {
        /// Where the pass ended.
        ended: u32,
        /// Where the scan ended.
        expected: u32,
    },
}

impl std::fmt::Display for Failure {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Read { log_block, why } => {
                write!(formatter, "journal block {log_block} cannot be read: {why}")
            }
            Failure::DescriptorChecksum { tid, log_block } => write!(
                formatter,
                "transaction {tid}: descriptor block at journal block {log_block} fails its checksum"
            ),
            Failure::TransactionChecksum { tid, log_block } => write!(
                formatter,
                "transaction {tid} (commit block at journal block {log_block}) holds a block that fails its checksum"
            ),
            Failure::DataChecksum {
                tid,
                fs_block,
                log_block,
            } => write!(
                formatter,
                "transaction {tid}: the copy of block {fs_block} at journal block {log_block} fails its checksum"
            ),
            Failure::Outside {
                tid,
                fs_block,
                log_block,
            } => write!(
                formatter,
                "transaction {tid}: journal block {log_block} is logged for block {fs_block}, outside the filesystem"
            ),
            Failure::RevokeCount { tid, log_block } => write!(
                formatter,
                "transaction {tid}: revoke block at journal block {log_block} claims more bytes than a block holds"
            ),
            Failure::FastCommit { tid, why, .. } => write!(
                formatter,
                "the fast-commit area after transaction {}: {why}",
                tid.wrapping_sub(1)
            ),
            Failure::PassMismatch { ended, expected } => write!(
                formatter,
                "a recovery pass ended at transaction {ended}, the scan at {expected}"
            ),
        }
    }
}

/// The newest copy of a filesystem block in the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Logged {
    /// Journal block holding it.
    pub log_block: u64,
    /// The copy was escaped (its first word was the jbd2 magic): it is restored on read.
    pub escaped: bool,
    /// Transaction that logged it.
    pub tid: u32,
}

/// A committed transaction the replay applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transaction {
    /// Transaction ID.
    pub tid: u32,
    /// Blocks it replays (tags not revoked and not failing their checksum).
    pub replayed: u64,
}

/// One fast-commit tag e2fsck 1.47 applies after the log (`ext4_fc_replay`), decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FcOp {
    /// ADD_RANGE: logical blocks mapped to physical ones (the extent list rewritten).
    AddRange {
        /// The inode.
        ino: u32,
        /// First logical block.
        lblk: u32,
        /// First physical block.
        pblk: u64,
        /// Blocks.
        len: u32,
        /// The extent is unwritten.
        unwritten: bool,
    },
    /// DEL_RANGE: logical blocks unmapped (and freed).
    DelRange {
        /// The inode.
        ino: u32,
        /// First logical block.
        lblk: u32,
        /// Blocks.
        len: u32,
    },
    /// CREAT (`created`) or LINK: an entry added to a directory (`ext2fs_link`, after a forced
    /// unlink of the same name).
    Link {
        /// The directory.
        parent: u32,
        /// The entry's inode.
        ino: u32,
        /// The name.
        name: Vec<u8>,
        /// CREAT rather than LINK.
        created: bool,
    },
    /// UNLINK: an entry removed (`ext2fs_unlink`).
    Unlink {
        /// The directory.
        parent: u32,
        /// The entry's inode.
        ino: u32,
        /// The name.
        name: Vec<u8>,
    },
    /// INODE: the logged inode record replaces the table's (all but `i_block`, whose extent
    /// tree the ranges rebuild), its inode bitmap bit set or cleared by its link count.
    Inode {
        /// The inode.
        ino: u32,
    },
}

impl FcOp {
    /// The tag's name as e2fsprogs' `tag2str` gives it.
    pub fn tag(&self) -> &'static str {
        let text = match self {
            FcOp::AddRange { .. } => jbd2::FC_TAG_ADD_RANGE,
            FcOp::DelRange { .. } => jbd2::FC_TAG_DEL_RANGE,
            FcOp::Link { created: true, .. } => jbd2::FC_TAG_CREAT,
            FcOp::Link { .. } => jbd2::FC_TAG_LINK,
            FcOp::Unlink { .. } => jbd2::FC_TAG_UNLINK,
            FcOp::Inode { .. } => jbd2::FC_TAG_INODE,
        };
        jbd2::fc_tag_name(text)
    }
}

impl std::fmt::Display for FcOp {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = |n: &[u8]| String::from_utf8_lossy(n).into_owned();
        match self {
            FcOp::AddRange {
                ino,
                lblk,
                pblk,
                len,
                unwritten,
            } => write!(
                formatter,
                "inode {ino}: logical blocks {lblk}-{} mapped to blocks {pblk}-{}{}",
                u64::from(*lblk) + u64::from(*len).max(1) - 1,
                pblk + u64::from(*len).max(1) - 1,
                if *unwritten { " (unwritten)" } else { "" }
            ),
            FcOp::DelRange { ino, lblk, len } => write!(
                formatter,
                "inode {ino}: logical blocks {lblk}-{} unmapped",
                u64::from(*lblk) + u64::from(*len).max(1) - 1
            ),
            FcOp::Link {
                parent,
                ino,
                name: n,
                ..
            } => write!(
                formatter,
                "directory {parent}: entry \"{}\" added for inode {ino}",
                name(n)
            ),
            FcOp::Unlink {
                parent,
                ino,
                name: n,
            } => write!(
                formatter,
                "directory {parent}: entry \"{}\" (inode {ino}) removed",
                name(n)
            ),
            FcOp::Inode { ino } => write!(
                formatter,
                "inode {ino}: the logged inode replaces the table's"
            ),
        }
    }
}

/// The fast-commit transaction e2fsck 1.47 applies after the log, which this replay does not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FastCommit {
    /// Its transaction ID (the end of the log).
    pub tid: u32,
    /// Tags e2fsck replays (`fc_replay_num_tags`: HEAD, TAIL and PAD included).
    pub tags: u64,
    /// The tags that change the filesystem, in replay order (at most `MAX_FC_OPS`).
    pub ops: Vec<FcOp>,
    /// Such tags beyond those kept in `ops`.
    pub more_ops: u64,
}

impl FastCommit {
    /// Inodes the transaction changes (their record, blocks or entries naming them), sorted.
    pub fn inodes(&self) -> Vec<u32> {
        let mut tids: Vec<u32> = self
            .ops
            .iter()
            .flat_map(|op| match op {
                FcOp::AddRange { ino, .. } | FcOp::DelRange { ino, .. } | FcOp::Inode { ino } => {
                    vec![*ino]
                }
                FcOp::Link { parent, ino, .. } | FcOp::Unlink { parent, ino, .. } => {
                    vec![*parent, *ino]
                }
            })
            .collect();
        tids.sort_unstable();
        tids.dedup();
        tids
    }
}

/// Most fast-commit operations kept for reporting (the count goes on).
const MAX_FC_OPS: usize = 4096;

/// The outcome of the three passes: what a replay writes, and what recovery would report.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// `s_start` was not 0: there is a log to replay.
    pub has_log: bool,
    /// First transaction of the log (`s_sequence`).
    pub start_tid: u32,
    /// First transaction not replayed (the end of the log).
    pub end_tid: u32,
    /// Filesystem block -> its newest logged copy.
    pub map: HashMap<u64, Logged>,
    /// Transactions replayed, in order.
    pub transactions: Vec<Transaction>,
    /// Blocks written by the replay (`nr_replays`: a block logged twice counts twice).
    pub replays: u64,
    /// Blocks the replay's writes cost on e2fsck's cached I/O channel (see `ChannelCache`).
    pub blocks_written: u64,
    /// Revoke records read.
    pub revokes: u64,
    /// Tags skipped because revoked.
    pub revoke_hits: u64,
    /// A commit block failed its checksum without async_commit (`j_failed_commit`): the log ends
    /// before it, and e2fsck marks the journal with -EINVAL.
    pub failed_commit: Option<u32>,
    /// Recovery returned an error (a checksum or read failure): e2fsck then marks the
    /// filesystem not clean, the kernel refuses to mount.
    pub failures: Vec<Failure>,
    /// Failures beyond those kept in `failures`.
    pub more_failures: u64,
    /// The walk was cut: the log claimed more blocks than the journal has.
    pub cut_short: bool,
    /// A fast-commit transaction follows the log and e2fsck would apply it: not replayed here,
    /// reported tag by tag.
    pub fast_commit: Option<FastCommit>,
}

impl Plan {
    /// Committed transactions the replay applies.
    pub fn committed(&self) -> u32 {
        self.end_tid.wrapping_sub(self.start_tid)
    }
    /// True when recovery would report an error.
    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }
    fn fail(&mut self, failure: Failure) {
        if self.failures.len() < MAX_FAILURES {
            self.failures.push(failure);
        } else {
            self.more_failures += 1;
        }
    }
}

/// The journal parameters recovery uses (`journal_t` after `jbd2_journal_load`).
#[derive(Clone, Debug)]
pub struct Params {
    /// Journal block size.
    pub block_size: usize,
    /// `j_first`.
    pub first: u64,
    /// `j_last` (the end of the main log: the fast-commit area follows).
    pub last: u64,
    /// `j_total_len`: blocks that can be read.
    pub total_len: u64,
    /// `s_start`.
    pub start: u64,
    /// `s_sequence`.
    pub sequence: u32,
    /// Tag layout.
    pub tags: TagFormat,
    /// v1 transaction checksums.
    pub compat_checksum: bool,
    /// `async_commit`.
    pub async_commit: bool,
    /// First fast-commit block, when the journal has fast commits.
    pub fc_first: Option<u64>,
    /// The filesystem has `fast_commit`: e2fsck then scans the fast-commit area
    /// (`j_fc_replay_callback` is set only then).
    pub fc_replay: bool,
    /// `j_csum_seed`: crc32c of the journal UUID.
    pub csum_seed: u32,
    /// Filesystem blocks: tags at or beyond are outside the filesystem.
    pub fs_blocks: u64,
}

impl Params {
    /// Check the journal superblock as `e2fsck_journal_load` and `jbd2_journal_load` do, and
    /// derive the recovery parameters; the error names what is wrong.
    pub fn from_superblock(
        jsb: &[u8],
        fs_block_size: u64,
        log_blocks: u64,
        fs_blocks: u64,
    ) -> std::result::Result<Params, String> {
        let raw: jbd2::RawJournalSuperblock =
            crate::reader::ondisk::decode(jsb).map_err(|e| e.to_string())?;
        if raw.header.magic != JBD2_MAGIC {
            return Err("the journal superblock has no jbd2 magic number".into());
        }
        let v2 = match raw.header.blocktype {
            jbd2::SUPERBLOCK_V1 => false,
            jbd2::SUPERBLOCK_V2 => true,
            t => return Err(format!("the journal superblock has block type {t}")),
        };
        let (compat, incompat) = if v2 {
            (raw.feature_compat, raw.feature_incompat)
        } else {
            (0, 0)
        };
        if v2 && (raw.feature_incompat & !KNOWN_INCOMPAT != 0 || raw.feature_ro_compat != 0) {
            return Err(format!(
                "the journal has features this replay does not know (incompat {:#x}, ro_compat {:#x})",
                raw.feature_incompat, raw.feature_ro_compat
            ));
        }
        let v2csum = incompat & jbd2::INCOMPAT_CSUM_V2 != 0;
        let v3csum = incompat & jbd2::INCOMPAT_CSUM_V3 != 0;
        if v2csum && v3csum {
            return Err("the journal claims both checksum v2 and v3".into());
        }
        if (v2csum || v3csum) && raw.checksum_type != jbd2::CRC32C_CHKSUM {
            return Err(format!(
                "the journal checksum type {} is not crc32c",
                raw.checksum_type
            ));
        }
        if v2csum || v3csum {
            let mut copy = jsb.get(..JSB_SIZE).unwrap_or(&[]).to_vec();
            put_be32(&mut copy, JSB_CHECKSUM, 0);
            if crc32c_raw(!0, &copy) != raw.checksum {
                return Err("the journal superblock fails its checksum".into());
            }
        }
        if u64::from(raw.blocksize) != fs_block_size {
            return Err(format!(
                "the journal block size {} is not the filesystem's {fs_block_size}",
                raw.blocksize
            ));
        }
        let maxlen = u64::from(raw.maxlen);
        if maxlen > log_blocks {
            return Err(format!(
                "the journal is too short: its superblock claims {maxlen} blocks, it holds {log_blocks}"
            ));
        }
        let mut last = maxlen;
        let mut fc_first = None;
        if incompat & jbd2::INCOMPAT_FAST_COMMIT != 0 {
            let fc = match raw.num_fc_blks {
                0 => jbd2::DEFAULT_FAST_COMMIT_BLOCKS,
                n => n,
            };
            last = maxlen.saturating_sub(u64::from(fc));
            fc_first = Some(last + 1);
        }
        let first = u64::from(raw.first);
        if first == 0 || first >= last {
            return Err(format!(
                "the journal's first log block {first} is not inside its {last} blocks"
            ));
        }
        Ok(Params {
            block_size: usize::try_from(fs_block_size).unwrap_or(0),
            first,
            last,
            total_len: maxlen,
            start: u64::from(raw.start),
            sequence: raw.sequence,
            tags: TagFormat::from_incompat(incompat),
            compat_checksum: compat & jbd2::COMPAT_CHECKSUM != 0,
            async_commit: incompat & jbd2::INCOMPAT_ASYNC_COMMIT != 0,
            fc_first,
            fc_replay: false,
            csum_seed: crc32c_raw(!0, &raw.uuid),
            fs_blocks,
        })
    }

    fn csum_v2or3(&self) -> bool {
        self.tags.csum_v2 || self.tags.csum_v3
    }

    /// `wrap()`: past the end of the log, continue at its start.
    fn wrap(&self, block: u64) -> u64 {
        if block >= self.last {
            block - (self.last - self.first)
        } else {
            block
        }
    }

    /// Blocks of the main log: no valid walk reads more in one pass.
    fn log_len(&self) -> u64 {
        self.last - self.first
    }
}

/// Journal blocks in the simulated channel cache (kept apart from filesystem block numbers).
const JOURNAL_KEY: u64 = 1 << 63;

/// Incompat features jbd2 knows: revoke, 64bit, async_commit, csum v2, csum v3, fast_commit.
const KNOWN_INCOMPAT: u32 = 0x3F;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pass {
    Scan,
    Revoke,
    Replay,
}

/// The state `do_one_pass` carries from one log block to the next.
struct PassState {
    /// The transaction the next commit block must carry.
    next_commit: u32,
    /// The next log block to read.
    next: u64,
    /// The v1 (compat) checksum of the transaction so far.
    crc32_sum: u32,
    /// A descriptor or revoke block failed its checksum: the next commit's time decides
    /// whether that is damage or the stale end of an older log.
    need_check_commit_time: bool,
    last_commit_time: u64,
    /// No block failed (the replay goes on past a failed block).
    success: bool,
    /// The transaction being replayed, until its commit block.
    current: Option<Transaction>,
}

/// What one log block tells `do_one_pass` to do next.
enum Step {
    /// Read the next block.
    Next,
    /// The log ends here (`done`).
    EndOfLog,
    /// The pass failed (`goto failed`), already reported in the plan.
    Failed,
}

/// `tid_gt`: sequence comparison modulo 2^32.
fn tid_gt(tid: u32, other: u32) -> bool {
    (tid.wrapping_sub(other) as i32) > 0
}
fn tid_geq(tid: u32, other: u32) -> bool {
    (tid.wrapping_sub(other) as i32) >= 0
}

fn be32(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_be_bytes)
}

fn put_be32(bytes: &mut [u8], at: usize, value: u32) {
    if let Some(word) = bytes.get_mut(at..at + 4) {
        word.copy_from_slice(&value.to_be_bytes());
    }
}

/// `crc32_be` (the v1 transaction checksum): CRC-32, polynomial 0x04C11DB7, MSB first, no
/// inversion, continuing from `crc`.
fn crc32_be(mut crc: u32, data: &[u8]) -> u32 {
    for &byte in data {
        crc ^= u32::from(byte) << 24;
        for _ in 0..8 {
            crc = if crc & 0x8000_0000 != 0 {
                (crc << 1) ^ 0x04C1_1DB7
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// e2fsck's I/O channel caches single-block reads and writes (unix_io.c: 8 entries, least
/// recently used reused, a dirty entry written when reused and at the final flush). Its write
/// statistics, which e2fsck adds to `s_kbytes_written`, count the writes that reach the disk:
/// a block replayed twice while cached is written once. The replay pass is simulated on it.
#[derive(Default)]
struct ChannelCache {
    /// (block, dirty, last access)
    slots: Vec<(u64, bool, u64)>,
    clock: u64,
    writes: u64,
}

/// CACHE_SIZE in unix_io.c.
const CHANNEL_CACHE_SLOTS: usize = 8;

impl ChannelCache {
    fn touch(&mut self, block: u64, write: bool) {
        self.clock += 1;
        if let Some(slot) = self.slots.iter_mut().find(|slot| slot.0 == block) {
            slot.2 = self.clock;
            slot.1 |= write;
            return;
        }
        if self.slots.len() < CHANNEL_CACHE_SLOTS {
            self.slots.push((block, write, self.clock));
            return;
        }
        if let Some(old) = self.slots.iter_mut().min_by_key(|slot| slot.2) {
            if old.1 {
                self.writes += 1;
            }
            *old = (block, write, self.clock);
        }
    }
    fn flush(&mut self) -> u64 {
        self.writes + self.slots.iter().filter(|s| s.1).count() as u64
    }
}

/// State carried from one pass to the next (`struct recovery_info`).
#[derive(Default)]
struct Info {
    end_transaction: u32,
    /// Revoke table: block -> newest revoking transaction.
    revoked: HashMap<u64, u32>,
}

struct Walk<'a> {
    p: &'a Params,
    log: &'a dyn LogRead,
    plan: Plan,
    info: Info,
    cache: ChannelCache,
    /// What the fast-commit scan found to apply.
    fc: Option<FastCommit>,
}

/// Run the three recovery passes over `log`.
pub fn plan(params: &Params, log: &dyn LogRead) -> Plan {
    let mut walk = Walk {
        p: params,
        log,
        plan: Plan {
            start_tid: params.sequence,
            end_tid: params.sequence,
            ..Plan::default()
        },
        info: Info::default(),
        cache: ChannelCache::default(),
        fc: None,
    };
    // jbd2_journal_recover: s_start 0 means a clean journal.
    if params.start == 0 {
        return walk.plan;
    }
    walk.plan.has_log = true;
    let mut ok = walk.pass(Pass::Scan);
    if ok {
        // do_one_pass(PASS_SCAN) ends with the fast-commit scan; its error fails recovery.
        ok = walk.fast_commit_scan();
    }
    if !ok {
        // The scan failed: nothing is replayed.
        walk.info.end_transaction = params.sequence;
    }
    if ok {
        ok = walk.pass(Pass::Revoke);
    }
    if ok {
        walk.pass(Pass::Replay);
    }
    walk.plan.end_tid = walk.info.end_transaction;
    walk.plan.blocks_written = walk.cache.flush();
    if !walk.plan.failed() {
        walk.plan.fast_commit = walk.fc.take().filter(|fc| fc.tags > 0);
    }
    walk.plan
}

impl Walk<'_> {
    fn jread(&self, block: u64) -> std::result::Result<Vec<u8>, Failure> {
        if block >= self.p.total_len {
            return Err(Failure::Read {
                log_block: block,
                why: "past the end of the journal (corrupted journal superblock)".into(),
            });
        }
        self.log.read_block(block).map_err(|why| Failure::Read {
            log_block: block,
            why,
        })
    }

    /// `jbd2_descriptor_block_csum_verify` (descriptor and revoke blocks).
    fn tail_csum_ok(&self, block: &[u8]) -> bool {
        if !self.p.csum_v2or3() {
            return true;
        }
        let mut copy = block.to_vec();
        let at = copy.len().saturating_sub(4);
        let want = be32(&copy, at);
        put_be32(&mut copy, at, 0);
        crc32c_raw(self.p.csum_seed, &copy) == want
    }

    /// `jbd2_commit_block_csum_verify`.
    fn commit_csum_ok(&self, block: &[u8]) -> bool {
        if !self.p.csum_v2or3() {
            return true;
        }
        let mut copy = block.to_vec();
        let want = be32(&copy, Commit::CHECKSUM_OFFSET);
        put_be32(&mut copy, Commit::CHECKSUM_OFFSET, 0);
        crc32c_raw(self.p.csum_seed, &copy) == want
    }

    /// `jbd2_block_tag_csum_verify`.
    fn tag_csum_ok(&self, tag: &jbd2::Tag, data: &[u8], sequence: u32) -> bool {
        if !self.p.csum_v2or3() {
            return true;
        }
        let csum = crc32c_raw(self.p.csum_seed, &sequence.to_be_bytes());
        let csum = crc32c_raw(csum, data);
        if self.p.tags.csum_v3 {
            tag.checksum == csum
        } else {
            tag.checksum == csum & 0xFFFF
        }
    }

    /// The tags of a descriptor block: (tag, offset); `count_tags` is their number.
    fn tags(&self, block: &[u8]) -> Vec<jbd2::Tag> {
        let tag_bytes = self.p.tags.tag_bytes();
        let size = self.p.block_size - self.p.tags.tail_bytes();
        let mut at = Header::SIZE;
        let mut out = Vec::new();
        while at + tag_bytes <= size {
            let mut tag = self.p.tags.parse(block.get(at..).unwrap_or(&[]));
            // The kernel reads the flags as a 16-bit field at byte 6 of every layout.
            tag.flags &= 0xFFFF;
            out.push(tag);
            at += tag_bytes;
            if tag.flags & jbd2::FLAG_SAME_UUID == 0 {
                at += 16;
            }
            if tag.flags & jbd2::FLAG_LAST_TAG != 0 {
                break;
            }
        }
        out
    }

    /// `calc_chksums`: fold the descriptor and its data blocks into the v1 checksum; false when
    /// a data block cannot be read.
    fn calc_chksums(&self, desc: &[u8], next: &mut u64, crc: &mut u32) -> bool {
        let count = self.tags(desc).len();
        *crc = crc32_be(*crc, desc);
        for _ in 0..count {
            let io_block = *next;
            *next = self.p.wrap(*next + 1);
            match self.jread(io_block) {
                Ok(b) => *crc = crc32_be(*crc, &b),
                Err(_) => return false,
            }
        }
        true
    }

    /// `do_one_pass`; false when the pass failed (`goto failed`), which stops recovery.
    fn pass(&mut self, pass: Pass) -> bool {
        let params = self.p;
        let mut state = PassState {
            next_commit: params.sequence,
            next: params.start,
            crc32_sum: !0u32,
            need_check_commit_time: false,
            last_commit_time: 0,
            success: true,
            current: None,
        };
        // A valid log never holds more blocks than the journal: a walk reading more is going
        // around a crafted log, and ends there.
        let mut budget = params.log_len().saturating_add(1);
        loop {
            if pass != Pass::Scan && tid_geq(state.next_commit, self.info.end_transaction) {
                break;
            }
            if budget == 0 {
                self.plan.cut_short = true;
                break;
            }
            budget -= 1;
            let this = state.next;
            if pass == Pass::Replay {
                self.cache.touch(JOURNAL_KEY | this, false);
            }
            let block = match self.jread(this) {
                Ok(block) => block,
                Err(failure) => {
                    self.plan.fail(failure);
                    return false;
                }
            };
            state.next = params.wrap(state.next + 1);
            let header = Header::parse(&block);
            if header.magic != JBD2_MAGIC || header.sequence != state.next_commit {
                break;
            }
            let step = match header.blocktype {
                jbd2::DESCRIPTOR_BLOCK => {
                    self.pass_descriptor(pass, &mut state, &block, this, header.sequence)
                }
                jbd2::COMMIT_BLOCK => self.pass_commit(pass, &mut state, &block, this),
                jbd2::REVOKE_BLOCK => self.pass_revoke(pass, &mut state, &block, this),
                _ => Step::EndOfLog,
            };
            match step {
                Step::Next => {}
                Step::EndOfLog => break,
                Step::Failed => return false,
            }
        }
        self.pass_end(pass, &state)
    }

    /// A descriptor block: its tail checksum (a bad one fails the later passes; in the scan it
    /// only makes the commit time decide), then its tags: skipped over by the scan (folded into
    /// the v1 checksum when the journal has one) and the revoke pass, replayed by the last pass.
    fn pass_descriptor(
        &mut self,
        pass: Pass,
        state: &mut PassState,
        block: &[u8],
        this: u64,
        sequence: u32,
    ) -> Step {
        let params = self.p;
        if !self.tail_csum_ok(block) {
            if pass != Pass::Scan {
                self.plan.fail(Failure::DescriptorChecksum {
                    tid: state.next_commit,
                    log_block: this,
                });
                return Step::Failed;
            }
            state.need_check_commit_time = true;
        }
        if pass == Pass::Replay {
            self.replay_tags(state, block, sequence);
            return Step::Next;
        }
        if pass == Pass::Scan
            && params.compat_checksum
            && !state.need_check_commit_time
            && self.info.end_transaction == 0
        {
            if !self.calc_chksums(block, &mut state.next, &mut state.crc32_sum) {
                return Step::EndOfLog;
            }
            return Step::Next;
        }
        let tags = self.tags(block).len() as u64;
        state.next = params.wrap(state.next + tags);
        Step::Next
    }

    /// The replay of one descriptor's tags: each data block is mapped over its fs block unless
    /// a later transaction revoked that block, its tag checksum fails or the block lies outside
    /// the filesystem. A failed block is reported and the others are still replayed (the kernel
    /// recovers what it can and fails the recovery at the end).
    fn replay_tags(&mut self, state: &mut PassState, block: &[u8], sequence: u32) {
        let params = self.p;
        let tid = state.next_commit;
        let tx = state
            .current
            .get_or_insert(Transaction { tid, replayed: 0 });
        for tag in self.tags(block) {
            let io_block = state.next;
            state.next = params.wrap(state.next + 1);
            self.cache.touch(JOURNAL_KEY | io_block, false);
            let data = match self.jread(io_block) {
                Ok(data) => data,
                Err(failure) => {
                    // Recover what can be, report the failure at the end.
                    self.plan.fail(failure);
                    state.success = false;
                    continue;
                }
            };
            let blocknr = u64::from(tag.blocknr)
                | if params.tags.is_64bit {
                    u64::from(tag.blocknr_high) << 32
                } else {
                    0
                };
            if let Some(&revoked_by) = self.info.revoked.get(&blocknr) {
                if !tid_gt(tid, revoked_by) {
                    self.plan.revoke_hits += 1;
                    continue;
                }
            }
            if !self.tag_csum_ok(&tag, &data, sequence) {
                self.plan.fail(Failure::DataChecksum {
                    tid,
                    fs_block: blocknr,
                    log_block: io_block,
                });
                state.success = false;
                continue;
            }
            if blocknr >= params.fs_blocks {
                self.plan.fail(Failure::Outside {
                    tid,
                    fs_block: blocknr,
                    log_block: io_block,
                });
                state.success = false;
                continue;
            }
            self.plan.map.insert(
                blocknr,
                Logged {
                    log_block: io_block,
                    escaped: tag.flags & jbd2::FLAG_ESCAPE != 0,
                    tid,
                },
            );
            self.plan.replays += 1;
            self.cache.touch(blocknr, true);
            tx.replayed += 1;
        }
    }

    /// A commit block ends its transaction. In the scan: after a bad descriptor or revoke
    /// checksum, a commit no older than the last one is a checksum failure and an older one is
    /// a stale block of an earlier log (the log ends there, successfully); a bad v1 or v2/v3
    /// commit checksum ends the log at this transaction (unless async_commit, where the kernel
    /// goes on and judges by the commit times).
    fn pass_commit(&mut self, pass: Pass, state: &mut PassState, block: &[u8], this: u64) -> Step {
        let params = self.p;
        let commit = Commit::parse(block);
        let commit_time = commit.commit_sec;
        if state.need_check_commit_time {
            if commit_time >= state.last_commit_time {
                self.plan.fail(Failure::TransactionChecksum {
                    tid: state.next_commit,
                    log_block: this,
                });
                return Step::Failed;
            }
            // Stale blocks of an older journal: the log ends here, successfully.
            return Step::EndOfLog;
        }
        let mut chksum_error = false;
        if pass == Pass::Scan && params.compat_checksum {
            if self.info.end_transaction != 0 {
                self.plan.failed_commit = Some(self.info.end_transaction);
                return Step::EndOfLog;
            }
            let found = commit.chksum[0];
            let matches = state.crc32_sum == found
                && commit.chksum_type == jbd2::CRC32_CHKSUM
                && commit.chksum_size == jbd2::CRC32_CHKSUM_SIZE;
            let unused = commit.chksum_type == 0 && commit.chksum_size == 0 && found == 0;
            chksum_error = !(matches || unused);
            if !chksum_error {
                state.crc32_sum = !0;
            }
        }
        if pass == Pass::Scan && (chksum_error || !self.commit_csum_ok(block)) {
            if commit_time < state.last_commit_time {
                return Step::EndOfLog;
            }
            self.info.end_transaction = state.next_commit;
            if !params.async_commit {
                self.plan.failed_commit = Some(state.next_commit);
                return Step::EndOfLog;
            }
        }
        if pass == Pass::Scan {
            state.last_commit_time = commit_time;
        }
        if let Some(tx) = state.current.take() {
            self.plan.transactions.push(tx);
        } else if pass == Pass::Replay {
            self.plan.transactions.push(Transaction {
                tid: state.next_commit,
                replayed: 0,
            });
        }
        state.next_commit = state.next_commit.wrapping_add(1);
        Step::Next
    }

    /// A revoke block: a bad tail checksum makes the scan judge by commit times; the revoke
    /// pass records its blocks (a count larger than the block fails the pass).
    fn pass_revoke(&mut self, pass: Pass, state: &mut PassState, block: &[u8], this: u64) -> Step {
        if pass == Pass::Scan && !self.tail_csum_ok(block) {
            state.need_check_commit_time = true;
        }
        if pass != Pass::Revoke {
            return Step::Next;
        }
        if !self.scan_revoke_records(block, state.next_commit) {
            self.plan.fail(Failure::RevokeCount {
                tid: state.next_commit,
                log_block: this,
            });
            return Step::Failed;
        }
        Step::Next
    }

    /// The end of a pass: the scan sets where the log ends; the later passes must end at the
    /// same transaction (`PassMismatch` otherwise, reported once).
    fn pass_end(&mut self, pass: Pass, state: &PassState) -> bool {
        let mut success = state.success;
        if pass == Pass::Scan {
            if self.info.end_transaction == 0 {
                self.info.end_transaction = state.next_commit;
            }
        } else if self.info.end_transaction != state.next_commit {
            if success {
                self.plan.fail(Failure::PassMismatch {
                    ended: state.next_commit,
                    expected: self.info.end_transaction,
                });
            }
            success = false;
        }
        success
    }

    /// `scan_revoke_records`; false for a count larger than the block (-EINVAL).
    fn scan_revoke_records(&mut self, block: &[u8], sequence: u32) -> bool {
        let rh = RevokeHeader::parse(block);
        let csum_size = self.p.tags.tail_bytes();
        let rcount = rh.count as usize;
        if rcount > self.p.block_size - csum_size {
            return false;
        }
        let record_len = if self.p.tags.is_64bit { 8 } else { 4 };
        let mut off = RevokeHeader::SIZE;
        while off + record_len <= rcount {
            let blocknr = jbd2::revoke_entry(&block[off..], self.p.tags.is_64bit);
            off += record_len;
            // jbd2_journal_set_revoke: keep the newest revoking transaction.
            let newest = self.info.revoked.entry(blocknr).or_insert(sequence);
            if tid_gt(sequence, *newest) {
                *newest = sequence;
            }
            self.plan.revokes += 1;
        }
        true
    }

    /// `fc_do_one_pass` with e2fsck 1.47's `ext4_fc_replay_scan` (PASS_SCAN): read the
    /// fast-commit area block by block from `j_fc_first` up to `j_fc_last` (`s_maxlen`), keep
    /// the tags up to the last TAIL whose transaction and CRC match (`fc_replay_num_tags`, the
    /// tags the replay pass applies), and fail where e2fsck fails. False on failure.
    fn fast_commit_scan(&mut self) -> bool {
        let Some(first) = self.p.fc_first.filter(|_| self.p.fc_replay) else {
            return true;
        };
        let expected = self.info.end_transaction;
        let mut st = FcScan::new(expected);
        for blk in first..=self.p.total_len {
            let data = match self.jread(blk) {
                Ok(data) => data,
                Err(f) => {
                    // The area read to its end without a STOP: jread past j_total_len fails.
                    let why = format!("{f}");
                    return self.fc_fail(expected, why, false);
                }
            };
            match st.block(&data, blk == first) {
                FcStep::Continue => {}
                FcStep::Stop => break,
                FcStep::Fail(why, kernel_accepts) => {
                    return self.fc_fail(expected, why, kernel_accepts)
                }
            }
        }
        let mut fc = st.found;
        let keep = fc.ops.len().min(st.kept_until);
        fc.ops.truncate(keep);
        fc.more_ops = st.ops_until.saturating_sub(keep as u64);
        self.fc = Some(fc);
        true
    }

    fn fc_fail(&mut self, tid: u32, why: String, kernel_accepts: bool) -> bool {
        self.plan.fail(Failure::FastCommit {
            tid,
            why,
            kernel_accepts,
        });
        false
    }
}

/// State of the fast-commit scan (`struct e2fsck_fc_replay_state` in PASS_SCAN).
struct FcScan {
    expected: u32,
    /// `fc_cur_tag`: tags counted so far.
    cur_tag: u64,
    /// `fc_crc`: crc32c of the tags since the last TAIL.
    crc: u32,
    /// What the tags up to the last valid TAIL apply; `found.tags` is `fc_replay_num_tags`.
    found: FastCommit,
    /// Operations read so far (kept up to `MAX_FC_OPS`), and those before the last valid TAIL.
    ops_read: u64,
    ops_until: u64,
    kept_until: usize,
}

/// What one block of the fast-commit area tells the scan.
enum FcStep {
    Continue,
    /// JBD2_FC_REPLAY_STOP (0): the area ends.
    Stop,
    /// A negative return: recovery fails (why, and whether the kernel would go on).
    Fail(String, bool),
}

impl FcScan {
    fn new(expected: u32) -> Self {
        FcScan {
            expected,
            cur_tag: 0,
            crc: 0,
            found: FastCommit {
                tid: expected,
                ..FastCommit::default()
            },
            ops_read: 0,
            ops_until: 0,
            kept_until: 0,
        }
    }

    /// A negative return unless a TAIL already validated tags (then JBD2_FC_REPLAY_STOP).
    fn stop_or(&self, why: String) -> FcStep {
        if self.found.tags > 0 {
            FcStep::Stop
        } else {
            FcStep::Fail(why, false)
        }
    }

    /// One block: the tag loop `for (cur = start; cur < end; cur += 4 + fc_len)` with `end`
    /// one byte before the block's end, as e2fsck 1.47 walks it (values that run past the block
    /// read zeros here, where e2fsck reads whatever memory follows).
    fn block(&mut self, raw: &[u8], first: bool) -> FcStep {
        if first && jbd2::FcTl::parse(raw).tag != jbd2::FC_TAG_HEAD {
            // "Check if we can stop early": no fast commit after this log.
            return FcStep::Stop;
        }
        let end = raw.len().saturating_sub(1);
        // A tag's value can claim up to 64 KiB past its start: pad so every read is in bounds.
        let mut copy = raw.to_vec();
        copy.resize(raw.len() + jbd2::FcTl::SIZE + usize::from(u16::MAX) + 16, 0);
        let mut cur = 0usize;
        while cur < end {
            let tl = jbd2::FcTl::parse(&copy[cur..]);
            let val = &copy[cur + jbd2::FcTl::SIZE..];
            let whole = &copy[cur..cur + jbd2::FcTl::SIZE + usize::from(tl.len)];
            match tl.tag {
                jbd2::FC_TAG_ADD_RANGE
                | jbd2::FC_TAG_DEL_RANGE
                | jbd2::FC_TAG_LINK
                | jbd2::FC_TAG_UNLINK
                | jbd2::FC_TAG_CREAT
                | jbd2::FC_TAG_INODE
                | jbd2::FC_TAG_PAD => {
                    self.cur_tag += 1;
                    self.crc = crc32c_raw(self.crc, whole);
                    if let Some(op) = fc_op(tl, val) {
                        if self.found.ops.len() < MAX_FC_OPS {
                            self.found.ops.push(op);
                        }
                        self.ops_read += 1;
                    }
                }
                jbd2::FC_TAG_TAIL => {
                    self.cur_tag += 1;
                    let tail = jbd2::FcTail::parse(val);
                    // The CRC covers the tag and the tail's tid, not the CRC itself.
                    self.crc = crc32c_raw(self.crc, &copy[cur..cur + jbd2::FcTl::SIZE + 4]);
                    if tail.tid == self.expected && tail.crc == self.crc {
                        self.found.tags = self.cur_tag;
                        self.ops_until = self.ops_read;
                        self.kept_until = self.found.ops.len();
                    } else {
                        let why = if tail.tid != self.expected {
                            format!(
                                "its first TAIL is of transaction {}, not {} (-EFSBADCRC)",
                                tail.tid, self.expected
                            )
                        } else {
                            format!(
                                "its first TAIL's CRC 0x{:08x} does not match its tags' 0x{:08x} (-EFSBADCRC)",
                                tail.crc, self.crc
                            )
                        };
                        if self.found.tags > 0 {
                            return FcStep::Stop;
                        }
                        return FcStep::Fail(why, false);
                    }
                    self.crc = 0;
                }
                jbd2::FC_TAG_HEAD => {
                    let head = jbd2::FcHead::parse(val);
                    if head.features != 0 {
                        return FcStep::Fail(
                            format!(
                                "its HEAD asks for fast-commit features 0x{:x} (-EOPNOTSUPP)",
                                head.features
                            ),
                            false,
                        );
                    }
                    if head.tid != self.expected {
                        // e2fsck 1.47 returns -EINVAL here; the kernel returns
                        // JBD2_FC_REPLAY_STOP (a stale area of an older transaction).
                        return FcStep::Fail(
                            format!(
                                "its HEAD is of transaction {}, not {}: e2fsck 1.47 fails recovery (Invalid argument); the kernel ignores the stale area and mounts",
                                head.tid, self.expected
                            ),
                            true,
                        );
                    }
                    self.cur_tag += 1;
                    self.crc = crc32c_raw(self.crc, whole);
                }
                t => {
                    return self.stop_or(format!(
                        "it holds an unknown tag {t} before any valid TAIL (-ECANCELED)"
                    ))
                }
            }
            cur += jbd2::FcTl::SIZE + usize::from(tl.len);
        }
        FcStep::Continue
    }
}

/// The operation a tag applies, `None` for PAD.
fn fc_op(tl: jbd2::FcTl, val: &[u8]) -> Option<FcOp> {
    let name = |bytes: &[u8]| -> Vec<u8> {
        let name_len = usize::from(tl.len).saturating_sub(8);
        bytes.get(8..8 + name_len).unwrap_or(&[]).to_vec()
    };
    Some(match tl.tag {
        jbd2::FC_TAG_ADD_RANGE => {
            let range = jbd2::FcAddRange::parse(val);
            // ext2fs_decode_extent: a length above EXT_INIT_MAX_LEN is an unwritten extent.
            let (len, unwritten) = if range.ee_len > 32768 {
                (u32::from(range.ee_len) - 32768, true)
            } else {
                (u32::from(range.ee_len), false)
            };
            FcOp::AddRange {
                ino: range.ino,
                lblk: range.ee_block,
                pblk: u64::from(range.ee_start) | (u64::from(range.ee_start_hi) << 32),
                len,
                unwritten,
            }
        }
        jbd2::FC_TAG_DEL_RANGE => {
            let range = jbd2::FcDelRange::parse(val);
            FcOp::DelRange {
                ino: range.ino,
                lblk: range.lblk,
                len: range.len,
            }
        }
        jbd2::FC_TAG_LINK | jbd2::FC_TAG_CREAT => {
            let dentry = jbd2::FcDentry::parse(val);
            FcOp::Link {
                parent: dentry.parent_ino,
                ino: dentry.ino,
                name: name(val),
                created: tl.tag == jbd2::FC_TAG_CREAT,
            }
        }
        jbd2::FC_TAG_UNLINK => {
            let dentry = jbd2::FcDentry::parse(val);
            FcOp::Unlink {
                parent: dentry.parent_ino,
                ino: dentry.ino,
                name: name(val),
            }
        }
        jbd2::FC_TAG_INODE => FcOp::Inode {
            ino: jbd2::FcInode::parse(val).ino,
        },
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// The journal of an opened filesystem
// ---------------------------------------------------------------------------------------------

/// Where journal block `n` lies: in the filesystem (the journal inode's blocks) or on an
/// external journal device, read through `src`.
#[derive(Clone, Debug)]
pub struct JournalBlocks {
    src: Source,
    block_size: u64,
    /// Internal journal: (first logical, first physical, length), sorted; `None` for a device
    /// (journal block n is device block n).
    runs: Option<Vec<(u64, u64, u64)>>,
    total: u64,
}

impl JournalBlocks {
    /// The journal held by the journal inode, whose data runs are `runs` (logical, physical,
    /// length) and size `size` bytes, in the filesystem read through `src`.
    pub fn internal(
        src: Source,
        block_size: u64,
        mut runs: Vec<(u64, u64, u64)>,
        size: u64,
    ) -> Self {
        runs.sort_unstable();
        JournalBlocks {
            src,
            block_size,
            runs: Some(runs),
            total: size / block_size.max(1),
        }
    }

    /// An external journal device or image read through `src`.
    pub fn external(src: Source, block_size: u64) -> Self {
        let total = src.len() / block_size.max(1);
        JournalBlocks {
            src,
            block_size,
            runs: None,
            total,
        }
    }

    /// Byte offset of journal block `n` in the source, `None` for a hole.
    pub fn offset(&self, log_block: u64) -> Option<u64> {
        let phys = match &self.runs {
            None => log_block,
            Some(runs) => {
                let index = runs.partition_point(|r| r.0 + r.2 <= log_block);
                let &(logical, physical, len) = runs.get(index)?;
                if log_block < logical || log_block >= logical + len {
                    return None;
                }
                physical + (log_block - logical)
            }
        };
        phys.checked_mul(self.block_size)
    }

    /// Byte offset of the journal superblock (journal block 0 of an internal journal; the block
    /// after the ext2 superblock of a journal device, `ext2fs_journal_sb_start`).
    pub fn superblock_offset(&self) -> Option<u64> {
        match &self.runs {
            Some(_) => self.offset(0),
            None => Some(if self.block_size == 1024 {
                2048
            } else {
                self.block_size
            }),
        }
    }

    /// The source the journal is read from.
    pub fn source(&self) -> &Source {
        &self.src
    }
}

impl LogRead for JournalBlocks {
    fn total_blocks(&self) -> u64 {
        self.total
    }
    fn read_block(&self, block: u64) -> std::result::Result<Vec<u8>, String> {
        let off = self
            .offset(block)
            .ok_or_else(|| "the journal inode maps no block there".to_string())?;
        self.src
            .read(off, self.block_size, "journal block")
            .map_err(|e| e.to_string())
    }
}

// ---------------------------------------------------------------------------------------------
// The overlay
// ---------------------------------------------------------------------------------------------

/// Reads of the filesystem as after recovery: replayed blocks come from the journal, the
/// superblock and journal superblock as e2fsck leaves them.
#[derive(Debug)]
pub struct Overlay {
    inner: Source,
    journal: JournalBlocks,
    /// The journal is read through `inner` (internal) rather than its own source.
    internal: bool,
    block_size: u64,
    map: HashMap<u64, Logged>,
    /// Byte ranges replaced after the block map: (offset in the filesystem, bytes).
    patches: Vec<(u64, Vec<u8>)>,
}

/// Byte offsets in the ext2/3/4 superblock e2fsck changes after recovery.
const SB_STATE: usize = 0x3A;
const SB_FEATURE_INCOMPAT: usize = 0x60;
const SB_KBYTES_WRITTEN: usize = 0x178;
/// `s_wtime` and `s_wtime_hi`.
const SB_WTIME: usize = 0x30;
const SB_WTIME_HI: usize = 0x274;
/// EXT2_VALID_FS, EXT2_ERROR_FS.
const VALID_FS: u16 = 1;
const ERROR_FS: u16 = 2;

impl Overlay {
    /// The overlay of `plan` over the filesystem read through `inner` (block size `block_size`),
    /// with the journal in `journal`.
    pub fn new(inner: Source, journal: JournalBlocks, block_size: u64, plan: &Plan) -> Self {
        let internal = journal.runs.is_some();
        Overlay {
            inner,
            journal,
            internal,
            block_size,
            map: plan.map.clone(),
            patches: Vec::new(),
        }
    }

    /// Apply what e2fsck writes after the replay: the journal superblock (internal journal only:
    /// an external one is not part of the filesystem's bytes) and the superblock. `sb` is the
    /// 1024-byte superblock as read through the overlay before patching.
    pub fn finish(&mut self, plan: &Plan, sb: &[u8], jsb: &[u8], metadata_csum: bool) {
        let recovered_jsb = recovered_journal_superblock(plan, jsb);
        if self.internal {
            if let Some(off) = self.journal.superblock_offset() {
                self.patches.push((off, recovered_jsb));
            }
        }
        let sb = recovered_superblock(plan, sb, self.block_size, metadata_csum);
        self.patches.push((1024, sb));
    }

    /// Fill `buf` from filesystem byte `offset` (the overlay's own window starts at 0).
    pub fn fill(&self, offset: u64, buf: &mut [u8], what: &str, data: bool) -> Result<()> {
        let bs = self.block_size.max(1);
        let end = offset + buf.len() as u64;
        let mut pos = offset;
        while pos < end {
            let blk = pos / bs;
            let within = pos % bs;
            // A run of blocks that are not replayed is read in one call.
            let mut run_end = ((blk + 1) * bs).min(end);
            let logged = self.map.get(&blk).copied();
            if logged.is_none() {
                let mut next_block = blk + 1;
                while run_end < end && !self.map.contains_key(&next_block) {
                    run_end = ((next_block + 1) * bs).min(end);
                    next_block += 1;
                }
            }
            let lo = (pos - offset) as usize;
            let hi = (run_end - offset) as usize;
            let dst = &mut buf[lo..hi];
            match logged {
                None if data => self.inner.read_data_into(pos, dst, what)?,
                None => self.inner.read_into(pos, dst, what)?,
                Some(l) => self.read_logged(l, within, dst, what)?,
            }
            pos = run_end;
        }
        for (at, bytes) in &self.patches {
            let (pstart, pend) = (*at, *at + bytes.len() as u64);
            let (start, stop) = (pstart.max(offset), pend.min(end));
            if start < stop {
                buf[(start - offset) as usize..(stop - offset) as usize]
                    .copy_from_slice(&bytes[(start - pstart) as usize..(stop - pstart) as usize]);
            }
        }
        Ok(())
    }

    fn read_logged(&self, logged: Logged, within: u64, dst: &mut [u8], what: &str) -> Result<()> {
        let Some(off) = self.journal.offset(logged.log_block) else {
            return Err(Error::corrupt(
                ProblemKind::Journal,
                format!("{what}: journal block {} is not mapped", logged.log_block),
            ));
        };
        let src = if self.internal {
            &self.inner
        } else {
            self.journal.source()
        };
        src.read_into(off + within, dst, what)?;
        if logged.escaped && within < 4 {
            // The copy's first word was the jbd2 magic, escaped when logged: restore it.
            let magic = JBD2_MAGIC.to_be_bytes();
            for (index, byte) in dst.iter_mut().take(4 - within as usize).enumerate() {
                *byte = magic[within as usize + index];
            }
        }
        Ok(())
    }

    /// The source under the overlay.
    pub fn inner(&self) -> &Source {
        &self.inner
    }
}

/// The journal superblock as e2fsck leaves it (`e2fsck_journal_release` with reset): `s_start`
/// 0, `s_sequence` one past the end of the log when recovery succeeded, `s_errno` -EINVAL after
/// a failed commit, its checksum recomputed.
pub fn recovered_journal_superblock(plan: &Plan, jsb: &[u8]) -> Vec<u8> {
    let mut copy = jsb.get(..JSB_SIZE).unwrap_or(&[]).to_vec();
    copy.resize(JSB_SIZE, 0);
    // jbd2_journal_recover restarts the log at end_transaction + 1; e2fsck keeps the sequence
    // when recovery failed (it skips setting j_tail_sequence).
    let seq = if !plan.has_log {
        be32(&copy, JSB_SEQUENCE).wrapping_add(1)
    } else if plan.failed() {
        be32(&copy, JSB_SEQUENCE)
    } else {
        plan.end_tid.wrapping_add(1)
    };
    put_be32(&mut copy, JSB_SEQUENCE, seq);
    put_be32(&mut copy, JSB_START, 0);
    if plan.failed_commit.is_some() && !plan.failed() {
        put_be32(&mut copy, JSB_ERRNO, (-EINVAL) as u32);
    }
    let incompat = be32(&copy, 0x28);
    let v1 = be32(&copy, 4) == jbd2::SUPERBLOCK_V1;
    if !v1 && incompat & (jbd2::INCOMPAT_CSUM_V2 | jbd2::INCOMPAT_CSUM_V3) != 0 {
        put_be32(&mut copy, JSB_CHECKSUM, 0);
        let csum = crc32c_raw(!0, &copy);
        put_be32(&mut copy, JSB_CHECKSUM, csum);
    }
    copy
}

/// The superblock as e2fsck leaves it after recovery: `needs_recovery` cleared, not clean when
/// recovery failed, with errors when the journal recorded one, the bytes recovery wrote counted,
/// its checksum recomputed.
pub fn recovered_superblock(
    plan: &Plan,
    sb: &[u8],
    block_size: u64,
    metadata_csum: bool,
) -> Vec<u8> {
    let mut copy = sb.get(..1024).unwrap_or(&[]).to_vec();
    copy.resize(1024, 0);
    let le16 = |copy: &[u8], at: usize| u16::from_le_bytes([copy[at], copy[at + 1]]);
    let incompat = u32::from_le_bytes([
        copy[SB_FEATURE_INCOMPAT],
        copy[SB_FEATURE_INCOMPAT + 1],
        copy[SB_FEATURE_INCOMPAT + 2],
        copy[SB_FEATURE_INCOMPAT + 3],
    ]) & !crate::reader::features::INCOMPAT_RECOVER;
    copy[SB_FEATURE_INCOMPAT..SB_FEATURE_INCOMPAT + 4].copy_from_slice(&incompat.to_le_bytes());
    let mut state = le16(&copy, SB_STATE);
    if plan.failed() {
        state &= !VALID_FS;
    }
    if plan.failed_commit.is_some() && !plan.failed() {
        // e2fsck_check_ext3_journal moves the journal's error to the superblock.
        state |= ERROR_FS;
    }
    copy[SB_STATE..SB_STATE + 2].copy_from_slice(&state.to_le_bytes());
    let mut kb = u64::from_le_bytes(
        copy[SB_KBYTES_WRITTEN..SB_KBYTES_WRITTEN + 8]
            .try_into()
            .unwrap_or([0; 8]),
    );
    // e2fsck adds its channel's write statistics only when the counter is already kept; the
    // channel wrote each replayed block and the journal superblock's block.
    if kb != 0 && plan.has_log {
        kb = kb.wrapping_add(
            plan.blocks_written
                .saturating_add(1)
                .saturating_mul(block_size)
                >> 10,
        );
        copy[SB_KBYTES_WRITTEN..SB_KBYTES_WRITTEN + 8].copy_from_slice(&kb.to_le_bytes());
    }
    if metadata_csum {
        let at = crate::reader::ondisk::superblock::CHECKSUM_OFFSET;
        let csum = crc32c_raw(!0, &copy[..at]);
        copy[at..at + 4].copy_from_slice(&csum.to_le_bytes());
    }
    copy
}

// ---------------------------------------------------------------------------------------------
// Glue: the journal of an opened filesystem, and a replayed source
// ---------------------------------------------------------------------------------------------

/// True when the filesystem's superblock asks for recovery (`needs_recovery` with a journal):
/// the only case in which the kernel and e2fsck replay the log.
pub fn needs_recovery(fs: &Filesystem) -> bool {
    fs.sb
        .has_incompat(crate::reader::features::INCOMPAT_RECOVER)
        && fs.sb.feature_compat & crate::reader::features::COMPAT_HAS_JOURNAL != 0
}

fn journal_error(msg: impl Into<String>) -> Error {
    Error::corrupt(ProblemKind::Journal, msg)
}

/// The blocks of the filesystem's journal: the journal inode's, or those of the external journal
/// at `external` (required when the filesystem's journal is external).
pub fn journal_blocks(fs: &Filesystem, external: Option<&Path>) -> Result<JournalBlocks> {
    let bs = fs.block_size();
    if let Some(path) = external {
        let src = Source::open(path)?;
        let journal = JournalBlocks::external(src, bs);
        // e2fsck_get_journal: the device's ext2 superblock names the journal UUID it serves.
        let ext_sb = journal
            .source()
            .read(1024, 1024, "external journal's superblock")?;
        let uuid = ext_sb.get(0x68..0x78).unwrap_or(&[]);
        if fs.sb.journal_inum != 0 || uuid != fs.sb.journal_uuid {
            return Err(Error::Invalid(format!(
                "{}: not this filesystem's external journal (its UUID does not match s_journal_uuid)",
                path.display()
            )));
        }
        return Ok(journal);
    }
    let ino = fs.sb.journal_inum;
    if ino == 0 {
        return Err(Error::Invalid(
            "the journal is on an external device: name it with --journal PATH".into(),
        ));
    }
    let raw = fs
        .read_inode_checked(ino, true)
        .map_err(|e| journal_error(format!("journal inode {ino}: {e}")))?;
    let mut inode = Inode::parse(&raw);
    let mut extents = inode.has_flag(crate::reader::inode::EXTENTS_FL);
    // e2fsck_get_journal: a journal inode that is not a regular file in use is replaced by the
    // copy of its block map and size the superblock keeps (s_jnl_blocks).
    if (inode.links_count == 0 || inode.mode & 0o170000 != 0o100000) && fs.sb.jnl_backup_type == 1 {
        let stored = &fs.sb.jnl_blocks;
        for (slot, word) in inode.block.chunks_exact_mut(4).zip(&stored[..15]) {
            slot.copy_from_slice(&word.to_le_bytes());
        }
        inode.size = (u64::from(stored[15]) << 32) | u64::from(stored[16]);
        extents = inode.block.get(..2) == Some(&0xF30Au16.to_le_bytes()[..]);
    }
    let limits = WalkLimits {
        first_data_block: fs.geo.first_data_block,
        blocks_count: fs.geo.blocks_count,
        csum_seed: None,
    };
    let mut runs = Vec::new();
    if extents {
        let tree = extent::walk_extents(&inode.block, &limits, |block| fs.block(block))?;
        for leaf in tree.leaves() {
            if !leaf.uninit && leaf.len > 0 {
                runs.push((u64::from(leaf.logical), leaf.physical, u64::from(leaf.len)));
            }
        }
    } else {
        let map = extent::walk_blockmap(&inode.block, bs, &limits, |block| fs.block(block));
        for run in &map.runs {
            if let extent::MapKind::Data(logical) = run.kind {
                runs.push((logical, run.physical, run.len));
            }
        }
    }
    Ok(JournalBlocks::internal(
        fs.source.clone(),
        bs,
        runs,
        inode.size,
    ))
}

/// The journal superblock and recovery parameters of `fs`.
fn load(fs: &Filesystem, journal: &JournalBlocks) -> Result<(Vec<u8>, Params)> {
    let off = journal
        .superblock_offset()
        .ok_or_else(|| journal_error("the journal inode maps no first block"))?;
    let jsb = journal
        .source()
        .read(off, JSB_SIZE as u64, "journal superblock")?;
    let mut params = Params::from_superblock(
        &jsb,
        fs.block_size(),
        journal.total_blocks(),
        fs.geo.blocks_count,
    )
    .map_err(|why| journal_error(format!("the journal cannot be replayed: {why}")))?;
    params.fc_replay = fs.sb.feature_compat & crate::reader::features::COMPAT_FAST_COMMIT != 0;
    Ok((jsb, params))
}

/// The recovery plan of a filesystem that needs recovery (without building an overlay): what
/// `--replay` would apply. `None` when no recovery is needed.
pub fn pending(fs: &Filesystem, external: Option<&Path>) -> Option<Result<Plan>> {
    if !needs_recovery(fs) {
        return None;
    }
    Some(journal_blocks(fs, external).and_then(|journal| {
        let (_, params) = load(fs, &journal)?;
        Ok(plan(&params, &journal))
    }))
}

/// `src` (a filesystem at offset 0) read as after `e2fsck -E journal_only`: `None` when it needs
/// no recovery, else the replayed source and the plan applied.
pub fn replay_source(src: Source, external: Option<&Path>) -> Result<Option<(Source, Plan)>> {
    let open = OpenOptions {
        offset: Some(0),
        force: true,
        ..OpenOptions::default()
    };
    let fs = Filesystem::from_source(src.clone(), &open)?;
    if !needs_recovery(&fs) {
        return Ok(None);
    }
    let journal = journal_blocks(&fs, external)?;
    let (jsb, params) = load(&fs, &journal)?;
    let plan = plan(&params, &journal);
    let bs = fs.block_size();
    let mut overlay = Overlay::new(src, journal, bs, &plan);
    // The superblock as replayed (the log may hold a newer copy of its block), then patched.
    let mut sb = vec![0u8; 1024];
    overlay.fill(1024, &mut sb, "superblock", false)?;
    // e2fsck stamps s_wtime with the time it runs when it writes the superblock back, also
    // over a logged copy of the superblock's block: the time kept is the one on disk, not
    // the logged copy's (f_journal logs a superblock three years older than the disk's).
    let disk = overlay.inner().read(1024, 1024, "superblock")?;
    for (at, len) in [(SB_WTIME, 4), (SB_WTIME_HI, 1)] {
        if let (Some(dst), Some(source)) = (sb.get_mut(at..at + len), disk.get(at..at + len)) {
            dst.copy_from_slice(source);
        }
    }
    let ro_compat = u32::from_le_bytes(sb[0x64..0x68].try_into().unwrap_or([0; 4]));
    let metadata_csum = ro_compat & crate::reader::features::RO_COMPAT_METADATA_CSUM != 0;
    overlay.finish(&plan, &sb, &jsb, metadata_csum);
    Ok(Some((Source::replayed(overlay), plan)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BS: usize = 1024;
    const FS_BLOCKS: u64 = 1 << 20;

    struct MemLog(Vec<Vec<u8>>);
    impl LogRead for MemLog {
        fn total_blocks(&self) -> u64 {
            self.0.len() as u64
        }
        fn read_block(&self, block_number: u64) -> std::result::Result<Vec<u8>, String> {
            self.0
                .get(block_number as usize)
                .cloned()
                .ok_or_else(|| "past the end".into())
        }
    }

    /// A synthetic journal: blocks written from `first`, in the layout `incompat` says.
    struct Builder {
        p: Params,
        log: Vec<Vec<u8>>,
        at: u64,
    }

    impl Builder {
        fn new(incompat: u32, len: u64, start: u64, sequence: u32) -> Builder {
            let params = Params {
                block_size: BS,
                first: 1,
                last: len,
                total_len: len,
                start,
                sequence,
                tags: TagFormat::from_incompat(incompat),
                compat_checksum: false,
                async_commit: incompat & jbd2::INCOMPAT_ASYNC_COMMIT != 0,
                fc_first: None,
                fc_replay: false,
                csum_seed: 0x1234_5678,
                fs_blocks: FS_BLOCKS,
            };
            Builder {
                p: params,
                log: vec![vec![0u8; BS]; len as usize],
                at: start,
            }
        }
        fn put(&mut self, block: Vec<u8>) -> u64 {
            let block_number = self.at;
            self.log[block_number as usize] = block;
            self.at = self.p.wrap(self.at + 1);
            block_number
        }
        fn header(blocktype: u32, seq: u32) -> Vec<u8> {
            let mut block = vec![0u8; BS];
            put_be32(&mut block, 0, JBD2_MAGIC);
            put_be32(&mut block, 4, blocktype);
            put_be32(&mut block, 8, seq);
            block
        }
        fn seal_tail(&self, block: &mut [u8]) {
            if self.p.csum_v2or3() {
                put_be32(block, BS - 4, 0);
                let csum = crc32c_raw(self.p.csum_seed, block);
                put_be32(block, BS - 4, csum);
            }
        }
        fn tag_csum(&self, data: &[u8], seq: u32) -> u32 {
            let crc = crc32c_raw(self.p.csum_seed, &seq.to_be_bytes());
            crc32c_raw(crc, data)
        }
        /// One descriptor and its data blocks; `blocks` are (fs block, data, flags).
        fn descriptor(&mut self, seq: u32, blocks: &[(u64, Vec<u8>, u32)]) -> Vec<u64> {
            let mut block = Self::header(jbd2::DESCRIPTOR_BLOCK, seq);
            let tb = self.p.tags.tag_bytes();
            let mut at = Header::SIZE;
            for (index, (blk, data, flags)) in blocks.iter().enumerate() {
                let mut flags = *flags;
                if index + 1 == blocks.len() {
                    flags |= jbd2::FLAG_LAST_TAG;
                }
                let csum = self.tag_csum(data, seq);
                put_be32(&mut block, at, *blk as u32);
                if self.p.tags.csum_v3 {
                    put_be32(&mut block, at + 4, flags);
                    put_be32(&mut block, at + 8, (*blk >> 32) as u32);
                    put_be32(&mut block, at + 12, csum);
                } else {
                    let c16 = if self.p.tags.csum_v2 {
                        csum & 0xFFFF
                    } else {
                        0
                    };
                    block[at + 4..at + 6].copy_from_slice(&(c16 as u16).to_be_bytes());
                    block[at + 6..at + 8].copy_from_slice(&(flags as u16).to_be_bytes());
                    if self.p.tags.is_64bit {
                        put_be32(&mut block, at + 8, (*blk >> 32) as u32);
                    }
                }
                at += tb;
                if flags & jbd2::FLAG_SAME_UUID == 0 {
                    at += 16;
                }
            }
            self.seal_tail(&mut block);
            self.put(block);
            blocks
                .iter()
                .map(|(_, data, _)| self.put(data.clone()))
                .collect()
        }
        fn commit(&mut self, seq: u32, time: u64) -> u64 {
            let mut block = Self::header(jbd2::COMMIT_BLOCK, seq);
            block[48..56].copy_from_slice(&time.to_be_bytes());
            if self.p.csum_v2or3() {
                let crc = crc32c_raw(self.p.csum_seed, &block);
                put_be32(&mut block, Commit::CHECKSUM_OFFSET, crc);
            }
            self.put(block)
        }
        fn revoke(&mut self, seq: u32, blocks: &[u64]) -> u64 {
            let mut block = Self::header(jbd2::REVOKE_BLOCK, seq);
            let len = if self.p.tags.is_64bit { 8 } else { 4 };
            let mut at = RevokeHeader::SIZE;
            for revoked in blocks {
                if len == 8 {
                    block[at..at + 8].copy_from_slice(&revoked.to_be_bytes());
                } else {
                    put_be32(&mut block, at, *revoked as u32);
                }
                at += len;
            }
            put_be32(&mut block, 12, at as u32);
            self.seal_tail(&mut block);
            self.put(block)
        }
        fn run(self) -> Plan {
            plan(&self.p, &MemLog(self.log))
        }
    }

    fn data(fill: u8) -> Vec<u8> {
        vec![fill; BS]
    }

    #[test]
    fn every_tag_form_replays_the_newest_copy() {
        let forms = [
            0,
            jbd2::INCOMPAT_64BIT,
            jbd2::INCOMPAT_CSUM_V2,
            jbd2::INCOMPAT_CSUM_V2 | jbd2::INCOMPAT_64BIT,
            jbd2::INCOMPAT_CSUM_V3,
            jbd2::INCOMPAT_CSUM_V3 | jbd2::INCOMPAT_64BIT,
        ];
        for incompat in forms {
            let mut builder = Builder::new(incompat, 64, 1, 7);
            let high = if incompat & jbd2::INCOMPAT_64BIT != 0 {
                5u64 << 32
            } else {
                0
            };
            let mut escaped = data(3);
            escaped[..4].copy_from_slice(&[0; 4]);
            builder.p.fs_blocks = u64::MAX;
            let t1 = builder.descriptor(
                7,
                &[
                    (10, data(1), 0),
                    (11 | high, data(2), jbd2::FLAG_SAME_UUID),
                    (12, escaped, jbd2::FLAG_ESCAPE | jbd2::FLAG_SAME_UUID),
                ],
            );
            builder.commit(7, 100);
            let t2 = builder.descriptor(8, &[(10, data(4), 0)]);
            builder.commit(8, 101);
            let plan = builder.run();
            assert!(
                plan.failures.is_empty(),
                "{incompat:#x}: {:?}",
                plan.failures
            );
            assert_eq!((plan.start_tid, plan.end_tid, plan.committed()), (7, 9, 2));
            assert_eq!(plan.map[&10].log_block, t2[0], "{incompat:#x}");
            assert_eq!(plan.map[&(11 | high)].log_block, t1[1], "{incompat:#x}");
            assert!(plan.map[&12].escaped);
            assert_eq!(plan.replays, 4);
            assert_eq!(plan.transactions.len(), 2);
        }
    }

    #[test]
    fn revoke_hides_earlier_copies_and_a_later_transaction_replays_again() {
        let mut builder = Builder::new(jbd2::INCOMPAT_CSUM_V3, 64, 1, 1);
        builder.descriptor(1, &[(100, data(1), 0), (101, data(1), 0)]);
        builder.commit(1, 10);
        builder.revoke(2, &[100, 101]);
        builder.commit(2, 11);
        let t3 = builder.descriptor(3, &[(101, data(9), 0)]);
        builder.commit(3, 12);
        let plan = builder.run();
        assert!(!plan.map.contains_key(&100));
        assert_eq!(plan.map[&101].log_block, t3[0]);
        assert_eq!((plan.revokes, plan.revoke_hits), (2, 2));
        assert_eq!(plan.end_tid, 4);
    }

    /// A journal of 32 blocks whose last 4 are the fast-commit area, transaction 7 committed.
    fn fc_builder() -> Builder {
        let mut builder = Builder::new(0, 32, 1, 7);
        builder.p.last = 27;
        builder.p.fc_first = Some(28);
        builder.p.fc_replay = true;
        builder.descriptor(7, &[(5, data(1), 0)]);
        builder.commit(7, 1);
        builder
    }

    /// One fast-commit block of `tags` (tag, value); a TAIL's value is its tid, to which the
    /// CRC of the tags since the last TAIL is appended (`bad_crc` flips it).
    fn fc_block(tags: &[(u16, Vec<u8>)], bad_crc: bool) -> Vec<u8> {
        let mut log = Vec::new();
        let mut since = 0;
        for (tag, val) in tags {
            let mut value = val.clone();
            if *tag == jbd2::FC_TAG_TAIL {
                let mut tail = log[since..].to_vec();
                tail.extend_from_slice(&tag.to_le_bytes());
                tail.extend_from_slice(&8u16.to_le_bytes());
                tail.extend_from_slice(&value);
                let crc = crc32c_raw(0, &tail) ^ u32::from(bad_crc);
                value.extend_from_slice(&crc.to_le_bytes());
            }
            log.extend_from_slice(&tag.to_le_bytes());
            log.extend_from_slice(&(value.len() as u16).to_le_bytes());
            log.extend_from_slice(&value);
            if *tag == jbd2::FC_TAG_TAIL {
                since = log.len();
            }
        }
        log.resize(BS, 0);
        log
    }

    fn le(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn a_fast_commit_after_the_log_is_reported_tag_by_tag() {
        let mut builder = fc_builder();
        let mut link = le(&[2, 13]);
        link.extend_from_slice(b"x");
        builder.log[28] = fc_block(
            &[
                (jbd2::FC_TAG_HEAD, le(&[0, 8])),
                (jbd2::FC_TAG_INODE, le(&[13])),
                (jbd2::FC_TAG_LINK, link),
                (jbd2::FC_TAG_TAIL, le(&[8])),
                // A later transaction's leftovers: the scan stops at their bad TAIL.
                (jbd2::FC_TAG_INODE, le(&[14])),
                (jbd2::FC_TAG_TAIL, le(&[7])),
            ],
            false,
        );
        let plan = builder.run();
        assert!(!plan.failed(), "{:?}", plan.failures);
        assert_eq!(plan.committed(), 1);
        let fc = plan.fast_commit.expect("a fast commit");
        assert_eq!((fc.tid, fc.tags), (8, 4));
        assert_eq!(fc.ops.len(), 2, "{:?}", fc.ops);
        assert_eq!(fc.ops[0], FcOp::Inode { ino: 13 });
        assert_eq!(fc.inodes(), vec![2, 13]);
        assert_eq!(fc.ops[1].tag(), "ADD_ENTRY");
    }

    #[test]
    fn a_stale_fast_commit_head_fails_recovery_as_e2fsck_does() {
        let mut builder = fc_builder();
        builder.log[28] = fc_block(&[(jbd2::FC_TAG_HEAD, le(&[0, 6]))], false);
        let plan = builder.run();
        assert!(matches!(
            plan.failures.as_slice(),
            [Failure::FastCommit {
                kernel_accepts: true,
                ..
            }]
        ));
        assert_eq!(plan.committed(), 0, "nothing is replayed");
        assert!(plan.map.is_empty());
        // Without fast_commit in the filesystem e2fsck does not scan the area at all.
        let mut builder = fc_builder();
        builder.p.fc_replay = false;
        builder.log[28] = fc_block(&[(jbd2::FC_TAG_HEAD, le(&[0, 6]))], false);
        let plan = builder.run();
        assert!(!plan.failed() && plan.fast_commit.is_none());
    }

    #[test]
    fn a_bad_first_fast_commit_tail_fails_recovery() {
        let mut builder = fc_builder();
        builder.log[28] = fc_block(
            &[
                (jbd2::FC_TAG_HEAD, le(&[0, 8])),
                (jbd2::FC_TAG_INODE, le(&[13])),
                (jbd2::FC_TAG_TAIL, le(&[8])),
            ],
            true,
        );
        let plan = builder.run();
        assert!(matches!(
            plan.failures.as_slice(),
            [Failure::FastCommit {
                kernel_accepts: false,
                ..
            }]
        ));
        // An area of valid transactions to its very end reads past the journal: a failure.
        let mut builder = fc_builder();
        let one = fc_block(
            &[
                (jbd2::FC_TAG_HEAD, le(&[0, 8])),
                (jbd2::FC_TAG_PAD, vec![0; BS - 8 - 4]),
            ],
            false,
        );
        builder.log[28] = one;
        let pad = fc_block(&[(jbd2::FC_TAG_PAD, vec![0; BS - 4])], false);
        for blocktype in 29..32 {
            builder.log[blocktype] = pad.clone();
        }
        assert!(builder.run().failed());
    }

    #[test]
    fn a_wrapped_log_is_followed_around_the_end() {
        let mut builder = Builder::new(0, 16, 13, 40);
        let tags = builder.descriptor(40, &[(5, data(1), 0), (6, data(2), 0), (7, data(3), 0)]);
        builder.commit(40, 1);
        assert!(tags.iter().any(|&n| n < 13), "the log wraps: {tags:?}");
        let plan = builder.run();
        assert_eq!(plan.committed(), 1);
        assert_eq!(plan.map[&7].log_block, tags[2]);
    }

    #[test]
    fn a_bad_commit_checksum_ends_the_log_and_fails_the_commit() {
        let mut builder = Builder::new(jbd2::INCOMPAT_CSUM_V3, 64, 1, 1);
        builder.descriptor(1, &[(100, data(1), 0)]);
        builder.commit(1, 10);
        builder.descriptor(2, &[(200, data(1), 0)]);
        let commit_block = builder.commit(2, 11);
        builder.log[commit_block as usize][20] ^= 1;
        let plan = builder.run();
        assert_eq!(plan.end_tid, 2);
        assert_eq!(plan.failed_commit, Some(2));
        assert!(plan.map.contains_key(&100) && !plan.map.contains_key(&200));
        let jsb = recovered_journal_superblock(&plan, &[0u8; 1024]);
        assert_eq!(be32(&jsb, JSB_SEQUENCE), 3);
        assert_eq!(be32(&jsb, JSB_ERRNO) as i32, -EINVAL);
    }

    #[test]
    fn async_commit_goes_on_past_a_bad_commit_without_replaying_it() {
        let mut builder = Builder::new(
            jbd2::INCOMPAT_CSUM_V3 | jbd2::INCOMPAT_ASYNC_COMMIT,
            64,
            1,
            1,
        );
        builder.descriptor(1, &[(100, data(1), 0)]);
        builder.commit(1, 10);
        builder.descriptor(2, &[(200, data(1), 0)]);
        let commit_block = builder.commit(2, 11);
        builder.log[commit_block as usize][20] ^= 1;
        builder.descriptor(3, &[(300, data(1), 0)]);
        builder.commit(3, 12);
        let plan = builder.run();
        assert_eq!(plan.end_tid, 2);
        assert_eq!(plan.failed_commit, None);
        assert!(plan.map.contains_key(&100));
        assert!(!plan.map.contains_key(&200) && !plan.map.contains_key(&300));
    }

    #[test]
    fn a_bad_data_checksum_or_a_block_outside_is_a_failure_naming_it() {
        let mut builder = Builder::new(jbd2::INCOMPAT_CSUM_V3, 64, 1, 5);
        let tags = builder.descriptor(5, &[(100, data(1), 0), (FS_BLOCKS + 1, data(2), 0)]);
        builder.commit(5, 10);
        builder.log[tags[0] as usize][0] ^= 1;
        let plan = builder.run();
        assert!(plan.failed());
        assert!(plan.failures.contains(&Failure::DataChecksum {
            tid: 5,
            fs_block: 100,
            log_block: tags[0]
        }));
        assert!(plan.failures.contains(&Failure::Outside {
            tid: 5,
            fs_block: FS_BLOCKS + 1,
            log_block: tags[1]
        }));
        assert!(plan.map.is_empty());
        let sb = recovered_superblock(&plan, &[0u8; 1024], 1024, false);
        assert_eq!(
            u16::from_le_bytes([sb[SB_STATE], sb[SB_STATE + 1]]) & VALID_FS,
            0
        );
    }

    #[test]
    fn a_bad_descriptor_checksum_in_a_committed_transaction_is_refused() {
        let mut builder = Builder::new(jbd2::INCOMPAT_CSUM_V2, 64, 1, 5);
        builder.descriptor(5, &[(100, data(1), 0)]);
        let commit_block = builder.commit(5, 10);
        builder.log[1][100] ^= 1;
        let plan = builder.run();
        assert_eq!(
            plan.failures,
            vec![Failure::TransactionChecksum {
                tid: 5,
                log_block: commit_block
            }]
        );
    }

    #[test]
    fn hostile_logs_are_bounded() {
        // Revoke blocks of one transaction all around the log, never a commit.
        let mut builder = Builder::new(0, 4096, 1, 9);
        for _ in 1..4096 {
            builder.revoke(9, &[1, 2, 3]);
        }
        let plan = builder.run();
        assert!(plan.cut_short);
        assert_eq!(plan.committed(), 0);
        // Descriptors claiming the most tags, pointing at each other.
        let mut builder = Builder::new(0, 64, 1, 1);
        let tags: Vec<_> = (0..200)
            .map(|i| (i, data(1), jbd2::FLAG_SAME_UUID))
            .collect();
        builder.descriptor(1, &tags[..100]);
        let plan = builder.run();
        assert_eq!(plan.committed(), 0);
        // A revoke count larger than the block.
        let mut builder = Builder::new(0, 64, 1, 1);
        let revoke_block = builder.revoke(1, &[1]);
        put_be32(&mut builder.log[revoke_block as usize], 12, 5000);
        builder.commit(1, 1);
        let plan = builder.run();
        assert!(matches!(
            plan.failures[..],
            [Failure::RevokeCount { tid: 1, .. }]
        ));
        // A start past the journal.
        let mut builder = Builder::new(0, 64, 1, 1);
        builder.p.start = 1000;
        assert!(matches!(
            builder.run().failures[..],
            [Failure::Read {
                log_block: 1000,
                ..
            }]
        ));
    }

    #[test]
    fn v1_transaction_checksums() {
        let mut builder = Builder::new(0, 64, 1, 3);
        builder.p.compat_checksum = true;
        let mut crc = !0u32;
        let descriptor_block = builder.descriptor(3, &[(50, data(7), 0)]);
        crc = crc32_be(crc, &builder.log[1]);
        crc = crc32_be(crc, &builder.log[descriptor_block[0] as usize]);
        let commit_block = builder.commit(3, 1);
        builder.log[commit_block as usize][12] = jbd2::CRC32_CHKSUM;
        builder.log[commit_block as usize][13] = jbd2::CRC32_CHKSUM_SIZE;
        put_be32(&mut builder.log[commit_block as usize], 16, crc);
        let good = plan(&builder.p, &MemLog(builder.log.clone()));
        assert_eq!((good.committed(), good.failed_commit), (1, None));
        put_be32(&mut builder.log[commit_block as usize], 16, crc ^ 1);
        let bad = builder.run();
        assert_eq!((bad.committed(), bad.failed_commit), (0, Some(3)));
    }

    #[test]
    fn kbytes_written_counts_replays_and_the_journal_superblock() {
        let plan = Plan {
            has_log: true,
            blocks_written: 40,
            ..Plan::default()
        };
        let mut sb = vec![0u8; 1024];
        sb[SB_FEATURE_INCOMPAT] = 0x46;
        sb[SB_KBYTES_WRITTEN] = 100;
        let out = recovered_superblock(&plan, &sb, 1024, false);
        assert_eq!(out[SB_KBYTES_WRITTEN], 141);
        assert_eq!(out[SB_FEATURE_INCOMPAT], 0x42);
    }

    #[test]
    fn internal_journal_blocks_map_through_runs() {
        let src = Source::from_bytes(&[0u8; 8192]).unwrap();
        let journal = JournalBlocks::internal(src, 1024, vec![(4, 100, 2), (0, 10, 4)], 6 * 1024);
        assert_eq!(journal.offset(0), Some(10 * 1024));
        assert_eq!(journal.offset(5), Some(101 * 1024));
        assert_eq!(journal.offset(6), None);
        assert_eq!(journal.total_blocks(), 6);
    }
}
