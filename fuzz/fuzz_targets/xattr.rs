//! In-inode xattr areas, external xattr blocks, and the value decoders.
#![no_main]

use e4inspect::xattr::{block_hash, decode_value, parse_block, parse_ibody, Entry};
use libfuzzer_sys::fuzz_target;

fn values(entries: &[Entry<'_>]) {
    for e in entries {
        if let Some(v) = e.value {
            let _ = decode_value(&e.name, v);
        }
        let _ = e.cost();
    }
}

fuzz_target!(|data: &[u8]| {
    // First 2 bytes: i_extra_isize; the rest is an inode (up to 4 KiB) and an xattr block.
    let extra = u16::from_le_bytes([data.first().copied().unwrap_or(0), data.get(1).copied().unwrap_or(0)]);
    let rest = data.get(2..).unwrap_or(&[]);
    if let Ok(b) = parse_ibody(rest, extra) {
        values(&b.entries);
    }
    for seed in [None, Some(0x1234_5678)] {
        if let Ok(x) = parse_block(rest, 7, seed) {
            values(&x.entries);
            let _ = block_hash(&x.entries);
        }
    }
    for v in [e4inspect::xattr::decode_acl_disk(rest).is_ok(), e4inspect::xattr::decode_acl_vfs(rest).is_ok()] {
        let _ = v;
    }
    let _ = e4inspect::xattr::decode_capability(rest);
    let _ = e4inspect::xattr::decode_selinux(rest);
});
