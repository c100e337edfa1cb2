//! A pure predictor of the filesystem layout that `mke2fs` 1.47.0 creates.
//!
//! Given a device size and the command-line options (`-b -I -i -N -J size= -G -E -O -T -m`),
//! [`predict`] reproduces what mke2fs's `PRS()` and libext2fs's `ext2fs_initialize()` compute:
//! block size, block count (rounded down to whole pages, trimmed when the last group would be too
//! small), groups, inodes per group (rounded to fill whole inode-table blocks, then down to a
//! multiple of 8, lowered until the total fits in 32 bits), the shrinking of blocks per group when a
//! group would need more inodes than one bitmap block holds, reserved GDT blocks, reserved blocks
//! (recomputed from the original ratio when the block count is trimmed), the default journal size
//! (`ext2fs_default_journal_size`) and the `-J size=` limits, the fast-commit area, and the
//! superblock's overhead count. Defaults come from `mke2fs.conf` ([`MkfsConf`]), parsed the way
//! mke2fs resolves its `fs_types` list.
//!
//! Every rule here was checked against the real mke2fs 1.47.0 on sparse files (see
//! `tests/advise_mke2fs.rs` and the README).

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use crate::{Error, Result};

/// The 1.47.0 `mke2fs.conf` as shipped (used when no configuration file can be read).
pub const BUILTIN_CONF: &str = "[defaults]
	base_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
	default_mntopts = acl,user_xattr
	enable_periodic_fsck = 0
	blocksize = 4096
	inode_size = 256
	inode_ratio = 16384

[fs_types]
	ext3 = {
		features = has_journal
	}
	ext4 = {
		features = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
	}
	small = {
		blocksize = 1024
		inode_ratio = 4096
	}
	floppy = {
		blocksize = 1024
		inode_ratio = 8192
	}
	big = {
		inode_ratio = 32768
	}
	huge = {
		inode_ratio = 65536
	}
	news = {
		inode_ratio = 4096
	}
	largefile = {
		inode_ratio = 1048576
		blocksize = -1
	}
	largefile4 = {
		inode_ratio = 4194304
		blocksize = -1
	}
	hurd = {
	     blocksize = 4096
	     inode_size = 128
	     warn_y2038_dates = 0
	}
";

/// System page size mke2fs rounds device sizes to (x86-64 and most 64-bit Linux targets).
pub const PAGE_SIZE: u64 = 4096;
/// The largest 32-bit count (`MAX_32_NUM` in mke2fs).
pub const MAX_32: u64 = 0xffff_ffff;
/// First non-reserved inode of a dynamic-revision filesystem.
const FIRST_INO: u64 = 11;
/// `-J size=` limits, in filesystem blocks (journal plus fast-commit area).
pub const JOURNAL_MIN_BLOCKS: u64 = 1024;
/// Upper `-J size=` limit in blocks.
pub const JOURNAL_MAX_BLOCKS: u64 = 10_240_000;
/// Fast-commit blocks are the default journal size divided by this.
const FC_RATIO: u64 = 64;

/// The parts of `mke2fs.conf` that decide a layout: `[defaults]` and `[fs_types]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MkfsConf {
    /// `[defaults]` relation values.
    pub defaults: BTreeMap<String, String>,
    /// `[fs_types]`: type name -> relations.
    pub fs_types: BTreeMap<String, BTreeMap<String, String>>,
    /// Where the configuration came from (a path or "built-in 1.47.0 defaults").
    pub origin: String,
}

impl MkfsConf {
    /// Parse the profile syntax mke2fs uses: `[section]` headers, `name = value` relations and
    /// `name = { ... }` subsections; `#`/`;` comments. Unknown sections are ignored.
    pub fn parse(text: &str, origin: &str) -> MkfsConf {
        let mut conf = MkfsConf {
            origin: origin.to_string(),
            ..MkfsConf::default()
        };
        let mut section = String::new();
        let mut sub: Option<String> = None;
        for raw in text.lines() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if line.starts_with('[') {
                section = line
                    .trim_matches(|c| c == '[' || c == ']')
                    .trim()
                    .to_string();
                sub = None;
                continue;
            }
            if line.starts_with('}') {
                sub = None;
                continue;
            }
            let Some((name, value)) = line.split_once('=') else {
                continue;
            };
            let name = name.trim().to_string();
            let value = value.trim();
            if value == "{" {
                if section == "fs_types" {
                    conf.fs_types.entry(name.clone()).or_default();
                }
                sub = Some(name);
                continue;
            }
            let value = value.trim_matches('"').to_string();
            match (section.as_str(), &sub) {
                ("defaults", None) => {
                    conf.defaults.insert(name, value);
                }
                ("fs_types", Some(t)) => {
                    conf.fs_types
                        .entry(t.clone())
                        .or_default()
                        .insert(name, value);
                }
                _ => {}
            }
        }
        conf
    }

    /// The configuration compiled into mke2fs 1.47.0.
    pub fn builtin() -> MkfsConf {
        MkfsConf::parse(BUILTIN_CONF, "built-in 1.47.0 defaults")
    }

    /// What mke2fs reads: `$MKE2FS_CONFIG` or `/etc/mke2fs.conf`, else the built-in defaults.
    pub fn system() -> MkfsConf {
        let path = std::env::var("MKE2FS_CONFIG").unwrap_or_else(|_| "/etc/mke2fs.conf".into());
        match std::fs::read_to_string(&path) {
            Ok(text) => MkfsConf::parse(&text, &path),
            Err(_) => MkfsConf::builtin(),
        }
    }

    fn type_value(&self, fs_type: &str, opt: &str) -> Option<&str> {
        self.fs_types
            .get(fs_type)
            .and_then(|m| m.get(opt))
            .map(|s| s.as_str())
    }

    /// `get_int_from_profile`: `[defaults]`, then every type in order overrides.
    pub fn int(&self, types: &[String], opt: &str, def: i64) -> i64 {
        let mut value = self
            .defaults
            .get(opt)
            .and_then(|s| parse_c_int(s))
            .unwrap_or(def);
        for usage_type in types {
            if let Some(typed) = self.type_value(usage_type, opt).and_then(parse_c_int) {
                value = typed;
            }
        }
        value
    }

    /// `get_string_from_profile`: the last type that sets it, else `[defaults]`, else `def`.
    pub fn string(&self, types: &[String], opt: &str, def: &str) -> String {
        for usage_type in types.iter().rev() {
            if let Some(value) = self.type_value(usage_type, opt) {
                return value.to_string();
            }
        }
        self.defaults
            .get(opt)
            .cloned()
            .unwrap_or_else(|| def.to_string())
    }

    /// `fs_types.TYPE.features` for one type (empty when unset).
    pub fn type_features(&self, fs_type: &str) -> String {
        self.type_value(fs_type, "features")
            .unwrap_or("")
            .to_string()
    }
}

