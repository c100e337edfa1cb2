//! Progress of a check, reported through a trait so the library never prints: the CLI draws a
//! bar on a terminal, everything else passes nothing.

use std::sync::Arc;

/// A phase of the check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Superblock, backups, descriptors, bitmaps, counts, journal superblock.
    Metadata,
    /// The inode walk (pass 1 and block ownership); work is counted in inode slots.
    Inodes,
    /// Directories, connectivity and reference counts (passes 2 to 4).
    Directories,
    /// Bitmaps and counts recomputed from the inodes (pass 5).
    Usage,
}

impl Phase {
    /// Short name for a display.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Metadata => "metadata",
            Phase::Inodes => "inodes",
            Phase::Directories => "directories",
            Phase::Usage => "bitmaps",
        }
    }
}

/// Receives progress; called from worker threads.
pub trait Progress: Send + Sync {
    /// A phase begins; `total` units of work when known.
    fn phase(&self, phase: Phase, total: Option<u64>);
    /// `units` more units of the current phase are done.
    fn advance(&self, units: u64);
}

/// An optional progress receiver, carried in [`super::CheckOptions`].
#[derive(Clone, Default)]
pub struct ProgressHook(Option<Arc<dyn Progress>>);

impl ProgressHook {
    /// Report to `receiver`.
    pub fn new(receiver: Arc<dyn Progress>) -> ProgressHook {
        ProgressHook(Some(receiver))
    }
    pub(crate) fn phase(&self, phase: Phase, total: Option<u64>) {
        if let Some(receiver) = &self.0 {
            receiver.phase(phase, total);
        }
    }
    pub(crate) fn advance(&self, units: u64) {
        if let Some(receiver) = &self.0 {
            receiver.advance(units);
        }
    }
}

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(if self.0.is_some() {
            "ProgressHook(set)"
        } else {
            "ProgressHook(none)"
        })
    }
}
