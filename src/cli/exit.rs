//! Exit statuses, defined once for every command (the table in `docs/exit-status.md` and the
//! `EXIT STATUS` section of `--help` say the same).
//!
//! | status | meaning |
//! |---|---|
//! | 0 | fine (warnings alone do not fail, as with compiler warnings) |
//! | 4 | problems found: error-level findings of `check`, damage met by `dump`, `xattrs`, `fit`, `extract` ... |
//! | 8 | operational error: an input could not be opened or read, is not ext2/3/4, an output failed |
//! | 16 | usage error: bad arguments (unknown option, rule, profile, a value out of range) |
//!
//! The values are bits, as e2fsck's: a command over several inputs exits with the bitwise OR of
//! each input's status (`check good.img bad.img missing.img` exits 4 | 8 = 12). A closed stdout
//! pipe (`| head`) is not an error: the command stops quietly with the status it had so far.

/// Everything fine.
pub const EXIT_OK: i32 = 0;
/// Problems found (error-level findings, damage met).
pub const EXIT_PROBLEMS: i32 = 4;
/// Operational error: unreadable, not ext2/3/4, truncated, an output that cannot be written.
pub const EXIT_OPERATIONAL: i32 = 8;
/// Usage error: the arguments are wrong.
pub const EXIT_USAGE: i32 = 16;

/// The status of a run over several inputs: the bitwise OR of each one's.
pub fn combine(statuses: impl IntoIterator<Item = i32>) -> i32 {
    statuses.into_iter().fold(EXIT_OK, |acc, s| acc | s)
}

/// An error in the arguments (exit status [`EXIT_USAGE`]); anything else a command returns as
/// an error is operational ([`EXIT_OPERATIONAL`]).
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A usage error with this message, as an `anyhow::Error` a command can return with `?`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Usage(msg.into()))
}

/// Mark an error as a usage error, keeping its message (and its causes' messages).
pub fn as_usage(err: impl Into<anyhow::Error>) -> anyhow::Error {
    let err = err.into();
    if is_usage(&err) {
        return err;
    }
    usage(format!("{err:#}"))
}

/// True when `err` (or anything it wraps) is a [`Usage`] error.
pub fn is_usage(err: &anyhow::Error) -> bool {
    err.chain().any(|c| c.downcast_ref::<Usage>().is_some())
}

/// The exit status for an error a command returned: 0 for a closed pipe, 16 for a usage error,
/// 8 for anything else.
pub fn status_of(err: &anyhow::Error) -> i32 {
    if super::is_broken_pipe(err) {
        EXIT_OK
    } else if is_usage(err) {
        EXIT_USAGE
    } else {
        EXIT_OPERATIONAL
    }
}

/// The closest of `candidates` to `word` (edit distance at most a third of its length, at least
/// 2), for "did you mean" suggestions.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Levenshtein distance (by characters).
fn edit_distance(from: &str, to: &str) -> usize {
    let to: Vec<char> = to.chars().collect();
    let mut prev: Vec<usize> = (0..=to.len()).collect();
    for (row, ca) in from.chars().enumerate() {
        let mut cur = vec![row + 1; to.len() + 1];
        for (col, &cb) in to.iter().enumerate() {
            let subst = prev[col] + usize::from(ca != cb);
            cur[col + 1] = subst.min(prev[col + 1] + 1).min(cur[col] + 1);
        }
        prev = cur;
    }
    prev[to.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_combine_as_bits() {
        assert_eq!(combine([EXIT_OK, EXIT_PROBLEMS, EXIT_OPERATIONAL]), 12);
        assert_eq!(combine([EXIT_PROBLEMS, EXIT_PROBLEMS]), EXIT_PROBLEMS);
        assert_eq!(combine([]), EXIT_OK);
    }

    #[test]
    fn usage_errors_are_recognised_through_context() {
        let err = usage("bad").context("while parsing");
        assert_eq!(status_of(&err), EXIT_USAGE);
        assert_eq!(status_of(&anyhow::anyhow!("io")), EXIT_OPERATIONAL);
    }

    #[test]
    fn suggestions_find_near_names() {
        let candidates = ["sb.magic", "sb.checksum", "gd.checksum"];
        assert_eq!(suggest("sb.magik", candidates), Some("sb.magic"));
        assert_eq!(suggest("gd.cheksum", candidates), Some("gd.checksum"));
        assert_eq!(suggest("zzzzzz", candidates), None);
    }
}
