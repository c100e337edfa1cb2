//! Containers: files that hold a disk in another layout than byte for byte.
//!
//! Two are read ([`open_disk`], by content, never by file name), as the disk they hold:
//! - qcow2 ([`crate::reader::qcow2`]): any qcow2 qemu-img writes, and `e2image -Q` files;
//! - the normal e2image format ([`crate::reader::e2image`]), what `dumpe2fs -i` and
//!   `debugfs -i` read.
//!
//! Both are behind [`Disk`], plugged into [`Source`] as one backend: every view reads the
//! disk through the source as it reads a raw image. A metadata-only image (e2image) answers a
//! read of bytes it does not hold with [`ReadFailure::Absent`], never zeros.
//!
//! Other compressed files and virtual-disk containers are recognised by their magic numbers
//! ([`identify`]), so that such an input gets a one-line answer naming what it is and what to
//! do ("gzip-compressed image: decompress it first") instead of "bad magic number": gzip
//! (RFC 1952), xz, zstd, bzip2, lz4 frames; VHD (`conectix` footer, at the start of dynamic
//! disks and the end of fixed ones), VHDX (`vhdxfile`), VMDK (sparse extent `KDMV`, or a text
//! descriptor), VDI, EWF/E01 (`EVF`) and Ex01.

use crate::error::{Error, Result};
use crate::reader::source::Source;

/// What holds the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerKind {
    /// A qcow2 image holding a whole disk (qemu-img): unallocated clusters read as zeros.
    Qcow2,
    /// A qcow2 written by `e2image -Q`: every metadata block, no file data.
    E2imageQcow2,
    /// A normal e2image file: superblock, descriptors, bitmaps and inode tables only.
    E2image,
}

impl ContainerKind {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            ContainerKind::Qcow2 => "qcow2 image",
            ContainerKind::E2imageQcow2 => "e2image qcow2 file",
            ContainerKind::E2image => "e2image file",
        }
    }

    /// True when the container holds only part of the filesystem (an e2image).
    pub fn metadata_only(self) -> bool {
        !matches!(self, ContainerKind::Qcow2)
    }
}

/// What a read is for: where a metadata-only image holds no bytes, file data is absent, while
/// metadata it skipped (e2image leaves all-zero metadata blocks out of its qcow2) reads as the
/// zeros it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Filesystem metadata (superblock, descriptors, bitmaps, inode tables, directories,
    /// extent trees, xattr blocks, the journal).
    Metadata,
    /// The contents of regular files.
    FileData,
}

/// Why a container read failed.
#[derive(Debug)]
pub enum ReadFailure {
    /// The container does not hold `len` bytes at byte offset `offset` of its disk.
    Absent {
        /// First byte not held.
        offset: u64,
        /// Bytes of the read from there.
        len: u64,
    },
    /// The container could not be read (I/O), or its structures are damaged.
    Error(Error),
}

impl From<Error> for ReadFailure {
    fn from(error: Error) -> Self {
        ReadFailure::Error(error)
    }
}

/// A disk held in a container file, read by byte offset. Shared by the scan's worker threads.
pub trait Disk: Send + Sync {
    /// What it is.
    fn kind(&self) -> ContainerKind;
    /// Size of the disk in bytes.
    fn len(&self) -> u64;
    /// True when the disk holds no byte.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fill `buf` from byte `offset` of the disk (inside `len()`, checked by the caller).
    fn read_at(
        &self,
        offset: u64,
        buf: &mut [u8],
        access: Access,
    ) -> std::result::Result<(), ReadFailure>;
    /// True when [`Disk::will_need`] reaches the kernel (the container is a file).
    fn takes_hints(&self) -> bool {
        false
    }
    /// Tell the kernel that disk bytes `[offset, offset + len)` are about to be read: the hint
    /// goes to where the container stores them. A hint only; never fails.
    fn will_need(&self, _offset: u64, _len: u64) {}
}

/// The disk held by `file` when its content is a container this reader opens (qcow2, a normal
/// e2image), `None` when it is not one; an error when it is one but damaged or refused.
pub fn open_disk(file: &Source) -> Result<Option<Box<dyn Disk>>> {
    let head = file.read_partial(0, 64);
    if head.starts_with(crate::reader::qcow2::MAGIC) {
        return Ok(Some(Box::new(crate::reader::qcow2::Qcow2::open(
            file.clone(),
        )?)));
    }
    if crate::reader::e2image::is_e2image(&head) {
        return Ok(Some(Box::new(crate::reader::e2image::E2Image::open(
            file.clone(),
        )?)));
    }
    Ok(None)
}

/// What an input was recognised as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Container {
    /// e.g. `gzip-compressed image`.
    pub what: &'static str,
    /// e.g. `decompress it first`.
    pub advice: &'static str,
}

