//! The header of a normal e2image file (`struct ext2_image_hdr`, lib/ext2fs/e2image.h),
//! little-endian, at byte 0 of the file; the rest of its first block is zeros.

use super::OnDisk;
use binrw::BinRead;

/// `EXT2_ET_MAGIC_E2IMAGE` (lib/ext2fs/ext2_err.et: the com_err code of that name).
pub const E2IMAGE_MAGIC: u32 = 0x7F2B_B710;

/// `struct ext2_image_hdr`.
#[derive(BinRead, Clone, Debug, PartialEq, Eq)]
#[br(little)]
pub struct E2ImageHeader {
    /// On-disk `magic_number` ([`E2IMAGE_MAGIC`]).
    pub magic_number: u32,
    /// On-disk `magic_descriptor`: "Ext2 Image 1.0", NUL-padded.
    pub magic_descriptor: [u8; 16],
    /// On-disk `fs_hostname`.
    pub fs_hostname: [u8; 64],
    /// On-disk `fs_netaddr`.
    pub fs_netaddr: [u8; 32],
    /// On-disk `fs_netaddr_type`.
    pub fs_netaddr_type: u32,
    /// On-disk `fs_device`.
    pub fs_device: u32,
    /// On-disk `fs_device_name`.
    pub fs_device_name: [u8; 64],
    /// On-disk `fs_uuid`.
    pub fs_uuid: [u8; 16],
    /// On-disk `fs_blocksize`: the filesystem's block size, the unit of the file's layout.
    pub fs_blocksize: u32,
    /// On-disk `fs_reserved`.
    pub fs_reserved: [u32; 8],
    /// On-disk `image_device`.
    pub image_device: u32,
    /// On-disk `image_inode`.
    pub image_inode: u32,
    /// On-disk `image_time`.
    pub image_time: u32,
    /// On-disk `image_reserved`.
    pub image_reserved: [u32; 8],
    /// On-disk `offset_super`: byte offset of the superblock and descriptors.
    pub offset_super: u32,
    /// On-disk `offset_inode`: byte offset of the inode tables, one after the other.
    pub offset_inode: u32,
    /// On-disk `offset_inodemap`: byte offset of the inode bitmaps, packed.
    pub offset_inodemap: u32,
    /// On-disk `offset_blockmap`: byte offset of the block bitmaps, packed.
    pub offset_blockmap: u32,
    /// On-disk `offset_reserved`.
    pub offset_reserved: [u32; 8],
}

impl OnDisk for E2ImageHeader {
    const SIZE: usize = 332;
    const WHAT: &'static str = "e2image header";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::testing::assert_size;

    #[test]
    fn size_and_offsets() {
        assert_size::<E2ImageHeader>();
        let mut bytes = vec![0u8; E2ImageHeader::SIZE];
        bytes[204..208].copy_from_slice(&4096u32.to_le_bytes());
        bytes[284..288].copy_from_slice(&0x1000u32.to_le_bytes());
        bytes[296..300].copy_from_slice(&0x40_3000u32.to_le_bytes());
        let header: E2ImageHeader = crate::reader::ondisk::decode(&bytes).unwrap();
        assert_eq!(header.fs_blocksize, 4096);
        assert_eq!(header.offset_super, 0x1000);
        assert_eq!(header.offset_blockmap, 0x40_3000);
    }
}
