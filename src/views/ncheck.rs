//! Inode numbers to paths, as debugfs' `ncheck` finds them (`debugfs/ncheck.c`, e2fsprogs
//! 1.47.0), over the one parallel inode-table walk ([`crate::reader::walk`]).
//!
//! debugfs scans the inodes in order; for each live directory (links, no dtime) it iterates the
//! entries (`ext2fs_dir_iterate`, empty entries left out), skips the first two whatever they are,
//! and prints every entry naming a requested inode as the directory's path
//! (`ext2fs_get_pathname`, see [`crate::reader::pathname`]) + `/` + the name. It stops when as
//! many names were printed as the requested inodes have (1 per directory, `i_links_count` per
//! other inode, counted from the records read before the scan), checked after each entry from
//! the third on and after each directory; an inode whose checksum fails ends the scan with an
//! error.
//!
//! Here the directories are read by the walk's workers, in parallel; each keeps only the entries
//! that name a requested inode (and how many entries it walked, whether its walk failed). The
//! stopping rule is then replayed in inode order over what was found, so the text is what debugfs
//! prints. Memory: the matches, one record per directory that has some or failed.

use crate::error::{ext2_err, LibError};
use crate::reader::fs::Filesystem;
use crate::reader::inode::Inode;
use crate::reader::ondisk::inode::{
    dirent_type_of_mode, mode_is_dir, record_checksum_ok, InodeBase,
};
use crate::reader::pathname::{self, c_name, PathNamer};
use crate::reader::walk::{self, GroupEnd, TableVisitor};
use std::collections::HashMap;
use std::ops::ControlFlow;

/// An entry naming a requested inode.
#[derive(Clone, Debug)]
pub struct Match {
    /// Position of the entry among the directory's live entries (1-based).
    pub position: u32,
    /// The inode it names.
    pub inode: u32,
    /// Its name up to the first NUL (what `%.*s` prints).
    pub name: Vec<u8>,
    /// With `-c`: the entry's file type disagrees with the inode's mode (`  <--- BAD FILETYPE`).
    pub bad_filetype: bool,
    /// With `-c`: the named inode could not be read (debugfs' message).
    pub read_error: Option<String>,
}

/// What the walk of one directory found (kept only when it names a requested inode or failed).
#[derive(Clone, Debug)]
struct DirRecord {
    dir: u32,
    matches: Vec<Match>,
    /// Live entries visited.
    entries: u32,
    /// Why the walk of the directory failed (after `entries` entries).
    error: Option<String>,
    /// The inode of its last `..` entry (what naming the directory looks up first).
    dotdot: u32,
}

/// One event of the scan, in inode order.
#[derive(Clone, Debug)]
enum Event {
    Dir(DirRecord),
    /// `ext2fs_get_next_inode` failed at inode `ino`: the scan ends there.
    ScanError {
        ino: u32,
        error: String,
    },
}

/// Events, each with the number of directories walked cleanly (nothing found, no error) before it.
#[derive(Default)]
pub struct NcheckWorker {
    events: Vec<(u64, Event)>,
    /// Clean directories after the last event.
    trailing_clean: u64,
    /// A scan error was met: the rest of this worker's groups is not looked at.
    stopped: bool,
    /// Slots of the current group libext2fs returns (up to `bg_itable_unused`).
    group_used: u32,
    group_first: u32,
    group_table: u64,
}

impl NcheckWorker {
    fn push(&mut self, event: Event) {
        self.events
            .push((std::mem::take(&mut self.trailing_clean), event));
    }
}

/// The requested inodes, asked of every entry of every directory: a bit per inode number
/// modulo [`Wanted::FILTER_BITS`] answers most entries (not requested) without a search, the
/// sorted numbers the rest.
struct Wanted {
    filter: Vec<u64>,
    sorted: Vec<u32>,
}

impl Wanted {
    const FILTER_BITS: usize = 1 << 16;

    fn new(inodes: &[u32]) -> Wanted {
        let mut filter = vec![0u64; Wanted::FILTER_BITS / 64];
        let mut sorted = inodes.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        for &ino in &sorted {
            let bit = ino as usize % Wanted::FILTER_BITS;
            filter[bit / 64] |= 1 << (bit % 64);
        }
        Wanted { filter, sorted }
    }

    fn contains(&self, ino: u32) -> bool {
        let bit = ino as usize % Wanted::FILTER_BITS;
        self.filter[bit / 64] & (1 << (bit % 64)) != 0 && self.sorted.binary_search(&ino).is_ok()
    }
}

