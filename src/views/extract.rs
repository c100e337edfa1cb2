//! Copy a file or a whole subtree out of an image (debugfs' `rdump`, `debugfs/dump.c`), keeping
//! types, modes, owners (when privileged), atime/mtime with nanoseconds, symlinks, hard links,
//! sparse holes and extended attributes.
//!
//! Safety of the destination: everything is created relative to an opened directory descriptor,
//! one path component at a time, with `O_NOFOLLOW`/`O_EXCL` semantics ([`crate::reader::os::at`]); a symlink
//! already in the destination (or planted meanwhile) is never followed, and names read from the
//! image that are not a single component (`.`, `..`, containing `/`) are refused. Existing entries
//! are replaced only with `force`.
//!
//! Bounds: file contents are streamed in chunks of at most [`CHUNK_BYTES`], holes are skipped
//! (never written), extents that overlap earlier ones are refused; a directory inode reached twice
//! is not descended twice, the depth is capped at [`MAX_DEPTH`], and the lists of skipped entries
//! and dropped attributes keep at most [`MAX_LISTED`] items (the rest are counted). Directories are
//! extracted in parallel (rayon); their own modes and times are applied last, deepest first, so
//! that writing their children does not disturb them. ctime and crtime cannot be set through any
//! system call and are not restored.

// Buffers from `Filesystem` are kept in locals and borrowed (`&buf`), ready for owned buffers.
#![allow(clippy::needless_borrow)]

use crate::error::{Error, Problem, ProblemKind, Result};
use crate::reader::dir::{self, ENCRYPT_FL};
use crate::reader::extent::MapKind;
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, DataMap, Inode, InodeXattrs, XattrLocation};
use crate::reader::os::at::{self, Timespec};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::CString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, MutexGuard};

/// Largest read of file data at once.
pub const CHUNK_BYTES: u64 = 1 << 20;
/// Deepest directory nesting extracted.
pub const MAX_DEPTH: u32 = 1024;
/// Most skipped entries / dropped attributes listed by name (the rest are counted).
pub const MAX_LISTED: usize = 1000;
/// Largest xattr value the Linux VFS accepts (`XATTR_SIZE_MAX`).
pub const XATTR_SIZE_MAX: u32 = 65536;
/// Entries of one directory handed to one parallel task.
const ENTRIES_PER_TASK: usize = 128;
/// Most distinct reasons counted in `dropped_by_reason` / `skipped_by_reason`.
const MAX_REASONS: usize = 64;

/// What to do.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExtractOptions {
    /// Replace existing destination entries (never a non-empty directory by a file).
    pub force: bool,
    /// Set owners and make device nodes (run as root); FIFOs and sockets are made either way.
    pub privileged: bool,
}

/// One entry not extracted, or an attribute not set.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Note {
    /// Path relative to the destination.
    pub path: String,
    /// Attribute name, for dropped attributes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Why.
    pub reason: String,
}

/// What was extracted.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// Regular files written.
    pub files: u64,
    /// Directories made.
    pub dirs: u64,
    /// Symbolic links made.
    pub symlinks: u64,
    /// Names made as hard links to a file extracted once.
    pub hard_links: u64,
    /// FIFOs made.
    pub fifos: u64,
    /// Character and block device nodes made.
    pub devices: u64,
    /// Socket nodes made.
    pub sockets: u64,
    /// File content bytes written (holes not counted).
    pub bytes: u64,
    /// Entries not extracted.
    pub skipped_count: u64,
    /// The first entries not extracted, with why.
    pub skipped: Vec<Note>,
    /// Entries not extracted, counted by reason.
    pub skipped_by_reason: BTreeMap<String, u64>,
    /// Attributes not set on the copy.
    pub dropped_xattrs_count: u64,
    /// The first attributes not set, with why.
    pub dropped_xattrs: Vec<Note>,
    /// Attributes not set, counted by reason.
    pub dropped_by_reason: BTreeMap<String, u64>,
    /// Damage met while reading entries that were still extracted (e.g. part of a map unreadable).
    pub problems: Vec<Note>,
    /// Device nodes not made because making them needs privilege (listed in `notes`).
    pub devices_not_made: u64,
    /// Entries whose owner could not be kept without privilege (listed in `notes`).
    pub owners_not_kept: u64,
    /// Times that cannot be restored by any system call.
    pub not_restored: &'static str,
    /// One-line warnings about whole classes of entries or attributes (device nodes not made
    /// without privilege, owners not kept, sockets a tar archive cannot hold).
    pub notes: Vec<String>,
}

fn count_reason(counts: &mut BTreeMap<String, u64>, reason: &str) {
    if let Some(count) = counts.get_mut(reason) {
        *count += 1;
    } else if counts.len() < MAX_REASONS {
        counts.insert(reason.to_string(), 1);
    } else {
        *counts.entry("other".into()).or_insert(0) += 1;
    }
}

impl Summary {
    pub(crate) fn skip(&mut self, path: String, reason: &str) {
        self.skipped_count += 1;
        count_reason(&mut self.skipped_by_reason, reason_kind(reason));
        if self.skipped.len() < MAX_LISTED {
            self.skipped.push(Note {
                path,
                name: None,
                reason: reason.to_string(),
            });
        }
    }
    pub(crate) fn drop_xattr(&mut self, path: String, name: &str, reason: &str) {
        self.dropped_xattrs_count += 1;
        count_reason(&mut self.dropped_by_reason, reason_kind(reason));
        if self.dropped_xattrs.len() < MAX_LISTED {
            self.dropped_xattrs.push(Note {
                path,
                name: Some(name.to_string()),
                reason: reason.to_string(),
            });
        }
    }
    pub(crate) fn problem(&mut self, path: String, reason: String) {
        if self.problems.len() < MAX_LISTED {
            self.problems.push(Note {
                path,
                name: None,
                reason,
            });
        }
    }
}

/// The part of a reason before a colon (the per-entry detail after it is not counted apart).
fn reason_kind(reason: &str) -> &str {
    reason.split(':').next().unwrap_or(reason)
}

/// A directory created in the destination: its parent (index in the arena) and name.
struct DirNode {
    parent: usize,
    name: Box<[u8]>,
    ino: u32,
    /// Apply the image directory's owner, mode and times (not for a pre-existing DEST).
    apply_meta: bool,
}

/// Where a non-directory lives in the destination: directory arena index and name.
#[derive(Clone)]
struct Place {
    dir: usize,
    name: Box<[u8]>,
}

#[derive(Default)]
struct State {
    summary: Summary,
    dirs: Vec<DirNode>,
    visited: HashSet<u32>,
    /// Multiply linked inodes extracted (or being extracted): where the first copy is.
    linked: HashMap<u32, Place>,
    /// Further names of those inodes, linked once every file is written.
    pending_links: Vec<(u32, Place)>,
}

