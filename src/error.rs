//! Error type of the library. Every failure names what was being read and where.

use serde::Serialize;
use std::path::PathBuf;

/// The words every [`Error::Absent`] message holds, for code that keeps a failure as a message
/// ([`Problem`]) and must still tell "not in this image" from damage.
pub const ABSENT: &str = "is not present in this metadata image";

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
    /// A field read from disk has a value we cannot work with (what kind of structure, and the
    /// message).
    #[error("{0}")]
    Corrupt(Problem),
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
        /// The structure (as its on-disk declaration's `OnDisk::WHAT` names it).
        what: &'static str,
        /// Its size.
        need: usize,
        /// Bytes available.
        got: usize,
    },
    /// The caller asked for something that makes no sense.
    #[error("{0}")]
    Invalid(String),
    /// The bytes asked for are not in the input's container: a normal e2image file holds only
    /// the superblock, descriptors, bitmaps and inode tables, and an `e2image -Q` qcow2 no file
    /// data. Never zeros and never damage: the filesystem may well hold them.
    // The words of ABSENT, which callers that keep only a message look for.
    #[error("{what} at byte offset {offset} (length {len}) is not present in this metadata image ({image})")]
    Absent {
        /// The structure being read.
        what: String,
        /// Byte offset (in the filesystem's window).
        offset: u64,
        /// Length of the read.
        len: u64,
        /// The kind of image (`e2image file`, `e2image qcow2 file`).
        image: &'static str,
    },
    /// The input's container (a qcow2 or e2image file) is damaged, or uses a feature this reader
    /// refuses (a backing file, encryption, an external data file): what, and what to do.
    #[error("{path}: {message}")]
    Container {
        /// The input's path.
        path: PathBuf,
        /// What is wrong, with the field and its value.
        message: String,
    },
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
            Error::Absent {
                what: inner,
                offset,
                len,
                image,
            } => Error::Absent {
                what: format!("{what} ({inner})"),
                offset,
                len,
                image,
            },
            other => other,
        }
    }

    /// True when the failure is a read of bytes a metadata-only image does not hold
    /// ([`Error::Absent`]), directly or underneath a libext2fs-style error.
    pub fn is_absent(&self) -> bool {
        matches!(self, Error::Absent { .. })
    }

    /// Shorthand for a [`Error::Corrupt`] error of `kind`.
    pub fn corrupt(kind: ProblemKind, msg: impl Into<String>) -> Self {
        Error::Corrupt(Problem::new(kind, msg))
    }
}

/// Where a [`Problem`] was met: the structure (or step) found damaged or unreadable, so that
/// callers can sort and count problems without reading their text. More kinds may be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProblemKind {
    /// The superblock (its counts and fields).
    Superblock,
    /// A block group's descriptor, bitmap or inode table (the inode scan).
    Group,
    /// An inode record (too short, checksum).
    Inode,
    /// An extent tree: header, index, leaf, tail checksum, overlap.
    ExtentTree,
    /// A block map: indirect blocks and the block numbers they hold.
    BlockMap,
    /// Inline data (`system.data`).
    InlineData,
    /// Extended attributes: in-inode area, xattr block, EA inode.
    Xattr,
    /// A directory block: entries, tail, htree nodes.
    Directory,
    /// A symbolic link's target.
    Symlink,
    /// The journal: its inode, superblock and log blocks.
    Journal,
    /// The multiple-mount protection block.
    Mmp,
    /// A fixed-layout structure that does not decode, or a block number that overflows.
    Structure,
    /// A request the caller made that cannot be met (a chunk size, an xattr the VFS refuses).
    Request,
    /// Writing a copy out (`extract`): the destination refused an entry or an attribute.
    Destination,
}

/// What sort of damage a [`Problem`] is, finer than its [`ProblemKind`], so that callers can route
/// it without reading its text. More sorts may be added.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Fault {
    /// Any damage not named below.
    #[default]
    Other,
    /// A stored checksum that does not match the computed one.
    Checksum,
    /// A block number outside the filesystem.
    OutOfRange,
}

/// A problem met while reading (or copying out) that does not stop the walk: its kind, and the
/// message naming what and where, exactly as it is printed (`Display` is the message).
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[error("{message}")]
pub struct Problem {
    /// Where it was met.
    pub kind: ProblemKind,
    /// What sort of damage it is.
    pub fault: Fault,
    /// What was found, with block and inode numbers.
    pub message: String,
}

impl Problem {
    /// A problem of `kind` saying `message`.
    pub fn new(kind: ProblemKind, message: impl Into<String>) -> Self {
        Problem {
            kind,
            fault: Fault::Other,
            message: message.into(),
        }
    }

