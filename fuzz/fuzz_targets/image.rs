//! A whole image from the input bytes, end to end: open (partition detection included), the
//! dumpe2fs formatter (-h, full, -x, -g), the JSON dump, the journal and MMP readers, and fit's
//! image source (every in-use inode's xattrs) through the evaluator.
//!
//! It also runs `check` (every rule), the in-use inode scan behind `xattrs`, path resolution
//! through directories and htrees, and the per-inode views behind `inode`.
#![no_main]

use e4inspect::fit;
use e4inspect::format::dumpe2fs::{dump, DumpOptions};
use e4inspect::fs::{Filesystem, OpenOptions};
use e4inspect::source::Source;
use libfuzzer_sys::fuzz_target;

fn open(data: &[u8], super_only: bool) -> Option<Filesystem> {
    let src = Source::from_bytes(data).ok()?;
    let opts = OpenOptions {
        super_only,
        ..Default::default()
    };
    Filesystem::from_source(src, &opts).ok()
}

fuzz_target!(|data: &[u8]| {
    if let Some(fs) = open(data, true) {
        let mut out = Vec::new();
        let opts = DumpOptions { header_only: true, ..Default::default() };
        let _ = dump(&fs, &opts, &mut out);
        let _ = e4inspect::format::json::dump(&fs, true);
    }
    if let Ok(src) = Source::from_bytes(data) {
        let _ = e4inspect::check::check_source(src, &e4inspect::check::CheckOptions::default());
    }
    let Some(fs) = open(data, false) else {
        return;
    };
    let _ = e4inspect::scan::xattr_stats(&fs, &|_| {});
    for path in ["/", "/lost+found", "/a/b/c", "/docs/small.txt"] {
        let _ = e4inspect::namei::resolve_path(&fs, path);
    }
    for opts in [
        DumpOptions::default(),
        DumpOptions { hex: true, ignore_80col: true, ..Default::default() },
        DumpOptions { group_only: true, ..Default::default() },
    ] {
        let mut out = Vec::new();
        let _ = dump(&fs, &opts, &mut out);
    }
    let _ = e4inspect::format::json::dump(&fs, false);
    let _ = e4inspect::journal::read_internal(&fs, true);
    let _ = e4inspect::journal::read_internal(&fs, false);
    let _ = e4inspect::journal::read_mmp(&fs, true);
    for ino in [1, 2, 7, 8, 11, 12, u32::MAX] {
        let _ = fs.read_inode_checked(ino, false);
        let _ = fit::read_inode_xattrs(&fs, ino);
        if let Ok(raw) = fs.inode_raw(ino) {
            let ind = e4inspect::inode::Inode::parse(&raw);
            let _ = e4inspect::inode::inode_xattrs(&fs, &raw, &ind);
            let _ = e4inspect::inode::data_map(&fs, ino, &ind, None);
            let _ = e4inspect::dir::dir_blocks(&fs, ino, &ind);
        }
    }
    let base = fit::image_params(&fs).for_inode_size(256);
    if let Ok(mut ev) = fit::Evaluator::new(base, &[128, 256, 1024], 256) {
        for o in fit::image_inodes(&fs).take(100_000).flatten() {
            ev.add(&o.set);
        }
        let _ = ev.finish();
    }
});
