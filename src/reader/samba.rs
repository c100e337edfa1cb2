//! Samba's xattrs: `user.DOSATTRIB` (`xattr_DOSATTRIB`, librpc/idl/xattr.idl and the hand-written
//! `ndr_pull_xattr_DOSATTRIB` of librpc/ndr/ndr_xattr.c) and `security.NTACL` (`xattr_NTACL` holding
//! a `security_descriptor`, librpc/idl/security.idl), pulled with the bounded [`NdrPull`] reader,
//! and the descriptor written as SDDL the way Samba's `sddl_encode` (libcli/security/sddl.c)
//! writes it.

use crate::error::Result;
use crate::reader::ndr::NdrPull;
use serde::Serialize;

/// The xattr name Samba stores DOS attributes under on Linux.
pub const DOSATTRIB_NAME: &str = "user.DOSATTRIB";
/// The xattr name Samba stores NT ACLs under.
pub const NTACL_NAME: &str = "security.NTACL";

/// 100 ns intervals between 1601-01-01 (NTTIME's epoch) and 1970-01-01.
const NTTIME_UNIX_EPOCH: u64 = 116_444_736_000_000_000;

/// An NTTIME: 100-nanosecond intervals since 1601-01-01 UTC.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NtTime {
    /// As stored.
    pub nttime: u64,
    /// The instant in ISO 8601 UTC; null for 0 (Samba's "not set").
    pub utc: Option<String>,
}

impl NtTime {
    /// Wrap a stored NTTIME.
    pub fn new(nttime: u64) -> NtTime {
        let utc = (nttime != 0).then(|| {
            let since_1601 = nttime / 10_000_000;
            let secs = since_1601 as i64 - (NTTIME_UNIX_EPOCH / 10_000_000) as i64;
            let nsec = (nttime % 10_000_000) as u32 * 100;
            crate::reader::time::iso8601_utc(secs, nsec)
        });
        NtTime { nttime, utc }
    }
}

/// `FILE_ATTRIBUTE_*` bits and their names, as [MS-FSCC] 2.6 names them.
pub const FILE_ATTRIBUTES: &[(u32, &str)] = &[
    (0x0001, "READONLY"),
    (0x0002, "HIDDEN"),
    (0x0004, "SYSTEM"),
    (0x0010, "DIRECTORY"),
    (0x0020, "ARCHIVE"),
    (0x0040, "DEVICE"),
    (0x0080, "NORMAL"),
    (0x0100, "TEMPORARY"),
    (0x0200, "SPARSE_FILE"),
    (0x0400, "REPARSE_POINT"),
    (0x0800, "COMPRESSED"),
    (0x1000, "OFFLINE"),
    (0x2000, "NOT_CONTENT_INDEXED"),
    (0x4000, "ENCRYPTED"),
    (0x8000, "INTEGRITY_STREAM"),
    (0x0002_0000, "NO_SCRUB_DATA"),
];

/// The names of the `FILE_ATTRIBUTE_*` bits set in `attrib` (unknown bits as hex).
pub fn file_attribute_names(attrib: u32) -> Vec<String> {
    let mut names: Vec<String> = FILE_ATTRIBUTES
        .iter()
        .filter(|(bit, _)| attrib & bit != 0)
        .map(|(_, n)| (*n).to_string())
        .collect();
    let known = FILE_ATTRIBUTES.iter().fold(0, |a, (b, _)| a | b);
    if attrib & !known != 0 {
        names.push(format!("{:#x}", attrib & !known));
    }
    names
}

/// `xattr_DosInfoValidFlags` bits (v3 to v5).
pub const DOSINFO_VALID_FLAGS: &[(u32, &str)] = &[
    (0x01, "ATTRIB"),
    (0x02, "EA_SIZE"),
    (0x04, "SIZE"),
    (0x08, "ALLOC_SIZE"),
    (0x10, "CREATE_TIME"),
    (0x20, "CHANGE_TIME"),
    (0x40, "ITIME"),
];

