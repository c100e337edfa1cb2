//! The MMP block: decoding, the sequence classes and the node/device names.
#![no_main]

use e4inspect::reader::mmp::Mmp;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = Mmp::decode(data) {
        let _ = m.seq_state();
        let _ = (m.node_name(), m.device_name());
    }
});
