//! `find`: the paths under a directory whose names and inodes pass a set of tests, as `find(1)`
//! would print them on a mount of the image, without mounting.
//!
//! Two phases, each parallel:
//!
//! 1. **Inodes** (only when a test needs more than a directory entry holds): the shared
//!    inode-table walk ([`crate::reader::walk`], a [`TableVisitor`]) evaluates the inode tests
//!    (type, owner, size, times, flags, xattrs) on every slot and keeps the numbers that pass in
//!    a compressed bitmap. Why the walk rather than reading each entry's inode during the tree
//!    walk: the walk reads every table once, sequentially, several groups at a time, with the
//!    check's warm/cold I/O strategy and the xattr-block cache, where per-entry reads would fetch
//!    inode-table blocks in directory order (random) through the shared block cache. When no
//!    inode passes, the tree is not walked at all.
//! 2. **Tree**: from the start directory, level by level (the directories of one level read in
//!    parallel), each entry tested by name (`fnmatch(3)` with no flags, as `find -name`), by the
//!    directory entry's file type where that is enough (`filetype` feature), and by membership
//!    in phase 1's bitmap. Each directory is entered once (a directory reached twice through a
//!    damaged tree is not walked again), "." and ".." are skipped as find skips them.
//!
//! Output order: sorted, a directory before its contents, names compared byte by byte (find(1)
//! prints readdir order, which on ext4 is hash order: the same set of paths, in another order).
//!
//! Memory: the bitmap of passing inodes (compressed), one level of directories to read, and the
//! matched paths (what is printed). Nothing is sized by an on-disk field.

use crate::error::{Problem, ProblemKind};
use crate::reader::dir::{self, AreaEntries};
use crate::reader::features::{INCOMPAT_FILETYPE, RO_COMPAT_PROJECT};
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, Inode, InodeBase, XattrLocation};
use crate::reader::itable::XattrBlockCache;
use crate::reader::ondisk::inode::{
    self as ondisk_inode, ScanKeys, S_IFBLK, S_IFCHR, S_IFDIR, S_IFIFO, S_IFLNK, S_IFMT, S_IFREG,
    S_IFSOCK,
};
use crate::reader::walk::{self, GroupEnd, TableVisitor};
use crate::reader::xattr;
use rayon::prelude::*;
use roaring::RoaringBitmap;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Most problems kept verbatim (the rest are counted).
pub const MAX_PROBLEMS: usize = 100;

/// A numeric test in find's syntax: `N` (exactly), `+N` (more than), `-N` (less than).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `N`.
    Eq(u64),
    /// `+N`.
    Gt(u64),
    /// `-N`.
    Lt(u64),
}

impl Cmp {
    /// Parse `N`, `+N` or `-N`.
    pub fn parse(text: &str) -> Result<Cmp, String> {
        let num = |t: &str| {
            t.parse::<u64>()
                .map_err(|_| format!("`{text}`: expected N, +N or -N (a decimal number)"))
        };
        match text.as_bytes().first() {
            Some(b'+') => Ok(Cmp::Gt(num(&text[1..])?)),
            Some(b'-') => Ok(Cmp::Lt(num(&text[1..])?)),
            _ => Ok(Cmp::Eq(num(text)?)),
        }
    }
    /// Does `v` pass?
    pub fn test(self, value: u64) -> bool {
        match self {
            Cmp::Eq(n) => value == n,
            Cmp::Gt(n) => value > n,
            Cmp::Lt(n) => value < n,
        }
    }
}

/// `-size` as find(1) reads it: a [`Cmp`] on the size in units, rounded up (so `-size -1M`
/// passes only empty files, as in find).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeTest {
    /// The comparison, in units.
    pub cmp: Cmp,
    /// Bytes per unit: `c` 1, `w` 2, `b` (the default) 512, `k` 1024, `M` 1 MiB, `G` 1 GiB.
    pub unit: u64,
}

impl SizeTest {
    /// Parse find's `-size` argument: `[+-]N[cwbkMG]`.
    pub fn parse(text: &str) -> Result<SizeTest, String> {
        let (num, unit) = match text.as_bytes().last() {
            Some(b'c') => (&text[..text.len() - 1], 1),
            Some(b'w') => (&text[..text.len() - 1], 2),
            Some(b'b') => (&text[..text.len() - 1], 512),
            Some(b'k') => (&text[..text.len() - 1], 1024),
            Some(b'M') => (&text[..text.len() - 1], 1 << 20),
            Some(b'G') => (&text[..text.len() - 1], 1 << 30),
            _ => (text, 512),
        };
        Ok(SizeTest {
            cmp: Cmp::parse(num)
                .map_err(|_| format!("`{text}`: expected find's -size syntax, [+-]N[cwbkMG]"))?,
            unit,
        })
    }
    /// Does a file of `size` bytes pass?
    pub fn test(self, size: u64) -> bool {
        self.cmp.test(size.div_ceil(self.unit))
    }
}

/// How an xattr's value is tested.
#[derive(Clone, Debug)]
pub enum ValueTest {
    /// The attribute is present, whatever its value.
    Any,
    /// The value is exactly these bytes.
    Exact(Vec<u8>),
    /// The value (as bytes) matches this regular expression somewhere.
    Regex(regex::bytes::Regex),
}

/// `--xattr NAME[=VALUE|=~REGEX]`: an xattr named `name` (with its prefix, `user.foo`) whose value
/// passes `value`.
#[derive(Clone, Debug)]
pub struct XattrTest {
    /// Full name with prefix.
    pub name: String,
    /// The value test.
    pub value: ValueTest,
}

impl XattrTest {
    /// Parse `NAME`, `NAME=VALUE` or `NAME=~REGEX`. VALUE is read as `setfattr -v` reads one:
    /// `0x` then hex digits, `0s` then base64, text in double quotes (the quotes removed), or
    /// plain text.
    pub fn parse(text: &str) -> Result<XattrTest, String> {
        let Some((name, raw_value)) = text.split_once('=') else {
            return Ok(XattrTest {
                name: text.to_string(),
                value: ValueTest::Any,
            });
        };
        if name.is_empty() {
            return Err(format!("`{text}`: no attribute name before `=`"));
        }
        let value = if let Some(re) = raw_value.strip_prefix('~') {
            ValueTest::Regex(regex::bytes::Regex::new(re).map_err(|e| format!("`{re}`: {e}"))?)
        } else {
            ValueTest::Exact(parse_value(raw_value)?)
        };
        Ok(XattrTest {
            name: name.to_string(),
            value,
        })
    }
    /// Does `value` pass?
    pub fn value_passes(&self, value: &[u8]) -> bool {
        match &self.value {
            ValueTest::Any => true,
            ValueTest::Exact(v) => v == value,
            ValueTest::Regex(r) => r.is_match(value),
        }
    }
}

