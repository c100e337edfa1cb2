//! Group descriptor tables: raw descriptor decoding with a context from the input's superblock, and
//! the descriptor table of a filesystem opened from the input bytes.
#![no_main]

use e4inspect::fs::{Filesystem, OpenOptions};
use e4inspect::group::{desc_checksum, flag_names, DescContext, GroupDesc};
use e4inspect::source::Source;
use e4inspect::superblock::Superblock;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Raw: the first 1024 bytes are a superblock, the rest a table of descriptors.
    if let Ok(sb) = Superblock::parse(data) {
        let ctx = DescContext::new(&sb);
        let ds = usize::try_from(sb.desc_size()).unwrap_or(32).clamp(32, 1024);
        for (g, raw) in data.get(1024..).unwrap_or(&[]).chunks(ds).take(256).enumerate() {
            let g = g as u32;
            let d = GroupDesc::parse(&ctx, g, raw);
            let _ = GroupDesc::parse_from_backup(&ctx, g, raw);
            let _ = d.checksum_ok(&ctx);
            let _ = desc_checksum(&ctx, g, raw);
            let _ = flag_names(d.flags);
        }
    }
    // Whole: a small image; read every descriptor through the filesystem's table.
    let Ok(src) = Source::from_bytes(data) else {
        return;
    };
    let Ok(fs) = Filesystem::from_source(src, &OpenOptions::default()) else {
        return;
    };
    for g in 0..fs.group_count().min(4096) {
        if let Ok(d) = fs.desc(g) {
            let _ = d.checksum_ok(&fs.ctx);
        }
    }
    let _ = fs.desc(fs.group_count());
    let _ = e4inspect::bitmap::read_check(&fs, false);
    let _ = e4inspect::bitmap::UninitMarks::compute(&fs);
});
