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
    fn count(&self, f: impl Fn(&Case) -> bool) -> usize {
        self.cases.iter().filter(|c| f(c)).count()
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
pub fn xml_safe(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

fn start<'a>(name: &'a str, attrs: &[(&str, String)]) -> BytesStart<'a> {
    let mut e = BytesStart::new(name);
    for (k, v) in attrs {
        e.push_attribute((*k, xml_safe(v).as_str()));
    }
    e
}

fn element<W: Write>(
    w: &mut Writer<W>,
    name: &str,
    attrs: &[(&str, String)],
    text: &str,
) -> io::Result<()> {
    let e = start(name, attrs);
    if text.is_empty() {
        return w.write_event(Event::Empty(e));
    }
    w.write_event(Event::Start(e))?;
    w.write_event(Event::Text(BytesText::new(&xml_safe(text))))?;
    w.write_event(Event::End(BytesEnd::new(name)))
}

fn write_problem<W: Write>(w: &mut Writer<W>, tag: &str, p: &Problem) -> io::Result<()> {
    let attrs = [("message", p.message.clone()), ("type", p.kind.clone())];
    element(w, tag, &attrs, &p.text)
}

fn write_case<W: Write>(w: &mut Writer<W>, c: &Case) -> io::Result<()> {
    let attrs = [
        ("name", c.name.clone()),
        ("classname", c.classname.clone()),
        ("time", "0".to_string()),
    ];
    let empty =
        c.failures.is_empty() && c.errors.is_empty() && c.skipped.is_none() && c.output.is_empty();
    if empty {
        return w.write_event(Event::Empty(start("testcase", &attrs)));
    }
    w.write_event(Event::Start(start("testcase", &attrs)))?;
    if let Some(why) = &c.skipped {
        element(w, "skipped", &[("message", why.clone())], "")?;
    }
    for p in &c.errors {
        write_problem(w, "error", p)?;
    }
    for p in &c.failures {
        write_problem(w, "failure", p)?;
    }
    if !c.output.is_empty() {
        element(w, "system-out", &[], &c.output)?;
    }
    w.write_event(Event::End(BytesEnd::new("testcase")))
}

fn write_suite<W: Write>(w: &mut Writer<W>, s: &Suite) -> io::Result<()> {
    let attrs = [
        ("name", s.name.clone()),
        ("tests", s.cases.len().to_string()),
        ("failures", s.failures().to_string()),
        ("errors", s.errors().to_string()),
        ("skipped", s.skipped().to_string()),
        ("time", "0".to_string()),
    ];
    w.write_event(Event::Start(start("testsuite", &attrs)))?;
    for c in &s.cases {
        write_case(w, c)?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuite")))
}

/// Write the report as an XML document (UTF-8, indented, ending in a newline).
pub fn write(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    let mut w = Writer::new_with_indent(&mut *out, b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let sum = |f: fn(&Suite) -> usize| r.suites.iter().map(f).sum::<usize>().to_string();
    let attrs = [
        ("name", r.name.clone()),
        ("tests", sum(|s| s.cases.len())),
        ("failures", sum(Suite::failures)),
        ("errors", sum(Suite::errors)),
        ("time", "0".to_string()),
    ];
    w.write_event(Event::Start(start("testsuites", &attrs)))?;
    for s in &r.suites {
        write_suite(&mut w, s)?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
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
        let s = String::from_utf8(out).unwrap();
        assert!(
            s.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"),
            "{s}"
        );
        assert!(
            s.contains("name=\"a&lt;b&gt;&amp;&quot;c&quot;.img\""),
            "{s}"
        );
        assert!(s.contains("bad &amp; &lt;worse&gt;\u{FFFD}"), "{s}");
        assert!(
            s.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""),
            "{s}"
        );
        assert!(
            s.contains("<testcase name=\"gd\" classname=\"x\" time=\"0\"/>"),
            "{s}"
        );
        assert!(!s.contains('\u{1}'));
    }
}
