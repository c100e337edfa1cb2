//! `e4inspect inode IMAGE INODE|PATH...`: what `debugfs -R "stat <N>"` shows, then where every
//! xattr lives, the in-inode xattr space, checksums and anything found wrong.

use anyhow::Context;
use e4inspect::dir;
use e4inspect::extent::{ExtentItem, MapKind};
use e4inspect::fs::Filesystem;
use e4inspect::inode::{self, DataMap, Inode, XattrLocation};
use e4inspect::xattr;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Show inodes like `debugfs -R "stat <N>"`, with xattr locations and space.
#[derive(clap::Args, Debug, Clone)]
pub struct InodeArgs {
    /// Image file, partitioned disk image or block device (opened read-only).
    pub image: PathBuf,
    /// Inode numbers (`12` or `<12>`) or paths from the root (`/etc/passwd`).
    #[arg(required = true, value_name = "INODE|PATH")]
    pub targets: Vec<String>,
    /// Print a JSON array, one object per inode.
    #[arg(long)]
    pub json: bool,
    /// Where the filesystem lies inside the image.
    #[command(flatten)]
    pub source: super::SourceArgs,
}

/// `asctime()` of `secs` in the local time zone (TZ honoured), with the trailing newline.
pub fn ctime_string(secs: i64) -> String {
    e4inspect::os::ctime(secs).unwrap_or_else(|| "(invalid time)\n".into())
}

/// debugfs' print_c_string.
fn c_string(out: &mut String, b: &[u8]) {
    for &c in b {
        match c {
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            12 => out.push_str("\\f"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            11 => out.push_str("\\v"),
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            b'"' => out.push_str("\\\""),
            c if !(32..=126).contains(&c) => {
                let _ = write!(out, "\\{c:03o}");
            }
            c => out.push(c as char),
        }
    }
}

/// debugfs' value display in stat format: quoted when printable enough, else hex bytes.
fn xattr_value(out: &mut String, v: &[u8]) {
    let printable = v.iter().filter(|c| (32..=126).contains(*c)).count();
    if printable <= v.len() * 7 / 8 {
        for c in v {
            let _ = write!(out, "{c:02x} ");
        }
    } else {
        out.push('"');
        c_string(out, v);
        out.push('"');
    }
}

fn parse_target(fs: &Filesystem, t: &str) -> anyhow::Result<u32> {
    let digits = t
        .strip_prefix('<')
        .and_then(|s| s.strip_suffix('>'))
        .unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
        return digits
            .parse::<u32>()
            .with_context(|| format!("{t}: not an inode number"));
    }
    Ok(dir::resolve_path(fs, t)?)
}

/// Everything known about one inode, for both output forms.
struct Report<'a> {
    ino: u32,
    raw: &'a [u8],
    inode: Inode,
    xattrs: inode::InodeXattrs<'a>,
    map: DataMap,
    csum: Option<(u32, u32)>,
    /// The htree root of an indexed directory.
    htree: Option<dir::DxRoot>,
    problems: Vec<String>,
}

fn report<'a>(fs: &Filesystem, ino: u32, raw: &'a [u8]) -> e4inspect::Result<Report<'a>> {
    let inode = Inode::parse(raw);
    let xattrs = inode::inode_xattrs(fs, raw, &inode);
    let map = inode::data_map(fs, ino, &inode, xattrs.inline_data());
    let mut problems = xattrs.problems.clone();
    let csum = fs.sb.has_metadata_csum().then(|| {
        (
            inode::stored_checksum(raw),
            inode::inode_checksum(fs.csum_seed(), ino, raw),
        )
    });
    if fs.sb.has_metadata_csum() && !inode::inode_checksum_ok(fs.csum_seed(), ino, raw) {
        if let Some((s, c)) = csum {
            problems.push(format!("inode checksum 0x{s:08x}, should be 0x{c:08x}"));
        }
    }
    if raw.len() > 128 && 128 + usize::from(inode.extra_isize) > raw.len() {
        problems.push(format!(
            "i_extra_isize {} exceeds the {}-byte inode",
            inode.extra_isize,
            raw.len()
        ));
    }
    match &map {
        DataMap::Extents(w) => problems.extend(w.problems.iter().cloned()),
        DataMap::Blocks(w) => problems.extend(w.problems.iter().cloned()),
        DataMap::Unreadable(e) => problems.push(e.clone()),
        _ => {}
    }
    if inode.has_flag(inode::INLINE_DATA_FL) && xattrs.inline_data().is_none() {
        problems.push("INLINE_DATA flag set but no system.data attribute".into());
    }
    let mut htree = None;
    if inode.is_dir() && inode.has_flag(inode::INDEX_FL) {
        let root = dir::dir_blocks(fs, ino, &inode).and_then(|b| {
            let (_, p) = b
                .first()
                .filter(|(l, _)| *l == 0)
                .copied()
                .ok_or_else(|| e4inspect::Error::corrupt("no logical block 0"))?;
            dir::parse_dx_root(&fs.block(p)?)
        });
        match root {
            Ok(r) => htree = Some(r),
            Err(e) => problems.push(format!("htree root: {e}")),
        }
    }
    Ok(Report {
        ino,
        raw,
        inode,
        xattrs,
        map,
        csum,
        htree,
        problems,
    })
}