fn parse_c_int(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Some(hex) = text.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()
    } else {
        text.parse().ok()
    }
}

/// The mke2fs options that shape the layout. `None` means "mke2fs decides".
#[derive(Clone, Debug, PartialEq)]
pub struct MkfsOptions {
    /// `-t` (mkfs.ext4 implies ext4).
    pub fs_type: String,
    /// `-T` usage types; `None` picks by size (floppy/small/default/big/huge).
    pub usage_types: Option<Vec<String>>,
    /// `-b`.
    pub block_size: Option<u32>,
    /// `-I`.
    pub inode_size: Option<u32>,
    /// `-i`.
    pub inode_ratio: Option<u64>,
    /// `-N`.
    pub inodes: Option<u64>,
    /// `-J size=` in MiB.
    pub journal_size_mib: Option<u64>,
    /// `-G`.
    pub flex_bg_size: Option<u32>,
    /// `-E stride=`.
    pub stride: Option<u32>,
    /// `-E stripe_width=`.
    pub stripe_width: Option<u32>,
    /// `-O` edits in order (`name` sets, `^name` clears).
    pub features: Vec<String>,
    /// `-m` percent.
    pub reserved_percent: Option<f64>,
}

impl Default for MkfsOptions {
    fn default() -> Self {
        MkfsOptions {
            fs_type: "ext4".into(),
            usage_types: None,
            block_size: None,
            inode_size: None,
            inode_ratio: None,
            inodes: None,
            journal_size_mib: None,
            flex_bg_size: None,
            stride: None,
            stripe_width: None,
            features: Vec::new(),
            reserved_percent: None,
        }
    }
}

impl MkfsOptions {
    /// The argv after `mkfs.ext4`, without the device: only the options that differ from "unset".
    pub fn to_args(&self) -> Vec<String> {
        let mut ext = Vec::new();
        if let Some(stride) = self.stride {
            ext.push(format!("stride={stride}"));
        }
        if let Some(width) = self.stripe_width {
            ext.push(format!("stripe_width={width}"));
        }
        let nonempty = |v: Vec<String>| (!v.is_empty()).then(|| v.join(","));
        let flags: [(&str, Option<String>); 11] = [
            ("-t", (self.fs_type != "ext4").then(|| self.fs_type.clone())),
            ("-T", self.usage_types.as_ref().map(|t| t.join(","))),
            ("-b", self.block_size.map(|b| b.to_string())),
            ("-I", self.inode_size.map(|i| i.to_string())),
            ("-i", self.inode_ratio.map(|i| i.to_string())),
            ("-N", self.inodes.map(|n| n.to_string())),
            ("-m", self.reserved_percent.map(format_percent)),
            ("-J", self.journal_size_mib.map(|j| format!("size={j}"))),
            ("-G", self.flex_bg_size.map(|g| g.to_string())),
            ("-E", nonempty(ext)),
            ("-O", nonempty(self.features.clone())),
        ];
        flags
            .into_iter()
            .filter_map(|(flag, value)| Some([flag.to_string(), value?]))
            .flatten()
            .collect()
    }

