//! The qcow2 reader: a qcow2 file from the input bytes, opened (header, features, L1 table,
//! e2image traits) and read at offsets derived from the input, as metadata and as file data,
//! with prefetch hints; then the disk it holds opened as a filesystem and dumped.
#![no_main]

use e4inspect::format::dumpe2fs::{dump, DumpOptions};
use e4inspect::fs::{Filesystem, OpenOptions};
use e4inspect::reader::container::{Access, Disk};
use e4inspect::reader::qcow2::Qcow2;
use e4inspect::source::Source;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = Source::from_bytes(data) else {
        return;
    };
    let Ok(q) = Qcow2::open(src) else {
        return;
    };
    let len = q.len();
    // Offsets: the start, the superblock, cluster-sized strides, and a few taken from the tail
    // of the input so the fuzzer steers them.
    let mut offsets = vec![0u64, 1024, 4096, 65536, 1 << 20];
    for c in data.rchunks_exact(8).take(4) {
        offsets.push(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
    }
    let mut buf = vec![0u8; 70_000];
    for off in offsets {
        let off = if len == 0 { 0 } else { off % len };
        let n = (len - off).min(buf.len() as u64) as usize;
        for access in [Access::Metadata, Access::FileData] {
            let _ = q.read_at(off, &mut buf[..n], access);
        }
        q.will_need(off, 1 << 20);
    }
    if let Ok(src) = Source::from_bytes_detect(data) {
        if let Ok(fs) = Filesystem::from_source(src, &OpenOptions::default()) {
            let mut out = Vec::new();
            let _ = dump(&fs, &DumpOptions::default(), &mut out);
        }
    }
});
