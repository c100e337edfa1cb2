//! Directory blocks: `struct ext4_dir_entry` (16-bit name_len) and `ext4_dir_entry_2` (8-bit
//! name_len and a file type), the metadata_csum tail `ext4_dir_entry_tail`, and the htree blocks
//! `dx_root` / `dx_node` with their `dx_countlimit`, `dx_entry` and `dx_tail`, little-endian.

use super::OnDisk;
use binrw::BinRead;

/// det_reserved_ft of the checksum tail.
pub const TAIL_FILE_TYPE: u8 = 0xDE;

le_struct! {
/// An entry header with a file type (filetype feature); the name follows.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DirEntry2, offsets DirEntry2Offsets {
    /// On-disk `inode`.
    pub inode: u32,
    /// On-disk `rec_len`.
    pub rec_len: u16,
    /// On-disk `name_len`.
    pub name_len: u8,
    /// On-disk `file_type`.
    pub file_type: u8,
}
}

impl DirEntry2 {
    /// The hot-path twin of the binrw decode (same fields, same order; see
    /// `fast_entry_reader_agrees`): the header at `pos` of `area`, `None` when fewer than 8
    /// bytes remain there.
    pub fn decode_fast_at(area: &[u8], pos: usize) -> Option<DirEntry2> {
        let mut fields = super::LeFields::new(area.get(pos..pos.checked_add(8)?)?);
        Some(DirEntry2::read_le(&mut fields))
    }
}

/// An entry header without a file type (16-bit name_len); the name follows.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DirEntry {
    /// On-disk `inode`.
    pub inode: u32,
    /// On-disk `rec_len`.
    pub rec_len: u16,
    /// On-disk `name_len`.
    pub name_len: u16,
}

/// The 12-byte checksum tail at the end of a leaf block.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DirEntryTail {
    /// On-disk `det_reserved_zero1`.
    pub reserved_zero1: u32,
    /// On-disk `det_rec_len`.
    pub rec_len: u16,
    /// On-disk `det_reserved_zero2`.
    pub reserved_zero2: u8,
    /// On-disk `det_reserved_ft`.
    pub reserved_ft: u8,
    /// On-disk `det_checksum`.
    pub checksum: u32,
}

/// `dx_root_info`, after the "." and ".." entries of the root block.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DxRootInfo {
    /// On-disk `reserved_zero`.
    pub reserved_zero: u32,
    /// On-disk `hash_version`.
    pub hash_version: u8,
    /// On-disk `info_length`.
    pub info_length: u8,
    /// On-disk `indirect_levels`.
    pub indirect_levels: u8,
    /// On-disk `unused_flags`.
    pub unused_flags: u8,
}

/// The start of a dx root block: "." (12 bytes), ".." (its rec_len spans the block), the info.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DxRoot {
    /// On-disk `dot`.
    pub dot: DirEntry2,
    /// On-disk `dot_name`.
    pub dot_name: [u8; 4],
    /// On-disk `dotdot`.
    pub dotdot: DirEntry2,
    /// On-disk `dotdot_name`.
    pub dotdot_name: [u8; 4],
    /// On-disk `info`.
    pub info: DxRootInfo,
}

/// The start of a dx node block: an empty entry spanning the block.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DxNode {
    /// On-disk `fake`.
    pub fake: DirEntry2,
}

/// `dx_countlimit`, overlaying the first `dx_entry`.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DxCountLimit {
    /// On-disk `limit`.
    pub limit: u16,
    /// On-disk `count`.
    pub count: u16,
}

/// `dx_entry`: hash and logical block.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DxEntry {
    /// On-disk `hash`.
    pub hash: u32,
    /// On-disk `block`.
    pub block: u32,
}

/// `dx_tail` after `limit` entries with metadata_csum.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DxTail {
    /// On-disk `dt_reserved`.
    pub reserved: u32,
    /// On-disk `dt_checksum`.
    pub checksum: u32,
}

