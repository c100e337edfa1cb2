//! Extended attributes: the in-inode area and the external xattr block.
//!
//! Layout (kernel `fs/ext4/xattr.{c,h}`): an area starts with the magic `0xEA020000` (in the inode,
//! right after `128 + i_extra_isize` bytes; in a block, as the first field of a 32-byte header).
//! 16-byte entries with their names follow and grow upwards, ended by 4 zero bytes; values are
//! packed from the end of the area downwards, each padded to 4 bytes. In-inode value offsets count
//! from the first entry (just after the magic), block value offsets from the start of the block.
//!
//! Every walk is bounded by the area it lives in; a malformed area yields an [`Error::Corrupt`]
//! naming what is wrong, never a panic.

use crate::error::{Error, Result};
use crate::reader::ondisk::xattr::{self as raw, BLOCK_CHECKSUM_OFFSET};
use crate::reader::ondisk::{self, OnDisk};
use crate::reader::{lustre, samba};
use serde::Serialize;

/// Magic of both the in-inode area and the external block.
pub const MAGIC: u32 = raw::XATTR_MAGIC;
/// Size of `struct ext4_xattr_entry` without the name.
pub const ENTRY_SIZE: usize = raw::Entry::SIZE;
/// Size of `struct ext4_xattr_header` (external block).
pub const BLOCK_HEADER_SIZE: usize = raw::BlockHeader::SIZE;
/// Size of the in-inode header (the magic).
pub const IBODY_HEADER_SIZE: usize = raw::IbodyHeader::SIZE;
/// Size of the terminator after the last entry.
pub const TERMINATOR_SIZE: usize = 4;
/// The classic inode size; the large-inode part starts here.
pub const GOOD_OLD_INODE_SIZE: usize = crate::reader::ondisk::inode::BASE_SIZE;
/// Largest value size the kernel's checker accepts (`EXT4_XATTR_SIZE_MAX`).
pub const VALUE_SIZE_MAX: u32 = 1 << 24;

/// `EXT4_XATTR_LEN`: bytes taken by an entry whose (stripped) name has `name_len` bytes.
pub const fn entry_len(name_len: usize) -> usize {
    (name_len + ENTRY_SIZE + 3) & !3
}

/// `EXT4_XATTR_SIZE`: bytes taken by a value of `len` bytes (rounded up to 4).
pub const fn value_size(len: usize) -> usize {
    len.saturating_add(3) & !3
}

/// The name-index table: (index, prefix, whole-name). A whole-name prefix is the complete name
/// (stored with an empty suffix). Listed most specific first, so the first match wins as in
/// e2fsprogs and the kernel.
pub const NAME_INDEXES: &[(u8, &str, bool)] = &[
    (2, "system.posix_acl_access", true),
    (3, "system.posix_acl_default", true),
    (8, "system.richacl", true),
    (1, "user.", false),
    (4, "trusted.", false),
    (6, "security.", false),
    (5, "lustre.", false),
    (10, "gnu.", false),
    (7, "system.", false),
];

/// Display prefix of name index 9 (the encryption context, not a VFS namespace).
const ENCRYPTION_PREFIX: &str = "encryption.";

/// Split a full attribute name into its name index and the stored (stripped) suffix.
/// `None` when no known prefix matches (the kernel cannot store such a name).
pub fn split_name(full: &str) -> Option<(u8, &str)> {
    for &(idx, prefix, whole) in NAME_INDEXES {
        if whole {
            if full == prefix {
                return Some((idx, ""));
            }
        } else if let Some(rest) = full.strip_prefix(prefix) {
            return Some((idx, rest));
        }
    }
    None
}

/// The prefix shown for a name index (`user.`, `system.posix_acl_access`, ...).
pub fn index_prefix(index: u8) -> Option<&'static str> {
    if index == 9 {
        return Some(ENCRYPTION_PREFIX);
    }
    NAME_INDEXES
        .iter()
        .find(|&&(i, _, _)| i == index)
        .map(|&(_, p, _)| p)
}

/// Full name of an entry from its index and stored name (unknown indexes show as `index<N>.`).
pub fn full_name(index: u8, name: &[u8]) -> String {
    let suffix = String::from_utf8_lossy(name);
    match index_prefix(index) {
        Some(p) => format!("{p}{suffix}"),
        None => format!("index{index}.{suffix}"),
    }
}

/// Where an entry is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Area {
    /// In the inode body, after `i_extra_isize`.
    Inode,
    /// In the external xattr block (`i_file_acl`).
    Block,
}

/// One decoded xattr entry.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Entry<'a> {
    /// Name index (`e_name_index`).
    pub index: u8,
    /// Full name with its prefix, e.g. `user.foo`, `system.posix_acl_access`.
    pub name: String,
    /// The stored name bytes (without prefix).
    #[serde(skip)]
    pub raw_name: &'a [u8],
    /// `e_name_len`.
    pub name_len: u8,
    /// `e_value_offs` (from the first entry in the inode, from the block start in a block).
    pub value_offs: u16,
    /// `e_value_inum`: the EA inode holding the value, 0 when the value is in this area.
    pub value_inum: u32,
    /// `e_value_size`.
    pub value_size: u32,
    /// `e_hash`.
    pub hash: u32,
    /// Where the entry lives.
    pub location: Area,
    /// Offset of the entry within its area (from the first entry / from the block start).
    pub entry_offset: usize,
    /// The value bytes when they live in this area (`None` for EA-inode values).
    #[serde(skip)]
    pub value: Option<&'a [u8]>,
}

impl Entry<'_> {
    /// The full name with its prefix (as [`Entry::name`], also for entries parsed without it).
    pub fn full_name(&self) -> String {
        full_name(self.index, self.raw_name)
    }
    /// True when the full name is `name`, compared without building it.
    pub fn has_full_name(&self, name: &str) -> bool {
        match index_prefix(self.index) {
            Some(p) => name
                .strip_prefix(p)
                .is_some_and(|rest| rest.as_bytes() == self.raw_name),
            None => self.full_name() == name,
        }
    }
    /// Bytes this entry takes in its area: entry + name, plus the padded value unless the value
    /// is empty or lives in an EA inode.
    pub fn cost(&self) -> usize {
        let value_len = if self.value_inum != 0 {
            0
        } else {
            value_size(self.value_size as usize)
        };
        entry_len(self.name_len as usize) + value_len
    }
}

