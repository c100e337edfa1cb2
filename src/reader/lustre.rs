//! Lustre's xattrs decoded from the declarations of [`crate::reader::ondisk::lustre`]:
//! `trusted.lma`, `trusted.link` (as `linkea_entry_unpack` reads it), `trusted.lov` (v1, v3 and
//! composite layouts, object ids as `ostid_seq`/`ostid_id` of lustre_idl.h give them),
//! `trusted.fid` (every `filter_fid` size since Lustre 1.8) and `trusted.som`.
//!
//! Counts and lengths read from a value (`leh_reccount`, `lmm_stripe_count`, `lcm_entry_count`)
//! only bound loops over bytes that are present; nothing is allocated by them.

use crate::error::{Error, Result};
use crate::reader::ondisk::lustre as raw;
use crate::reader::ondisk::{self, OnDisk};
use serde::Serialize;

/// A Lustre FID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Fid {
    /// `f_seq`.
    pub seq: u64,
    /// `f_oid`.
    pub oid: u32,
    /// `f_ver`.
    pub ver: u32,
}

impl Fid {
    /// As Lustre prints it (`DFID`): `[0x200000401:0x1:0x0]`.
    pub fn text(&self) -> String {
        format!("[{:#x}:{:#x}:{:#x}]", self.seq, self.oid, self.ver)
    }
}

impl From<raw::LuFid> for Fid {
    fn from(fid: raw::LuFid) -> Fid {
        Fid {
            seq: fid.seq,
            oid: fid.oid,
            ver: fid.ver,
        }
    }
}

impl From<raw::LuFidBe> for Fid {
    fn from(fid: raw::LuFidBe) -> Fid {
        Fid {
            seq: fid.seq,
            oid: fid.oid,
            ver: fid.ver,
        }
    }
}

fn err(what: &str, msg: impl std::fmt::Display) -> Error {
    Error::corrupt(crate::ProblemKind::Xattr, format!("{what}: {msg}"))
}

fn names(bits: u32, table: &[(u32, &str)]) -> Vec<String> {
    let mut out: Vec<String> = table
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| (*n).to_string())
        .collect();
    let known = table.iter().fold(0, |a, (b, _)| a | b);
    if bits & !known != 0 {
        out.push(format!("{:#x}", bits & !known));
    }
    out
}

/// `enum lma_compat`.
const LMA_COMPAT: &[(u32, &str)] = &[
    (0x01, "HSM"),
    (0x04, "NOT_IN_OI"),
    (0x08, "FID_ON_OST"),
    (0x10, "STRIPE_INFO"),
    (0x20, "COMP_INFO"),
    (0x40, "IDX_BACKUP"),
];
/// `enum lma_incompat`.
const LMA_INCOMPAT: &[(u32, &str)] = &[
    (0x01, "RELEASED"),
    (0x02, "AGENT"),
    (0x04, "REMOTE_PARENT"),
    (0x08, "STRIPED"),
    (0x10, "ORPHAN"),
    (0x20, "ENCRYPT"),
];

/// The OST part of an OST object's `trusted.lma` (`struct lustre_ost_attrs`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct OstAttrs {
    /// `loa_parent_fid`: the MDT file this object is a stripe of.
    pub parent: Fid,
    /// `loa_stripe_size`.
    pub stripe_size: u32,
    /// `loa_comp_id`.
    pub comp_id: u32,
    /// `loa_comp_start`.
    pub comp_start: u64,
    /// `loa_comp_end`.
    pub comp_end: u64,
}

/// A decoded `trusted.lma`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Lma {
    /// `lma_compat`.
    pub compat: u32,
    /// Names of its bits.
    pub compat_names: Vec<String>,
    /// `lma_incompat`.
    pub incompat: u32,
    /// Names of its bits.
    pub incompat_names: Vec<String>,
    /// The object's own FID (`lma_self_fid`).
    pub fid: Fid,
    /// The OST part, when the value is a `lustre_ost_attrs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ost: Option<OstAttrs>,
}

/// Decode `trusted.lma`.
pub fn decode_lma(value: &[u8]) -> Result<Lma> {
    let lma: raw::Lma = ondisk::decode(value)?;
    let ost = match value.len() >= raw::Lma::SIZE + raw::OstAttrsTail::SIZE {
        true => {
            let tail: raw::OstAttrsTail = ondisk::decode_at(value, raw::Lma::SIZE)?;
            Some(OstAttrs {
                parent: tail.parent_fid.into(),
                stripe_size: tail.stripe_size,
                comp_id: tail.comp_id,
                comp_start: tail.comp_start,
                comp_end: tail.comp_end,
            })
        }
        false => None,
    };
    Ok(Lma {
        compat: lma.compat,
        compat_names: names(lma.compat, LMA_COMPAT),
        incompat: lma.incompat,
        incompat_names: names(lma.incompat, LMA_INCOMPAT),
        fid: lma.self_fid.into(),
        ost,
    })
}

