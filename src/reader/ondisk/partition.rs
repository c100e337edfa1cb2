//! Partition table structures (`struct msdos_partition`, the boot sector's table and signature,
//! `gpt_header`, `gpt_entry`), as the Linux kernel's `block/partitions/msdos.c` and `efi.h`
//! declare them; read by [`crate::reader::partition`].

use binrw::BinRead;

/// One of the four 16-byte entries of an MBR or EBR (`struct msdos_partition`).
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[br(little)]
pub struct MbrEntry {
    /// Boot indicator (0x80 active).
    pub boot_ind: u8,
    /// Cylinder-head-sector address of the first sector (unused: LBA fields rule).
    pub chs_start: [u8; 3],
    /// Partition type (0x83 Linux, 0x05/0x0F/0x85 extended, 0xEE GPT protective).
    pub sys_ind: u8,
    /// Cylinder-head-sector address of the last sector.
    pub chs_end: [u8; 3],
    /// First sector, relative to the disk (MBR) or to this EBR (logical partition) or to the
    /// extended partition's start (link to the next EBR).
    pub start_sect: u32,
    /// Length in sectors.
    pub nr_sects: u32,
}

impl MbrEntry {
    /// DOS (0x05), Windows LBA (0x0F) and Linux (0x85) extended partitions.
    pub fn is_extended(&self) -> bool {
        matches!(self.sys_ind, 0x05 | 0x0F | 0x85)
    }
    /// True when the slot describes something (type and length set).
    pub fn is_used(&self) -> bool {
        self.sys_ind != 0 && self.nr_sects != 0
    }
    /// GPT's protective entry.
    pub fn is_protective(&self) -> bool {
        self.sys_ind == 0xEE
    }
}

/// A boot sector holding a partition table: the MBR, or an EBR of the extended chain.
#[binrw::binread]
#[derive(Clone, Copy, Debug)]
#[br(little)]
pub struct BootSector {
    /// The four entries at byte 446.
    #[br(pad_before = 446)]
    pub entries: [MbrEntry; 4],
    /// The 0x55 0xAA signature ends the sector (checked, not kept).
    #[br(temp, magic = 0xAA55u16)]
    signature: (),
}

/// GPT header (`gpt_header`), first 92 bytes.
#[derive(BinRead, Clone, Copy, Debug)]
#[br(little, magic = b"EFI PART")]
pub struct GptHeader {
    /// GPT revision (0x00010000).
    pub revision: u32,
    /// Bytes of the header covered by its CRC.
    pub header_size: u32,
    /// CRC32 of the header with this field zeroed.
    pub header_crc32: u32,
    /// Reserved, zero.
    pub reserved: u32,
    /// LBA of this header.
    pub my_lba: u64,
    /// LBA of the other (backup or primary) header.
    pub alternate_lba: u64,
    /// First LBA partitions may use.
    pub first_usable_lba: u64,
    /// Last LBA partitions may use.
    pub last_usable_lba: u64,
    /// The disk's GUID (mixed-endian as stored).
    pub disk_guid: [u8; 16],
    /// LBA where the entry array starts.
    pub partition_entry_lba: u64,
    /// Entries in the array.
    pub num_partition_entries: u32,
    /// Bytes per entry (128 or a multiple).
    pub sizeof_partition_entry: u32,
    /// CRC32 of the entry array.
    pub partition_entry_array_crc32: u32,
}

/// GPT partition entry (`gpt_entry`), first 128 bytes.
#[derive(BinRead, Clone, Copy, Debug)]
#[br(little)]
pub struct GptEntry {
    /// Partition type GUID (all zero: unused entry).
    pub partition_type_guid: [u8; 16],
    /// This partition's GUID.
    pub unique_partition_guid: [u8; 16],
    /// First LBA.
    pub starting_lba: u64,
    /// Last LBA (inclusive).
    pub ending_lba: u64,
    /// Attribute bits.
    pub attributes: u64,
    /// UTF-16LE name, NUL padded.
    pub partition_name: [u16; 36],
}

impl GptEntry {
    /// The UTF-16 name up to its first NUL.
    pub fn name(&self) -> String {
        let units: Vec<u16> = self
            .partition_name
            .iter()
            .copied()
            .take_while(|&c| c != 0)
            .collect();
        String::from_utf16_lossy(&units)
    }
}
