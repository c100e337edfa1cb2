//! e4inspect: read ext2/3/4 filesystems straight from images and block devices, never writing.
//!
//! The library decodes on-disk structures from bounds-checked byte slices (one module per
//! structure), computes geometry in one place ([`geometry`]), and leaves every kind of formatting
//! to [`format`]. It never prints.

pub mod advise;
pub mod bytes;
pub mod check;
pub mod error;
pub mod mkfs;
pub mod source;

pub use error::{Error, Result};
pub mod bitmap;
pub mod csum;
pub mod dir;
pub mod extent;
pub mod features;
pub mod fit;
pub mod format;
pub mod fs;
pub mod geometry;
pub mod group;
pub mod inode;
pub mod journal;
pub mod partition;
pub mod profiles;
pub mod scan;
pub mod superblock;
pub mod xattr;
