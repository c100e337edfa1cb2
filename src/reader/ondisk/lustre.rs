//! Lustre's xattrs on ldiskfs (an ext4 with Lustre's metadata in `trusted.*`), as declared in
//! lustre-release `lustre/include/uapi/linux/lustre/lustre_idl.h` and `lustre_user.h`:
//! `trusted.lma` (`struct lustre_mdt_attrs`, on OST objects `struct lustre_ost_attrs`),
//! `trusted.link` (`struct link_ea_header` + `struct link_ea_entry`: the header in CPU order, the
//! entries big-endian and unaligned), `trusted.lov` (`struct lov_mds_md_v1/v3`,
//! `struct lov_comp_md_v1` + `struct lov_comp_md_entry_v1`, `struct lov_ost_data_v1`),
//! `trusted.fid` (`struct filter_fid` and its older sizes) and `trusted.som`
//! (`struct lustre_som_attrs`). Little-endian unless said otherwise.

use super::OnDisk;
use binrw::BinRead;

/// `struct lu_fid`, little-endian (lma, lov, filter_fid).
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[br(little)]
pub struct LuFid {
    /// `f_seq`.
    pub seq: u64,
    /// `f_oid`.
    pub oid: u32,
    /// `f_ver`.
    pub ver: u32,
}

/// `struct lu_fid` as `fid_cpu_to_be` stores it in link entries.
#[derive(BinRead, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[br(big)]
pub struct LuFidBe {
    /// `f_seq`.
    pub seq: u64,
    /// `f_oid`.
    pub oid: u32,
    /// `f_ver`.
    pub ver: u32,
}

/// `struct lustre_mdt_attrs` (`trusted.lma`).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct Lma {
    /// `lma_compat` (`LMAC_*`).
    pub compat: u32,
    /// `lma_incompat` (`LMAI_*`).
    pub incompat: u32,
    /// `lma_self_fid`.
    pub self_fid: LuFid,
}

/// The tail `struct lustre_ost_attrs` adds after `struct lustre_mdt_attrs` on OST objects.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct OstAttrsTail {
    /// `loa_parent_fid`.
    pub parent_fid: LuFid,
    /// `loa_stripe_size`.
    pub stripe_size: u32,
    /// `loa_comp_id`.
    pub comp_id: u32,
    /// `loa_comp_start`.
    pub comp_start: u64,
    /// `loa_comp_end`.
    pub comp_end: u64,
}

/// `LINK_EA_MAGIC`.
pub const LINK_EA_MAGIC: u32 = 0x11EA_F1DF;

/// `struct link_ea_header` (in CPU order: little-endian on the x86 and ARM servers that write it;
/// a byte-swapped magic means big-endian).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct LinkEaHeader {
    /// `leh_magic`.
    pub magic: u32,
    /// `leh_reccount`.
    pub reccount: u32,
    /// `leh_len`: bytes of header and entries.
    pub len: u64,
    /// `leh_overflow_time`.
    pub overflow_time: u32,
    /// `leh_padding`.
    pub padding: u32,
}

/// The fixed start of `struct link_ea_entry`: `lee_reclen` (big-endian, unaligned) and
/// `lee_parent_fid` (big-endian); the name (`reclen - 18` bytes, no NUL) follows.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(big)]
pub struct LinkEaEntryHead {
    /// `lee_reclen`.
    pub reclen: u16,
    /// `lee_parent_fid`.
    pub parent_fid: LuFidBe,
}

/// `LOV_MAGIC_V1`.
pub const LOV_MAGIC_V1: u32 = 0x0BD1_0BD0;
/// `LOV_MAGIC_V3` (adds the pool name).
pub const LOV_MAGIC_V3: u32 = 0x0BD3_0BD0;
/// `LOV_MAGIC_COMP_V1` (composite: PFL, FLR, SEL).
pub const LOV_MAGIC_COMP_V1: u32 = 0x0BD6_0BD0;
/// `LOV_MAGIC_FOREIGN`.
pub const LOV_MAGIC_FOREIGN: u32 = 0x0BD7_0BD0;
/// `LOV_MAXPOOLNAME + 1`: bytes of `lmm_pool_name`.
pub const LOV_POOL_NAME_LEN: usize = 16;