/// One hard link of a `trusted.link` value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Link {
    /// The parent directory's FID.
    pub parent: Fid,
    /// The name in that directory (lossily UTF-8).
    pub name: String,
}

/// A decoded `trusted.link`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LinkEa {
    /// `leh_reccount`.
    pub reccount: u32,
    /// `leh_len`.
    pub len: u64,
    /// `leh_overflow_time`: set when links did not fit.
    pub overflow_time: u32,
    /// Every link, in stored order.
    pub links: Vec<Link>,
}

/// Decode `trusted.link` as `linkea_init` + `linkea_entry_unpack` read it: the header (byte-swapped
/// when its magic is), then `leh_reccount` entries of big-endian `reclen` and parent FID and
/// `reclen - 18` name bytes, all within `leh_len`.
pub fn decode_link(value: &[u8]) -> Result<LinkEa> {
    const WHAT: &str = "trusted.link";
    let mut header: raw::LinkEaHeader = ondisk::decode(value)?;
    if header.magic == raw::LINK_EA_MAGIC.swap_bytes() {
        header.reccount = header.reccount.swap_bytes();
        header.len = header.len.swap_bytes();
        header.overflow_time = header.overflow_time.swap_bytes();
    } else if header.magic != raw::LINK_EA_MAGIC {
        return Err(err(WHAT, format!("bad magic {:#010x}", header.magic)));
    }
    if header.len > value.len() as u64 || header.len < raw::LinkEaHeader::SIZE as u64 {
        return Err(err(
            WHAT,
            format!("leh_len {} outside 24..={} bytes", header.len, value.len()),
        ));
    }
    let body = value.get(..header.len as usize).unwrap_or(value);
    let mut pos = raw::LinkEaHeader::SIZE;
    let mut links = Vec::new();
    for index in 0..header.reccount {
        let entry: raw::LinkEaEntryHead = ondisk::decode_at(body, pos)
            .map_err(|_| err(WHAT, format!("entry {index} at {pos} lies past leh_len")))?;
        let reclen = usize::from(entry.reclen);
        let name = reclen
            .checked_sub(raw::LinkEaEntryHead::SIZE)
            .and_then(|n| body.get(pos + raw::LinkEaEntryHead::SIZE..)?.get(..n))
            .ok_or_else(|| err(WHAT, format!("entry {index}: reclen {reclen} does not fit")))?;
        links.push(Link {
            parent: entry.parent_fid.into(),
            name: String::from_utf8_lossy(name).into_owned(),
        });
        pos += reclen;
    }
    Ok(LinkEa {
        reccount: header.reccount,
        len: header.len,
        overflow_time: header.overflow_time,
        links,
    })
}

/// One stripe object of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LovObject {
    /// The object id (`ostid_id`).
    pub oid: u64,
    /// Its sequence (`ostid_seq`).
    pub seq: u64,
    /// `l_ost_idx`: the OST holding it.
    pub ost_idx: u32,
    /// `l_ost_gen`.
    pub ost_gen: u32,
}

/// `FID_SEQ_IDIF` .. `FID_SEQ_IDIF_MAX`: FIDs that wrap an old OST object id.
const FID_SEQ_IDIF: u64 = 0x1_0000_0000;
const FID_SEQ_IDIF_MAX: u64 = 0x1_ffff_ffff;
/// `IDIF_OID_MASK`.
const IDIF_OID_MASK: u64 = (1 << 48) - 1;

/// `ostid_seq()` and `ostid_id()` of lustre_idl.h: `(seq, id)`.
fn ostid(oi: raw::OstId) -> (u64, u64) {
    let (oi_id, oi_seq) = (oi.lo, oi.hi);
    let (f_seq, f_oid, f_ver) = (oi.lo, oi.hi as u32, (oi.hi >> 32) as u32);
    if oi_seq == 0 {
        (0, oi_id & IDIF_OID_MASK)
    } else if oi_seq == u64::MAX {
        (u64::MAX, oi_id)
    } else if (FID_SEQ_IDIF..=FID_SEQ_IDIF_MAX).contains(&f_seq) {
        let id = (u64::from(f_ver) << 48) | ((f_seq & 0xffff) << 32) | u64::from(f_oid);
        (0, id)
    } else {
        (f_seq, u64::from(f_oid))
    }
}

/// `LOV_PATTERN_*`.
const LOV_PATTERNS: &[(u32, &str)] = &[
    (0x001, "raid0"),
    (0x002, "raid1"),
    (0x100, "mdt"),
    (0x200, "overstriping"),
    (0x400, "foreign"),
    (0x800, "compress"),
    (0x4000_0000, "hole"),
    (0x8000_0000, "released"),
];

