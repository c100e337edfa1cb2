//! `debugfs -R "stat <N>"` text for one inode (debugfs' `internal_dump_inode`, `dump_xattrs`,
//! `dump_extents` and `dump_blocks`), then what e4inspect adds: where every xattr lives, the
//! in-inode xattr space, checksums and anything found wrong; and the same as JSON.

use crate::reader::extent::{BlockMapWalk, ExtentItem, MapKind, MapRun};
use crate::reader::fileblocks;
use crate::reader::fs::Filesystem;
use crate::reader::inode::{self, DataMap};
use crate::reader::xattr;
use crate::views::inode::{map_run, Report};
use std::fmt::Write as _;
use std::io::Write;
use std::ops::ControlFlow;

/// `asctime()` of `secs` in the local time zone (TZ honoured), with the trailing newline.
fn ctime_string(secs: i64) -> String {
    super::sys::ctime_or(secs, "(invalid time)\n")
}

/// debugfs' print_c_string, appended to `out` ([`super::escape::c_string`]).
fn c_string(out: &mut String, bytes: &[u8]) {
    out.push_str(&super::escape::c_string(bytes));
}

/// debugfs' `print_xattr_string`: hex bytes unless more than 7/8 of them are printable, else a C
/// string (quoted unless `noquotes`).
fn xattr_string(out: &mut String, value: &[u8], quoted: bool) {
    let printable = value
        .iter()
        .filter(|byte| (32..=126).contains(*byte))
        .count();
    if printable <= value.len() * 7 / 8 {
        for byte in value {
            let _ = write!(out, "{byte:02x} ");
        }
    } else {
        if quoted {
            out.push('"');
        }
        c_string(out, value);
        if quoted {
            out.push('"');
        }
    }
}

/// debugfs' value display in stat format: quoted when printable enough, else hex bytes.
fn xattr_value(out: &mut String, value: &[u8]) {
    xattr_string(out, value, true);
}

fn time_line(out: &mut Vec<u8>, label: &str, secs: u32, extra: Option<u32>) {
    match extra {
        Some(x) => {
            let _ = write!(
                out,
                "{label}: 0x{secs:08x}:{x:08x} -- {}",
                ctime_string(inode::time_secs(secs, x))
            );
        }
        None => {
            let _ = write!(
                out,
                "{label}: 0x{secs:08x} -- {}",
                ctime_string(i64::from(secs as i32))
            );
        }
    }
}

/// The part debugfs prints, byte for byte.
pub fn debugfs_text(
    fs: &Filesystem,
    report: &Report<'_>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    debugfs_text_with(fs, report, "", true, out)
}

/// debugfs' `internal_dump_inode(out, "    ", ino, copy, 0)` for `logdump -i`: the inode record
/// `copy` (from a logged block) with each of debugfs' prefixed lines indented, the extended
/// attributes of the inode as the filesystem holds it now (debugfs reads them by number), and no
/// block list. Write errors pass through as they are (a closed pipe stays `BrokenPipe`); an
/// inode that cannot be reported is an `io::Error` wrapping the library error.
pub fn logdump_inode_text(
    fs: &Filesystem,
    ino: u32,
    copy: &[u8],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let disk = fs.inode_raw(ino).unwrap_or_default();
    let report =
        crate::views::inode::logged_report(fs, ino, copy, &disk).map_err(std::io::Error::other)?;
    debugfs_text_with(fs, &report, "    ", false, out)
}

/// The stat text with `prefix` where debugfs prints one, and the block list when `blocks`.
fn debugfs_text_with(
    fs: &Filesystem,
    report: &Report<'_>,
    prefix: &str,
    blocks: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut text: Vec<u8> = Vec::new();
    stat_identity(&mut text, report, prefix);
    stat_times(&mut text, report, prefix);
    if report.raw.len() > 128 {
        let _ = writeln!(
            text,
            "Size of extra inode fields: {}",
            report.inode.extra_isize
        );
    }
    stat_xattrs(&mut text, report);
    stat_checksum(&mut text, fs, report);
    stat_data_map(fs, report, prefix, blocks, &mut text, out)?;
    out.write_all(&text)
}

