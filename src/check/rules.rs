//! The rule catalogue of `e4inspect check`, as data: a stable ID per rule, its severity, a one-line
//! description and the implementations that enforce the same condition.
//!
//! IDs are part of the interface (CI configurations match on them): never rename one, only add.

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
    /// e2fsck problem codes (`e2fsck/problem.h`) reporting the same condition.
    pub e2fsck: &'static [&'static str],
}

impl Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
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
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
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
    ($($(#[$doc:meta])* $var:ident = $id:literal, $sev:ident, $desc:literal, [$($enf:ident),*], [$($pr:literal),*];)*) => {
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
            },)*
        ];
    };
}

catalogue! {
    // filesystem state (what e2fsck judges before pass 1)
    StateErrors = "state.errors", Err, "the superblock state is not \"with errors\" (the kernel met an error not yet repaired)", [K, E], [];
    StateErrorRecord = "state.error_record", Warn, "no error recorded by the kernel (s_error_count, first/last error)", [K], [];
    StateNeedsRecovery = "state.needs_recovery", Err, "the journal needs no recovery (a finished image, not one taken while mounted or after a crash)", [K, E], ["PR_0_JOURNAL_RUN", "PR_0_JOURNAL_RECOVERY_CLEAR"];
    StateOrphanList = "state.orphan_list", Err, "the orphan list (s_last_orphan) is empty", [K, E], ["PR_0_ORPHAN_CLEAR_INODE", "PR_0_ORPHAN_ILLEGAL_HEAD_INODE", "PR_1_LOW_DTIME"];
    StateOrphanFile = "state.orphan_file", Err, "the orphan file lists no inode and orphan_present is clear", [K, E], ["PR_0_ORPHAN_FILE_BAD_MAGIC", "PR_0_ORPHAN_PRESENT_NO_FILE"];
    StateMounted = "state.mounted", Warn, "the block device is not mounted while checked", [E], [];
    StateKbytesWritten = "state.kbytes_written", Warn, "lifetime writes (s_kbytes_written) plausible for the filesystem size", [], [];
    StatePassesSkipped = "state.passes_skipped", Warn, "every pass ran: the input holds the blocks they read (a normal e2image file holds no backup superblock, journal, directory, extent tree or xattr block)", [], [];
    // superblock
    SbMagic = "sb.magic", Err, "superblock magic is 0xEF53", [K, O, E], [];
    SbChecksumType = "sb.checksum_type", Err, "with metadata_csum, s_checksum_type is 1 (crc32c)", [K, O], [];
    SbChecksum = "sb.checksum", Err, "with metadata_csum, the superblock crc32c matches s_checksum", [K, O, E], [];
    SbRevLevel = "sb.rev_level", Err, "revision level is 0 or 1", [K, O], [];
    SbIncompatUnknown = "sb.incompat_unknown", Err, "no incompat feature bit unknown to libext2fs 1.47", [K, O], [];
    SbRoCompatUnknown = "sb.ro_compat_unknown", Warn, "no ro_compat feature bit unknown to libext2fs 1.47 (read-write mounts refused)", [K, O], [];
    SbBlockSize = "sb.block_size", Err, "block size is 1 KiB to 64 KiB (log_block_size <= 6)", [K, O, E], [];
    SbClusterSize = "sb.cluster_size", Err, "cluster size equals block size, or with bigalloc lies in [block size, 2^29]", [K, O, E], [];
    SbLogGroupsPerFlex = "sb.log_groups_per_flex", Err, "log_groups_per_flex <= 31", [O], [];
    SbInodeSize = "sb.inode_size", Err, "inode size is a power of two in [128, block size]", [K, O, E], [];
    SbFirstIno = "sb.first_ino", Err, "first non-reserved inode lies in [11, inodes_count]", [K, E], [];
    SbExtraIsize = "sb.extra_isize", Err, "min/want extra isize are 0 or multiples of 4 in [4, inode size - 128]", [K, E], [];
    SbDescSize = "sb.desc_size", Err, "with 64bit, descriptor size is a power of two in [64, 1024]", [K, O], [];
    SbBlocksPerGroup = "sb.blocks_per_group", Err, "clusters per group in [8, min(8 x block size, 65528)], blocks = clusters x ratio", [K, O, E], [];
    SbInodesPerGroup = "sb.inodes_per_group", Err, "inodes per group in [inodes per block, min(8 x block size, 65536 - inodes per block)]", [K, O, E], [];
    SbFirstDataBlock = "sb.first_data_block", Err, "first data block is 1 for 1 KiB blocks without bigalloc, else 0, and below blocks_count", [K, O, E], [];
    SbBlocksCountDevice = "sb.blocks_count_device", Err, "blocks_count x block size fits in the image or device", [K, E], [];
    SbGroupCount = "sb.group_count", Err, "group count below 2^32 - descriptors per block", [K, O], [];
    SbInodesCount = "sb.inodes_count", Err, "inodes_count equals groups x inodes per group", [K, O, E], [];
    SbRBlocksCount = "sb.r_blocks_count", Err, "reserved blocks at most half of blocks_count", [E], [];
    SbReservedGdtBlocks = "sb.reserved_gdt_blocks", Err, "reserved GDT blocks at most block size / 4", [K, E], [];
    SbFirstMetaBg = "sb.first_meta_bg", Err, "with meta_bg, first_meta_bg <= descriptor blocks", [K, O, E], [];
    SbFeatureCsumRedundant = "sb.feature_csum_redundant", Warn, "metadata_csum and uninit_bg (gdt_csum) are not both set", [K, E], [];
    SbFeatureCsumSeed = "sb.feature_csum_seed", Warn, "metadata_csum_seed only with metadata_csum", [E], [];
    SbFeature64bitExtents = "sb.feature_64bit_extents", Err, "64bit needs extents to address the whole device", [E], [];
    SbFeatureResizeMetaBg = "sb.feature_resize_meta_bg", Err, "resize_inode and meta_bg are not both set", [E], ["PR_0_DISABLE_RESIZE_INODE"];
    SbFeatureBigallocExtents = "sb.feature_bigalloc_extents", Err, "bigalloc needs extents (read-write mounts refused)", [K], [];
    SbFreeBlocksTotal = "sb.free_blocks_total", Err, "free blocks count at most blocks_count", [K, E], [];
    SbFreeInodesTotal = "sb.free_inodes_total", Err, "free inodes count at most inodes_count", [K, E], [];
    SbTimeFuture = "sb.time_future", Warn, "last mount and last write times (40-bit) not in the future, printed as dates", [E], ["PR_0_FUTURE_SB_LAST_MOUNT", "PR_0_FUTURE_SB_LAST_WRITE"];
    SbBackupMismatch = "sb.backup_mismatch", Warn, "backup superblocks agree with the primary on features, block/inode counts and UUID", [E], [];
    SbBackupInvalid = "sb.backup_invalid", Warn, "every backup superblock location holds a valid superblock", [E], [];
    SbUseBackup = "sb.use_backup", Warn, "when the primary superblock or descriptor table is unusable: the backup that would work", [E], [];
    // group descriptors
    GdTableUnreadable = "gd.table_unreadable", Err, "the whole descriptor table lies inside the image", [O], [];
    GdBlockBitmapRange = "gd.block_bitmap_range", Err, "block bitmap inside its group (inside the filesystem with flex_bg)", [K, C, E], [];
    GdInodeBitmapRange = "gd.inode_bitmap_range", Err, "inode bitmap inside its group (inside the filesystem with flex_bg)", [K, C, E], [];
    GdInodeTableRange = "gd.inode_table_range", Err, "whole inode table inside its group (inside the filesystem with flex_bg)", [K, C, E], [];
    GdOverlap = "gd.overlap", Err, "bitmaps and inode tables overlap no superblock, descriptor or reserved GDT block, nor each other", [K, C, E], [];
    GdFreeBlocksRange = "gd.free_blocks_range", Err, "free blocks count at most blocks per group", [E], [];
    GdFreeInodesRange = "gd.free_inodes_range", Err, "free inodes count at most inodes per group", [E], [];
    GdUsedDirsRange = "gd.used_dirs_range", Err, "directory count at most inodes per group", [E], [];
    GdChecksum = "gd.checksum", Err, "descriptor checksum (crc16 for uninit_bg, crc32c & 0xFFFF for metadata_csum) matches", [K, E], [];
    GdUninitWithoutCsum = "gd.uninit_without_csum", Err, "no UNINIT flag and no unused-inode count without uninit_bg or metadata_csum", [E], [];
    GdLastGroupBlockUninit = "gd.last_group_block_uninit", Err, "the last group is not BLOCK_UNINIT", [E], [];
    GdItableUnused = "gd.itable_unused", Err, "unused inode count at most free inodes and inodes per group", [E], [];
    GdBackupMismatch = "gd.backup_mismatch", Warn, "the first backup descriptor table has the same bitmap and inode table locations", [], [];
    // bitmaps
    BitmapUnreadable = "bitmap.unreadable", Err, "every initialised bitmap block lies inside the image", [E], [];
    BitmapBlockCsum = "bitmap.block_csum", Err, "with metadata_csum, block bitmap crc32c matches the descriptor (hi half with 64-byte descriptors)", [K, E], [];
    BitmapInodeCsum = "bitmap.inode_csum", Err, "with metadata_csum, inode bitmap crc32c matches the descriptor (hi half with 64-byte descriptors)", [K, E], [];
    BitmapBlockPadding = "bitmap.block_padding", Err, "block bitmap bits past the end of the filesystem are set", [E], [];
    BitmapTailPadding = "bitmap.tail_padding", Warn, "bitmap block bytes past clusters_per_group / 8 (inodes_per_group / 8) are 0xFF, as libext2fs and the kernel write them", [], [];
    // counts
    CountGroupFreeBlocks = "count.group_free_blocks", Err, "descriptor free blocks equal the zero bits of the (UNINIT-adjusted) block bitmap", [E], [];
    CountGroupFreeInodes = "count.group_free_inodes", Err, "descriptor free inodes equal the zero bits of the (UNINIT-adjusted) inode bitmap", [E], [];
    CountSbFreeBlocks = "count.sb_free_blocks", Warn, "superblock free blocks equal the sum of the descriptors (the kernel updates it lazily)", [E], [];
    CountSbFreeInodes = "count.sb_free_inodes", Warn, "superblock free inodes equal the sum of the descriptors (the kernel updates it lazily)", [E], [];
    // journal
    JournalInode = "journal.inode", Err, "journal inode in range, in use, a regular file of at least 1024 blocks (EXT2_ET_JOURNAL_TOO_SMALL below), all blocks inside the filesystem", [K, E], ["PR_0_JOURNAL_BAD_INODE"];
    JournalSuperblockMagic = "journal.superblock_magic", Err, "journal superblock magic is 0xC03B3998", [K, E], [];
    JournalSuperblockType = "journal.superblock_type", Err, "journal superblock block type is 3 (v1) or 4 (v2)", [K, E], [];
    JournalFeatures = "journal.features", Err, "no unknown journal incompat feature; at most one checksum version", [K, E], [];
    JournalChecksum = "journal.checksum", Err, "with journal checksum v2/v3, checksum type is crc32c and the superblock checksum matches", [K, E], [];
    JournalBlockSize = "journal.block_size", Err, "journal block size equals the filesystem block size", [K, E], [];
    JournalMaxlen = "journal.maxlen", Err, "journal s_maxlen fits in the journal inode (a journal superblock claiming more blocks than the journal has is \"journal too short\": e2fsck -n cannot proceed, exit 12)", [K, E], ["PR_0_JOURNAL_BAD_SUPER"];
    JournalFastCommitBlocks = "journal.fast_commit_blocks", Err, "with the journal's fast_commit feature, s_maxlen less the fast-commit area (s_num_fc_blks, 256 when 0) leaves at least 1024 blocks of log (\"incorrect fast commit blocks\": e2fsck -n cannot proceed, exit 12)", [K, E], ["PR_0_JOURNAL_BAD_SUPER"];
    JournalUsers = "journal.users", Err, "an internal journal has at most one user", [E], [];
    JournalStartWithoutRecovery = "journal.start_without_recovery", Warn, "s_start is 0 when needs_recovery is clear (\"journal has data\": e2fsck offers to run or clear it and, answered no, ignores it and exits 0; the kernel does not replay it)", [E], ["PR_0_JOURNAL_RECOVERY_CLEAR", "PR_0_JOURNAL_RUN", "PR_0_JOURNAL_RESET_JOURNAL"];
    JournalErrno = "journal.errno", Warn, "the journal superblock's s_errno is 0 (the kernel aborted the journal after an error; e2fsck moves it to the superblock's error state without a problem code and exits 0 with -n)", [K, E], [];
    // multiple-mount protection
    MmpBlockRange = "mmp.block_range", Err, "with mmp, s_mmp_block lies inside the filesystem and the image (a file claiming it is block.multiply_claimed)", [K, E], ["PR_0_MMP_INVALID_BLK"];
    MmpMagic = "mmp.magic", Err, "the MMP block's magic is 0x004D4D50 (e2fsck refuses the filesystem, exit 12)", [K, E], ["PR_0_MMP_INVALID_MAGIC"];
    MmpChecksum = "mmp.checksum", Err, "with metadata_csum, the MMP block's crc32c matches mmp_checksum (e2fsck refuses the filesystem, exit 12)", [K, E], ["PR_0_MMP_CSUM_INVALID"];
    MmpSequence = "mmp.sequence", Err, "the MMP sequence is clean or a node's counter, not e2fsck's marker (0xE24D4D50) nor an unknown value (e2fsck refuses the filesystem, exit 12)", [K, E], [];
    MmpInUse = "mmp.in_use", Warn, "the MMP sequence says clean: a node's counter means another node may have the filesystem mounted (named with its device and last update, as e2mmpstatus does)", [K, E], [];
    JournalReplayed = "journal.replayed", Warn, "the image needs no recovery (when it does, its committed transactions are replayed in memory and the replayed state is checked, as e2fsck recovers then checks)", [], ["PR_0_JOURNAL_RUN"];
    JournalFastCommit = "journal.fast_commit", Warn, "no fast-commit transaction follows the log (when one does, e2fsck 1.47 and the kernel apply its tags after the replay; this read-only replay does not apply them and names each inode, block range and directory entry it leaves as the log has them; a stale fast-commit area, on which e2fsck 1.47 fails recovery and the kernel mounts, is reported here too)", [], [];
    JournalUnreplayable = "journal.unreplayable", Err, "every committed transaction replays: descriptor, commit and data block checksums match and every logged block lies inside the filesystem", [K, E], ["PR_0_JNL_TXN_CORRUPT"];
    // inode table walk (pass 1)
    InodeTableUnreadable = "inode.table_unreadable", Err, "every group's inode table (up to bg_itable_unused) lies inside the image", [E], ["PR_1_ISCAN_ERROR"];
    InodeChecksum = "inode.checksum", Err, "with metadata_csum, every non-zero inode's checksum matches", [K, E], ["PR_1_INODE_ONLY_CSUM_INVALID"];
    InodeZeroDtime = "inode.zero_dtime", Err, "a deleted inode (links count 0, mode set) has a deletion time", [E], ["PR_1_ZERO_DTIME"];
    InodeDtime = "inode.dtime", Err, "an in-use inode has no deletion time (unless on the orphan list)", [E], ["PR_1_SET_DTIME", "PR_1_ROOT_DTIME"];
    InodeRootNotDir = "inode.root_not_dir", Err, "the root inode is a directory", [K, E], ["PR_1_ROOT_NO_DIR"];
    InodeReserved = "inode.reserved", Err, "reserved inodes: journal and quota inodes are regular files (or clear when the feature is off), the others have mode 0", [E], ["PR_1_RESERVED_BAD_MODE", "PR_1_JOURNAL_BAD_MODE", "PR_1_JOURNAL_INODE_NOT_CLEAR", "PR_1_QUOTA_BAD_MODE", "PR_1_QUOTA_INODE_NOT_CLEAR"];
    InodeMode = "inode.mode", Err, "the mode names a valid file type", [K, E], ["PR_2_BAD_MODE"];
    InodeFlags = "inode.flags", Err, "flag combinations: EXTENTS/INLINE_DATA/CASEFOLD/INDEX only with their feature and file type, not both EXTENTS and INLINE_DATA, no IMMUTABLE/APPEND on special files", [K, E], ["PR_1_EXTENT_FEATURE", "PR_1_INLINE_DATA_FEATURE", "PR_1_HTREE_SET", "PR_1_HTREE_NODIR", "PR_1_CASEFOLD_NONDIR", "PR_1_CASEFOLD_FEATURE", "PR_1_SET_IMMUTABLE"];
    InodeExtraIsize = "inode.extra_isize", Err, "i_extra_isize is 0 or a multiple of 4 in [4, inode size - 128]", [K, E], ["PR_1_EXTRA_ISIZE"];
    InodeSize = "inode.size", Err, "i_size covers the initialised blocks of a file; a directory's size is whole blocks matching its last block; special files have size 0", [E], ["PR_1_BAD_I_SIZE", "PR_1_SET_NONZSIZE"];
    InodeZeroLengthDir = "inode.zero_length_dir", Err, "a directory holds at least one block (or inline data)", [E], ["PR_1_ZERO_LENGTH_DIR"];
    InodeBlocks = "inode.blocks", Err, "i_blocks equals the blocks (clusters with bigalloc) held: data, mapping or tree blocks and the xattr block", [E], ["PR_1_BAD_I_BLOCKS"];
    InodeSymlink = "inode.symlink", Err, "a symlink's size equals its target length: in i_block when fast, in one block below the block size when slow", [K, E], ["PR_2_INVALID_SYMLINK"];
    InodeDevice = "inode.device", Err, "device, FIFO and socket inodes carry no INDEX, EXTENTS or INLINE_DATA flag", [E], ["PR_2_BAD_CHAR_DEV", "PR_2_BAD_BLOCK_DEV", "PR_2_BAD_FIFO", "PR_2_BAD_SOCKET"];
    InodeInlineData = "inode.inline_data", Err, "an INLINE_DATA inode has its system.data attribute in the inode", [K, E], ["PR_1_INLINE_DATA_NO_ATTR"];
    InodeBadBlocksInode = "inode.bad_blocks_inode", Err, "the bad-blocks inode (1) has no mode, owner, group, link count, INLINE_DATA flag or xattr block", [E], ["PR_1_INVALID_BAD_INODE"];
    InodeQuotaInum = "inode.quota_inum", Err, "the superblock's quota inode numbers are 0, a reserved quota inode (3, 4) or a normal inode in range", [E], ["PR_0_INVALID_QUOTA_INO"];
    InodeEncryptionContext = "inode.encryption_context", Err, "an inode with the ENCRYPT flag has an encryption context (xattr \"c\"): version 1 of 28 bytes or version 2 of 40 bytes (other versions are accepted as unrecognised)", [K, E], ["PR_1_MISSING_ENCRYPTION_XATTR", "PR_1_CORRUPT_ENCRYPTION_XATTR"];
    InodeImagic = "inode.imagic", Err, "the IMAGIC flag only with the imagic_inodes feature", [E], ["PR_1_SET_IMAGIC"];
    InodeBigallocBlockmap = "inode.bigalloc_blockmap", Err, "with bigalloc, inodes holding blocks are extent-mapped", [K, E], ["PR_1_NO_BIGALLOC_BLOCKMAP_FILES"];
    InodeTimeEpoch = "inode.time_epoch", Warn, "no timestamp with its sign bit and both epoch bits set (a pre-1970 time stored in the old encoding, read as 2310-2378; e2fsck offers to fix it and exits 0)", [E], ["PR_1_EA_TIME_OUT_OF_RANGE"];
    InodeUnusedFields = "inode.unused_fields", Err, "fields the features leave unused are 0: i_faddr, a directory's i_size_high without largedir, i_blocks_hi without huge_file, i_file_acl_hi without 64bit (not checked for Hurd)", [E], ["PR_2_FADDR_ZERO", "PR_2_DIR_SIZE_HIGH_ZERO", "PR_2_BLOCKS_HI_ZERO", "PR_2_I_FILE_ACL_HI_ZERO"];
    InodeLargeFile = "inode.large_file", Err, "a regular file of 2 GiB or more only with the large_file feature", [K, E], ["PR_2_FEATURE_LARGE_FILES"];
    // extent trees
    ExtentHeader = "extent.header", Err, "extent tree nodes have the magic, a depth one below their parent (at most 5), entry counts within the node, and no node referenced twice", [K, E], ["PR_1_MISSING_EXTENT_HEADER", "PR_1_READ_EXTENT", "PR_1_EXTENT_BAD_MAX_DEPTH", "PR_1_EXTENT_HEADER_INVALID"];
    ExtentChecksum = "extent.checksum", Err, "with metadata_csum, every extent tree block's checksum matches", [K, E], ["PR_1_EXTENT_CSUM_INVALID", "PR_1_EXTENT_ONLY_CSUM_INVALID"];
    ExtentBlockRange = "extent.block_range", Err, "extents and index entries point inside the filesystem", [K, E], ["PR_1_EXTENT_BAD_START_BLK", "PR_1_EXTENT_ENDS_BEYOND"];
    ExtentOrder = "extent.order", Err, "leaf extents are in logical order and do not overlap", [K, E], ["PR_1_OUT_OF_ORDER_EXTENTS", "PR_1_EXTENT_END_OUT_OF_BOUNDS", "PR_1_EXTENT_COLLISION"];
    ExtentIndexStart = "extent.index_start", Err, "an index entry's logical block equals its child's first entry", [E], ["PR_1_EXTENT_INDEX_START_INVALID"];
    ExtentUninitDir = "extent.uninit_dir", Err, "a directory has no uninitialised extent", [E], ["PR_1_UNINIT_DBLOCK"];
    ExtentDirHole = "extent.dir_hole", Err, "an extent-mapped directory has no hole between its blocks", [E], ["PR_1_COLLAPSE_DBLOCK"];
    ExtentOptimizable = "extent.optimizable", Warn, "no extent tree level could be narrower or shorter (e2fsck offers to optimise it, and exits 0)", [E], ["PR_1E_CAN_NARROW_EXTENT_TREE", "PR_1E_CAN_COLLAPSE_EXTENT_TREE"];
    ExtentEntry = "extent.entry", Err, "leaf extents have a non-zero length", [E], ["PR_1_EXTENT_LENGTH_ZERO"];
    ExtentMisalignedCluster = "extent.misaligned_cluster", Err, "with bigalloc, an extent sits at the same offset in its logical and its physical cluster, and a logical cluster maps to one physical cluster", [K, E], ["PR_1_MISALIGNED_CLUSTER"];
    // block maps
    BlockmapRange = "blockmap.range", Err, "direct and indirect block numbers lie inside the filesystem; no mapping block is met twice", [K, E], ["PR_1_ILLEGAL_BLOCK_NUM", "PR_1_BB_ILLEGAL_BLOCK_NUM"];
    // extended attributes
    XattrIbody = "xattr.ibody", Err, "in-inode xattr entries lie inside the inode with valid names, offsets and sizes", [K, E], ["PR_1_ATTR_NAME_LEN", "PR_1_ATTR_VALUE_OFFSET", "PR_1_ATTR_VALUE_SIZE", "PR_1_INODE_EA_ALLOC_COLLISION"];
    XattrBlockRange = "xattr.block_range", Err, "i_file_acl is inside the filesystem, and only with the ext_attr feature", [K, E], ["PR_2_FILE_ACL_BAD", "PR_2_FILE_ACL_ZERO"];
    XattrBlock = "xattr.block", Err, "xattr blocks have the magic, h_blocks = 1, entries and values inside the block", [K, E], ["PR_1_BAD_EA_BLOCK", "PR_1_READ_EA_BLOCK", "PR_1_EA_ALLOC_COLLISION", "PR_1_EA_BAD_NAME", "PR_1_EA_BAD_VALUE"];
    XattrChecksum = "xattr.checksum", Err, "with metadata_csum, xattr block checksums match", [K, E], ["PR_1_EA_BLOCK_CSUM_INVALID", "PR_1_EA_BLOCK_ONLY_CSUM_INVALID"];
    XattrHash = "xattr.hash", Err, "xattr entry hashes match their name and value", [K, E], ["PR_1_ATTR_HASH"];
    XattrRefcount = "xattr.refcount", Err, "an xattr block's h_refcount equals the number of in-use inodes referring to it", [E], ["PR_1_EXTATTR_REFCOUNT"];
    XattrEaInode = "xattr.ea_inode", Err, "a value in an EA inode points to an in-use inode with EA_INODE set holding the value size", [K, E], ["PR_1_ATTR_NO_EA_INODE_FL", "PR_1_ATTR_VALUE_EA_INODE"];
    XattrIbodyHash = "xattr.ibody_hash", Err, "in-inode xattr entries with a non-zero e_hash match their name and value (0 is allowed: older kernels and libext2fs store none)", [E], ["PR_1_ATTR_HASH"];
    XattrEaInodeHash = "xattr.ea_inode_hash", Err, "an entry whose value is in an EA inode has e_hash = hash of its name and the EA inode's value hash (i_atime), unless the EA inode points back to its owner (Lustre: i_mtime = owner, same generation)", [K, E], ["PR_1_ATTR_HASH"];
    XattrEaInodeRefcount = "xattr.ea_inode_refcount", Err, "an EA inode's stored reference count (i_ctime << 32 | i_version) equals the xattr entries that refer to it (an xattr block's entries count once)", [K, E], ["PR_4_EA_INODE_REF_COUNT"];
    // block ownership
    BlockMultiplyClaimed = "block.multiply_claimed", Err, "every block is claimed once: by metadata or by one inode (xattr blocks shared as their refcount says)", [E], ["PR_1B_DUP_BLOCK", "PR_1D_DUP_FILE", "PR_1D_SHARE_METADATA", "PR_1_BLOCK_OVERLAPS_METADATA"];
    // quotas (after pass 1, as e2fsck's pass 6 compares them)
    QuotaFeature = "quota.feature", Warn, "the quota feature comes with at least one quota inode, and quota inode numbers only with the feature (e2fsck -n accepts both; -y creates or clears the inodes)", [E], [];
    QuotaInodeType = "quota.inode_type", Err, "each quota inode the superblock names is an in-use regular file", [E], ["PR_1_QUOTA_BAD_MODE"];
    QuotaFile = "quota.file", Err, "each quota file has the QFMT_VFS_V1 header of its type, a sane info block (dqi_blocks within the file, free block and entry below it) and a tree without references past dqi_blocks, cycles or miscounted data blocks", [K, E], ["PR_6_UPDATE_QUOTAS"];
    QuotaUsage = "quota.usage", Err, "the space and inodes stored per user, group and project ID equal what the inodes add up to (e2fsck: [QUOTA WARNING] Usage inconsistent for ID, Missing quota entry ID; exit 4)", [E], ["PR_6_UPDATE_QUOTAS"];
    // usage (pass 5)
    UsageBlockBitmap = "usage.block_bitmap", Err, "the block bitmaps mark exactly the blocks in use (metadata and inode claims)", [E], ["PR_5_BLOCK_USED", "PR_5_BLOCK_UNUSED", "PR_5_BLOCK_RANGE_USED", "PR_5_BLOCK_RANGE_UNUSED"];
    UsageInodeBitmap = "usage.inode_bitmap", Err, "the inode bitmaps mark exactly the inodes in use", [E], ["PR_5_INODE_USED", "PR_5_INODE_UNUSED", "PR_5_INODE_RANGE_USED", "PR_5_INODE_RANGE_UNUSED"];
    UsageGroupFreeBlocks = "usage.group_free_blocks", Err, "each group's free blocks count equals its computed free blocks", [E], ["PR_5_FREE_BLOCK_COUNT_GROUP"];
    UsageGroupFreeInodes = "usage.group_free_inodes", Err, "each group's free inodes count equals its computed free inodes", [E], ["PR_5_FREE_INODE_COUNT_GROUP"];
    UsageGroupDirs = "usage.group_dirs", Err, "each group's directory count equals its in-use directories", [E], ["PR_5_FREE_DIR_COUNT_GROUP"];
    UsageFreeBlocks = "usage.free_blocks", Warn, "the superblock free blocks count equals the computed total (the kernel updates it lazily)", [E], ["PR_5_FREE_BLOCK_COUNT"];
    UsageFreeInodes = "usage.free_inodes", Warn, "the superblock free inodes count equals the computed total (the kernel updates it lazily)", [E], ["PR_5_FREE_INODE_COUNT"];
    // directories (pass 2)
    DirBlockUnreadable = "dir.block_unreadable", Err, "every block of an in-use directory can be mapped and read", [K, E], ["PR_2_READ_DIRBLOCK"];
    DirEntryCorrupt = "dir.entry_corrupt", Err, "directory entries: rec_len >= 12, a multiple of 4, inside the block, at least name_len + 8", [K, E], ["PR_2_DIR_CORRUPTED", "PR_2_FINAL_RECLEN"];
    DirMissingDot = "dir.missing_dot", Err, "the first entry of block 0 is '.'", [E], ["PR_2_MISSING_DOT", "PR_2_1ST_NOT_DOT", "PR_2_DOT_NULL_TERM"];
    DirDotInode = "dir.dot_inode", Err, "'.' names the directory itself", [E], ["PR_2_BAD_INODE_DOT"];
    DirMissingDotdot = "dir.missing_dotdot", Err, "the second entry of block 0 is '..'", [E], ["PR_2_MISSING_DOT_DOT", "PR_2_2ND_NOT_DOT_DOT", "PR_2_DOT_DOT_NULL_TERM"];
    DirLinkDot = "dir.link_dot", Err, "no entry other than '.' names the directory itself", [E], ["PR_2_LINK_DOT"];
    DirBadInode = "dir.bad_inode", Err, "entry inode numbers are the root or in [first_ino, inodes_count]", [K, E], ["PR_2_BAD_INO"];
    DirDupDot = "dir.dup_dot", Err, "'.' and '..' appear only as the first two entries", [E], ["PR_2_DUP_DOT", "PR_2_DUP_DOT_DOT"];
    DirLinkRoot = "dir.link_root", Err, "no entry other than '..' names the root directory", [E], ["PR_2_LINK_ROOT"];
    DirNullName = "dir.null_name", Err, "entry names are not empty", [E], ["PR_2_NULL_NAME"];
    DirInodeUninit = "dir.inode_uninit", Err, "entries name no inode in an INODE_UNINIT group or the unused tail of an inode table", [E], ["PR_2_INOREF_BG_INO_UNINIT", "PR_2_INOREF_IN_UNUSED"];
    DirUnusedInode = "dir.unused_inode", Err, "entries name in-use inodes (links_count > 0)", [E], ["PR_2_UNUSED_INODE"];
    DirBadName = "dir.bad_name", Err, "names contain no '/' and no NUL", [E], ["PR_2_BAD_NAME"];
    DirEncryptedName = "dir.encrypted_name", Err, "names in encrypted directories are at least one cipher block (16 bytes)", [E], ["PR_2_BAD_ENCRYPTED_NAME"];
    DirEncodedName = "dir.encoded_name", Err, "names in casefolded directories with strict encoding are valid UTF-8", [K, E], ["PR_2_BAD_ENCODED_NAME"];
    DirFiletype = "dir.filetype", Err, "the entry's file type matches the inode's mode (0 without the filetype feature)", [E], ["PR_2_BAD_FILETYPE", "PR_2_SET_FILETYPE", "PR_2_CLEAR_FILETYPE"];
    DirLinkDir = "dir.link_dir", Err, "a directory has one name (no hard links to directories)", [E], ["PR_2_LINK_DIR"];
    DirDuplicateName = "dir.duplicate_name", Err, "names are unique within a directory (casefolded in casefolded directories)", [E], ["PR_2_DUPLICATE_DIRENT", "PR_2_REPORT_DUP_DIRENT", "PR_2_NON_UNIQUE_FILE"];
    DirCsumMissing = "dir.csum_missing", Err, "with metadata_csum, every directory leaf block ends in a checksum tail", [K, E], ["PR_2_LEAF_NODE_MISSING_CSUM"];
    DirHole = "dir.hole", Err, "a directory's blocks below its last one are all allocated (no holes)", [E], ["PR_2_DIRECTORY_HOLE"];
    DirUnencryptedEntry = "dir.unencrypted_entry", Err, "entries of an encrypted directory name encrypted files, directories and symlinks", [K, E], ["PR_2_UNENCRYPTED_FILE"];
    DirCsum = "dir.csum", Err, "with metadata_csum, the directory block crc32c matches its tail", [K, E], ["PR_2_LEAF_NODE_ONLY_CSUM_INVALID"];
    DirEncryptionPolicy = "dir.encryption_policy", Err, "the encrypted files, directories and symlinks of an encrypted directory use the directory's encryption policy", [K, E], ["PR_2_INCONSISTENT_ENCRYPTION_POLICY"];
    DirBbInode = "dir.bb_inode", Err, "entries name no inode whose inode table block is in the bad-blocks list", [E], ["PR_2_BB_INODE"];
    // htree directories (pass 2)
    HtreeRoot = "htree.root", Err, "the dx root: '.' and '..', reserved field 0, info length at least 8", [K, E], ["PR_2_HTREE_BAD_ROOT", "PR_1_HTREE_BADROOT"];
    HtreeHashVersion = "htree.hash_version", Err, "the dx root's hash version is legacy, half_md4 or tea (siphash with casefold + encryption)", [K, E], ["PR_1_HTREE_HASHV"];
    HtreeDepth = "htree.depth", Err, "indirect levels below 2 (3 with largedir); index nodes where the levels say", [K, E], ["PR_1_HTREE_DEPTH", "PR_2_HTREE_BAD_DEPTH"];
    HtreeLimit = "htree.limit", Err, "each index block's limit equals the entries that fit (minus the dx tail with metadata_csum)", [K, E], ["PR_2_HTREE_BAD_LIMIT"];
    HtreeCount = "htree.count", Err, "each index block's count is 1..=limit", [K, E], ["PR_2_HTREE_BAD_COUNT"];
    HtreeBlock = "htree.block", Err, "index entries point inside the directory", [K, E], ["PR_2_HTREE_BADBLK"];
    HtreeHashOrder = "htree.hash_order", Err, "index entry hashes are in ascending order", [E], ["PR_2_HTREE_HASH_ORDER"];
    HtreeLeafHash = "htree.leaf_hash", Err, "every name in a leaf hashes into the range its index entry gives (superblock seed, signed/unsigned, casefold)", [E], ["PR_2_HTREE_MIN_HASH", "PR_2_HTREE_MAX_HASH"];
    HtreeRefs = "htree.refs", Err, "each htree block is referenced by one index entry", [E], ["PR_2_HTREE_DUPREF", "PR_2_HTREE_NOTREF"];
    HtreeCsum = "htree.csum", Err, "with metadata_csum, dx root and node tail checksums match", [K, E], ["PR_2_HTREE_ROOT_CSUM_INVALID", "PR_2_HTREE_NODE_CSUM_INVALID"];
    HtreeSiphash = "htree.siphash", Err, "an htree directory that is both encrypted and casefolded uses SipHash (its entries carry their hashes)", [K, E], ["PR_1_HTREE_NEEDS_SIPHASH"];
    HtreeIncompat = "htree.incompat_flag", Err, "the dx root's flags carry no incompatible flag (bit 0 of unused_flags)", [E], ["PR_1_HTREE_INCOMPAT"];
    // connectivity (pass 3)
    ConnectRoot = "connect.root", Err, "the root inode is an in-use directory", [K, E], ["PR_3_NO_ROOT_INODE", "PR_3_ROOT_NOT_DIR_ABORT"];
    ConnectUnconnectedDir = "connect.unconnected_dir", Err, "every directory reaches the root through the directories that name it (no loops)", [E], ["PR_3_UNCONNECTED_DIR"];
    ConnectDotdot = "connect.dotdot", Err, "'..' names the directory that holds the directory's name", [E], ["PR_3_BAD_DOT_DOT"];
    ConnectLostFound = "connect.lost_found", Warn, "/lost+found exists and is a directory (e2fsck -n does not require it)", [E], ["PR_3_NO_LF_DIR", "PR_3_LPF_NOTDIR"];
    // reference counts (pass 4)
    LinkCount = "link.count", Err, "i_links_count equals the entries naming the inode ('.' and '..' included; 1 for directories over 65,000 with dir_nlink)", [E], ["PR_4_BAD_REF_COUNT", "PR_4_INCONSISTENT_COUNT"];
    LinkUnattached = "link.unattached", Err, "every in-use inode is named by a directory entry", [E], ["PR_4_UNATTACHED_INODE", "PR_4_ZERO_LEN_INODE"];
    LinkDirNlink = "link.dir_nlink", Err, "a directory over 65,000 links needs the dir_nlink feature", [K, E], ["PR_4_DIR_NLINK_FEATURE"];
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
        for (i, r) in RULES.iter().enumerate() {
            assert_eq!(r.id as usize, i, "{}", r.id);
        }
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id.as_str()).collect();
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate rule ID");
        for r in RULES {
            assert!(FAMILIES.contains(&r.id.family()), "{}", r.id);
            assert!(!r.description.is_empty());
        }
        assert_eq!(
            rule("gd.checksum").map(|r| r.severity),
            Some(Severity::Error)
        );
    }
}
