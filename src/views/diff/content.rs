//! Contents of two regular files of the same size compared as their mapped segments: each
//! side says which byte ranges hold data (an image file's extents or block-map runs, an inline
//! file's bytes, a tree file as a whole), and only the union of those ranges is read, in chunks
//! of at most [`CHUNK_BYTES`] per side. A hole on both sides is equal without a read, so the work
//! follows the mapped extents of the two files, never the `i_size` an image claims (a hostile
//! size of exabytes over one block costs one block).

use super::{Handle, Side};
use crate::error::{Error, Result};
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, Inode};
use crate::views::extract::{self, Pieces, CHUNK_BYTES};
use std::os::unix::fs::FileExt;

/// One side's file: where its bytes are.
pub(super) enum Content<'f> {
    /// An image file's mapped runs `(file offset, image offset, length)`, sorted by file
    /// offset and not overlapping (as `extract::data_pieces` returns them).
    Runs(&'f Filesystem, Vec<(u64, u64, u64)>),
    /// An inline-data file's bytes.
    Inline(Vec<u8>),
    /// A file of a directory tree (read whole: its size is the host filesystem's, not a
    /// hostile field).
    File(std::fs::File, u64),
}

impl<'f> Content<'f> {
    /// Open the file `handle` of `side`.
    pub fn open(side: &'f Side<'f>, handle: &Handle) -> Result<Content<'f>> {
        match (side, handle) {
            (Side::Image(fs), Handle::Ino(ino)) => {
                let raw = fs.inode_raw(*ino)?;
                let inode = Inode::parse(&raw);
                let xa = inode::inode_xattrs(fs, &raw, &inode);
                Ok(
                    match extract::data_pieces(fs, *ino, &inode, xa.inline_data(), &mut Vec::new())?
                    {
                        Pieces::Inline(d) => Content::Inline(d),
                        Pieces::Runs(r) => Content::Runs(fs, r),
                    },
                )
            }
            (Side::Tree(_), Handle::Path(p)) => {
                let io = |op| {
                    let path = p.clone();
                    move |source| Error::Io { path, op, source }
                };
                let file = std::fs::File::open(p).map_err(io("cannot open"))?;
                let len = file.metadata().map_err(io("cannot stat"))?.len();
                Ok(Content::File(file, len))
            }
            _ => Err(Error::Invalid("mismatched side".into())),
        }
    }

    /// The byte ranges `(offset, length)` that may hold data, sorted, not overlapping.
    fn segments(&self) -> Vec<(u64, u64)> {
        match self {
            Content::Runs(_, r) => r.iter().map(|&(off, _, len)| (off, len)).collect(),
            Content::Inline(d) => vec![(0, d.len() as u64)],
            Content::File(_, len) => vec![(0, *len)],
        }
    }

    /// Fill `buf` with the file's bytes at `off` (zeros in holes and past the end).
    fn read_at(&self, off: u64, buf: &mut [u8]) -> Result<()> {
        buf.fill(0);
        let end = off + buf.len() as u64;
        match self {
            Content::Runs(fs, runs) => {
                // The first run ending after `off`; runs are sorted and disjoint.
                let first =
                    runs.partition_point(|&(run_off, _, len)| run_off.saturating_add(len) <= off);
                for &(run_off, img, len) in &runs[first..] {
                    if run_off >= end {
                        break;
                    }
                    let from = run_off.max(off);
                    let to = run_off.saturating_add(len).min(end);
                    let dst = &mut buf[(from - off) as usize..(to - off) as usize];
                    fs.source
                        .read_data_into(img + (from - run_off), dst, "file data")?;
                }
                Ok(())
            }
            Content::Inline(data) => {
                let data = data.get(off as usize..).unwrap_or(&[]);
                let count = data.len().min(buf.len());
                buf[..count].copy_from_slice(&data[..count]);
                Ok(())
            }
            Content::File(f, _) => {
                let mut done = 0;
                while done < buf.len() {
                    match f.read_at(&mut buf[done..], off + done as u64) {
                        Ok(0) => break,
                        Ok(count) => done += count,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(Error::Invalid(format!("cannot read: {e}"))),
                    }
                }
                Ok(())
            }
        }
    }
}

