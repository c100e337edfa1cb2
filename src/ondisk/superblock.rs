//! `struct ext4_super_block`: 1024 bytes at byte 1024 of the filesystem, little-endian.

use super::OnDisk;
use binrw::BinRead;
use serde::Serialize;

/// Byte offset of the primary superblock.
pub const SUPERBLOCK_OFFSET: u64 = 1024;
/// Size of the superblock.
pub const SUPERBLOCK_SIZE: usize = 1024;
/// s_magic
pub const EXT2_MAGIC: u16 = 0xEF53;
/// Offset of s_checksum, the last field: the checksum covers every byte before it.
pub const CHECKSUM_OFFSET: usize = SUPERBLOCK_SIZE - 4;

/// Every field of the current superblock format, decoded (little-endian on disk).
#[derive(Clone, Debug, Serialize, BinRead)]
#[br(little)]
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
    /// After s_reserved_pad (1 byte).
    #[br(pad_before = 1)]
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
    /// After s_reserved[94].
    #[br(pad_before = 4 * 94)]
    pub checksum: u32,
    /// The raw 1024 bytes, for checksums and byte-exact comparisons.
    #[serde(skip)]
    #[br(ignore)]
    pub raw: Vec<u8>,
}

impl OnDisk for Superblock {
    const SIZE: usize = SUPERBLOCK_SIZE;
    const WHAT: &'static str = "superblock";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_matches_declaration() {
        crate::ondisk::testing::assert_size::<Superblock>();
    }

    #[test]
    fn offsets_of_fields_after_gaps() {
        let mut b = vec![0u8; SUPERBLOCK_SIZE];
        b[0x178] = 5; // s_kbytes_written
        b[0x280] = 9; // s_orphan_file_inum
        b[CHECKSUM_OFFSET] = 0x77;
        b[0x38..0x3A].copy_from_slice(&EXT2_MAGIC.to_le_bytes());
        let sb: Superblock = crate::ondisk::decode(&b).unwrap();
        assert_eq!(sb.kbytes_written, 5);
        assert_eq!(sb.orphan_file_inum, 9);
        assert_eq!(sb.checksum, 0x77);
        assert_eq!(sb.magic, EXT2_MAGIC);
    }
}
