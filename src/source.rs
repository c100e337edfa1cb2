//! Read-only access to an image file or block device, memory-mapped.
//!
//! The source is opened with `O_RDONLY` and mapped with a read-only shared mapping, so nothing can
//! ever be written to it. Every read is bounds-checked against the source size.

use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// A read-only byte source: a regular file or a block device, or a window of one.
pub struct Source {
    path: PathBuf,
    map: Option<memmap2::Mmap>,
    /// Start of the window (partition offset) inside the mapping.
    base: u64,
    /// Length of the window.
    len: u64,
    /// True when the path is a block device.
    is_device: bool,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("path", &self.path)
            .field("base", &self.base)
            .field("len", &self.len)
            .finish()
    }
}

#[cfg(target_os = "linux")]
fn block_device_size(file: &File) -> std::io::Result<u64> {
    use std::os::unix::io::AsRawFd;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    // SAFETY: the ioctl writes one u64 into `size`, which lives for the whole call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

#[cfg(not(target_os = "linux"))]
fn block_device_size(file: &File) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::End(0))
}

impl Source {
    /// Open `path` read-only and map it.
    pub fn open(path: &Path) -> Result<Source> {
        let io = |op: &'static str| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, op, source }
        };
        let meta = std::fs::metadata(path).map_err(io("cannot open"))?;
        if meta.is_dir() {
            return Err(Error::Io {
                path: path.to_path_buf(),
                op: "cannot read",
                source: std::io::Error::other("Is a directory"),
            });
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .open(path)
            .map_err(io("cannot open"))?;
        let is_device = meta.file_type().is_block_device();
        let len = if is_device {
            block_device_size(&file).map_err(io("cannot get block device size"))?
        } else {
            meta.len()
        };
        let map = if len == 0 {
            None
        } else {
            let len_usize = usize::try_from(len).map_err(|_| {
                Error::Invalid(format!(
                    "{}: too large to map on this platform",
                    path.display()
                ))
            })?;
            // SAFETY: the mapping is read-only; the file may change under us (as with any reader of a
            // live device), which can change bytes we read but not break memory safety of `&[u8]`
            // reads on a shared read-only mapping beyond what every mmap reader accepts.
            let m = unsafe { memmap2::MmapOptions::new().len(len_usize).map(&file) }
                .map_err(io("cannot map"))?;
            Some(m)
        };
        Ok(Source {
            path: path.to_path_buf(),
            map,
            base: 0,
            len,
            is_device,
        })
    }

    /// Build a source over an in-memory copy (tests, fuzzing).
    pub fn from_bytes(bytes: &[u8]) -> Result<Source> {
        let mut m = memmap2::MmapMut::map_anon(bytes.len().max(1)).map_err(|e| Error::Io {
            path: PathBuf::from("<memory>"),
            op: "cannot map",
            source: e,
        })?;
        if let Some(dst) = m.get_mut(..bytes.len()) {
            dst.copy_from_slice(bytes);
        }
        let map = m.make_read_only().map_err(|e| Error::Io {
            path: PathBuf::from("<memory>"),
            op: "cannot map",
            source: e,
        })?;
        Ok(Source {
            path: PathBuf::from("<memory>"),
            map: Some(map),
            base: 0,
            len: bytes.len() as u64,
            is_device: false,
        })
    }

    /// Restrict the source to `[offset, offset+len)` of the current window (a partition).
    pub fn window(mut self, offset: u64, len: Option<u64>) -> Result<Source> {
        if offset > self.len {
            return Err(Error::Truncated {
                what: "start of filesystem (offset)".into(),
                offset,
                len: 0,
                size: self.len,
            });
        }
        let avail = self.len - offset;
        let len = len.map_or(avail, |l| l.min(avail));
        self.base += offset;
        self.len = len;
        Ok(self)
    }

    /// The path given at open.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Size in bytes of the (windowed) source.
    pub fn len(&self) -> u64 {
        self.len
    }
    /// True when the source holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// True when the source is a block device.
    pub fn is_device(&self) -> bool {
        self.is_device
    }
    /// Offset of the window inside the underlying file or device.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// `len` bytes at `offset`, or a [`Error::Truncated`] naming `what`.
    pub fn read(&self, offset: u64, len: u64, what: &str) -> Result<&[u8]> {
        self.try_read(offset, len).ok_or_else(|| Error::Truncated {
            what: what.to_string(),
            offset,
            len,
            size: self.len,
        })
    }

    /// `len` bytes at `offset`, or `None` when out of range.
    pub fn try_read(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let end = offset.checked_add(len)?;
        if end > self.len {
            return None;
        }
        if len == 0 {
            return Some(&[]);
        }
        let map = self.map.as_ref()?;
        let start = usize::try_from(self.base.checked_add(offset)?).ok()?;
        let stop = start.checked_add(usize::try_from(len).ok()?)?;
        map.get(start..stop)
    }

    /// Up to `len` bytes at `offset`: what exists of them (possibly empty).
    pub fn read_partial(&self, offset: u64, len: u64) -> &[u8] {
        if offset >= self.len {
            return &[];
        }
        self.try_read(offset, len.min(self.len - offset))
            .unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        let s = Source::from_bytes(&[1, 2, 3, 4]).unwrap();
        assert_eq!(s.read(1, 2, "x").unwrap(), &[2, 3]);
        assert!(s.read(3, 2, "x").is_err());
        assert!(s.try_read(u64::MAX, 2).is_none());
        assert_eq!(s.read_partial(2, 100), &[3, 4]);
        let w = s.window(1, Some(2)).unwrap();
        assert_eq!(w.len(), 2);
        assert_eq!(w.read(0, 2, "x").unwrap(), &[2, 3]);
        assert!(w.read(1, 2, "x").is_err());
    }
}
