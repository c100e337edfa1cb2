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
pub fn write_report(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    writeln!(out, "Total blocks: {}", report.total_blocks)?;
    writeln!(
        out,
        "Free blocks: {} ({:.1}%)",
        report.free_blocks, report.free_percent
    )?;
    if let Some(chunks) = &report.chunks {
        writeln!(
            out,
            "\nChunksize: {} bytes ({} blocks)",
            chunks.chunk_bytes, chunks.blocks_per_chunk
        )?;
        writeln!(out, "Total chunks: {}", chunks.total)?;
        writeln!(
            out,
            "Free chunks: {} ({:.1}%)",
            chunks.free, chunks.free_percent
        )?;
    }
    writeln!(out, "\nMin. free extent: {} KB ", report.min_extent_kb)?;
    writeln!(out, "Max. free extent: {} KB", report.max_extent_kb)?;
    writeln!(out, "Avg. free extent: {} KB", report.avg_extent_kb)?;
    writeln!(out, "Num. free extent: {}", report.free_extents)?;
    writeln!(out, "\nHISTOGRAM OF FREE EXTENT SIZES:")?;
    writeln!(
        out,
        "Extent Size Range :  {:>12}  {:>12}  {:>7}",
        "Free extents", "Free Blocks", "Percent"
    )?;
    for bucket in &report.histogram {
        writeln!(
            out,
            "{}  :  {:>12}  {:>12}  {:>6.2}%",
            bucket.label, bucket.extents, bucket.blocks, bucket.percent
        )?;
    }
    Ok(())
}