/// A value as `setfattr -v` takes it: `0x` hex, `0s` base64, `"text"` or text.
pub fn parse_value(text: &str) -> Result<Vec<u8>, String> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        if digits.len() % 2 != 0 {
            return Err(format!("`{text}`: an odd number of hex digits"));
        }
        return digits
            .chunks(2)
            .map(|p| {
                std::str::from_utf8(p)
                    .ok()
                    .and_then(|d| u8::from_str_radix(d, 16).ok())
                    .ok_or_else(|| format!("`{text}`: not hex"))
            })
            .collect();
    }
    if let Some(b64) = text.strip_prefix("0s").or_else(|| text.strip_prefix("0S")) {
        return base64_decode(b64).ok_or_else(|| format!("`{text}`: not base64"));
    }
    if let Some(unquoted) = text
        .strip_prefix('"')
        .and_then(|unquoted| unquoted.strip_suffix('"'))
    {
        return Ok(unquoted.as_bytes().to_vec());
    }
    Ok(text.as_bytes().to_vec())
}

/// Standard base64 (padding optional), `None` on another character.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for byte in text.bytes().filter(|&byte| byte != b'=') {
        let sextet = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(sextet);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// `-type` letters and the `i_mode` types they stand for.
pub const TYPE_LETTERS: [(char, u16); 7] = [
    ('f', S_IFREG),
    ('d', S_IFDIR),
    ('l', S_IFLNK),
    ('b', S_IFBLK),
    ('c', S_IFCHR),
    ('p', S_IFIFO),
    ('s', S_IFSOCK),
];

/// The `-type` letter of an `i_mode` (`?` for none).
pub fn type_letter(mode: u16) -> char {
    TYPE_LETTERS
        .iter()
        .find(|(_, t)| mode & S_IFMT == *t)
        .map_or('?', |(c, _)| *c)
}

/// The `i_mode` type of a directory entry's file type byte (0 when unknown).
fn mode_of_dirent_type(file_type: u8) -> u16 {
    match file_type {
        1 => S_IFREG,
        2 => S_IFDIR,
        3 => S_IFCHR,
        4 => S_IFBLK,
        5 => S_IFIFO,
        6 => S_IFSOCK,
        7 => S_IFLNK,
        _ => 0,
    }
}

/// `lsattr` letters and the `i_flags` bits they show (e2fsprogs lib/e2p/pf.c).
pub const LSATTR_LETTERS: [(char, u32); 23] = [
    ('s', 0x0000_0001),
    ('u', 0x0000_0002),
    ('c', 0x0000_0004),
    ('S', 0x0000_0008),
    ('i', 0x0000_0010),
    ('a', 0x0000_0020),
    ('d', 0x0000_0040),
    ('A', 0x0000_0080),
    ('m', 0x0000_0400),
    ('E', 0x0000_0800),
    ('I', 0x0000_1000),
    ('j', 0x0000_4000),
    ('t', 0x0000_8000),
    ('D', 0x0001_0000),
    ('T', 0x0002_0000),
    ('h', 0x0004_0000),
    ('e', 0x0008_0000),
    ('V', 0x0010_0000),
    ('C', 0x0080_0000),
    ('x', 0x0200_0000),
    ('N', 0x1000_0000),
    ('P', 0x2000_0000),
    ('F', 0x4000_0000),
];

/// `--flags`: comma-separated flag names as debugfs prints them (`IMMUTABLE`, `EXTENTS`; any
/// case) or runs of `lsattr` letters (`ie`); the mask of every flag named.
pub fn parse_flags(spec: &str) -> Result<u32, String> {
    let mut mask = 0u32;
    for tok in spec.split(',').filter(|t| !t.is_empty()) {
        let up = tok.to_ascii_uppercase();
        let up = up.strip_suffix("_FL").unwrap_or(&up);
        if let Some((bit, _)) = inode::FLAG_NAMES.iter().find(|(_, n)| *n == up) {
            mask |= bit;
            continue;
        }
        for letter in tok.chars() {
            let (_, bit) = LSATTR_LETTERS
                .iter()
                .find(|(l, _)| *l == letter)
                .ok_or_else(|| format!("`{tok}`: not a flag name nor lsattr letters"))?;
            mask |= bit;
        }
    }
    if mask == 0 {
        return Err(format!("`{spec}`: no flag named"));
    }
    Ok(mask)
}

/// A point in time: seconds since the epoch and nanoseconds.
pub type Stamp = (i64, u32);

