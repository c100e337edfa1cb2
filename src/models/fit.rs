//! The xattr-fit model: where the kernel places each extended attribute when they are set one
//! after another, for a given inode size, `i_extra_isize`, block size and feature set.
//!
//! It follows `ext4_xattr_set_handle` / `ext4_xattr_set_entry` (fs/ext4/xattr.c):
//! 1. With `ea_inode`, a value whose padded size exceeds `block_size - 56` goes to an EA inode
//!    from the start (only its entry is stored, in the body or the block).
//! 2. Try the inode body: it fits when `free >= LEN(name) + SIZE(value)` with
//!    `free = lowest value offset - end of entries - 4`.
//! 3. Else try the external block (same rule; with `ea_inode`, a value may not bring the lowest
//!    value offset below `min(block_size / 8, 1024)`).
//! 4. Else, with `ea_inode` and a non-empty value, retry 2-3 with the value in an EA inode.
//! 5. Else ENOSPC: the attribute cannot be stored at all.
//!
//! Attributes are only added here (no replacement), so both areas stay packed without gaps, as
//! the kernel keeps them. The aggregate part evaluates many inodes' attribute sets in one pass with
//! memory independent of the number of inodes.

use crate::error::{Error, Problem, ProblemKind, Result};
pub use crate::reader::xattr::block_capacity;
use crate::reader::xattr::{
    entry_len, ibody_capacity, split_name, value_size, BLOCK_HEADER_SIZE, TERMINATOR_SIZE,
};
use serde::Serialize;
use std::collections::HashMap;

/// Largest value the VFS passes to a filesystem (`XATTR_SIZE_MAX`).
pub const VFS_VALUE_MAX: u32 = 65536;
/// Longest name suffix the kernel stores (`e_name_len` is a u8; the VFS allows 255).
pub const NAME_MAX: usize = 255;
/// Bytes of inline data kept in `i_block`; the rest is the value of `system.data`.
pub const INLINE_IBLOCK_BYTES: u32 = 60;

/// Default `i_extra_isize` (what mke2fs and current kernels use).
pub const DEFAULT_EXTRA_ISIZE: u16 = 32;

/// Where the filesystem would place (or has placed) an attribute.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    /// Entry and value in the inode body.
    Inode,
    /// Entry and value in the external xattr block.
    Block,
    /// Value in an EA inode (the entry stays in the body or the block).
    EaInode,
    /// Cannot be stored (ENOSPC, or the name or value is not acceptable).
    None,
}

impl Location {
    /// Name as used in JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Location::Inode => "inode",
            Location::Block => "block",
            Location::EaInode => "ea_inode",
            Location::None => "none",
        }
    }
}

/// Filesystem parameters the placement depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FitParams {
    /// On-disk inode size in bytes.
    pub inode_size: u32,
    /// `i_extra_isize` of the inode (0 for 128-byte inodes).
    pub extra_isize: u16,
    /// Filesystem block size.
    pub block_size: u32,
    /// The `ea_inode` feature.
    pub ea_inode: bool,
    /// Inline data: the file's data size when it is stored inline (`system.data` then takes
    /// `20 + SIZE(max(0, size - 60))` bytes of the body before any other attribute).
    pub inline_data: Option<u32>,
}

impl FitParams {
    /// Parameters with defaults: extra isize 32 (0 for 128-byte inodes), 4 KiB blocks, no
    /// ea_inode, no inline data.
    pub fn new(inode_size: u32) -> FitParams {
        FitParams {
            inode_size,
            extra_isize: default_extra_isize(inode_size),
            block_size: 4096,
            ea_inode: false,
            inline_data: None,
        }
    }

    /// The same parameters for another inode size: `extra_isize` is taken as the preferred value
    /// and clamped to what the inode holds (0 for 128-byte inodes), as mke2fs and the kernel do.
    pub fn for_inode_size(&self, inode_size: u32) -> FitParams {
        FitParams {
            inode_size,
            extra_isize: (self.extra_isize as u32).min(inode_size.saturating_sub(128)) as u16,
            ..*self
        }
    }

    /// Check the parameters make a filesystem mke2fs could build.
    pub fn validate(&self) -> Result<()> {
        let is = self.inode_size;
        if !(128..=65536).contains(&is) || !is.is_power_of_two() {
            return Err(Error::Invalid(format!(
                "inode size {is} must be a power of two from 128 to 65536"
            )));
        }
        let bs = self.block_size;
        if !(1024..=65536).contains(&bs) || !bs.is_power_of_two() {
            return Err(Error::Invalid(format!(
                "block size {bs} must be a power of two from 1024 to 65536"
            )));
        }
        if is > bs {
            return Err(Error::Invalid(format!(
                "inode size {is} is larger than the block size {bs}"
            )));
        }
        let ex = self.extra_isize as u32;
        if ex % 4 != 0 || 128 + ex > is {
            return Err(Error::Invalid(format!(
                "extra isize {ex} must be a multiple of 4 and at most inode size - 128 ({})",
                is - 128
            )));
        }
        Ok(())
    }
}

/// Default `i_extra_isize` for an inode size: 32 when it fits, else what fits, 0 for 128.
pub fn default_extra_isize(inode_size: u32) -> u16 {
    inode_size
        .saturating_sub(128)
        .min(DEFAULT_EXTRA_ISIZE as u32) as u16
}

/// Bytes usable for in-inode xattrs in an empty inode.
pub fn usable_body(params: &FitParams) -> usize {
    ibody_capacity(params.inode_size as usize, params.extra_isize as usize)
}

/// `EXT4_XATTR_MIN_LARGE_EA_SIZE`: with ea_inode, a value whose padded size exceeds this goes to an
/// EA inode from the start.
pub fn ea_inode_threshold(block_size: u32) -> usize {
    (block_size as usize).saturating_sub(entry_len(3) + BLOCK_HEADER_SIZE + TERMINATOR_SIZE)
}

/// `EXT4_XATTR_BLOCK_RESERVE`: with ea_inode, values in the block may not reach below this offset.
pub fn block_reserve(block_size: u32) -> usize {
    (block_size as usize / 8).min(1024)
}

/// One attribute to place: its full name and value size.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
pub struct Attr {
    /// Full name (`user.foo`, `security.selinux`, `system.posix_acl_access`).
    pub name: String,
    /// Value size in bytes (on-disk form).
    pub value_size: u32,
}

impl Attr {
    /// An attribute.
    pub fn new(name: impl Into<String>, value_size: u32) -> Attr {
        Attr {
            name: name.into(),
            value_size,
        }
    }
}

/// Where one attribute landed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Placement {
    /// Full name.
    pub name: String,
    /// Value size.
    pub value_size: u32,
    /// Where it lands.
    pub location: Location,
    /// For EA-inode values: where the entry itself lives (`inode` or `block`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_location: Option<Location>,
    /// Bytes it takes in the inode body if it is (or would be) stored there: LEN(name) + SIZE(value).
    pub inode_cost: usize,
    /// Why it cannot be stored, when `location` is `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// An order of the same attributes that keeps more of them in the inode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BetterOrder {
    /// Names in the better order (smallest in-inode cost first).
    pub order: Vec<String>,
    /// Attributes in-inode with that order.
    pub in_inode: usize,
}

