//! MMP rules (`mmp.*`): the multiple-mount protection block as `ext2fs_mmp_read` and
//! `ext2fs_mmp_start` judge it when e2fsck opens the filesystem (`e2fsck/unix.c`
//! `e2fsck_check_mmp`: every failure there is fatal, exit 12), and what its sequence says about
//! another node (as `e2mmpstatus` reports it).
//!
//! A file that claims the MMP block is reported by `block.multiply_claimed`: the ownership pass
//! claims the block as metadata, as e2fsck's pass 1 marks it in `block_found_map`.

use super::{Finding, Findings, RuleId};
use crate::reader::fs::Filesystem;
use crate::reader::mmp::{self, Mmp, MmpSeq, MMP_MAGIC};

/// Check the MMP block, when the superblock names one.
pub(super) fn check(fs: &Filesystem, findings: &mut Findings) {
    if !mmp::has_mmp(fs) {
        return;
    }
    let blk = fs.sb.mmp_block;
    if !mmp::block_in_range(fs) {
        findings.push(
            Finding::new(
                RuleId::MmpBlockRange,
                None,
                format!(
                    "the MMP block number {blk} is outside the filesystem ({}..{})",
                    u64::from(fs.sb.first_data_block) + 1,
                    fs.geo.blocks_count
                ),
            )
            .with("block", blk),
        );
        return;
    }
    let Ok(raw) = fs.block(blk) else {
        findings.push(
            Finding::new(
                RuleId::MmpBlockRange,
                None,
                format!("the MMP block {blk} is beyond the end of the image"),
            )
            .with("block", blk),
        );
        return;
    };
    let Ok(mmp) = Mmp::decode(&raw) else { return };
    // ext2fs_mmp_read: a wrong magic overrides a checksum failure.
    if mmp.magic != MMP_MAGIC {
        findings.push(
            Finding::new(
                RuleId::MmpMagic,
                None,
                format!(
                    "MMP block {blk} magic is 0x{:08x}, should be 0x{MMP_MAGIC:08x}",
                    mmp.magic
                ),
            )
            .with("stored", mmp.magic)
            .with("expected", MMP_MAGIC)
            .with("block", blk),
        );
        return;
    }
    if fs.sb.has_metadata_csum() {
        let want = mmp::expected_checksum(fs, &raw);
        if want != mmp.checksum {
            findings.push(
                Finding::new(
                    RuleId::MmpChecksum,
                    None,
                    format!(
                        "MMP block {blk} checksum is 0x{:08x}, should be 0x{want:08x}",
                        mmp.checksum
                    ),
                )
                .with("stored", mmp.checksum)
                .with("expected", want)
                .with("block", blk),
            );
            return;
        }
    }
    check_sequence(&mmp, findings);
}

/// `ext2fs_mmp_start`: e2fsck running or an unknown sequence refuses the open; a node's counter
/// means the filesystem may be mounted elsewhere (e2fsck and the kernel wait to see it change).
fn check_sequence(mmp: &Mmp, findings: &mut Findings) {
    let who = format!(
        "node '{}' (device '{}') at {}",
        mmp.node_name(),
        mmp.device_name(),
        super::state::utc_date(mmp.time as i64)
    );
    let (rule, what) = match mmp.seq_state() {
        MmpSeq::Clean => return,
        MmpSeq::Fsck => (
            RuleId::MmpSequence,
            format!("e2fsck is running on the filesystem (or died there): MMP last updated by {who}"),
        ),
        MmpSeq::Unknown => (
            RuleId::MmpSequence,
            format!(
                "MMP sequence 0x{:08x} is unknown (undergoing an unknown operation): last updated by {who}",
                mmp.seq
            ),
        ),
        MmpSeq::InUse => (
            RuleId::MmpInUse,
            format!(
                "the filesystem may be in use by another node: MMP sequence {} last updated by {who}, every {} s",
                mmp.seq, mmp.check_interval
            ),
        ),
    };
    findings.push(
        Finding::new(rule, None, what)
            .with("sequence", mmp.seq)
            .with("node", mmp.node_name())
            .with("device", mmp.device_name())
            .with_time("time", mmp.time as i64),
    );
}
