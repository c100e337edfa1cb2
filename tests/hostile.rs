//! Hostile images: take the shipped fixture and small mke2fs images, set the fields that drive
//! loops and allocations to extremes (0, 1, u32::MAX, past the end, self-references), and assert
//! that every subcommand that reads an image (discovered from `e4inspect --help`) ends within a
//! bound, under an address-space limit, with exit 0, 4 or 8 and never a panic or a signal.
//!
//! Each mutation runs with checksums fixed afterwards (so it reaches the code behind the checksum
//! checks) and, for superblock fields, also as is.

mod common;
mod robust;

use common::*;
use e4inspect::fs::Filesystem;
use e4inspect::superblock::Superblock;
use robust::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(10);
/// 64 MiB of anonymous memory (the contract for any image of at most 64 MiB) plus 16 MiB for
/// the binary's text, data and shared libraries.
const MAX_RSS_KIB: i64 = (64 + 16) * 1024;

fn children_max_rss_kib() -> i64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage into the pointer, which points to zeroed storage of
    // the right type and size that lives across the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, ru.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage failed");
    // SAFETY: getrusage succeeded, so the storage is initialised (and it was zeroed before).
    let ru = unsafe { ru.assume_init() };
    ru.ru_maxrss
}
const SB: usize = 1024;

/// Where the interesting structures of a base image are.
#[derive(Clone, Debug)]
struct Info {
    bs: usize,
    blocks: u64,
    csum: bool,
    /// Byte offset of descriptor 0 and the descriptor size.
    desc0: usize,
    desc_size: usize,
    /// (inode number, byte offset, inode size) of inodes 2, 8, 11, 12 when they exist.
    inodes: Vec<(u32, usize, usize)>,
    /// Byte offset of the journal superblock, if any.
    jsb: Option<usize>,
    /// External xattr block of some inode, if any: (block number, owning inode).
    xblock: Option<(u64, u32)>,
}

fn info(img: &Path) -> Info {
    let fs = Filesystem::open(img, &Default::default()).expect("base image opens");
    let bs = fs.block_size() as usize;
    let desc0 = fs.desc_block_loc(0) as usize * bs;
    let mut inodes = Vec::new();
    let mut xblock = None;
    for ino in [2u32, 8, 11, 12, 13, 14] {
        if let Ok(off) = fs.inode_offset(ino) {
            inodes.push((ino, off as usize, fs.geo.inode_size as usize));
            let i = e4inspect::inode::Inode::parse(&fs.inode_raw(ino).unwrap());
            if i.file_acl != 0 && xblock.is_none() {
                xblock = Some((i.file_acl, ino));
            }
        }
    }
    let jsb = e4inspect::journal::read_internal(&fs, false)
        .ok()
        .and_then(|_| {
            let raw = fs.inode_raw(8).ok()?;
            let i = e4inspect::inode::Inode::parse(&raw);
            let b = if i.has_flag(e4inspect::inode::EXTENTS_FL) {
                e4inspect::extent::map_extent(&i.block, 0, |b| fs.block(b)).ok()??
            } else {
                e4inspect::extent::map_blockmap(&i.block, bs as u64, 0, |b| fs.block(b)).ok()??
            };
            Some(b as usize * bs)
        });
    Info {
        bs,
        blocks: fs.geo.blocks_count,
        csum: fs.sb.has_metadata_csum(),
        desc0,
        desc_size: fs.geo.desc_size as usize,
        inodes,
        jsb,
        xblock,
    }
}

fn put(img: &mut [u8], off: usize, width: usize, v: u64) {
    for i in 0..width {
        if let Some(b) = img.get_mut(off + i) {
            *b = (v >> (8 * i)) as u8;
        }
    }
}

fn put_be32(img: &mut [u8], off: usize, v: u32) {
    if let Some(d) = img.get_mut(off..off + 4) {
        d.copy_from_slice(&v.to_be_bytes());
    }
}

