//! jbd2 on-disk structures (big-endian, include/linux/jbd2.h): the journal superblock
//! (`journal_superblock_t`), the block header, descriptor tags (v2/v3, 32/64-bit), the descriptor
//! tail, commit and revoke blocks; the fast-commit tag-length-value records (little-endian,
//! fs/ext4/fast_commit.h); and the MMP block (`struct mmp_struct`, little-endian, fs/ext4/ext4.h).
//!
//! The log-block readers (`parse`) take a byte slice and never fail on short input: the bytes are
//! zero-padded to the structure's size first, as a C reader sees whatever follows in its buffer.

use super::OnDisk;
use binrw::{BinRead, BinReaderExt};
use serde::Serialize;
use std::io::Cursor;

/// jbd2 h_magic.
pub const JBD2_MAGIC: u32 = 0xC03B_3998;
/// mmp_magic.
pub const MMP_MAGIC: u32 = 0x004D_4D50;
/// Slots of s_users.
pub const USERS_MAX: usize = 48;

/// The journal superblock (1024 bytes).
#[derive(BinRead, Clone, Debug, PartialEq, Eq)]
#[br(big)]
pub struct RawJournalSuperblock {
    /// On-disk `s_header`.
    pub header: Header,
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
            header: Header::default(),
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

impl OnDisk for Header {
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

// ---------------------------------------------------------------------------------------------
// Log blocks
// ---------------------------------------------------------------------------------------------

/// jbd2 block types (h_blocktype).
pub const DESCRIPTOR_BLOCK: u32 = 1;
/// Commit block: ends a transaction.
pub const COMMIT_BLOCK: u32 = 2;
/// Journal superblock, version 1.
pub const SUPERBLOCK_V1: u32 = 3;
/// Journal superblock, version 2.
pub const SUPERBLOCK_V2: u32 = 4;
/// Revoke block: blocks not to replay.
pub const REVOKE_BLOCK: u32 = 5;

/// Tag flags.
pub const FLAG_ESCAPE: u32 = 1;
/// The tag's UUID is the previous tag's (no UUID follows).
pub const FLAG_SAME_UUID: u32 = 2;
/// The block was deleted by this transaction.
pub const FLAG_DELETED: u32 = 4;
/// Last tag of the descriptor block.
pub const FLAG_LAST_TAG: u32 = 8;

/// Journal compat feature: v1 transaction checksums (crc32_be in commit blocks).
pub const COMPAT_CHECKSUM: u32 = 0x1;
/// `h_chksum_type` of a v1 commit block checksum (JBD2_CRC32_CHKSUM).
pub const CRC32_CHKSUM: u8 = 1;
/// `h_chksum_size` of a v1 commit block checksum (JBD2_CRC32_CHKSUM_SIZE).
pub const CRC32_CHKSUM_SIZE: u8 = 4;
/// `s_checksum_type` of v2/v3 checksums (JBD2_CRC32C_CHKSUM).
pub const CRC32C_CHKSUM: u8 = 4;

/// Journal incompat features.
pub const INCOMPAT_REVOKE: u32 = 0x1;
/// Block numbers in tags are 64-bit.
pub const INCOMPAT_64BIT: u32 = 0x2;
/// Commit blocks may be written without waiting for the data.
pub const INCOMPAT_ASYNC_COMMIT: u32 = 0x4;
/// Checksums v2 (crc32c, 16-bit tag checksums).
pub const INCOMPAT_CSUM_V2: u32 = 0x8;
/// Checksums v3 (crc32c, 32-bit tag checksums).
pub const INCOMPAT_CSUM_V3: u32 = 0x10;
/// Fast-commit blocks follow the journal.
pub const INCOMPAT_FAST_COMMIT: u32 = 0x20;

/// Fast-commit blocks reserved when the superblock says 0 (JBD2_DEFAULT_FAST_COMMIT_BLOCKS).
pub const DEFAULT_FAST_COMMIT_BLOCKS: u32 = 256;

/// Decode `T` from `bytes`, zero-padded to `size`.
fn read_padded<T>(bytes: &[u8], size: usize) -> T
where
    T: BinRead + Default,
    for<'a> T::Args<'a>: Default,
{
    let mut buf = vec![0u8; size];
    let len = bytes.len().min(size);
    buf[..len].copy_from_slice(&bytes[..len]);
    Cursor::new(buf).read_ne().unwrap_or_default()
}

/// journal_header_t: the 12 bytes every log block except data blocks starts with.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[br(big)]
pub struct Header {
    /// JBD2_MAGIC_NUMBER (0xC03B3998).
    pub magic: u32,
    /// One of the block types above.
    pub blocktype: u32,
    /// Transaction ID.
    pub sequence: u32,
}

impl Header {
    /// Bytes on disk.
    pub const SIZE: usize = 12;
    /// Decode from `bytes` (zero-padded when short).
    pub fn parse(bytes: &[u8]) -> Header {
        read_padded(bytes, Self::SIZE)
    }
}

/// A descriptor tag in any of its on-disk layouts, decoded to one shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Tag {
    /// Low 32 bits of the filesystem block (what debugfs prints).
    pub blocknr: u32,
    /// High 32 bits (64-bit journals only).
    pub blocknr_high: u32,
    /// Flags (16 bits in v2 tags, 32 in v3).
    pub flags: u32,
    /// Data block checksum (16-bit in v2, 32-bit in v3; 0 without checksums).
    pub checksum: u32,
}

/// journal_block_tag3_t (csum v3): 16 bytes.
#[derive(BinRead, Clone, Copy, Debug, Default)]
#[br(big)]
struct Tag3 {
    blocknr: u32,
    flags: u32,
    blocknr_high: u32,
    checksum: u32,
}

/// journal_block_tag_t (no checksum, or csum v2): up to 12 bytes; `blocknr_high` only counts
/// with 64-bit journals.
#[derive(BinRead, Clone, Copy, Debug, Default)]
#[br(big)]
struct Tag2 {
    blocknr: u32,
    checksum: u16,
    flags: u16,
    blocknr_high: u32,
}

/// Which tag layout a journal uses (from its superblock's incompat features).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TagFormat {
    /// Tags carry 32-bit checksums (journal_block_tag3_t).
    pub csum_v3: bool,
    /// Tags carry 16-bit checksums.
    pub csum_v2: bool,
    /// Tags carry the high 32 bits of the block number.
    pub is_64bit: bool,
}