struct Ctx<'a> {
    fs: &'a Filesystem,
    opts: ExtractOptions,
    /// The top directory (index 0 of the arena).
    top: Arc<OwnedFd>,
    state: Mutex<State>,
    progress: &'a (dyn Fn(u64, u64) + Sync),
    /// What a new entry gets from the kernel without being told (owner, mode mask).
    creation: Creation,
}

/// What `openat(O_CREAT, mode)` gives a new file in a *plain* destination directory (one with no
/// set-group-ID bit and no default ACL, so that only the umask shapes the mode and the owner is
/// this process): knowing it lets [`write_regular`] skip `fchown`/`fchmod` calls that would change
/// nothing (two of the seven system calls a small file costs).
#[derive(Clone, Copy, Debug)]
struct Creation {
    umask: u32,
    euid: u32,
    egid: u32,
}

/// The process umask, read from `/proc/self/status` (changing it to read it would race with other
/// threads); `None` when unknown, and then every mode is set explicitly.
fn current_umask() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let value = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
    u32::from_str_radix(value.trim(), 8).ok()
}

/// Is the destination directory `fd` plain (no set-group-ID bit, no default ACL)? Unsure is no.
fn is_plain_dir(fd: BorrowedFd<'_>, path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(file) = fd.try_clone_to_owned().map(std::fs::File::from) else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if meta.mode() & libc::S_ISGID != 0 {
        return false;
    }
    match at::get_xattr(path, b"system.posix_acl_default") {
        Ok(_) => false,
        Err(e) => matches!(
            e.raw_os_error(),
            Some(libc::ENODATA) | Some(libc::EOPNOTSUPP)
        ),
    }
}

/// Which of owner and mode must still be set on a new regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fixups {
    chown: bool,
    chmod: bool,
}

impl Fixups {
    const ALL: Fixups = Fixups {
        chown: true,
        chmod: true,
    };
}

/// The mode to create a regular file with, and what is left to set afterwards. In a plain
/// directory a file created with its final permission bits keeps them when the umask takes none
/// away; set-ID bits always get an explicit `fchmod` (after `fchown`, which clears them), and
/// without privilege a file with attributes to set is created writable by its owner and changed
/// afterwards (setting an xattr needs write permission on the inode).
fn creation_plan(
    creation: Option<Creation>,
    privileged: bool,
    inode: &Inode,
    has_xattrs: bool,
) -> (u32, Fixups) {
    let mode = u32::from(inode.mode) & 0o7777;
    let Some(creation) = creation else {
        return (0o600, Fixups::ALL);
    };
    let same_owner = inode.uid == creation.euid && inode.gid == creation.egid;
    let chown = privileged && !same_owner;
    let keeps_mode = mode & 0o7000 == 0
        && mode & creation.umask == 0
        && (privileged || !has_xattrs || mode & 0o200 != 0);
    if keeps_mode {
        (
            mode,
            Fixups {
                chown,
                chmod: false,
            },
        )
    } else {
        (0o600, Fixups { chown, chmod: true })
    }
}

pub(crate) fn os_err(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(pos) => text[..pos].to_string(),
        None => text,
    }
}

impl Ctx<'_> {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Destination-relative path of `name` in directory `dir` (for messages).
    fn path_of(&self, st: &State, dir: usize, name: &[u8]) -> String {
        let mut parts: Vec<&[u8]> = vec![name];
        let mut idx = dir;
        let mut guard = 0;
        while idx != 0 && guard <= MAX_DEPTH {
            let Some(node) = st.dirs.get(idx) else { break };
            parts.push(&node.name);
            idx = node.parent;
            guard += 1;
        }
        parts.reverse();
        let joined: Vec<u8> = parts
            .iter()
            .filter(|p| !p.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(&b'/');
        String::from_utf8_lossy(&joined).into_owned()
    }

    fn skip(&self, dir: usize, name: &[u8], reason: &str) {
        let mut st = self.lock();
        let path = self.path_of(&st, dir, name);
        st.summary.skip(path, reason);
    }

    /// Open the destination directory of arena entry `idx`, component by component from the
    /// top, never following a symlink.
    fn open_dir(&self, idx: usize) -> std::io::Result<OwnedFd> {
        let chain: Vec<Box<[u8]>> = {
            let st = self.lock();
            let mut names = Vec::new();
            let mut cur = idx;
            while cur != 0 && names.len() <= MAX_DEPTH as usize {
                let Some(node) = st.dirs.get(cur) else { break };
                names.push(node.name.clone());
                cur = node.parent;
            }
            names.reverse();
            names
        };
        let mut fd = self.top.as_fd().try_clone_to_owned()?;
        for name in chain {
            let cname = at::component(&name)?;
            fd = at::open_dir_at(fd.as_fd(), &cname)?;
        }
        Ok(fd)
    }
}

pub(crate) fn timespec(secs: u32, extra: u32) -> Timespec {
    Timespec {
        secs: inode::time_secs(secs, extra),
        nsec: inode::time_nsec(extra),
    }
}

fn system_time(time: Timespec) -> std::time::SystemTime {
    let nanos = std::time::Duration::from_nanos(u64::from(time.nsec.min(999_999_999)));
    if time.secs >= 0 {
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(time.secs as u64) + nanos
    } else {
        std::time::UNIX_EPOCH - std::time::Duration::from_secs(time.secs.unsigned_abs()) + nanos
    }
}

fn file_times(inode: &Inode) -> std::fs::FileTimes {
    std::fs::FileTimes::new()
        .set_accessed(system_time(timespec(inode.atime, inode.atime_extra)))
        .set_modified(system_time(timespec(inode.mtime, inode.mtime_extra)))
}

// ---------------------------------------------------------------------------------------------
// Reading contents
// ---------------------------------------------------------------------------------------------

/// Where a file's first i_size bytes are: inline bytes, or byte runs `(file offset, image
/// offset, length)` of mapped, initialised data (holes and uninitialised extents left out,
/// overlapping and out-of-filesystem runs refused with a problem noted).
pub(crate) enum Pieces {
    Inline(Vec<u8>),
    Runs(Vec<(u64, u64, u64)>),
}

