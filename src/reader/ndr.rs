//! A small, bounded NDR (DCE/RPC Network Data Representation) pull reader for the byte streams
//! Samba stores in xattrs (`user.DOSATTRIB`, `security.NTACL`).
//!
//! NDR is not a fixed layout: strings are NUL-terminated, unions carry their discriminant, pointed-to
//! data follows the structure that points to it, and every primitive is aligned to its size
//! *relative to the start of the stream* (padding bytes are skipped unchecked, as Samba's
//! `ndr_pull_align` does without `LIBNDR_FLAG_PAD_CHECK`). So it gets a cursor rather than binrw
//! declarations: each read checks the remaining length first, no read allocates by a length taken
//! from the stream, and a failure names what was being read and at which offset.

use crate::error::{Error, Result};

/// A pull cursor over one NDR stream (little-endian data representation, as Samba pushes it).
#[derive(Clone, Debug)]
pub struct NdrPull<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> NdrPull<'a> {
    /// A cursor at the start of `buf`; `what` names the stream in errors (`security.NTACL`).
    pub fn new(buf: &'a [u8], what: &'static str) -> Self {
        NdrPull { buf, pos: 0, what }
    }
    /// The whole stream.
    pub fn data(&self) -> &'a [u8] {
        self.buf
    }
    /// Offset of the next read from the start of the stream.
    pub fn offset(&self) -> usize {
        self.pos
    }
    /// Bytes left after the cursor.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }
    /// Move the cursor to `offset` (a relative pointer's target), which must lie in the stream.
    pub fn seek(&mut self, offset: usize, field: &str) -> Result<()> {
        if offset > self.buf.len() {
            return Err(self.error(format!(
                "{field} points to offset {offset}, past the end ({} bytes)",
                self.buf.len()
            )));
        }
        self.pos = offset;
        Ok(())
    }
    /// A decode error naming the stream and the cursor's offset.
    pub fn error(&self, msg: impl std::fmt::Display) -> Error {
        Error::corrupt(
            crate::ProblemKind::Xattr,
            format!("{}: {msg} (at offset {})", self.what, self.pos),
        )
    }
    /// Skip padding so the cursor is a multiple of `multiple` from the start of the stream.
    pub fn align(&mut self, multiple: usize) -> Result<()> {
        let pad = (multiple - self.pos % multiple) % multiple;
        self.take(pad, "alignment padding").map(|_| ())
    }
    /// The next `count` bytes, or an error naming `field` when fewer remain.
    pub fn take(&mut self, count: usize, field: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(count).filter(|&e| e <= self.buf.len());
        match end.and_then(|e| self.buf.get(self.pos..e).map(|s| (s, e))) {
            Some((s, e)) => {
                self.pos = e;
                Ok(s)
            }
            None => Err(self.error(format!(
                "{field}: needs {count} bytes, {} left",
                self.remaining()
            ))),
        }
    }
    fn array<const N: usize>(&mut self, field: &str) -> Result<[u8; N]> {
        let mut array = [0u8; N];
        array.copy_from_slice(self.take(N, field)?);
        Ok(array)
    }
    /// `uint8`.
    pub fn u8(&mut self, field: &str) -> Result<u8> {
        Ok(self.array::<1>(field)?[0])
    }
    /// `uint16`, aligned to 2.
    pub fn u16(&mut self, field: &str) -> Result<u16> {
        self.align(2)?;
        Ok(u16::from_le_bytes(self.array(field)?))
    }
    /// `uint32`, aligned to 4.
    pub fn u32(&mut self, field: &str) -> Result<u32> {
        self.align(4)?;
        Ok(u32::from_le_bytes(self.array(field)?))
    }
    /// `udlong` / `NTTIME`: 64 bits as two 32-bit halves, aligned to 4 (not 8: NDR's `hyper` is
    /// the 8-aligned type, Samba's `udlong` is not).
    pub fn udlong(&mut self, field: &str) -> Result<u64> {
        self.align(4)?;
        Ok(u64::from_le_bytes(self.array(field)?))
    }
    /// A fixed array of `N` bytes (`uint8 hash[16]`), unaligned.
    pub fn bytes<const N: usize>(&mut self, field: &str) -> Result<[u8; N]> {
        self.array(field)
    }
    /// A unique pointer's referent id, aligned to 4: `true` when non-zero (the pointee follows
    /// in the buffers part).
    pub fn unique_ptr(&mut self, field: &str) -> Result<bool> {
        Ok(self.u32(field)? != 0)
    }
    /// A NUL-terminated 8-bit string (`[flag(STR_ASCII|STR_NULLTERM)]`, `utf8string`): its bytes
    /// without the NUL, unaligned; bounded by the stream, never by a stored length.
    pub fn nul_string(&mut self, field: &str) -> Result<&'a [u8]> {
        let rest = self.buf.get(self.pos..).unwrap_or(&[]);
        let Some(len) = rest.iter().position(|&b| b == 0) else {
            return Err(self.error(format!("{field}: string without its terminating NUL")));
        };
        let bytes = self.take(len, field)?;
        self.take(1, field)?;
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_is_relative_to_the_stream() {
        // "ab\0", pad, u16 = 7, u32 = 9 at offset 4 after a 1-byte pad, udlong at 8.
        let bytes = [
            b'a', b'b', 0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
        ];
        let mut pull = NdrPull::new(&bytes, "t");
        assert_eq!(pull.nul_string("s").unwrap(), b"ab");
        assert_eq!(pull.u16("v").unwrap(), 7);
        // 6 -> aligned to 8
        assert_eq!(pull.u32("w").unwrap(), 9);
        assert_eq!(pull.offset(), 12);
        assert_eq!(pull.udlong("x").unwrap(), 1);
        assert!(pull.u8("y").is_err());
    }

    #[test]
    fn bounded_reads() {
        let mut pull = NdrPull::new(b"abc", "t");
        assert!(pull.nul_string("s").is_err());
        assert!(pull.take(usize::MAX, "huge").is_err());
        assert!(pull.seek(4, "p").is_err());
        pull.seek(3, "p").unwrap();
        assert!(pull.u32("x").is_err());
        let msg = NdrPull::new(&[1], "t").u32("f").unwrap_err().to_string();
        assert!(msg.contains("f: needs 4 bytes"), "{msg}");
    }
}
