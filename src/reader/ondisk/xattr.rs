//! Extended attributes: the in-inode header (`struct ext4_xattr_ibody_header`), the block header
//! (`struct ext4_xattr_header`) and the entry (`struct ext4_xattr_entry`, name follows), little-endian.

use super::OnDisk;
use binrw::BinRead;

/// h_magic of both headers.
pub const XATTR_MAGIC: u32 = 0xEA02_0000;

/// The in-inode header right after `128 + i_extra_isize`.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct IbodyHeader {
    /// On-disk `h_magic`.
    pub magic: u32,
}

/// The 32-byte header of an xattr block.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct BlockHeader {
    /// On-disk `h_magic`.
    pub magic: u32,
    /// On-disk `h_refcount`.
    pub refcount: u32,
    /// On-disk `h_blocks`.
    pub blocks: u32,
    /// On-disk `h_hash`.
    pub hash: u32,
    /// On-disk `h_checksum`.
    pub checksum: u32,
    /// On-disk `h_reserved`.
    pub reserved: [u32; 3],
}

le_struct! {
/// An entry (16 bytes; `name_len` name bytes follow, padded to 4).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct Entry, offsets EntryOffsets {
    /// On-disk `e_name_len`.
    pub name_len: u8,
    /// On-disk `e_name_index`.
    pub name_index: u8,
    /// On-disk `e_value_offs`.
    pub value_offs: u16,
    /// On-disk `e_value_inum`.
    pub value_inum: u32,
    /// On-disk `e_value_size`.
    pub value_size: u32,
    /// On-disk `e_hash`.
    pub hash: u32,
}
}

/// The version word opening a POSIX ACL value (ext4's on-disk form and the VFS form).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct AclHeader {
    /// On-disk `a_version`.
    pub version: u32,
}

/// `ext4_acl_entry_short`: owner, group, mask and other entries in ext4's on-disk ACL form.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct AclEntryShort {
    /// On-disk `e_tag`.
    pub tag: u16,
    /// On-disk `e_perm`.
    pub perm: u16,
}

/// `ext4_acl_entry` (named entries on disk) and `posix_acl_xattr_entry` (every VFS entry).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct AclEntry {
    /// On-disk `e_tag`.
    pub tag: u16,
    /// On-disk `e_perm`.
    pub perm: u16,
    /// On-disk `e_id`.
    pub id: u32,
}

/// `vfs_ns_cap_data` (security.capability); revision 1 stops after `data[0]`, revision 2 after
/// `data[1]`, only revision 3 has `rootid`.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[br(little)]
pub struct VfsCapData {
    /// On-disk `magic_etc`.
    pub magic_etc: u32,
    /// On-disk `permitted_lo`.
    pub permitted_lo: u32,
    /// On-disk `inheritable_lo`.
    pub inheritable_lo: u32,
    /// On-disk `permitted_hi`.
    pub permitted_hi: u32,
    /// On-disk `inheritable_hi`.
    pub inheritable_hi: u32,
    /// On-disk `rootid`.
    pub rootid: u32,
}

impl OnDisk for AclHeader {
    const SIZE: usize = 4;
    const WHAT: &'static str = "POSIX ACL header";
}
impl OnDisk for AclEntryShort {
    const SIZE: usize = 4;
    const WHAT: &'static str = "POSIX ACL entry";
}
impl OnDisk for AclEntry {
    const SIZE: usize = 8;
    const WHAT: &'static str = "POSIX ACL entry";
}
impl OnDisk for VfsCapData {
    const SIZE: usize = 24;
    const WHAT: &'static str = "security.capability";
}

impl OnDisk for IbodyHeader {
    const SIZE: usize = 4;
    const WHAT: &'static str = "in-inode xattr header";
}
impl OnDisk for BlockHeader {
    const SIZE: usize = 32;
    const WHAT: &'static str = "xattr block header";
}
impl OnDisk for Entry {
    const SIZE: usize = 16;
    const WHAT: &'static str = "xattr entry";
}

/// Offset of h_checksum in the block header (the checksum covers the block with it zeroed).
pub const BLOCK_CHECKSUM_OFFSET: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::{decode, testing::assert_size};

    #[test]
    fn sizes_match_declarations() {
        assert_size::<IbodyHeader>();
        assert_size::<BlockHeader>();
        assert_size::<Entry>();
        assert_size::<AclHeader>();
        assert_size::<AclEntryShort>();
        assert_size::<AclEntry>();
        assert_size::<VfsCapData>();
    }

    #[test]
    fn checksum_offset_matches_declaration() {
        let mut bytes = [0u8; 32];
        bytes[BLOCK_CHECKSUM_OFFSET] = 9;
        assert_eq!(decode::<BlockHeader>(&bytes).unwrap().checksum, 9);
    }
}