/// Parse a date for `--newer`: `@SECONDS[.FRACTION]`, or `YYYY-MM-DD[ HH:MM[:SS]]` (a `T` for
/// the space, a trailing `Z` allowed) in UTC. `None` when `s` is not a date (then it names a
/// file in the image).
pub fn parse_date(text: &str) -> Option<Stamp> {
    if let Some(epoch) = text.strip_prefix('@') {
        let (secs, frac) = epoch.split_once('.').unwrap_or((epoch, ""));
        let secs: i64 = secs.parse().ok()?;
        if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 9 {
            return None;
        }
        let nsec = format!("{frac:0<9}").parse::<u32>().ok()?;
        return Some((secs, nsec));
    }
    let text = text.strip_suffix('Z').unwrap_or(text);
    let (date, time) = text
        .split_once(['T', ' '])
        .map_or((text, None), |(d, t)| (d, Some(t)));
    let mut date_parts = date.splitn(3, '-');
    let year: i64 = date_parts.next()?.parse().ok()?;
    let month: u32 = date_parts.next()?.parse().ok()?;
    let day: u32 = date_parts.next()?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || date.len() != 10 {
        return None;
    }
    let mut secs = days_from_civil(year, month, day) * 86400;
    if let Some(clock) = time {
        let mut clock_parts = clock.splitn(3, ':');
        let hour: i64 = clock_parts.next()?.parse().ok()?;
        let mi: i64 = clock_parts.next()?.parse().ok()?;
        let se: i64 = clock_parts.next().map_or(Some(0), |x| x.parse().ok())?;
        if hour > 23 || mi > 59 || se > 60 {
            return None;
        }
        secs += hour * 3600 + mi * 60 + se;
    }
    Some((secs, 0))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An inode's modification time with nanoseconds (the `_extra` epoch bits as the kernel
/// decodes them).
pub fn mtime_of(ind: &Inode) -> Stamp {
    let secs = if ind.has_extra_field(0x8c) {
        inode::time_secs(ind.mtime, ind.mtime_extra)
    } else {
        i64::from(ind.mtime as i32)
    };
    let nsec = if ind.has_extra_field(0x8c) {
        inode::time_nsec(ind.mtime_extra)
    } else {
        0
    };
    (secs, nsec)
}

/// The project ID the kernel reports (`ext4_iget`): `i_projid` on a filesystem with the project
/// feature, else 0 (`EXT4_DEF_PROJID`) whatever the inode holds.
pub fn projid_of(fs: &Filesystem, ind: &Inode) -> u32 {
    if fs.sb.has_ro_compat(RO_COMPAT_PROJECT) {
        ind.projid
    } else {
        0
    }
}

/// The tests of one `find`, all of which must pass (find's implicit `-a`).
#[derive(Clone, Debug, Default)]
pub struct Query {
    /// `--name GLOB`: the entry's name (the start's last component).
    pub name: Option<Vec<u8>>,
    /// `--type`: `i_mode` types, any of which passes.
    pub types: Vec<u16>,
    /// `--xattr`: every one must pass.
    pub xattrs: Vec<XattrTest>,
    /// `--spills`: some xattr lives outside the inode body (external block or EA inode).
    pub spills: bool,
    /// `--uid`.
    pub uid: Option<Cmp>,
    /// `--gid`.
    pub gid: Option<Cmp>,
    /// `--projid`.
    pub projid: Option<Cmp>,
    /// `--inode`.
    pub inum: Option<Cmp>,
    /// `--size`.
    pub size: Option<SizeTest>,
    /// `--newer`: modified strictly after.
    pub newer: Option<Stamp>,
    /// `--flags`: every bit of the mask set.
    pub flags: u32,
}

impl Query {
    /// True when some test needs the inode itself (not only the directory entry): then the
    /// inode tables are walked first. `filetype`: entries carry the file type.
    pub fn needs_inodes(&self, filetype: bool) -> bool {
        !self.xattrs.is_empty()
            || self.spills
            || self.uid.is_some()
            || self.gid.is_some()
            || self.projid.is_some()
            || self.size.is_some()
            || self.newer.is_some()
            || self.flags != 0
            || (!self.types.is_empty() && !filetype)
    }

    /// The inode tests on one in-use inode (`raw`: its record). The name and inode-number
    /// tests are the tree walk's.
    pub fn inode_passes(
        &self,
        fs: &Filesystem,
        raw: &[u8],
        keys: &ScanKeys,
        cache: &XattrBlockCache,
    ) -> bool {
        let mode = keys.mode;
        if !self.types.is_empty() && !self.types.contains(&(mode & S_IFMT)) {
            return false;
        }
        if self.flags != 0 && keys.flags & self.flags != self.flags {
            return false;
        }
        if let Some(size_test) = self.size {
            if !size_test.test(keys.size) {
                return false;
            }
        }
        if self.uid.is_some() || self.gid.is_some() || self.projid.is_some() || self.newer.is_some()
        {
            let ind = Inode::parse(raw);
            let pass = |c: Option<Cmp>, v: u32| c.is_none_or(|c| c.test(u64::from(v)));
            if !pass(self.uid, ind.uid) || !pass(self.gid, ind.gid) {
                return false;
            }
            if !pass(self.projid, projid_of(fs, &ind)) {
                return false;
            }
            if self.newer.is_some_and(|t| mtime_of(&ind) <= t) {
                return false;
            }
        }
        if self.spills || !self.xattrs.is_empty() {
            return self.xattrs_pass(fs, raw, keys.file_acl, cache);
        }
        true
    }

    /// The xattr tests, straight from the record: the in-inode entries read where they lie
    /// ([`xattr::ibody_entries`]: no list built, no name built, each compared as bytes to the
    /// names tested), the external block decoded once per block (`cache`); values read only for
    /// a name that matched. Nothing is allocated per inode. The same answer as testing [`inode::inode_xattrs`]' items: a damaged in-inode area
    /// holds no xattr there (its damage is `check`'s to report), a body entry is tested before
    /// the block's (a body value that fails is not rescued by a block value, as before).
    fn xattrs_pass(
        &self,
        fs: &Filesystem,
        raw: &[u8],
        file_acl: u64,
        cache: &XattrBlockCache,
    ) -> bool {
        if !super::scan::may_have_xattrs_acl(file_acl, raw) {
            return false;
        }
        let body = xattr::ibody_entries(raw, record_extra_isize(raw)).unwrap_or_default();
        let block = (file_acl != 0).then(|| cache.get(fs, file_acl));
        if self.spills {
            let outside = body.clone().any(|e| e.value_inum != 0)
                || block
                    .as_ref()
                    .is_some_and(|b| b.spills() || b.uses_ea_inode());
            if !outside {
                return false;
            }
        }
        let mut full: Option<inode::InodeXattrs<'_>> = None;
        for xattr_test in &self.xattrs {
            let in_body = body.clone().find(|e| entry_named(e, &xattr_test.name));
            let in_block = block
                .as_ref()
                .is_some_and(|b| b.entries.iter().any(|e| e.name == xattr_test.name));
            if in_body.is_none() && !in_block {
                return false;
            }
            if matches!(xattr_test.value, ValueTest::Any) {
                continue;
            }
            let pass = match in_body {
                Some(e) if e.value_inum == 0 => e.value.is_some_and(|v| xattr_test.value_passes(v)),
                _ => {
                    // In the block or an EA inode: read the inode's xattrs whole, once.
                    let all = full
                        .get_or_insert_with(|| inode::inode_xattrs(fs, raw, &Inode::parse(raw)));
                    all.items
                        .iter()
                        .filter(|x| x.name == xattr_test.name)
                        .any(|x| value_of(fs, x).is_some_and(|v| xattr_test.value_passes(&v)))
                }
            };
            if !pass {
                return false;
            }
        }
        true
    }

    /// The xattrs of inode `ino` an `--xattr` test names, with their values (for the JSON
    /// output); empty without `--xattr`.
    pub fn matching_xattrs(&self, fs: &Filesystem, raw: &[u8]) -> Vec<MatchedXattr> {
        if self.xattrs.is_empty() {
            return Vec::new();
        }
        let ind = Inode::parse(raw);
        let all = inode::inode_xattrs(fs, raw, &ind);
        all.items
            .iter()
            .filter(|x| self.xattrs.iter().any(|t| t.name == x.name))
            .map(|x| MatchedXattr {
                name: x.name.clone(),
                location: x.location,
                value_size: x.value_size,
                value: value_of(fs, x),
            })
            .collect()
    }
}

/// `i_extra_isize` as [`Inode::parse`] reads it: the record's, 0 for a 128-byte record.
fn record_extra_isize(raw: &[u8]) -> u16 {
    if raw.len() > ondisk_inode::BASE_SIZE {
        ondisk_inode::large_in_record(raw).extra_isize
    } else {
        0
    }
}

/// Is `e`'s full name (as [`xattr::full_name`] spells it) `name`? Compared as bytes; a stored
/// name that is not UTF-8 is compared as the lossy conversion `full_name` makes of it.
fn entry_named(entry: &xattr::Entry<'_>, name: &str) -> bool {
    entry.has_full_name(name)
        || (std::str::from_utf8(entry.raw_name).is_err() && entry.full_name() == name)
}

/// An xattr's value wherever it lives (an EA inode's within the kernel's 64 KiB), `None` when it
/// cannot be read.
fn value_of(fs: &Filesystem, item: &inode::XattrItem<'_>) -> Option<Vec<u8>> {
    crate::views::extract::xattr_value(fs, item).ok()
}

/// One xattr of a found inode that an `--xattr` test names.
#[derive(Clone, Debug)]
pub struct MatchedXattr {
    /// Full name.
    pub name: String,
    /// Where it lives.
    pub location: XattrLocation,
    /// Value size.
    pub value_size: u32,
    /// The value (`None`: unreadable).
    pub value: Option<Vec<u8>>,
}

/// Phase 1's visitor: every in-use slot whose inode passes the query's inode tests.
/// It also keeps the records of the directories it meets (within [`KEPT_DIR_BYTES`]), which
/// the tree walk reads next: the walk has them in hand, where the tree walk would read each
/// directory's inode-table block again.
struct InodePass<'a> {
    fs: &'a Filesystem,
    query: &'a Query,
    cache: XattrBlockCache,
    /// Bytes of directory records kept so far, by all workers.
    kept: AtomicUsize,
}