/// Recompute the checksums a mutation may have invalidated (metadata_csum images only).
fn fix_checksums(img: &mut [u8], inf: &Info) {
    if !inf.csum {
        return;
    }
    let Ok(sb) = Superblock::parse(&img[SB..SB + 1024]) else {
        return;
    };
    let seed = sb.csum_seed();
    // Descriptor 0 (with the possibly mutated superblock's view of the descriptor size).
    let ctx = e4inspect::group::DescContext::new(&sb);
    if let Some(raw) = img.get(inf.desc0..inf.desc0 + inf.desc_size) {
        let c = e4inspect::group::desc_checksum(&ctx, 0, raw);
        put(img, inf.desc0 + 0x1E, 2, u64::from(c));
    }
    for &(ino, off, isz) in &inf.inodes {
        if let Some(raw) = img.get(off..off + isz) {
            let c = e4inspect::inode::inode_checksum(seed, ino, raw);
            let has_hi = isz > 128 && u16::from_le_bytes([raw[0x80], raw[0x81]]) >= 4;
            put(img, off + 0x7C, 2, u64::from(c & 0xFFFF));
            if has_hi {
                put(img, off + 0x82, 2, u64::from(c >> 16));
            }
        }
    }
    if let Some((blk, _)) = inf.xblock {
        let off = blk as usize * inf.bs;
        if let Some(raw) = img.get(off..off + inf.bs) {
            let c = e4inspect::xattr::block_checksum(seed, blk, raw);
            put(img, off + 0x10, 4, u64::from(c));
        }
    }
    let sb = Superblock::parse(&img[SB..SB + 1024]).unwrap();
    put(img, SB + 0x3FC, 4, u64::from(sb.computed_checksum()));
}

type MutFn = Arc<dyn Fn(&mut Vec<u8>, &Info) + Send + Sync>;

struct Mutation {
    name: String,
    f: MutFn,
    fix: bool,
}

fn m(
    name: impl Into<String>,
    fix: bool,
    f: impl Fn(&mut Vec<u8>, &Info) + Send + Sync + 'static,
) -> Mutation {
    Mutation {
        name: name.into(),
        f: Arc::new(f),
        fix,
    }
}

/// Extremes for a field of `width` bytes, plus values relative to the image.
fn extremes(width: usize) -> Vec<u64> {
    let max = if width >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * width)) - 1
    };
    vec![0, 1, max, max / 2 + 1]
}