/// `LCME_FL_*`.
const LCME_FLAGS: &[(u32, &str)] = &[
    (0x01, "stale"),
    (0x02, "prefrd"),
    (0x04, "prefwr"),
    (0x08, "offline"),
    (0x10, "init"),
    (0x20, "nosync"),
    (0x40, "extension"),
    (0x80, "parity"),
    (0x100, "compress"),
    (0x200, "partial"),
    (0x400, "nocompr"),
    (0x8000_0000, "neg"),
];

/// A plain (v1/v3) layout: the value itself or one component of a composite layout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LovPlain {
    /// `v1` or `v3`.
    pub magic: String,
    /// `lmm_pattern`.
    pub pattern: u32,
    /// Names of the pattern and its flags (`raid0`, `released`).
    pub pattern_names: Vec<String>,
    /// `lmm_stripe_size` in bytes.
    pub stripe_size: u32,
    /// `lmm_stripe_count`.
    pub stripe_count: u16,
    /// `lmm_layout_gen`.
    pub layout_gen: u16,
    /// The OST pool (v3; null for v1 or an empty name).
    pub pool: Option<String>,
    /// The objects stored (fewer than `stripe_count` for a released file or an uninstantiated
    /// component).
    pub objects: Vec<LovObject>,
}

/// One component of a composite layout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LovComponent {
    /// `lcme_id`.
    pub id: u32,
    /// `lcme_flags`.
    pub flags: u32,
    /// Names of the flags (`init`, `stale` ...).
    pub flag_names: Vec<String>,
    /// `lcme_extent.e_start`.
    pub extent_start: u64,
    /// `lcme_extent.e_end` (`u64::MAX`: to end of file).
    pub extent_end: u64,
    /// `lcme_layout_gen`.
    pub layout_gen: u32,
    /// The component's layout (v1/v3).
    pub layout: Option<LovPlain>,
    /// The component's foreign layout (a `lov_foreign_md` blob: a foreign mirror, an HSM copy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foreign: Option<LovForeign>,
    /// Why the component's layout could not be decoded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_error: Option<String>,
}

/// A decoded `trusted.lov`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Lov {
    /// `v1`, `v3` or `comp`.
    pub magic: String,
    /// `lmm_stripe_size` (null for composite layouts: see each component).
    pub stripe_size: Option<u32>,
    /// `lmm_stripe_count` (for composite layouts: the largest component's).
    pub stripe_count: Option<u16>,
    /// The OST pool (v3).
    pub pool: Option<String>,
    /// `lmm_pattern` (v1/v3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<u32>,
    /// Names of the pattern bits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern_names: Option<Vec<String>>,
    /// The layout generation (`lmm_layout_gen`, `lcm_layout_gen`).
    pub layout_gen: u32,
    /// Objects (v1/v3; for composite layouts, every component's objects in order).
    pub objects: Vec<LovObject>,
    /// `lcm_mirror_count + 1` (composite).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirrors: Option<u32>,
    /// `lcm_flags` (composite).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<u16>,
    /// The components (composite).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub components: Option<Vec<LovComponent>>,
    /// The foreign layout (`magic` "foreign").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foreign: Option<LovForeign>,
}

/// A foreign layout (`struct lov_foreign_md`, `LOV_MAGIC_FOREIGN`): a whole `trusted.lov`, or one
/// component of a composite layout (a foreign mirror or HSM copy).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LovForeign {
    /// `lfm_type`.
    #[serde(rename = "type")]
    pub foreign_type: u32,
    /// Its `LU_FOREIGN_TYPE_*` name (`none`, `symlink`), null when unknown.
    pub type_name: Option<String>,
    /// `lfm_flags`.
    pub flags: u32,
    /// `lfm_length`: bytes of the value.
    pub length: u32,
    /// The value as text when it is UTF-8 (one trailing NUL dropped), else null.
    pub value: Option<String>,
    /// The value in hex.
    pub value_hex: String,
}

/// Decode a `struct lov_foreign_md` (`bytes` is exactly the layout: the whole value or one
/// component's blob). The value is `lfm_length` bytes after the 16-byte header, within `bytes`.
pub fn decode_foreign(bytes: &[u8]) -> Result<LovForeign> {
    let header: raw::LovForeignMd = ondisk::decode(bytes)?;
    if header.magic != raw::LOV_MAGIC_FOREIGN {
        return Err(err(
            "trusted.lov",
            format!("bad foreign magic {:#010x}", header.magic),
        ));
    }
    let body = &bytes[raw::LovForeignMd::SIZE..];
    let value = body.get(..header.length as usize).ok_or_else(|| {
        err(
            "trusted.lov",
            format!(
                "foreign layout: lfm_length {} past the value's {} bytes after the header",
                header.length,
                body.len()
            ),
        )
    })?;
    let text = value.strip_suffix(b"\0").unwrap_or(value);
    Ok(LovForeign {
        foreign_type: header.foreign_type,
        type_name: raw::LU_FOREIGN_TYPES
            .iter()
            .find(|(t, _)| *t == header.foreign_type)
            .map(|(_, n)| n.to_string()),
        flags: header.flags,
        length: header.length,
        value: std::str::from_utf8(text).ok().map(str::to_string),
        value_hex: value.iter().map(|b| format!("{b:02x}")).collect(),
    })
}

