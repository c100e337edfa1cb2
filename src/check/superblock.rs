//! Superblock rules (`sb.*`): every field judged on its own, then the derived geometry, then the
//! backup copies against the primary.

use super::{Finding, Findings, RuleId};
use crate::reader::features::*;
use crate::reader::fs::Filesystem;
use crate::reader::geometry::Geometry;
use crate::reader::superblock::{Superblock, EXT2_MAGIC, SUPERBLOCK_SIZE};

fn hex(value: u32) -> String {
    format!("0x{value:x}")
}

fn push(findings: &mut Findings, rule: RuleId, msg: String) {
    findings.push(Finding::new(rule, None, msg));
}

/// Check the primary superblock. Returns true when its geometry is usable for the group walk.
pub(super) fn check(sb: &Superblock, image_len: u64, now: u64, findings: &mut Findings) -> bool {
    if !check_identity(sb, findings) {
        return false;
    }
    let Some(bs) = sb.block_size_checked() else {
        push(
            findings,
            RuleId::SbBlockSize,
            format!(
                "log_block_size is {}, at most 6 (64 KiB blocks)",
                sb.log_block_size
            ),
        );
        return false;
    };
    check_sizes(sb, bs, findings);
    check_group_geometry(sb, bs, image_len, findings);
    check_feature_combinations(sb, findings);
    check_totals(sb, findings);
    check_times(sb, now, findings);
    Geometry::new(sb, true).is_ok()
}

/// Magic, checksum, revision and feature bits known to libext2fs. False without the magic.
fn check_identity(sb: &Superblock, findings: &mut Findings) -> bool {
    if sb.magic != EXT2_MAGIC {
        findings.push(
            Finding::new(
                RuleId::SbMagic,
                None,
                format!("magic is 0x{:04x}, should be 0xef53", sb.magic),
            )
            .with("stored", sb.magic)
            .with("expected", EXT2_MAGIC),
        );
        // Nothing else in a superblock without its magic means anything.
        return false;
    }
    if sb.has_metadata_csum() {
        if sb.checksum_type != 1 {
            findings.push(
                Finding::new(
                    RuleId::SbChecksumType,
                    None,
                    format!(
                        "checksum type is {}, should be 1 (crc32c)",
                        sb.checksum_type
                    ),
                )
                .with("stored", sb.checksum_type)
                .with("expected", 1),
            );
        }
        let computed = sb.computed_checksum();
        if computed != sb.checksum {
            findings.push(
                Finding::new(
                    RuleId::SbChecksum,
                    None,
                    format!(
                        "checksum is 0x{:08x}, should be 0x{computed:08x}",
                        sb.checksum
                    ),
                )
                .with("stored", sb.checksum)
                .with("expected", computed),
            );
        }
    }
    if sb.rev_level > 1 {
        push(
            findings,
            RuleId::SbRevLevel,
            format!("revision level is {}, should be 0 or 1", sb.rev_level),
        );
    }
    let unknown_in = sb.feature_incompat & !LIB_INCOMPAT_SUPP;
    if unknown_in != 0 {
        findings.push(
            Finding::new(
                RuleId::SbIncompatUnknown,
                None,
                format!(
                    "unknown incompat features {} ({})",
                    hex(unknown_in),
                    feature_names(0, unknown_in, 0).join(" ")
                ),
            )
            .with("stored", sb.feature_incompat),
        );
    }
    let unknown_ro = sb.feature_ro_compat & !LIB_RO_COMPAT_SUPP;
    if unknown_ro != 0 {
        findings.push(
            Finding::new(
                RuleId::SbRoCompatUnknown,
                None,
                format!(
                    "unknown ro_compat features {} ({})",
                    hex(unknown_ro),
                    feature_names(0, 0, unknown_ro).join(" ")
                ),
            )
            .with("stored", sb.feature_ro_compat),
        );
    }
    true
}