/// A decoded `user.DOSATTRIB` (`xattr_DOSATTRIB`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DosAttrib {
    /// The union level: 1 to 5, or 65535 for the old form that holds only the hex string.
    pub version: u16,
    /// The leading `attrib_hex` string (`0x20`; empty from version 4 on).
    pub attrib_hex: String,
    /// `FILE_ATTRIBUTE_*` bits.
    pub attrib: u32,
    /// Their names (`ARCHIVE`, `HIDDEN` ...).
    pub attrib_names: Vec<String>,
    /// `valid_flags` (versions 3 to 5): which fields hold values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_flags: Option<u32>,
    /// The names of the `valid_flags` bits set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_flag_names: Option<Vec<String>>,
    /// `flags` of version 2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<u32>,
    /// `ea_size` (versions 1 to 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ea_size: Option<u32>,
    /// `size` (versions 1 to 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// `alloc_size` (versions 1 to 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc_size: Option<u64>,
    /// The Windows creation (birth) time (versions 1 to 5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create_time: Option<NtTime>,
    /// `change_time` (versions 1 to 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_time: Option<NtTime>,
    /// `write_time` (version 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_time: Option<NtTime>,
    /// `itime`, the file's identity time Samba derives the file id from (version 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub itime: Option<NtTime>,
    /// `name` of version 2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Parse the old Samba 3 form's hex string as `sscanf("%x")` does: leading white space, an
/// optional `0x`, then hex digits (at least one); what follows them is ignored.
fn scan_hex(s: &[u8]) -> Option<u32> {
    let s = s.trim_ascii_start();
    let s = s
        .strip_prefix(b"0x")
        .or_else(|| s.strip_prefix(b"0X"))
        .filter(|r| r.first().is_some_and(u8::is_ascii_hexdigit))
        .unwrap_or(s);
    let digits: Vec<u8> = s
        .iter()
        .copied()
        .take_while(u8::is_ascii_hexdigit)
        .collect();
    if digits.is_empty() {
        return None;
    }
    // %x into an unsigned int keeps the low 32 bits of an over-long number.
    Some(digits.iter().fold(0u32, |acc, &d| {
        acc.wrapping_shl(4) | (d as char).to_digit(16).unwrap_or(0)
    }))
}

fn empty_dosattrib(version: u16, attrib_hex: String, attrib: u32) -> DosAttrib {
    DosAttrib {
        version,
        attrib_hex,
        attrib,
        attrib_names: file_attribute_names(attrib),
        valid_flags: None,
        valid_flag_names: None,
        flags: None,
        ea_size: None,
        size: None,
        alloc_size: None,
        create_time: None,
        change_time: None,
        write_time: None,
        itime: None,
        name: None,
    }
}

