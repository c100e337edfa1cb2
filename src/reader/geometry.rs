//! Filesystem geometry in one place: groups, descriptor locations (classic, meta_bg), backup
//! superblocks (sparse_super, sparse_super2), reserved GDT blocks, flex_bg, bigalloc clusters and the
//! 1 KiB-block quirks. Mirrors what libext2fs computes, so dumpe2fs output and validation agree.

use crate::error::{Error, Result};
use crate::reader::features::*;
use crate::reader::superblock::Superblock;
use serde::Serialize;

pub use crate::error::OpenFailure;

/// Derived layout of a filesystem. Built only from a superblock that passed [`Geometry::new`]'s
/// checks, so every quantity here is within sane bounds.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Geometry {
    /// Block size in bytes.
    pub block_size: u64,
    /// log2(cluster size / block size)
    pub cluster_bits: u32,
    /// s_first_data_block: 1 with 1 KiB blocks, else 0.
    pub first_data_block: u64,
    /// Blocks in the filesystem (64-bit count).
    pub blocks_count: u64,
    /// s_blocks_per_group.
    pub blocks_per_group: u32,
    /// s_clusters_per_group.
    pub clusters_per_group: u32,
    /// s_inodes_per_group.
    pub inodes_per_group: u32,
    /// Bytes per on-disk inode record.
    pub inode_size: u32,
    /// Number of block groups.
    pub group_count: u32,
    /// Bytes per group descriptor (32, or s_desc_size with 64bit).
    pub desc_size: u32,
    /// Group descriptors per block.
    pub desc_per_block: u32,
    /// Number of blocks holding the descriptor table.
    pub desc_blocks: u64,
    /// Blocks of inode table per group.
    pub inode_blocks_per_group: u32,
    /// s_reserved_gdt_blocks (online resize room after the descriptors).
    pub reserved_gdt_blocks: u32,
    /// The meta_bg feature is on.
    pub meta_bg: bool,
    /// s_first_meta_bg: first descriptor block placed meta_bg style.
    pub first_meta_bg: u32,
    /// The sparse_super feature is on.
    pub sparse_super: bool,
    /// The sparse_super2 feature is on.
    pub sparse_super2: bool,
    /// s_backup_bgs: the two groups holding backups with sparse_super2.
    pub backup_bgs: [u32; 2],
    /// The flex_bg feature is on.
    pub flex_bg: bool,
    /// The filesystem is an external journal device.
    pub journal_dev: bool,
}

/// Where a group's superblock copy and descriptor blocks are (ext2fs_super_and_bgd_loc2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GroupLayout {
    /// Superblock (copy) block, 0 when none (group 0 reports its block, which may be 0).
    pub super_blk: u64,
    /// First block of the classic descriptor table copy, 0 when none.
    pub old_desc_blk: u64,
    /// The meta_bg descriptor block, 0 when none.
    pub new_desc_blk: u64,
    /// Blocks used by superblock and descriptors (with reserved GDT) in this group.
    pub used_blks: u64,
}

/// The sparse_super rule: groups 0 and 1 and the powers of 3, 5 and 7 carry superblock backups.
pub fn sparse_super_group(group: u64) -> bool {
    if group <= 1 {
        return true;
    }
    group & 1 == 1 && (is_power_of(group, 3) || is_power_of(group, 5) || is_power_of(group, 7))
}

fn is_power_of(mut value: u64, base: u64) -> bool {
    while value > 1 {
        if value % base != 0 {
            return false;
        }
        value /= base;
    }
    value == 1
}

