//! Feature bits of the superblock and their names as e2fsprogs 1.47 prints them.

/// compat: has_journal
pub const COMPAT_HAS_JOURNAL: u32 = 0x0004;
/// compat: ext_attr
pub const COMPAT_EXT_ATTR: u32 = 0x0008;
/// compat: resize_inode
pub const COMPAT_RESIZE_INODE: u32 = 0x0010;
/// compat: dir_index
pub const COMPAT_DIR_INDEX: u32 = 0x0020;
/// compat: sparse_super2
pub const COMPAT_SPARSE_SUPER2: u32 = 0x0200;
/// compat: fast_commit
pub const COMPAT_FAST_COMMIT: u32 = 0x0400;
/// compat: stable_inodes
pub const COMPAT_STABLE_INODES: u32 = 0x0800;
/// compat: orphan_file
pub const COMPAT_ORPHAN_FILE: u32 = 0x1000;

/// incompat: compression
pub const INCOMPAT_COMPRESSION: u32 = 0x0001;
/// incompat: filetype
pub const INCOMPAT_FILETYPE: u32 = 0x0002;
/// incompat: needs_recovery
pub const INCOMPAT_RECOVER: u32 = 0x0004;
/// incompat: journal_dev
pub const INCOMPAT_JOURNAL_DEV: u32 = 0x0008;
/// incompat: meta_bg
pub const INCOMPAT_META_BG: u32 = 0x0010;
/// incompat: extent
pub const INCOMPAT_EXTENTS: u32 = 0x0040;
/// incompat: 64bit
pub const INCOMPAT_64BIT: u32 = 0x0080;
/// incompat: mmp
pub const INCOMPAT_MMP: u32 = 0x0100;
/// incompat: flex_bg
pub const INCOMPAT_FLEX_BG: u32 = 0x0200;
/// incompat: ea_inode
pub const INCOMPAT_EA_INODE: u32 = 0x0400;
/// incompat: dirdata
pub const INCOMPAT_DIRDATA: u32 = 0x1000;
/// incompat: metadata_csum_seed
pub const INCOMPAT_CSUM_SEED: u32 = 0x2000;
/// incompat: large_dir
pub const INCOMPAT_LARGEDIR: u32 = 0x4000;
/// incompat: inline_data
pub const INCOMPAT_INLINE_DATA: u32 = 0x8000;
/// incompat: encrypt
pub const INCOMPAT_ENCRYPT: u32 = 0x10000;
/// incompat: casefold
pub const INCOMPAT_CASEFOLD: u32 = 0x20000;

/// ro_compat: sparse_super
pub const RO_COMPAT_SPARSE_SUPER: u32 = 0x0001;
/// ro_compat: large_file
pub const RO_COMPAT_LARGE_FILE: u32 = 0x0002;
/// ro_compat: huge_file
pub const RO_COMPAT_HUGE_FILE: u32 = 0x0008;
/// ro_compat: uninit_bg (gdt_csum)
pub const RO_COMPAT_GDT_CSUM: u32 = 0x0010;
/// ro_compat: dir_nlink
pub const RO_COMPAT_DIR_NLINK: u32 = 0x0020;
/// ro_compat: extra_isize
pub const RO_COMPAT_EXTRA_ISIZE: u32 = 0x0040;
/// ro_compat: quota
pub const RO_COMPAT_QUOTA: u32 = 0x0100;
/// ro_compat: bigalloc
pub const RO_COMPAT_BIGALLOC: u32 = 0x0200;
/// ro_compat: metadata_csum
pub const RO_COMPAT_METADATA_CSUM: u32 = 0x0400;
/// ro_compat: project
pub const RO_COMPAT_PROJECT: u32 = 0x2000;
/// ro_compat: orphan_present
pub const RO_COMPAT_ORPHAN_PRESENT: u32 = 0x10000;

/// Incompat bits libext2fs 1.47 supports (EXT2_LIB_FEATURE_INCOMPAT_SUPP, with the soft-supported ones).
pub const LIB_INCOMPAT_SUPP: u32 = INCOMPAT_FILETYPE
    | INCOMPAT_JOURNAL_DEV
    | INCOMPAT_META_BG
    | INCOMPAT_RECOVER
    | INCOMPAT_EXTENTS
    | INCOMPAT_FLEX_BG
    | INCOMPAT_EA_INODE
    | INCOMPAT_MMP
    | INCOMPAT_64BIT
    | INCOMPAT_INLINE_DATA
    | INCOMPAT_ENCRYPT
    | INCOMPAT_CASEFOLD
    | INCOMPAT_CSUM_SEED
    | INCOMPAT_LARGEDIR;

/// ro_compat bits libext2fs 1.47 supports.
pub const LIB_RO_COMPAT_SUPP: u32 = RO_COMPAT_SPARSE_SUPER
    | RO_COMPAT_HUGE_FILE
    | RO_COMPAT_LARGE_FILE
    | RO_COMPAT_DIR_NLINK
    | RO_COMPAT_EXTRA_ISIZE
    | RO_COMPAT_GDT_CSUM
    | RO_COMPAT_BIGALLOC
    | RO_COMPAT_QUOTA
    | RO_COMPAT_METADATA_CSUM
    | 0x1000 // read-only
    | RO_COMPAT_PROJECT
    | 0x4000 // shared_blocks
    | 0x8000 // verity
    | RO_COMPAT_ORPHAN_PRESENT;

