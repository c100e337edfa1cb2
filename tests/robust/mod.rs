//! Shared by the robustness tests (hostile.rs, corpus_all.rs, readonly.rs): discover every
//! subcommand that reads an image from `e4inspect --help`, run it with a wall-clock bound and an
//! address-space limit, and classify the outcome.
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Inode arguments given to commands that take inode numbers or paths after the image.
pub const INODE_ARGS: &[&str] = &["1", "2", "11", "12", "/"];
/// Address-space limit of each child: far above what any command needs on the small test
/// images, far below what an allocation sized by a hostile 32-bit field would ask for.
pub const AS_LIMIT: u64 = 2 << 30;

/// How one subcommand is pointed at an image.
#[derive(Clone, Debug)]
pub struct Cmd {
    pub name: String,
    /// Arguments before the image.
    pub pre: Vec<String>,
    /// How the image is passed.
    pub style: Style,
    /// Arguments after the image.
    pub post: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `SUB [pre] IMAGE [post]`
    Positional,
    /// `SUB [pre] --from-image IMAGE [post]`
    FromImage,
    /// `SUB [pre] --size 1G --from-image IMAGE [post]` (a target size is required besides)
    SizeAndImage,
    /// `SUB [pre] IMAGE IMAGE [post]`: a command comparing two inputs (diff), given the image
    /// on both sides.
    Both,
    /// `SUB [pre] OTHER IMAGE [post]`: the same command with the image on one side only, the
    /// other a sound image (the shipped fixture: hostile.rs mutates it too, so part of these
    /// runs compare an image with its own damaged copy).
    Against,
}

/// The sound image a two-input command meets a hostile one with ([`Style::Against`]).
pub fn sound_image() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example.img")
}

impl Cmd {
    /// The argv (after the program name) for `img`.
    pub fn args(&self, img: &Path) -> Vec<OsString> {
        let mut v: Vec<OsString> = vec![self.name.clone().into()];
        v.extend(self.pre.iter().map(OsString::from));
        match self.style {
            Style::Positional => v.push(img.into()),
            Style::FromImage => {
                v.push("--from-image".into());
                v.push(img.into());
            }
            Style::SizeAndImage => {
                v.push("--size".into());
                v.push("1G".into());
                v.push("--from-image".into());
                v.push(img.into());
            }
            Style::Both => {
                v.push(img.into());
                v.push(img.into());
            }
            Style::Against => {
                v.push(sound_image().into());
                v.push(img.into());
            }
        }
        v.extend(self.post.iter().map(OsString::from));
        v
    }

    pub fn label(&self) -> String {
        let mut s = self.name.clone();
        match self.style {
            Style::Both => s.push_str(" IMG IMG"),
            Style::Against => s.push_str(" SOUND IMG"),
            _ => {}
        }
        for p in self.pre.iter().chain(&self.post) {
            s.push(' ');
            s.push_str(p);
        }
        s
    }
}

