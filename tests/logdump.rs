//! `e4inspect journal` against `debugfs -R "logdump ..."`: journals with committed transactions
//! left by a crash (an image copied while loop-mounted, after writes and `sync`), with revoke
//! records (directories deleted), checksums v3 and 64-bit tags (metadata_csum) or none (ext3),
//! an external journal file, hostile journals (bounded), and the corpus.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const MIB: u64 = 1 << 20;
const FLAGS: [&str; 7] = ["", "-a", "-O", "-S", "-a -c", "-O -n 2", "-a -O"];

/// debugfs' stdout, or `None` when it did not finish in time (it loops forever on some
/// journals) or is not deterministic.
fn debugfs(img: &Path, request: &str) -> Option<Vec<u8>> {
    let once = || {
        let o = run(Command::new("timeout")
            .arg("20")
            .arg(which("debugfs").unwrap())
            .arg("-R")
            .arg(request)
            .arg(img));
        (o.status.code() != Some(124)).then_some(o.stdout)
    };
    let a = once()?;
    (once()? == a).then_some(a)
}

fn ours(img: &Path, flags: &str, extra: &[&str]) -> std::process::Output {
    run(Command::new(bin())
        .arg("journal")
        .args(flags.split_whitespace())
        .args(extra)
        .arg(img))
}

fn compare(img: &Path, flags: &str) -> Result<bool, String> {
    let Some(want) = debugfs(img, &format!("logdump {flags}")) else {
        return Ok(false);
    };
    let got = ours(img, flags, &[]);
    if got.stdout != want {
        let w = String::from_utf8_lossy(&want);
        let g = String::from_utf8_lossy(&got.stdout);
        let first = w
            .lines()
            .zip(g.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| format!("line {}: debugfs {a:?} / e4inspect {b:?}", i + 1))
            .unwrap_or_else(|| format!("lengths {} / {}", w.len(), g.len()));
        return Err(format!("{} logdump {flags}: {first}", img.display()));
    }
    Ok(true)
}

/// Mount `img`, run `work` on the mount point, `sync`, copy the image while still mounted,
/// unmount. Returns the copy (needs_recovery, live log), or `None` when mounting is not possible.
fn crash_copy(img: &Path, work: &dyn Fn(&Path)) -> Option<PathBuf> {
    let mnt = img.with_extension("mnt");
    std::fs::create_dir_all(&mnt).ok()?;
    let m = run(Command::new("mount")
        .arg("-o")
        .arg("loop")
        .arg(img)
        .arg(&mnt));
    if !m.status.success() {
        eprintln!(
            "SKIP crash image: mount failed: {}",
            String::from_utf8_lossy(&m.stderr)
        );
        return None;
    }
    work(&mnt);
    run(&mut Command::new("sync"));
    let copy = img.with_extension("crash.img");
    let ok = std::fs::copy(img, &copy).is_ok();
    let u = run(Command::new("umount").arg(&mnt));
    assert!(u.status.success(), "umount {}", mnt.display());
    ok.then_some(copy)
}