/// Number, type, mode, flags, generation, owner, size, ACL block, links and fragment.
fn stat_identity(text: &mut Vec<u8>, report: &Report<'_>, prefix: &str) {
    let inode = &report.inode;
    // Large-part fields as the record holds them: debugfs prints them whatever i_extra_isize says.
    let rec = &inode.in_record;
    let large = report.raw.len() > 128;
    let extra = inode.extra_isize;
    let _ = writeln!(
        text,
        "{prefix}Inode: {}   Type: {}    {prefix}Mode:  0{:03o}   Flags: 0x{:x}",
        report.ino,
        inode.type_name(),
        inode.mode & 0o7777,
        inode.flags
    );
    if large && extra >= 24 {
        // debugfs reads i_version_hi from the record even when i_extra_isize does not cover it.
        let _ = writeln!(
            text,
            "{prefix}Generation: {}    Version: 0x{:08x}:{:08x}",
            inode.generation, rec.version_hi, inode.version
        );
    } else {
        let _ = writeln!(
            text,
            "{prefix}Generation: {}    Version: 0x{:08x}",
            inode.generation, inode.version
        );
    }
    let _ = write!(
        text,
        "{prefix}User: {:5}   Group: {:5}",
        inode.uid as i32, inode.gid as i32
    );
    if large && extra >= 32 {
        let _ = write!(text, "   Project: {:5}", rec.projid as i32);
    }
    if inode.is_reg() || inode.is_dir() {
        let _ = writeln!(text, "   Size: {}", inode.size);
    } else {
        let _ = writeln!(text, "   Size: {}", inode.size & 0xFFFF_FFFF);
    }
    let _ = writeln!(text, "{prefix}File ACL: {}", inode.file_acl);
    let _ = writeln!(
        text,
        "{prefix}Links: {}   Blockcount: {}",
        inode.links_count, inode.blocks_raw
    );
    let _ = writeln!(
        text,
        "{prefix}Fragment:  Address: {}    Number: 0    Size: 0",
        inode.obso_faddr
    );
}

/// The ctime, atime, mtime (crtime on large inodes) and dtime lines.
fn stat_times(text: &mut Vec<u8>, report: &Report<'_>, prefix: &str) {
    let inode = &report.inode;
    // Large-part fields as the record holds them: debugfs prints them whatever i_extra_isize says.
    let rec = &inode.in_record;
    let large = report.raw.len() > 128;
    let extra = inode.extra_isize;
    if large && extra >= 24 {
        time_line(
            text,
            &format!("{prefix} ctime"),
            inode.ctime,
            Some(rec.ctime_extra),
        );
        time_line(
            text,
            &format!("{prefix} atime"),
            inode.atime,
            Some(rec.atime_extra),
        );
        time_line(
            text,
            &format!("{prefix} mtime"),
            inode.mtime,
            Some(rec.mtime_extra),
        );
        time_line(
            text,
            &format!("{prefix}crtime"),
            rec.crtime,
            Some(rec.crtime_extra),
        );
        if inode.dtime != 0 {
            let ctime_extra = rec.ctime_extra;
            let _ = write!(
                text,
                "{prefix} dtime: 0x{:08x}:({ctime_extra:08x}) -- {}",
                inode.dtime,
                ctime_string(inode::time_secs(inode.dtime, ctime_extra))
            );
        }
    } else {
        time_line(text, &format!("{prefix}ctime"), inode.ctime, None);
        time_line(text, &format!("{prefix}atime"), inode.atime, None);
        time_line(text, &format!("{prefix}mtime"), inode.mtime, None);
        if inode.dtime != 0 {
            time_line(text, &format!("{prefix}dtime"), inode.dtime, None);
        }
    }
}

/// The extended attributes (names as debugfs builds them, short values shown).
fn stat_xattrs(text: &mut Vec<u8>, report: &Report<'_>) {
    if !report.xattrs.items.is_empty() && report.xattrs.problems.is_empty() {
        text.extend_from_slice(b"Extended attributes:\n");
        let same = report.debugfs_names.len() == report.xattrs.items.len();
        for (item_index, item) in report.xattrs.items.iter().enumerate() {
            let name = match report.debugfs_names.get(item_index) {
                Some(n) if same => n.as_slice(),
                _ => item.name.as_bytes(),
            };
            let mut line = String::from("  ");
            xattr_string(&mut line, name, false);
            let _ = write!(line, " ({})", item.value_size);
            if name != b"system.data" && item.value_size != 0 && item.value_size < 40 {
                if let Some(value) = &item.value {
                    line.push_str(" = ");
                    xattr_value(&mut line, value);
                }
            }
            line.push('\n');
            text.extend_from_slice(line.as_bytes());
        }
    }
}

