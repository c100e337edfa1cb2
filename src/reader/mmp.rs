//! The multiple-mount protection block (`struct mmp_struct`, fs/ext4/ext4.h): decoding it
//! (`ext2fs_mmp_read` in lib/ext2fs/mmp.c) and what its sequence number says
//! (`ext2fs_mmp_start`: clean, e2fsck running, unknown, or a node updating it).

use crate::error::LibError;
use crate::reader::csum::crc32c_raw;
use crate::reader::features::INCOMPAT_MMP;
use crate::reader::fs::Filesystem;
use crate::reader::ondisk;
use crate::reader::ondisk::journal::{RawMmp, MMP_CHECKSUM_OFFSET};
use serde::Serialize;

/// MMP magic.
pub const MMP_MAGIC: u32 = crate::reader::ondisk::journal::MMP_MAGIC;
/// `EXT4_MMP_SEQ_CLEAN`: unmounted cleanly.
pub const SEQ_CLEAN: u32 = 0xFF4D_4D50;
/// `EXT4_MMP_SEQ_FSCK`: e2fsck is (or was, when it died) running.
pub const SEQ_FSCK: u32 = 0xE24D_4D50;
/// `EXT4_MMP_SEQ_MAX`: the largest sequence a mounting node writes.
pub const SEQ_MAX: u32 = 0xE24D_4D4F;

/// The MMP block.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Mmp {
    /// `mmp_magic`.
    pub magic: u32,
    /// `mmp_seq`.
    pub seq: u32,
    /// `mmp_time`.
    pub time: u64,
    #[serde(skip)]
    /// `mmp_nodename`.
    pub nodename: [u8; 64],
    #[serde(skip)]
    /// `mmp_bdevname`.
    pub bdevname: [u8; 32],
    /// `mmp_check_interval`.
    pub check_interval: u16,
    /// `mmp_checksum`.
    pub checksum: u32,
}

/// What the sequence number says (`ext2fs_mmp_start`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmpSeq {
    /// `EXT4_MMP_SEQ_CLEAN`: nobody holds the filesystem.
    Clean,
    /// `EXT4_MMP_SEQ_FSCK`: e2fsck holds it (EXT2_ET_MMP_FSCK_ON).
    Fsck,
    /// Above `EXT4_MMP_SEQ_MAX` and not a marker (EXT2_ET_MMP_UNKNOWN_SEQ).
    Unknown,
    /// A mounting node's counter: in use unless it stops changing.
    InUse,
}

impl Mmp {
    /// Decode the fields (no judgement).
    pub fn decode(block: &[u8]) -> Result<Mmp, LibError> {
        let raw: RawMmp = ondisk::decode(block)?;
        Ok(Mmp {
            magic: raw.magic,
            seq: raw.seq,
            time: raw.time,
            nodename: raw.nodename,
            bdevname: raw.bdevname,
            check_interval: raw.check_interval,
            checksum: raw.checksum,
        })
    }
    /// The class of the sequence number.
    pub fn seq_state(&self) -> MmpSeq {
        match self.seq {
            SEQ_CLEAN => MmpSeq::Clean,
            SEQ_FSCK => MmpSeq::Fsck,
            s if s > SEQ_MAX => MmpSeq::Unknown,
            _ => MmpSeq::InUse,
        }
    }
    /// `mmp_nodename` up to its first NUL, lossily as UTF-8.
    pub fn node_name(&self) -> String {
        c_str(&self.nodename)
    }
    /// `mmp_bdevname` up to its first NUL, lossily as UTF-8.
    pub fn device_name(&self) -> String {
        c_str(&self.bdevname)
    }
}

fn c_str(bytes: &[u8]) -> String {
    let len = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..len]).into_owned()
}

/// The checksum `mmp_checksum` should hold: crc32c of the bytes before it, seeded as the other
/// metadata checksums.
pub fn expected_checksum(fs: &Filesystem, block: &[u8]) -> u32 {
    crc32c_raw(
        fs.csum_seed(),
        block.get(..MMP_CHECKSUM_OFFSET).unwrap_or(&[]),
    )
}

/// True when the superblock names an MMP block (the feature and a non-zero `s_mmp_block`).
pub fn has_mmp(fs: &Filesystem) -> bool {
    fs.sb.has_incompat(INCOMPAT_MMP) && fs.sb.mmp_block != 0
}

/// True when the MMP block number is one `ext2fs_mmp_read` accepts.
pub fn block_in_range(fs: &Filesystem) -> bool {
    let blk = fs.sb.mmp_block;
    blk > u64::from(fs.sb.first_data_block) && blk < fs.geo.blocks_count
}

/// Read and check the MMP block as ext2fs_mmp_read does; the error is its message.
pub fn read_mmp(fs: &Filesystem, verify_csum: bool) -> std::result::Result<Mmp, LibError> {
    if !block_in_range(fs) {
        return Err(LibError::MmpBadBlock);
    }
    let block = fs.block(fs.sb.mmp_block)?;
    let mmp = Mmp::decode(&block)?;
    if mmp.magic != MMP_MAGIC {
        return Err(LibError::MmpMagicInvalid);
    }
    if verify_csum && fs.sb.has_metadata_csum() && expected_checksum(fs, &block) != mmp.checksum {
        return Err(LibError::MmpCsumInvalid);
    }
    Ok(mmp)
}

