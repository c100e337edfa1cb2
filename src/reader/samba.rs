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
            crate::reader::values::iso8601_utc(secs, nsec)
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
fn scan_hex(text: &[u8]) -> Option<u32> {
    let trimmed = text.trim_ascii_start();
    let number = trimmed
        .strip_prefix(b"0x")
        .or_else(|| trimmed.strip_prefix(b"0X"))
        .filter(|r| r.first().is_some_and(u8::is_ascii_hexdigit))
        .unwrap_or(trimmed);
    let digits: Vec<u8> = number
        .iter()
        .copied()
        .take_while(u8::is_ascii_hexdigit)
        .collect();
    if digits.is_empty() {
        return None;
    }
    // %x into an unsigned int keeps the low 32 bits of an over-long number.
    Some(digits.iter().fold(0u32, |acc, &digit| {
        acc.wrapping_shl(4) | (digit as char).to_digit(16).unwrap_or(0)
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

/// The fields `xattr_DosInfo1` and `xattr_DosInfo2` share, in their IDL order (from `attrib`
/// to `change_time`).
fn pull_info_v1_v2(pull: &mut NdrPull<'_>, dosattrib: &mut DosAttrib) -> Result<()> {
    dosattrib.attrib = pull.u32("attrib")?;
    dosattrib.ea_size = Some(pull.u32("ea_size")?);
    dosattrib.size = Some(pull.udlong("size")?);
    dosattrib.alloc_size = Some(pull.udlong("alloc_size")?);
    dosattrib.create_time = Some(NtTime::new(pull.udlong("create_time")?));
    dosattrib.change_time = Some(NtTime::new(pull.udlong("change_time")?));
    Ok(())
}

/// Decode a `user.DOSATTRIB` value as Samba's `ndr_pull_xattr_DOSATTRIB` does: the `attrib_hex`
/// string, then (unless the value ends there: the old form, version 0xFFFF) the version, the union
/// level (which must equal it) and the `xattr_DosInfo` arm. Bytes after the arm are ignored, as
/// Samba's `ndr_pull_struct_blob` ignores them.
pub fn decode_dosattrib(value: &[u8]) -> Result<DosAttrib> {
    let mut pull = NdrPull::new(value, DOSATTRIB_NAME);
    let hex = pull.nul_string("attrib_hex")?;
    let attrib_hex = String::from_utf8_lossy(hex).into_owned();
    if pull.remaining() == 0 {
        let attrib = scan_hex(hex)
            .ok_or_else(|| pull.error(format!("attrib_hex {attrib_hex:?} is not a hex number")))?;
        return Ok(empty_dosattrib(0xFFFF, attrib_hex, attrib));
    }
    let version = pull.u16("version")?;
    let level = pull.u16("union level")?;
    if level != version {
        return Err(pull.error(format!(
            "union level {level} differs from version {version}"
        )));
    }
    pull.align(4)?;
    let mut dosattrib = empty_dosattrib(version, attrib_hex, 0);
    match version {
        1 | 3 => {
            if version == 3 {
                dosattrib.valid_flags = Some(pull.u32("valid_flags")?);
            }
            pull_info_v1_v2(&mut pull, &mut dosattrib)?;
        }
        2 => {
            dosattrib.flags = Some(pull.u32("flags")?);
            pull_info_v1_v2(&mut pull, &mut dosattrib)?;
            dosattrib.write_time = Some(NtTime::new(pull.udlong("write_time")?));
            dosattrib.name = Some(String::from_utf8_lossy(pull.nul_string("name")?).into_owned());
        }
        4 => {
            dosattrib.valid_flags = Some(pull.u32("valid_flags")?);
            dosattrib.attrib = pull.u32("attrib")?;
            dosattrib.itime = Some(NtTime::new(pull.udlong("itime")?));
            dosattrib.create_time = Some(NtTime::new(pull.udlong("create_time")?));
        }
        5 => {
            dosattrib.valid_flags = Some(pull.u32("valid_flags")?);
            dosattrib.attrib = pull.u32("attrib")?;
            dosattrib.create_time = Some(NtTime::new(pull.udlong("create_time")?));
        }
        _ => return Err(pull.error(format!("unknown version {version}"))),
    }
    dosattrib.attrib_names = file_attribute_names(dosattrib.attrib);
    dosattrib.valid_flag_names = dosattrib.valid_flags.map(|valid| {
        DOSINFO_VALID_FLAGS
            .iter()
            .filter(|(b, _)| valid & b != 0)
            .map(|(_, n)| (*n).to_string())
            .collect()
    });
    Ok(dosattrib)
}

/// `SEC_DESC_*` control bits (`security_descriptor_type`).
pub mod sd_control {
    /// `SEC_DESC_DACL_PRESENT`.
    pub const DACL_PRESENT: u16 = 0x0004;
    /// `SEC_DESC_SACL_PRESENT`.
    pub const SACL_PRESENT: u16 = 0x0010;
    /// `SEC_DESC_DACL_AUTO_INHERIT_REQ`.
    pub const DACL_AUTO_INHERIT_REQ: u16 = 0x0100;
    /// `SEC_DESC_DACL_AUTO_INHERITED`.
    pub const DACL_AUTO_INHERITED: u16 = 0x0400;
    /// `SEC_DESC_DACL_PROTECTED`.
    pub const DACL_PROTECTED: u16 = 0x1000;
}

/// Samba's `[range(0,2000)] uint32 num_aces`: more is an NDR range error.
const MAX_ACES: u32 = 2000;
/// `ARRAY_SIZE(dom_sid.sub_auths)`.
const MAX_SUB_AUTHS: u8 = 15;

/// A security identifier as pulled (`struct dom_sid`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct DomSid {
    rev: u8,
    id_auth: [u8; 6],
    sub_auths: Vec<u32>,
}

impl DomSid {
    /// `dom_sid_string`: `S-rev-auth-sub...`, the 48-bit authority in hex (`0x...`) from
    /// `UINT32_MAX` on, as Samba 4.17 writes it.
    fn string(&self) -> String {
        let ia = self
            .id_auth
            .iter()
            .fold(0u64, |a, &b| (a << 8) | u64::from(b));
        let mut text = if ia >= u64::from(u32::MAX) {
            format!("S-{}-{ia:#x}", self.rev)
        } else {
            format!("S-{}-{ia}", self.rev)
        };
        for sa in &self.sub_auths {
            text.push('-');
            text.push_str(&sa.to_string());
        }
        text
    }
}

/// Pull a `dom_sid` (aligned to 4; `num_auths` above 15 is Samba's range error).
fn pull_sid(pull: &mut NdrPull<'_>, field: &str) -> Result<DomSid> {
    pull.align(4)?;
    let rev = pull.u8(field)?;
    let num = pull.u8(field)?;
    if num > MAX_SUB_AUTHS {
        return Err(pull.error(format!("{field}: {num} sub-authorities (at most 15)")));
    }
    let id_auth = pull.bytes::<6>(field)?;
    let sub_auths = (0..num)
        .map(|_| pull.u32(field))
        .collect::<Result<Vec<u32>>>()?;
    Ok(DomSid {
        rev,
        id_auth,
        sub_auths,
    })
}

/// One ACE of a decoded ACL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Ace {
    /// `SEC_ACE_TYPE_*` (0 allowed, 1 denied, 2 audit, 5 allowed object ...).
    #[serde(rename = "type")]
    pub type_: u8,
    /// `SEC_ACE_FLAG_*` (inheritance and audit flags).
    pub flags: u8,
    /// The access mask.
    pub access_mask: u32,
    /// The object type GUID of an object ACE.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_type: Option<String>,
    /// The inherited object type GUID of an object ACE.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inherited_object_type: Option<String>,
    /// The trustee SID (`S-1-5-32-544`).
    pub trustee: String,
    /// The ACE in SDDL as Samba writes it (`A;OICI;0x001f01ff;;;BA`, without parentheses); null
    /// where Samba's `sddl_encode` fails (an ACE type or flag it has no letters for).
    pub sddl: Option<String>,
}

/// A decoded ACL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Acl {
    /// `revision` (2, or 4 with object ACEs).
    pub revision: u16,
    /// The ACEs in order.
    pub aces: Vec<Ace>,
}

/// A decoded `security.NTACL` (`xattr_NTACL`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NtAcl {
    /// 1 to 4.
    pub version: u16,
    /// `hash_type` (versions 3 and 4): 0 none, 1 SHA-256.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_type: Option<u16>,
    /// Its name (`none`, `sha256`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_type_name: Option<String>,
    /// The stored hash in hex (versions 2 to 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// `description` of version 4 (what computed the hash).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `time` of version 4.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<NtTime>,
    /// `sys_acl_hash` of version 4 in hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_acl_hash: Option<String>,
    /// The descriptor's control word (`SEC_DESC_*`); null when the value holds no descriptor.
    pub control: Option<u16>,
    /// The security descriptor in SDDL exactly as Samba's `sddl_encode` writes it with no
    /// domain SID; null when there is no descriptor or when `sddl_encode` fails on it.
    pub sddl: Option<String>,
    /// Why `sddl` is null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sddl_error: Option<String>,
    /// The owner SID.
    pub owner: Option<String>,
    /// The group SID.
    pub group: Option<String>,
    /// The discretionary ACL.
    pub dacl: Option<Acl>,
    /// The system (audit) ACL.
    pub sacl: Option<Acl>,
}