impl TagFormat {
    /// The layout a journal with these incompat features uses.
    pub fn from_incompat(incompat: u32) -> TagFormat {
        TagFormat {
            csum_v3: incompat & INCOMPAT_CSUM_V3 != 0,
            csum_v2: incompat & INCOMPAT_CSUM_V2 != 0,
            is_64bit: incompat & INCOMPAT_64BIT != 0,
        }
    }

    /// Bytes per tag, without the 16-byte UUID that follows a tag lacking SAME_UUID
    /// (journal_tag_bytes).
    pub fn tag_bytes(&self) -> usize {
        if self.csum_v3 {
            return 16;
        }
        let mut sz = 12;
        if self.csum_v2 {
            sz += 2;
        }
        if self.is_64bit {
            sz
        } else {
            sz - 4
        }
    }

    /// Bytes reserved for the descriptor block tail (a checksum) at the end of a descriptor.
    pub fn tail_bytes(&self) -> usize {
        if self.csum_v2 || self.csum_v3 {
            4
        } else {
            0
        }
    }

    /// Decode one tag at the start of `bytes`.
    pub fn parse(&self, bytes: &[u8]) -> Tag {
        if self.csum_v3 {
            let tag: Tag3 = read_padded(bytes, 16);
            Tag {
                blocknr: tag.blocknr,
                blocknr_high: if self.is_64bit { tag.blocknr_high } else { 0 },
                flags: tag.flags,
                checksum: tag.checksum,
            }
        } else {
            let tag: Tag2 = read_padded(bytes, 12);
            Tag {
                blocknr: tag.blocknr,
                blocknr_high: if self.is_64bit { tag.blocknr_high } else { 0 },
                flags: u32::from(tag.flags),
                checksum: if self.csum_v2 {
                    u32::from(tag.checksum)
                } else {
                    0
                },
            }
        }
    }
}

/// commit_header: the header, checksum type/size, 32 bytes of checksums, commit time.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[br(big)]
pub struct Commit {
    /// The common block header.
    pub header: Header,
    /// Checksum algorithm (JBD2_CRC32_CHKSUM, MD5, SHA1, CRC32C).
    pub chksum_type: u8,
    /// Bytes of checksum used.
    pub chksum_size: u8,
    /// Unused.
    pub padding: [u8; 2],
    /// The checksum (only the first word used).
    pub chksum: [u32; 8],
    /// Commit time, seconds.
    pub commit_sec: u64,
    /// Commit time, nanoseconds.
    pub commit_nsec: u32,
}

impl Commit {
    /// Bytes on disk.
    pub const SIZE: usize = 60;
    /// Byte offset of `chksum[0]`, the word a v2/v3 commit checksum is computed over as zero.
    pub const CHECKSUM_OFFSET: usize = 16;
    /// Decode from `bytes` (zero-padded when short).
    pub fn parse(bytes: &[u8]) -> Commit {
        read_padded(bytes, Self::SIZE)
    }
}

/// jbd2_journal_block_tail: the checksum in the last 4 bytes of descriptor and revoke blocks
/// (csum v2/v3).
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[br(big)]
pub struct BlockTail {
    /// `t_checksum`.
    pub checksum: u32,
}

