//! `debugfs -R "ls [-l] [-d] [-p] [-r] DIR"` output, byte for byte (e2fsprogs 1.47.0
//! `debugfs/ls.c`: `list_dir_proc`, `print_filename`), and a JSON view of the same entries.
//!
//! Names are escaped as debugfs does in the short and long forms (`M-` for bytes above 128, `^X`
//! for control bytes and DEL) and printed raw in the parseable form; names in an encrypted
//! directory show as `<encrypted (LEN)>` unless `-r`, except the first two entries.

use crate::format::json::{Mode, Named, Time};
use crate::reader::dir::{self, IterEntry};
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, Inode};
use schemars::JsonSchema;
use serde::Serialize;
use std::io::{self, Write};
use std::ops::ControlFlow;

/// The options of debugfs' `ls`.
#[derive(Clone, Copy, Debug, Default)]
pub struct LsOptions {
    /// `-l`: long listing.
    pub long: bool,
    /// `-d`: deleted entries too (shown in `<>`).
    pub deleted: bool,
    /// `-p`: parseable `/ino/mode/uid/gid/name/size/` lines.
    pub parse: bool,
    /// `-r`: raw names even in encrypted directories.
    pub raw: bool,
}

/// What went wrong besides the listing (debugfs prints these on stderr).
#[derive(Clone, Debug, Default)]
pub struct LsReport {
    /// Messages for entries whose inode could not be read (skipped, as debugfs skips them).
    pub stderr: Vec<String>,
    /// Why the directory walk ended early, if it did.
    pub error: Option<String>,
    /// True when it ended at bytes a metadata-only image does not hold ([`crate::Error::Absent`],
    /// named by `error`): not damage, and the listing is incomplete.
    pub absent: bool,
}

/// debugfs `print_filename` (1.47.0): control bytes, DEL and above, and `\\` as `\xNN`.
pub fn escape_name(name: &[u8]) -> Vec<u8> {
    let mut o = Vec::with_capacity(name.len());
    for &c in name {
        if !(32..127).contains(&c) || c == b'\\' {
            o.extend_from_slice(format!("\\x{c:02x}").as_bytes());
        } else {
            o.push(c);
        }
    }
    o
}

/// `%2d-%s-%4d %02d:%02d` of `secs` in local time, built from `ctime()`'s fields.
fn ls_date(secs: i64) -> String {
    let c = super::sys::ctime(secs);
    let f: Vec<&str> = c.split_whitespace().collect();
    let (Some(mon), Some(day), Some(hm), Some(year)) = (f.get(1), f.get(2), f.get(3), f.get(4))
    else {
        return " ".repeat(17);
    };
    format!("{day:>2}-{mon}-{year:>4} {}", hm.get(..5).unwrap_or(hm))
}

struct Lister<'a, W: Write + ?Sized> {
    fs: &'a Filesystem,
    opts: LsOptions,
    encrypted: bool,
    state: u32,
    col: usize,
    out: &'a mut W,
    report: LsReport,
    io_err: Option<io::Error>,
}

