//! e2freefrag-identical text for a [`crate::views::freefrag::Report`] (misc/e2freefrag.c:
//! `collect_info`, `dump_chunk_info`).

use crate::views::freefrag::Report;
use std::io::{self, Write};

/// The two lines e2freefrag prints before it reads the bitmaps.
pub fn write_header(out: &mut dyn Write, device: &str, block_size: u64) -> io::Result<()> {
    writeln!(out, "Device: {device}")?;
    writeln!(out, "Blocksize: {block_size} bytes")
}

/// Everything after the header.
pub fn write_report(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    writeln!(out, "Total blocks: {}", r.total_blocks)?;
    writeln!(
        out,
        "Free blocks: {} ({:.1}%)",
        r.free_blocks, r.free_percent
    )?;
    if let Some(c) = &r.chunks {
        writeln!(
            out,
            "\nChunksize: {} bytes ({} blocks)",
            c.chunk_bytes, c.blocks_per_chunk
        )?;
        writeln!(out, "Total chunks: {}", c.total)?;
        writeln!(out, "Free chunks: {} ({:.1}%)", c.free, c.free_percent)?;
    }
    writeln!(out, "\nMin. free extent: {} KB ", r.min_extent_kb)?;
    writeln!(out, "Max. free extent: {} KB", r.max_extent_kb)?;
    writeln!(out, "Avg. free extent: {} KB", r.avg_extent_kb)?;
    writeln!(out, "Num. free extent: {}", r.free_extents)?;
    writeln!(out, "\nHISTOGRAM OF FREE EXTENT SIZES:")?;
    writeln!(
        out,
        "Extent Size Range :  {:>12}  {:>12}  {:>7}",
        "Free extents", "Free Blocks", "Percent"
    )?;
    for b in &r.histogram {
        writeln!(
            out,
            "{}  :  {:>12}  {:>12}  {:>6.2}%",
            b.label, b.extents, b.blocks, b.percent
        )?;
    }
    Ok(())
}
