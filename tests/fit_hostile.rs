//! Damaged xattr areas in an image: `--from-image`'s reader reports errors, never panics.

use e4inspect::fit;
use e4inspect::fs::Filesystem;
use e4inspect::inode::Inode;
use e4inspect::source::Source;
use std::process::Command;

#[test]
fn mutated_inodes_and_xattr_blocks_never_panic() {
    if Command::new("mke2fs").arg("-V").output().is_err() {
        eprintln!("SKIP mutated_inodes_and_xattr_blocks_never_panic: mke2fs not found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("x.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    // debugfs ea_set puts attributes in the body and in a block.
    let st = Command::new("mke2fs")
        .env("E2FSPROGS_FAKE_TIME", "1700000000")
        .args([
            "-q", "-F", "-t", "ext4", "-b", "1024", "-I", "256", "-N", "64",
        ])
        .args(["-U", "5a1e5a1e-0000-4000-8000-00000000f17e"])
        .arg(&img)
        .status()
        .unwrap();
    assert!(st.success());
    let mut cmds = String::new();
    for i in 0..8 {
        cmds.push_str(&format!("write /dev/null f{i}\n"));
        for k in 0..4 {
            let value = "v".repeat(10 + 30 * k + i);
            cmds.push_str(&format!("ea_set f{i} user.a{k} {value}\n"));
        }
    }
    let cf = dir.path().join("cmds");
    std::fs::write(&cf, cmds).unwrap();
    let st = Command::new("debugfs")
        .arg("-w")
        .arg("-f")
        .arg(&cf)
        .arg(&img)
        .output()
        .unwrap();
    assert!(st.status.success());
    let bytes = std::fs::read(&img).unwrap();

    // Where the interesting bytes are: the first inode table and every xattr block.
    let fs = Filesystem::open(&img, &Default::default()).unwrap();
    let bs = fs.block_size() as usize;
    let itable = fs.desc(0).unwrap().inode_table as usize * bs;
    let mut regions = vec![(itable, 64 * 256)];
    let mut with_block = 0;
    for obs in fit::image_inodes(&fs).flatten() {
        let inode = Inode::parse(&fs.inode_raw(obs.ino).unwrap());
        if inode.file_acl != 0 {
            regions.push((inode.file_acl as usize * bs, bs));
            with_block += 1;
        }
        if !obs.set.attrs.is_empty() {
            assert!(obs.observed.contains(&fit::Location::Inode), "{obs:?}");
        }
    }
    assert!(with_block >= 4, "the fixture should use xattr blocks");

    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut errors = 0;
    for round in 0..400 {
        let mut m = bytes.clone();
        for _ in 0..(1 + round % 8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (start, len) = regions[(x % regions.len() as u64) as usize];
            let pos = start + ((x >> 8) % len as u64) as usize;
            m[pos] = match (x >> 40) % 4 {
                0 => 0,
                1 => 0xff,
                2 => m[pos] ^ 1,
                _ => (x >> 48) as u8,
            };
        }
        let Ok(fs) = Filesystem::from_source(Source::from_bytes(&m).unwrap(), &Default::default())
        else {
            continue;
        };
        let mut ev =
            fit::Evaluator::new(fit::image_params(&fs).for_inode_size(256), &[256, 512], 256)
                .unwrap();
        for item in fit::image_inodes(&fs).take(10_000) {
            match item {
                Ok(o) => ev.add(&o.set),
                Err(_) => errors += 1,
            }
        }
        let _ = ev.finish();
    }
    assert!(errors > 0, "mutations should produce some reported errors");
}
