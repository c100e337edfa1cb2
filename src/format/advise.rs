//! Text of `e4inspect advise`: the command, why each parameter was chosen, the predicted layout
//! beside plain mkfs.ext4, and the xattr fit with its outliers.

use super::table;
use crate::models::advise::{human_bytes, Advice, FitAdvice};
use crate::models::mkfs::Layout;

/// The whole text report.
pub fn render(advice: &Advice) -> String {
    let mut out = String::new();
    out.push_str(&advice.command);
    out.push_str("\n\n");
    out.push_str(&rationale_table(advice).to_string());
    out.push_str("\n\nPredicted layout (mke2fs 1.47.0):\n");
    out.push_str(&layout_table(&advice.layout, advice.default_layout.as_ref()).to_string());
    out.push('\n');
    if let Some(fit) = &advice.fit {
        out.push_str(&format!(
            "\nXattr fit (share required: {:.0}%):\n",
            fit.fit_share * 100.0
        ));
        out.push_str(&fit_table(fit).to_string());
        out.push('\n');
        out.push_str(&render_outliers(fit, advice.layout.inode_size));
    }
    out
}

/// One row per parameter: the value chosen, mke2fs's default, why, and the source.
fn rationale_table(advice: &Advice) -> table::Styled {
    let mut grid = table::table(&["parameter", "chosen", "mke2fs default", "why", "source"]);
    for row in &advice.rationale {
        grid.add_row(vec![
            row.parameter.clone(),
            row.value.clone(),
            row.mke2fs_default.clone(),
            row.why.clone(),
            row.source.clone(),
        ]);
    }
    grid
}

/// A percentage with two decimals, `-` of nothing.
fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.2}%", 100.0 * part as f64 / whole as f64)
    }
}

