//! Superblock decoding, geometry derivation and the dumpe2fs superblock listing.
#![no_main]

use e4inspect::format::dumpe2fs::list_super;
use e4inspect::geometry::Geometry;
use e4inspect::superblock::Superblock;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(sb) = Superblock::parse(data) else {
        return;
    };
    let _ = sb.feature_names();
    let _ = sb.checksum_ok();
    let _ = sb.csum_seed();
    let _ = (sb.block_size_checked(), sb.cluster_size(), sb.desc_size(), sb.first_ino());
    let mut s = e4inspect::format::dumpe2fs::RawText::default();
    list_super(&sb, &mut s);
    for force in [false, true] {
        let Ok(geo) = Geometry::new(&sb, force) else {
            continue;
        };
        // Per-group geometry for the first and last groups (every group would be up to 2^32).
        let n = geo.group_count;
        for g in (0..n.min(64)).chain(n.saturating_sub(64)..n) {
            let _ = geo.layout(g);
            let _ = geo.bg_has_super(g);
            let _ = (geo.group_first_block(g), geo.group_last_block(g), geo.group_blocks(g));
        }
        for i in 0..geo.desc_blocks.min(64) {
            let _ = geo.descriptor_block_loc(geo.first_data_block, i);
        }
        let _ = geo.old_desc_blocks();
        let _ = geo.inodes_count();
        let _ = geo.group_of_block(sb.blocks_count());
    }
});