fn write_files(mnt: &Path) {
    for d in 0..3 {
        let dir = mnt.join(format!("d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..150 {
            std::fs::write(
                dir.join(format!("a_rather_long_file_name_{i}")),
                [b'x'; 100],
            )
            .unwrap();
        }
    }
    run(&mut Command::new("sync"));
    // Freed directory blocks are revoked in the next transaction.
    std::fs::remove_dir_all(mnt.join("d0")).unwrap();
    std::fs::remove_dir_all(mnt.join("d1")).unwrap();
    std::fs::write(mnt.join("after"), b"more").unwrap();
}

/// Small files each fsync'ed: with fast_commit they land in the fast-commit area.
fn fsync_files(mnt: &Path) {
    use std::io::Write;
    for i in 0..20 {
        let mut f = std::fs::File::create(mnt.join(format!("fc{i}"))).unwrap();
        f.write_all(&[b'y'; 5000]).unwrap();
        f.sync_all().unwrap();
    }
}

/// `-b`, `-i` and `-s` requests drawn from a `logdump -a` listing: the first and a later logged
/// block (bitmap blocks among them), a revoked block, inodes by number and by path (debugfs'
/// 128-byte-inode arithmetic lands on logged inode-table blocks for small numbers), the backup
/// block map. Only blocks inside the filesystem: debugfs crashes on others (it reads past its
/// group descriptors).
fn trace_flags(listing: &str) -> Vec<String> {
    let logged: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.strip_prefix("  FS block "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    let mut v = vec![
        "-i <2>".to_string(),
        "-i <1> -c".into(),
        "-i <12>".into(),
        "-i <13> -a".into(),
        "-i /after".into(),
        "-i /d2".into(),
        "-s".into(),
        "-s -a".into(),
    ];
    for b in [logged.first(), logged.get(1), logged.get(logged.len() / 2)]
        .into_iter()
        .flatten()
    {
        v.push(format!("-b {b}"));
        v.push(format!("-b {b} -c"));
    }
    if let Some(r) = listing
        .lines()
        .find_map(|l| l.strip_prefix("  Revoke FS block "))
    {
        v.push(format!("-b {r}"));
        v.push(format!("-b {r} -a -O"));
    }
    v
}

#[test]
fn crashed_journals_match_debugfs() {
    if !have("mke2fs") || !have("debugfs") || !have("timeout") {
        eprintln!("SKIP: mke2fs/debugfs/timeout not installed");
        return;
    }
    if !is_root() {
        eprintln!("SKIP: loop mounts need root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    type Work = fn(&Path);
    let layouts: Vec<(&str, u64, Vec<&str>, Work)> = vec![
        // metadata_csum + 64bit: checksum v3 tags, 64-bit revoke records.
        (
            "ext4-1k",
            32 * MIB,
            vec!["-t", "ext4", "-b", "1024"],
            write_files,
        ),
        ("ext4-4k", 64 * MIB, vec!["-t", "ext4"], write_files),
        // No journal checksums, 32-bit tags.
        ("ext3", 32 * MIB, vec!["-t", "ext3"], write_files),
        (
            "ext4-nocsum",
            32 * MIB,
            vec!["-t", "ext4", "-O", "^metadata_csum,^64bit"],
            write_files,
        ),
        // Fast commits after fsync.
        (
            "ext4-fc",
            64 * MIB,
            vec!["-t", "ext4", "-O", "fast_commit"],
            fsync_files,
        ),
    ];
    let mut compared = 0;
    let mut failures = Vec::new();
    let mut revokes = 0;
    let mut fast_commits = 0;
    let mut traced = 0;
    for (name, size, args, work) in &layouts {
        let img = mkfs(dir.path(), &format!("{name}.img"), *size, args);
        let Some(crash) = crash_copy(&img, work) else {
            return;
        };
        if String::from_utf8_lossy(&ours(&crash, "", &[]).stdout)
            .contains("*** Fast Commit Area ***")
        {
            fast_commits += 1;
        }
        let a = ours(&crash, "-a", &[]);
        let text = String::from_utf8_lossy(&a.stdout);
        assert!(
            text.contains("(commit block)") || text.contains("*** Fast Commit Area ***"),
            "{name}: no committed transaction in the crash copy:\n{text}"
        );
        if text.contains("Revoke FS block") {
            revokes += 1;
        }
        let traces = trace_flags(&text);
        traced += traces.len();
        for f in FLAGS.iter().map(|f| f.to_string()).chain(traces) {
            match compare(&crash, &f) {
                Ok(true) => compared += 1,
                Ok(false) => {}
                Err(e) => failures.push(e),
            }
        }
        // The cleanly unmounted image: an empty log, old transactions behind it.
        for f in ["", "-O", "-O -n 1", "-a -O"] {
            match compare(&img, f) {
                Ok(true) => compared += 1,
                Ok(false) => {}
                Err(e) => failures.push(e),
            }
        }
    }
    eprintln!(
        "crash images: {compared} comparisons, {revokes} with revoke records, {fast_commits} \
         with fast commits"
    );
    assert!(traced > 20, "too few -b/-i/-s comparisons ({traced})");
    assert!(fast_commits > 0, "no journal with fast commits was made");
    assert!(revokes > 0, "no journal with revoke records was made");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn external_journal_file_matches_debugfs() {
    if !have("mke2fs") || !have("debugfs") {
        eprintln!("SKIP: mke2fs/debugfs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let jdev = mkfs(
        dir.path(),
        "jdev.img",
        8 * MIB,
        &["-O", "journal_dev", "-b", "4096"],
    );
    let fs = mkfs(
        dir.path(),
        "fs.img",
        32 * MIB,
        &["-t", "ext4", "-b", "4096"],
    );
    // The journal of another filesystem, read as a file, and an external journal device.
    let internal_copy = dir.path().join("copy.img");
    std::fs::copy(&fs, &internal_copy).unwrap();
    for j in [&jdev, &fs] {
        for f in ["", "-a", "-S", "-a -S", "-O"] {
            let req = format!("logdump {f} -f {}", j.display());
            let Some(want) = debugfs(&fs, &req) else {
                continue;
            };
            let got = ours(&fs, f, &["--journal-device", j.to_str().unwrap()]);
            assert_eq!(
                String::from_utf8_lossy(&got.stdout),
                String::from_utf8_lossy(&want),
                "{req}"
            );
        }
    }
}

fn put32(img: &mut [u8], off: usize, v: u32) {
    img[off..off + 4].copy_from_slice(&v.to_be_bytes());
}

/// Journal block `n` of an image's journal inode (contiguous in a fresh mke2fs image).
fn journal_start(img: &Path) -> u64 {
    let o = run(Command::new(which("debugfs").unwrap())
        .args(["-R", "bmap <8> 0"])
        .arg(img));
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
}

#[test]
fn hostile_journals_are_bounded() {
    if !have("mke2fs") || !have("debugfs") {
        eprintln!("SKIP: mke2fs/debugfs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = mkfs(
        dir.path(),
        "h.img",
        16 * MIB,
        &["-t", "ext4", "-b", "1024", "-O", "^metadata_csum"],
    );
    let j0 = journal_start(&img) as usize * 1024;
    let base = std::fs::read(&img).unwrap();
    let magic = 0xC03B_3998u32;
    // 1. Every block a descriptor of the same sequence with one LAST_TAG: a log without end.
    let mut a = base.clone();
    put32(&mut a, j0 + 24, 7); // s_sequence
    put32(&mut a, j0 + 28, 1); // s_start
    for b in 1..1024 {
        let o = j0 + b * 1024;
        put32(&mut a, o, magic);
        put32(&mut a, o + 4, 1);
        put32(&mut a, o + 8, 7);
        put32(&mut a, o + 12 + 4, 0x0A);
    }
    // 2. An unknown block type: debugfs repeats two lines forever.
    let mut b = base.clone();
    put32(&mut b, j0 + 24, 7);
    put32(&mut b, j0 + 28, 1);
    put32(&mut b, j0 + 1024, magic);
    put32(&mut b, j0 + 1024 + 4, 9);
    put32(&mut b, j0 + 1024 + 8, 7);
    // 3. r_count past the block, s_first past s_maxlen, a huge fast-commit count.
    let mut c = base.clone();
    put32(&mut c, j0 + 20, 5000); // s_first
    put32(&mut c, j0 + 24, 7);
    put32(&mut c, j0 + 28, 1023);
    put32(&mut c, j0 + 0x54, 0x7FFF_FFFF);
    put32(&mut c, j0 + 1023 * 1024, magic);
    put32(&mut c, j0 + 1023 * 1024 + 4, 5);
    put32(&mut c, j0 + 1023 * 1024 + 8, 7);
    put32(&mut c, j0 + 1023 * 1024 + 12, 0xFFFF_FFFF);
    for (name, bytes) in [("endless", a), ("unknown", b), ("counts", c)] {
        let p = dir.path().join(format!("{name}.img"));
        std::fs::write(&p, bytes).unwrap();
        for f in ["", "-a", "-O", "-O -n 5", "-a -O -n 3"] {
            let start = std::time::Instant::now();
            let o = ours(&p, f, &[]);
            let code = o.status.code();
            assert!(
                matches!(code, Some(0) | Some(4)),
                "{name} {f}: exit {code:?}"
            );
            assert!(
                o.stdout.len() < 4 << 20,
                "{name} {f}: {} bytes",
                o.stdout.len()
            );
            eprintln!(
                "{name} {f}: {} bytes in {:?}",
                o.stdout.len(),
                start.elapsed()
            );
            let json = ours(&p, f, &["--json"]);
            serde_json::from_slice::<serde_json::Value>(&json.stdout)
                .unwrap_or_else(|e| panic!("{name} {f} --json: {e}"));
        }
    }
    // The unknown type: the two lines debugfs repeats appear once, then the walk says why.
    let o = ours(&dir.path().join("unknown.img"), "", &[]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        t.matches("Unexpected block type 9 at block 1.").count(),
        1,
        "{t}"
    );
    assert_eq!(o.status.code(), Some(4));
}

#[test]
fn json_lists_the_same_blocks() {
    if !have("mke2fs") || !is_root() {
        eprintln!("SKIP: needs mke2fs and root for a loop mount");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = mkfs(dir.path(), "j.img", 32 * MIB, &["-t", "ext4", "-b", "1024"]);
    let Some(crash) = crash_copy(&img, &write_files) else {
        return;
    };
    let text = ours(&crash, "-a", &[]);
    let json = ours(&crash, "-a", &["--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let events = v["events"].as_array().unwrap();
    let count = |kind: &str| events.iter().filter(|e| e["event"] == kind).count();
    let t = String::from_utf8_lossy(&text.stdout);
    assert_eq!(count("block"), t.matches("Found expected sequence").count());
    assert_eq!(count("tag"), t.matches("  FS block ").count());
    assert_eq!(count("revoke"), t.matches("  Revoke FS block ").count());
    assert!(count("tag") > 0);
    // Checksums v3 are verified in JSON: a crash copy's committed blocks all check out.
    for e in events {
        if let Some(c) = e.get("checksum") {
            assert_eq!(c["ok"], true, "{e}");
        }
    }
    assert!(events.iter().any(|e| e.get("checksum").is_some()));
}

#[test]
fn corpus_matches_debugfs() {
    let Some(c) = corpus() else {
        eprintln!("SKIP: corpus not available");
        return;
    };
    if !have("debugfs") || !have("timeout") {
        eprintln!("SKIP: debugfs/timeout not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&c)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("image.gz").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut compared = 0;
    let mut failures = Vec::new();
    for n in names {
        let out = run(Command::new("gunzip")
            .arg("-c")
            .arg(c.join(&n).join("image.gz")));
        let img = dir.path().join(format!("{n}.img"));
        std::fs::write(&img, out.stdout).unwrap();
        // An external journal is looked up on this machine's devices: not reproducible.
        let sb = std::fs::read(&img).unwrap_or_default();
        let inum = sb
            .get(1024 + 0xE0..1024 + 0xE4)
            .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]));
        if inum == Some(0) {
            std::fs::remove_file(&img).ok();
            continue;
        }
        for f in ["", "-a", "-O", "-S", "-a -O"] {
            match compare(&img, f) {
                Ok(true) => compared += 1,
                Ok(false) => {}
                Err(e) => failures.push(e),
            }
        }
        std::fs::remove_file(&img).ok();
    }
    eprintln!("corpus: {compared} comparisons");
    assert!(compared > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A filesystem with an external journal device (a loop device), written and copied while
/// mounted; the journal copy is read with `logdump -f`.
#[test]
fn crashed_external_journal_matches_debugfs() {
    if !have("mke2fs") || !have("debugfs") || !have("losetup") || !is_root() {
        eprintln!("SKIP: needs mke2fs, debugfs, losetup and root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let jdev = mkfs(
        dir.path(),
        "ext-j.img",
        8 * MIB,
        &["-O", "journal_dev", "-b", "4096"],
    );
    let l = run(Command::new("losetup").args(["-f", "--show"]).arg(&jdev));
    if !l.status.success() {
        eprintln!(
            "SKIP: losetup failed: {}",
            String::from_utf8_lossy(&l.stderr)
        );
        return;
    }
    let loopdev = String::from_utf8_lossy(&l.stdout).trim().to_string();
    let jarg = format!("device={loopdev}");
    let fs_img = dir.path().join("ext-fs.img");
    std::fs::File::create(&fs_img)
        .unwrap()
        .set_len(64 * MIB)
        .unwrap();
    let m = run(Command::new(which("mke2fs").unwrap())
        .args(["-q", "-F", "-t", "ext4", "-b", "4096", "-J", &jarg])
        .arg(&fs_img));
    let jcopy = dir.path().join("ext-j.crash.img");
    let mut crash = None;
    if m.status.success() {
        let jc = jcopy.clone();
        let jd = jdev.clone();
        crash = crash_copy(&fs_img, &move |mnt: &Path| {
            for i in 0..40 {
                std::fs::write(mnt.join(format!("g{i}")), b"z").unwrap();
            }
            run(&mut Command::new("sync"));
            std::fs::copy(&jd, &jc).unwrap();
        });
    }
    run(Command::new("losetup").arg("-d").arg(&loopdev));
    let Some(fs_crash) = crash else {
        eprintln!("SKIP: mke2fs -J device= or the mount failed");
        return;
    };
    let mut compared = 0;
    for f in ["", "-a", "-O", "-S", "-a -O", "-a -c"] {
        let req = format!("logdump {f} -f {}", jcopy.display());
        let Some(want) = debugfs(&fs_crash, &req) else {
            continue;
        };
        let got = ours(&fs_crash, f, &["--journal-device", jcopy.to_str().unwrap()]);
        assert_eq!(
            String::from_utf8_lossy(&got.stdout),
            String::from_utf8_lossy(&want),
            "{req}"
        );
        compared += 1;
    }
    let t = ours(&fs_crash, "", &["-f", jcopy.to_str().unwrap()]);
    let t = String::from_utf8_lossy(&t.stdout);
    assert!(t.contains("(commit block)"), "{t}");
    assert!(compared > 0);
}

/// A superblock checksum that does not match: debugfs says it retries, then dumps the journal.
#[test]
fn superblock_checksum_retry_matches_debugfs() {
    if !have("mke2fs") || !have("debugfs") {
        eprintln!("SKIP: mke2fs/debugfs not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = mkfs(dir.path(), "sbcsum.img", 16 * MIB, &["-t", "ext4"]);
    let mut b = std::fs::read(&img).unwrap();
    b[1024 + 0x3FC] ^= 0xFF;
    std::fs::write(&img, b).unwrap();
    let mut compared = 0;
    for f in ["", "-S", "-a -O"] {
        match compare(&img, f) {
            Ok(c) => compared += usize::from(c),
            Err(e) => panic!("{e}"),
        }
    }
    assert!(compared > 0);
    let t = ours(&img, "", &[]);
    assert!(String::from_utf8_lossy(&t.stdout).starts_with("Checksum errors in superblock!"));
}