impl Geometry {
    /// Apply ext2fs_open2's sanity checks (in its order) and derive the geometry.
    /// `force` skips the feature-compatibility check like `dumpe2fs -f`.
    pub fn new(sb: &Superblock, force: bool) -> std::result::Result<Geometry, OpenFailure> {
        use OpenFailure::*;
        if sb.magic != crate::reader::superblock::EXT2_MAGIC {
            return Err(BadMagic);
        }
        if sb.rev_level > 1 {
            return Err(RevTooHigh);
        }
        if !force && sb.feature_incompat & !LIB_INCOMPAT_SUPP != 0 {
            return Err(UnsuppFeature);
        }
        if sb.log_block_size > 6
            || sb.log_cluster_size > 19
            || sb.log_block_size > sb.log_cluster_size
            || sb.log_groups_per_flex > 31
        {
            return Err(CorruptSuperblock);
        }
        if !sb.is_bigalloc() && sb.log_block_size != sb.log_cluster_size {
            return Err(CorruptSuperblock);
        }
        let block_size = sb.block_size();
        let inode_size = sb.inode_size();
        if inode_size < 128 || u64::from(inode_size) > block_size || !inode_size.is_power_of_two() {
            return Err(CorruptSuperblock);
        }
        if sb.is_64bit() {
            let ds = u32::from(sb.desc_size);
            if !(64..=1024).contains(&ds) || !ds.is_power_of_two() {
                return Err(BadDescSize);
            }
        }
        let cluster_bits = sb.log_cluster_size - sb.log_block_size;
        if u64::from(sb.blocks_per_group) != u64::from(sb.clusters_per_group) << cluster_bits {
            return Err(CorruptSuperblock);
        }
        let inode_blocks_per_group =
            (u64::from(sb.inodes_per_group) * u64::from(inode_size)).div_ceil(block_size);
        let journal_dev = sb.has_incompat(INCOMPAT_JOURNAL_DEV);
        let desc_size = sb.desc_size();
        let desc_per_block = (block_size / u64::from(desc_size.max(1))) as u32;
        let mut geo = Geometry {
            block_size,
            cluster_bits,
            first_data_block: u64::from(sb.first_data_block),
            blocks_count: sb.blocks_count(),
            blocks_per_group: sb.blocks_per_group,
            clusters_per_group: sb.clusters_per_group,
            inodes_per_group: sb.inodes_per_group,
            inode_size,
            group_count: 0,
            desc_size,
            desc_per_block,
            desc_blocks: 0,
            inode_blocks_per_group: inode_blocks_per_group.min(u64::from(u32::MAX)) as u32,
            reserved_gdt_blocks: u32::from(sb.reserved_gdt_blocks),
            meta_bg: sb.has_incompat(INCOMPAT_META_BG),
            first_meta_bg: sb.first_meta_bg,
            sparse_super: sb.has_ro_compat(RO_COMPAT_SPARSE_SUPER),
            sparse_super2: sb.has_compat(COMPAT_SPARSE_SUPER2),
            backup_bgs: sb.backup_bgs,
            flex_bg: sb.has_incompat(INCOMPAT_FLEX_BG),
            journal_dev,
        };
        if journal_dev {
            return Ok(geo);
        }
        if sb.inodes_per_group == 0 {
            return Err(CorruptSuperblock);
        }
        // EXT2_MAX_BLOCKS_PER_GROUP = (65528 << cluster_bits); EXT2_MAX_INODES_PER_GROUP = 65536 - ipb
        let max_bpg = (u64::from(u16::MAX) - 7) << cluster_bits;
        let ipb = block_size / u64::from(inode_size);
        let max_ipg = 65536u64.saturating_sub(ipb);
        if sb.blocks_per_group < 8
            || u64::from(sb.blocks_per_group) > max_bpg
            || inode_blocks_per_group > max_ipg
            || desc_per_block == 0
            || geo.first_data_block >= geo.blocks_count
        {
            return Err(CorruptSuperblock);
        }
        let groups =
            (geo.blocks_count - geo.first_data_block).div_ceil(u64::from(sb.blocks_per_group));
        if groups >> 32 != 0 {
            return Err(CorruptSuperblock);
        }
        geo.group_count = groups as u32;
        if groups * u64::from(sb.inodes_per_group) != u64::from(sb.inodes_count) {
            return Err(CorruptSuperblock);
        }
        geo.desc_blocks = groups.div_ceil(u64::from(desc_per_block));
        if geo.meta_bg && u64::from(sb.first_meta_bg) > geo.desc_blocks {
            return Err(CorruptSuperblock);
        }
        Ok(geo)
    }