/// Most bytes of directory records phase 1 keeps for the tree walk (65,536 records of 256
/// bytes); the directories past it are read from their tables as before.
const KEPT_DIR_BYTES: usize = 16 << 20;

impl InodePass<'_> {
    /// Take `len` bytes from the budget of kept directory records; false when it is spent.
    fn keep_budget(&self, len: usize) -> bool {
        take_budget(&self.kept, len, KEPT_DIR_BYTES)
    }
}

/// Take `len` bytes from a budget of `max` shared by the workers (`taken` so far): false, and
/// nothing taken, when they do not fit.
fn take_budget(taken: &AtomicUsize, len: usize, max: usize) -> bool {
    taken
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |sum| {
            sum.checked_add(len).filter(|&after| after <= max)
        })
        .is_ok()
}

/// One worker of phase 1.
#[derive(Default)]
struct PassWorker {
    passed: RoaringBitmap,
    /// Directory inodes and their records, in walk order (ascending once merged).
    dirs: Vec<(u32, Box<[u8]>)>,
    problems: Vec<Problem>,
    problem_count: u64,
}

impl PassWorker {
    fn problem(&mut self, problem: Problem) {
        self.problem_count += 1;
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(problem);
        }
    }
}

impl TableVisitor for InodePass<'_> {
    type Worker = PassWorker;
    fn worker(&self) -> PassWorker {
        PassWorker::default()
    }
    fn merge(&self, mut earlier: PassWorker, later: PassWorker) -> PassWorker {
        earlier.passed |= later.passed;
        earlier.dirs.extend(later.dirs);
        earlier.problem_count += later.problem_count;
        for problem in later.problems {
            if earlier.problems.len() < MAX_PROBLEMS {
                earlier.problems.push(problem);
            }
        }
        earlier
    }
    fn group_start(&self, _: &mut PassWorker, _: u32, _: u32) {}
    fn inode(&self, worker: &mut PassWorker, _group: u32, ino: u32, raw: &[u8]) {
        let Some(keys) = InodeBase::scan_keys(raw) else {
            return;
        };
        if keys.links_count == 0 || keys.mode == 0 {
            return;
        }
        if self.query.inode_passes(self.fs, raw, &keys, &self.cache) {
            worker.passed.insert(ino);
        }
        if keys.mode & S_IFMT == S_IFDIR && self.keep_budget(raw.len()) {
            worker.dirs.push((ino, raw.into()));
        }
    }
    fn group_end(&self, worker: &mut PassWorker, group: u32, end: GroupEnd) {
        match end {
            GroupEnd::OutsideImage(m) | GroupEnd::Partial(m) => {
                worker.problem(Problem::new(ProblemKind::Inode, m));
            }
            GroupEnd::NoDescriptor => worker.problem(Problem::new(
                ProblemKind::Inode,
                format!("group {group}: descriptor unreadable, its inodes not tested"),
            )),
            GroupEnd::Empty | GroupEnd::Read => {}
        }
    }
}

/// Most bytes [`PassedSet`] spends on a flat bitmap (2^27 inodes); past it lookups go to the
/// compressed bitmap.
const FLAT_PASSED_MAX_BYTES: usize = 16 << 20;

/// Phase 1's passing inodes as the tree walk asks for them, once per directory entry: a flat
/// bitmap up to the highest passing inode (one bit test) when it takes at most
/// [`FLAT_PASSED_MAX_BYTES`], else the compressed bitmap itself (whose lookup searches its
/// containers: ~10 ns an entry, 18% of the tree walk of the 400,000-file benchmark).
enum PassedSet {
    Flat(Vec<u64>),
    Compressed(RoaringBitmap),
}

