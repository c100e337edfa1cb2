//! Block group descriptors (32 bytes, or s_desc_size bytes with 64bit) and their checksums.

use crate::reader::csum::{crc16, crc32c_raw};
use crate::reader::ondisk::group::{
    GroupDesc32, GroupDescHi, CHECKSUM_OFFSET, FLAGS_OFFSET, ITABLE_UNUSED_HI_OFFSET,
    ITABLE_UNUSED_LO_OFFSET,
};
use crate::reader::ondisk::{decode_zero_extended, OnDisk};
use crate::reader::superblock::Superblock;
use serde::Serialize;

/// bg_flags: inode table and bitmap not initialised.
pub const BG_INODE_UNINIT: u16 = 0x0001;
/// bg_flags: block bitmap not initialised.
pub const BG_BLOCK_UNINIT: u16 = 0x0002;
/// bg_flags: inode table zeroed.
pub const BG_INODE_ZEROED: u16 = 0x0004;

/// What decoding a descriptor needs to know about the filesystem.
#[derive(Clone, Debug)]
pub struct DescContext {
    /// Is 64bit.
    pub is_64bit: bool,
    /// Desc size.
    pub desc_size: usize,
    /// Metadata csum.
    pub metadata_csum: bool,
    /// Gdt csum.
    pub gdt_csum: bool,
    /// Seed.
    pub seed: u32,
    /// Uuid.
    pub uuid: [u8; 16],
}

impl DescContext {
    /// Build from a superblock.
    pub fn new(sb: &Superblock) -> Self {
        DescContext {
            is_64bit: sb.is_64bit(),
            desc_size: sb.desc_size() as usize,
            metadata_csum: sb.has_metadata_csum(),
            gdt_csum: sb.has_group_desc_csum(),
            seed: sb.csum_seed(),
            uuid: sb.uuid,
        }
    }
}

/// One decoded group descriptor.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct GroupDesc {
    /// Group number of this descriptor.
    pub group: u32,
    /// `bg_block_bitmap`, hi and lo halves combined.
    pub block_bitmap: u64,
    /// `bg_inode_bitmap`, hi and lo halves combined.
    pub inode_bitmap: u64,
    /// `bg_inode_table`, hi and lo halves combined.
    pub inode_table: u64,
    /// `bg_free_blocks_count`, hi and lo halves combined.
    pub free_blocks_count: u32,
    /// `bg_free_inodes_count`, hi and lo halves combined.
    pub free_inodes_count: u32,
    /// `bg_used_dirs_count`, hi and lo halves combined.
    pub used_dirs_count: u32,
    /// `bg_flags`.
    #[serde(skip)] // with its names in the JSON formatter (GroupRead)
    pub flags: u16,
    /// `bg_exclude_bitmap`, hi and lo halves combined.
    pub exclude_bitmap: u64,
    /// Stored block bitmap checksum (hi half only when the descriptor holds it).
    pub block_bitmap_csum: u32,
    /// Stored inode bitmap checksum (hi half only when the descriptor holds it).
    pub inode_bitmap_csum: u32,
    /// `bg_itable_unused`, hi and lo halves combined.
    pub itable_unused: u32,
    /// Stored descriptor checksum.
    pub checksum: u16,
    /// Checksum recomputed from the descriptor bytes (0 without a checksum feature).
    pub computed_checksum: u16,
}

/// Compute the descriptor checksum (ext2fs_group_desc_csum) over `raw` (desc_size bytes).
pub fn desc_checksum(ctx: &DescContext, group: u32, raw: &[u8]) -> u16 {
    let size = ctx.desc_size.min(raw.len());
    let head = raw.get(..CHECKSUM_OFFSET.min(size)).unwrap_or(&[]);
    let tail = raw
        .get((CHECKSUM_OFFSET + 2).min(size)..size)
        .unwrap_or(&[]);
    if ctx.metadata_csum {
        let crc = crc32c_raw(ctx.seed, &group.to_le_bytes());
        let crc = crc32c_raw(crc, head);
        let crc = crc32c_raw(crc, &[0, 0][..2.min(size.saturating_sub(CHECKSUM_OFFSET))]);
        let crc = crc32c_raw(crc, tail);
        (crc & 0xFFFF) as u16
    } else {
        let crc = crc16(0xFFFF, &ctx.uuid);
        let crc = crc16(crc, &group.to_le_bytes());
        let crc = crc16(crc, head);
        crc16(crc, tail)
    }
}