fn time_line(out: &mut String, label: &str, secs: u32, extra: Option<u32>) {
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
fn debugfs_text(fs: &Filesystem, r: &Report<'_>) -> String {
    let i = &r.inode;
    // Large-part fields as the record holds them: debugfs prints them whatever i_extra_isize says.
    let rec = &i.in_record;
    let large = r.raw.len() > 128;
    let extra = i.extra_isize;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Inode: {}   Type: {}    Mode:  0{:03o}   Flags: 0x{:x}",
        r.ino,
        i.type_name(),
        i.mode & 0o7777,
        i.flags
    );
    if large && extra >= 24 {
        // debugfs reads i_version_hi from the record even when i_extra_isize does not cover it.
        let _ = writeln!(
            o,
            "Generation: {}    Version: 0x{:08x}:{:08x}",
            i.generation, rec.version_hi, i.version
        );
    } else {
        let _ = writeln!(
            o,
            "Generation: {}    Version: 0x{:08x}",
            i.generation, i.version
        );
    }
    let _ = write!(o, "User: {:5}   Group: {:5}", i.uid as i32, i.gid as i32);
    if large && extra >= 32 {
        let _ = write!(o, "   Project: {:5}", rec.projid as i32);
    }
    if i.is_reg() || i.is_dir() {
        let _ = writeln!(o, "   Size: {}", i.size);
    } else {
        let _ = writeln!(o, "   Size: {}", i.size & 0xFFFF_FFFF);
    }
    let _ = writeln!(o, "File ACL: {}", i.file_acl);
    let _ = writeln!(o, "Links: {}   Blockcount: {}", i.links_count, i.blocks_raw);
    let _ = writeln!(
        o,
        "Fragment:  Address: {}    Number: 0    Size: 0",
        i.obso_faddr
    );
    if large && extra >= 24 {
        time_line(&mut o, " ctime", i.ctime, Some(rec.ctime_extra));
        time_line(&mut o, " atime", i.atime, Some(rec.atime_extra));
        time_line(&mut o, " mtime", i.mtime, Some(rec.mtime_extra));
        time_line(&mut o, "crtime", rec.crtime, Some(rec.crtime_extra));
        if i.dtime != 0 {
            let x = rec.ctime_extra;
            let _ = write!(
                o,
                " dtime: 0x{:08x}:({x:08x}) -- {}",
                i.dtime,
                ctime_string(inode::time_secs(i.dtime, x))
            );
        }
    } else {
        time_line(&mut o, "ctime", i.ctime, None);
        time_line(&mut o, "atime", i.atime, None);
        time_line(&mut o, "mtime", i.mtime, None);
        if i.dtime != 0 {
            time_line(&mut o, "dtime", i.dtime, None);
        }
    }
    if large {
        let _ = writeln!(o, "Size of extra inode fields: {extra}");
    }
    if !r.xattrs.items.is_empty() && r.xattrs.problems.is_empty() {
        o.push_str("Extended attributes:\n");
        for x in &r.xattrs.items {
            let _ = write!(o, "  {} ({})", x.name, x.value_size);
            if x.name != "system.data" && x.value_size != 0 && x.value_size < 40 {
                if let Some(v) = &x.value {
                    o.push_str(" = ");
                    xattr_value(&mut o, v);
                }
            }
            o.push('\n');
        }
    }
    if fs.sb.has_metadata_csum() {
        let mut c = u32::from(i.checksum_lo);
        if large && extra >= 2 {
            c |= u32::from(rec.checksum_hi) << 16;
        }
        let _ = writeln!(o, "Inode checksum: 0x{c:08x}");
    }
    let until_nul = |b: &[u8]| -> String {
        let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(b.get(..n).unwrap_or(&[])).into_owned()
    };
    match &r.map {
        DataMap::FastSymlink(t) | DataMap::InlineSymlink(t) => {
            let _ = writeln!(o, "Fast link dest: \"{}\"", until_nul(t));
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
        DataMap::Extents(w) => {
            o.push_str("EXTENTS:\n");
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
                o.push('\n');
            }
        }
        DataMap::Inline { size } => {
            let _ = writeln!(o, "Size of inline data: {size}");
        }
        DataMap::Blocks(w) => {
            o.push_str("BLOCKS:\n");
            let runs: Vec<String> = w
                .runs
                .iter()
                .map(|r| match r.kind {
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
                })
                .collect();
            o.push_str(&runs.join(", "));
            if w.total > 0 {
                let _ = writeln!(o, "\nTOTAL: {}", w.total);
            }
            o.push('\n');
        }
        DataMap::Unreadable(_) => {}
    }
    o
}