pub(crate) fn data_pieces(
    fs: &Filesystem,
    ino: u32,
    inode: &Inode,
    inline: Option<&[u8]>,
    problems: &mut Vec<Problem>,
) -> Result<Pieces> {
    let size = inode.size;
    let bs = fs.block_size();
    let kind = if inode.has_flag(inode::EXTENTS_FL) {
        ProblemKind::ExtentTree
    } else {
        ProblemKind::BlockMap
    };
    let runs: Vec<(u64, u64, u64)> = match inode::data_map(fs, ino, inode, inline) {
        DataMap::Inline { .. } => {
            let mut data = inode.block.to_vec();
            data.extend_from_slice(inline.unwrap_or(&[]));
            let len_kept = usize::try_from(size).unwrap_or(usize::MAX).min(data.len());
            if size > len_kept as u64 {
                problems.push(Problem::new(
                    ProblemKind::InlineData,
                    format!("inline data holds {len_kept} of {size} bytes"),
                ));
            }
            data.truncate(len_kept);
            return Ok(Pieces::Inline(data));
        }
        DataMap::Extents(w) => {
            problems.extend(w.problems.iter().cloned());
            w.leaves()
                .filter(|e| !e.uninit)
                .map(|e| (u64::from(e.logical), e.physical, u64::from(e.len)))
                .collect()
        }
        DataMap::Blocks(w) => {
            problems.extend(w.problems.iter().cloned());
            w.runs
                .iter()
                .filter_map(|run| match run.kind {
                    MapKind::Data(logical) => Some((logical, run.physical, run.len)),
                    _ => None,
                })
                .collect()
        }
        DataMap::Unreadable(e) => return Err(Error::Corrupt(e)),
        _ => Vec::new(),
    };
    let nblocks = size.div_ceil(bs);
    let mut next_free = 0u64; // first logical block not yet taken: runs must not overlap
    let mut out = Vec::with_capacity(runs.len());
    for (logical, physical, len) in runs {
        if logical < next_free {
            problems.push(Problem::new(
                kind,
                format!("blocks {logical}.. overlap earlier ones; not copied again"),
            ));
            continue;
        }
        let len = len.min(nblocks.saturating_sub(logical));
        if len == 0 {
            continue;
        }
        if physical < fs.geo.first_data_block || physical.saturating_add(len) > fs.geo.blocks_count
        {
            problems.push(Problem::new(
                kind,
                format!(
                    "blocks {physical}..{} lie outside the filesystem; left as a hole",
                    physical.saturating_add(len)
                ),
            ));
            continue;
        }
        next_free = logical + len;
        let off = logical * bs;
        out.push((off, physical * bs, (len * bs).min(size - off)));
    }
    Ok(Pieces::Runs(out))
}

/// Call `sink(file_offset, bytes)` for every mapped, initialised piece of the file's first `size`
/// bytes, in chunks of at most [`CHUNK_BYTES`]. Holes and uninitialised extents are not visited.
/// Returns problems met (a damaged map still yields what could be read).
fn for_each_data<F>(
    fs: &Filesystem,
    ino: u32,
    inode: &Inode,
    inline: Option<&[u8]>,
    mut sink: F,
) -> Result<Vec<Problem>>
where
    F: FnMut(u64, &[u8]) -> Result<()>,
{
    let mut problems = Vec::new();
    match data_pieces(fs, ino, inode, inline, &mut problems)? {
        Pieces::Inline(d) => {
            if !d.is_empty() {
                sink(0, &d)?;
            }
        }
        Pieces::Runs(runs) => {
            for (off, img, len) in runs {
                read_chunks(fs, img, len, |k, b| sink(off + k, b))?;
            }
        }
    }
    Ok(problems)
}

/// Read `len` bytes of the image at `img` in chunks of at most [`CHUNK_BYTES`], handing each to
/// `sink(offset within the run, bytes)`.
pub(crate) fn read_chunks(
    fs: &Filesystem,
    img: u64,
    len: u64,
    mut sink: impl FnMut(u64, &[u8]) -> Result<()>,
) -> Result<()> {
    let mut done = 0u64;
    while done < len {
        let chunk = CHUNK_BYTES.min(len - done);
        with_read_buffer(chunk as usize, |buf| {
            fs.source.read_data_into(img + done, buf, "file data")?;
            sink(done, buf)
        })?;
        done += chunk;
    }
    Ok(())
}

thread_local! {
    /// One read buffer per worker thread, reused from file to file.
    static READ_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Run `body` on a buffer of `len` bytes (at most [`CHUNK_BYTES`]) borrowed from this thread's
/// reusable one, so that copying many small files allocates nothing per file.
fn with_read_buffer<T>(len: usize, body: impl FnOnce(&mut [u8]) -> Result<T>) -> Result<T> {
    let mut buf = READ_BUFFER.with(|b| b.take());
    if buf.len() < len {
        buf.resize(len, 0);
    }
    let result = body(&mut buf[..len]);
    READ_BUFFER.with(|b| b.set(buf));
    result
}

/// An xattr's value wherever it lives (in the inode, a block, or an EA inode of at most
/// [`XATTR_SIZE_MAX`] bytes, as the kernel allows), or why it cannot be had: what `extract`
/// and `extract --tar` both restore.
pub(crate) fn xattr_value(
    fs: &Filesystem,
    item: &inode::XattrItem<'_>,
) -> std::result::Result<Vec<u8>, String> {
    match (item.location, item.value.as_deref()) {
        (XattrLocation::EaInode(ea_ino), _) => {
            if item.value_size > XATTR_SIZE_MAX {
                return Err("value larger than the kernel's XATTR_SIZE_MAX (64 KiB)".into());
            }
            read_ea_value(fs, ea_ino, item.value_size)
                .map_err(|e| format!("EA inode unreadable: {e}"))
        }
        (_, Some(v)) => Ok(v.to_vec()),
        (_, None) => Err("value unreadable".into()),
    }
}

/// The value of an xattr stored in EA inode `ea_ino` (at most [`XATTR_SIZE_MAX`] bytes).
pub(crate) fn read_ea_value(fs: &Filesystem, ea_ino: u32, size: u32) -> Result<Vec<u8>> {
    let raw = fs.inode_raw(ea_ino)?;
    let ea = Inode::parse(&raw);
    if !ea.has_flag(inode::EA_INODE_FL) || ea.size != u64::from(size) {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!("inode {ea_ino} is not its EA inode"),
        ));
    }
    let mut value = vec![0u8; size as usize];
    for_each_data(fs, ea_ino, &ea, None, |off, bytes| {
        let start = off as usize;
        if let Some(dest) = value.get_mut(start..start + bytes.len()) {
            dest.copy_from_slice(bytes);
        }
        Ok(())
    })?;
    Ok(value)
}

