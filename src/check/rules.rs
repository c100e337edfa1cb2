//! The rule catalogue of `e4inspect check`, as data: a stable ID per rule, its severity, a one-line
//! description, the implementations that enforce the same condition, the e2fsck problem codes
//! that report it and what the kernel does with it.
//!
//! IDs are part of the interface (CI configurations match on them): never rename one, only add.
//!
//! **Severity is derived, not chosen** ([`derived_severity`], enforced by a unit test): a rule is
//! an `error` (exit 4) when the kernel refuses the damage (the mount fails, or an
//! `EXT4-fs error` on access), or else when one of its e2fsck problems leaves the filesystem
//! uncorrected under `e2fsck -n` (a prompted problem without `PR_NO_OK`, a fatal one, or one whose
//! caller aborts: [`super::problems`]), or else when libext2fs refuses to open it. It is a
//! `warning` (exit 0) when the kernel repairs it itself (orphans, lazy counters, journal
//! recovery), or when e2fsck reports it and accepts the "no". Where the kernel's verdict
//! overrides e2fsck's, `deviation` says why.

use serde::Serialize;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something a kernel, libext2fs or e2fsck refuses or repairs.
    Error,
    /// Suspicious or redundant, but tolerated everywhere.
    Warning,
}

impl Severity {
    /// Lower-case name, as printed.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// Who enforces a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum Enforcer {
    /// The kernel at mount time (or when it first uses the structure).
    #[serde(rename = "kernel")]
    Kernel,
    /// libext2fs `ext2fs_open2` (and so dumpe2fs, debugfs, e2fsck).
    #[serde(rename = "libext2fs-open")]
    LibOpen,
    /// libext2fs `ext2fs_check_desc` (e2fsck's descriptor sanity pass).
    #[serde(rename = "libext2fs-check-desc")]
    LibCheckDesc,
    /// e2fsck (super.c, journal.c, pass5.c).
    #[serde(rename = "e2fsck")]
    E2fsck,
}

impl Enforcer {
    /// Short name, as printed in the catalogue.
    pub fn name(self) -> &'static str {
        match self {
            Enforcer::Kernel => "kernel",
            Enforcer::LibOpen => "libext2fs-open",
            Enforcer::LibCheckDesc => "libext2fs-check-desc",
            Enforcer::E2fsck => "e2fsck",
        }
    }
}

/// One catalogue entry.
#[derive(Clone, Copy, Debug, Serialize, schemars::JsonSchema)]
pub struct Rule {
    /// The stable rule ID (`rule`, the same key as in findings).
    #[serde(rename = "rule")]
    pub id: RuleId,
    /// Error or warning.
    pub severity: Severity,
    /// What holds on a healthy filesystem.
    pub description: &'static str,
    /// Who enforces it (kernel, e2fsck, libext2fs).
    pub enforced_by: &'static [Enforcer],
    /// e2fsck problem codes (`e2fsck/problem.h`) reporting the same condition; their prompt and
    /// flags are in [`super::problems::PROBLEMS`].
    pub e2fsck: &'static [&'static str],
    /// What the kernel does with the damage.
    pub kernel: Kernel,
    /// Where this rule's severity deliberately differs from e2fsck's verdict, and why (empty
    /// when it does not).
    pub deviation: &'static str,
}

/// What the kernel does with a rule's damage (the function and its message).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kernel {
    /// The kernel does not look at it.
    None,
    /// The mount fails, or the first access is an `EXT4-fs error` (EFSCORRUPTED, EFSBADCRC, EIO).
    Refuses(&'static str),
    /// The kernel repairs it itself (at mount or lazily).
    Repairs(&'static str),
    /// The kernel mounts read-write and reads it (perhaps logging a warning).
    Accepts(&'static str),
}

impl Kernel {
    /// `refuses: ...`, `repairs: ...`, `accepts: ...` or `-`.
    pub fn describe(self) -> String {
        match self {
            Kernel::None => "-".into(),
            Kernel::Refuses(s) => format!("refuses: {s}"),
            Kernel::Repairs(s) => format!("repairs: {s}"),
            Kernel::Accepts(s) => format!("accepts: {s}"),
        }
    }
}

/// The severity the stated rule gives `rule` (see the module documentation): the kernel's verdict
/// when it refuses or repairs, else e2fsck's, else libext2fs's.
pub fn derived_severity(rule: &Rule) -> Severity {
    match rule.kernel {
        Kernel::Refuses(_) => Severity::Error,
        Kernel::Repairs(_) => Severity::Warning,
        Kernel::None | Kernel::Accepts(_) => e2fsck_severity(rule),
    }
}

/// The severity from e2fsck's problem flags (and libext2fs refusing to open) alone.
pub fn e2fsck_severity(rule: &Rule) -> Severity {
    use super::problems::{problem, Verdict};
    let uncorrected = rule
        .e2fsck
        .iter()
        .any(|c| problem(c).is_none_or(|p| p.verdict() != Verdict::Accepted));
    let unopened = rule
        .enforced_by
        .iter()
        .any(|e| matches!(e, Enforcer::LibOpen | Enforcer::LibCheckDesc));
    if uncorrected || unopened {
        Severity::Error
    } else {
        Severity::Warning
    }
}

impl Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A rule ID is one of the catalogue's strings.
impl schemars::JsonSchema for RuleId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RuleId".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let ids: Vec<&str> = RULES.iter().map(|r| r.id.as_str()).collect();
        schemars::json_schema!({
            "description": "A rule ID of the catalogue (`check --list-rules`).",
            "type": "string",
            "enum": ids,
        })
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

impl RuleId {
    /// The catalogue entry.
    pub fn rule(self) -> &'static Rule {
        &RULES[self as usize]
    }
    /// Severity from the catalogue.
    pub fn severity(self) -> Severity {
        self.rule().severity
    }
    /// The family: the ID up to the first dot (`sb`, `inode`, ...).
    pub fn family(self) -> &'static str {
        family(self.as_str())
    }
}

use Enforcer::{E2fsck as E, Kernel as K, LibCheckDesc as C, LibOpen as O};
use Severity::{Error as Err, Warning as Warn};