/// The walk's visitor: the requested inodes.
struct NcheckVisitor<'a> {
    fs: &'a Filesystem,
    wanted: Wanted,
    /// The bad blocks list (inodes in those inode-table blocks are skipped).
    bad: Vec<u64>,
    check_filetype: bool,
    csum: bool,
}

/// Slots of group `group` libext2fs' inode scan returns: up to `bg_itable_unused` with descriptor
/// checksums (none when it exceeds the group), every slot otherwise.
pub(crate) fn lib_slots(fs: &Filesystem, group: u32) -> u32 {
    let ipg = fs.geo.inodes_per_group;
    match fs.desc(group) {
        Ok(gd) if fs.sb.has_group_desc_csum() => ipg.saturating_sub(gd.itable_unused),
        _ => ipg,
    }
}

/// Most bad blocks read from the bad blocks inode.
const MAX_BAD_BLOCKS: usize = 1 << 20;

/// The bad blocks list as `ext2fs_read_bb_inode` reads it (the data blocks of inode 1 inside
/// the filesystem), sorted: libext2fs' inode scan skips the inodes of table blocks listed there
/// (`EXT2_ET_BAD_BLOCK_IN_INODE_TABLE`). Empty when it cannot be read.
pub(crate) fn bad_blocks(fs: &Filesystem) -> Vec<u64> {
    let Ok(raw) = fs.inode_raw(1) else {
        return Vec::new();
    };
    let inode = Inode::parse(&raw);
    let mut out = Vec::new();
    let (first, count) = (fs.geo.first_data_block, fs.geo.blocks_count);
    let _ = crate::reader::fileblocks::for_each_run(fs, 1, &inode, &mut |run| {
        for block in run.physical..run.physical.saturating_add(run.len) {
            if out.len() >= MAX_BAD_BLOCKS {
                return ControlFlow::Break(());
            }
            if block >= first && block < count {
                out.push(block);
            }
        }
        ControlFlow::Continue(())
    });
    out.sort_unstable();
    out.dedup();
    out
}

/// Slot `index` of the table at block `table` lies in a listed bad block.
pub(crate) fn in_bad_block(fs: &Filesystem, bad: &[u64], table: u64, index: u32) -> bool {
    if bad.is_empty() {
        return false;
    }
    let at = u64::from(index) * u64::from(fs.geo.inode_size) / fs.block_size().max(1);
    bad.binary_search(&table.saturating_add(at)).is_ok()
}

/// A group with inodes to scan whose descriptor names no inode table (block 0).
pub(crate) fn missing_table(fs: &Filesystem, group: u32) -> Option<String> {
    (fs.desc(group).ok()?.inode_table == 0).then(|| ext2_err::MISSING_INODE_TABLE.to_string())
}

/// `get_next_blockgroup`'s check: the group's inode table lies inside the filesystem.
pub(crate) fn table_error(fs: &Filesystem, group: u32) -> Option<String> {
    let table = fs.desc(group).ok()?.inode_table;
    let last = table.saturating_add(u64::from(fs.geo.inode_blocks_per_group).saturating_sub(1));
    (table != 0 && (table < fs.geo.first_data_block || last >= fs.geo.blocks_count))
        .then(|| ext2_err::GDESC_BAD_INODE_TABLE.to_string())
}

impl NcheckVisitor<'_> {
    fn walk_dir(&self, worker: &mut NcheckWorker, ino: u32, raw: &[u8]) {
        let inode = Inode::parse(raw);
        let mut rec = DirRecord {
            dir: ino,
            matches: Vec::new(),
            entries: 0,
            error: None,
            dotdot: 0,
        };
        let result = pathname::lib_dir_iterate_inode(self.fs, ino, raw, &inode, &mut |entry| {
            rec.entries += 1;
            if entry.name_len == 2 && entry.name.starts_with(b"..") {
                rec.dotdot = entry.inode;
            }
            if rec.entries > 2 && self.wanted.contains(entry.inode) {
                rec.matches.push(self.matched(
                    rec.entries,
                    entry.inode,
                    entry.name,
                    entry.file_type,
                ));
            }
            ControlFlow::Continue(())
        });
        if let Err(err) = result {
            rec.error = Some(err.to_string());
        }
        if rec.matches.is_empty() && rec.error.is_none() {
            worker.trailing_clean += 1;
        } else {
            worker.push(Event::Dir(rec));
        }
    }

    fn matched(&self, position: u32, inode: u32, name: &[u8], file_type: u8) -> Match {
        let mut found = Match {
            position,
            inode,
            name: c_name(name).to_vec(),
            bad_filetype: false,
            read_error: None,
        };
        if self.check_filetype && file_type != 0 {
            match self.fs.read_inode_checked(inode, false) {
                Ok(raw) => {
                    let mode = InodeBase::decode_fast(&raw).map_or(0, |b| b.mode);
                    found.bad_filetype = file_type != dirent_type_of_mode(mode);
                }
                Err(e) => found.read_error = Some(format!("{e} while reading inode {inode}")),
            }
        }
        found
    }
}

