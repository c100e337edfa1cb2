//! `struct ext4_inode`: the 128-byte base record and the large part after it, whose valid length is
//! `i_extra_isize` (the record itself is `s_inode_size` bytes).

use super::OnDisk;
use crate::reader::csum::crc32c_raw;
use binrw::BinRead;

/// `i_flags` bits (`EXT4_*_FL`, fs/ext4/ext4.h); [`crate::reader::inode::FLAG_NAMES`] names
/// them all.
pub const IMMUTABLE_FL: u32 = 0x0000_0010;
/// i_flags: append only.
pub const APPEND_FL: u32 = 0x0000_0020;
/// i_flags: encrypted inode (fscrypt).
pub const ENCRYPT_FL: u32 = 0x0000_0800;
/// i_flags: hashed-index directory.
pub const INDEX_FL: u32 = 0x0000_1000;
/// i_flags: AFS magic directory (only with the `imagic_inodes` feature).
pub const IMAGIC_FL: u32 = 0x0000_2000;
/// i_flags: huge_file block units.
pub const HUGE_FILE_FL: u32 = 0x0004_0000;
/// i_flags: uses extents.
pub const EXTENTS_FL: u32 = 0x0008_0000;
/// i_flags: fs-verity file.
pub const VERITY_FL: u32 = 0x0010_0000;
/// i_flags: value inode of an xattr.
pub const EA_INODE_FL: u32 = 0x0020_0000;
/// i_flags: inline data.
pub const INLINE_DATA_FL: u32 = 0x1000_0000;
/// i_flags: casefolded directory.
pub const CASEFOLD_FL: u32 = 0x4000_0000;

/// Reserved inode: bad blocks (`EXT2_BAD_INO`).
pub const BAD_INO: u32 = 1;
/// Reserved inode: the root directory (`EXT2_ROOT_INO`).
pub const ROOT_INO: u32 = 2;
/// Reserved inode: the boot loader (`EXT2_BOOT_LOADER_INO`).
pub const BOOT_LOADER_INO: u32 = 5;
/// Reserved inode: the resize inode (`EXT2_RESIZE_INO`).
pub const RESIZE_INO: u32 = 7;

/// File-type bits of `i_mode` (`S_IFMT`).
pub const S_IFMT: u16 = 0o170000;
/// `i_mode` type: socket.
pub const S_IFSOCK: u16 = 0o140000;
/// `i_mode` type: symbolic link.
pub const S_IFLNK: u16 = 0o120000;
/// `i_mode` type: regular file.
pub const S_IFREG: u16 = 0o100000;
/// `i_mode` type: block device.
pub const S_IFBLK: u16 = 0o060000;
/// `i_mode` type: directory.
pub const S_IFDIR: u16 = 0o040000;
/// `i_mode` type: character device.
pub const S_IFCHR: u16 = 0o020000;
/// `i_mode` type: fifo.
pub const S_IFIFO: u16 = 0o010000;

/// A directory's `i_mode`.
#[inline]
pub fn mode_is_dir(mode: u16) -> bool {
    mode & S_IFMT == S_IFDIR
}

/// The directory-entry file type (`EXT2_FT_*`) of an inode mode, as libext2fs'
/// `ext2_file_type`: 0 (unknown) for a type bit pattern that is none of the seven.
pub fn dirent_type_of_mode(mode: u16) -> u8 {
    match mode & S_IFMT {
        S_IFREG => 1,
        S_IFDIR => 2,
        S_IFCHR => 3,
        S_IFBLK => 4,
        S_IFIFO => 5,
        S_IFSOCK => 6,
        S_IFLNK => 7,
        _ => 0,
    }
}

/// Size of the base record (`EXT2_GOOD_OLD_INODE_SIZE`).
pub const BASE_SIZE: usize = 128;

