//! The tail of an orphan file block (`struct ext4_orphan_block_tail`, fs/ext4/ext4.h): the last
//! 8 bytes of every block of the orphan file, little-endian.

use super::OnDisk;
use binrw::BinRead;

/// ob_magic
pub const ORPHAN_BLOCK_MAGIC: u32 = 0x0B10_CA04;

/// Magic and checksum at the end of an orphan file block.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct OrphanBlockTail {
    /// On-disk `ob_magic`.
    pub magic: u32,
    /// On-disk `ob_checksum`.
    pub checksum: u32,
}

impl OnDisk for OrphanBlockTail {
    const SIZE: usize = 8;
    const WHAT: &'static str = "orphan block tail";
}

impl OrphanBlockTail {
    /// The tail of `block` (its last 8 bytes).
    pub fn of_block(block: &[u8]) -> crate::error::Result<OrphanBlockTail> {
        let at = block.len().checked_sub(Self::SIZE).unwrap_or(usize::MAX);
        super::decode_at(block, at)
    }
    /// Inode slots (32-bit inode numbers) before the tail in a block of `block_size` bytes.
    pub fn slots(block_size: usize) -> usize {
        block_size.saturating_sub(Self::SIZE) / 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::testing::assert_size;

    #[test]
    fn size_and_position() {
        assert_size::<OrphanBlockTail>();
        let mut bytes = vec![0u8; 1024];
        bytes[1016..1020].copy_from_slice(&ORPHAN_BLOCK_MAGIC.to_le_bytes());
        assert_eq!(
            OrphanBlockTail::of_block(&bytes).unwrap().magic,
            ORPHAN_BLOCK_MAGIC
        );
        assert!(OrphanBlockTail::of_block(&bytes[..4]).is_err());
        assert_eq!(OrphanBlockTail::slots(1024), 254);
    }
}
