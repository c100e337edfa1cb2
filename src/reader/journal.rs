//! The jbd2 journal superblock (big-endian) and locating it: inside the journal inode, or at the
//! start of an external journal device.

use crate::error::{Error, LibError, Result};
use crate::reader::extent::{self, ExtentHeader};
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, Inode};
use crate::reader::ondisk;
use crate::reader::ondisk::journal::{Header, RawJournalSuperblock};
use serde::Serialize;

/// jbd2 magic.
pub const JBD2_MAGIC: u32 = crate::reader::ondisk::journal::JBD2_MAGIC;
/// Block type of a v2 superblock.
pub const JBD2_SUPERBLOCK_V2: u32 = crate::reader::ondisk::journal::SUPERBLOCK_V2;
/// Maximum number of users listed.
pub const USERS_MAX: u32 = crate::reader::ondisk::journal::USERS_MAX as u32;

/// A decoded journal superblock.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct JournalSuperblock {
    /// `s_magic`.
    pub magic: u32,
    /// `s_blocktype`.
    pub blocktype: u32,
    /// `s_header_sequence`.
    pub header_sequence: u32,
    /// `s_blocksize`.
    #[serde(rename = "block_size")]
    pub blocksize: u32,
    /// `s_maxlen`.
    pub maxlen: u32,
    /// `s_first`.
    pub first: u32,
    /// `s_sequence`.
    pub sequence: u32,
    /// `s_start`.
    pub start: u32,
    /// `s_errno`.
    pub errno: i32,
    /// `s_feature_compat`.
    pub feature_compat: u32,
    /// `s_feature_incompat`.
    pub feature_incompat: u32,
    /// `s_feature_ro_compat`.
    pub feature_ro_compat: u32,
    /// `s_uuid`.
    #[serde(serialize_with = "crate::reader::values::uuid")]
    #[schemars(schema_with = "crate::reader::values::uuid_schema")]
    pub uuid: [u8; 16],
    /// `s_nr_users`.
    pub nr_users: u32,
    /// `s_max_transaction`.
    pub max_transaction: u32,
    /// `s_max_trans_data`.
    pub max_trans_data: u32,
    /// `s_checksum_type`.
    pub checksum_type: u8,
    /// `s_num_fc_blks`.
    pub num_fc_blks: u32,
    /// `s_checksum`.
    pub checksum: u32,
    /// The user UUIDs (16 bytes each, 48 slots).
    #[serde(skip)]
    pub users: Vec<[u8; 16]>,
}

impl JournalSuperblock {
    /// Decode from the first 1024 bytes of the journal; fewer bytes is an error.
    pub fn decode(bytes: &[u8]) -> Result<JournalSuperblock> {
        ondisk::decode(bytes).map(Self::from_raw)
    }

    /// Decode from the first 1024 bytes of the journal, reading missing bytes as zero.
    pub fn parse(bytes: &[u8]) -> JournalSuperblock {
        Self::from_raw(ondisk::decode_zero_extended(bytes).unwrap_or_default())
    }

    fn from_raw(raw: RawJournalSuperblock) -> JournalSuperblock {
        JournalSuperblock {
            magic: raw.header.magic,
            blocktype: raw.header.blocktype,
            header_sequence: raw.header.sequence,
            blocksize: raw.blocksize,
            maxlen: raw.maxlen,
            first: raw.first,
            sequence: raw.sequence,
            start: raw.start,
            errno: raw.errno,
            feature_compat: raw.feature_compat,
            feature_incompat: raw.feature_incompat,
            feature_ro_compat: raw.feature_ro_compat,
            uuid: raw.uuid,
            nr_users: raw.nr_users,
            max_transaction: raw.max_transaction,
            max_trans_data: raw.max_trans_data,
            checksum_type: raw.checksum_type,
            num_fc_blks: raw.num_fc_blks,
            checksum: raw.checksum,
            users: raw.users.to_vec(),
        }
    }

