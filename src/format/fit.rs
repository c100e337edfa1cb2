//! Text of `e4inspect fit`: the placement of explicit attributes, the scanned image or tree per
//! inode size, and the profile catalogue; and the `fit --json` document types.

use super::json::SchemaVersion;
use super::table;
use crate::models::fit::{self, Aggregate, Attr, FitParams, FitResult, Location};
use crate::models::profiles;
use comfy_table::{Cell, CellAlignment};
use schemars::JsonSchema;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// One inode size: the explicit attributes placed, and the scanned tree or image counted.
#[derive(Serialize, JsonSchema)]
pub struct JsonResult {
    /// The explicit attributes (`--xattr`, `--profile`) placed in this inode size.
    #[serde(flatten)]
    pub fit: FitResult,
    /// The scanned tree or image at this inode size (`--from-dir`, `--from-image`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<fit::SizeStats>,
}

/// The `fit --json` document.
#[derive(Serialize, JsonSchema)]
pub struct JsonOut {
    /// Version of the JSON contract.
    pub schema_version: SchemaVersion,
    /// One result per inode size.
    pub results: Vec<JsonResult>,
    /// What was scanned, when a tree or image was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceSummary>,
}

/// What `--from-dir` or `--from-image` scanned.
#[derive(Serialize, JsonSchema)]
pub struct SourceSummary {
    /// `image` or `dir`.
    pub kind: &'static str,
    /// The image or directory scanned.
    pub path: PathBuf,
    /// Image: in-use inodes scanned, the count `xattrs` reports (slots of the initialised part
    /// of the inode tables whose inode-bitmap bit is set, reserved inodes included; the model
    /// counts the files among them: the root and linked inodes from `s_first_ino`, not EA
    /// inodes). Directory: files and directories read (each hard-linked inode once).
    pub inodes_scanned: u64,
    /// Scanned inodes that carry at least one xattr.
    pub inodes_with_xattrs: u64,
    /// Inodes or files that could not be read (skipped).
    pub unreadable: u64,
    /// The inode size the listing and savings are measured against.
    pub reference_inode_size: u32,
    /// Smallest inode size keeping every inode's xattrs in the inode.
    pub smallest_inode_size_for_100: Option<u32>,
    /// The same for 99% of the inodes with xattrs.
    pub smallest_inode_size_for_99: Option<u32>,
    /// The same for 90% of the inodes with xattrs.
    pub smallest_inode_size_for_90: Option<u32>,
    /// Image only: inodes whose observed placement the model reproduces at the image's own size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_agrees: Option<u64>,
    /// Files whose xattrs do not all stay in the inode at the reference size, biggest need first.
    pub files_not_all_in_inode: Vec<NamedFile>,
    /// External xattr blocks decoded (image: each distinct block once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xattr_blocks_decoded: Option<u64>,
    /// Distinct xattr sets placed (inodes sharing a block and in-inode entries are placed once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sets_evaluated: Option<u64>,
}

/// A file named in the listing.
#[derive(Serialize, JsonSchema, Clone)]
pub struct NamedFile {
    /// Inode number (images).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ino: Option<u32>,
    /// Path, when one was found.
    pub path: Option<String>,
    /// What the file needs (flattened into the entry).
    #[serde(flatten)]
    pub verdict: fit::SetVerdict,
}

/// The built-in profiles: one row per attribute with its size, in-inode cost (256-byte inode)
/// and source.
pub fn profile_table() -> table::Styled {
    let mut t = table::styled();
    t.set_header(vec![
        "profile",
        "attribute",
        "bytes",
        "in-inode cost",
        "source",
    ]);
    table::no_wrap(&mut t, &[1]);
    for p in profiles::PROFILES {
        for (i, a) in p.attrs.iter().enumerate() {
            let cost = fit::inode_cost(&FitParams::new(256), &Attr::new(a.name, a.value_size));
            t.add_row(vec![
                Cell::new(if i == 0 { p.name } else { "" }),
                Cell::new(a.name),
                Cell::new(a.value_size).set_alignment(CellAlignment::Right),
                Cell::new(cost).set_alignment(CellAlignment::Right),
                Cell::new(a.source),
            ]);
        }
    }
    t
}

/// The explicit attributes placed at each inode size, then one summary row per size.
pub fn write_explicit(out: &mut String, results: &[FitResult]) -> std::fmt::Result {
    for r in results {
        write_placements(out, r)?;
    }
    writeln!(out, "{}", explicit_table(results))
}

