//! The input layer on real media (issue: trustworthy on failing disks, huge arrays, odd files):
//! no signal death when the input shrinks or returns I/O errors, nothing blocks on a FIFO,
//! inputs far beyond what can be mapped open and dump like dumpe2fs, label bytes pass through
//! unchanged, and a closed stdout pipe is a quiet exit 0.

mod common;

use common::{bin, have, is_root, mkfs, run, which};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("e4i-io-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A small populated ext4 image: 300 files, some with xattrs-free content.
fn populated(dir: &Path, size: u64) -> PathBuf {
    let tree = dir.join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    for i in 0..300 {
        std::fs::write(
            tree.join(format!("f{i}")),
            format!("{i}\n").repeat(i % 50 + 1),
        )
        .unwrap();
    }
    let t = tree.display().to_string();
    mkfs(
        dir,
        "pop.img",
        size,
        &["-t", "ext4", "-b", "1024", "-d", &t],
    )
}

/// Every image-reading command line, with `IMG` standing for the input.
const COMMANDS: &[&[&str]] = &[
    &["dump", "IMG"],
    &["dump", "--json", "IMG"],
    &["check", "IMG"],
    &["inode", "IMG", "2"],
    &["xattrs", "IMG"],
    &["fit", "--from-image", "IMG"],
    &["advise", "--from-image", "IMG", "--size", "1G"],
    &["advise", "--device", "IMG"],
];

fn args_for<'a>(cmd: &'a [&'a str], img: &'a str) -> Vec<&'a str> {
    cmd.iter()
        .map(|a| if *a == "IMG" { img } else { a })
        .collect()
}