    /// Feature names in e2p order (compat, incompat, ro_compat), `FEATURE_I5` for unnamed bits.
    pub fn feature_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for (letter, word) in [
            ('C', self.feature_compat),
            ('I', self.feature_incompat),
            ('R', self.feature_ro_compat),
        ] {
            for bit in 0..32 {
                if word & (1 << bit) == 0 {
                    continue;
                }
                let name = match (letter, bit) {
                    ('C', 0) => "journal_checksum".to_string(),
                    ('I', 0) => "journal_incompat_revoke".to_string(),
                    ('I', 1) => "journal_64bit".to_string(),
                    ('I', 2) => "journal_async_commit".to_string(),
                    ('I', 3) => "journal_checksum_v2".to_string(),
                    ('I', 4) => "journal_checksum_v3".to_string(),
                    _ => format!("FEATURE_{letter}{bit}"),
                };
                names.push(name);
            }
        }
        names
    }
}

/// Why the journal superblock could not be shown (dumpe2fs stops with exit status 1 there).
#[derive(Clone, Debug)]
pub enum JournalFailure {
    /// ext2fs_read_inode failed ("while reading journal inode").
    ReadInode(LibError),
    /// Mapping or reading the first block failed ("while reading journal super block").
    ReadSuper(LibError),
    /// Wrong magic ("Journal superblock magic number invalid!").
    BadMagic,
}

/// Verify an extent block's checksum (ext4_extent_tail after eh_max entries) with the inode's
/// checksum seed.
fn extent_block_csum_ok(inode_seed: u32, block: &[u8]) -> bool {
    let Ok(header) = ondisk::decode::<ExtentHeader>(block) else {
        return false;
    };
    if ondisk::extent::entry_offset(usize::from(header.max)) > block.len() {
        return false;
    }
    extent::extent_block_csum(inode_seed, block, &header).ok()
}

/// Read the first 1024 bytes of the internal journal the way dumpe2fs does.
/// `verify_csums` mirrors libext2fs without EXT2_FLAG_IGNORE_CSUM_ERRORS.
pub fn read_internal(
    fs: &Filesystem,
    verify_csums: bool,
) -> std::result::Result<Vec<u8>, JournalFailure> {
    let ino = fs.sb.journal_inum;
    let raw = fs
        .read_inode_checked(ino, !verify_csums)
        .map_err(JournalFailure::ReadInode)?;
    let ind = Inode::parse(&raw);
    let inode_seed = ind.csum_seed(fs.csum_seed(), ino);
    let check = verify_csums && fs.sb.has_metadata_csum();
    let read = |pblk: u64| -> Result<crate::reader::fs::Block> {
        let blk = fs.block(pblk)?;
        if check && !extent_block_csum_ok(inode_seed, &blk) {
            return Err(Error::corrupt(
                crate::ProblemKind::Journal,
                crate::error::ext2_err::EXTENT_CSUM_INVALID,
            ));
        }
        Ok(blk)
    };
    let phys = if ind.has_flag(inode::EXTENTS_FL) {
        extent::map_extent(&ind.block, 0, read)
    } else {
        extent::map_blockmap(&ind.block, fs.block_size(), 0, |b| fs.block(b))
    }
    .map_err(|e| JournalFailure::ReadSuper(e.into()))?;
    let buf = match phys {
        // A hole reads as zeros.
        None => vec![0u8; 1024],
        Some(p) => fs
            .block(p)
            .map_err(|e| JournalFailure::ReadSuper(e.into()))?
            .get(..1024)
            .map(<[u8]>::to_vec)
            .unwrap_or_else(|| vec![0u8; 1024]),
    };
    if ondisk::decode::<Header>(&buf).map_or(true, |h| h.magic != JBD2_MAGIC) {
        return Err(JournalFailure::BadMagic);
    }
    Ok(buf)
}

/// Read the journal superblock of an external journal device (1024 bytes at block
/// first_data_block + 1), requiring the v2 superblock magic and type.
pub fn read_external(fs: &Filesystem) -> std::result::Result<Vec<u8>, JournalFailure> {
    let bs = fs.block_size();
    let off = (u64::from(fs.sb.first_data_block) + 1) * bs;
    let bytes = fs
        .source
        .read(off, 1024, "journal superblock")
        .map_err(|e| JournalFailure::ReadSuper(e.into()))?;
    let header = ondisk::decode::<Header>(&bytes);
    if header.map_or(true, |head| {
        head.magic != JBD2_MAGIC || head.blocktype != JBD2_SUPERBLOCK_V2
    }) {
        return Err(JournalFailure::BadMagic);
    }
    Ok(bytes.to_vec())
}

pub use super::mmp::{read_mmp, Mmp, MMP_MAGIC};