/// Cluster, flex group, inode and descriptor sizes, first inode and extra isize.
fn check_sizes(sb: &Superblock, bs: u64, findings: &mut Findings) {
    let bigalloc = sb.is_bigalloc();
    let cluster_ok = if bigalloc {
        sb.log_cluster_size >= sb.log_block_size && sb.log_cluster_size <= 19
    } else {
        sb.log_cluster_size == sb.log_block_size
    };
    if !cluster_ok {
        let want = if bigalloc {
            format!("between {} and 19 with bigalloc", sb.log_block_size)
        } else {
            format!(
                "{} (cluster size equals block size without bigalloc)",
                sb.log_block_size
            )
        };
        findings.push(
            Finding::new(
                RuleId::SbClusterSize,
                None,
                format!(
                    "log_cluster_size is {}, should be {want}",
                    sb.log_cluster_size
                ),
            )
            .with("stored", sb.log_cluster_size),
        );
    }
    if sb.log_groups_per_flex > 31 {
        push(
            findings,
            RuleId::SbLogGroupsPerFlex,
            format!(
                "log_groups_per_flex is {}, at most 31",
                sb.log_groups_per_flex
            ),
        );
    }
    let isize = u64::from(sb.inode_size());
    if isize < 128 || isize > bs || !isize.is_power_of_two() {
        findings.push(
            Finding::new(
                RuleId::SbInodeSize,
                None,
                format!("inode size is {isize}, should be a power of two in [128, {bs}]"),
            )
            .with("stored", isize),
        );
    }
    let first_ino = sb.first_ino();
    if first_ino < 11 || first_ino > sb.inodes_count {
        findings.push(
            Finding::new(
                RuleId::SbFirstIno,
                None,
                format!(
                    "first inode is {first_ino}, should be in [11, {}]",
                    sb.inodes_count
                ),
            )
            .with("stored", first_ino),
        );
    }
    if sb.rev_level >= 1 {
        let room = isize.saturating_sub(128);
        for (what, value) in [
            ("required", sb.min_extra_isize),
            ("desired", sb.want_extra_isize),
        ] {
            let v64 = u64::from(value);
            if value != 0 && (value < 4 || v64 > room || value % 4 != 0) {
                findings.push(
                    Finding::new(
                        RuleId::SbExtraIsize,
                        None,
                        format!(
                            "{what} extra isize is {value}, should be 0 or a multiple of 4 in [4, {room}]"
                        ),
                    )
                    .with("stored", value)
                    .with("which", what),
                );
            }
        }
    }
    if sb.is_64bit() {
        let ds = u32::from(sb.desc_size);
        if !(64..=1024).contains(&ds) || !ds.is_power_of_two() {
            findings.push(
                Finding::new(
                    RuleId::SbDescSize,
                    None,
                    format!("descriptor size is {ds}, should be a power of two in [64, 1024]"),
                )
                .with("stored", ds),
            );
        }
    }
}

/// Blocks and inodes per group, first data block, device size, group count and what derives
/// from it, reserved blocks and reserved GDT blocks (e2fsck's `check_super_block`, in its
/// order).
fn check_group_geometry(sb: &Superblock, bs: u64, image_len: u64, findings: &mut Findings) {
    check_per_group_counts(sb, bs, findings);
    check_filesystem_extent(sb, bs, image_len, findings);
    check_derived_counts(sb, bs, findings);
    check_reserved_counts(sb, bs, findings);
}

/// log2 of blocks per cluster, as the superblock gives it (0 without bigalloc), bounded so that
/// a hostile value cannot overflow a shift.
fn cluster_bits(sb: &Superblock) -> u32 {
    sb.log_cluster_size
        .saturating_sub(sb.log_block_size)
        .min(31)
}