impl BlockTail {
    /// Bytes on disk.
    pub const SIZE: usize = 4;
    /// The tail of `block` (its last [`Self::SIZE`] bytes; zero when the block is shorter).
    pub fn of(block: &[u8]) -> BlockTail {
        read_padded(
            block
                .get(block.len().saturating_sub(Self::SIZE)..)
                .unwrap_or(&[]),
            Self::SIZE,
        )
    }
}

/// jbd2_journal_revoke_header_t: the header and the number of bytes used in the block.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[br(big)]
pub struct RevokeHeader {
    /// The common block header.
    pub header: Header,
    /// Bytes used in the block, header included.
    pub count: u32,
}

impl RevokeHeader {
    /// Bytes on disk.
    pub const SIZE: usize = 16;
    /// Decode from `bytes` (zero-padded when short).
    pub fn parse(bytes: &[u8]) -> RevokeHeader {
        read_padded(bytes, Self::SIZE)
    }
}

/// A big-endian revoke record (4 or 8 bytes).
#[derive(BinRead, Clone, Copy, Debug, Default)]
#[br(big)]
struct Be64(u64);
#[derive(BinRead, Clone, Copy, Debug, Default)]
#[br(big)]
struct Be32(u32);

/// One revoke record at the start of `bytes`.
pub fn revoke_entry(bytes: &[u8], is_64bit: bool) -> u64 {
    if is_64bit {
        read_padded::<Be64>(bytes, 8).0
    } else {
        u64::from(read_padded::<Be32>(bytes, 4).0)
    }
}

/// The descriptor/revoke block tail (jbd2_journal_block_tail).
pub fn block_tail(bytes: &[u8]) -> u32 {
    let start = bytes.len().saturating_sub(4);
    read_padded::<Be32>(bytes.get(start..).unwrap_or(&[]), 4).0
}

// ---------------------------------------------------------------------------------------------
// Fast commit (little-endian)
// ---------------------------------------------------------------------------------------------

/// Fast-commit tags.
pub const FC_TAG_ADD_RANGE: u16 = 1;
/// Blocks removed from an inode.
pub const FC_TAG_DEL_RANGE: u16 = 2;
/// A directory entry created with its inode.
pub const FC_TAG_CREAT: u16 = 3;
/// A directory entry added.
pub const FC_TAG_LINK: u16 = 4;
/// A directory entry removed.
pub const FC_TAG_UNLINK: u16 = 5;
/// An inode's contents.
pub const FC_TAG_INODE: u16 = 6;
/// Padding to the end of the block.
pub const FC_TAG_PAD: u16 = 7;
/// End of a fast-commit transaction.
pub const FC_TAG_TAIL: u16 = 8;
/// First tag of the fast-commit area.
pub const FC_TAG_HEAD: u16 = 9;

/// The name e2fsprogs' tag2str gives a fast-commit tag.
pub fn fc_tag_name(tag: u16) -> &'static str {
    match tag {
        FC_TAG_LINK => "ADD_ENTRY",
        FC_TAG_UNLINK => "DEL_ENTRY",
        FC_TAG_ADD_RANGE => "ADD_RANGE",
        FC_TAG_CREAT => "CREAT_DENTRY",
        FC_TAG_DEL_RANGE => "DEL_RANGE",
        FC_TAG_INODE => "INODE",
        FC_TAG_PAD => "PAD",
        FC_TAG_TAIL => "TAIL",
        FC_TAG_HEAD => "HEAD",
        _ => "ERROR",
    }
}

/// ext4_fc_tl: tag and value length.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[br(little)]
pub struct FcTl {
    /// One of the FC_TAG_* values.
    pub tag: u16,
    /// Bytes of value that follow.
    pub len: u16,
}

impl FcTl {
    /// Bytes on disk.
    pub const SIZE: usize = 4;
    /// Decode from `bytes` (zero-padded when short).
    pub fn parse(bytes: &[u8]) -> FcTl {
        read_padded(bytes, Self::SIZE)
    }
}

/// ext4_fc_head.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[br(little)]
pub struct FcHead {
    /// Fast-commit features.
    pub features: u32,
    /// Transaction ID of the full commit this area follows.
    pub tid: u32,
}

/// ext4_fc_tail.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[br(little)]
pub struct FcTail {
    /// Transaction ID.
    pub tid: u32,
    /// CRC32C of the transaction's tags.
    pub crc: u32,
}

/// ext4_fc_add_range: an inode and one extent (ext3_extent).
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[br(little)]
pub struct FcAddRange {
    /// The inode.
    pub ino: u32,
    /// First logical block.
    pub ee_block: u32,
    /// Length in blocks (above 32768: unwritten).
    pub ee_len: u16,
    /// High 16 bits of the first physical block.
    pub ee_start_hi: u16,
    /// Low 32 bits of the first physical block.
    pub ee_start: u32,
}

