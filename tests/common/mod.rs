//! Shared helpers for integration tests: the built binary, e2fsprogs tools, fixtures.
#![allow(dead_code)]

pub mod crash;
pub mod damage;
pub mod images;
pub mod trees;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Path of the e4inspect binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_e4inspect"))
}

/// True when `tool` is on PATH (or in /sbin, /usr/sbin).
pub fn have(tool: &str) -> bool {
    which(tool).is_some()
}

/// The first of `tools` that is not installed, for a test's printed SKIP reason.
pub fn missing_tool<'a>(tools: &[&'a str]) -> Option<&'a str> {
    tools.iter().copied().find(|t| !have(t))
}

/// Full path of a tool.
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/sbin", "/usr/sbin"])
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file());
    found
}

/// Run a command, returning its output.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// Make a filesystem image of `size` bytes with `mke2fs ARGS` (reproducible: fixed time and UUID).
pub fn mkfs(dir: &Path, name: &str, size: u64, args: &[&str]) -> PathBuf {
    let img = dir.join(name);
    let f = std::fs::File::create(&img).unwrap();
    f.set_len(size).unwrap();
    drop(f);
    let mke2fs = which("mke2fs").expect("mke2fs");
    let out = run(Command::new(mke2fs)
        .args([
            "-q",
            "-F",
            "-U",
            "7d4c2a6e-1b3f-4e5d-9a8b-0c1d2e3f4a5b",
            "-E",
            "lazy_itable_init=1,lazy_journal_init=1",
        ])
        .args(args)
        .arg(&img)
        .env("E2FSPROGS_FAKE_TIME", "1700000000")
        .env("MKE2FS_CONFIG", "/etc/mke2fs.conf"));
    assert!(
        out.status.success(),
        "mke2fs {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    img
}

/// The e2fsprogs test corpus: `$E4INSPECT_CORPUS`, else ../shared/corpus/e2fsprogs next to the
/// repository (or one level further up, for git worktrees under /work/wt/<branch>), if present.
pub fn corpus() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        std::env::var_os("E4INSPECT_CORPUS").map(PathBuf::from),
        Some(root.join("../shared/corpus/e2fsprogs")),
        Some(root.join("../../shared/corpus/e2fsprogs")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_dir())
}

/// True when running as root (loop mounts, chown), read from /proc without libc.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().nth(1).map(str::to_string))
        })
        .is_some_and(|u| u == "0")
}

#[allow(unused_imports)]
pub use images::write_at;

/// `debugfs -w -f SCRIPT IMG` with `cmds` (one request a line) as the script, failing the test
/// when debugfs does not run.
pub fn debugfs_script(img: &Path, cmds: &str) {
    let script = img.with_extension("cmds");
    std::fs::write(&script, cmds).unwrap();
    let out = run(Command::new(which("debugfs").expect("debugfs"))
        .args(["-w", "-f"])
        .arg(&script)
        .arg(img)
        .env("E2FSPROGS_FAKE_TIME", "1800000000"));
    assert!(out.status.success(), "debugfs -w -f {cmds}: {out:?}");
}

/// `debugfs -w -R REQ IMG`, failing the test when debugfs does not run.
pub fn debugfs_w(img: &Path, req: &str) {
    let out = run(Command::new(which("debugfs").expect("debugfs"))
        .args(["-w", "-R", req])
        .arg(img));
    assert!(out.status.success(), "debugfs -w {req}: {out:?}");
}

/// `e2fsck -fn IMG`: its exit status.
pub fn e2fsck_exit(img: &Path) -> i32 {
    e2fsck_fn(img).0
}

