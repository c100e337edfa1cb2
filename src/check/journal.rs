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

fn bad_inode(f: &mut Findings, ino: u32, why: String) {
    f.push(
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
    let h =
        ExtentHeader::parse(node).map_err(|e| Problem::new(ProblemKind::Journal, e.to_string()))?;
    if *budget == 0 {
        return Err(Problem::new(
            ProblemKind::Journal,
            "extent tree has more nodes than the filesystem has blocks",
        ));
    }
    *budget -= 1;
    let (first, end) = (fs.geo.first_data_block, fs.geo.blocks_count);
    if h.depth == 0 {
        for e in leaf_entries(node, &h) {
            let p_end = e.physical.saturating_add(u64::from(e.len));
            if e.len > 0 && (e.physical < first || p_end > end) {
                return Err(Problem::new(
                    ProblemKind::Journal,
                    format!(
                        "extent at logical block {} maps blocks {}-{}, outside the filesystem",
                        e.logical,
                        e.physical,
                        p_end - 1
                    ),
                ));
            }
            if e.len > 0 {
                let l = u64::from(e.logical) + u64::from(e.len) - 1;
                *last = Some(last.map_or(l, |x| x.max(l)));
            }
        }
        return Ok(());
    }
    if h.depth > depth_left {
        return Err(Problem::new(
            ProblemKind::Journal,
            format!("extent tree depth {} is too deep", h.depth),
        ));
    }
    for ix in index_entries(node, &h) {
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
        if ch.depth + 1 != h.depth {
            return Err(Problem::new(
                ProblemKind::Journal,
                format!("extent block {} has the wrong depth", ix.child),
            ));
        }
        walk_extents(fs, &child, h.depth - 1, budget, last)?;
    }
    Ok(())
}

/// Check the internal journal.
pub(super) fn check(fs: &Filesystem, f: &mut Findings) {
    let sb = &fs.sb;
    if !sb.has_compat(COMPAT_HAS_JOURNAL) || sb.has_incompat(INCOMPAT_JOURNAL_DEV) {
        return;
    }
    if sb.journal_uuid.iter().any(|&b| b != 0) {
        // External journal: lives on another device, nothing to read here.
        return;
    }
    let ino = sb.journal_inum;
    if ino == 0 || u64::from(ino) > fs.geo.inodes_count() {
        bad_inode(
            f,
            ino,
            format!("inode number out of range 1-{}", fs.geo.inodes_count()),
        );
        return;
    }
    let raw = match fs.inode_raw(ino) {
        Ok(r) => r,
        Err(e) => return bad_inode(f, ino, e.to_string()),
    };
    let inode = Inode::parse(&raw);
    if inode.links_count == 0 {
        return bad_inode(f, ino, "link count is 0 (not in use)".into());
    }
    if !inode.is_reg() {
        return bad_inode(
            f,
            ino,
            format!("mode 0{:o} is not a regular file", inode.mode),
        );
    }
    if inode.has_flag(ENCRYPT_FL) {
        return bad_inode(f, ino, "it is encrypted".into());
    }
    let bs = fs.geo.block_size;
    let nblocks = inode.size / bs;
    if nblocks < MIN_JOURNAL_BLOCKS {
        return bad_inode(
            f,
            ino,
            format!("size {} is below {MIN_JOURNAL_BLOCKS} blocks", inode.size),
        );
    }
    if nblocks > fs.geo.blocks_count {
        return bad_inode(
            f,
            ino,
            format!("size {} is larger than the filesystem", inode.size),
        );
    }
    // Every block must be mapped (no hole) and inside the filesystem; find the first block.
    let read = |b: u64| fs.block(b);
    let jsb_block = if inode.has_flag(EXTENTS_FL) {
        let mut budget = fs.geo.blocks_count;
        let mut last = None;
        if let Err(why) = walk_extents(fs, &inode.block, MAX_DEPTH, &mut budget, &mut last) {
            return bad_inode(f, ino, why.message);
        }
        if last.map_or(0, |l| l + 1) < nblocks {
            return bad_inode(
                f,
                ino,
                format!(
                    "blocks are mapped up to logical block {}, its size needs {nblocks}",
                    last.map_or(0, |l| l + 1)
                ),
            );
        }
        crate::reader::extent::map_extent(&inode.block, 0, read)
    } else {
        for l in 0..nblocks {
            let Ok(l32) = u32::try_from(l) else { break };
            match crate::reader::extent::map_blockmap(&inode.block, bs, l32, read) {
                Ok(Some(p)) if p >= fs.geo.first_data_block && p < fs.geo.blocks_count => {}
                Ok(Some(p)) => {
                    return bad_inode(
                        f,
                        ino,
                        format!("logical block {l} maps to block {p}, outside the filesystem"),
                    )
                }
                Ok(None) => {
                    return bad_inode(f, ino, format!("logical block {l} is not mapped"));
                }
                Err(e) => return bad_inode(f, ino, e.to_string()),
            }
        }
        crate::reader::extent::map_blockmap(&inode.block, bs, 0, read)
    };
    let blk = match jsb_block {
        Ok(Some(b)) => b,
        Ok(None) => return bad_inode(f, ino, "logical block 0 is not mapped".into()),
        Err(e) => return bad_inode(f, ino, e.to_string()),
    };
    let Ok(jraw) = fs.block(blk) else {
        return bad_inode(
            f,
            ino,
            format!("journal superblock {blk} is beyond the image"),
        );
    };
    check_superblock(fs, &jraw, blk, nblocks, f);
}

fn check_superblock(fs: &Filesystem, raw: &[u8], blk: u64, nblocks: u64, f: &mut Findings) {
    let j = JournalSuperblock::parse(raw);
    let magic = j.magic;
    if magic != JBD2_MAGIC {
        f.push(
            Finding::new(
                RuleId::JournalSuperblockMagic,
                None,
                format!("journal superblock (block {blk}) magic is 0x{magic:08x}, should be 0x{JBD2_MAGIC:08x}"),
            )
            .with("stored", magic)
            .with("expected", JBD2_MAGIC)
            .with("block", blk),
        );
        return;
    }
    let btype = j.blocktype;
    if btype != 3 && btype != 4 {
        f.push(
            Finding::new(
                RuleId::JournalSuperblockType,
                None,
                format!("journal superblock block type is {btype}, should be 3 or 4"),
            )
            .with("stored", btype),
        );
        return;
    }
    let compat = if btype == 4 { j.feature_compat } else { 0 };
    let incompat = if btype == 4 { j.feature_incompat } else { 0 };
    let unknown = incompat & !KNOWN_INCOMPAT;
    let v2 = incompat & INCOMPAT_CSUM_V2 != 0;
    let v3 = incompat & INCOMPAT_CSUM_V3 != 0;
    if unknown != 0 || (v2 && v3) || ((v2 || v3) && compat & COMPAT_CHECKSUM != 0) {
        f.push(
            Finding::new(
                RuleId::JournalFeatures,
                None,
                format!(
                    "journal features compat 0x{compat:x} incompat 0x{incompat:x}: unknown bits 0x{unknown:x}{}",
                    if v2 && v3 || (v2 || v3) && compat & COMPAT_CHECKSUM != 0 {
                        ", conflicting checksum versions"
                    } else {
                        ""
                    }
                ),
            )
            .with("compat", compat)
            .with("incompat", incompat),
        );
        return;
    }
    if v2 || v3 {
        let ctype = j.checksum_type;
        let stored = j.checksum;
        let mut buf = [0u8; 1024];
        if let Some(s) = raw.get(..1024) {
            buf.copy_from_slice(s);
        }
        buf[0xFC..0x100].fill(0);
        let want = crc32c_raw(!0, &buf);
        if ctype != CSUM_TYPE_CRC32C || stored != want {
            f.push(
                Finding::new(
                    RuleId::JournalChecksum,
                    None,
                    format!(
                        "journal superblock checksum type {ctype} (should be 4), checksum 0x{stored:08x}, should be 0x{want:08x}"
                    ),
                )
                .with("stored", stored)
                .with("expected", want),
            );
            return;
        }
    }
    let jbs = u64::from(j.blocksize);
    if jbs != fs.geo.block_size {
        f.push(
            Finding::new(
                RuleId::JournalBlockSize,
                None,
                format!(
                    "journal block size is {jbs}, should be {}",
                    fs.geo.block_size
                ),
            )
            .with("stored", jbs)
            .with("expected", fs.geo.block_size),
        );
        return;
    }
    let maxlen = u64::from(j.maxlen);
    if maxlen > nblocks {
        f.push(
            Finding::new(
                RuleId::JournalMaxlen,
                None,
                format!("journal length is {maxlen} blocks, the journal inode holds {nblocks}"),
            )
            .with("stored", maxlen)
            .with("expected_max", nblocks),
        );
    }
    if incompat & INCOMPAT_FAST_COMMIT != 0 {
        // e2fsck_journal_load (and jbd2's load): the fast-commit area comes off the end of the
        // journal and must leave a log of at least JBD2_MIN_JOURNAL_BLOCKS.
        let fc = match j.num_fc_blks {
            0 => DEFAULT_FAST_COMMIT_BLOCKS,
            n => n,
        };
        let log = maxlen.saturating_sub(u64::from(fc));
        if log < MIN_JOURNAL_BLOCKS {
            f.push(
                Finding::new(
                    RuleId::JournalFastCommitBlocks,
                    None,
                    format!(
                        "the journal's {maxlen} blocks less its {fc} fast-commit blocks leave {log} blocks of log, fewer than {MIN_JOURNAL_BLOCKS} (incorrect fast commit blocks)"
                    ),
                )
                .with("stored", fc)
                .with("maxlen", maxlen),
            );
            return;
        }
    }
    check_start_and_errno(fs, &j, f);
    if btype == 4 {
        let users = j.nr_users;
        if users > 1 {
            f.push(
                Finding::new(
                    RuleId::JournalUsers,
                    None,
                    format!("internal journal has {users} users, at most 1"),
                )
                .with("stored", users),
            );
        }
    }
}

/// `e2fsck_check_ext3_journal`: a non-zero `s_start` without needs_recovery ("journal has data",
/// ignored when answered no) and an `s_errno` left by a kernel that aborted the journal (copied
/// into the superblock's error state). Both leave e2fsck -n at exit 0.
fn check_start_and_errno(fs: &Filesystem, j: &JournalSuperblock, f: &mut Findings) {
    if fs.sb.has_incompat(INCOMPAT_RECOVER) {
        return;
    }
    if j.start != 0 {
        f.push(
            Finding::new(
                RuleId::JournalStartWithoutRecovery,
                None,
                format!(
                    "the journal has data (s_start {}) but needs_recovery is clear: it will not be replayed",
                    j.start
                ),
            )
            .with("stored", j.start),
        );
    }
    if j.errno != 0 {
        f.push(
            Finding::new(
                RuleId::JournalErrno,
                None,
                format!(
                    "the journal superblock records error {} (the kernel aborted the journal)",
                    j.errno
                ),
            )
            .with("stored", j.errno),
        );
    }
}
