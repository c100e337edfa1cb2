//! Ground truth from the running kernel: make ext4 filesystems with mke2fs, loop-mount them, set
//! random xattr sequences with setxattr(2), unmount, read where every attribute actually landed
//! with our own parser, and assert the fit model predicted exactly that placement (and the same
//! free space in the inode body and the block).
//!
//! Inodes are located with the library's `Filesystem::inode_raw`.
//!
//! Needs root (mount) and e2fsprogs; skips with a printed reason otherwise.

use e4inspect::fit::{self, Attr, FitParams, Location};
use e4inspect::fs::Filesystem;
use e4inspect::inode::Inode;
use e4inspect::xattr;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use std::process::Command;

/// A small fixed-seed PRNG (xorshift64*), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn skip_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not running as root (needs loop mounts)".into());
    }
    for tool in ["mke2fs", "mount", "umount"] {
        let ok = Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {tool}"))
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if !ok {
            return Some(format!("{tool} not found"));
        }
    }
    None
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One filesystem configuration under test.
#[derive(Clone, Copy, Debug)]
struct Config {
    inode_size: u32,
    block_size: u32,
    ea_inode: bool,
}

/// A mounted scratch filesystem; unmounted on drop.
struct Scratch {
    _dir: tempfile::TempDir,
    img: PathBuf,
    mnt: PathBuf,
    mounted: bool,
}

impl Scratch {
    fn new(c: Config) -> Scratch {
        let dir = tempfile::tempdir().expect("tempdir");
        let img = dir.path().join("fs.img");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        std::fs::File::create(&img)
            .unwrap()
            .set_len(32 << 20)
            .unwrap();
        let mut features = String::from("^has_journal");
        if c.ea_inode {
            features.push_str(",ea_inode");
        }
        run(Command::new("mke2fs")
            .env("E2FSPROGS_FAKE_TIME", "1700000000")
            .args([
                "-q",
                "-F",
                "-t",
                "ext4",
                "-U",
                "5a1e5a1e-0000-4000-8000-00000000f17e",
            ])
            .args(["-I", &c.inode_size.to_string()])
            .args(["-b", &c.block_size.to_string()])
            .args(["-N", "4096", "-O", &features])
            .arg(&img));
        run(Command::new("mount")
            .args(["-t", "ext4", "-o", "loop"])
            .arg(&img)
            .arg(&mnt));
        Scratch {
            _dir: dir,
            img,
            mnt,
            mounted: true,
        }
    }
    fn umount(&mut self) {
        if self.mounted {
            run(Command::new("umount").arg(&self.mnt));
            self.mounted = false;
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(&self.mnt).status();
        }
    }
}

/// setxattr(2); returns the errno on failure.
fn set(path: &Path, name: &str, value: &[u8]) -> Result<(), i32> {
    let p = CString::new(path.as_os_str().as_bytes()).unwrap();
    let n = CString::new(name).unwrap();
    // SAFETY: valid NUL-terminated strings and a buffer of `value.len()` bytes.
    let rc = unsafe {
        libc::lsetxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }
}

/// The on-disk view of one inode's xattrs, read with our parser.
struct Observed {
    extra_isize: u16,
    /// name -> location (ea_inode when e_value_inum != 0).
    locations: Vec<(String, Location)>,
    body_free: usize,
    block_used: usize,
}