/// One inode size: its space, where each attribute goes (and why), and a better order if any.
fn write_placements(out: &mut String, r: &FitResult) -> std::fmt::Result {
    let inline = if r.inline_data_bytes > 0 {
        format!(" (system.data takes {})", r.inline_data_bytes)
    } else {
        String::new()
    };
    writeln!(
        out,
        "Inode size {} (extra isize {}, block size {}): {} bytes usable, {} needed, {} free{inline}",
        r.inode_size, r.extra_isize, r.block_size, r.usable_bytes, r.needed_bytes, r.free_bytes,
    )?;
    for p in &r.placements {
        let mut location = p.location.as_str().to_string();
        if let Some(entry) = p.entry_location {
            location.push_str(&format!(" (entry in {})", entry.as_str()));
        }
        writeln!(
            out,
            "  {:<32} {:>6} bytes  cost {:>5}  {}",
            p.name, p.value_size, p.inode_cost, location
        )?;
        if let Some(why) = &p.reason {
            writeln!(out, "    {why}")?;
        }
    }
    if let Some(better) = &r.better_order {
        writeln!(
            out,
            "  setting them in the order {} would keep {} in the inode",
            better.order.join(", "),
            better.in_inode
        )?;
    }
    writeln!(out)
}

/// One row per inode size: space and how many attributes go where.
fn explicit_table(results: &[FitResult]) -> table::Styled {
    let mut t = table::table(&[
        "inode size",
        "usable",
        "needed",
        "free",
        "in inode",
        "block",
        "ea_inode",
        "none",
        "all in inode",
    ]);
    for r in results {
        t.add_row(vec![
            right(r.inode_size),
            right(r.usable_bytes),
            right(r.needed_bytes),
            right(r.free_bytes),
            right(r.count(Location::Inode)),
            right(r.count(Location::Block)),
            right(r.count(Location::EaInode)),
            right(r.count(Location::None)),
            Cell::new(if r.all_in_inode { "yes" } else { "no" }),
        ]);
    }
    t
}

fn right(v: impl ToString) -> Cell {
    Cell::new(v.to_string()).set_alignment(CellAlignment::Right)
}

fn pct(n: u64, d: u64) -> String {
    if d == 0 {
        "-".into()
    } else {
        format!("{:.1}%", n as f64 * 100.0 / d as f64)
    }
}

/// The scanned image or tree: counts, one row per inode size, the smallest sizes and the
/// files named.
pub fn write_aggregate(out: &mut String, a: &Aggregate, s: &SourceSummary) -> std::fmt::Result {
    let unreadable = if s.unreadable > 0 {
        format!(", {} unreadable (skipped)", s.unreadable)
    } else {
        String::new()
    };
    writeln!(
        out,
        "{} {}: {} inodes scanned, {} with xattrs{unreadable}",
        s.kind,
        s.path.display(),
        s.inodes_scanned,
        s.inodes_with_xattrs,
    )?;
    if let Some(agrees) = s.model_agrees {
        writeln!(
            out,
            "model reproduces the on-disk placement for {agrees} of {} inodes with xattrs",
            s.inodes_with_xattrs
        )?;
    }
    writeln!(out, "{}", size_table(a, s.reference_inode_size))?;
    let show =
        |v: Option<u32>| v.map_or("none up to the block size".to_string(), |s| s.to_string());
    writeln!(
        out,
        "smallest inode size with all xattrs in-inode: 100% {}, 99% {}, 90% {}",
        show(s.smallest_inode_size_for_100),
        show(s.smallest_inode_size_for_99),
        show(s.smallest_inode_size_for_90)
    )?;
    write_named_files(out, s)
}

/// One row per inode size of the scanned population.
fn size_table(a: &Aggregate, reference_inode_size: u32) -> table::Styled {
    let saved = format!("block reads saved vs {reference_inode_size}");
    let mut t = table::table(&[
        "inode size",
        "usable",
        "all in inode",
        "share",
        "need block",
        "ea_inode",
        "cannot store",
        saved.as_str(),
    ]);
    for st in &a.sizes {
        t.add_row(vec![
            right(st.inode_size),
            right(st.usable_bytes),
            right(st.all_in_inode),
            right(pct(st.all_in_inode, st.inodes)),
            right(st.spill_to_block),
            right(st.use_ea_inode),
            right(st.not_stored),
            right(st.block_io_saved),
        ]);
    }
    t
}

/// The files whose xattrs do not all stay in the inode, biggest need first.
fn write_named_files(out: &mut String, s: &SourceSummary) -> std::fmt::Result {
    if s.files_not_all_in_inode.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "files not all in-inode at {} bytes, biggest need first:",
        s.reference_inode_size
    )?;
    for file in &s.files_not_all_in_inode {
        let verdict = &file.verdict;
        let mut why = Vec::new();
        if verdict.uses_block {
            why.push("block");
        }
        if verdict.ea_inode {
            why.push("EA inode");
        }
        if verdict.not_stored {
            why.push("does not fit");
        }
        writeln!(
            out,
            "  needs {:>4}  {:>6} bytes  [{}]  {}{}",
            verdict
                .smallest_all_in_inode
                .map_or("none".to_string(), |s| s.to_string()),
            verdict.needed_bytes,
            why.join(", "),
            file.path.as_deref().map_or_else(
                || "(no path found)".to_string(),
                |p| p.escape_debug().to_string()
            ),
            file.ino.map_or(String::new(), |i| format!(" (inode {i})"))
        )?;
    }
    Ok(())
}
