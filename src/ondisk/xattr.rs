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
    pub magic: u32,
}

/// The 32-byte header of an xattr block.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct BlockHeader {
    pub magic: u32,
    pub refcount: u32,
    pub blocks: u32,
    pub hash: u32,
    pub checksum: u32,
    pub reserved: [u32; 3],
}

/// An entry (16 bytes; `name_len` name bytes follow, padded to 4).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct Entry {
    pub name_len: u8,
    pub name_index: u8,
    pub value_offs: u16,
    pub value_inum: u32,
    pub value_size: u32,
    pub hash: u32,
}

/// The version word opening a POSIX ACL value (ext4's on-disk form and the VFS form).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct AclHeader {
    pub version: u32,
}

/// `ext4_acl_entry_short`: owner, group, mask and other entries in ext4's on-disk ACL form.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct AclEntryShort {
    pub tag: u16,
    pub perm: u16,
}

/// `ext4_acl_entry` (named entries on disk) and `posix_acl_xattr_entry` (every VFS entry).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct AclEntry {
    pub tag: u16,
    pub perm: u16,
    pub id: u32,
}

/// `vfs_ns_cap_data` (security.capability); revision 1 stops after `data[0]`, revision 2 after
/// `data[1]`, only revision 3 has `rootid`.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[br(little)]
pub struct VfsCapData {
    pub magic_etc: u32,
    pub permitted_lo: u32,
    pub inheritable_lo: u32,
    pub permitted_hi: u32,
    pub inheritable_hi: u32,
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
    use crate::ondisk::{decode, testing::assert_size};

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
        let mut b = [0u8; 32];
        b[BLOCK_CHECKSUM_OFFSET] = 9;
        assert_eq!(decode::<BlockHeader>(&b).unwrap().checksum, 9);
    }
}
