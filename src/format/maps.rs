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
    for line in &report.lines {
        match line {
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
    for block in blocks {
        match found.owners.get(block) {
            Some(owner) => writeln!(out, "{block}\t{}", owner.inode)?,
            None => writeln!(out, "{block}\t<block not found>")?,
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
fn meta_text(meta: &Meta) -> String {
    let group_text = meta
        .group
        .map_or_else(String::new, |group| group.to_string());
    match meta.kind {
        MetaKind::BootBlock => "boot block (before the superblock)".into(),
        MetaKind::Superblock => "primary superblock".into(),
        MetaKind::BackupSuperblock => format!("backup superblock (group {group_text})"),
        MetaKind::GroupDescriptors => format!("group descriptor table (group {group_text})"),
        MetaKind::BackupGroupDescriptors => {
            format!("backup group descriptor table (group {group_text})")
        }
        MetaKind::ReservedGdt => format!("reserved GDT block (group {group_text})"),
        MetaKind::BlockBitmap => format!("block bitmap of group {group_text}"),
        MetaKind::InodeBitmap => format!("inode bitmap of group {group_text}"),
        MetaKind::InodeTable => format!("inode table of group {group_text}"),
        MetaKind::Mmp => "MMP block".into(),
        MetaKind::BeyondEnd => "beyond the end of the filesystem".into(),
    }
}

/// What block `info` is, in words: its owner (with the journal named, and its paths), the
/// metadata it holds, or whether the bitmap has it free.
pub fn block_text(fs: &Filesystem, info: &BlockInfo, paths: &[String]) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(owner) = &info.owner {
        let mut text = role_text(owner.inode, &owner.role);
        if info.journal {
            text = format!("internal journal: {text}");
        }
        if !paths.is_empty() {
            text = format!("{text}: {}", paths.join(", "));
        }
        parts.push(text);
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
