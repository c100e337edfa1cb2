//! `check` findings as compiler-style lines, the shape editors, CI log scanners and
//! `grep`/`awk` already understand:
//!
//! ```text
//! IMAGE: error[RULE] group N, inode M (PATH): message
//! ```
//!
//! The location part names only what the finding has (`group N`, `inode M`, the paths that reach
//! the inode); with none, the line is `IMAGE: error[RULE]: message`.

use crate::check::Finding;

/// Where a finding is: `group 3, inode 12 (/a/b, /c)`, or empty.
pub fn location(f: &Finding) -> String {
    let mut parts = Vec::new();
    if let Some(g) = f.group {
        parts.push(format!("group {g}"));
    }
    if let Some(i) = f.inode {
        parts.push(format!("inode {i}"));
    }
    let mut s = parts.join(", ");
    if !f.paths.is_empty() {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push('(');
        s.push_str(&f.paths.join(", "));
        s.push(')');
    }
    s
}

/// The finding's location and message: `group 3, inode 12 (/a): message`, or the message alone.
pub fn located_message(f: &Finding) -> String {
    let at = location(f);
    if at.is_empty() {
        f.message.clone()
    } else {
        format!("{at}: {}", f.message)
    }
}

/// The whole line (without newline): `IMAGE: error[RULE] group N, inode M (PATH): message`.
pub fn line(image: &str, f: &Finding) -> String {
    let at = location(f);
    let sep = if at.is_empty() { "" } else { " " };
    format!(
        "{image}: {}[{}]{sep}{at}: {}",
        f.severity.name(),
        f.rule,
        f.message
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{RuleId, Severity};

    #[test]
    fn lines_name_image_severity_rule_and_place() {
        let mut f = Finding::inode(RuleId::InodeMode, 0, 12, "bad mode");
        f.paths = vec!["/a".into(), "/b".into()];
        assert_eq!(
            line("x.img", &f),
            "x.img: error[inode.mode] group 0, inode 12 (/a, /b): bad mode"
        );
        let g = Finding::new(RuleId::GdChecksum, Some(3), "crc");
        assert_eq!(line("x.img", &g), "x.img: error[gd.checksum] group 3: crc");
        let mut s = Finding::new(RuleId::SbMagic, None, "magic");
        s.severity = Severity::Warning;
        assert_eq!(line("x.img", &s), "x.img: warning[sb.magic]: magic");
        assert_eq!(located_message(&g), "group 3: crc");
    }
}
