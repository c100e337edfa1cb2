//! Journal rules (`journal.*`): the internal journal inode and the journal superblock, as e2fsck
//! (journal.c) and the kernel (jbd2 load) judge them before replaying or using the journal.

use super::{Finding, Findings, RuleId};
use crate::error::{Problem, ProblemKind};
use crate::reader::csum::crc32c_raw;
use crate::reader::extent::{index_entries, leaf_entries, ExtentHeader, MAX_DEPTH};
use crate::reader::features::{COMPAT_HAS_JOURNAL, INCOMPAT_JOURNAL_DEV, INCOMPAT_RECOVER};
use crate::reader::fs::Filesystem;
use crate::reader::inode::{Inode, EXTENTS_FL};
use crate::reader::journal::{JournalSuperblock, JBD2_MAGIC};

/// JBD2_MIN_JOURNAL_BLOCKS
const MIN_JOURNAL_BLOCKS: u64 = 1024;
/// Incompat features jbd2 knows: revoke, 64bit, async_commit, csum v2, csum v3, fast_commit.
const KNOWN_INCOMPAT: u32 = 0x3F;
use crate::reader::ondisk::inode::ENCRYPT_FL;
use crate::reader::ondisk::journal::{
    COMPAT_CHECKSUM, CRC32C_CHKSUM as CSUM_TYPE_CRC32C, DEFAULT_FAST_COMMIT_BLOCKS,
    INCOMPAT_CSUM_V2, INCOMPAT_CSUM_V3, INCOMPAT_FAST_COMMIT,
};

fn bad_inode(findings: &mut Findings, ino: u32, why: String) {
    findings.push(
        Finding::new(
            RuleId::JournalInode,
            None,
            format!("the journal inode {ino} is not a usable journal: {why}"),
        )
        .with("inode", ino),
    );
}

/// Walk an extent tree, checking each extent lies inside the filesystem; returns the last logical
/// block mapped, or a reason. Bounded by MAX_DEPTH levels and `budget` nodes.
fn walk_extents(
    fs: &Filesystem,
    node: &[u8],
    depth_left: u16,
    budget: &mut u64,
    last: &mut Option<u64>,
) -> Result<(), Problem> {
    let header =
        ExtentHeader::parse(node).map_err(|e| Problem::new(ProblemKind::Journal, e.to_string()))?;
    if *budget == 0 {
        return Err(Problem::new(
            ProblemKind::Journal,
            "extent tree has more nodes than the filesystem has blocks",
        ));
    }
    *budget -= 1;
    let (first, end) = (fs.geo.first_data_block, fs.geo.blocks_count);
    if header.depth == 0 {
        for leaf in leaf_entries(node, &header) {
            let p_end = leaf.physical.saturating_add(u64::from(leaf.len));
            if leaf.len > 0 && (leaf.physical < first || p_end > end) {
                return Err(Problem::new(
                    ProblemKind::Journal,
                    format!(
                        "extent at logical block {} maps blocks {}-{}, outside the filesystem",
                        leaf.logical,
                        leaf.physical,
                        p_end - 1
                    ),
                ));
            }
            if leaf.len > 0 {
                let last_block = u64::from(leaf.logical) + u64::from(leaf.len) - 1;
                *last = Some(last.map_or(last_block, |x| x.max(last_block)));
            }
        }
        return Ok(());
    }
    if header.depth > depth_left {
        return Err(Problem::new(
            ProblemKind::Journal,
            format!("extent tree depth {} is too deep", header.depth),
        ));
    }
    for ix in index_entries(node, &header) {
        if ix.child < first || ix.child >= end {
            return Err(Problem::new(
                ProblemKind::Journal,
                format!(
                    "extent index points to block {}, outside the filesystem",
                    ix.child
                ),
            ));
        }
        let journal = |e: crate::Error| Problem::new(ProblemKind::Journal, e.to_string());
        let child = fs.block(ix.child).map_err(journal)?;
        let ch = ExtentHeader::parse(&child).map_err(journal)?;
        if ch.depth + 1 != header.depth {
            return Err(Problem::new(
                ProblemKind::Journal,
                format!("extent block {} has the wrong depth", ix.child),
            ));
        }
        walk_extents(fs, &child, header.depth - 1, budget, last)?;
    }
    Ok(())
}