/// Space accounting of one area, per the kernel's rules (`ext4_xattr_set_entry`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Space {
    /// Bytes usable for entries and values when the area is empty (terminator deducted).
    #[serde(rename = "capacity_bytes")]
    pub capacity: usize,
    /// Bytes taken by entries, names and padded values.
    #[serde(rename = "used_bytes")]
    pub used: usize,
    /// Bytes the kernel considers free for a new attribute: lowest value offset minus end of the
    /// entry table minus the terminator.
    #[serde(rename = "free_bytes")]
    pub free: usize,
}

/// The little-endian word at `pos` (the in-inode header is its magic alone): what the binrw
/// decode of [`raw::IbodyHeader`] gives, without its cost on every inode of a scan.
fn magic_at(area: &[u8], pos: usize) -> Option<u32> {
    let word = area.get(pos..pos.checked_add(4)?)?;
    Some(u32::from_le_bytes([word[0], word[1], word[2], word[3]]))
}

/// The entry at `pos`, as the binrw decode of [`raw::Entry`] reads it (see
/// `entry_at_agrees_with_binrw`); `None` when fewer than its 16 bytes remain.
fn entry_at(area: &[u8], pos: usize) -> Option<raw::Entry> {
    let mut reader =
        crate::reader::ondisk::LeFields::new(area.get(pos..pos.checked_add(ENTRY_SIZE)?)?);
    Some(raw::Entry::read_le(&mut reader))
}

/// Walk the entries of one area. `area` starts at the first entry; `value_base` is the offset,
/// within `area_full`, that value offsets count from; `first` is where the entries start within
/// `area_full`. Returns the entries, the offset (in `area_full`) of the terminator and the lowest
/// value offset (relative to `value_base`).
fn walk<'a>(
    area_full: &'a [u8],
    first: usize,
    value_base: usize,
    location: Area,
    names: bool,
) -> Result<(Vec<Entry<'a>>, usize, usize)> {
    let what = what_of(location);
    let mut entries = Vec::new();
    let terminator = table_end(
        area_full,
        first,
        value_base,
        location,
        names,
        &mut |entry| entries.push(entry),
    )?;
    let min_offs = attach_values(&mut entries, area_full, value_base, terminator, what)?;
    Ok((entries, terminator, min_offs))
}

/// How an area is named in messages.
fn what_of(location: Area) -> &'static str {
    match location {
        Area::Inode => "in-inode xattr area",
        Area::Block => "xattr block",
    }
}

/// Walk an area's entry table from `first` to its terminator, handing each entry (no value
/// attached yet) to `each`; returns the terminator's offset in `area_full`.
fn table_end<'a>(
    area_full: &'a [u8],
    first: usize,
    value_base: usize,
    location: Area,
    names: bool,
    each: &mut dyn FnMut(Entry<'a>),
) -> Result<usize> {
    let end = area_full.len();
    let what = what_of(location);
    let mut pos = first;
    // Each entry takes at least 16 bytes, so the walk ends within end/16 steps.
    loop {
        if pos.checked_add(TERMINATOR_SIZE).is_none_or(|e| e > end) {
            return Err(Error::corrupt(
                crate::ProblemKind::Xattr,
                format!("{what}: entry table runs past the end of the area (offset {pos})"),
            ));
        }
        let terminator = area_full.get(pos..pos + TERMINATOR_SIZE).unwrap_or(&[]);
        if terminator.iter().all(|&c| c == 0) {
            return Ok(pos);
        }
        let (entry, next) = entry_of(area_full, pos, value_base, location, names, what)?;
        each(entry);
        pos = next;
    }
}

/// The entry at `pos` of an area's table and the position of the next one: its 16 bytes, its
/// name and the room for a terminator after it must lie inside the area, and the name holds no
/// NUL. The value is attached later, once the terminator (the floor of the values) is known.
#[inline]
fn entry_of<'a>(
    area_full: &'a [u8],
    pos: usize,
    value_base: usize,
    location: Area,
    names: bool,
    what: &str,
) -> Result<(Entry<'a>, usize)> {
    let end = area_full.len();
    let raw_entry = entry_at(area_full, pos).ok_or_else(|| {
        Error::corrupt(
            crate::ProblemKind::Xattr,
            format!("{what}: entry at offset {pos} runs past the end of the area"),
        )
    })?;
    let name_len = raw_entry.name_len;
    let next = pos + entry_len(name_len as usize);
    if next >= end || next + TERMINATOR_SIZE > end {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!(
            "{what}: entry at offset {pos} (name length {name_len}) runs past the end of the area"
        ),
        ));
    }
    let raw_name = area_full
        .get(pos + ENTRY_SIZE..pos + ENTRY_SIZE + name_len as usize)
        .ok_or_else(|| {
            Error::corrupt(
                crate::ProblemKind::Xattr,
                format!("{what}: entry name at {pos} out of bounds"),
            )
        })?;
    if raw_name.contains(&0) {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!("{what}: entry at offset {pos}: name contains a NUL byte"),
        ));
    }
    let index = raw_entry.name_index;
    let entry = Entry {
        index,
        name: if names {
            full_name(index, raw_name)
        } else {
            String::new()
        },
        raw_name,
        name_len,
        value_offs: raw_entry.value_offs,
        value_inum: raw_entry.value_inum,
        value_size: raw_entry.value_size,
        hash: raw_entry.hash,
        location,
        entry_offset: pos - value_base,
        value: None,
    };
    Ok((entry, next))
}

/// Attach each entry's value (an empty one is a value; one in an EA inode stays `None`) after
/// checking its size and that it lies between the terminator and the end of the area. Returns
/// the lowest value offset, relative to `value_base` (the area's end when there is no value).
#[inline]
fn attach_values<'a>(
    entries: &mut [Entry<'a>],
    area_full: &'a [u8],
    value_base: usize,
    terminator: usize,
    what: &str,
) -> Result<usize> {
    let mut min_offs = area_full.len() - value_base;
    for entry in entries.iter_mut() {
        if let Some(offs) = attach_value(entry, area_full, value_base, terminator, what)? {
            min_offs = min_offs.min(offs);
        }
    }
    Ok(min_offs)
}