fn mutations(inf: &Info) -> Vec<Mutation> {
    let mut v = Vec::new();
    // Superblock fields that drive geometry, loops and allocations.
    let sb_fields: &[(&str, usize, usize)] = &[
        ("inodes_count", 0x00, 4),
        ("blocks_count_lo", 0x04, 4),
        ("r_blocks_count", 0x08, 4),
        ("free_blocks_count", 0x0C, 4),
        ("free_inodes_count", 0x10, 4),
        ("first_data_block", 0x14, 4),
        ("log_block_size", 0x18, 4),
        ("log_cluster_size", 0x1C, 4),
        ("blocks_per_group", 0x20, 4),
        ("clusters_per_group", 0x24, 4),
        ("inodes_per_group", 0x28, 4),
        ("rev_level", 0x4C, 4),
        ("first_ino", 0x54, 4),
        ("inode_size", 0x58, 2),
        ("feature_compat", 0x5C, 4),
        ("feature_incompat", 0x60, 4),
        ("feature_ro_compat", 0x64, 4),
        ("reserved_gdt_blocks", 0xCE, 2),
        ("journal_inum", 0xE0, 4),
        ("last_orphan", 0xE8, 4),
        ("desc_size", 0xFE, 2),
        ("first_meta_bg", 0x104, 4),
        ("blocks_count_hi", 0x150, 4),
        ("min_extra_isize", 0x15C, 2),
        ("want_extra_isize", 0x15E, 2),
        ("mmp_block", 0x168, 8),
        ("log_groups_per_flex", 0x174, 1),
        ("checksum_type", 0x175, 1),
        ("backup_bgs0", 0x24C, 4),
        ("backup_bgs1", 0x250, 4),
        ("usr_quota_inum", 0x240, 4),
        ("orphan_file_inum", 0x270, 4),
    ];
    for &(name, off, width) in sb_fields {
        let mut vals = extremes(width);
        match name {
            "log_block_size" | "log_cluster_size" => vals.extend([2, 6, 7]),
            "blocks_count_lo" => vals.extend([inf.blocks + 1, inf.blocks * 64]),
            "first_data_block" => vals.extend([inf.blocks - 1, inf.blocks]),
            "desc_size" => vals.extend([32, 64, 1024, 2048]),
            "inode_size" => vals.extend([128, 1024, 65535]),
            "mmp_block" => vals.extend([inf.blocks - 1, inf.blocks]),
            "log_groups_per_flex" => vals.extend([31, 32]),
            _ => {}
        }
        for val in vals {
            for fix in [true, false] {
                if !fix && !inf.csum {
                    continue;
                }
                v.push(m(format!("sb.{name}={val:#x}"), fix, move |img, _| {
                    put(img, SB + off, width, val)
                }));
            }
        }
    }
    // Features one at a time (on and off), checksum fixed so the open gets past it.
    for (set, off) in [
        ("compat", 0x5Cusize),
        ("incompat", 0x60),
        ("ro_compat", 0x64),
    ] {
        for bit in 0..20 {
            v.push(m(format!("sb.{set}^bit{bit}"), true, move |img, _| {
                img[SB + off + bit / 8] ^= 1 << (bit % 8);
            }));
        }
    }
    // meta_bg with first_meta_bg 0: descriptor blocks placed by the meta_bg rule from group 0.
    v.push(m("sb.meta_bg,first_meta_bg=0", true, |img, _| {
        img[SB + 0x60] |= 0x10;
        put(img, SB + 0x104, 4, 0);
    }));
    // A 64 KiB block size claimed on a small 1 KiB-block image, with geometry kept consistent.
    v.push(m("sb.64KiB blocks on a small image", true, |img, _| {
        put(img, SB + 0x18, 4, 6);
        put(img, SB + 0x1C, 4, 6);
        put(img, SB + 0x14, 4, 0);
    }));
    // Descriptor 0: locations past the end, at the superblock, huge counts.
    let d = inf.desc0;
    let desc_fields: &[(&str, usize, usize)] = &[
        ("block_bitmap", 0x00, 4),
        ("inode_bitmap", 0x04, 4),
        ("inode_table", 0x08, 4),
        ("free_blocks", 0x0C, 2),
        ("free_inodes", 0x0E, 2),
        ("used_dirs", 0x10, 2),
        ("flags", 0x12, 2),
        ("exclude_bitmap", 0x14, 4),
        ("itable_unused", 0x1C, 2),
        ("block_bitmap_hi", 0x20, 4),
        ("inode_table_hi", 0x28, 4),
    ];
    for &(name, off, width) in desc_fields {
        if off + width > inf.desc_size {
            continue;
        }
        let mut vals = extremes(width);
        vals.extend([inf.blocks, inf.blocks - 1]);
        for val in vals {
            v.push(m(format!("gd0.{name}={val:#x}"), true, move |img, _| {
                put(img, d + off, width, val)
            }));
        }
    }
    // The whole descriptor table overlapping the superblock: a copy of the superblock's block.
    v.push(m("gd table = superblock bytes", true, move |img, inf| {
        let src = img[..inf.bs.max(2048)].to_vec();
        let n = src.len().min(img.len() - d);
        img[d..d + n].copy_from_slice(&src[..n]);
    }));
    // Inodes: sizes, counts, flags, block maps, xattr fields.
    for &(ino, off, isz) in &inf.inodes {
        let fields: &[(&str, usize, usize)] = &[
            ("mode", 0x00, 2),
            ("size_lo", 0x04, 4),
            ("links", 0x1A, 2),
            ("blocks_lo", 0x1C, 4),
            ("flags", 0x20, 4),
            ("eh_entries", 0x2A, 2),
            ("eh_max", 0x2C, 2),
            ("eh_depth", 0x2E, 2),
            ("iblock1", 0x2C, 4),
            ("ext0_len", 0x38, 2),
            ("ext0_start", 0x3C, 4),
            ("iblock12_ind", 0x58, 4),
            ("iblock13_dind", 0x5C, 4),
            ("iblock14_tind", 0x60, 4),
            ("file_acl", 0x68, 4),
            ("size_hi", 0x6C, 4),
            ("extra_isize", 0x80, 2),
        ];
        for &(name, foff, width) in fields {
            if foff + width > isz {
                continue;
            }
            let mut vals = extremes(width);
            if name.starts_with("iblock") || name == "file_acl" || name == "ext0_start" {
                vals.extend([inf.blocks, (inf.desc0 / inf.bs) as u64]);
            }
            if name == "flags" {
                vals.extend([0x8_0000, 0x1000_0000, 0x20_0000, 0x1000]);
            }
            if name == "extra_isize" {
                vals.extend([3, 4, 0x7C, 0x80]);
            }
            for val in vals {
                v.push(m(
                    format!("ino{ino}.{name}={val:#x}"),
                    true,
                    move |img, _| put(img, off + foff, width, val),
                ));
            }
        }
        // Extent trees: a root that descends to a node pointing to itself, and a chain of five
        // levels ending past the end; both in spare blocks at the end of the image.
        let bs = inf.bs;
        let last = inf.blocks - 1;
        v.push(m(
            format!("ino{ino}.extent self-loop"),
            true,
            move |img, _| {
                let root = off + 0x28;
                img[off + 0x20] |= 0x08; // EXTENTS_FL (byte 2 of i_flags is 0x08 for 0x80000)
                put(img, off + 0x22, 1, 0x08);
                put(img, root, 2, 0xF30A);
                put(img, root + 2, 2, 1);
                put(img, root + 4, 2, 4);
                put(img, root + 6, 2, 2);
                put(img, root + 12, 4, 0);
                put(img, root + 16, 4, last);
                put(img, root + 20, 2, 0);
                let b = last as usize * bs;
                for (o, val, w) in [
                    (0, 0xF30A, 2),
                    (2, 1, 2),
                    (4, ((bs - 12) / 12) as u64, 2),
                    (6, 1, 2),
                    (12, 0, 4),
                    (16, last, 4),
                    (20, 0, 2),
                ] {
                    put(img, b + o, w, val);
                }
            },
        ));
        v.push(m(
            format!("ino{ino}.extent chain depth 5"),
            true,
            move |img, _| {
                let root = off + 0x28;
                put(img, off + 0x22, 1, 0x08);
                put(img, root, 2, 0xF30A);
                put(img, root + 2, 2, 1);
                put(img, root + 4, 2, 4);
                put(img, root + 6, 2, 5);
                put(img, root + 16, 4, last);
                for k in 0..5u64 {
                    let blk = last - k;
                    let b = blk as usize * bs;
                    let depth = 4 - k;
                    for (o, val, w) in [
                        (0, 0xF30A, 2),
                        (2, 0xFFFF, 2),
                        (4, 0xFFFF, 2),
                        (6, depth, 2),
                    ] {
                        put(img, b + o, w, val);
                    }
                    // Fill every slot: index children one level down, or leaves past the end.
                    for e in 0..(bs - 12) / 12 {
                        let eo = b + 12 + 12 * e;
                        put(img, eo, 4, e as u64);
                        if depth > 0 {
                            put(img, eo + 4, 4, blk - 1);
                        } else {
                            put(img, eo + 4, 2, 0x8000);
                            put(img, eo + 8, 4, u64::from(u32::MAX));
                        }
                    }
                    put(img, b + 2, 2, ((bs - 12) / 12) as u64);
                    put(img, b + 4, 2, ((bs - 12) / 12) as u64);
                }
            },
        ));
        // Classic block map whose indirect blocks point to themselves.
        v.push(m(
            format!("ino{ino}.blockmap self-loop"),
            true,
            move |img, _| {
                put(img, off + 0x20, 4, 0);
                put(img, off + 0x04, 4, u64::from(u32::MAX));
                for s in 0..15 {
                    put(img, off + 0x28 + 4 * s, 4, last);
                }
                let b = last as usize * bs;
                for i in 0..bs / 4 {
                    put(img, b + 4 * i, 4, last);
                }
            },
        ));
        if isz > 160 {
            // In-inode xattrs: an entry whose value lies past the end, a name running off the end,
            // and entries with no terminator.
            v.push(m(
                format!("ino{ino}.ibody hostile entries"),
                true,
                move |img, _| {
                    put(img, off + 0x80, 2, 32);
                    let h = off + 128 + 32;
                    put(img, h, 4, 0xEA02_0000);
                    let e = h + 4;
                    for (o, val, w) in [
                        (0, 255, 1),
                        (1, 1, 1),
                        (2, 0xFFFF, 2),
                        (4, 0, 4),
                        (8, u64::from(u32::MAX), 4),
                    ] {
                        put(img, e + o, w, val);
                    }
                    if let Some(rest) = img.get_mut(e + 16..off + isz) {
                        rest.fill(0x41);
                    }
                },
            ));
            v.push(m(
                format!("ino{ino}.ibody ea_inode ref"),
                true,
                move |img, _| {
                    put(img, off + 0x80, 2, 32);
                    let h = off + 128 + 32;
                    put(img, h, 4, 0xEA02_0000);
                    let e = h + 4;
                    for (o, val, w) in [
                        (0, 1, 1),
                        (1, 1, 1),
                        (2, 0, 2),
                        (4, u64::from(u32::MAX), 4),
                        (8, 1 << 24, 4),
                    ] {
                        put(img, e + o, w, val);
                    }
                    put(img, e + 16, 4, 0);
                },
            ));
        }
        // An external xattr block with hostile header and entries.
        v.push(m(
            format!("ino{ino}.xattr block hostile"),
            true,
            move |img, _| {
                put(img, off + 0x68, 4, last);
                let b = last as usize * bs;
                put(img, b, 4, 0xEA02_0000);
                put(img, b + 4, 4, u64::from(u32::MAX));
                put(img, b + 8, 4, 1);
                let mut e = b + 32;
                while e + 20 < b + bs {
                    for (o, val, w) in [
                        (0, 4, 1),
                        (1, 1, 1),
                        (2, 0xFFF0, 2),
                        (4, 7, 4),
                        (8, 0xFFFF_FFF0, 4),
                    ] {
                        put(img, e + o, w, val);
                    }
                    img[e + 16..e + 20].copy_from_slice(b"abcd");
                    e += 20;
                }
            },
        ));
    }
    if let Some((blk, _)) = inf.xblock {
        let b = blk as usize * inf.bs;
        for (name, o, w) in [
            ("refcount", 4, 4),
            ("h_blocks", 8, 4),
            ("e0.name_len", 32, 1),
            ("e0.value_offs", 34, 2),
            ("e0.value_inum", 36, 4),
            ("e0.value_size", 40, 4),
        ] {
            for val in extremes(w) {
                v.push(m(format!("xblock.{name}={val:#x}"), true, move |img, _| {
                    put(img, b + o, w, val)
                }));
            }
        }
    }
    if let Some(j) = inf.jsb {
        for (name, o) in [
            ("blocksize", 0x0C),
            ("maxlen", 0x10),
            ("first", 0x14),
            ("nr_users", 0x40),
            ("num_fc_blks", 0x54),
            ("incompat", 0x28),
        ] {
            for val in [0, 1, u32::MAX] {
                v.push(m(format!("jsb.{name}={val:#x}"), true, move |img, _| {
                    put_be32(img, j + o, val)
                }));
            }
        }
    }
    v
}

