//! Extent tree nodes: `struct ext4_extent_header`, `ext4_extent_idx`, `ext4_extent` and
//! `ext4_extent_tail` (fs/ext4/ext4_extents.h), little-endian.

use super::OnDisk;
use binrw::BinRead;

/// eh_magic
pub const EXTENT_MAGIC: u16 = 0xF30A;
/// ee_len above this marks an uninitialized (unwritten) extent.
pub const INIT_MAX_LEN: u16 = 32768;

le_struct! {
/// The 12-byte header opening every node (the root in i_block too).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct ExtentHeader, offsets ExtentHeaderOffsets {
    /// On-disk `eh_magic`.
    pub magic: u16,
    /// On-disk `eh_entries`.
    pub entries: u16,
    /// On-disk `eh_max`.
    pub max: u16,
    /// On-disk `eh_depth`.
    pub depth: u16,
    /// On-disk `eh_generation`.
    pub generation: u32,
}
}

le_struct! {
/// An index entry (interior nodes).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct RawExtentIdx, offsets RawExtentIdxOffsets {
    /// On-disk `ei_block`.
    pub block: u32,
    /// On-disk `ei_leaf_lo`.
    pub leaf_lo: u32,
    /// On-disk `ei_leaf_hi`.
    pub leaf_hi: u16,
    /// On-disk `ei_unused`.
    pub unused: u16,
}
}

le_struct! {
/// A leaf entry.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct RawExtent, offsets RawExtentOffsets {
    /// On-disk `ee_block`.
    pub block: u32,
    /// On-disk `ee_len`.
    pub len: u16,
    /// On-disk `ee_start_hi`.
    pub start_hi: u16,
    /// On-disk `ee_start_lo`.
    pub start_lo: u32,
}
}

/// The checksum after the `eh_max` entry slots of a tree block.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct ExtentTail {
    /// On-disk `et_checksum`.
    pub checksum: u32,
}

impl OnDisk for ExtentHeader {
    const SIZE: usize = 12;
    const WHAT: &'static str = "extent header";
}
impl OnDisk for RawExtentIdx {
    const SIZE: usize = 12;
    const WHAT: &'static str = "extent index";
}
impl OnDisk for RawExtent {
    const SIZE: usize = 12;
    const WHAT: &'static str = "extent";
}
impl OnDisk for ExtentTail {
    const SIZE: usize = 4;
    const WHAT: &'static str = "extent tail";
}

/// Entries and index entries have the same size.
pub const ENTRY_SIZE: usize = RawExtent::SIZE;

/// Byte offset of entry slot `index` of a node.
pub fn entry_offset(index: usize) -> usize {
    ExtentHeader::SIZE + ENTRY_SIZE * index
}

impl RawExtentIdx {
    /// ei_leaf with its high half.
    pub fn leaf(&self) -> u64 {
        (u64::from(self.leaf_hi) << 32) | u64::from(self.leaf_lo)
    }
}

impl RawExtent {
    /// ee_start with its high half.
    #[inline]
    pub fn start(&self) -> u64 {
        (u64::from(self.start_hi) << 32) | u64::from(self.start_lo)
    }
    /// Length in blocks and whether the extent is uninitialized.
    #[inline]
    pub fn length(&self) -> (u16, bool) {
        if self.len > INIT_MAX_LEN {
            (self.len - INIT_MAX_LEN, true)
        } else {
            (self.len, false)
        }
    }
}

/// Hot-path twins of the binrw decodes (same fields, same order; see `fast_readers_agree`):
/// `None` when `bytes` is shorter than the structure.
impl ExtentHeader {
    /// Decode the header at the start of `bytes`.
    #[inline]
    pub fn decode_fast(bytes: &[u8]) -> Option<ExtentHeader> {
        let mut fields = super::LeFields::new(bytes.get(..Self::SIZE)?);
        Some(ExtentHeader::read_le(&mut fields))
    }
}

impl RawExtentIdx {
    /// Decode the index entry at byte `offset` of `bytes`.
    pub fn decode_fast_at(bytes: &[u8], offset: usize) -> Option<RawExtentIdx> {
        let end = offset.checked_add(Self::SIZE)?;
        let mut fields = super::LeFields::new(bytes.get(offset..end)?);
        Some(RawExtentIdx::read_le(&mut fields))
    }
}

impl RawExtent {
    /// Decode the leaf entry at byte `offset` of `bytes`.
    #[inline]
    pub fn decode_fast_at(bytes: &[u8], offset: usize) -> Option<RawExtent> {
        let end = offset.checked_add(Self::SIZE)?;
        let mut fields = super::LeFields::new(bytes.get(offset..end)?);
        Some(RawExtent::read_le(&mut fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::testing::assert_size;

    #[test]
    fn sizes_match_declarations() {
        assert_size::<ExtentHeader>();
        assert_size::<RawExtentIdx>();
        assert_size::<RawExtent>();
        assert_size::<ExtentTail>();
    }

    #[test]
    fn fast_readers_agree() {
        use crate::reader::ondisk::{decode, decode_at, testing::noise};
        for seed in 1..200u64 {
            let raw = noise(seed, 40);
            let header: ExtentHeader = decode(&raw).unwrap();
            assert_eq!(ExtentHeader::decode_fast(&raw), Some(header));
            for off in [0, 7, 12, 28] {
                let ix: RawExtentIdx = decode_at(&raw, off).unwrap();
                assert_eq!(RawExtentIdx::decode_fast_at(&raw, off), Some(ix));
                let extent: RawExtent = decode_at(&raw, off).unwrap();
                assert_eq!(RawExtent::decode_fast_at(&raw, off), Some(extent));
            }
            assert_eq!(RawExtent::decode_fast_at(&raw, 29), None);
            assert_eq!(RawExtentIdx::decode_fast_at(&raw, usize::MAX), None);
        }
        assert_eq!(ExtentHeader::decode_fast(&[0u8; 11]), None);
    }
}