/// [`attach_values`] for one entry; `Some(e_value_offs)` when its value lies in the area.
#[inline]
fn attach_value<'a>(
    entry: &mut Entry<'a>,
    area_full: &'a [u8],
    value_base: usize,
    terminator: usize,
    what: &str,
) -> Result<Option<usize>> {
    let end = area_full.len();
    let values_floor = terminator + TERMINATOR_SIZE; // first byte a value may use
    if entry.value_size > VALUE_SIZE_MAX {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!(
                "{what}: {}: value size {} too large",
                full_name(entry.index, entry.raw_name),
                entry.value_size
            ),
        ));
    }
    if entry.value_inum != 0 {
        return Ok(None);
    }
    if entry.value_size == 0 {
        entry.value = Some(&[]); // an empty value is a value (setfattr -n user.x)
        return Ok(None);
    }
    let start = value_base + entry.value_offs as usize;
    let padded = value_size(entry.value_size as usize);
    if start < values_floor || start.checked_add(padded).is_none_or(|s| s > end) {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!(
                "{what}: {}: value at offset {} size {} overlaps the entries or runs past the end",
                full_name(entry.index, entry.raw_name),
                entry.value_offs,
                entry.value_size
            ),
        ));
    }
    entry.value = area_full.get(start..start + entry.value_size as usize);
    Ok(Some(entry.value_offs as usize))
}

/// The in-inode xattr area of one inode.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Ibody<'a> {
    /// True when the magic is present (the inode carries in-inode xattrs).
    pub present: bool,
    /// Entries in on-disk order (unsorted: the order they were added).
    pub entries: Vec<Entry<'a>>,
    /// Space used and free.
    pub space: Space,
}

/// Bytes available for in-inode xattrs in an empty inode of `inode_size` bytes whose
/// `i_extra_isize` is `extra_isize`: `inode_size - 128 - extra - 4 (magic) - 4 (terminator)`, or 0
/// when the kernel refuses the body (`EXT4_INODE_HAS_XATTR_SPACE`).
pub fn ibody_capacity(inode_size: usize, extra_isize: usize) -> usize {
    if extra_isize == 0 {
        return 0;
    }
    let need = GOOD_OLD_INODE_SIZE + extra_isize + IBODY_HEADER_SIZE + TERMINATOR_SIZE;
    inode_size.saturating_sub(need)
}

/// Decode the in-inode xattr area of `inode` (the raw on-disk inode, `inode_size` bytes) whose
/// `i_extra_isize` is `extra_isize`.
pub fn parse_ibody(inode: &[u8], extra_isize: u16) -> Result<Ibody<'_>> {
    parse_ibody_with(inode, extra_isize, true)
}

/// [`parse_ibody`] without building the entries' full names (`Entry::name` left empty; see
/// [`Entry::full_name`]): what a scan over every inode calls.
pub fn parse_ibody_unnamed(inode: &[u8], extra_isize: u16) -> Result<Ibody<'_>> {
    parse_ibody_with(inode, extra_isize, false)
}

/// Does the in-inode xattr area start with the xattr magic? When it does not and
/// `i_extra_isize` is valid (a multiple of 4 within the record), [`parse_ibody`] finds no
/// entries: a scan over every inode tests this first and parses only the inodes that have some.
pub fn ibody_has_magic(inode: &[u8], extra_isize: u16) -> bool {
    magic_at(inode, GOOD_OLD_INODE_SIZE + usize::from(extra_isize)) == Some(MAGIC)
}

/// Where an inode's in-inode entry table starts, as [`parse_ibody`] finds it: `Ok(None)` when
/// the inode holds no in-inode area (a 128-byte record, no room, or no magic), else the offset
/// of the first entry; an error for an invalid `i_extra_isize` or a magic with no room after
/// it.
fn ibody_table_start(inode: &[u8], extra_isize: u16) -> Result<Option<usize>> {
    let extra = extra_isize as usize;
    if inode.len() <= GOOD_OLD_INODE_SIZE {
        return Ok(None);
    }
    if extra & 3 != 0 || GOOD_OLD_INODE_SIZE + extra > inode.len() {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!(
                "i_extra_isize {extra} is invalid for a {}-byte inode",
                inode.len()
            ),
        ));
    }
    let capacity = ibody_capacity(inode.len(), extra);
    if capacity == 0 && extra == 0 {
        return Ok(None);
    }
    let hdr = GOOD_OLD_INODE_SIZE + extra;
    if magic_at(inode, hdr) != Some(MAGIC) {
        return Ok(None);
    }
    if capacity == 0 {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            "in-inode xattr magic present but no room for entries",
        ));
    }
    Ok(Some(hdr + IBODY_HEADER_SIZE))
}

fn parse_ibody_with(inode: &[u8], extra_isize: u16, names: bool) -> Result<Ibody<'_>> {
    let capacity = if inode.len() <= GOOD_OLD_INODE_SIZE {
        0
    } else {
        ibody_capacity(inode.len(), extra_isize as usize)
    };
    let Some(first) = ibody_table_start(inode, extra_isize)? else {
        return Ok(Ibody {
            present: false,
            entries: Vec::new(),
            space: Space {
                capacity,
                used: 0,
                free: capacity,
            },
        });
    };
    let (entries, terminator, min_offs) = walk(inode, first, first, Area::Inode, names)?;
    let used = entries.iter().map(Entry::cost).sum();
    let free = min_offs.saturating_sub(terminator - first + TERMINATOR_SIZE);
    Ok(Ibody {
        present: true,
        entries,
        space: Space {
            capacity,
            used,
            free,
        },
    })
}

/// The in-inode entries of `inode` with their values attached, as [`parse_ibody_unnamed`] lists
/// them, without building the list: the whole area is checked first (the same errors, so a
/// damaged area yields no entry, as `parse_ibody_unnamed` gives none), then the iterator reads
/// each entry again where it lies. What a scan that only looks for some names calls: nothing
/// is allocated, where the list costs an allocation per inode carrying xattrs.
pub fn ibody_entries(inode: &[u8], extra_isize: u16) -> Result<IbodyEntries<'_>> {
    let Some(first) = ibody_table_start(inode, extra_isize)? else {
        return Ok(IbodyEntries::default());
    };
    // The checks of `walk`, with its own functions: the table to its terminator, then each value
    // against the floor the terminator sets (the entries are read again rather than kept).
    let terminator = table_end(inode, first, first, Area::Inode, false, &mut |_| {})?;
    let entries = IbodyEntries {
        area: inode,
        pos: first,
        first,
        terminator,
    };
    let mut table = entries.clone();
    while let Some((mut entry, next)) = table.next_unattached() {
        table.pos = next;
        attach_value(&mut entry, inode, first, terminator, what_of(Area::Inode))?;
    }
    Ok(entries)
}