impl TableVisitor for NcheckVisitor<'_> {
    type Worker = NcheckWorker;
    fn worker(&self) -> NcheckWorker {
        NcheckWorker::default()
    }
    fn merge(&self, mut earlier: NcheckWorker, mut later: NcheckWorker) -> NcheckWorker {
        if earlier.stopped {
            return earlier;
        }
        match later.events.first_mut() {
            Some(first) => first.0 += earlier.trailing_clean,
            None => later.trailing_clean += earlier.trailing_clean,
        }
        earlier.events.append(&mut later.events);
        earlier.trailing_clean = later.trailing_clean;
        earlier.stopped = later.stopped;
        earlier
    }
    fn group_start(&self, worker: &mut NcheckWorker, group: u32, _slots: u32) {
        worker.group_first = group.saturating_mul(self.fs.geo.inodes_per_group) + 1;
        worker.group_used = lib_slots(self.fs, group);
        worker.group_table = self.fs.desc(group).map_or(0, |d| d.inode_table);
        if worker.stopped {
            return;
        }
        if let Some(err) = table_error(self.fs, group).or_else(|| missing_table(self.fs, group)) {
            worker.push(Event::ScanError {
                ino: worker.group_first,
                error: err,
            });
            worker.stopped = true;
        }
    }
    fn inode(&self, worker: &mut NcheckWorker, _group: u32, ino: u32, raw: &[u8]) {
        if worker.stopped || ino - worker.group_first >= worker.group_used {
            return;
        }
        if in_bad_block(
            self.fs,
            &self.bad,
            worker.group_table,
            ino - worker.group_first,
        ) {
            return;
        }
        if self.csum && !record_checksum_ok(self.fs.csum_seed(), ino, raw) {
            worker.push(Event::ScanError {
                ino,
                error: ext2_err::INODE_CSUM_INVALID.to_string(),
            });
            worker.stopped = true;
            return;
        }
        let Some(base) = InodeBase::decode_fast(raw) else {
            return;
        };
        if base.links_count == 0 || base.dtime != 0 || !mode_is_dir(base.mode) {
            return;
        }
        self.walk_dir(worker, ino, raw);
    }
    fn group_end(&self, worker: &mut NcheckWorker, group: u32, end: GroupEnd) {
        if worker.stopped {
            return;
        }
        let first = group.saturating_mul(self.fs.geo.inodes_per_group) + 1;
        let error = match end {
            GroupEnd::Read => None,
            GroupEnd::Empty => table_error(self.fs, group),
            GroupEnd::NoDescriptor => Some("cannot read the group descriptor".to_string()),
            GroupEnd::OutsideImage(m) | GroupEnd::Partial(m) => Some(m),
        };
        if let Some(error) = error {
            worker.push(Event::ScanError { ino: first, error });
            worker.stopped = true;
        }
    }
}

/// The inodes asked for, as debugfs reads them before its scan.
#[derive(Clone, Debug)]
pub struct Request {
    /// Inode numbers in the order given (repeats kept: debugfs prints a line per occurrence).
    pub inodes: Vec<u32>,
    /// `-c`: say where an entry's file type disagrees with the inode.
    pub check_filetype: bool,
}

/// Why the request was refused before the scan (debugfs prints nothing on stdout then).
#[derive(Clone, Debug, thiserror::Error)]
#[error("{error} while reading inode {inode}")]
pub struct RequestError {
    /// The inode that could not be read.
    pub inode: u32,
    /// libext2fs' error.
    pub error: LibError,
}

/// Names the requested inodes are expected to have: 1 per directory, `i_links_count` for any
/// other inode (debugfs' `names_left`).
pub fn names_expected(fs: &Filesystem, inodes: &[u32]) -> Result<i64, RequestError> {
    let mut expected = 0i64;
    for &ino in inodes {
        let raw = fs
            .read_inode_checked(ino, false)
            .map_err(|error| RequestError { inode: ino, error })?;
        let base = InodeBase::decode_fast(&raw).unwrap_or_default();
        expected += if mode_is_dir(base.mode) {
            1
        } else {
            i64::from(base.links_count)
        };
    }
    Ok(expected)
}