impl PassedSet {
    fn new(passed: RoaringBitmap) -> PassedSet {
        let words = passed.max().map_or(0, |max| max as usize / 64 + 1);
        if words.saturating_mul(8) > FLAT_PASSED_MAX_BYTES {
            return PassedSet::Compressed(passed);
        }
        let mut flat = vec![0u64; words];
        for ino in &passed {
            if let Some(word) = flat.get_mut(ino as usize / 64) {
                *word |= 1 << (ino % 64);
            }
        }
        PassedSet::Flat(flat)
    }
    #[inline]
    fn contains(&self, ino: u32) -> bool {
        match self {
            PassedSet::Flat(flat) => flat
                .get(ino as usize / 64)
                .is_some_and(|word| word >> (ino % 64) & 1 != 0),
            PassedSet::Compressed(passed) => passed.contains(ino),
        }
    }
    fn is_empty(&self) -> bool {
        match self {
            PassedSet::Flat(flat) => flat.iter().all(|&word| word == 0),
            PassedSet::Compressed(passed) => passed.is_empty(),
        }
    }
}

/// What a `find` found.
#[derive(Debug, Default)]
pub struct Found {
    /// Paths (as find prints them, from the start as given) and inode numbers, sorted: a
    /// directory before its contents, names byte by byte.
    pub paths: Paths,
    /// Directories read.
    pub dirs_read: u64,
    /// Whether the inode tables were walked (some test needed the inodes).
    pub inodes_walked: bool,
    /// Problems met (unreadable directories, damaged entries, unreadable inode tables).
    pub problems: Vec<Problem>,
    /// Problems met, including those not kept.
    pub problem_count: u64,
}

impl Found {
    fn problem(&mut self, problem: Problem) {
        self.problem_count += 1;
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(problem);
        }
    }
}

/// The last component of a start path as find tests it with `-name` (`/` for the root).
fn start_name(start: &[u8]) -> &[u8] {
    let trimmed = {
        let mut path = start;
        while path.len() > 1 && path.ends_with(b"/") {
            path = &path[..path.len() - 1];
        }
        path
    };
    if trimmed == b"/" {
        return trimmed;
    }
    trimmed.rsplit(|&b| b == b'/').next().unwrap_or(trimmed)
}

/// `start` joined with `name` as find joins them (no second `/` after a start ending in one).
fn join(start: &[u8], name: &[u8]) -> Vec<u8> {
    let mut path = Vec::with_capacity(start.len() + 1 + name.len());
    path.extend_from_slice(start);
    if !start.ends_with(b"/") {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    path
}

/// Calls `each(name, inode, file type byte)` for the live entries of directory `ino` (`.` and
/// `..` left out), in on-disk order, the names borrowed from the block read (nothing allocated
/// per entry); returns why not all could be read (the entries before a failure are visited).
/// Blocks are read into `buf`, past the block cache: each directory block is read once here,
/// and caching them would only fill the cache (and the memory) with blocks not read again.
fn each_dir_entry(
    fs: &Filesystem,
    ino: u32,
    ind: &Inode,
    raw: &[u8],
    buf: &mut Vec<u8>,
    mut each: impl FnMut(&[u8], u32, u8),
) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut keep = |area: &[u8], problems: &mut Vec<Problem>, what: &dyn Fn() -> String| {
        let mut it = AreaEntries::new(area, 0);
        for entry in it.by_ref() {
            if entry.inode != 0
                && entry.name != b"."
                && entry.name != b".."
                && !entry.name.is_empty()
            {
                each(entry.name, entry.inode, entry.file_type);
            }
        }
        if let Some((off, rec, len)) = it.bad {
            problems.push(Problem::new(
                ProblemKind::Directory,
                format!(
                    "directory inode {ino}, {}: entry at offset {off} does not fit (rec_len {rec}, name_len {len})",
                    what()
                ),
            ));
        }
    };
    if ind.has_flag(inode::INLINE_DATA_FL) {
        for area in dir::inline_areas(fs, raw, ind) {
            keep(&area, &mut problems, &|| "inline data".to_string());
        }
        return problems;
    }
    let blocks = match dir::dir_blocks(fs, ino, ind) {
        Ok(b) => b,
        Err(e) => {
            problems.push(Problem::new(
                ProblemKind::Directory,
                format!("directory inode {ino}: block map unreadable: {e}"),
            ));
            return problems;
        }
    };
    for (logical, physical) in blocks {
        match fs.block_into(physical, buf) {
            Ok(()) => keep(buf, &mut problems, &|| format!("block {logical}")),
            Err(e) => problems.push(Problem::new(
                ProblemKind::Directory,
                format!("directory inode {ino}, block {logical}: {e}"),
            )),
        }
    }
    problems
}

/// Paths and their inode numbers, kept one after another in one buffer (no allocation per
/// path: a find that prints 100,000 paths holds their bytes and 16 bytes per path).
#[derive(Debug, Default)]
pub struct Paths {
    bytes: Vec<u8>,
    spans: Vec<Span>,
}

/// One path of [`Paths`]: where its bytes are, and its inode.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: usize,
    /// Length in bytes (a path past 4 GiB, which memory would refuse first, is cut there).
    len: u32,
    ino: u32,
}

impl Paths {
    /// Number of paths.
    pub fn len(&self) -> usize {
        self.spans.len()
    }
    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
    /// The paths in order, with their inode numbers.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> + '_ {
        self.spans.iter().map(|&span| (self.path(span), span.ino))
    }
    /// The bytes of `span`.
    fn path(&self, span: Span) -> &[u8] {
        span_bytes(&self.bytes, span)
    }
    /// Record the path that starts at `start` and ends at the end of the bytes.
    fn close(&mut self, start: usize, ino: u32) {
        let len = u32::try_from(self.bytes.len() - start).unwrap_or(u32::MAX);
        self.spans.push(Span { start, len, ino });
    }
    /// Add `path`.
    fn push(&mut self, path: &[u8], ino: u32) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(path);
        self.close(start, ino);
    }
    /// Add `dir` joined with `name` ([`join`]'s path, built in place).
    fn push_joined(&mut self, dir: &[u8], name: &[u8], ino: u32) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(dir);
        if !dir.ends_with(b"/") {
            self.bytes.push(b'/');
        }
        self.bytes.extend_from_slice(name);
        self.close(start, ino);
    }
    /// Add every path of `parts`, in order, after these (the room for all taken at once).
    fn append_all<'p>(&mut self, parts: impl Iterator<Item = &'p Paths> + Clone) {
        let (bytes, spans) = parts.clone().fold((0, 0), |(bytes, spans), part| {
            (bytes + part.bytes.len(), spans + part.spans.len())
        });
        self.bytes.reserve(bytes);
        self.spans.reserve(spans);
        for part in parts {
            let shift = self.bytes.len();
            self.bytes.extend_from_slice(&part.bytes);
            self.spans.extend(part.spans.iter().map(|span| Span {
                start: span.start + shift,
                ..*span
            }));
        }
    }
    /// Sort by [`path_order`].
    fn sort(&mut self) {
        let bytes = &self.bytes;
        self.spans
            .par_sort_unstable_by(|a, b| path_order(span_bytes(bytes, *a), span_bytes(bytes, *b)));
    }
}