    /// Parse the subset of mke2fs's command line this module models (the inverse of
    /// [`MkfsOptions::to_args`]; `-E` options other than stride/stripe_width, `-F`, `-q`, `-n`,
    /// `-U`, `-L` are accepted and ignored because they do not change the layout).
    pub fn from_args(args: &[String]) -> Result<MkfsOptions> {
        let mut options = MkfsOptions::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let mut val = |name: &str| -> Result<String> {
                it.next()
                    .cloned()
                    .ok_or_else(|| Error::Invalid(format!("option {name} needs a value")))
            };
            match arg.as_str() {
                "-t" => options.fs_type = val("-t")?,
                "-T" => {
                    options.usage_types = Some(val("-T")?.split(',').map(String::from).collect())
                }
                "-b" => options.block_size = Some(parse_number(&val("-b")?, "block size")?),
                "-I" => options.inode_size = Some(parse_number(&val("-I")?, "inode size")?),
                "-i" => options.inode_ratio = Some(parse_number(&val("-i")?, "inode ratio")?),
                "-N" => options.inodes = Some(parse_number(&val("-N")?, "inode count")?),
                "-m" => {
                    options.reserved_percent = Some(parse_number(&val("-m")?, "reserved percent")?)
                }
                "-G" => options.flex_bg_size = Some(parse_number(&val("-G")?, "flex_bg size")?),
                "-J" => {
                    let value = val("-J")?;
                    for part in value.split(',') {
                        if let Some(size) = part.strip_prefix("size=") {
                            options.journal_size_mib = Some(parse_number(size, "journal size")?);
                        }
                    }
                }
                "-E" => {
                    let value = val("-E")?;
                    for part in value.split(',') {
                        if let Some(number) = part.strip_prefix("stride=") {
                            options.stride = Some(parse_number(number, "stride")?);
                        } else if let Some(number) = part.strip_prefix("stripe_width=") {
                            options.stripe_width = Some(parse_number(number, "stripe_width")?);
                        } else if let Some(number) = part.strip_prefix("stripe-width=") {
                            options.stripe_width = Some(parse_number(number, "stripe_width")?);
                        }
                    }
                }
                "-O" => options.features.extend(
                    val("-O")?
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(String::from),
                ),
                "-U" | "-L" | "-M" | "-e" | "-o" => {
                    val(arg)?;
                }
                "-F" | "-q" | "-n" | "-v" => {}
                other => {
                    return Err(Error::Invalid(format!(
                        "option '{other}' is not modelled by the layout predictor"
                    )))
                }
            }
        }
        Ok(options)
    }
}

fn format_percent(percent: f64) -> String {
    if percent.fract() == 0.0 {
        format!("{}", percent as u64)
    } else {
        format!("{percent}")
    }
}

/// What mke2fs will create.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Layout {
    /// Resolved `fs_types` list (`ext4`, then the usage types).
    pub fs_types: Vec<String>,
    /// Enabled features after every edit, sorted.
    pub features: Vec<String>,
    /// Block size in bytes.
    pub block_size: u32,
    /// Blocks in the filesystem (`Block count`).
    pub blocks_count: u64,
    /// First data block (1 for 1 KiB blocks).
    pub first_data_block: u64,
    /// Blocks per group.
    pub blocks_per_group: u64,
    /// Block groups.
    pub groups: u64,
    /// Inode size.
    pub inode_size: u32,
    /// Bytes per inode used for the count (after profile and `-i`).
    pub inode_ratio: u64,
    /// Total inodes.
    pub inodes_count: u64,
    /// Inodes per group.
    pub inodes_per_group: u64,
    /// Inode-table blocks per group.
    pub inode_blocks_per_group: u64,
    /// Journal blocks including the fast-commit area (dumpe2fs "Total journal blocks"); 0 without.
    pub journal_blocks: u64,
    /// Of which fast-commit blocks.
    pub fast_commit_blocks: u64,
    /// Blocks reserved for root.
    pub reserved_blocks: u64,
    /// Reserved GDT blocks (for online resize).
    pub reserved_gdt_blocks: u64,
    /// Group descriptor size (32 or 64).
    pub desc_size: u32,
    /// Blocks of the group descriptor table.
    pub desc_blocks: u64,
    /// flex_bg group count, when flex_bg is on.
    pub flex_bg_size: Option<u32>,
    /// RAID stride (blocks), when set.
    pub stride: Option<u32>,
    /// RAID stripe width (blocks), when set.
    pub stripe_width: Option<u32>,
    /// Whether libext2fs switched meta_bg on by itself (descriptors would eat a group).
    pub meta_bg: bool,
    /// Superblock `s_overhead_clusters`: superblocks, descriptors, reserved GDT, bitmaps, inode
    /// tables and the journal, plus block 0 on 1 KiB filesystems. `None` with meta_bg.
    pub overhead_blocks: Option<u64>,
    /// Blocks left for data and directories (`blocks_count - overhead_blocks`).
    pub data_blocks: Option<u64>,
    /// Inode-table bytes over the whole filesystem.
    pub inode_table_bytes: u64,
}

impl Layout {
    /// Share of the device taken by inode tables, in percent.
    pub fn inode_table_percent(&self) -> f64 {
        let total = self.blocks_count as f64 * self.block_size as f64;
        if total == 0.0 {
            0.0
        } else {
            100.0 * self.inode_table_bytes as f64 / total
        }
    }
}

/// `ext2fs_default_journal_size`: journal blocks for a filesystem of `blocks` blocks (`None`:
/// too small for a journal).
pub fn default_journal_blocks(blocks: u64) -> Option<u64> {
    Some(match blocks {
        b if b < 2048 => return None,
        b if b < 32768 => 1024,
        b if b < 256 * 1024 => 4096,
        b if b < 512 * 1024 => 8192,
        b if b < 4096 * 1024 => 16384,
        b if b < 8192 * 1024 => 32768,
        b if b < 16384 * 1024 => 65536,
        b if b < 32768 * 1024 => 131072,
        _ => 262144,
    })
}

/// Usage type mke2fs picks from the size when `-T` is not given.
pub fn size_type(bytes: u64) -> &'static str {
    const MIB: u64 = 1 << 20;
    if bytes < 3 * MIB {
        "floppy"
    } else if bytes < 512 * MIB {
        "small"
    } else if bytes < 4 * (1 << 40) {
        "default"
    } else if bytes < 16 * (1 << 40) {
        "big"
    } else {
        "huge"
    }
}