le_struct! {
/// The base record, bytes 0..128 (Linux `osd1`/`osd2` layouts).
#[derive(BinRead, Clone, Debug, PartialEq, Eq)]
#[br(little)]
pub struct InodeBase, offsets InodeBaseOffsets {
    /// On-disk `i_mode`.
    pub mode: u16,
    /// On-disk `i_uid`.
    pub uid: u16,
    /// On-disk `i_size_lo`.
    pub size_lo: u32,
    /// On-disk `i_atime`.
    pub atime: u32,
    /// On-disk `i_ctime`.
    pub ctime: u32,
    /// On-disk `i_mtime`.
    pub mtime: u32,
    /// On-disk `i_dtime`.
    pub dtime: u32,
    /// On-disk `i_gid`.
    pub gid: u16,
    /// On-disk `i_links_count`.
    pub links_count: u16,
    /// On-disk `i_blocks_lo`.
    pub blocks_lo: u32,
    /// On-disk `i_flags`.
    pub flags: u32,
    /// osd1.linux1.l_i_version
    pub version: u32,
    /// i_block: extent root, block map, inline data or symlink target.
    pub block: [u8; 60],
    /// On-disk `i_generation`.
    pub generation: u32,
    /// On-disk `i_file_acl_lo`.
    pub file_acl_lo: u32,
    /// On-disk `i_size_high`.
    pub size_high: u32,
    /// On-disk `i_obso_faddr`.
    pub obso_faddr: u32,
    /// osd2.linux2.l_i_blocks_high
    pub blocks_high: u16,
    /// osd2.linux2.l_i_file_acl_high
    pub file_acl_high: u16,
    /// osd2.linux2.l_i_uid_high
    pub uid_high: u16,
    /// osd2.linux2.l_i_gid_high
    pub gid_high: u16,
    /// osd2.linux2.l_i_checksum_lo
    pub checksum_lo: u16,
    /// osd2.linux2.l_i_reserved
    pub reserved: u16,
}
}

le_struct! {
/// The large part, bytes 128..160: present as far as `i_extra_isize` (and the record) reach.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct InodeLarge, offsets InodeLargeOffsets {
    /// On-disk `i_extra_isize`.
    pub extra_isize: u16,
    /// On-disk `i_checksum_hi`.
    pub checksum_hi: u16,
    /// On-disk `i_ctime_extra`.
    pub ctime_extra: u32,
    /// On-disk `i_mtime_extra`.
    pub mtime_extra: u32,
    /// On-disk `i_atime_extra`.
    pub atime_extra: u32,
    /// On-disk `i_crtime`.
    pub crtime: u32,
    /// On-disk `i_crtime_extra`.
    pub crtime_extra: u32,
    /// On-disk `i_version_hi`.
    pub version_hi: u32,
    /// On-disk `i_projid`.
    pub projid: u32,
}
}

impl OnDisk for InodeBase {
    const SIZE: usize = BASE_SIZE;
    const WHAT: &'static str = "inode";
}

impl OnDisk for InodeLarge {
    const SIZE: usize = 32;
    const WHAT: &'static str = "inode large part";
}

/// Offset of i_checksum_lo (osd2.linux2.l_i_checksum_lo).
pub const CHECKSUM_LO_OFFSET: usize = InodeBase::OFFSETS.checksum_lo;
/// Offset of i_checksum_hi.
pub const CHECKSUM_HI_OFFSET: usize = BASE_SIZE + InodeLarge::OFFSETS.checksum_hi;
/// Offset of i_block (60 bytes: extent root, block map, inline data or symlink target).
pub const I_BLOCK_OFFSET: usize = InodeBase::OFFSETS.block;
/// i_extra_isize from which i_checksum_hi is present.
pub const CHECKSUM_HI_EXTRA_ISIZE: u16 = 4;

impl InodeBase {
    /// The hot-path twin of the binrw decode (same fields, same order; see `fast_reader_agrees`).
    /// `None` when `raw` is shorter than the base record.
    #[inline]
    pub fn decode_fast(raw: &[u8]) -> Option<InodeBase> {
        let mut fields = super::LeFields::new(raw.get(..BASE_SIZE)?);
        Some(InodeBase::read_le(&mut fields))
    }

    /// `i_links_count` and `i_file_acl` (with its high half) from [`InodeBase::scan_keys`], for a pass that looks at
    /// nothing else of every record (see `partial_reader_agrees`). `None` when `raw` is shorter
    /// than the base record.
    pub fn links_and_file_acl(raw: &[u8]) -> Option<(u16, u64)> {
        InodeBase::scan_keys(raw).map(|keys| (keys.links_count, keys.file_acl))
    }

