//! Extent trees (header magic 0xF30A) and classic block maps: logical-to-physical mapping with
//! bounded walks.

use crate::bytes::Bytes;
use crate::error::{Error, Result};

/// Extent header magic.
pub const EXTENT_MAGIC: u16 = 0xF30A;
/// Deepest tree ext4 allows.
pub const MAX_DEPTH: u16 = 5;

/// An extent header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtentHeader {
    pub magic: u16,
    pub entries: u16,
    pub max: u16,
    pub depth: u16,
    pub generation: u32,
}

impl ExtentHeader {
    /// Decode the 12-byte header.
    pub fn parse(b: &[u8]) -> Result<ExtentHeader> {
        if b.len() < 12 {
            return Err(Error::corrupt("extent header truncated"));
        }
        let d = Bytes::new(b);
        let h = ExtentHeader {
            magic: d.le16(0),
            entries: d.le16(2),
            max: d.le16(4),
            depth: d.le16(6),
            generation: d.le32(8),
        };
        if h.magic != EXTENT_MAGIC {
            return Err(Error::corrupt(format!(
                "bad extent header magic 0x{:04x}",
                h.magic
            )));
        }
        if h.depth > MAX_DEPTH {
            return Err(Error::corrupt(format!(
                "extent tree depth {} exceeds {MAX_DEPTH}",
                h.depth
            )));
        }
        let cap = (b.len() - 12) / 12;
        if usize::from(h.entries) > usize::from(h.max) || usize::from(h.max) > cap {
            return Err(Error::corrupt(format!(
                "extent node claims {} entries (max {}) but holds room for {cap}",
                h.entries, h.max
            )));
        }
        Ok(h)
    }
}

/// A leaf extent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub logical: u32,
    pub len: u16,
    pub uninit: bool,
    pub physical: u64,
}

/// An index entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtentIndex {
    pub logical: u32,
    pub child: u64,
}

/// Leaf entries of a node (after a successful header parse).
pub fn leaf_entries(node: &[u8], h: &ExtentHeader) -> Vec<Extent> {
    (0..usize::from(h.entries))
        .map(|i| {
            let d = Bytes::new(node);
            let o = 12 + 12 * i;
            let raw_len = d.le16(o + 4);
            let (len, uninit) = if raw_len > 32768 {
                (raw_len - 32768, true)
            } else {
                (raw_len, false)
            };
            Extent {
                logical: d.le32(o),
                len,
                uninit,
                physical: (u64::from(d.le16(o + 6)) << 32) | u64::from(d.le32(o + 8)),
            }
        })
        .collect()
}

/// Index entries of a node.
pub fn index_entries(node: &[u8], h: &ExtentHeader) -> Vec<ExtentIndex> {
    (0..usize::from(h.entries))
        .map(|i| {
            let d = Bytes::new(node);
            let o = 12 + 12 * i;
            ExtentIndex {
                logical: d.le32(o),
                child: (u64::from(d.le16(o + 8)) << 32) | u64::from(d.le32(o + 4)),
            }
        })
        .collect()
}

/// Map logical block `lblk` through the extent tree rooted in `root` (i_block, 60 bytes).
/// `read_block` returns a block's bytes. Walks at most MAX_DEPTH levels, each one level deeper than
/// its parent claims, so cycles end. Returns `None` for a hole.
pub fn map_extent<'a, F>(root: &[u8], lblk: u32, mut read_block: F) -> Result<Option<u64>>
where
    F: FnMut(u64) -> Result<&'a [u8]>,
{
    let mut h = ExtentHeader::parse(root)?;
    let mut node: Vec<u8> = root.to_vec();
    let mut steps = 0;
    loop {
        if h.depth == 0 {
            for e in leaf_entries(&node, &h) {
                let start = u64::from(e.logical);
                if u64::from(lblk) >= start && u64::from(lblk) < start + u64::from(e.len) {
                    if e.uninit {
                        return Ok(None);
                    }
                    return Ok(Some(e.physical + (u64::from(lblk) - start)));
                }
            }
            return Ok(None);
        }
        let idx = index_entries(&node, &h);
        let Some(ix) = idx.iter().rev().find(|ix| ix.logical <= lblk) else {
            return Ok(None);
        };
        steps += 1;
        if steps > MAX_DEPTH {
            return Err(Error::corrupt("extent tree deeper than allowed"));
        }
        let child = read_block(ix.child)?;
        let ch = ExtentHeader::parse(child)?;
        if ch.depth + 1 != h.depth {
            return Err(Error::corrupt(format!(
                "extent block {} has depth {}, its parent {}",
                ix.child, ch.depth, h.depth
            )));
        }
        node = child.to_vec();
        h = ch;
    }
}

/// Map logical block `lblk` through a classic direct/indirect block map (`i_block` as 15 u32).
pub fn map_blockmap<'a, F>(
    iblock: &[u8],
    block_size: u64,
    lblk: u32,
    mut read_block: F,
) -> Result<Option<u64>>
where
    F: FnMut(u64) -> Result<&'a [u8]>,
{
    let d = Bytes::new(iblock);
    let per = block_size / 4;
    let mut l = u64::from(lblk);
    if l < 12 {
        let b = d.le32(4 * l as usize);
        return Ok((b != 0).then_some(u64::from(b)));
    }
    l -= 12;
    // (slot in i_block, levels of indirection, blocks covered)
    let mut levels = [
        (12usize, 1u32, per),
        (13, 2, per * per),
        (14, 3, per * per * per),
    ];
    for (slot, depth, span) in levels.iter_mut() {
        if l < *span {
            let mut blk = u64::from(d.le32(4 * *slot));
            let mut rem = l;
            let mut div = *span / per;
            for _ in 0..*depth {
                if blk == 0 {
                    return Ok(None);
                }
                let b = read_block(blk)?;
                let idx = (rem / div.max(1)) as usize;
                rem %= div.max(1);
                div /= per;
                blk = u64::from(Bytes::new(b).le32(4 * idx));
            }
            return Ok((blk != 0).then_some(blk));
        }
        l -= *span;
    }
    Ok(None)
}
