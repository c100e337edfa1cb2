//! On-disk inodes (128 bytes, plus the large-inode part up to s_inode_size).

use crate::bytes::Bytes;
use crate::csum::crc32c_raw;
use serde::Serialize;

/// i_flags: uses extents
pub const EXTENTS_FL: u32 = 0x0008_0000;
/// i_flags: inline data
pub const INLINE_DATA_FL: u32 = 0x1000_0000;
/// i_flags: huge_file block units
pub const HUGE_FILE_FL: u32 = 0x0004_0000;
/// i_flags: value inode of an xattr
pub const EA_INODE_FL: u32 = 0x0020_0000;
/// i_flags: hashed-index directory
pub const INDEX_FL: u32 = 0x0000_1000;

/// i_flags names (chattr/lsattr style long names as debugfs prints them).
pub const FLAG_NAMES: [(u32, &str); 22] = [
    (0x0000_0001, "SECRM"),
    (0x0000_0002, "UNRM"),
    (0x0000_0004, "COMPR"),
    (0x0000_0008, "SYNC"),
    (0x0000_0010, "IMMUTABLE"),
    (0x0000_0020, "APPEND"),
    (0x0000_0040, "NODUMP"),
    (0x0000_0080, "NOATIME"),
    (0x0000_0800, "ENCRYPT"),
    (0x0000_1000, "INDEX"),
    (0x0000_2000, "IMAGIC"),
    (0x0000_4000, "JOURNAL_DATA"),
    (0x0000_8000, "NOTAIL"),
    (0x0001_0000, "DIRSYNC"),
    (0x0002_0000, "TOPDIR"),
    (0x0004_0000, "HUGE_FILE"),
    (0x0008_0000, "EXTENTS"),
    (0x0010_0000, "VERITY"),
    (0x0020_0000, "EA_INODE"),
    (0x1000_0000, "INLINE_DATA"),
    (0x2000_0000, "PROJINHERIT"),
    (0x4000_0000, "CASEFOLD"),
];

/// A decoded inode. Fields of the large part are 0 when the inode (or i_extra_isize) lacks them.
#[derive(Clone, Debug, Serialize)]
pub struct Inode {
    pub mode: u16,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub atime: u32,
    pub ctime: u32,
    pub mtime: u32,
    pub dtime: u32,
    pub links_count: u16,
    /// i_blocks including the hi word (units per huge_file / HUGE_FILE_FL; see `blocks_512`).
    pub blocks_raw: u64,
    pub flags: u32,
    pub version: u32,
    /// The 60 bytes of i_block.
    #[serde(skip)]
    pub block: [u8; 60],
    pub generation: u32,
    pub file_acl: u64,
    pub checksum_lo: u16,
    pub extra_isize: u16,
    pub checksum_hi: u16,
    pub ctime_extra: u32,
    pub mtime_extra: u32,
    pub atime_extra: u32,
    pub crtime: u32,
    pub crtime_extra: u32,
    pub version_hi: u32,
    pub projid: u32,
    /// Size of the on-disk inode record (s_inode_size).
    pub record_size: u32,
}

impl Inode {
    /// Decode from the raw record (`raw.len()` is the inode size).
    pub fn parse(raw: &[u8]) -> Inode {
        let d = Bytes::new(raw);
        let record_size = raw.len() as u32;
        let extra_isize = if record_size > 128 { d.le16(0x80) } else { 0 };
        // A field of the large part exists when it lies inside both the record and extra_isize.
        let has = |off: usize, len: usize| {
            record_size > 128
                && off + len <= 128 + extra_isize as usize
                && off + len <= record_size as usize
        };
        let big32 = |off: usize| if has(off, 4) { d.le32(off) } else { 0 };
        Inode {
            mode: d.le16(0x0),
            uid: u32::from(d.le16(0x2)) | (u32::from(d.le16(0x78)) << 16),
            gid: u32::from(d.le16(0x18)) | (u32::from(d.le16(0x7A)) << 16),
            size: u64::from(d.le32(0x4)) | (u64::from(d.le32(0x6C)) << 32),
            atime: d.le32(0x8),
            ctime: d.le32(0xC),
            mtime: d.le32(0x10),
            dtime: d.le32(0x14),
            links_count: d.le16(0x1A),
            blocks_raw: u64::from(d.le32(0x1C)) | (u64::from(d.le16(0x74)) << 32),
            flags: d.le32(0x20),
            version: d.le32(0x24),
            block: d.array(0x28),
            generation: d.le32(0x64),
            file_acl: u64::from(d.le32(0x68)) | (u64::from(d.le16(0x76)) << 32),
            checksum_lo: d.le16(0x7C),
            extra_isize,
            checksum_hi: if has(0x82, 2) { d.le16(0x82) } else { 0 },
            ctime_extra: big32(0x84),
            mtime_extra: big32(0x88),
            atime_extra: big32(0x8C),
            crtime: big32(0x90),
            crtime_extra: big32(0x94),
            version_hi: big32(0x98),
            projid: big32(0x9C),
            record_size,
        }
    }

