//! The check's entry to the one inode-table walk ([`crate::reader::walk`]): the engine lives in
//! the reader so that every scan (`models::fit`, `views::scan`, the check) drives it; the check
//! reports its progress through its [`ProgressHook`].

use super::progress::ProgressHook;
use crate::reader::fs::Filesystem;
pub use crate::reader::walk::{GroupEnd, TableVisitor};

/// [`crate::reader::walk::run`] with the check's progress hook.
pub fn run<V: TableVisitor>(
    fs: &Filesystem,
    visitor: &V,
    progress: &ProgressHook,
) -> Option<V::Worker> {
    crate::reader::walk::run(fs, visitor, &|n| progress.advance(n))
}