/// Read the inodes with the library's Filesystem and decode their xattrs with our parser.
fn observe(img: &Path, c: Config, inos: &[u64]) -> Vec<Observed> {
    let fs = Filesystem::open(img, &Default::default()).expect("open image");
    assert_eq!(fs.block_size(), c.block_size as u64);
    let metadata_csum = fs.sb.has_metadata_csum();
    inos.iter()
        .map(|&ino| {
            let ino = u32::try_from(ino).unwrap();
            let raw = fs.inode_raw(ino).unwrap();
            let inode = Inode::parse(&raw);
            let extra = if raw.len() > 128 {
                inode.extra_isize
            } else {
                0
            };
            let body = xattr::parse_ibody(&raw, extra).expect("our parser rejects a kernel inode");
            let mut locations = Vec::new();
            for e in &body.entries {
                let l = if e.value_inum != 0 {
                    Location::EaInode
                } else {
                    Location::Inode
                };
                locations.push((e.name.clone(), l));
            }
            let mut block_used = 0;
            if inode.file_acl != 0 {
                let block = fs.block(inode.file_acl).unwrap();
                let blk = xattr::parse_block(
                    &block,
                    inode.file_acl,
                    metadata_csum.then(|| fs.csum_seed()),
                )
                .expect("our parser rejects a kernel xattr block");
                if let Some(ck) = blk.checksum {
                    assert!(ck.ok(), "xattr block {} checksum {ck:?}", inode.file_acl);
                }
                assert!(blk.sorted, "kernel block entries not sorted?");
                assert!(blk.bad_entry_hashes.is_empty(), "entry hashes {blk:?}");
                assert_eq!(blk.computed_hash, blk.header.hash, "block hash");
                // Identical blocks are shared (mbcache), so refcount may exceed 1.
                assert!(blk.header.refcount >= 1);
                block_used = blk.space.used;
                assert_eq!(blk.space.free, blk.space.capacity - blk.space.used);
                for e in &blk.entries {
                    let l = if e.value_inum != 0 {
                        Location::EaInode
                    } else {
                        Location::Block
                    };
                    locations.push((e.name.clone(), l));
                }
            }
            // The library's image reader must see the same thing.
            let lib = fit::read_inode_xattrs(&fs, ino).unwrap();
            let lib_locs: Vec<(String, Location)> = lib
                .set
                .attrs
                .iter()
                .map(|a| a.name.clone())
                .zip(lib.observed.iter().copied())
                .collect();
            assert_eq!(lib_locs, locations, "inode {ino}");
            Observed {
                extra_isize: extra,
                locations,
                body_free: body.space.free,
                block_used,
            }
        })
        .collect()
}

fn random_name(rng: &mut Rng) -> String {
    let ns = ["user.", "trusted.", "security."][rng.below(3) as usize];
    let len = match rng.below(10) {
        0 => 1 + rng.below(3),
        1..=6 => 2 + rng.below(16),
        7 | 8 => 18 + rng.below(48),
        _ => 66 + rng.below(180),
    } as usize;
    // A leading 'q' keeps clear of names the kernel validates (capability, selinux, ima, evm).
    let mut s = String::from(ns);
    s.push('q');
    for _ in 1..len {
        s.push((b'a' + rng.below(26) as u8) as char);
    }
    s
}

fn random_size(rng: &mut Rng, c: Config) -> usize {
    (match rng.below(20) {
        0..=1 => 0,
        2..=11 => rng.below(64),
        12..=16 => 64 + rng.below(300),
        17 | 18 => 300 + rng.below(c.block_size as u64),
        _ => rng.below(3 * c.block_size as u64),
    }) as usize
}

/// One file's attribute sequence and the outcome of each setxattr.
struct Case {
    ino: u64,
    attrs: Vec<Attr>,
    errors: Vec<Option<i32>>,
}

/// Set `attrs` (random values) on a new file `name` and record each outcome.
fn make_case(s: &Scratch, name: &str, attrs: Vec<Attr>, rng: &mut Rng) -> Case {
    let path = s.mnt.join(name);
    std::fs::write(&path, b"").unwrap();
    let errors = attrs
        .iter()
        .map(|a| {
            let value: Vec<u8> = (0..a.value_size).map(|_| rng.next() as u8).collect();
            set(&path, &a.name, &value).err()
        })
        .collect();
    Case {
        ino: std::fs::metadata(&path).unwrap().ino(),
        attrs,
        errors,
    }
}

const CONFIGS: &[Config] = &[
    Config {
        inode_size: 128,
        block_size: 4096,
        ea_inode: false,
    },
    Config {
        inode_size: 256,
        block_size: 4096,
        ea_inode: false,
    },
    Config {
        inode_size: 512,
        block_size: 4096,
        ea_inode: false,
    },
    Config {
        inode_size: 1024,
        block_size: 4096,
        ea_inode: false,
    },
    Config {
        inode_size: 256,
        block_size: 1024,
        ea_inode: false,
    },
    Config {
        inode_size: 256,
        block_size: 1024,
        ea_inode: true,
    },
    Config {
        inode_size: 512,
        block_size: 1024,
        ea_inode: true,
    },
    Config {
        inode_size: 1024,
        block_size: 4096,
        ea_inode: true,
    },
];