/// Defines [`RuleId`] (one variant per rule, so a mistyped rule cannot compile) and [`RULES`]
/// (the catalogue, in report order) from one table.
macro_rules! catalogue {
    ($($(#[$doc:meta])* $var:ident = $id:literal, $sev:ident, $desc:literal, [$($enf:ident),*], [$($pr:literal),*], $kernel:expr, $dev:literal;)*) => {
        /// A rule of the catalogue; [`RuleId::as_str`] is its stable dotted ID.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum RuleId {
            $($(#[$doc])* #[doc = concat!("`", $id, "`: ", $desc, ".")] $var,)*
        }

        impl RuleId {
            /// The stable dotted ID (`sb.magic`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(RuleId::$var => $id,)*
                }
            }
        }

        /// Every rule, in report order (the order of [`RuleId`]).
        pub const RULES: &[Rule] = &[
            $(Rule {
                id: RuleId::$var,
                severity: $sev,
                description: $desc,
                enforced_by: &[$($enf),*],
                e2fsck: &[$($pr),*],
                kernel: $kernel,
                deviation: $dev,
            },)*
        ];
    };
}

catalogue! {
    // filesystem state (what e2fsck judges before pass 1)
    StateErrors = "state.errors", Warn, "the superblock state is not \"with errors\" (the kernel met an error not yet repaired)", [K, E], [], Kernel::Accepts("ext4_setup_super: mounts, logging \"warning: mounting fs with errors, running e2fsck is recommended\""), "";
    StateErrorRecord = "state.error_record", Warn, "no error recorded by the kernel (s_error_count, first/last error)", [K], [], Kernel::Accepts("print_daily_error_info: logs the record"), "";
    StateNeedsRecovery = "state.needs_recovery", Warn, "the journal needs no recovery (a finished image, not one taken while mounted or after a crash)", [K, E], ["PR_0_JOURNAL_RUN", "PR_0_JOURNAL_RECOVERY_CLEAR"], Kernel::Repairs("ext4_load_journal: jbd2_journal_recover replays the journal at mount"), "";
    StateOrphanList = "state.orphan_list", Warn, "the orphan list (s_last_orphan) is empty", [K, E], ["PR_0_ORPHAN_CLEAR_INODE", "PR_0_ORPHAN_ILLEGAL_HEAD_INODE", "PR_1_LOW_DTIME"], Kernel::Repairs("ext4_orphan_cleanup: completes the deletions and truncations at mount"), "e2fsck -n leaves the list unprocessed, so an orphan further down the list is PR_1_LOW_DTIME and an unlinked one PR_1_ZERO_DTIME with bitmap differences (exit 4); the kernel completes the list at mount and reads every file (tests/check_severity.rs), so this is a warning and pass 1 and 5 judge orphans as the kernel finds them";
    StateOrphanFile = "state.orphan_file", Warn, "the orphan file lists no inode and orphan_present is clear", [K, E], ["PR_0_ORPHAN_FILE_BAD_MAGIC", "PR_6_ORPHAN_PRESENT_CLEAN_FILE", "PR_6_ORPHAN_PRESENT_NO_FILE"], Kernel::Repairs("ext4_orphan_cleanup: processes the orphan file at mount, clears orphan_present"), "e2fsck -n asks to clear orphan_present without orphan entries (PR_6_ORPHAN_PRESENT_CLEAN_FILE, exit 4); the kernel sets it while mounted and clears it at the next mount, so an image of a mounted filesystem is not damaged";
    StateOrphanFileBlock = "state.orphan_file_block", Err, "every orphan file block ends with the orphan block magic and, with metadata_csum, its checksum (crc32c of the block number and the inode slots, seeded with the orphan inode's seed)", [K, E], ["PR_6_ORPHAN_BLOCK_DIRTY", "PR_6_ORPHAN_FILE_CORRUPTED", "PR_0_ORPHAN_FILE_BAD_MAGIC", "PR_0_ORPHAN_FILE_BAD_CHECKSUM"], Kernel::Refuses("ext4_init_orphan_info: the mount fails, \"orphan file block N: bad magic\" or \"bad checksum\""), "";
    StateMounted = "state.mounted", Warn, "the block device is not mounted while checked", [E], [], Kernel::None, "";
    StateKbytesWritten = "state.kbytes_written", Warn, "lifetime writes (s_kbytes_written) plausible for the filesystem size", [], [], Kernel::None, "";
    StatePassesSkipped = "state.passes_skipped", Warn, "every pass ran: the input holds the blocks they read (a normal e2image file holds no backup superblock, journal, directory, extent tree or xattr block)", [], [], Kernel::None, "";
    // superblock
    SbMagic = "sb.magic", Err, "superblock magic is 0xEF53", [K, O, E], [], Kernel::Refuses("ext4_fill_super: \"VFS: Can't find ext4 filesystem\""), "";
    SbChecksumType = "sb.checksum_type", Err, "with metadata_csum, s_checksum_type is 1 (crc32c)", [K, O], [], Kernel::Refuses("ext4_fill_super: \"VFS: Found ext4 filesystem with unknown checksum algorithm\""), "";
    SbChecksum = "sb.checksum", Err, "with metadata_csum, the superblock crc32c matches s_checksum", [K, O, E], [], Kernel::Refuses("ext4_superblock_csum_verify: \"VFS: Found ext4 filesystem with invalid superblock checksum\""), "";
    SbRevLevel = "sb.rev_level", Err, "revision level is 0 or 1", [K, O], [], Kernel::Refuses("ext4_fill_super: rev_level above EXT4_MAX_SUPP_REV"), "";
    SbIncompatUnknown = "sb.incompat_unknown", Err, "no incompat feature bit unknown to libext2fs 1.47", [K, O], [], Kernel::Refuses("ext4_feature_set_ok: \"unsupported optional features\""), "";
    SbRoCompatUnknown = "sb.ro_compat_unknown", Err, "no ro_compat feature bit unknown to libext2fs 1.47 (read-write mounts refused)", [K, O], [], Kernel::Refuses("ext4_feature_set_ok: read-write mount refused (\"unsupported optional features\")"), "";
    SbBlockSize = "sb.block_size", Err, "block size is 1 KiB to 64 KiB (log_block_size <= 6)", [K, O, E], ["PR_0_SB_CORRUPT"], Kernel::Refuses("ext4_fill_super: \"Unsupported filesystem blocksize\""), "";
    SbClusterSize = "sb.cluster_size", Err, "cluster size equals block size, or with bigalloc lies in [block size, 2^29]", [K, O, E], ["PR_0_MISC_CORRUPT_SUPER"], Kernel::Refuses("ext4_fill_super: \"Unsupported cluster size\""), "";
    SbLogGroupsPerFlex = "sb.log_groups_per_flex", Err, "log_groups_per_flex <= 31", [O], [], Kernel::None, "";
    SbInodeSize = "sb.inode_size", Err, "inode size is a power of two in [128, block size]", [K, O, E], ["PR_0_MISC_CORRUPT_SUPER"], Kernel::Refuses("ext4_fill_super: \"unsupported inode size\""), "";
    SbFirstIno = "sb.first_ino", Err, "first non-reserved inode lies in [11, inodes_count]", [K, E], ["PR_0_MISC_CORRUPT_SUPER"], Kernel::Refuses("ext4_fill_super: \"invalid first ino\""), "";
    SbExtraIsize = "sb.extra_isize", Err, "min/want extra isize are 0 or multiples of 4 in [4, inode size - 128]", [K, E], ["PR_0_BAD_MIN_EXTRA_ISIZE", "PR_0_BAD_WANT_EXTRA_ISIZE"], Kernel::Refuses("ext4_fill_super: \"bad s_want_extra_isize\" / \"bad s_min_extra_isize\""), "e2fsck asks in check_super_block and forgets the \"no\" at the ext2fs_mark_valid that follows (e2fsck -n exits 0); the kernel refuses the mount, so this is an error";
    SbDescSize = "sb.desc_size", Err, "with 64bit, descriptor size is a power of two in [64, 1024]", [K, O], [], Kernel::Refuses("ext4_fill_super: \"unsupported descriptor size\""), "";
    SbBlocksPerGroup = "sb.blocks_per_group", Err, "clusters per group in [8, min(8 x block size, 65528)], blocks = clusters x ratio", [K, O, E], ["PR_0_MISC_CORRUPT_SUPER"], Kernel::Refuses("ext4_fill_super: \"#blocks per group too big\""), "";
    SbInodesPerGroup = "sb.inodes_per_group", Err, "inodes per group in [inodes per block, min(8 x block size, 65536 - inodes per block)]", [K, O, E], ["PR_0_MISC_CORRUPT_SUPER"], Kernel::Refuses("ext4_fill_super: \"invalid inodes per group\""), "";
    SbFirstDataBlock = "sb.first_data_block", Err, "first data block is 1 for 1 KiB blocks without bigalloc, else 0, and below blocks_count", [K, O, E], ["PR_0_MISC_CORRUPT_SUPER"], Kernel::Refuses("ext4_fill_super: \"bad geometry: first data block is beyond end of filesystem\""), "";
    SbBlocksCountDevice = "sb.blocks_count_device", Err, "blocks_count x block size fits in the image or device", [K, E], ["PR_0_FS_SIZE_WRONG"], Kernel::Refuses("ext4_fill_super: \"bad geometry: block count exceeds size of device\""), "e2fsck asks in check_super_block and forgets the \"no\" at the ext2fs_mark_valid that follows (e2fsck -n exits 0); the kernel refuses the mount (block count beyond the device), so this is an error";
    SbGroupCount = "sb.group_count", Err, "group count below 2^32 - descriptors per block", [K, O], [], Kernel::Refuses("ext4_fill_super: \"groups count too large\""), "";
    SbInodesCount = "sb.inodes_count", Err, "inodes_count equals groups x inodes per group", [K, O, E], ["PR_0_INODE_COUNT_WRONG"], Kernel::Refuses("ext4_fill_super: \"inodes count not valid\""), "";
    SbRBlocksCount = "sb.r_blocks_count", Err, "reserved blocks at most half of blocks_count", [E], ["PR_0_MISC_CORRUPT_SUPER"], Kernel::None, "";
    SbReservedGdtBlocks = "sb.reserved_gdt_blocks", Err, "reserved GDT blocks at most block size / 4", [K, E], ["PR_0_MISC_CORRUPT_SUPER"], Kernel::Refuses("ext4_fill_super: \"Number of reserved GDT blocks insanely large\""), "";
    SbFirstMetaBg = "sb.first_meta_bg", Err, "with meta_bg, first_meta_bg <= descriptor blocks", [K, O, E], ["PR_0_FIRST_META_BG_TOO_BIG"], Kernel::Refuses("ext4_fill_super: \"First meta block group too large\""), "";
    SbFeatureCsumRedundant = "sb.feature_csum_redundant", Warn, "metadata_csum and uninit_bg (gdt_csum) are not both set", [K, E], ["PR_0_META_AND_GDT_CSUM_SET"], Kernel::Accepts("ext4_fill_super: \"metadata_csum and uninit_bg are redundant flags; please run fsck\", mounts"), "";
    SbFeatureCsumSeed = "sb.feature_csum_seed", Warn, "metadata_csum_seed only with metadata_csum", [E], ["PR_0_CSUM_SEED_WITHOUT_META_CSUM"], Kernel::None, "";
    SbFeature64bitExtents = "sb.feature_64bit_extents", Warn, "64bit needs extents to address the whole device (e2fsck offers to set extents and, answered no, accepts it: PR_NO_OK)", [E], ["PR_0_64BIT_WITHOUT_EXTENTS"], Kernel::None, "";
    SbFeatureResizeMetaBg = "sb.feature_resize_meta_bg", Warn, "resize_inode and meta_bg are not both set", [E], ["PR_0_DISABLE_RESIZE_INODE"], Kernel::None, "";
    SbFeatureBigallocExtents = "sb.feature_bigalloc_extents", Err, "bigalloc needs extents (read-write mounts refused)", [K], [], Kernel::Refuses("ext4_fill_super: \"Can't support bigalloc feature without extents feature\""), "e2fsck has no problem code for it (libext2fs opens the filesystem); the kernel refuses the mount, so this is an error";
    SbFreeBlocksTotal = "sb.free_blocks_total", Warn, "free blocks count at most blocks_count", [K, E], ["PR_0_FREE_BLOCK_COUNT"], Kernel::Repairs("ext4_fill_super: the free counters are recomputed from the descriptors (ext4_count_free_clusters)"), "";
    SbFreeInodesTotal = "sb.free_inodes_total", Warn, "free inodes count at most inodes_count", [K, E], ["PR_0_FREE_INODE_COUNT"], Kernel::Repairs("ext4_fill_super: the free counters are recomputed from the descriptors (ext4_count_free_inodes)"), "";
    SbTimeFuture = "sb.time_future", Warn, "last mount and last write times (40-bit) not in the future, printed as dates", [E], ["PR_0_FUTURE_SB_LAST_MOUNT", "PR_0_FUTURE_SB_LAST_WRITE"], Kernel::None, "";
    SbBackupMismatch = "sb.backup_mismatch", Warn, "backup superblocks agree with the primary on features, block/inode counts and UUID", [E], [], Kernel::None, "";
    SbBackupInvalid = "sb.backup_invalid", Warn, "every backup superblock location holds a valid superblock", [E], [], Kernel::None, "";
    SbUseBackup = "sb.use_backup", Warn, "when the primary superblock or descriptor table is unusable: the backup that would work", [E], [], Kernel::None, "";
    // group descriptors
    GdTableUnreadable = "gd.table_unreadable", Err, "the whole descriptor table lies inside the image", [O], [], Kernel::None, "";
    GdBlockBitmapRange = "gd.block_bitmap_range", Err, "block bitmap inside its group (inside the filesystem with flex_bg)", [K, C, E], ["PR_0_BB_NOT_GROUP"], Kernel::Refuses("ext4_check_descriptors: \"Block bitmap for group N not in group\""), "";
    GdInodeBitmapRange = "gd.inode_bitmap_range", Err, "inode bitmap inside its group (inside the filesystem with flex_bg)", [K, C, E], ["PR_0_IB_NOT_GROUP"], Kernel::Refuses("ext4_check_descriptors: \"Inode bitmap for group N not in group\""), "";
    GdInodeTableRange = "gd.inode_table_range", Err, "whole inode table inside its group (inside the filesystem with flex_bg)", [K, C, E], ["PR_0_ITABLE_NOT_GROUP"], Kernel::Refuses("ext4_check_descriptors: \"Inode table for group N not in group\""), "";
    GdOverlap = "gd.overlap", Err, "bitmaps and inode tables overlap no superblock, descriptor or reserved GDT block, nor each other", [K, C, E], ["PR_1_BB_CONFLICT", "PR_1_IB_CONFLICT", "PR_1_ITABLE_CONFLICT"], Kernel::Refuses("ext4_check_descriptors: \"overlaps superblock\" / \"overlaps block group descriptors\""), "";
    GdFreeBlocksRange = "gd.free_blocks_range", Warn, "free blocks count at most blocks per group", [E], ["E2FSCK_UNMARK_VALID"], Kernel::None, "";
    GdFreeInodesRange = "gd.free_inodes_range", Warn, "free inodes count at most inodes per group", [E], ["E2FSCK_UNMARK_VALID"], Kernel::None, "";
    GdUsedDirsRange = "gd.used_dirs_range", Warn, "directory count at most inodes per group", [E], ["E2FSCK_UNMARK_VALID"], Kernel::None, "";
    GdChecksum = "gd.checksum", Err, "descriptor checksum (crc16 for uninit_bg, crc32c & 0xFFFF for metadata_csum) matches", [K, E], ["PR_0_GDT_CSUM"], Kernel::Refuses("ext4_check_descriptors: \"Checksum for group N failed\""), "e2fsck asks in check_super_block and forgets the \"no\" at the ext2fs_mark_valid that follows (e2fsck -n exits 0); the kernel refuses the mount (f_uninit_enable: \"Structure needs cleaning\"), so this is an error";
    GdUninitWithoutCsum = "gd.uninit_without_csum", Warn, "no UNINIT flag and no unused-inode count without uninit_bg or metadata_csum", [E], ["PR_0_GDT_UNINIT"], Kernel::None, "";
    GdLastGroupBlockUninit = "gd.last_group_block_uninit", Warn, "the last group is not BLOCK_UNINIT", [E], ["PR_0_BB_UNINIT_LAST"], Kernel::None, "";
    GdItableUnused = "gd.itable_unused", Warn, "unused inode count at most free inodes and inodes per group", [E], ["PR_0_GDT_ITABLE_UNUSED"], Kernel::None, "";
    GdBackupMismatch = "gd.backup_mismatch", Warn, "the first backup descriptor table has the same bitmap and inode table locations", [], [], Kernel::None, "";
    // bitmaps
    BitmapUnreadable = "bitmap.unreadable", Err, "every initialised bitmap block lies inside the image", [E], ["E2FSCK_READ_BITMAPS"], Kernel::None, "";
    BitmapBlockCsum = "bitmap.block_csum", Err, "with metadata_csum, block bitmap crc32c matches the descriptor (hi half with 64-byte descriptors)", [K, E], ["PR_5_BLOCK_BITMAP_CSUM_INVALID"], Kernel::Refuses("ext4_validate_block_bitmap: \"bg N: bad block bitmap checksum\", group marked corrupt"), "";
    BitmapInodeCsum = "bitmap.inode_csum", Err, "with metadata_csum, inode bitmap crc32c matches the descriptor (hi half with 64-byte descriptors)", [K, E], ["PR_5_INODE_BITMAP_CSUM_INVALID"], Kernel::Refuses("ext4_read_inode_bitmap: \"Corrupt inode bitmap\", group marked corrupt"), "";
    BitmapBlockPadding = "bitmap.block_padding", Err, "block bitmap bits past the end of the filesystem are set", [E], ["PR_5_BLOCK_BMAP_PADDING"], Kernel::None, "";
    BitmapTailPadding = "bitmap.tail_padding", Err, "bitmap block bytes past clusters_per_group / 8 (inodes_per_group / 8) are 0xFF, as libext2fs and the kernel write them (libext2fs's read_bitmaps flags the tail, e2fsck's pass 5 offers to set it and, answered no, exits 4)", [E], ["PR_5_INODE_BMAP_PADDING", "PR_5_BLOCK_BMAP_PADDING"], Kernel::None, "";
    // counts
    CountGroupFreeBlocks = "count.group_free_blocks", Err, "descriptor free blocks equal the zero bits of the (UNINIT-adjusted) block bitmap", [E], ["PR_5_FREE_BLOCK_COUNT_GROUP"], Kernel::None, "";
    CountGroupFreeInodes = "count.group_free_inodes", Err, "descriptor free inodes equal the zero bits of the (UNINIT-adjusted) inode bitmap", [E], ["PR_5_FREE_INODE_COUNT_GROUP"], Kernel::None, "";
    CountSbFreeBlocks = "count.sb_free_blocks", Warn, "superblock free blocks equal the sum of the descriptors (the kernel updates it lazily)", [E], ["PR_5_FREE_BLOCK_COUNT"], Kernel::Repairs("ext4_fill_super: the free counters are recomputed from the descriptors"), "";
    CountSbFreeInodes = "count.sb_free_inodes", Warn, "superblock free inodes equal the sum of the descriptors (the kernel updates it lazily)", [E], ["PR_5_FREE_INODE_COUNT"], Kernel::Repairs("ext4_fill_super: the free counters are recomputed from the descriptors"), "";
    // journal
    JournalInode = "journal.inode", Err, "journal inode in range, in use, a regular file of at least 1024 blocks (EXT2_ET_JOURNAL_TOO_SMALL below), all blocks inside the filesystem", [K, E], ["PR_0_JOURNAL_BAD_INODE"], Kernel::Refuses("ext4_get_journal_inode: \"invalid journal inode\", or \"special inode unallocated\" from __ext4_iget when the inode on disk is not in use (before any recovery)"), "";
    JournalSuperblockMagic = "journal.superblock_magic", Err, "journal superblock magic is 0xC03B3998", [K, E], ["PR_0_JOURNAL_BAD_SUPER"], Kernel::Refuses("journal_get_superblock: \"JBD2: Invalid journal superblock magic\""), "";
    JournalSuperblockType = "journal.superblock_type", Err, "journal superblock block type is 3 (v1) or 4 (v2)", [K, E], ["PR_0_JOURNAL_UNSUPP_SUPER"], Kernel::Refuses("journal_get_superblock: \"JBD2: unrecognised superblock format ID\""), "";
    JournalFeatures = "journal.features", Err, "no unknown journal incompat feature; at most one checksum version", [K, E], ["PR_0_JOURNAL_UNSUPP_INCOMPAT"], Kernel::Refuses("load_superblock / jbd2_journal_check_used_features: unknown incompat feature"), "";
    JournalChecksum = "journal.checksum", Err, "with journal checksum v2/v3, checksum type is crc32c and the superblock checksum matches", [K, E], ["PR_0_JOURNAL_BAD_SUPER"], Kernel::Refuses("journal_get_superblock: \"JBD2: journal checksum error\""), "";
    JournalBlockSize = "journal.block_size", Err, "journal block size equals the filesystem block size", [K, E], ["PR_0_JOURNAL_UNSUPP_SUPER"], Kernel::Refuses("ext4_get_journal: journal block size differs"), "";
    JournalMaxlen = "journal.maxlen", Err, "journal s_maxlen fits in the journal inode (a journal superblock claiming more blocks than the journal has is \"journal too short\": e2fsck -n cannot proceed, exit 12)", [K, E], ["PR_0_JOURNAL_BAD_SUPER"], Kernel::Refuses("journal_get_superblock: \"JBD2: journal file too short\""), "";
    JournalFastCommitBlocks = "journal.fast_commit_blocks", Err, "with the journal's fast_commit feature, s_maxlen less the fast-commit area (s_num_fc_blks, 256 when 0) leaves at least 1024 blocks of log (\"incorrect fast commit blocks\": e2fsck -n cannot proceed, exit 12)", [K, E], ["PR_0_JOURNAL_BAD_SUPER"], Kernel::None, "";
    JournalUsers = "journal.users", Err, "an internal journal has at most one user", [E], ["PR_0_JOURNAL_UNSUPP_MULTIFS"], Kernel::None, "";
    JournalStartWithoutRecovery = "journal.start_without_recovery", Warn, "s_start is 0 when needs_recovery is clear (\"journal has data\": e2fsck offers to run or clear it and, answered no, ignores it and exits 0; the kernel does not replay it)", [E], ["PR_0_JOURNAL_RECOVERY_CLEAR", "PR_0_JOURNAL_RUN", "PR_0_JOURNAL_RESET_JOURNAL"], Kernel::Accepts("ext4_load_journal: replays only with needs_recovery; mounts"), "";
    JournalErrno = "journal.errno", Warn, "the journal superblock's s_errno is 0 (the kernel aborted the journal after an error; e2fsck moves it to the superblock's error state without a problem code and exits 0 with -n)", [K, E], [], Kernel::Repairs("ext4_clear_journal_err: \"Filesystem error recorded from previous mount\", moved to the superblock and cleared"), "";
    // multiple-mount protection
    MmpBlockRange = "mmp.block_range", Err, "with mmp, s_mmp_block lies inside the filesystem and the image (a file claiming it is block.multiply_claimed)", [K, E], ["PR_0_MMP_INVALID_BLK"], Kernel::Refuses("ext4_multi_mount_protect: \"Invalid MMP block in superblock\""), "";
    MmpMagic = "mmp.magic", Err, "the MMP block's magic is 0x004D4D50 (e2fsck refuses the filesystem, exit 12)", [K, E], ["PR_0_MMP_INVALID_MAGIC"], Kernel::Refuses("ext4_multi_mount_protect: \"Invalid MMP block\" (magic)"), "";
    MmpChecksum = "mmp.checksum", Err, "with metadata_csum, the MMP block's crc32c matches mmp_checksum (e2fsck refuses the filesystem, exit 12)", [K, E], ["PR_0_MMP_CSUM_INVALID"], Kernel::Refuses("read_mmp_block: MMP checksum failure"), "";
    MmpSequence = "mmp.sequence", Err, "the MMP sequence is clean or a node's counter, not e2fsck's marker (0xE24D4D50) nor an unknown value (e2fsck refuses the filesystem, exit 12)", [K, E], ["E2FSCK_MMP_BUSY"], Kernel::Refuses("ext4_multi_mount_protect: \"fsck is running on the filesystem\""), "";
    MmpInUse = "mmp.in_use", Warn, "the MMP sequence says clean: a node's counter means another node may have the filesystem mounted (named with its device and last update, as e2mmpstatus does)", [K, E], [], Kernel::Accepts("ext4_multi_mount_protect: waits two intervals and mounts when the sequence did not move"), "";
    JournalReplayed = "journal.replayed", Warn, "the image needs no recovery (when it does, its committed transactions are replayed in memory and the replayed state is checked, as e2fsck recovers then checks)", [], ["PR_0_JOURNAL_RUN"], Kernel::Repairs("ext4_load_journal: jbd2_journal_recover replays the committed transactions at mount"), "";
    JournalFastCommit = "journal.fast_commit", Warn, "no fast-commit transaction follows the log (when one does, e2fsck 1.47 and the kernel apply its tags after the replay; this read-only replay does not apply them and names each inode, block range and directory entry it leaves as the log has them; a stale fast-commit area, on which e2fsck 1.47 fails recovery and the kernel mounts, is reported here too)", [], [], Kernel::None, "";
    JournalUnreplayable = "journal.unreplayable", Err, "every committed transaction replays: descriptor, commit and data block checksums match and every logged block lies inside the filesystem", [K, E], ["PR_0_JNL_TXN_CORRUPT"], Kernel::Refuses("jbd2_journal_recover: \"journal transaction N is corrupt\" / \"Invalid checksum found in transaction N\", \"error loading journal\""), "e2fsck -n does not replay the journal (PR_0_JNL_TXN_CORRUPT is only printed during a replay) and exits 0; the kernel refuses the mount (\"error loading journal\", tested in tests/check_severity.rs), so a corrupt committed transaction, a bad commit block checksum included, is an error";
    // inode table walk (pass 1)
    InodeTableUnreadable = "inode.table_unreadable", Err, "every group's inode table (up to bg_itable_unused) lies inside the image", [E], ["PR_1_ISCAN_ERROR"], Kernel::None, "";
    InodeChecksum = "inode.checksum", Err, "with metadata_csum, every non-zero inode's checksum matches", [K, E], ["PR_1_INODE_ONLY_CSUM_INVALID"], Kernel::Refuses("__ext4_iget: \"iget: checksum invalid\" (EFSBADCRC)"), "";
    InodeZeroDtime = "inode.zero_dtime", Err, "a deleted inode (links count 0, mode set) has a deletion time", [E], ["PR_1_ZERO_DTIME"], Kernel::None, "";
    InodeDtime = "inode.dtime", Err, "an in-use inode has no deletion time (unless on the orphan list)", [E], ["PR_1_SET_DTIME", "PR_1_ROOT_DTIME"], Kernel::None, "";
    InodeRootNotDir = "inode.root_not_dir", Err, "the root inode is a directory", [K, E], ["PR_1_ROOT_NO_DIR"], Kernel::Refuses("ext4_fill_super: \"corrupt root inode, run e2fsck\""), "";
    InodeReserved = "inode.reserved", Err, "reserved inodes: journal and quota inodes are regular files (or clear when the feature is off), the others have mode 0", [E], ["PR_1_RESERVED_BAD_MODE", "PR_1_JOURNAL_BAD_MODE", "PR_1_JOURNAL_INODE_NOT_CLEAR", "PR_1_QUOTA_BAD_MODE", "PR_1_QUOTA_INODE_NOT_CLEAR"], Kernel::None, "";
    InodeMode = "inode.mode", Err, "the mode names a valid file type", [K, E], ["PR_2_BAD_MODE"], Kernel::Refuses("__ext4_iget: \"iget: bogus i_mode\""), "";
    InodeFlags = "inode.flags", Err, "flag combinations: EXTENTS/INLINE_DATA/CASEFOLD/INDEX only with their feature and file type, not both EXTENTS and INLINE_DATA", [K, E], ["PR_1_EXTENT_FEATURE", "PR_1_INLINE_DATA_FEATURE", "PR_1_HTREE_SET", "PR_1_HTREE_NODIR", "PR_1_CASEFOLD_NONDIR", "PR_1_CASEFOLD_FEATURE"], Kernel::None, "";
    InodeSpecialImmutable = "inode.special_immutable", Warn, "no IMMUTABLE or APPEND flag on a device, FIFO or socket (e2fsck offers to clear it and, answered no, accepts it: PR_NO_OK)", [E], ["PR_1_SET_IMMUTABLE"], Kernel::Accepts("__ext4_iget: reads it; the flag only refuses writes"), "";
    InodeExtraIsize = "inode.extra_isize", Err, "i_extra_isize is 0 or a multiple of 4 in [4, inode size - 128]", [K, E], ["PR_1_EXTRA_ISIZE"], Kernel::Refuses("ext4_iget_extra_inode / __ext4_iget: \"iget: bad extra_isize\""), "";
    InodeSize = "inode.size", Err, "i_size covers the initialised blocks of a file; a directory's size is whole blocks matching its last block; special files have size 0", [E], ["PR_1_BAD_I_SIZE", "PR_1_SET_NONZSIZE"], Kernel::None, "";
    InodeZeroLengthDir = "inode.zero_length_dir", Err, "a directory holds at least one block (or inline data)", [E], ["PR_1_ZERO_LENGTH_DIR"], Kernel::None, "";
    InodeBlocks = "inode.blocks", Err, "i_blocks equals the blocks (clusters with bigalloc) held: data, mapping or tree blocks and the xattr block", [E], ["PR_1_BAD_I_BLOCKS"], Kernel::None, "";
    InodeSymlink = "inode.symlink", Err, "a symlink's size equals its target length: in i_block when fast, in one block below the block size when slow", [K, E], ["PR_2_INVALID_SYMLINK"], Kernel::None, "";
    InodeDevice = "inode.device", Err, "device, FIFO and socket inodes carry no INDEX, EXTENTS or INLINE_DATA flag", [E], ["PR_2_BAD_CHAR_DEV", "PR_2_BAD_BLOCK_DEV", "PR_2_BAD_FIFO", "PR_2_BAD_SOCKET"], Kernel::None, "";
    InodeInlineData = "inode.inline_data", Err, "an INLINE_DATA inode has its system.data attribute in the inode", [K, E], ["PR_1_INLINE_DATA_NO_ATTR"], Kernel::Refuses("ext4_find_inline_data_nolock: no system.data attribute (EFSCORRUPTED)"), "";
    InodeBadBlocksInode = "inode.bad_blocks_inode", Err, "the bad-blocks inode (1) has no mode, owner, group, link count, INLINE_DATA flag or xattr block", [E], ["PR_1_INVALID_BAD_INODE"], Kernel::None, "";
    InodeQuotaInum = "inode.quota_inum", Err, "the superblock's quota inode numbers are 0, a reserved quota inode (3, 4) or a normal inode in range", [E], ["PR_0_INVALID_QUOTA_INO"], Kernel::Refuses("ext4_quota_enable: \"Bad quota inum\", the quota-featured mount fails"), "e2fsck asks in check_super_block and forgets the \"no\" at the ext2fs_mark_valid that follows; the kernel refuses the mount (f_quota_invalid_inum), so this is an error";
    InodeEncryptionContext = "inode.encryption_context", Err, "an inode with the ENCRYPT flag has an encryption context (xattr \"c\"): version 1 of 28 bytes or version 2 of 40 bytes (other versions are accepted as unrecognised)", [K, E], ["PR_1_MISSING_ENCRYPTION_XATTR", "PR_1_CORRUPT_ENCRYPTION_XATTR"], Kernel::None, "";
    InodeImagic = "inode.imagic", Err, "the IMAGIC flag only with the imagic_inodes feature", [E], ["PR_1_SET_IMAGIC"], Kernel::None, "";
    InodeBigallocBlockmap = "inode.bigalloc_blockmap", Err, "with bigalloc, inodes holding blocks are extent-mapped", [K, E], ["PR_1_NO_BIGALLOC_BLOCKMAP_FILES"], Kernel::None, "";
    InodeTimeEpoch = "inode.time_epoch", Warn, "no timestamp with its sign bit and both epoch bits set (a pre-1970 time stored in the old encoding, read as 2310-2378; e2fsck offers to fix it and exits 0)", [E], ["PR_1_EA_TIME_OUT_OF_RANGE"], Kernel::None, "";
    InodeUnusedFields = "inode.unused_fields", Err, "fields the features leave unused are 0: i_faddr, a directory's i_size_high without largedir, i_blocks_hi without huge_file, i_file_acl_hi without 64bit (not checked for Hurd)", [E], ["PR_2_FADDR_ZERO", "PR_2_DIR_SIZE_HIGH_ZERO", "PR_2_BLOCKS_HI_ZERO", "PR_2_I_FILE_ACL_HI_ZERO"], Kernel::None, "";
    InodeLargeFile = "inode.large_file", Err, "a regular file of 2 GiB or more only with the large_file feature", [K, E], ["PR_2_FEATURE_LARGE_FILES"], Kernel::None, "";
    // extent trees
    ExtentHeader = "extent.header", Err, "extent tree nodes have the magic, a depth one below their parent (at most 5), entry counts within the node, and no node referenced twice", [K, E], ["PR_1_MISSING_EXTENT_HEADER", "PR_1_READ_EXTENT", "PR_1_EXTENT_HEADER_INVALID"], Kernel::Refuses("__ext4_ext_check: \"pblk N bad header/extent: invalid magic / unexpected eh_depth / invalid eh_entries\" (EFSCORRUPTED)"), "e2fsck passes a leaf extent block whose eh_depth is not its parent's minus one (it reads the tree by position); the kernel refuses the inode with EFSCORRUPTED on first access, so this is an error";
    ExtentChecksum = "extent.checksum", Err, "with metadata_csum, every extent tree block's checksum matches", [K, E], ["PR_1_EXTENT_ONLY_CSUM_INVALID"], Kernel::Refuses("__ext4_ext_check: \"extent tree block checksum invalid\" (EFSBADCRC)"), "";
    ExtentBlockRange = "extent.block_range", Err, "extents and index entries point inside the filesystem", [K, E], ["PR_1_EXTENT_BAD_START_BLK", "PR_1_EXTENT_ENDS_BEYOND"], Kernel::Refuses("__ext4_ext_check / ext4_valid_extent_entries: \"invalid extent entries\""), "";
    ExtentOrder = "extent.order", Err, "leaf extents are in logical order and do not overlap", [K, E], ["PR_1_OUT_OF_ORDER_EXTENTS", "PR_1_EXTENT_END_OUT_OF_BOUNDS", "PR_1_EXTENT_COLLISION"], Kernel::Refuses("ext4_valid_extent_entries: overlapping or unsorted extents (EFSCORRUPTED)"), "";
    ExtentIndexStart = "extent.index_start", Err, "an index entry's logical block equals its child's first entry", [E], ["PR_1_EXTENT_INDEX_START_INVALID"], Kernel::None, "";
    ExtentUninitDir = "extent.uninit_dir", Err, "a directory has no uninitialised extent", [E], ["PR_1_UNINIT_DBLOCK"], Kernel::None, "";
    ExtentDirHole = "extent.dir_hole", Err, "an extent-mapped directory has no hole between its blocks", [E], ["PR_1_COLLAPSE_DBLOCK"], Kernel::None, "";
    ExtentOptimizable = "extent.optimizable", Warn, "no extent tree level could be narrower or shorter (e2fsck offers to optimise it, and exits 0)", [E], ["PR_1E_CAN_NARROW_EXTENT_TREE", "PR_1E_CAN_COLLAPSE_EXTENT_TREE", "PR_1_EXTENT_BAD_MAX_DEPTH"], Kernel::None, "";
    ExtentEntry = "extent.entry", Err, "leaf extents have a non-zero length", [E], ["PR_1_EXTENT_LENGTH_ZERO"], Kernel::None, "";
    ExtentMisalignedCluster = "extent.misaligned_cluster", Err, "with bigalloc, an extent sits at the same offset in its logical and its physical cluster, and a logical cluster maps to one physical cluster", [K, E], ["PR_1_MISALIGNED_CLUSTER"], Kernel::None, "";
    // block maps
    BlockmapRange = "blockmap.range", Err, "direct and indirect block numbers lie inside the filesystem; no mapping block is met twice", [K, E], ["PR_1_ILLEGAL_BLOCK_NUM", "PR_1_BB_ILLEGAL_BLOCK_NUM"], Kernel::Refuses("ext4_ind_map_blocks / __ext4_check_blockref: \"invalid block\" (EFSCORRUPTED)"), "";
    // extended attributes
    XattrIbody = "xattr.ibody", Err, "in-inode xattr entries lie inside the inode with valid names, offsets and sizes", [K, E], ["PR_1_ATTR_NAME_LEN", "PR_1_ATTR_VALUE_OFFSET", "PR_1_ATTR_VALUE_SIZE", "PR_1_INODE_EA_ALLOC_COLLISION"], Kernel::Refuses("xattr_check_inode / ext4_xattr_ibody_get: \"corrupted in-inode xattr\""), "";
    XattrBlockRange = "xattr.block_range", Err, "i_file_acl is inside the filesystem, and only with the ext_attr feature", [K, E], ["PR_2_FILE_ACL_BAD", "PR_2_FILE_ACL_ZERO"], Kernel::None, "";
    XattrBlock = "xattr.block", Err, "xattr blocks have the magic, h_blocks = 1, entries and values inside the block", [K, E], ["PR_1_BAD_EA_BLOCK", "PR_1_READ_EA_BLOCK", "PR_1_EA_ALLOC_COLLISION", "PR_1_EA_BAD_NAME", "PR_1_EA_BAD_VALUE"], Kernel::Refuses("ext4_xattr_block_get / __ext4_xattr_check_block: \"corrupted xattr block\""), "";
    XattrChecksum = "xattr.checksum", Err, "with metadata_csum, xattr block checksums match", [K, E], ["PR_1_EA_BLOCK_ONLY_CSUM_INVALID"], Kernel::Refuses("__ext4_xattr_check_block: xattr block checksum invalid (EFSBADCRC)"), "";
    XattrHash = "xattr.hash", Err, "xattr entry hashes match their name and value", [K, E], ["PR_1_ATTR_HASH"], Kernel::None, "";
    XattrRefcount = "xattr.refcount", Err, "an xattr block's h_refcount equals the number of in-use inodes referring to it", [E], ["PR_1_EXTATTR_REFCOUNT"], Kernel::None, "";
    XattrEaInode = "xattr.ea_inode", Err, "a value in an EA inode points to an in-use inode with EA_INODE set holding the value size", [K, E], ["PR_1_ATTR_NO_EA_INODE_FL", "PR_1_ATTR_VALUE_EA_INODE"], Kernel::None, "";
    XattrIbodyHash = "xattr.ibody_hash", Err, "in-inode xattr entries with a non-zero e_hash match their name and value (0 is allowed: older kernels and libext2fs store none)", [E], ["PR_1_ATTR_HASH"], Kernel::None, "";
    XattrEaInodeHash = "xattr.ea_inode_hash", Err, "an entry whose value is in an EA inode has e_hash = hash of its name and the EA inode's value hash (i_atime), unless the EA inode points back to its owner (Lustre: i_mtime = owner, same generation)", [K, E], ["PR_1_ATTR_HASH"], Kernel::None, "";
    XattrEaInodeRefcount = "xattr.ea_inode_refcount", Err, "an EA inode's stored reference count (i_ctime << 32 | i_version) equals the xattr entries that refer to it (an xattr block's entries count once)", [K, E], ["PR_4_EA_INODE_REF_COUNT"], Kernel::None, "";
    // block ownership
    BlockMultiplyClaimed = "block.multiply_claimed", Err, "every block is claimed once: by metadata or by one inode (xattr blocks shared as their refcount says)", [E], ["PR_1B_DUP_BLOCK", "PR_1D_DUP_FILE", "PR_1D_SHARE_METADATA", "PR_1_BLOCK_OVERLAPS_METADATA"], Kernel::None, "";
    // quotas (after pass 1, as e2fsck's pass 6 compares them)
    QuotaFeature = "quota.feature", Warn, "the quota feature comes with at least one quota inode, and quota inode numbers only with the feature (e2fsck -n accepts both; -y creates or clears the inodes)", [E], [], Kernel::None, "";
    QuotaInodeType = "quota.inode_type", Err, "each quota inode the superblock names is an in-use regular file", [E], ["PR_1_QUOTA_BAD_MODE"], Kernel::None, "";
    QuotaFile = "quota.file", Err, "each quota file has the QFMT_VFS_V1 header of its type, a sane info block (dqi_blocks within the file, free block and entry below it) and a tree without references past dqi_blocks, cycles or miscounted data blocks", [K, E], ["PR_6_UPDATE_QUOTAS"], Kernel::None, "";
    QuotaUsage = "quota.usage", Err, "the space and inodes stored per user, group and project ID equal what the inodes add up to (e2fsck: [QUOTA WARNING] Usage inconsistent for ID, Missing quota entry ID; exit 4)", [E], ["PR_6_UPDATE_QUOTAS"], Kernel::None, "";
    // usage (pass 5)
    UsageBlockBitmap = "usage.block_bitmap", Err, "the block bitmaps mark exactly the blocks in use (metadata and inode claims)", [E], ["PR_5_BLOCK_USED", "PR_5_BLOCK_UNUSED", "PR_5_BLOCK_RANGE_USED", "PR_5_BLOCK_RANGE_UNUSED"], Kernel::None, "";
    UsageInodeBitmap = "usage.inode_bitmap", Err, "the inode bitmaps mark exactly the inodes in use", [E], ["PR_5_INODE_USED", "PR_5_INODE_UNUSED", "PR_5_INODE_RANGE_USED", "PR_5_INODE_RANGE_UNUSED"], Kernel::None, "";
    UsageGroupFreeBlocks = "usage.group_free_blocks", Err, "each group's free blocks count equals its computed free blocks", [E], ["PR_5_FREE_BLOCK_COUNT_GROUP"], Kernel::None, "";
    UsageGroupFreeInodes = "usage.group_free_inodes", Err, "each group's free inodes count equals its computed free inodes", [E], ["PR_5_FREE_INODE_COUNT_GROUP"], Kernel::None, "";
    UsageGroupDirs = "usage.group_dirs", Err, "each group's directory count equals its in-use directories", [E], ["PR_5_FREE_DIR_COUNT_GROUP"], Kernel::None, "";
    UsageFreeBlocks = "usage.free_blocks", Warn, "the superblock free blocks count equals the computed total (the kernel updates it lazily)", [E], ["PR_5_FREE_BLOCK_COUNT"], Kernel::Repairs("ext4_fill_super: the free counters are recomputed from the descriptors"), "";
    UsageFreeInodes = "usage.free_inodes", Warn, "the superblock free inodes count equals the computed total (the kernel updates it lazily)", [E], ["PR_5_FREE_INODE_COUNT"], Kernel::Repairs("ext4_fill_super: the free counters are recomputed from the descriptors"), "";
    // directories (pass 2)
    DirBlockUnreadable = "dir.block_unreadable", Err, "every block of an in-use directory can be mapped and read", [K, E], ["PR_2_READ_DIRBLOCK"], Kernel::Refuses("__ext4_read_dirblock: EIO"), "";
    DirEntryCorrupt = "dir.entry_corrupt", Err, "directory entries: rec_len >= 12, a multiple of 4, inside the block, at least name_len + 8", [K, E], ["PR_2_DIR_CORRUPTED", "PR_2_FINAL_RECLEN"], Kernel::Refuses("__ext4_check_dir_entry: \"bad entry in directory: rec_len ...\""), "";
    DirMissingDot = "dir.missing_dot", Err, "the first entry of block 0 is '.'", [E], ["PR_2_MISSING_DOT", "PR_2_1ST_NOT_DOT", "PR_2_DOT_NULL_TERM"], Kernel::None, "";
    DirDotInode = "dir.dot_inode", Err, "'.' names the directory itself", [E], ["PR_2_BAD_INODE_DOT"], Kernel::None, "";
    DirMissingDotdot = "dir.missing_dotdot", Err, "the second entry of block 0 is '..'", [E], ["PR_2_MISSING_DOT_DOT", "PR_2_2ND_NOT_DOT_DOT", "PR_2_DOT_DOT_NULL_TERM"], Kernel::None, "";
    DirLinkDot = "dir.link_dot", Err, "no entry other than '.' names the directory itself", [E], ["PR_2_LINK_DOT"], Kernel::None, "";
    DirBadInode = "dir.bad_inode", Err, "entry inode numbers are the root or in [first_ino, inodes_count]", [K, E], ["PR_2_BAD_INO"], Kernel::Refuses("__ext4_check_dir_entry: \"inode out of bounds\""), "";
    DirDupDot = "dir.dup_dot", Err, "'.' and '..' appear only as the first two entries", [E], ["PR_2_DUP_DOT", "PR_2_DUP_DOT_DOT"], Kernel::None, "";
    DirLinkRoot = "dir.link_root", Err, "no entry other than '..' names the root directory", [E], ["PR_2_LINK_ROOT"], Kernel::None, "";
    DirNullName = "dir.null_name", Err, "entry names are not empty", [E], ["PR_2_NULL_NAME"], Kernel::None, "";
    DirInodeUninit = "dir.inode_uninit", Err, "entries name no inode in an INODE_UNINIT group or the unused tail of an inode table", [E], ["PR_2_INOREF_BG_INO_UNINIT", "PR_2_INOREF_IN_UNUSED"], Kernel::None, "";
    DirUnusedInode = "dir.unused_inode", Err, "entries name in-use inodes (links_count > 0)", [E], ["PR_2_UNUSED_INODE"], Kernel::None, "";
    DirBadName = "dir.bad_name", Err, "names contain no '/' and no NUL", [E], ["PR_2_BAD_NAME"], Kernel::None, "";
    DirEncryptedName = "dir.encrypted_name", Err, "names in encrypted directories are at least one cipher block (16 bytes)", [E], ["PR_2_BAD_ENCRYPTED_NAME"], Kernel::None, "";
    DirEncodedName = "dir.encoded_name", Err, "names in casefolded directories with strict encoding are valid UTF-8", [K, E], ["PR_2_BAD_ENCODED_NAME"], Kernel::None, "";
    DirFiletype = "dir.filetype", Err, "the entry's file type matches the inode's mode (0 without the filetype feature)", [E], ["PR_2_BAD_FILETYPE", "PR_2_CLEAR_FILETYPE"], Kernel::None, "";
    DirFiletypeUnset = "dir.filetype_unset", Warn, "with the filetype feature, no entry has file type 0 (unknown): e2fsck sets it silently when repairing and accepts it with -n (PR_2_SET_FILETYPE has PR_NO_OK); the kernel reads DT_UNKNOWN and looks the inode up", [E], ["PR_2_SET_FILETYPE"], Kernel::Accepts("ext4_readdir: returns DT_UNKNOWN"), "";
    DirLinkDir = "dir.link_dir", Err, "a directory has one name (no hard links to directories)", [E], ["PR_2_LINK_DIR"], Kernel::None, "";
    DirDuplicateName = "dir.duplicate_name", Err, "names are unique within a directory (casefolded in casefolded directories)", [E], ["PR_2_DUPLICATE_DIRENT", "PR_2_REPORT_DUP_DIRENT", "PR_2_NON_UNIQUE_FILE"], Kernel::None, "";
    DirCsumMissing = "dir.csum_missing", Err, "with metadata_csum, every directory leaf block ends in a checksum tail", [K, E], ["PR_2_LEAF_NODE_MISSING_CSUM"], Kernel::Refuses("__ext4_read_dirblock: \"No space for directory leaf checksum\""), "";
    DirHole = "dir.hole", Err, "a directory's blocks below its last one are all allocated (no holes)", [E], ["PR_2_DIRECTORY_HOLE"], Kernel::None, "";
    DirUnencryptedEntry = "dir.unencrypted_entry", Err, "entries of an encrypted directory name encrypted files, directories and symlinks", [K, E], ["PR_2_UNENCRYPTED_FILE"], Kernel::None, "";
    DirCsum = "dir.csum", Err, "with metadata_csum, the directory block crc32c matches its tail", [K, E], ["PR_2_LEAF_NODE_ONLY_CSUM_INVALID"], Kernel::Refuses("__ext4_read_dirblock: \"Directory block failed checksum\""), "";
    DirEncryptionPolicy = "dir.encryption_policy", Err, "the encrypted files, directories and symlinks of an encrypted directory use the directory's encryption policy", [K, E], ["PR_2_INCONSISTENT_ENCRYPTION_POLICY"], Kernel::None, "";
    DirBbInode = "dir.bb_inode", Err, "entries name no inode whose inode table block is in the bad-blocks list", [E], ["PR_2_BB_INODE"], Kernel::None, "";
    // htree directories (pass 2)
    HtreeRoot = "htree.root", Err, "the dx root: '.' and '..', reserved field 0, info length at least 8", [K, E], ["PR_2_HTREE_BAD_ROOT", "PR_1_HTREE_BADROOT"], Kernel::Refuses("dx_probe: \"Unrecognised inode hash code\" / \"Unimplemented hash flags\" / bad root"), "";
    HtreeHashVersion = "htree.hash_version", Err, "the dx root's hash version is legacy, half_md4 or tea (siphash with casefold + encryption)", [K, E], ["PR_1_HTREE_HASHV"], Kernel::Refuses("dx_probe: \"Unrecognised inode hash code\""), "";
    HtreeDepth = "htree.depth", Err, "indirect levels below 2 (3 with largedir); index nodes where the levels say", [K, E], ["PR_1_HTREE_DEPTH", "PR_2_HTREE_BAD_DEPTH"], Kernel::Refuses("dx_probe: \"Unimplemented hash depth\""), "";
    HtreeLimit = "htree.limit", Err, "each index block's limit equals the entries that fit (minus the dx tail with metadata_csum)", [K, E], ["PR_2_HTREE_BAD_LIMIT"], Kernel::Refuses("dx_probe: \"dx entry: limit != root limit\""), "";
    HtreeCount = "htree.count", Err, "each index block's count is 1..=limit", [K, E], ["PR_2_HTREE_BAD_COUNT"], Kernel::Refuses("dx_probe: \"dx entry: no count or count > limit\""), "";
    HtreeBlock = "htree.block", Err, "index entries point inside the directory", [K, E], ["PR_2_HTREE_BADBLK"], Kernel::Refuses("dx_probe / ext4_read_dirblock: block beyond the directory"), "";
    HtreeHashOrder = "htree.hash_order", Err, "index entry hashes are in ascending order", [E], ["PR_2_HTREE_HASH_ORDER"], Kernel::None, "";
    HtreeLeafHash = "htree.leaf_hash", Err, "every name in a leaf hashes into the range its index entry gives (superblock seed, signed/unsigned, casefold)", [E], ["PR_2_HTREE_MIN_HASH", "PR_2_HTREE_MAX_HASH"], Kernel::None, "";
    HtreeRefs = "htree.refs", Err, "each htree block is referenced by one index entry", [E], ["PR_2_HTREE_DUPREF", "PR_2_HTREE_NOTREF"], Kernel::None, "";
    HtreeCsum = "htree.csum", Err, "with metadata_csum, dx root and node tail checksums match", [K, E], ["PR_2_HTREE_ROOT_CSUM_INVALID", "PR_2_HTREE_NODE_CSUM_INVALID"], Kernel::Refuses("__ext4_read_dirblock: \"Directory index failed checksum\""), "";
    HtreeSiphash = "htree.siphash", Err, "an htree directory that is both encrypted and casefolded uses SipHash (its entries carry their hashes)", [K, E], ["PR_1_HTREE_NEEDS_SIPHASH"], Kernel::None, "";
    HtreeIncompat = "htree.incompat_flag", Err, "the dx root's flags carry no incompatible flag (bit 0 of unused_flags)", [E], ["PR_1_HTREE_INCOMPAT"], Kernel::None, "";
    // connectivity (pass 3)
    ConnectRoot = "connect.root", Err, "the root inode is an in-use directory", [K, E], ["PR_3_NO_ROOT_INODE", "PR_3_ROOT_NOT_DIR_ABORT"], Kernel::Refuses("ext4_fill_super: \"root inode unallocated\" / \"corrupt root inode\""), "";
    ConnectUnconnectedDir = "connect.unconnected_dir", Err, "every directory reaches the root through the directories that name it (no loops)", [E], ["PR_3_UNCONNECTED_DIR"], Kernel::None, "";
    ConnectDotdot = "connect.dotdot", Err, "'..' names the directory that holds the directory's name", [E], ["PR_3_BAD_DOT_DOT"], Kernel::None, "";
    ConnectLostFound = "connect.lost_found", Warn, "/lost+found exists and is a directory (e2fsck -n does not require it)", [E], ["PR_3_NO_LF_DIR", "PR_3_LPF_NOTDIR"], Kernel::None, "";
    // reference counts (pass 4)
    LinkCount = "link.count", Err, "i_links_count equals the entries naming the inode ('.' and '..' included; 1 for directories over 65,000 with dir_nlink)", [E], ["PR_4_BAD_REF_COUNT", "PR_4_INCONSISTENT_COUNT"], Kernel::None, "";
    LinkUnattached = "link.unattached", Err, "every in-use inode is named by a directory entry", [E], ["PR_4_UNATTACHED_INODE", "PR_4_ZERO_LEN_INODE"], Kernel::None, "";
    LinkDirNlink = "link.dir_nlink", Err, "a directory over 65,000 links needs the dir_nlink feature", [K, E], ["PR_4_DIR_NLINK_FEATURE"], Kernel::None, "";
}

/// Look up a rule by its dotted ID.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id.as_str() == id)
}