/// Result of placing one attribute set in one kind of inode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FitResult {
    /// Inode size.
    pub inode_size: u32,
    /// `i_extra_isize`.
    pub extra_isize: u16,
    /// Block size.
    pub block_size: u32,
    /// Bytes usable for xattrs in the body (after `system.data` when inline data is modelled).
    #[serde(rename = "capacity_bytes")]
    pub usable_bytes: usize,
    /// Bytes needed to keep every attribute in the body.
    pub needed_bytes: usize,
    /// Body bytes left after the placement.
    pub free_bytes: usize,
    /// Bytes taken in the external block (0 when no block is needed).
    pub block_used_bytes: usize,
    /// Bytes left in the external block, when one is used.
    pub block_free_bytes: Option<usize>,
    /// Bytes of `system.data` (inline data) in the body.
    pub inline_data_bytes: usize,
    /// Placements in the order the attributes were given.
    pub placements: Vec<Placement>,
    /// True when every attribute lands in the inode body.
    pub all_in_inode: bool,
    /// Set when another order would keep more attributes in the inode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub better_order: Option<BetterOrder>,
}

impl FitResult {
    /// Number of attributes at `loc`.
    pub fn count(&self, loc: Location) -> usize {
        self.placements.iter().filter(|p| p.location == loc).count()
    }
    /// True when some attribute needs the external block (entry or value).
    pub fn uses_block(&self) -> bool {
        self.block_used_bytes > 0
    }
}

/// One packed xattr area (body or block) as `ext4_xattr_set_entry` sees it.
#[derive(Clone, Copy, Debug)]
struct AreaState {
    /// Lowest value offset (relative to the area base); starts at end - base.
    min_offs: usize,
    /// End of the entry table (relative to the area base).
    last: usize,
    /// Entry-table start relative to base (0 in the body, 32 in the block).
    first: usize,
    /// False when the kernel refuses the area altogether (no body space).
    usable: bool,
}

impl AreaState {
    fn body(params: &FitParams) -> AreaState {
        let cap = usable_body(params);
        // base = first entry; end - base = capacity + terminator.
        AreaState {
            min_offs: cap + TERMINATOR_SIZE,
            last: 0,
            first: 0,
            usable: usable_body_raw(params),
        }
    }
    fn block(params: &FitParams) -> AreaState {
        AreaState {
            min_offs: params.block_size as usize,
            last: BLOCK_HEADER_SIZE,
            first: BLOCK_HEADER_SIZE,
            usable: true,
        }
    }
    fn free(&self) -> usize {
        self.min_offs.saturating_sub(self.last + TERMINATOR_SIZE)
    }
    fn used(&self, end: usize) -> usize {
        (self.last - self.first) + (end - self.min_offs)
    }
    /// Try to add an entry with a stored value of `new_size` padded bytes.
    fn try_add(&mut self, name_len: usize, new_size: usize, reserve: Option<usize>) -> bool {
        if !self.usable || self.free() < entry_len(name_len) + new_size {
            return false;
        }
        if let Some(min_free) = reserve {
            if new_size > 0 && self.min_offs - new_size < min_free {
                return false;
            }
        }
        self.last += entry_len(name_len);
        self.min_offs -= new_size;
        true
    }
}

/// True when `EXT4_INODE_HAS_XATTR_SPACE` holds (128 + extra + 4 + 4 <= inode size).
fn usable_body_raw(params: &FitParams) -> bool {
    params.extra_isize != 0 && 128 + params.extra_isize as usize + 8 <= params.inode_size as usize
}

/// Check a name and value the way the VFS and ext4 would; returns the stored name length.
fn check_attr(attr: &Attr) -> std::result::Result<usize, Problem> {
    let Some((_, suffix)) = split_name(&attr.name) else {
        return Err(Problem::new(
            ProblemKind::Request,
            format!(
                "{}: no ext4 name index for this prefix (EOPNOTSUPP)",
                attr.name
            ),
        ));
    };
    if attr.name.len() > NAME_MAX {
        return Err(Problem::new(
            ProblemKind::Request,
            format!("{}: name longer than 255 bytes (ERANGE)", attr.name),
        ));
    }
    if attr.value_size > VFS_VALUE_MAX {
        return Err(Problem::new(
            ProblemKind::Request,
            format!(
                "{}: value of {} bytes exceeds the 64 KiB VFS limit (E2BIG)",
                attr.name, attr.value_size
            ),
        ));
    }
    Ok(suffix.len())
}

/// The in-inode cost of `attr`: entry + name + padded value, or entry + name only when the value
/// goes to an EA inode from the start.
pub fn inode_cost(params: &FitParams, attr: &Attr) -> usize {
    let name_len = split_name(&attr.name).map_or(attr.name.len(), |(_, s)| s.len());
    let stored = value_size(attr.value_size as usize);
    if params.ea_inode && stored > ea_inode_threshold(params.block_size) {
        entry_len(name_len)
    } else {
        entry_len(name_len) + stored
    }
}

/// Place attributes set one after another, exactly as the kernel does.
pub fn place(params: &FitParams, attrs: &[Attr]) -> Result<FitResult> {
    params.validate()?;
    let mut seen = std::collections::HashSet::new();
    for attr in attrs {
        if !seen.insert(attr.name.as_str()) {
            return Err(Error::Invalid(format!(
                "{} is given twice; each attribute may appear once",
                attr.name
            )));
        }
    }
    let mut result = place_unchecked(params, attrs);
    let given = result.count(Location::Inode);
    let mut order: Vec<&Attr> = attrs.iter().collect();
    order.sort_by_key(|attr| (inode_cost(params, attr), attr.value_size));
    let sorted: Vec<Attr> = order.into_iter().cloned().collect();
    let alt = place_unchecked(params, &sorted);
    let best = alt.count(Location::Inode);
    if best > given {
        result.better_order = Some(BetterOrder {
            order: sorted.into_iter().map(|attr| attr.name).collect(),
            in_inode: best,
        });
    }
    Ok(result)
}

/// [`place`] without parameter validation, duplicate check and the better-order search.
fn place_unchecked(params: &FitParams, attrs: &[Attr]) -> FitResult {
    let mut body = AreaState::body(params);
    let mut block = AreaState::block(params);
    let bs = params.block_size as usize;
    let reserve = params.ea_inode.then(|| block_reserve(params.block_size));
    let threshold = ea_inode_threshold(params.block_size);

    let mut inline_data_bytes = 0;
    if let Some(size) = params.inline_data {
        let inline_value = value_size(size.saturating_sub(INLINE_IBLOCK_BYTES) as usize);
        // system.data: index 7, name "data"; always in the body.
        if body.try_add(4, inline_value, None) {
            inline_data_bytes = entry_len(4) + inline_value;
        }
    }
    let usable_bytes = body.free();
    let mut placements = Vec::with_capacity(attrs.len());
    let mut needed = 0;
    for attr in attrs {
        let cost = inode_cost(params, attr);
        needed += cost;
        let mut pl = Placement {
            name: attr.name.clone(),
            value_size: attr.value_size,
            location: Location::None,
            entry_location: None,
            inode_cost: cost,
            reason: None,
        };
        let name_len = match check_attr(attr) {
            Ok(n) => n,
            Err(why) => {
                pl.reason = Some(why.message);
                placements.push(pl);
                continue;
            }
        };
        let vsize = value_size(attr.value_size as usize);
        let mut in_ea = params.ea_inode && vsize > threshold;
        loop {
            let stored = if in_ea { 0 } else { vsize };
            if body.try_add(name_len, stored, None) {
                pl.location = if in_ea {
                    pl.entry_location = Some(Location::Inode);
                    Location::EaInode
                } else {
                    Location::Inode
                };
                break;
            }
            if block.try_add(name_len, stored, reserve) {
                pl.location = if in_ea {
                    pl.entry_location = Some(Location::Block);
                    Location::EaInode
                } else {
                    Location::Block
                };
                break;
            }
            if params.ea_inode && attr.value_size > 0 && !in_ea {
                in_ea = true;
                continue;
            }
            pl.reason = Some(format!(
                "{}: no room in the inode nor in the {bs}-byte xattr block (ENOSPC)",
                attr.name
            ));
            break;
        }
        placements.push(pl);
    }
    let block_used = block.used(bs);
    FitResult {
        inode_size: params.inode_size,
        extra_isize: params.extra_isize,
        block_size: params.block_size,
        usable_bytes,
        needed_bytes: needed,
        free_bytes: body.free(),
        block_used_bytes: block_used,
        block_free_bytes: (block_used > 0).then(|| block.free()),
        inline_data_bytes,
        all_in_inode: placements.iter().all(|x| x.location == Location::Inode),
        placements,
        better_order: None,
    }
}