const COMPAT_NAMES: [(u32, &str); 12] = [
    (0, "dir_prealloc"),
    (1, "imagic_inodes"),
    (2, "has_journal"),
    (3, "ext_attr"),
    (4, "resize_inode"),
    (5, "dir_index"),
    (6, "lazy_bg"),
    (8, "snapshot_bitmap"),
    (9, "sparse_super2"),
    (10, "fast_commit"),
    (11, "stable_inodes"),
    (12, "orphan_file"),
];

const INCOMPAT_NAMES: [(u32, &str); 16] = [
    (0, "compression"),
    (1, "filetype"),
    (2, "needs_recovery"),
    (3, "journal_dev"),
    (4, "meta_bg"),
    (6, "extent"),
    (7, "64bit"),
    (8, "mmp"),
    (9, "flex_bg"),
    (10, "ea_inode"),
    (12, "dirdata"),
    (13, "metadata_csum_seed"),
    (14, "large_dir"),
    (15, "inline_data"),
    (16, "encrypt"),
    (17, "casefold"),
];

const RO_COMPAT_NAMES: [(u32, &str); 15] = [
    (0, "sparse_super"),
    (1, "large_file"),
    (3, "huge_file"),
    (4, "uninit_bg"),
    (5, "dir_nlink"),
    (6, "extra_isize"),
    (8, "quota"),
    (9, "bigalloc"),
    (10, "metadata_csum"),
    (11, "replica"),
    (12, "read-only"),
    (13, "project"),
    (14, "shared_blocks"),
    (15, "verity"),
    (16, "orphan_present"),
];

/// Which of the three feature words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// s_feature_compat
    Compat,
    /// s_feature_incompat
    Incompat,
    /// s_feature_ro_compat
    RoCompat,
}

/// Name of one feature bit, e2p_feature2string style (`FEATURE_I5` for unnamed bits).
pub fn feature_name(set: Set, bit: u32) -> String {
    let (table, letter): (&[(u32, &str)], char) = match set {
        Set::Compat => (&COMPAT_NAMES, 'C'),
        Set::Incompat => (&INCOMPAT_NAMES, 'I'),
        Set::RoCompat => (&RO_COMPAT_NAMES, 'R'),
    };
    table
        .iter()
        .find(|(b, _)| *b == bit)
        .map(|(_, n)| (*n).to_string())
        .unwrap_or_else(|| format!("FEATURE_{letter}{bit}"))
}

/// All set feature names in dumpe2fs order (compat, incompat, ro_compat; bit order).
pub fn feature_names(compat: u32, incompat: u32, ro_compat: u32) -> Vec<String> {
    let mut out = Vec::new();
    for (set, word) in [
        (Set::Compat, compat),
        (Set::Incompat, incompat),
        (Set::RoCompat, ro_compat),
    ] {
        for bit in 0..32 {
            if word & (1 << bit) != 0 {
                out.push(feature_name(set, bit));
            }
        }
    }
    out
}

/// Default mount option names, e2p order: journal mode first, then other bits.
pub fn mntopt_names(mask: u32) -> Vec<String> {
    const NAMES: [(u32, &str); 9] = [
        (0x0001, "debug"),
        (0x0002, "bsdgroups"),
        (0x0004, "user_xattr"),
        (0x0008, "acl"),
        (0x0010, "uid16"),
        (0x0100, "nobarrier"),
        (0x0200, "block_validity"),
        (0x0400, "discard"),
        (0x0800, "nodelalloc"),
    ];
    let mut out = Vec::new();
    match mask & 0x60 {
        0x20 => out.push("journal_data".to_string()),
        0x40 => out.push("journal_data_ordered".to_string()),
        0x60 => out.push("journal_data_writeback".to_string()),
        _ => {}
    }
    for bit in 0..32u32 {
        let bit_mask = 1u32 << bit;
        if bit_mask & 0x60 != 0 || mask & bit_mask == 0 {
            continue;
        }
        match NAMES.iter().find(|(v, _)| *v == bit_mask) {
            Some((_, n)) => out.push((*n).to_string()),
            None => out.push(format!("MNTOPT_{bit}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(feature_name(Set::Incompat, 5), "FEATURE_I5");
        assert_eq!(feature_name(Set::RoCompat, 7), "FEATURE_R7");
        assert_eq!(feature_name(Set::Compat, 7), "FEATURE_C7");
        assert_eq!(
            feature_names(0x4, 0x2, 0x1),
            vec!["has_journal", "filetype", "sparse_super"]
        );
        assert_eq!(
            mntopt_names(0x0c | 0x20),
            vec!["journal_data", "user_xattr", "acl"]
        );
        assert_eq!(mntopt_names(0x1000), vec!["MNTOPT_12"]);
    }
}
