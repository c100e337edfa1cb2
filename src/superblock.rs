//! The ext2/3/4 superblock (1024 bytes at byte 1024 of the filesystem).

use crate::bytes::Bytes;
use crate::error::{Error, Result};
use crate::features::*;
use serde::Serialize;

/// Byte offset of the primary superblock.
pub const SUPERBLOCK_OFFSET: u64 = 1024;
/// Size of the superblock.
pub const SUPERBLOCK_SIZE: usize = 1024;
/// s_magic
pub const EXT2_MAGIC: u16 = 0xEF53;

/// Every field of the current superblock format, decoded (little-endian on disk).
#[derive(Clone, Debug, Serialize)]
pub struct Superblock {
    pub inodes_count: u32,
    pub blocks_count_lo: u32,
    pub r_blocks_count_lo: u32,
    pub free_blocks_count_lo: u32,
    pub free_inodes_count: u32,
    pub first_data_block: u32,
    pub log_block_size: u32,
    pub log_cluster_size: u32,
    pub blocks_per_group: u32,
    pub clusters_per_group: u32,
    pub inodes_per_group: u32,
    pub mtime: u32,
    pub wtime: u32,
    pub mnt_count: u16,
    pub max_mnt_count: i16,
    pub magic: u16,
    pub state: u16,
    pub errors: u16,
    pub minor_rev_level: u16,
    pub lastcheck: u32,
    pub checkinterval: u32,
    pub creator_os: u32,
    pub rev_level: u32,
    pub def_resuid: u16,
    pub def_resgid: u16,
    pub first_ino: u32,
    pub inode_size: u16,
    pub block_group_nr: u16,
    pub feature_compat: u32,
    pub feature_incompat: u32,
    pub feature_ro_compat: u32,
    pub uuid: [u8; 16],
    #[serde(skip)]
    pub volume_name: [u8; 16],
    #[serde(skip)]
    pub last_mounted: [u8; 64],
    pub algorithm_usage_bitmap: u32,
    pub prealloc_blocks: u8,
    pub prealloc_dir_blocks: u8,
    pub reserved_gdt_blocks: u16,
    pub journal_uuid: [u8; 16],
    pub journal_inum: u32,
    pub journal_dev: u32,
    pub last_orphan: u32,
    pub hash_seed: [u8; 16],
    pub def_hash_version: u8,
    pub jnl_backup_type: u8,
    pub desc_size: u16,
    pub default_mount_opts: u32,
    pub first_meta_bg: u32,
    pub mkfs_time: u32,
    pub jnl_blocks: [u32; 17],
    pub blocks_count_hi: u32,
    pub r_blocks_count_hi: u32,
    pub free_blocks_count_hi: u32,
    pub min_extra_isize: u16,
    pub want_extra_isize: u16,
    pub flags: u32,
    pub raid_stride: u16,
    pub mmp_update_interval: u16,
    pub mmp_block: u64,
    pub raid_stripe_width: u32,
    pub log_groups_per_flex: u8,
    pub checksum_type: u8,
    pub encryption_level: u8,
    pub kbytes_written: u64,
    pub snapshot_inum: u32,
    pub snapshot_id: u32,
    pub snapshot_r_blocks_count: u64,
    pub snapshot_list: u32,
    pub error_count: u32,
    pub first_error_time: u32,
    pub first_error_ino: u32,
    pub first_error_block: u64,
    #[serde(skip)]
    pub first_error_func: [u8; 32],
    pub first_error_line: u32,
    pub last_error_time: u32,
    pub last_error_ino: u32,
    pub last_error_line: u32,
    pub last_error_block: u64,
    #[serde(skip)]
    pub last_error_func: [u8; 32],
    #[serde(skip)]
    pub mount_opts: [u8; 64],
    pub usr_quota_inum: u32,
    pub grp_quota_inum: u32,
    pub overhead_clusters: u32,
    pub backup_bgs: [u32; 2],
    pub encrypt_algos: [u8; 4],
    pub encrypt_pw_salt: [u8; 16],
    pub lpf_ino: u32,
    pub prj_quota_inum: u32,
    pub checksum_seed: u32,
    pub wtime_hi: u8,
    pub mtime_hi: u8,
    pub mkfs_time_hi: u8,
    pub lastcheck_hi: u8,
    pub first_error_time_hi: u8,
    pub last_error_time_hi: u8,
    pub first_error_errcode: u8,
    pub last_error_errcode: u8,
    pub encoding: u16,
    pub encoding_flags: u16,
    pub orphan_file_inum: u32,
    pub checksum: u32,
    /// The raw 1024 bytes, for checksums and byte-exact comparisons.
    #[serde(skip)]
    pub raw: Vec<u8>,
}

