//! Extent tree and classic block map walks over a device made of the input bytes.
#![no_main]

use e4inspect::extent::{index_entries, leaf_entries, map_blockmap, map_extent, ExtentHeader};
use e4inspect::Error;
use libfuzzer_sys::fuzz_target;

const BS: usize = 1024;

fuzz_target!(|data: &[u8]| {
    // Bytes 0..60: i_block; 60..64: a logical block to map; the rest: 1 KiB blocks 0, 1, 2, ...
    let Some(root) = data.get(..60) else {
        return;
    };
    let lblk = u32::from_le_bytes([60, 61, 62, 63].map(|i| data.get(i).copied().unwrap_or(0)));
    let dev = data.get(64..).unwrap_or(&[]);
    let read = |b: u64| -> e4inspect::Result<&[u8]> {
        let start = usize::try_from(b).ok().and_then(|b| b.checked_mul(BS));
        start
            .and_then(|s| dev.get(s..s.checked_add(BS)?))
            .ok_or_else(|| {
                Error::corrupt(
                    e4inspect::ProblemKind::ExtentTree,
                    format!("block {b} past the end"),
                )
            })
    };
    if let Ok(h) = ExtentHeader::parse(root) {
        let _ = leaf_entries(root, &h);
        let _ = index_entries(root, &h);
    }
    for l in [0, 1, 11, 12, 13, 268, 269, lblk, u32::MAX] {
        let _ = map_extent(root, l, read);
        let _ = map_blockmap(root, BS as u64, l, read);
    }
});