impl<W: Write + ?Sized> Lister<'_, W> {
    /// The entry's inode as debugfs reads it (`None` and a message when it cannot be read).
    fn read_inode(&mut self, ino: u32) -> Option<Inode> {
        match self.fs.read_inode_checked(ino, false) {
            Ok(raw) => Some(Inode::parse(&raw)),
            Err(m) => {
                self.report
                    .stderr
                    .push(format!("ls: {m} while reading inode {ino}"));
                None
            }
        }
    }

    fn name(&self, e: &IterEntry<'_>, raw: bool) -> Vec<u8> {
        if self.encrypted && !raw {
            format!("<encrypted ({})>", e.name_len).into_bytes()
        } else {
            escape_name(e.name)
        }
    }

    fn entry(&mut self, e: &IterEntry<'_>) -> io::Result<()> {
        let raw = self.opts.raw || self.state < 2;
        self.state = (self.state + 1).min(2);
        let (lbr, rbr) = if e.deleted { ('<', '>') } else { (' ', ' ') };
        let ino = if e.deleted { 0 } else { e.inode };
        let zero = Inode::parse(&[0u8; 128]);
        if self.opts.parse {
            let i = if ino != 0 {
                match self.read_inode(ino) {
                    Some(i) => i,
                    None => return Ok(()),
                }
            } else {
                zero
            };
            write!(
                self.out,
                "/{ino}/{:06o}/{}/{}/",
                i.mode, i.uid as i32, i.gid as i32
            )?;
            self.out.write_all(e.name)?;
            if i.is_dir() {
                self.out.write_all(b"//\n")?;
            } else {
                writeln!(self.out, "/{}/", i.size)?;
            }
        } else if self.opts.long {
            let (i, date) = if ino != 0 {
                match self.read_inode(ino) {
                    Some(i) => {
                        let d = ls_date(i64::from(i.mtime));
                        (i, d)
                    }
                    None => return Ok(()),
                }
            } else {
                (zero, " ".repeat(17))
            };
            write!(
                self.out,
                "{lbr}{ino:6}{rbr} {:6o} ({})  {:5}  {:5}   ",
                i.mode, e.file_type, i.uid as i32, i.gid as i32
            )?;
            if i.is_dir() {
                write!(self.out, "{:5}", i.size as u32 as i32)?;
            } else {
                write!(self.out, "{:5}", i.size)?;
            }
            write!(self.out, " {date} ")?;
            self.out.write_all(&self.name(e, raw))?;
            self.out.write_all(b"\n")?;
        } else {
            let tmp = format!("{lbr}{}{rbr} ({}) ", e.inode, e.rec_len_raw);
            let name = self.name(e, raw);
            let len = tmp.len() + 3 + name.len();
            if self.col + len > 80 {
                self.out.write_all(b"\n")?;
                self.col = 0;
            }
            self.out.write_all(tmp.as_bytes())?;
            self.out.write_all(&name)?;
            self.out.write_all(b"   ")?;
            self.col += len;
        }
        Ok(())
    }
}

/// List directory `ino` as debugfs' `ls` does, writing its stdout to `out`.
pub fn list(
    fs: &Filesystem,
    ino: u32,
    opts: LsOptions,
    out: &mut dyn Write,
) -> io::Result<LsReport> {
    let encrypted = fs
        .inode_raw(ino)
        .map(|r| Inode::parse(&r).has_flag(dir::ENCRYPT_FL))
        .unwrap_or(false);
    let mut l = Lister {
        fs,
        opts,
        encrypted,
        state: 0,
        col: 0,
        out,
        report: LsReport::default(),
        io_err: None,
    };
    let res = dir::iterate_dir(fs, ino, opts.deleted, &mut |e| match l.entry(&e) {
        Ok(()) => ControlFlow::Continue(()),
        Err(err) => {
            l.io_err = Some(err);
            ControlFlow::Break(())
        }
    });
    if let Some(e) = l.io_err.take() {
        return Err(e);
    }
    l.out.write_all(b"\n")?;
    if let Err(e) = res {
        l.report.absent = e.is_absent();
        l.report.error = Some(e.to_string());
    }
    Ok(l.report)
}

/// An inode time for JSON: with nanoseconds when the inode has the extra field.
fn time_json(secs: u32, extra: Option<u32>) -> Time {
    match extra {
        Some(x) => Time::with_nsec(inode::time_secs(secs, x), inode::time_nsec(x)),
        None => Time::with_nsec(i64::from(secs as i32), 0),
    }
}

/// `EXT2_FT_*` decoded.
pub fn file_type_name(ft: u8) -> &'static str {
    match ft {
        1 => "regular",
        2 => "directory",
        3 => "character device",
        4 => "block device",
        5 => "fifo",
        6 => "socket",
        7 => "symlink",
        0 => "unknown",
        _ => "invalid",
    }
}

/// One directory entry of `ls --json`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct LsEntry {
    /// The name (invalid UTF-8 replaced; see `name_bytes`).
    pub name: String,
    /// The name's bytes, when they are not valid UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_bytes: Option<Vec<u8>>,
    /// Inode number.
    pub inode: u32,
    /// The entry's file type (`EXT2_FT_*`).
    pub file_type: Named,
    /// `rec_len` as stored.
    pub rec_len: u16,
    /// A deleted entry (found in the slack of the one before it; `ls -d`).
    pub deleted: bool,
    /// What the entry's inode says (absent for deleted entries and unreadable inodes).
    #[serde(flatten)]
    pub inode_data: Option<LsInode>,
}

/// The fields of the inode a directory entry names.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct LsInode {
    /// File type from the mode.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `i_mode`.
    pub mode: Mode,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Hard links.
    pub links_count: u16,
    /// Size in bytes.
    pub size: u64,
    /// Access time.
    pub atime: Time,
    /// Modification time.
    pub mtime: Time,
    /// Change time.
    pub ctime: Time,
    /// Creation time (only with a large enough inode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crtime: Option<Time>,
}

