//! A file's contents as `debugfs -R "cat FILE"` writes them (`debugfs/dump.c` over libext2fs'
//! `ext2fs_file_read`): up to i_size, holes and uninitialised extents as zeros. Streams:
//! contiguous blocks are read in chunks of at most [`CHUNK`] bytes and written at once, so memory
//! stays bounded whatever the file's size.
//!
//! Inline data (`ext2fs_file_read_inline_data` over `ext2fs_inline_data_get`): libext2fs hands
//! out the whole inline area, the 60 bytes of i_block followed by the `system.data` value,
//! whatever i_size says (a 3-byte file reads as 60 bytes, the rest zeros; an i_size beyond the
//! area is not filled). A missing `system.data` attribute is an empty one. [`InlineSize::Area`]
//! reproduces that; [`InlineSize::ISize`] stops at i_size, as the kernel reads the file.

use crate::error::{Error, Result};
use crate::reader::fileblocks;
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, Inode};
use std::io::Write;
use std::ops::ControlFlow;

/// Largest read handed to the writer at once.
pub const CHUNK: u64 = 1 << 20;

static ZEROS: [u8; 65536] = [0; 65536];

fn write_zeros(out: &mut dyn Write, mut count: u64) -> std::io::Result<()> {
    while count > 0 {
        let chunk = count.min(ZEROS.len() as u64) as usize;
        out.write_all(&ZEROS[..chunk])?;
        count -= chunk as u64;
    }
    Ok(())
}

/// What went wrong while copying: reading the image or writing the output.
#[derive(Debug)]
pub enum CopyError {
    /// The image could not be read (or its map is unusable).
    Read(Error),
    /// The writer failed (a closed pipe, a full disk).
    Write(std::io::Error),
}

impl std::fmt::Display for CopyError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CopyError::Read(e) => write!(formatter, "{e}"),
            CopyError::Write(e) => write!(formatter, "writing: {e}"),
        }
    }
}

impl std::error::Error for CopyError {}

/// How much of an inline-data file is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InlineSize {
    /// The whole inline area, as debugfs `cat` writes it.
    #[default]
    Area,
    /// At most i_size bytes of it, as the kernel reads the file.
    ISize,
}

/// The inline data of an inode as `ext2fs_inline_data_get` returns it: the 60 bytes of i_block,
/// then the in-inode `system.data` value (none: nothing more).
pub fn inline_data(fs: &Filesystem, ino: u32, inode: &Inode) -> Result<Vec<u8>> {
    let raw = fs.inode_raw(ino)?;
    let xa = inode::inode_xattrs(fs, &raw, inode);
    let mut data = inode.block.to_vec();
    data.extend_from_slice(xa.inline_data().unwrap_or(&[]));
    Ok(data)
}

/// Write the contents of inode `ino` to `out`; returns the number of bytes written.
pub fn copy_contents(
    fs: &Filesystem,
    ino: u32,
    inode: &Inode,
    inline: InlineSize,
    out: &mut dyn Write,
) -> std::result::Result<u64, CopyError> {
    copy_contents_to(fs, ino, inode, inline, out, None)
}

/// [`copy_contents`], with data copied inside the kernel (`sendfile`) to `direct` when given:
/// the file `out` writes to (stdout as a file), flushed before each such copy. Where the kernel
/// refuses (a terminal), data goes through `out`.
pub fn copy_contents_to(
    fs: &Filesystem,
    ino: u32,
    inode: &Inode,
    inline: InlineSize,
    out: &mut dyn Write,
    direct: Option<&std::fs::File>,
) -> std::result::Result<u64, CopyError> {
    let size = inode.size;
    if inode.has_flag(inode::INLINE_DATA_FL) {
        let data = inline_data(fs, ino, inode).map_err(CopyError::Read)?;
        let len = match inline {
            InlineSize::Area => data.len(),
            InlineSize::ISize => data.len().min(usize::try_from(size).unwrap_or(usize::MAX)),
        };
        out.write_all(&data[..len]).map_err(CopyError::Write)?;
        return Ok(len as u64);
    }
    let block_size = fs.block_size();
    // Logical block numbers are 32-bit in extent trees and block maps alike: no file holds data
    // at or past 2^32 blocks, so a larger i_size is damage, not a hole to fill with zeros.
    let max = block_size.saturating_mul(1 << 32);
    if size > max {
        return Err(CopyError::Read(Error::corrupt(
            crate::ProblemKind::Inode,
            format!(
            "inode {ino}: i_size {size} is beyond the largest file the format can map ({max} bytes)"
        ),
        )));
    }
    let mut copier = RunCopier {
        fs,
        ino,
        size,
        block_size,
        file_data: inode.is_reg(),
        direct,
        buf: Vec::new(),
        pos: 0,
    };
    let mut fail: Option<CopyError> = None;
    let walk = fileblocks::for_each_run(fs, ino, inode, &mut |run| match copier.emit(run, out) {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => {
            fail = Some(e);
            ControlFlow::Break(())
        }
    });
    walk.map_err(CopyError::Read)?;
    if let Some(err) = fail {
        return Err(err);
    }
    if copier.pos < size {
        write_zeros(out, size - copier.pos).map_err(CopyError::Write)?;
        copier.pos = size;
    }
    Ok(copier.pos)
}