impl Superblock {
    /// Decode a superblock from at least 1024 bytes. Fails only when fewer bytes are given; the
    /// magic and every other field are for the caller to judge.
    pub fn parse(b: &[u8]) -> Result<Superblock> {
        let raw = b.get(..SUPERBLOCK_SIZE).ok_or_else(|| {
            Error::corrupt(format!("superblock needs 1024 bytes, got {}", b.len()))
        })?;
        let d = Bytes::new(raw);
        let mut jnl_blocks = [0u32; 17];
        for (i, j) in jnl_blocks.iter_mut().enumerate() {
            *j = d.le32(0x10C + 4 * i);
        }
        Ok(Superblock {
            inodes_count: d.le32(0x0),
            blocks_count_lo: d.le32(0x4),
            r_blocks_count_lo: d.le32(0x8),
            free_blocks_count_lo: d.le32(0xC),
            free_inodes_count: d.le32(0x10),
            first_data_block: d.le32(0x14),
            log_block_size: d.le32(0x18),
            log_cluster_size: d.le32(0x1C),
            blocks_per_group: d.le32(0x20),
            clusters_per_group: d.le32(0x24),
            inodes_per_group: d.le32(0x28),
            mtime: d.le32(0x2C),
            wtime: d.le32(0x30),
            mnt_count: d.le16(0x34),
            max_mnt_count: d.le16(0x36) as i16,
            magic: d.le16(0x38),
            state: d.le16(0x3A),
            errors: d.le16(0x3C),
            minor_rev_level: d.le16(0x3E),
            lastcheck: d.le32(0x40),
            checkinterval: d.le32(0x44),
            creator_os: d.le32(0x48),
            rev_level: d.le32(0x4C),
            def_resuid: d.le16(0x50),
            def_resgid: d.le16(0x52),
            first_ino: d.le32(0x54),
            inode_size: d.le16(0x58),
            block_group_nr: d.le16(0x5A),
            feature_compat: d.le32(0x5C),
            feature_incompat: d.le32(0x60),
            feature_ro_compat: d.le32(0x64),
            uuid: d.array(0x68),
            volume_name: d.array(0x78),
            last_mounted: d.array(0x88),
            algorithm_usage_bitmap: d.le32(0xC8),
            prealloc_blocks: d.u8(0xCC),
            prealloc_dir_blocks: d.u8(0xCD),
            reserved_gdt_blocks: d.le16(0xCE),
            journal_uuid: d.array(0xD0),
            journal_inum: d.le32(0xE0),
            journal_dev: d.le32(0xE4),
            last_orphan: d.le32(0xE8),
            hash_seed: d.array(0xEC),
            def_hash_version: d.u8(0xFC),
            jnl_backup_type: d.u8(0xFD),
            desc_size: d.le16(0xFE),
            default_mount_opts: d.le32(0x100),
            first_meta_bg: d.le32(0x104),
            mkfs_time: d.le32(0x108),
            jnl_blocks,
            blocks_count_hi: d.le32(0x150),
            r_blocks_count_hi: d.le32(0x154),
            free_blocks_count_hi: d.le32(0x158),
            min_extra_isize: d.le16(0x15C),
            want_extra_isize: d.le16(0x15E),
            flags: d.le32(0x160),
            raid_stride: d.le16(0x164),
            mmp_update_interval: d.le16(0x166),
            mmp_block: d.le64(0x168),
            raid_stripe_width: d.le32(0x170),
            log_groups_per_flex: d.u8(0x174),
            checksum_type: d.u8(0x175),
            encryption_level: d.u8(0x176),
            kbytes_written: d.le64(0x178),
            snapshot_inum: d.le32(0x180),
            snapshot_id: d.le32(0x184),
            snapshot_r_blocks_count: d.le64(0x188),
            snapshot_list: d.le32(0x190),
            error_count: d.le32(0x194),
            first_error_time: d.le32(0x198),
            first_error_ino: d.le32(0x19C),
            first_error_block: d.le64(0x1A0),
            first_error_func: d.array(0x1A8),
            first_error_line: d.le32(0x1C8),
            last_error_time: d.le32(0x1CC),
            last_error_ino: d.le32(0x1D0),
            last_error_line: d.le32(0x1D4),
            last_error_block: d.le64(0x1D8),
            last_error_func: d.array(0x1E0),
            mount_opts: d.array(0x200),
            usr_quota_inum: d.le32(0x240),
            grp_quota_inum: d.le32(0x244),
            overhead_clusters: d.le32(0x248),
            backup_bgs: [d.le32(0x24C), d.le32(0x250)],
            encrypt_algos: d.array(0x254),
            encrypt_pw_salt: d.array(0x258),
            lpf_ino: d.le32(0x268),
            prj_quota_inum: d.le32(0x26C),
            checksum_seed: d.le32(0x270),
            wtime_hi: d.u8(0x274),
            mtime_hi: d.u8(0x275),
            mkfs_time_hi: d.u8(0x276),
            lastcheck_hi: d.u8(0x277),
            first_error_time_hi: d.u8(0x278),
            last_error_time_hi: d.u8(0x279),
            first_error_errcode: d.u8(0x27A),
            last_error_errcode: d.u8(0x27B),
            encoding: d.le16(0x27C),
            encoding_flags: d.le16(0x27E),
            orphan_file_inum: d.le32(0x280),
            checksum: d.le32(0x3FC),
            raw: raw.to_vec(),
        })
    }