fn decode_plain(value: &[u8]) -> Result<LovPlain> {
    const WHAT: &str = "trusted.lov";
    let header: raw::LovMdsMd = ondisk::decode(value)?;
    let (magic, objs_at, pool) = match header.magic {
        raw::LOV_MAGIC_V1 => ("v1", raw::LovMdsMd::SIZE, None),
        raw::LOV_MAGIC_V3 => {
            let end = raw::LovMdsMd::SIZE + raw::LOV_POOL_NAME_LEN;
            let name = value
                .get(raw::LovMdsMd::SIZE..end)
                .ok_or_else(|| err(WHAT, "v3 layout truncated in its pool name"))?;
            let name = name.split(|&b| b == 0).next().unwrap_or(&[]);
            let pool = (!name.is_empty()).then(|| String::from_utf8_lossy(name).into_owned());
            ("v3", end, pool)
        }
        m => return Err(err(WHAT, format!("unknown layout magic {m:#010x}"))),
    };
    let objects = value
        .get(objs_at..)
        .unwrap_or(&[])
        .chunks_exact(raw::LovOstData::SIZE)
        .take(usize::from(header.stripe_count))
        .filter_map(|c| ondisk::decode::<raw::LovOstData>(c).ok())
        .map(|object| {
            let (seq, oid) = ostid(object.oi);
            LovObject {
                oid,
                seq,
                ost_idx: object.ost_idx,
                ost_gen: object.ost_gen,
            }
        })
        .collect();
    Ok(LovPlain {
        magic: magic.to_string(),
        pattern: header.pattern,
        pattern_names: names(header.pattern, LOV_PATTERNS),
        stripe_size: header.stripe_size,
        stripe_count: header.stripe_count,
        layout_gen: header.layout_gen,
        pool,
        objects,
    })
}

/// What one component's blob holds.
enum Component {
    Plain(LovPlain),
    Foreign(LovForeign),
}

/// The blob of component `entry` (`lcme_offset`, `lcme_size` inside `value`): a v1/v3 layout or, by its
/// magic, a foreign one.
fn decode_component(value: &[u8], entry: &raw::LovCompMdEntry) -> Result<Component> {
    let start = entry.offset as usize;
    let blob = start
        .checked_add(entry.size as usize)
        .and_then(|end| value.get(start..end))
        .ok_or_else(|| {
            err(
                "trusted.lov",
                format!(
                    "component {}: offset {} + size {} past the value's {} bytes",
                    entry.id,
                    entry.offset,
                    entry.size,
                    value.len()
                ),
            )
        })?;
    if blob.get(..4) == Some(&raw::LOV_MAGIC_FOREIGN.to_le_bytes()[..]) {
        return decode_foreign(blob).map(Component::Foreign);
    }
    decode_plain(blob).map(Component::Plain)
}