/// Our additions after the debugfs part.
fn details_text(fs: &Filesystem, r: &Report<'_>) -> String {
    let i = &r.inode;
    let mut o = String::from("Details:\n");
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
    let _ = writeln!(
        o,
        "  Blocks (512-byte units): {}",
        i.blocks_512(
            fs.sb
                .has_ro_compat(e4inspect::features::RO_COMPAT_HUGE_FILE),
            fs.block_size()
        )
    );
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
    if let Some(h) = &r.htree {
        let _ = writeln!(
            o,
            "  Htree: hash version {}, {} indirect levels, root index {}/{} entries",
            h.hash_version, h.indirect_levels, h.index.count, h.index.limit
        );
    }
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
            let _ = write!(
                o,
                "    {} [{}] {} {}",
                x.name, x.location, x.value_size, x.cost
            );
            if let Some(Ok(dv)) = x
                .value
                .as_deref()
                .and_then(|v| xattr::decode_value(&x.name, v))
            {
                let _ = write!(o, " {}", describe_decoded(&dv));
            }
            o.push('\n');
        }
    }
    if !r.problems.is_empty() {
        o.push_str("  Problems:\n");
        for p in &r.problems {
            let _ = writeln!(o, "    {p}");
        }
    }
    o
}

fn describe_decoded(d: &xattr::Decoded) -> String {
    match d {
        xattr::Decoded::PosixAcl { entries } => {
            let parts: Vec<String> = entries
                .iter()
                .map(|e| {
                    let p = format!(
                        "{}{}{}",
                        if e.perm & 4 != 0 { 'r' } else { '-' },
                        if e.perm & 2 != 0 { 'w' } else { '-' },
                        if e.perm & 1 != 0 { 'x' } else { '-' }
                    );
                    match e.id {
                        Some(id) => format!("{}:{id}:{p}", e.tag_name()),
                        None => format!("{}::{p}", e.tag_name()),
                    }
                })
                .collect();
            format!("acl {}", parts.join(","))
        }
        xattr::Decoded::Capability(c) => format!(
            "capability v{} permitted 0x{:x} inheritable 0x{:x}{}",
            c.version,
            c.permitted,
            c.inheritable,
            if c.effective { " effective" } else { "" }
        ),
        xattr::Decoded::Selinux(l) => format!("selinux {}", l.context),
    }
}

