//! On-disk inodes (128 bytes, plus the large-inode part up to s_inode_size).

use crate::error::{Error, Problem, ProblemKind, Result};
use crate::reader::extent::{self, BlockMapWalk, ExtentWalk, WalkLimits};
use crate::reader::fs::Filesystem;
use crate::reader::ondisk::blockmap::IBlockMap;
pub use crate::reader::ondisk::inode::{InodeBase, InodeLarge};
use crate::reader::ondisk::{self, inode as ondisk_inode};
use crate::reader::xattr;
use serde::Serialize;

pub use crate::reader::ondisk::inode::{
    EA_INODE_FL, EXTENTS_FL, HUGE_FILE_FL, INDEX_FL, INLINE_DATA_FL,
};

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
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Inode {
    /// `i_mode`.
    pub mode: u16,
    /// `i_uid` with its high half.
    pub uid: u32,
    /// `i_gid` with its high half.
    pub gid: u32,
    /// `i_size` with its high half.
    pub size: u64,
    /// `i_atime`.
    pub atime: u32,
    /// `i_ctime`.
    pub ctime: u32,
    /// `i_mtime`.
    pub mtime: u32,
    /// `i_dtime`.
    pub dtime: u32,
    /// `i_links_count`.
    pub links_count: u16,
    /// i_blocks including the hi word (units per huge_file / HUGE_FILE_FL; see `blocks_512`).
    pub blocks_raw: u64,
    /// `i_flags`.
    pub flags: u32,
    /// `l_i_version` (osd1).
    pub version: u32,
    /// The 60 bytes of i_block.
    #[serde(skip)]
    pub block: [u8; 60],
    /// `i_generation`.
    pub generation: u32,
    /// `i_file_acl` with its high half.
    pub file_acl: u64,
    /// `i_checksum_lo`.
    pub checksum_lo: u16,
    /// `i_extra_isize`.
    pub extra_isize: u16,
    /// `i_checksum_hi`.
    pub checksum_hi: u16,
    /// `i_ctime_extra`.
    pub ctime_extra: u32,
    /// `i_mtime_extra`.
    pub mtime_extra: u32,
    /// `i_atime_extra`.
    pub atime_extra: u32,
    /// `i_crtime`.
    pub crtime: u32,
    /// `i_crtime_extra`.
    pub crtime_extra: u32,
    /// `i_version_hi`.
    pub version_hi: u32,
    /// `i_projid`.
    pub projid: u32,
    /// Size of the on-disk inode record (s_inode_size).
    pub record_size: u32,
    /// i_obso_faddr (debugfs prints it as the fragment address).
    #[serde(skip)]
    pub obso_faddr: u32,
    /// The large part as the record holds it, whatever i_extra_isize says (debugfs prints these).
    #[serde(skip)]
    pub in_record: InodeLarge,
}

impl Inode {
    /// Decode from the raw record (`raw.len()` is the inode size); a record shorter than the
    /// 128-byte base is an error the caller sees.
    pub fn decode(raw: &[u8]) -> Result<Inode> {
        let base = InodeBase::decode_fast(raw).ok_or(Error::Short {
            what: "inode",
            need: ondisk_inode::BASE_SIZE,
            got: raw.len(),
        })?;
        Ok(Self::from_parts(&base, raw))
    }

    /// Decode from the raw record, reading bytes missing from a short record as zero (callers
    /// always pass a whole `s_inode_size` record; see [`Inode::decode`]).
    #[inline]
    pub fn parse(raw: &[u8]) -> Inode {
        let base = InodeBase::decode_fast(raw)
            .or_else(|| ondisk::decode_zero_extended::<InodeBase>(raw).ok())
            .unwrap_or_default();
        Self::from_parts(&base, raw)
    }

