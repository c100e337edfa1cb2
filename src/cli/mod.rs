//! The command-line interface: one module per subcommand. Only this side prints.
//!
//! Every command writes its output through [`emit`] (or the [`outln!`] macro over it), a
//! `BufWriter` it flushes itself, or a `&mut dyn Write` handed to a formatter; write errors
//! propagate as errors, and `main` ends the program quietly with exit 0 when the error is a
//! closed pipe (`| head`), as ripgrep does.

/// `println!` for commands: through the one stdout writer, propagating write errors with `?`.
macro_rules! outln {
    () => {
        $crate::cli::emit("\n")?
    };
    ($($arg:tt)*) => {
        $crate::cli::emit(&format!("{}\n", format_args!($($arg)*)))?
    };
}

pub mod advise;
pub mod cat;
pub mod check;
pub mod diff;
pub mod docgen;
pub mod dump;
pub mod exit;
pub mod extract;
pub mod find;
pub mod fit;
pub mod freefrag;
pub mod icheck;
pub mod inode;
pub mod journal;
pub mod ls;
pub mod ncheck;
pub mod progress;
pub mod quota;
#[cfg(test)]
pub mod schema;
pub mod xattrs;

use std::path::{Path, PathBuf};

/// `--format` of the commands that print text or JSON (`check` has more formats).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TextOrJson {
    /// The text output (e2fsprogs-identical where the command follows an e2fsprogs tool).
    Text,
    /// One JSON document (docs/schema/COMMAND.schema.json).
    Json,
}

/// A `--format` value set: which value is the text default and which one `--json` names.
pub trait OutputFormat: clap::ValueEnum + Clone + Copy + Send + Sync + 'static {
    /// The format without `--format` or `--json`.
    const TEXT: Self;
    /// The format `--json` stands for.
    const JSON: Self;
}

impl OutputFormat for TextOrJson {
    const TEXT: Self = TextOrJson::Text;
    const JSON: Self = TextOrJson::Json;
}

/// The output arguments every command shares: `--format FORMAT` and its shorthand `--json`
/// (declared once here; commands flatten it and ask [`OutputArgs::format`] or
/// [`OutputArgs::json`]).
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct OutputArgs<F: OutputFormat = TextOrJson> {
    /// Output format (`--json` is the shorthand for `--format json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<F>,
    /// Print one JSON document (docs/schema/COMMAND.schema.json) instead of text; the same as
    /// `--format json`.
    #[arg(long)]
    json: bool,
}

impl<F: OutputFormat + PartialEq> OutputArgs<F> {
    /// The format asked for: `--json`, else `--format`, else text.
    pub fn format(&self) -> F {
        if self.json {
            F::JSON
        } else {
            self.format.unwrap_or(F::TEXT)
        }
    }

    /// True when the output is JSON (`--json` or `--format json`).
    pub fn json(&self) -> bool {
        self.format() == F::JSON
    }
}

pub use exit::{EXIT_OK, EXIT_OPERATIONAL, EXIT_PROBLEMS, EXIT_USAGE};

/// Options shared by every command that opens an image.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SourceArgs {
    /// Byte offset of the filesystem inside the image or device (skips partition detection).
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub offset: Option<u64>,
    /// Partition number of a whole-disk image (MBR or GPT), 1-based.
    #[arg(long, value_name = "N")]
    pub partition: Option<u32>,
    /// Show the filesystem as the next mount will: replay the journal in memory when the image
    /// needs recovery (as `e2fsck -E journal_only`, writing nothing).
    #[arg(long)]
    pub replay: bool,
    /// The external journal device or image to replay (with --replay).
    #[arg(long, value_name = "PATH")]
    pub journal: Option<PathBuf>,
}

impl SourceArgs {
    /// Library open options for these arguments.
    pub fn open_options(&self) -> e4inspect::reader::fs::OpenOptions {
        e4inspect::reader::fs::OpenOptions {
            offset: self.offset,
            partition: self.partition,
            replay: self.replay,
            journal: self.journal.clone(),
            ..Default::default()
        }
    }

    /// Say on stderr, once, what `--replay` would change: the image needs recovery and was read
    /// as it is; or the replay met a failure the kernel would refuse to mount with. Never
    /// changes the exit status.
    pub fn note_recovery(&self, fs: &e4inspect::reader::fs::Filesystem) {
        use e4inspect::reader::replay;
        if let Some(plan) = &fs.replayed {
            replay_warnings(fs, plan);
            return;
        }
        if self.replay {
            return;
        }
        if let Some(Ok(plan)) = replay::pending(fs, self.journal.as_deref()) {
            eprintln!(
                "e4inspect: {}: the journal holds {} committed transactions{}; --replay shows the filesystem as the next mount will",
                fs.source.path().display(),
                plan.committed(),
                tid_range(&plan)
            );
        } else if replay::needs_recovery(fs) {
            eprintln!(
                "e4inspect: {}: the filesystem needs recovery; --replay shows it as the next mount will",
                fs.source.path().display()
            );
        }
    }
}