impl std::fmt::Display for Container {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}: {}", self.what, self.advice)
    }
}

const DECOMPRESS: &str = "decompress it first";
const CONVERT: &str = "convert it to a raw image first (e.g. qemu-img convert -O raw)";

/// (offset, magic, what, advice), checked in order against the first bytes.
const HEAD: &[(usize, &[u8], &str, &str)] = &[
    (0, b"\x1f\x8b", "gzip-compressed image", DECOMPRESS),
    (0, b"\xfd7zXZ\x00", "xz-compressed image", DECOMPRESS),
    (0, b"\x28\xb5\x2f\xfd", "zstd-compressed image", DECOMPRESS),
    (0, b"\x04\x22\x4d\x18", "lz4-compressed image", DECOMPRESS),
    (0, b"conectix", "VHD disk image", CONVERT),
    (0, b"vhdxfile", "VHDX disk image", CONVERT),
    (0, b"KDMV", "VMDK disk image", CONVERT),
    (
        0,
        b"# Disk DescriptorFile",
        "VMDK descriptor file",
        "open the extent it names, converted to a raw image",
    ),
    (
        0,
        b"<<< Oracle VM VirtualBox Disk Image >>>",
        "VDI disk image",
        CONVERT,
    ),
    (
        0,
        b"EVF\x09\x0d\x0a\xff\x00",
        "EWF/E01 forensic image",
        "export it to a raw image first (e.g. ewfexport or ewfmount)",
    ),
    (
        0,
        b"EVF2\x0d\x0a\x81\x00",
        "Ex01 forensic image",
        "export it to a raw image first (e.g. ewfexport or ewfmount)",
    ),
];

/// Recognise a container from the first bytes (`head`, 64 are enough) and the last 512 bytes
/// (`tail`, where a fixed VHD keeps its footer).
pub fn identify(head: &[u8], tail: Option<&[u8]>) -> Option<Container> {
    if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
        return Some(Container {
            what: "bzip2-compressed image",
            advice: DECOMPRESS,
        });
    }
    for &(off, magic, what, advice) in HEAD {
        if head.get(off..off + magic.len()) == Some(magic) {
            return Some(Container { what, advice });
        }
    }
    if tail.is_some_and(|t| t.starts_with(b"conectix")) {
        return Some(Container {
            what: "VHD disk image",
            advice: CONVERT,
        });
    }
    None
}

/// [`identify`] on a source: its first 64 bytes and its last 512.
pub fn identify_source(src: &Source) -> Option<Container> {
    let head = src.read_partial(0, 64);
    let tail = src
        .len()
        .checked_sub(512)
        .and_then(|o| src.try_read(o, 512));
    identify(&head, tail.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_and_containers_are_named() {
        let cases: [(&[u8], &str); 11] = [
            (b"\x1f\x8b\x08\x00rest", "gzip-compressed image"),
            (b"\xfd7zXZ\x00\x00", "xz-compressed image"),
            (b"\x28\xb5\x2f\xfd\x00", "zstd-compressed image"),
            (b"BZh91AY&SY", "bzip2-compressed image"),
            (b"\x04\x22\x4d\x18", "lz4-compressed image"),
            (b"conectix\x00", "VHD disk image"),
            (b"vhdxfile", "VHDX disk image"),
            (b"KDMV\x01\x00", "VMDK disk image"),
            (b"# Disk DescriptorFile\n", "VMDK descriptor file"),
            (b"EVF\x09\x0d\x0a\xff\x00\x01", "EWF/E01 forensic image"),
            (b"EVF2\x0d\x0a\x81\x00", "Ex01 forensic image"),
        ];
        for (head, what) in cases {
            let container = identify(head, None).unwrap_or_else(|| panic!("{what} not recognised"));
            assert_eq!(container.what, what);
        }
        assert_eq!(
            identify(b"\x1f\x8b", None).unwrap().to_string(),
            "gzip-compressed image: decompress it first"
        );
        let mut tail = vec![0u8; 512];
        tail[..8].copy_from_slice(b"conectix");
        assert_eq!(
            identify(&[0u8; 64], Some(&tail)).unwrap().what,
            "VHD disk image"
        );
        // Not containers: zeros, an ext superblock area, "BZh" without a level digit, short input.
        assert!(identify(&[0u8; 64], Some(&[0u8; 512])).is_none());
        assert!(identify(b"BZhx", None).is_none());
        assert!(identify(b"\x1f", None).is_none());
        assert!(identify(b"", None).is_none());
        // qcow2 is opened, not named.
        assert!(identify(b"QFI\xfb\x00\x00\x00\x03", None).is_none());
    }
}
