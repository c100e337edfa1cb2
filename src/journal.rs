//! The jbd2 journal superblock (big-endian) and locating it: inside the journal inode, or at the
//! start of an external journal device.

use crate::bytes::Bytes;
use crate::csum::crc32c_raw;
use crate::error::{Error, Result};
use crate::extent;
use crate::fs::Filesystem;
use crate::inode::{self, Inode};
use serde::Serialize;

/// jbd2 magic.
pub const JBD2_MAGIC: u32 = 0xC03B_3998;
/// Block type of a v2 superblock.
pub const JBD2_SUPERBLOCK_V2: u32 = 4;
/// Maximum number of users listed.
pub const USERS_MAX: u32 = 48;

/// A decoded journal superblock.
#[derive(Clone, Debug, Serialize)]
pub struct JournalSuperblock {
    pub magic: u32,
    pub blocktype: u32,
    pub header_sequence: u32,
    pub blocksize: u32,
    pub maxlen: u32,
    pub first: u32,
    pub sequence: u32,
    pub start: u32,
    pub errno: i32,
    pub feature_compat: u32,
    pub feature_incompat: u32,
    pub feature_ro_compat: u32,
    pub uuid: [u8; 16],
    pub nr_users: u32,
    pub max_transaction: u32,
    pub max_trans_data: u32,
    pub checksum_type: u8,
    pub num_fc_blks: u32,
    pub checksum: u32,
    /// The user UUIDs (16 bytes each, 48 slots).
    #[serde(skip)]
    pub users: Vec<[u8; 16]>,
}

impl JournalSuperblock {
    /// Decode from the first 1024 bytes of the journal.
    pub fn parse(b: &[u8]) -> JournalSuperblock {
        let d = Bytes::new(b);
        JournalSuperblock {
            magic: d.be32(0x0),
            blocktype: d.be32(0x4),
            header_sequence: d.be32(0x8),
            blocksize: d.be32(0xC),
            maxlen: d.be32(0x10),
            first: d.be32(0x14),
            sequence: d.be32(0x18),
            start: d.be32(0x1C),
            errno: d.be32(0x20) as i32,
            feature_compat: d.be32(0x24),
            feature_incompat: d.be32(0x28),
            feature_ro_compat: d.be32(0x2C),
            uuid: d.array(0x30),
            nr_users: d.be32(0x40),
            max_transaction: d.be32(0x48),
            max_trans_data: d.be32(0x4C),
            checksum_type: d.u8(0x50),
            num_fc_blks: d.be32(0x54),
            checksum: d.be32(0xFC),
            users: (0..USERS_MAX as usize)
                .map(|i| d.array(0x100 + 16 * i))
                .collect(),
        }
    }

    /// Feature names in e2p order (compat, incompat, ro_compat), `FEATURE_I5` for unnamed bits.
    pub fn feature_names(&self) -> Vec<String> {
        let mut v = Vec::new();
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
                v.push(name);
            }
        }
        v
    }
}

/// Why the journal superblock could not be shown (dumpe2fs stops with exit status 1 there).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum JournalFailure {
    /// ext2fs_read_inode failed ("while reading journal inode").
    ReadInode(String),
    /// Mapping or reading the first block failed ("while reading journal super block").
    ReadSuper(String),
    /// Wrong magic ("Journal superblock magic number invalid!").
    BadMagic,
}

/// Verify an extent block's checksum (ext4_extent_tail after eh_max entries).
fn extent_block_csum_ok(seed: u32, ino: u32, gen: u32, block: &[u8]) -> bool {
    let max = usize::from(Bytes::new(block).le16(4));
    let tail = 12 + 12 * max;
    let Some(body) = block.get(..tail) else {
        return false;
    };
    let stored = Bytes::new(block).le32(tail);
    let c = crc32c_raw(seed, &ino.to_le_bytes());
    let c = crc32c_raw(c, &gen.to_le_bytes());
    crc32c_raw(c, body) == stored
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
    let seed = fs.csum_seed();
    let check = verify_csums && fs.sb.has_metadata_csum();
    let read = |b: u64| -> Result<crate::fs::Block> {
        let blk = fs.block(b)?;
        if check && !extent_block_csum_ok(seed, ino, ind.generation, &blk) {
            return Err(Error::corrupt(
                "Extent block checksum does not match extent block",
            ));
        }
        Ok(blk)
    };
    let phys = if ind.has_flag(inode::EXTENTS_FL) {
        extent::map_extent(&ind.block, 0, read)
    } else {
        extent::map_blockmap(&ind.block, fs.block_size(), 0, |b| fs.block(b))
    }
    .map_err(|e| JournalFailure::ReadSuper(e.to_string()))?;
    let buf = match phys {
        // A hole reads as zeros.
        None => vec![0u8; 1024],
        Some(p) => fs
            .block(p)
            .map_err(|e| JournalFailure::ReadSuper(e.to_string()))?
            .get(..1024)
            .map(<[u8]>::to_vec)
            .unwrap_or_else(|| vec![0u8; 1024]),
    };
    if Bytes::new(&buf).be32(0) != JBD2_MAGIC {
        return Err(JournalFailure::BadMagic);
    }
    Ok(buf)
}

/// Read the journal superblock of an external journal device (1024 bytes at block
/// first_data_block + 1), requiring the v2 superblock magic and type.
pub fn read_external(fs: &Filesystem) -> std::result::Result<Vec<u8>, JournalFailure> {
    let bs = fs.block_size();
    let off = (u64::from(fs.sb.first_data_block) + 1) * bs;
    let b = fs
        .source
        .read(off, 1024, "journal superblock")
        .map_err(|e| JournalFailure::ReadSuper(e.to_string()))?;
    let d = Bytes::new(&b);
    if d.be32(0) != JBD2_MAGIC || d.be32(4) != JBD2_SUPERBLOCK_V2 {
        return Err(JournalFailure::BadMagic);
    }
    Ok(b.to_vec())
}

/// The MMP block.
#[derive(Clone, Debug, Serialize)]
pub struct Mmp {
    pub magic: u32,
    pub seq: u32,
    pub time: u64,
    #[serde(skip)]
    pub nodename: [u8; 64],
    #[serde(skip)]
    pub bdevname: [u8; 32],
    pub check_interval: u16,
    pub checksum: u32,
}

/// MMP magic.
pub const MMP_MAGIC: u32 = 0x004D_4D50;

/// Read and check the MMP block as ext2fs_mmp_read does; the error is its message.
pub fn read_mmp(fs: &Filesystem, verify_csum: bool) -> std::result::Result<Mmp, String> {
    let blk = fs.sb.mmp_block;
    if blk <= u64::from(fs.sb.first_data_block) || blk >= fs.geo.blocks_count {
        return Err("MMP: invalid MMP block number".into());
    }
    let b = fs.block(blk).map_err(|e| e.to_string())?;
    let d = Bytes::new(&b);
    let m = Mmp {
        magic: d.le32(0),
        seq: d.le32(4),
        time: d.le64(8),
        nodename: d.array(16),
        bdevname: d.array(80),
        check_interval: d.le16(112),
        checksum: d.le32(0x3FC),
    };
    if m.magic != MMP_MAGIC {
        return Err("MMP: invalid magic number".into());
    }
    if verify_csum && fs.sb.has_metadata_csum() {
        let c = crc32c_raw(fs.csum_seed(), b.get(..0x3FC).unwrap_or(&[]));
        if c != m.checksum {
            return Err("MMP block checksum does not match".into());
        }
    }
    Ok(m)
}