/// `GUID_string`: `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` from NDR's little-endian fields.
fn guid_string(guid: &[u8; 16]) -> String {
    let le32 = u32::from_le_bytes([guid[0], guid[1], guid[2], guid[3]]);
    let mid = u16::from_le_bytes([guid[4], guid[5]]);
    let hi = u16::from_le_bytes([guid[6], guid[7]]);
    format!(
        "{le32:08x}-{mid:04x}-{hi:04x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
        guid[8], guid[9], guid[10], guid[11], guid[12], guid[13], guid[14], guid[15]
    )
}

/// The object ACE types (`sec_ace_object()` in Samba 4.17).
fn is_object_ace(ace_type: u8) -> bool {
    (5..=8).contains(&ace_type)
}

/// Pull one `security_ace` as Samba's `ndr_pull_security_ace` does: the fixed part, the object
/// part of object ACEs, the trustee, then skip to the declared `size` (application data of
/// callback ACEs), which may not be smaller than what was read.
fn pull_ace(pull: &mut NdrPull<'_>) -> Result<Ace> {
    pull.align(4)?;
    let start = pull.offset();
    let type_ = pull.u8("ACE type")?;
    let flags = pull.u8("ACE flags")?;
    let size = pull.u16("ACE size")?;
    let access_mask = pull.u32("ACE access mask")?;
    let (mut object_type, mut inherited_object_type) = (None, None);
    if is_object_ace(type_) {
        let oflags = pull.u32("object ACE flags")?;
        if oflags & 1 != 0 {
            pull.align(4)?;
            object_type = Some(guid_string(&pull.bytes::<16>("object type GUID")?));
        }
        if oflags & 2 != 0 {
            pull.align(4)?;
            inherited_object_type = Some(guid_string(&pull.bytes::<16>("inherited object GUID")?));
        }
    }
    let sid = pull_sid(pull, "ACE trustee")?;
    let used = pull.offset() - start;
    let Some(pad) = usize::from(size).checked_sub(used) else {
        return Err(pull.error(format!("ACE size {size} smaller than its {used} bytes")));
    };
    pull.take(pad, "ACE application data")?;
    pull.align(4)?;
    Ok(Ace {
        type_,
        flags,
        access_mask,
        object_type,
        inherited_object_type,
        trustee: sid.string(),
        sddl: None,
    })
}

