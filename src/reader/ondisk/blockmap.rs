//! Classic block maps: `i_block` as 12 direct and 3 indirect pointers, and indirect blocks as
//! arrays of little-endian 32-bit block numbers.

use super::OnDisk;
use binrw::BinRead;

/// Direct pointers in i_block.
pub const DIRECT_BLOCKS: usize = 12;

/// i_block of an inode without extents or inline data.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct IBlockMap {
    /// On-disk `direct`.
    pub direct: [u32; DIRECT_BLOCKS],
    /// On-disk `ind`.
    pub ind: u32,
    /// On-disk `dind`.
    pub dind: u32,
    /// On-disk `tind`.
    pub tind: u32,
}

/// One slot of an indirect block.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct BlockPointer(pub u32);

impl OnDisk for IBlockMap {
    const SIZE: usize = 60;
    const WHAT: &'static str = "block map";
}
impl OnDisk for BlockPointer {
    const SIZE: usize = 4;
    const WHAT: &'static str = "block pointer";
}

impl IBlockMap {
    /// The indirect pointer of `levels` levels (1, 2 or 3), or `None` for another level.
    pub fn indirect(&self, levels: u32) -> Option<u32> {
        match levels {
            1 => Some(self.ind),
            2 => Some(self.dind),
            3 => Some(self.tind),
            _ => None,
        }
    }
    /// Slot `index` of the 15 as e2fsprogs numbers them (0..12 direct, 12..15 indirect).
    pub fn slot(&self, index: usize) -> Option<u32> {
        match index {
            _ if index < DIRECT_BLOCKS => self.direct.get(index).copied(),
            _ => self.indirect(u32::try_from(index - DIRECT_BLOCKS + 1).ok()?),
        }
    }
}

/// Pointers an indirect block of `block_size` bytes holds.
pub fn pointers_per_block(block_size: u64) -> u64 {
    block_size / BlockPointer::SIZE as u64
}

/// Pointer `index` of an indirect block; past the end of the block is an error the caller sees.
pub fn pointer(block: &[u8], index: usize) -> crate::error::Result<u32> {
    let at = index.saturating_mul(BlockPointer::SIZE);
    super::decode_at::<BlockPointer>(block, at).map(|p| p.0)
}

/// Every pointer of an indirect block, in order.
pub fn pointers(block: &[u8]) -> impl Iterator<Item = u32> + '_ {
    block
        .chunks_exact(BlockPointer::SIZE)
        .filter_map(|c| super::decode::<BlockPointer>(c).ok())
        .map(|p| p.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::{decode, testing::assert_size};

    #[test]
    fn sizes_match_declarations() {
        assert_size::<IBlockMap>();
        assert_size::<BlockPointer>();
    }

    #[test]
    fn slots_and_pointers() {
        let mut iblock = [0u8; 60];
        iblock[0] = 1;
        iblock[48] = 12;
        iblock[56] = 14;
        let map: IBlockMap = decode(&iblock).unwrap();
        assert_eq!(
            (map.slot(0), map.slot(12), map.slot(14), map.slot(15)),
            (Some(1), Some(12), Some(14), None)
        );
        assert_eq!(pointer(&iblock, 12).unwrap(), 12);
        assert!(pointer(&iblock, 15).is_err());
        assert_eq!(pointers(&iblock).count(), 15);
    }
}
