//! Bounds-checked little/big-endian field access on byte slices.
//!
//! Every accessor returns 0 for bytes past the end of the slice, so decoding a fixed-layout structure
//! from a short slice can never panic; callers that need to know check the length first.

/// Read-only view of an on-disk structure.
#[derive(Clone, Copy, Debug)]
pub struct Bytes<'a>(pub &'a [u8]);

impl<'a> Bytes<'a> {
    /// Wrap a slice.
    pub fn new(b: &'a [u8]) -> Self {
        Bytes(b)
    }
    /// Length of the underlying slice.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Byte at `off`, 0 past the end.
    pub fn u8(&self, off: usize) -> u8 {
        self.0.get(off).copied().unwrap_or(0)
    }
    fn arr<const N: usize>(&self, off: usize) -> [u8; N] {
        let mut a = [0u8; N];
        if let Some(s) = off.checked_add(N).and_then(|end| self.0.get(off..end)) {
            a.copy_from_slice(s);
        }
        a
    }
    /// Little-endian u16 at `off`.
    pub fn le16(&self, off: usize) -> u16 {
        u16::from_le_bytes(self.arr(off))
    }
    /// Little-endian u32 at `off`.
    pub fn le32(&self, off: usize) -> u32 {
        u32::from_le_bytes(self.arr(off))
    }
    /// Little-endian u64 at `off`.
    pub fn le64(&self, off: usize) -> u64 {
        u64::from_le_bytes(self.arr(off))
    }
    /// Big-endian u32 at `off`.
    pub fn be32(&self, off: usize) -> u32 {
        u32::from_be_bytes(self.arr(off))
    }
    /// Big-endian u64 at `off`.
    pub fn be64(&self, off: usize) -> u64 {
        u64::from_be_bytes(self.arr(off))
    }
    /// Fixed-size byte array at `off` (zero-filled past the end).
    pub fn array<const N: usize>(&self, off: usize) -> [u8; N] {
        self.arr(off)
    }
    /// Sub-slice `off..off+len`, or `None` if it does not fit.
    pub fn slice(&self, off: usize, len: usize) -> Option<&'a [u8]> {
        off.checked_add(len).and_then(|end| self.0.get(off..end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_past_end_are_zero() {
        let b = Bytes::new(&[1, 2, 3]);
        assert_eq!(b.le16(0), 0x0201);
        assert_eq!(b.le16(2), 0);
        assert_eq!(b.le32(usize::MAX - 1), 0);
        assert_eq!(b.be32(0), 0);
        assert_eq!(b.slice(1, 2), Some(&[2u8, 3][..]));
        assert_eq!(b.slice(2, 2), None);
        assert_eq!(b.slice(usize::MAX, 2), None);
    }
}
