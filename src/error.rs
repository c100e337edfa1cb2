//! Error type of the library. Every failure names what was being read and where.

use std::path::PathBuf;

/// Library result type.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong while reading an image.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The operating system refused an operation on the source.
    #[error("{path}: {op}: {source}")]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The operating system reported an error while reading (a failing disk, a detached device).
    #[error("{path}: I/O error reading {what} at byte offset {offset} (length {len}): {source}")]
    Read {
        path: PathBuf,
        what: String,
        offset: u64,
        len: u64,
        #[source]
        source: std::io::Error,
    },
    /// The input became shorter than it was when opened (truncated by another process).
    #[error("{path}: short read of {what} at byte offset {offset} (length {len}): the input shrank while being read (it was {size} bytes when opened)")]
    Shrunk {
        path: PathBuf,
        what: String,
        offset: u64,
        len: u64,
        size: u64,
    },
    /// A structure lies (partly) beyond the end of the source.
    #[error("{what} at byte offset {offset} (length {len}) lies beyond the end of the image ({size} bytes): image truncated?")]
    Truncated {
        what: String,
        offset: u64,
        len: u64,
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
        failure: crate::geometry::OpenFailure,
        /// Extra advice (for example, backup superblocks that look valid).
        hint: String,
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