/// The entries of a sound in-inode area (see [`ibody_entries`]), in on-disk order.
#[derive(Clone, Debug, Default)]
pub struct IbodyEntries<'a> {
    area: &'a [u8],
    pos: usize,
    first: usize,
    terminator: usize,
}

impl<'a> IbodyEntries<'a> {
    /// The entry at the current position (its value not attached) and where the next starts.
    fn next_unattached(&self) -> Option<(Entry<'a>, usize)> {
        if self.pos >= self.terminator {
            return None;
        }
        let what = what_of(Area::Inode);
        entry_of(self.area, self.pos, self.first, Area::Inode, false, what).ok()
    }
}

impl<'a> Iterator for IbodyEntries<'a> {
    type Item = Entry<'a>;
    fn next(&mut self) -> Option<Entry<'a>> {
        let Some((mut entry, next)) = self.next_unattached() else {
            self.pos = self.terminator;
            return None;
        };
        self.pos = next;
        // Checked by `ibody_entries`: cannot fail here.
        let what = what_of(Area::Inode);
        let _ = attach_value(&mut entry, self.area, self.first, self.terminator, what);
        Some(entry)
    }
}

/// Header of an external xattr block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BlockHeader {
    /// `h_magic`.
    pub magic: u32,
    /// `h_refcount`: number of inodes sharing the block.
    pub refcount: u32,
    /// `h_blocks`: must be 1.
    pub blocks: u32,
    /// `h_hash`.
    pub hash: u32,
    /// `h_checksum`.
    pub checksum: u32,
}

/// Checksum verification of an xattr block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ChecksumCheck {
    /// Stored `h_checksum`.
    pub stored: u32,
    /// Computed crc32c.
    pub computed: u32,
}

impl ChecksumCheck {
    /// True when stored and computed agree.
    pub fn ok(&self) -> bool {
        self.stored == self.computed
    }
}

/// A decoded external xattr block.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct XattrBlock<'a> {
    /// Header fields.
    pub header: BlockHeader,
    /// Entries in on-disk order (should be sorted).
    pub entries: Vec<Entry<'a>>,
    /// True when the entries are sorted as the kernel keeps them (index, name length, name).
    pub sorted: bool,
    /// Space used and free.
    pub space: Space,
    /// Checksum check, when a seed was given (metadata_csum).
    pub checksum: Option<ChecksumCheck>,
    /// `h_hash` recomputed from the entry hashes (`ext4_xattr_rehash`).
    pub computed_hash: u32,
    /// Indexes (into `entries`) of entries with an in-block value whose `e_hash` matches neither
    /// the kernel's hash of name and value nor its old signed-char variant.
    pub bad_entry_hashes: Vec<usize>,
}

const NAME_HASH_SHIFT: u32 = 5;
const VALUE_HASH_SHIFT: u32 = 16;
const BLOCK_HASH_SHIFT: u32 = 16;

/// `ext4_xattr_hash_entry`: hash of an entry's name and its value padded to 4-byte words.
/// `signed` gives the variant of kernels that hashed the name as signed chars.
pub fn entry_hash(name: &[u8], value: &[u8], signed: bool) -> u32 {
    let mut hash: u32 = 0;
    for &byte in name {
        let byte = if signed {
            byte as i8 as i32 as u32
        } else {
            byte as u32
        };
        hash = (hash << NAME_HASH_SHIFT) ^ (hash >> (32 - NAME_HASH_SHIFT)) ^ byte;
    }
    for chunk in value.chunks(4) {
        let mut word = [0u8; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        hash = (hash << VALUE_HASH_SHIFT)
            ^ (hash >> (32 - VALUE_HASH_SHIFT))
            ^ u32::from_le_bytes(word);
    }
    hash
}

/// `ext4_xattr_rehash`: the block hash from the entry hashes (0 when any entry hash is 0).
pub fn block_hash(entries: &[Entry<'_>]) -> u32 {
    let mut hash: u32 = 0;
    for entry in entries {
        if entry.hash == 0 {
            return 0;
        }
        hash = (hash << BLOCK_HASH_SHIFT) ^ (hash >> (32 - BLOCK_HASH_SHIFT)) ^ entry.hash;
    }
    hash
}

/// Capacity of an empty xattr block for entries and values: `block_size - 32 - 4`.
pub fn block_capacity(block_size: usize) -> usize {
    block_size.saturating_sub(BLOCK_HEADER_SIZE + TERMINATOR_SIZE)
}

use crate::reader::csum::crc32c_raw;

/// Checksum of an xattr block as the kernel computes it (`ext4_xattr_block_csum`): crc32c over the
/// little-endian 64-bit block number, then the block with `h_checksum` taken as zero.
pub fn block_checksum(seed: u32, block_nr: u64, block: &[u8]) -> u32 {
    let mut crc = crc32c_raw(seed, &block_nr.to_le_bytes());
    let head = block
        .get(..BLOCK_CHECKSUM_OFFSET.min(block.len()))
        .unwrap_or(&[]);
    crc = crc32c_raw(crc, head);
    crc = crc32c_raw(crc, &[0u8; 4]);
    let tail = block.get(BLOCK_CHECKSUM_OFFSET + 4..).unwrap_or(&[]);
    crc32c_raw(crc, tail)
}

/// Decode an external xattr block. `csum_seed` is the filesystem's metadata_csum seed (`None`
/// when the filesystem has no metadata checksums).
pub fn parse_block(block: &[u8], block_nr: u64, csum_seed: Option<u32>) -> Result<XattrBlock<'_>> {
    if block.len() < BLOCK_HEADER_SIZE + TERMINATOR_SIZE {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!("xattr block {block_nr}: {} bytes is too small", block.len()),
        ));
    }
    let raw_header: raw::BlockHeader = ondisk::decode(block)?;
    let header = BlockHeader {
        magic: raw_header.magic,
        refcount: raw_header.refcount,
        blocks: raw_header.blocks,
        hash: raw_header.hash,
        checksum: raw_header.checksum,
    };
    if header.magic != MAGIC {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!("xattr block {block_nr}: bad magic {:#010x}", header.magic),
        ));
    }
    if header.blocks != 1 {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!(
                "xattr block {block_nr}: h_blocks is {}, should be 1",
                header.blocks
            ),
        ));
    }
    let (entries, terminator, min_offs) = walk(block, BLOCK_HEADER_SIZE, 0, Area::Block, true)?;
    let sorted = entries.windows(2).all(|w| match w {
        [a, c] => (a.index, a.name_len, a.raw_name) <= (c.index, c.name_len, c.raw_name),
        _ => true,
    });
    let used = entries.iter().map(Entry::cost).sum();
    let free = min_offs.saturating_sub(terminator + TERMINATOR_SIZE);
    let checksum = csum_seed.map(|seed| ChecksumCheck {
        stored: header.checksum,
        computed: block_checksum(seed, block_nr, block),
    });
    let bad_entry_hashes = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.value_inum == 0)
        .filter(|(_, e)| {
            // The hash covers the padded value (zero padding, as the kernel writes it).
            let start = e.value_offs as usize;
            let padded = block
                .get(start..start.saturating_add(value_size(e.value_size as usize)))
                .unwrap_or(&[]);
            let value = if e.value_size == 0 { &[][..] } else { padded };
            e.hash != entry_hash(e.raw_name, value, false)
                && e.hash != entry_hash(e.raw_name, value, true)
        })
        .map(|(i, _)| i)
        .collect();
    let computed_hash = block_hash(&entries);
    Ok(XattrBlock {
        computed_hash,
        bad_entry_hashes,
        header,
        entries,
        sorted,
        space: Space {
            capacity: block_capacity(block.len()),
            used,
            free,
        },
        checksum,
    })
}