/// Whether group `group` carries a superblock backup (sparse_super: 0, 1 and powers of 3, 5, 7).
pub fn group_has_super(group: u64, sparse_super: bool) -> bool {
    !sparse_super || crate::reader::geometry::sparse_super_group(group)
}

/// Apply a mke2fs feature edit string (`a,^b,none`) to a set.
fn edit_features(set: &mut BTreeSet<String>, edits: &str) {
    for feature in edits.split([',', ' ', '\t']).filter(|s| !s.is_empty()) {
        if feature == "none" || feature == "clear" {
            set.clear();
        } else if let Some(name) = feature.strip_prefix('^') {
            set.remove(name);
        } else {
            set.insert(feature.to_string());
        }
    }
}

fn ceil_div(dividend: u64, divisor: u64) -> u64 {
    dividend.div_ceil(divisor)
}

/// Predict what `mke2fs -t ext4 OPTIONS DEVICE` creates on a device (or file) of `device_bytes`
/// bytes, with the given configuration. Errors carry mke2fs's own refusal.
pub fn predict(device_bytes: u64, opts: &MkfsOptions, conf: &MkfsConf) -> Result<Layout> {
    check_options(opts)?;
    let prs = Prs::new(device_bytes, opts, conf)?;
    let geo = initialize(&prs)?;
    let mut feats = prs.feats.clone();
    if !geo.resize {
        feats.remove("resize_inode");
    }
    if geo.meta_bg {
        feats.insert("meta_bg".into());
    }
    // Per-group superblock + descriptor overhead.
    let super_groups = (0..geo.groups)
        .filter(|&g| group_has_super(g, prs.sparse()))
        .count() as u64;
    let sb_overhead = (!geo.meta_bg).then(|| super_groups * (1 + geo.desc_blocks + geo.rsv_gdt));
    let (journal_blocks, fc_blocks) =
        figure_journal_size(&prs, &geo, &mut feats, sb_overhead, opts.journal_size_mib)?;
    let Prs {
        types,
        block_size,
        inode_size,
        inode_ratio,
        desc_size,
        flex_bg_size,
        ..
    } = prs;
    let Geometry {
        first_data_block,
        bpg,
        blocks,
        r_blocks,
        groups,
        desc_blocks,
        ipg,
        itb,
        rsv_gdt,
        meta_bg,
        ..
    } = geo;
    let inodes_count = ipg * groups;
    let overhead_blocks =
        sb_overhead.map(|s| first_data_block + s + groups * (2 + itb) + journal_blocks);
    Ok(Layout {
        fs_types: types,
        features: feats.into_iter().collect(),
        block_size: block_size as u32,
        blocks_count: blocks,
        first_data_block,
        blocks_per_group: bpg,
        groups,
        inode_size: inode_size as u32,
        inode_ratio,
        inodes_count,
        inodes_per_group: ipg,
        inode_blocks_per_group: itb,
        journal_blocks,
        fast_commit_blocks: fc_blocks,
        reserved_blocks: r_blocks,
        reserved_gdt_blocks: rsv_gdt,
        desc_size: desc_size as u32,
        desc_blocks,
        flex_bg_size,
        stride: opts.stride,
        stripe_width: opts.stripe_width,
        meta_bg,
        overhead_blocks,
        data_blocks: overhead_blocks.map(|o| blocks.saturating_sub(o)),
        inode_table_bytes: groups * itb * block_size,
    })
}

fn invalid<T>(message: String) -> Result<T> {
    Err(Error::Invalid(message))
}

/// The option values mke2fs' argument parsing refuses outright.
fn check_options(opts: &MkfsOptions) -> Result<()> {
    let inv = invalid::<()>;
    if let Some(block_size) = opts.block_size {
        if !(1024..=65536).contains(&block_size) || !block_size.is_power_of_two() {
            return inv(format!("invalid block size - {block_size}"));
        }
    }
    if let Some(ratio) = opts.inode_ratio {
        if !(1024..=65536 * 1024).contains(&ratio) {
            return inv(format!(
                "invalid inode ratio {ratio} (min 1024/max 67108864)"
            ));
        }
    }
    if let Some(percent) = opts.reserved_percent {
        if !(0.0..=50.0).contains(&percent) || percent.is_nan() {
            return inv(format!("invalid reserved blocks percent - {percent}"));
        }
    }
    if let Some(flex_bg_size) = opts.flex_bg_size {
        if flex_bg_size == 0 || !flex_bg_size.is_power_of_two() {
            return inv("flex_bg size must be a power of 2".into());
        }
    }
    Ok(())
}

/// What mke2fs' PRS() settles before it calls ext2fs_initialize: the usage types, block size,
/// features, inode size, ratio and count, and the reserved blocks.
struct Prs {
    types: Vec<String>,
    block_size: u64,
    blocks_param: u64,
    feats: BTreeSet<String>,
    flex_bg_size: Option<u32>,
    inode_ratio: u64,
    inode_size: u64,
    inodes_param: u64,
    r_param: u64,
    desc_size: u64,
}

