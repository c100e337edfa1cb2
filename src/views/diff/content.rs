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
    /// Open the file `h` of `side`.
    pub fn open(side: &'f Side<'f>, h: &Handle) -> Result<Content<'f>> {
        match (side, h) {
            (Side::Image(fs), Handle::Ino(ino)) => {
                let raw = fs.inode_raw(*ino)?;
                let i = Inode::parse(&raw);
                let xa = inode::inode_xattrs(fs, &raw, &i);
                Ok(
                    match extract::data_pieces(fs, *ino, &i, xa.inline_data(), &mut Vec::new())? {
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
                let f = std::fs::File::open(p).map_err(io("cannot open"))?;
                let len = f.metadata().map_err(io("cannot stat"))?.len();
                Ok(Content::File(f, len))
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
                let first = runs.partition_point(|&(o, _, len)| o.saturating_add(len) <= off);
                for &(o, img, len) in &runs[first..] {
                    if o >= end {
                        break;
                    }
                    let from = o.max(off);
                    let to = o.saturating_add(len).min(end);
                    let dst = &mut buf[(from - off) as usize..(to - off) as usize];
                    fs.source
                        .read_data_into(img + (from - o), dst, "file data")?;
                }
                Ok(())
            }
            Content::Inline(d) => {
                let d = d.get(off as usize..).unwrap_or(&[]);
                let n = d.len().min(buf.len());
                buf[..n].copy_from_slice(&d[..n]);
                Ok(())
            }
            Content::File(f, _) => {
                let mut done = 0;
                while done < buf.len() {
                    match f.read_at(&mut buf[done..], off + done as u64) {
                        Ok(0) => break,
                        Ok(n) => done += n,
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
pub(super) fn union(a: &[(u64, u64)], b: &[(u64, u64)], size: u64) -> Vec<(u64, u64)> {
    let mut all: Vec<(u64, u64)> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.0 <= y.0 => {
                i += 1;
                *x
            }
            (Some(_), Some(y)) | (None, Some(y)) => {
                j += 1;
                *y
            }
            (Some(x), None) => {
                i += 1;
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

/// True when the first `size` bytes of `a` and `b` are equal.
pub(super) fn same(a: &Content<'_>, b: &Content<'_>, size: u64) -> Result<bool> {
    let ranges = union(&a.segments(), &b.segments(), size);
    // Buffers sized to the largest range read (most files are small: zeroing two 1 MiB buffers
    // per file dominated a diff of many small files).
    let chunk = ranges
        .iter()
        .map(|r| r.1)
        .max()
        .unwrap_or(0)
        .min(CHUNK_BYTES) as usize;
    let (mut x, mut y) = (vec![0u8; chunk], vec![0u8; chunk]);
    for (start, len) in ranges {
        let mut at = start;
        while at < start + len {
            let n = (start + len - at).min(chunk as u64) as usize;
            a.read_at(at, &mut x[..n])?;
            b.read_at(at, &mut y[..n])?;
            if x[..n] != y[..n] {
                return Ok(false);
            }
            at += n as u64;
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_merges_clips_and_skips_common_holes() {
        let a = [(0, 10), (100, 10), (1 << 60, 4096)];
        let b = [(5, 10), (200, 1)];
        assert_eq!(union(&a, &b, 1000), [(0, 15), (100, 10), (200, 1)]);
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
        let (x, y) = (Content::Inline(big.clone()), Content::Inline(other.clone()));
        assert!(same(&x, &y, big.len() as u64).unwrap());
        *other.last_mut().unwrap() = 8;
        let y = Content::Inline(other);
        assert!(!same(&x, &y, big.len() as u64).unwrap());
        // Only the first `size` bytes count.
        assert!(same(&x, &y, 10).unwrap());
        // Bytes past a side's data read as a hole (zeros).
        let (z, short) = (Content::Inline(vec![1, 0, 0]), Content::Inline(vec![1]));
        assert!(same(&z, &short, 3).unwrap());
        assert!(!same(&Content::Inline(vec![1, 2]), &short, 2).unwrap());
    }
}
