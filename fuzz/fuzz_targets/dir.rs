//! Directory blocks: linear entries (with and without a checksum tail) and htree root/node blocks.
#![no_main]

use e4inspect::dir;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = dir::parse_dir_block(data, None);
    let _ = dir::parse_dir_block(data, Some(0x1234_5678));
    let _ = dir::dirblock_csum(0x1234_5678, data);
    let _ = dir::parse_dx_root(data);
    let _ = dir::parse_dx_node(data);
    for removed in [false, true] {
        let flags = dir::IterFlags {
            include_removed: removed,
            inline: false,
            metadata_csum: true,
        };
        let _ = dir::iterate_buffer(data, data.len().max(1024), flags, &mut |_| {
            std::ops::ControlFlow::Continue(())
        });
    }
    let _ = e4inspect::container::identify(data, Some(data));
    for bs in [1024usize, 4096, 65536] {
        if data.len() >= 2 {
            let _ = dir::rec_len_from_disk(u16::from_le_bytes([data[0], data[1]]), bs);
        }
    }
});