/// ext4's compact ACL turned into the VFS form `setxattr` takes.
pub(crate) fn acl_to_vfs(disk: &[u8]) -> Result<Vec<u8>> {
    let entries = crate::reader::xattr::decode_acl_disk(disk)?;
    let mut out = crate::reader::xattr::ACL_VFS_VERSION.to_le_bytes().to_vec();
    for entry in entries {
        out.extend_from_slice(&entry.tag.to_le_bytes());
        out.extend_from_slice(&entry.perm.to_le_bytes());
        out.extend_from_slice(&entry.id.unwrap_or(u32::MAX).to_le_bytes());
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Writing entries
// ---------------------------------------------------------------------------------------------

/// How an xattr is set on the copy.
enum XattrTarget<'a> {
    Fd(BorrowedFd<'a>),
    At(BorrowedFd<'a>, &'a CString),
}

fn why_not_set(err: &std::io::Error) -> String {
    match err.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => {
            format!("not permitted: needs privilege ({})", os_err(err))
        }
        Some(libc::EOPNOTSUPP) => "not supported by the destination filesystem".into(),
        Some(libc::ENOSPC) | Some(libc::E2BIG) => {
            format!("no room on the destination: {}", os_err(err))
        }
        _ => format!("refused: {}", os_err(err)),
    }
}

fn set_xattrs(
    ctx: &Ctx<'_>,
    dir: usize,
    name: &[u8],
    xa: &InodeXattrs<'_>,
    target: XattrTarget<'_>,
) {
    for item in &xa.items {
        let dropped = |reason: &str| {
            let mut st = ctx.lock();
            let path = ctx.path_of(&st, dir, name);
            st.summary.drop_xattr(path, &item.name, reason);
        };
        if item.name == "system.data" {
            dropped("inline data: the file's own contents, restored as such");
            continue;
        }
        if item.name.starts_with("encryption.") {
            dropped("encryption context: not a VFS attribute");
            continue;
        }
        if item.name.starts_with("index") {
            dropped("unknown name index: no VFS name");
            continue;
        }
        let value = match xattr_value(ctx.fs, item) {
            Ok(v) => v,
            Err(reason) => {
                dropped(&reason);
                continue;
            }
        };
        let value =
            if item.name == "system.posix_acl_access" || item.name == "system.posix_acl_default" {
                match acl_to_vfs(&value) {
                    Ok(v) => v,
                    Err(err) => {
                        dropped(&format!("malformed ACL: {err}"));
                        continue;
                    }
                }
            } else {
                value
            };
        let Ok(cname) = CString::new(item.name.as_bytes()) else {
            dropped("name has NUL");
            continue;
        };
        let result = match &target {
            XattrTarget::Fd(fd) => at::set_xattr_fd(*fd, &cname, &value),
            XattrTarget::At(d, n) => at::set_xattr_at(*d, n, &cname, &value),
        };
        if let Err(err) = result {
            dropped(&why_not_set(&err));
        }
    }
}

/// Make room for `cname` in `dirfd`: absent is fine; an existing entry is removed with `force`
/// unless it is a directory (`want_dir`: an existing directory is reused).
/// Returns true when an existing directory is to be reused.
/// A refusal of the destination (or of the entry to be copied), for the skip list.
fn refused(msg: impl Into<String>) -> Problem {
    Problem::new(ProblemKind::Destination, msg)
}

fn make_room(
    ctx: &Ctx<'_>,
    dirfd: BorrowedFd<'_>,
    cname: &CString,
    want_dir: bool,
) -> std::result::Result<bool, Problem> {
    match at::lstat_type_at(dirfd, cname) {
        Ok(None) => Ok(false),
        Ok(Some(t)) if !ctx.opts.force => Err(refused(format!(
            "exists in the destination: not replaced without --force ({})",
            type_word(t)
        ))),
        Ok(Some(t)) if t == libc::S_IFDIR => {
            if want_dir {
                Ok(true)
            } else {
                Err(refused(
                    "exists in the destination as a directory: not replaced",
                ))
            }
        }
        Ok(Some(_)) => at::unlink_at(dirfd, cname, false)
            .map(|_| false)
            .map_err(|e| refused(format!("cannot replace the existing entry: {}", os_err(&e)))),
        Err(e) => Err(refused(format!(
            "cannot look at the destination: {}",
            os_err(&e)
        ))),
    }
}

/// Run `op` (which creates `cname` exclusively); when the name exists, make room as
/// [`make_room`] allows and try once more.
fn create_new<T>(
    ctx: &Ctx<'_>,
    dirfd: BorrowedFd<'_>,
    cname: &CString,
    what: &str,
    op: impl Fn() -> std::io::Result<T>,
) -> std::result::Result<T, Problem> {
    match op() {
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
            make_room(ctx, dirfd, cname, false)?;
            op().map_err(|e| refused(format!("{what}: {}", os_err(&e))))
        }
        r => r.map_err(|e| refused(format!("{what}: {}", os_err(&e)))),
    }
}

fn type_word(file_type: u32) -> &'static str {
    match file_type {
        libc::S_IFDIR => "a directory",
        libc::S_IFLNK => "a symlink",
        libc::S_IFREG => "a file",
        _ => "a special file",
    }
}

/// Where an entry is made: directory (arena index and descriptor) and name.
struct Target<'a> {
    dir: usize,
    fd: BorrowedFd<'a>,
    name: &'a [u8],
    cname: &'a CString,
}

fn write_regular(
    ctx: &Ctx<'_>,
    entry: &Target<'_>,
    plain: bool,
    ino: u32,
    inode: &Inode,
    xa: &InodeXattrs<'_>,
) -> std::result::Result<u64, Problem> {
    let (dir, dirfd, name, cname) = (entry.dir, entry.fd, entry.name, entry.cname);
    let has_xattrs = xa.items.iter().any(|x| x.name != "system.data");
    let (mode, fixups) = creation_plan(
        plain.then_some(ctx.creation),
        ctx.opts.privileged,
        inode,
        has_xattrs,
    );
    let file = create_new(ctx, dirfd, cname, "cannot create", || {
        at::create_file_at(dirfd, cname, mode)
    })?;
    let write_err = |err: std::io::Error| Error::Io {
        path: ctx.path_of(&ctx.lock(), dir, name).into(),
        op: "cannot write",
        source: err,
    };
    let (mut bytes, mut end) = (0u64, 0u64);
    let mut problems = Vec::new();
    let copied =
        data_pieces(ctx.fs, ino, inode, xa.inline_data(), &mut problems).and_then(|pieces| {
            match pieces {
                Pieces::Inline(d) => {
                    file.write_all_at(&d, 0).map_err(write_err)?;
                    bytes = d.len() as u64;
                    end = bytes;
                }
                Pieces::Runs(runs) => {
                    // The copy's file position: a run starting there is copied inside the kernel.
                    let mut pos = 0u64;
                    for (off, img, len) in runs {
                        let sent = (off == pos)
                            .then(|| ctx.fs.source.send_to(img, len, &file, "file data"))
                            .flatten();
                        match sent {
                            Some(r) => {
                                r?;
                                pos += len;
                            }
                            None => read_chunks(ctx.fs, img, len, |within, chunk| {
                                file.write_all_at(chunk, off + within).map_err(write_err)
                            })?,
                        }
                        bytes += len;
                        end = end.max(off + len);
                        (ctx.progress)(0, len);
                    }
                }
            }
            Ok(())
        });
    copied.map_err(|e| refused(format!("contents: {e}")))?;
    if end < inode.size {
        // A hole at the end: only the size says it is there.
        file.set_len(inode.size)
            .map_err(|e| refused(format!("cannot set the size: {}", os_err(&e))))?;
    }
    for problem in problems {
        let mut st = ctx.lock();
        let path = ctx.path_of(&st, dir, name);
        st.summary.problem(path, format!("inode {ino}: {problem}"));
    }
    finish_fd(ctx, dir, name, &file, inode, xa, fixups)
        .map_err(|e| refused(format!("cannot set owner, mode or times: {}", os_err(&e))))?;
    Ok(bytes)
}