    /// compat feature test
    pub fn has_compat(&self, bit: u32) -> bool {
        self.feature_compat & bit != 0
    }
    /// incompat feature test
    pub fn has_incompat(&self, bit: u32) -> bool {
        self.feature_incompat & bit != 0
    }
    /// ro_compat feature test
    pub fn has_ro_compat(&self, bit: u32) -> bool {
        self.feature_ro_compat & bit != 0
    }
    /// 64bit feature
    pub fn is_64bit(&self) -> bool {
        self.has_incompat(INCOMPAT_64BIT)
    }
    /// metadata_csum
    pub fn has_metadata_csum(&self) -> bool {
        self.has_ro_compat(RO_COMPAT_METADATA_CSUM)
    }
    /// metadata_csum or gdt_csum: group descriptors carry a checksum and UNINIT flags count.
    pub fn has_group_desc_csum(&self) -> bool {
        self.has_ro_compat(RO_COMPAT_METADATA_CSUM | RO_COMPAT_GDT_CSUM)
    }
    /// bigalloc
    pub fn is_bigalloc(&self) -> bool {
        self.has_ro_compat(RO_COMPAT_BIGALLOC)
    }

    /// Block count including the hi word (64bit only).
    pub fn blocks_count(&self) -> u64 {
        self.hi_lo(self.blocks_count_hi, self.blocks_count_lo)
    }
    /// Reserved block count including the hi word (64bit only).
    pub fn r_blocks_count(&self) -> u64 {
        self.hi_lo(self.r_blocks_count_hi, self.r_blocks_count_lo)
    }
    /// Free block count including the hi word (64bit only).
    pub fn free_blocks_count(&self) -> u64 {
        self.hi_lo(self.free_blocks_count_hi, self.free_blocks_count_lo)
    }
    fn hi_lo(&self, hi: u32, lo: u32) -> u64 {
        if self.is_64bit() {
            (u64::from(hi) << 32) | u64::from(lo)
        } else {
            u64::from(lo)
        }
    }

