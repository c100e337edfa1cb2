//! The normal e2image format: a file from the input bytes, its header and descriptor table
//! mapped onto the disk, reads across the mapped and absent ranges, then the disk opened as a
//! filesystem: dump (as dumpe2fs -i), inode views and check.
#![no_main]

use e4inspect::format::dumpe2fs::{dump, DumpOptions};
use e4inspect::fs::{Filesystem, OpenOptions};
use e4inspect::reader::container::{Access, Disk};
use e4inspect::reader::e2image::E2Image;
use e4inspect::source::Source;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = Source::from_bytes(data) else {
        return;
    };
    let Ok(img) = E2Image::open(src) else {
        return;
    };
    let len = img.len();
    let mut buf = vec![0u8; 9000];
    for off in [0u64, 1024, 2048, 4096, 8192, len / 2, len.saturating_sub(4096)] {
        let off = off.min(len);
        let n = (len - off).min(buf.len() as u64) as usize;
        let _ = img.read_at(off, &mut buf[..n], Access::Metadata);
        img.will_need(off, 1 << 16);
    }
    let Ok(src) = Source::from_bytes_detect(data) else {
        return;
    };
    if let Ok(fs) = Filesystem::from_source(src.clone(), &OpenOptions::default()) {
        let mut out = Vec::new();
        let _ = dump(&fs, &DumpOptions::default(), &mut out);
        for ino in [1, 2, 7, 11, 12] {
            if let Ok(raw) = fs.inode_raw(ino) {
                if let Ok(report) = e4inspect::views::inode::report(&fs, ino, &raw) {
                    let mut text = Vec::new();
                    let _ = e4inspect::format::debugfs_stat::debugfs_text(&fs, &report, &mut text);
                }
            }
        }
        let _ = e4inspect::namei::resolve_path(&fs, "/lost+found");
    }
    let _ = e4inspect::check::check_source(src, &e4inspect::check::CheckOptions::default());
});