/// One line of ncheck's output (or of its stderr).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// `INO\tPATH[  <--- BAD FILETYPE]`: the path as bytes.
    Name {
        /// The inode.
        inode: u32,
        /// The directory holding the entry.
        dir: u32,
        /// The path as debugfs prints it (`//name` under the root).
        path: Vec<u8>,
        /// `-c` found the entry's file type wrong.
        bad_filetype: bool,
    },
    /// A message debugfs writes to stderr at this point.
    Error(String),
}

/// What `ncheck` prints.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The `Inode\tPathname` header is printed (not when the first inode cannot be read).
    pub header: bool,
    /// The lines in order.
    pub lines: Vec<Line>,
    /// The scan ended at an inode that could not be read (an error is among the lines).
    pub scan_failed: bool,
}

/// Run the walk: every directory record and scan error, in inode order.
fn scan(fs: &Filesystem, req: &Request) -> Vec<(u64, Event)> {
    let visitor = NcheckVisitor {
        fs,
        wanted: Wanted::new(&req.inodes),
        bad: bad_blocks(fs),
        check_filetype: req.check_filetype,
        csum: fs.sb.has_metadata_csum(),
    };
    walk::run(fs, &visitor, &|_| {}).map_or_else(Vec::new, |w| w.events)
}

/// debugfs' `ncheck [-c] INO...` over `fs`: `expected` is [`names_expected`] of the request.
pub fn ncheck(fs: &Filesystem, req: &Request, expected: i64) -> Report {
    let events = scan(fs, req);
    let mut mult: HashMap<u32, i64> = HashMap::new();
    for &ino in &req.inodes {
        *mult.entry(ino).or_default() += 1;
    }
    let mut report = Report {
        header: true,
        ..Report::default()
    };
    // Which entries print, replaying debugfs' stopping rule in inode order.
    let mut printed: Vec<(u32, Match)> = Vec::new();
    let mut stderr_after: Vec<(usize, String)> = Vec::new();
    let namer = PathNamer::new(fs);
    let mut left = expected;
    for (clean_before, ev) in events {
        if clean_before > 0 && left == 0 {
            break;
        }
        match ev {
            Event::ScanError { ino, error } => {
                report.header = ino != 1;
                let what = if ino == 1 { "starting" } else { "doing" };
                stderr_after.push((
                    printed.len(),
                    format!("ncheck: {error} while {what} inode scan"),
                ));
                report.scan_failed = true;
                break;
            }
            Event::Dir(rec) => {
                if rec.error.is_none() {
                    namer.seed_parent(rec.dir, rec.dotdot);
                }
                let aborted = replay_dir(&rec, &mult, &mut left, &mut printed);
                if !aborted {
                    if let Some(err) = &rec.error {
                        stderr_after.push((
                            printed.len(),
                            format!("ncheck: {err} while calling ext2_dir_iterate"),
                        ));
                        continue;
                    }
                    if left == 0 {
                        break;
                    }
                }
                if aborted && left == 0 {
                    break;
                }
            }
        }
    }
    report.lines = name_lines(&namer, printed, stderr_after, &mult);
    report
}

/// Replay one directory: push the matches debugfs prints; true when the walk was aborted
/// (every expected name printed, checked after each entry from the third on).
fn replay_dir(
    rec: &DirRecord,
    mult: &HashMap<u32, i64>,
    left: &mut i64,
    printed: &mut Vec<(u32, Match)>,
) -> bool {
    // An entry from the third on was checked with nothing left: the walk stopped there.
    let mut checked_third = false;
    for matched in &rec.matches {
        if *left == 0 && (checked_third || matched.position > 3) {
            return true;
        }
        *left -= mult.get(&matched.inode).copied().unwrap_or(0);
        printed.push((rec.dir, matched.clone()));
        checked_third = true;
        if *left == 0 {
            return true;
        }
    }
    // No match ended it: with nothing left, the third entry (if any) did.
    *left == 0 && rec.entries >= 3
}

