//! The journal replay scan (reader/replay.rs): the three recovery passes over a journal held in
//! memory (1 KiB blocks), with the journal superblock as its first block.
#![no_main]

use e4inspect::replay::{plan, LogRead, Params};
use libfuzzer_sys::fuzz_target;

struct Mem<'a>(&'a [u8]);

impl LogRead for Mem<'_> {
    fn total_blocks(&self) -> u64 {
        (self.0.len() / 1024) as u64
    }
    fn read_block(&self, n: u64) -> Result<Vec<u8>, String> {
        let start = usize::try_from(n).map_err(|e| e.to_string())? * 1024;
        self.0
            .get(start..start + 1024)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| "past the end".to_string())
    }
}

fuzz_target!(|data: &[u8]| {
    let log = Mem(data);
    let Some(jsb) = data.get(..1024) else {
        return;
    };
    if let Ok(p) = Params::from_superblock(jsb, 1024, log.total_blocks(), 1 << 20) {
        let plan = plan(&p, &log);
        let _ = e4inspect::replay::recovered_journal_superblock(&plan, jsb);
    }
});
