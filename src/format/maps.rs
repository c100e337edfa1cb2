//! The text of `ncheck` and `icheck`: debugfs' own (`Inode\tPathname`, `Block\tInode number`),
//! byte for byte, and the `--explain` table that says what each block is.

use crate::reader::fs::Filesystem;
use crate::views::icheck::{BlockInfo, Found, Meta, MetaKind, Role};
use crate::views::ncheck::{Line, Report};
use std::io::{self, Write};

/// debugfs' `ncheck` stdout; the stderr lines are returned for the caller to print.
pub fn ncheck_text(report: &Report, out: &mut dyn Write) -> io::Result<Vec<String>> {
    let mut errors = Vec::new();
    if report.header {
        out.write_all(b"Inode\tPathname\n")?;
    }
    for l in &report.lines {
        match l {
            Line::Name {
                inode,
                path,
                bad_filetype,
                ..
            } => {
                write!(out, "{inode}\t")?;
                out.write_all(path)?;
                if *bad_filetype {
                    out.write_all(b"  <--- BAD FILETYPE")?;
                }
                out.write_all(b"\n")?;
            }
            Line::Error(e) => errors.push(e.clone()),
        }
    }
    Ok(errors)
}

/// debugfs' `icheck` stdout: `Block\tInode number` then one line per requested block, in the
/// order given (nothing when the scan failed first: the caller checks
/// [`Found::table_printed`]).
pub fn icheck_text(blocks: &[u64], found: &Found, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"Block\tInode number\n")?;
    for b in blocks {
        match found.owners.get(b) {
            Some(o) => writeln!(out, "{b}\t{}", o.inode)?,
            None => writeln!(out, "{b}\t<block not found>")?,
        }
    }
    Ok(())
}

/// How an owner reaches its block, in words.
pub fn role_text(inode: u32, role: &Role) -> String {
    match role {
        Role::XattrBlock => format!("extended attribute block of inode {inode}"),
        Role::Data { logical } => format!("data of inode {inode} (logical block {logical})"),
        Role::Indirect { level: 1 } => format!("indirect block of inode {inode}"),
        Role::Indirect { level: 2 } => format!("double indirect block of inode {inode}"),
        Role::Indirect { .. } => format!("triple indirect block of inode {inode}"),
        Role::ExtentTree => format!("extent tree block of inode {inode}"),
    }
}

/// A metadata role in words.
fn meta_text(m: &Meta) -> String {
    let g = m.group.map_or_else(String::new, |g| g.to_string());
    match m.kind {
        MetaKind::BootBlock => "boot block (before the superblock)".into(),
        MetaKind::Superblock => "primary superblock".into(),
        MetaKind::BackupSuperblock => format!("backup superblock (group {g})"),
        MetaKind::GroupDescriptors => format!("group descriptor table (group {g})"),
        MetaKind::BackupGroupDescriptors => {
            format!("backup group descriptor table (group {g})")
        }
        MetaKind::ReservedGdt => format!("reserved GDT block (group {g})"),
        MetaKind::BlockBitmap => format!("block bitmap of group {g}"),
        MetaKind::InodeBitmap => format!("inode bitmap of group {g}"),
        MetaKind::InodeTable => format!("inode table of group {g}"),
        MetaKind::Mmp => "MMP block".into(),
        MetaKind::BeyondEnd => "beyond the end of the filesystem".into(),
    }
}

/// What block `info` is, in words: its owner (with the journal named, and its paths), the
/// metadata it holds, or whether the bitmap has it free.
pub fn block_text(fs: &Filesystem, info: &BlockInfo, paths: &[String]) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(o) = &info.owner {
        let mut t = role_text(o.inode, &o.role);
        if info.journal {
            t = format!("internal journal: {t}");
        }
        if !paths.is_empty() {
            t = format!("{t}: {}", paths.join(", "));
        }
        parts.push(t);
    }
    parts.extend(info.metadata.iter().map(meta_text));
    if info.owner.is_none() && info.metadata.is_empty() {
        parts.push(match info.allocated {
            Some(false) => "free (not in use in the block bitmap)".to_string(),
            Some(true) => "in use in the block bitmap, but no inode reports it".to_string(),
            None => "unknown (its block bitmap could not be read)".to_string(),
        });
    }
    if fs.geo.cluster_bits > 0 && info.owner.is_none() {
        if let Some(true) = info.allocated {
            parts.push(format!(
                "its cluster ({} blocks) is in use",
                1u64 << fs.geo.cluster_bits
            ));
        }
    }
    parts.join("; ")
}