/// Every rule family, in catalogue order.
pub const FAMILIES: &[&str] = &[
    "state", "sb", "gd", "bitmap", "count", "journal", "mmp", "inode", "extent", "blockmap",
    "xattr", "block", "quota", "usage", "dir", "htree", "link", "connect",
];

/// The family of a rule ID (`sb`, `gd`, `bitmap`, `count`, `journal`).
pub fn family(id: &str) -> &str {
    id.split('.').next().unwrap_or(id)
}

/// True when `name` is a rule family (the part of rule IDs before the dot).
pub fn is_family(name: &str) -> bool {
    FAMILIES.contains(&name)
}

/// The rules of `family`, in catalogue order.
pub fn family_rules(family: &str) -> impl Iterator<Item = &'static Rule> + '_ {
    RULES.iter().filter(move |r| r.id.family() == family)
}

/// The families the quick check (`CheckOptions::quick`) runs; the others need the inode walk.
pub const QUICK_FAMILIES: &[&str] = &["sb", "gd", "bitmap", "count", "journal", "mmp"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        for (index, rule) in RULES.iter().enumerate() {
            assert_eq!(rule.id as usize, index, "{}", rule.id);
        }
        let mut ids: Vec<&str> = RULES.iter().map(|rule| rule.id.as_str()).collect();
        ids.sort_unstable();
        let count = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), count, "duplicate rule ID");
        for rule in RULES {
            assert!(FAMILIES.contains(&rule.id.family()), "{}", rule.id);
            assert!(!rule.description.is_empty());
        }
        assert_eq!(
            rule("gd.checksum").map(|r| r.severity),
            Some(Severity::Error)
        );
    }

    /// Every rule's severity is the one the stated rule derives from its recorded e2fsck problems
    /// and kernel check; every cited problem is in the table; a rule whose kernel verdict
    /// overrides e2fsck's says why. All mismatches are listed at once.
    #[test]
    fn severity_follows_the_stated_rule() {
        let mut wrong = Vec::new();
        for rule in RULES {
            for code in rule.e2fsck {
                if super::super::problems::problem(code).is_none() {
                    wrong.push(format!("{}: {code} is not in problems::PROBLEMS", rule.id));
                }
            }
            let derived = derived_severity(rule);
            if rule.severity != derived {
                wrong.push(format!(
                    "{}: catalogue says {}, the rule derives {} (kernel {:?}, e2fsck {:?})",
                    rule.id,
                    rule.severity.name(),
                    derived.name(),
                    rule.kernel,
                    rule.e2fsck
                ));
            }
            let overrides = derived != e2fsck_severity(rule);
            if overrides && rule.deviation.is_empty() {
                wrong.push(format!(
                    "{}: the kernel overrides e2fsck's verdict without a deviation note",
                    rule.id
                ));
            }
        }
        assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    }
}