/// ext4_fc_del_range.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[br(little)]
pub struct FcDelRange {
    /// The inode.
    pub ino: u32,
    /// First logical block removed.
    pub lblk: u32,
    /// Blocks removed.
    pub len: u32,
}

/// ext4_fc_dentry_info without the name that follows.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[br(little)]
pub struct FcDentry {
    /// The directory.
    pub parent_ino: u32,
    /// The entry's inode.
    pub ino: u32,
}

/// The first field of ext4_fc_inode.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[br(little)]
pub struct FcInode {
    /// The inode whose record follows.
    pub ino: u32,
}

macro_rules! padded_parse {
    ($($t:ty = $n:expr),*) => {$(
        impl $t {
            /// Decode from `bytes` (zero-padded when short).
            pub fn parse(bytes: &[u8]) -> $t {
                read_padded(bytes, $n)
            }
        }
    )*};
}
padded_parse!(
    FcHead = 8,
    FcTail = 8,
    FcAddRange = 16,
    FcDelRange = 12,
    FcDentry = 8,
    FcInode = 4
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::{decode, testing::assert_size};

    #[test]
    fn sizes_match_declarations() {
        assert_size::<Header>();
        assert_size::<RawJournalSuperblock>();
        assert_size::<RawMmp>();
    }

    #[test]
    fn fields_after_gaps() {
        let mut block = vec![0u8; 1024];
        block[0x57] = 3; // s_num_fc_blks
        block[0xFF] = 4; // s_checksum
        block[0x100] = 5; // s_users[0][0]
        let jsb: RawJournalSuperblock = decode(&block).unwrap();
        assert_eq!((jsb.num_fc_blks, jsb.checksum, jsb.users[0][0]), (3, 4, 5));
        let mut mmp_bytes = vec![0u8; 1024];
        mmp_bytes[MMP_CHECKSUM_OFFSET] = 6;
        mmp_bytes[112] = 7; // mmp_check_interval
        let mmp: RawMmp = decode(&mmp_bytes).unwrap();
        assert_eq!((mmp.checksum, mmp.check_interval), (6, 7));
    }

    mod log_blocks {
        #[test]
        fn commit_checksum_offset_and_block_tail() {
            let mut block = vec![0u8; 1024];
            block[super::super::Commit::CHECKSUM_OFFSET..super::super::Commit::CHECKSUM_OFFSET + 4]
                .copy_from_slice(&0x1234_5678u32.to_be_bytes());
            block[1020..].copy_from_slice(&0x9abc_def0u32.to_be_bytes());
            assert_eq!(super::super::Commit::parse(&block).chksum[0], 0x1234_5678);
            assert_eq!(super::super::BlockTail::of(&block).checksum, 0x9abc_def0);
        }

        use super::super::*;

        #[test]
        fn tag_sizes() {
            let tag_size = |i| TagFormat::from_incompat(i).tag_bytes();
            assert_eq!(tag_size(0), 8);
            assert_eq!(tag_size(INCOMPAT_64BIT), 12);
            assert_eq!(tag_size(INCOMPAT_CSUM_V2), 10);
            assert_eq!(tag_size(INCOMPAT_CSUM_V2 | INCOMPAT_64BIT), 14);
            assert_eq!(tag_size(INCOMPAT_CSUM_V3), 16);
        }

        #[test]
        fn decodes_big_endian_and_pads() {
            let header = Header::parse(&[0xC0, 0x3B, 0x39, 0x98, 0, 0, 0, 1, 0, 0]);
            assert_eq!(header.magic, 0xC03B_3998);
            assert_eq!(header.blocktype, 1);
            assert_eq!(header.sequence, 0);
            let tag = TagFormat::from_incompat(INCOMPAT_CSUM_V3 | INCOMPAT_64BIT).parse(&[
                0, 0, 0, 9, 0, 0, 0, 0x0A, 0, 0, 0, 1, 0xDE, 0xAD, 0xBE, 0xEF,
            ]);
            assert_eq!((tag.blocknr, tag.flags, tag.blocknr_high), (9, 0x0A, 1));
            assert_eq!(tag.checksum, 0xDEAD_BEEF);
            let tag = TagFormat::from_incompat(0).parse(&[0, 0, 1, 0, 0, 0, 0, 8]);
            assert_eq!((tag.blocknr, tag.flags), (256, 8));
            assert_eq!(revoke_entry(&[0, 0, 0, 0, 0, 0, 1, 2], true), 258);
            assert_eq!(FcTl::parse(&[9, 0, 8]).tag, FC_TAG_HEAD);
        }
    }
}
