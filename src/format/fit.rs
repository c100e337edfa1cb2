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
    let mut grid = table::styled();
    grid.set_header(vec![
        "profile",
        "attribute",
        "bytes",
        "in-inode cost",
        "source",
    ]);
    table::no_wrap(&mut grid, &[1]);
    for profile in profiles::PROFILES {
        for (index, attr) in profile.attrs.iter().enumerate() {
            let cost =
                fit::inode_cost(&FitParams::new(256), &Attr::new(attr.name, attr.value_size));
            grid.add_row(vec![
                Cell::new(if index == 0 { profile.name } else { "" }),
                Cell::new(attr.name),
                Cell::new(attr.value_size).set_alignment(CellAlignment::Right),
                Cell::new(cost).set_alignment(CellAlignment::Right),
                Cell::new(attr.source),
            ]);
        }
    }
    grid
}

/// The explicit attributes placed at each inode size, then one summary row per size.
pub fn write_explicit(out: &mut String, results: &[FitResult]) -> std::fmt::Result {
    for result in results {
        write_placements(out, result)?;
    }
    writeln!(out, "{}", explicit_table(results))
}

/// One inode size: its space, where each attribute goes (and why), and a better order if any.
fn write_placements(out: &mut String, result: &FitResult) -> std::fmt::Result {
    let inline = if result.inline_data_bytes > 0 {
        format!(" (system.data takes {})", result.inline_data_bytes)
    } else {
        String::new()
    };
    writeln!(
        out,
        "Inode size {} (extra isize {}, block size {}): {} bytes usable, {} needed, {} free{inline}",
        result.inode_size, result.extra_isize, result.block_size, result.usable_bytes, result.needed_bytes, result.free_bytes,
    )?;
    for placement in &result.placements {
        let mut location = placement.location.as_str().to_string();
        if let Some(entry) = placement.entry_location {
            location.push_str(&format!(" (entry in {})", entry.as_str()));
        }
        writeln!(
            out,
            "  {:<32} {:>6} bytes  cost {:>5}  {}",
            placement.name, placement.value_size, placement.inode_cost, location
        )?;
        if let Some(why) = &placement.reason {
            writeln!(out, "    {why}")?;
        }
    }
    if let Some(better) = &result.better_order {
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
    let mut grid = table::table(&[
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
    for result in results {
        grid.add_row(vec![
            right(result.inode_size),
            right(result.usable_bytes),
            right(result.needed_bytes),
            right(result.free_bytes),
            right(result.count(Location::Inode)),
            right(result.count(Location::Block)),
            right(result.count(Location::EaInode)),
            right(result.count(Location::None)),
            Cell::new(if result.all_in_inode { "yes" } else { "no" }),
        ]);
    }
    grid
}

fn right(value: impl ToString) -> Cell {
    Cell::new(value.to_string()).set_alignment(CellAlignment::Right)
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

/// The scanned image or tree: counts, one row per inode size, the smallest sizes and the
/// files named.
pub fn write_aggregate(
    out: &mut String,
    aggregate: &Aggregate,
    summary: &SourceSummary,
) -> std::fmt::Result {
    let unreadable = if summary.unreadable > 0 {
        format!(", {} unreadable (skipped)", summary.unreadable)
    } else {
        String::new()
    };
    writeln!(
        out,
        "{} {}: {} inodes scanned, {} with xattrs{unreadable}",
        summary.kind,
        summary.path.display(),
        summary.inodes_scanned,
        summary.inodes_with_xattrs,
    )?;
    if let Some(agrees) = summary.model_agrees {
        writeln!(
            out,
            "model reproduces the on-disk placement for {agrees} of {} inodes with xattrs",
            summary.inodes_with_xattrs
        )?;
    }
    writeln!(
        out,
        "{}",
        size_table(aggregate, summary.reference_inode_size)
    )?;
    let show =
        |v: Option<u32>| v.map_or("none up to the block size".to_string(), |s| s.to_string());
    writeln!(
        out,
        "smallest inode size with all xattrs in-inode: 100% {}, 99% {}, 90% {}",
        show(summary.smallest_inode_size_for_100),
        show(summary.smallest_inode_size_for_99),
        show(summary.smallest_inode_size_for_90)
    )?;
    write_named_files(out, summary)
}

/// One row per inode size of the scanned population.
fn size_table(aggregate: &Aggregate, reference_inode_size: u32) -> table::Styled {
    let saved = format!("block reads saved vs {reference_inode_size}");
    let mut grid = table::table(&[
        "inode size",
        "usable",
        "all in inode",
        "share",
        "need block",
        "ea_inode",
        "cannot store",
        saved.as_str(),
    ]);
    for st in &aggregate.sizes {
        grid.add_row(vec![
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
    grid
}

/// The files whose xattrs do not all stay in the inode, biggest need first.
fn write_named_files(out: &mut String, summary: &SourceSummary) -> std::fmt::Result {
    if summary.files_not_all_in_inode.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "files not all in-inode at {} bytes, biggest need first:",
        summary.reference_inode_size
    )?;
    for file in &summary.files_not_all_in_inode {
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
