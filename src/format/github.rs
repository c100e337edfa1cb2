//! GitHub Actions workflow commands (`::error file=F,title=T::message`), which the runner turns
//! into annotations on the run and the pull request.
//!
//! Escaping follows the runner's rules for workflow commands: in the message, `%`, CR and LF
//! become `%25`, `%0D`, `%0A`; in property values, also `:` and `,` (`%3A`, `%2C`), which
//! otherwise end the value.

use std::io::{self, Write};

/// The annotation level (`::error`, `::warning`, `::notice`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// `::error`: fails nothing by itself, shown in red.
    Error,
    /// `::warning`.
    Warning,
    /// `::notice`.
    Notice,
}

impl Level {
    /// The command name.
    pub fn command(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Notice => "notice",
        }
    }
}

/// One annotation.
#[derive(Clone, Debug)]
pub struct Annotation<'a> {
    /// Error, warning or notice.
    pub level: Level,
    /// The file the annotation is about (the image path).
    pub file: &'a str,
    /// The title (the rule ID).
    pub title: &'a str,
    /// The text (may contain newlines; escaped when written).
    pub message: &'a str,
}

/// Escape a message (the data after `::`).
pub fn escape_data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            character => out.push(character),
        }
    }
    out
}

/// Escape a property value (`file=`, `title=`).
pub fn escape_property(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in escape_data(text).chars() {
        match character {
            ':' => out.push_str("%3A"),
            ',' => out.push_str("%2C"),
            character => out.push(character),
        }
    }
    out
}

/// Write one annotation as a workflow command line.
pub fn write_annotation(out: &mut dyn Write, annotation: &Annotation<'_>) -> io::Result<()> {
    writeln!(
        out,
        "::{} file={},title={}::{}",
        annotation.level.command(),
        escape_property(annotation.file),
        escape_property(annotation.title),
        escape_data(annotation.message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_the_runner_expects() {
        assert_eq!(escape_data("100% a\r\nb: c,d"), "100%25 a%0D%0Ab: c,d");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }

    #[test]
    fn one_line_per_annotation() {
        let mut out = Vec::new();
        let annotation = Annotation {
            level: Level::Error,
            file: "dir/x,y.img",
            title: "sb.magic",
            message: "bad\nmagic",
        };
        write_annotation(&mut out, &annotation).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "::error file=dir/x%2Cy.img,title=sb.magic::bad%0Amagic\n"
        );
    }
}