/// Decode `trusted.lov`: a v1 or v3 layout, or a composite one whose `lcm_entry_count`
/// components each point (`lcme_offset`, `lcme_size`) at a v1/v3 layout inside the value.
pub fn decode_lov(value: &[u8]) -> Result<Lov> {
    let magic = value
        .get(..4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if magic == raw::LOV_MAGIC_FOREIGN {
        let foreign = decode_foreign(value)?;
        return Ok(Lov {
            magic: "foreign".to_string(),
            stripe_size: None,
            stripe_count: None,
            pool: None,
            pattern: None,
            pattern_names: None,
            layout_gen: 0,
            objects: Vec::new(),
            mirrors: None,
            flags: None,
            components: None,
            foreign: Some(foreign),
        });
    }
    if magic != raw::LOV_MAGIC_COMP_V1 {
        let plain = decode_plain(value)?;
        return Ok(Lov {
            magic: plain.magic,
            stripe_size: Some(plain.stripe_size),
            stripe_count: Some(plain.stripe_count),
            pool: plain.pool,
            pattern: Some(plain.pattern),
            pattern_names: Some(plain.pattern_names),
            layout_gen: u32::from(plain.layout_gen),
            objects: plain.objects,
            mirrors: None,
            flags: None,
            components: None,
            foreign: None,
        });
    }
    let header: raw::LovCompMd = ondisk::decode(value)?;
    let mut components = Vec::new();
    for index in 0..usize::from(header.entry_count) {
        let at = raw::LovCompMd::SIZE + index * raw::LovCompMdEntry::SIZE;
        let entry: raw::LovCompMdEntry = ondisk::decode_at(value, at).map_err(|_| {
            err(
                "trusted.lov",
                format!(
                    "component {index} of {} lies past the value",
                    header.entry_count
                ),
            )
        })?;
        let (layout, foreign, decode_error) = match decode_component(value, &entry) {
            Ok(Component::Plain(p)) => (Some(p), None, None),
            Ok(Component::Foreign(f)) => (None, Some(f), None),
            Err(x) => (None, None, Some(x.to_string())),
        };
        components.push(LovComponent {
            id: entry.id,
            flags: entry.flags,
            flag_names: names(entry.flags, LCME_FLAGS),
            extent_start: entry.extent_start,
            extent_end: entry.extent_end,
            layout_gen: entry.layout_gen,
            layout,
            foreign,
            decode_error,
        });
    }
    let layouts = || components.iter().filter_map(|c| c.layout.as_ref());
    Ok(Lov {
        magic: "comp".to_string(),
        stripe_size: None,
        stripe_count: layouts().map(|l| l.stripe_count).max(),
        pool: None,
        pattern: None,
        pattern_names: None,
        layout_gen: header.layout_gen,
        objects: layouts().flat_map(|l| l.objects.iter().copied()).collect(),
        mirrors: Some(u32::from(header.mirror_count) + 1),
        flags: Some(header.flags),
        components: Some(components),
        foreign: None,
    })
}

/// The stripe count of a `trusted.lov` value without decoding its objects (for scan summaries):
/// `lmm_stripe_count` of a v1/v3 layout, the largest component's of a composite one, 0 for a
/// foreign layout (or component), which has no stripes; `None` when the value is no layout this
/// module decodes.
pub fn stripe_count(value: &[u8]) -> Option<u16> {
    let magic = u32::from_le_bytes(value.get(..4)?.try_into().ok()?);
    match magic {
        raw::LOV_MAGIC_V1 | raw::LOV_MAGIC_V3 => {
            Some(ondisk::decode::<raw::LovMdsMd>(value).ok()?.stripe_count)
        }
        // A foreign layout has no stripes.
        raw::LOV_MAGIC_FOREIGN => decode_foreign(value).ok().map(|_| 0),
        raw::LOV_MAGIC_COMP_V1 => {
            let header: raw::LovCompMd = ondisk::decode(value).ok()?;
            let mut max = None;
            for index in 0..usize::from(header.entry_count) {
                let at = raw::LovCompMd::SIZE + index * raw::LovCompMdEntry::SIZE;
                let entry: raw::LovCompMdEntry = ondisk::decode_at(value, at).ok()?;
                let blob = value.get(entry.offset as usize..)?;
                // A foreign component (no stripes) counts for nothing; its bytes are no
                // lov_mds_md to read a count from.
                if blob.get(..4) == Some(&raw::LOV_MAGIC_FOREIGN.to_le_bytes()[..]) {
                    max = max.max(Some(0));
                    continue;
                }
                let layout: raw::LovMdsMd = ondisk::decode(blob).ok()?;
                max = max.max(Some(layout.stripe_count));
            }
            max
        }
        _ => None,
    }
}

/// A decoded `trusted.fid` of an OST object (`struct filter_fid`, by its stored size).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FilterFid {
    /// `ff_parent`: the MDT file this object belongs to.
    pub parent: Fid,
    /// The stripe index (`ff_parent.f_ver`, low 16 bits).
    pub stripe_index: u32,
    /// `ff_layout.ol_stripe_size` (Lustre 2.10 on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stripe_size: Option<u32>,
    /// `ff_layout.ol_stripe_count`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stripe_count: Option<u32>,
    /// `ff_layout.ol_comp_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comp_id: Option<u32>,
    /// `ff_layout.ol_comp_start`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comp_start: Option<u64>,
    /// `ff_layout.ol_comp_end`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comp_end: Option<u64>,
    /// `ff_layout_version` (Lustre 2.11 on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout_version: Option<u32>,
    /// `ff_range`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<u32>,
    /// `ff_objid` (Lustre 1.8 to 2.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objid: Option<u64>,
    /// `ff_seq` (Lustre 1.8 to 2.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objseq: Option<u64>,
}

