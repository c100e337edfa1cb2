//! Tables that fit the terminal: the one place every command's tables are styled.
//!
//! The width is `COLUMNS` when set (as shells export it), else the width of the terminal on
//! stdout, else 80 columns (a pipe or a file: a fixed width, so output does not depend on where it
//! was captured). Cells wrap to fit (`ContentArrangement::Dynamic`). Borders are box drawing only
//! when the locale's character type is UTF-8 (`LC_ALL`, then `LC_CTYPE`, then `LANG`, the POSIX
//! order) and the terminal is not `TERM=dumb`; otherwise ASCII. No colour is used, so `NO_COLOR`
//! needs nothing here.

use comfy_table::{presets, ContentArrangement, Table};
use std::ops::{Deref, DerefMut};

/// Width used when neither `COLUMNS` nor a terminal says otherwise.
pub const DEFAULT_WIDTH: u16 = 80;
/// Narrowest width honoured (narrower `COLUMNS` values are raised to this).
pub const MIN_WIDTH: u16 = 20;

/// How tables are drawn: decided once from the environment ([`TableStyle::detect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableStyle {
    /// Total width in columns the table must fit in.
    pub width: u16,
    /// Box-drawing borders (else ASCII `+-|`).
    pub unicode: bool,
}

impl TableStyle {
    /// The style for this process: environment variables, and the terminal width when stdout is
    /// a terminal.
    pub fn detect() -> TableStyle {
        let env = |k: &str| std::env::var(k).ok();
        TableStyle::from_env(env, stdout_terminal_width())
    }

    /// The style for an environment given as a lookup (`COLUMNS`, `LC_ALL`, `LC_CTYPE`, `LANG`,
    /// `TERM`) and the terminal width if stdout is a terminal.
    pub fn from_env(env: impl Fn(&str) -> Option<String>, terminal: Option<u16>) -> TableStyle {
        let columns = env("COLUMNS").and_then(|c| c.trim().parse::<u16>().ok());
        let width = columns
            .filter(|&c| c > 0)
            .or(terminal.filter(|&c| c > 0))
            .unwrap_or(DEFAULT_WIDTH)
            .max(MIN_WIDTH);
        let dumb = env("TERM").is_some_and(|t| t == "dumb");
        TableStyle {
            width,
            unicode: !dumb && utf8_locale(&env),
        }
    }

    /// A new table in this style with `header`.
    pub fn table<S: AsRef<str>>(&self, header: &[S]) -> Styled {
        let mut t = Table::new();
        t.load_preset(if self.unicode {
            presets::UTF8_FULL_CONDENSED
        } else {
            presets::ASCII_FULL_CONDENSED
        });
        t.set_content_arrangement(ContentArrangement::Dynamic);
        t.set_width(self.width);
        if !header.is_empty() {
            t.set_header(header.iter().map(AsRef::as_ref).collect::<Vec<&str>>());
        }
        Styled { table: t }
    }
}

/// A table in the process's style: fill it through `Deref` to [`comfy_table::Table`], print it
/// with `Display`, which lays it out for where it is going.
#[derive(Debug)]
pub struct Styled {
    table: Table,
}

impl Deref for Styled {
    type Target = Table;
    fn deref(&self) -> &Table {
        &self.table
    }
}

impl DerefMut for Styled {
    fn deref_mut(&mut self) -> &mut Table {
        &mut self.table
    }
}

impl std::fmt::Display for Styled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.table.fmt(f)
    }
}

/// A new table without header, styled for this process's terminal and locale.
pub fn styled() -> Styled {
    TableStyle::detect().table::<&str>(&[])
}

/// Never wrap the cells of `columns` (identifiers such as rule IDs and attribute names, which
/// must stay greppable); the other columns wrap to make the table fit.
pub fn no_wrap(t: &mut Table, columns: &[usize]) {
    for &i in columns {
        if let Some(c) = t.column_mut(i) {
            c.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
        }
    }
}

/// A new table with `header`, styled for this process's terminal and locale.
pub fn table<S: AsRef<str>>(header: &[S]) -> Styled {
    TableStyle::detect().table(header)
}

/// True when the locale's character type is UTF-8: the first of `LC_ALL`, `LC_CTYPE`, `LANG`
/// that is set and not empty names a UTF-8 codeset (`en_US.UTF-8`, `C.utf8`). Unset means the
/// POSIX locale, which is ASCII.
pub fn utf8_locale(env: &impl Fn(&str) -> Option<String>) -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| env(k).filter(|v| !v.is_empty()))
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

/// True when this process's locale is UTF-8 and the terminal is not `TERM=dumb` (the same test
/// the tables use; progress bars use it for their spinner and bar characters).
pub fn unicode_ok() -> bool {
    TableStyle::detect().unicode
}

/// The width of the terminal on stdout, when stdout is a terminal.
fn stdout_terminal_width() -> Option<u16> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    // comfy-table asks the terminal when it draws to one and no width is set.
    Table::new().width()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn width_prefers_columns_then_terminal_then_80() {
        assert_eq!(
            TableStyle::from_env(env(&[("COLUMNS", "120")]), Some(60)).width,
            120
        );
        assert_eq!(TableStyle::from_env(env(&[]), Some(60)).width, 60);
        assert_eq!(TableStyle::from_env(env(&[]), None).width, 80);
        assert_eq!(
            TableStyle::from_env(env(&[("COLUMNS", "x")]), None).width,
            80
        );
        assert_eq!(
            TableStyle::from_env(env(&[("COLUMNS", "5")]), None).width,
            MIN_WIDTH
        );
    }

    #[test]
    fn borders_follow_locale_and_term() {
        let utf8 = [("LANG", "en_US.UTF-8")];
        assert!(TableStyle::from_env(env(&utf8), None).unicode);
        assert!(!TableStyle::from_env(env(&[("LANG", "C")]), None).unicode);
        assert!(!TableStyle::from_env(env(&[]), None).unicode);
        // LC_ALL overrides LANG; an empty LC_ALL does not.
        let v = [("LC_ALL", "C"), ("LANG", "en_US.UTF-8")];
        assert!(!TableStyle::from_env(env(&v), None).unicode);
        let v = [("LC_ALL", ""), ("LC_CTYPE", "C.utf8")];
        assert!(TableStyle::from_env(env(&v), None).unicode);
        let v = [("LANG", "en_US.UTF-8"), ("TERM", "dumb")];
        assert!(!TableStyle::from_env(env(&v), None).unicode);
    }

    #[test]
    fn tables_fit_the_width_and_wrap() {
        let style = TableStyle {
            width: 40,
            unicode: false,
        };
        let mut t = style.table(&["rule", "description"]);
        t.add_row(vec!["sb.magic", &"a long description ".repeat(10)]);
        no_wrap(&mut t, &[0]);
        t.add_row(vec!["a.rule_id_that_is_long", "x"]);
        let text = t.to_string();
        assert!(text.lines().count() > 4, "{text}");
        assert!(text.contains("a.rule_id_that_is_long"), "{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= 40, "{line:?}");
            assert!(line.is_ascii(), "{line:?}");
        }
    }
}