#[test]
fn kernel_agrees_with_model_on_random_sequences() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIP kernel_agrees_with_model_on_random_sequences: {why}");
        return;
    }
    let mut rng = Rng(0x5eed_f17e_0000_0001);
    let mut total = 0;
    for &c in CONFIGS {
        let mut s = Scratch::new(c);
        let mut cases = Vec::new();
        for f in 0..120 {
            let n = 1 + rng.below(9) as usize;
            let mut attrs: Vec<Attr> = Vec::new();
            while attrs.len() < n {
                let name = random_name(&mut rng);
                if attrs.iter().all(|a| a.name != name) {
                    let size = random_size(&mut rng, c);
                    attrs.push(Attr::new(name, size as u32));
                }
            }
            cases.push(make_case(&s, &format!("f{f}"), attrs, &mut rng));
        }
        s.umount();
        let (n, counts) = check(&s, c, &cases);
        eprintln!(
            "{c:?}: {n} attributes agree (inode {}, block {}, ea_inode {}, none {})",
            counts[0], counts[1], counts[2], counts[3]
        );
        total += n;
    }
    assert!(total > 1000);
}

/// Compare the model with what our parser finds on disk; returns attributes checked and counts
/// per location (inode, block, ea_inode, none).
fn check(s: &Scratch, c: Config, cases: &[Case]) -> (usize, [usize; 4]) {
    let inos: Vec<u64> = cases.iter().map(|k| k.ino).collect();
    let observed = observe(&s.img, c, &inos);
    let mut counts = [0usize; 4];
    let mut attrs_checked = 0;
    for (k, obs) in cases.iter().zip(&observed) {
        let params = FitParams {
            inode_size: c.inode_size,
            extra_isize: obs.extra_isize,
            block_size: c.block_size,
            ea_inode: c.ea_inode,
            inline_data: None,
        };
        let r = fit::place(&params, &k.attrs).unwrap();
        for ((a, p), err) in k.attrs.iter().zip(&r.placements).zip(&k.errors) {
            let actual = obs
                .locations
                .iter()
                .find(|(n, _)| *n == a.name)
                .map_or(Location::None, |(_, l)| *l);
            assert_eq!(
                p.location, actual,
                "{c:?}: {} (value {} bytes) in sequence {:?}: model says {:?}, kernel put it at {:?}",
                a.name, a.value_size, k.attrs, p.location, actual
            );
            if actual == Location::None {
                assert_eq!(*err, Some(libc::ENOSPC), "{c:?} {}: setxattr error", a.name);
            } else {
                assert_eq!(*err, None, "{c:?} {}: setxattr error", a.name);
            }
            counts[match actual {
                Location::Inode => 0,
                Location::Block => 1,
                Location::EaInode => 2,
                Location::None => 3,
            }] += 1;
            attrs_checked += 1;
        }
        assert_eq!(
            r.free_bytes, obs.body_free,
            "{c:?}: body free bytes after {:?}",
            k.attrs
        );
        assert_eq!(
            r.block_used_bytes, obs.block_used,
            "{c:?}: block bytes after {:?}",
            k.attrs
        );
    }
    (attrs_checked, counts)
}

