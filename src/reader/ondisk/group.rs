//! `struct ext4_group_desc`: 32 bytes, or `s_desc_size` (>= 64) bytes with the 64bit feature.

use super::OnDisk;
use binrw::BinRead;

/// The first 32 bytes of every group descriptor (the `_lo` halves).
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[br(little)]
pub struct GroupDesc32 {
    /// On-disk `bg_block_bitmap_lo`.
    pub block_bitmap_lo: u32,
    /// On-disk `bg_inode_bitmap_lo`.
    pub inode_bitmap_lo: u32,
    /// On-disk `bg_inode_table_lo`.
    pub inode_table_lo: u32,
    /// On-disk `bg_free_blocks_count_lo`.
    pub free_blocks_count_lo: u16,
    /// On-disk `bg_free_inodes_count_lo`.
    pub free_inodes_count_lo: u16,
    /// On-disk `bg_used_dirs_count_lo`.
    pub used_dirs_count_lo: u16,
    /// On-disk `bg_flags`.
    pub flags: u16,
    /// On-disk `bg_exclude_bitmap_lo`.
    pub exclude_bitmap_lo: u32,
    /// On-disk `bg_block_bitmap_csum_lo`.
    pub block_bitmap_csum_lo: u16,
    /// On-disk `bg_inode_bitmap_csum_lo`.
    pub inode_bitmap_csum_lo: u16,
    /// On-disk `bg_itable_unused_lo`.
    pub itable_unused_lo: u16,
    /// On-disk `bg_checksum`.
    pub checksum: u16,
}

/// Bytes 32..64 of a 64-byte descriptor (the `_hi` halves). A field lying beyond `s_desc_size`
/// reads as zero ([`super::decode_zero_extended`]).
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[br(little)]
pub struct GroupDescHi {
    /// On-disk `bg_block_bitmap_hi`.
    pub block_bitmap_hi: u32,
    /// On-disk `bg_inode_bitmap_hi`.
    pub inode_bitmap_hi: u32,
    /// On-disk `bg_inode_table_hi`.
    pub inode_table_hi: u32,
    /// On-disk `bg_free_blocks_count_hi`.
    pub free_blocks_count_hi: u16,
    /// On-disk `bg_free_inodes_count_hi`.
    pub free_inodes_count_hi: u16,
    /// On-disk `bg_used_dirs_count_hi`.
    pub used_dirs_count_hi: u16,
    /// On-disk `bg_itable_unused_hi`.
    pub itable_unused_hi: u16,
    /// On-disk `bg_exclude_bitmap_hi`.
    pub exclude_bitmap_hi: u32,
    /// On-disk `bg_block_bitmap_csum_hi`.
    pub block_bitmap_csum_hi: u16,
    /// On-disk `bg_inode_bitmap_csum_hi`.
    pub inode_bitmap_csum_hi: u16,
    /// On-disk `bg_reserved`.
    pub reserved: u32,
}

impl OnDisk for GroupDesc32 {
    const SIZE: usize = 32;
    const WHAT: &'static str = "group descriptor";
}

impl OnDisk for GroupDescHi {
    const SIZE: usize = 32;
    const WHAT: &'static str = "group descriptor (64-bit part)";
}

/// Offset of bg_flags (byte-patched when presenting descriptors read from a backup).
pub const FLAGS_OFFSET: usize = 0x12;
/// Offset of bg_itable_unused_lo.
pub const ITABLE_UNUSED_LO_OFFSET: usize = 0x1C;
/// Offset of bg_checksum: the checksum covers the descriptor without these two bytes.
pub const CHECKSUM_OFFSET: usize = 0x1E;
/// Offset of bg_itable_unused_hi.
pub const ITABLE_UNUSED_HI_OFFSET: usize = GroupDesc32::SIZE + 0x12;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::{decode, decode_zero_extended, testing::assert_size};

    #[test]
    fn sizes_match_declarations() {
        assert_size::<GroupDesc32>();
        assert_size::<GroupDescHi>();
    }

    #[test]
    fn patch_offsets_match_declaration() {
        let mut bytes = [0u8; 64];
        bytes[FLAGS_OFFSET] = 1;
        bytes[ITABLE_UNUSED_LO_OFFSET] = 2;
        bytes[CHECKSUM_OFFSET] = 3;
        bytes[ITABLE_UNUSED_HI_OFFSET] = 4;
        let lo: GroupDesc32 = decode(&bytes).unwrap();
        let hi: GroupDescHi = decode(&bytes[GroupDesc32::SIZE..]).unwrap();
        assert_eq!((lo.flags, lo.itable_unused_lo, lo.checksum), (1, 2, 3));
        assert_eq!(hi.itable_unused_hi, 4);
        let short: GroupDescHi = decode_zero_extended(&bytes[GroupDesc32::SIZE..][..0x1A]).unwrap();
        assert_eq!(short.block_bitmap_csum_hi, 0);
    }
}
