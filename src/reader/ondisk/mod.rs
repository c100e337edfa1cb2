//! Every fixed-layout on-disk structure, declared once with binrw.
//!
//! One file per structure family; field names are the on-disk names of the kernel's
//! `fs/ext4/ext4.h`, `fs/ext4/xattr.h` and `include/linux/jbd2.h` with their prefix (`s_`, `bg_`,
//! `i_`, `ee_`, `e_`, `h_`, `mmp_` ...) dropped. Offsets exist only as the order of these fields,
//! reserved gaps as `pad_before`, and magic numbers as the constants beside them. Derived values
//! (64-bit hi/lo combinations, feature-dependent fields) are methods beside the declaration.
//!
//! [`decode`] reads a structure from a byte slice and fails with [`Error::Short`] when the slice is
//! shorter than the structure, so a truncated structure never decodes silently.

use crate::error::{Error, Result};
use binrw::BinRead;
use std::io::Cursor;

/// Declare a little-endian on-disk structure once and derive from that one declaration both the
/// binrw decoder (through the attributes given, `#[derive(BinRead)] #[br(little)]`) and the
/// hot-path decoder: `read_le` reads the fields in declaration order through [`LeFields`],
/// `OFFSETS` gives each field's byte offset (summed from the field sizes), and `Default` is the
/// all-zero record. Field types are those with a fixed little-endian size ([`LeField`]). The
/// hot path can thus never disagree with the declaration by a restated offset or field.
macro_rules! le_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident, offsets $offsets:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        #[doc = concat!("Byte offset of each field of [`", stringify!($name), "`] in its record.")]
        #[derive(Clone, Copy, Debug)]
        pub struct $offsets {
            $( $(#[$fmeta])* pub $field: usize, )*
        }

        impl $name {
            /// Offset of every field, in declaration order from 0.
            #[allow(unused_assignments)] // the running offset after the last field is unread
            pub const OFFSETS: $offsets = {
                let mut at = 0usize;
                $offsets {
                    $( $field: {
                        let here = at;
                        at += <$ty as $crate::reader::ondisk::LeField>::LE_SIZE;
                        here
                    }, )*
                }
            };
            /// Bytes the fields occupy (their sizes summed).
            pub const LE_SIZE: usize = 0 $( + <$ty as $crate::reader::ondisk::LeField>::LE_SIZE )*;

            /// The fields read in declaration order (zeros once `fields` is exhausted).
            #[inline]
            pub(crate) fn read_le(fields: &mut $crate::reader::ondisk::LeFields<'_>) -> $name {
                $name {
                    $( $field: $crate::reader::ondisk::LeField::take(fields), )*
                }
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::read_le(&mut $crate::reader::ondisk::LeFields::new(&[]))
            }
        }
    };
}

pub mod blockmap;
pub mod dir;
pub mod e2image;
pub mod extent;
pub mod group;
pub mod inode;
pub mod journal;
pub mod lustre;
pub mod orphan;
pub mod partition;
pub mod qcow2;
pub mod quota;
pub mod superblock;
pub mod xattr;

/// A fixed-size on-disk structure.
pub trait OnDisk: for<'a> BinRead<Args<'a> = ()> + binrw::meta::ReadEndian {
    /// Bytes the structure occupies on disk (checked against the declaration by a unit test).
    const SIZE: usize;
    /// What the structure is called in error messages.
    const WHAT: &'static str;
}

/// Decode `T` from the start of `bytes`; fewer than `T::SIZE` bytes is an [`Error::Short`].
pub fn decode<T: OnDisk>(bytes: &[u8]) -> Result<T> {
    let body = bytes.get(..T::SIZE).ok_or(Error::Short {
        what: T::WHAT,
        need: T::SIZE,
        got: bytes.len(),
    })?;
    T::read(&mut Cursor::new(body))
        .map_err(|e| Error::corrupt(crate::ProblemKind::Structure, format!("{}: {e}", T::WHAT)))
}

