//! debugfs `logdump` text for [`crate::views::logdump::Event`]s (debugfs/logdump.c, e2fsprogs 1.47.0).

use crate::format::dumpe2fs::list_journal;
use crate::reader::jbd2;
use crate::views::logdump::Event;
use std::io::{self, Write};

/// debugfs' type_to_name.
pub fn type_name(t: u32) -> &'static str {
    match t {
        jbd2::DESCRIPTOR_BLOCK => "descriptor block",
        jbd2::COMMIT_BLOCK => "commit block",
        jbd2::SUPERBLOCK_V1 => "V1 superblock",
        jbd2::SUPERBLOCK_V2 => "V2 superblock",
        jbd2::REVOKE_BLOCK => "revoke table",
        _ => "unrecognised type",
    }
}

/// do_hexdump: offset, four native-endian words, sixteen characters per line. Built in one
/// buffer per block (a `-a -c` dump of a busy journal is millions of lines).
pub fn hexdump(out: &mut dyn Write, buf: &[u8]) -> io::Result<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s: Vec<u8> = Vec::with_capacity(buf.len().div_ceil(16) * 72);
    let hex = |s: &mut Vec<u8>, v: u32, digits: u32| {
        for k in (0..digits).rev() {
            s.push(HEX[((v >> (4 * k)) & 0xF) as usize]);
        }
    };
    for (i, line) in buf.chunks(16).enumerate() {
        s.extend_from_slice(b"    ");
        let off = (i * 16) as u32;
        // %04x: at least four digits.
        let digits = (8 - off.leading_zeros() / 4).max(4);
        hex(&mut s, off, digits);
        s.extend_from_slice(b":  ");
        for w in 0..4 {
            let mut a = [0u8; 4];
            for (k, b) in a.iter_mut().enumerate() {
                *b = line.get(w * 4 + k).copied().unwrap_or(0);
            }
            hex(&mut s, u32::from_le_bytes(a), 8);
            s.push(b' ');
        }
        for k in 0..16 {
            let c = line.get(k).copied().unwrap_or(0);
            s.push(if (b' '..127).contains(&c) { c } else { b'.' });
        }
        s.push(b'\n');
    }
    out.write_all(&s)
}

/// Write one event as debugfs does. Read errors and stops go to `err` (debugfs' stderr).
pub fn write_event(out: &mut dyn Write, err: &mut dyn Write, e: &Event) -> io::Result<()> {
    match e {
        Event::ExternalHeader { .. }
        | Event::Superblock { .. }
        | Event::BadSuperblockMagic
        | Event::BadBlockSize { .. }
        | Event::Start { .. } => write_opening(out, e),
        Event::FcHead { .. }
        | Event::FcTail { .. }
        | Event::FcAddRange { .. }
        | Event::FcDelRange { .. }
        | Event::FcDentry { .. }
        | Event::FcInode { .. }
        | Event::FcPad => write_fast_commit(out, e),
        Event::ReadError { message } => writeln!(err, "logdump: {message}"),
        Event::Stopped { reason } => writeln!(err, "e4inspect: logdump stopped: {reason}"),
        _ => write_record(out, e),
    }
}

/// The lines before the walk: the external journal's ext2 header, the journal superblock, and
/// where the walk starts (or why it cannot).
fn write_opening(out: &mut dyn Write, e: &Event) -> io::Result<()> {
    match e {
        Event::ExternalHeader {
            uuid,
            blocksize,
            blocks_count,
            details,
        } => {
            writeln!(out, "Ext2 superblock header found.")?;
            if *details {
                writeln!(
                    out,
                    "\tuuid={}",
                    crate::reader::superblock::uuid_string(uuid)
                )?;
                writeln!(out, "\tblocksize={}", *blocksize as i32)?;
                writeln!(out, "\tjournal data size {blocks_count}")?;
            }
        }
        Event::Superblock {
            raw, fs_block_size, ..
        } => {
            let mut s = String::new();
            list_journal(raw, *fs_block_size, false, &mut s);
            out.write_all(s.as_bytes())?;
            writeln!(out)?;
        }
        Event::BadSuperblockMagic => writeln!(out, "Journal superblock magic number invalid!")?,
        Event::BadBlockSize { blocksize } => {
            writeln!(out, "Journal block size invalid: {blocksize} ({blocksize})")?
        }
        Event::Start { block, transaction } => writeln!(
            out,
            "Journal starts at block {block}, transaction {transaction}"
        )?,
        _ => {}
    }
    Ok(())
}

