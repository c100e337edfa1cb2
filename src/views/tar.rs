//! `extract --tar`: a file or a subtree of an image as a POSIX pax archive, streamed in one pass
//! to any writer, with no privilege and no file held whole in memory (the rootless counterpart
//! of debugfs' `rdump`, `debugfs/dump.c`).
//!
//! Headers and pax extended headers are written by the `tar` crate (`Builder::append`,
//! `Builder::append_pax_extensions`). The crate reads but does not write sparse entries, so the
//! GNU sparse 1.0 form (pax records `GNU.sparse.major/minor/name/realsize`, a decimal map in the
//! first data blocks, then only the mapped data) is laid out here and handed to the crate as the
//! entry's data stream.
//!
//! What each member keeps: type (regular, directory, symlink, hard link, character and block
//! device, FIFO; sockets cannot be archived and are listed as skipped), mode with
//! setuid/setgid/sticky, numeric owner and the names the image's own `/etc/passwd` and
//! `/etc/group` give, mtime/atime/ctime with nanoseconds (pax records), crtime in a
//! `comment` record (`crtime=SECS.NSEC`), every xattr as `SCHILY.xattr.NAME` (POSIX ACLs both in the VFS form
//! the kernel's `getxattr` returns and as `SCHILY.acl.access`/`SCHILY.acl.default` text), names and
//! link targets of any length (pax `path`/`linkpath`).
//!
//! Safety of the archive: member names are built from directory entries that are single path
//! components (no `/`, not `.` or `..`, not empty, no NUL); anything else is skipped and listed,
//! so no member name is absolute or climbs out. Encrypted inodes are refused as `extract` refuses
//! them.

use super::extract::{self, Pieces, Summary, CHUNK_BYTES, MAX_DEPTH};
use crate::error::{Error, Problem, Result};
use crate::reader::dir::ENCRYPT_FL;
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, DataMap, Inode, InodeXattrs};
use std::collections::HashMap;
use std::io::{Read, Write};

/// Largest `/etc/passwd` or `/etc/group` read from the image for owner names.
const MAX_NAME_DB: u64 = 4 << 20;
/// Largest value of an ustar numeric field of 8 bytes (7 octal digits).
const USTAR_MAX_ID: u64 = 0o7_777_777;
/// Largest ustar size (11 octal digits).
const USTAR_MAX_SIZE: u64 = 0o77_777_777_777;

/// Owner names from the image's own account files.
#[derive(Default)]
struct Names {
    users: HashMap<u32, String>,
    groups: HashMap<u32, String>,
}

/// `name:x:id:...` lines of a passwd or group file: the first name for each id.
fn parse_name_db(text: &[u8]) -> HashMap<u32, String> {
    let mut out = HashMap::new();
    for line in text.split(|&b| b == b'\n') {
        let mut fields = line.split(|&b| b == b':');
        let (Some(name), Some(_), Some(id)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        };
        let Some(id) = std::str::from_utf8(id)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        else {
            continue;
        };
        if !name.is_empty() && !name.starts_with('#') && !name.starts_with('+') {
            out.entry(id).or_insert_with(|| name.to_string());
        }
    }
    out
}

/// A regular file of the image read whole, when it exists and is at most [`MAX_NAME_DB`] bytes.
fn small_file(fs: &Filesystem, path: &str) -> Option<Vec<u8>> {
    let ino = crate::reader::namei::resolve_path(fs, path).ok()?;
    let raw = fs.inode_raw(ino).ok()?;
    let inode = Inode::parse(&raw);
    if !inode.is_reg() || inode.size > MAX_NAME_DB || inode.has_flag(ENCRYPT_FL) {
        return None;
    }
    let xa = inode::inode_xattrs(fs, &raw, &inode);
    let mut reader = FileReader::new(fs, ino, &inode, xa.inline_data(), &mut Vec::new()).ok()?;
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

fn load_names(fs: &Filesystem) -> Names {
    Names {
        users: small_file(fs, "/etc/passwd")
            .map(|t| parse_name_db(&t))
            .unwrap_or_default(),
        groups: small_file(fs, "/etc/group")
            .map(|t| parse_name_db(&t))
            .unwrap_or_default(),
    }
}

/// A file's first i_size bytes as one stream: mapped runs read from the image in chunks of at
/// most [`CHUNK_BYTES`], holes and uninitialised extents as zeros (`dense`), or left out
/// (sparse: only the mapped data, in order). Yields exactly the promised number of bytes or an
/// error.
pub struct FileReader<'a> {
    fs: &'a Filesystem,
    inline: Option<Vec<u8>>,
    runs: Vec<(u64, u64, u64)>,
    next_run: usize,
    /// Sparse stream: where run `next_run` starts in it.
    run_base: u64,
    /// File offset of the next byte (dense) or offset within the data (sparse).
    pos: u64,
    size: u64,
    dense: bool,
    buf: Vec<u8>,
    buf_at: usize,
}

