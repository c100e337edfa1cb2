//! Tables: the one place every command's tables are styled and laid out.
//!
//! Off a terminal (a pipe, a file) a table is printed at its natural width, one line per row, as
//! `ls -l` and ripgrep do, so `| grep` and `| cut` see whole rows, whatever `COLUMNS` says (a
//! shell or a test harness exporting it must not squeeze a pipe). On a terminal it fits the
//! width (`COLUMNS` when set, else the terminal's): the columns keep their content width and
//! only the longest one (the last of equals; descriptions and sources sit last) wraps. Borders are box drawing only when the locale's character type is UTF-8
//! (`LC_ALL`, then `LC_CTYPE`, then `LANG`, the POSIX order) and the terminal is not
//! `TERM=dumb`; otherwise ASCII. No colour is used, so `NO_COLOR` needs nothing here.

use comfy_table::{presets, ContentArrangement, Table};
use std::ops::{Deref, DerefMut};

/// Narrowest width honoured (narrower `COLUMNS` values are raised to this).
pub const MIN_WIDTH: u16 = 20;

/// How tables are drawn: decided once from the environment ([`TableStyle::detect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableStyle {
    /// Total width in columns the table must fit in; `None` off a terminal: natural width.
    pub width: Option<u16>,
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
    /// `TERM`) and the terminal width if stdout is a terminal (`None` off a terminal: natural
    /// width, `COLUMNS` or not).
    pub fn from_env(env: impl Fn(&str) -> Option<String>, terminal: Option<u16>) -> TableStyle {
        let columns = env("COLUMNS")
            .and_then(|c| c.trim().parse::<u16>().ok())
            .filter(|&c| c > 0);
        // (A terminal of unknown size, 0: COLUMNS, else natural width.)
        let width = terminal
            .and_then(|t| columns.or((t > 0).then_some(t)))
            .map(|w| w.max(MIN_WIDTH));
        let dumb = env("TERM").is_some_and(|t| t == "dumb");
        TableStyle {
            width,
            unicode: !dumb && utf8_locale(&env),
        }
    }

    /// A new table in this style with `header`.
    pub fn table<S: AsRef<str>>(&self, header: &[S]) -> Styled {
        let mut table = Table::new();
        table.load_preset(if self.unicode {
            presets::UTF8_FULL_CONDENSED
        } else {
            presets::ASCII_FULL_CONDENSED
        });
        match self.width {
            Some(width) => {
                table.set_content_arrangement(ContentArrangement::Dynamic);
                table.set_width(width);
            }
            None => {
                table.set_content_arrangement(ContentArrangement::Disabled);
            }
        }
        if !header.is_empty() {
            table.set_header(header.iter().map(AsRef::as_ref).collect::<Vec<&str>>());
        }
        Styled {
            table,
            fit: self.width.is_some(),
        }
    }
}

/// A table in the process's style: fill it through `Deref` to [`comfy_table::Table`], print it
/// with `Display`, which lays it out for where it is going.
#[derive(Debug)]
pub struct Styled {
    table: Table,
    /// Fit a width (a terminal): only the longest column wraps.
    fit: bool,
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
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.fit {
            return self.table.fmt(formatter);
        }
        let mut table = self.table.clone();
        let widths = content_widths(&table);
        // The column that wraps: the widest (the last of equals); the others keep their width
        // when that leaves the wrapping column room (else every column may wrap).
        let wrapping = widths
            .iter()
            .enumerate()
            .max_by_key(|&(i, w)| (*w, i))
            .map(|(i, _)| i);
        let width = usize::from(table.width().unwrap_or(u16::MAX));
        // A condensed table draws one border before each column and one after the last, with a
        // space of padding on either side of each cell.
        let others: usize = widths
            .iter()
            .enumerate()
            .filter(|&(i, _)| Some(i) != wrapping)
            .map(|(_, w)| w + 3)
            .sum();
        if others + 1 + 3 + MIN_WRAPPED <= width {
            for index in (0..widths.len()).filter(|&index| Some(index) != wrapping) {
                if let Some(column) = table.column_mut(index) {
                    column.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
                }
            }
        }
        table.fmt(formatter)
    }
}

/// The narrowest a wrapping column may become before the other columns wrap too.
const MIN_WRAPPED: usize = 16;

/// The widest line of each column's cells, header included (in characters).
fn content_widths(table: &Table) -> Vec<usize> {
    let mut widths = vec![0usize; table.column_iter().count()];
    let rows = table.header().into_iter().chain(table.row_iter());
    for row in rows {
        for (index, cell) in row.cell_iter().enumerate() {
            let widest = cell
                .content()
                .lines()
                .map(|l| l.chars().count())
                .max()
                .unwrap_or(0);
            if let Some(width) = widths.get_mut(index) {
                *width = (*width).max(widest);
            }
        }
    }
    widths
}