/// The inputs this run opened, each with a watch on its reads ([`watch_reads`]).
static WATCHED: std::sync::Mutex<Vec<(PathBuf, e4inspect::reader::source::FailureWatch)>> =
    std::sync::Mutex::new(Vec::new());

/// Watch the reads of `fs`'s input until the command ends: a read that fails (an I/O error,
/// the input shrank) leaves the report incomplete wherever it was made, and whatever the
/// command made of it (an `<unreadable: ...>` marker, a finding, a skipped part), so the
/// command then ends with exit 8 ([`status_after_reads`]). Every command calls it right after
/// opening an image.
pub fn watch_reads(fs: &e4inspect::reader::fs::Filesystem) {
    let watch = fs.source.failure_watch();
    let path = fs.source.path().to_path_buf();
    if let Ok(mut watched) = WATCHED.lock() {
        watched.push((path, watch));
    }
}

/// Set once a line on stderr ([`report_error`]) has named a failed read of a watched input.
static FAILED_READ_SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The first failed read of a watched input, with the input's path.
fn failed_read() -> Option<(PathBuf, String)> {
    let watched = WATCHED.lock().ok()?;
    watched
        .iter()
        .find_map(|(path, watch)| Some((path.clone(), watch.failure()?.to_string())))
}

/// The exit status of a command that returned `status`: [`EXIT_OPERATIONAL`] when a read of an
/// input it watched failed, after a line on stderr naming that read unless the command named it
/// already (a failure the command turned into another message, as quota files read short as
/// zeros, is named after that message).
pub fn status_after_reads(status: i32) -> i32 {
    let Some((path, failure)) = failed_read() else {
        return status;
    };
    if !FAILED_READ_SAID.load(std::sync::atomic::Ordering::Relaxed) {
        report_error(&path, &failure);
    }
    EXIT_OPERATIONAL
}

/// " (T1 to T2)": the transactions a replay applies, when there are any.
fn tid_range(plan: &e4inspect::reader::replay::Plan) -> String {
    match plan.committed() {
        0 => String::new(),
        1 => format!(" ({})", plan.start_tid),
        _ => format!(" ({} to {})", plan.start_tid, plan.end_tid.wrapping_sub(1)),
    }
}

/// What a replay could not do, on stderr (one line each, at most a few).
fn replay_warnings(fs: &e4inspect::reader::fs::Filesystem, plan: &e4inspect::reader::replay::Plan) {
    let path = fs.source.path().display();
    for failure in &plan.failures {
        if let e4inspect::reader::replay::Failure::FastCommit {
            kernel_accepts: true,
            ..
        } = failure
        {
            eprintln!("e4inspect: {path}: --replay: recovery by e2fsck 1.47 fails and nothing is replayed, as it leaves the image: {failure}");
            continue;
        }
        eprintln!(
            "e4inspect: {path}: --replay: recovery fails (the kernel would refuse to mount): {failure}"
        );
    }
    if let Some(tid) = plan.failed_commit {
        eprintln!("e4inspect: {path}: --replay: journal transaction {tid} was corrupt, replay was aborted");
    }
    if let Some(fc) = &plan.fast_commit {
        let inodes: Vec<String> = fc.inodes().iter().map(u32::to_string).collect();
        eprintln!(
            "e4inspect: {path}: --replay: the fast-commit transaction {} ({} tags) is not replayed (e2fsck 1.47 and the kernel apply it): inodes {} are shown as the log leaves them; `journal --replay-marks` lists its tags",
            fc.tid,
            fc.tags,
            inodes.join(", ")
        );
    }
}

/// Parse a size with an optional K/M/G/T/P suffix (powers of 1024), a byte count or `0x` hex
/// (clap value parser over [`e4inspect::models::advise::parse_size`]).
pub fn parse_size(arg: &str) -> Result<u64, String> {
    e4inspect::models::advise::parse_size(arg).map_err(|e| e.to_string())
}

/// One line on stderr for an operational error, naming the path once.
pub fn report_error(path: &Path, err: &dyn std::fmt::Display) {
    say(with_path(path, &err.to_string()));
}