impl Prs {
    fn new(device_bytes: u64, opts: &MkfsOptions, conf: &MkfsConf) -> Result<Prs> {
        let (count, rounded_bytes) = device_units(device_bytes, opts)?;
        let types = usage_types(rounded_bytes, opts, conf);
        let block_size = pick_block_size(&types, opts, conf)?;
        let blocks_param = if opts.block_size.is_some() {
            count
        } else {
            count / (block_size / 1024)
        };
        let feats = pick_features(&types, opts, conf, blocks_param, block_size)?;
        let flex_bg_size = pick_flex_bg(&types, opts, conf, &feats)?;
        let (inode_ratio, inode_size) = pick_inode_size(&types, opts, conf, block_size)?;
        let bit64 = feats.contains("64bit");
        let inodes_param = inode_count(
            opts,
            bit64,
            blocks_param,
            block_size,
            inode_ratio,
            inode_size,
        )?;
        let reserved_ratio = opts
            .reserved_percent
            .unwrap_or_else(|| conf.int(&types, "reserved_ratio", 5) as f64);
        let r_param = (reserved_ratio * blocks_param as f64 / 100.0) as u64;
        Ok(Prs {
            types,
            block_size,
            blocks_param,
            feats,
            flex_bg_size,
            inode_ratio,
            inode_size,
            inodes_param,
            r_param,
            desc_size: if bit64 { 64 } else { 32 },
        })
    }

    fn sparse(&self) -> bool {
        self.feats.contains("sparse_super")
    }
}

/// Device size in units of the requested block size (1 KiB when -b is absent), rounded down to
/// whole pages, as mke2fs does for a device or file whose size it reads itself; and in bytes.
fn device_units(device_bytes: u64, opts: &MkfsOptions) -> Result<(u64, u64)> {
    let inv = invalid::<(u64, u64)>;
    let unit = u64::from(opts.block_size.unwrap_or(1024));
    let mut count = device_bytes / unit;
    if PAGE_SIZE > unit {
        count &= !(PAGE_SIZE / unit - 1);
    }
    if count == 0 {
        return inv("Device size reported to be zero".into());
    }
    let rounded_bytes = count * unit;

    Ok((count, rounded_bytes))
}

/// The fs type and usage types whose mke2fs.conf sections apply.
fn usage_types(rounded_bytes: u64, opts: &MkfsOptions, conf: &MkfsConf) -> Vec<String> {
    let mut fs_types = vec![opts.fs_type.clone()];
    match &opts.usage_types {
        Some(t) => fs_types.extend(t.iter().cloned()),
        None => fs_types.push(size_type(rounded_bytes).to_string()),
    }
    // mke2fs only keeps usage types the profile knows (it warns about the others); "default"
    // is never a section.
    fs_types
        .iter()
        .enumerate()
        .filter(|(i, t)| *i == 0 || conf.fs_types.contains_key(t.as_str()))
        .map(|(_, t)| t.clone())
        .collect()
}

/// `-b`, or the profile's blocksize.
fn pick_block_size(types: &[String], opts: &MkfsOptions, conf: &MkfsConf) -> Result<u64> {
    let inv = invalid::<u64>;
    let types = types.to_vec();
    let block_size: u64 = match opts.block_size {
        Some(size) => u64::from(size),
        None => {
            let size = conf.int(&types, "blocksize", 4096);
            let size = if size == -1 { PAGE_SIZE as i64 } else { size };
            if !(1024..=65536).contains(&size) || !(size as u64).is_power_of_two() {
                return inv(format!("invalid block size in mke2fs.conf - {size}"));
            }
            size as u64
        }
    };
    Ok(block_size)
}

/// Features: base_features, every type's features, default_features, then -O; then what the
/// device size forces.
fn pick_features(
    types: &[String],
    opts: &MkfsOptions,
    conf: &MkfsConf,
    blocks_param: u64,
    block_size: u64,
) -> Result<BTreeSet<String>> {
    let inv = invalid::<BTreeSet<String>>;
    let types = types.to_vec();
    let mut feats = BTreeSet::new();
    edit_features(
        &mut feats,
        &conf.string(
            &types,
            "base_features",
            "sparse_super,large_file,filetype,resize_inode,dir_index",
        ),
    );
    for usage_type in &types {
        edit_features(&mut feats, &conf.type_features(usage_type));
    }
    if opts.features.is_empty() {
        edit_features(&mut feats, &conf.string(&types, "default_features", ""));
    } else {
        edit_features(&mut feats, &opts.features.join(","));
    }
    for unsupported in ["bigalloc", "sparse_super2", "meta_bg", "journal_dev"] {
        if feats.contains(unsupported) {
            if unsupported == "meta_bg" && feats.contains("resize_inode") {
                return inv(
                    "The resize_inode and meta_bg features are not compatible. They can not be both enabled simultaneously.".into(),
                );
            }
            return inv(format!(
                "feature {unsupported} is not modelled by the layout predictor"
            ));
        }
    }
    let bit64 = feats.contains("64bit");
    if blocks_param > MAX_32 {
        if bit64 {
            feats.remove("resize_inode");
        } else {
            return inv(format!(
                "Size of device (0x{blocks_param:x} blocks) too big to be expressed in 32 bits using a blocksize of {block_size}."
            ));
        }
    }
    let log_bs = block_size.trailing_zeros();
    if blocks_param > (1u64 << (log_bs + 3 + 32)) - 1 {
        return inv(format!(
            "Size of device (0x{blocks_param:x} blocks) too big to create a filesystem using a blocksize of {block_size}."
        ));
    }
    Ok(feats)
}

