//! JUnit XML reports, the format CI servers (Jenkins, GitLab, Azure Pipelines, CircleCI, the
//! GitHub test-report actions) ingest: `<testsuites>` of `<testsuite>` of `<testcase>`, a failed
//! case carrying `<failure>` elements, a case that could not run `<error>`, a case not run
//! `<skipped>`. The attributes written are those the Jenkins xunit plugin's `junit-10.xsd`
//! requires or allows (`tests/data/junit.xsd` restates its constraints).
//!
//! Written with quick-xml, which escapes text and attribute values; characters XML 1.0 cannot
//! carry at all (C0 controls other than tab, LF, CR) are replaced by U+FFFD first.

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use std::io::{self, Write};

/// The whole report.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// `<testsuites name=...>`.
    pub name: String,
    /// The test suites, in order.
    pub suites: Vec<Suite>,
}

/// One `<testsuite>`.
#[derive(Clone, Debug, Default)]
pub struct Suite {
    /// `name=`.
    pub name: String,
    /// The test cases, in order.
    pub cases: Vec<Case>,
}

/// One `<testcase>`.
#[derive(Clone, Debug, Default)]
pub struct Case {
    /// `name=`.
    pub name: String,
    /// `classname=` (CI servers group cases by it).
    pub classname: String,
    /// `<failure message=... type=...>text</failure>` elements (the case failed).
    pub failures: Vec<Problem>,
    /// `<error>` elements (the case could not run).
    pub errors: Vec<Problem>,
    /// `<skipped message=...>` (the case did not run).
    pub skipped: Option<String>,
    /// `<system-out>` text (notes that do not fail the case, such as warnings).
    pub output: String,
}

/// A failure or error element.
#[derive(Clone, Debug, Default)]
pub struct Problem {
    /// `message=`: one line.
    pub message: String,
    /// `type=`.
    pub kind: String,
    /// The element's text (the details).
    pub text: String,
}

impl Suite {
    fn count(&self, predicate: impl Fn(&Case) -> bool) -> usize {
        self.cases.iter().filter(|c| predicate(c)).count()
    }
    fn failures(&self) -> usize {
        self.count(|c| !c.failures.is_empty() && c.errors.is_empty())
    }
    fn errors(&self) -> usize {
        self.count(|c| !c.errors.is_empty())
    }
    fn skipped(&self) -> usize {
        self.count(|c| c.skipped.is_some())
    }
}

/// Replace characters XML 1.0 does not allow (C0 controls other than tab, LF, CR; U+FFFE,
/// U+FFFF) with U+FFFD.
pub fn xml_safe(text: &str) -> String {
    text.chars()
        .map(|character| match character {
            '\t' | '\n' | '\r' => character,
            character
                if (character as u32) < 0x20
                    || character == '\u{FFFE}'
                    || character == '\u{FFFF}' =>
            {
                '\u{FFFD}'
            }
            character => character,
        })
        .collect()
}

fn start<'a>(name: &'a str, attrs: &[(&str, String)]) -> BytesStart<'a> {
    let mut tag = BytesStart::new(name);
    for (key, value) in attrs {
        tag.push_attribute((*key, xml_safe(value).as_str()));
    }
    tag
}

fn element<W: Write>(
    writer: &mut Writer<W>,
    name: &str,
    attrs: &[(&str, String)],
    text: &str,
) -> io::Result<()> {
    let tag = start(name, attrs);
    if text.is_empty() {
        return writer.write_event(Event::Empty(tag));
    }
    writer.write_event(Event::Start(tag))?;
    writer.write_event(Event::Text(BytesText::new(&xml_safe(text))))?;
    writer.write_event(Event::End(BytesEnd::new(name)))
}

fn write_problem<W: Write>(writer: &mut Writer<W>, tag: &str, problem: &Problem) -> io::Result<()> {
    let attrs = [
        ("message", problem.message.clone()),
        ("type", problem.kind.clone()),
    ];
    element(writer, tag, &attrs, &problem.text)
}