/// Pull a `security_acl`.
fn pull_acl(pull: &mut NdrPull<'_>) -> Result<Acl> {
    pull.align(4)?;
    let revision = pull.u16("ACL revision")?;
    let _size = pull.u16("ACL size")?;
    let num = pull.u32("ACL num_aces")?;
    if num > MAX_ACES {
        return Err(pull.error(format!("{num} ACEs (Samba's limit is {MAX_ACES})")));
    }
    let mut aces = Vec::new();
    for _ in 0..num {
        aces.push(pull_ace(pull)?);
    }
    Ok(Acl { revision, aces })
}

/// A security descriptor pulled from an NDR stream; relative pointers count from the start of
/// the stream (Samba's relative base is the xattr value's start, not the descriptor's).
struct Descriptor {
    control: u16,
    owner: Option<DomSid>,
    group: Option<DomSid>,
    sacl: Option<Acl>,
    dacl: Option<Acl>,
}

fn pull_descriptor(pull: &mut NdrPull<'_>) -> Result<Descriptor> {
    pull.align(4)?;
    let _revision = pull.u8("descriptor revision")?;
    let control = pull.u16("descriptor type")?;
    let offs = [
        pull.u32("owner offset")?,
        pull.u32("group offset")?,
        pull.u32("sacl offset")?,
        pull.u32("dacl offset")?,
    ];
    for (offset, what) in offs.iter().zip(["owner", "group", "sacl", "dacl"]) {
        if *offset as usize > pull.data().len() {
            return Err(pull.error(format!(
                "{what} offset {offset} past the end ({} bytes)",
                pull.data().len()
            )));
        }
    }
    let at = |offset: u32, what: &str| -> Result<Option<NdrPull<'_>>> {
        if offset == 0 {
            return Ok(None);
        }
        let mut cursor = pull.clone();
        cursor.seek(offset as usize, what)?;
        Ok(Some(cursor))
    };
    let owner = at(offs[0], "owner")?
        .map(|mut c| pull_sid(&mut c, "owner SID"))
        .transpose()?;
    let group = at(offs[1], "group")?
        .map(|mut c| pull_sid(&mut c, "group SID"))
        .transpose()?;
    let sacl = at(offs[2], "sacl")?
        .map(|mut c| pull_acl(&mut c))
        .transpose()?;
    let dacl = at(offs[3], "dacl")?
        .map(|mut c| pull_acl(&mut c))
        .transpose()?;
    Ok(Descriptor {
        control,
        owner,
        group,
        sacl,
        dacl,
    })
}