/// `-G`, or the profile's flex_bg_size, when flex_bg is on.
fn pick_flex_bg(
    types: &[String],
    opts: &MkfsOptions,
    conf: &MkfsConf,
    feats: &BTreeSet<String>,
) -> Result<Option<u32>> {
    let inv = invalid::<Option<u32>>;
    let types = types.to_vec();
    let flex_bg_size = if feats.contains("flex_bg") {
        let size = opts
            .flex_bg_size
            .map(i64::from)
            .unwrap_or_else(|| conf.int(&types, "flex_bg_size", 16));
        if size <= 0 || !(size as u64).is_power_of_two() || size > i64::from(u32::MAX / 2) {
            return inv("flex_bg size must be a power of 2".into());
        }
        Some(size as u32)
    } else {
        if opts.flex_bg_size.is_some() {
            return inv("Flex_bg feature not enabled, so flex_bg size may not be specified".into());
        }
        None
    };

    Ok(flex_bg_size)
}

/// `-i` and `-I`, or the profile's inode_ratio and inode_size.
fn pick_inode_size(
    types: &[String],
    opts: &MkfsOptions,
    conf: &MkfsConf,
    block_size: u64,
) -> Result<(u64, u64)> {
    let inv = invalid::<(u64, u64)>;
    let types = types.to_vec();
    let inode_ratio = match opts.inode_ratio {
        Some(size) => size,
        None => {
            let ratio = conf.int(&types, "inode_ratio", 8192);
            (ratio.max(1) as u64).max(block_size)
        }
    };
    let inode_size = match opts.inode_size {
        Some(size) => u64::from(size),
        None => {
            let size = conf.int(&types, "inode_size", 0);
            if size <= 0 {
                256
            } else {
                size as u64
            }
        }
    };
    if inode_size < 128 || inode_size > block_size || !inode_size.is_power_of_two() {
        return inv(format!(
            "invalid inode size {inode_size} (min 128/max {block_size})"
        ));
    }

    Ok((inode_ratio, inode_size))
}

/// The inode count PRS passes on (`-N`, or size / ratio), capped or refused as mke2fs does.
fn inode_count(
    opts: &MkfsOptions,
    bit64: bool,
    blocks_param: u64,
    block_size: u64,
    inode_ratio: u64,
    inode_size: u64,
) -> Result<u64> {
    let inv = invalid::<u64>;
    let inodes_param = match opts.inodes {
        Some(count) if count > MAX_32 => {
            return inv(format!("too many inodes ({count}), specify < 2^32 inodes"));
        }
        Some(count) => count,
        None => {
            let count = (u128::from(blocks_param) * u128::from(block_size)
                / u128::from(inode_ratio)) as u64;
            if count > MAX_32 {
                if bit64 {
                    MAX_32
                } else {
                    return inv(format!("too many inodes ({count}), raise inode ratio?"));
                }
            } else {
                count
            }
        }
    };
    if u128::from(inodes_param) * u128::from(inode_size)
        >= u128::from(blocks_param) * u128::from(block_size)
    {
        return inv(format!(
            "inode_size ({inode_size}) * inodes_count ({inodes_param}) too big for a filesystem with {blocks_param} blocks, specify higher inode_ratio (-i) or lower inode count (-N)."
        ));
    }

    Ok(inodes_param)
}

/// What ext2fs_initialize settles: blocks per group (lowered until the inodes fit), the final
/// block count, group count, inode table size, reserved GDT blocks and meta_bg.
struct Geometry {
    first_data_block: u64,
    bpg: u64,
    blocks: u64,
    r_blocks: u64,
    groups: u64,
    desc_blocks: u64,
    ipg: u64,
    itb: u64,
    rsv_gdt: u64,
    meta_bg: bool,
    resize: bool,
}

/// ext2fs_initialize.
fn initialize(prs: &Prs) -> Result<Geometry> {
    let inv = invalid::<Geometry>;
    let Prs {
        block_size,
        blocks_param,
        inodes_param,
        inode_size,
        r_param,
        desc_size,
        ..
    } = *prs;
    let first_data_block: u64 = if block_size == 1024 { 1 } else { 0 };
    let max_bpg = 65536 - 8; // EXT2_MAX_BLOCKS_PER_GROUP without bigalloc
    let mut bpg = (block_size * 8).min(max_bpg);
    let mut blocks = blocks_param;
    let mut r_blocks = r_param;
    let desc_per_block = block_size / desc_size;
    let inodes_per_block = block_size / inode_size;
    let sparse = prs.sparse();
    let mut resize = prs.feats.contains("resize_inode");
    let inodes_wanted = inodes_param.max(FIRST_INO + 1);
    // Each attempt lowers blocks per group or cuts the last group: bounded all the same.
    for _attempt in 0..100_000 {
        let groups = ceil_div(blocks - first_data_block, bpg);
        if groups == 0 {
            return inv("Not enough space to build proposed filesystem".into());
        }
        let desc_blocks = ceil_div(groups, desc_per_block);
        let ipg0 = ceil_div(inodes_wanted, groups);
        if ipg0 > block_size * 8 {
            if bpg >= 256 {
                bpg -= 8;
                blocks = blocks_param;
                continue;
            }
            return inv(
                "Too many inodes for the filesystem (blocks per group would drop below 256)".into(),
            );
        }
        let (ipg, itb) = inode_table_size(
            ipg0.min(65536 - inodes_per_block),
            groups,
            inode_size,
            block_size,
        );
        let (rsv_gdt, meta_bg) = reserved_gdt_and_meta_bg(
            resize,
            blocks,
            first_data_block,
            bpg,
            desc_per_block,
            desc_blocks,
            block_size,
        );
        resize &= !meta_bg;
        let overhead = 3 + itb + rsv_gdt + if meta_bg { 1 } else { desc_blocks };
        if overhead > bpg {
            return inv(
                "Too many inodes for the filesystem: the inode tables do not fit in a block group"
                    .into(),
            );
        }
        let last_overhead = last_group_overhead(groups, sparse, itb, desc_blocks, rsv_gdt);
        // A last group too short for its own metadata plus 50 blocks is cut off (and the
        // reserved blocks recomputed at the asked ratio); a single group cannot be cut.
        let rem = (blocks - first_data_block) % bpg;
        if groups == 1 && rem != 0 && rem < last_overhead {
            return inv("Not enough space to build proposed filesystem".into());
        }
        if rem != 0 && rem < last_overhead + 50 {
            blocks -= rem;
            let ratio = 100.0 * r_param as f64 / blocks_param as f64;
            r_blocks = (ratio * blocks as f64 / 100.0) as u64;
            continue;
        }
        let inodes_count = ipg * groups;
        if inodes_count < FIRST_INO {
            return inv(format!(
                "only {inodes_count} inodes: too small to hold the reserved inodes"
            ));
        }
        return Ok(Geometry {
            first_data_block,
            bpg,
            blocks,
            r_blocks,
            groups,
            desc_blocks,
            ipg,
            itb,
            rsv_gdt,
            meta_bg,
            resize,
        });
    }
    inv("layout computation did not converge".into())
}