/// The inode checksum on metadata_csum filesystems.
fn stat_checksum(text: &mut Vec<u8>, fs: &Filesystem, report: &Report<'_>) {
    let inode = &report.inode;
    // Large-part fields as the record holds them: debugfs prints them whatever i_extra_isize says.
    let rec = &inode.in_record;
    let large = report.raw.len() > 128;
    let extra = inode.extra_isize;
    if fs.sb.has_metadata_csum() {
        let mut checksum = u32::from(inode.checksum_lo);
        if large && extra >= 2 {
            checksum |= u32::from(rec.checksum_hi) << 16;
        }
        let _ = writeln!(text, "Inode checksum: 0x{checksum:08x}");
    }
}

/// The symlink target, device numbers, inline data size, or (with `blocks`) the extent or block
/// list.
fn stat_data_map(
    fs: &Filesystem,
    report: &Report<'_>,
    prefix: &str,
    blocks: bool,
    text: &mut Vec<u8>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let until_nul = |bytes: &[u8]| -> Vec<u8> {
        let len = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
        bytes.get(..len).unwrap_or(&[]).to_vec()
    };
    match &report.map {
        DataMap::FastSymlink(t) | DataMap::InlineSymlink(t) => {
            // debugfs prints the target's bytes as they are.
            text.extend_from_slice(prefix.as_bytes());
            text.extend_from_slice(b"Fast link dest: \"");
            text.extend_from_slice(&until_nul(t));
            text.extend_from_slice(b"\"\n");
        }
        DataMap::Device {
            major,
            minor,
            new_style,
        } => {
            let _ = writeln!(
                text,
                "{}Device major/minor number: {major:02}:{minor:02} (hex {major:02x}:{minor:02x})",
                if *new_style { "(New-style) " } else { "" }
            );
        }
        _ if !blocks => {}
        DataMap::Extents(w) => extents_text(text, w),
        DataMap::Inline { size } => {
            let _ = writeln!(text, "Size of inline data: {size}");
        }
        DataMap::Blocks(w) => blocks_text(fs, report, w, text, out)?,
        DataMap::Unreadable(_) => {}
    }
    Ok(())
}

/// debugfs' EXTENTS list: index blocks as `(ETBn):b`, leaves as logical:physical ranges.
fn extents_text(text: &mut Vec<u8>, walk: &crate::reader::extent::ExtentWalk) {
    text.extend_from_slice("EXTENTS:\n".as_bytes());
    let mut printed = false;
    for it in &walk.items {
        let sep = if printed { ", " } else { "" };
        match it {
            ExtentItem::Index { level, child, .. } => {
                let _ = write!(text, "{sep}(ETB{level}):{child}");
            }
            ExtentItem::Leaf { extent: e, .. } => {
                if e.len == 0 {
                    continue;
                }
                let uninit = if e.uninit { "[u]" } else { "" };
                if e.len == 1 {
                    let _ = write!(text, "{sep}({}{uninit}):{}", e.logical, e.physical);
                } else {
                    let _ = write!(
                        text,
                        "{sep}({}-{}{uninit}):{}-{}",
                        e.logical,
                        u64::from(e.logical) + u64::from(e.len) - 1,
                        e.physical,
                        e.physical + u64::from(e.len) - 1
                    );
                }
            }
        }
        printed = true;
    }
    if printed {
        text.push(b'\n');
    }
}