/// Largest value size for an attribute named `name` that still fits in an empty inode body
/// (`None` when not even an empty value fits).
pub fn largest_inode_value(params: &FitParams, name: &str) -> Option<u32> {
    let name_len = split_name(name)?.1.len();
    let free = usable_body(params);
    let room = free.checked_sub(entry_len(name_len))?;
    let mut largest = room as u32; // room is a multiple of 4: SIZE(room) == room
    if params.ea_inode && value_size(largest as usize) > ea_inode_threshold(params.block_size) {
        largest = ea_inode_threshold(params.block_size) as u32;
    }
    Some(largest.min(VFS_VALUE_MAX))
}

// ---------------------------------------------------------------------------------------------
// Aggregate evaluation over many inodes
// ---------------------------------------------------------------------------------------------

/// The xattr set of one inode, in the order it was (presumably) set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct XattrSet {
    /// Attributes other than `system.data`.
    pub attrs: Vec<Attr>,
    /// Inline data size when the inode has inline data.
    pub inline_data: Option<u32>,
}

/// Counters for one inode size over many inodes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SizeStats {
    /// Inode size.
    pub inode_size: u32,
    /// `i_extra_isize`.
    pub extra_isize: u16,
    /// Body bytes usable in an empty inode.
    #[serde(rename = "capacity_bytes")]
    pub usable_bytes: usize,
    /// Inodes with at least one xattr (inline data alone does not count).
    pub inodes: u64,
    /// Of those, inodes whose xattrs all land in the body.
    pub all_in_inode: u64,
    /// Inodes needing the external block (one extra read per lookup).
    pub spill_to_block: u64,
    /// Inodes with an EA-inode value.
    pub use_ea_inode: u64,
    /// Inodes with an attribute that cannot be stored at all.
    pub not_stored: u64,
    /// Attributes per location.
    pub attrs_inode: u64,
    /// Attributes in the block.
    pub attrs_block: u64,
    /// Attributes in EA inodes.
    pub attrs_ea_inode: u64,
    /// Attributes that cannot be stored.
    pub attrs_none: u64,
    /// Share of `inodes` with everything in the body (0..=1; 1 when there are none).
    pub share_all_in_inode: f64,
    /// Extra block reads avoided compared with the reference inode size (one per inode that
    /// needs the block there and not here; negative when worse).
    pub block_io_saved: i64,
    /// Total body bytes left over the inodes.
    pub free_bytes_total: u64,
}

/// Aggregate over many inodes for several inode sizes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Aggregate {
    /// Inodes looked at (with or without xattrs).
    pub inodes_scanned: u64,
    /// Inodes with at least one xattr.
    pub inodes_with_xattrs: u64,
    /// Per requested inode size.
    pub sizes: Vec<SizeStats>,
    /// Inode size the `block_io_saved` figures are measured against.
    pub reference_inode_size: u32,
    /// Smallest power-of-two inode size (up to the block size) at which 100 % of the inodes with
    /// xattrs keep them all in the body; `None` when even the largest does not.
    pub smallest_for_100: Option<u32>,
    /// Same for 99 %.
    pub smallest_for_99: Option<u32>,
    /// Same for 90 %.
    pub smallest_for_90: Option<u32>,
    /// Per ladder rung: inodes for which that rung is the smallest size holding all in-inode.
    #[serde(skip)]
    ladder_fit: Vec<u64>,
    #[serde(skip)]
    ladder: Vec<u32>,
    #[serde(skip)]
    reference_blocks: u64,
}

/// Evaluates many inodes' xattr sets for a list of inode sizes in one pass.
#[derive(Clone, Debug)]
pub struct Evaluator {
    base: FitParams,
    sizes: Vec<FitParams>,
    reference: FitParams,
    agg: Aggregate,
}

impl Evaluator {
    /// `base` gives block size, ea_inode and the preferred extra isize (clamped per size with
    /// [`FitParams::for_inode_size`]); `sizes` are the inode sizes to report; `reference` is the
    /// inode size `block_io_saved` is measured against (e.g. the image's own).
    pub fn new(base: FitParams, sizes: &[u32], reference: u32) -> Result<Evaluator> {
        let mk = |is: u32| -> Result<FitParams> {
            let mut sized = base.for_inode_size(is);
            sized.inline_data = None;
            sized.validate()?;
            Ok(sized)
        };
        let params = sizes
            .iter()
            .map(|&size| mk(size))
            .collect::<Result<Vec<_>>>()?;
        let reference_p = mk(reference)?;
        let mut ladder = Vec::new();
        let mut size = 128u32;
        while size <= base.block_size {
            ladder.push(size);
            size *= 2;
        }
        let agg = Aggregate {
            sizes: params
                .iter()
                .map(|sized| SizeStats {
                    inode_size: sized.inode_size,
                    extra_isize: sized.extra_isize,
                    usable_bytes: usable_body(sized),
                    share_all_in_inode: 1.0,
                    ..SizeStats::default()
                })
                .collect(),
            reference_inode_size: reference,
            ladder_fit: vec![0; ladder.len()],
            ladder,
            ..Aggregate::default()
        };
        Ok(Evaluator {
            base,
            sizes: params,
            reference: reference_p,
            agg,
        })
    }

    fn params_for(&self, params: &FitParams, set: &XattrSet) -> FitParams {
        let mut adjusted = *params;
        adjusted.inline_data = set.inline_data;
        adjusted
    }

    /// Account one inode's xattr set.
    pub fn add(&mut self, set: &XattrSet) {
        self.add_counted(set, 1);
    }