    /// Flag test.
    pub fn has_flag(&self, f: u32) -> bool {
        self.flags & f != 0
    }
    /// File type bits of the mode.
    pub fn file_type(&self) -> u16 {
        self.mode & 0o170000
    }
    /// Directory?
    pub fn is_dir(&self) -> bool {
        self.file_type() == 0o040000
    }
    /// Regular file?
    pub fn is_reg(&self) -> bool {
        self.file_type() == 0o100000
    }
    /// Symbolic link?
    pub fn is_symlink(&self) -> bool {
        self.file_type() == 0o120000
    }
    /// Names of the set i_flags bits.
    pub fn flag_names(&self) -> Vec<String> {
        let mut v: Vec<String> = FLAG_NAMES
            .iter()
            .filter(|(b, _)| self.flags & b != 0)
            .map(|(_, n)| (*n).to_string())
            .collect();
        let known: u32 = FLAG_NAMES.iter().map(|(b, _)| b).fold(0, |a, b| a | b);
        let unknown = self.flags & !known;
        if unknown != 0 {
            v.push(format!("0x{unknown:08x}"));
        }
        v
    }
}

/// Does the inode carry the checksum hi half (ext2fs_inode_csum has_hi)?
fn csum_has_hi(raw: &[u8]) -> bool {
    raw.len() > 128 && Bytes::new(raw).le16(0x80) >= 4
}

/// Inode checksum as libext2fs computes it (low 16 bits only without the hi field).
pub fn inode_checksum(seed: u32, ino: u32, raw: &[u8]) -> u32 {
    let d = Bytes::new(raw);
    let has_hi = csum_has_hi(raw);
    let gen = d.le32(0x64);
    let mut c = crc32c_raw(seed, &ino.to_le_bytes());
    c = crc32c_raw(c, &gen.to_le_bytes());
    // The record with i_checksum_lo (0x7C) and, when present, i_checksum_hi (0x82) read as zero.
    let part = |a: usize, b: usize| raw.get(a.min(raw.len())..b.min(raw.len())).unwrap_or(&[]);
    c = crc32c_raw(c, part(0, 0x7C));
    c = crc32c_raw(c, &[0u8; 2][..2.min(raw.len().saturating_sub(0x7C))]);
    if has_hi {
        c = crc32c_raw(c, part(0x7E, 0x82));
        c = crc32c_raw(c, &[0u8; 2]);
        c = crc32c_raw(c, part(0x84, raw.len()));
    } else {
        c = crc32c_raw(c, part(0x7E, raw.len()));
    }
    if has_hi {
        c
    } else {
        c & 0xFFFF
    }
}

/// The stored inode checksum (lo, plus hi when present).
pub fn stored_checksum(raw: &[u8]) -> u32 {
    let d = Bytes::new(raw);
    let mut v = u32::from(d.le16(0x7C));
    if csum_has_hi(raw) {
        v |= u32::from(d.le16(0x82)) << 16;
    }
    v
}

/// ext2fs_inode_csum_verify: match, or an all-zero base inode.
pub fn inode_checksum_ok(seed: u32, ino: u32, raw: &[u8]) -> bool {
    if inode_checksum(seed, ino, raw) == stored_checksum(raw) {
        return true;
    }
    raw.iter().take(128).all(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_records() {
        let mut raw = vec![0u8; 256];
        raw[0] = 0xA4;
        raw[1] = 0x81; // 0100644
        raw[0x80] = 32;
        raw[0x9C] = 7;
        let i = Inode::parse(&raw);
        assert!(i.is_reg());
        assert_eq!(i.extra_isize, 32);
        assert_eq!(i.projid, 7);
        let mut raw2 = raw.clone();
        raw2[0x80] = 28;
        assert_eq!(Inode::parse(&raw2).projid, 0);
        assert_eq!(Inode::parse(&raw[..128]).extra_isize, 0);
        assert!(inode_checksum_ok(1, 2, &[0u8; 256]));
    }
}
