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
fn c_string(out: &mut String, b: &[u8]) {
    out.push_str(&super::escape::c_string(b));
}

/// debugfs' `print_xattr_string`: hex bytes unless more than 7/8 of them are printable, else a C
/// string (quoted unless `noquotes`).
fn xattr_string(out: &mut String, v: &[u8], quoted: bool) {
    let printable = v.iter().filter(|c| (32..=126).contains(*c)).count();
    if printable <= v.len() * 7 / 8 {
        for c in v {
            let _ = write!(out, "{c:02x} ");
        }
    } else {
        if quoted {
            out.push('"');
        }
        c_string(out, v);
        if quoted {
            out.push('"');
        }
    }
}

/// debugfs' value display in stat format: quoted when printable enough, else hex bytes.
fn xattr_value(out: &mut String, v: &[u8]) {
    xattr_string(out, v, true);
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
pub fn debugfs_text(fs: &Filesystem, r: &Report<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    debugfs_text_with(fs, r, "", true, out)
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
    let r =
        crate::views::inode::logged_report(fs, ino, copy, &disk).map_err(std::io::Error::other)?;
    debugfs_text_with(fs, &r, "    ", false, out)
}

/// The stat text with `prefix` where debugfs prints one, and the block list when `blocks`.
fn debugfs_text_with(
    fs: &Filesystem,
    r: &Report<'_>,
    p: &str,
    blocks: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut o: Vec<u8> = Vec::new();
    stat_identity(&mut o, r, p);
    stat_times(&mut o, r, p);
    if r.raw.len() > 128 {
        let _ = writeln!(o, "Size of extra inode fields: {}", r.inode.extra_isize);
    }
    stat_xattrs(&mut o, r);
    stat_checksum(&mut o, fs, r);
    stat_data_map(fs, r, p, blocks, &mut o, out)?;
    out.write_all(&o)
}

/// Number, type, mode, flags, generation, owner, size, ACL block, links and fragment.
fn stat_identity(o: &mut Vec<u8>, r: &Report<'_>, p: &str) {
    let i = &r.inode;
    // Large-part fields as the record holds them: debugfs prints them whatever i_extra_isize says.
    let rec = &i.in_record;
    let large = r.raw.len() > 128;
    let extra = i.extra_isize;
    let _ = writeln!(
        o,
        "{p}Inode: {}   Type: {}    {p}Mode:  0{:03o}   Flags: 0x{:x}",
        r.ino,
        i.type_name(),
        i.mode & 0o7777,
        i.flags
    );
    if large && extra >= 24 {
        // debugfs reads i_version_hi from the record even when i_extra_isize does not cover it.
        let _ = writeln!(
            o,
            "{p}Generation: {}    Version: 0x{:08x}:{:08x}",
            i.generation, rec.version_hi, i.version
        );
    } else {
        let _ = writeln!(
            o,
            "{p}Generation: {}    Version: 0x{:08x}",
            i.generation, i.version
        );
    }
    let _ = write!(o, "{p}User: {:5}   Group: {:5}", i.uid as i32, i.gid as i32);
    if large && extra >= 32 {
        let _ = write!(o, "   Project: {:5}", rec.projid as i32);
    }
    if i.is_reg() || i.is_dir() {
        let _ = writeln!(o, "   Size: {}", i.size);
    } else {
        let _ = writeln!(o, "   Size: {}", i.size & 0xFFFF_FFFF);
    }
    let _ = writeln!(o, "{p}File ACL: {}", i.file_acl);
    let _ = writeln!(
        o,
        "{p}Links: {}   Blockcount: {}",
        i.links_count, i.blocks_raw
    );
    let _ = writeln!(
        o,
        "{p}Fragment:  Address: {}    Number: 0    Size: 0",
        i.obso_faddr
    );
}

/// The ctime, atime, mtime (crtime on large inodes) and dtime lines.
fn stat_times(o: &mut Vec<u8>, r: &Report<'_>, p: &str) {
    let i = &r.inode;
    // Large-part fields as the record holds them: debugfs prints them whatever i_extra_isize says.
    let rec = &i.in_record;
    let large = r.raw.len() > 128;
    let extra = i.extra_isize;
    if large && extra >= 24 {
        time_line(o, &format!("{p} ctime"), i.ctime, Some(rec.ctime_extra));
        time_line(o, &format!("{p} atime"), i.atime, Some(rec.atime_extra));
        time_line(o, &format!("{p} mtime"), i.mtime, Some(rec.mtime_extra));
        time_line(o, &format!("{p}crtime"), rec.crtime, Some(rec.crtime_extra));
        if i.dtime != 0 {
            let x = rec.ctime_extra;
            let _ = write!(
                o,
                "{p} dtime: 0x{:08x}:({x:08x}) -- {}",
                i.dtime,
                ctime_string(inode::time_secs(i.dtime, x))
            );
        }
    } else {
        time_line(o, &format!("{p}ctime"), i.ctime, None);
        time_line(o, &format!("{p}atime"), i.atime, None);
        time_line(o, &format!("{p}mtime"), i.mtime, None);
        if i.dtime != 0 {
            time_line(o, &format!("{p}dtime"), i.dtime, None);
        }
    }
}

/// The extended attributes (names as debugfs builds them, short values shown).
fn stat_xattrs(o: &mut Vec<u8>, r: &Report<'_>) {
    if !r.xattrs.items.is_empty() && r.xattrs.problems.is_empty() {
        o.extend_from_slice(b"Extended attributes:\n");
        let same = r.debugfs_names.len() == r.xattrs.items.len();
        for (k, x) in r.xattrs.items.iter().enumerate() {
            let name = match r.debugfs_names.get(k) {
                Some(n) if same => n.as_slice(),
                _ => x.name.as_bytes(),
            };
            let mut t = String::from("  ");
            xattr_string(&mut t, name, false);
            let _ = write!(t, " ({})", x.value_size);
            if name != b"system.data" && x.value_size != 0 && x.value_size < 40 {
                if let Some(v) = &x.value {
                    t.push_str(" = ");
                    xattr_value(&mut t, v);
                }
            }
            t.push('\n');
            o.extend_from_slice(t.as_bytes());
        }
    }
}

/// The inode checksum on metadata_csum filesystems.
fn stat_checksum(o: &mut Vec<u8>, fs: &Filesystem, r: &Report<'_>) {
    let i = &r.inode;
    // Large-part fields as the record holds them: debugfs prints them whatever i_extra_isize says.
    let rec = &i.in_record;
    let large = r.raw.len() > 128;
    let extra = i.extra_isize;
    if fs.sb.has_metadata_csum() {
        let mut c = u32::from(i.checksum_lo);
        if large && extra >= 2 {
            c |= u32::from(rec.checksum_hi) << 16;
        }
        let _ = writeln!(o, "Inode checksum: 0x{c:08x}");
    }
}

/// The symlink target, device numbers, inline data size, or (with `blocks`) the extent or block
/// list.
fn stat_data_map(
    fs: &Filesystem,
    r: &Report<'_>,
    p: &str,
    blocks: bool,
    o: &mut Vec<u8>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let until_nul = |b: &[u8]| -> Vec<u8> {
        let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        b.get(..n).unwrap_or(&[]).to_vec()
    };
    match &r.map {
        DataMap::FastSymlink(t) | DataMap::InlineSymlink(t) => {
            // debugfs prints the target's bytes as they are.
            o.extend_from_slice(p.as_bytes());
            o.extend_from_slice(b"Fast link dest: \"");
            o.extend_from_slice(&until_nul(t));
            o.extend_from_slice(b"\"\n");
        }
        DataMap::Device {
            major,
            minor,
            new_style,
        } => {
            let _ = writeln!(
                o,
                "{}Device major/minor number: {major:02}:{minor:02} (hex {major:02x}:{minor:02x})",
                if *new_style { "(New-style) " } else { "" }
            );
        }
        _ if !blocks => {}
        DataMap::Extents(w) => extents_text(o, w),
        DataMap::Inline { size } => {
            let _ = writeln!(o, "Size of inline data: {size}");
        }
        DataMap::Blocks(w) => blocks_text(fs, r, w, o, out)?,
        DataMap::Unreadable(_) => {}
    }
    Ok(())
}

/// debugfs' EXTENTS list: index blocks as `(ETBn):b`, leaves as logical:physical ranges.
fn extents_text(o: &mut Vec<u8>, w: &crate::reader::extent::ExtentWalk) {
    o.extend_from_slice("EXTENTS:\n".as_bytes());
    let mut printed = false;
    for it in &w.items {
        let sep = if printed { ", " } else { "" };
        match it {
            ExtentItem::Index { level, child, .. } => {
                let _ = write!(o, "{sep}(ETB{level}):{child}");
            }
            ExtentItem::Leaf { extent: e, .. } => {
                if e.len == 0 {
                    continue;
                }
                let u = if e.uninit { "[u]" } else { "" };
                if e.len == 1 {
                    let _ = write!(o, "{sep}({}{u}):{}", e.logical, e.physical);
                } else {
                    let _ = write!(
                        o,
                        "{sep}({}-{}{u}):{}-{}",
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
        o.push(b'\n');
    }
}

/// debugfs' BLOCKS list and TOTAL; when too many runs were kept out of the report, the map is
/// walked again, writing to `out` as it goes.
fn blocks_text(
    fs: &Filesystem,
    r: &Report<'_>,
    w: &BlockMapWalk,
    o: &mut Vec<u8>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let i = &r.inode;
    o.extend_from_slice(b"BLOCKS:\n");
    if r.runs_omitted == 0 {
        let runs: Vec<String> = w.runs.iter().map(run_text).collect();
        o.extend_from_slice(runs.join(", ").as_bytes());
    } else {
        // Too many runs to hold: walk the map again, writing as we go.
        out.write_all(o)?;
        o.clear();
        let mut first = true;
        let mut err = None;
        fileblocks::walk_block_map(fs, &i.block, inode::walk_limits(fs, r.ino, i), &mut |e| {
            let sep = if first { "" } else { ", " };
            first = false;
            match write!(out, "{sep}{}", run_text(&map_run(e))) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    err = Some(e);
                    ControlFlow::Break(())
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
    }
    if w.total > 0 {
        let _ = write!(o, "\nTOTAL: {}\n", w.total);
    }
    o.push(b'\n');
    Ok(())
}

/// One entry of debugfs' BLOCKS list.
fn run_text(r: &MapRun) -> String {
    match r.kind {
        MapKind::Data(l) if r.len == 1 => format!("({l}):{}", r.physical),
        MapKind::Data(l) => format!(
            "({l}-{}):{}-{}",
            l + r.len - 1,
            r.physical,
            r.physical + r.len - 1
        ),
        MapKind::Ind => format!("(IND):{}", r.physical),
        MapKind::Dind => format!("(DIND):{}", r.physical),
        MapKind::Tind => format!("(TIND):{}", r.physical),
    }
}

/// Our additions after the debugfs part.
pub fn details_text(fs: &Filesystem, r: &Report<'_>) -> String {
    let mut o = String::from("Details:\n");
    details_flags_times_allocation(&mut o, fs, r);
    details_checksum_and_map(&mut o, fs, r);
    details_xattrs(&mut o, r);
    details_problems(&mut o, r);
    o
}

/// Flag names, times with nanoseconds, allocation in the bitmap, 512-byte block count.
fn details_flags_times_allocation(o: &mut String, fs: &Filesystem, r: &Report<'_>) {
    let i = &r.inode;
    let names = i.flag_names();
    let _ = writeln!(
        o,
        "  Flags: {}",
        if names.is_empty() {
            "(none)".into()
        } else {
            names.join(" ")
        }
    );
    if i.extra_isize >= 24 || r.raw.len() <= 128 {
        let t = |s: u32, x: u32| format!("{}.{:09}", inode::time_secs(s, x), inode::time_nsec(x));
        let _ = writeln!(
            o,
            "  Times (s.ns): atime {} mtime {} ctime {} crtime {}",
            t(i.atime, i.atime_extra),
            t(i.mtime, i.mtime_extra),
            t(i.ctime, i.ctime_extra),
            t(i.crtime, i.crtime_extra)
        );
    }
    match r.allocated {
        Some(false) => {
            let _ = writeln!(
                o,
                "  Allocation: UNALLOCATED (the inode bitmap marks inode {} free)",
                r.ino
            );
        }
        Some(true) => o.push_str("  Allocation: in use\n"),
        None => o.push_str("  Allocation: unknown (inode bitmap unreadable)\n"),
    }
    let _ = writeln!(
        o,
        "  Blocks (512-byte units): {}",
        i.blocks_512(
            fs.sb
                .has_ro_compat(crate::reader::features::RO_COMPAT_HUGE_FILE),
            fs.block_size()
        )
    );
}

/// Inode checksum, extent tree nodes, fragmentation and htree root.
fn details_checksum_and_map(o: &mut String, fs: &Filesystem, r: &Report<'_>) {
    if let Some((s, c)) = r.csum {
        let ok = inode::inode_checksum_ok(fs.csum_seed(), r.ino, r.raw);
        let _ = writeln!(
            o,
            "  Inode checksum: 0x{s:08x} {}",
            if ok {
                "ok".to_string()
            } else {
                format!("BAD (computed 0x{c:08x})")
            }
        );
    }
    if let DataMap::Extents(w) = &r.map {
        let _ = writeln!(
            o,
            "  Extent tree: depth {}, {} tree blocks, {} extents",
            w.depth,
            w.nodes.len(),
            w.leaves().count()
        );
        for n in &w.nodes {
            let _ = writeln!(
                o,
                "    block {} level {} depth {} entries {}/{}{}",
                n.block,
                n.level,
                n.header.depth,
                n.header.entries,
                n.header.max,
                match n.csum {
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
    if let Some(f) = &r.frag {
        let _ = writeln!(
            o,
            "  Fragmentation: {} extent{}, {} contiguous run{} (as filefrag counts), {} blocks",
            f.extents,
            if f.extents == 1 { "" } else { "s" },
            f.runs,
            if f.runs == 1 { "" } else { "s" },
            f.blocks
        );
    }
    if let Some(h) = &r.htree {
        let _ = writeln!(
            o,
            "  Htree: hash version {}, {} indirect levels, root index {}/{} entries",
            h.hash_version, h.indirect_levels, h.index.count, h.index.limit
        );
    }
}

/// In-inode and block xattr space, then each xattr with its location and cost.
fn details_xattrs(o: &mut String, r: &Report<'_>) {
    let sp = &r.xattrs.inode_space;
    let _ = writeln!(
        o,
        "  In-inode xattr space: {} bytes usable, {} used, {} free{}",
        sp.capacity,
        sp.used,
        sp.free,
        if r.xattrs.ibody_present {
            ""
        } else {
            " (no in-inode xattr area)"
        }
    );
    if let Some(b) = &r.xattrs.block {
        let _ = writeln!(
            o,
            "  Xattr block {}: refcount {}, hash 0x{:08x}, {} bytes usable, {} used, {} free{}",
            b.block,
            b.refcount,
            b.hash,
            b.space.capacity,
            b.space.used,
            b.space.free,
            match b.checksum {
                Some(c) if c.ok() => ", checksum ok".to_string(),
                Some(c) => format!(
                    ", checksum 0x{:08x} BAD (computed 0x{:08x})",
                    c.stored, c.computed
                ),
                None => String::new(),
            }
        );
    }
    if !r.xattrs.items.is_empty() {
        o.push_str("  Xattrs (name, location, value size, bytes used there):\n");
        for x in &r.xattrs.items {
            o.push_str("    ");
            c_string(o, x.name.as_bytes());
            let _ = write!(o, " [{}] {} {}", x.location, x.value_size, x.cost);
            match x
                .value
                .as_deref()
                .and_then(|v| xattr::decode_value(&x.name, v))
            {
                Some(Ok(dv)) => {
                    let _ = write!(o, " {}", describe_decoded(&dv));
                }
                // A value of a known format that does not decode says why (escaped: the
                // message may quote bytes of the value).
                Some(Err(e)) => {
                    o.push_str(" (not decoded: ");
                    c_string(o, e.to_string().as_bytes());
                    o.push(')');
                }
                None => {}
            }
            o.push('\n');
        }
    }
}

/// The problems found, escaped.
fn details_problems(o: &mut String, r: &Report<'_>) {
    if !r.problems.is_empty() {
        o.push_str("  Problems:\n");
        for p in &r.problems {
            o.push_str("    ");
            c_string(o, p.message.as_bytes());
            o.push('\n');
        }
    }
}

fn describe_decoded(d: &xattr::Decoded) -> String {
    match d {
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