/// The start of an inline directory's i_block: the parent's inode number; entries follow.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct InlineDirHeader {
    /// On-disk `parent`.
    pub parent: u32,
}

impl OnDisk for InlineDirHeader {
    const SIZE: usize = 4;
    const WHAT: &'static str = "inline directory header";
}

impl OnDisk for DirEntry2 {
    const SIZE: usize = 8;
    const WHAT: &'static str = "directory entry";
}
impl OnDisk for DirEntry {
    const SIZE: usize = 8;
    const WHAT: &'static str = "directory entry";
}
impl OnDisk for DirEntryTail {
    const SIZE: usize = 12;
    const WHAT: &'static str = "directory block tail";
}
impl OnDisk for DxRootInfo {
    const SIZE: usize = 8;
    const WHAT: &'static str = "htree root info";
}
impl OnDisk for DxRoot {
    const SIZE: usize = 32;
    const WHAT: &'static str = "htree root";
}
impl OnDisk for DxNode {
    const SIZE: usize = 8;
    const WHAT: &'static str = "htree node";
}
impl OnDisk for DxCountLimit {
    const SIZE: usize = 4;
    const WHAT: &'static str = "htree count/limit";
}
impl OnDisk for DxEntry {
    const SIZE: usize = 8;
    const WHAT: &'static str = "htree entry";
}
impl OnDisk for DxTail {
    const SIZE: usize = 8;
    const WHAT: &'static str = "htree tail";
}

/// Offset of the root info in a dx root block.
pub const DX_ROOT_INFO_OFFSET: usize = DxRoot::SIZE - DxRootInfo::SIZE;

impl DxEntry {
    /// The logical block the entry points to: the low 28 bits of `block` (the kernel's
    /// `dx_get_block`).
    pub fn logical_block(&self) -> u32 {
        self.block & 0x0fff_ffff
    }
}

impl InlineDirHeader {
    /// The parent's inode number stored at the start of an inline directory's `i_block`
    /// (0 when `i_block` is shorter than the header).
    pub fn parent_of(i_block: &[u8]) -> u32 {
        super::decode::<Self>(i_block).map_or(0, |h| h.parent)
    }
}

/// `ext4_dir_entry_hash`: the hash pair a casefolded, encrypted entry stores after its name (at
/// the next 4-byte boundary).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DirEntryHash {
    /// On-disk `hash`.
    pub hash: u32,
    /// On-disk `minor_hash`.
    pub minor_hash: u32,
}

impl OnDisk for DirEntryHash {
    const SIZE: usize = 8;
    const WHAT: &'static str = "directory entry hash";
}

impl DirEntryTail {
    /// Is this the checksum tail (and not an ordinary entry)?
    pub fn is_tail(&self) -> bool {
        self.reserved_zero1 == 0
            && usize::from(self.rec_len) == Self::SIZE
            && self.reserved_zero2 == 0
            && self.reserved_ft == TAIL_FILE_TYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::testing::assert_size;

    #[test]
    fn fast_entry_reader_agrees() {
        use crate::reader::ondisk::{decode_at, testing::noise};
        let raw = noise(7, 64);
        for pos in 0..=raw.len() {
            let slow = decode_at::<DirEntry2>(&raw, pos).ok();
            assert_eq!(DirEntry2::decode_fast_at(&raw, pos), slow, "at {pos}");
        }
        assert_eq!(DirEntry2::decode_fast_at(&raw, usize::MAX), None);
    }

    #[test]
    fn sizes_match_declarations() {
        assert_size::<DirEntry2>();
        assert_size::<DirEntryHash>();
        assert_size::<InlineDirHeader>();
        assert_size::<DirEntry>();
        assert_size::<DirEntryTail>();
        assert_size::<DxRootInfo>();
        assert_size::<DxRoot>();
        assert_size::<DxNode>();
        assert_size::<DxCountLimit>();
        assert_size::<DxEntry>();
        assert_size::<DxTail>();
    }
}