/// Owner (when privileged), mode, xattrs and times of an open file or directory. As root the
/// owner comes first (chown clears set-id bits and file capabilities) and xattrs after the mode
/// (as `cp -a`: an ACL then has the last word on the group bits); without privilege xattrs come
/// first, while the mode still lets the owner write them.
fn finish_fd(
    ctx: &Ctx<'_>,
    dir: usize,
    name: &[u8],
    file: &std::fs::File,
    inode: &Inode,
    xa: &InodeXattrs<'_>,
    fixups: Fixups,
) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::Permissions::from_mode(u32::from(inode.mode) & 0o7777);
    if ctx.opts.privileged {
        if fixups.chown {
            std::os::unix::fs::fchown(file, Some(inode.uid), Some(inode.gid))?;
        }
        if fixups.chmod {
            file.set_permissions(mode)?;
        }
        set_xattrs(ctx, dir, name, xa, XattrTarget::Fd(file.as_fd()));
    } else {
        set_xattrs(ctx, dir, name, xa, XattrTarget::Fd(file.as_fd()));
        if fixups.chmod {
            file.set_permissions(mode)?;
        }
    }
    file.set_times(file_times(inode))
}

/// The same for an entry that cannot be opened (symlink, node; `chmod` only for nodes).
fn finish_at(
    ctx: &Ctx<'_>,
    entry: &Target<'_>,
    inode: &Inode,
    xa: &InodeXattrs<'_>,
    chmod: bool,
) -> std::io::Result<()> {
    let (dirfd, cname) = (entry.fd, entry.cname);
    let mode = u32::from(inode.mode) & 0o7777;
    if ctx.opts.privileged {
        at::chown_at(dirfd, cname, inode.uid, inode.gid)?;
    }
    if chmod {
        at::chmod_at(dirfd, cname, mode)?;
    }
    set_xattrs(
        ctx,
        entry.dir,
        entry.name,
        xa,
        XattrTarget::At(dirfd, cname),
    );
    at::set_times_at(
        dirfd,
        cname,
        timespec(inode.atime, inode.atime_extra),
        timespec(inode.mtime, inode.mtime_extra),
    )
}

pub(crate) fn symlink_target(
    fs: &Filesystem,
    ino: u32,
    inode: &Inode,
    xa: &InodeXattrs<'_>,
) -> std::result::Result<Vec<u8>, Problem> {
    match inode::data_map(fs, ino, inode, xa.inline_data()) {
        DataMap::FastSymlink(target) => Ok(target),
        DataMap::InlineSymlink(mut target) => {
            target.truncate(usize::try_from(inode.size).unwrap_or(usize::MAX));
            Ok(target)
        }
        _ => {
            if inode.size > fs.block_size() || inode.size >= 4096 {
                return Err(Problem::new(
                    ProblemKind::Symlink,
                    format!("symlink target of {} bytes is too long", inode.size),
                ));
            }
            let mut target = vec![0u8; inode.size as usize];
            for_each_data(fs, ino, inode, None, |off, bytes| {
                let start = off as usize;
                if let Some(dest) = target.get_mut(start..start + bytes.len()) {
                    dest.copy_from_slice(bytes);
                }
                Ok(())
            })
            .map_err(|e| Problem::new(ProblemKind::Symlink, format!("symlink target: {e}")))?;
            Ok(target)
        }
    }
}

fn write_symlink(
    ctx: &Ctx<'_>,
    entry: &Target<'_>,
    ino: u32,
    inode: &Inode,
    xa: &InodeXattrs<'_>,
) -> std::result::Result<(), Problem> {
    let (dirfd, cname) = (entry.fd, entry.cname);
    let target = symlink_target(ctx.fs, ino, inode, xa)?;
    if target.is_empty() || target.contains(&0) {
        return Err(Problem::new(
            ProblemKind::Symlink,
            "symlink target is empty or holds a NUL byte",
        ));
    }
    create_new(ctx, dirfd, cname, "cannot create symlink", || {
        at::symlink_at(&target, dirfd, cname)
    })?;
    finish_at(ctx, entry, inode, xa, false)
        .map_err(|e| refused(format!("cannot set owner or times: {}", os_err(&e))))
}

fn write_node(
    ctx: &Ctx<'_>,
    entry: &Target<'_>,
    ino: u32,
    inode: &Inode,
    xa: &InodeXattrs<'_>,
) -> std::result::Result<(), Problem> {
    let (major, minor) = match inode::data_map(ctx.fs, ino, inode, None) {
        DataMap::Device { major, minor, .. } => (major, minor),
        _ => (0, 0),
    };
    let (dirfd, cname) = (entry.fd, entry.cname);
    let mode = u32::from(inode.mode);
    create_new(ctx, dirfd, cname, "cannot create", || {
        at::mknod_at(dirfd, cname, mode, major, minor)
    })?;
    finish_at(ctx, entry, inode, xa, true)
        .map_err(|e| refused(format!("cannot set owner, mode or times: {}", os_err(&e))))
}

// ---------------------------------------------------------------------------------------------
// The walk
// ---------------------------------------------------------------------------------------------

/// Entries (name, inode) of a directory, "." and ".." left out; bounded by the directory's size.
pub fn list_dir(
    fs: &Filesystem,
    ino: u32,
    raw: &[u8],
    inode: &Inode,
) -> Result<Vec<(Box<[u8]>, u32)>> {
    let mut out: Vec<(Box<[u8]>, u32)> = Vec::new();
    each_dir_entry(fs, ino, raw, inode, &mut |name, child| {
        out.push((name.into(), child))
    })?;
    Ok(out)
}