    /// Account `count` inodes with the same xattr set (placed once), and say how it fares.
    pub fn add_counted(&mut self, set: &XattrSet, count: u64) -> SetVerdict {
        self.agg.inodes_scanned += count;
        let mut verdict = SetVerdict::default();
        if set.attrs.is_empty() || count == 0 {
            return verdict;
        }
        self.agg.inodes_with_xattrs += count;
        let rp = self.params_for(&self.reference, set);
        let rr = place_unchecked(&rp, &set.attrs);
        verdict.uses_block = rr.uses_block();
        verdict.ea_inode = rr.count(Location::EaInode) > 0;
        verdict.not_stored = rr.count(Location::None) > 0;
        verdict.needed_bytes = rr.needed_bytes;
        if verdict.uses_block {
            self.agg.reference_blocks += count;
        }
        for index in 0..self.sizes.len() {
            let Some(params) = self
                .sizes
                .get(index)
                .map(|params| self.params_for(params, set))
            else {
                continue;
            };
            let placed = place_unchecked(&params, &set.attrs);
            if let Some(st) = self.agg.sizes.get_mut(index) {
                st.inodes += count;
                st.all_in_inode += count * placed.all_in_inode as u64;
                st.spill_to_block += count * placed.uses_block() as u64;
                st.use_ea_inode += count * (placed.count(Location::EaInode) > 0) as u64;
                st.not_stored += count * (placed.count(Location::None) > 0) as u64;
                st.attrs_inode += count * placed.count(Location::Inode) as u64;
                st.attrs_block += count * placed.count(Location::Block) as u64;
                st.attrs_ea_inode += count * placed.count(Location::EaInode) as u64;
                st.attrs_none += count * placed.count(Location::None) as u64;
                st.free_bytes_total += count * placed.free_bytes as u64;
            }
        }
        // Smallest ladder size holding everything: fit is monotonic in the inode size, so a
        // binary search over the ladder would do; the ladder has at most 10 rungs.
        for (rung, &size) in self.agg.ladder.iter().enumerate() {
            let mut params = self.base.for_inode_size(size);
            params.inline_data = set.inline_data;
            if place_unchecked(&params, &set.attrs).all_in_inode {
                if let Some(fit_count) = self.agg.ladder_fit.get_mut(rung) {
                    *fit_count += count;
                }
                verdict.smallest_all_in_inode = Some(size);
                break;
            }
        }
        verdict
    }

    /// Combine two evaluators built by cloning one (the same sizes), each having counted part of
    /// the inodes (a parallel scan's workers); [`Evaluator::finish`] then sees them all.
    pub fn merge(mut self, other: Evaluator) -> Evaluator {
        let (ours, theirs) = (&mut self.agg, other.agg);
        ours.inodes_scanned += theirs.inodes_scanned;
        ours.inodes_with_xattrs += theirs.inodes_with_xattrs;
        ours.reference_blocks += theirs.reference_blocks;
        for (into, from) in ours.ladder_fit.iter_mut().zip(theirs.ladder_fit) {
            *into += from;
        }
        for (into, from) in ours.sizes.iter_mut().zip(theirs.sizes) {
            into.inodes += from.inodes;
            into.all_in_inode += from.all_in_inode;
            into.spill_to_block += from.spill_to_block;
            into.use_ea_inode += from.use_ea_inode;
            into.not_stored += from.not_stored;
            into.attrs_inode += from.attrs_inode;
            into.attrs_block += from.attrs_block;
            into.attrs_ea_inode += from.attrs_ea_inode;
            into.attrs_none += from.attrs_none;
            into.free_bytes_total += from.free_bytes_total;
        }
        self
    }

    /// Inode size placements are reported against (`block_io_saved`, [`SetVerdict`]).
    pub fn reference_inode_size(&self) -> u32 {
        self.reference.inode_size
    }

    /// Finish: compute shares and percentiles.
    pub fn finish(mut self) -> Aggregate {
        let with_xattrs = self.agg.inodes_with_xattrs;
        let refb = self.agg.reference_blocks as i64;
        for st in &mut self.agg.sizes {
            st.share_all_in_inode = if st.inodes == 0 {
                1.0
            } else {
                st.all_in_inode as f64 / st.inodes as f64
            };
            st.block_io_saved = refb - st.spill_to_block as i64;
        }
        let smallest = |pct: u64| -> Option<u32> {
            if with_xattrs == 0 {
                return self.agg.ladder.first().copied();
            }
            let mut acc = 0u64;
            for (rung, &size) in self.agg.ladder.iter().enumerate() {
                acc += self.agg.ladder_fit.get(rung).copied().unwrap_or(0);
                // acc / n >= pct / 100, in integers
                if acc * 100 >= with_xattrs * pct {
                    return Some(size);
                }
            }
            None
        };
        self.agg.smallest_for_100 = smallest(100);
        self.agg.smallest_for_99 = smallest(99);
        self.agg.smallest_for_90 = smallest(90);
        self.agg
    }
}

/// How one xattr set fares at the reference inode size, and the smallest size that holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SetVerdict {
    /// Some entry or value needs the external block.
    pub uses_block: bool,
    /// Some value goes to an EA inode.
    pub ea_inode: bool,
    /// Some attribute cannot be stored at all.
    pub not_stored: bool,
    /// Body bytes needed to keep everything in the inode.
    pub needed_bytes: usize,
    /// Smallest power-of-two inode size (up to the block size) keeping everything in the body.
    pub smallest_all_in_inode: Option<u32>,
}

impl SetVerdict {
    /// True when the set does not stay all in the inode at the reference size.
    pub fn needs_naming(&self) -> bool {
        self.uses_block || self.ea_inode || self.not_stored
    }
    /// Ranking key: sets needing the biggest inode (or none fits) first, then the most bytes.
    pub fn rank(&self) -> (u32, usize) {
        (
            self.smallest_all_in_inode.unwrap_or(u32::MAX),
            self.needed_bytes,
        )
    }
}

/// Evaluate an iterator of xattr sets (from an image, a directory tree, or anything else).
pub fn evaluate<I>(base: FitParams, sizes: &[u32], reference: u32, sets: I) -> Result<Aggregate>
where
    I: IntoIterator<Item = XattrSet>,
{
    let mut ev = Evaluator::new(base, sizes, reference)?;
    for set in sets {
        ev.add(&set);
    }
    Ok(ev.finish())
}

// ---------------------------------------------------------------------------------------------
// Sources of per-inode xattr sets: an image, a live directory tree
// ---------------------------------------------------------------------------------------------

/// One inode's xattrs as found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedSet {
    /// Inode number.
    pub ino: u32,
    /// The set in on-disk order (body entries, then block entries), without `system.data`.
    pub set: XattrSet,
    /// Where each attribute of `set` actually lives.
    pub observed: Vec<Location>,
    /// `i_extra_isize` of the inode.
    pub extra_isize: u16,
}

/// Read the xattr set of inode `ino` from an open filesystem.
pub fn read_inode_xattrs(fs: &crate::reader::fs::Filesystem, ino: u32) -> Result<ObservedSet> {
    raw_inode_xattrs(fs, ino, &fs.inode_raw(ino)?)
}

/// As [`read_inode_xattrs`], from the inode's on-disk record already at hand.
pub fn raw_inode_xattrs(
    fs: &crate::reader::fs::Filesystem,
    ino: u32,
    raw: &[u8],
) -> Result<ObservedSet> {
    use crate::reader::features::{INCOMPAT_EA_INODE, RO_COMPAT_METADATA_CSUM};
    use crate::reader::xattr::{parse_block, parse_ibody};
    let inode = crate::reader::inode::Inode::parse(raw);
    let extra = if raw.len() > 128 {
        inode.extra_isize
    } else {
        0
    };
    let mut set = XattrSet::default();
    let mut observed = Vec::new();
    let ea_inode = fs.sb.has_incompat(INCOMPAT_EA_INODE);
    let mut push = |entry: &crate::reader::xattr::Entry<'_>, here: Location| -> Result<()> {
        if entry.value_inum != 0 && !ea_inode {
            return Err(Error::corrupt(
                crate::ProblemKind::Xattr,
                format!(
                    "inode {ino}: {} refers to EA inode {} without the ea_inode feature",
                    entry.name, entry.value_inum
                ),
            ));
        }
        if entry.name == "system.data" {
            // i_block holds the first 60 bytes, system.data the rest.
            set.inline_data = Some(INLINE_IBLOCK_BYTES.saturating_add(entry.value_size));
            return Ok(());
        }
        set.attrs
            .push(Attr::new(entry.name.clone(), entry.value_size));
        observed.push(if entry.value_inum != 0 {
            Location::EaInode
        } else {
            here
        });
        Ok(())
    };
    let body = parse_ibody(raw, extra)
        .map_err(|e| Error::corrupt(crate::ProblemKind::Xattr, format!("inode {ino}: {e}")))?;
    for entry in &body.entries {
        push(entry, Location::Inode)?;
    }
    if inode.file_acl != 0 {
        let blk = fs.block(inode.file_acl)?;
        let seed = fs
            .sb
            .has_ro_compat(RO_COMPAT_METADATA_CSUM)
            .then(|| fs.csum_seed());
        let xb = parse_block(&blk, inode.file_acl, seed)
            .map_err(|e| Error::corrupt(crate::ProblemKind::Xattr, format!("inode {ino}: {e}")))?;
        for entry in &xb.entries {
            push(entry, Location::Block)?;
        }
    }
    Ok(ObservedSet {
        ino,
        set,
        observed,
        extra_isize: extra,
    })
}

