//! Error type of the library. Every failure names what was being read and where.

use serde::Serialize;
use std::path::PathBuf;

/// Library result type.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong while reading an image. More kinds may be added.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system refused an operation on the source.
    #[error("{path}: {op}: {source}")]
    Io {
        /// The source being read.
        path: PathBuf,
        /// What was attempted (`open`, `read` ...).
        op: &'static str,
        #[source]
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The operating system reported an error while reading (a failing disk, a detached device).
    #[error("{path}: I/O error reading {what} at byte offset {offset} (length {len}): {source}")]
    Read {
        /// The input's path.
        path: PathBuf,
        /// The structure being read ("inode table of group 17").
        what: String,
        /// Byte offset (in the filesystem's window) where the failing read started.
        offset: u64,
        /// Bytes that were still to be read.
        len: u64,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The input became shorter than it was when opened (truncated by another process).
    #[error("{path}: short read of {what} at byte offset {offset} (length {len}): the input shrank while being read (it was {size} bytes when opened)")]
    Shrunk {
        /// The input's path.
        path: PathBuf,
        /// The structure being read.
        what: String,
        /// Byte offset of the read.
        offset: u64,
        /// Length of the read.
        len: u64,
        /// Size of the input when it was opened.
        size: u64,
    },
    /// A structure lies (partly) beyond the end of the source.
    #[error("{what} at byte offset {offset} (length {len}) lies beyond the end of the image ({size} bytes): image truncated?")]
    Truncated {
        /// The structure that was being read.
        what: String,
        /// Its byte offset in the source.
        offset: u64,
        /// Its length in bytes.
        len: u64,
        /// Size of the source in bytes.
        size: u64,
    },
    /// The source holds no ext2/3/4 filesystem where we looked.
    #[error("{0}")]
    NotExt(String),
    /// A field read from disk has a value we cannot work with.
    #[error("{0}")]
    Corrupt(String),
    /// libext2fs would refuse to open this superblock (its message, and where we looked).
    #[error("{}{}", .failure.message(), .hint)]
    Open {
        /// The libext2fs error it corresponds to.
        failure: OpenFailure,
        /// Extra advice (for example, backup superblocks that look valid).
        hint: String,
    },
    /// A fixed-layout structure was decoded from fewer bytes than it occupies.
    #[error("{what} needs {need} bytes, got {got}")]
    Short {
        /// The structure (as [`crate::ondisk::OnDisk::WHAT`] names it).
        what: &'static str,
        /// Its size.
        need: usize,
        /// Bytes available.
        got: usize,
    },
    /// The caller asked for something that makes no sense.
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    /// The same failure, saying that it happened while reading `what` (a block read on behalf
    /// of an inode, say): read errors keep their offsets and gain the name.
    pub fn reading(self, what: impl std::fmt::Display) -> Error {
        match self {
            Error::Read {
                path,
                what: inner,
                offset,
                len,
                source,
            } => Error::Read {
                path,
                what: format!("{what} ({inner})"),
                offset,
                len,
                source,
            },
            Error::Shrunk {
                path,
                what: inner,
                offset,
                len,
                size,
            } => Error::Shrunk {
                path,
                what: format!("{what} ({inner})"),
                offset,
                len,
                size,
            },
            Error::Truncated {
                what: inner,
                offset,
                len,
                size,
            } => Error::Truncated {
                what: format!("{what} ({inner})"),
                offset,
                len,
                size,
            },
            other => other,
        }
    }

    /// Shorthand for a [`Error::Corrupt`] error.
    pub fn corrupt(msg: impl Into<String>) -> Self {
        Error::Corrupt(msg.into())
    }
}

/// Why libext2fs (ext2fs_open2) would refuse a superblock; `message()` is its com_err text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[non_exhaustive]
pub enum OpenFailure {
    /// EXT2_ET_BAD_MAGIC
    BadMagic,
    /// EXT2_ET_SB_CSUM_INVALID
    SbCsumInvalid,
    /// EXT2_ET_UNKNOWN_CSUM
    UnknownCsum,
    /// EXT2_ET_REV_TOO_HIGH
    RevTooHigh,
    /// EXT2_ET_UNSUPP_FEATURE
    UnsuppFeature,
    /// EXT2_ET_CORRUPT_SUPERBLOCK
    CorruptSuperblock,
    /// EXT2_ET_BAD_DESC_SIZE
    BadDescSize,
    /// EXT2_ET_UNEXPECTED_BLOCK_SIZE
    UnexpectedBlockSize,
    /// EXT2_ET_SHORT_READ
    ShortRead,
}

impl OpenFailure {
    /// The libext2fs message for this failure.
    pub fn message(self) -> &'static str {
        match self {
            OpenFailure::BadMagic => "Bad magic number in super-block",
            OpenFailure::SbCsumInvalid => "Superblock checksum does not match superblock",
            OpenFailure::UnknownCsum => "Unknown checksum algorithm",
            OpenFailure::RevTooHigh => "Filesystem revision too high",
            OpenFailure::UnsuppFeature => "Filesystem has unsupported feature(s)",
            OpenFailure::CorruptSuperblock => "The ext2 superblock is corrupt",
            OpenFailure::BadDescSize => "Block group descriptor size incorrect",
            OpenFailure::UnexpectedBlockSize => "Filesystem has unexpected block size",
            OpenFailure::ShortRead => {
                "Attempt to read block from filesystem resulted in short read"
            }
        }
    }
}