/// Hand each entry (name, inode) of a directory to `visit`, in [`list_dir`]'s order and with
/// its choices ("." and "..", empty names and inode 0 left out), nothing allocated per entry. On
/// an error (a block that cannot be read) some entries may already have been visited: a caller
/// that must see all or nothing (as [`list_dir`]'s) keeps what it gathered only on `Ok`.
pub fn each_dir_entry(
    fs: &Filesystem,
    ino: u32,
    raw: &[u8],
    inode: &Inode,
    visit: &mut dyn FnMut(&[u8], u32),
) -> Result<()> {
    let mut keep = |name: &[u8], child: u32| {
        if child != 0 && name != b"." && name != b".." && !name.is_empty() {
            visit(name, child);
        }
    };
    if inode.has_flag(inode::INLINE_DATA_FL) {
        let xa = inode::inode_xattrs(fs, raw, inode);
        let mut areas: Vec<&[u8]> = vec![inode.block.get(4..).unwrap_or(&[])];
        if let Some(inline) = xa.inline_data() {
            areas.push(inline);
        }
        for area in areas {
            let mut pos = 0usize;
            while pos + 8 <= area.len() {
                let Ok(entry) = crate::reader::ondisk::decode_at::<
                    crate::reader::ondisk::dir::DirEntry2,
                >(area, pos) else {
                    break;
                };
                let e_ino = entry.inode;
                let rec_len = usize::from(entry.rec_len);
                let name_len = usize::from(entry.name_len);
                if rec_len < 8 || pos + rec_len > area.len() || 8 + name_len > rec_len {
                    break;
                }
                keep(&area[pos + 8..pos + 8 + name_len], e_ino);
                pos += rec_len;
            }
        }
        return Ok(());
    }
    for (_, pblk) in dir::dir_blocks(fs, ino, inode)? {
        let block = fs.block(pblk)?;
        for entry in dir::parse_dir_block(&block, None).entries {
            keep(entry.name, entry.inode);
        }
    }
    Ok(())
}

/// A directory whose children are being extracted: its arena index and destination descriptor.
struct OpenDir {
    idx: usize,
    fd: Arc<OwnedFd>,
    depth: u32,
    /// A directory made by this run inside a plain one (or the plain top): see [`Creation`].
    plain: bool,
}

fn extract_dir_contents<'s>(ctx: &'s Ctx<'s>, scope: &rayon::Scope<'s>, dir: OpenDir, ino: u32) {
    let listed = ctx.fs.inode_raw(ino).and_then(|raw| {
        let inode = Inode::parse(&raw);
        list_dir(ctx.fs, ino, &raw, &inode)
    });
    let entries = match listed {
        Ok(v) => v,
        Err(e) => {
            let mut st = ctx.lock();
            let path = ctx.path_of(&st, dir.idx, b"");
            st.summary.skip(path, &format!("directory unreadable: {e}"));
            return;
        }
    };
    let dir = Arc::new(dir);
    let mut it = entries.into_iter().peekable();
    while it.peek().is_some() {
        let chunk: Vec<(Box<[u8]>, u32)> = it.by_ref().take(ENTRIES_PER_TASK).collect();
        let dir = Arc::clone(&dir);
        scope.spawn(move |task_scope| {
            for (name, child) in chunk {
                extract_entry(ctx, task_scope, &dir, &name, child);
            }
        });
    }
}

fn extract_entry<'s>(
    ctx: &'s Ctx<'s>,
    scope: &rayon::Scope<'s>,
    parent: &OpenDir,
    name: &[u8],
    ino: u32,
) {
    (ctx.progress)(1, 0);
    let cname = match at::component(name) {
        Ok(c) => c,
        Err(_) => {
            return ctx.skip(
                parent.idx,
                name,
                "invalid name: not a single path component",
            )
        }
    };
    let raw = match ctx.fs.inode_raw(ino) {
        Ok(r) => r,
        Err(err) => return ctx.skip(parent.idx, name, &format!("inode unreadable: {err}")),
    };
    let inode = Inode::parse(&raw);
    if inode.has_flag(ENCRYPT_FL) {
        return ctx.skip(
            parent.idx,
            name,
            "encrypted (fscrypt): contents and names are ciphertext without the key; refused",
        );
    }
    if inode.links_count == 0 || inode.mode == 0 {
        return ctx.skip(parent.idx, name, &format!("inode {ino} is not in use"));
    }
    if !ctx.opts.privileged && (inode.uid != ctx.creation.euid || inode.gid != ctx.creation.egid) {
        // Without privilege the copy belongs to the caller: counted once, said in one note.
        ctx.lock().summary.owners_not_kept += 1;
    }
    let dirfd = parent.fd.as_fd();
    if inode.is_dir() {
        return enter_dir(ctx, scope, parent, name, &cname, ino);
    }
    let xa = inode::inode_xattrs(ctx.fs, &raw, &inode);
    let target = Target {
        dir: parent.idx,
        fd: dirfd,
        name,
        cname: &cname,
    };
    let res = match inode.file_type() {
        0o100000 => match extract_regular(ctx, &target, parent, ino, &inode, &xa) {
            Some(written) => written,
            None => return,
        },
        0o120000 => {
            write_symlink(ctx, &target, ino, &inode, &xa).map(|_| ctx.lock().summary.symlinks += 1)
        }
        node @ (0o010000 | 0o020000 | 0o060000 | 0o140000) => {
            match extract_node(ctx, &target, node, ino, &inode, &xa) {
                Some(made) => made,
                None => return,
            }
        }
        t => Err(refused(format!("unknown file type {t:#o}"))),
    };
    if let Err(err) = res {
        if inode.links_count > 1 && inode.is_reg() {
            // Later names cannot link to a copy that does not exist.
            ctx.lock().linked.remove(&ino);
        }
        ctx.skip(parent.idx, name, &err.message);
    }
}

/// A regular file: a later name of a file with several links waits for the links pass
/// (`None`: nothing to report now); the first name is remembered and the data copied.
fn extract_regular(
    ctx: &Ctx<'_>,
    target: &Target<'_>,
    parent: &OpenDir,
    ino: u32,
    inode: &Inode,
    xa: &InodeXattrs<'_>,
) -> Option<std::result::Result<(), Problem>> {
    let name = target.name;
    if inode.links_count > 1 {
        let mut st = ctx.lock();
        if st.linked.contains_key(&ino) {
            st.pending_links.push((
                ino,
                Place {
                    dir: parent.idx,
                    name: name.into(),
                },
            ));
            return None;
        }
        st.linked.insert(
            ino,
            Place {
                dir: parent.idx,
                name: name.into(),
            },
        );
    }
    Some(
        write_regular(ctx, target, parent.plain, ino, inode, xa).map(|written| {
            let mut st = ctx.lock();
            st.summary.files += 1;
            st.summary.bytes += written;
        }),
    )
}

/// A FIFO, socket or device node (`file_type`); `None` for a device node not made without
/// privilege (counted for the summary note).
fn extract_node(
    ctx: &Ctx<'_>,
    target: &Target<'_>,
    file_type: u16,
    ino: u32,
    inode: &Inode,
    xa: &InodeXattrs<'_>,
) -> Option<std::result::Result<(), Problem>> {
    let what = match file_type {
        0o010000 => "FIFO",
        0o140000 => "socket",
        _ => "device node",
    };
    // mknod(2) needs CAP_MKNOD for device nodes only: FIFOs and sockets are made by
    // anyone; device nodes not made without privilege are counted in one note.
    if !ctx.opts.privileged && what == "device node" {
        ctx.lock().summary.devices_not_made += 1;
        return None;
    }
    Some(write_node(ctx, target, ino, inode, xa).map(|_| {
        let mut st = ctx.lock();
        match file_type {
            0o010000 => st.summary.fifos += 1,
            0o140000 => st.summary.sockets += 1,
            _ => st.summary.devices += 1,
        }
    }))
}