impl<'a> FileReader<'a> {
    /// A dense reader over inode `ino`; map problems met are appended to `problems`.
    pub fn new(
        fs: &'a Filesystem,
        ino: u32,
        inode: &Inode,
        inline: Option<&[u8]>,
        problems: &mut Vec<Problem>,
    ) -> Result<Self> {
        let (inline, runs) = match extract::data_pieces(fs, ino, inode, inline, problems)? {
            Pieces::Inline(d) => (Some(d), Vec::new()),
            Pieces::Runs(r) => (None, r),
        };
        let size = match &inline {
            Some(d) => d.len() as u64,
            None => inode.size,
        };
        Ok(FileReader {
            fs,
            inline,
            runs,
            next_run: 0,
            run_base: 0,
            pos: 0,
            size,
            dense: true,
            buf: Vec::new(),
            buf_at: 0,
        })
    }

    /// Bytes mapped (the file less its holes).
    pub fn mapped(&self) -> u64 {
        match &self.inline {
            Some(d) => d.len() as u64,
            None => self.runs.iter().map(|r| r.2).sum(),
        }
    }

    /// The mapped runs `(file offset, length)`.
    fn segments(&self) -> Vec<(u64, u64)> {
        match &self.inline {
            Some(d) => vec![(0, d.len() as u64)],
            None => self.runs.iter().map(|r| (r.0, r.2)).collect(),
        }
    }

    /// Switch to the sparse stream (only the mapped data).
    fn sparse(mut self) -> Self {
        self.dense = false;
        self.size = self.mapped();
        self
    }

    /// The length of the stream.
    pub fn len(&self) -> u64 {
        self.size
    }

    /// True when the stream is empty.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Fill `buf` with the next piece of the stream.
    fn refill(&mut self) -> Result<()> {
        self.buf.clear();
        self.buf_at = 0;
        if self.pos >= self.size {
            return Ok(());
        }
        if let Some(inline) = &self.inline {
            self.buf.extend_from_slice(&inline[self.pos as usize..]);
            return Ok(());
        }
        if !self.dense {
            // Runs follow each other in the stream: skip those wholly read.
            while let Some(&(_, _, len)) = self.runs.get(self.next_run) {
                if self.pos < self.run_base + len {
                    break;
                }
                self.run_base += len;
                self.next_run += 1;
            }
            let Some(&(_, img, len)) = self.runs.get(self.next_run) else {
                return Ok(());
            };
            let within = self.pos - self.run_base;
            return self.read_run(img + within, (len - within).min(CHUNK_BYTES));
        }
        // Dense: the run holding pos, or zeros up to the next run (or to the end).
        while let Some(&(off, _, len)) = self.runs.get(self.next_run) {
            if self.pos < off + len {
                break;
            }
            self.next_run += 1;
        }
        match self.runs.get(self.next_run) {
            Some(&(off, img, len)) if self.pos >= off => {
                let within = self.pos - off;
                self.read_run(img + within, (len - within).min(CHUNK_BYTES))
            }
            Some(&(off, _, _)) => {
                self.buf
                    .resize((off - self.pos).min(CHUNK_BYTES) as usize, 0);
                Ok(())
            }
            None => {
                self.buf
                    .resize((self.size - self.pos).min(CHUNK_BYTES) as usize, 0);
                Ok(())
            }
        }
    }

    fn read_run(&mut self, img: u64, len: u64) -> Result<()> {
        self.buf.resize(len as usize, 0);
        self.fs
            .source
            .read_data_into(img, &mut self.buf, "file data")
    }
}

impl Read for FileReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.buf_at >= self.buf.len() {
            self.refill().map_err(std::io::Error::other)?;
            if self.buf.is_empty() {
                return Ok(0);
            }
        }
        let count = out.len().min(self.buf.len() - self.buf_at);
        out[..count].copy_from_slice(&self.buf[self.buf_at..self.buf_at + count]);
        self.buf_at += count;
        self.pos += count as u64;
        Ok(count)
    }
}