/// `struct ost_id`: `{oi_id, oi_seq}` or a `struct lu_fid`, told apart by `ostid_seq()`.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct OstId {
    /// `oi.oi_id` (or `oi_fid.f_seq`).
    pub lo: u64,
    /// `oi.oi_seq` (or `oi_fid.f_oid` and `f_ver`).
    pub hi: u64,
}

/// The header common to `struct lov_mds_md_v1` and `_v3` (v3's pool name follows it).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct LovMdsMd {
    /// `lmm_magic`.
    pub magic: u32,
    /// `lmm_pattern` (`LOV_PATTERN_*`).
    pub pattern: u32,
    /// `lmm_oi`.
    pub oi: OstId,
    /// `lmm_stripe_size`.
    pub stripe_size: u32,
    /// `lmm_stripe_count`.
    pub stripe_count: u16,
    /// `lmm_layout_gen`.
    pub layout_gen: u16,
}

/// `struct lov_ost_data_v1`: one stripe's object.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct LovOstData {
    /// `l_ost_oi`.
    pub oi: OstId,
    /// `l_ost_gen`.
    pub ost_gen: u32,
    /// `l_ost_idx`.
    pub ost_idx: u32,
}

/// `struct lov_foreign_md` (`LOV_MAGIC_FOREIGN`): a layout Lustre does not interpret, kept for
/// another system (a symlink target, an HSM copy); `lfm_length` bytes of `lfm_value` follow.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct LovForeignMd {
    /// `lfm_magic`.
    pub magic: u32,
    /// `lfm_length`: bytes of `lfm_value`.
    pub length: u32,
    /// `lfm_type` (`LU_FOREIGN_TYPE_*`).
    pub foreign_type: u32,
    /// `lfm_flags` (type specific).
    pub flags: u32,
}

/// `LU_FOREIGN_TYPE_*` of lustre_user.h that the format names.
pub const LU_FOREIGN_TYPES: &[(u32, &str)] = &[(0, "none"), (0xda05, "symlink")];

/// `struct lov_comp_md_v1`: the composite layout header.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct LovCompMd {
    /// `lcm_magic`.
    pub magic: u32,
    /// `lcm_size`: bytes of the whole layout.
    pub size: u32,
    /// `lcm_layout_gen`.
    pub layout_gen: u32,
    /// `lcm_flags`.
    pub flags: u16,
    /// `lcm_entry_count`.
    pub entry_count: u16,
    /// `lcm_mirror_count` (mirrors minus one).
    pub mirror_count: u16,
    /// `lcm_ec_count` (`lcm_padding3`, `lcm_padding1` and `lcm_padding2` follow).
    #[br(pad_after = 13)]
    pub ec_count: u8,
}

/// `struct lov_comp_md_entry_v1`: one component.
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct LovCompMdEntry {
    /// `lcme_id`.
    pub id: u32,
    /// `lcme_flags` (`LCME_FL_*`).
    pub flags: u32,
    /// `lcme_extent.e_start`.
    pub extent_start: u64,
    /// `lcme_extent.e_end`.
    pub extent_end: u64,
    /// `lcme_offset`: where the component's `lov_mds_md` starts, from the header.
    pub offset: u32,
    /// `lcme_size`.
    pub size: u32,
    /// `lcme_layout_gen`.
    pub layout_gen: u32,
    /// `lcme_timestamp` / `lcme_time_and_id`.
    pub timestamp: u64,
    /// `lcme_dstripe_count`, `lcme_cstripe_count`, `lcme_compr_type`, `lcme_compr_*` bits.
    pub tail: [u8; 4],
}