    /// Cluster ratio (blocks per cluster).
    pub fn cluster_ratio(&self) -> u64 {
        1u64 << self.cluster_bits
    }
    /// Inodes per block.
    pub fn inodes_per_block(&self) -> u32 {
        (self.block_size / u64::from(self.inode_size.max(1))) as u32
    }
    /// Total inode count (groups x inodes per group).
    pub fn inodes_count(&self) -> u64 {
        u64::from(self.group_count) * u64::from(self.inodes_per_group)
    }
    /// First block of group `group` (ext2fs_group_first_block2).
    pub fn group_first_block(&self, group: u32) -> u64 {
        self.first_data_block + u64::from(group) * u64::from(self.blocks_per_group)
    }
    /// Last block of group `group` (ext2fs_group_last_block2).
    pub fn group_last_block(&self, group: u32) -> u64 {
        if group + 1 >= self.group_count {
            self.blocks_count.saturating_sub(1)
        } else {
            self.group_first_block(group) + u64::from(self.blocks_per_group) - 1
        }
    }
    /// Number of blocks in group `group`.
    pub fn group_blocks(&self, group: u32) -> u64 {
        self.group_last_block(group) + 1 - self.group_first_block(group)
    }
    /// Group containing block `blk` (ext2fs_group_of_blk2).
    pub fn group_of_block(&self, blk: u64) -> u64 {
        blk.saturating_sub(self.first_data_block) / u64::from(self.blocks_per_group.max(1))
    }
    /// Does group `group` carry a superblock backup (ext2fs_bg_has_super)?
    pub fn bg_has_super(&self, group: u32) -> bool {
        if group == 0 {
            return true;
        }
        if self.sparse_super2 {
            return group == self.backup_bgs[0] || group == self.backup_bgs[1];
        }
        !self.sparse_super || sparse_super_group(u64::from(group))
    }
    /// Descriptor blocks counted for a group with a classic table copy (meta_bg: first_meta_bg).
    pub fn old_desc_blocks(&self) -> u64 {
        if self.meta_bg {
            u64::from(self.first_meta_bg)
        } else {
            self.desc_blocks + u64::from(self.reserved_gdt_blocks)
        }
    }
    /// Superblock and descriptor locations of group `group` (ext2fs_super_and_bgd_loc2).
    pub fn layout(&self, group: u32) -> GroupLayout {
        let mut group_block = self.group_first_block(group);
        if group_block == 0 && self.block_size == 1024 {
            group_block = 1;
        }
        let mut out = GroupLayout::default();
        let has_super = self.bg_has_super(group);
        if has_super {
            out.super_blk = group_block;
            out.used_blks += 1;
        }
        let per = self.desc_per_block.max(1);
        let meta_bg = group / per;
        if !self.meta_bg || meta_bg < self.first_meta_bg {
            if has_super {
                out.old_desc_blk = group_block + 1;
                out.used_blks += self.old_desc_blocks();
            }
        } else {
            let position = group % per;
            if position == 0 || position == 1 || position == per - 1 {
                out.new_desc_blk = group_block + u64::from(has_super);
                out.used_blks += 1;
            }
        }
        out
    }
    /// Block holding descriptor block `index` when the table is read relative to `group_block`
    /// (ext2fs_descriptor_block_loc2; `group_block` is first_data_block for the primary copy).
    pub fn descriptor_block_loc(&self, group_block: u64, index: u64) -> u64 {
        let adjust = u64::from(index == 0 && self.block_size == 1024 && self.cluster_bits > 0);
        if !self.meta_bg || index < u64::from(self.first_meta_bg) {
            return group_block + index + 1 + adjust;
        }
        let bg64 = u64::from(self.desc_per_block) * index;
        let bg = u32::try_from(bg64).unwrap_or(u32::MAX);
        let mut has_super = u64::from(self.bg_has_super(bg));
        let mut ret = self.first_data_block + bg64 * u64::from(self.blocks_per_group);
        if group_block != self.first_data_block
            && ret + has_super + u64::from(self.blocks_per_group) < self.blocks_count
        {
            ret += u64::from(self.blocks_per_group);
            has_super = u64::from(self.bg_has_super(bg.saturating_add(1)));
        }
        ret + has_super + adjust
    }
    /// Check a superblock number requested with `-o superblock=N` makes sense.
    pub fn check_block(&self, blk: u64, what: &str) -> Result<()> {
        if blk >= self.blocks_count {
            return Err(Error::corrupt(
                crate::ProblemKind::Group,
                format!(
                    "{what} {blk} is beyond the end of the filesystem ({} blocks)",
                    self.blocks_count
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_groups() {
        assert!(is_power_of(1, 3));
        assert!(is_power_of(27, 3));
        assert!(is_power_of(125, 5));
        assert!(is_power_of(49, 7));
        assert!(!is_power_of(15, 3));
        assert!(!is_power_of(0, 3));
    }
}
