//! Partition tables of whole-disk images: MBR (with extended/logical partitions) and GPT.
//!
//! The on-disk structures are declared in [`crate::reader::ondisk::partition`]; the EBR chain is
//! read as the Linux kernel's `block/partitions/msdos.c` (`parse_extended`) reads it.

pub use crate::reader::ondisk::partition::{BootSector, GptEntry, GptHeader, MbrEntry};
use crate::reader::source::Source;
use binrw::BinRead;
use serde::Serialize;

/// One partition found in a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum TableKind {
    /// An MBR (msdos) table, with its extended chain.
    Mbr,
    /// A GUID partition table.
    Gpt,
}

const LINUX_GUID: [u8; 16] = [
    0xAF, 0x3D, 0xC6, 0x0F, 0x83, 0x84, 0x72, 0x47, 0x8E, 0x79, 0x3D, 0x69, 0xD8, 0x47, 0x7D, 0xE4,
];
/// Bound on partitions examined (GPT entries, EBR chain length).
const MAX_PARTS: u32 = 256;
/// Bytes of a (legacy) sector, the unit of MBR fields.
const SECTOR: u64 = 512;

/// Decode a structure from `bytes`; too few bytes or a wrong magic is `None`.
fn decode<T>(bytes: &[u8]) -> Option<T>
where
    T: for<'a> BinRead<Args<'a> = ()> + binrw::meta::ReadEndian,
{
    T::read(&mut std::io::Cursor::new(bytes)).ok()
}

fn guid_string(guid: &[u8; 16]) -> String {
    let le32 = u32::from_le_bytes([guid[0], guid[1], guid[2], guid[3]]);
    let le16a = u16::from_le_bytes([guid[4], guid[5]]);
    let le16b = u16::from_le_bytes([guid[6], guid[7]]);
    format!(
        "{le32:08X}-{le16a:04X}-{le16b:04X}-{:02X}{:02X}-{}",
        guid[8],
        guid[9],
        guid[10..]
            .iter()
            .map(|x| format!("{x:02X}"))
            .collect::<String>()
    )
}

/// True when the bytes at `offset` of `src` start an ext2/3/4 filesystem (magic at +1080).
pub fn has_ext_magic(src: &Source, offset: u64) -> bool {
    offset
        .checked_add(crate::reader::superblock::SUPERBLOCK_OFFSET + 56)
        .and_then(|o| src.try_read(o, 2))
        .is_some_and(|m| m == crate::reader::superblock::EXT2_MAGIC.to_le_bytes())
}

fn mbr_partition(src: &Source, number: u32, offset: u64, entry: &MbrEntry) -> Partition {
    Partition {
        number,
        offset,
        size: u64::from(entry.nr_sects) * SECTOR,
        kind: format!("0x{:02x}", entry.sys_ind),
        linux: entry.sys_ind == 0x83,
        name: String::new(),
        has_ext_magic: has_ext_magic(src, offset),
    }
}

/// Read the partition table of `src`, if it has one.
pub fn read_table(src: &Source) -> Option<(TableKind, Vec<Partition>)> {
    let mbr: BootSector = decode(&src.try_read(0, SECTOR)?)?;
    if mbr.entries.iter().any(MbrEntry::is_protective) {
        for sector in [512u64, 4096] {
            if let Some(parts) = read_gpt(src, sector) {
                return Some((TableKind::Gpt, parts));
            }
        }
    }
    let mut parts = Vec::new();
    let mut logical_no = 5;
    for (number, entry) in (1u32..).zip(mbr.entries.iter()) {
        if !entry.is_used() {
            continue;
        }
        let start = u64::from(entry.start_sect) * SECTOR;
        if entry.is_extended() {
            read_ebr_chain(src, start, &mut parts, &mut logical_no);
        } else {
            parts.push(mbr_partition(src, number, start, entry));
        }
    }
    Some((TableKind::Mbr, parts))
}

/// Follow the chain of EBRs of the extended partition at `ext_start`, as the Linux kernel's
/// msdos parser (`parse_extended`) and libblkid read it: in each EBR every used, non-extended
/// entry is a logical partition (relative to that EBR), numbered in order from 5, and the first
/// extended entry, in whichever slot, links to the next EBR (relative to the extended
/// partition's start). Bounded by [`MAX_PARTS`] EBRs, and an EBR met twice ends the chain.
fn read_ebr_chain(src: &Source, ext_start: u64, parts: &mut Vec<Partition>, no: &mut u32) {
    let mut ebr = ext_start;
    let mut seen = std::collections::HashSet::new();
    for _ in 0..MAX_PARTS {
        if !seen.insert(ebr) {
            return;
        }
        let Some(table) = src
            .try_read(ebr, SECTOR)
            .and_then(|b| decode::<BootSector>(&b))
        else {
            return;
        };
        for entry in table
            .entries
            .iter()
            .filter(|e| e.is_used() && !e.is_extended())
        {
            let Some(start) = ebr.checked_add(u64::from(entry.start_sect) * SECTOR) else {
                continue;
            };
            parts.push(mbr_partition(src, *no, start, entry));
            *no += 1;
        }
        let Some(link) = table
            .entries
            .iter()
            .find(|e| e.is_used() && e.is_extended())
        else {
            return;
        };
        match ext_start.checked_add(u64::from(link.start_sect) * SECTOR) {
            Some(next) => ebr = next,
            None => return,
        }
    }
}