/// A new table without header, styled for this process's terminal and locale.
pub fn styled() -> Styled {
    TableStyle::detect().table::<&str>(&[])
}

/// Never wrap the cells of `columns` (identifiers such as rule IDs and attribute names, which
/// must stay greppable), even when one of them is the longest column.
pub fn no_wrap(table: &mut Table, columns: &[usize]) {
    for &index in columns {
        if let Some(column) = table.column_mut(index) {
            column.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
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
        .is_some_and(|value| {
            let lower = value.to_ascii_lowercase();
            lower.contains("utf-8") || lower.contains("utf8")
        })
}

/// True when this process's locale is UTF-8 and the terminal is not `TERM=dumb` (the same test
/// the tables use; progress bars use it for their spinner and bar characters).
pub fn unicode_ok() -> bool {
    TableStyle::detect().unicode
}

/// The width of the terminal on stdout (0 when it cannot say), when stdout is a terminal.
fn stdout_terminal_width() -> Option<u16> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    // comfy-table asks the terminal when it draws to one and no width is set (0: it cannot say).
    Some(Table::new().width().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |key| {
            vars.iter()
                .find(|(n, _)| *n == key)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn width_on_a_terminal_prefers_columns_and_off_one_is_natural() {
        assert_eq!(
            TableStyle::from_env(env(&[("COLUMNS", "120")]), Some(60)).width,
            Some(120)
        );
        assert_eq!(TableStyle::from_env(env(&[]), Some(60)).width, Some(60));
        assert_eq!(TableStyle::from_env(env(&[]), None).width, None);
        // Off a terminal COLUMNS is not a request: a pipe gets whole rows.
        assert_eq!(
            TableStyle::from_env(env(&[("COLUMNS", "80")]), None).width,
            None
        );
        assert_eq!(
            TableStyle::from_env(env(&[("COLUMNS", "x")]), Some(70)).width,
            Some(70)
        );
        assert_eq!(
            TableStyle::from_env(env(&[("COLUMNS", "5")]), Some(70)).width,
            Some(MIN_WIDTH)
        );
    }

    #[test]
    fn borders_follow_locale_and_term() {
        let utf8 = [("LANG", "en_US.UTF-8")];
        assert!(TableStyle::from_env(env(&utf8), None).unicode);
        assert!(!TableStyle::from_env(env(&[("LANG", "C")]), None).unicode);
        assert!(!TableStyle::from_env(env(&[]), None).unicode);
        // LC_ALL overrides LANG; an empty LC_ALL does not.
        let vars = [("LC_ALL", "C"), ("LANG", "en_US.UTF-8")];
        assert!(!TableStyle::from_env(env(&vars), None).unicode);
        let vars = [("LC_ALL", ""), ("LC_CTYPE", "C.utf8")];
        assert!(TableStyle::from_env(env(&vars), None).unicode);
        let vars = [("LANG", "en_US.UTF-8"), ("TERM", "dumb")];
        assert!(!TableStyle::from_env(env(&vars), None).unicode);
    }

    #[test]
    fn tables_fit_the_width_and_wrap() {
        let style = TableStyle {
            width: Some(40),
            unicode: false,
        };
        let mut table = style.table(&["rule", "description"]);
        table.add_row(vec!["sb.magic", &"a long description ".repeat(10)]);
        no_wrap(&mut table, &[0]);
        table.add_row(vec!["a.rule_id_that_is_long", "x"]);
        let text = table.to_string();
        assert!(text.lines().count() > 4, "{text}");
        assert!(text.contains("a.rule_id_that_is_long"), "{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= 40, "{line:?}");
            assert!(line.is_ascii(), "{line:?}");
        }
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    fn rows(style: TableStyle) -> String {
        let mut table = style.table(&["id", "size", "note"]);
        table.add_row(vec!["a.first", "12", &"a long note ".repeat(12)]);
        table.add_row(vec!["b.second", "3456", "short"]);
        table.to_string()
    }

    #[test]
    fn natural_width_keeps_one_line_per_row() {
        let text = rows(TableStyle {
            width: None,
            unicode: false,
        });
        // Top border, header, separator, two rows, bottom border.
        assert_eq!(text.lines().count(), 6, "{text}");
        assert!(
            text.contains(&"a long note ".repeat(12).trim_end().to_string()),
            "{text}"
        );
    }

    #[test]
    fn a_terminal_wraps_only_the_longest_column() {
        let text = rows(TableStyle {
            width: Some(50),
            unicode: false,
        });
        assert!(text.lines().count() > 6, "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 50), "{text}");
        // The short columns are whole on the row's first line.
        assert!(
            text.lines()
                .any(|l| l.contains("a.first") && l.contains("12")),
            "{text}"
        );
        assert!(
            text.lines()
                .any(|l| l.contains("b.second") && l.contains("3456")),
            "{text}"
        );
    }
}