/// Inodes of an image with the same xattr set (same in-inode entries, same external block, same
/// inline data size and `i_extra_isize`), evaluated once.
#[derive(Clone, Debug)]
pub struct SetGroup {
    /// The set (in-inode entries, then the block's).
    pub set: XattrSet,
    /// Where each attribute lives on disk.
    pub observed: Vec<Location>,
    /// i_extra_isize of the inodes in the group.
    pub extra_isize: u16,
    /// Inodes in the group.
    pub count: u64,
    /// The first of them (at most the number asked for).
    pub inodes: Vec<u32>,
}

/// What [`image_set_groups_par`] met besides the groups.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct GroupWalk {
    /// Inodes that could not be read (or whose group could not).
    pub unreadable: u64,
    /// External xattr blocks read and parsed (each distinct block once while cached).
    pub blocks_decoded: u64,
    /// Groups handed out (sets evaluated).
    pub groups: u64,
    /// The first read that met bytes a metadata-only image does not hold (a normal e2image file
    /// has no xattr blocks): the walk's figures are then incomplete, and callers report this
    /// instead of them (one line, exit 8), never the figures as if the blocks held nothing.
    pub absent: Option<String>,
    /// The inodes walked and which are directories (for naming the listed ones without
    /// reading every directory entry's inode again).
    #[serde(skip)]
    pub seen: crate::reader::itable::SeenInodes,
}

impl GroupWalk {
    /// Count one unreadable inode (or `count`), keeping the first absent-block message.
    fn unreadable(&mut self, count: u64, why: &str) {
        self.unreadable += count;
        if self.absent.is_none() && why.contains(crate::error::ABSENT) {
            self.absent = Some(why.to_string());
        }
    }
}

/// Most groups of inodes sharing a block held before they are handed out.
const MAX_PENDING_GROUPS: usize = 4096;

type GroupKey = (u64, Vec<Attr>, Vec<Location>, Option<u32>, u16);

/// The in-inode part of an inode's set: attributes, where they live (all `Inode` or `EaInode`),
/// and the inline data size.
fn body_set(
    fs: &crate::reader::fs::Filesystem,
    ino: u32,
    raw: &[u8],
    extra: u16,
) -> Result<(XattrSet, Vec<Location>)> {
    let mut set = XattrSet::default();
    let mut observed = Vec::new();
    let ea_inode = fs
        .sb
        .has_incompat(crate::reader::features::INCOMPAT_EA_INODE);
    let body = crate::reader::xattr::parse_ibody(raw, extra)
        .map_err(|e| Error::corrupt(crate::ProblemKind::Xattr, format!("inode {ino}: {e}")))?;
    let mut entries = SetEntries {
        set: &mut set,
        observed: &mut observed,
        ino,
        ea_inode,
    };
    for entry in &body.entries {
        entries.push(
            &entry.name,
            entry.value_size,
            entry.value_inum,
            Location::Inode,
        )?;
    }
    Ok((set, observed))
}

/// The set of inode `ino` being built from its entries, with where each one was observed.
struct SetEntries<'a> {
    set: &'a mut XattrSet,
    observed: &'a mut Vec<Location>,
    ino: u32,
    /// The filesystem has the `ea_inode` feature (an entry may name a value inode).
    ea_inode: bool,
}

impl SetEntries<'_> {
    /// Add entry `name` found `here`; `system.data` is the inline data, not an attribute.
    fn push(&mut self, name: &str, value_size: u32, value_inum: u32, here: Location) -> Result<()> {
        let ino = self.ino;
        if value_inum != 0 && !self.ea_inode {
            return Err(Error::corrupt(
                crate::ProblemKind::Xattr,
                format!(
                "inode {ino}: {name} refers to EA inode {value_inum} without the ea_inode feature"
            ),
            ));
        }
        if name == "system.data" {
            self.set.inline_data = Some(INLINE_IBLOCK_BYTES.saturating_add(value_size));
            return Ok(());
        }
        self.set.attrs.push(Attr::new(name, value_size));
        self.observed.push(if value_inum != 0 {
            Location::EaInode
        } else {
            here
        });
        Ok(())
    }
}

