//! Partition tables of whole-disk images: MBR (with extended/logical partitions) and GPT.

use crate::bytes::Bytes;
use crate::source::Source;
use serde::Serialize;

/// One partition found in a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Partition {
    /// 1-based number as tools like fdisk/parted number it (MBR logical partitions start at 5).
    pub number: u32,
    /// Byte offset of the partition.
    pub offset: u64,
    /// Length in bytes.
    pub size: u64,
    /// Type: MBR type byte as `0x83`, or GPT type GUID.
    pub kind: String,
    /// True for a Linux filesystem type (MBR 0x83, GPT 0FC63DAF-8483-4772-8E79-3D69D8477DE4).
    pub linux: bool,
    /// GPT partition name, if any.
    pub name: String,
    /// True when the partition holds an ext2/3/4 superblock magic.
    pub has_ext_magic: bool,
}

/// Which table was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TableKind {
    Mbr,
    Gpt,
}

const LINUX_GUID: [u8; 16] = [
    0xAF, 0x3D, 0xC6, 0x0F, 0x83, 0x84, 0x72, 0x47, 0x8E, 0x79, 0x3D, 0x69, 0xD8, 0x47, 0x7D, 0xE4,
];
/// Bound on partitions examined (GPT entries, EBR chain length).
const MAX_PARTS: u32 = 256;

fn guid_string(g: &[u8; 16]) -> String {
    let b = Bytes::new(g);
    format!(
        "{:08X}-{:04X}-{:04X}-{:02X}{:02X}-{}",
        b.le32(0),
        b.le16(4),
        b.le16(6),
        b.u8(8),
        b.u8(9),
        g.iter()
            .skip(10)
            .map(|x| format!("{x:02X}"))
            .collect::<String>()
    )
}

/// True when the bytes at `offset` of `src` start an ext2/3/4 filesystem (magic at +1080).
pub fn has_ext_magic(src: &Source, offset: u64) -> bool {
    match offset
        .checked_add(1024 + 56)
        .and_then(|o| src.try_read(o, 2))
    {
        Some(m) => m == [0x53, 0xEF],
        None => false,
    }
}

fn finish(src: &Source, mut p: Partition) -> Partition {
    p.has_ext_magic = has_ext_magic(src, p.offset);
    p
}

/// Read the partition table of `src`, if it has one.
pub fn read_table(src: &Source) -> Option<(TableKind, Vec<Partition>)> {
    let mbr = src.try_read(0, 512)?;
    let m = Bytes::new(mbr);
    if m.le16(510) != 0xAA55 {
        return None;
    }
    let is_protective = (0..4).any(|i| m.u8(446 + 16 * i + 4) == 0xEE);
    if is_protective {
        for sector in [512u64, 4096] {
            if let Some(parts) = read_gpt(src, sector) {
                return Some((TableKind::Gpt, parts));
            }
        }
    }
    let mut parts = Vec::new();
    let mut logical_no = 5;
    for i in 0..4u32 {
        let e = 446 + 16 * i as usize;
        let kind = m.u8(e + 4);
        let start = u64::from(m.le32(e + 8)) * 512;
        let len = u64::from(m.le32(e + 12)) * 512;
        if kind == 0 || len == 0 {
            continue;
        }
        if matches!(kind, 0x05 | 0x0F | 0x85) {
            read_ebr_chain(src, start, &mut parts, &mut logical_no);
            continue;
        }
        parts.push(finish(
            src,
            Partition {
                number: i + 1,
                offset: start,
                size: len,
                kind: format!("0x{kind:02x}"),
                linux: kind == 0x83,
                name: String::new(),
                has_ext_magic: false,
            },
        ));
    }
    Some((TableKind::Mbr, parts))
}

fn read_ebr_chain(src: &Source, ext_start: u64, parts: &mut Vec<Partition>, no: &mut u32) {
    let mut ebr = ext_start;
    for _ in 0..MAX_PARTS {
        let Some(b) = src.try_read(ebr, 512) else {
            return;
        };
        let d = Bytes::new(b);
        if d.le16(510) != 0xAA55 {
            return;
        }
        let kind = d.u8(446 + 4);
        let start = ebr + u64::from(d.le32(446 + 8)) * 512;
        let len = u64::from(d.le32(446 + 12)) * 512;
        if kind != 0 && len != 0 {
            parts.push(finish(
                src,
                Partition {
                    number: *no,
                    offset: start,
                    size: len,
                    kind: format!("0x{kind:02x}"),
                    linux: kind == 0x83,
                    name: String::new(),
                    has_ext_magic: false,
                },
            ));
            *no += 1;
        }
        let next = u64::from(d.le32(446 + 16 + 8)) * 512;
        if d.u8(446 + 16 + 4) == 0 || next == 0 {
            return;
        }
        let n = ext_start + next;
        if n <= ebr {
            return; // chains only go forward: refuse loops
        }
        ebr = n;
    }
}

fn read_gpt(src: &Source, sector: u64) -> Option<Vec<Partition>> {
    let h = Bytes::new(src.try_read(sector, 92)?);
    if h.slice(0, 8)? != b"EFI PART" {
        return None;
    }
    let entries_lba = h.le64(0x48);
    let count = h.le32(0x50).min(MAX_PARTS);
    let esize = u64::from(h.le32(0x54));
    if !(128..=4096).contains(&esize) {
        return None;
    }
    let base = entries_lba.checked_mul(sector)?;
    let mut parts = Vec::new();
    for i in 0..count {
        let off = base.checked_add(u64::from(i) * esize)?;
        let Some(e) = src.try_read(off, esize) else {
            break;
        };
        let e = Bytes::new(e);
        let guid: [u8; 16] = e.array(0);
        if guid == [0u8; 16] {
            continue;
        }
        let first = e.le64(0x20);
        let last = e.le64(0x28);
        if last < first {
            continue;
        }
        let name: String = {
            let units: Vec<u16> = (0..36)
                .map(|k| e.le16(0x38 + 2 * k))
                .take_while(|&c| c != 0)
                .collect();
            String::from_utf16_lossy(&units)
        };
        let (Some(offset), Some(size)) = (
            first.checked_mul(sector),
            (last - first)
                .checked_add(1)
                .and_then(|n| n.checked_mul(sector)),
        ) else {
            continue;
        };
        parts.push(finish(
            src,
            Partition {
                number: i + 1,
                offset,
                size,
                kind: guid_string(&guid),
                linux: guid == LINUX_GUID,
                name,
                has_ext_magic: false,
            },
        ));
    }
    Some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_guid_formats() {
        assert_eq!(
            guid_string(&LINUX_GUID),
            "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
        );
    }

    #[test]
    fn mbr_with_one_linux_partition() {
        let mut img = vec![0u8; 4096 + 2048];
        img[510] = 0x55;
        img[511] = 0xAA;
        img[446 + 4] = 0x83;
        img[446 + 8..446 + 12].copy_from_slice(&8u32.to_le_bytes());
        img[446 + 12..446 + 16].copy_from_slice(&4u32.to_le_bytes());
        img[4096 + 1080] = 0x53;
        img[4096 + 1081] = 0xEF;
        let src = Source::from_bytes(&img).unwrap();
        let (kind, parts) = read_table(&src).unwrap();
        assert_eq!(kind, TableKind::Mbr);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].offset, 4096);
        assert!(parts[0].linux && parts[0].has_ext_magic);
    }
}