// ---------------------------------------------------------------------------------------------
// SDDL as Samba 4.17's sddl_encode writes it (tables in its order: the order is output).
// ---------------------------------------------------------------------------------------------

const SDDL_ACE_TYPES: &[(&str, u32)] = &[
    ("AU", 2),
    ("AL", 3),
    ("OA", 5),
    ("OD", 6),
    ("OU", 7),
    ("OL", 8),
    ("A", 0),
    ("D", 1),
];

const SDDL_ACE_FLAGS: &[(&str, u32)] = &[
    ("OI", 0x01),
    ("CI", 0x02),
    ("NP", 0x04),
    ("IO", 0x08),
    ("ID", 0x10),
    ("SA", 0x40),
    ("FA", 0x80),
];

const SDDL_ACCESS_MASK: &[(&str, u32)] = &[
    ("RP", 0x0000_0010),
    ("WP", 0x0000_0020),
    ("CR", 0x0000_0100),
    ("CC", 0x0000_0001),
    ("DC", 0x0000_0002),
    ("LC", 0x0000_0004),
    ("LO", 0x0000_0080),
    ("RC", 0x0002_0000),
    ("WO", 0x0008_0000),
    ("WD", 0x0004_0000),
    ("SD", 0x0001_0000),
    ("DT", 0x0000_0040),
    ("SW", 0x0000_0008),
    ("GA", 0x1000_0000),
    ("GR", 0x8000_0000),
    ("GW", 0x4000_0000),
    ("GX", 0x2000_0000),
];

const SDDL_ACL_FLAGS: &[(&str, u32)] = &[
    ("P", sd_control::DACL_PROTECTED as u32),
    ("AR", sd_control::DACL_AUTO_INHERIT_REQ as u32),
    ("AI", sd_control::DACL_AUTO_INHERITED as u32),
];

/// The well-known SIDs Samba 4.17 writes as two letters (those needing no domain SID).
const SDDL_SID_CODES: &[(&str, &str)] = &[
    ("WD", "S-1-1-0"),
    ("CO", "S-1-3-0"),
    ("CG", "S-1-3-1"),
    ("OW", "S-1-3-4"),
    ("NU", "S-1-5-2"),
    ("IU", "S-1-5-4"),
    ("SU", "S-1-5-6"),
    ("AN", "S-1-5-7"),
    ("ED", "S-1-5-9"),
    ("PS", "S-1-5-10"),
    ("AU", "S-1-5-11"),
    ("RC", "S-1-5-12"),
    ("SY", "S-1-5-18"),
    ("LS", "S-1-5-19"),
    ("NS", "S-1-5-20"),
    ("WR", "S-1-5-33"),
    ("BA", "S-1-5-32-544"),
    ("BU", "S-1-5-32-545"),
    ("BG", "S-1-5-32-546"),
    ("PU", "S-1-5-32-547"),
    ("AO", "S-1-5-32-548"),
    ("SO", "S-1-5-32-549"),
    ("PO", "S-1-5-32-550"),
    ("BO", "S-1-5-32-551"),
    ("RE", "S-1-5-32-552"),
    ("RU", "S-1-5-32-554"),
    ("RD", "S-1-5-32-555"),
    ("NO", "S-1-5-32-556"),
    ("MU", "S-1-5-32-558"),
    ("LU", "S-1-5-32-559"),
    ("IS", "S-1-5-32-568"),
    ("CY", "S-1-5-32-569"),
    ("ER", "S-1-5-32-573"),
    ("CD", "S-1-5-32-574"),
    ("RA", "S-1-5-32-575"),
    ("ES", "S-1-5-32-576"),
    ("MS", "S-1-5-32-577"),
    ("HA", "S-1-5-32-578"),
    ("AA", "S-1-5-32-579"),
    ("RM", "S-1-5-32-580"),
    ("UD", "S-1-5-84-0-0-0-0-0"),
    ("AC", "S-1-15-2-1"),
    ("LW", "S-1-16-4096"),
    ("ME", "S-1-16-8192"),
    ("MP", "S-1-16-8448"),
    ("HI", "S-1-16-12288"),
    ("SI", "S-1-16-16384"),
    ("AS", "S-1-18-1"),
    ("SS", "S-1-18-2"),
];