/// Add the entries of external block `blk` (from `cache`) to a set.
fn add_block_entries(
    fs: &crate::reader::fs::Filesystem,
    cache: &crate::reader::itable::XattrBlockCache,
    ino: u32,
    blk: u64,
    set: &mut XattrSet,
    observed: &mut Vec<Location>,
) -> Result<()> {
    let cached = cache.get(fs, blk);
    if cached.info.is_none() {
        return Err(Error::corrupt(
            crate::ProblemKind::Xattr,
            format!(
                "inode {ino}: {}",
                cached
                    .problems
                    .iter()
                    .map(|p| p.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        ));
    }
    let ea_inode = fs
        .sb
        .has_incompat(crate::reader::features::INCOMPAT_EA_INODE);
    let mut entries = SetEntries {
        set,
        observed,
        ino,
        ea_inode,
    };
    for entry in &cached.entries {
        let inum = match entry.location {
            crate::reader::inode::XattrLocation::EaInode(n) => n,
            _ => 0,
        };
        entries.push(&entry.name, entry.value_size, inum, Location::Block)?;
    }
    Ok(())
}

/// One worker of [`image_set_groups_par`]: the caller's state, the groups of inodes sharing a
/// block not yet handed out, and what was met.
struct SetWorker<S> {
    user: S,
    pending: HashMap<GroupKey, (u64, Vec<u32>)>,
    walk: GroupWalk,
}

/// Hand out the pending groups of `worker` (decoding each block once through `cache`).
fn flush_pending<S>(
    fs: &crate::reader::fs::Filesystem,
    cache: &crate::reader::itable::XattrBlockCache,
    worker: &mut SetWorker<S>,
    visit: &(impl Fn(&mut S, SetGroup) + ?Sized),
) {
    // In the order of their first inode (not the map's), so that what the caller keeps of the
    // first sets met (advise's labels) does not change from run to run.
    let mut groups: Vec<_> = worker.pending.drain().collect();
    groups.sort_unstable_by_key(|(_, (_, inodes))| inodes.first().copied());
    for ((blk, attrs, observed, inline, extra), (count, inodes)) in groups {
        let mut set = XattrSet {
            attrs,
            inline_data: inline,
        };
        let mut observed = observed;
        let first = inodes.first().copied().unwrap_or(0);
        if let Err(err) = add_block_entries(fs, cache, first, blk, &mut set, &mut observed) {
            worker.walk.unreadable(count, &err.to_string());
            continue;
        }
        worker.walk.groups += 1;
        visit(
            &mut worker.user,
            SetGroup {
                set,
                observed,
                extra_isize: extra,
                count,
                inodes,
            },
        );
    }
}

/// Add `count` inodes (the first of them `inodes`, at most `keep` kept) to the pending group
/// `key` of `worker`, handing the pending groups out first when `key` is new and they are full.
/// `(count, inodes)` is a pending group's value, as one worker's map holds it.
fn add_pending<S>(
    fs: &crate::reader::fs::Filesystem,
    cache: &crate::reader::itable::XattrBlockCache,
    worker: &mut SetWorker<S>,
    visit: &(impl Fn(&mut S, SetGroup) + ?Sized),
    key: GroupKey,
    (count, inodes): (u64, Vec<u32>),
    keep: usize,
) {
    if !worker.pending.contains_key(&key) && worker.pending.len() >= MAX_PENDING_GROUPS {
        flush_pending(fs, cache, worker, visit);
    }
    let pending = worker.pending.entry(key).or_insert((0, Vec::new()));
    pending.0 += count;
    let room = keep.max(1).saturating_sub(pending.1.len());
    pending.1.extend(inodes.into_iter().take(room));
}

/// One in-use inode of the walk, as [`image_set_groups_par`] takes it: skipped unless it is the root
/// or a file from `s_first_ino`, linked, and not an EA inode; handed out at once without an
/// external block, else added to the pending group of its block and in-inode set.
fn set_of_inode<S>(
    fs: &crate::reader::fs::Filesystem,
    cache: &crate::reader::itable::XattrBlockCache,
    worker: &mut SetWorker<S>,
    visit: &(impl Fn(&mut S, SetGroup) + ?Sized),
    keep: usize,
    ino: u32,
    raw: &[u8],
) {
    let inode = crate::reader::inode::Inode::parse(raw);
    worker
        .walk
        .seen
        .add(fs.geo.inodes_per_group, ino, inode.is_dir());
    if !scanned_by_fit(fs, ino, &inode) {
        return;
    }
    let extra = if raw.len() > 128 {
        inode.extra_isize
    } else {
        0
    };
    let (set, observed) = match body_set(fs, ino, raw, extra) {
        Ok(b) => b,
        Err(e) => {
            worker.walk.unreadable(1, &e.to_string());
            return;
        }
    };
    if inode.file_acl == 0 {
        worker.walk.groups += 1;
        let group = SetGroup {
            set,
            observed,
            extra_isize: extra,
            count: 1,
            inodes: vec![ino],
        };
        visit(&mut worker.user, group);
        return;
    }
    let key = (inode.file_acl, set.attrs, observed, set.inline_data, extra);
    add_pending(fs, cache, worker, visit, key, (1, vec![ino]), keep);
}

/// The in-use inodes of an image (`scanned_by_fit`: the root and linked inodes from
/// `s_first_ino`, not EA inodes) and their xattr sets, grouped: inodes sharing an external block
/// with the same in-inode entries are counted together, so that a block shared by thousands of
/// inodes is decoded once (`cache`) and its set evaluated once per distinct group; inodes without
/// a block are handed out one by one. `keep` inode numbers are kept per group.
///
/// On the one parallel walk ([`crate::reader::itable::scan_in_use`]): each worker keeps a state
/// `S` (from `init`) that `visit` adds groups to, the states combined in group order with
/// `merge`. Pending groups are gathered across workers before they are handed out (memory: at
/// most `MAX_PENDING_GROUPS` pending per worker). Returns the merged state, what
/// was met, and the walk's counts (`inodes_in_use` is the scanned-inode count `xattrs` reports).
pub fn image_set_groups_par<S, I, V, M>(
    fs: &crate::reader::fs::Filesystem,
    cache: &crate::reader::itable::XattrBlockCache,
    keep: usize,
    init: I,
    visit: V,
    merge: M,
    progress: &(dyn Fn(u64) + Sync),
) -> (S, GroupWalk, crate::reader::itable::ScanCounts)
where
    S: Send,
    I: Fn() -> S + Sync + Send,
    V: Fn(&mut S, SetGroup) + Sync + Send,
    M: Fn(S, S) -> S + Sync + Send,
{
    let new = || SetWorker {
        user: init(),
        pending: HashMap::new(),
        walk: GroupWalk::default(),
    };
    let combine = |mut merged: SetWorker<S>, later: SetWorker<S>| {
        let SetWorker {
            user,
            pending,
            walk,
        } = later;
        merged.user = merge(merged.user, user);
        merged.walk.unreadable += walk.unreadable;
        merged.walk.groups += walk.groups;
        merged.walk.absent = merged.walk.absent.or(walk.absent);
        merged.walk.seen = std::mem::take(&mut merged.walk.seen).merge(walk.seen);
        for (key, (count, inodes)) in pending {
            add_pending(fs, cache, &mut merged, &visit, key, (count, inodes), keep);
        }
        merged
    };
    let (mut worker, counts) = crate::reader::itable::scan_in_use(
        fs,
        new,
        |worker: &mut SetWorker<S>, _counts: &mut crate::reader::itable::ScanCounts, ino, raw| {
            set_of_inode(fs, cache, worker, &visit, keep, ino, raw)
        },
        combine,
        progress,
    );
    flush_pending(fs, cache, &mut worker, &visit);
    // A group that could not be read (its descriptor, bitmap or table) counts once, as does a
    // failed read of part of a table.
    worker.walk.unreadable += counts.problem_count;
    if let Some(problem) = counts
        .problems
        .iter()
        .find(|problem| problem.message.contains(crate::error::ABSENT))
    {
        worker
            .walk
            .absent
            .get_or_insert_with(|| problem.message.clone());
    }
    worker.walk.blocks_decoded = cache.decoded();
    (worker.user, worker.walk, counts)
}

/// Fit parameters of an image: its inode size, block size, ea_inode feature and preferred
/// `i_extra_isize` (the superblock's wanted value, at least 32 as the kernel uses). The extra
/// isize is not clamped to the image's own inode size, so that [`FitParams::for_inode_size`] gives
/// what-if sizes the right value even from a 128-byte-inode image; clamp with
/// `for_inode_size(inode_size)` before placing.
pub fn image_params(fs: &crate::reader::fs::Filesystem) -> FitParams {
    use crate::reader::features::{INCOMPAT_EA_INODE, RO_COMPAT_EXTRA_ISIZE};
    let inode_size = fs.geo.inode_size;
    let mut extra = DEFAULT_EXTRA_ISIZE;
    if fs.sb.has_ro_compat(RO_COMPAT_EXTRA_ISIZE) {
        extra = extra.max(fs.sb.want_extra_isize).max(fs.sb.min_extra_isize);
    }
    FitParams {
        inode_size,
        extra_isize: extra,
        block_size: fs.block_size().min(u32::MAX as u64) as u32,
        ea_inode: fs.sb.has_incompat(INCOMPAT_EA_INODE),
        inline_data: None,
    }
}

/// The in-use inodes of an image and their xattr sets: the inodes the xattrs scan visits
/// ([`crate::reader::itable::scan_in_use`] on the one walk: no `INODE_UNINIT` groups, no unused
/// table tails, bit set in the inode bitmap), less those `scanned_by_fit` leaves out. Items
/// are in inode order, then an error per problem the walk met (a group or part of a table it
/// could not read, at most `itable::MAX_PROBLEMS`); the walk goes on after them.
pub struct ImageInodes {
    items: std::vec::IntoIter<Result<ObservedSet>>,
}

/// Walk the in-use inodes of `fs` (all of them, in parallel, before the first item).
pub fn image_inodes(fs: &crate::reader::fs::Filesystem) -> ImageInodes {
    let (mut items, counts) = crate::reader::itable::scan_in_use(
        fs,
        Vec::new,
        |acc: &mut Vec<Result<ObservedSet>>, _counts, ino, raw| {
            if scanned_by_fit(fs, ino, &crate::reader::inode::Inode::parse(raw)) {
                acc.push(raw_inode_xattrs(fs, ino, raw));
            }
        },
        |mut earlier, mut later| {
            earlier.append(&mut later);
            earlier
        },
        &|_| {},
    );
    items.extend(counts.problems.into_iter().map(|p| Err(Error::Corrupt(p))));
    ImageInodes {
        items: items.into_iter(),
    }
}

/// Whether `fit --from-image` looks at in-use inode `ino`: the root and the inodes from
/// `s_first_ino` that are linked and not EA inodes (whose value belongs to another inode).
fn scanned_by_fit(
    fs: &crate::reader::fs::Filesystem,
    ino: u32,
    inode: &crate::reader::inode::Inode,
) -> bool {
    (ino == 2 || ino >= fs.sb.first_ino())
        && !inode.has_flag(crate::reader::inode::EA_INODE_FL)
        && inode.links_count != 0
}

impl Iterator for ImageInodes {
    type Item = Result<ObservedSet>;

    fn next(&mut self) -> Option<Self::Item> {
        self.items.next()
    }
}

/// Xattr sets of a live directory tree, read with `llistxattr`/`lgetxattr` (never following
/// symlinks), staying on the filesystem of the root (`st_dev`), each hard-linked inode once.
/// POSIX ACLs are converted from the VFS form getxattr returns to ext4's on-disk size.
pub struct DirXattrs {
    stack: Vec<std::path::PathBuf>,
    dev: u64,
    seen_links: std::collections::HashSet<u64>,
    last: Option<std::path::PathBuf>,
}

impl DirXattrs {
    /// Path of the entry the last item came from.
    pub fn last_path(&self) -> Option<&std::path::Path> {
        self.last.as_deref()
    }
}

/// Walk `root`.
pub fn dir_xattr_sets(root: &std::path::Path) -> Result<DirXattrs> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::symlink_metadata(root).map_err(|e| Error::Io {
        path: root.to_path_buf(),
        op: "cannot stat",
        source: e,
    })?;
    Ok(DirXattrs {
        stack: vec![root.to_path_buf()],
        dev: md.dev(),
        seen_links: Default::default(),
        last: None,
    })
}

/// Names and on-disk value sizes of the xattrs of `path` (not following a symlink). Lists and
/// values of any length are read completely ([`crate::reader::os::xattr_names`]); POSIX ACLs count with
/// the size of ext4's compact form.
pub fn path_xattrs(path: &std::path::Path) -> Result<Vec<Attr>> {
    let io = |op: &'static str| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, op, source }
    };
    let names = crate::reader::os::xattr_names(path).map_err(io("cannot list xattrs of"))?;
    let mut out = Vec::new();
    for name in names {
        let Some(value) =
            crate::reader::os::xattr_value(path, &name).map_err(io("cannot read xattr of"))?
        else {
            continue; // removed meanwhile
        };
        let full = String::from_utf8_lossy(&name).into_owned();
        let is_acl = full == "system.posix_acl_access" || full == "system.posix_acl_default";
        let mut size = value.len();
        if is_acl && size > 0 && size <= VFS_VALUE_MAX as usize {
            if let Ok(entries) = crate::reader::xattr::decode_acl_vfs(&value) {
                size = crate::reader::xattr::acl_disk_size(&entries);
            }
        }
        out.push(Attr::new(full, size.min(u32::MAX as usize) as u32));
    }
    Ok(out)
}