/// A pax time value: seconds and nanoseconds as a decimal (negative times as the signed sum).
fn pax_time(secs: u32, extra: u32, has_extra: bool) -> String {
    let (seconds, ns) = if has_extra {
        (
            inode::time_secs(secs, extra),
            inode::time_nsec(extra).min(999_999_999),
        )
    } else {
        (i64::from(secs as i32), 0)
    };
    if ns == 0 {
        return seconds.to_string();
    }
    if seconds >= 0 {
        format!("{seconds}.{ns:09}")
    } else {
        // seconds + ns/1e9 with seconds < 0: -(|seconds| - 1).(1e9 - ns)
        let whole = seconds + 1;
        let frac = 1_000_000_000 - ns;
        if whole == 0 {
            format!("-0.{frac:09}")
        } else {
            format!("{whole}.{frac:09}")
        }
    }
}

/// One ACL in the text form `getfacl`/GNU tar's `SCHILY.acl.*` use, with numeric ids.
fn acl_text(disk: &[u8]) -> Result<String> {
    let entries = crate::reader::xattr::decode_acl_disk(disk)?;
    let perm = |bits: u16| {
        format!(
            "{}{}{}",
            if bits & 4 != 0 { 'r' } else { '-' },
            if bits & 2 != 0 { 'w' } else { '-' },
            if bits & 1 != 0 { 'x' } else { '-' }
        )
    };
    let parts: Vec<String> = entries
        .iter()
        .map(|entry| {
            let id = entry.id.map(|i| i.to_string()).unwrap_or_default();
            let tag = match entry.tag {
                1 | 2 => "user",
                4 | 8 => "group",
                0x10 => "mask",
                _ => "other",
            };
            format!("{tag}:{id}:{}", perm(entry.perm))
        })
        .collect();
    Ok(parts.join(","))
}

/// What to put in the archive for one inode.
struct Member<'a> {
    path: &'a [u8],
    ino: u32,
    inode: &'a Inode,
    xa: &'a InodeXattrs<'a>,
}

struct Writer<'f, W: Write> {
    fs: &'f Filesystem,
    builder: tar::Builder<W>,
    names: Names,
    summary: Summary,
    /// Multiply linked inodes already archived: their member name.
    linked: HashMap<u32, Vec<u8>>,
    visited: std::collections::HashSet<u32>,
    progress: &'f (dyn Fn(u64, u64) + Sync),
    has_extra_times: bool,
    /// Sockets met (a tar archive has no member type for them).
    sockets: u64,
}

/// An archive write failed: the archive is unusable, stop.
fn write_err(err: std::io::Error) -> Error {
    Error::Io {
        path: "archive".into(),
        op: "cannot write",
        source: err,
    }
}