fn enter_dir<'s>(
    ctx: &'s Ctx<'s>,
    scope: &rayon::Scope<'s>,
    parent: &OpenDir,
    name: &[u8],
    cname: &CString,
    ino: u32,
) {
    if parent.depth >= MAX_DEPTH {
        return ctx.skip(
            parent.idx,
            name,
            &format!("deeper than {MAX_DEPTH} levels: not descended"),
        );
    }
    if !ctx.lock().visited.insert(ino) {
        return ctx.skip(parent.idx, name, &format!("directory inode {ino} reached twice (a loop or a linked directory): not descended again"));
    }
    let dirfd = parent.fd.as_fd();
    // `fresh`: made now (not an existing directory reused with --force).
    let made = match at::mkdir_at(dirfd, cname, 0o700) {
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => make_room(ctx, dirfd, cname, true)
            .and_then(|reuse| {
                if reuse {
                    Ok(false)
                } else {
                    at::mkdir_at(dirfd, cname, 0o700)
                        .map(|()| true)
                        .map_err(|e| refused(format!("cannot create directory: {}", os_err(&e))))
                }
            }),
        Err(e) => Err(refused(format!("cannot create directory: {}", os_err(&e)))),
        Ok(()) => Ok(true),
    }
    .and_then(|fresh| {
        at::open_dir_at(dirfd, cname)
            .map(|fd| (fd, fresh))
            .map_err(|e| refused(format!("cannot open the created directory: {}", os_err(&e))))
    });
    let (fd, fresh) = match made {
        Ok(v) => v,
        Err(e) => return ctx.skip(parent.idx, name, &e.message),
    };
    let idx = {
        let mut st = ctx.lock();
        st.summary.dirs += 1;
        st.dirs.push(DirNode {
            parent: parent.idx,
            name: name.into(),
            ino,
            apply_meta: true,
        });
        st.dirs.len() - 1
    };
    extract_dir_contents(
        ctx,
        scope,
        OpenDir {
            idx,
            fd: Arc::new(fd),
            depth: parent.depth + 1,
            plain: fresh && parent.plain,
        },
        ino,
    );
}

fn make_pending_links(ctx: &Ctx<'_>) {
    let (pending, linked) = {
        let mut st = ctx.lock();
        (
            std::mem::take(&mut st.pending_links),
            std::mem::take(&mut st.linked),
        )
    };
    for (ino, place) in pending {
        let res = (|| -> std::result::Result<(), Problem> {
            let first = linked.get(&ino).ok_or_else(|| {
                refused("the first name of this hard-linked file was not extracted")
            })?;
            let from_dir = ctx
                .open_dir(first.dir)
                .map_err(|e| refused(format!("cannot reopen {}", os_err(&e))))?;
            let to_dir = ctx
                .open_dir(place.dir)
                .map_err(|e| refused(format!("cannot reopen {}", os_err(&e))))?;
            let from = at::component(&first.name).map_err(|e| refused(e.to_string()))?;
            let to = at::component(&place.name).map_err(|e| refused(e.to_string()))?;
            make_room(ctx, to_dir.as_fd(), &to, false)?;
            at::link_at(from_dir.as_fd(), &from, to_dir.as_fd(), &to)
                .map_err(|e| refused(format!("cannot link: {}", os_err(&e))))
        })();
        match res {
            Ok(()) => ctx.lock().summary.hard_links += 1,
            Err(e) => ctx.skip(place.dir, &place.name, &e.message),
        }
    }
}

/// Owner, mode, xattrs and times of every directory created, deepest first (xattrs last of all, so
/// that a default ACL is not inherited by the entries extracted into the directory).
fn finish_dirs(ctx: &Ctx<'_>) {
    let todo: Vec<(usize, u32)> = {
        let st = ctx.lock();
        st.dirs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.apply_meta)
            .map(|(i, d)| (i, d.ino))
            .collect()
    };
    for (idx, ino) in todo.into_iter().rev() {
        let res = ctx
            .fs
            .inode_raw(ino)
            .map_err(|e| e.to_string())
            .and_then(|raw| {
                let inode = Inode::parse(&raw);
                let xa = inode::inode_xattrs(ctx.fs, &raw, &inode);
                let fd = ctx.open_dir(idx).map_err(|e| os_err(&e))?;
                finish_fd(
                    ctx,
                    idx,
                    b"",
                    &std::fs::File::from(fd),
                    &inode,
                    &xa,
                    Fixups::ALL,
                )
                .map_err(|e| os_err(&e))
            });
        if let Err(err) = res {
            let mut st = ctx.lock();
            let path = ctx.path_of(&st, idx, b"");
            st.summary
                .problem(path, format!("cannot set owner, mode or times: {err}"));
        }
    }
}

/// Extract inode `ino` of `fs` into directory `dest`: as `dest/name`, or with `name` `None`
/// (a directory only) its contents straight into `dest`, which must then be empty unless
/// `force`. `progress(entries, bytes)` is called as work is done. Errors are returned only when
/// nothing could be started; per-entry trouble is in the summary.
pub fn extract(
    fs: &Filesystem,
    ino: u32,
    dest: &std::path::Path,
    name: Option<&[u8]>,
    opts: ExtractOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Summary> {
    let io = |op: &'static str| {
        let path = dest.to_path_buf();
        move |source| Error::Io { path, op, source }
    };
    let raw = fs.inode_raw(ino)?;
    let inode = Inode::parse(&raw);
    if inode.has_flag(ENCRYPT_FL) {
        return Err(Error::Invalid(format!(
            "inode {ino} is encrypted (fscrypt): its contents and names are ciphertext without the key; refusing to extract"
        )));
    }
    let destfd = at::open_dir_path(dest).map_err(io("cannot open the destination directory"))?;
    let is_dir = inode.is_dir();
    let umask = current_umask();
    let top_plain = umask.is_some() && is_plain_dir(destfd.as_fd(), dest);
    let ctx = Ctx {
        fs,
        opts,
        top: Arc::new(destfd),
        state: Mutex::new(State::default()),
        progress,
        creation: Creation {
            umask: umask.unwrap_or(0o777),
            euid: at::effective_uid(),
            egid: at::effective_gid(),
        },
    };
    {
        let mut st = ctx.lock();
        st.summary.not_restored = "ctime and crtime (no system call sets them)";
        st.dirs.push(DirNode {
            parent: 0,
            name: b"".to_vec().into(),
            ino: 0,
            apply_meta: false,
        });
    }
    match name {
        None => extract_contents_into(&ctx, dest, ino, is_dir, top_plain)?,
        Some(as_name) => extract_as(&ctx, dest, as_name, ino, top_plain)?,
    }
    make_pending_links(&ctx);
    finish_dirs(&ctx);
    let st = ctx.state.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut summary = st.summary;
    unprivileged_notes(&mut summary);
    Ok(summary)
}

