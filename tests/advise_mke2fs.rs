//! `e4inspect advise` against the real mke2fs 1.47.0: for a matrix of workloads, run the
//! recommended command on a sparse file of that size and assert that every predicted layout figure
//! equals what mke2fs produced, read back with our own superblock parser (and the journal size
//! also with `dumpe2fs -h`). Beyond 16 TiB (the largest sparse file the host ext4 allows) the
//! figures `mke2fs -n -v` prints are compared instead.

use std::path::Path;
use std::process::Command;

use e4inspect::superblock::Superblock;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_e4inspect");

fn have_mke2fs() -> bool {
    Command::new("mke2fs").arg("-V").output().is_ok()
}

fn advise_json(args: &[&str]) -> Value {
    let out = Command::new(BIN)
        .arg("advise")
        .args(args)
        .arg("--json")
        .output()
        .expect("run e4inspect");
    assert!(
        out.status.success(),
        "advise {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("advise --json output")
}

fn mkfs_args(v: &Value) -> Vec<String> {
    let mut args: Vec<String> = v["args"]
        .as_array()
        .expect("args array")
        .iter()
        .map(|a| a.as_str().expect("string arg").to_string())
        .collect();
    // Lazy init keeps the run quick; merge into an existing -E (mke2fs keeps only the last -E).
    let lazy = "lazy_itable_init=1,lazy_journal_init=1";
    if let Some(i) = args.iter().position(|a| a == "-E") {
        let v = format!("{},{lazy}", args[i + 1]);
        args[i + 1] = v;
    } else {
        args.push("-E".into());
        args.push(lazy.into());
    }
    args
}

fn mke2fs(extra: &[String], target: &Path, size_arg: Option<&str>) -> std::process::Output {
    let mut c = Command::new("mke2fs");
    c.env("E2FSPROGS_FAKE_TIME", "1700000000")
        .args([
            "-t",
            "ext4",
            "-F",
            "-q",
            "-U",
            "6b33f586-a183-4383-8d8a-7a2b4c0ae1e1",
        ])
        .args(extra)
        .arg(target);
    if let Some(s) = size_arg {
        c.arg(s);
    }
    c.output().expect("run mke2fs")
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("layout.{k} missing in {v}"))
}

fn dumpe2fs_journal_blocks(img: &Path) -> u64 {
    let out = Command::new("dumpe2fs")
        .arg("-h")
        .arg(img)
        .output()
        .expect("dumpe2fs");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("Total journal blocks:"))
        .map(|s| s.trim().parse().expect("journal blocks number"))
        .unwrap_or(0)
}