/// debugfs' BLOCKS list and TOTAL; when too many runs were kept out of the report, the map is
/// walked again, writing to `out` as it goes.
fn blocks_text(
    fs: &Filesystem,
    report: &Report<'_>,
    walk: &BlockMapWalk,
    text: &mut Vec<u8>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let inode = &report.inode;
    text.extend_from_slice(b"BLOCKS:\n");
    if report.runs_omitted == 0 {
        let runs: Vec<String> = walk.runs.iter().map(run_text).collect();
        text.extend_from_slice(runs.join(", ").as_bytes());
    } else {
        // Too many runs to hold: walk the map again, writing as we go.
        out.write_all(text)?;
        text.clear();
        let mut first = true;
        let mut err = None;
        fileblocks::walk_block_map(
            fs,
            &inode.block,
            inode::walk_limits(fs, report.ino, inode),
            &mut |item| {
                let sep = if first { "" } else { ", " };
                first = false;
                match write!(out, "{sep}{}", run_text(&map_run(item))) {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(error) => {
                        err = Some(error);
                        ControlFlow::Break(())
                    }
                }
            },
        );
        if let Some(error) = err {
            return Err(error);
        }
    }
    if walk.total > 0 {
        let _ = write!(text, "\nTOTAL: {}\n", walk.total);
    }
    text.push(b'\n');
    Ok(())
}

/// One entry of debugfs' BLOCKS list.
fn run_text(run: &MapRun) -> String {
    match run.kind {
        MapKind::Data(l) if run.len == 1 => format!("({l}):{}", run.physical),
        MapKind::Data(l) => format!(
            "({l}-{}):{}-{}",
            l + run.len - 1,
            run.physical,
            run.physical + run.len - 1
        ),
        MapKind::Ind => format!("(IND):{}", run.physical),
        MapKind::Dind => format!("(DIND):{}", run.physical),
        MapKind::Tind => format!("(TIND):{}", run.physical),
    }
}

/// Our additions after the debugfs part.
pub fn details_text(fs: &Filesystem, report: &Report<'_>) -> String {
    let mut text = String::from("Details:\n");
    details_flags_times_allocation(&mut text, fs, report);
    details_checksum_and_map(&mut text, fs, report);
    details_xattrs(&mut text, report);
    details_problems(&mut text, report);
    text
}

/// Flag names, times with nanoseconds, allocation in the bitmap, 512-byte block count.
fn details_flags_times_allocation(text: &mut String, fs: &Filesystem, report: &Report<'_>) {
    let inode = &report.inode;
    let names = inode.flag_names();
    let _ = writeln!(
        text,
        "  Flags: {}",
        if names.is_empty() {
            "(none)".into()
        } else {
            names.join(" ")
        }
    );
    if inode.extra_isize >= 24 || report.raw.len() <= 128 {
        let stamp = |secs: u32, extra: u32| {
            format!(
                "{}.{:09}",
                inode::time_secs(secs, extra),
                inode::time_nsec(extra)
            )
        };
        let _ = writeln!(
            text,
            "  Times (s.ns): atime {} mtime {} ctime {} crtime {}",
            stamp(inode.atime, inode.atime_extra),
            stamp(inode.mtime, inode.mtime_extra),
            stamp(inode.ctime, inode.ctime_extra),
            stamp(inode.crtime, inode.crtime_extra)
        );
    }
    match report.allocated {
        Some(false) => {
            let _ = writeln!(
                text,
                "  Allocation: UNALLOCATED (the inode bitmap marks inode {} free)",
                report.ino
            );
        }
        Some(true) => text.push_str("  Allocation: in use\n"),
        None => text.push_str("  Allocation: unknown (inode bitmap unreadable)\n"),
    }
    let _ = writeln!(
        text,
        "  Blocks (512-byte units): {}",
        inode.blocks_512(
            fs.sb
                .has_ro_compat(crate::reader::features::RO_COMPAT_HUGE_FILE),
            fs.block_size()
        )
    );
}