#[test]
fn fifo_is_refused_at_once() {
    let dir = tmpdir("fifo");
    let fifo = dir.join("f");
    if !run(Command::new("mkfifo").arg(&fifo)).status.success() {
        eprintln!("SKIP: mkfifo failed here");
        return;
    }
    let f = fifo.display().to_string();
    for cmd in COMMANDS {
        let start = Instant::now();
        let mut child = Command::new(bin())
            .args(args_for(cmd, &f))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > Duration::from_secs(1) {
                let _ = child.kill();
                panic!("{cmd:?} on a FIFO still running after 1 s");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let err = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
        assert_eq!(status.code(), Some(8), "{cmd:?}: {err}");
        assert!(err.contains("FIFO"), "{cmd:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{cmd:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// In process: open, then shrink the file under the opened filesystem, then run every reader.
/// With a mapping this died of SIGBUS; now each read is an error naming what it read.
#[test]
fn input_shrinking_after_open_is_an_error_not_a_signal() {
    if !have("mke2fs") {
        eprintln!("SKIP: mke2fs not installed");
        return;
    }
    let dir = tmpdir("shrink");
    let img = populated(&dir, 8 << 20);
    let fs = e4inspect::fs::Filesystem::open(&img, &Default::default()).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&img)
        .unwrap()
        .set_len(3072)
        .unwrap();
    let mut out = Vec::new();
    let opts = e4inspect::format::dumpe2fs::DumpOptions {
        device_name: img.display().to_string(),
        ..Default::default()
    };
    let rep = e4inspect::format::dumpe2fs::dump(&fs, &opts, &mut out).unwrap();
    let said = rep.stderr.join("\n");
    assert!(
        rep.aborted || rep.trouble || !said.is_empty(),
        "dump of a shrunk image reported nothing"
    );
    let (_, counts) = e4inspect::scan::xattr_stats(&fs, &|_| {});
    assert!(
        counts.problems.iter().any(|p| p.message.contains("shrank")),
        "{:?}",
        counts.problems
    );
    let e = fs.inode_raw(12).unwrap_err().to_string();
    assert!(e.contains("shrank") && e.contains("inode"), "{e}");
    // The source remembers the first failed read, which is what makes the commands exit 8.
    let failure = fs.source.read_failure().unwrap_or_default();
    assert!(failure.contains("shrank"), "{failure:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// In process: `check` of an input that shrinks after it was opened gives a report (what the
/// passes could judge) that names the failed read, so that the command can fail with it.
#[test]
fn check_of_a_shrunk_input_reports_the_failed_read() {
    if !have("mke2fs") {
        eprintln!("SKIP: mke2fs not installed");
        return;
    }
    let dir = tmpdir("shrink-check");
    let img = populated(&dir, 8 << 20);
    let src = e4inspect::reader::source::Source::open(&img).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&img)
        .unwrap()
        .set_len(3072)
        .unwrap();
    let opts = e4inspect::check::CheckOptions {
        now: Some(0),
        ..Default::default()
    };
    let rep = e4inspect::check::check_source(src, &opts).unwrap();
    let failure = rep.read_failure.unwrap_or_default();
    assert!(failure.contains("shrank"), "{failure:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Number of `pread64` calls the main thread of `args` makes (the dynamic loader's included),
/// counted by strace; `None` when strace cannot trace here (not installed, ptrace refused).
/// strace counts `when=` per thread, and the main thread's reads (open, superblock,
/// descriptors, the passes it runs itself) come in the same order every run. Counted on a
/// second run, with the image in the page cache as for the runs that follow (the check walk
/// reads cached inode tables in place, uncached ones with `pread`).
fn main_thread_preads(args: &[&str]) -> Option<usize> {
    run(Command::new(bin()).args(args));
    let log = std::env::temp_dir().join(format!("e4i-preads-{}.log", std::process::id()));
    let out = Command::new(which("strace")?)
        .args(["-f", "-qq", "-e", "trace=pread64", "-o"])
        .arg(&log)
        .arg(bin())
        .args(args)
        .output()
        .ok()?;
    let text = std::fs::read_to_string(&log).ok()?;
    let _ = std::fs::remove_file(&log);
    let main = text.split_whitespace().next()?;
    let n = text
        .lines()
        .filter(|l| l.split_whitespace().next() == Some(main) && l.contains("pread64("))
        .count();
    (out.status.code() == Some(0) && n > 0).then_some(n)
}

/// Every command that reads an image, one row each: its arguments (`IMG` the image, `OUT` a
/// fresh path to write to) and the system calls that read the input which the test cuts short
/// (`pread64` for metadata and most data, `sendfile` for file data copied inside the kernel).
const READING_COMMANDS: &[(&[&str], &[&str])] = &[
    (&["check", "--no-progress", "IMG"], &["pread64"]),
    (&["check", "--no-progress", "--json", "IMG"], &["pread64"]),
    (
        &["check", "--no-progress", "--no-replay", "IMG"],
        &["pread64"],
    ),
    (&["dump", "IMG"], &["pread64"]),
    (&["dump", "--json", "IMG"], &["pread64"]),
    (&["inode", "IMG", "2", "/docs/big.txt"], &["pread64"]),
    (&["inode", "--json", "IMG", "/docs/sub"], &["pread64"]),
    (&["ls", "-l", "IMG", "/docs"], &["pread64"]),
    (&["ls", "--json", "IMG", "/docs"], &["pread64"]),
    (&["cat", "IMG", "/docs/big.txt"], &["pread64", "sendfile"]),
    (&["xattrs", "--no-progress", "IMG"], &["pread64"]),
    (&["xattrs", "--no-progress", "--json", "IMG"], &["pread64"]),
    (&["fit", "--from-image", "IMG"], &["pread64"]),
    (
        &["advise", "--from-image", "IMG", "--size", "1G"],
        &["pread64"],
    ),
    (&["freefrag", "IMG"], &["pread64"]),
    (&["journal", "IMG"], &["pread64"]),
    (&["journal", "--json", "IMG"], &["pread64"]),
    (&["quota", "IMG"], &["pread64"]),
    (&["find", "IMG", "/"], &["pread64"]),
    (&["ncheck", "IMG", "12", "15", "19"], &["pread64"]),
    (&["icheck", "IMG", "100", "200"], &["pread64"]),
    (
        &["extract", "--no-progress", "IMG", "/", "OUT"],
        &["pread64", "sendfile"],
    ),
    (
        &["extract", "--no-progress", "--tar", "IMG", "/", "OUT"],
        &["pread64", "sendfile"],
    ),
    (&["diff", "IMG", "IMG"], &["pread64"]),
];

/// `cmd` with `IMG` replaced by `img` and `OUT` by a path under `dir` not used before.
fn args_with_out(cmd: &[&str], img: &str, dir: &Path) -> Vec<String> {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    cmd.iter()
        .map(|a| match *a {
            "IMG" => img.to_string(),
            "OUT" => dir.join(format!("out{n}")).display().to_string(),
            a => a.to_string(),
        })
        .collect()
}

/// From outside, deterministically: strace makes a read system call of the main thread (or,
/// for `sendfile`, every one of every thread) from the n-th on return 0 bytes, which is what a
/// read past the end of a file truncated since it was opened returns.
/// Whichever structure that read was for, and whatever the command made of it (a finding, an
/// `<unreadable: ...>` marker, a skipped entry, a quota file read as zeros), every command that
/// reads an image ends with exit 8 and the "input shrank" error as the last line on stderr
/// (`check`: the only line), never exit 0 or 4 with the failure only inside the report.
#[test]
fn shrinking_input_fails_every_reading_command_with_exit_8() {
    let img = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example.img");
    let img = img.display().to_string();
    let dir = tmpdir("short");
    let strace = |extra: &[String], args: &[String]| {
        run(Command::new(which("strace").unwrap())
            .args(["-f", "-qq", "-o", "/dev/null"])
            .args(extra)
            .arg(bin())
            .args(args))
    };
    for (cmd, calls) in READING_COMMANDS {
        let counted = args_with_out(cmd, &img, &dir);
        let counted: Vec<&str> = counted.iter().map(String::as_str).collect();
        let Some(total) = main_thread_preads(&counted) else {
            eprintln!("SKIP: strace cannot trace here (needed to make reads come back short)");
            return;
        };
        // pread64: past the loader's reads, and later in the run; sendfile: every copy.
        let mut cuts = vec![
            (
                "pread64",
                total / 2,
                format!("the {}th of {total} reads", total / 2),
            ),
            (
                "pread64",
                total * 3 / 4,
                format!("the {}th of {total} reads", total * 3 / 4),
            ),
        ];
        if calls.contains(&"sendfile") {
            cuts.push(("sendfile", 1, "the first sendfile".to_string()));
        }
        for (call, from, said) in cuts {
            let args = args_with_out(cmd, &img, &dir);
            let inject = vec![
                "-e".to_string(),
                format!("trace={call}"),
                "-e".to_string(),
                format!("inject={call}:retval=0:when={from}+"),
            ];
            let out = strace(&inject, &args);
            let err = String::from_utf8_lossy(&out.stderr);
            let what = format!("{cmd:?} with reads short from {said}");
            assert_eq!(out.status.code(), Some(8), "{what}: {err}");
            let lines: Vec<&str> = err.lines().collect();
            assert!(
                lines.iter().all(|l| l.starts_with("e4inspect: ")),
                "{what}: {err}"
            );
            assert!(
                lines.last().is_some_and(|l| l.contains("the input shrank")),
                "{what}: {err}"
            );
            if cmd[0] == "check" {
                assert_eq!(lines.len(), 1, "{what}: {err}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// From outside: truncate the image while commands run on it; whatever the timing, each ends
/// with an exit status (never a signal), and a failure is one line on stderr.
#[test]
fn truncation_during_a_run_never_kills_by_signal() {
    if !have("mke2fs") {
        eprintln!("SKIP: mke2fs not installed");
        return;
    }
    let dir = tmpdir("race");
    let base = populated(&dir, 64 << 20);
    let pristine = std::fs::read(&base).unwrap();
    let img = dir.join("victim.img");
    let f = img.display().to_string();
    for (round, cmd) in COMMANDS.iter().cycle().take(16).enumerate() {
        std::fs::write(&img, &pristine).unwrap();
        let child = Command::new(bin())
            .args(args_for(cmd, &f))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(200 * round as u64));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&img)
            .unwrap()
            .set_len(4096)
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.signal().is_none(),
            "{cmd:?} died of signal {:?}",
            out.status.signal()
        );
        let code = out.status.code().unwrap();
        assert!([0, 4, 8, 16].contains(&code), "{cmd:?}: exit {code}");
        if code == 8 {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("panicked"), "{cmd:?}: {err}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A loop device whose backing file is cut short after attach returns I/O errors (or a
/// shorter device): every command ends with a status and a message, never a signal.
#[test]
fn loop_device_with_io_errors() {
    if !is_root() || !have("losetup") || !have("mke2fs") {
        eprintln!("SKIP: needs root, losetup and mke2fs to make a failing loop device");
        return;
    }
    let dir = tmpdir("eio");
    let img = populated(&dir, 64 << 20);
    let out = run(Command::new(which("losetup").unwrap())
        .args(["-f", "--show"])
        .arg(&img));
    if !out.status.success() {
        eprintln!(
            "SKIP: losetup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&img)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let mut failures = Vec::new();
    for cmd in COMMANDS {
        let out = Command::new(bin())
            .args(args_for(cmd, &dev))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        if out.status.signal().is_some() || err.contains("panicked") {
            failures.push(format!("{cmd:?}: {:?} {err}", out.status));
        }
    }
    let _ = run(Command::new(which("losetup").unwrap()).args(["-d", &dev]));
    assert!(failures.is_empty(), "{failures:#?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Inputs far beyond what a whole-input mapping could take (256 TiB and more, sparse on
/// tmpfs): the filesystem at the start and one 300 TiB in, dumped like dumpe2fs.
#[test]
fn inputs_of_hundreds_of_tib_open_and_dump_like_dumpe2fs() {
    if !have("mke2fs") || !have("dumpe2fs") {
        eprintln!("SKIP: e2fsprogs not installed");
        return;
    }
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("SKIP: no /dev/shm for a sparse file of 256 TiB");
        return;
    }
    let dir = shm.join(format!("e4i-huge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let small = mkfs(&dir, "small.img", 32 << 20, &["-t", "ext4"]);
    let bytes = std::fs::read(&small).unwrap();
    std::fs::remove_file(&small).unwrap();
    let huge = dir.join("huge.img");
    let offset: u64 = 300 << 40;
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::create(&huge).unwrap();
        if f.set_len(512 << 40).is_err() {
            eprintln!("SKIP: this tmpfs refuses a 512 TiB sparse file");
            let _ = std::fs::remove_dir_all(&dir);
            return;
        }
        f.write_all_at(&bytes, 0).unwrap();
        f.write_all_at(&bytes, offset).unwrap();
    }
    let h = huge.display().to_string();
    let ours = run(Command::new(bin()).args(["dump", &h]).env("TZ", "UTC"));
    let theirs = run(Command::new(which("dumpe2fs").unwrap())
        .arg(&h)
        .env("TZ", "UTC"));
    assert_eq!(
        ours.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    assert!(
        ours.stdout == theirs.stdout,
        "dump differs from dumpe2fs at offset 0"
    );
    let off = offset.to_string();
    let ours = run(Command::new(bin())
        .args(["dump", "--offset", &off, &h])
        .env("TZ", "UTC"));
    let theirs = run(Command::new(which("dumpe2fs").unwrap())
        .arg(format!("{h}?offset={off}"))
        .env("TZ", "UTC"));
    assert_eq!(
        ours.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let ours_text = String::from_utf8_lossy(&ours.stdout);
    let theirs_text = String::from_utf8_lossy(&theirs.stdout);
    assert_eq!(
        ours_text, theirs_text,
        "dump --offset differs from dumpe2fs"
    );
    for cmd in [
        &["check", "--offset", &off, &h][..],
        &["xattrs", "--offset", &off, &h],
    ] {
        let out = run(Command::new(bin()).args(cmd));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// dumpe2fs prints the label, last-mounted path and mount options with `%.*s`: bytes that are
/// not UTF-8 (or are control bytes) reach its output unchanged, and so they do ours.
#[test]
fn label_and_path_bytes_pass_through_like_dumpe2fs() {
    if !have("mke2fs") || !have("dumpe2fs") || !have("debugfs") {
        eprintln!("SKIP: e2fsprogs not installed");
        return;
    }
    let dir = tmpdir("label");
    let img = mkfs(&dir, "l.img", 8 << 20, &["-t", "ext4"]);
    // Byte-edit the superblock fields (offsets of s_volume_name and s_last_mounted).
    let mut b = std::fs::read(&img).unwrap();
    b[1024 + 0x78..1024 + 0x78 + 6].copy_from_slice(b"a\xff\xfe\x1b[b");
    b[1024 + 0x88..1024 + 0x88 + 5].copy_from_slice(b"/m\xc3\x28\n");
    std::fs::write(&img, &b).unwrap();
    let i = img.display().to_string();
    let ours = run(Command::new(bin())
        .args(["dump", "-h", &i])
        .env("TZ", "UTC"));
    let theirs = run(Command::new(which("dumpe2fs").unwrap())
        .args(["-h", &i])
        .env("TZ", "UTC"));
    assert!(
        ours.stdout.windows(6).any(|w| w == b"a\xff\xfe\x1b[b"),
        "label bytes changed"
    );
    assert!(
        ours.stdout == theirs.stdout,
        "dump -h differs from dumpe2fs -h"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A closed stdout pipe ends every command quietly with exit 0 (no panic, no "Broken pipe").
#[test]
fn closed_pipe_is_a_quiet_exit_zero() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example.img");
    let f = fixture.display().to_string();
    let lines: &[&[&str]] = &[
        &["dump", &f],
        &["dump", "--json", &f],
        &["check", &f, &f],
        &["check", "--json", &f],
        &["check", "--list-rules"],
        &["inode", &f, "2", "11"],
        &["xattrs", &f],
        &["xattrs", "--json", &f],
        &["completions", "bash"],
    ];
    for args in lines {
        let mut child = Command::new(bin())
            .args(*args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one byte, then close the pipe.
        {
            use std::io::Read;
            let mut so = child.stdout.take().unwrap();
            let mut one = [0u8; 1];
            let _ = so.read(&mut one);
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}