impl<W: Write> Writer<'_, W> {
    fn skip(&mut self, path: &[u8], reason: &str) {
        self.summary
            .skip(String::from_utf8_lossy(path).into_owned(), reason);
    }

    /// The pax records every member carries: times, owner names, xattrs, long names.
    fn common_records(
        &mut self,
        member: &Member<'_>,
        header: &mut tar::Header,
    ) -> Vec<(String, Vec<u8>)> {
        let inode = member.inode;
        let mut rec: Vec<(String, Vec<u8>)> = Vec::new();
        let extra = self.has_extra_times && inode.extra_isize >= 8;
        rec.push((
            "mtime".into(),
            pax_time(inode.mtime, inode.mtime_extra, extra).into_bytes(),
        ));
        rec.push((
            "atime".into(),
            pax_time(inode.atime, inode.atime_extra, extra).into_bytes(),
        ));
        rec.push((
            "ctime".into(),
            pax_time(inode.ctime, inode.ctime_extra, extra).into_bytes(),
        ));
        if self.has_extra_times
            && inode.extra_isize >= 24
            && (inode.crtime != 0 || inode.crtime_extra != 0)
        {
            // In a `comment` record: GNU tar warns on every vendor keyword it does not know
            // (`LIBARCHIVE.creationtime` among them) and no system call can set a crtime.
            rec.push((
                "comment".into(),
                format!(
                    "crtime={}",
                    pax_time(inode.crtime, inode.crtime_extra, true)
                )
                .into_bytes(),
            ));
        }
        header.set_mode(u32::from(inode.mode) & 0o7777);
        header.set_uid(u64::from(inode.uid).min(USTAR_MAX_ID));
        header.set_gid(u64::from(inode.gid).min(USTAR_MAX_ID));
        if u64::from(inode.uid) > USTAR_MAX_ID {
            rec.push(("uid".into(), inode.uid.to_string().into_bytes()));
        }
        if u64::from(inode.gid) > USTAR_MAX_ID {
            rec.push(("gid".into(), inode.gid.to_string().into_bytes()));
        }
        let mtime = inode::time_secs(inode.mtime, if extra { inode.mtime_extra } else { 0 });
        header.set_mtime(u64::try_from(mtime).unwrap_or(0));
        if let Some(name) = self.names.users.get(&inode.uid) {
            if header.set_username(name).is_err() {
                rec.push(("uname".into(), name.clone().into_bytes()));
            }
        }
        if let Some(name) = self.names.groups.get(&inode.gid) {
            if header.set_groupname(name).is_err() {
                rec.push(("gname".into(), name.clone().into_bytes()));
            }
        }
        self.xattr_records(member, &mut rec);
        rec
    }

    fn xattr_records(&mut self, member: &Member<'_>, rec: &mut Vec<(String, Vec<u8>)>) {
        let path = String::from_utf8_lossy(member.path).into_owned();
        for item in &member.xa.items {
            let mut dropped = |reason: &str| {
                self.summary.drop_xattr(path.clone(), &item.name, reason);
            };
            if item.name == "system.data" {
                continue; // inline data: the file's own contents
            }
            if item.name.starts_with("encryption.") || item.name.starts_with("index") {
                dropped("not a VFS attribute: no name to archive it under");
                continue;
            }
            if item.name.contains('=') || item.name.contains('\0') || item.name.contains('\n') {
                dropped("name cannot be a pax keyword ('=', NUL or newline)");
                continue;
            }
            let value = match extract::xattr_value(self.fs, item) {
                Ok(v) => v,
                Err(reason) => {
                    dropped(&reason);
                    continue;
                }
            };
            let acl = match item.name.as_str() {
                "system.posix_acl_access" => Some("SCHILY.acl.access"),
                "system.posix_acl_default" => Some("SCHILY.acl.default"),
                _ => None,
            };
            let value = match acl {
                Some(key) => match (extract::acl_to_vfs(&value), acl_text(&value)) {
                    (Ok(v), Ok(t)) => {
                        rec.push((key.into(), t.into_bytes()));
                        v
                    }
                    (Err(e), _) | (_, Err(e)) => {
                        dropped(&format!("malformed ACL: {e}"));
                        continue;
                    }
                },
                None => value,
            };
            rec.push((format!("SCHILY.xattr.{}", item.name), value));
        }
    }

    /// Put the member name (and link target) in the header, or in pax records when too long or
    /// not UTF-8.
    fn set_names(
        header: &mut tar::Header,
        path: &[u8],
        link: Option<&[u8]>,
        rec: &mut Vec<(String, Vec<u8>)>,
    ) {
        let mut binary = false;
        let fits = |s: &[u8]| s.len() < 100 && !s.is_empty();
        let ustar = header.as_ustar_mut().expect("ustar header");
        if fits(path) {
            ustar.name[..path.len()].copy_from_slice(path);
        } else {
            let len = path.len().min(99);
            ustar.name[..len].copy_from_slice(&path[..len]);
            rec.push(("path".into(), path.to_vec()));
        }
        binary |= std::str::from_utf8(path).is_err();
        if let Some(link) = link {
            if fits(link) {
                ustar.linkname[..link.len()].copy_from_slice(link);
            } else {
                let len = link.len().min(99);
                ustar.linkname[..len].copy_from_slice(&link[..len]);
                rec.push(("linkpath".into(), link.to_vec()));
            }
            binary |= std::str::from_utf8(link).is_err();
        }
        if binary {
            rec.insert(0, ("hdrcharset".into(), b"BINARY".to_vec()));
        }
    }

    fn emit(
        &mut self,
        mut header: tar::Header,
        rec: Vec<(String, Vec<u8>)>,
        data: impl Read,
    ) -> Result<()> {
        header.set_cksum();
        let pairs: Vec<(&str, &[u8])> = rec
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_slice()))
            .collect();
        self.builder
            .append_pax_extensions(pairs)
            .map_err(write_err)?;
        self.builder.append(&header, data).map_err(write_err)
    }

    /// Archive one inode as `path` (a directory with its contents).
    fn member(&mut self, path: &[u8], ino: u32, depth: u32) -> Result<()> {
        (self.progress)(1, 0);
        let raw = match self.fs.inode_raw(ino) {
            Ok(r) => r,
            Err(e) => {
                self.skip(path, &format!("inode unreadable: {e}"));
                return Ok(());
            }
        };
        let inode = Inode::parse(&raw);
        if inode.has_flag(ENCRYPT_FL) {
            self.skip(
                path,
                "encrypted (fscrypt): contents and names are ciphertext without the key; refused",
            );
            return Ok(());
        }
        if inode.links_count == 0 || inode.mode == 0 {
            self.skip(path, &format!("inode {ino} is not in use"));
            return Ok(());
        }
        let xa = inode::inode_xattrs(self.fs, &raw, &inode);
        let member = Member {
            path,
            ino,
            inode: &inode,
            xa: &xa,
        };
        match inode.file_type() {
            0o040000 => self.directory(&member, depth),
            0o100000 => self.regular(&member),
            0o120000 => self.symlink(&member),
            t @ (0o010000 | 0o020000 | 0o060000) => self.node(&member, t),
            0o140000 => {
                self.sockets += 1;
                Ok(())
            }
            t => {
                self.skip(path, &format!("unknown file type {t:#o}"));
                Ok(())
            }
        }
    }

    fn directory(&mut self, member: &Member<'_>, depth: u32) -> Result<()> {
        if depth > MAX_DEPTH {
            self.skip(
                member.path,
                &format!("deeper than {MAX_DEPTH} levels: not descended"),
            );
            return Ok(());
        }
        if !self.visited.insert(member.ino) {
            self.skip(member.path, &format!("directory inode {} reached twice (a loop or a linked directory): not descended again", member.ino));
            return Ok(());
        }
        let raw = self.fs.inode_raw(member.ino)?;
        let entries = match extract::list_dir(self.fs, member.ino, &raw, member.inode) {
            Ok(e) => e,
            Err(e) => {
                self.skip(member.path, &format!("directory unreadable: {e}"));
                return Ok(());
            }
        };
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Directory);
        header.set_size(0);
        let mut rec = self.common_records(member, &mut header);
        let name: Vec<u8> = if member.path.is_empty() {
            b"./".to_vec()
        } else {
            [member.path, b"/"].concat()
        };
        Self::set_names(&mut header, &name, None, &mut rec);
        self.emit(header, rec, std::io::empty())?;
        self.summary.dirs += 1;
        let mut entries = entries;
        // Sorted by name: the archive is the same whatever the directory's on-disk order.
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (name, child) in entries {
            let valid =
                !name.contains(&b'/') && !name.contains(&0) && &*name != b"." && &*name != b"..";
            let child_path: Vec<u8> = if member.path.is_empty() {
                name.to_vec()
            } else {
                [member.path, b"/", &name].concat()
            };
            if !valid {
                self.skip(&child_path, "invalid name: not a single path component");
                continue;
            }
            self.member(&child_path, child, depth + 1)?;
        }
        Ok(())
    }

    /// A later name of a multiply linked inode already archived: a link member.
    fn hard_link(&mut self, member: &Member<'_>) -> Result<bool> {
        if member.inode.links_count < 2 {
            return Ok(false);
        }
        let Some(first) = self.linked.get(&member.ino).cloned() else {
            self.linked.insert(member.ino, member.path.to_vec());
            return Ok(false);
        };
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Link);
        header.set_size(0);
        let mut rec = self.common_records(member, &mut header);
        // A link member carries no data and its target holds the attributes already.
        rec.retain(|(k, _)| !k.starts_with("SCHILY."));
        Self::set_names(&mut header, member.path, Some(&first), &mut rec);
        self.emit(header, rec, std::io::empty())?;
        self.summary.hard_links += 1;
        Ok(true)
    }

    fn regular(&mut self, member: &Member<'_>) -> Result<()> {
        if self.hard_link(member)? {
            return Ok(());
        }
        let mut problems = Vec::new();
        let reader = match FileReader::new(
            self.fs,
            member.ino,
            member.inode,
            member.xa.inline_data(),
            &mut problems,
        ) {
            Ok(r) => r,
            Err(e) => {
                self.linked.remove(&member.ino);
                self.skip(member.path, &format!("contents: {e}"));
                return Ok(());
            }
        };
        for problem in problems {
            self.summary.problem(
                String::from_utf8_lossy(member.path).into_owned(),
                format!("inode {}: {problem}", member.ino),
            );
        }
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        let mut rec = self.common_records(member, &mut header);
        let real = reader.len();
        let mapped = reader.mapped();
        (self.progress)(0, mapped);
        if mapped < real {
            return self.sparse(member, header, rec, reader);
        }
        header.set_size(real.min(USTAR_MAX_SIZE));
        if real > USTAR_MAX_SIZE {
            rec.push(("size".into(), real.to_string().into_bytes()));
        }
        Self::set_names(&mut header, member.path, None, &mut rec);
        self.emit(header, rec, reader)?;
        self.summary.files += 1;
        self.summary.bytes += real;
        Ok(())
    }

    /// A file with holes as a GNU sparse 1.0 member: the real name and size in pax records, a
    /// decimal map (count, then offset and length of each data segment, one per line, padded to
    /// a 512-byte block) followed by the segments' data.
    fn sparse(
        &mut self,
        member: &Member<'_>,
        mut header: tar::Header,
        mut rec: Vec<(String, Vec<u8>)>,
        reader: FileReader<'_>,
    ) -> Result<()> {
        let real = reader.len();
        let mut segs = reader.segments();
        if segs.last().is_none_or(|&(o, l)| o + l < real) {
            // A hole at the end: an empty segment at the end says the size (as GNU tar does).
            segs.push((real, 0));
        }
        let mut map = format!("{}\n", segs.len());
        for (offset, len) in &segs {
            map.push_str(&format!("{offset}\n{len}\n"));
        }
        let mut map = map.into_bytes();
        map.resize(map.len().div_ceil(512) * 512, 0);
        let reader = reader.sparse();
        let stored = map.len() as u64 + reader.len();
        rec.push(("GNU.sparse.major".into(), b"1".to_vec()));
        rec.push(("GNU.sparse.minor".into(), b"0".to_vec()));
        rec.push(("GNU.sparse.name".into(), member.path.to_vec()));
        rec.push(("GNU.sparse.realsize".into(), real.to_string().into_bytes()));
        if stored > USTAR_MAX_SIZE {
            rec.push(("size".into(), stored.to_string().into_bytes()));
        }
        header.set_size(stored.min(USTAR_MAX_SIZE));
        // The header name GNU tar gives a sparse member: DIR/GNUSparseFile.0/BASE (a reader that
        // knows no sparse files makes that, never the real name with the wrong contents).
        let (dir, base) = match member.path.iter().rposition(|&b| b == b'/') {
            Some(i) => (&member.path[..i + 1], &member.path[i + 1..]),
            None => (&b""[..], member.path),
        };
        let shown = [dir, b"GNUSparseFile.0/", base].concat();
        let mut name_rec = Vec::new();
        Self::set_names(&mut header, &shown, None, &mut name_rec);
        // The long form of the shown name is not needed: GNU.sparse.name is the real one.
        rec.extend(name_rec.into_iter().filter(|(k, _)| k != "path"));
        self.emit(header, rec, std::io::Cursor::new(map).chain(reader))?;
        self.summary.files += 1;
        self.summary.bytes += real;
        Ok(())
    }

    fn symlink(&mut self, member: &Member<'_>) -> Result<()> {
        let target = match extract::symlink_target(self.fs, member.ino, member.inode, member.xa) {
            Ok(t) if !t.is_empty() && !t.contains(&0) => t,
            Ok(_) => {
                self.skip(member.path, "symlink target is empty or holds a NUL byte");
                return Ok(());
            }
            Err(e) => {
                self.skip(member.path, &e.message);
                return Ok(());
            }
        };
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Symlink);
        header.set_size(0);
        let mut rec = self.common_records(member, &mut header);
        Self::set_names(&mut header, member.path, Some(&target), &mut rec);
        self.emit(header, rec, std::io::empty())?;
        self.summary.symlinks += 1;
        Ok(())
    }

    fn node(&mut self, member: &Member<'_>, file_type: u16) -> Result<()> {
        if file_type == 0o010000 && self.hard_link(member)? {
            return Ok(());
        }
        let mut header = tar::Header::new_ustar();
        header.set_size(0);
        let mut rec = self.common_records(member, &mut header);
        if file_type == 0o010000 {
            header.set_entry_type(tar::EntryType::Fifo);
            self.summary.fifos += 1;
        } else {
            let (major, minor) = match inode::data_map(self.fs, member.ino, member.inode, None) {
                DataMap::Device { major, minor, .. } => (major, minor),
                _ => (0, 0),
            };
            header.set_entry_type(if file_type == 0o020000 {
                tar::EntryType::Char
            } else {
                tar::EntryType::Block
            });
            if header.set_device_major(major).is_err() || header.set_device_minor(minor).is_err() {
                self.skip(member.path, "device numbers too large for a tar header");
                return Ok(());
            }
            self.summary.devices += 1;
        }
        Self::set_names(&mut header, member.path, None, &mut rec);
        self.emit(header, rec, std::io::empty())
    }
}

