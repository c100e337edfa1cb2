//! e4inspect: read ext2/3/4 filesystems straight from images and block devices, never writing.
//!
//! The library decodes on-disk structures from bounds-checked byte slices (one module per
//! structure), computes geometry in one place ([`geometry`]), and leaves every kind of formatting
//! to [`mod@format`]. It never prints.
//!
//! ```
//! use e4inspect::{fs::{Filesystem, OpenOptions}, source::Source};
//!
//! // Anything that is not an ext2/3/4 filesystem is an error, never a panic.
//! let src = Source::from_bytes(&[0u8; 4096]).unwrap();
//! let err = Filesystem::from_source(src, &OpenOptions::default()).unwrap_err();
//! assert!(err.to_string().contains("Bad magic number in super-block"));
//!
//! // Checksums as ext4 computes them: the raw CRC32C register, and uninit_bg's CRC-16.
//! assert_eq!(e4inspect::csum::crc32c_raw(!0, b"123456789"), 0x1CF9_6D7C);
//! assert_eq!(e4inspect::csum::crc16(0xFFFF, b"123456789"), 0x4B37);
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod check;
pub mod error;
pub mod format;
pub mod models;
pub mod reader;
pub mod views;

pub use error::Fault;
pub use error::{Error, LibError, Problem, ProblemKind, Result};
pub use models::{advise, fit, mkfs, profiles};
pub use reader::{
    bitmap, container, csum, dir, dirhash, extent, features, fileblocks, fs, geometry, group,
    inode, jbd2, journal, namei, ondisk, os, partition, source, superblock, xattr,
};
pub use views::{contents, extract, freefrag, logdump, scan};
