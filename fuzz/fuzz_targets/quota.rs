//! Quota files (QFMT_VFS_V1): header and info checks, the bounded tree scan and ID lookups.
#![no_main]

use e4inspect::reader::quota::{find, read_info, scan, QuotaBytes, QuotaType};
use libfuzzer_sys::fuzz_target;
use std::ops::ControlFlow;

fuzz_target!(|data: &[u8]| {
    for t in QuotaType::ALL {
        let mut src = QuotaBytes(data);
        let info = match read_info(&mut src, t) {
            Ok(i) => i,
            // Scan anyway with a permissive info: the tree walk must stay bounded on its own.
            Err(_) => e4inspect::reader::quota::QuotaInfo {
                blocks: u32::MAX,
                ..Default::default()
            },
        };
        let mut n = 0u64;
        let rep = scan(&mut src, &info, |d| {
            n = n.wrapping_add(u64::from(d.id));
            ControlFlow::Continue(())
        });
        let _ = (rep.entries, rep.problems.len());
        for id in [0, 1, 1000, 65535, u32::MAX] {
            let _ = find(&mut src, id);
        }
    }
});