/// Decode `trusted.fid`: 16 bytes (2.4-2.9), 32 (1.8-2.3, with the object id), 44 (2.10, with the
/// layout) or 52 and more (2.11 on, with the layout version and range).
pub fn decode_filter_fid(value: &[u8]) -> Result<FilterFid> {
    let parent: raw::LuFid = ondisk::decode(value)?;
    let mut filter_fid = FilterFid {
        parent: parent.into(),
        stripe_index: parent.ver & 0xffff,
        stripe_size: None,
        stripe_count: None,
        comp_id: None,
        comp_start: None,
        comp_end: None,
        layout_version: None,
        range: None,
        objid: None,
        objseq: None,
    };
    let at = raw::LuFid::SIZE;
    match value.len() {
        16 => {}
        32 => {
            let old: raw::FilterFidOld = ondisk::decode_at(value, at)?;
            filter_fid.objid = Some(old.objid);
            filter_fid.objseq = Some(old.seq);
        }
        n if n >= at + raw::OstLayout::SIZE => {
            let layout: raw::OstLayout = ondisk::decode_at(value, at)?;
            filter_fid.stripe_size = Some(layout.stripe_size);
            filter_fid.stripe_count = Some(layout.stripe_count);
            filter_fid.comp_id = Some(layout.comp_id);
            filter_fid.comp_start = Some(layout.comp_start);
            filter_fid.comp_end = Some(layout.comp_end);
            if let Ok(version) =
                ondisk::decode_at::<raw::FilterFidVersion>(value, at + raw::OstLayout::SIZE)
            {
                filter_fid.layout_version = Some(version.layout_version);
                filter_fid.range = Some(version.range);
            }
        }
        n => {
            return Err(err(
                "trusted.fid",
                format!("{n} bytes is no filter_fid size (16, 32, 44, 52)"),
            ))
        }
    }
    Ok(filter_fid)
}

/// `SOM_FL_*`.
const SOM_FLAGS: &[(u32, &str)] = &[(0x1, "strict"), (0x2, "stale"), (0x4, "lazy")];

/// A decoded `trusted.som` (size on MDT).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Som {
    /// `lsa_valid`.
    pub valid: u16,
    /// Its name (`strict`, `stale`, `lazy`; empty: unknown).
    pub valid_names: Vec<String>,
    /// `lsa_size`.
    pub size: u64,
    /// `lsa_blocks` (512-byte units).
    pub blocks: u64,
}