    #[inline]
    fn from_parts(base: &InodeBase, raw: &[u8]) -> Inode {
        let record_size = raw.len() as u32;
        let in_record = if raw.len() > ondisk_inode::BASE_SIZE {
            ondisk_inode::large_in_record(raw)
        } else {
            InodeLarge::default()
        };
        // The large part counts as far as i_extra_isize (and the record) reach: all of the
        // record's when both cover the whole structure.
        let whole = ondisk_inode::BASE_SIZE + <InodeLarge as ondisk::OnDisk>::SIZE;
        let large = if raw.len() <= ondisk_inode::BASE_SIZE {
            InodeLarge::default()
        } else if raw.len() >= whole
            && ondisk_inode::BASE_SIZE + usize::from(in_record.extra_isize) >= whole
        {
            in_record
        } else {
            ondisk_inode::large_in_use(raw)
        };
        Inode {
            mode: base.mode,
            uid: base.uid(),
            gid: base.gid(),
            size: base.size(),
            atime: base.atime,
            ctime: base.ctime,
            mtime: base.mtime,
            dtime: base.dtime,
            links_count: base.links_count,
            blocks_raw: base.blocks(),
            flags: base.flags,
            version: base.version,
            // From the record itself (the same bytes as `base.block`, which the caller decoded
            // from `raw`): copying the decoded array stalled on every inode.
            block: raw
                .get(I_BLOCK_OFFSET..I_BLOCK_OFFSET + I_BLOCK_SIZE)
                .and_then(|b| b.try_into().ok())
                .unwrap_or(base.block),
            generation: base.generation,
            file_acl: base.file_acl(),
            checksum_lo: base.checksum_lo,
            extra_isize: large.extra_isize,
            checksum_hi: large.checksum_hi,
            ctime_extra: large.ctime_extra,
            mtime_extra: large.mtime_extra,
            atime_extra: large.atime_extra,
            crtime: large.crtime,
            crtime_extra: large.crtime_extra,
            version_hi: large.version_hi,
            projid: large.projid,
            record_size,
            obso_faddr: base.obso_faddr,
            in_record,
        }
    }

    /// [`inode_checksum_ok`] for the record `raw` this inode was parsed from. (The few fields
    /// it needs are read from `raw`, not from `self`: just written, they would be re-read
    /// through a store-forwarding stall on every inode of a scan.)
    #[inline]
    pub fn checksum_ok(&self, fs_seed: u32, ino: u32, raw: &[u8]) -> bool {
        inode_checksum_ok(fs_seed, ino, raw)
    }

    /// The per-inode checksum seed (see [`ondisk::inode::csum_seed`]): compute it once per inode
    /// and hand it to the extent, directory and xattr readers.
    pub fn csum_seed(&self, fs_seed: u32, ino: u32) -> u32 {
        ondisk_inode::csum_seed(fs_seed, ino, self.generation)
    }

