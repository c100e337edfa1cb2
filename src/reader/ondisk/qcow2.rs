//! The qcow2 header (docs/interop/qcow2.txt of QEMU), big-endian, at byte 0 of the file:
//! the version 2 fields (72 bytes), then for version 3 the feature words, the refcount order
//! and the header length (104 bytes), then optional fields up to `header_length`
//! (`compression_type` at byte 104).

use super::OnDisk;
use binrw::BinRead;

/// `QFI\xfb`.
pub const QCOW_MAGIC: u32 = 0x5146_49FB;

/// The version 2 header (`QCowHeader` up to `snapshots_offset`).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(big)]
pub struct Qcow2HeaderV2 {
    /// On-disk `magic` ([`QCOW_MAGIC`]).
    pub magic: u32,
    /// On-disk `version`: 2 or 3.
    pub version: u32,
    /// On-disk `backing_file_offset`: 0 without a backing file.
    pub backing_file_offset: u64,
    /// On-disk `backing_file_size`: length of the backing file name.
    pub backing_file_size: u32,
    /// On-disk `cluster_bits`.
    pub cluster_bits: u32,
    /// On-disk `size`: the virtual disk's size in bytes.
    pub size: u64,
    /// On-disk `crypt_method`: 0 none, 1 AES, 2 LUKS.
    pub crypt_method: u32,
    /// On-disk `l1_size`: entries of the active L1 table.
    pub l1_size: u32,
    /// On-disk `l1_table_offset`.
    pub l1_table_offset: u64,
    /// On-disk `refcount_table_offset`.
    pub refcount_table_offset: u64,
    /// On-disk `refcount_table_clusters`.
    pub refcount_table_clusters: u32,
    /// On-disk `nb_snapshots`.
    pub nb_snapshots: u32,
    /// On-disk `snapshots_offset`.
    pub snapshots_offset: u64,
}

impl OnDisk for Qcow2HeaderV2 {
    const SIZE: usize = 72;
    const WHAT: &'static str = "qcow2 header";
}

/// The version 3 additions, at byte 72.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(big)]
pub struct Qcow2HeaderV3 {
    /// On-disk `incompatible_features`.
    pub incompatible_features: u64,
    /// On-disk `compatible_features`.
    pub compatible_features: u64,
    /// On-disk `autoclear_features`.
    pub autoclear_features: u64,
    /// On-disk `refcount_order`.
    pub refcount_order: u32,
    /// On-disk `header_length`.
    pub header_length: u32,
}

impl OnDisk for Qcow2HeaderV3 {
    const SIZE: usize = 32;
    const WHAT: &'static str = "qcow2 version 3 header";
}

/// Byte offset of `compression_type` (present when `header_length` exceeds it).
pub const COMPRESSION_TYPE_OFFSET: usize = 104;

/// Incompatible feature bit 0: refcounts may be inconsistent (harmless to a reader).
pub const INCOMPAT_DIRTY: u64 = 1 << 0;
/// Bit 1: the image is marked corrupt (qemu still opens it read-only).
pub const INCOMPAT_CORRUPT: u64 = 1 << 1;
/// Bit 2: guest data lives in an external data file.
pub const INCOMPAT_DATA_FILE: u64 = 1 << 2;
/// Bit 3: `compression_type` is set.
pub const INCOMPAT_COMPRESSION: u64 = 1 << 3;
/// Bit 4: extended L2 entries (subclusters).
pub const INCOMPAT_EXTL2: u64 = 1 << 4;

/// L1 entry: offset of the L2 table (bits 9-55).
pub const L1E_OFFSET_MASK: u64 = 0x00FF_FFFF_FFFF_FE00;
/// L2 entry: offset of a standard cluster (bits 9-55).
pub const L2E_OFFSET_MASK: u64 = 0x00FF_FFFF_FFFF_FE00;
/// L2 entry bit 62: a compressed cluster.
pub const QCOW_OFLAG_COMPRESSED: u64 = 1 << 62;
/// L2 entry bit 0 (version 3, standard entries): the cluster reads as zeros.
pub const QCOW_OFLAG_ZERO: u64 = 1;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::testing::assert_size;

    #[test]
    fn sizes_and_offsets() {
        assert_size::<Qcow2HeaderV2>();
        assert_size::<Qcow2HeaderV3>();
        let mut bytes = vec![0u8; 72];
        bytes[..4].copy_from_slice(b"QFI\xfb");
        bytes[20..24].copy_from_slice(&16u32.to_be_bytes());
        bytes[36..40].copy_from_slice(&7u32.to_be_bytes());
        let header: Qcow2HeaderV2 = crate::reader::ondisk::decode(&bytes).unwrap();
        assert_eq!(header.magic, QCOW_MAGIC);
        assert_eq!(header.cluster_bits, 16);
        assert_eq!(header.l1_size, 7);
    }
}