    /// Block size in bytes (1024 << log_block_size), `None` when the shift is absurd.
    pub fn block_size_checked(&self) -> Option<u64> {
        if self.log_block_size > 6 {
            None
        } else {
            Some(1024u64 << self.log_block_size)
        }
    }
    /// Block size in bytes; clamps an absurd log to 64 KiB (validated at open).
    pub fn block_size(&self) -> u64 {
        1024u64 << self.log_block_size.min(6)
    }
    /// EXT2_BLOCK_SIZE as an unsigned int, for printing whatever the superblock holds.
    pub fn block_size_raw(&self) -> u32 {
        1024u32.wrapping_shl(self.log_block_size)
    }
    /// Cluster size as e2fsprogs computes it (EXT2_CLUSTER_SIZE), clamped.
    pub fn cluster_size(&self) -> u64 {
        1024u64 << self.log_cluster_size.min(20)
    }
    /// Inode size, 128 on revision 0.
    pub fn inode_size(&self) -> u32 {
        if self.rev_level == 0 {
            128
        } else {
            u32::from(self.inode_size)
        }
    }
    /// First non-reserved inode, 11 on revision 0.
    pub fn first_ino(&self) -> u32 {
        if self.rev_level == 0 {
            11
        } else {
            self.first_ino
        }
    }
    /// Descriptor size: s_desc_size with 64bit, else 32.
    pub fn desc_size(&self) -> u32 {
        if self.is_64bit() {
            u32::from(self.desc_size)
        } else {
            32
        }
    }
    /// Volume name bytes up to the first NUL.
    pub fn volume_name(&self) -> &[u8] {
        cstr(&self.volume_name)
    }
    /// Last-mounted path bytes up to the first NUL.
    pub fn last_mounted(&self) -> &[u8] {
        cstr(&self.last_mounted)
    }
    /// Mount options string bytes up to the first NUL.
    pub fn mount_opts(&self) -> &[u8] {
        cstr(&self.mount_opts)
    }

    /// The superblock checksum as computed over the raw bytes (crc32c of bytes 0..0x3FC).
    pub fn computed_checksum(&self) -> u32 {
        crate::csum::crc32c_raw(!0, self.raw.get(..0x3FC).unwrap_or(&[]))
    }
    /// True when metadata_csum is off, or the stored checksum matches.
    pub fn checksum_ok(&self) -> bool {
        !self.has_metadata_csum() || self.computed_checksum() == self.checksum
    }
    /// ext2fs_verify_csum_type: with metadata_csum the type must be 1 (crc32c).
    pub fn checksum_type_ok(&self) -> bool {
        !self.has_metadata_csum() || self.checksum_type == 1
    }
    /// Seed for metadata checksums: s_checksum_seed with metadata_csum_seed, else crc32c(~0, uuid).
    pub fn csum_seed(&self) -> u32 {
        if self.has_incompat(INCOMPAT_CSUM_SEED) {
            self.checksum_seed
        } else {
            crate::csum::crc32c_raw(!0, &self.uuid)
        }
    }
    /// All set feature names in dumpe2fs order.
    pub fn feature_names(&self) -> Vec<String> {
        feature_names(
            self.feature_compat,
            self.feature_incompat,
            self.feature_ro_compat,
        )
    }
}

/// Bytes of a fixed-size field up to its first NUL (`%.*s` semantics).
pub fn cstr(b: &[u8]) -> &[u8] {
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    b.get(..n).unwrap_or(b)
}

/// Format a UUID like e2p_uuid2str: lowercase 8-4-4-4-12, `<none>` when all zero.
pub fn uuid_string(u: &[u8; 16]) -> String {
    if u.iter().all(|&b| b == 0) {
        return "<none>".to_string();
    }
    let h: Vec<String> = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_an_error() {
        assert!(Superblock::parse(&[0u8; 100]).is_err());
    }

    #[test]
    fn decodes_fields() {
        let mut b = vec![0u8; 1024];
        b[0x38] = 0x53;
        b[0x39] = 0xEF;
        b[0x18] = 2;
        b[0x60] = 0x80; // 64bit
        b[0x4] = 1;
        b[0x150] = 2;
        let sb = Superblock::parse(&b).unwrap();
        assert_eq!(sb.magic, EXT2_MAGIC);
        assert_eq!(sb.block_size(), 4096);
        assert_eq!(sb.blocks_count(), (2u64 << 32) | 1);
        assert_eq!(uuid_string(&[0; 16]), "<none>");
        let mut u = [0u8; 16];
        u[15] = 0xab;
        assert_eq!(uuid_string(&u), "00000000-0000-0000-0000-0000000000ab");
    }
}