/// Run the advice for `size` on a sparse file and compare every figure.
fn check(dir: &Path, size: &str, extra: &[&str]) -> Value {
    let mut a = vec!["--size", size];
    a.extend_from_slice(extra);
    let v = advise_json(&a);
    let l = &v["layout"];
    let img = dir.join("fs.img");
    let bytes = e4inspect::advise::parse_size(size).unwrap();
    let f = std::fs::File::create(&img).unwrap();
    f.set_len(bytes).unwrap();
    drop(f);
    let args = mkfs_args(&v);
    let out = mke2fs(&args, &img, None);
    assert!(
        out.status.success(),
        "mke2fs {args:?} on {size}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut raw = vec![0u8; 1024];
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(&img).unwrap();
        f.seek(SeekFrom::Start(1024)).unwrap();
        f.read_exact(&mut raw).unwrap();
    }
    let sb = Superblock::parse(&raw).expect("our superblock parser");
    let bs = 1024u64 << sb.log_block_size;
    let groups = (sb.blocks_count() - u64::from(sb.first_data_block))
        .div_ceil(u64::from(sb.blocks_per_group));
    let isz = u64::from(sb.inode_size);
    let ibpg = (u64::from(sb.inodes_per_group) * isz).div_ceil(bs);
    let journal = if sb.jnl_backup_type == 1 {
        ((u64::from(sb.jnl_blocks[15]) << 32) | u64::from(sb.jnl_blocks[16])) / bs
    } else {
        0
    };
    let ctx = format!("{size} {extra:?} -> {args:?}");
    assert_eq!(u(l, "block_size"), bs, "block_size {ctx}");
    assert_eq!(
        u(l, "blocks_count"),
        sb.blocks_count(),
        "blocks_count {ctx}"
    );
    assert_eq!(u(l, "groups"), groups, "groups {ctx}");
    assert_eq!(u(l, "inode_size"), isz, "inode_size {ctx}");
    assert_eq!(
        u(l, "inodes_count"),
        u64::from(sb.inodes_count),
        "inodes_count {ctx}"
    );
    assert_eq!(
        u(l, "inodes_per_group"),
        u64::from(sb.inodes_per_group),
        "inodes_per_group {ctx}"
    );
    assert_eq!(
        u(l, "inode_blocks_per_group"),
        ibpg,
        "inode_blocks_per_group {ctx}"
    );
    assert_eq!(u(l, "journal_blocks"), journal, "journal_blocks {ctx}");
    assert_eq!(
        journal,
        dumpe2fs_journal_blocks(&img),
        "our journal read-back vs dumpe2fs {ctx}"
    );
    assert_eq!(
        u(l, "reserved_blocks"),
        sb.r_blocks_count(),
        "reserved_blocks {ctx}"
    );
    // Beyond the contract: the other predicted figures too.
    assert_eq!(
        u(l, "blocks_per_group"),
        u64::from(sb.blocks_per_group),
        "bpg {ctx}"
    );
    assert_eq!(
        u(l, "reserved_gdt_blocks"),
        u64::from(sb.reserved_gdt_blocks),
        "reserved gdt {ctx}"
    );
    assert_eq!(
        u(l, "overhead_blocks"),
        u64::from(sb.overhead_clusters),
        "overhead {ctx}"
    );
    let flex = l["flex_bg_size"].as_u64().map(|g| g.trailing_zeros() as u8);
    assert_eq!(flex.unwrap_or(0), sb.log_groups_per_flex, "flex_bg {ctx}");
    if let Some(s) = l["stride"].as_u64() {
        assert_eq!(s, u64::from(sb.raid_stride), "stride {ctx}");
        assert_eq!(
            u(l, "stripe_width"),
            u64::from(sb.raid_stripe_width),
            "stripe width {ctx}"
        );
    }
    std::fs::remove_file(&img).unwrap();
    v
}

/// The chosen inode size is the smallest meeting the share: one step smaller does not.
fn assert_smallest_fit(v: &Value) {
    let f = &v["fit"];
    let chosen = u(f, "inode_size");
    let rows = f["sizes"].as_array().unwrap();
    let row = |s: u64| rows.iter().find(|r| u(r, "inode_size") == s).unwrap();
    assert!(row(chosen)["meets_share"].as_bool().unwrap());
    assert_eq!(u(&v["layout"], "inode_size"), chosen);
    if chosen > 256 {
        assert!(
            !row(chosen / 2)["meets_share"].as_bool().unwrap(),
            "{} would also fit",
            chosen / 2
        );
    }
}