/// One predicted-layout line: its label and how to print it from a layout.
type LayoutRow = (&'static str, fn(&Layout) -> String);

/// The rows of the predicted layout, in print order.
const LAYOUT_ROWS: &[LayoutRow] = &[
    ("block size", |layout| layout.block_size.to_string()),
    ("blocks", |layout| {
        format!(
            "{} ({})",
            layout.blocks_count,
            human_bytes(layout.blocks_count * u64::from(layout.block_size))
        )
    }),
    ("block groups", |layout| {
        format!("{} x {} blocks", layout.groups, layout.blocks_per_group)
    }),
    ("flex_bg size", |layout| {
        layout.flex_bg_size.map_or("off".into(), |g| g.to_string())
    }),
    ("inode size", |layout| layout.inode_size.to_string()),
    ("inodes", |layout| {
        format!(
            "{} ({} per group)",
            layout.inodes_count, layout.inodes_per_group
        )
    }),
    ("inode tables", |layout| {
        format!(
            "{} blocks/group, {} ({:.2}% of the device)",
            layout.inode_blocks_per_group,
            human_bytes(layout.inode_table_bytes),
            layout.inode_table_percent()
        )
    }),
    ("journal", |layout| {
        if layout.journal_blocks == 0 {
            "none".into()
        } else {
            format!(
                "{} blocks ({})",
                layout.journal_blocks,
                human_bytes(layout.journal_blocks * u64::from(layout.block_size))
            )
        }
    }),
    ("reserved for root", |layout| {
        format!(
            "{} blocks ({})",
            layout.reserved_blocks,
            pct(layout.reserved_blocks, layout.blocks_count)
        )
    }),
    ("reserved GDT blocks", |layout| {
        layout.reserved_gdt_blocks.to_string()
    }),
    ("RAID stride / width", |layout| {
        match (layout.stride, layout.stripe_width) {
            (Some(s), Some(w)) => format!("{s} / {w}"),
            _ => "-".into(),
        }
    }),
    ("metadata overhead", |layout| match layout.overhead_blocks {
        Some(o) => format!("{o} blocks ({})", pct(o, layout.blocks_count)),
        None => "-".into(),
    }),
    ("space for data", |layout| match layout.data_blocks {
        Some(b) => human_bytes(b * u64::from(layout.block_size)),
        None => "-".into(),
    }),
];

/// The predicted layout of the advised command beside plain mkfs.ext4 (`-` when unknown).
fn layout_table(layout: &Layout, default: Option<&Layout>) -> table::Styled {
    let mut grid = table::table(&["", "this command", "plain mkfs.ext4"]);
    for (label, show) in LAYOUT_ROWS {
        grid.add_row(vec![
            label.to_string(),
            show(layout),
            default.map_or_else(|| "-".into(), show),
        ]);
    }
    grid
}

/// One row per inode size: usable and needed bytes, the share all in-inode, the chosen one.
fn fit_table(fit: &FitAdvice) -> table::Styled {
    let mut grid = table::table(&[
        "inode size",
        "usable bytes",
        "needed bytes",
        "all in-inode",
        "",
    ]);
    for row in &fit.sizes {
        grid.add_row(vec![
            row.inode_size.to_string(),
            row.usable_bytes.to_string(),
            if row.needed_bytes > 0 {
                row.needed_bytes.to_string()
            } else {
                "-".into()
            },
            format!("{:.1}%", row.share_all_in_inode * 100.0),
            if row.inode_size == fit.inode_size {
                "<- chosen".into()
            } else {
                String::new()
            },
        ]);
    }
    grid
}

/// The outliers at the advised inode size and what larger sizes would cost (empty when none).
fn render_outliers(fit: &FitAdvice, inode_size: u32) -> String {
    if fit.outlier_inodes == 0 {
        return String::new();
    }
    let listed: u64 = fit.outliers.iter().map(|outlier| outlier.inodes).sum();
    let worst = if listed < fit.outlier_inodes {
        format!(" (the {} worst)", fit.outliers.len())
    } else {
        String::new()
    };
    let mut out = format!(
        "\nOutliers: {} of {} inodes with xattrs keep some outside a {inode_size}-byte inode{worst}:\n",
        fit.outlier_inodes, fit.inodes,
    );
    out.push_str(&outlier_table(fit).to_string());
    out.push('\n');
    if !fit.cover_costs.is_empty() {
        out.push_str("\nCovering outliers with a larger inode size:\n");
        out.push_str(&cover_cost_table(fit).to_string());
        out.push('\n');
    }
    out
}

/// One row per outlier file: what it needs and what covering it would cost.
fn outlier_table(fit: &FitAdvice) -> table::Styled {
    let mut grid = table::table(&[
        "path",
        "inodes",
        "bytes needed",
        "inode size needed",
        "extra inode tables",
    ]);
    for outlier in &fit.outliers {
        let path = match (&outlier.path, outlier.ino) {
            (Some(p), _) => p.clone(),
            (None, Some(i)) => format!("inode {i}"),
            (None, None) => "-".into(),
        };
        grid.add_row(vec![
            path,
            outlier.inodes.to_string(),
            outlier.needed_bytes.to_string(),
            outlier
                .inode_size_needed
                .map_or("none up to the block size".into(), |s| s.to_string()),
            outlier
                .extra_inode_table_bytes
                .map_or("-".into(), |b| format!("+{}", human_bytes(b))),
        ]);
    }
    grid
}

/// One row per larger inode size: outliers covered and the inode-table cost.
fn cover_cost_table(fit: &FitAdvice) -> table::Styled {
    let mut grid = table::table(&[
        "-I",
        "outlier inodes covered",
        "extra inode tables",
        "inode tables of device",
    ]);
    for cost in &fit.cover_costs {
        grid.add_row(vec![
            cost.inode_size.to_string(),
            format!("{} of {}", cost.outlier_inodes_covered, fit.outlier_inodes),
            cost.extra_inode_table_bytes
                .map_or("mke2fs would refuse".into(), |bytes| {
                    format!("+{}", human_bytes(bytes))
                }),
            cost.inode_table_percent
                .map_or("-".into(), |p| format!("{p:.2}%")),
        ]);
    }
    grid
}