/// The bytes of `span` in `bytes`.
fn span_bytes(bytes: &[u8], span: Span) -> &[u8] {
    bytes
        .get(span.start..span.start.saturating_add(span.len as usize))
        .unwrap_or(&[])
}

/// What reading one directory of a level gave.
#[derive(Default)]
struct LevelPart {
    matched: Paths,
    subdirs: Vec<(u32, Vec<u8>)>,
    problems: Vec<Problem>,
}

/// Everything a tree walk needs besides the directory being read.
struct TreeCtx<'a> {
    fs: &'a Filesystem,
    query: &'a Query,
    /// Inodes that passed phase 1 (`None`: no inode test).
    passed: Option<&'a PassedSet>,
    /// Directory records phase 1 kept, by ascending inode (empty without phase 1).
    dirs: &'a [(u32, Box<[u8]>)],
    filetype: bool,
}

impl TreeCtx<'_> {
    /// Directory `dino`'s record: phase 1's copy when it kept one, else read from its table
    /// (`Filesystem::inode_raw`, whose refusal of an inode number out of range comes first
    /// either way).
    fn dir_record(&self, dino: u32) -> crate::error::Result<std::borrow::Cow<'_, [u8]>> {
        self.fs.inode_offset(dino)?;
        match self.dirs.binary_search_by_key(&dino, |(ino, _)| *ino) {
            Ok(at) => Ok(std::borrow::Cow::Borrowed(&self.dirs[at].1)),
            Err(_) => self.fs.inode_raw(dino).map(std::borrow::Cow::Owned),
        }
    }

    /// Does an entry (name, inode, `i_mode` type if known) pass every test?
    #[inline(always)]
    fn passes(&self, name: &[u8], ino: u32, mode_type: u16) -> bool {
        if self.query.inum.is_some_and(|c| !c.test(u64::from(ino))) {
            return false;
        }
        if let Some(passed) = self.passed {
            if !passed.contains(ino) {
                return false;
            }
        } else if !self.query.types.is_empty() && !self.query.types.contains(&mode_type) {
            return false;
        }
        self.query.name.as_ref().is_none_or(|g| fnmatch(g, name))
    }

    /// The `i_mode` type of an entry: from the entry when the filesystem records it, else
    /// from the inode.
    #[inline(always)]
    fn mode_type(&self, ino: u32, file_type: u8) -> u16 {
        if self.filetype {
            let from_entry = mode_of_dirent_type(file_type);
            if from_entry != 0 {
                return from_entry;
            }
        }
        self.mode_type_read(ino)
    }

    /// [`TreeCtx::mode_type`] from the inode itself (kept out of line: the entry's type byte
    /// answers on most filesystems).
    #[inline(never)]
    fn mode_type_read(&self, ino: u32) -> u16 {
        self.fs
            .inode_raw(ino)
            .ok()
            .and_then(|r| InodeBase::decode_fast(&r))
            .map_or(0, |b| b.mode & S_IFMT)
    }

    /// Read directory `dino` (path `dpath`): the entries that pass, and the subdirectories to
    /// read next. `buf`: the worker's block buffer.
    fn read_level_dir(&self, dino: u32, dpath: &[u8], buf: &mut Vec<u8>) -> LevelPart {
        let mut part = LevelPart::default();
        let raw = match self.dir_record(dino) {
            Ok(r) => r,
            Err(e) => {
                part.problems.push(Problem::new(
                    ProblemKind::Directory,
                    format!("directory inode {dino}: {e}"),
                ));
                return part;
            }
        };
        let ind = Inode::parse(&raw);
        if !ind.is_dir() || ind.has_flag(dir::ENCRYPT_FL) {
            // An encrypted directory's names are ciphertext; find on a mount without the key
            // shows encoded names we do not reproduce.
            return part;
        }
        // No sorting here: the matches are sorted once at the end. A path is built only for
        // an entry printed or entered.
        let (matched, subdirs) = (&mut part.matched, &mut part.subdirs);
        part.problems = each_dir_entry(self.fs, dino, &ind, &raw, buf, |name, ino, ft| {
            let mode_type = self.mode_type(ino, ft);
            if self.passes(name, ino, mode_type) {
                matched.push_joined(dpath, name, ino);
            }
            if mode_type == S_IFDIR {
                subdirs.push((ino, join(dpath, name)));
            }
        });
        part
    }
}

/// Compare paths as the output sorts them: component by component, bytes unsigned (a `/` sorts
/// before any byte a name can hold).
fn path_order(left: &[u8], right: &[u8]) -> std::cmp::Ordering {
    let key = |c: &u8| if *c == b'/' { 0 } else { *c };
    // The common prefix compares equal whatever the mapping: the mapped comparison starts at the
    // first differing byte (not decided there alone: a `/` and a NUL, which a damaged name may
    // hold, map alike).
    let common = left.iter().zip(right).take_while(|(x, y)| x == y).count();
    let (rest_a, rest_b) = (
        left.get(common..).unwrap_or(&[]),
        right.get(common..).unwrap_or(&[]),
    );
    rest_a.iter().map(key).cmp(rest_b.iter().map(key))
}