/// The copy of one file's block runs, in logical order: holes and uninitialized extents become
/// zeros, data past i_size is not written, a run overlapping what was already written is
/// skipped (a damaged map may list a block twice).
struct RunCopier<'a> {
    fs: &'a Filesystem,
    ino: u32,
    /// i_size: where the copy stops.
    size: u64,
    block_size: u64,
    /// A regular file's blocks are file data (absent from an e2image -Q file); a directory's or
    /// a symlink's are metadata.
    file_data: bool,
    /// The file to copy into inside the kernel, until the kernel refuses.
    direct: Option<&'a std::fs::File>,
    /// One buffer for the whole file: a fresh 1 MiB allocation per chunk is a fresh mapping
    /// whose pages fault in (and are zeroed) every time.
    buf: Vec<u8>,
    /// Bytes written so far.
    pos: u64,
}

impl RunCopier<'_> {
    fn emit(
        &mut self,
        run: fileblocks::Run,
        out: &mut dyn Write,
    ) -> std::result::Result<(), CopyError> {
        let start = run.logical.saturating_mul(self.block_size);
        if start >= self.size {
            return Ok(());
        }
        let end = run
            .logical
            .saturating_add(run.len)
            .saturating_mul(self.block_size)
            .min(self.size);
        if end <= self.pos {
            return Ok(()); // overlaps what was already written
        }
        if start > self.pos {
            write_zeros(out, start - self.pos).map_err(CopyError::Write)?;
            self.pos = start;
        }
        if run.uninit {
            write_zeros(out, end - self.pos).map_err(CopyError::Write)?;
            self.pos = end;
            return Ok(());
        }
        self.copy_mapped(run.physical, start, end, out)
    }

    /// Copy the bytes from the current position to `end` of a run that starts at byte `start`
    /// of the file and at block `physical`, by chunks: in the kernel while it accepts, else
    /// through the buffer.
    fn copy_mapped(
        &mut self,
        physical: u64,
        start: u64,
        end: u64,
        out: &mut dyn Write,
    ) -> std::result::Result<(), CopyError> {
        while self.pos < end {
            let len = (end - self.pos).min(CHUNK);
            let offset = physical
                .checked_mul(self.block_size)
                .and_then(|base| base.checked_add(self.pos - start))
                .ok_or_else(|| {
                    CopyError::Read(Error::corrupt(
                        crate::ProblemKind::Structure,
                        "block number overflows",
                    ))
                })?;
            if let Some(file) = self.direct {
                out.flush().map_err(CopyError::Write)?;
                match self.fs.source.send_to(offset, len, file, "file data") {
                    Some(sent) => {
                        sent.map_err(|err| match err {
                            Error::Io { source, .. } => CopyError::Write(source),
                            other => CopyError::Read(other),
                        })?;
                        self.pos += len;
                        continue;
                    }
                    None => self.direct = None,
                }
            }
            if self.buf.is_empty() {
                self.buf = vec![0u8; CHUNK as usize];
            }
            let data = &mut self.buf[..len as usize];
            let what = format!("data of inode {}", self.ino);
            if self.file_data {
                self.fs.source.read_data_into(offset, data, &what)
            } else {
                self.fs.source.read_into(offset, data, &what)
            }
            .map_err(CopyError::Read)?;
            out.write_all(data).map_err(CopyError::Write)?;
            self.pos += len;
        }
        Ok(())
    }
}