/// `extract` without a name: the directory's entries go straight into `dest`, which must be
/// empty unless `--force`.
fn extract_contents_into(
    ctx: &Ctx<'_>,
    dest: &std::path::Path,
    ino: u32,
    is_dir: bool,
    top_plain: bool,
) -> Result<()> {
    if !is_dir {
        return Err(Error::Invalid(format!("inode {ino} is not a directory")));
    }
    let nonempty = std::fs::read_dir(dest)
        .map_err(|source| Error::Io {
            path: dest.to_path_buf(),
            op: "cannot read",
            source,
        })?
        .next()
        .is_some();
    if nonempty && !ctx.opts.force {
        return Err(Error::Invalid(format!(
            "{}: destination is not empty: use --force to extract into it",
            dest.display()
        )));
    }
    ctx.lock().visited.insert(ino);
    let fd = Arc::clone(&ctx.top);
    rayon::scope(|scope| {
        extract_dir_contents(
            ctx,
            scope,
            OpenDir {
                idx: 0,
                fd,
                depth: 0,
                plain: top_plain,
            },
            ino,
        )
    });
    Ok(())
}

/// `extract` with a name: the inode becomes `dest/name`, which must not exist unless
/// `--force`.
fn extract_as(
    ctx: &Ctx<'_>,
    dest: &std::path::Path,
    name: &[u8],
    ino: u32,
    top_plain: bool,
) -> Result<()> {
    let cname = at::component(name).map_err(|_| {
        Error::Invalid("the name to extract as is not a single path component".into())
    })?;
    if !ctx.opts.force {
        if let Ok(Some(existing)) = at::lstat_type_at(ctx.top.as_fd(), &cname) {
            return Err(Error::Invalid(format!(
                "{}/{}: exists ({}): use --force to replace it",
                dest.display(),
                String::from_utf8_lossy(name),
                type_word(existing)
            )));
        }
    }
    let top = OpenDir {
        idx: 0,
        fd: Arc::clone(&ctx.top),
        depth: 0,
        plain: top_plain,
    };
    rayon::scope(|scope| extract_entry(ctx, scope, &top, name, ino));
    Ok(())
}

/// The one-line notes for what an unprivileged run cannot keep.
fn unprivileged_notes(summary: &mut Summary) {
    if summary.devices_not_made > 0 {
        summary.notes.push(format!(
            "{} device nodes not made: making them needs privilege (run as root, or use --tar, which keeps them)",
            summary.devices_not_made
        ));
    }
    if summary.owners_not_kept > 0 {
        summary.notes.push(format!(
            "owners not kept: {} entries belong to another user or group in the image and are owned by the caller here (run as root, or use --tar, which keeps them)",
            summary.owners_not_kept
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acl_converted_to_vfs_form() {
        // version 1; USER_OBJ rw; USER 1000 r; GROUP_OBJ r; MASK r; OTHER none
        let mut disk = 1u32.to_le_bytes().to_vec();
        disk.extend([1, 0, 6, 0]);
        disk.extend([2, 0, 4, 0, 0xe8, 3, 0, 0]);
        disk.extend([4, 0, 4, 0]);
        disk.extend([0x10, 0, 4, 0]);
        disk.extend([0x20, 0, 0, 0]);
        let vfs = acl_to_vfs(&disk).unwrap();
        assert_eq!(vfs.len(), 4 + 5 * 8);
        assert_eq!(&vfs[..4], &2u32.to_le_bytes());
        assert_eq!(&vfs[4..12], &[1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(&vfs[12..20], &[2, 0, 4, 0, 0xe8, 3, 0, 0]);
        let back = crate::reader::xattr::decode_acl_vfs(&vfs).unwrap();
        assert_eq!(back, crate::reader::xattr::decode_acl_disk(&disk).unwrap());
        assert!(acl_to_vfs(&[2, 0, 0, 0]).is_err());
    }

    #[test]
    fn negative_and_nanosecond_times() {
        let time = timespec(u32::MAX, 1 << 2); // -1 s, 1 ns
        assert_eq!(time, Timespec { secs: -1, nsec: 1 });
        let st = system_time(time);
        assert_eq!(
            std::time::UNIX_EPOCH.duration_since(st).unwrap(),
            std::time::Duration::from_nanos(999_999_999)
        );
    }

    #[test]
    fn creation_plan_skips_only_calls_that_change_nothing() {
        let creation = Creation {
            umask: 0o022,
            euid: 0,
            egid: 0,
        };
        let mut inode = Inode::parse(&[0u8; 256]);
        inode.mode = 0o100644;
        let none = Fixups {
            chown: false,
            chmod: false,
        };
        assert_eq!(
            creation_plan(Some(creation), true, &inode, false),
            (0o644, none)
        );
        // Unknown umask or a directory that is not plain: everything is set.
        assert_eq!(
            creation_plan(None, true, &inode, false),
            (0o600, Fixups::ALL)
        );
        // Another owner: chown, still no chmod.
        inode.uid = 1000;
        let (mode, fixups) = creation_plan(Some(creation), true, &inode, false);
        assert_eq!((mode, fixups.chown, fixups.chmod), (0o644, true, false));
        // Not run as root: never chown.
        assert!(!creation_plan(Some(creation), false, &inode, false).1.chown);
        // Bits the umask removes, set-ID bits: chmod.
        inode.mode = 0o100666;
        assert!(creation_plan(Some(creation), true, &inode, false).1.chmod);
        inode.mode = 0o104755;
        assert!(creation_plan(Some(creation), true, &inode, false).1.chmod);
        // Read-only file with xattrs, unprivileged: created writable, chmod after the xattrs.
        inode.mode = 0o100444;
        assert_eq!(creation_plan(Some(creation), false, &inode, true).0, 0o600);
        assert_eq!(creation_plan(Some(creation), false, &inode, false).0, 0o444);
    }

    #[test]
    fn reasons_are_counted_by_kind() {
        let mut summary = Summary::default();
        for index in 0..MAX_LISTED + 5 {
            summary.skip(
                format!("f{index}"),
                "device node: made only when run as root",
            );
        }
        assert_eq!(summary.skipped.len(), MAX_LISTED);
        assert_eq!(summary.skipped_count, MAX_LISTED as u64 + 5);
        assert_eq!(
            summary.skipped_by_reason.get("device node"),
            Some(&(MAX_LISTED as u64 + 5))
        );
    }
}
