//! Every binrw declaration in `ondisk`, decoded from arbitrary bytes at every offset of the
//! input: a short slice must be an error, never a panic; derived values must not overflow.
#![no_main]

use e4inspect::ondisk::{self, blockmap, dir, extent, group, inode, journal, orphan, xattr};
use libfuzzer_sys::fuzz_target;

fn each<T: ondisk::OnDisk>(data: &[u8], mut f: impl FnMut(T)) {
    for at in 0..data.len().min(64) {
        if let Ok(v) = ondisk::decode_at::<T>(data, at) {
            f(v);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = ondisk::decode::<e4inspect::superblock::Superblock>(data);
    each::<group::GroupDesc32>(data, |_| ());
    let _ = ondisk::decode_zero_extended::<group::GroupDescHi>(data);
    each::<inode::InodeBase>(data, |b| {
        let _ = (b.size(), b.blocks(), b.file_acl(), b.uid(), b.gid());
    });
    let _ = (inode::large_in_use(data), inode::large_in_record(data));
    let _ = inode::checksum_ok(inode::csum_seed(!0, 12, 1), data);
    each::<extent::ExtentHeader>(data, |_| ());
    each::<extent::RawExtent>(data, |e| {
        let _ = (e.start(), e.length());
    });
    each::<extent::RawExtentIdx>(data, |i| {
        let _ = i.leaf();
    });
    each::<blockmap::IBlockMap>(data, |m| {
        let _ = (0..16).map(|i| m.slot(i)).count();
    });
    let _ = blockmap::pointers(data).count();
    let _ = blockmap::pointer(data, data.len());
    each::<xattr::BlockHeader>(data, |_| ());
    each::<xattr::Entry>(data, |_| ());
    let _ = ondisk::decode_zero_extended::<xattr::VfsCapData>(data);
    each::<dir::DirEntry2>(data, |_| ());
    each::<dir::DirEntryTail>(data, |t| {
        let _ = t.is_tail();
    });
    each::<dir::DxRoot>(data, |_| ());
    each::<dir::DxCountLimit>(data, |_| ());
    let _ = ondisk::decode::<journal::RawJournalSuperblock>(data);
    let _ = ondisk::decode::<journal::RawMmp>(data);
    let _ = orphan::OrphanBlockTail::of_block(data);
});