/// Decode a `user.DOSATTRIB` value as Samba's `ndr_pull_xattr_DOSATTRIB` does: the `attrib_hex`
/// string, then (unless the value ends there: the old form, version 0xFFFF) the version, the union
/// level (which must equal it) and the `xattr_DosInfo` arm. Bytes after the arm are ignored, as
/// Samba's `ndr_pull_struct_blob` ignores them.
pub fn decode_dosattrib(v: &[u8]) -> Result<DosAttrib> {
    let mut n = NdrPull::new(v, DOSATTRIB_NAME);
    let hex = n.nul_string("attrib_hex")?;
    let attrib_hex = String::from_utf8_lossy(hex).into_owned();
    if n.remaining() == 0 {
        let attrib = scan_hex(hex)
            .ok_or_else(|| n.error(format!("attrib_hex {attrib_hex:?} is not a hex number")))?;
        return Ok(empty_dosattrib(0xFFFF, attrib_hex, attrib));
    }
    let version = n.u16("version")?;
    let level = n.u16("union level")?;
    if level != version {
        return Err(n.error(format!(
            "union level {level} differs from version {version}"
        )));
    }
    n.align(4)?;
    let mut d = empty_dosattrib(version, attrib_hex, 0);
    match version {
        1 | 3 => {
            if version == 3 {
                d.valid_flags = Some(n.u32("valid_flags")?);
            }
            d.attrib = n.u32("attrib")?;
            d.ea_size = Some(n.u32("ea_size")?);
            d.size = Some(n.udlong("size")?);
            d.alloc_size = Some(n.udlong("alloc_size")?);
            d.create_time = Some(NtTime::new(n.udlong("create_time")?));
            d.change_time = Some(NtTime::new(n.udlong("change_time")?));
        }
        2 => {
            d.flags = Some(n.u32("flags")?);
            d.attrib = n.u32("attrib")?;
            d.ea_size = Some(n.u32("ea_size")?);
            d.size = Some(n.udlong("size")?);
            d.alloc_size = Some(n.udlong("alloc_size")?);
            d.create_time = Some(NtTime::new(n.udlong("create_time")?));
            d.change_time = Some(NtTime::new(n.udlong("change_time")?));
            d.write_time = Some(NtTime::new(n.udlong("write_time")?));
            d.name = Some(String::from_utf8_lossy(n.nul_string("name")?).into_owned());
        }
        4 => {
            d.valid_flags = Some(n.u32("valid_flags")?);
            d.attrib = n.u32("attrib")?;
            d.itime = Some(NtTime::new(n.udlong("itime")?));
            d.create_time = Some(NtTime::new(n.udlong("create_time")?));
        }
        5 => {
            d.valid_flags = Some(n.u32("valid_flags")?);
            d.attrib = n.u32("attrib")?;
            d.create_time = Some(NtTime::new(n.udlong("create_time")?));
        }
        _ => return Err(n.error(format!("unknown version {version}"))),
    }
    d.attrib_names = file_attribute_names(d.attrib);
    d.valid_flag_names = d.valid_flags.map(|f| {
        DOSINFO_VALID_FLAGS
            .iter()
            .filter(|(b, _)| f & b != 0)
            .map(|(_, n)| (*n).to_string())
            .collect()
    });
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn dosattrib_versions_as_samba_packs_them() {
        // python3-samba 4.17: ndr_pack(xattr.DOSATTRIB) of each version.
        let v3 = unhex("3078323000000300030000001100000020000000000000000000000000000000000000000000000000005af64cf5d4010000000000000000");
        let d = decode_dosattrib(&v3).unwrap();
        assert_eq!((d.version, d.attrib, d.valid_flags), (3, 0x20, Some(0x11)));
        assert_eq!(d.attrib_hex, "0x20");
        let ct = d.create_time.unwrap();
        assert_eq!(ct.nttime, 132_000_000_000_000_000);
        assert_eq!(ct.utc.as_deref(), Some("2019-04-17T18:40:00Z"));
        assert_eq!(d.attrib_names, vec!["ARCHIVE"]);
        let v4 = unhex("00000400040000005100000021000000010000000000000000005af64cf5d401");
        let d = decode_dosattrib(&v4).unwrap();
        assert_eq!((d.version, d.attrib), (4, 0x21));
        assert_eq!(d.itime.unwrap().nttime, 1);
        let v5 = unhex("0000050005000000110000002200000000005af64cf5d401");
        let d = decode_dosattrib(&v5).unwrap();
        assert_eq!((d.version, d.attrib), (5, 0x22));
        assert_eq!(d.attrib_names, vec!["HIDDEN", "ARCHIVE"]);
        for cut in 0..v5.len() {
            assert!(decode_dosattrib(&v5[..cut]).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn dosattrib_old_form_and_errors() {
        let d = decode_dosattrib(b"0x21\0").unwrap();
        assert_eq!((d.version, d.attrib), (0xFFFF, 0x21));
        assert_eq!(decode_dosattrib(b" 1f\0").unwrap().attrib, 0x1f);
        assert!(decode_dosattrib(b"zz\0").is_err());
        assert!(decode_dosattrib(b"0x20").is_err());
        assert!(decode_dosattrib(&[0, 0, 9, 0, 9, 0, 0, 0, 1, 2, 3, 4]).is_err());
        assert!(decode_dosattrib(&[0, 0, 5, 0, 4, 0]).is_err());
        assert_eq!(NtTime::new(0).utc, None);
        assert_eq!(
            NtTime::new(NTTIME_UNIX_EPOCH + 5).utc.as_deref(),
            Some("1970-01-01T00:00:00.000000500Z")
        );
        assert_eq!(
            NtTime::new(1).utc.as_deref(),
            Some("1601-01-01T00:00:00.000000100Z")
        );
        assert!(NtTime::new(u64::MAX).utc.is_some());
    }
}