/// `sddl_flags_to_string`: an exact match of the whole value first, else the letters of each
/// entry sharing a bit with what is left, in table order (so an ACE type, which is a number and
/// not bits, can come out as `ALOL`); `None` when `check_all` and bits are left over.
fn flags_to_string(map: &[(&str, u32)], value: u32, check_all: bool) -> Option<String> {
    if let Some((name, _)) = map.iter().find(|(_, f)| *f == value) {
        return Some((*name).to_string());
    }
    let mut left = value;
    let mut out = String::new();
    for (name, bits) in map {
        if left & bits != 0 {
            out.push_str(name);
            left &= !bits;
        }
    }
    (!check_all || left == 0).then_some(out)
}

fn sddl_sid(sid_text: &str) -> String {
    SDDL_SID_CODES
        .iter()
        .find(|(_, sid)| *sid == sid_text)
        .map_or_else(|| sid_text.to_string(), |(code, _)| (*code).to_string())
}

/// `sddl_encode_ace`.
fn sddl_ace(ace: &Ace) -> std::result::Result<String, String> {
    let ace_type = flags_to_string(SDDL_ACE_TYPES, u32::from(ace.type_), true)
        .ok_or_else(|| format!("ACE type {} has no SDDL letters", ace.type_))?;
    let flags = flags_to_string(SDDL_ACE_FLAGS, u32::from(ace.flags), true)
        .ok_or_else(|| format!("ACE flags {:#04x} have no SDDL letters", ace.flags))?;
    let mask = flags_to_string(SDDL_ACCESS_MASK, ace.access_mask, true)
        .unwrap_or_else(|| format!("0x{:08x}", ace.access_mask));
    let (object, io) = if is_object_ace(ace.type_) {
        (
            ace.object_type.clone().unwrap_or_default(),
            ace.inherited_object_type.clone().unwrap_or_default(),
        )
    } else {
        (String::new(), String::new())
    };
    Ok(format!(
        "{ace_type};{flags};{mask};{object};{io};{}",
        sddl_sid(&ace.trustee)
    ))
}

/// `sddl_encode_acl`: the ACL flags from the descriptor's control word, then each ACE in
/// parentheses.
fn sddl_acl(acl: &Acl, control: u32) -> std::result::Result<String, String> {
    let mut out = flags_to_string(SDDL_ACL_FLAGS, control, false).unwrap_or_default();
    for ace in &acl.aces {
        out.push('(');
        out.push_str(&sddl_ace(ace)?);
        out.push(')');
    }
    Ok(out)
}

/// `sddl_encode` with no domain SID: owner, group, then the DACL and the SACL when both their
/// `*_PRESENT` bit is set and the pointer is non-null (the SACL's flags are the control word
/// shifted right by one, as Samba passes them).
fn sddl_encode(ntacl: &NtAcl) -> std::result::Result<String, String> {
    let control = u32::from(ntacl.control.unwrap_or(0));
    let mut out = String::new();
    if let Some(owner) = &ntacl.owner {
        out.push_str("O:");
        out.push_str(&sddl_sid(owner));
    }
    if let Some(group) = &ntacl.group {
        out.push_str("G:");
        out.push_str(&sddl_sid(group));
    }
    if let Some(acl) = ntacl
        .dacl
        .as_ref()
        .filter(|_| control & u32::from(sd_control::DACL_PRESENT) != 0)
    {
        out.push_str("D:");
        out.push_str(&sddl_acl(acl, control)?);
    }
    if let Some(acl) = ntacl
        .sacl
        .as_ref()
        .filter(|_| control & u32::from(sd_control::SACL_PRESENT) != 0)
    {
        out.push_str("S:");
        out.push_str(&sddl_acl(acl, control >> 1)?);
    }
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|c| format!("{c:02x}")).collect()
}