    /// Flag test.
    #[inline]
    pub fn has_flag(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
    /// File type bits of the mode.
    #[inline]
    pub fn file_type(&self) -> u16 {
        self.mode & ondisk_inode::S_IFMT
    }
    /// Directory?
    #[inline]
    pub fn is_dir(&self) -> bool {
        ondisk_inode::mode_is_dir(self.mode)
    }
    /// Regular file?
    #[inline]
    pub fn is_reg(&self) -> bool {
        self.file_type() == ondisk_inode::S_IFREG
    }
    /// Symbolic link?
    #[inline]
    pub fn is_symlink(&self) -> bool {
        self.file_type() == ondisk_inode::S_IFLNK
    }
    /// Names of the set i_flags bits.
    pub fn flag_names(&self) -> Vec<String> {
        let mut names: Vec<String> = FLAG_NAMES
            .iter()
            .filter(|(b, _)| self.flags & b != 0)
            .map(|(_, n)| (*n).to_string())
            .collect();
        let known: u32 = FLAG_NAMES.iter().map(|(b, _)| b).fold(0, |a, b| a | b);
        let unknown = self.flags & !known;
        if unknown != 0 {
            names.push(format!("0x{unknown:08x}"));
        }
        names
    }
}

/// Inode checksum as libext2fs computes it (low 16 bits only without the hi field).
pub fn inode_checksum(seed: u32, ino: u32, raw: &[u8]) -> u32 {
    let generation = record_generation(raw);
    ondisk_inode::checksum(ondisk_inode::csum_seed(seed, ino, generation), raw)
}

use ondisk_inode::record_generation;

/// The stored inode checksum (lo, plus hi when present).
pub fn stored_checksum(raw: &[u8]) -> u32 {
    ondisk_inode::stored_checksum(raw)
}

/// ext2fs_inode_csum_verify: match, or an all-zero base inode.
pub fn inode_checksum_ok(seed: u32, ino: u32, raw: &[u8]) -> bool {
    ondisk_inode::record_checksum_ok(seed, ino, raw)
}

/// Why the bad-blocks inode (inode 1) looks invalid, as e2fsck's pass 1 decides it before
/// offering to clear it (`PR_1_INVALID_BAD_INODE`): a mode, owner, group or link count, the
/// INLINE_DATA flag or an xattr block (only the fields of the small `struct ext2_inode`: the low
/// 16 bits of uid and gid, the low 32 bits of i_file_acl). Empty when it is valid. (A checksum
/// failure is the other trigger; the caller knows it.)
pub fn bad_blocks_inode_faults(inode: &Inode) -> Vec<&'static str> {
    let mut faults = Vec::new();
    let checks = [
        (inode.mode != 0, "a mode"),
        (inode.uid & 0xFFFF != 0, "an owner"),
        (inode.gid & 0xFFFF != 0, "a group"),
        (inode.links_count != 0, "a link count"),
        (inode.has_flag(INLINE_DATA_FL), "the INLINE_DATA flag"),
        (inode.file_acl & 0xFFFF_FFFF != 0, "an xattr block"),
    ];
    for (bad, what) in checks {
        if bad {
            faults.push(what);
        }
    }
    faults
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
        let inode = Inode::parse(&raw);
        assert!(inode.is_reg());
        assert_eq!(inode.extra_isize, 32);
        assert_eq!(inode.projid, 7);
        let mut raw2 = raw.clone();
        raw2[0x80] = 28;
        assert_eq!(Inode::parse(&raw2).projid, 0);
        assert_eq!(Inode::parse(&raw[..128]).extra_isize, 0);
        raw[I_BLOCK_OFFSET] = 0x0A;
        raw[I_BLOCK_OFFSET + I_BLOCK_SIZE - 1] = 0xF3;
        let base: InodeBase = ondisk::decode(&raw).unwrap();
        assert_eq!(Inode::parse(&raw).block, base.block);
        assert!(inode_checksum_ok(1, 2, &[0u8; 256]));
    }
}

// ---------------------------------------------------------------------------------------------
// Higher-level views of one inode: times, data map, extended attributes
// ---------------------------------------------------------------------------------------------

/// Bytes of i_block.
pub const I_BLOCK_SIZE: usize = 60;
use crate::reader::ondisk::inode::I_BLOCK_OFFSET;

/// Seconds since the epoch of an inode time with its `_extra` word (epoch bits 0-1 extend the
/// signed 32-bit seconds, as the kernel and libext2fs decode them).
pub fn time_secs(secs: u32, extra: u32) -> i64 {
    i64::from(secs as i32) + (i64::from(extra & 3) << 32)
}

/// Nanoseconds of an `_extra` word.
pub fn time_nsec(extra: u32) -> u32 {
    extra >> 2
}

impl Inode {
    /// File type as debugfs names it.
    pub fn type_name(&self) -> &'static str {
        match self.file_type() {
            0o040000 => "directory",
            0o100000 => "regular",
            0o120000 => "symlink",
            0o060000 => "block special",
            0o020000 => "character special",
            0o010000 => "FIFO",
            0o140000 => "socket",
            _ => "bad type",
        }
    }
    /// libext2fs' `ext2fs_is_fast_symlink`: a symlink whose target (size < 60) lives in i_block.
    pub fn is_fast_symlink(&self) -> bool {
        self.is_symlink() && self.size != 0 && self.size < I_BLOCK_SIZE as u64
    }
    /// i_blocks in 512-byte units (huge_file inodes with HUGE_FILE_FL count fs blocks).
    pub fn blocks_512(&self, huge_file: bool, block_size: u64) -> u64 {
        if huge_file && self.has_flag(HUGE_FILE_FL) {
            self.blocks_raw.saturating_mul(block_size / 512)
        } else {
            self.blocks_raw
        }
    }
    /// i_block read as a classic block map (also the device number of device inodes).
    pub fn block_map(&self) -> IBlockMap {
        ondisk::decode(&self.block).unwrap_or(IBlockMap {
            direct: [0; ondisk::blockmap::DIRECT_BLOCKS],
            ind: 0,
            dind: 0,
            tind: 0,
        })
    }
    /// True when the large-inode field ending at byte `end` of the record is present.
    pub fn has_extra_field(&self, end: u32) -> bool {
        self.record_size > 128
            && end <= 128 + u32::from(self.extra_isize)
            && end <= self.record_size
    }
}