/// `struct ost_layout` inside `struct filter_fid` (Lustre 2.10 on).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct OstLayout {
    /// `ol_stripe_size`.
    pub stripe_size: u32,
    /// `ol_stripe_count`.
    pub stripe_count: u32,
    /// `ol_comp_start`.
    pub comp_start: u64,
    /// `ol_comp_end`.
    pub comp_end: u64,
    /// `ol_comp_id`.
    pub comp_id: u32,
}

/// The tail of `struct filter_fid` after `ff_layout` (Lustre 2.11 on).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct FilterFidVersion {
    /// `ff_layout_version`.
    pub layout_version: u32,
    /// `ff_range`.
    pub range: u32,
}

/// `struct filter_fid_18_23` after `ff_parent`: the object's own id (Lustre 1.8 to 2.3).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct FilterFidOld {
    /// `ff_objid`.
    pub objid: u64,
    /// `ff_seq`.
    pub seq: u64,
}

/// `struct lustre_som_attrs` (`trusted.som`).
#[derive(BinRead, Clone, Copy, Debug, PartialEq, Eq)]
#[br(little)]
pub struct SomAttrs {
    /// `lsa_valid` (`SOM_FL_*`).
    pub valid: u16,
    /// `lsa_reserved`.
    pub reserved: [u16; 3],
    /// `lsa_size`.
    pub size: u64,
    /// `lsa_blocks`.
    pub blocks: u64,
}

impl OnDisk for LuFid {
    const SIZE: usize = 16;
    const WHAT: &'static str = "Lustre FID";
}
impl OnDisk for Lma {
    const SIZE: usize = 24;
    const WHAT: &'static str = "trusted.lma";
}
impl OnDisk for OstAttrsTail {
    const SIZE: usize = 40;
    const WHAT: &'static str = "trusted.lma (OST part)";
}
impl OnDisk for LinkEaHeader {
    const SIZE: usize = 24;
    const WHAT: &'static str = "trusted.link header";
}
impl OnDisk for LinkEaEntryHead {
    const SIZE: usize = 18;
    const WHAT: &'static str = "trusted.link entry";
}
impl OnDisk for LovMdsMd {
    const SIZE: usize = 32;
    const WHAT: &'static str = "trusted.lov header";
}
impl OnDisk for LovOstData {
    const SIZE: usize = 24;
    const WHAT: &'static str = "trusted.lov object";
}
impl OnDisk for LovForeignMd {
    const SIZE: usize = 16;
    const WHAT: &'static str = "trusted.lov foreign layout";
}
impl OnDisk for LovCompMd {
    const SIZE: usize = 32;
    const WHAT: &'static str = "trusted.lov composite header";
}
impl OnDisk for LovCompMdEntry {
    const SIZE: usize = 48;
    const WHAT: &'static str = "trusted.lov component";
}
impl OnDisk for OstLayout {
    const SIZE: usize = 28;
    const WHAT: &'static str = "trusted.fid layout";
}
impl OnDisk for FilterFidVersion {
    const SIZE: usize = 8;
    const WHAT: &'static str = "trusted.fid layout version";
}
impl OnDisk for FilterFidOld {
    const SIZE: usize = 16;
    const WHAT: &'static str = "trusted.fid (1.8 form)";
}
impl OnDisk for SomAttrs {
    const SIZE: usize = 24;
    const WHAT: &'static str = "trusted.som";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::ondisk::testing::assert_size;

    #[test]
    fn sizes_match_declarations() {
        assert_size::<LuFid>();
        assert_size::<Lma>();
        assert_size::<OstAttrsTail>();
        assert_size::<LinkEaHeader>();
        assert_size::<LinkEaEntryHead>();
        assert_size::<LovMdsMd>();
        assert_size::<LovOstData>();
        assert_size::<LovForeignMd>();
        assert_size::<LovCompMd>();
        assert_size::<LovCompMdEntry>();
        assert_size::<OstLayout>();
        assert_size::<FilterFidVersion>();
        assert_size::<FilterFidOld>();
        assert_size::<SomAttrs>();
    }
}