/// The internal journal's inode number, or `None` when there is no internal journal (none, or
/// an external one living on another device: nothing to read here).
fn internal_journal(fs: &Filesystem) -> Option<u32> {
    let sb = &fs.sb;
    let external = sb.has_incompat(INCOMPAT_JOURNAL_DEV) || sb.journal_uuid.iter().any(|&b| b != 0);
    (sb.has_compat(COMPAT_HAS_JOURNAL) && !external).then_some(sb.journal_inum)
}

/// The block of the journal superblock and the journal length, or why the inode is unusable.
fn locate(fs: &Filesystem, ino: u32) -> Result<(u64, u64), String> {
    usable_journal_inode(fs, ino)
        .and_then(|(inode, nblocks)| Ok((journal_superblock_block(fs, &inode, nblocks)?, nblocks)))
}

/// Judge the journal inode as it is on disk, before the in-memory replay: the kernel loads it
/// (ext4_get_journal_inode → `__ext4_iget` with EXT4_IGET_SPECIAL, "special inode
/// unallocated" on a zero link count) before it recovers anything, so an inode only the log
/// restores is refused at mount. e2fsck falls back to the superblock's backup of the journal
/// blocks (`s_jnl_blocks`, e2fsck_get_journal) and replays; the kernel does not.
pub(super) fn check_inode_before_replay(fs: &Filesystem, findings: &mut Findings) {
    let Some(ino) = internal_journal(fs) else {
        return;
    };
    if let Err(why) = locate(fs, ino) {
        bad_inode(
            findings,
            ino,
            format!("{why} on disk, before recovery (the kernel refuses to mount; only the log restores it)"),
        );
    }
}

/// Check the internal journal.
pub(super) fn check(fs: &Filesystem, findings: &mut Findings) {
    let Some(ino) = internal_journal(fs) else {
        return;
    };
    let (blk, nblocks) = match locate(fs, ino) {
        Ok(found) => found,
        Err(why) => return bad_inode(findings, ino, why),
    };
    let Ok(jraw) = fs.block(blk) else {
        return bad_inode(
            findings,
            ino,
            format!("journal superblock {blk} is beyond the image"),
        );
    };
    check_superblock(fs, &jraw, blk, nblocks, findings);
}

/// The journal inode as e2fsck_get_journal takes it: a number in range, in use, a regular file,
/// not encrypted, at least JBD2_MIN_JOURNAL_BLOCKS blocks long and no longer than the
/// filesystem. Returns the inode and its length in blocks, or why it is not usable.
fn usable_journal_inode(fs: &Filesystem, ino: u32) -> Result<(Inode, u64), String> {
    if ino == 0 || u64::from(ino) > fs.geo.inodes_count() {
        return Err(format!(
            "inode number out of range 1-{}",
            fs.geo.inodes_count()
        ));
    }
    let raw = fs.inode_raw(ino).map_err(|e| e.to_string())?;
    let inode = Inode::parse(&raw);
    if inode.links_count == 0 {
        return Err("link count is 0 (not in use)".into());
    }
    if !inode.is_reg() {
        return Err(format!("mode 0{:o} is not a regular file", inode.mode));
    }
    if inode.has_flag(ENCRYPT_FL) {
        return Err("it is encrypted".into());
    }
    let nblocks = inode.size / fs.geo.block_size;
    if nblocks < MIN_JOURNAL_BLOCKS {
        return Err(format!(
            "size {} is below {MIN_JOURNAL_BLOCKS} blocks",
            inode.size
        ));
    }
    if nblocks > fs.geo.blocks_count {
        return Err(format!("size {} is larger than the filesystem", inode.size));
    }
    Ok((inode, nblocks))
}