/// Decode `T` at byte `offset` of `bytes` (see [`decode`]).
pub fn decode_at<T: OnDisk>(bytes: &[u8], offset: usize) -> Result<T> {
    decode(bytes.get(offset..).unwrap_or(&[]))
}

/// Decode `T` from `bytes`, reading missing trailing bytes as zero. Only for structures whose tail
/// is optional by design (the large inode part beyond `i_extra_isize`, a 32-byte group descriptor's
/// absent 64-bit half); everything else uses [`decode`].
pub fn decode_zero_extended<T: OnDisk>(bytes: &[u8]) -> Result<T> {
    let mut buf = [0u8; 1024];
    let len = bytes.len().min(T::SIZE).min(buf.len());
    if let (Some(dst), Some(src)) = (buf.get_mut(..len), bytes.get(..len)) {
        dst.copy_from_slice(src);
    }
    decode(&buf)
}

/// A sequential little-endian field reader for the few hot-path structures whose binrw decode
/// measurably costs more than 10% (the inode table scan). Its users read fields in declaration
/// order, and a unit test checks each against the binrw declaration on random bytes.
pub(crate) struct LeFields<'a>(&'a [u8]);

impl<'a> LeFields<'a> {
    /// Start at the beginning of `bytes`, which must hold the whole structure.
    #[inline]
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        LeFields(bytes)
    }
    /// The next `N` bytes (zeros once exhausted; callers check the length first).
    #[inline]
    pub(crate) fn bytes<const N: usize>(&mut self) -> [u8; N] {
        match self.0.split_first_chunk::<N>() {
            Some((head, rest)) => {
                self.0 = rest;
                *head
            }
            None => {
                self.0 = &[];
                [0; N]
            }
        }
    }
    #[inline]
    pub(crate) fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.bytes())
    }
    #[inline]
    pub(crate) fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.bytes())
    }
}

/// A field type of fixed little-endian size, read by [`LeFields`] (what [`le_struct!`] declares
/// structures from).
pub(crate) trait LeField: Sized {
    /// Bytes on disk.
    const LE_SIZE: usize;
    /// Read the next field.
    fn take(fields: &mut LeFields<'_>) -> Self;
}

impl LeField for u8 {
    const LE_SIZE: usize = 1;
    #[inline]
    fn take(fields: &mut LeFields<'_>) -> u8 {
        fields.bytes::<1>()[0]
    }
}

impl LeField for u16 {
    const LE_SIZE: usize = 2;
    #[inline]
    fn take(fields: &mut LeFields<'_>) -> u16 {
        fields.u16()
    }
}

impl LeField for u32 {
    const LE_SIZE: usize = 4;
    #[inline]
    fn take(fields: &mut LeFields<'_>) -> u32 {
        fields.u32()
    }
}

impl<const N: usize> LeField for [u8; N] {
    const LE_SIZE: usize = N;
    #[inline]
    fn take(fields: &mut LeFields<'_>) -> [u8; N] {
        fields.bytes()
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Assert that `T::SIZE` is exactly what the declaration consumes, and that one byte less is
    /// an error the caller sees.
    pub fn assert_size<T: OnDisk>() {
        let buf = vec![0u8; T::SIZE + 64];
        let mut cursor = Cursor::new(&buf[..]);
        T::read(&mut cursor).expect("decodes from zeros");
        assert_eq!(
            cursor.position() as usize,
            T::SIZE,
            "{}: declared SIZE",
            T::WHAT
        );
        assert!(
            T::SIZE <= 1024,
            "{} larger than decode_zero_extended's buffer",
            T::WHAT
        );
        assert!(matches!(
            decode::<T>(&buf[..T::SIZE - 1]),
            Err(Error::Short { .. })
        ));
        assert!(decode::<T>(&buf[..T::SIZE]).is_ok());
    }

    /// Pseudo-random bytes (xorshift), deterministic per seed.
    pub fn noise(seed: u64, len: usize) -> Vec<u8> {
        let mut state = seed | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect()
    }
}