// ---------------------------------------------------------------------------------------------
// Value decoders
// ---------------------------------------------------------------------------------------------

/// POSIX ACL tags.
pub mod acl_tag {
    /// Owner.
    pub const USER_OBJ: u16 = 0x01;
    /// Named user.
    pub const USER: u16 = 0x02;
    /// Owning group.
    pub const GROUP_OBJ: u16 = 0x04;
    /// Named group.
    pub const GROUP: u16 = 0x08;
    /// Mask.
    pub const MASK: u16 = 0x10;
    /// Others.
    pub const OTHER: u16 = 0x20;

    /// The tag's name as libacl calls it without the `ACL_` prefix (`user_obj`, `user`,
    /// `group_obj`, `group`, `mask`, `other`), `unknown` for any other value.
    pub fn name(tag: u16) -> &'static str {
        match tag {
            USER_OBJ => "user_obj",
            USER => "user",
            GROUP_OBJ => "group_obj",
            GROUP => "group",
            MASK => "mask",
            OTHER => "other",
            _ => "unknown",
        }
    }
}

/// An ACL tag in JSON: `{raw, name}` as every enumerated value.
fn tag_as_named<S: serde::Serializer>(
    tag: &u16,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    crate::reader::values::Named::new(*tag, acl_tag::name(*tag)).serialize(serializer)
}

/// One POSIX ACL entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct AclEntry {
    /// Tag (see [`acl_tag`]); in JSON `{raw, name}` ([`acl_tag::name`]).
    #[serde(serialize_with = "tag_as_named")]
    #[schemars(with = "crate::reader::values::Named")]
    pub tag: u16,
    /// Permission bits (rwx = 4/2/1).
    pub perm: u16,
    /// uid / gid for named user and group entries.
    pub id: Option<u32>,
}

impl AclEntry {
    /// Tag name as getfacl prints it.
    pub fn tag_name(&self) -> &'static str {
        match self.tag {
            acl_tag::USER_OBJ | acl_tag::USER => "user",
            acl_tag::GROUP_OBJ | acl_tag::GROUP => "group",
            acl_tag::MASK => "mask",
            acl_tag::OTHER => "other",
            _ => "unknown",
        }
    }
    fn named(tag: u16) -> bool {
        tag == acl_tag::USER || tag == acl_tag::GROUP
    }
}

/// Version of ext4's compact on-disk ACL form.
pub const ACL_DISK_VERSION: u32 = 1;
/// Version of the VFS (getxattr) ACL form.
pub const ACL_VFS_VERSION: u32 = 2;

/// Decode an ACL in ext4's compact on-disk form: a 4-byte version (1), then 4-byte entries
/// (tag, perm) for owner/group/mask/other and 8-byte entries (tag, perm, id) for named ones.
pub fn decode_acl_disk(value: &[u8]) -> Result<Vec<AclEntry>> {
    let version = ondisk::decode::<raw::AclHeader>(value).map_or(0, |h| h.version);
    if value.len() < raw::AclHeader::SIZE || version != ACL_DISK_VERSION {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!(
                "POSIX ACL: bad header (length {}, version {version})",
                value.len(),
            ),
        ));
    }
    let mut out = Vec::new();
    let mut pos = raw::AclHeader::SIZE;
    while pos < value.len() {
        let short: raw::AclEntryShort = ondisk::decode_at(value, pos)
            .map_err(|_| Error::corrupt(crate::ProblemKind::Xattr, "POSIX ACL: truncated entry"))?;
        let (tag, perm) = (short.tag, short.perm);
        if AclEntry::named(tag) {
            let named: raw::AclEntry = ondisk::decode_at(value, pos).map_err(|_| {
                Error::corrupt(
                    crate::ProblemKind::Xattr,
                    "POSIX ACL: truncated named entry",
                )
            })?;
            out.push(AclEntry {
                tag,
                perm,
                id: Some(named.id),
            });
            pos += raw::AclEntry::SIZE;
        } else {
            match tag {
                acl_tag::USER_OBJ | acl_tag::GROUP_OBJ | acl_tag::MASK | acl_tag::OTHER => {}
                _ => {
                    return Err(Error::corrupt(
                        crate::ProblemKind::Xattr,
                        format!("POSIX ACL: unknown tag {tag:#x}"),
                    ))
                }
            }
            out.push(AclEntry {
                tag,
                perm,
                id: None,
            });
            pos += raw::AclEntryShort::SIZE;
        }
    }
    Ok(out)
}

/// Decode an ACL in the VFS form `getxattr` returns: a 4-byte version (2), then 8-byte entries.
pub fn decode_acl_vfs(value: &[u8]) -> Result<Vec<AclEntry>> {
    let version = ondisk::decode::<raw::AclHeader>(value).map_or(0, |h| h.version);
    let body = value.get(raw::AclHeader::SIZE..).unwrap_or(&[]);
    if value.len() < raw::AclHeader::SIZE
        || version != ACL_VFS_VERSION
        || body.len() % raw::AclEntry::SIZE != 0
    {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!("POSIX ACL (VFS form): bad header or length {}", value.len()),
        ));
    }
    Ok(body
        .chunks_exact(raw::AclEntry::SIZE)
        .filter_map(|c| ondisk::decode::<raw::AclEntry>(c).ok())
        .map(|e| AclEntry {
            tag: e.tag,
            perm: e.perm,
            id: AclEntry::named(e.tag).then_some(e.id),
        })
        .collect())
}