/// Inode checksum, extent tree nodes, fragmentation and htree root.
fn details_checksum_and_map(text: &mut String, fs: &Filesystem, report: &Report<'_>) {
    if let Some((stored, computed)) = report.csum {
        let ok = inode::inode_checksum_ok(fs.csum_seed(), report.ino, report.raw);
        let _ = writeln!(
            text,
            "  Inode checksum: 0x{stored:08x} {}",
            if ok {
                "ok".to_string()
            } else {
                format!("BAD (computed 0x{computed:08x})")
            }
        );
    }
    if let DataMap::Extents(w) = &report.map {
        let _ = writeln!(
            text,
            "  Extent tree: depth {}, {} tree blocks, {} extents",
            w.depth,
            w.nodes.len(),
            w.leaves().count()
        );
        for node in &w.nodes {
            let _ = writeln!(
                text,
                "    block {} level {} depth {} entries {}/{}{}",
                node.block,
                node.level,
                node.header.depth,
                node.header.entries,
                node.header.max,
                match node.csum {
                    Some(c) if c.ok() => " checksum ok".to_string(),
                    Some(c) => format!(
                        " checksum 0x{:08x} BAD (computed 0x{:08x})",
                        c.stored, c.computed
                    ),
                    None => String::new(),
                }
            );
        }
    }
    if let Some(frag) = &report.frag {
        let _ = writeln!(
            text,
            "  Fragmentation: {} extent{}, {} contiguous run{} (as filefrag counts), {} blocks",
            frag.extents,
            if frag.extents == 1 { "" } else { "s" },
            frag.runs,
            if frag.runs == 1 { "" } else { "s" },
            frag.blocks
        );
    }
    if let Some(htree) = &report.htree {
        let _ = writeln!(
            text,
            "  Htree: hash version {}, {} indirect levels, root index {}/{} entries",
            htree.hash_version, htree.indirect_levels, htree.index.count, htree.index.limit
        );
    }
}

/// In-inode and block xattr space, then each xattr with its location and cost.
fn details_xattrs(text: &mut String, report: &Report<'_>) {
    let sp = &report.xattrs.inode_space;
    let _ = writeln!(
        text,
        "  In-inode xattr space: {} bytes usable, {} used, {} free{}",
        sp.capacity,
        sp.used,
        sp.free,
        if report.xattrs.ibody_present {
            ""
        } else {
            " (no in-inode xattr area)"
        }
    );
    if let Some(xattr_block) = &report.xattrs.block {
        let _ = writeln!(
            text,
            "  Xattr block {}: refcount {}, hash 0x{:08x}, {} bytes usable, {} used, {} free{}",
            xattr_block.block,
            xattr_block.refcount,
            xattr_block.hash,
            xattr_block.space.capacity,
            xattr_block.space.used,
            xattr_block.space.free,
            match xattr_block.checksum {
                Some(c) if c.ok() => ", checksum ok".to_string(),
                Some(c) => format!(
                    ", checksum 0x{:08x} BAD (computed 0x{:08x})",
                    c.stored, c.computed
                ),
                None => String::new(),
            }
        );
    }
    if !report.xattrs.items.is_empty() {
        text.push_str("  Xattrs (name, location, value size, bytes used there):\n");
        for item in &report.xattrs.items {
            text.push_str("    ");
            c_string(text, item.name.as_bytes());
            let _ = write!(
                text,
                " [{}] {} {}",
                item.location, item.value_size, item.cost
            );
            match item
                .value
                .as_deref()
                .and_then(|v| xattr::decode_value(&item.name, v))
            {
                Some(Ok(dv)) => {
                    let _ = write!(text, " {}", describe_decoded(&dv));
                }
                // A value of a known format that does not decode says why (escaped: the
                // message may quote bytes of the value).
                Some(Err(e)) => {
                    text.push_str(" (not decoded: ");
                    c_string(text, e.to_string().as_bytes());
                    text.push(')');
                }
                None => {}
            }
            text.push('\n');
        }
    }
}

/// The problems found, escaped.
fn details_problems(text: &mut String, report: &Report<'_>) {
    if !report.problems.is_empty() {
        text.push_str("  Problems:\n");
        for problem in &report.problems {
            text.push_str("    ");
            c_string(text, problem.message.as_bytes());
            text.push('\n');
        }
    }
}

