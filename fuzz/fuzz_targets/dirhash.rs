//! Directory-entry hashes and utf8 casefolding over arbitrary names and seeds.
#![no_main]

use e4inspect::dirhash;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut seed = [0u8; 16];
    let n = data.len().min(16);
    seed[..n].copy_from_slice(&data[..n]);
    let seed = dirhash::seed_words(&seed);
    let name = data.get(16..).unwrap_or(&[]);
    for v in 0..=7u8 {
        let _ = dirhash::dx_hash(name, v, &seed);
        let _ = dirhash::name_hash(name, v, &seed, true);
    }
    let _ = dirhash::casefold(name);
});
