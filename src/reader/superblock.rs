//! The ext2/3/4 superblock (1024 bytes at byte 1024 of the filesystem).

use crate::error::Result;
use crate::reader::features::*;
pub use crate::reader::ondisk::superblock::{
    Superblock, CHECKSUM_OFFSET, EXT2_MAGIC, SUPERBLOCK_OFFSET, SUPERBLOCK_SIZE,
};

impl Superblock {
    /// Decode a superblock from at least 1024 bytes. Fails only when fewer bytes are given; the
    /// magic and every other field are for the caller to judge.
    pub fn parse(bytes: &[u8]) -> Result<Superblock> {
        let mut sb: Superblock = crate::reader::ondisk::decode(bytes)?;
        sb.raw = bytes.get(..SUPERBLOCK_SIZE).unwrap_or_default().to_vec();
        Ok(sb)
    }

    /// compat feature test
    pub fn has_compat(&self, bit: u32) -> bool {
        self.feature_compat & bit != 0
    }
    /// incompat feature test
    pub fn has_incompat(&self, bit: u32) -> bool {
        self.feature_incompat & bit != 0
    }
    /// ro_compat feature test
    pub fn has_ro_compat(&self, bit: u32) -> bool {
        self.feature_ro_compat & bit != 0
    }
    /// 64bit feature
    pub fn is_64bit(&self) -> bool {
        self.has_incompat(INCOMPAT_64BIT)
    }
    /// metadata_csum
    pub fn has_metadata_csum(&self) -> bool {
        self.has_ro_compat(RO_COMPAT_METADATA_CSUM)
    }
    /// metadata_csum or gdt_csum: group descriptors carry a checksum and UNINIT flags count.
    pub fn has_group_desc_csum(&self) -> bool {
        self.has_ro_compat(RO_COMPAT_METADATA_CSUM | RO_COMPAT_GDT_CSUM)
    }
    /// bigalloc
    pub fn is_bigalloc(&self) -> bool {
        self.has_ro_compat(RO_COMPAT_BIGALLOC)
    }

    /// Block count including the hi word (64bit only).
    pub fn blocks_count(&self) -> u64 {
        self.hi_lo(self.blocks_count_hi, self.blocks_count_lo)
    }
    /// Reserved block count including the hi word (64bit only).
    pub fn r_blocks_count(&self) -> u64 {
        self.hi_lo(self.r_blocks_count_hi, self.r_blocks_count_lo)
    }
    /// Free block count including the hi word (64bit only).
    pub fn free_blocks_count(&self) -> u64 {
        self.hi_lo(self.free_blocks_count_hi, self.free_blocks_count_lo)
    }
    fn hi_lo(&self, hi: u32, lo: u32) -> u64 {
        if self.is_64bit() {
            (u64::from(hi) << 32) | u64::from(lo)
        } else {
            u64::from(lo)
        }
    }

    /// Block size in bytes (1024 << log_block_size), `None` when the shift is absurd.
    pub fn block_size_checked(&self) -> Option<u64> {
        if self.log_block_size > 6 {
            None
        } else {
            Some(1024u64 << self.log_block_size)
        }
    }
    /// Block size in bytes; clamps an absurd log to 64 KiB (validated at open).
    pub fn block_size(&self) -> u64 {
        1024u64 << self.log_block_size.min(6)
    }
    /// EXT2_BLOCK_SIZE as an unsigned int, for printing whatever the superblock holds.
    pub fn block_size_raw(&self) -> u32 {
        1024u32.wrapping_shl(self.log_block_size)
    }
    /// Cluster size as e2fsprogs computes it (EXT2_CLUSTER_SIZE), clamped.
    pub fn cluster_size(&self) -> u64 {
        1024u64 << self.log_cluster_size.min(20)
    }
    /// Inode size, 128 on revision 0.
    pub fn inode_size(&self) -> u32 {
        if self.rev_level == 0 {
            128
        } else {
            u32::from(self.inode_size)
        }
    }
    /// First non-reserved inode, 11 on revision 0.
    pub fn first_ino(&self) -> u32 {
        if self.rev_level == 0 {
            11
        } else {
            self.first_ino
        }
    }
    /// Descriptor size: s_desc_size with 64bit, else 32.
    pub fn desc_size(&self) -> u32 {
        if self.is_64bit() {
            u32::from(self.desc_size)
        } else {
            32
        }
    }
    /// Volume name bytes up to the first NUL.
    pub fn volume_name(&self) -> &[u8] {
        cstr(&self.volume_name)
    }
    /// Last-mounted path bytes up to the first NUL.
    pub fn last_mounted(&self) -> &[u8] {
        cstr(&self.last_mounted)
    }
    /// Mount options string bytes up to the first NUL.
    pub fn mount_opts(&self) -> &[u8] {
        cstr(&self.mount_opts)
    }