/// Every block of the journal must be mapped (no hole) and inside the filesystem; returns the
/// block of the journal superblock (logical block 0), or why the map is not usable.
fn journal_superblock_block(fs: &Filesystem, inode: &Inode, nblocks: u64) -> Result<u64, String> {
    let read = |block: u64| fs.block(block);
    let block_size = fs.geo.block_size;
    let first_block = if inode.has_flag(EXTENTS_FL) {
        let mut budget = fs.geo.blocks_count;
        let mut last = None;
        walk_extents(fs, &inode.block, MAX_DEPTH, &mut budget, &mut last)
            .map_err(|why| why.message)?;
        let mapped = last.map_or(0, |last| last + 1);
        if mapped < nblocks {
            return Err(format!(
                "blocks are mapped up to logical block {mapped}, its size needs {nblocks}"
            ));
        }
        crate::reader::extent::map_extent(&inode.block, 0, read)
    } else {
        for logical in 0..nblocks {
            let Ok(logical32) = u32::try_from(logical) else {
                break;
            };
            match crate::reader::extent::map_blockmap(&inode.block, block_size, logical32, read) {
                Ok(Some(physical))
                    if physical >= fs.geo.first_data_block && physical < fs.geo.blocks_count => {}
                Ok(Some(physical)) => {
                    return Err(format!(
                        "logical block {logical} maps to block {physical}, outside the filesystem"
                    ))
                }
                Ok(None) => return Err(format!("logical block {logical} is not mapped")),
                Err(e) => return Err(e.to_string()),
            }
        }
        crate::reader::extent::map_blockmap(&inode.block, block_size, 0, read)
    };
    match first_block {
        Ok(Some(block)) => Ok(block),
        Ok(None) => Err("logical block 0 is not mapped".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The journal superblock's rules, in the order jbd2's load (and e2fsck_journal_load) meets
/// them: a bad magic, block type, feature set, checksum, block size or fast-commit area stops
/// the checks that follow (they would read fields of a superblock already judged unusable).
fn check_superblock(fs: &Filesystem, raw: &[u8], blk: u64, nblocks: u64, findings: &mut Findings) {
    let jsb = JournalSuperblock::parse(raw);
    let fatal = magic_finding(&jsb, blk)
        .or_else(|| block_type_finding(&jsb))
        .or_else(|| features_finding(&jsb))
        .or_else(|| checksum_finding(&jsb, raw))
        .or_else(|| block_size_finding(fs, &jsb));
    if let Some(finding) = fatal {
        findings.push(finding);
        return;
    }
    let maxlen = u64::from(jsb.maxlen);
    if maxlen > nblocks {
        findings.push(
            Finding::new(
                RuleId::JournalMaxlen,
                None,
                format!("journal length is {maxlen} blocks, the journal inode holds {nblocks}"),
            )
            .with("stored", maxlen)
            .with("expected_max", nblocks),
        );
    }
    if let Some(finding) = fast_commit_finding(&jsb) {
        findings.push(finding);
        return;
    }
    check_start_and_errno(fs, &jsb, findings);
    let users = jsb.nr_users;
    if jsb.blocktype == 4 && users > 1 {
        findings.push(
            Finding::new(
                RuleId::JournalUsers,
                None,
                format!("internal journal has {users} users, at most 1"),
            )
            .with("stored", users),
        );
    }
}

/// The compat and incompat feature words: a v1 superblock (block type 3) has none, whatever
/// its bytes hold.
fn features(jsb: &JournalSuperblock) -> (u32, u32) {
    if jsb.blocktype == 4 {
        (jsb.feature_compat, jsb.feature_incompat)
    } else {
        (0, 0)
    }
}

fn magic_finding(jsb: &JournalSuperblock, blk: u64) -> Option<Finding> {
    let magic = jsb.magic;
    (magic != JBD2_MAGIC).then(|| {
        Finding::new(
            RuleId::JournalSuperblockMagic,
            None,
            format!("journal superblock (block {blk}) magic is 0x{magic:08x}, should be 0x{JBD2_MAGIC:08x}"),
        )
        .with("stored", magic)
        .with("expected", JBD2_MAGIC)
        .with("block", blk)
    })
}

fn block_type_finding(jsb: &JournalSuperblock) -> Option<Finding> {
    let btype = jsb.blocktype;
    (btype != 3 && btype != 4).then(|| {
        Finding::new(
            RuleId::JournalSuperblockType,
            None,
            format!("journal superblock block type is {btype}, should be 3 or 4"),
        )
        .with("stored", btype)
    })
}

/// Unknown incompat bits, or checksum versions that contradict each other (v2 with v3, or
/// either with the v1 compat checksum): jbd2 refuses such a journal.
fn features_finding(jsb: &JournalSuperblock) -> Option<Finding> {
    let (compat, incompat) = features(jsb);
    let unknown = incompat & !KNOWN_INCOMPAT;
    let v2 = incompat & INCOMPAT_CSUM_V2 != 0;
    let v3 = incompat & INCOMPAT_CSUM_V3 != 0;
    let conflicting = v2 && v3 || (v2 || v3) && compat & COMPAT_CHECKSUM != 0;
    (unknown != 0 || conflicting).then(|| {
        Finding::new(
            RuleId::JournalFeatures,
            None,
            format!(
                "journal features compat 0x{compat:x} incompat 0x{incompat:x}: unknown bits 0x{unknown:x}{}",
                if conflicting {
                    ", conflicting checksum versions"
                } else {
                    ""
                }
            ),
        )
        .with("compat", compat)
        .with("incompat", incompat)
    })
}

/// With csum v2/v3 the superblock carries a crc32c of its first 1024 bytes, taken with the
/// checksum field (0xFC..0x100) zeroed, and the checksum type must be crc32c.
fn checksum_finding(jsb: &JournalSuperblock, raw: &[u8]) -> Option<Finding> {
    let (_, incompat) = features(jsb);
    if incompat & (INCOMPAT_CSUM_V2 | INCOMPAT_CSUM_V3) == 0 {
        return None;
    }
    let ctype = jsb.checksum_type;
    let stored = jsb.checksum;
    let mut buf = [0u8; 1024];
    if let Some(first) = raw.get(..1024) {
        buf.copy_from_slice(first);
    }
    buf[0xFC..0x100].fill(0);
    let want = crc32c_raw(!0, &buf);
    (ctype != CSUM_TYPE_CRC32C || stored != want).then(|| {
        Finding::new(
            RuleId::JournalChecksum,
            None,
            format!(
                "journal superblock checksum type {ctype} (should be 4), checksum 0x{stored:08x}, should be 0x{want:08x}"
            ),
        )
        .with("stored", stored)
        .with("expected", want)
    })
}

fn block_size_finding(fs: &Filesystem, jsb: &JournalSuperblock) -> Option<Finding> {
    let jbs = u64::from(jsb.blocksize);
    (jbs != fs.geo.block_size).then(|| {
        Finding::new(
            RuleId::JournalBlockSize,
            None,
            format!(
                "journal block size is {jbs}, should be {}",
                fs.geo.block_size
            ),
        )
        .with("stored", jbs)
        .with("expected", fs.geo.block_size)
    })
}

/// e2fsck_journal_load (and jbd2's load): the fast-commit area comes off the end of the
/// journal and must leave a log of at least JBD2_MIN_JOURNAL_BLOCKS.
fn fast_commit_finding(jsb: &JournalSuperblock) -> Option<Finding> {
    let (_, incompat) = features(jsb);
    if incompat & INCOMPAT_FAST_COMMIT == 0 {
        return None;
    }
    let maxlen = u64::from(jsb.maxlen);
    let fc = match jsb.num_fc_blks {
        0 => DEFAULT_FAST_COMMIT_BLOCKS,
        stored => stored,
    };
    let log = maxlen.saturating_sub(u64::from(fc));
    (log < MIN_JOURNAL_BLOCKS).then(|| {
        Finding::new(
            RuleId::JournalFastCommitBlocks,
            None,
            format!(
                "the journal's {maxlen} blocks less its {fc} fast-commit blocks leave {log} blocks of log, fewer than {MIN_JOURNAL_BLOCKS} (incorrect fast commit blocks)"
            ),
        )
        .with("stored", fc)
        .with("maxlen", maxlen)
    })
}

/// `e2fsck_check_ext3_journal`: a non-zero `s_start` without needs_recovery ("journal has data",
/// ignored when answered no) and an `s_errno` left by a kernel that aborted the journal (copied
/// into the superblock's error state). Both leave e2fsck -n at exit 0.
fn check_start_and_errno(fs: &Filesystem, journal: &JournalSuperblock, findings: &mut Findings) {
    if fs.sb.has_incompat(INCOMPAT_RECOVER) {
        return;
    }
    if journal.start != 0 {
        findings.push(
            Finding::new(
                RuleId::JournalStartWithoutRecovery,
                None,
                format!(
                    "the journal has data (s_start {}) but needs_recovery is clear: it will not be replayed",
                    journal.start
                ),
            )
            .with("stored", journal.start),
        );
    }
    if journal.errno != 0 {
        findings.push(
            Finding::new(
                RuleId::JournalErrno,
                None,
                format!(
                    "the journal superblock records error {} (the kernel aborted the journal)",
                    journal.errno
                ),
            )
            .with("stored", journal.errno),
        );
    }
}
