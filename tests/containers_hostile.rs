//! Hostile containers: qcow2 images (from qemu-img, plain and compressed, and from `e2image -Q`)
//! and normal e2image files with the fields that drive allocations, loops and reads set to
//! extremes (huge L1 sizes, cluster_bits out of range, tables pointing at themselves or at the
//! header, offsets past the end, garbage compressed data, absurd block and group counts), then
//! every subcommand that reads an image run on each: bounded time, an address-space limit,
//! exit 0, 4 or 8, never a panic or a signal.

mod common;
mod robust;

use common::images::*;
use common::*;
use robust::*;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(10);

fn put_be(b: &mut [u8], off: usize, width: usize, v: u64) {
    if off + width <= b.len() {
        b[off..off + width].copy_from_slice(&v.to_be_bytes()[8 - width..]);
    }
}

fn put_le(b: &mut [u8], off: usize, width: usize, v: u64) {
    if off + width <= b.len() {
        b[off..off + width].copy_from_slice(&v.to_le_bytes()[..width]);
    }
}

fn be64(b: &[u8], off: usize) -> u64 {
    u64::from_be_bytes(b[off..off + 8].try_into().unwrap())
}

type Mutation = (String, Box<dyn Fn(&mut Vec<u8>) + Send + Sync>);

/// Mutations of the header (`header`) and of the tables.
fn qcow2_mutations(header: bool) -> Vec<Mutation> {
    let mut m: Vec<Mutation> = Vec::new();
    // Header fields: (offset, width, name).
    let fields = [
        (4, 4, "version"),
        (8, 8, "backing_file_offset"),
        (16, 4, "backing_file_size"),
        (20, 4, "cluster_bits"),
        (24, 8, "size"),
        (32, 4, "crypt_method"),
        (36, 4, "l1_size"),
        (40, 8, "l1_table_offset"),
        (72, 8, "incompatible_features"),
        (100, 4, "header_length"),
        (104, 1, "compression_type"),
    ];
    for (off, width, name) in fields.into_iter().filter(|_| header) {
        let max = if width == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * width)) - 1
        };
        for v in [0, 1, 8, 22, 1 << 20, max] {
            m.push((
                format!("{name}={v}"),
                Box::new(move |b: &mut Vec<u8>| put_be(b, off, width, v & max)),
            ));
        }
    }
    // The first L1 entry: unallocated, the L1 table itself, past the end,
    // unaligned, every bit.
    for (name, v) in [
        ("zero", 0u64),
        ("self", 1),
        ("past_end", 1 << 50),
        ("unaligned", 0x200),
        ("all_ones", u64::MAX),
    ] {
        m.push((
            format!("l1[0]={name}"),
            Box::new(move |b: &mut Vec<u8>| {
                let l1 = be64(b, 40) as usize;
                let v = if name == "self" { l1 as u64 } else { v };
                put_be(b, l1, 8, v);
            }),
        ));
    }
    // L2 entries of the first table: compressed garbage, huge offsets, the L1 table, the zero
    // flag, every bit; the table pointing at itself.
    for (name, v) in [
        ("compressed_garbage", (1u64 << 62) | 0x1_0000),
        ("compressed_max", (1u64 << 62) | ((1 << 62) - 1)),
        ("past_end", 1 << 52),
        ("all_ones", u64::MAX),
        ("zero_flag", 1),
        ("to_l1", 2),
    ] {
        m.push((
            format!("l2[*]={name}"),
            Box::new(move |b: &mut Vec<u8>| {
                let l1 = be64(b, 40) as usize;
                let l2 = (be64(b, l1) & 0x00ff_ffff_ffff_fe00) as usize;
                if l2 == 0 || l2 >= b.len() {
                    return;
                }
                let v = if v == 2 { be64(b, 40) } else { v };
                for k in 0..64 {
                    put_be(b, l2 + 8 * k, 8, v);
                }
            }),
        ));
    }
    m.push((
        "l2_self".into(),
        Box::new(|b: &mut Vec<u8>| {
            let l1 = be64(b, 40) as usize;
            let l2 = be64(b, l1) & 0x00ff_ffff_ffff_fe00;
            if l2 != 0 && (l2 as usize) < b.len() {
                for k in 0..8 {
                    put_be(b, l2 as usize + 8 * k, 8, l2);
                }
            }
        }),
    ));
    m.push((
        "truncated_half".into(),
        Box::new(|b: &mut Vec<u8>| {
            let n = b.len() / 2;
            b.truncate(n)
        }),
    ));
    m
}

