//! The jbd2 journal superblock (`journal_superblock_t`, big-endian, include/linux/jbd2.h) and the
//! MMP block (`struct mmp_struct`, little-endian, fs/ext4/ext4.h).

use super::OnDisk;
use binrw::BinRead;

/// jbd2 h_magic.
pub const JBD2_MAGIC: u32 = 0xC03B_3998;
/// mmp_magic.
pub const MMP_MAGIC: u32 = 0x004D_4D50;
/// Slots of s_users.
pub const USERS_MAX: usize = 48;

/// `journal_header_t`, opening every journal metadata block.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(big)]
pub struct JournalHeader {
    /// On-disk `h_magic`.
    pub magic: u32,
    /// On-disk `h_blocktype`.
    pub blocktype: u32,
    /// On-disk `h_sequence`.
    pub sequence: u32,
}

/// The journal superblock (1024 bytes).
#[derive(BinRead, Clone, Debug, PartialEq, Eq)]
#[br(big)]
pub struct RawJournalSuperblock {
    /// On-disk `s_header`.
    pub header: JournalHeader,
    /// On-disk `s_blocksize`.
    pub blocksize: u32,
    /// On-disk `s_maxlen`.
    pub maxlen: u32,
    /// On-disk `s_first`.
    pub first: u32,
    /// On-disk `s_sequence`.
    pub sequence: u32,
    /// On-disk `s_start`.
    pub start: u32,
    /// On-disk `s_errno`.
    pub errno: i32,
    /// On-disk `s_feature_compat`.
    pub feature_compat: u32,
    /// On-disk `s_feature_incompat`.
    pub feature_incompat: u32,
    /// On-disk `s_feature_ro_compat`.
    pub feature_ro_compat: u32,
    /// On-disk `s_uuid`.
    pub uuid: [u8; 16],
    /// On-disk `s_nr_users`.
    pub nr_users: u32,
    /// On-disk `s_dynsuper`.
    pub dynsuper: u32,
    /// On-disk `s_max_transaction`.
    pub max_transaction: u32,
    /// On-disk `s_max_trans_data`.
    pub max_trans_data: u32,
    /// On-disk `s_checksum_type`.
    pub checksum_type: u8,
    #[br(pad_before = 3)]
    /// On-disk `s_num_fc_blks`.
    pub num_fc_blks: u32,
    /// On-disk `s_head`.
    pub head: u32,
    /// After `s_padding[40]`.
    #[br(pad_before = 4 * 40)]
    pub checksum: u32,
    /// On-disk `s_users`.
    pub users: [[u8; 16]; USERS_MAX],
}

/// The MMP block (its first 1024 bytes).
#[derive(BinRead, Clone, Debug, PartialEq, Eq)]
#[br(little)]
pub struct RawMmp {
    /// On-disk `mmp_magic`.
    pub magic: u32,
    /// On-disk `mmp_seq`.
    pub seq: u32,
    /// On-disk `mmp_time`.
    pub time: u64,
    /// On-disk `mmp_nodename`.
    pub nodename: [u8; 64],
    /// On-disk `mmp_bdevname`.
    pub bdevname: [u8; 32],
    /// On-disk `mmp_check_interval`.
    pub check_interval: u16,
    /// On-disk `mmp_pad1`.
    pub pad1: u16,
    /// After `mmp_pad2[226]`.
    #[br(pad_before = 4 * 226)]
    pub checksum: u32,
}

impl Default for RawJournalSuperblock {
    fn default() -> Self {
        RawJournalSuperblock {
            header: JournalHeader {
                magic: 0,
                blocktype: 0,
                sequence: 0,
            },
            blocksize: 0,
            maxlen: 0,
            first: 0,
            sequence: 0,
            start: 0,
            errno: 0,
            feature_compat: 0,
            feature_incompat: 0,
            feature_ro_compat: 0,
            uuid: [0; 16],
            nr_users: 0,
            dynsuper: 0,
            max_transaction: 0,
            max_trans_data: 0,
            checksum_type: 0,
            num_fc_blks: 0,
            head: 0,
            checksum: 0,
            users: [[0; 16]; USERS_MAX],
        }
    }
}

impl OnDisk for JournalHeader {
    const SIZE: usize = 12;
    const WHAT: &'static str = "journal block header";
}
impl OnDisk for RawJournalSuperblock {
    const SIZE: usize = 1024;
    const WHAT: &'static str = "journal superblock";
}
impl OnDisk for RawMmp {
    const SIZE: usize = 1024;
    const WHAT: &'static str = "MMP block";
}

/// Offset of mmp_checksum: it covers the bytes before it.
pub const MMP_CHECKSUM_OFFSET: usize = RawMmp::SIZE - 4;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::{decode, testing::assert_size};

    #[test]
    fn sizes_match_declarations() {
        assert_size::<JournalHeader>();
        assert_size::<RawJournalSuperblock>();
        assert_size::<RawMmp>();
    }

    #[test]
    fn fields_after_gaps() {
        let mut b = vec![0u8; 1024];
        b[0x57] = 3; // s_num_fc_blks
        b[0xFF] = 4; // s_checksum
        b[0x100] = 5; // s_users[0][0]
        let j: RawJournalSuperblock = decode(&b).unwrap();
        assert_eq!((j.num_fc_blks, j.checksum, j.users[0][0]), (3, 4, 5));
        let mut m = vec![0u8; 1024];
        m[MMP_CHECKSUM_OFFSET] = 6;
        m[112] = 7; // mmp_check_interval
        let mmp: RawMmp = decode(&m).unwrap();
        assert_eq!((mmp.checksum, mmp.check_interval), (6, 7));
    }
}