/// Base images: the shipped fixture and small mke2fs images with populated trees.
fn bases(dir: &Path) -> Vec<PathBuf> {
    let mut v = vec![PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/example.img"
    ))];
    if !have("mke2fs") || !have("debugfs") {
        eprintln!("note: mke2fs/debugfs missing: only the shipped fixture is mutated");
        return v;
    }
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("d")).unwrap();
    std::fs::write(tree.join("a"), b"hello\n").unwrap();
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::create(tree.join("sparse")).unwrap();
        for i in 0..14u64 {
            f.write_at(b"x", i * 4096).unwrap();
        }
    }
    std::os::unix::fs::symlink("l".repeat(100), tree.join("longlink")).unwrap();
    let t = tree.to_str().unwrap();
    let ext4 = mkfs(
        dir,
        "ext4.img",
        2 << 20,
        &["-t", "ext4", "-b", "1024", "-I", "256", "-N", "64", "-d", t],
    );
    // Xattrs in the body and in an external block on file /a (inode 12).
    let cmds = dir.join("ea.cmds");
    let mut s = String::new();
    for k in 0..5 {
        s.push_str(&format!(
            "ea_set /a user.k{k} {}\n",
            "v".repeat(20 + 40 * k)
        ));
    }
    std::fs::write(&cmds, s).unwrap();
    let o = run(std::process::Command::new(which("debugfs").unwrap())
        .arg("-w")
        .arg("-f")
        .arg(&cmds)
        .arg(&ext4));
    assert!(o.status.success());
    v.push(ext4);
    v.push(mkfs(
        dir,
        "ext2.img",
        512 << 10,
        &["-t", "ext2", "-b", "1024", "-N", "48", "-d", t],
    ));
    v.push(mkfs(
        dir,
        "ext4_4k.img",
        1 << 20,
        &[
            "-t",
            "ext4",
            "-b",
            "4096",
            "-O",
            "64bit,meta_bg,^resize_inode,^has_journal",
            "-N",
            "64",
            "-d",
            t,
        ],
    ));
    v
}

