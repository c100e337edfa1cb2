//! What pass 1 leaves for the later passes (e2fsck's `inode_used_map`, `inode_dir_map`,
//! `block_found_map`, `ea_inode_refs`, `encrypted_files` and `inode_bb_map`), and what pass 2
//! hands to pass 3 (`lost_and_found`). Declared here, not in the pass that makes them, so that
//! every pass depends on this module only.

use super::index::InodeIndex;
use crate::check::ownership::Claims;
use rayon::prelude::*;

pub use crate::reader::ondisk::inode::dirent_type_of_mode as file_type_of_mode;
use crate::reader::ondisk::inode::mode_is_dir;

/// What the other passes need of one in-use inode (16 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InodeFacts {
    /// The inode number.
    pub ino: u32,
    /// `i_mode` (type in the top 4 bits).
    pub mode: u16,
    /// `i_links_count`.
    pub links_count: u16,
    /// `i_flags` (EXTENTS, INLINE_DATA, INDEX, ENCRYPT, CASEFOLD, ...).
    pub flags: u32,
    /// Blocks mapped (data and mapping/tree blocks; 0 for inline data and fast symlinks),
    /// saturated at `u32::MAX`.
    pub blocks: u32,
}

const _: () = assert!(std::mem::size_of::<InodeFacts>() <= 16);

impl InodeFacts {
    /// A directory.
    pub fn is_dir(&self) -> bool {
        mode_is_dir(self.mode)
    }
}

/// What pass 1 leaves for passes 2 to 5.
///
/// - [`Pass1Result::index`]: one [`InodeFacts`] (16 bytes) per in-use inode, reserved inodes
///   included, kept in the walk workers' per-group lists (never joined into one: that copy was
///   a serial pass over every in-use inode), with pass 2's counters ([`InodeIndex`]).
/// - Directory blocks are not stored: a directory pass re-reads the inode
///   (`fs.inode_raw(ino)`) and maps it ([`crate::reader::dir::dir_blocks`], bounded and
///   cycle-safe).
/// - [`Pass1Result::orphans`]: inodes on the orphan list or in the orphan file (pass 4 must not
///   call them unreferenced).
/// - [`Pass1Result::claims`]: the clusters claimed by metadata and inodes (pass 5's computed
///   bitmap).
/// - [`Pass1Result::group_read`]: whether each group's inode table was read (pass 5 compares
///   only those).
///
/// Memory: 16 bytes per in-use inode, the ownership bitmaps (see [`crate::check::ownership`]),
/// and the [`Extras`].
#[derive(Debug, Default)]
pub struct Pass1Result {
    /// Every in-use inode, by number, with the counters of passes 2-4.
    pub index: InodeIndex,
    /// Inodes on the orphan list (`s_last_orphan` chain) or in the orphan file, sorted.
    pub orphans: Vec<u32>,
    /// Clusters claimed by metadata and by inodes.
    pub claims: Claims,
    /// Per group: its inode table was read (or it is INODE_UNINIT, nothing to read).
    pub group_read: Vec<bool>,
    /// Per group: in-use directories (pass 5's `bg_used_dirs_count`).
    pub group_dirs: Vec<u32>,
    /// EA-inode references, encryption policies and inodes in bad blocks (passes 2 and 4).
    pub extras: Extras,
    /// Quota usage per ID as e2fsck's pass 1 charges it (the types with a quota inode).
    pub quota: crate::models::quota::QuotaUsage,
}

impl Pass1Result {
    /// Every in-use inode, the groups in parallel.
    pub fn par_inodes(&self) -> impl ParallelIterator<Item = &InodeFacts> {
        (0..self.index.group_count())
            .into_par_iter()
            .flat_map_iter(|g| self.index.group_slots(g).map(|s| s.facts()))
    }
}

/// Policy ID shared by every encryption context of a version this checker does not know
/// (e2fsck's `UNRECOGNIZED_ENCRYPTION_POLICY`: possibly valid, compared only with each other).
pub const UNRECOGNIZED_POLICY: u32 = u32::MAX - 2;

/// What pass 1 leaves for the directory passes beyond the inode facts, each list sorted by
/// inode number.
#[derive(Debug, Default)]
pub struct Extras {
    /// (EA inode, xattr entries referring to it): an xattr block's entries count once.
    pub ea_inode_refs: Vec<(u32, u32)>,
    /// (encrypted inode, policy ID) for every in-use inode with ENCRYPT and a valid (or
    /// unrecognised) encryption context.
    pub policies: Vec<(u32, u32)>,
    /// Inodes whose inode table block is in the bad-blocks list (in use, never judged).
    pub bb_inodes: Vec<u32>,
}

impl Extras {
    /// Number of xattr entries whose value lives in EA inode `ino`.
    pub fn ea_refs(&self, ino: u32) -> u32 {
        self.ea_inode_refs
            .binary_search_by_key(&ino, |r| r.0)
            .map_or(0, |i| self.ea_inode_refs[i].1)
    }
    /// The encryption policy ID of inode `ino` (None: not encrypted, as e2fsck decides it).
    pub fn policy(&self, ino: u32) -> Option<u32> {
        self.policies
            .binary_search_by_key(&ino, |r| r.0)
            .ok()
            .map(|i| self.policies[i].1)
    }
    /// True when `ino` lies in a bad block of the inode table.
    pub fn is_bb_inode(&self, ino: u32) -> bool {
        self.bb_inodes.binary_search(&ino).is_ok()
    }
}

/// What pass 2 hands to pass 3.
#[derive(Debug, Default)]
pub struct Pass2Result {
    /// The inode `lost+found` names in the root directory, if any.
    pub lost_found: Option<u32>,
}
