//! The e2fsck problem codes the rule catalogue cites, with their prompt and flags as
//! `e2fsck/problem.c` declares them (e2fsprogs 1.47), and what `e2fsck -fn` does with each: the
//! facts [`super::rules`] derives every rule's severity from.
//!
//! `fix_problem` with `-n` answers "no" to every prompt; a prompted problem without `PR_NO_OK`
//! then calls `ext2fs_unmark_valid`, and the run ends "still has errors" with exit 4. A problem
//! with `PROMPT_NONE` only prints (its verdict, if any, is the question that follows it: the
//! latch's end question, `PR_AFTER_CODE`'s second code, or the question its caller asks next);
//! `PR_FATAL` ends the run (exit 8). Where the caller decides instead of the flags (problems met
//! in `e2fsck_check_ext3_journal` before `main` calls `ext2fs_mark_valid`, a check that aborts
//! after reporting, a question only asked without `-n`), [`Context`] records it.

use serde::Serialize;

/// What the caller of `fix_problem` does beyond the problem's flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Context {
    /// The flags decide.
    Flags,
    /// Raised in `e2fsck_check_ext3_journal` or `check_super_block`, before `main` calls
    /// `ext2fs_mark_valid` ("Mark the system as valid, 'til proven otherwise"): a "no" is
    /// forgotten, `-n` exits 0 for it (f_uninit_disable: exit 0 after "Fix? no").
    BeforeMarkValid,
    /// The caller aborts the check after it (exit 8, or 12 with `FSCK_CANCELED`).
    Aborts,
    /// Only asked when not read-only (`-n` never asks it).
    NotReadOnly,
    /// No problem code: the caller calls `ext2fs_unmark_valid` itself (exit 4).
    Unmarks,
}

/// One problem of `e2fsck/problem.c`.
#[derive(Clone, Copy, Debug, Serialize, schemars::JsonSchema)]
pub struct Problem {
    /// The code (`PR_1_SET_IMMUTABLE`).
    pub code: &'static str,
    /// The prompt (`PROMPT_CLEAR` without the prefix; `NONE` prints only, `NULL` asks its text).
    pub prompt: &'static str,
    /// The flags as declared (`PR_PREEN_OK | PR_NO_OK`; `0` for none).
    pub flags: &'static str,
    /// The question that decides when this one only prints (latch end, `PR_AFTER_CODE`, or the
    /// caller's next question), empty when none.
    pub then: &'static str,
    /// What the caller adds.
    pub context: Context,
}

/// What `e2fsck -fn` concludes from one problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Reported and accepted: exit 0 for it.
    Accepted,
    /// Left uncorrected: exit 4.
    Uncorrected,
    /// The check stops: exit 8 (or 12).
    Aborted,
}

impl Problem {
    /// True when the flags hold `flag` (`PR_NO_OK`).
    pub fn has(&self, flag: &str) -> bool {
        self.flags.split('|').any(|f| f.trim() == flag)
    }

    /// What `e2fsck -fn` concludes from this problem (following `then`).
    pub fn verdict(&self) -> Verdict {
        if self.has("PR_FATAL") || self.context == Context::Aborts {
            return Verdict::Aborted;
        }
        if matches!(
            self.context,
            Context::BeforeMarkValid | Context::NotReadOnly
        ) {
            return Verdict::Accepted;
        }
        if self.context == Context::Unmarks {
            return Verdict::Uncorrected;
        }
        if !self.then.is_empty() {
            return problem(self.then).map_or(Verdict::Uncorrected, |p| p.verdict());
        }
        if self.prompt == "NONE" || self.has("PR_NO_OK") {
            Verdict::Accepted
        } else {
            Verdict::Uncorrected
        }
    }
}

/// The problem `code`, if the table holds it (`E2FSCK_*` rows name what a caller does without
/// a problem code: `E2FSCK_UNMARK_VALID` (`check_super_block` unmarks for descriptor counts above the group size,
/// forgotten by the `ext2fs_mark_valid` that follows), `E2FSCK_READ_BITMAPS` (reading the bitmaps fails: the
/// check aborts), `E2FSCK_MMP_BUSY` (`e2fsck_check_mmp` refuses: exit 12)).
pub fn problem(code: &str) -> Option<&'static Problem> {
    PROBLEMS.iter().find(|p| p.code == code)
}

