//! The journal superblock (big-endian) and its dumpe2fs listing.
#![no_main]

use e4inspect::format::dumpe2fs::list_journal;
use e4inspect::journal::JournalSuperblock;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // First byte: log2 of the filesystem block size and the fast-commit flag; the rest: the block.
    let ctl = data.first().copied().unwrap_or(0);
    let bs = 1024u32 << (ctl & 7).min(6);
    let fast_commit = ctl & 0x80 != 0;
    let buf = data.get(1..).unwrap_or(&[]);
    let j = JournalSuperblock::parse(buf);
    let _ = j.feature_names();
    let mut s = String::new();
    list_journal(buf, bs, fast_commit, &mut s);
});