    /// The same problem marked as a `fault` of that sort.
    pub fn with_fault(self, fault: Fault) -> Self {
        Problem { fault, ..self }
    }

    /// The same problem with `prefix: ` in front of its message (the inode or group it is in).
    pub fn within(self, prefix: impl std::fmt::Display) -> Self {
        Problem {
            kind: self.kind,
            fault: self.fault,
            message: format!("{prefix}: {}", self.message),
        }
    }
}

/// Described as a string in the JSON Schemas, as it is serialised.
impl schemars::JsonSchema for Problem {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Problem".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

/// Serialised as its message, so JSON outputs keep their strings.
impl Serialize for Problem {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.message)
    }
}

/// The libext2fs com_err messages this crate reproduces (`lib/ext2fs/ext2_err.et.in`), each text
/// once: [`LibError`], [`OpenFailure`] and the bitmap reader's failures all print from here.
pub mod ext2_err {
    /// `EXT2_ET_BAD_INODE_NUM`.
    pub const BAD_INODE_NUM: &str = "Illegal inode number";
    /// `EXT2_ET_MISSING_INODE_TABLE`.
    pub const MISSING_INODE_TABLE: &str = "A block group is missing an inode table";
    /// `EXT2_ET_GDESC_BAD_INODE_TABLE`.
    pub const GDESC_BAD_INODE_TABLE: &str = "Corrupt group descriptor: bad block for inode table";
    /// `EXT2_ET_SHORT_READ`.
    pub const SHORT_READ: &str = "Attempt to read block from filesystem resulted in short read";
    /// `EXT2_ET_INODE_CSUM_INVALID`.
    pub const INODE_CSUM_INVALID: &str = "Inode checksum does not match inode";
    /// `EXT2_ET_DIR_CORRUPTED`.
    pub const DIR_CORRUPTED: &str = "Ext2 directory corrupted";
    /// `EXT2_ET_BAD_IND_BLOCK`.
    pub const BAD_IND_BLOCK: &str = "Illegal indirect block found";
    /// `EXT2_ET_MMP_BAD_BLOCK`.
    pub const MMP_BAD_BLOCK: &str = "MMP: block number beyond filesystem range";
    /// `EXT2_ET_MMP_MAGIC_INVALID`.
    pub const MMP_MAGIC_INVALID: &str = "MMP: invalid magic number";
    /// `EXT2_ET_MMP_CSUM_INVALID`.
    pub const MMP_CSUM_INVALID: &str = "MMP block checksum does not match";
    /// `EXT2_ET_MMP_FAILED`.
    pub const MMP_FAILED: &str = "MMP: device currently active";
    /// `EXT2_ET_MMP_FSCK_ON`.
    pub const MMP_FSCK_ON: &str = "MMP: e2fsck being run";
    /// `EXT2_ET_MMP_UNKNOWN_SEQ`.
    pub const MMP_UNKNOWN_SEQ: &str = "MMP: undergoing an unknown operation";
    /// `EXT2_ET_BAD_MAGIC`.
    pub const BAD_MAGIC: &str = "Bad magic number in super-block";
    /// `EXT2_ET_SB_CSUM_INVALID`.
    pub const SB_CSUM_INVALID: &str = "Superblock checksum does not match superblock";
    /// `EXT2_ET_UNKNOWN_CSUM`.
    pub const UNKNOWN_CSUM: &str = "Unknown checksum algorithm";
    /// `EXT2_ET_REV_TOO_HIGH`.
    pub const REV_TOO_HIGH: &str = "Filesystem revision too high";
    /// `EXT2_ET_UNSUPP_FEATURE`.
    pub const UNSUPP_FEATURE: &str = "Filesystem has unsupported feature(s)";
    /// `EXT2_ET_CORRUPT_SUPERBLOCK`.
    pub const CORRUPT_SUPERBLOCK: &str = "The ext2 superblock is corrupt";
    /// `EXT2_ET_BAD_DESC_SIZE`.
    pub const BAD_DESC_SIZE: &str = "Block group descriptor size incorrect";
    /// `EXT2_ET_UNEXPECTED_BLOCK_SIZE`.
    pub const UNEXPECTED_BLOCK_SIZE: &str = "Filesystem has unexpected block size";
    /// `EXT2_ET_BLOCK_BITMAP_READ`.
    pub const BLOCK_BITMAP_READ: &str = "Can't read a block bitmap";
    /// `EXT2_ET_INODE_BITMAP_READ`.
    pub const INODE_BITMAP_READ: &str = "Can't read an inode bitmap";
    /// `EXT2_ET_BLOCK_BITMAP_CSUM_INVALID`.
    pub const BLOCK_BITMAP_CSUM_INVALID: &str = "Block bitmap checksum does not match bitmap";
    /// `EXT2_ET_INODE_BITMAP_CSUM_INVALID`.
    pub const INODE_BITMAP_CSUM_INVALID: &str = "Inode bitmap checksum does not match bitmap";
    /// `EXT2_ET_EXTENT_CSUM_INVALID`.
    pub const EXTENT_CSUM_INVALID: &str = "Extent block checksum does not match extent block";
    /// `EXT2_ET_DIR_CSUM_INVALID`.
    pub const DIR_CSUM_INVALID: &str = "Directory block checksum does not match directory block";
    /// `EXT2_ET_NO_DIRECTORY`.
    pub const NO_DIRECTORY: &str = "Ext2 inode is not a directory";
}