/// `e2fsck -fn IMG`: its exit status and stdout.
pub fn e2fsck_fn(img: &Path) -> (i32, String) {
    let out = run(Command::new(which("e2fsck").expect("e2fsck"))
        .arg("-fn")
        .arg(img));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// e2fsck -fn's verdict: true when it reports a problem (a non-zero exit), with its stdout.
pub fn e2fsck_verdict(img: &Path) -> (bool, String) {
    let (rc, text) = e2fsck_fn(img);
    (rc != 0, text)
}

/// True when e2fsck -fn reports a problem (a non-zero exit).
pub fn e2fsck_complains(img: &Path) -> bool {
    e2fsck_fn(img).0 != 0
}

/// Decompress a corpus image into `dir`.
pub fn corpus_image(dir: &Path, name: &str) -> Option<PathBuf> {
    let c = corpus()?;
    let gz = c.join(name).join("image.gz");
    let out = run(Command::new("gunzip").arg("-c").arg(&gz));
    if !out.status.success() {
        return None;
    }
    let p = dir.join(format!("{name}.img"));
    std::fs::write(&p, out.stdout).ok()?;
    Some(p)
}

/// Names of the corpus images.
pub fn corpus_names() -> Vec<String> {
    let Some(c) = corpus() else { return Vec::new() };
    let mut v: Vec<String> = std::fs::read_dir(c)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("image.gz").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `e4inspect check --json IMG`: the exit status, the rule ID of every finding of the (single)
/// image in order, and the whole document.
pub fn check_rules(img: &Path) -> (i32, Vec<String>, serde_json::Value) {
    let out = Command::new(bin())
        .args(["check", "--json"])
        .arg(img)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check --json: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let rules = v["images"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect();
    (out.status.code().unwrap_or(-1), rules, v)
}

/// `debugfs -R REQUEST IMG` (read-only), its whole output.
pub fn debugfs(img: &Path, request: &str) -> Output {
    run(Command::new(which("debugfs").expect("debugfs"))
        .env("TZ", "UTC")
        .args(["-R", request])
        .arg(img))
}

/// `debugfs -R REQUEST IMG` (read-only): its standard output as text.
pub fn debugfs_text(img: &Path, request: &str) -> String {
    String::from_utf8_lossy(&debugfs(img, request).stdout).into_owned()
}

/// `debugfs -w -R REQUEST IMG`: its standard output as text (debugfs exits 0 even when the
/// request fails; callers that need the request applied check its effect).
pub fn debugfs_w_text(img: &Path, request: &str) -> String {
    let out = run(Command::new(which("debugfs").expect("debugfs"))
        .args(["-w", "-R", request])
        .arg(img));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Wait for `child` for at most `limit`; on expiry kill it (SIGKILL) and reap it. Returns the
/// exit status and whether the limit expired.
///
/// Why not a `try_wait` + sleep loop: a run of e4inspect on a small test image takes ~3 ms of CPU,
/// and a 5 ms polling sleep left the cores idle for most of every run (the hostile suites spawn
/// ~90,000 of them). A pidfd becomes readable the moment the child exits, so `poll` on it wakes
/// at once, and signalling through the pidfd can never reach a reused pid. Kernels without pidfd
/// (before 5.3) fall back to a 1 ms polling loop.
pub fn wait_bounded(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> (std::process::ExitStatus, bool) {
    let start = std::time::Instant::now();
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id() as libc::pid_t, 0) };
    if fd >= 0 {
        let fd = fd as libc::c_int;
        let mut timed_out = false;
        loop {
            let left = limit.saturating_sub(start.elapsed());
            if left.is_zero() {
                // SAFETY: fd is the pidfd opened above (still open); a null siginfo is allowed.
                unsafe {
                    libc::syscall(
                        libc::SYS_pidfd_send_signal,
                        fd,
                        libc::SIGKILL,
                        std::ptr::null::<libc::siginfo_t>(),
                        0,
                    )
                };
                timed_out = true;
                break;
            }
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
            // SAFETY: p is one valid pollfd that lives across the call.
            let rc = unsafe { libc::poll(&mut p, 1, ms) };
            if rc > 0 {
                break;
            }
            // rc == 0: the limit expired (checked at the top); rc < 0: EINTR, poll again.
        }
        // SAFETY: fd was opened above and is closed once.
        unsafe { libc::close(fd) };
        return (child.wait().expect("wait"), timed_out);
    }
    loop {
        if let Some(st) = child.try_wait().expect("wait") {
            return (st, false);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            return (child.wait().expect("wait"), true);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