/// The largest value that still fits in-inode, for each inode size and name length, lands
/// in-inode; one byte more spills to the block.
#[test]
fn kernel_agrees_on_inode_boundaries() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIP kernel_agrees_on_inode_boundaries: {why}");
        return;
    }
    let mut rng = Rng(0xb0_0d_a1);
    for inode_size in [128u32, 256, 512, 1024] {
        let c = Config {
            inode_size,
            block_size: 4096,
            ea_inode: false,
        };
        let mut s = Scratch::new(c);
        let params = FitParams::new(inode_size);
        let mut cases = Vec::new();
        let mut expect = Vec::new();
        for (i, name_len) in [1usize, 3, 4, 5, 8, 13, 31, 64, 200]
            .into_iter()
            .enumerate()
        {
            let name = format!("user.{}", "n".repeat(name_len));
            let largest = fit::largest_inode_value(&params, &name);
            // At the boundary, and one byte over it (for 128-byte inodes: an empty value).
            let at = largest.unwrap_or(0);
            let over = largest.map_or(0, |v| v + 1);
            cases.push(make_case(
                &s,
                &format!("at{i}"),
                vec![Attr::new(&name, at)],
                &mut rng,
            ));
            cases.push(make_case(
                &s,
                &format!("over{i}"),
                vec![Attr::new(&name, over)],
                &mut rng,
            ));
            expect.push((name_len, largest, at, over));
        }
        // Two attributes that exactly fill the body, then an empty one that must spill.
        let usable = fit::usable_body(&params) as u32;
        let mut fill = None;
        if usable >= 40 {
            let x = ((usable - 40) / 2) & !3;
            let attrs = vec![
                Attr::new("user.a", x),
                Attr::new("user.b", usable - 40 - x),
                Attr::new("user.c", 0),
            ];
            fill = Some(make_case(&s, "fill", attrs, &mut rng));
        }
        s.umount();
        check(&s, c, &cases);
        if let Some(f) = fill {
            let r = fit::place(&params, &f.attrs).unwrap();
            assert_eq!(r.free_bytes, 0);
            assert_eq!(r.placements[2].location, Location::Block);
            check(&s, c, std::slice::from_ref(&f));
        }
        // The model itself must call these two differently where the body exists.
        for (k, (name_len, largest, at, over)) in cases.chunks(2).zip(&expect) {
            let r_at = fit::place(&params, &k[0].attrs).unwrap();
            let r_over = fit::place(&params, &k[1].attrs).unwrap();
            match largest {
                Some(_) => {
                    assert_eq!(r_at.placements[0].location, Location::Inode);
                    assert_eq!(
                        r_at.free_bytes, 0,
                        "name {name_len}: value {at} leaves no byte"
                    );
                    assert_eq!(
                        r_over.placements[0].location,
                        Location::Block,
                        "value {over}"
                    );
                }
                None => assert_eq!(r_at.placements[0].location, Location::Block),
            }
        }
        eprintln!(
            "inode size {inode_size}: largest in-inode values {:?}",
            expect
                .iter()
                .map(|(n, l, _, _)| (*n, *l))
                .collect::<Vec<_>>()
        );
    }
}

/// With ea_inode, a value may not push the block's lowest value offset below
/// min(block_size / 8, 1024): at the limit it stays in the block, one byte more (one more 4-byte
/// step) goes to an EA inode. Also the EA-inode threshold (block_size - 56) itself.
#[test]
fn kernel_agrees_on_block_reserve_boundaries() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIP kernel_agrees_on_block_reserve_boundaries: {why}");
        return;
    }
    let mut rng = Rng(0xea_1e);
    for block_size in [1024u32, 4096] {
        let c = Config {
            inode_size: 256,
            block_size,
            ea_inode: true,
        };
        let mut s = Scratch::new(c);
        let reserve = fit::block_reserve(block_size) as u32;
        let threshold = fit::ea_inode_threshold(block_size) as u32;
        let sizes = [
            block_size - reserve,
            block_size - reserve + 1,
            threshold,
            threshold + 1,
        ];
        let cases: Vec<Case> = sizes
            .iter()
            .enumerate()
            .map(|(i, &v)| make_case(&s, &format!("r{i}"), vec![Attr::new("user.v", v)], &mut rng))
            .collect();
        s.umount();
        let (_, counts) = check(&s, c, &cases);
        let p = FitParams {
            ea_inode: true,
            block_size,
            ..FitParams::new(256)
        };
        let locs: Vec<Location> = cases
            .iter()
            .map(|k| fit::place(&p, &k.attrs).unwrap().placements[0].location)
            .collect();
        assert_eq!(
            locs,
            vec![
                Location::Block,
                Location::EaInode,
                Location::EaInode,
                Location::EaInode
            ],
            "block size {block_size}: sizes {sizes:?}"
        );
        eprintln!("block size {block_size}: reserve boundary {sizes:?} -> {locs:?} ({counts:?})");
    }
}