/// Blocks, clusters and inodes per group within what a group's bitmap of one block can hold
/// (`check_super_value` on `s_clusters_per_group`, `s_inodes_per_group`).
fn check_per_group_counts(sb: &Superblock, bs: u64, findings: &mut Findings) {
    let isize = u64::from(sb.inode_size());
    let cbits = cluster_bits(sb);
    let cpg_max = (8 * bs).min(65528);
    let cpg = u64::from(sb.clusters_per_group);
    let bpg = u64::from(sb.blocks_per_group);
    if !(8..=cpg_max).contains(&cpg) || bpg != cpg << cbits {
        findings.push(
            Finding::new(
                RuleId::SbBlocksPerGroup,
                None,
                format!(
                    "blocks per group {bpg}, clusters per group {cpg}: clusters should be in [8, {cpg_max}] and blocks = clusters x {}",
                    1u64 << cbits
                ),
            )
            .with("blocks_per_group", bpg)
            .with("clusters_per_group", cpg),
        );
    }
    let ipb = bs / isize.clamp(128, bs);
    let ipg = u64::from(sb.inodes_per_group);
    let ipg_max = (8 * bs).min(65536 - ipb);
    if ipg < ipb || ipg > ipg_max {
        findings.push(
            Finding::new(
                RuleId::SbInodesPerGroup,
                None,
                format!("inodes per group is {ipg}, should be in [{ipb}, {ipg_max}]"),
            )
            .with("stored", ipg),
        );
    }
}

/// The first data block (1 on 1 KiB blocks without bigalloc, else 0) and the block count
/// against the size of the image.
fn check_filesystem_extent(sb: &Superblock, bs: u64, image_len: u64, findings: &mut Findings) {
    let cbits = cluster_bits(sb);
    let blocks = sb.blocks_count();
    let fdb = u64::from(sb.first_data_block);
    let want_fdb = u64::from(bs == 1024 && cbits == 0);
    if fdb != want_fdb || fdb >= blocks {
        findings.push(
            Finding::new(
                RuleId::SbFirstDataBlock,
                None,
                format!("first data block is {fdb}, should be {want_fdb} (blocks count {blocks})"),
            )
            .with("stored", fdb)
            .with("expected", want_fdb),
        );
    }
    let image_blocks = image_len / bs;
    if blocks > image_blocks {
        findings.push(
            Finding::new(
                RuleId::SbBlocksCountDevice,
                None,
                format!(
                    "block count {blocks} exceeds the size of the image ({image_blocks} blocks of {bs} bytes)"
                ),
            )
            .with("stored", blocks)
            .with("image_blocks", image_blocks),
        );
    }
}

/// What the group count derives: the inode count (groups x inodes per group) and
/// `s_first_meta_bg` within the descriptor blocks. The group count itself must leave a
/// descriptor block's worth of group numbers below 2^32.
fn check_derived_counts(sb: &Superblock, bs: u64, findings: &mut Findings) {
    let blocks = sb.blocks_count();
    let fdb = u64::from(sb.first_data_block);
    let bpg = u64::from(sb.blocks_per_group);
    let ipg = u64::from(sb.inodes_per_group);
    // Derived geometry, only where the inputs are sane enough to divide by.
    let dsize = u64::from(sb.desc_size()).max(1);
    let dpb = (bs / dsize).max(1);
    let mut groups = None;
    if bpg > 0 && fdb < blocks {
        let group_count = (blocks - fdb).div_ceil(bpg);
        if group_count > (1u64 << 32) - dpb {
            push(
                findings,
                RuleId::SbGroupCount,
                format!("{group_count} groups, at most {}", (1u64 << 32) - dpb),
            );
        } else {
            groups = Some(group_count);
        }
    }
    if let Some(group_count) = groups {
        let want = group_count * ipg;
        if u64::from(sb.inodes_count) != want {
            findings.push(
                Finding::new(
                    RuleId::SbInodesCount,
                    None,
                    format!(
                        "inode count is {}, should be {want} ({group_count} groups x {ipg})",
                        sb.inodes_count
                    ),
                )
                .with("stored", sb.inodes_count)
                .with("expected", want),
            );
        }
        let desc_blocks = group_count.div_ceil(dpb);
        if sb.has_incompat(INCOMPAT_META_BG) && u64::from(sb.first_meta_bg) > desc_blocks {
            findings.push(
                Finding::new(
                    RuleId::SbFirstMetaBg,
                    None,
                    format!(
                        "first_meta_bg is {}, at most {desc_blocks} (descriptor blocks)",
                        sb.first_meta_bg
                    ),
                )
                .with("stored", sb.first_meta_bg)
                .with("expected_max", desc_blocks),
            );
        }
    }
}