/// The union of two sorted lists of disjoint ranges `(offset, length)`, cut at `size`, merged
/// where they touch or overlap.
pub(super) fn union(
    ranges_a: &[(u64, u64)],
    ranges_b: &[(u64, u64)],
    size: u64,
) -> Vec<(u64, u64)> {
    let mut all: Vec<(u64, u64)> = Vec::with_capacity(ranges_a.len() + ranges_b.len());
    let (mut pos_a, mut pos_b) = (0, 0);
    while pos_a < ranges_a.len() || pos_b < ranges_b.len() {
        let next = match (ranges_a.get(pos_a), ranges_b.get(pos_b)) {
            (Some(x), Some(y)) if x.0 <= y.0 => {
                pos_a += 1;
                *x
            }
            (Some(_), Some(y)) | (None, Some(y)) => {
                pos_b += 1;
                *y
            }
            (Some(x), None) => {
                pos_a += 1;
                *x
            }
            (None, None) => break,
        };
        let (start, end) = (next.0.min(size), next.0.saturating_add(next.1).min(size));
        if start >= end {
            continue;
        }
        match all.last_mut() {
            Some(last) if start <= last.0 + last.1 => {
                last.1 = last.1.max(end - last.0);
            }
            _ => all.push((start, end - start)),
        }
    }
    all
}

/// True when the first `size` bytes of `content_a` and `content_b` are equal.
pub(super) fn same(content_a: &Content<'_>, content_b: &Content<'_>, size: u64) -> Result<bool> {
    let ranges = union(&content_a.segments(), &content_b.segments(), size);
    // Buffers sized to the largest range read (most files are small: zeroing two 1 MiB buffers
    // per file dominated a diff of many small files).
    let chunk = ranges
        .iter()
        .map(|r| r.1)
        .max()
        .unwrap_or(0)
        .min(CHUNK_BYTES) as usize;
    let (mut buf_a, mut buf_b) = (vec![0u8; chunk], vec![0u8; chunk]);
    for (start, len) in ranges {
        let mut at = start;
        while at < start + len {
            let count = (start + len - at).min(chunk as u64) as usize;
            content_a.read_at(at, &mut buf_a[..count])?;
            content_b.read_at(at, &mut buf_b[..count])?;
            if buf_a[..count] != buf_b[..count] {
                return Ok(false);
            }
            at += count as u64;
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_merges_clips_and_skips_common_holes() {
        let ranges_a = [(0, 10), (100, 10), (1 << 60, 4096)];
        let ranges_b = [(5, 10), (200, 1)];
        assert_eq!(
            union(&ranges_a, &ranges_b, 1000),
            [(0, 15), (100, 10), (200, 1)]
        );
        // A range past the size is not read at all.
        assert_eq!(union(&[(1 << 60, 4096)], &[], u64::MAX).len(), 1);
        assert!(union(&[(1 << 60, 4096)], &[], 1 << 20).is_empty());
        // Touching ranges merge.
        assert_eq!(union(&[(0, 4)], &[(4, 4)], 100), [(0, 8)]);
    }

    #[test]
    fn inline_contents_compare_across_chunks_and_holes() {
        let big = vec![7u8; CHUNK_BYTES as usize + 5];
        let mut other = big.clone();
        let (content_a, content_b) = (Content::Inline(big.clone()), Content::Inline(other.clone()));
        assert!(same(&content_a, &content_b, big.len() as u64).unwrap());
        *other.last_mut().unwrap() = 8;
        let content_b = Content::Inline(other);
        assert!(!same(&content_a, &content_b, big.len() as u64).unwrap());
        // Only the first `size` bytes count.
        assert!(same(&content_a, &content_b, 10).unwrap());
        // Bytes past a side's data read as a hole (zeros).
        let (padded, short) = (Content::Inline(vec![1, 0, 0]), Content::Inline(vec![1]));
        assert!(same(&padded, &short, 3).unwrap());
        assert!(!same(&Content::Inline(vec![1, 2]), &short, 2).unwrap());
    }
}