/// The reserved GDT blocks (room for online resize, at most a quarter of a block's worth of
/// block numbers) for one layout attempt, and whether meta_bg is on: descriptors and reserved
/// GDT blocks taking over 3/4 of a group make ext2fs_initialize switch to meta_bg, which needs
/// neither in every backup group, and drop resize_inode (the caller's `resize`).
fn reserved_gdt_and_meta_bg(
    resize: bool,
    blocks: u64,
    first_data_block: u64,
    bpg: u64,
    desc_per_block: u64,
    desc_blocks: u64,
    block_size: u64,
) -> (u64, bool) {
    let rsv_gdt = if resize {
        reserved_gdt_blocks(blocks, first_data_block, bpg, desc_per_block, desc_blocks)
            .min(block_size / 4)
    } else {
        0
    };
    if rsv_gdt + desc_blocks > bpg * 3 / 4 {
        (0, true)
    } else {
        (rsv_gdt, false)
    }
}

/// The metadata blocks of the last group: its bitmaps and inode table, and the superblock,
/// descriptors and reserved GDT blocks when it holds a backup.
fn last_group_overhead(groups: u64, sparse: bool, itb: u64, desc_blocks: u64, rsv_gdt: u64) -> u64 {
    let backup = if group_has_super(groups - 1, sparse) {
        1 + desc_blocks + rsv_gdt
    } else {
        0
    };
    2 + itb + backup
}

/// Inodes per group and inode table blocks: `ipg_try` rounded to whole table blocks and to a
/// multiple of 8 (at least 8), lowered until the total fits in 32 bits.
fn inode_table_size(mut ipg_try: u64, groups: u64, inode_size: u64, block_size: u64) -> (u64, u64) {
    loop {
        let itb = ceil_div(ipg_try * inode_size, block_size);
        let ipg = (itb * block_size / inode_size).max(8) & !7;
        let itb = ceil_div(ipg * inode_size, block_size);
        if ipg * groups > MAX_32 && ipg_try > 0 {
            ipg_try -= 1;
            continue;
        }
        return (ipg, itb);
    }
}

/// calc_reserved_gdt_blocks: descriptor blocks for growing to 1024x (or 2^32 blocks), minus those
/// in use, in unsigned 32-bit arithmetic as in C.
fn reserved_gdt_blocks(
    blocks: u64,
    first_data_block: u64,
    bpg: u64,
    desc_per_block: u64,
    desc_blocks: u64,
) -> u64 {
    let max_blocks: u64 = if blocks < MAX_32 / 1024 {
        blocks * 1024
    } else {
        MAX_32
    };
    let rsv_groups = ceil_div(max_blocks - first_data_block, bpg);
    let reserved = (ceil_div(rsv_groups, desc_per_block) as u32).wrapping_sub(desc_blocks as u32);
    u64::from(reserved)
}

/// figure_journal_size: the journal and fast-commit blocks (0 without has_journal, which is
/// dropped when the filesystem is too small for one).
fn figure_journal_size(
    prs: &Prs,
    geo: &Geometry,
    feats: &mut BTreeSet<String>,
    sb_overhead: Option<u64>,
    journal_size_mib: Option<u64>,
) -> Result<(u64, u64)> {
    let inv = invalid::<(u64, u64)>;
    let (block_size, flex_bg_size) = (prs.block_size, prs.flex_bg_size);
    let (blocks, first_data_block, groups, itb) =
        (geo.blocks, geo.first_data_block, geo.groups, geo.itb);
    let (journal_blocks, fc_blocks) = if feats.contains("has_journal") {
        match default_journal_blocks(blocks) {
            None => {
                feats.remove("has_journal");
                (0, 0)
            }
            Some(def) => {
                let fc = if feats.contains("fast_commit") {
                    def / FC_RATIO
                } else {
                    0
                };
                let journal = match journal_size_mib {
                    Some(mib) => {
                        let journal = mib * 1024 / (block_size / 1024);
                        let total = journal + fc;
                        if !(JOURNAL_MIN_BLOCKS..=JOURNAL_MAX_BLOCKS).contains(&total) {
                            return inv(format!(
                                "The total requested journal size is {total} blocks; it must be between 1024 and 10240000 blocks."
                            ));
                        }
                        // Free blocks at that point: everything but superblock/descriptor
                        // copies (and bitmaps + inode tables without flex_bg).
                        let Some(sbo) = sb_overhead else {
                            return inv("journal size check with meta_bg is not modelled".into());
                        };
                        let mut free = blocks - first_data_block - sbo;
                        if flex_bg_size.is_none() {
                            free -= groups * (2 + itb);
                        }
                        if total > free / 2 {
                            return inv("Total journal size too big for filesystem.".into());
                        }
                        journal
                    }
                    None => def,
                };
                (journal + fc, fc)
            }
        }
    } else {
        (0, 0)
    };

    Ok((journal_blocks, fc_blocks))
}