    /// The fields a scan tests on every slot ([`ScanKeys`]) alone, read in place (see
    /// `partial_reader_agrees`): where a whole [`InodeBase::decode_fast`] that is not inlined
    /// copies all 128 bytes of every record. `None` when `raw` is shorter than the base record.
    #[inline]
    pub fn scan_keys(raw: &[u8]) -> Option<ScanKeys> {
        let base = raw.get(..BASE_SIZE)?;
        let u16_at = |offset: usize| {
            base.get(offset..offset + 2)
                .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
        };
        let u32_at = |offset: usize| {
            base.get(offset..offset + 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let wide = |lo: u32, high: u64| u64::from(lo) | (high << 32);
        Some(ScanKeys {
            mode: u16_at(InodeBase::OFFSETS.mode),
            links_count: u16_at(InodeBase::OFFSETS.links_count),
            flags: u32_at(InodeBase::OFFSETS.flags),
            size: wide(
                u32_at(InodeBase::OFFSETS.size_lo),
                u64::from(u32_at(InodeBase::OFFSETS.size_high)),
            ),
            file_acl: wide(
                u32_at(InodeBase::OFFSETS.file_acl_lo),
                u64::from(u16_at(InodeBase::OFFSETS.file_acl_high)),
            ),
        })
    }

    /// i_size with its high half.
    pub fn size(&self) -> u64 {
        u64::from(self.size_lo) | (u64::from(self.size_high) << 32)
    }
    /// i_blocks with its high half (units depend on huge_file).
    pub fn blocks(&self) -> u64 {
        u64::from(self.blocks_lo) | (u64::from(self.blocks_high) << 32)
    }
    /// i_file_acl with its high half.
    pub fn file_acl(&self) -> u64 {
        u64::from(self.file_acl_lo) | (u64::from(self.file_acl_high) << 32)
    }
    /// Owner with its high half.
    pub fn uid(&self) -> u32 {
        u32::from(self.uid) | (u32::from(self.uid_high) << 16)
    }
    /// Group with its high half.
    pub fn gid(&self) -> u32 {
        u32::from(self.gid) | (u32::from(self.gid_high) << 16)
    }
}

impl InodeLarge {
    /// The hot-path twin of the binrw decode, zero-extended (see `fast_reader_agrees`).
    #[inline]
    pub fn decode_fast_zero_extended(bytes: &[u8]) -> InodeLarge {
        // Whole (the common case): read in place. A copy would be re-read through memory in
        // pieces other than those written, which stalls every inode of a scan.
        let mut buf = [0u8; 32];
        let whole = bytes.get(..buf.len());
        let mut fields = super::LeFields::new(whole.unwrap_or_else(|| {
            let len = bytes.len().min(buf.len());
            if let (Some(dst), Some(src)) = (buf.get_mut(..len), bytes.get(..len)) {
                dst.copy_from_slice(src);
            }
            &buf
        }));
        InodeLarge::read_le(&mut fields)
    }
}

/// What a scan tests on every inode slot, read by [`InodeBase::scan_keys`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanKeys {
    /// `i_mode`.
    pub mode: u16,
    /// `i_links_count`.
    pub links_count: u16,
    /// `i_flags`.
    pub flags: u32,
    /// `i_size` with its high half.
    pub size: u64,
    /// `i_file_acl` with its high half.
    pub file_acl: u64,
}

/// The large part as the record holds it, whatever `i_extra_isize` says (debugfs prints these).
/// Bytes beyond the record read as zero.
#[inline]
pub fn large_in_record(raw: &[u8]) -> InodeLarge {
    InodeLarge::decode_fast_zero_extended(raw.get(BASE_SIZE..).unwrap_or(&[]))
}

/// The large part limited to what `i_extra_isize` covers; `extra_isize` itself is the record's.
pub fn large_in_use(raw: &[u8]) -> InodeLarge {
    let in_record = large_in_record(raw);
    let end = BASE_SIZE
        .saturating_add(usize::from(in_record.extra_isize))
        .min(raw.len());
    let used = raw.get(BASE_SIZE..end).unwrap_or(&[]);
    InodeLarge {
        extra_isize: in_record.extra_isize,
        ..InodeLarge::decode_fast_zero_extended(used)
    }
}

/// The per-inode checksum seed: crc32c over the inode number and generation, seeded with the
/// filesystem's. Inode, extent-block, directory-block and htree checksums all start from it.
pub fn csum_seed(fs_seed: u32, ino: u32, generation: u32) -> u32 {
    let crc = crc32c_raw(fs_seed, &ino.to_le_bytes());
    crc32c_raw(crc, &generation.to_le_bytes())
}

/// Does the record carry i_checksum_hi (ext2fs_inode_csum's `has_hi`)?
pub fn has_checksum_hi(raw: &[u8]) -> bool {
    raw.len() > BASE_SIZE && large_in_record(raw).extra_isize >= CHECKSUM_HI_EXTRA_ISIZE
}

/// The stored checksum: lo, plus hi when present.
pub fn stored_checksum(raw: &[u8]) -> u32 {
    let lo = InodeBase::decode_fast(raw).map_or(0, |b| b.checksum_lo);
    let hi = if has_checksum_hi(raw) {
        large_in_record(raw).checksum_hi
    } else {
        0
    };
    u32::from(lo) | (u32::from(hi) << 16)
}

/// Inode checksum as libext2fs computes it over the record with the checksum fields read as zero,
/// starting from the per-inode seed ([`csum_seed`]); only the low 16 bits without i_checksum_hi.
pub fn checksum(inode_seed: u32, raw: &[u8]) -> u32 {
    let has_hi = has_checksum_hi(raw);
    let part = |a: usize, b: usize| raw.get(a.min(raw.len())..b.min(raw.len())).unwrap_or(&[]);
    let lo_end = CHECKSUM_LO_OFFSET + 2;
    let mut crc = crc32c_raw(inode_seed, part(0, CHECKSUM_LO_OFFSET));
    crc = crc32c_raw(
        crc,
        &[0u8; 2][..2.min(raw.len().saturating_sub(CHECKSUM_LO_OFFSET))],
    );
    if has_hi {
        crc = crc32c_raw(crc, part(lo_end, CHECKSUM_HI_OFFSET));
        crc = crc32c_raw(crc, &[0u8; 2]);
        crc = crc32c_raw(crc, part(CHECKSUM_HI_OFFSET + 2, raw.len()));
        crc
    } else {
        crc32c_raw(crc, part(lo_end, raw.len())) & 0xFFFF
    }
}

/// ext2fs_inode_csum_verify: the checksum matches, or the base record is all zeros.
pub fn checksum_ok(inode_seed: u32, raw: &[u8]) -> bool {
    checksum(inode_seed, raw) == stored_checksum(raw) || raw.iter().take(BASE_SIZE).all(|&b| b == 0)
}

/// `i_generation` of a raw record (zero-extended when the record is short).
pub fn record_generation(raw: &[u8]) -> u32 {
    InodeBase::decode_fast(raw)
        .or_else(|| super::decode_zero_extended::<InodeBase>(raw).ok())
        .map_or(0, |b| b.generation)
}

/// ext2fs_inode_csum_verify for inode `ino` under the filesystem seed `fs_seed`: match, or an
/// all-zero base inode.
pub fn record_checksum_ok(fs_seed: u32, ino: u32, raw: &[u8]) -> bool {
    if let Some(ok) = record_checksum_ok_one_pass(fs_seed, ino, raw) {
        return ok;
    }
    checksum_ok(csum_seed(fs_seed, ino, record_generation(raw)), raw)
}

/// Largest record [`record_checksum_ok_one_pass`] handles (copied to the stack).
const ONE_PASS_MAX: usize = 1024;

/// [`record_checksum_ok`] as one CRC pass over a stack copy of inode number, generation and
/// record with the checksum fields zeroed (a scan checks every inode: seven short CRC calls
/// cost twice one long one). `None` for record sizes it does not handle (short, odd or over
/// [`ONE_PASS_MAX`]): the caller takes the general path.
fn record_checksum_ok_one_pass(fs_seed: u32, ino: u32, raw: &[u8]) -> Option<bool> {
    // The four fields the check needs, read where they lie (see `checksum_fields_agree`).
    const GENERATION: usize = 0x64;
    let base = raw.get(..BASE_SIZE)?;
    let u16_at = |bytes: &[u8], offset: usize| {
        bytes
            .get(offset..offset + 2)
            .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
    };
    let generation = base
        .get(GENERATION..GENERATION + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    checksum_ok_fields(
        fs_seed,
        ino,
        raw,
        generation,
        u16_at(base, CHECKSUM_LO_OFFSET),
        u16_at(raw, BASE_SIZE),
        u16_at(raw, CHECKSUM_HI_OFFSET),
    )
}

/// [`record_checksum_ok`] for a record already decoded: `generation` and `checksum_lo` from
/// its base, `large` its large part as the record holds it ([`large_in_record`]). `None` for
/// record sizes the one-pass check does not handle (see [`record_checksum_ok`]).
pub fn checksum_ok_decoded(
    fs_seed: u32,
    ino: u32,
    raw: &[u8],
    generation: u32,
    checksum_lo: u16,
    large: &InodeLarge,
) -> Option<bool> {
    checksum_ok_fields(
        fs_seed,
        ino,
        raw,
        generation,
        checksum_lo,
        large.extra_isize,
        large.checksum_hi,
    )
}

/// [`checksum_ok_decoded`] from the fields alone: `extra_isize` and `checksum_hi` as the
/// record holds them (0 when it is too short to).
fn checksum_ok_fields(
    fs_seed: u32,
    ino: u32,
    raw: &[u8],
    generation: u32,
    checksum_lo: u16,
    extra_isize: u16,
    checksum_hi: u16,
) -> Option<bool> {
    let len = raw.len();
    if !(len == BASE_SIZE || (CHECKSUM_HI_OFFSET + 2..=ONE_PASS_MAX).contains(&len)) {
        return None;
    }
    let has_hi = len > BASE_SIZE && extra_isize >= CHECKSUM_HI_EXTRA_ISIZE;
    let stored = u32::from(checksum_lo) | (u32::from(if has_hi { checksum_hi } else { 0 }) << 16);
    // The common 256-byte record in three independent lanes; other sizes through a stack
    // buffer no larger than needed (it is zeroed first).
    let crc = if let Ok(rec) = <&[u8; 256]>::try_from(raw) {
        Some(crc_256_three_lanes(fs_seed, ino, generation, rec, has_hi))
    } else if len <= 256 {
        crc_with_header::<{ 8 + 256 }>(fs_seed, ino, generation, raw, has_hi)
    } else {
        crc_with_header::<{ 8 + ONE_PASS_MAX }>(fs_seed, ino, generation, raw, has_hi)
    }?;
    let computed = if has_hi { crc } else { crc & 0xFFFF };
    Some(computed == stored || raw.iter().take(BASE_SIZE).all(|&b| b == 0))
}

/// CRC32C from `fs_seed` over inode number, generation and the record with its checksum
/// fields zeroed, copied into an `N`-byte stack buffer (`None` when it does not fit).
fn crc_with_header<const N: usize>(
    fs_seed: u32,
    ino: u32,
    generation: u32,
    raw: &[u8],
    has_hi: bool,
) -> Option<u32> {
    // 8-byte aligned, so that the CRC runs 8 bytes at a time from the first byte.
    #[repr(align(8))]
    struct Aligned<const N: usize>([u8; N]);
    let mut aligned = Aligned([0u8; N]);
    let buf = &mut aligned.0;
    let len = raw.len();
    buf.get_mut(..4)?.copy_from_slice(&ino.to_le_bytes());
    buf.get_mut(4..8)?
        .copy_from_slice(&generation.to_le_bytes());
    let rec = buf.get_mut(8..8usize.checked_add(len)?)?;
    rec.copy_from_slice(raw);
    rec.get_mut(CHECKSUM_LO_OFFSET..CHECKSUM_LO_OFFSET + 2)?
        .fill(0);
    if has_hi {
        rec.get_mut(CHECKSUM_HI_OFFSET..CHECKSUM_HI_OFFSET + 2)?
            .fill(0);
    }
    Some(crc32c_raw(fs_seed, buf.get(..8 + len)?))
}

/// CRC32C's reflected polynomial.
const CRC32C_POLY: u32 = 0x82F6_3B78;

/// Bytes in each lane of [`crc_256_three_lanes`]: inode number, generation and the 256-byte
/// record split in three equal pieces.
const LANE: usize = (8 + 256) / 3;

/// The raw CRC32C register advanced through `nbytes` zero bytes, as a linear map applied one
/// byte of the register at a time: `table[index][byte]` is the image of byte `index` of the
/// register holding `byte`. (Appending zeros is linear in the register, so the images of its 32
/// bits add.)
const fn zero_advance_tables(nbytes: usize) -> [[u32; 256]; 4] {
    let mut bit_image = [0u32; 32];
    let mut bit = 0;
    while bit < 32 {
        let mut reg = 1u32 << bit;
        let mut step = 0;
        while step < nbytes * 8 {
            reg = (reg >> 1) ^ (CRC32C_POLY & (reg & 1).wrapping_neg());
            step += 1;
        }
        bit_image[bit] = reg;
        bit += 1;
    }
    let mut table = [[0u32; 256]; 4];
    let mut index = 0;
    while index < 4 {
        let mut byte = 0;
        while byte < 256 {
            let mut image = 0u32;
            let mut bit_in_byte = 0;
            while bit_in_byte < 8 {
                if byte & (1 << bit_in_byte) != 0 {
                    image ^= bit_image[8 * index + bit_in_byte];
                }
                bit_in_byte += 1;
            }
            table[index][byte] = image;
            byte += 1;
        }
        index += 1;
    }
    table
}

/// [`zero_advance_tables`] for one lane.
static ADVANCE_LANE: [[u32; 256]; 4] = zero_advance_tables(LANE);

/// The raw register `reg` advanced through one lane of zero bytes.
#[inline]
fn advance_lane(reg: u32) -> u32 {
    let [b0, b1, b2, b3] = reg.to_le_bytes();
    ADVANCE_LANE[0][usize::from(b0)]
        ^ ADVANCE_LANE[1][usize::from(b1)]
        ^ ADVANCE_LANE[2][usize::from(b2)]
        ^ ADVANCE_LANE[3][usize::from(b3)]
}

/// [`crc_with_header`] for a 256-byte record, without its copy: the 264 bytes as three
/// independent 88-byte CRCs (the hardware CRC step has a latency of several cycles, so one
/// chain waits where three overlap), joined through the linearity of the register:
/// `crc(s, X ‖ Y) = advance(crc(s, X), |Y|) ^ crc(0, Y)`. Only the middle lane, which holds
/// both checksum fields, is copied (word by word, the fields cleared).
fn crc_256_three_lanes(
    fs_seed: u32,
    ino: u32,
    generation: u32,
    rec: &[u8; 256],
    has_hi: bool,
) -> u32 {
    #[repr(align(8))]
    struct Lane([u8; LANE]);
    // Lane 1: inode number, generation, record bytes 0..80 (copied: one call instead of two).
    let first = LANE - 8;
    let mut head = Lane([0u8; LANE]);
    let ino_gen = u64::from(ino) | (u64::from(generation) << 32);
    head.0[..8].copy_from_slice(&ino_gen.to_le_bytes());
    head.0[8..].copy_from_slice(&rec[..first]);
    let crc_head = crc32c_raw(fs_seed, &head.0);
    // Lane 2: record bytes 80..168, the checksum fields read as zero (copied word by word, so
    // that the CRC's 8-byte loads match the stores).
    let mut mid = Lane([0u8; LANE]);
    for (word_index, (dst, src)) in mid
        .0
        .chunks_exact_mut(8)
        .zip(rec[first..first + LANE].chunks_exact(8))
        .enumerate()
    {
        let mut word = [0u8; 8];
        word.copy_from_slice(src);
        let at = first + 8 * word_index;
        for field in [CHECKSUM_LO_OFFSET, CHECKSUM_HI_OFFSET] {
            if (at..at + 8).contains(&field) && (field == CHECKSUM_LO_OFFSET || has_hi) {
                word[field - at] = 0;
                word[field - at + 1] = 0;
            }
        }
        dst.copy_from_slice(&word);
    }
    let crc_mid = crc32c_raw(0, &mid.0);
    // Lane 3: record bytes 168..256.
    let crc_tail = crc32c_raw(0, &rec[first + LANE..]);
    advance_lane(advance_lane(crc_head) ^ crc_mid) ^ crc_tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::{decode, testing::assert_size};

    #[test]
    fn sizes_match_declarations() {
        assert_size::<InodeBase>();
        assert_size::<InodeLarge>();
    }

    /// The fast decoders share the binrw declaration (`le_struct!`): the sizes summed from it are
    /// the records' sizes, and the offsets it derives are where binrw reads each field.
    #[test]
    fn generated_layout_matches_binrw() {
        assert_eq!(InodeBase::LE_SIZE, BASE_SIZE);
        assert_eq!(InodeLarge::LE_SIZE, <InodeLarge as OnDisk>::SIZE);
        // A record whose every byte is its own offset: each decoded field starts at its offset.
        let raw: Vec<u8> = (0..BASE_SIZE as u8).collect();
        let base: InodeBase = decode(&raw).unwrap();
        assert_eq!(
            base.links_count.to_le_bytes()[0] as usize,
            InodeBase::OFFSETS.links_count
        );
        assert_eq!(
            base.checksum_lo.to_le_bytes()[0] as usize,
            CHECKSUM_LO_OFFSET
        );
        assert_eq!(base.block[0] as usize, I_BLOCK_OFFSET);
        assert_eq!(
            base.reserved.to_le_bytes()[0] as usize,
            InodeBase::OFFSETS.reserved
        );
        assert_eq!(
            InodeBase::default(),
            decode::<InodeBase>(&[0; BASE_SIZE]).unwrap()
        );
    }

    #[test]
    fn modes_to_dirent_types() {
        assert_eq!(dirent_type_of_mode(0o100644), 1);
        assert_eq!(dirent_type_of_mode(0o40755), 2);
        assert_eq!(dirent_type_of_mode(0o120777), 7);
        assert_eq!(dirent_type_of_mode(0o170000), 0);
        assert!(mode_is_dir(0o40000) && !mode_is_dir(0o140000));
    }

    #[test]
    fn fast_reader_agrees() {
        use crate::reader::ondisk::{decode_zero_extended, testing::noise};
        for seed in 1..200u64 {
            let raw = noise(seed, 160);
            let slow: InodeBase = decode(&raw).unwrap();
            assert_eq!(InodeBase::decode_fast(&raw), Some(slow));
            for len in [0, 2, 5, 17, 32] {
                let part = &raw[BASE_SIZE..BASE_SIZE + len];
                let slow: InodeLarge = decode_zero_extended(part).unwrap();
                assert_eq!(InodeLarge::decode_fast_zero_extended(part), slow);
            }
        }
        assert_eq!(InodeBase::decode_fast(&[0u8; 127]), None);
    }

    #[test]
    fn partial_reader_agrees() {
        use crate::reader::ondisk::testing::noise;
        for seed in 1..200u64 {
            let raw = noise(seed, 128);
            let base: InodeBase = decode(&raw).unwrap();
            assert_eq!(
                InodeBase::links_and_file_acl(&raw),
                Some((base.links_count, base.file_acl()))
            );
            let keys = ScanKeys {
                mode: base.mode,
                links_count: base.links_count,
                flags: base.flags,
                size: base.size(),
                file_acl: base.file_acl(),
            };
            assert_eq!(InodeBase::scan_keys(&raw), Some(keys));
        }
        assert_eq!(InodeBase::links_and_file_acl(&[0u8; 127]), None);
        assert_eq!(InodeBase::scan_keys(&[0u8; 127]), None);
    }

    #[test]
    fn one_pass_checksum_agrees() {
        use crate::reader::ondisk::testing::noise;
        for seed in 1..300u64 {
            for len in [128, 132, 160, 256, 512, 1024] {
                let mut raw = noise(seed, len);
                if len > BASE_SIZE {
                    // i_extra_isize below and above the i_checksum_hi threshold.
                    raw[BASE_SIZE] = (seed % 8) as u8;
                    raw[BASE_SIZE + 1] = 0;
                }
                let general = checksum_ok(csum_seed(7, 11, record_generation(&raw)), &raw);
                assert_eq!(record_checksum_ok_one_pass(7, 11, &raw), Some(general));
                // A record with its checksum made right passes both ways.
                let crc = checksum(csum_seed(7, 11, record_generation(&raw)), &raw);
                raw[CHECKSUM_LO_OFFSET..CHECKSUM_LO_OFFSET + 2]
                    .copy_from_slice(&(crc as u16).to_le_bytes());
                if has_checksum_hi(&raw) {
                    raw[CHECKSUM_HI_OFFSET..CHECKSUM_HI_OFFSET + 2]
                        .copy_from_slice(&((crc >> 16) as u16).to_le_bytes());
                }
                assert!(checksum_ok(csum_seed(7, 11, record_generation(&raw)), &raw));
                assert_eq!(record_checksum_ok_one_pass(7, 11, &raw), Some(true));
            }
        }
        assert_eq!(record_checksum_ok_one_pass(7, 11, &[0u8; 130]), None);
        assert_eq!(record_checksum_ok_one_pass(7, 11, &[0u8; 2048]), None);
    }

    #[test]
    fn checksum_fields_agree() {
        use crate::reader::ondisk::testing::noise;
        for seed in 1..300u64 {
            for len in [128, 132, 256, 512] {
                let mut raw = noise(seed, len);
                if len > BASE_SIZE {
                    raw[BASE_SIZE] = (seed % 8) as u8;
                    raw[BASE_SIZE + 1] = 0;
                }
                let base = InodeBase::decode_fast(&raw).unwrap();
                let decoded = checksum_ok_decoded(
                    7,
                    11,
                    &raw,
                    base.generation,
                    base.checksum_lo,
                    &large_in_record(&raw),
                );
                assert_eq!(record_checksum_ok_one_pass(7, 11, &raw), decoded);
            }
        }
    }

    #[test]
    fn three_lanes_agree_with_the_stack_copy() {
        use crate::reader::ondisk::testing::noise;
        for seed in 1..2000u64 {
            let raw = noise(seed, 256);
            let rec: &[u8; 256] = raw.first_chunk().unwrap();
            let (fs_seed, ino, generation) = (seed as u32 ^ 0x5a5a_1234, seed as u32, !seed as u32);
            for has_hi in [false, true] {
                assert_eq!(
                    crc_256_three_lanes(fs_seed, ino, generation, rec, has_hi),
                    crc_with_header::<264>(fs_seed, ino, generation, &raw, has_hi).unwrap()
                );
            }
        }
        // Against the reference made of separate calls, on a record whose fields are set.
        let mut raw = noise(99, 256);
        raw[BASE_SIZE] = 32;
        let want = checksum(csum_seed(3, 12, record_generation(&raw)), &raw);
        let got = crc_256_three_lanes(
            3,
            12,
            record_generation(&raw),
            raw.first_chunk().unwrap(),
            true,
        );
        assert_eq!(got, want);
    }

    #[test]
    fn checksum_offsets_match_declaration() {
        let mut raw = vec![0u8; 256];
        raw[CHECKSUM_LO_OFFSET] = 0x34;
        raw[CHECKSUM_HI_OFFSET] = 0x12;
        raw[BASE_SIZE] = CHECKSUM_HI_EXTRA_ISIZE as u8;
        let base: InodeBase = decode(&raw).unwrap();
        assert_eq!(base.checksum_lo, 0x34);
        assert_eq!(large_in_record(&raw).checksum_hi, 0x12);
        assert_eq!(stored_checksum(&raw), 0x0012_0034);
    }

    #[test]
    fn extra_isize_limits_the_large_part() {
        let mut raw = vec![0u8; 256];
        raw[BASE_SIZE] = 28;
        raw[0x9C] = 7; // i_projid, beyond extra_isize 28
        assert_eq!(large_in_use(&raw).projid, 0);
        assert_eq!(large_in_record(&raw).projid, 7);
        raw[BASE_SIZE] = 32;
        assert_eq!(large_in_use(&raw).projid, 7);
    }
}