/// Size of an ACL in ext4's on-disk form.
pub fn acl_disk_size(entries: &[AclEntry]) -> usize {
    raw::AclHeader::SIZE
        + entries
            .iter()
            .map(|e| {
                if AclEntry::named(e.tag) {
                    raw::AclEntry::SIZE
                } else {
                    raw::AclEntryShort::SIZE
                }
            })
            .sum::<usize>()
}

/// A decoded `security.capability` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Capability {
    /// Revision 1, 2 or 3.
    pub version: u8,
    /// `VFS_CAP_FLAGS_EFFECTIVE`.
    pub effective: bool,
    /// Permitted set.
    pub permitted: u64,
    /// Inheritable set.
    pub inheritable: u64,
    /// Root uid of the owning user namespace (v3 only).
    pub rootid: Option<u32>,
}

/// Decode `security.capability` (`struct vfs_cap_data` / `vfs_ns_cap_data`).
pub fn decode_capability(value: &[u8]) -> Result<Capability> {
    let cap: raw::VfsCapData = ondisk::decode_zero_extended(value)?;
    let magic = cap.magic_etc;
    let version = (magic >> 24) as u8;
    let want = match version {
        1 => 12,
        2 => 20,
        3 => 24,
        _ => {
            return Err(Error::corrupt(
                crate::ProblemKind::Xattr,
                format!("security.capability: unknown revision {magic:#010x}"),
            ))
        }
    };
    if value.len() != want {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!(
                "security.capability v{version}: {} bytes, expected {want}",
                value.len()
            ),
        ));
    }
    let (mut permitted, mut inheritable) =
        (u64::from(cap.permitted_lo), u64::from(cap.inheritable_lo));
    if version >= 2 {
        permitted |= u64::from(cap.permitted_hi) << 32;
        inheritable |= u64::from(cap.inheritable_hi) << 32;
    }
    Ok(Capability {
        version,
        effective: magic & 1 != 0,
        permitted,
        inheritable,
        rootid: (version == 3).then_some(cap.rootid),
    })
}

/// A decoded SELinux security context (`user:role:type[:level]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SelinuxLabel {
    /// The whole context without the trailing NUL.
    pub context: String,
    /// SELinux user.
    pub user: String,
    /// Role.
    pub role: String,
    /// Type.
    #[serde(rename = "type")]
    pub type_: String,
    /// MLS/MCS level and categories, if any.
    pub level: Option<String>,
}

/// Decode a `security.selinux` value (a context string, usually NUL-terminated).
pub fn decode_selinux(value: &[u8]) -> Result<SelinuxLabel> {
    let context_bytes = value.strip_suffix(&[0]).unwrap_or(value);
    let context = std::str::from_utf8(context_bytes)
        .map_err(|_| Error::corrupt(crate::ProblemKind::Xattr, "security.selinux: not UTF-8"))?
        .to_string();
    let mut parts = context.splitn(4, ':');
    let (Some(user), Some(role), Some(type_)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!("security.selinux: {context:?} is not user:role:type[:level]"),
        ));
    };
    Ok(SelinuxLabel {
        user: user.to_string(),
        role: role.to_string(),
        type_: type_.to_string(),
        level: parts.next().map(str::to_string),
        context: context.clone(),
    })
}

/// A value decoded by a known format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "format", rename_all = "snake_case")]
pub enum Decoded {
    /// A POSIX ACL.
    PosixAcl {
        /// The entries.
        entries: Vec<AclEntry>,
    },
    /// File capabilities.
    Capability(Capability),
    /// An SELinux label.
    Selinux(SelinuxLabel),
    /// Samba's DOS attributes (`user.DOSATTRIB`).
    Dosattrib(crate::reader::samba::DosAttrib),
    /// Samba's NT ACL (`security.NTACL`).
    Ntacl(crate::reader::samba::NtAcl),
    /// Lustre's `trusted.lma`.
    Lma(lustre::Lma),
    /// Lustre's `trusted.link`.
    Link(lustre::LinkEa),
    /// Lustre's `trusted.lov`.
    Lov(lustre::Lov),
    /// Lustre's `trusted.fid` on an OST object.
    FilterFid(lustre::FilterFid),
    /// Lustre's `trusted.som`.
    Som(lustre::Som),
}

/// What a scan keeps of a value whose decoder has a cheap summary (`xattrs` counts files by DOS
/// attribute and by Lustre stripe count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueSummary {
    /// A `user.DOSATTRIB` value and its `FILE_ATTRIBUTE_*` bits.
    Dos(u32),
    /// A `user.DOSATTRIB` value that does not decode.
    DosUndecodable,
    /// A `trusted.lov` layout and its stripe count.
    Stripes(u16),
    /// A `trusted.lov` value that does not decode.
    LovUndecodable,
}

/// The summary of a value stored under `name`, for the names that have one.
pub fn summarize_value(name: &str, value: &[u8]) -> Option<ValueSummary> {
    match name {
        samba::DOSATTRIB_NAME => Some(
            samba::decode_dosattrib(value).map_or(ValueSummary::DosUndecodable, |d| {
                ValueSummary::Dos(d.attrib)
            }),
        ),
        "trusted.lov" => Some(
            lustre::stripe_count(value).map_or(ValueSummary::LovUndecodable, ValueSummary::Stripes),
        ),
        _ => None,
    }
}