    /// The superblock checksum as computed over the raw bytes (crc32c of the bytes before s_checksum).
    pub fn computed_checksum(&self) -> u32 {
        crate::reader::csum::crc32c_raw(!0, self.raw.get(..CHECKSUM_OFFSET).unwrap_or(&[]))
    }
    /// True when metadata_csum is off, or the stored checksum matches.
    pub fn checksum_ok(&self) -> bool {
        !self.has_metadata_csum() || self.computed_checksum() == self.checksum
    }
    /// ext2fs_verify_csum_type: with metadata_csum the type must be 1 (crc32c).
    pub fn checksum_type_ok(&self) -> bool {
        !self.has_metadata_csum() || self.checksum_type == 1
    }
    /// Seed for metadata checksums: s_checksum_seed with metadata_csum_seed, else crc32c(~0, uuid).
    pub fn csum_seed(&self) -> u32 {
        if self.has_incompat(INCOMPAT_CSUM_SEED) {
            self.checksum_seed
        } else {
            crate::reader::csum::crc32c_raw(!0, &self.uuid)
        }
    }
    /// All set feature names in dumpe2fs order.
    pub fn feature_names(&self) -> Vec<String> {
        feature_names(
            self.feature_compat,
            self.feature_incompat,
            self.feature_ro_compat,
        )
    }
}

/// Bytes of a fixed-size field up to its first NUL (`%.*s` semantics).
pub fn cstr(bytes: &[u8]) -> &[u8] {
    let len = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
    bytes.get(..len).unwrap_or(bytes)
}

/// Format a UUID like e2p_uuid2str: lowercase 8-4-4-4-12, `<none>` when all zero.
pub fn uuid_string(bytes: &[u8; 16]) -> String {
    if bytes.iter().all(|&b| b == 0) {
        return "<none>".to_string();
    }
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        hex[0..4].concat(),
        hex[4..6].concat(),
        hex[6..8].concat(),
        hex[8..10].concat(),
        hex[10..16].concat()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_an_error() {
        assert!(Superblock::parse(&[0u8; 100]).is_err());
    }

    #[test]
    fn decodes_fields() {
        let mut bytes = vec![0u8; 1024];
        bytes[0x38] = 0x53;
        bytes[0x39] = 0xEF;
        bytes[0x18] = 2;
        bytes[0x60] = 0x80; // 64bit
        bytes[0x4] = 1;
        bytes[0x150] = 2;
        let sb = Superblock::parse(&bytes).unwrap();
        assert_eq!(sb.magic, EXT2_MAGIC);
        assert_eq!(sb.block_size(), 4096);
        assert_eq!(sb.blocks_count(), (2u64 << 32) | 1);
        assert_eq!(uuid_string(&[0; 16]), "<none>");
        let mut bytes = [0u8; 16];
        bytes[15] = 0xab;
        assert_eq!(uuid_string(&bytes), "00000000-0000-0000-0000-0000000000ab");
    }
}