fn json_of(fs: &Filesystem, r: &Report<'_>) -> Value {
    let i = &r.inode;
    let xattrs: Vec<Value> = r
        .xattrs
        .items
        .iter()
        .map(|x| {
            let mut v = json!({
                "name": x.name,
                "value_size": x.value_size,
                "location": x.location.kind(),
                "bytes_used": x.cost,
            });
            match x.location {
                XattrLocation::Block(b) => v["block"] = json!(b),
                XattrLocation::EaInode(n) => v["ea_inode"] = json!(n),
                XattrLocation::Inode => {}
            }
            if let Some(Ok(dv)) = x
                .value
                .as_deref()
                .and_then(|val| xattr::decode_value(&x.name, val))
            {
                v["decoded"] = json!(dv);
            }
            v
        })
        .collect();
    let time = |s: u32, x: u32| json!({"sec": inode::time_secs(s, x), "nsec": inode::time_nsec(x), "raw": s, "extra": x});
    let data = match &r.map {
        DataMap::Extents(w) => json!({
            "kind": "extents",
            "depth": w.depth,
            "extents": w.leaves().map(|e| json!({"logical": e.logical, "len": e.len, "physical": e.physical, "uninit": e.uninit})).collect::<Vec<_>>(),
            "tree_blocks": w.nodes.iter().map(|n| json!({"block": n.block, "level": n.level, "depth": n.header.depth, "entries": n.header.entries, "max": n.header.max, "checksum_ok": n.csum.map(|c| c.ok())})).collect::<Vec<_>>(),
        }),
        DataMap::Blocks(w) => json!({
            "kind": "blocks",
            "total": w.total,
            "runs": w.runs.iter().map(|r| {
                let (kind, logical) = match r.kind {
                    MapKind::Data(l) => ("data", Some(l)),
                    MapKind::Ind => ("ind", None),
                    MapKind::Dind => ("dind", None),
                    MapKind::Tind => ("tind", None),
                };
                json!({"kind": kind, "logical": logical, "physical": r.physical, "len": r.len})
            }).collect::<Vec<_>>(),
        }),
        DataMap::Inline { size } => json!({"kind": "inline", "size": size}),
        DataMap::FastSymlink(t) => {
            json!({"kind": "fast_symlink", "target": String::from_utf8_lossy(t)})
        }
        DataMap::InlineSymlink(t) => {
            json!({"kind": "inline_symlink", "target": String::from_utf8_lossy(t.split(|&c| c == 0).next().unwrap_or(&[]))})
        }
        DataMap::Device {
            major,
            minor,
            new_style,
        } => json!({"kind": "device", "major": major, "minor": minor, "new_style": new_style}),
        DataMap::Unreadable(e) => json!({"kind": "unreadable", "error": e}),
    };
    json!({
        "ino": r.ino,
        "type": i.type_name(),
        "mode": i.mode,
        "uid": i.uid,
        "gid": i.gid,
        "size": i.size,
        "links_count": i.links_count,
        "flags": i.flag_names(),
        "flags_raw": i.flags,
        "generation": i.generation,
        "version": (u64::from(i.version_hi) << 32) | u64::from(i.version),
        "blocks_raw": i.blocks_raw,
        "blocks_512": i.blocks_512(fs.sb.has_ro_compat(e4inspect::features::RO_COMPAT_HUGE_FILE), fs.block_size()),
        "file_acl": i.file_acl,
        "extra_isize": i.extra_isize,
        "projid": i.projid,
        "atime": time(i.atime, i.atime_extra),
        "mtime": time(i.mtime, i.mtime_extra),
        "ctime": time(i.ctime, i.ctime_extra),
        "crtime": time(i.crtime, i.crtime_extra),
        "dtime": i.dtime,
        "checksum": r.csum.map(|(s, c)| json!({"stored": s, "computed": c, "ok": inode::inode_checksum_ok(fs.csum_seed(), r.ino, r.raw)})),
        "xattrs": xattrs,
        "xattr_space": {
            "inode_bytes_capacity": r.xattrs.inode_space.capacity,
            "inode_bytes_used": r.xattrs.inode_space.used,
            "inode_bytes_free": r.xattrs.inode_space.free,
            "block": r.xattrs.block.as_ref().map(|b| json!({
                "block": b.block, "refcount": b.refcount, "hash": b.hash,
                "bytes_capacity": b.space.capacity, "bytes_used": b.space.used, "bytes_free": b.space.free,
                "checksum_ok": b.checksum.map(|c| c.ok()), "sorted": b.sorted,
            })),
        },
        "data": data,
        "htree": r.htree.as_ref().map(|h| json!({"hash_version": h.hash_version, "indirect_levels": h.indirect_levels, "count": h.index.count, "limit": h.index.limit, "blocks": h.index.entries.iter().map(|e| e.1).collect::<Vec<_>>()})),
        "problems": r.problems,
    })
}

use super::emit;

/// Run the subcommand: 0 fine, 4 when any inode has problems, 8 when an inode could not be read.
pub fn run(args: InodeArgs) -> anyhow::Result<i32> {
    let opts = args.source.open_options();
    let fs = Filesystem::open(&args.image, &opts)
        .with_context(|| format!("{}", args.image.display()))?;
    let mut status = 0;
    let mut out = String::new();
    let mut js = Vec::new();
    for t in &args.targets {
        let raw = parse_target(&fs, t).and_then(|ino| Ok((ino, fs.inode_raw(ino)?)));
        let r = raw
            .as_ref()
            .map_err(|e| anyhow::anyhow!("{e:#}"))
            .and_then(|(ino, raw)| Ok(report(&fs, *ino, raw)?));
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                eprintln!("e4inspect: {}: {t}: {e:#}", args.image.display());
                status = 8;
                continue;
            }
        };
        if !r.problems.is_empty() && status == 0 {
            status = 4;
        }
        if args.json {
            js.push(json_of(&fs, &r));
        } else {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&debugfs_text(&fs, &r));
            out.push_str(&details_text(&fs, &r));
        }
    }
    if args.json {
        emit(&(serde_json::to_string_pretty(&js)? + "\n"))?;
    } else {
        emit(&out)?;
    }
    Ok(status)
}
