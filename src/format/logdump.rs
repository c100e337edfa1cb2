//! debugfs `logdump` text for [`crate::views::logdump::Event`]s (debugfs/logdump.c, e2fsprogs 1.47.0).

use crate::format::dumpe2fs::list_journal;
use crate::reader::ondisk::journal as jbd2;
use crate::views::logdump::Event;
use std::io::{self, Write};

/// debugfs' type_to_name.
pub fn type_name(block_type: u32) -> &'static str {
    match block_type {
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
    let mut text: Vec<u8> = Vec::with_capacity(buf.len().div_ceil(16) * 72);
    let hex = |text: &mut Vec<u8>, value: u32, digits: u32| {
        for nibble in (0..digits).rev() {
            text.push(HEX[((value >> (4 * nibble)) & 0xF) as usize]);
        }
    };
    for (line_index, line) in buf.chunks(16).enumerate() {
        text.extend_from_slice(b"    ");
        let off = (line_index * 16) as u32;
        // %04x: at least four digits.
        let digits = (8 - off.leading_zeros() / 4).max(4);
        hex(&mut text, off, digits);
        text.extend_from_slice(b":  ");
        for word in 0..4 {
            let mut le_bytes = [0u8; 4];
            for (byte_index, byte) in le_bytes.iter_mut().enumerate() {
                *byte = line.get(word * 4 + byte_index).copied().unwrap_or(0);
            }
            hex(&mut text, u32::from_le_bytes(le_bytes), 8);
            text.push(b' ');
        }
        for column in 0..16 {
            let byte = line.get(column).copied().unwrap_or(0);
            text.push(if (b' '..127).contains(&byte) {
                byte
            } else {
                b'.'
            });
        }
        text.push(b'\n');
    }
    out.write_all(&text)
}

/// Write one event as debugfs does. Read errors and stops go to `err` (debugfs' stderr).
pub fn write_event(out: &mut dyn Write, err: &mut dyn Write, event: &Event) -> io::Result<()> {
    match event {
        Event::ExternalHeader { .. }
        | Event::Superblock { .. }
        | Event::BadSuperblockMagic
        | Event::BadBlockSize { .. }
        | Event::Start { .. } => write_opening(out, event),
        Event::FcHead { .. }
        | Event::FcTail { .. }
        | Event::FcAddRange { .. }
        | Event::FcDelRange { .. }
        | Event::FcDentry { .. }
        | Event::FcInode { .. }
        | Event::FcPad => write_fast_commit(out, event),
        Event::ReadError { message } => writeln!(err, "logdump: {message}"),
        Event::Stopped { reason } => writeln!(err, "e4inspect: logdump stopped: {reason}"),
        _ => write_record(out, event),
    }
}

/// The lines before the walk: the external journal's ext2 header, the journal superblock, and
/// where the walk starts (or why it cannot).
fn write_opening(out: &mut dyn Write, event: &Event) -> io::Result<()> {
    match event {
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
            let mut text = String::new();
            list_journal(raw, *fs_block_size, false, &mut text);
            out.write_all(text.as_bytes())?;
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
fn write_record(out: &mut dyn Write, event: &Event) -> io::Result<()> {
    match event {
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
            if let Some(seq) = sequence {
                write!(out, "sequence {seq}, ")?;
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
fn write_fast_commit(out: &mut dyn Write, event: &Event) -> io::Result<()> {
    match event {
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
        let mut block = vec![0u8; 32];
        block[0..4].copy_from_slice(b"AB\x01C");
        block[16] = 0xFF;
        let mut out = Vec::new();
        super::hexdump(&mut out, &block).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "    0000:  43014241 00000000 00000000 00000000 AB.C............\n    0010:  000000ff 00000000 00000000 00000000 ................\n"
        );
    }
}