fn describe_decoded(decoded: &xattr::Decoded) -> String {
    match decoded {
        xattr::Decoded::PosixAcl { entries } => describe_acl(entries),
        xattr::Decoded::Capability(c) => format!(
            "capability v{} permitted 0x{:x} inheritable 0x{:x}{}",
            c.version,
            c.permitted,
            c.inheritable,
            if c.effective { " effective" } else { "" }
        ),
        xattr::Decoded::Selinux(l) => format!("selinux {}", l.context),
        xattr::Decoded::Dosattrib(dos) => describe_dosattrib(dos),
        xattr::Decoded::Ntacl(ntacl) => describe_ntacl(ntacl),
        xattr::Decoded::Lma(l) => format!(
            "lma fid {} compat 0x{:x} incompat 0x{:x}",
            l.fid.text(),
            l.compat,
            l.incompat
        ),
        xattr::Decoded::Link(l) => {
            let links: Vec<String> = l
                .links
                .iter()
                .map(|k| format!("{}/{}", k.parent.text(), k.name))
                .collect();
            format!("link {}", links.join(" "))
        }
        xattr::Decoded::Lov(lov) => describe_lov(lov),
        xattr::Decoded::FilterFid(f) => {
            format!("fid parent {} stripe {}", f.parent.text(), f.stripe_index)
        }
        xattr::Decoded::Som(s) => format!(
            "som valid 0x{:x} size {} blocks {}",
            s.valid, s.size, s.blocks
        ),
    }
}

/// A POSIX ACL as `acl TAG:ID:rwx,...` (getfacl's short form; no id for the owner, group,
/// mask and other entries).
fn describe_acl(entries: &[xattr::AclEntry]) -> String {
    let parts: Vec<String> = entries
        .iter()
        .map(|entry| {
            let perms = format!(
                "{}{}{}",
                if entry.perm & 4 != 0 { 'r' } else { '-' },
                if entry.perm & 2 != 0 { 'w' } else { '-' },
                if entry.perm & 1 != 0 { 'x' } else { '-' }
            );
            match entry.id {
                Some(id) => format!("{}:{id}:{perms}", entry.tag_name()),
                None => format!("{}::{perms}", entry.tag_name()),
            }
        })
        .collect();
    format!("acl {}", parts.join(","))
}

/// Samba's DOS attributes: version, attribute bits (and their names), creation time.
fn describe_dosattrib(dos: &crate::reader::samba::DosAttrib) -> String {
    let mut text = format!("dosattrib v{} attrib 0x{:x}", dos.version, dos.attrib);
    if !dos.attrib_names.is_empty() {
        let _ = write!(text, " ({})", dos.attrib_names.join(","));
    }
    if let Some(utc) = dos
        .create_time
        .as_ref()
        .and_then(|time| time.utc.as_deref())
    {
        let _ = write!(text, " created {utc}");
    }
    text
}

/// Samba's NT ACL: version, hash type, and the security descriptor as SDDL (or why not).
fn describe_ntacl(ntacl: &crate::reader::samba::NtAcl) -> String {
    let mut text = format!("ntacl v{}", ntacl.version);
    if let Some(hash) = &ntacl.hash_type_name {
        let _ = write!(text, " hash {hash}");
    }
    match (&ntacl.sddl, &ntacl.sddl_error) {
        (Some(sddl), _) => {
            let _ = write!(text, " {sddl}");
        }
        (None, Some(error)) => {
            let _ = write!(text, " (no SDDL: {error})");
        }
        (None, None) => {}
    }
    text
}

/// A Lustre layout (`trusted.lov`): magic, generation, striping, pool, components, the OST
/// objects, and a foreign layout's type and value.
fn describe_lov(lov: &crate::reader::lustre::Lov) -> String {
    let mut text = format!("lov {} gen {}", lov.magic, lov.layout_gen);
    if let (Some(size), Some(count)) = (lov.stripe_size, lov.stripe_count) {
        let _ = write!(text, " stripe_size {size} stripe_count {count}");
    }
    if let Some(pool) = &lov.pool {
        let _ = write!(text, " pool {pool}");
    }
    if let Some(components) = &lov.components {
        let _ = write!(text, " components {}", components.len());
    }
    for object in &lov.objects {
        let _ = write!(
            text,
            " ost{}:{:#x}:{:#x}",
            object.ost_idx, object.seq, object.oid
        );
    }
    if let Some(foreign) = &lov.foreign {
        let kind = foreign
            .type_name
            .clone()
            .unwrap_or_else(|| format!("{:#x}", foreign.foreign_type));
        let _ = write!(text, " type {kind} flags 0x{:x} value ", foreign.flags);
        // The value comes from disk: escaped, or hex when it is not text.
        match &foreign.value {
            Some(value) => text.push_str(&super::escape::c_string(value.as_bytes())),
            None => {
                let _ = write!(text, "0x{}", foreign.value_hex);
            }
        }
    }
    text
}
