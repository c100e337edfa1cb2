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
pub fn location(finding: &Finding) -> String {
    let mut parts = Vec::new();
    if let Some(group) = finding.group {
        parts.push(format!("group {group}"));
    }
    if let Some(ino) = finding.inode {
        parts.push(format!("inode {ino}"));
    }
    let mut text = parts.join(", ");
    if !finding.paths.is_empty() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push('(');
        text.push_str(&finding.paths.join(", "));
        text.push(')');
    }
    text
}

/// The finding's location and message: `group 3, inode 12 (/a): message`, or the message alone.
pub fn located_message(finding: &Finding) -> String {
    let at = location(finding);
    if at.is_empty() {
        finding.message.clone()
    } else {
        format!("{at}: {}", finding.message)
    }
}

/// The whole line (without newline): `IMAGE: error[RULE] group N, inode M (PATH): message`.
pub fn line(image: &str, finding: &Finding) -> String {
    let at = location(finding);
    let sep = if at.is_empty() { "" } else { " " };
    format!(
        "{image}: {}[{}]{sep}{at}: {}",
        finding.severity.name(),
        finding.rule,
        finding.message
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{RuleId, Severity};

    #[test]
    fn lines_name_image_severity_rule_and_place() {
        let mut inode_finding = Finding::inode(RuleId::InodeMode, 0, 12, "bad mode");
        inode_finding.paths = vec!["/a".into(), "/b".into()];
        assert_eq!(
            line("x.img", &inode_finding),
            "x.img: error[inode.mode] group 0, inode 12 (/a, /b): bad mode"
        );
        let group_finding = Finding::new(RuleId::GdChecksum, Some(3), "crc");
        assert_eq!(
            line("x.img", &group_finding),
            "x.img: error[gd.checksum] group 3: crc"
        );
        let mut sb_finding = Finding::new(RuleId::SbMagic, None, "magic");
        sb_finding.severity = Severity::Warning;
        assert_eq!(
            line("x.img", &sb_finding),
            "x.img: warning[sb.magic]: magic"
        );
        assert_eq!(located_message(&group_finding), "group 3: crc");
    }
}