#[test]
fn hostile_images_never_panic_hang_or_blow_up() {
    let bin = bin();
    let cmds = for_this_build(image_commands(&bin));
    let dir = tempfile::tempdir().unwrap();
    let mut jobs = Vec::new();
    for base in bases(dir.path()) {
        let bytes = Arc::new(std::fs::read(&base).unwrap());
        let inf = Arc::new(info(&base));
        let tag = base.file_name().unwrap().to_string_lossy().into_owned();
        for (i, mu) in mutations(&inf).into_iter().enumerate() {
            jobs.push((tag.clone(), i, mu, bytes.clone(), inf.clone()));
        }
    }
    let n = jobs.len();
    let work = dir.path().to_path_buf();
    let start = std::time::Instant::now();
    // Many mutations give an image another one already gave (a field set to the value it had, a
    // write past the end, the same bytes reached two ways): every command is deterministic, so
    // each distinct image is run once. Keyed by two independent 64-bit hashes of the bytes.
    let seen = std::sync::Mutex::new(std::collections::HashSet::new());
    let results = parallel(jobs, threads(), |(tag, i, mu, bytes, inf)| {
        let mut img = (*bytes).clone();
        (mu.f)(&mut img, &inf);
        if mu.fix {
            fix_checksums(&mut img, &inf);
        }
        let key = [1u8, 2].map(|k| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (k, &img).hash(&mut h);
            h.finish()
        });
        if !seen.lock().unwrap().insert(key) {
            return (Vec::new(), Vec::new());
        }
        let p = work.join(format!("{tag}.{i}.img"));
        std::fs::write(&p, &img).unwrap();
        let mut bad = Vec::new();
        let mut codes = Vec::new();
        for c in &cmds {
            let o = run_bounded(&bin, &c.args(&p), TIMEOUT, false);
            if let Some(why) = o.violation_for(c.style) {
                bad.push(format!(
                    "{tag} [{}{}] `{}`: {why}",
                    mu.name,
                    if mu.fix { "" } else { ", csum not fixed" },
                    c.label()
                ));
            }
            codes.push(o.code);
        }
        let _ = std::fs::remove_file(&p);
        (bad, codes)
    });
    let mut by_code = std::collections::BTreeMap::new();
    let mut bad = Vec::new();
    for (b, codes) in results {
        bad.extend(b);
        for c in codes {
            *by_code.entry(c).or_insert(0) += 1;
        }
    }
    eprintln!(
        "hostile: {n} mutated images ({} distinct) x {} commands in {:?}; exit codes {by_code:?}",
        seen.lock().unwrap().len(),
        cmds.len(),
        start.elapsed()
    );
    // Memory bound: RUSAGE_CHILDREN's ru_maxrss is the largest peak RSS of any child waited
    // for (every run above, and the few mke2fs/debugfs that made the bases). With positional
    // reads no image is mapped, so RSS is anonymous memory plus the binary's own pages.
    let peak_kib = children_max_rss_kib();
    eprintln!("hostile: largest peak RSS of any run: {peak_kib} KiB");
    assert!(
        peak_kib < MAX_RSS_KIB,
        "a run peaked at {peak_kib} KiB of RSS (bound {MAX_RSS_KIB} KiB: 64 MiB of anonymous memory plus the binary)"
    );
    // The mutations must reach the error paths, not just the happy path.
    assert!(by_code.get(&Some(8)).copied().unwrap_or(0) > 0);
    assert!(
        bad.is_empty(),
        "{} violations:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