impl GroupDesc {
    /// Decode descriptor `group` from its raw bytes (at least desc_size; missing bytes read as 0).
    pub fn parse(ctx: &DescContext, group: u32, raw: &[u8]) -> GroupDesc {
        let desc = raw.get(..ctx.desc_size.min(raw.len())).unwrap_or(raw);
        let lo: GroupDesc32 = decode_zero_extended(desc).unwrap_or_default();
        // The 64-bit half: fields beyond s_desc_size read as zero.
        let rest: GroupDescHi =
            decode_zero_extended(desc.get(GroupDesc32::SIZE..).unwrap_or(&[])).unwrap_or_default();
        let hi = if ctx.is_64bit && ctx.desc_size >= GroupDesc32::SIZE + GroupDescHi::SIZE {
            rest
        } else {
            GroupDescHi::default()
        };
        let join32 = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
        let join16 = |lo: u16, hi: u16| u32::from(lo) | (u32::from(hi) << 16);
        GroupDesc {
            group,
            block_bitmap: join32(lo.block_bitmap_lo, hi.block_bitmap_hi),
            inode_bitmap: join32(lo.inode_bitmap_lo, hi.inode_bitmap_hi),
            inode_table: join32(lo.inode_table_lo, hi.inode_table_hi),
            free_blocks_count: join16(lo.free_blocks_count_lo, hi.free_blocks_count_hi),
            free_inodes_count: join16(lo.free_inodes_count_lo, hi.free_inodes_count_hi),
            used_dirs_count: join16(lo.used_dirs_count_lo, hi.used_dirs_count_hi),
            flags: lo.flags,
            exclude_bitmap: join32(lo.exclude_bitmap_lo, hi.exclude_bitmap_hi),
            // The bitmap checksums' hi halves count whenever s_desc_size covers them.
            block_bitmap_csum: join16(lo.block_bitmap_csum_lo, rest.block_bitmap_csum_hi),
            inode_bitmap_csum: join16(lo.inode_bitmap_csum_lo, rest.inode_bitmap_csum_hi),
            itable_unused: join16(lo.itable_unused_lo, hi.itable_unused_hi),
            checksum: lo.checksum,
            computed_checksum: if ctx.gdt_csum {
                desc_checksum(ctx, group, raw)
            } else {
                0
            },
        }
    }

    /// Decode as libext2fs presents descriptors after opening from a backup superblock: UNINIT
    /// flags cleared, itable_unused zeroed, checksum recomputed (openfs.c does this in memory).
    pub fn parse_from_backup(ctx: &DescContext, group: u32, raw: &[u8]) -> GroupDesc {
        if !ctx.gdt_csum {
            return Self::parse(ctx, group, raw);
        }
        let mut buf = [0u8; 1024];
        let len = raw.len().min(buf.len()).min(ctx.desc_size);
        if let (Some(dst), Some(src)) = (buf.get_mut(..len), raw.get(..len)) {
            dst.copy_from_slice(src);
        }
        let flags = u16::from_le_bytes([buf[FLAGS_OFFSET], buf[FLAGS_OFFSET + 1]])
            & !(BG_BLOCK_UNINIT | BG_INODE_UNINIT);
        buf[FLAGS_OFFSET..FLAGS_OFFSET + 2].copy_from_slice(&flags.to_le_bytes());
        buf[ITABLE_UNUSED_LO_OFFSET..ITABLE_UNUSED_LO_OFFSET + 2].copy_from_slice(&[0, 0]);
        if ctx.is_64bit && len >= ITABLE_UNUSED_HI_OFFSET + 2 {
            buf[ITABLE_UNUSED_HI_OFFSET..ITABLE_UNUSED_HI_OFFSET + 2].copy_from_slice(&[0, 0]);
        }
        let raw2 = buf.get(..len).unwrap_or(&[]);
        let csum = desc_checksum(ctx, group, raw2);
        buf[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].copy_from_slice(&csum.to_le_bytes());
        Self::parse(ctx, group, buf.get(..len).unwrap_or(&[]))
    }

    /// Flag test.
    pub fn has_flag(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }
    /// True when the stored checksum matches (always true without a checksum feature).
    pub fn checksum_ok(&self, ctx: &DescContext) -> bool {
        !ctx.gdt_csum || self.checksum == self.computed_checksum
    }
}

/// Names of the flags dumpe2fs prints, in its order.
pub fn flag_names(flags: u16) -> Vec<&'static str> {
    let mut names = Vec::new();
    if flags & BG_INODE_UNINIT != 0 {
        names.push("INODE_UNINIT");
    }
    if flags & BG_BLOCK_UNINIT != 0 {
        names.push("BLOCK_UNINIT");
    }
    if flags & BG_INODE_ZEROED != 0 {
        names.push("ITABLE_ZEROED");
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn crc16_worked_example() {
        // shared/docs section 4: UUID 11111111-2222-3333-4444-555555555555, group 0 -> 0xAF7F
        let uuid: [u8; 16] = hex("11111111222233334444555555555555").try_into().unwrap();
        let mut raw = hex("030100000b01000013010000e00ef507020004000000000000000000f5077faf");
        raw.extend_from_slice(&[0u8; 32]);
        let ctx = DescContext {
            is_64bit: true,
            desc_size: 64,
            metadata_csum: false,
            gdt_csum: true,
            seed: 0,
            uuid,
        };
        let gd = GroupDesc::parse(&ctx, 0, &raw);
        assert_eq!(gd.computed_checksum, 0xAF7F);
        assert_eq!(gd.checksum, 0xAF7F);
    }

    #[test]
    fn crc32c_worked_example() {
        let uuid: [u8; 16] = hex("e8f62e136e804b879b2869175197c75d").try_into().unwrap();
        assert_eq!(crc32c_raw(!0, &uuid), 0x3699_6ffc);
        let mut raw = hex("030100000b01000013010000e00ef507020004000000000002336a0df5078f5d");
        raw.extend_from_slice(&hex(
            "0000000000000000000000000000000000000000000000006e44e52f00000000",
        ));
        let ctx = DescContext {
            is_64bit: true,
            desc_size: 64,
            metadata_csum: true,
            gdt_csum: true,
            seed: 0x3699_6ffc,
            uuid,
        };
        let gd = GroupDesc::parse(&ctx, 0, &raw);
        assert_eq!(gd.computed_checksum, 0x5d8f);
        assert!(gd.checksum_ok(&ctx));
        assert_eq!(flag_names(gd.flags), vec!["ITABLE_ZEROED"]);
    }
}