/// Decode `trusted.som`.
pub fn decode_som(value: &[u8]) -> Result<Som> {
    let som: raw::SomAttrs = ondisk::decode(value)?;
    Ok(Som {
        valid: som.valid,
        valid_names: names(u32::from(som.valid), SOM_FLAGS),
        size: som.size,
        blocks: som.blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fid_le(seq: u64, oid: u32, ver: u32) -> Vec<u8> {
        [
            &seq.to_le_bytes()[..],
            &oid.to_le_bytes(),
            &ver.to_le_bytes(),
        ]
        .concat()
    }

    #[test]
    fn lma_and_som() {
        let mut value = [&8u32.to_le_bytes()[..], &1u32.to_le_bytes()].concat();
        value.extend(fid_le(0x2_0000_0401, 1, 0));
        let lma = decode_lma(&value).unwrap();
        assert_eq!(lma.fid.text(), "[0x200000401:0x1:0x0]");
        assert_eq!(lma.compat_names, vec!["FID_ON_OST"]);
        assert_eq!(lma.incompat_names, vec!["RELEASED"]);
        assert!(lma.ost.is_none());
        assert!(decode_lma(&value[..23]).is_err());
        let mut som_value = vec![1, 0, 0, 0, 0, 0, 0, 0];
        som_value.extend(4096u64.to_le_bytes());
        som_value.extend(8u64.to_le_bytes());
        let som = decode_som(&som_value).unwrap();
        assert_eq!((som.valid, som.size, som.blocks), (1, 4096, 8));
    }

    #[test]
    fn link_entries_and_hostile_counts() {
        let mut value = Vec::new();
        let entry = |name: &[u8]| {
            let mut record = ((18 + name.len()) as u16).to_be_bytes().to_vec();
            record.extend(0x2_0000_0007u64.to_be_bytes());
            record.extend(5u32.to_be_bytes());
            record.extend(0u32.to_be_bytes());
            record.extend_from_slice(name);
            record
        };
        let (first, second) = (entry(b"file"), entry(b"hardlink"));
        let len = 24 + first.len() + second.len();
        value.extend(raw::LINK_EA_MAGIC.to_le_bytes());
        value.extend(2u32.to_le_bytes());
        value.extend((len as u64).to_le_bytes());
        value.extend([0u8; 8]);
        value.extend(&first);
        value.extend(&second);
        let link_ea = decode_link(&value).unwrap();
        assert_eq!(link_ea.links.len(), 2);
        assert_eq!(link_ea.links[1].name, "hardlink");
        assert_eq!(link_ea.links[0].parent.text(), "[0x200000007:0x5:0x0]");
        let mut huge = value.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_link(&huge).is_err());
        let mut long = value.clone();
        long[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode_link(&long).is_err());
        let mut bad = value.clone();
        bad[24] = 0xff;
        assert!(decode_link(&bad).is_err());
        for cut in 0..value.len() {
            assert!(decode_link(&value[..cut]).is_err());
        }
    }

    fn lov_v1(count: u16, objs: &[(u64, u64, u32)]) -> Vec<u8> {
        let mut value = raw::LOV_MAGIC_V1.to_le_bytes().to_vec();
        value.extend(1u32.to_le_bytes());
        value.extend(fid_le(0x2_0000_0401, 9, 0));
        value.extend((1u32 << 20).to_le_bytes());
        value.extend(count.to_le_bytes());
        value.extend(3u16.to_le_bytes());
        for (lo, hi, idx) in objs {
            value.extend(lo.to_le_bytes());
            value.extend(hi.to_le_bytes());
            value.extend(0u32.to_le_bytes());
            value.extend(idx.to_le_bytes());
        }
        value
    }

    #[test]
    fn lov_plain_and_composite() {
        // An IDIF object (old id 0x1234 on OST 0) and a FID-on-OST object.
        let idif = 0x1_0000_0000u64;
        let value = lov_v1(2, &[(idif, 0x1234, 0), (0x1_0000_0400_0000 >> 8, 0x77, 3)]);
        let lov = decode_lov(&value).unwrap();
        assert_eq!(lov.magic, "v1");
        assert_eq!(
            (lov.stripe_size, lov.stripe_count),
            (Some(1 << 20), Some(2))
        );
        assert_eq!(lov.objects[0].oid, 0x1234);
        assert_eq!(lov.objects[0].seq, 0);
        assert_eq!(lov.objects[1].ost_idx, 3);
        assert_eq!(lov.objects[1].seq, 0x1_0000_0400_0000 >> 8);
        assert_eq!(lov.objects[1].oid, 0x77);
        // Stripe count 65535 with one object stored: one object, nothing allocated by the count.
        let value = lov_v1(u16::MAX, &[(0x10, 0, 1)]);
        assert_eq!(decode_lov(&value).unwrap().objects.len(), 1);
        // A composite layout of two components.
        let c1 = lov_v1(1, &[(0x5, 0, 0)]);
        let c2 = lov_v1(2, &[(0x6, 0, 1), (0x7, 0, 2)]);
        let mut comp = raw::LOV_MAGIC_COMP_V1.to_le_bytes().to_vec();
        let total = 32 + 2 * 48 + c1.len() + c2.len();
        comp.extend((total as u32).to_le_bytes());
        comp.extend(7u32.to_le_bytes());
        comp.extend(0u16.to_le_bytes());
        comp.extend(2u16.to_le_bytes());
        comp.extend([0u8; 16]);
        let mut off = 32 + 2 * 48;
        for (index, component) in [&c1, &c2].iter().enumerate() {
            comp.extend((index as u32 + 1).to_le_bytes());
            comp.extend(0x10u32.to_le_bytes());
            comp.extend((index as u64 * (1 << 20)).to_le_bytes());
            comp.extend(if index == 0 { 1u64 << 20 } else { u64::MAX }.to_le_bytes());
            comp.extend((off as u32).to_le_bytes());
            comp.extend((component.len() as u32).to_le_bytes());
            comp.extend(0u32.to_le_bytes());
            comp.extend([0u8; 12]);
            off += component.len();
        }
        comp.extend(&c1);
        comp.extend(&c2);
        let lov = decode_lov(&comp).unwrap();
        assert_eq!(lov.magic, "comp");
        assert_eq!(lov.layout_gen, 7);
        assert_eq!(lov.objects.len(), 3);
        assert_eq!(lov.stripe_count, Some(2));
        let comps = lov.components.unwrap();
        assert_eq!(comps[1].extent_end, u64::MAX);
        assert_eq!(comps[0].flag_names, vec!["init"]);
        // A component pointing past the end is reported on it; an entry table past the end fails.
        let mut bad = comp.clone();
        bad[32 + 24..32 + 28].copy_from_slice(&u32::MAX.to_le_bytes());
        let lov = decode_lov(&bad).unwrap();
        assert!(lov.components.unwrap()[0].decode_error.is_some());
        let mut many = comp.clone();
        many[14..16].copy_from_slice(&u16::MAX.to_le_bytes());
        assert!(decode_lov(&many).is_err());
        for cut in 0..comp.len() {
            let _ = decode_lov(&comp[..cut]);
        }
    }

    /// A `lov_foreign_md` as lustre_user.h lays it out: magic, length, type, flags (LE), value.
    fn foreign(length: u32, ftype: u32, flags: u32, value: &[u8]) -> Vec<u8> {
        let mut bytes = raw::LOV_MAGIC_FOREIGN.to_le_bytes().to_vec();
        bytes.extend(length.to_le_bytes());
        bytes.extend(ftype.to_le_bytes());
        bytes.extend(flags.to_le_bytes());
        bytes.extend(value);
        bytes
    }

    #[test]
    fn lov_foreign_known_answers() {
        let value = foreign(11, 0xda05, 0x3, b"/mnt/s3/obj");
        let lov = decode_lov(&value).unwrap();
        assert_eq!(lov.magic, "foreign");
        let layout = lov.foreign.unwrap();
        assert_eq!(layout.foreign_type, 0xda05);
        assert_eq!(layout.type_name.as_deref(), Some("symlink"));
        assert_eq!(layout.flags, 3);
        assert_eq!(layout.length, 11);
        assert_eq!(layout.value.as_deref(), Some("/mnt/s3/obj"));
        assert_eq!(layout.value_hex, "2f6d6e742f73332f6f626a");
        assert_eq!(stripe_count(&value), Some(0));
        // Binary value, unknown type: no text, hex kept, no name.
        let layout = decode_foreign(&foreign(2, 7, 0, &[0xff, 0x00])).unwrap();
        assert_eq!(
            (layout.value, layout.value_hex.as_str(), layout.type_name),
            (None, "ff00", None)
        );
        // A length past the value, and one in the billions, fail without allocating by it.
        assert!(decode_lov(&foreign(12, 0, 0, b"short")).is_err());
        assert!(decode_lov(&foreign(u32::MAX, 0, 0, b"x")).is_err());
        assert_eq!(stripe_count(&foreign(u32::MAX, 0, 0, b"x")), None);
        for cut in 0..value.len() {
            let _ = decode_lov(&value[..cut]);
        }
    }

    #[test]
    fn lov_composite_with_a_foreign_component() {
        let c1 = lov_v1(2, &[(0x11, 0, 0), (0x12, 0, 1)]);
        let c2 = foreign(4, 0, 1, b"hsm\0");
        let head = raw::LovCompMd::SIZE + 2 * raw::LovCompMdEntry::SIZE;
        let mut comp = raw::LOV_MAGIC_COMP_V1.to_le_bytes().to_vec();
        comp.extend(((head + c1.len() + c2.len()) as u32).to_le_bytes());
        comp.extend(5u32.to_le_bytes());
        comp.extend(0u16.to_le_bytes());
        comp.extend(2u16.to_le_bytes());
        comp.extend(1u16.to_le_bytes()); // two mirrors
        comp.extend([0u8; 14]);
        let mut off = head;
        for (index, component) in [&c1, &c2].iter().enumerate() {
            comp.extend((index as u32 + 1).to_le_bytes());
            comp.extend(0x10u32.to_le_bytes());
            comp.extend(0u64.to_le_bytes());
            comp.extend(u64::MAX.to_le_bytes());
            comp.extend((off as u32).to_le_bytes());
            comp.extend((component.len() as u32).to_le_bytes());
            comp.extend(5u32.to_le_bytes());
            comp.extend([0u8; 12]);
            off += component.len();
        }
        comp.extend(&c1);
        comp.extend(&c2);
        let lov = decode_lov(&comp).unwrap();
        assert_eq!(lov.mirrors, Some(2));
        let comps = lov.components.unwrap();
        assert_eq!(comps[0].layout.as_ref().map(|p| p.stripe_count), Some(2));
        assert!(comps[0].foreign.is_none());
        assert!(comps[1].layout.is_none() && comps[1].decode_error.is_none());
        let layout = comps[1].foreign.clone().unwrap();
        assert_eq!(
            (layout.foreign_type, layout.flags, layout.value.as_deref()),
            (0, 1, Some("hsm"))
        );
        // The summary reads the plain component's count, never the foreign blob's bytes.
        assert_eq!(stripe_count(&comp), Some(2));
        assert_eq!(lov.objects.len(), 2);
    }

    #[test]
    fn filter_fid_sizes() {
        let mut value = fid_le(0x2_0000_0401, 3, 2);
        assert_eq!(decode_filter_fid(&value).unwrap().stripe_index, 2);
        value.extend(9u64.to_le_bytes());
        value.extend(0u64.to_le_bytes());
        assert_eq!(decode_filter_fid(&value).unwrap().objid, Some(9));
        let mut newer = fid_le(1, 1, 0);
        newer.extend((1u32 << 20).to_le_bytes());
        newer.extend(4u32.to_le_bytes());
        newer.extend([0u8; 20]);
        newer.extend(5u32.to_le_bytes());
        newer.extend(6u32.to_le_bytes());
        let filter_fid = decode_filter_fid(&newer).unwrap();
        assert_eq!(
            (
                filter_fid.stripe_count,
                filter_fid.layout_version,
                filter_fid.range
            ),
            (Some(4), Some(5), Some(6))
        );
        assert!(decode_filter_fid(&newer[..20]).is_err());
        assert!(decode_filter_fid(&newer[..44])
            .unwrap()
            .layout_version
            .is_none());
    }
}
