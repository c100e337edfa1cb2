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
    let mut escaped = Vec::with_capacity(name.len());
    for &byte in name {
        if !(32..127).contains(&byte) || byte == b'\\' {
            escaped.extend_from_slice(format!("\\x{byte:02x}").as_bytes());
        } else {
            escaped.push(byte);
        }
    }
    escaped
}

/// `%2d-%s-%4d %02d:%02d` of `secs` in local time, built from `ctime()`'s fields.
fn ls_date(secs: i64) -> String {
    let ctime_text = super::sys::ctime(secs);
    let fields: Vec<&str> = ctime_text.split_whitespace().collect();
    let (Some(mon), Some(day), Some(hm), Some(year)) =
        (fields.get(1), fields.get(2), fields.get(3), fields.get(4))
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

    fn name(&self, entry: &IterEntry<'_>, raw: bool) -> Vec<u8> {
        if self.encrypted && !raw {
            format!("<encrypted ({})>", entry.name_len).into_bytes()
        } else {
            escape_name(entry.name)
        }
    }

    fn entry(&mut self, entry: &IterEntry<'_>) -> io::Result<()> {
        let raw = self.opts.raw || self.state < 2;
        self.state = (self.state + 1).min(2);
        let (lbr, rbr) = if entry.deleted {
            ('<', '>')
        } else {
            (' ', ' ')
        };
        let ino = if entry.deleted { 0 } else { entry.inode };
        let zero = Inode::parse(&[0u8; 128]);
        if self.opts.parse {
            let inode = if ino != 0 {
                match self.read_inode(ino) {
                    Some(inode) => inode,
                    None => return Ok(()),
                }
            } else {
                zero
            };
            write!(
                self.out,
                "/{ino}/{:06o}/{}/{}/",
                inode.mode, inode.uid as i32, inode.gid as i32
            )?;
            self.out.write_all(entry.name)?;
            if inode.is_dir() {
                self.out.write_all(b"//\n")?;
            } else {
                writeln!(self.out, "/{}/", inode.size)?;
            }
        } else if self.opts.long {
            let (inode, date) = if ino != 0 {
                match self.read_inode(ino) {
                    Some(inode) => {
                        let mtime_text = ls_date(i64::from(inode.mtime));
                        (inode, mtime_text)
                    }
                    None => return Ok(()),
                }
            } else {
                (zero, " ".repeat(17))
            };
            write!(
                self.out,
                "{lbr}{ino:6}{rbr} {:6o} ({})  {:5}  {:5}   ",
                inode.mode, entry.file_type, inode.uid as i32, inode.gid as i32
            )?;
            if inode.is_dir() {
                write!(self.out, "{:5}", inode.size as u32 as i32)?;
            } else {
                write!(self.out, "{:5}", inode.size)?;
            }
            write!(self.out, " {date} ")?;
            self.out.write_all(&self.name(entry, raw))?;
            self.out.write_all(b"\n")?;
        } else {
            let tmp = format!("{lbr}{}{rbr} ({}) ", entry.inode, entry.rec_len_raw);
            let name = self.name(entry, raw);
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
    let mut lister = Lister {
        fs,
        opts,
        encrypted,
        state: 0,
        col: 0,
        out,
        report: LsReport::default(),
        io_err: None,
    };
    let res = dir::iterate_dir(
        fs,
        ino,
        opts.deleted,
        &mut |entry| match lister.entry(&entry) {
            Ok(()) => ControlFlow::Continue(()),
            Err(err) => {
                lister.io_err = Some(err);
                ControlFlow::Break(())
            }
        },
    );
    if let Some(error) = lister.io_err.take() {
        return Err(error);
    }
    lister.out.write_all(b"\n")?;
    if let Err(error) = res {
        lister.report.absent = error.is_absent();
        lister.report.error = Some(error.to_string());
    }
    Ok(lister.report)
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

fn entry_json(fs: &Filesystem, entry: &IterEntry<'_>, report: &mut LsReport) -> LsEntry {
    let mut ls_entry = LsEntry {
        name: String::from_utf8_lossy(entry.name).into_owned(),
        name_bytes: std::str::from_utf8(entry.name)
            .is_err()
            .then(|| entry.name.to_vec()),
        inode: entry.inode,
        file_type: Named::new(entry.file_type, file_type_name(entry.file_type)),
        rec_len: entry.rec_len_raw,
        deleted: entry.deleted,
        inode_data: None,
    };
    if !entry.deleted && entry.inode != 0 {
        match fs.read_inode_checked(entry.inode, true) {
            Ok(raw) => {
                let inode = Inode::parse(&raw);
                let with_extra = |offset: u32| inode.has_extra_field(offset).then_some(());
                ls_entry.inode_data = Some(LsInode {
                    kind: inode.type_name(),
                    mode: Mode::new(inode.mode),
                    uid: inode.uid,
                    gid: inode.gid,
                    links_count: inode.links_count,
                    size: inode.size,
                    atime: time_json(inode.atime, with_extra(0x90).map(|_| inode.atime_extra)),
                    mtime: time_json(inode.mtime, with_extra(0x8C).map(|_| inode.mtime_extra)),
                    ctime: time_json(inode.ctime, with_extra(0x88).map(|_| inode.ctime_extra)),
                    crtime: inode
                        .has_extra_field(0x98)
                        .then(|| time_json(inode.crtime, Some(inode.crtime_extra))),
                });
            }
            Err(m) => report
                .stderr
                .push(format!("ls: {m} while reading inode {}", entry.inode)),
        }
    }
    ls_entry
}

/// The entries of directory `ino` as JSON objects (name, inode, type, mode, size, times), in
/// the order `ls` lists them; deleted entries (with `deleted`) are marked and carry no inode data.
pub fn list_json(fs: &Filesystem, ino: u32, deleted: bool) -> (Vec<LsEntry>, LsReport) {
    let mut entries = Vec::new();
    let mut report = LsReport::default();
    let res = dir::iterate_dir(fs, ino, deleted, &mut |entry| {
        entries.push(entry_json(fs, &entry, &mut report));
        ControlFlow::Continue(())
    });
    if let Err(error) = res {
        report.absent = error.is_absent();
        report.error = Some(error.to_string());
    }
    (entries, report)
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
    let mut lister = Lister {
        fs,
        opts,
        encrypted: false,
        state: 2,
        col: 0,
        out,
        report: LsReport::default(),
        io_err: None,
    };
    lister.entry(&single_entry(fs, ino, name))?;
    lister.out.write_all(b"\n")?;
    Ok(lister.report)
}

/// [`list_single`] as JSON.
pub fn list_single_json(fs: &Filesystem, ino: u32, name: &[u8]) -> (Vec<LsEntry>, LsReport) {
    let mut report = LsReport::default();
    let entries = vec![entry_json(fs, &single_entry(fs, ino, name), &mut report)];
    (entries, report)
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