fn read_gpt(src: &Source, sector: u64) -> Option<Vec<Partition>> {
    let header: GptHeader = decode(&src.try_read(sector, 92)?)?;
    let count = header.num_partition_entries.min(MAX_PARTS);
    let esize = u64::from(header.sizeof_partition_entry);
    if !(128..=4096).contains(&esize) {
        return None;
    }
    let base = header.partition_entry_lba.checked_mul(sector)?;
    let mut parts = Vec::new();
    for index in 0..count {
        let off = base.checked_add(u64::from(index) * esize)?;
        let Some(entry) = src
            .try_read(off, esize)
            .and_then(|b| decode::<GptEntry>(&b))
        else {
            break;
        };
        if let Some(part) = gpt_partition(src, index + 1, sector, &entry) {
            parts.push(part);
        }
    }
    Some(parts)
}

fn gpt_partition(src: &Source, number: u32, sector: u64, entry: &GptEntry) -> Option<Partition> {
    let guid = entry.partition_type_guid;
    if guid == [0u8; 16] || entry.ending_lba < entry.starting_lba {
        return None;
    }
    let offset = entry.starting_lba.checked_mul(sector)?;
    let size = (entry.ending_lba - entry.starting_lba)
        .checked_add(1)?
        .checked_mul(sector)?;
    Some(Partition {
        number,
        offset,
        size,
        kind: guid_string(&guid),
        linux: guid == LINUX_GUID,
        name: entry.name(),
        has_ext_magic: has_ext_magic(src, offset),
    })
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

    fn put_entry(img: &mut [u8], sector_off: usize, slot: usize, kind: u8, start: u32, len: u32) {
        let at = sector_off + 446 + 16 * slot;
        img[at + 4] = kind;
        img[at + 8..at + 12].copy_from_slice(&start.to_le_bytes());
        img[at + 12..at + 16].copy_from_slice(&len.to_le_bytes());
        img[sector_off + 510] = 0x55;
        img[sector_off + 511] = 0xAA;
    }

    #[test]
    fn ebr_with_data_entry_first_and_link_second() {
        // Extended partition at sector 100. EBR 1: slot 0 a data partition (type 0x04) at +10,
        // slot 1 the link (0x05) to the EBR at ext+200. EBR 2: slot 0 a Linux partition at +10,
        // slot 1 empty (end of chain).
        let mut img = vec![0u8; 512 * 400];
        put_entry(&mut img, 0, 0, 0x05, 100, 300);
        put_entry(&mut img, 100 * 512, 0, 0x04, 10, 50);
        put_entry(&mut img, 100 * 512, 1, 0x05, 200, 90);
        put_entry(&mut img, 300 * 512, 0, 0x83, 10, 80);
        let src = Source::from_bytes(&img).unwrap();
        let (_, parts) = read_table(&src).unwrap();
        let got: Vec<(u32, u64, u64, &str)> = parts
            .iter()
            .map(|p| (p.number, p.offset / 512, p.size / 512, p.kind.as_str()))
            .collect();
        assert_eq!(got, vec![(5, 110, 50, "0x04"), (6, 310, 80, "0x83")]);
    }

    #[test]
    fn ebr_link_in_first_slot_and_cycles_end() {
        // EBR 1 has its link in slot 0 and its data in slot 1; EBR 2 links back to EBR 1.
        let mut img = vec![0u8; 512 * 400];
        put_entry(&mut img, 0, 1, 0x0F, 100, 300);
        put_entry(&mut img, 100 * 512, 0, 0x85, 150, 90);
        put_entry(&mut img, 100 * 512, 1, 0x83, 20, 30);
        put_entry(&mut img, 250 * 512, 0, 0x83, 5, 40);
        put_entry(&mut img, 250 * 512, 1, 0x05, 0, 300);
        let src = Source::from_bytes(&img).unwrap();
        let (_, parts) = read_table(&src).unwrap();
        let got: Vec<(u32, u64)> = parts.iter().map(|p| (p.number, p.offset / 512)).collect();
        assert_eq!(got, vec![(5, 120), (6, 255)]);
    }

    #[test]
    fn short_boot_sector_is_no_table() {
        assert!(decode::<BootSector>(&[0u8; 100]).is_none());
        assert!(decode::<GptEntry>(&[1u8; 127]).is_none());
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