/// Find, from the directory or file `start_ino` (printed as `start`), every path that passes
/// `query`.
pub fn find(fs: &Filesystem, start: &[u8], start_ino: u32, query: &Query) -> Found {
    let filetype = fs.sb.has_incompat(INCOMPAT_FILETYPE);
    let mut found = Found::default();
    let mut dirs = Vec::new();
    let passed = if query.needs_inodes(filetype) {
        found.inodes_walked = true;
        let visitor = InodePass {
            fs,
            query,
            cache: XattrBlockCache::default(),
            kept: AtomicUsize::new(0),
        };
        let worker = walk::run(fs, &visitor, &|_| {}).unwrap_or_default();
        found.problem_count += worker.problem_count;
        found.problems = worker.problems;
        dirs = worker.dirs;
        // Ascending already (workers merge in group order); sorted again for a lookup that
        // must not depend on it.
        dirs.sort_unstable_by_key(|(ino, _)| *ino);
        Some(PassedSet::new(worker.passed))
    } else {
        None
    };
    if passed.as_ref().is_some_and(|p| p.is_empty()) {
        return found;
    }
    let ctx = TreeCtx {
        fs,
        query,
        passed: passed.as_ref(),
        dirs: &dirs,
        filetype: false,
    };
    let start_type = ctx.mode_type(start_ino, 0);
    let ctx = TreeCtx { filetype, ..ctx };
    if ctx.passes(start_name(start), start_ino, start_type) {
        found.paths.push(start, start_ino);
    }
    if start_type != S_IFDIR {
        return found;
    }
    let mut seen: HashSet<u32> = HashSet::from([start_ino]);
    let mut level: Vec<(u32, Vec<u8>)> = vec![(start_ino, start.to_vec())];
    while !level.is_empty() {
        found.dirs_read += level.len() as u64;
        let parts: Vec<LevelPart> = level
            .par_iter()
            .map_init(Vec::new, |buf, (d, p)| ctx.read_level_dir(*d, p, buf))
            .collect();
        found
            .paths
            .append_all(parts.iter().map(|part| &part.matched));
        let mut next = Vec::new();
        for part in parts {
            for problem in part.problems {
                found.problem(problem);
            }
            next.extend(part.subdirs.into_iter().filter(|(d, _)| seen.insert(*d)));
        }
        level = next;
    }
    found.paths.sort();
    found
}

/// `fnmatch(pattern, name, 0)` over bytes (the C locale): `*`, `?`, bracket expressions with
/// `!`/`^`, ranges and `[:class:]`, `\` quoting the next byte; `*` and `?` match a leading `.`
/// and `/` as find's `-name` lets them. Time is at most len(pattern) x len(name).
pub fn fnmatch(pat: &[u8], name: &[u8]) -> bool {
    let (mut pat_pos, mut name_pos) = (0usize, 0usize);
    // Where to resume after the last `*`: (pattern position after it, name position).
    let mut star: Option<(usize, usize)> = None;
    loop {
        if pat_pos < pat.len() {
            let pat_byte = pat[pat_pos];
            if pat_byte == b'*' {
                star = Some((pat_pos + 1, name_pos));
                pat_pos += 1;
                continue;
            }
            if let Some(&name_byte) = name.get(name_pos) {
                let step = match pat_byte {
                    b'?' => Some(1),
                    b'[' => match bracket(&pat[pat_pos..], name_byte) {
                        Some((true, len)) => Some(len),
                        Some((false, _)) => None,
                        // No closing `]`: a literal `[`.
                        None => (name_byte == b'[').then_some(1),
                    },
                    b'\\' if pat_pos + 1 < pat.len() => {
                        (pat[pat_pos + 1] == name_byte).then_some(2)
                    }
                    _ => (pat_byte == name_byte).then_some(1),
                };
                if let Some(step_len) = step {
                    pat_pos += step_len;
                    name_pos += 1;
                    continue;
                }
            }
        } else if name_pos == name.len() {
            return true;
        }
        // Mismatch: let the last `*` take one more byte.
        match star {
            Some((sp, sn)) if sn < name.len() => {
                star = Some((sp, sn + 1));
                pat_pos = sp;
                name_pos = sn + 1;
            }
            _ => return false,
        }
    }
}

/// A bracket expression at the start of `pat` tested on `c`: (matched, its length), `None` when
/// it has no closing `]`.
fn bracket(pat: &[u8], byte: u8) -> Option<(bool, usize)> {
    let mut pos = 1;
    let negate = matches!(pat.get(pos), Some(b'!' | b'^'));
    if negate {
        pos += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let pat_byte = *pat.get(pos)?;
        if pat_byte == b']' && !first {
            return Some((matched != negate, pos + 1));
        }
        first = false;
        if pat_byte == b'[' && pat.get(pos + 1) == Some(&b':') {
            let rest = pat.get(pos + 2..)?;
            if let Some(end) = rest.windows(2).position(|w| w == b":]") {
                matched |= in_class(&rest[..end], byte);
                pos += 2 + end + 2;
                continue;
            }
        }
        let (lo, step) = if pat_byte == b'\\' {
            (*pat.get(pos + 1)?, 2)
        } else {
            (pat_byte, 1)
        };
        pos += step;
        if pat.get(pos) == Some(&b'-') && pat.get(pos + 1).is_some_and(|&x| x != b']') {
            let hb = *pat.get(pos + 1)?;
            let (hi, step) = if hb == b'\\' {
                (*pat.get(pos + 2)?, 3)
            } else {
                (hb, 2)
            };
            pos += step;
            matched |= lo <= byte && byte <= hi;
        } else {
            matched |= byte == lo;
        }
    }
}