/// `--files N` far below the default: `-N` = 2N + 1024 in the command, fewer inodes than plain
/// mkfs.ext4, at least the safe count, and the returned bytes are the inode-table difference.
fn assert_lowered(v: &Value, files: &str) {
    let args: Vec<&str> = v["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let i = args
        .iter()
        .position(|a| *a == "-N")
        .unwrap_or_else(|| panic!("--files {files}: no -N in {args:?}"));
    let n: u64 = args[i + 1].parse().unwrap();
    let files: u64 = match files.strip_suffix('M') {
        Some(m) => m.parse::<u64>().unwrap() * 1_000_000,
        None => files.parse().unwrap(),
    };
    assert_eq!(n, 2 * files + 1024, "--files {files}");
    let l = &v["layout"];
    let d = &v["default_layout"];
    assert!(u(l, "inodes_count") >= n);
    assert!(u(l, "inodes_count") < u(d, "inodes_count"));
    assert_eq!(
        u(v, "inode_table_bytes_returned"),
        u(d, "inode_table_bytes") - u(l, "inode_table_bytes")
    );
}

#[test]
fn few_files_lower_the_inode_count_as_mke2fs_does() {
    if !have_mke2fs() {
        println!("SKIP: mke2fs not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // The examples: 10 files on 100 GiB keep 6.5 M inodes by default; 30 M files on
    // 8 TiB keep 268 M. Sparse files of that size, formatted with the advised command.
    for (size, files) in [("100G", "10"), ("8T", "30M"), ("1G", "100")] {
        let v = check(tmp.path(), size, &["--files", files]);
        assert_lowered(&v, files);
    }
}

fn set_xattr(path: &Path, name: &str, len: usize) -> bool {
    let v = vec![b'x'; len];
    xattr_set(path, name, &v)
}

fn xattr_set(path: &Path, name: &str, value: &[u8]) -> bool {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let p = CString::new(path.as_os_str().as_bytes()).unwrap();
    let n = CString::new(name).unwrap();
    // SAFETY: valid NUL-terminated strings and a buffer of `value.len()` bytes.
    unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        ) == 0
    }
}

#[test]
fn one_outlier_of_207_does_not_force_4k_inodes() {
    if !have_mke2fs() {
        println!("SKIP: mke2fs not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    for i in 0..206 {
        let f = root.join(format!("f{i}"));
        std::fs::File::create(&f).unwrap().set_len(1 << 20).unwrap();
        if !set_xattr(&f, "user.DOSATTRIB", 20) {
            println!("SKIP: user xattrs not supported on {}", root.display());
            return;
        }
    }
    let big = root.join("big");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    if !set_xattr(&big, "user.big", 3500) {
        println!(
            "SKIP: a 3500-byte xattr is not supported on {}",
            root.display()
        );
        return;
    }
    let dir = root.to_str().unwrap();
    let img_dir = tmp.path().join("img");
    std::fs::create_dir(&img_dir).unwrap();
    let v = check(&img_dir, "100G", &["--from-dir", dir]);
    assert_smallest_fit(&v);
    assert_eq!(u(&v["layout"], "inode_size"), 256);
    let f = &v["fit"];
    assert_eq!(u(f, "outlier_inodes"), 1);
    let o = &f["outliers"][0];
    assert_eq!(o["path"].as_str(), big.to_str());
    assert_eq!(u(o, "inode_size_needed"), 4096);
    // The cost of covering it is the predicted inode tables at 4096 minus the advised ones;
    // format that variant too and compare with mke2fs.
    let cost = u(o, "extra_inode_table_bytes");
    let covered = check(&img_dir, "100G", &["--from-dir", dir, "--fit-share", "100"]);
    assert_eq!(u(&covered["layout"], "inode_size"), 4096);
    assert_eq!(
        cost,
        u(&covered["layout"], "inode_table_bytes") - u(&v["layout"], "inode_table_bytes")
    );
    // The warning leads, on stderr, and names the cost.
    let out = Command::new(BIN)
        .args(["advise", "--size", "100G", "--from-dir", dir])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("e4inspect advise: warning: 1 of 207"),
        "{err}"
    );
    assert!(err.contains("-I 4096"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("warning"));
    // --files scales the sample: the shares stay, the outlier count scales, the count is lowered.
    let scaled = advise_json(&["--size", "100G", "--from-dir", dir, "--files", "2080"]);
    assert_eq!(u(&scaled["fit"], "outlier_inodes_expected"), 10);
    assert_lowered(&scaled, "2080");
    check(&img_dir, "100G", &["--from-dir", dir, "--files", "2080"]);
}

#[test]
fn recommended_commands_produce_the_predicted_layout() {
    if !have_mke2fs() {
        println!("SKIP: mke2fs not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let cases: &[(&str, &[&str])] = &[
        ("64M", &[]),
        ("64M", &["--files", "100000"]),
        ("200M", &["--profile", "selinux,posix-acl"]),
        (
            "1000M",
            &["--large-dirs", "--kernel", "5.15", "--files", "300000"],
        ),
        ("1G", &["--avg-file-size", "4K", "--block-size", "1024"]),
        (
            "3000M",
            &[
                "--raid-chunk",
                "64K",
                "--raid-data-disks",
                "4",
                "--rotational",
            ],
        ),
        ("10G", &["--profile", "samba,selinux", "--files", "1000000"]),
        ("10G", &["--profile", "lustre-mdt", "--metadata-heavy"]),
        ("20G", &["--kernel", "3.10", "--avg-file-size", "256K"]),
        ("50G", &["--profile", "overlayfs", "--project-quota"]),
        (
            "100G",
            &[
                "--raid-level",
                "6",
                "--raid-disks",
                "10",
                "--avg-file-size",
                "1G",
            ],
        ),
        ("2T", &["--files", "1000000000"]),
        (
            "4T",
            &[
                "--profile",
                "selinux,capabilities",
                "--fit-share",
                "100",
                "--metadata-heavy",
            ],
        ),
        (
            "15T",
            &[
                "--avg-file-size",
                "64M",
                "--raid-level",
                "6",
                "--raid-disks",
                "12",
            ],
        ),
    ];
    for (size, extra) in cases {
        let v = check(d, size, extra);
        if !v["fit"].is_null() {
            assert_smallest_fit(&v);
        }
    }
}

#[test]
fn beyond_16_tib_matches_mke2fs_dry_run() {
    if !have_mke2fs() {
        println!("SKIP: mke2fs not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("small.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let cases: &[(&str, &str, &[&str])] = &[
        ("20T", "21474836480", &[]),
        ("100T", "107374182400", &["--avg-file-size", "32K"]),
        (
            "300T",
            "322122547200",
            &[
                "--profile",
                "lustre-ost",
                "--raid-level",
                "6",
                "--raid-disks",
                "10",
            ],
        ),
        ("1P", "1099511627776", &["--files", "4000000000"]),
        // Few files far beyond 16 TiB: -N lowers the count (2x + headroom) and mke2fs agrees.
        ("20T", "21474836480", &["--files", "1000"]),
        ("100T", "107374182400", &["--files", "30M"]),
    ];
    for (size, kib, extra) in cases {
        let mut a = vec!["--size", *size];
        a.extend_from_slice(extra);
        let v = advise_json(&a);
        let l = &v["layout"];
        if extra.first() == Some(&"--files") && *size != "1P" {
            assert_lowered(&v, extra[1]);
        }
        let mut args = mkfs_args(&v);
        args.insert(0, "-n".into());
        args.insert(0, "-v".into());
        // The size argument is in KiB (units of 1 KiB without -b), so no page rounding applies;
        // these sizes are whole pages anyway.
        let out = mke2fs(&args, &img, Some(&format!("{kib}k")));
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "mke2fs -n {args:?} {size}: {text}");
        let num_before = |suffix: &str| -> u64 {
            text.lines()
                .find_map(|line| {
                    let (n, rest) = line.trim().split_once(' ')?;
                    rest.starts_with(suffix)
                        .then(|| n.trim_end_matches(',').parse().ok())?
                })
                .unwrap_or_else(|| panic!("no '{suffix}' line in {text}"))
        };
        let ctx = format!("{size} {extra:?}");
        let first = text
            .lines()
            .find(|l| l.ends_with(" blocks") && l.contains(" inodes, "))
            .unwrap_or_else(|| panic!("no count line in {text}"));
        let (inodes, blocks) = first.split_once(" inodes, ").unwrap();
        assert_eq!(
            u(l, "inodes_count"),
            inodes.trim().parse::<u64>().unwrap(),
            "inodes {ctx}"
        );
        assert_eq!(
            u(l, "blocks_count"),
            blocks.trim_end_matches(" blocks").parse::<u64>().unwrap(),
            "blocks {ctx}"
        );
        assert_eq!(
            u(l, "reserved_blocks"),
            num_before("blocks ("),
            "reserved {ctx}"
        );
        assert_eq!(u(l, "groups"), num_before("block groups"), "groups {ctx}");
        assert_eq!(
            u(l, "inodes_per_group"),
            num_before("inodes per group"),
            "ipg {ctx}"
        );
        let bs = text
            .lines()
            .find_map(|l| l.strip_prefix("Block size="))
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse::<u64>().ok())
            .expect("block size line");
        assert_eq!(u(l, "block_size"), bs, "block size {ctx}");
    }
}

#[test]
fn impossible_requests_are_refused() {
    let refuse = |args: &[&str], needle: &str| {
        let out = Command::new(BIN)
            .arg("advise")
            .args(args)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(16), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    };
    refuse(&["--size", "1P", "--files", "5000000000"], "2^32-1");
    refuse(
        &["--size", "1G", "--files", "10000000"],
        "inode tables would fill",
    );
    refuse(&["--size", "64M", "--block-size", "3000"], "power of two");
    refuse(&["--size", "1M"], "too small");
    refuse(&["--size", "1G", "--xattr", "user.big=8000"], "do not fit");
    refuse(
        &[
            "--size",
            "1G",
            "--block-size",
            "1024",
            "--inode-size",
            "2048",
        ],
        "above the block size",
    );
    refuse(&["--size", "1G", "--inode-size", "384"], "power of two");
    refuse(
        &["--size", "1G", "--journal-size", "600M"],
        "Total journal size too big",
    );
    refuse(&["--size", "100G", "--journal-size", "50000M"], "10240000");
    refuse(
        &["--size", "1G", "--project-quota", "--kernel", "4.4"],
        "4.5",
    );
}
