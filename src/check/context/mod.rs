//! The check's shared state and facts: the role of e2fsck's `e2fsck.h` (`struct e2fsck_struct`).
//!
//! Every pass depends on this module and on nothing inside another pass: what a pass leaves
//! for the later ones is declared here ([`Pass1Result`], [`Extras`], [`Pass2Result`], the
//! [`InodeIndex`]), and [`CheckState`] carries it from pass to pass. The order of the passes is
//! one table, `PASSES` in `check/mod.rs` (e2fsck.c's `e2fsck_passes`).

mod facts;
mod index;

pub use facts::{
    file_type_of_mode, Extras, InodeFacts, Pass1Result, Pass2Result, UNRECOGNIZED_POLICY,
};
pub use index::{GroupList, InodeIndex, InodeSlot};

use super::progress::ProgressHook;
use super::Findings;
use crate::reader::bitmap::UninitMarks;
use crate::reader::fs::Filesystem;

/// What the passes of one check share (e2fsck's `e2fsck_t`): the filesystem, the findings so
/// far, and what each pass left for the next.
pub struct CheckState<'a> {
    /// The filesystem, opened from the superblock the group checks use.
    pub fs: &'a Filesystem,
    /// Findings so far, in the order the passes made them.
    pub findings: Findings,
    /// Where progress goes.
    pub progress: &'a ProgressHook,
    /// Only the constant-work-per-group passes run (`check --quick`).
    pub quick: bool,
    /// Which bitmap blocks the group checks found uninitialised (pass 5 compares the others).
    pub marks: Option<UninitMarks>,
    /// The orphan list and orphan file's inodes (before pass 1; pass 1 keeps them sorted).
    pub orphans: Vec<u32>,
    /// What pass 1 found (empty before it runs).
    pub pass1: Pass1Result,
    /// What pass 2 found (empty before it runs).
    pub pass2: Pass2Result,
}

impl<'a> CheckState<'a> {
    /// The state before the first pass.
    pub fn new(
        fs: &'a Filesystem,
        findings: Findings,
        progress: &'a ProgressHook,
        quick: bool,
    ) -> CheckState<'a> {
        CheckState {
            fs,
            findings,
            progress,
            quick,
            marks: None,
            orphans: Vec::new(),
            pass1: Pass1Result::default(),
            pass2: Pass2Result::default(),
        }
    }
}
