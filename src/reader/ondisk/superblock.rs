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
#[derive(Clone, Debug, Serialize, BinRead, schemars::JsonSchema)]
#[br(little)]
pub struct Superblock {
    /// On-disk `s_inodes_count`.
    pub inodes_count: u32,
    /// On-disk `s_blocks_count_lo`.
    pub blocks_count_lo: u32,
    /// On-disk `s_r_blocks_count_lo`.
    pub r_blocks_count_lo: u32,
    /// On-disk `s_free_blocks_count_lo`.
    pub free_blocks_count_lo: u32,
    /// On-disk `s_free_inodes_count`.
    pub free_inodes_count: u32,
    /// On-disk `s_first_data_block`.
    pub first_data_block: u32,
    /// On-disk `s_log_block_size`.
    pub log_block_size: u32,
    /// On-disk `s_log_cluster_size`.
    pub log_cluster_size: u32,
    /// On-disk `s_blocks_per_group`.
    pub blocks_per_group: u32,
    /// On-disk `s_clusters_per_group`.
    pub clusters_per_group: u32,
    /// On-disk `s_inodes_per_group`.
    pub inodes_per_group: u32,
    /// On-disk `s_mtime`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub mtime: u32,
    /// On-disk `s_wtime`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub wtime: u32,
    /// On-disk `s_mnt_count`.
    pub mnt_count: u16,
    /// On-disk `s_max_mnt_count`.
    pub max_mnt_count: i16,
    /// On-disk `s_magic`.
    pub magic: u16,
    /// On-disk `s_state`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub state: u16,
    /// On-disk `s_errors`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub errors: u16,
    /// On-disk `s_minor_rev_level`.
    pub minor_rev_level: u16,
    /// On-disk `s_lastcheck`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub lastcheck: u32,
    /// On-disk `s_checkinterval`.
    pub checkinterval: u32,
    /// On-disk `s_creator_os`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub creator_os: u32,
    /// On-disk `s_rev_level`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub rev_level: u32,
    /// On-disk `s_def_resuid`.
    pub def_resuid: u16,
    /// On-disk `s_def_resgid`.
    pub def_resgid: u16,
    /// On-disk `s_first_ino`.
    pub first_ino: u32,
    /// On-disk `s_inode_size`.
    pub inode_size: u16,
    /// On-disk `s_block_group_nr`.
    pub block_group_nr: u16,
    /// On-disk `s_feature_compat`.
    pub feature_compat: u32,
    /// On-disk `s_feature_incompat`.
    pub feature_incompat: u32,
    /// On-disk `s_feature_ro_compat`.
    pub feature_ro_compat: u32,
    /// On-disk `s_uuid`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub uuid: [u8; 16],
    #[serde(skip)]
    /// On-disk `s_volume_name`.
    pub volume_name: [u8; 16],
    #[serde(skip)]
    /// On-disk `s_last_mounted`.
    pub last_mounted: [u8; 64],
    /// On-disk `s_algorithm_usage_bitmap`.
    pub algorithm_usage_bitmap: u32,
    /// On-disk `s_prealloc_blocks`.
    pub prealloc_blocks: u8,
    /// On-disk `s_prealloc_dir_blocks`.
    pub prealloc_dir_blocks: u8,
    /// On-disk `s_reserved_gdt_blocks`.
    pub reserved_gdt_blocks: u16,
    /// On-disk `s_journal_uuid`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub journal_uuid: [u8; 16],
    /// On-disk `s_journal_inum`.
    pub journal_inum: u32,
    /// On-disk `s_journal_dev`.
    pub journal_dev: u32,
    /// On-disk `s_last_orphan`.
    pub last_orphan: u32,
    /// On-disk `s_hash_seed`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub hash_seed: [u8; 16],
    /// On-disk `s_def_hash_version`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub def_hash_version: u8,
    /// On-disk `s_jnl_backup_type`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub jnl_backup_type: u8,
    /// On-disk `s_desc_size`.
    pub desc_size: u16,
    /// On-disk `s_default_mount_opts`.
    pub default_mount_opts: u32,
    /// On-disk `s_first_meta_bg`.
    pub first_meta_bg: u32,
    /// On-disk `s_mkfs_time`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub mkfs_time: u32,
    /// On-disk `s_jnl_blocks`.
    pub jnl_blocks: [u32; 17],
    /// On-disk `s_blocks_count_hi`.
    pub blocks_count_hi: u32,
    /// On-disk `s_r_blocks_count_hi`.
    pub r_blocks_count_hi: u32,
    /// On-disk `s_free_blocks_count_hi`.
    pub free_blocks_count_hi: u32,
    /// On-disk `s_min_extra_isize`.
    pub min_extra_isize: u16,
    /// On-disk `s_want_extra_isize`.
    pub want_extra_isize: u16,
    /// On-disk `s_flags`.
    pub flags: u32,
    /// On-disk `s_raid_stride`.
    pub raid_stride: u16,
    /// On-disk `s_mmp_update_interval`.
    pub mmp_update_interval: u16,
    /// On-disk `s_mmp_block`.
    pub mmp_block: u64,
    /// On-disk `s_raid_stripe_width`.
    pub raid_stripe_width: u32,
    /// On-disk `s_log_groups_per_flex`.
    pub log_groups_per_flex: u8,
    /// On-disk `s_checksum_type`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub checksum_type: u8,
    /// On-disk `s_encryption_level`.
    pub encryption_level: u8,
    /// After s_reserved_pad (1 byte).
    #[br(pad_before = 1)]
    pub kbytes_written: u64,
    /// On-disk `s_snapshot_inum`.
    pub snapshot_inum: u32,
    /// On-disk `s_snapshot_id`.
    pub snapshot_id: u32,
    /// On-disk `s_snapshot_r_blocks_count`.
    pub snapshot_r_blocks_count: u64,
    /// On-disk `s_snapshot_list`.
    pub snapshot_list: u32,
    /// On-disk `s_error_count`.
    pub error_count: u32,
    /// On-disk `s_first_error_time`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub first_error_time: u32,
    /// On-disk `s_first_error_ino`.
    pub first_error_ino: u32,
    /// On-disk `s_first_error_block`.
    pub first_error_block: u64,
    #[serde(skip)]
    /// On-disk `s_first_error_func`.
    pub first_error_func: [u8; 32],
    /// On-disk `s_first_error_line`.
    pub first_error_line: u32,
    /// On-disk `s_last_error_time`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub last_error_time: u32,
    /// On-disk `s_last_error_ino`.
    pub last_error_ino: u32,
    /// On-disk `s_last_error_line`.
    pub last_error_line: u32,
    /// On-disk `s_last_error_block`.
    pub last_error_block: u64,
    #[serde(skip)]
    /// On-disk `s_last_error_func`.
    pub last_error_func: [u8; 32],
    #[serde(skip)]
    /// On-disk `s_mount_opts`.
    pub mount_opts: [u8; 64],
    /// On-disk `s_usr_quota_inum`.
    pub usr_quota_inum: u32,
    /// On-disk `s_grp_quota_inum`.
    pub grp_quota_inum: u32,
    /// On-disk `s_overhead_clusters`.
    pub overhead_clusters: u32,
    /// On-disk `s_backup_bgs`.
    pub backup_bgs: [u32; 2],
    /// On-disk `s_encrypt_algos`.
    pub encrypt_algos: [u8; 4],
    /// On-disk `s_encrypt_pw_salt`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub encrypt_pw_salt: [u8; 16],
    /// On-disk `s_lpf_ino`.
    pub lpf_ino: u32,
    /// On-disk `s_prj_quota_inum`.
    pub prj_quota_inum: u32,
    /// On-disk `s_checksum_seed`.
    pub checksum_seed: u32,
    /// On-disk `s_wtime_hi`.
    pub wtime_hi: u8,
    /// On-disk `s_mtime_hi`.
    pub mtime_hi: u8,
    /// On-disk `s_mkfs_time_hi`.
    pub mkfs_time_hi: u8,
    /// On-disk `s_lastcheck_hi`.
    pub lastcheck_hi: u8,
    /// On-disk `s_first_error_time_hi`.
    pub first_error_time_hi: u8,
    /// On-disk `s_last_error_time_hi`.
    pub last_error_time_hi: u8,
    /// On-disk `s_first_error_errcode`.
    pub first_error_errcode: u8,
    /// On-disk `s_last_error_errcode`.
    pub last_error_errcode: u8,
    /// On-disk `s_encoding`.
    #[serde(skip)] // decoded by the JSON formatter (SuperblockJson)
    pub encoding: u16,
    /// On-disk `s_encoding_flags`.
    pub encoding_flags: u16,
    /// On-disk `s_orphan_file_inum`.
    pub orphan_file_inum: u32,
    /// After `s_reserved[94]`.
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
        crate::reader::ondisk::testing::assert_size::<Superblock>();
    }

    #[test]
    fn offsets_of_fields_after_gaps() {
        let mut bytes = vec![0u8; SUPERBLOCK_SIZE];
        bytes[0x178] = 5; // s_kbytes_written
        bytes[0x280] = 9; // s_orphan_file_inum
        bytes[CHECKSUM_OFFSET] = 0x77;
        bytes[0x38..0x3A].copy_from_slice(&EXT2_MAGIC.to_le_bytes());
        let sb: Superblock = crate::reader::ondisk::decode(&bytes).unwrap();
        assert_eq!(sb.kbytes_written, 5);
        assert_eq!(sb.orphan_file_inum, 9);
        assert_eq!(sb.checksum, 0x77);
        assert_eq!(sb.magic, EXT2_MAGIC);
    }
}
