//! Progress bars on stderr, for every command whose work can take more than a second on a large
//! or cold device (check, the xattrs and fit scans, extract). Shown only when stderr is a
//! terminal that can redraw a line (not `TERM=dumb`), never on a pipe or a file; rates in human
//! units (`125,299 inodes/s`, `1.2 GiB/s`); ASCII characters when the locale is not UTF-8.

use e4inspect::format::table::unicode_ok;
use indicatif::{HumanCount, ProgressBar, ProgressState, ProgressStyle};
use std::io::IsTerminal;

/// What a bar counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Inodes (or inode slots).
    Inodes,
    /// Directory entries / files.
    Entries,
}

impl Unit {
    fn word(self) -> &'static str {
        match self {
            Unit::Inodes => "inodes",
            Unit::Entries => "entries",
        }
    }
}

/// True when a progress bar may be drawn: not refused by the user, stderr is a terminal and the
/// terminal can redraw a line.
pub fn enabled(refused: bool) -> bool {
    !refused
        && std::io::stderr().is_terminal()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// A whole-number rate with thousands separators: `125,299`.
fn rate(state: &ProgressState, out: &mut dyn std::fmt::Write) {
    let per_sec = state.per_sec();
    let whole = if per_sec.is_finite() && per_sec > 0.0 {
        per_sec as u64
    } else {
        0
    };
    let _ = write!(out, "{}", HumanCount(whole));
}

/// The indicatif template for a bar (`total`) or a counting spinner of `unit`.
fn template(unit: Unit, total: bool) -> String {
    match (unit, total) {
        (u, true) => format!(
            "{{spinner}} {{msg}} {{bar:30}} {{human_pos}}/{{human_len}} {w} ({{rate}} {w}/s, {{eta}})",
            w = u.word()
        ),
        (u, false) => format!(
            "{{spinner}} {{msg}} {{human_pos}} {w} ({{rate}} {w}/s)",
            w = u.word()
        ),
    }
}

fn style(unit: Unit, total: bool) -> ProgressStyle {
    let body = template(unit, total);
    let styled = ProgressStyle::with_template(&body)
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .with_key(
            "rate",
            |state: &ProgressState, out: &mut dyn std::fmt::Write| rate(state, out),
        );
    if unicode_ok() {
        styled
    } else {
        styled.tick_chars("|/-\\ ").progress_chars("=> ")
    }
}

/// A spinner with a message and the time spent, for a phase whose work is not counted.
fn phase_style() -> ProgressStyle {
    let styled = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    if unicode_ok() {
        styled
    } else {
        styled.tick_chars("|/-\\ ")
    }
}

/// A bar (with a known `total`) or a counting spinner, hidden when [`enabled`] says no.
pub fn bar(show: bool, what: &str, unit: Unit, total: Option<u64>) -> ProgressBar {
    started(show, what, total, style(unit, total.is_some()))
}

/// A bar in `style`, ticking, or a hidden one.
fn started(show: bool, what: &str, total: Option<u64>, style: ProgressStyle) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = match total {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    pb.set_style(style);
    pb.set_message(what.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

/// The progress of `e4inspect check` on a bar: one phase after another, the inode walk counted.
pub struct CheckBar {
    pb: ProgressBar,
    image: String,
}

impl CheckBar {
    /// A bar for checking `image` (hidden when `show` is false).
    pub fn new(show: bool, image: &str) -> CheckBar {
        CheckBar::on(started(show, image, None, phase_style()), image)
    }
    /// The check's progress on an existing bar `pb`.
    fn on(pb: ProgressBar, image: &str) -> CheckBar {
        CheckBar {
            pb,
            image: image.to_string(),
        }
    }
    /// Remove the bar.
    pub fn finish(&self) {
        self.pb.finish_and_clear();
    }
}

impl e4inspect::check::Progress for CheckBar {
    fn phase(&self, phase: e4inspect::check::Phase, total: Option<u64>) {
        if self.pb.is_hidden() {
            return;
        }
        // Every change below may redraw the line, so each step leaves a consistent frame: a
        // spinner phase takes its style before the count goes, a counted phase after its total
        // is set (otherwise a frame shows "0/0 inodes"). A zero total is no count at all.
        match total.filter(|&n| n > 0) {
            Some(n) => {
                self.pb.set_length(n);
                self.pb.set_position(0);
                self.pb.reset_eta();
                self.pb
                    .set_message(format!("{}: {}", self.image, phase.name()));
                self.pb.set_style(style(Unit::Inodes, true));
            }
            None => {
                self.pb.set_style(phase_style());
                self.pb.unset_length();
                self.pb.set_position(0);
                self.pb
                    .set_message(format!("{}: {}", self.image, phase.name()));
            }
        }
    }
    fn advance(&self, count: u64) {
        self.pb.inc(count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use e4inspect::check::{Phase, Progress};
    use indicatif::{ProgressDrawTarget, TermLike};
    use std::fmt::Write as _;
    use std::sync::{Arc, Mutex};

    /// A terminal that records every line drawn on it.
    #[derive(Debug, Default, Clone)]
    struct Recorder(Arc<Mutex<Vec<String>>>);

    impl TermLike for Recorder {
        fn width(&self) -> u16 {
            120
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, text: &str) -> std::io::Result<()> {
            self.write_str(text)
        }
        fn write_str(&self, text: &str) -> std::io::Result<()> {
            if !text.trim().is_empty() {
                self.0.lock().unwrap().push(text.to_string());
            }
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Every frame drawn during a check's phases (the target draws without rate limit, so the
    /// frames between the calls of one phase change are seen too): no "0/0" count, and a
    /// count only in the counted phase, with its total.
    #[test]
    fn check_phases_never_show_an_empty_count() {
        let term = Recorder::default();
        let pb = ProgressBar::with_draw_target(
            None,
            ProgressDrawTarget::term_like(Box::new(term.clone())),
        );
        pb.set_style(phase_style());
        let bar = CheckBar::on(pb, "img");
        bar.phase(Phase::Metadata, None);
        bar.phase(Phase::Inodes, Some(4096));
        bar.advance(1024);
        bar.phase(Phase::Usage, None);
        bar.phase(Phase::Directories, None);
        bar.phase(Phase::Inodes, Some(0));
        bar.phase(Phase::Metadata, None);
        let frames = term.0.lock().unwrap().clone();
        assert!(
            frames.iter().any(|f| f.contains("1,024/4,096 inodes")),
            "{frames:#?}"
        );
        assert!(
            frames.iter().any(|f| f.contains("img: bitmaps (")),
            "{frames:#?}"
        );
        for frame in &frames {
            assert!(
                !frame.contains("0/0"),
                "empty count drawn: {frame:?} in {frames:#?}"
            );
            if frame.contains("inodes/s") {
                assert!(
                    frame.contains("img: inodes ") && frame.contains("/4,096 inodes"),
                    "count outside the inode walk: {frame:?}"
                );
            }
        }
    }

    #[test]
    fn rates_are_whole_numbers_with_separators() {
        let mut text = String::new();
        write!(text, "{}", HumanCount(125_299)).unwrap();
        assert_eq!(text, "125,299");
        // Every template parses.
        for unit in [Unit::Inodes, Unit::Entries] {
            for total in [true, false] {
                let body = template(unit, total);
                assert!(ProgressStyle::with_template(&body).is_ok(), "{body}");
            }
        }
    }
}