/// Reserved blocks at most half the filesystem, reserved GDT blocks at most a block of block
/// numbers (`check_super_value` on `r_blocks_count` and `reserved_gdt_blocks`).
fn check_reserved_counts(sb: &Superblock, bs: u64, findings: &mut Findings) {
    let blocks = sb.blocks_count();
    if sb.r_blocks_count() > blocks / 2 {
        findings.push(
            Finding::new(
                RuleId::SbRBlocksCount,
                None,
                format!(
                    "reserved block count is {}, at most {} (half the blocks)",
                    sb.r_blocks_count(),
                    blocks / 2
                ),
            )
            .with("stored", sb.r_blocks_count()),
        );
    }
    if u64::from(sb.reserved_gdt_blocks) > bs / 4 {
        findings.push(
            Finding::new(
                RuleId::SbReservedGdtBlocks,
                None,
                format!(
                    "reserved GDT blocks is {}, at most {}",
                    sb.reserved_gdt_blocks,
                    bs / 4
                ),
            )
            .with("stored", sb.reserved_gdt_blocks),
        );
    }
}

/// Feature combinations libext2fs, the kernel or e2fsck refuse.
fn check_feature_combinations(sb: &Superblock, findings: &mut Findings) {
    let bigalloc = sb.is_bigalloc();
    if sb.has_metadata_csum() && sb.has_ro_compat(RO_COMPAT_GDT_CSUM) {
        push(
            findings,
            RuleId::SbFeatureCsumRedundant,
            "metadata_csum and uninit_bg are both set; uninit_bg is ignored".into(),
        );
    }
    if sb.has_incompat(INCOMPAT_CSUM_SEED) && !sb.has_metadata_csum() {
        push(
            findings,
            RuleId::SbFeatureCsumSeed,
            "metadata_csum_seed is set without metadata_csum".into(),
        );
    }
    if sb.is_64bit() && !sb.has_incompat(INCOMPAT_EXTENTS) {
        push(
            findings,
            RuleId::SbFeature64bitExtents,
            "64bit is set without extent".into(),
        );
    }
    if sb.has_compat(COMPAT_RESIZE_INODE) && sb.has_incompat(INCOMPAT_META_BG) {
        push(
            findings,
            RuleId::SbFeatureResizeMetaBg,
            "resize_inode and meta_bg are both set; they cannot be used together".into(),
        );
    }
    if bigalloc && !sb.has_incompat(INCOMPAT_EXTENTS) {
        push(
            findings,
            RuleId::SbFeatureBigallocExtents,
            "bigalloc is set without extent".into(),
        );
    }
}

/// Free block and inode totals against the counts.
fn check_totals(sb: &Superblock, findings: &mut Findings) {
    let blocks = sb.blocks_count();
    if sb.free_blocks_count() > blocks {
        findings.push(
            Finding::new(
                RuleId::SbFreeBlocksTotal,
                None,
                format!(
                    "free blocks count is {}, more than the {blocks} blocks",
                    sb.free_blocks_count()
                ),
            )
            .with("stored", sb.free_blocks_count()),
        );
    }
    if sb.free_inodes_count > sb.inodes_count {
        findings.push(
            Finding::new(
                RuleId::SbFreeInodesTotal,
                None,
                format!(
                    "free inodes count is {}, more than the {} inodes",
                    sb.free_inodes_count, sb.inodes_count
                ),
            )
            .with("stored", sb.free_inodes_count),
        );
    }
}

/// Last mount and last write times (40-bit) not in the future, printed as dates.
fn check_times(sb: &Superblock, now: u64, findings: &mut Findings) {
    let now_i = i64::try_from(now).unwrap_or(i64::MAX);
    // e2fsck accepts up to a day of clock skew (accept_time_fudge).
    let times = [
        (
            "last mount",
            i64::from(sb.mtime) | (i64::from(sb.mtime_hi) << 32),
        ),
        (
            "last write",
            i64::from(sb.wtime) | (i64::from(sb.wtime_hi) << 32),
        ),
    ];
    for (what, time) in times {
        if time > now_i.saturating_add(86400) {
            findings.push(
                Finding::new(
                    RuleId::SbTimeFuture,
                    None,
                    format!(
                        "{what} time {} is in the future (now {})",
                        super::state::utc_date(time),
                        super::state::utc_date(now_i)
                    ),
                )
                .with_time("stored", time)
                .with_time("now", now_i),
            );
        }
    }
}