/// How an inode's data is laid out.
#[derive(Clone, Debug)]
pub enum DataMap {
    /// Extent tree (i_flags EXTENTS).
    Extents(ExtentWalk),
    /// Classic direct/indirect blocks.
    Blocks(BlockMapWalk),
    /// Inline data: bytes in i_block plus the `system.data` value.
    /// Inline.
    Inline {
        /// Bytes of inline data (i_block plus the value).
        size: u64,
    },
    /// Symlink target in i_block.
    FastSymlink(Vec<u8>),
    /// Symlink target in inline data (i_block, then the `system.data` value).
    InlineSymlink(Vec<u8>),
    /// Device number (old or new style encoding).
    Device {
        /// Major.
        major: u32,
        /// Minor.
        minor: u32,
        /// New style.
        new_style: bool,
    },
    /// The map could not be read.
    Unreadable(Problem),
}

/// Walk limits for inode `ino` of `fs`.
pub fn walk_limits(fs: &Filesystem, ino: u32, inode: &Inode) -> WalkLimits {
    WalkLimits {
        first_data_block: fs.geo.first_data_block,
        blocks_count: fs.geo.blocks_count,
        csum_seed: fs
            .sb
            .has_metadata_csum()
            .then(|| inode.csum_seed(fs.csum_seed(), ino)),
    }
}

/// Decode the data map of an inode (what debugfs prints after the fields, in its order of
/// precedence). `inline` is the `system.data` value when the inode has one.
pub fn data_map(fs: &Filesystem, ino: u32, inode: &Inode, inline: Option<&[u8]>) -> DataMap {
    if inode.is_fast_symlink() {
        let len = (inode.size as usize).min(I_BLOCK_SIZE);
        return DataMap::FastSymlink(inode.block.get(..len).unwrap_or(&[]).to_vec());
    }
    if inode.is_symlink() && inode.has_flag(INLINE_DATA_FL) {
        let mut target = inode.block.to_vec();
        target.extend_from_slice(inline.unwrap_or(&[]));
        return DataMap::InlineSymlink(target);
    }
    if matches!(inode.file_type(), 0o060000 | 0o020000) {
        let map = inode.block_map();
        let (b0, b1) = (map.direct[0], map.direct[1]);
        return if b0 != 0 {
            DataMap::Device {
                major: (b0 >> 8) & 255,
                minor: b0 & 255,
                new_style: false,
            }
        } else {
            DataMap::Device {
                major: (b1 & 0xfff00) >> 8,
                minor: (b1 & 0xff) | ((b1 >> 12) & 0xfff00),
                new_style: true,
            }
        };
    }
    let limits = walk_limits(fs, ino, inode);
    if inode.has_flag(EXTENTS_FL) {
        return match extent::walk_extents(&inode.block, &limits, |b| fs.block(b)) {
            Ok(w) => DataMap::Extents(w),
            Err(e) => DataMap::Unreadable(Problem::new(
                ProblemKind::ExtentTree,
                format!("extent tree root: {e}"),
            )),
        };
    }
    if inode.has_flag(INLINE_DATA_FL) {
        return match inline {
            Some(v) => DataMap::Inline {
                size: I_BLOCK_SIZE as u64 + v.len() as u64,
            },
            None => DataMap::Unreadable(Problem::new(
                ProblemKind::InlineData,
                "inline data: no system.data attribute",
            )),
        };
    }
    DataMap::Blocks(extent::walk_blockmap(
        &inode.block,
        fs.block_size(),
        &limits,
        |b| fs.block(b),
    ))
}

/// Where an xattr value lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XattrLocation {
    /// In the inode body.
    Inode,
    /// In the external block.
    Block(u64),
    /// In an EA inode (entry in the body or block, value in that inode).
    EaInode(u32),
}

impl XattrLocation {
    /// `inode`, `block`, `ea_inode` (the JSON contract).
    pub fn kind(&self) -> &'static str {
        match self {
            XattrLocation::Inode => "inode",
            XattrLocation::Block(_) => "block",
            XattrLocation::EaInode(_) => "ea_inode",
        }
    }
}