/// One step of the walk over the log: a block found (or the end), a descriptor's tags, a revoke
/// block's entries, and `-a`/`-b`/`-O` detail.
fn write_record(out: &mut dyn Write, e: &Event) -> io::Result<()> {
    match e {
        Event::NoMagic { block } => {
            writeln!(out, "No magic number at block {block}: end of journal.")?
        }
        Event::SequenceMismatch {
            found,
            expected,
            block,
        } => writeln!(
            out,
            "Found sequence {found} (not {expected}) at block {block}: end of journal."
        )?,
        Event::Block { quiet: true, .. } => {}
        Event::Block {
            sequence,
            blocktype,
            block,
            ..
        } => writeln!(
            out,
            "Found expected sequence {sequence}, type {blocktype} ({}) at block {block}",
            type_name(*blocktype)
        )?,
        Event::DescriptorDump { transaction, block } => writeln!(
            out,
            "Dumping descriptor block, sequence {transaction}, at block {block}:"
        )?,
        Event::Tag {
            fs_block,
            journal_block,
            flags,
            sequence,
            ..
        } => {
            write!(out, "  FS block {fs_block} logged at ")?;
            if let Some(s) = sequence {
                write!(out, "sequence {s}, ")?;
            }
            writeln!(out, "journal block {journal_block} (flags 0x{flags:x})")?;
        }
        Event::BitmapBit { block, set } => writeln!(
            out,
            "    (block bitmap for block {block}: block is {})",
            if *set { "SET" } else { "CLEAR" }
        )?,
        // Needs the filesystem (debugfs' internal_dump_inode): the CLI writes it.
        Event::InodeCopy { .. } => {}
        Event::Contents { data } => hexdump(out, data)?,
        Event::RevokeDump { transaction, block } => writeln!(
            out,
            "Dumping revoke block, sequence {transaction}, at block {block}:"
        )?,
        Event::RevokeCountInvalid { count } => {
            write!(out, "Revoke block's r_count invalid: {count}\u{8}")?
        }
        Event::Revoke { fs_block, at } => match at {
            None => writeln!(out, "  Revoke FS block {fs_block}")?,
            Some((block, seq)) => writeln!(
                out,
                "  Revoke FS block {fs_block} at block {block}, sequence {seq}"
            )?,
        },
        Event::UnexpectedType { blocktype, block } => {
            writeln!(out, "Unexpected block type {blocktype} at block {block}.")?
        }
        Event::AllRecords { count } => writeln!(out, "Dump all {count} journal records.")?,
        _ => {}
    }
    Ok(())
}

/// One tag of the fast-commit area, as debugfs' `journal.c` prints it (inode numbers and
/// lengths as signed ints, the way its `%d` formats show them).
fn write_fast_commit(out: &mut dyn Write, e: &Event) -> io::Result<()> {
    match e {
        Event::FcHead { features, tid } => {
            writeln!(out, "\n*** Fast Commit Area ***")?;
            writeln!(
                out,
                "tag HEAD, features 0x{features:x}, tid {}",
                *tid as i32
            )?;
        }
        Event::FcTail { tid } => writeln!(out, "tag TAIL, tid {}", *tid as i32)?,
        Event::FcAddRange {
            ino,
            lblk,
            pblk,
            len,
        } => writeln!(
            out,
            "tag ADD_RANGE, inode {}, lblk {lblk}, pblk {pblk}, len {len}",
            *ino as i32
        )?,
        Event::FcDelRange { ino, lblk, len } => writeln!(
            out,
            "tag DEL_RANGE, inode {}, lblk {}, len {}",
            *ino as i32, *lblk as i32, *len as i32
        )?,
        Event::FcDentry {
            tag,
            parent,
            ino,
            raw_name,
            ..
        } => {
            write!(
                out,
                "tag {}, parent {}, ino {}, name \"",
                jbd2::fc_tag_name(*tag),
                *parent as i32,
                *ino as i32
            )?;
            out.write_all(raw_name)?;
            writeln!(out, "\"")?;
        }
        Event::FcInode { ino } => writeln!(out, "tag INODE, inode {}", *ino as i32)?,
        Event::FcPad => writeln!(out, "tag PAD")?,
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn hexdump_lines() {
        let mut b = vec![0u8; 32];
        b[0..4].copy_from_slice(b"AB\x01C");
        b[16] = 0xFF;
        let mut out = Vec::new();
        super::hexdump(&mut out, &b).unwrap();
        let t = String::from_utf8(out).unwrap();
        assert_eq!(
            t,
            "    0000:  43014241 00000000 00000000 00000000 AB.C............\n    0010:  000000ff 00000000 00000000 00000000 ................\n"
        );
    }
}
