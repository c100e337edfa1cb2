//! The quota file, format QFMT_VFS_V1 (lib/support/quotaio_v2.h and quotaio_tree.h, the kernel's
//! fs/quota/quotaio_v2.h): a header and info block, then a radix tree of 1 KiB blocks whose
//! leaves are data blocks of 72-byte `v2r1_disk_dqblk` entries. All little-endian.

use super::OnDisk;
use binrw::BinRead;

/// `QT_BLKSIZE`: the tree's block size, whatever the filesystem block size.
pub const QT_BLKSIZE: usize = 1024;
/// `QT_TREEOFF`: the root tree block.
pub const QT_TREEOFF: u32 = 1;
/// `QT_TREEDEPTH`: tree levels above the data blocks.
pub const QT_TREEDEPTH: u32 = 4;
/// `V2_VERSION_R1`: the version of QFMT_VFS_V1 files.
pub const V2_VERSION_R1: u32 = 1;
/// Header magics (`INITQMAGICS`): user, group, project.
pub const QUOTA_MAGICS: [u32; 3] = [0xd9c0_1f11, 0xd9c0_1927, 0xd9c0_3f14];

/// `struct v2_disk_dqheader` at offset 0.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DiskDqHeader {
    /// On-disk `dqh_magic`.
    pub magic: u32,
    /// On-disk `dqh_version`.
    pub version: u32,
}

impl OnDisk for DiskDqHeader {
    const SIZE: usize = 8;
    const WHAT: &'static str = "quota file header";
}

/// `struct v2_disk_dqinfo` at offset 8 (`V2_DQINFOOFF`).
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[br(little)]
pub struct DiskDqInfo {
    /// On-disk `dqi_bgrace`: block grace time (seconds).
    pub bgrace: u32,
    /// On-disk `dqi_igrace`: inode grace time (seconds).
    pub igrace: u32,
    /// On-disk `dqi_flags`.
    pub flags: u32,
    /// On-disk `dqi_blocks`: blocks in the file.
    pub blocks: u32,
    /// On-disk `dqi_free_blk`: first free block.
    pub free_blk: u32,
    /// On-disk `dqi_free_entry`: first block with a free entry.
    pub free_entry: u32,
}

impl OnDisk for DiskDqInfo {
    const SIZE: usize = 24;
    const WHAT: &'static str = "quota file info";
}

/// `struct qt_disk_dqdbheader`, opening every data block.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct DiskDqdbHeader {
    /// On-disk `dqdh_next_free`.
    pub next_free: u32,
    /// On-disk `dqdh_prev_free`.
    pub prev_free: u32,
    /// On-disk `dqdh_entries`.
    pub entries: u16,
    /// On-disk `dqdh_pad1`.
    pub pad1: u16,
    /// On-disk `dqdh_pad2`.
    pub pad2: u32,
}

impl OnDisk for DiskDqdbHeader {
    const SIZE: usize = 16;
    const WHAT: &'static str = "quota data block header";
}

/// `struct v2r1_disk_dqblk`: one ID's usage and limits.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[br(little)]
pub struct DiskDqblk {
    /// On-disk `dqb_id`.
    pub id: u32,
    /// On-disk `dqb_pad`.
    pub pad: u32,
    /// On-disk `dqb_ihardlimit`.
    pub ihardlimit: u64,
    /// On-disk `dqb_isoftlimit`.
    pub isoftlimit: u64,
    /// On-disk `dqb_curinodes`.
    pub curinodes: u64,
    /// On-disk `dqb_bhardlimit`.
    pub bhardlimit: u64,
    /// On-disk `dqb_bsoftlimit`.
    pub bsoftlimit: u64,
    /// On-disk `dqb_curspace` (bytes).
    pub curspace: u64,
    /// On-disk `dqb_btime`.
    pub btime: u64,
    /// On-disk `dqb_itime`.
    pub itime: u64,
}

impl OnDisk for DiskDqblk {
    const SIZE: usize = 72;
    const WHAT: &'static str = "quota entry";
}

/// Entries per data block (`qtree_dqstr_in_blk`).
pub const DQSTR_IN_BLK: usize = (QT_BLKSIZE - DiskDqdbHeader::SIZE) / DiskDqblk::SIZE;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::testing::assert_size;

    #[test]
    fn sizes_match_the_c_declarations() {
        assert_size::<DiskDqHeader>();
        assert_size::<DiskDqInfo>();
        assert_size::<DiskDqdbHeader>();
        assert_size::<DiskDqblk>();
        assert_eq!(DQSTR_IN_BLK, 14);
    }
}