/// The printed lines with their directories' paths, named in parallel.
fn name_lines(
    namer: &PathNamer<'_>,
    printed: Vec<(u32, Match)>,
    stderr_after: Vec<(usize, String)>,
    mult: &HashMap<u32, i64>,
) -> Vec<Line> {
    use rayon::prelude::*;
    let mut dirs: Vec<u32> = printed.iter().map(|(d, _)| *d).collect();
    dirs.sort_unstable();
    dirs.dedup();
    let paths: HashMap<u32, Result<Vec<u8>, LibError>> = dirs
        .par_iter()
        .map(|&d| (d, namer.pathname(d, 0)))
        .collect();
    let mut lines = Vec::new();
    let mut errs = stderr_after.into_iter().peekable();
    let mut failed_named: std::collections::HashSet<u32> = Default::default();
    for (index, (dir, matched)) in printed.into_iter().enumerate() {
        while let Some((_, err_line)) = errs.next_if(|(at, _)| *at <= index) {
            lines.push(Line::Error(err_line));
        }
        let parent = match paths.get(&dir) {
            Some(Ok(p)) => Some(p.clone()),
            Some(Err(e)) => {
                if failed_named.insert(dir) {
                    lines.push(Line::Error(format!(
                        "ncheck: {e} while calling ext2fs_get_pathname for inode #{dir}"
                    )));
                }
                None
            }
            None => None,
        };
        let mut path = parent.unwrap_or_else(|| format!("<{dir}>").into_bytes());
        path.push(b'/');
        path.extend_from_slice(&matched.name);
        for _ in 0..mult.get(&matched.inode).copied().unwrap_or(0) {
            if let Some(read_error) = &matched.read_error {
                lines.push(Line::Error(format!("ncheck: {read_error}")));
            }
            lines.push(Line::Name {
                inode: matched.inode,
                dir,
                path: path.clone(),
                bad_filetype: matched.bad_filetype,
            });
        }
    }
    lines.extend(errs.map(|(_, e)| Line::Error(e)));
    lines
}

/// Every name of each requested inode (the JSON view): the whole scan, no early stop. Paths are
/// whole (`/name` under the root, not debugfs' `//name`).
pub fn all_paths(fs: &Filesystem, inodes: &[u32]) -> AllPaths {
    use rayon::prelude::*;
    let req = Request {
        inodes: inodes.to_vec(),
        check_filetype: false,
    };
    let mut out = AllPaths::default();
    if inodes.contains(&crate::reader::dir::ROOT_INO) {
        // No entry names the root past the first two of a directory: it is `/`.
        out.paths
            .insert(crate::reader::dir::ROOT_INO, vec!["/".to_string()]);
    }
    let mut found: Vec<(u32, Match)> = Vec::new();
    let namer = PathNamer::new(fs);
    for (_, ev) in scan(fs, &req) {
        match ev {
            Event::ScanError { ino, error } => {
                out.problems.push(format!("inode {ino}: {error}"));
                break;
            }
            Event::Dir(rec) => {
                match &rec.error {
                    Some(e) => out.problems.push(format!("directory {}: {e}", rec.dir)),
                    None => namer.seed_parent(rec.dir, rec.dotdot),
                }
                found.extend(rec.matches.into_iter().map(|m| (rec.dir, m)));
            }
        }
    }
    let mut dirs: Vec<u32> = found.iter().map(|(d, _)| *d).collect();
    dirs.sort_unstable();
    dirs.dedup();
    let paths: HashMap<u32, Result<Vec<u8>, LibError>> = dirs
        .par_iter()
        .map(|&d| (d, namer.pathname(d, 0)))
        .collect();
    for (dir, matched) in found {
        let mut path = match paths.get(&dir) {
            Some(Ok(path)) if path.as_slice() == b"/" => Vec::new(),
            Some(Ok(path)) => path.clone(),
            _ => format!("<{dir}>").into_bytes(),
        };
        path.push(b'/');
        path.extend_from_slice(&matched.name);
        out.paths
            .entry(matched.inode)
            .or_default()
            .push(String::from_utf8_lossy(&path).into_owned());
    }
    out
}

/// Every path of the inodes asked for.
#[derive(Clone, Debug, Default)]
pub struct AllPaths {
    /// Inode -> its paths, in scan order.
    pub paths: HashMap<u32, Vec<String>>,
    /// What stopped or hampered the scan.
    pub problems: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::Wanted;

    #[test]
    fn wanted_finds_exactly_the_requested_inodes() {
        let asked = [12, 12 + (1 << 16), 70_000, u32::MAX];
        let wanted = Wanted::new(&asked);
        for ino in asked {
            assert!(wanted.contains(ino), "{ino}");
        }
        // On the filter bit of a requested inode, or on none: not requested.
        for ino in [13, 12 + (2 << 16), 70_001, u32::MAX - 1, 0] {
            assert!(!wanted.contains(ino), "{ino}");
        }
    }
}
