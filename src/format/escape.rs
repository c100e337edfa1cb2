//! Escaping of bytes read from disk for text output, as debugfs escapes them: `print_c_string`
//! (`lib/support/cstring.c`, used by `stat` and `ea_list` for xattr names and values), so no
//! control byte or escape sequence reaches the terminal.

use std::fmt::Write as _;

/// debugfs' `print_c_string`: `\n`, `\t`, `\\`, `\'`, `\"` and friends, other bytes outside
/// 32..=126 as three octal digits (`\033`).
pub fn c_string(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &byte in bytes {
        match byte {
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            12 => out.push_str("\\f"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            11 => out.push_str("\\v"),
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            b'"' => out.push_str("\\\""),
            byte if !(32..=126).contains(&byte) => {
                let _ = write!(out, "\\{byte:03o}");
            }
            byte => out.push(byte as char),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_bytes_never_pass() {
        assert_eq!(c_string(b"user.a\x1b[31m\n"), "user.a\\033[31m\\n");
        assert_eq!(c_string("é".as_bytes()), "\\303\\251");
        assert!(c_string(&(0u8..=255).collect::<Vec<_>>())
            .bytes()
            .all(|c| (32..=126).contains(&c)));
    }
}