fn help(bin: &Path, args: &[&str]) -> String {
    let o = Command::new(bin).args(args).output().expect("run --help");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Names listed under `Commands:` in `e4inspect --help` (without `help`).
pub fn subcommands(bin: &Path) -> Vec<String> {
    let h = help(bin, &["--help"]);
    let mut names = Vec::new();
    let mut inside = false;
    for line in h.lines() {
        if line.starts_with("Commands:") {
            inside = true;
            continue;
        }
        if inside {
            if !line.starts_with("  ") {
                break;
            }
            if let Some(n) = line.split_whitespace().next() {
                if n != "help" {
                    names.push(n.to_string());
                }
            }
        }
    }
    assert!(
        names.contains(&"dump".to_string()),
        "no dump in --help: {h}"
    );
    names
}

/// Every subcommand that reads an image, with how to pass it (from each one's `--help`), plus
/// the JSON variant where one exists. Subcommands that read no image (completions) are left out.
pub fn image_commands(bin: &Path) -> Vec<Cmd> {
    let mut out = Vec::new();
    for name in subcommands(bin) {
        let h = help(bin, &[&name, "--help"]);
        let usage = h
            .lines()
            .find(|l| l.starts_with("Usage:"))
            .unwrap_or("")
            .to_string();
        if usage.contains("DEST") {
            // A command that writes a copy out (extract) is run as a pax stream to stdout
            // (`--tar -`): the same walk and reads, with no destination per run. Writing files
            // is covered by tests/extract_*.rs.
            if h.contains("--tar") {
                out.push(Cmd {
                    name: name.clone(),
                    pre: vec!["--tar".into(), "-".into()],
                    style: Style::Positional,
                    post: Vec::new(),
                });
            }
            continue;
        }
        if usage.ends_with("<A> <B>") {
            // Two inputs compared (diff): the image on both sides, and against a sound image.
            for style in [Style::Both, Style::Against] {
                out.push(Cmd {
                    name: name.clone(),
                    pre: Vec::new(),
                    style,
                    post: Vec::new(),
                });
            }
            continue;
        }
        let (style, post) = if let Some(i) = usage.find("<IMAGE") {
            // Positionals after the image (inode numbers or paths).
            let rest = &usage[i..];
            // icheck's blocks are optional in the usage line (`--sector` can stand for them) but
            // a run needs one of the two.
            let more = rest.matches('<').count() > 1 || rest.contains("BLOCK");
            let post = if more {
                // A command that takes inode numbers only (ncheck) gets no path.
                let paths = rest.contains("PATH");
                INODE_ARGS
                    .iter()
                    .filter(|a| paths || a.parse::<u32>().is_ok())
                    .map(|s| s.to_string())
                    .collect()
            } else {
                Vec::new()
            };
            (Style::Positional, post)
        } else if h.contains("--from-image") {
            if usage.contains("<--size") {
                (Style::SizeAndImage, Vec::new())
            } else {
                (Style::FromImage, Vec::new())
            }
        } else {
            continue;
        };
        out.push(Cmd {
            name: name.clone(),
            pre: Vec::new(),
            style,
            post: post.clone(),
        });
        // JSON variants of the commands that read the image themselves; for the models (`fit`,
        // `advise`) JSON is only another rendering of the same reading.
        if h.contains("--json") && style == Style::Positional {
            out.push(Cmd {
                name,
                pre: vec!["--json".into()],
                style,
                post,
            });
        }
    }
    out
}

/// What a bounded run ended with.
#[derive(Debug)]
pub struct Outcome {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub elapsed: Duration,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Outcome {
    /// Why this outcome breaks the robustness contract (exit 0/4/8, no panic, no signal, in
    /// time), or None.
    pub fn violation(&self) -> Option<String> {
        self.violation_for(Style::Positional)
    }

    /// As [`Outcome::violation`], for a command that takes the image the given way. Models fed
    /// with `--from-image` (fit, advise) may refuse what a hostile image implies (an absurd
    /// average file size) as an impossible request, exit 16 with one clear line.
    pub fn violation_for(&self, style: Style) -> Option<String> {
        if matches!(style, Style::FromImage | Style::SizeAndImage)
            && self.code == Some(16)
            && self.stderr.lines().count() == 1
            && self.stderr.starts_with("e4inspect")
            && !self.stderr.contains("panicked")
        {
            return None;
        }
        if self.timed_out {
            return Some(format!("timed out after {:?}", self.elapsed));
        }
        if let Some(s) = self.signal {
            return Some(format!("killed by signal {s}: {}", tail(&self.stderr)));
        }
        if self.stderr.contains("panicked") {
            return Some(format!("panicked: {}", tail(&self.stderr)));
        }
        match self.code {
            Some(0 | 4 | 8) => None,
            c => Some(format!("exit {c:?}: {}", tail(&self.stderr))),
        }
    }
}

fn tail(s: &str) -> String {
    let t: Vec<&str> = s.lines().rev().take(4).collect();
    t.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

/// How many times `timeout` of wall-clock time a run may take before it is killed (see
/// [`run_bounded`]).
pub const WALL_FACTOR: u32 = 3;

/// Run `bin args` with stdout captured (or discarded), an address-space limit and two bounds:
/// `timeout` of CPU time (RLIMIT_CPU: a run that spins is killed by SIGXCPU after as much CPU as
/// it would have used in `timeout` on an idle core) and [`WALL_FACTOR`] times `timeout` of wall
/// time (a run stuck without using CPU). Either counts as timed out. Why CPU first: on a busy
/// machine (CI's two cores, or eight engineers' builds) a correct run of a second can take ten of
/// wall time and failed a wall-only bound, while a hang is caught as soon as before on an idle one.
pub fn run_bounded(bin: &Path, args: &[OsString], timeout: Duration, keep_stdout: bool) -> Outcome {
    use std::io::Read;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .env("TZ", "UTC")
        .stdin(Stdio::null())
        .stdout(if keep_stdout {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped());
    let cpu_secs = timeout.as_secs().max(1) as libc::rlim_t;
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: AS_LIMIT as libc::rlim_t,
                rlim_max: AS_LIMIT as libc::rlim_t,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            // SIGXCPU at the soft limit (SIGKILL one second later, should it be caught).
            let cpu = libc::rlimit {
                rlim_cur: cpu_secs,
                rlim_max: cpu_secs + 1,
            };
            libc::setrlimit(libc::RLIMIT_CPU, &cpu);
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn e4inspect");
    // Drain the pipes on threads so a chatty child never blocks on a full pipe.
    let mut so = child.stdout.take();
    let mut se = child.stderr.take();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(s) = so.as_mut() {
            let _ = s.read_to_end(&mut v);
        }
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(s) = se.as_mut() {
            let _ = s.read_to_end(&mut v);
        }
        v
    });
    let (status, wall_out) = crate::common::wait_bounded(&mut child, timeout * WALL_FACTOR);
    let cpu_out = status.signal() == Some(libc::SIGXCPU);
    let timed_out = wall_out || cpu_out;
    let elapsed = start.elapsed();
    let stdout = out_t.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&err_t.join().unwrap_or_default()).into_owned();
    Outcome {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        elapsed,
        stdout,
        stderr,
    }
}

/// Run `jobs` over `threads` worker threads, collecting each result.
pub fn parallel<T: Send, R: Send>(
    jobs: Vec<T>,
    threads: usize,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let queue = std::sync::Mutex::new(jobs.into_iter().enumerate().collect::<Vec<_>>());
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let job = queue.lock().unwrap().pop();
                let Some((i, job)) = job else { break };
                let r = f(job);
                results.lock().unwrap().push((i, r));
            });
        }
    });
    let mut r = results.into_inner().unwrap();
    r.sort_by_key(|(i, _)| *i);
    r.into_iter().map(|(_, r)| r).collect()
}

/// Worker threads: twice the machine's cores (at least 4, at most 8). Each worker spends part of
/// every job in the harness (writing the image, fork and exec, draining pipes) rather than in the
/// child, so one worker per core leaves the cores partly idle; two per core keep them busy while
/// staying far within each run's time bound.
pub fn threads() -> usize {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    (2 * cores).clamp(4, 8)
}

/// True when running as root (the one definition, in tests/common).
#[allow(unused_imports)]
pub use crate::common::is_root;

/// The commands a robustness suite runs in this build of the tests. A release build runs all of
/// them. A build with debug assertions (CI reruns the hostile suites with the `checked` profile,
/// see .ci/run) leaves out the `--json` variants: they read the image with the same code as the
/// text form and only render it differently, and the rerun is there to catch a debug_assert! or
/// an arithmetic overflow in the reading. Every mutated image still meets every subcommand.
pub fn for_this_build(cmds: Vec<Cmd>) -> Vec<Cmd> {
    if !cfg!(debug_assertions) {
        return cmds;
    }
    let json = |c: &Cmd| c.pre.iter().any(|p| p == "--json");
    cmds.into_iter().filter(|c| !json(c)).collect()
}