fn e2image_mutations(bs: usize) -> Vec<Mutation> {
    let mut m: Vec<Mutation> = Vec::new();
    // Header fields (little-endian), and superblock fields of the copy at block 1.
    let fields: Vec<(usize, usize, &str)> = vec![
        (204, 4, "fs_blocksize"),
        (284, 4, "offset_super"),
        (288, 4, "offset_inode"),
        (292, 4, "offset_inodemap"),
        (296, 4, "offset_blockmap"),
        (bs, 4, "s_inodes_count"),
        (bs + 4, 4, "s_blocks_count"),
        (bs + 24, 4, "s_log_block_size"),
        (bs + 32, 4, "s_blocks_per_group"),
        (bs + 40, 4, "s_inodes_per_group"),
        (bs + 88, 2, "s_inode_size"),
        (bs + 96, 4, "s_feature_incompat"),
        (bs + 254, 2, "s_desc_size"),
        (bs + 260, 4, "s_first_meta_bg"),
        (bs + 336, 4, "s_blocks_count_hi"),
        (2 * bs, 4, "bg_block_bitmap[0]"),
        (2 * bs + 8, 4, "bg_inode_table[0]"),
    ];
    for (off, width, name) in fields {
        let max = (1u64 << (8 * width)) - 1;
        for v in [0, 1, 1 << 20, max] {
            m.push((
                format!("{name}={v}"),
                Box::new(move |b: &mut Vec<u8>| put_le(b, off, width, v & max)),
            ));
        }
    }
    m.push((
        "truncated_after_descriptors".into(),
        Box::new(move |b: &mut Vec<u8>| b.truncate(3 * bs)),
    ));
    m
}

#[test]
fn hostile_containers_never_panic_hang_or_blow_up() {
    if !have("mke2fs") || !have("e2image") || !have("qemu-img") {
        eprintln!("SKIP: mke2fs, e2image or qemu-img not installed");
        return;
    }
    let bin = bin();
    let cmds = for_this_build(image_commands(&bin));
    let dir = tempfile::tempdir().unwrap();
    let tree = populated_tree(dir.path());
    let img = mkfs(
        dir.path(),
        "base.img",
        8 << 20,
        &["-t", "ext4", "-b", "1024", "-d", tree.to_str().unwrap()],
    );
    let mut bases: Vec<(String, Vec<u8>, Vec<Mutation>)> = Vec::new();
    for (tag, args) in [
        ("plain", &[][..]),
        ("deflate", &["-c"][..]),
        ("zstd", &["-c", "-o", "compression_type=zstd"][..]),
        ("extl2", &["-o", "extended_l2=on,cluster_size=16k"][..]),
    ] {
        let q = qemu_convert(
            "qcow2",
            args,
            &img,
            &dir.path().join(format!("{tag}.qcow2")),
        );
        let header = tag == "plain";
        bases.push((
            tag.into(),
            std::fs::read(q).unwrap(),
            qcow2_mutations(header),
        ));
    }
    let q = e2image(&["-Q"], &img, &dir.path().join("meta.qcow2"));
    bases.push((
        "e2image-Q".into(),
        std::fs::read(q).unwrap(),
        qcow2_mutations(true),
    ));
    let e = e2image(&[], &img, &dir.path().join("base.e2i"));
    bases.push((
        "e2image".into(),
        std::fs::read(e).unwrap(),
        e2image_mutations(1024),
    ));
    let mut jobs = Vec::new();
    for (tag, bytes, muts) in bases {
        let bytes = std::sync::Arc::new(bytes);
        for (name, f) in muts {
            jobs.push((tag.clone(), name, std::sync::Arc::new(f), bytes.clone()));
        }
    }
    let n = jobs.len();
    let work = dir.path().to_path_buf();
    let results = parallel(jobs, threads(), |(tag, name, f, bytes)| {
        let mut b = (*bytes).clone();
        f(&mut b);
        let p = work.join(format!(
            "{tag}.{}.bin",
            name.replace(['/', '*', '[', ']'], "_")
        ));
        std::fs::write(&p, &b).unwrap();
        let mut bad = Vec::new();
        for c in &cmds {
            let o = run_bounded(&bin, &c.args(&p), TIMEOUT, false);
            if let Some(why) = o.violation_for(c.style) {
                bad.push(format!("{tag} [{name}] `{}`: {why}", c.label()));
            }
        }
        let _ = std::fs::remove_file(&p);
        bad
    });
    let bad: Vec<String> = results.into_iter().flatten().collect();
    eprintln!(
        "hostile containers: {n} mutated files x {} commands",
        cmds.len()
    );
    assert!(
        bad.is_empty(),
        "{} violations:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