/// A numeric option value, or mke2fs-style "invalid WHAT 'V'".
fn parse_number<T: std::str::FromStr>(text: &str, what: &str) -> Result<T> {
    text.parse()
        .map_err(|_| Error::Invalid(format!("invalid {what} '{text}'")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;
    const M: u64 = 1 << 20;
    const G: u64 = 1 << 30;
    const T: u64 = 1 << 40;

    fn p(bytes: u64, args: &[&str]) -> Result<Layout> {
        let owned: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        predict(
            bytes,
            &MkfsOptions::from_args(&owned).unwrap(),
            &MkfsConf::builtin(),
        )
    }

    // Figures below were measured with mke2fs 1.47.0 + dumpe2fs -h on sparse files.
    #[test]
    fn small_1k_filesystem() {
        let layout = p(100 * M, &[]).unwrap();
        assert_eq!(
            (
                layout.block_size,
                layout.blocks_count,
                layout.groups,
                layout.inodes_count
            ),
            (1024, 102400, 13, 25584)
        );
        assert_eq!(
            (layout.inodes_per_group, layout.inode_blocks_per_group),
            (1968, 492)
        );
        assert_eq!(
            (layout.journal_blocks, layout.reserved_blocks),
            (4096, 5120)
        );
        assert_eq!(layout.overhead_blocks, Some(12067));
        assert_eq!(layout.reserved_gdt_blocks, 256);
    }

    #[test]
    fn page_rounding_of_device_size() {
        assert_eq!(p(2501 * K, &[]).unwrap().blocks_count, 2500);
        assert_eq!(p(102401 * K, &["-b", "1024"]).unwrap().blocks_count, 102400);
    }

    #[test]
    fn bpg_shrinks_and_reserved_follows_the_last_trim() {
        let layout = p(G, &["-i", "1024"]).unwrap();
        assert_eq!(layout.blocks_per_group, 8384);
        assert_eq!((layout.groups, layout.inodes_per_group), (32, 32768));
        assert_eq!(layout.reserved_blocks, 13007);
        assert_eq!(layout.reserved_gdt_blocks, 500);
        assert_eq!(layout.overhead_blocks, Some(77808));
    }

    #[test]
    fn inode_count_capped_at_32_bits() {
        let layout = p(100 * T, &["-T", "default"]).unwrap();
        assert_eq!(
            (layout.inodes_count, layout.inodes_per_group),
            (4286054400, 5232)
        );
        let layout = p(1000 * T, &[]).unwrap();
        assert_eq!((layout.inodes_count, layout.groups), (4194304000, 8192000));
        assert!(layout.meta_bg);
    }

    #[test]
    fn big_filesystem() {
        let layout = p(15 * T, &[]).unwrap();
        assert_eq!(layout.inodes_count, 503316480);
        assert_eq!(layout.reserved_gdt_blocks, 128);
        assert_eq!(layout.overhead_blocks, Some(32016409));
        assert_eq!(layout.journal_blocks, 262144);
    }

    #[test]
    fn journal_options() {
        assert_eq!(
            p(G, &["-O", "fast_commit", "-J", "size=64"])
                .unwrap()
                .journal_blocks,
            16512
        );
        assert_eq!(
            p(G, &["-b", "1024", "-O", "fast_commit"])
                .unwrap()
                .journal_blocks,
            16640
        );
        assert!(p(G, &["-J", "size=600"]).is_err());
        assert!(p(G, &["-J", "size=3"]).is_err());
        assert_eq!(p(4100 * K, &["-b", "4096"]).unwrap().journal_blocks, 0);
    }

    #[test]
    fn refusals() {
        assert!(p(64 * M, &["-I", "384"]).is_err());
        assert!(p(64 * M, &["-b", "1024", "-I", "2048"]).is_err());
        assert!(p(G, &["-i", "512"]).is_err());
        assert!(p(G, &["-N", "5000000"]).is_err());
        assert!(p(G, &["-G", "3"]).is_err());
        assert!(p(20 * T, &["-O", "^64bit"]).is_err());
        assert!(p(20 * T, &["-N", "4294967296"]).is_err());
        assert!(p(16 * K, &[]).is_err());
        assert!(p(64 * K, &[]).is_err());
    }

    #[test]
    fn conf_resolution() {
        let conf = MkfsConf::builtin();
        let types = vec!["ext4".to_string(), "small".to_string()];
        assert_eq!(conf.int(&types, "blocksize", 4096), 1024);
        assert_eq!(conf.int(&types, "inode_ratio", 8192), 4096);
        assert!(conf.type_features("ext4").contains("metadata_csum"));
        assert!(group_has_super(49, true));
        assert!(!group_has_super(45, true));
    }
}