/// The advice finding when the primary superblock is unusable.
pub(super) fn use_backup_finding(backups: &[(u64, u64)]) -> Finding {
    match backups.first() {
        Some(&(blk, bs)) => {
            let list: Vec<String> = backups
                .iter()
                .map(|(b, s)| format!("-o superblock={b} -o blocksize={s}"))
                .collect();
            Finding::new(
                RuleId::SbUseBackup,
                None,
                format!(
                    "the primary superblock is bad; valid backups: {} (e2fsck -b {blk} -B {bs})",
                    list.join(", ")
                ),
            )
            .with("superblock", blk)
            .with("blocksize", bs)
        }
        None => Finding::new(
            RuleId::SbUseBackup,
            None,
            "the primary superblock is bad and no backup superblock looks valid",
        ),
    }
}

/// Compare every backup superblock with the primary on what e2fsck compares.
pub(super) fn check_backups(fs: &Filesystem, findings: &mut Findings) {
    let geo = &fs.geo;
    let primary = &fs.sb;
    const IGNORE_IN: u32 = INCOMPAT_EXTENTS | INCOMPAT_RECOVER;
    const IGNORE_RO: u32 = RO_COMPAT_LARGE_FILE | RO_COMPAT_DIR_NLINK;
    for group in 1..geo.group_count {
        if !geo.bg_has_super(group) {
            continue;
        }
        let blk = geo.group_first_block(group);
        let Some(raw) = blk
            .checked_mul(geo.block_size)
            .and_then(|o| fs.source.try_read(o, SUPERBLOCK_SIZE as u64))
        else {
            findings.push(
                Finding::new(
                    RuleId::SbBackupInvalid,
                    Some(group),
                    format!("backup superblock at block {blk} lies beyond the end of the image"),
                )
                .with("block", blk),
            );
            continue;
        };
        let Ok(backup) = Superblock::parse(&raw) else {
            continue;
        };
        if backup.magic != EXT2_MAGIC
            || backup.rev_level > 1
            || backup.log_block_size > 6
            || backup.inode_size() < 128
        {
            findings.push(
                Finding::new(
                    RuleId::SbBackupInvalid,
                    Some(group),
                    format!(
                        "backup superblock at block {blk} is not valid (magic 0x{:04x})",
                        backup.magic
                    ),
                )
                .with("block", blk),
            );
            continue;
        }
        let mut diff = Vec::new();
        if primary.feature_compat != backup.feature_compat {
            diff.push(format!(
                "compat features {} vs {}",
                hex(backup.feature_compat),
                hex(primary.feature_compat)
            ));
        }
        if primary.feature_incompat & !IGNORE_IN != backup.feature_incompat & !IGNORE_IN {
            diff.push(format!(
                "incompat features {} vs {}",
                hex(backup.feature_incompat),
                hex(primary.feature_incompat)
            ));
        }
        if primary.feature_ro_compat & !IGNORE_RO != backup.feature_ro_compat & !IGNORE_RO {
            diff.push(format!(
                "ro_compat features {} vs {}",
                hex(backup.feature_ro_compat),
                hex(primary.feature_ro_compat)
            ));
        }
        if primary.blocks_count_lo != backup.blocks_count_lo
            || primary.blocks_count_hi != backup.blocks_count_hi
        {
            diff.push(format!(
                "block count {} vs {}",
                backup.blocks_count(),
                primary.blocks_count()
            ));
        }
        if primary.inodes_count != backup.inodes_count {
            diff.push(format!(
                "inode count {} vs {}",
                backup.inodes_count, primary.inodes_count
            ));
        }
        if primary.uuid != backup.uuid {
            diff.push("UUID differs".into());
        }
        if !diff.is_empty() {
            findings.push(
                Finding::new(
                    RuleId::SbBackupMismatch,
                    Some(group),
                    format!(
                        "backup superblock at block {blk} disagrees with the primary: {} (backup vs primary)",
                        diff.join(", ")
                    ),
                )
                .with("block", blk),
            );
        }
    }
}