impl std::fmt::Display for XattrLocation {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            XattrLocation::Inode => write!(formatter, "inode"),
            XattrLocation::Block(b) => write!(formatter, "block {b}"),
            XattrLocation::EaInode(i) => write!(formatter, "ea_inode {i}"),
        }
    }
}

/// One xattr of an inode.
#[derive(Clone, Debug)]
pub struct XattrItem<'a> {
    /// Full name with prefix.
    pub name: String,
    /// Value size.
    pub value_size: u32,
    /// Location.
    pub location: XattrLocation,
    /// Bytes the entry takes where it is stored (entry, name, padded value unless in an EA inode).
    pub cost: usize,
    /// Value bytes when stored in the inode (borrowed from the record) or in the xattr block
    /// (copied out of it); not read from EA inodes.
    pub value: Option<std::borrow::Cow<'a, [u8]>>,
}

/// The external xattr block of an inode.
#[derive(Clone, Debug)]
pub struct XattrBlockInfo {
    /// Block.
    pub block: u64,
    /// Refcount.
    pub refcount: u32,
    /// Hash.
    pub hash: u32,
    /// Space.
    pub space: xattr::Space,
    /// Checksum.
    pub checksum: Option<xattr::ChecksumCheck>,
    /// Sorted.
    pub sorted: bool,
}

/// Every xattr of an inode, where each lives, and the space accounting.
#[derive(Clone, Debug, Default)]
pub struct InodeXattrs<'a> {
    /// In on-disk order: the body first, then the block (as libext2fs reads them).
    pub items: Vec<XattrItem<'a>>,
    /// In-inode area: capacity, used, free.
    pub inode_space: xattr::Space,
    /// True when the in-inode area carries the magic.
    pub ibody_present: bool,
    /// Block.
    pub block: Option<XattrBlockInfo>,
    /// What was wrong (bad areas are skipped, not fatal).
    pub problems: Vec<Problem>,
}

impl<'a> InodeXattrs<'a> {
    /// The in-inode `system.data` value (inline data beyond i_block), when present.
    pub fn inline_data(&self) -> Option<&[u8]> {
        self.items
            .iter()
            .find(|x| x.name == "system.data" && x.location == XattrLocation::Inode)
            .map(|x| x.value.as_deref().unwrap_or(&[]))
    }
}

fn item<'a>(entry: xattr::Entry<'a>, home: XattrLocation) -> XattrItem<'a> {
    let value = entry.value.map(std::borrow::Cow::Borrowed);
    owned_item(entry, home, value)
}

/// An item whose value is copied out of a block buffer that does not outlive the call.
fn block_item<'a>(entry: xattr::Entry<'_>, home: XattrLocation) -> XattrItem<'a> {
    let value = entry.value.map(|v| std::borrow::Cow::Owned(v.to_vec()));
    owned_item(entry, home, value)
}

fn owned_item<'a>(
    entry: xattr::Entry<'_>,
    home: XattrLocation,
    value: Option<std::borrow::Cow<'a, [u8]>>,
) -> XattrItem<'a> {
    XattrItem {
        cost: entry.cost(),
        name: entry.name,
        value_size: entry.value_size,
        location: if entry.value_inum != 0 {
            XattrLocation::EaInode(entry.value_inum)
        } else {
            home
        },
        value,
    }
}

/// Check that an EA inode really holds a value of `size` bytes (libext2fs' rules).
fn check_ea_inode(fs: &Filesystem, name: &str, ea_ino: u32, size: u32) -> Option<Problem> {
    let raw = match fs.inode_raw(ea_ino) {
        Ok(r) => r,
        Err(e) => {
            return Some(Problem::new(
                ProblemKind::Xattr,
                format!("{name}: EA inode {ea_ino}: {e}"),
            ))
        }
    };
    let ea = Inode::parse(&raw);
    if !ea.has_flag(EA_INODE_FL) || ea.has_flag(INLINE_DATA_FL) || ea.links_count == 0 {
        return Some(Problem::new(
            ProblemKind::Xattr,
            format!(
                "{name}: inode {ea_ino} is not a live EA inode (flags 0x{:x}, links {})",
                ea.flags, ea.links_count
            ),
        ));
    }
    if ea.size != u64::from(size) {
        return Some(Problem::new(
            ProblemKind::Xattr,
            format!(
                "{name}: EA inode {ea_ino} holds {} bytes, the entry says {size}",
                ea.size
            ),
        ));
    }
    None
}