fn entry_json(fs: &Filesystem, e: &IterEntry<'_>, report: &mut LsReport) -> LsEntry {
    let mut o = LsEntry {
        name: String::from_utf8_lossy(e.name).into_owned(),
        name_bytes: std::str::from_utf8(e.name)
            .is_err()
            .then(|| e.name.to_vec()),
        inode: e.inode,
        file_type: Named::new(e.file_type, file_type_name(e.file_type)),
        rec_len: e.rec_len_raw,
        deleted: e.deleted,
        inode_data: None,
    };
    if !e.deleted && e.inode != 0 {
        match fs.read_inode_checked(e.inode, true) {
            Ok(raw) => {
                let i = Inode::parse(&raw);
                let x = |f: u32| i.has_extra_field(f).then_some(());
                o.inode_data = Some(LsInode {
                    kind: i.type_name(),
                    mode: Mode::new(i.mode),
                    uid: i.uid,
                    gid: i.gid,
                    links_count: i.links_count,
                    size: i.size,
                    atime: time_json(i.atime, x(0x90).map(|_| i.atime_extra)),
                    mtime: time_json(i.mtime, x(0x8C).map(|_| i.mtime_extra)),
                    ctime: time_json(i.ctime, x(0x88).map(|_| i.ctime_extra)),
                    crtime: i
                        .has_extra_field(0x98)
                        .then(|| time_json(i.crtime, Some(i.crtime_extra))),
                });
            }
            Err(m) => report
                .stderr
                .push(format!("ls: {m} while reading inode {}", e.inode)),
        }
    }
    o
}

/// The entries of directory `ino` as JSON objects (name, inode, type, mode, size, times), in
/// the order `ls` lists them; deleted entries (with `deleted`) are marked and carry no inode data.
pub fn list_json(fs: &Filesystem, ino: u32, deleted: bool) -> (Vec<LsEntry>, LsReport) {
    let mut v = Vec::new();
    let mut report = LsReport::default();
    let res = dir::iterate_dir(fs, ino, deleted, &mut |e| {
        v.push(entry_json(fs, &e, &mut report));
        ControlFlow::Continue(())
    });
    if let Err(e) = res {
        report.absent = e.is_absent();
        report.error = Some(e.to_string());
    }
    (v, report)
}

/// An entry standing for a target that is not a directory (listed on its own, as ls(1) lists a
/// file operand; debugfs lists nothing there). `rec_len` is the minimal `EXT2_DIR_REC_LEN`.
fn single_entry<'a>(fs: &Filesystem, ino: u32, name: &'a [u8]) -> IterEntry<'a> {
    let mode = fs
        .inode_raw(ino)
        .map(|r| Inode::parse(&r).mode)
        .unwrap_or(0);
    let name = name.get(..255).unwrap_or(name);
    IterEntry {
        inode: ino,
        rec_len_raw: ((name.len() + 8 + 3) & !3) as u16,
        name_len: name.len() as u8,
        file_type: crate::reader::ondisk::inode::dirent_type_of_mode(mode),
        name,
        deleted: false,
        offset: 0,
    }
}

/// List a target that is not a directory as a single entry, in the chosen form.
pub fn list_single(
    fs: &Filesystem,
    ino: u32,
    name: &[u8],
    opts: LsOptions,
    out: &mut dyn Write,
) -> io::Result<LsReport> {
    let mut l = Lister {
        fs,
        opts,
        encrypted: false,
        state: 2,
        col: 0,
        out,
        report: LsReport::default(),
        io_err: None,
    };
    l.entry(&single_entry(fs, ino, name))?;
    l.out.write_all(b"\n")?;
    Ok(l.report)
}

/// [`list_single`] as JSON.
pub fn list_single_json(fs: &Filesystem, ino: u32, name: &[u8]) -> (Vec<LsEntry>, LsReport) {
    let mut report = LsReport::default();
    let v = vec![entry_json(fs, &single_entry(fs, ino, name), &mut report)];
    (v, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_escape_like_debugfs() {
        assert_eq!(escape_name(b"a\x1b[31m\n"), b"a\\x1b[31m\\x0a");
        assert_eq!(escape_name(b"\x7f\xc3\\ ~"), b"\\x7f\\xc3\\x5c ~");
    }
}