fn write_case<W: Write>(writer: &mut Writer<W>, case: &Case) -> io::Result<()> {
    let attrs = [
        ("name", case.name.clone()),
        ("classname", case.classname.clone()),
        ("time", "0".to_string()),
    ];
    let empty = case.failures.is_empty()
        && case.errors.is_empty()
        && case.skipped.is_none()
        && case.output.is_empty();
    if empty {
        return writer.write_event(Event::Empty(start("testcase", &attrs)));
    }
    writer.write_event(Event::Start(start("testcase", &attrs)))?;
    if let Some(why) = &case.skipped {
        element(writer, "skipped", &[("message", why.clone())], "")?;
    }
    for problem in &case.errors {
        write_problem(writer, "error", problem)?;
    }
    for problem in &case.failures {
        write_problem(writer, "failure", problem)?;
    }
    if !case.output.is_empty() {
        element(writer, "system-out", &[], &case.output)?;
    }
    writer.write_event(Event::End(BytesEnd::new("testcase")))
}

fn write_suite<W: Write>(writer: &mut Writer<W>, suite: &Suite) -> io::Result<()> {
    let attrs = [
        ("name", suite.name.clone()),
        ("tests", suite.cases.len().to_string()),
        ("failures", suite.failures().to_string()),
        ("errors", suite.errors().to_string()),
        ("skipped", suite.skipped().to_string()),
        ("time", "0".to_string()),
    ];
    writer.write_event(Event::Start(start("testsuite", &attrs)))?;
    for case in &suite.cases {
        write_case(writer, case)?;
    }
    writer.write_event(Event::End(BytesEnd::new("testsuite")))
}

/// Write the report as an XML document (UTF-8, indented, ending in a newline).
pub fn write(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let mut writer = Writer::new_with_indent(&mut *out, b' ', 2);
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let sum = |f: fn(&Suite) -> usize| report.suites.iter().map(f).sum::<usize>().to_string();
    let attrs = [
        ("name", report.name.clone()),
        ("tests", sum(|s| s.cases.len())),
        ("failures", sum(Suite::failures)),
        ("errors", sum(Suite::errors)),
        ("time", "0".to_string()),
    ];
    writer.write_event(Event::Start(start("testsuites", &attrs)))?;
    for suite in &report.suites {
        write_suite(&mut writer, suite)?;
    }
    writer.write_event(Event::End(BytesEnd::new("testsuites")))?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        Report {
            name: "e4inspect check".into(),
            suites: vec![Suite {
                name: "a<b>&\"c\".img".into(),
                cases: vec![
                    Case {
                        name: "sb".into(),
                        classname: "x".into(),
                        failures: vec![Problem {
                            message: "1 error".into(),
                            kind: "error".into(),
                            text: "bad & <worse>\u{1}\n".into(),
                        }],
                        ..Case::default()
                    },
                    Case {
                        name: "gd".into(),
                        classname: "x".into(),
                        ..Case::default()
                    },
                    Case {
                        name: "inode".into(),
                        classname: "x".into(),
                        skipped: Some("--quick".into()),
                        ..Case::default()
                    },
                ],
            }],
        }
    }

    #[test]
    fn escapes_and_counts() {
        let mut out = Vec::new();
        write(&mut out, &sample()).unwrap();
        let xml = String::from_utf8(out).unwrap();
        assert!(
            xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"),
            "{xml}"
        );
        assert!(
            xml.contains("name=\"a&lt;b&gt;&amp;&quot;c&quot;.img\""),
            "{xml}"
        );
        assert!(xml.contains("bad &amp; &lt;worse&gt;\u{FFFD}"), "{xml}");
        assert!(
            xml.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""),
            "{xml}"
        );
        assert!(
            xml.contains("<testcase name=\"gd\" classname=\"x\" time=\"0\"/>"),
            "{xml}"
        );
        assert!(!xml.contains('\u{1}'));
    }
}