/// A libext2fs error code met on the paths that report exactly what libext2fs (and so dumpe2fs
/// or debugfs) would; `Display` is its com_err message. More codes may be added.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LibError {
    /// EXT2_ET_BAD_INODE_NUM
    #[error("{}", ext2_err::BAD_INODE_NUM)]
    IllegalInode,
    /// EXT2_ET_MISSING_INODE_TABLE
    #[error("{}", ext2_err::MISSING_INODE_TABLE)]
    MissingInodeTable,
    /// EXT2_ET_GDESC_BAD_INODE_TABLE
    #[error("{}", ext2_err::GDESC_BAD_INODE_TABLE)]
    BadInodeTable,
    /// EXT2_ET_SHORT_READ
    #[error("{}", ext2_err::SHORT_READ)]
    ShortRead,
    /// EXT2_ET_INODE_CSUM_INVALID
    #[error("{}", ext2_err::INODE_CSUM_INVALID)]
    InodeCsumInvalid,
    /// EXT2_ET_DIR_CORRUPTED
    #[error("{}", ext2_err::DIR_CORRUPTED)]
    DirCorrupted,
    /// EXT2_ET_BAD_IND_BLOCK
    #[error("{}", ext2_err::BAD_IND_BLOCK)]
    IllegalIndirectBlock,
    /// EXT2_ET_NO_DIRECTORY
    #[error("{}", ext2_err::NO_DIRECTORY)]
    NoDirectory,
    /// EXT2_ET_INLINE_DATA_CANT_ITERATE
    #[error("Cannot iterate data blocks of an inode containing inline data")]
    InlineDataCantIterate,
    /// EXT2_ET_MMP_BAD_BLOCK
    #[error("{}", ext2_err::MMP_BAD_BLOCK)]
    MmpBadBlock,
    /// EXT2_ET_MMP_MAGIC_INVALID
    #[error("{}", ext2_err::MMP_MAGIC_INVALID)]
    MmpMagicInvalid,
    /// EXT2_ET_MMP_CSUM_INVALID
    #[error("{}", ext2_err::MMP_CSUM_INVALID)]
    MmpCsumInvalid,
    /// debugfs' `logdump -s` on a superblock without a journal backup.
    #[error("no journal backup in super block")]
    NoJournalBackup,
    /// A failure of our own reader underneath (an I/O error, a structure cut short).
    #[error("{0}")]
    Read(std::sync::Arc<Error>),
}

impl From<Error> for LibError {
    fn from(err: Error) -> Self {
        LibError::Read(std::sync::Arc::new(err))
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
            OpenFailure::BadMagic => ext2_err::BAD_MAGIC,
            OpenFailure::SbCsumInvalid => ext2_err::SB_CSUM_INVALID,
            OpenFailure::UnknownCsum => ext2_err::UNKNOWN_CSUM,
            OpenFailure::RevTooHigh => ext2_err::REV_TOO_HIGH,
            OpenFailure::UnsuppFeature => ext2_err::UNSUPP_FEATURE,
            OpenFailure::CorruptSuperblock => ext2_err::CORRUPT_SUPERBLOCK,
            OpenFailure::BadDescSize => ext2_err::BAD_DESC_SIZE,
            OpenFailure::UnexpectedBlockSize => ext2_err::UNEXPECTED_BLOCK_SIZE,
            OpenFailure::ShortRead => ext2_err::SHORT_READ,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_messages_hold_the_marker() {
        let err = Error::Absent {
            what: "block 7".into(),
            offset: 7168,
            len: 1024,
            image: "e2image file",
        };
        assert!(err.is_absent());
        assert!(err.to_string().contains(ABSENT));
        assert!(err.reading("inode 12").to_string().contains(ABSENT));
    }
}
