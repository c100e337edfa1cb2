//! Inode decoding and the inode checksum.
#![no_main]

use e4inspect::inode::{inode_checksum, inode_checksum_ok, stored_checksum, Inode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // First 8 bytes: checksum seed and inode number; the rest is the on-disk inode.
    let seed = u32::from_le_bytes([0, 1, 2, 3].map(|i| data.get(i).copied().unwrap_or(0)));
    let ino = u32::from_le_bytes([4, 5, 6, 7].map(|i| data.get(i).copied().unwrap_or(0)));
    let raw = data.get(8..).unwrap_or(&[]);
    let i = Inode::parse(raw);
    let _ = i.flag_names();
    let _ = (i.file_type(), i.is_dir(), i.is_reg(), i.is_symlink());
    let _ = inode_checksum(seed, ino, raw);
    let _ = stored_checksum(raw);
    let _ = inode_checksum_ok(seed, ino, raw);
});