/// `[:class:]` in the C locale.
fn in_class(class: &[u8], byte: u8) -> bool {
    match class {
        b"alpha" => byte.is_ascii_alphabetic(),
        b"digit" => byte.is_ascii_digit(),
        b"alnum" => byte.is_ascii_alphanumeric(),
        b"upper" => byte.is_ascii_uppercase(),
        b"lower" => byte.is_ascii_lowercase(),
        b"space" => matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c),
        b"blank" => matches!(byte, b' ' | b'\t'),
        b"punct" => byte.is_ascii_punctuation(),
        b"print" => (0x20..0x7f).contains(&byte),
        b"graph" => (0x21..0x7f).contains(&byte),
        b"cntrl" => byte < 0x20 || byte == 0x7f,
        b"xdigit" => byte.is_ascii_hexdigit(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_like_find_name() {
        let matches = |p: &str, n: &str| fnmatch(p.as_bytes(), n.as_bytes());
        assert!(matches("*.txt", "a.txt"));
        assert!(matches("*", ".hidden"));
        assert!(matches("?b*", "abc"));
        assert!(!matches("?b*", "bbc".get(1..).unwrap_or("")));
        assert!(matches("[a-c]x", "bx"));
        assert!(!matches("[!a-c]x", "bx"));
        assert!(matches("[]]", "]"));
        assert!(matches("[[:digit:]]*", "7up"));
        assert!(matches("\\*", "*"));
        assert!(!matches("\\*", "a"));
        assert!(matches("a[", "a["));
        assert!(matches("*a*b*c*", "xxaxxbxxcxx"));
        assert!(!matches("*a*b*c*d", "xxaxxbxxcxx"));
        assert!(!matches("abc", "abcd"));
        assert!(matches("", ""));
    }

    #[test]
    fn fnmatch_time_is_bounded() {
        let name = vec![b'a'; 255];
        let pat = b"*a*a*a*a*a*a*a*a*a*a*b".to_vec();
        assert!(!fnmatch(&pat, &name));
    }

    #[test]
    fn size_rounds_up_like_find() {
        let passes = |s: &str, size: u64| SizeTest::parse(s).map(|t| t.test(size)).unwrap_or(false);
        assert!(passes("-1M", 0));
        assert!(!passes("-1M", 1));
        assert!(passes("1M", 1));
        assert!(passes("1", 512));
        assert!(passes("2", 513));
        assert!(passes("+10c", 11));
        assert!(!passes("+10c", 10));
        assert!(passes("3k", 2049));
        assert!(SizeTest::parse("1x").is_err());
    }

    #[test]
    fn values_as_setfattr_takes_them() {
        assert_eq!(parse_value("0x6869").ok(), Some(b"hi".to_vec()));
        assert_eq!(parse_value("0saGk=").ok(), Some(b"hi".to_vec()));
        assert_eq!(parse_value("\"hi\"").ok(), Some(b"hi".to_vec()));
        assert_eq!(parse_value("hi").ok(), Some(b"hi".to_vec()));
        assert!(parse_value("0x6").is_err());
        let parsed = XattrTest::parse("user.a=~^h.$");
        assert!(
            parsed.is_ok_and(|parsed| parsed.value_passes(b"hi") && !parsed.value_passes(b"hix"))
        );
    }

    #[test]
    fn flags_by_name_or_letters() {
        assert_eq!(parse_flags("IMMUTABLE,extents").ok(), Some(0x10 | 0x80000));
        assert_eq!(parse_flags("ie").ok(), Some(0x10 | 0x80000));
        assert_eq!(parse_flags("noatime_fl").ok(), Some(0x80));
        assert!(parse_flags("q").is_err());
    }

    #[test]
    fn dates() {
        assert_eq!(parse_date("@0"), Some((0, 0)));
        assert_eq!(parse_date("@1.5"), Some((1, 500_000_000)));
        assert_eq!(parse_date("2000-03-01"), Some((951_868_800, 0)));
        assert_eq!(parse_date("2000-03-01T00:00:10Z"), Some((951_868_810, 0)));
        assert_eq!(parse_date("/etc/passwd"), None);
    }

    #[test]
    fn path_order_is_the_slash_first_byte_order() {
        let reference = |a: &[u8], b: &[u8]| {
            let key = |c: &u8| if *c == b'/' { 0 } else { *c };
            a.iter().map(key).cmp(b.iter().map(key))
        };
        let paths: [&[u8]; 9] = [
            b"/", b"/a", b"/a/b", b"/a.c", b"/a/", b"/ab", b"", b"/\xff", b"/a\x00",
        ];
        for left in paths {
            for right in paths {
                assert_eq!(
                    path_order(left, right),
                    reference(left, right),
                    "{left:?} {right:?}"
                );
            }
        }
        let mut sorted = Paths::default();
        sorted.push_joined(b"/", b"b", 3);
        let mut later = Paths::default();
        later.push_joined(b"/a", b"x", 5);
        later.push(b"/a", 4);
        let empty = Paths::default();
        sorted.append_all([&later, &empty].into_iter());
        sorted.sort();
        let got: Vec<(&[u8], u32)> = sorted.iter().collect();
        assert_eq!(got, [(&b"/a"[..], 4), (b"/a/x", 5), (b"/b", 3)]);
    }

    /// The flat set answers as the compressed bitmap it was built from, and a set whose
    /// highest inode would need more than the flat bound stays compressed.
    #[test]
    fn passed_set_agrees_with_its_bitmap() {
        let inodes = [1u32, 2, 63, 64, 65, 4096, 70_000, 70_001, 500_000];
        let bitmap: RoaringBitmap = inodes.iter().copied().collect();
        let set = PassedSet::new(bitmap.clone());
        assert!(matches!(set, PassedSet::Flat(_)));
        for ino in (0..501_000).chain([u32::MAX - 1, u32::MAX]) {
            assert_eq!(set.contains(ino), bitmap.contains(ino), "inode {ino}");
        }
        assert!(!set.is_empty());
        assert!(PassedSet::new(RoaringBitmap::new()).is_empty());
        let far: RoaringBitmap = [3u32, u32::MAX].into_iter().collect();
        let set = PassedSet::new(far);
        assert!(matches!(set, PassedSet::Compressed(_)));
        assert!(set.contains(u32::MAX) && set.contains(3) && !set.contains(4));
    }

    #[test]
    fn kept_records_stay_within_their_budget() {
        let taken = AtomicUsize::new(0);
        assert!(take_budget(&taken, 256, 600));
        assert!(take_budget(&taken, 256, 600));
        assert!(!take_budget(&taken, 256, 600));
        assert!(take_budget(&taken, 88, 600));
        assert!(!take_budget(&taken, usize::MAX, usize::MAX));
        assert_eq!(taken.load(Ordering::Relaxed), 600);
    }

    #[test]
    fn start_names_and_joins() {
        assert_eq!(start_name(b"/"), b"/");
        assert_eq!(start_name(b"/a/b/"), b"b");
        assert_eq!(join(b"/", b"x"), b"/x");
        assert_eq!(join(b"/a", b"x"), b"/a/x");
        assert_eq!(
            path_order(b"/a/b", b"/a.c"),
            std::cmp::Ordering::Less,
            "a directory's contents before its next sibling"
        );
    }
}