/// Decode a `security.NTACL` value as Samba's `ndr_pull_xattr_NTACL` does: the version, the union
/// level (equal to it), a unique pointer to the descriptor (v1) or to a
/// `security_descriptor_hash_v2..v4` whose own pointer leads to the descriptor; then the
/// descriptor written as SDDL. Bytes after the descriptor are ignored.
pub fn decode_ntacl(value: &[u8]) -> Result<NtAcl> {
    let mut pull = NdrPull::new(value, NTACL_NAME);
    let version = pull.u16("version")?;
    let level = pull.u16("union level")?;
    if level != version {
        return Err(pull.error(format!(
            "union level {level} differs from version {version}"
        )));
    }
    if !(1..=4).contains(&version) {
        return Err(pull.error(format!("unknown version {version}")));
    }
    let mut ntacl = NtAcl {
        version,
        hash_type: None,
        hash_type_name: None,
        hash: None,
        description: None,
        time: None,
        sys_acl_hash: None,
        control: None,
        sddl: None,
        sddl_error: None,
        owner: None,
        group: None,
        dacl: None,
        sacl: None,
    };
    let mut has_sd = pull.unique_ptr("info pointer")?;
    if version >= 2 && has_sd {
        pull.align(4)?;
        has_sd = pull.unique_ptr("descriptor pointer")?;
        if version >= 3 {
            let ht = pull.u16("hash_type")?;
            ntacl.hash_type = Some(ht);
            ntacl.hash_type_name = Some(match ht {
                0 => "none".to_string(),
                1 => "sha256".to_string(),
                other => format!("unknown ({other})"),
            });
            ntacl.hash = Some(hex(&pull.bytes::<64>("hash")?));
        } else {
            ntacl.hash = Some(hex(&pull.bytes::<16>("hash")?));
        }
        if version == 4 {
            ntacl.description =
                Some(String::from_utf8_lossy(pull.nul_string("description")?).into_owned());
            ntacl.time = Some(NtTime::new(pull.udlong("time")?));
            ntacl.sys_acl_hash = Some(hex(&pull.bytes::<64>("sys_acl_hash")?));
        }
        pull.align(4)?;
    }
    if !has_sd {
        ntacl.sddl_error = Some("the value holds no security descriptor".to_string());
        return Ok(ntacl);
    }
    let sd = pull_descriptor(&mut pull)?;
    ntacl.control = Some(sd.control);
    ntacl.owner = sd.owner.as_ref().map(DomSid::string);
    ntacl.group = sd.group.as_ref().map(DomSid::string);
    ntacl.dacl = sd.dacl;
    ntacl.sacl = sd.sacl;
    for acl in ntacl.dacl.iter_mut().chain(ntacl.sacl.iter_mut()) {
        for ace in &mut acl.aces {
            ace.sddl = sddl_ace(ace).ok();
        }
    }
    match sddl_encode(&ntacl) {
        Ok(s) => ntacl.sddl = Some(s),
        Err(e) => ntacl.sddl_error = Some(format!("Samba's sddl_encode fails: {e}")),
    }
    Ok(ntacl)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn dosattrib_versions_as_samba_packs_them() {
        // python3-samba 4.17: ndr_pack(xattr.DOSATTRIB) of each version.
        let v3 = unhex("3078323000000300030000001100000020000000000000000000000000000000000000000000000000005af64cf5d4010000000000000000");
        let dosattrib = decode_dosattrib(&v3).unwrap();
        assert_eq!(
            (dosattrib.version, dosattrib.attrib, dosattrib.valid_flags),
            (3, 0x20, Some(0x11))
        );
        assert_eq!(dosattrib.attrib_hex, "0x20");
        let ct = dosattrib.create_time.unwrap();
        assert_eq!(ct.nttime, 132_000_000_000_000_000);
        assert_eq!(ct.utc.as_deref(), Some("2019-04-17T18:40:00Z"));
        assert_eq!(dosattrib.attrib_names, vec!["ARCHIVE"]);
        let v4 = unhex("00000400040000005100000021000000010000000000000000005af64cf5d401");
        let dosattrib = decode_dosattrib(&v4).unwrap();
        assert_eq!((dosattrib.version, dosattrib.attrib), (4, 0x21));
        assert_eq!(dosattrib.itime.unwrap().nttime, 1);
        let v5 = unhex("0000050005000000110000002200000000005af64cf5d401");
        let dosattrib = decode_dosattrib(&v5).unwrap();
        assert_eq!((dosattrib.version, dosattrib.attrib), (5, 0x22));
        assert_eq!(dosattrib.attrib_names, vec!["HIDDEN", "ARCHIVE"]);
        for cut in 0..v5.len() {
            assert!(decode_dosattrib(&v5[..cut]).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn dosattrib_old_form_and_errors() {
        let dosattrib = decode_dosattrib(b"0x21\0").unwrap();
        assert_eq!((dosattrib.version, dosattrib.attrib), (0xFFFF, 0x21));
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
    #[test]
    fn ntacl_versions_as_samba_packs_them() {
        // python3-samba 4.17: ndr_pack(xattr.NTACL) of "O:BAG:SYD:(A;;FA;;;WD)" in each version.
        let v1 = unhex("0100010000000200010004801c0000002c00000000000000380000000102000000000005200000002002000001010000000000051200000004001c000100000000001400ff010000010100000000000100000000");
        let ntacl = decode_ntacl(&v1).unwrap();
        assert_eq!(
            ntacl.sddl.as_deref(),
            Some("O:BAG:SYD:(A;;RPWPCRCCDCLCLODTSW;;;WD)")
        );
        assert_eq!(ntacl.owner.as_deref(), Some("S-1-5-32-544"));
        let v3 = unhex("0300030000000200040002000100000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f000001000480640000007400000000000000800000000102000000000005200000002002000001010000000000051200000004001c000100000000001400ff010000010100000000000100000000");
        let ntacl = decode_ntacl(&v3).unwrap();
        assert_eq!(ntacl.hash_type, Some(1));
        assert_eq!(
            ntacl.sddl.as_deref(),
            Some("O:BAG:SYD:(A;;RPWPCRCCDCLCLODTSW;;;WD)")
        );
        for cut in 0..v3.len() {
            let _ = decode_ntacl(&v3[..cut]);
        }
        assert!(decode_ntacl(&v3[..100]).is_err());
    }

    #[test]
    fn sddl_quirks_of_samba_4_17() {
        assert_eq!(
            flags_to_string(SDDL_ACE_TYPES, 9, true).as_deref(),
            Some("ALOL")
        );
        assert_eq!(
            flags_to_string(SDDL_ACE_TYPES, 4, true).as_deref(),
            Some("OA")
        );
        assert_eq!(flags_to_string(SDDL_ACE_TYPES, 16, true), None);
        assert_eq!(flags_to_string(SDDL_ACE_FLAGS, 0x20, true), None);
        assert_eq!(
            flags_to_string(SDDL_ACCESS_MASK, 0x000f_01ff, true).as_deref(),
            Some("RPWPCRCCDCLCLORCWOWDSDDTSW")
        );
        assert_eq!(flags_to_string(SDDL_ACCESS_MASK, 0x0012_0089, true), None);
        assert_eq!(
            flags_to_string(SDDL_ACL_FLAGS, 0x9504, false).as_deref(),
            Some("PARAI")
        );
        let sid = |ia: [u8; 6]| {
            DomSid {
                rev: 1,
                id_auth: ia,
                sub_auths: vec![1],
            }
            .string()
        };
        assert_eq!(sid([0, 0, 0xff, 0xff, 0xff, 0xfe]), "S-1-4294967294-1");
        assert_eq!(sid([0, 0, 0xff, 0xff, 0xff, 0xff]), "S-1-0xffffffff-1");
        assert_eq!(sid([0xff; 6]), "S-1-0xffffffffffff-1");
        assert_eq!(
            guid_string(&[
                0xba, 0x7a, 0x96, 0xbf, 0xe6, 0x0d, 0xd0, 0x11, 0xa2, 0x85, 0, 0xaa, 0, 0x30, 0x49,
                0xe2
            ]),
            "bf967aba-0de6-11d0-a285-00aa003049e2"
        );
    }
}