/// Write inode `ino` of `fs` as a pax archive to `out`: a directory as `./` and its contents
/// relative to it, anything else as `name` (its base name). `progress(entries, bytes)` is called
/// as members are written. Per-entry trouble is in the summary; an error is returned when the
/// archive could not be written (it is then unusable).
pub fn write_tar<W: Write>(
    fs: &Filesystem,
    ino: u32,
    name: &[u8],
    out: W,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Summary> {
    let raw = fs.inode_raw(ino)?;
    let inode = Inode::parse(&raw);
    if inode.has_flag(ENCRYPT_FL) {
        return Err(Error::Invalid(format!(
            "inode {ino} is encrypted (fscrypt): its contents and names are ciphertext without the key; refusing to extract"
        )));
    }
    let mut writer = Writer {
        fs,
        builder: tar::Builder::new(out),
        names: load_names(fs),
        summary: Summary {
            not_restored: "",
            ..Summary::default()
        },
        linked: HashMap::new(),
        visited: Default::default(),
        progress,
        has_extra_times: fs.sb.inode_size() > 128,
        sockets: 0,
    };
    let top: &[u8] = if inode.is_dir() { b"" } else { name };
    writer.member(top, ino, 0)?;
    if writer.sockets > 0 {
        writer.summary.notes.push(format!(
            "{} sockets not archived: a tar archive has no member type for sockets (a socket is made by the program that listens on it)",
            writer.sockets
        ));
    }
    writer.builder.finish().map_err(write_err)?;
    let mut out = writer.builder.into_inner().map_err(write_err)?;
    out.flush().map_err(write_err)?;
    Ok(writer.summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pax_times_keep_nanoseconds_and_sign() {
        assert_eq!(pax_time(5, 7 << 2, true), "5.000000007");
        assert_eq!(pax_time(5, 0, true), "5");
        assert_eq!(pax_time(5, 7 << 2, false), "5");
        // -2 s + 0.5 s = -1.5 s
        assert_eq!(
            pax_time((-2i32) as u32, 500_000_000 << 2, true),
            "-1.500000000"
        );
        assert_eq!(
            pax_time((-1i32) as u32, 250_000_000 << 2, true),
            "-0.750000000"
        );
    }

    #[test]
    fn name_db_first_name_per_id() {
        let names =
            parse_name_db(b"root:x:0:0::/root:/bin/sh\n#c:x:5:\nalias:x:0:0\nbad\nu:x:1000:1000\n");
        assert_eq!(names.get(&0).map(String::as_str), Some("root"));
        assert_eq!(names.get(&1000).map(String::as_str), Some("u"));
        assert_eq!(names.len(), 2);
    }

    #[test]
    fn acl_text_uses_numeric_ids() {
        // version 2; USER_OBJ rw; USER 1000 r; GROUP_OBJ r; MASK r; OTHER none
        let mut disk = 1u32.to_le_bytes().to_vec();
        disk.extend_from_slice(&[1, 0, 6, 0]);
        disk.extend_from_slice(&[2, 0, 4, 0]);
        disk.extend_from_slice(&1000u32.to_le_bytes());
        disk.extend_from_slice(&[4, 0, 4, 0]);
        disk.extend_from_slice(&[0x10, 0, 4, 0]);
        disk.extend_from_slice(&[0x20, 0, 0, 0]);
        assert_eq!(
            acl_text(&disk).unwrap(),
            "user::rw-,user:1000:r--,group::r--,mask::r--,other::---"
        );
    }
}