/// Decode a value stored on disk under the full `name`, when its format is known.
pub fn decode_value(name: &str, value: &[u8]) -> Option<Result<Decoded>> {
    match name {
        "system.posix_acl_access" | "system.posix_acl_default" => {
            Some(decode_acl_disk(value).map(|entries| Decoded::PosixAcl { entries }))
        }
        "security.capability" => Some(decode_capability(value).map(Decoded::Capability)),
        "security.selinux" => Some(decode_selinux(value).map(Decoded::Selinux)),
        samba::DOSATTRIB_NAME => Some(samba::decode_dosattrib(value).map(Decoded::Dosattrib)),
        samba::NTACL_NAME => Some(samba::decode_ntacl(value).map(Decoded::Ntacl)),
        "trusted.lma" => Some(lustre::decode_lma(value).map(Decoded::Lma)),
        "trusted.link" => Some(lustre::decode_link(value).map(Decoded::Link)),
        "trusted.lov" => Some(lustre::decode_lov(value).map(Decoded::Lov)),
        "trusted.fid" => Some(lustre::decode_filter_fid(value).map(Decoded::FilterFid)),
        "trusted.som" => Some(lustre::decode_som(value).map(Decoded::Som)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_at_agrees_with_binrw() {
        use crate::reader::ondisk::testing::noise;
        for seed in 1..300u64 {
            let area = noise(seed, 40);
            for pos in [0, 3, 16, 24, 25, 30, 40, 41] {
                let slow = ondisk::decode_at::<raw::Entry>(&area, pos).ok();
                assert_eq!(entry_at(&area, pos), slow);
                let slow = ondisk::decode_at::<raw::IbodyHeader>(&area, pos).ok();
                assert_eq!(magic_at(&area, pos), slow.map(|h| h.magic));
            }
        }
        assert_eq!(entry_at(&[0u8; 16], usize::MAX), None);
        assert_eq!(magic_at(&[0u8; 16], usize::MAX), None);
    }

    fn put_entry(buf: &mut [u8], pos: usize, index: u8, name: &[u8], offs: u16, size: u32) {
        buf[pos] = name.len() as u8;
        buf[pos + 1] = index;
        buf[pos + 2..pos + 4].copy_from_slice(&offs.to_le_bytes());
        buf[pos + 8..pos + 12].copy_from_slice(&size.to_le_bytes());
        buf[pos + 16..pos + 16 + name.len()].copy_from_slice(name);
    }

    /// A 256-byte inode, extra 32, with `security.selinux` (31 bytes) stored as the kernel would.
    fn inode_with_label() -> Vec<u8> {
        let mut ino = vec![0u8; 256];
        ino[0x80] = 32;
        ino[160..164].copy_from_slice(&MAGIC.to_le_bytes());
        // area after magic: 164..256 = 92 bytes; value of 31 -> 32 bytes at offset 60.
        put_entry(&mut ino, 164, 6, b"selinux", 60, 31);
        let label = b"system_u:object_r:default_t:s0\0";
        ino[164 + 60..164 + 60 + 31].copy_from_slice(label);
        ino
    }

    #[test]
    fn sizes() {
        assert_eq!(entry_len(0), 16);
        assert_eq!(entry_len(7), 24);
        assert_eq!(entry_len(10), 28);
        assert_eq!(value_size(31), 32);
        assert_eq!(value_size(0), 0);
        assert_eq!(ibody_capacity(256, 32), 88);
        assert_eq!(ibody_capacity(256, 28), 92);
        assert_eq!(ibody_capacity(128, 0), 0);
        assert_eq!(ibody_capacity(1024, 32), 856);
        assert_eq!(block_capacity(4096), 4060);
    }

    #[test]
    fn names() {
        assert_eq!(split_name("user.foo"), Some((1, "foo")));
        assert_eq!(split_name("system.posix_acl_access"), Some((2, "")));
        assert_eq!(split_name("system.posix_acl_default"), Some((3, "")));
        assert_eq!(split_name("system.data"), Some((7, "data")));
        assert_eq!(split_name("security.selinux"), Some((6, "selinux")));
        assert_eq!(split_name("foo.bar"), None);
        assert_eq!(full_name(2, b""), "system.posix_acl_access");
        assert_eq!(full_name(4, b"lov"), "trusted.lov");
        assert_eq!(full_name(99, b"x"), "index99.x");
    }

    #[test]
    fn ibody_label() {
        let ino = inode_with_label();
        let ib = parse_ibody(&ino, 32).unwrap();
        assert!(ib.present);
        assert_eq!(ib.entries.len(), 1);
        let entry = &ib.entries[0];
        assert_eq!(entry.name, "security.selinux");
        assert_eq!(entry.cost(), 56);
        assert_eq!(ib.space.capacity, 88);
        assert_eq!(ib.space.used, 56);
        assert_eq!(ib.space.free, 32);
        match decode_value(&entry.name, entry.value.unwrap())
            .unwrap()
            .unwrap()
        {
            Decoded::Selinux(l) => {
                assert_eq!(l.type_, "default_t");
                assert_eq!(l.level.as_deref(), Some("s0"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ibody_without_magic_is_empty() {
        let mut ino = vec![0u8; 256];
        ino[0x80] = 32;
        let ib = parse_ibody(&ino, 32).unwrap();
        assert!(!ib.present);
        assert_eq!(ib.space.free, 88);
        let small = vec![0u8; 128];
        assert_eq!(parse_ibody(&small, 0).unwrap().space.capacity, 0);
    }

    #[test]
    fn ibody_malformed_never_panics() {
        let base = inode_with_label();
        // Bad extra isize values.
        assert!(parse_ibody(&base, 30).is_err());
        assert!(parse_ibody(&base, 200).is_err());
        // Value offset past the end, value overlapping entries, huge name length.
        let mut bad_offs = base.clone();
        bad_offs[166] = 0xff;
        bad_offs[167] = 0x00;
        assert!(parse_ibody(&bad_offs, 32).is_err());
        let mut overlapping = base.clone();
        overlapping[166] = 8;
        assert!(parse_ibody(&overlapping, 32).is_err());
        let mut huge_name = base.clone();
        huge_name[164] = 250;
        assert!(parse_ibody(&huge_name, 32).is_err());
        // Every single-byte corruption of the area, every length: errors or values, no panic.
        for pos in 160..256 {
            for byte in [0u8, 1, 0x7f, 0xff] {
                let mut corrupt = base.clone();
                corrupt[pos] = byte;
                let _ = parse_ibody(&corrupt, 32);
                for len in [129usize, 164, 170, 200, 255] {
                    let _ = parse_ibody(&corrupt[..len], 32);
                }
            }
        }
    }

    /// `ibody_entries` gives what `parse_ibody_unnamed` lists (the same entries and values, or
    /// an error where it errs), on a sound area with two entries and on every single-byte
    /// corruption of it, at every record length.
    #[test]
    fn ibody_entries_agree_with_the_list() {
        let mut base = inode_with_label();
        // Entries at 164 and 188, the terminator at 208; the values at 216 and 224.
        put_entry(&mut base, 188, 1, b"tag", 52, 5);
        base[164 + 52..164 + 57].copy_from_slice(b"vvvvv");
        let listed = parse_ibody_unnamed(&base, 32).unwrap();
        assert_eq!(listed.entries.len(), 2);
        let agree = |record: &[u8], extra: u16| {
            let listed = parse_ibody_unnamed(record, extra).map(|b| b.entries);
            let iterated = ibody_entries(record, extra).map(Iterator::collect::<Vec<_>>);
            match (listed, iterated) {
                (Ok(listed), Ok(iterated)) => assert_eq!(
                    format!("{listed:?}"),
                    format!("{iterated:?}"),
                    "record {record:02x?}"
                ),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (listed, iterated) => panic!("{listed:?} vs {iterated:?}"),
            }
        };
        agree(&base, 32);
        for extra in [0u16, 4, 28, 30, 96, 200] {
            agree(&base, extra);
        }
        for pos in 128..256 {
            for byte in [0u8, 1, 3, 0x20, 0x7f, 0xff] {
                let mut corrupt = base.clone();
                corrupt[pos] = byte;
                for len in [128usize, 129, 164, 170, 200, 255, 256] {
                    agree(&corrupt[..len], 32);
                }
            }
        }
    }

    fn sample_block(bs: usize) -> Vec<u8> {
        let mut blk = vec![0u8; bs];
        blk[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        blk[4..8].copy_from_slice(&1u32.to_le_bytes());
        blk[8..12].copy_from_slice(&1u32.to_le_bytes());
        // two sorted entries: user.a (1,1,"a") and user.bb (1,2,"bb")
        put_entry(&mut blk, 32, 1, b"a", (bs - 4) as u16, 3);
        put_entry(&mut blk, 52, 1, b"bb", (bs - 12) as u16, 8);
        blk[bs - 4..bs - 1].copy_from_slice(b"xyz");
        blk
    }

    #[test]
    fn block_roundtrip_and_checksum() {
        let mut blk = sample_block(1024);
        let seed = 0x1234_5678;
        let csum = block_checksum(seed, 77, &blk);
        blk[16..20].copy_from_slice(&csum.to_le_bytes());
        let xb = parse_block(&blk, 77, Some(seed)).unwrap();
        assert!(xb.sorted);
        assert_eq!(xb.entries.len(), 2);
        assert_eq!(xb.entries[0].value, Some(&b"xyz"[..]));
        assert_eq!(xb.space.capacity, 988);
        assert_eq!(xb.space.used, 20 + 4 + 20 + 8);
        // entries end at 72, terminator 72..76, lowest value at 1012
        assert_eq!(xb.space.free, 1012 - 76);
        assert!(xb.checksum.unwrap().ok());
        // The sample's hashes are 0: both entries are flagged, the block hash is 0.
        assert_eq!(xb.bad_entry_hashes, vec![0, 1]);
        assert_eq!(xb.computed_hash, 0);
        let hash = entry_hash(b"a", b"xyz\0", false);
        assert_eq!(hash, ((b'a' as u32) << 16) ^ u32::from_le_bytes(*b"xyz\0"));
        assert_eq!(entry_hash(b"\xe9", b"", true), 0xffff_ffe9);
        // The checksum depends on the block number.
        let other = parse_block(&blk, 78, Some(seed)).unwrap();
        assert!(!other.checksum.unwrap().ok());
    }

    #[test]
    fn crc_convention() {
        use crate::reader::csum::crc32c_raw;
        // ext4_chksum(~0, "123456789") = raw register; the standard CRC-32C check value is
        // its complement, 0xe3069283.
        assert_eq!(!crc32c_raw(!0, b"123456789"), 0xe306_9283);
    }

    #[test]
    fn block_malformed() {
        let good = sample_block(1024);
        let mut bad_magic = good.clone();
        bad_magic[3] = 0;
        assert!(parse_block(&bad_magic, 1, None).is_err());
        let mut bad_blocks = good.clone();
        bad_blocks[8] = 2;
        assert!(parse_block(&bad_blocks, 1, None).is_err());
        assert!(parse_block(&good[..20], 1, None).is_err());
        let mut unsorted = good.clone();
        // unsorted: the first entry moves to security. (index 6), after user.bb (index 1)
        unsorted[33] = 6;
        assert!(!parse_block(&unsorted, 1, None).unwrap().sorted);
        for pos in 0..80 {
            for byte in [0u8, 1, 0xff] {
                let mut corrupt = good.clone();
                corrupt[pos] = byte;
                let _ = parse_block(&corrupt, 1, Some(1));
            }
        }
    }

    #[test]
    fn acl_forms() {
        // user::rw-, user:1000:r--, group::r--, mask::r--, other::---
        let mut disk = vec![1, 0, 0, 0];
        disk.extend_from_slice(&[1, 0, 6, 0]);
        disk.extend_from_slice(&[2, 0, 4, 0, 0xe8, 3, 0, 0]);
        disk.extend_from_slice(&[4, 0, 4, 0]);
        disk.extend_from_slice(&[0x10, 0, 4, 0]);
        disk.extend_from_slice(&[0x20, 0, 0, 0]);
        let entries = decode_acl_disk(&disk).unwrap();
        assert_eq!(entries.len(), 5);
        assert_eq!(entries[1].id, Some(1000));
        assert_eq!(acl_disk_size(&entries), 28);
        assert_eq!(disk.len(), 28);
        let mut vfs = vec![2, 0, 0, 0];
        for entry in &entries {
            vfs.extend_from_slice(&entry.tag.to_le_bytes());
            vfs.extend_from_slice(&entry.perm.to_le_bytes());
            vfs.extend_from_slice(&entry.id.unwrap_or(u32::MAX).to_le_bytes());
        }
        assert_eq!(vfs.len(), 44);
        assert_eq!(decode_acl_vfs(&vfs).unwrap(), entries);
        assert!(decode_acl_disk(&disk[..27]).is_err());
        assert!(decode_acl_disk(&[2, 0, 0, 0]).is_err());
    }

    #[test]
    fn capabilities() {
        let mut v2 = vec![0u8; 20];
        v2[0..4].copy_from_slice(&0x0200_0001u32.to_le_bytes());
        v2[4] = 0x00;
        v2[5] = 0x04; // CAP_NET_BIND_SERVICE = bit 10
        let cap = decode_capability(&v2).unwrap();
        assert_eq!(cap.version, 2);
        assert!(cap.effective);
        assert_eq!(cap.permitted, 1 << 10);
        let mut v3 = v2.clone();
        v3[3] = 3;
        v3.extend_from_slice(&1000u32.to_le_bytes());
        assert_eq!(decode_capability(&v3).unwrap().rootid, Some(1000));
        assert!(decode_capability(&v2[..12]).is_err());
        assert!(decode_capability(&[]).is_err());
    }
}