/// One line on stderr, `e4inspect: ` and `msg`: every message of a command goes through here,
/// which notes when it names a failed read of the input (so that it is not said twice when the
/// command ends: [`status_after_reads`]).
pub fn say(msg: impl std::fmt::Display) {
    let line = msg.to_string();
    eprintln!("e4inspect: {line}");
    if failed_read().is_some_and(|(_, failure)| line.contains(&failure)) {
        FAILED_READ_SAID.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// One line on stderr for a failure on one target (`inode IMG TARGET`): the image, the target
/// (unless the message starts with it) and the error, each once.
pub fn report_target(image: &Path, target: &str, err: &anyhow::Error) {
    let msg = one_line(err);
    let msg = if msg.starts_with(target) {
        msg
    } else {
        format!("{target}: {msg}")
    };
    report_error(image, &msg);
}

/// `PATH: message`, unless the message already starts with the path.
fn with_path(path: &Path, msg: &str) -> String {
    let shown = path.display().to_string();
    if msg.starts_with(&shown) {
        msg.to_string()
    } else {
        format!("{shown}: {msg}")
    }
}

/// An error and its causes on one line, each text once: a cause already contained in what was
/// said is dropped (a library error that quotes its OS error, a context naming the path that the
/// error names again), and a cause that repeats the context as its prefix replaces it.
pub fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() && text.starts_with(&line) {
            line = text;
            continue;
        }
        let text = without_repeated_prefix(&line, &text);
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(text);
    }
    line
}

/// `text` without its leading `: `-separated parts that `line` already ends with (a context
/// `IMG: TARGET` followed by a cause `TARGET: reason` says the target once).
fn without_repeated_prefix<'t>(line: &str, text: &'t str) -> &'t str {
    let said: Vec<&str> = line.split(": ").collect();
    let parts: Vec<&str> = text.split(": ").collect();
    for count in (1..said.len().min(parts.len())).rev() {
        if said[said.len() - count..] == parts[..count] {
            let skip: usize = parts[..count].iter().map(|p| p.len() + 2).sum();
            return &text[skip..];
        }
    }
    text
}

/// Write `text` to stdout and flush. Errors (a closed pipe among them) propagate; `main` turns
/// a closed pipe into a quiet exit 0.
pub fn emit(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// True when `err` (or anything it wraps) is a write to a closed pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        let io = cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind);
        let json = cause
            .downcast_ref::<serde_json::Error>()
            .and_then(serde_json::Error::io_error_kind);
        io == Some(std::io::ErrorKind::BrokenPipe) || json == Some(std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn one_line_says_each_part_once() {
        let io = std::io::Error::from_raw_os_error(2);
        let lib = anyhow::Error::new(io)
            .context("img: cannot open: No such file or directory (os error 2)");
        assert_eq!(
            one_line(&lib.context("img")),
            "img: cannot open: No such file or directory (os error 2)"
        );
        let target = anyhow::anyhow!("<x>: not an inode number").context("img: <x>");
        assert_eq!(one_line(&target), "img: <x>: not an inode number");
        let plain = anyhow::anyhow!("reason").context("img");
        assert_eq!(one_line(&plain), "img: reason");
    }
}

/// C's `strtol`/`strtoull` with base 0 (leading blanks, a sign, `0x` hex, `0` octal, decimal):
/// the value and what is left unparsed (all of `arg` when no digit was read). The value saturates
/// at the `i128` range; the caller converts as C would.
pub fn c_strto(arg: &str) -> (i128, &str) {
    let text = arg.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, text) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let hex = (text.starts_with("0x") || text.starts_with("0X"))
        && text.as_bytes().get(2).is_some_and(u8::is_ascii_hexdigit);
    let (radix, digits) = if hex {
        (16, &text[2..])
    } else if text.starts_with('0') {
        (8, text)
    } else {
        (10, text)
    };
    let digit_count = digits
        .bytes()
        .take_while(|byte| (*byte as char).is_digit(radix))
        .count();
    if digit_count == 0 {
        return (0, arg);
    }
    let value = digits[..digit_count].bytes().fold(0i128, |acc, byte| {
        let digit = i128::from((byte as char).to_digit(radix).unwrap_or(0));
        acc.saturating_mul(i128::from(radix)).saturating_add(digit)
    });
    (if neg { -value } else { value }, &digits[digit_count..])
}

#[cfg(test)]
mod strto_tests {
    use super::c_strto;

    #[test]
    fn c_strto_reads_like_strtol_base_0() {
        assert_eq!(c_strto("12"), (12, ""));
        assert_eq!(c_strto("0x1f"), (31, ""));
        assert_eq!(c_strto("010"), (8, ""));
        assert_eq!(c_strto(" -1"), (-1, ""));
        assert_eq!(c_strto("12x"), (12, "x"));
        assert_eq!(c_strto("0x"), (0, "x"));
        assert_eq!(c_strto("abc"), (0, "abc"));
        assert_eq!(c_strto("09"), (0, "9"));
    }
}