impl Iterator for DirXattrs {
    type Item = Result<XattrSet>;

    fn next(&mut self) -> Option<Self::Item> {
        use std::os::unix::fs::MetadataExt;
        loop {
            let path = self.stack.pop()?;
            self.last = Some(path.clone());
            let md = match std::fs::symlink_metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    return Some(Err(Error::Io {
                        path,
                        op: "cannot stat",
                        source: e,
                    }))
                }
            };
            if md.dev() != self.dev {
                continue; // another filesystem mounted below the root
            }
            if md.is_dir() {
                match std::fs::read_dir(&path) {
                    Ok(rd) => self.stack.extend(rd.flatten().map(|ent| ent.path())),
                    Err(e) => {
                        return Some(Err(Error::Io {
                            path,
                            op: "cannot read directory",
                            source: e,
                        }))
                    }
                }
            } else if md.nlink() > 1 && !self.seen_links.insert(md.ino()) {
                continue;
            }
            return Some(path_xattrs(&path).map(|attrs| XattrSet {
                attrs,
                inline_data: None,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(inode_size: u32) -> FitParams {
        FitParams::new(inode_size)
    }

    fn locs(placed: &FitResult) -> Vec<Location> {
        placed.placements.iter().map(|x| x.location).collect()
    }

    #[test]
    fn usable_bytes_table() {
        for (is, ex, want) in [
            (128, 0, 0),
            (256, 32, 88),
            (256, 28, 92),
            (512, 32, 344),
            (1024, 32, 856),
            (2048, 32, 1880),
            (4096, 32, 3928),
            (4096, 28, 3932),
        ] {
            let mut params = p(is);
            params.extra_isize = ex;
            assert_eq!(usable_body(&params), want, "{is}/{ex}");
        }
        assert_eq!(ea_inode_threshold(1024), 968);
        assert_eq!(ea_inode_threshold(4096), 4040);
        assert_eq!(ea_inode_threshold(65536), 65480);
        assert_eq!(block_reserve(4096), 512);
        assert_eq!(block_reserve(65536), 1024);
    }

    #[test]
    fn selinux_and_capability_in_256() {
        // 31-byte label: LEN("selinux") = 24, SIZE(31) = 32 -> 56.
        let label = Attr::new("security.selinux", 31);
        let cap = Attr::new("security.capability", 20);
        let placed = place(&p(256), std::slice::from_ref(&label)).unwrap();
        assert_eq!(placed.usable_bytes, 88);
        assert_eq!(placed.placements[0].inode_cost, 56);
        assert_eq!(placed.free_bytes, 32);
        assert!(placed.all_in_inode);
        // capability v2: LEN("capability") = 28, SIZE(20) = 20 -> 48; 56 + 48 = 104 > 88.
        let placed = place(&p(256), &[label.clone(), cap.clone()]).unwrap();
        assert_eq!(placed.needed_bytes, 104);
        assert_eq!(locs(&placed), vec![Location::Inode, Location::Block]);
        assert_eq!(placed.free_bytes, 32);
        // block: 32 header + 28 entry ... used = 28 + 20
        assert_eq!(placed.block_used_bytes, 48);
        assert_eq!(placed.block_free_bytes, Some(4096 - 32 - 4 - 48));
        assert!(placed.better_order.is_none());
        // In 512 both fit.
        let placed = place(&p(512), &[label, cap]).unwrap();
        assert!(placed.all_in_inode);
        assert_eq!(placed.free_bytes, 344 - 104);
    }

    #[test]
    fn acl_pair_exactly_fills_256() {
        // access + default ACL with one named entry each: 16 + 28 = 44 each -> 88.
        let placed = place(
            &p(256),
            &[
                Attr::new("system.posix_acl_access", 28),
                Attr::new("system.posix_acl_default", 28),
                Attr::new("user.x", 0),
            ],
        )
        .unwrap();
        assert_eq!(
            locs(&placed),
            vec![Location::Inode, Location::Inode, Location::Block]
        );
        assert_eq!(placed.free_bytes, 0);
    }

    #[test]
    fn later_small_attribute_still_goes_to_body() {
        let placed = place(
            &p(256),
            &[
                Attr::new("user.a", 40), // 20 + 40 = 60
                Attr::new("user.b", 40), // 60 > 28 left -> block
                Attr::new("user.c", 8),  // 20 + 8 = 28 -> exactly fits
            ],
        )
        .unwrap();
        assert_eq!(
            locs(&placed),
            vec![Location::Inode, Location::Block, Location::Inode]
        );
        assert_eq!(placed.free_bytes, 0);
    }

    #[test]
    fn better_order_found() {
        let attrs = [
            Attr::new("user.big", 60), // 20 + 60 = 80
            Attr::new("user.s1", 4),   // 24
            Attr::new("user.s2", 4),   // 24
            Attr::new("user.s3", 4),   // 24
        ];
        let placed = place(&p(256), &attrs).unwrap();
        assert_eq!(placed.count(Location::Inode), 1);
        let better = placed.better_order.unwrap();
        assert_eq!(better.in_inode, 3);
        assert_eq!(better.order[0], "user.s1");
    }

    #[test]
    fn enospc_without_ea_inode_and_ea_inode_with_it() {
        let mut params = p(256);
        params.block_size = 1024;
        let attrs = [Attr::new("user.a", 900), Attr::new("user.b", 900)];
        let placed = place(&params, &attrs).unwrap();
        assert_eq!(locs(&placed), vec![Location::Block, Location::None]);
        assert!(placed.placements[1]
            .reason
            .as_deref()
            .unwrap()
            .contains("ENOSPC"));
        params.ea_inode = true;
        let placed = place(&params, &attrs).unwrap();
        // 1 KiB block: reserve 128; a's value at 1024-900=124 < 128 -> EA inode, entry in body.
        assert_eq!(locs(&placed), vec![Location::EaInode, Location::EaInode]);
        assert_eq!(placed.placements[0].entry_location, Some(Location::Inode));
        // Over the threshold from the start: 968 < SIZE(970).
        let placed = place(&params, &[Attr::new("user.c", 970)]).unwrap();
        assert_eq!(placed.placements[0].location, Location::EaInode);
        assert_eq!(placed.placements[0].inode_cost, 20);
    }

    #[test]
    fn no_body_in_128_byte_inodes() {
        let placed = place(&p(128), &[Attr::new("user.a", 0)]).unwrap();
        assert_eq!(placed.usable_bytes, 0);
        assert_eq!(locs(&placed), vec![Location::Block]);
    }

    #[test]
    fn inline_data_takes_body_space() {
        let mut params = p(256);
        params.inline_data = Some(10); // system.data with empty value: 20 bytes
        let placed = place(&params, &[Attr::new("security.selinux", 31)]).unwrap();
        assert_eq!(placed.inline_data_bytes, 20);
        assert_eq!(placed.usable_bytes, 68);
        assert!(placed.all_in_inode);
        assert_eq!(placed.free_bytes, 12);
        params.inline_data = Some(128); // value 68 -> 20 + 68 = 88: body full
        let placed = place(&params, &[Attr::new("user.a", 0)]).unwrap();
        assert_eq!(placed.usable_bytes, 0);
        assert_eq!(locs(&placed), vec![Location::Block]);
    }

    #[test]
    fn bad_input() {
        assert!(place(&p(300), &[]).is_err());
        let mut params = p(4096);
        params.block_size = 1024;
        assert!(place(&params, &[]).is_err());
        assert!(place(&p(256), &[Attr::new("user.a", 1), Attr::new("user.a", 2)]).is_err());
        let placed = place(&p(256), &[Attr::new("bogus.a", 1)]).unwrap();
        assert_eq!(placed.placements[0].location, Location::None);
        let placed = place(&p(256), &[Attr::new("user.a", 70000)]).unwrap();
        assert_eq!(placed.placements[0].location, Location::None);
    }

    #[test]
    fn largest_value() {
        assert_eq!(largest_inode_value(&p(256), "user.a"), Some(68));
        assert_eq!(largest_inode_value(&p(256), "security.selinux"), Some(64));
        assert_eq!(largest_inode_value(&p(128), "user.a"), None);
        let placed = place(&p(256), &[Attr::new("user.a", 68)]).unwrap();
        assert!(placed.all_in_inode);
        let placed = place(&p(256), &[Attr::new("user.a", 69)]).unwrap();
        assert!(!placed.all_in_inode);
    }

    #[test]
    fn preferred_extra_isize_survives_a_128_byte_base() {
        // An image with 128-byte inodes still wants extra isize 32 for larger what-if sizes.
        let base = FitParams {
            extra_isize: 32,
            ..FitParams::new(128)
        };
        assert_eq!(base.for_inode_size(128).extra_isize, 0);
        assert_eq!(base.for_inode_size(256).extra_isize, 32);
        let agg = evaluate(
            base,
            &[128, 256],
            128,
            [XattrSet {
                attrs: vec![Attr::new("security.selinux", 31)],
                inline_data: None,
            }],
        )
        .unwrap();
        assert_eq!(agg.sizes[1].usable_bytes, 88);
        assert_eq!(agg.sizes[1].all_in_inode, 1);
        assert_eq!(agg.sizes[1].block_io_saved, 1);
    }

    #[test]
    fn aggregate() {
        let label = Attr::new("security.selinux", 31);
        let cap = Attr::new("security.capability", 20);
        let sets = vec![
            XattrSet::default(),
            XattrSet {
                attrs: vec![label.clone()],
                inline_data: None,
            },
            XattrSet {
                attrs: vec![label.clone(), cap.clone()],
                inline_data: None,
            },
            XattrSet {
                attrs: vec![Attr::new("user.big", 600)],
                inline_data: None,
            },
        ];
        let agg = evaluate(p(256), &[128, 256, 512, 1024], 256, sets).unwrap();
        assert_eq!(agg.inodes_scanned, 4);
        assert_eq!(agg.inodes_with_xattrs, 3);
        let all_in_inode: Vec<_> = agg.sizes.iter().map(|s| s.all_in_inode).collect();
        assert_eq!(all_in_inode, vec![0, 1, 2, 3]);
        // reference 256: two inodes need the block.
        let saved: Vec<_> = agg.sizes.iter().map(|s| s.block_io_saved).collect();
        assert_eq!(saved, vec![-1, 0, 1, 2]);
        assert_eq!(agg.smallest_for_100, Some(1024));
        assert_eq!(agg.smallest_for_90, Some(1024));
        // 2 of 3 fit at 512: 66 % < 90 %
        let agg = evaluate(
            p(256),
            &[256],
            256,
            (0..100).map(|i| XattrSet {
                attrs: vec![Attr::new("user.v", if i == 0 { 600 } else { 10 })],
                inline_data: None,
            }),
        )
        .unwrap();
        assert_eq!(agg.smallest_for_99, Some(256));
        assert_eq!(agg.smallest_for_100, Some(1024));
    }
}