/// `EXT4_MMP_MIN_CHECK_INTERVAL`: the shortest update interval `ext2fs_mmp_start` waits on.
pub const MIN_CHECK_INTERVAL: u64 = 5;

/// What `ext2fs_mmp_start` decides on a read-only open (dumpe2fs -m, e2mmpstatus).
#[derive(Clone, Debug)]
pub enum MmpStart {
    /// Safe to mount: the block says clean, or a node's sequence did not change while watched.
    Clean,
    /// In use (or unreadable as in use): the libext2fs message and the block as last read, for
    /// dumpe2fs' "MMP update by NODE DEVICE at TIME" line.
    Refused {
        /// EXT2_ET_MMP_FAILED, _FSCK_ON, _UNKNOWN_SEQ or _CSUM_INVALID, as libext2fs words it.
        message: &'static str,
        /// The block as read.
        last: Mmp,
    },
    /// The block cannot be used at all: out of range, bad magic, unreadable.
    Unusable(LibError),
}

/// How long `ext2fs_mmp_start` watches a node's sequence: twice the larger of the superblock's
/// and the block's check interval (at least [`MIN_CHECK_INTERVAL`]) plus one second, at most
/// the interval plus a minute.
pub fn watch_seconds(fs: &Filesystem, mmp: &Mmp) -> u64 {
    let interval = u64::from(fs.sb.mmp_update_interval)
        .max(MIN_CHECK_INTERVAL)
        .max(u64::from(mmp.check_interval));
    (interval * 2 + 1).min(interval + 60)
}

/// The block and its checksum verdict: `Err` for what `ext2fs_mmp_read` fails on before any
/// field can be trusted (range, read, magic), `Ok((block, checksum_ok))` otherwise.
fn read_for_start(fs: &Filesystem) -> std::result::Result<(Mmp, bool), LibError> {
    match read_mmp(fs, true) {
        Ok(m) => Ok((m, true)),
        Err(LibError::MmpCsumInvalid) => {
            let block = fs.block(fs.sb.mmp_block)?;
            Ok((Mmp::decode(&block)?, false))
        }
        Err(e) => Err(e),
    }
}

/// `ext2fs_mmp_start` as a read-only open runs it: the sequence says clean, e2fsck, unknown,
/// or a node's counter, which is watched for [`watch_seconds`] (through `wait`, so a caller
/// decides how to sleep) and read again: a change means another node is active.
pub fn start(fs: &Filesystem, wait: &dyn Fn(u64)) -> MmpStart {
    let refused = |message, last| MmpStart::Refused { message, last };
    let (mmp, csum_ok) = match read_for_start(fs) {
        Ok(r) => r,
        Err(e) => return MmpStart::Unusable(e),
    };
    if !csum_ok {
        return refused(crate::error::ext2_err::MMP_CSUM_INVALID, mmp);
    }
    match mmp.seq_state() {
        MmpSeq::Clean => return MmpStart::Clean,
        MmpSeq::Fsck => return refused(crate::error::ext2_err::MMP_FSCK_ON, mmp),
        MmpSeq::Unknown => return refused(crate::error::ext2_err::MMP_UNKNOWN_SEQ, mmp),
        MmpSeq::InUse => {}
    }
    wait(watch_seconds(fs, &mmp));
    match read_for_start(fs) {
        Err(e) => MmpStart::Unusable(e),
        Ok((again, false)) => refused(crate::error::ext2_err::MMP_CSUM_INVALID, again),
        Ok((again, true)) if again.seq != mmp.seq => {
            refused(crate::error::ext2_err::MMP_FAILED, again)
        }
        Ok(_) => MmpStart::Clean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(seq: u32) -> Vec<u8> {
        let mut bytes = vec![0u8; 1024];
        bytes[0..4].copy_from_slice(&MMP_MAGIC.to_le_bytes());
        bytes[4..8].copy_from_slice(&seq.to_le_bytes());
        bytes[16..20].copy_from_slice(b"node");
        bytes[80..83].copy_from_slice(b"sdb");
        bytes
    }

    #[test]
    fn sequence_classes_follow_ext2fs_mmp_start() {
        let st = |s| Mmp::decode(&block(s)).map(|m| m.seq_state()).ok();
        assert_eq!(st(SEQ_CLEAN), Some(MmpSeq::Clean));
        assert_eq!(st(SEQ_FSCK), Some(MmpSeq::Fsck));
        assert_eq!(st(0xF000_0000), Some(MmpSeq::Unknown));
        assert_eq!(st(7), Some(MmpSeq::InUse));
        assert_eq!(st(SEQ_MAX), Some(MmpSeq::InUse));
        let mmp = Mmp::decode(&block(1)).ok();
        assert_eq!(mmp.as_ref().map(Mmp::node_name).as_deref(), Some("node"));
        assert_eq!(mmp.as_ref().map(Mmp::device_name).as_deref(), Some("sdb"));
        assert!(Mmp::decode(&[0u8; 100]).is_err());
    }
}
