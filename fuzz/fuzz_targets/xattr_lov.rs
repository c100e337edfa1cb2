//! The value decoder of Lustre's trusted.lov (v1, v3, composite, foreign, composite with foreign
//! components) and the scan's stripe-count summary: any bytes decode or fail with a message, never panic, and never
//! allocate by a length or count read from them (scripts/fuzz.sh sets -malloc_limit_mb).
#![no_main]

use e4inspect::xattr::{decode_value, summarize_value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(Err(e)) = decode_value("trusted.lov", data) {
        let _ = e.to_string();
    }
    let _ = summarize_value("trusted.lov", data);
});