/// Read every xattr of an inode (raw record `raw`): the in-inode area, then the block at
/// i_file_acl. Damage is collected in `problems`.
pub fn inode_xattrs<'a>(fs: &Filesystem, raw: &'a [u8], inode: &Inode) -> InodeXattrs<'a> {
    inode_xattrs_reading(fs, raw, inode, false)
}

/// [`inode_xattrs`], the xattr block read past the block cache when `uncached` (a scan that
/// decodes each distinct block once keeps its own cache of decoded blocks: copying the block
/// into the shared block cache too would only cost an allocation and a copy per block).
pub(crate) fn inode_xattrs_reading<'a>(
    fs: &Filesystem,
    raw: &'a [u8],
    inode: &Inode,
    uncached: bool,
) -> InodeXattrs<'a> {
    let mut out = InodeXattrs::default();
    match xattr::parse_ibody(raw, inode.extra_isize) {
        Ok(ib) => {
            out.inode_space = ib.space;
            out.ibody_present = ib.present;
            out.items.extend(
                ib.entries
                    .into_iter()
                    .map(|e| item(e, XattrLocation::Inode)),
            );
        }
        Err(e) => {
            out.inode_space.capacity =
                xattr::ibody_capacity(raw.len(), usize::from(inode.extra_isize));
            out.problems.push(Problem::new(
                ProblemKind::Xattr,
                format!("in-inode xattrs: {e}"),
            ));
        }
    }
    if inode.file_acl != 0 {
        let blk = inode.file_acl;
        if blk < fs.geo.first_data_block || blk >= fs.geo.blocks_count {
            out.problems.push(Problem::new(
                ProblemKind::Xattr,
                format!(
                    "xattr block: xattr block {blk} is outside the filesystem (0..{})",
                    fs.geo.blocks_count
                ),
            ));
        } else {
            let mut add = |b: &[u8]| add_block_xattrs(fs, blk, b, &mut out);
            let read = if uncached {
                fs.block_uncached(blk).map(|b| add(&b))
            } else {
                fs.block(blk).map(|b| add(&b))
            };
            if let Err(error) = read {
                out.problems.push(Problem::new(
                    ProblemKind::Xattr,
                    format!("xattr block: {error}"),
                ));
            }
        }
    }
    let ea: Vec<(String, u32, u32)> = out
        .items
        .iter()
        .filter_map(|item| match item.location {
            XattrLocation::EaInode(n) => Some((item.name.clone(), n, item.value_size)),
            _ => None,
        })
        .collect();
    for (name, ea_ino, size) in ea {
        if let Some(problem) = check_ea_inode(fs, &name, ea_ino, size) {
            out.problems.push(problem);
        }
    }
    out
}

/// Decode the xattr block `blk` (bytes `bytes`) into `out`: its items, header facts and damage.
fn add_block_xattrs(fs: &Filesystem, blk: u64, bytes: &[u8], out: &mut InodeXattrs<'_>) {
    let seed = fs.sb.has_metadata_csum().then(|| fs.csum_seed());
    let xb = match xattr::parse_block(bytes, blk, seed) {
        Ok(xb) => xb,
        Err(e) => {
            out.problems.push(Problem::new(
                ProblemKind::Xattr,
                format!("xattr block: {e}"),
            ));
            return;
        }
    };
    if let Some(csum) = xb.checksum.filter(|c| !c.ok()) {
        out.problems.push(Problem::new(
            ProblemKind::Xattr,
            format!(
                "xattr block {blk}: checksum 0x{:08x}, should be 0x{:08x}",
                csum.stored, csum.computed
            ),
        ));
    }
    if !xb.sorted {
        out.problems.push(Problem::new(
            ProblemKind::Xattr,
            format!("xattr block {blk}: entries are not sorted"),
        ));
    }
    out.block = Some(XattrBlockInfo {
        block: blk,
        refcount: xb.header.refcount,
        hash: xb.header.hash,
        space: xb.space,
        checksum: xb.checksum,
        sorted: xb.sorted,
    });
    out.items.extend(
        xb.entries
            .into_iter()
            .map(|e| block_item(e, XattrLocation::Block(blk))),
    );
}
