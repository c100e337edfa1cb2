//! The logdump walker over an arbitrary journal image: every flag combination, with and without a
//! filesystem block size. It must end, within a bounded number of events, on any input.
#![no_main]

use e4inspect::logdump::{walk, MemJournal, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let j = MemJournal(data.to_vec());
    for (all, old, count, contents) in [
        (false, false, -1, false),
        (true, false, -1, true),
        (true, true, -1, false),
        (false, true, 3, false),
    ] {
        let opts = Options {
            all,
            old,
            superblock: true,
            contents,
            count,
            verify: true,
            trace: e4inspect::logdump::Trace {
                block: 2,
                bitmap: 3,
                bitmap_bit: 70000,
                inode: 12,
                inode_block: 4,
                inode_offset: 1920,
            },
        };
        for bs in [None, Some(1024u32), Some(4096)] {
            let mut events = 0u64;
            let _ = walk(&j, bs, 256, opts, &mut |_| {
                events += 1;
                assert!(events < 50_000_000, "unbounded walk");
                Ok(())
            });
        }
    }
});