use Context::{Aborts as Ab, BeforeMarkValid as Bmv, Flags as F, NotReadOnly as Nro};

macro_rules! problems {
    ($($code:ident, $prompt:ident, $flags:literal, $then:literal, $ctx:ident;)*) => {
        /// Every problem the catalogue cites (and the questions they defer to).
        pub const PROBLEMS: &[Problem] = &[
            $(Problem {
                code: stringify!($code),
                prompt: stringify!($prompt),
                flags: $flags,
                then: $then,
                context: $ctx,
            },)*
        ];
    };
}

problems! {
    // pre-pass 1 (super.c, journal.c, unix.c)
    PR_0_SB_CORRUPT, NONE, "0", "", Ab;
    PR_0_MISC_CORRUPT_SUPER, NONE, "PR_AFTER_CODE", "PR_0_SB_CORRUPT", F;
    PR_0_FS_SIZE_WRONG, ABORT, "0", "", Bmv;
    PR_0_INODE_COUNT_WRONG, FIX, "0", "", Bmv;
    PR_0_FIRST_META_BG_TOO_BIG, CLEAR, "0", "", Bmv;
    PR_0_DISABLE_RESIZE_INODE, FIX, "0", "", Bmv;
    PR_0_NONZERO_RESERVED_GDT_BLOCKS, FIX, "0", "", Bmv;
    PR_0_BAD_MIN_EXTRA_ISIZE, FIX, "0", "", Bmv;
    PR_0_BAD_WANT_EXTRA_ISIZE, FIX, "0", "", Bmv;
    PR_0_META_AND_GDT_CSUM_SET, FIX, "PR_PREEN_OK | PR_NO_OK", "", F;
    PR_0_CSUM_SEED_WITHOUT_META_CSUM, FIX, "PR_PREEN_OK | PR_NO_OK", "", F;
    PR_0_64BIT_WITHOUT_EXTENTS, FIX, "PR_PREEN_OK | PR_NO_OK", "", F;
    PR_0_FUTURE_SB_LAST_MOUNT, FIX, "PR_PREEN_OK | PR_NO_OK", "", F;
    PR_0_FUTURE_SB_LAST_WRITE, FIX, "PR_PREEN_OK | PR_NO_OK", "", F;
    PR_0_FREE_BLOCK_COUNT, NONE, "PR_PREEN_NOMSG", "", F;
    PR_0_FREE_INODE_COUNT, NONE, "PR_PREEN_NOMSG", "", F;
    PR_0_BB_NOT_GROUP, RELOCATE, "PR_LATCH_RELOC", "", Bmv;
    PR_0_IB_NOT_GROUP, RELOCATE, "PR_LATCH_RELOC", "", Bmv;
    PR_0_ITABLE_NOT_GROUP, RELOCATE, "PR_LATCH_RELOC", "", Bmv;
    PR_0_GDT_CSUM, FIX, "PR_LATCH_BG_CHECKSUM", "", Bmv;
    PR_0_GDT_UNINIT, FIX, "PR_PREEN_OK", "", Bmv;
    PR_0_GDT_ITABLE_UNUSED, FIX, "PR_PREEN_OK", "", Bmv;
    PR_0_BB_UNINIT_LAST, FIX, "PR_PREEN_OK", "", Bmv;
    PR_0_INVALID_QUOTA_INO, FIX, "0", "", Bmv;
    PR_0_ORPHAN_CLEAR_INODE, NONE, "0", "", F;
    PR_0_ORPHAN_ILLEGAL_HEAD_INODE, NONE, "0", "", F;
    PR_0_ORPHAN_FILE_BAD_MAGIC, NONE, "0", "", F;
    PR_0_ORPHAN_FILE_BAD_CHECKSUM, NONE, "0", "", F;
    PR_0_JOURNAL_BAD_INODE, CLEAR, "PR_PREEN_OK", "", Ab;
    PR_0_JOURNAL_BAD_SUPER, FIX, "PR_PREEN_OK", "", Ab;
    PR_0_JOURNAL_UNSUPP_SUPER, ABORT, "PR_NO_OK | PR_AFTER_CODE", "PR_0_JOURNAL_BAD_SUPER", F;
    PR_0_JOURNAL_UNSUPP_INCOMPAT, ABORT, "0", "", Ab;
    PR_0_JOURNAL_UNSUPP_VERSION, ABORT, "0", "", Ab;
    PR_0_JOURNAL_RECOVERY_CLEAR, NONE, "0", "PR_0_JOURNAL_RUN", F;
    PR_0_JOURNAL_RUN, NULL, "0", "", Bmv;
    PR_0_JOURNAL_RESET_JOURNAL, NULL, "PR_PREEN_NOMSG", "", Bmv;
    PR_0_JNL_TXN_CORRUPT, NONE, "0", "", F;
    PR_0_JOURNAL_UNSUPP_MULTIFS, NONE, "PR_FATAL", "", F;
    PR_0_MMP_INVALID_BLK, CLEAR, "PR_PREEN_OK", "", Ab;
    PR_0_MMP_INVALID_MAGIC, FIX, "PR_PREEN_OK | PR_NO_OK", "", Ab;
    PR_0_MMP_CSUM_INVALID, FIX, "PR_PREEN_OK | PR_NO_OK", "", Ab;
    // no problem code: the caller acts itself
    E2FSCK_UNMARK_VALID, NONE, "0", "", Bmv;
    E2FSCK_READ_BITMAPS, NONE, "0", "", Ab;
    E2FSCK_MMP_BUSY, NONE, "0", "", Ab;
    // pass 1
    PR_1_ROOT_NO_DIR, CLEAR, "0", "", F;
    PR_1_ROOT_DTIME, FIX, "PR_PREEN_OK", "", F;
    PR_1_RESERVED_BAD_MODE, CLEAR, "PR_PREEN_OK", "", F;
    PR_1_ZERO_DTIME, FIX, "PR_PREEN_OK", "", F;
    PR_1_SET_DTIME, FIX, "PR_PREEN_OK", "", F;
    PR_1_ZERO_LENGTH_DIR, CLEAR, "PR_PREEN_OK", "", F;
    PR_1_BB_CONFLICT, RELOCATE, "0", "", F;
    PR_1_IB_CONFLICT, RELOCATE, "0", "", F;
    PR_1_ITABLE_CONFLICT, RELOCATE, "0", "", F;
    PR_1_BAD_I_SIZE, FIX, "PR_PREEN_OK", "", F;
    PR_1_BAD_I_BLOCKS, FIX, "PR_PREEN_OK", "", F;
    PR_1_ILLEGAL_BLOCK_NUM, CLEAR, "PR_LATCH_BLOCK", "", F;
    PR_1_BLOCK_OVERLAPS_METADATA, CLEAR, "PR_LATCH_BLOCK", "", F;
    PR_1_BB_ILLEGAL_BLOCK_NUM, CLEAR, "PR_LATCH_BBLOCK", "", F;
    PR_1_ISCAN_ERROR, NONE, "PR_FATAL", "", F;
    PR_1_SET_IMAGIC, CLEAR, "0", "", F;
    PR_1_SET_IMMUTABLE, CLEAR, "PR_PREEN_OK | PR_PREEN_NO | PR_NO_OK", "", F;
    PR_1_SET_NONZSIZE, FIX, "PR_PREEN_OK", "", F;
    PR_1_JOURNAL_INODE_NOT_CLEAR, CLEAR, "PR_PREEN_OK", "", F;
    PR_1_JOURNAL_BAD_MODE, FIX, "PR_PREEN_OK", "", F;
    PR_1_LOW_DTIME, FIX, "PR_LATCH_LOW_DTIME", "", F;
    PR_1_READ_EA_BLOCK, CLEAR, "0", "", F;
    PR_1_BAD_EA_BLOCK, CLEAR, "0", "", F;
    PR_1_EXTATTR_REFCOUNT, FIX, "0", "", F;
    PR_1_EA_ALLOC_COLLISION, CLEAR, "0", "", F;
    PR_1_EA_BAD_NAME, CLEAR, "0", "", F;
    PR_1_EA_BAD_VALUE, CLEAR, "0", "", F;
    PR_1_HTREE_SET, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_1_HTREE_NODIR, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_1_HTREE_BADROOT, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_1_HTREE_HASHV, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_1_HTREE_INCOMPAT, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_1_HTREE_DEPTH, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_1_HTREE_NEEDS_SIPHASH, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_1_EXTRA_ISIZE, FIX, "PR_PREEN_OK", "", F;
    PR_1_ATTR_NAME_LEN, CLEAR, "PR_PREEN_OK", "", F;
    PR_1_ATTR_VALUE_OFFSET, CLEAR, "PR_PREEN_OK", "", F;
    PR_1_ATTR_VALUE_SIZE, CLEAR, "PR_PREEN_OK", "", F;
    PR_1_ATTR_HASH, CLEAR, "PR_PREEN_OK", "", F;
    PR_1_READ_EXTENT, CLEAR_INODE, "0", "", F;
    PR_1_EXTENT_BAD_START_BLK, CLEAR, "0", "", F;
    PR_1_EXTENT_ENDS_BEYOND, CLEAR, "0", "", F;
    PR_1_EXTENT_FEATURE, FIX, "0", "", F;
    PR_1_OUT_OF_ORDER_EXTENTS, CLEAR, "0", "", F;
    PR_1_EXTENT_HEADER_INVALID, CLEAR, "0", "", F;
    PR_1_QUOTA_BAD_MODE, CLEAR, "PR_PREEN_OK", "", F;
    PR_1_QUOTA_INODE_NOT_CLEAR, CLEAR, "PR_PREEN_OK", "", F;
    PR_1_INVALID_BAD_INODE, CLEAR, "0", "", F;
    PR_1_EXTENT_LENGTH_ZERO, CLEAR, "0", "", F;
    PR_1_INODE_ONLY_CSUM_INVALID, FIX, "PR_PREEN_OK", "", F;
    PR_1_INODE_EA_ALLOC_COLLISION, CLEAR, "0", "", F;
    PR_1_EXTENT_ONLY_CSUM_INVALID, FIX, "0", "", F;
    PR_1_EA_BLOCK_ONLY_CSUM_INVALID, FIX, "0", "", F;
    PR_1_EXTENT_INDEX_START_INVALID, FIX, "0", "", F;
    PR_1_EXTENT_END_OUT_OF_BOUNDS, CLEAR, "0", "", F;
    PR_1_INLINE_DATA_FEATURE, FIX, "PR_PREEN_OK", "", F;
    PR_1_COLLAPSE_DBLOCK, FIX, "0", "", F;
    PR_1_UNINIT_DBLOCK, FIX, "PR_PREEN_OK", "", F;
    PR_1_MISALIGNED_CLUSTER, NONE, "0", "PR_1D_DELETE_QUESTION", F;
    PR_1_INLINE_DATA_NO_ATTR, TRUNCATE, "0", "", F;
    PR_1_EXTENT_COLLISION, CLEAR, "0", "", F;
    PR_1_EXTENT_BAD_MAX_DEPTH, FIX, "PR_NO_OK | PR_PREEN_NO | PR_PREEN_OK", "", F;
    PR_1_NO_BIGALLOC_BLOCKMAP_FILES, FIX, "0", "", F;
    PR_1_MISSING_EXTENT_HEADER, CLEAR_INODE, "0", "", F;
    PR_1_EA_TIME_OUT_OF_RANGE, FIX, "PR_PREEN_OK | PR_NO_OK", "", F;
    PR_1_ATTR_VALUE_EA_INODE, CLEAR, "PR_PREEN_OK", "", F;
    PR_1_ATTR_NO_EA_INODE_FL, CLEAR, "PR_PREEN_OK", "", F;
    PR_1_CASEFOLD_NONDIR, CLEAR_FLAG, "0", "", F;
    PR_1_CASEFOLD_FEATURE, CLEAR_FLAG, "0", "", F;
    PR_1_MISSING_ENCRYPTION_XATTR, CLEAR_FLAG, "0", "", F;
    PR_1_CORRUPT_ENCRYPTION_XATTR, CLEAR_INODE, "0", "", F;
    // pass 1B-1E
    PR_1B_DUP_BLOCK, NONE, "PR_LATCH_DBLOCK | PR_PREEN_NOHDR", "PR_1D_DELETE_QUESTION", F;
    PR_1D_DUP_FILE, NONE, "0", "PR_1D_DELETE_QUESTION", F;
    PR_1D_SHARE_METADATA, NONE, "0", "PR_1D_DELETE_QUESTION", F;
    PR_1D_DELETE_QUESTION, DELETE, "0", "", F;
    PR_1E_CAN_COLLAPSE_EXTENT_TREE, OPTIMIZE, "PR_NO_OK | PR_PREEN_NO | PR_PREEN_OK | PR_NOT_A_FIX", "", F;
    PR_1E_CAN_NARROW_EXTENT_TREE, OPTIMIZE, "PR_NO_OK | PR_PREEN_NO | PR_PREEN_OK | PR_NOT_A_FIX", "", F;
    // pass 2
    PR_2_BAD_INODE_DOT, FIX, "0", "", F;
    PR_2_BAD_INO, CLEAR, "0", "", F;
    PR_2_UNUSED_INODE, CLEAR, "PR_PREEN_OK", "", F;
    PR_2_LINK_DOT, CLEAR, "0", "", F;
    PR_2_BB_INODE, CLEAR, "0", "", F;
    PR_2_LINK_DIR, CLEAR, "0", "", F;
    PR_2_LINK_ROOT, CLEAR, "0", "", F;
    PR_2_BAD_NAME, FIX, "0", "", F;
    PR_2_MISSING_DOT, FIX, "0", "", F;
    PR_2_MISSING_DOT_DOT, FIX, "0", "", F;
    PR_2_1ST_NOT_DOT, FIX, "0", "", F;
    PR_2_2ND_NOT_DOT_DOT, FIX, "0", "", F;
    PR_2_FADDR_ZERO, CLEAR, "0", "", F;
    PR_2_FILE_ACL_ZERO, CLEAR, "0", "", F;
    PR_2_DIR_SIZE_HIGH_ZERO, CLEAR, "0", "", F;
    PR_2_BAD_MODE, CLEAR, "0", "", F;
    PR_2_DIR_CORRUPTED, SALVAGE, "0", "", F;
    PR_2_DIRECTORY_HOLE, ALLOCATE, "0", "", F;
    PR_2_DOT_NULL_TERM, FIX, "0", "", F;
    PR_2_DOT_DOT_NULL_TERM, FIX, "0", "", F;
    PR_2_BAD_CHAR_DEV, CLEAR, "0", "", F;
    PR_2_BAD_BLOCK_DEV, CLEAR, "0", "", F;
    PR_2_DUP_DOT, FIX, "0", "", F;
    PR_2_DUP_DOT_DOT, FIX, "0", "", F;
    PR_2_FINAL_RECLEN, FIX, "0", "", F;
    PR_2_READ_DIRBLOCK, CONTINUE, "0", "", F;
    PR_2_BAD_FIFO, CLEAR, "0", "", F;
    PR_2_BAD_SOCKET, CLEAR, "0", "", F;
    PR_2_SET_FILETYPE, NONE, "PR_PREEN_OK | PR_NO_OK | PR_NO_NOMSG", "", F;
    PR_2_BAD_FILETYPE, FIX, "0", "", F;
    PR_2_CLEAR_FILETYPE, CLEAR, "PR_PREEN_OK", "", F;
    PR_2_NULL_NAME, CLEAR, "0", "", F;
    PR_2_INVALID_SYMLINK, CLEAR, "0", "", F;
    PR_2_FILE_ACL_BAD, CLEAR, "0", "", F;
    PR_2_FEATURE_LARGE_FILES, FIX, "0", "", F;
    PR_2_HTREE_NOTREF, NONE, "0", "PR_2_HTREE_CLEAR", F;
    PR_2_HTREE_DUPREF, NONE, "0", "PR_2_HTREE_CLEAR", F;
    PR_2_HTREE_MIN_HASH, NONE, "0", "PR_2_HTREE_CLEAR", F;
    PR_2_HTREE_MAX_HASH, NONE, "0", "PR_2_HTREE_CLEAR", F;
    PR_2_HTREE_CLEAR, CLEAR_HTREE, "0", "", F;
    PR_2_HTREE_BADBLK, CLEAR_HTREE, "0", "", F;
    PR_2_HTREE_BAD_ROOT, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_2_HTREE_BAD_LIMIT, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_2_HTREE_BAD_COUNT, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_2_HTREE_HASH_ORDER, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_2_HTREE_BAD_DEPTH, NONE, "0", "PR_2_HTREE_CLEAR", F;
    PR_2_DUPLICATE_DIRENT, CLEAR, "0", "", F;
    PR_2_NON_UNIQUE_FILE, NULL, "0", "", F;
    PR_2_REPORT_DUP_DIRENT, NONE, "0", "", F;
    PR_2_BLOCKS_HI_ZERO, CLEAR, "0", "", F;
    PR_2_INOREF_BG_INO_UNINIT, FIX, "PR_PREEN_OK", "", F;
    PR_2_INOREF_IN_UNUSED, FIX, "PR_PREEN_OK", "", F;
    PR_2_I_FILE_ACL_HI_ZERO, CLEAR, "PR_PREEN_OK", "", F;
    PR_2_HTREE_ROOT_CSUM_INVALID, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_2_HTREE_NODE_CSUM_INVALID, CLEAR_HTREE, "PR_PREEN_OK", "", F;
    PR_2_LEAF_NODE_MISSING_CSUM, FIX, "PR_PREEN_OK", "", F;
    PR_2_LEAF_NODE_ONLY_CSUM_INVALID, FIX, "PR_PREEN_OK", "", F;
    PR_2_BAD_ENCRYPTED_NAME, CLEAR, "0", "", F;
    PR_2_UNENCRYPTED_FILE, CLEAR, "0", "", F;
    PR_2_INCONSISTENT_ENCRYPTION_POLICY, CLEAR, "0", "", F;
    PR_2_BAD_ENCODED_NAME, FIX, "0", "", F;
    // pass 3
    PR_3_NO_ROOT_INODE, ALLOCATE, "0", "", F;
    PR_3_UNCONNECTED_DIR, CONNECT, "0", "", F;
    PR_3_NO_LF_DIR, CREATE, "PR_PREEN_OK", "", Nro;
    PR_3_BAD_DOT_DOT, FIX, "0", "", F;
    PR_3_ROOT_NOT_DIR_ABORT, NONE, "PR_FATAL", "", F;
    PR_3_LPF_NOTDIR, UNLINK, "0", "", Nro;
    // pass 4
    PR_4_ZERO_LEN_INODE, CLEAR, "PR_PREEN_OK | PR_NO_OK", "", F;
    PR_4_UNATTACHED_INODE, CONNECT, "0", "", F;
    PR_4_BAD_REF_COUNT, FIX, "PR_PREEN_OK", "", F;
    PR_4_INCONSISTENT_COUNT, NONE, "0", "", F;
    PR_4_EA_INODE_REF_COUNT, FIX, "PR_PREEN_OK", "", F;
    PR_4_DIR_NLINK_FEATURE, FIX, "0", "", F;
    // pass 5
    PR_5_INODE_BMAP_PADDING, FIX, "PR_PREEN_OK", "", F;
    PR_5_BLOCK_BMAP_PADDING, FIX, "PR_PREEN_OK", "", F;
    PR_5_BLOCK_UNUSED, NONE, "PR_LATCH_BBITMAP | PR_PREEN_OK | PR_PREEN_NOMSG", "PR_5_BLOCK_BITMAP_END", F;
    PR_5_BLOCK_USED, NONE, "PR_LATCH_BBITMAP | PR_PREEN_OK | PR_PREEN_NOMSG", "PR_5_BLOCK_BITMAP_END", F;
    PR_5_BLOCK_BITMAP_END, FIX, "PR_PREEN_OK | PR_PREEN_NOMSG", "", F;
    PR_5_INODE_UNUSED, NONE, "PR_LATCH_IBITMAP | PR_PREEN_OK | PR_PREEN_NOMSG", "PR_5_INODE_BITMAP_END", F;
    PR_5_INODE_USED, NONE, "PR_LATCH_IBITMAP | PR_PREEN_OK | PR_PREEN_NOMSG", "PR_5_INODE_BITMAP_END", F;
    PR_5_INODE_BITMAP_END, FIX, "PR_PREEN_OK | PR_PREEN_NOMSG", "", F;
    PR_5_FREE_INODE_COUNT_GROUP, FIX, "PR_PREEN_OK | PR_PREEN_NOMSG", "", F;
    PR_5_FREE_DIR_COUNT_GROUP, FIX, "PR_PREEN_OK | PR_PREEN_NOMSG", "", F;
    PR_5_FREE_INODE_COUNT, FIX, "PR_PREEN_OK | PR_NO_OK | PR_PREEN_NOMSG", "", F;
    PR_5_FREE_BLOCK_COUNT_GROUP, FIX, "PR_PREEN_OK | PR_PREEN_NOMSG", "", F;
    PR_5_FREE_BLOCK_COUNT, FIX, "PR_PREEN_OK | PR_NO_OK | PR_PREEN_NOMSG", "", F;
    PR_5_BLOCK_RANGE_UNUSED, NONE, "PR_LATCH_BBITMAP | PR_PREEN_OK | PR_PREEN_NOMSG", "PR_5_BLOCK_BITMAP_END", F;
    PR_5_BLOCK_RANGE_USED, NONE, "PR_LATCH_BBITMAP | PR_PREEN_OK | PR_PREEN_NOMSG", "PR_5_BLOCK_BITMAP_END", F;
    PR_5_INODE_RANGE_UNUSED, NONE, "PR_LATCH_IBITMAP | PR_PREEN_OK | PR_PREEN_NOMSG", "PR_5_INODE_BITMAP_END", F;
    PR_5_INODE_RANGE_USED, NONE, "PR_LATCH_IBITMAP | PR_PREEN_OK | PR_PREEN_NOMSG", "PR_5_INODE_BITMAP_END", F;
    PR_5_BLOCK_BITMAP_CSUM_INVALID, FIX, "PR_LATCH_BBITMAP | PR_PREEN_OK", "", F;
    PR_5_INODE_BITMAP_CSUM_INVALID, FIX, "PR_LATCH_IBITMAP | PR_PREEN_OK", "", F;
    // after pass 5
    PR_6_UPDATE_QUOTAS, NULL, "PR_PREEN_OK", "", F;
    PR_6_ORPHAN_PRESENT_CLEAN_FILE, CLEAR, "PR_PREEN_OK", "", F;
    PR_6_ORPHAN_PRESENT_NO_FILE, CLEAR, "PR_PREEN_OK", "", F;
    PR_6_ORPHAN_FILE_CORRUPTED, RECREATE, "PR_PREEN_OK", "", F;
    PR_6_ORPHAN_BLOCK_DIRTY, CLEAR, "PR_PREEN_OK", "", F;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_follow_ups_exist() {
        for (index, entry) in PROBLEMS.iter().enumerate() {
            assert!(
                PROBLEMS[..index].iter().all(|q| q.code != entry.code),
                "{} twice",
                entry.code
            );
            if !entry.then.is_empty() {
                assert!(
                    problem(entry.then).is_some(),
                    "{} defers to {}",
                    entry.code,
                    entry.then
                );
            }
        }
        assert_eq!(
            problem("PR_1_SET_IMMUTABLE").map(|p| p.verdict()),
            Some(Verdict::Accepted)
        );
        assert_eq!(
            problem("PR_5_BLOCK_USED").map(|p| p.verdict()),
            Some(Verdict::Uncorrected)
        );
    }
}
