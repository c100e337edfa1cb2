//! Output byte-identical to dumpe2fs 1.47.0 (`misc/dumpe2fs.c`, `lib/e2p/ls.c`, `lib/e2p/ljs.c`).
//!
//! Differences of 1.47.1+ (not followed here): `Inode size:` / `Journal device:` labels without the
//! tab, 40-bit superblock times, and bigalloc free ranges ending at the cluster's last block.

use crate::error::LibError;
use crate::reader::bitmap::{self, ReadFailure, UninitMarks};
use crate::reader::container::ContainerKind;
use crate::reader::features::{self, *};
use crate::reader::fs::Filesystem;
use crate::reader::geometry::OpenFailure;
use crate::reader::journal::{self, JournalFailure, JournalSuperblock};
use crate::reader::superblock::{cstr, uuid_string, Superblock};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use super::sys::{ctime, group_name, user_name};

/// What to print, as dumpe2fs' options.
#[derive(Clone, Debug, Default)]
pub struct DumpOptions {
    /// `-h`: superblock (and journal/MMP) only.
    pub header_only: bool,
    /// `-x`: block numbers in hex.
    pub hex: bool,
    /// `-g`: one `group:block:super:gdt:bbitmap:ibitmap:itable` line per group.
    pub group_only: bool,
    /// `DUMPE2FS_IGNORE_80COL` is set: both bitmap locations on one line.
    pub ignore_80col: bool,
    /// The device name as given (the CLI names it in front of the report's messages).
    pub device_name: String,
    /// `-b`: only the bad blocks list, one block per line.
    pub bad_blocks_only: bool,
}

/// How a dump ended.
#[derive(Clone, Debug, Default)]
pub struct DumpReport {
    /// What dumpe2fs reports on stderr, one message each, without program name or device (the
    /// CLI prefixes `e4inspect: PATH: `).
    pub stderr: Vec<String>,
    /// The dump was printed but libext2fs reported trouble (checksums, unreadable bitmaps).
    pub trouble: bool,
    /// The dump stopped early on an operational error (journal unreadable).
    pub aborted: bool,
    /// The first read error (I/O error, input shrank) that left a part of the report out: the
    /// text says `<unreadable: ...>` there and the command must fail (exit 8).
    pub read_error: Option<String>,
}

/// Text that may hold bytes that are not UTF-8: dumpe2fs prints the label, the last-mounted
/// path and the mount options with `%.*s`, so their bytes reach the output as they are stored.
#[derive(Clone, Debug, Default)]
pub struct RawText(pub Vec<u8>);

impl RawText {
    /// A fixed-size on-disk string field up to its first NUL, byte for byte.
    fn field(&mut self, b: &[u8]) {
        self.0.extend_from_slice(cstr(b));
    }
}

impl std::fmt::Write for RawText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Print the superblock listing (list_super2) into `s`.
pub fn list_super(sb: &Superblock, s: &mut RawText) {
    let _ = write_super(sb, s);
}

fn interval_string(mut secs: u32) -> String {
    const MONTH: u32 = 86400 * 30;
    const WEEK: u32 = 86400 * 7;
    const DAY: u32 = 86400;
    if secs == 0 {
        return "<none>".into();
    }
    let mut parts: Vec<String> = Vec::new();
    for (unit, name) in [(MONTH, "month"), (WEEK, "week"), (DAY, "day")] {
        if secs >= unit {
            let n = secs / unit;
            secs -= n * unit;
            parts.push(format!("{n} {name}{}", if n > 1 { "s" } else { "" }));
        }
    }
    if secs > 0 {
        let hr = secs / 3600;
        secs -= hr * 3600;
        let min = secs / 60;
        secs -= min * 60;
        parts.push(format!("{hr}:{min:02}:{secs:02}"));
    }
    parts.join(", ")
}

fn errcode(e: u8) -> String {
    const NAMES: [&str; 18] = [
        "",
        "UNKNOWN",
        "EIO",
        "ENOMEM",
        "EFSBADCRC",
        "EFSCORRUPTED",
        "ENOSPC",
        "ENOKEY",
        "EROFS",
        "EFBIG",
        "EEXIST",
        "ERANGE",
        "EOVERFLOW",
        "EBUSY",
        "ENOTDIR",
        "ENOTEMPTY",
        "ESHUTDOWN",
        "EFAULT",
    ];
    NAMES
        .get(usize::from(e))
        .map(|s| (*s).to_string())
        .unwrap_or_else(|| format!("UNKNOWN_ERRCODE_{e}"))
}

fn write_super(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    write_identity(sb, f)?;
    write_features_and_options(sb, f)?;
    write_state(sb, f)?;
    write_counts_and_geometry(sb, f)?;
    write_times(sb, f)?;
    write_lifetime_writes(sb, f)?;
    write_reserved_owner_and_inode_fields(sb, f)?;
    write_journal_and_hash(sb, f)?;
    write_snapshot(sb, f)?;
    write_errors(sb, f)?;
    write_mmp_quota_checksums(sb, f)?;
    Ok(())
}

/// Volume name, last mount point, UUID, magic and revision.
fn write_identity(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    let vn = sb.volume_name();
    if vn.is_empty() {
        writeln!(f, "Filesystem volume name:   <none>")?;
    } else {
        write!(f, "Filesystem volume name:   ")?;
        f.field(&sb.volume_name);
        writeln!(f)?;
    }
    if sb.last_mounted().is_empty() {
        writeln!(f, "Last mounted on:          <not available>")?;
    } else {
        write!(f, "Last mounted on:          ")?;
        f.field(&sb.last_mounted);
        writeln!(f)?;
    }
    writeln!(f, "Filesystem UUID:          {}", uuid_string(&sb.uuid))?;
    writeln!(f, "Filesystem magic number:  0x{:04X}", sb.magic)?;
    write!(f, "Filesystem revision #:    {}", sb.rev_level as i32)?;
    match sb.rev_level {
        0 => writeln!(f, " (original)")?,
        1 => writeln!(f, " (dynamic)")?,
        _ => writeln!(f, " (unknown)")?,
    }
    Ok(())
}

/// Feature names, superblock flags, default and stored mount options.
fn write_features_and_options(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    let feats = sb.feature_names();
    write!(f, "Filesystem features:     ")?;
    if feats.is_empty() {
        write!(f, " (none)")?;
    }
    for n in &feats {
        write!(f, " {n}")?;
    }
    writeln!(f)?;
    if sb.flags != 0 {
        write!(f, "Filesystem flags:         ")?;
        let mut found = false;
        for (bit, name) in [
            (0x1, "signed_directory_hash "),
            (0x2, "unsigned_directory_hash "),
            (0x4, "test_filesystem "),
        ] {
            if sb.flags & bit != 0 {
                write!(f, "{name}")?;
                found = true;
            }
        }
        if found {
            writeln!(f)?;
        } else {
            writeln!(f, "(none)")?;
        }
    }
    write!(f, "Default mount options:   ")?;
    let mo = features::mntopt_names(sb.default_mount_opts);
    if mo.is_empty() {
        write!(f, " (none)")?;
    }
    for n in &mo {
        write!(f, " {n}")?;
    }
    writeln!(f)?;
    if sb.mount_opts.first().copied().unwrap_or(0) != 0 {
        write!(f, "Mount options:            ")?;
        f.field(&sb.mount_opts);
        writeln!(f)?;
    }
    Ok(())
}

/// State, errors behaviour and creator OS.
fn write_state(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    write!(f, "Filesystem state:        ")?;
    if sb.state & 1 != 0 {
        write!(f, " clean")?;
    } else {
        write!(f, " not clean")?;
    }
    if sb.state & 2 != 0 {
        write!(f, " with errors")?;
    }
    writeln!(f)?;
    let eb = match sb.errors {
        1 => "Continue",
        2 => "Remount read-only",
        3 => "Panic",
        _ => "Unknown (continue)",
    };
    writeln!(f, "Errors behavior:          {eb}")?;
    let os = match sb.creator_os {
        0 => "Linux",
        1 => "Hurd",
        2 => "Masix",
        3 => "FreeBSD",
        4 => "Lites",
        _ => "(unknown os)",
    };
    writeln!(f, "Filesystem OS type:       {os}")?;
    Ok(())
}

/// Inode and block counts, sizes and the per-group geometry.
fn write_counts_and_geometry(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    let ipg = u64::from(sb.inodes_per_group);
    let bs = sb.block_size_raw();
    // unsigned int arithmetic, as in ls.c
    let ibpg = ((ipg.wrapping_mul(u64::from(sb.inode_size())) as u32)
        .wrapping_add(bs.wrapping_sub(1)))
    .checked_div(bs)
    .unwrap_or(0);
    writeln!(f, "Inode count:              {}", sb.inodes_count)?;
    writeln!(f, "Block count:              {}", sb.blocks_count())?;
    writeln!(f, "Reserved block count:     {}", sb.r_blocks_count())?;
    if sb.overhead_clusters != 0 {
        writeln!(f, "Overhead clusters:        {}", sb.overhead_clusters)?;
    }
    writeln!(f, "Free blocks:              {}", sb.free_blocks_count())?;
    writeln!(f, "Free inodes:              {}", sb.free_inodes_count)?;
    writeln!(f, "First block:              {}", sb.first_data_block)?;
    writeln!(f, "Block size:               {}", bs)?;
    let cs = 1024u32.wrapping_shl(sb.log_cluster_size);
    if sb.is_bigalloc() {
        writeln!(f, "Cluster size:             {cs}")?;
    } else {
        writeln!(f, "Fragment size:            {cs}")?;
    }
    if sb.is_64bit() {
        writeln!(f, "Group descriptor size:    {}", sb.desc_size)?;
    }
    if sb.reserved_gdt_blocks != 0 {
        writeln!(f, "Reserved GDT blocks:      {}", sb.reserved_gdt_blocks)?;
    }
    writeln!(f, "Blocks per group:         {}", sb.blocks_per_group)?;
    if sb.is_bigalloc() {
        writeln!(f, "Clusters per group:       {}", sb.clusters_per_group)?;
    } else {
        writeln!(f, "Fragments per group:      {}", sb.clusters_per_group)?;
    }
    writeln!(f, "Inodes per group:         {}", sb.inodes_per_group)?;
    writeln!(f, "Inode blocks per group:   {ibpg}")?;
    if sb.raid_stride != 0 {
        writeln!(f, "RAID stride:              {}", sb.raid_stride)?;
    }
    if sb.raid_stripe_width != 0 {
        writeln!(f, "RAID stripe width:        {}", sb.raid_stripe_width)?;
    }
    if sb.first_meta_bg != 0 {
        writeln!(f, "First meta block group:   {}", sb.first_meta_bg)?;
    }
    if sb.log_groups_per_flex != 0 {
        writeln!(
            f,
            "Flex block group size:    {}",
            1u32.wrapping_shl(u32::from(sb.log_groups_per_flex))
        )?;
    }
    Ok(())
}

/// Creation, mount, write and check times, mount counts.
fn write_times(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    if sb.mkfs_time != 0 {
        write!(
            f,
            "Filesystem created:       {}",
            ctime(i64::from(sb.mkfs_time))
        )?;
    }
    if sb.mtime != 0 {
        write!(
            f,
            "Last mount time:          {}",
            ctime(i64::from(sb.mtime))
        )?;
    } else {
        writeln!(f, "Last mount time:          n/a")?;
    }
    write!(
        f,
        "Last write time:          {}",
        ctime(i64::from(sb.wtime))
    )?;
    writeln!(f, "Mount count:              {}", sb.mnt_count)?;
    writeln!(f, "Maximum mount count:      {}", sb.max_mnt_count)?;
    write!(
        f,
        "Last checked:             {}",
        ctime(i64::from(sb.lastcheck))
    )?;
    writeln!(
        f,
        "Check interval:           {} ({})",
        sb.checkinterval,
        interval_string(sb.checkinterval)
    )?;
    if sb.checkinterval != 0 {
        let next = sb.lastcheck.wrapping_add(sb.checkinterval);
        write!(f, "Next check after:         {}", ctime(i64::from(next)))?;
    }
    Ok(())
}

/// Lifetime writes, scaled to kB ... PB as ls.c rounds them.
fn write_lifetime_writes(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    let k = sb.kbytes_written;
    if k != 0 {
        write!(f, "Lifetime writes:          ")?;
        if k < 1 << 13 {
            writeln!(f, "{k} kB")?;
        } else if k < 1 << 23 {
            writeln!(f, "{} MB", (k + (1 << 9)) >> 10)?;
        } else if k < 1 << 33 {
            writeln!(f, "{} GB", (k + (1 << 19)) >> 20)?;
        } else if k < 1 << 43 {
            writeln!(f, "{} TB", (k + (1 << 29)) >> 30)?;
        } else {
            writeln!(f, "{} PB", k.wrapping_add(1 << 39) >> 40)?;
        }
    }
    Ok(())
}

/// Reserved-blocks owner, then the dynamic-revision inode fields.
fn write_reserved_owner_and_inode_fields(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    match user_name(u32::from(sb.def_resuid)) {
        Some(n) => writeln!(f, "Reserved blocks uid:      {} (user {n})", sb.def_resuid)?,
        None => writeln!(
            f,
            "Reserved blocks uid:      {} (user unknown)",
            sb.def_resuid
        )?,
    }
    match group_name(u32::from(sb.def_resgid)) {
        Some(n) => writeln!(f, "Reserved blocks gid:      {} (group {n})", sb.def_resgid)?,
        None => writeln!(
            f,
            "Reserved blocks gid:      {} (group unknown)",
            sb.def_resgid
        )?,
    }
    if sb.rev_level >= 1 {
        writeln!(f, "First inode:              {}", sb.first_ino as i32)?;
        writeln!(f, "Inode size:\t          {}", sb.inode_size)?;
        if sb.min_extra_isize != 0 {
            writeln!(f, "Required extra isize:     {}", sb.min_extra_isize)?;
        }
        if sb.want_extra_isize != 0 {
            writeln!(f, "Desired extra isize:      {}", sb.want_extra_isize)?;
        }
    }
    Ok(())
}

/// Journal UUID/inode/device, orphan list, directory hash and journal backup, backup groups.
fn write_journal_and_hash(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    if sb.journal_uuid != [0; 16] {
        writeln!(
            f,
            "Journal UUID:             {}",
            uuid_string(&sb.journal_uuid)
        )?;
    }
    if sb.journal_inum != 0 {
        writeln!(f, "Journal inode:            {}", sb.journal_inum)?;
    }
    if sb.journal_dev != 0 {
        writeln!(f, "Journal device:\t          0x{:04x}", sb.journal_dev)?;
    }
    if sb.last_orphan != 0 {
        writeln!(f, "First orphan inode:       {}", sb.last_orphan)?;
    }
    if sb.has_compat(COMPAT_DIR_INDEX) || sb.def_hash_version != 0 {
        let h = match sb.def_hash_version {
            0 => "legacy".to_string(),
            1 => "half_md4".to_string(),
            2 => "tea".to_string(),
            n => format!("HASHALG_{n}"),
        };
        writeln!(f, "Default directory hash:   {h}")?;
    }
    if sb.hash_seed != [0; 16] {
        writeln!(
            f,
            "Directory Hash Seed:      {}",
            uuid_string(&sb.hash_seed)
        )?;
    }
    if sb.jnl_backup_type != 0 {
        match sb.jnl_backup_type {
            1 => writeln!(f, "Journal backup:           inode blocks")?,
            t => writeln!(f, "Journal backup:           type {t}")?,
        }
    }
    if sb.backup_bgs != [0, 0] {
        write!(f, "Backup block groups:      ")?;
        for b in sb.backup_bgs {
            if b != 0 {
                write!(f, "{b} ")?;
            }
        }
        writeln!(f)?;
    }
    Ok(())
}

/// The (never merged) snapshot fields.
fn write_snapshot(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    if sb.snapshot_inum != 0 {
        writeln!(f, "Snapshot inode:           {}", sb.snapshot_inum)?;
        writeln!(f, "Snapshot ID:              {}", sb.snapshot_id)?;
        writeln!(
            f,
            "Snapshot reserved blocks: {}",
            sb.snapshot_r_blocks_count
        )?;
    }
    if sb.snapshot_list != 0 {
        writeln!(f, "Snapshot list head:       {}", sb.snapshot_list)?;
    }
    Ok(())
}

/// Error count and the first and last error records.
fn write_errors(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    if sb.error_count != 0 {
        writeln!(f, "FS Error count:           {}", sb.error_count)?;
    }
    for (label, time, func, line, ino, blk, code) in [
        (
            "First",
            sb.first_error_time,
            &sb.first_error_func,
            sb.first_error_line,
            sb.first_error_ino,
            sb.first_error_block,
            sb.first_error_errcode,
        ),
        (
            "Last",
            sb.last_error_time,
            &sb.last_error_func,
            sb.last_error_line,
            sb.last_error_ino,
            sb.last_error_block,
            sb.last_error_errcode,
        ),
    ] {
        if time == 0 {
            continue;
        }
        let pad = |s: &str| format!("{s:<26}");
        write!(
            f,
            "{}{}",
            pad(&format!("{label} error time:")),
            ctime(i64::from(time))
        )?;
        write!(f, "{}", pad(&format!("{label} error function:")))?;
        f.field(func);
        writeln!(f)?;
        writeln!(f, "{}{}", pad(&format!("{label} error line #:")), line)?;
        if ino != 0 {
            writeln!(f, "{}{}", pad(&format!("{label} error inode #:")), ino)?;
        }
        if blk != 0 {
            writeln!(f, "{}{}", pad(&format!("{label} error block #:")), blk)?;
        }
        if code != 0 {
            writeln!(
                f,
                "{}{}",
                pad(&format!("{label} error err:")),
                errcode(code)
            )?;
        }
    }
    Ok(())
}

/// MMP, quota inodes, checksum fields, encryption salt, encoding and orphan file.
fn write_mmp_quota_checksums(sb: &Superblock, f: &mut RawText) -> std::fmt::Result {
    if sb.has_incompat(INCOMPAT_MMP) {
        writeln!(f, "MMP block number:         {}", sb.mmp_block)?;
        writeln!(f, "MMP update interval:      {}", sb.mmp_update_interval)?;
    }
    for (label, v) in [
        ("User quota inode:", sb.usr_quota_inum),
        ("Group quota inode:", sb.grp_quota_inum),
        ("Project quota inode:", sb.prj_quota_inum),
    ] {
        if v != 0 {
            writeln!(f, "{label:<26}{v}")?;
        }
    }
    if sb.has_metadata_csum() {
        let t = if sb.checksum_type == 1 {
            "crc32c"
        } else {
            "unknown"
        };
        writeln!(f, "Checksum type:            {t}")?;
        writeln!(f, "Checksum:                 0x{:08x}", sb.checksum)?;
    }
    if sb.encrypt_pw_salt != [0; 16] {
        writeln!(
            f,
            "Encryption PW Salt:       {}",
            uuid_string(&sb.encrypt_pw_salt)
        )?;
    }
    if sb.has_incompat(INCOMPAT_CSUM_SEED) {
        writeln!(f, "Checksum seed:            0x{:08x}", sb.checksum_seed)?;
    }
    if sb.has_incompat(INCOMPAT_CASEFOLD) {
        let e = if sb.encoding == 1 {
            "utf8-12.1".to_string()
        } else {
            format!("UNKNOWN_ENCODING_{}", sb.encoding)
        };
        writeln!(f, "Character encoding:       {e}")?;
    }
    if sb.has_compat(COMPAT_ORPHAN_FILE) {
        writeln!(f, "Orphan file inode:        {}", sb.orphan_file_inum)?;
    }
    Ok(())
}

/// e2p_list_journal_super.
pub fn list_journal(
    buf: &[u8],
    fs_block_size: u32,
    fast_commit: bool,
    f: &mut impl std::fmt::Write,
) {
    let j = JournalSuperblock::parse(buf);
    let num_fc: u32 = if fast_commit {
        if j.num_fc_blks != 0 {
            j.num_fc_blks
        } else {
            256
        }
    } else {
        0
    };
    let journal_blks = j.maxlen.wrapping_sub(num_fc);
    let _ = (|| -> std::fmt::Result {
        write!(f, "Journal features:        ")?;
        let names = j.feature_names();
        if names.is_empty() {
            write!(f, " (none)")?;
        }
        for n in &names {
            write!(f, " {n}")?;
        }
        writeln!(f)?;
        write!(f, "Total journal size:       ")?;
        let size = (j.blocksize / 1024).wrapping_mul(j.maxlen);
        if size < 8192 {
            writeln!(f, "{size}k")?;
        } else {
            writeln!(f, "{}M", size >> 10)?;
        }
        if fs_block_size != j.blocksize {
            writeln!(f, "Journal block size:       {}", j.blocksize)?;
        }
        writeln!(
            f,
            "Total journal blocks:     {}",
            journal_blks.wrapping_add(num_fc)
        )?;
        writeln!(f, "Max transaction length:   {journal_blks}")?;
        writeln!(f, "Fast commit length:       {num_fc}")?;
        if j.first != 1 {
            writeln!(f, "Journal first block:      {}", j.first)?;
        }
        writeln!(f, "Journal sequence:         0x{:08x}", j.sequence)?;
        writeln!(f, "Journal start:            {}", j.start)?;
        if j.nr_users != 1 {
            writeln!(f, "Journal number of users:  {}", j.nr_users)?;
        }
        if j.feature_compat & 1 != 0 {
            writeln!(f, "Journal checksum type:    crc32")?;
        }
        if j.feature_incompat & (0x8 | 0x10) != 0 {
            let t = if j.checksum_type == 4 {
                "crc32c"
            } else {
                "unknown"
            };
            writeln!(f, "Journal checksum type:    {t}")?;
            writeln!(f, "Journal checksum:         0x{:08x}", j.checksum)?;
        }
        let first_user = j.users.first().copied().unwrap_or([0; 16]);
        if j.nr_users > 1 || first_user != [0; 16] {
            for (i, u) in j
                .users
                .iter()
                .enumerate()
                .take(j.nr_users.min(journal::USERS_MAX) as usize)
            {
                if i == 0 {
                    writeln!(f, "Journal users:            {}", uuid_string(u))?;
                } else {
                    writeln!(f, "                          {}", uuid_string(u))?;
                }
            }
        }
        if j.errno != 0 {
            writeln!(f, "Journal errno:            {}", j.errno)?;
        }
        Ok(())
    })();
}

/// C's `%#08x`.
fn alt_hex8(v: u32) -> String {
    if v == 0 {
        "00000000".into()
    } else {
        format!("{:#08x}", v)
    }
}

struct Numfmt {
    hex: bool,
    wide: bool,
}

impl Numfmt {
    fn num(&self, s: &mut String, n: u64) {
        if self.hex {
            if self.wide {
                let _ = write!(s, "0x{n:08x}");
            } else {
                let _ = write!(s, "0x{n:04x}");
            }
        } else {
            let _ = write!(s, "{n}");
        }
    }
    fn range(&self, s: &mut String, a: u64, b: u64) {
        self.num(s, a);
        s.push('-');
        self.num(s, b);
    }
}

/// First index in `[from, limit)` whose bit equals `set`, or `limit`. Bytes, and blocks of 64
/// bytes, that cannot contain such a bit are skipped whole (the block test is a branch-free OR
/// the compiler vectorises), which is what keeps 65,536 mostly-empty groups fast. Bits past the
/// end of `bitmap` read as set, like [`bitmap::test_bit`].
fn next_bit(bitmap: &[u8], mut from: u64, limit: u64, set: bool) -> u64 {
    const BLOCK: usize = 64;
    let other: u8 = if set { 0x00 } else { 0xFF };
    while from < limit {
        if from % 8 == 0 {
            let byte = (from / 8) as usize;
            if from + (BLOCK as u64) * 8 <= limit {
                if let Some(chunk) = bitmap.get(byte..byte + BLOCK) {
                    if chunk.iter().fold(0u8, |acc, &b| acc | (b ^ other)) == 0 {
                        from += (BLOCK as u64) * 8;
                        continue;
                    }
                }
            }
            if from + 8 <= limit {
                if let Some(&b) = bitmap.get(byte) {
                    let probe = b ^ other;
                    if probe == 0 {
                        from += 8;
                        continue;
                    }
                    return from + u64::from(probe.trailing_zeros());
                }
            }
        }
        if bitmap::test_bit(bitmap, from as usize) == set {
            return from;
        }
        from += 1;
    }
    limit
}

/// print_free of dumpe2fs 1.47.0: free runs as `a`, `a-b`, joined by ", " (block numbers scaled
/// by the cluster ratio, start and end of the run both at cluster starts).
fn print_free(
    s: &mut String,
    nf: &Numfmt,
    group: u64,
    bitmap: &[u8],
    num: u64,
    offset: u64,
    ratio: u64,
) {
    let ratio = ratio.max(1);
    let offset = offset / ratio + group * num;
    let mut printed = false;
    let mut i = 0u64;
    loop {
        i = next_bit(bitmap, i, num, false);
        if i >= num {
            break;
        }
        let j = next_bit(bitmap, i, num, true) - 1;
        if printed {
            s.push_str(", ");
        }
        nf.num(s, (i + offset).wrapping_mul(ratio));
        if j != i {
            s.push('-');
            nf.num(s, (j + offset).wrapping_mul(ratio));
        }
        printed = true;
        i = j + 1;
    }
}

fn rel_offset(s: &mut String, fs: &Filesystem, block: u64, itable: bool, first: u64, last: u64) {
    if block >= first && block <= last {
        if itable && block == first {
            return;
        }
        let _ = write!(s, " (+{})", (block - first) as u32);
    } else if fs.geo.flex_bg {
        let bpg = u64::from(fs.geo.blocks_per_group.max(1));
        let fdb = fs.geo.first_data_block;
        let g = (block.wrapping_sub(fdb) / bpg) as u32;
        let gfirst = fdb.wrapping_add(u64::from(g) * bpg);
        let _ = write!(s, " (bg #{} + {})", g, block.wrapping_sub(gfirst) as u32);
    }
}

/// One group's section of list_desc.
fn group_text(
    fs: &Filesystem,
    g: u32,
    opts: &DumpOptions,
    bitmaps: Option<&UninitMarks>,
    nf: &Numfmt,
    scratch: &mut Vec<u8>,
) -> (String, Option<String>) {
    let mut s = String::with_capacity(256);
    let gd = match fs.desc(g) {
        Ok(gd) => gd,
        Err(e) => {
            let _ = writeln!(s, "Group {g}: descriptor unreadable: {e}");
            return (s, is_read_error(&e).then(|| e.to_string()));
        }
    };
    let p = GroupPlace::new(fs, g, gd);
    if opts.group_only {
        group_only_line(&mut s, nf, &p);
        return (s, None);
    }
    group_header(&mut s, fs, nf, &p);
    group_super_and_descriptors(&mut s, fs, nf, &p);
    group_bitmaps_and_table(&mut s, fs, opts, nf, &p);
    group_free_counts(&mut s, fs, &p.gd);
    let read_error = match bitmaps {
        Some(marks) => group_free_lists(&mut s, fs, nf, &p, marks, scratch),
        None => None,
    };
    (s, read_error)
}

/// True for a failure to read the input (an I/O error, the input shrank while read): a report
/// that meets one is incomplete, unlike one that meets damage it can describe.
fn is_read_error(e: &crate::Error) -> bool {
    matches!(
        e,
        crate::Error::Read { .. } | crate::Error::Shrunk { .. } | crate::Error::Io { .. }
    )
}

/// One group's descriptor, block range and metadata layout.
struct GroupPlace {
    g: u32,
    gd: crate::reader::group::GroupDesc,
    first: u64,
    last: u64,
    lay: crate::reader::geometry::GroupLayout,
    old_desc_blocks: u64,
}

impl GroupPlace {
    fn new(fs: &Filesystem, g: u32, gd: crate::reader::group::GroupDesc) -> GroupPlace {
        let geo = &fs.geo;
        GroupPlace {
            g,
            gd,
            first: geo.group_first_block(g),
            last: geo.group_last_block(g),
            lay: geo.layout(g),
            old_desc_blocks: if geo.meta_bg {
                u64::from(geo.first_meta_bg)
            } else {
                geo.desc_blocks
            },
        }
    }
}

/// `-g`: one colon-separated line per group (superblock, descriptors, bitmaps, table).
fn group_only_line(s: &mut String, nf: &Numfmt, p: &GroupPlace) {
    let (g, lay, gd) = (p.g, &p.lay, &p.gd);
    let _ = write!(s, "{g}:{}:", p.first);
    if g == 0 || lay.super_blk != 0 {
        let _ = write!(s, "{}:", lay.super_blk);
    } else {
        s.push_str("-1:");
    }
    if lay.old_desc_blk != 0 {
        nf.range(
            s,
            lay.old_desc_blk,
            (lay.old_desc_blk + p.old_desc_blocks).wrapping_sub(1),
        );
        s.push(':');
    } else if lay.new_desc_blk != 0 {
        let _ = write!(s, "{}:", lay.new_desc_blk);
    } else {
        s.push_str("-1:");
    }
    let _ = writeln!(
        s,
        "{}:{}:{}",
        gd.block_bitmap, gd.inode_bitmap, gd.inode_table
    );
}

/// `Group N: (Blocks a-b)` with the descriptor checksum and flags.
fn group_header(s: &mut String, fs: &Filesystem, nf: &Numfmt, p: &GroupPlace) {
    let gd = &p.gd;
    let _ = write!(s, "Group {}: (Blocks ", p.g);
    nf.range(s, p.first, p.last);
    s.push(')');
    if fs.ctx.gdt_csum {
        let _ = write!(s, " csum 0x{:04x}", gd.checksum);
        if gd.checksum != gd.computed_checksum {
            let _ = write!(s, " (EXPECTED 0x{:04x})", gd.computed_checksum);
        }
        let names = crate::reader::group::flag_names(gd.flags);
        if !names.is_empty() {
            let _ = write!(s, " [{}]", names.join(", "));
        }
    }
    s.push('\n');
}

/// The superblock copy, group descriptors and reserved GDT blocks the group holds.
fn group_super_and_descriptors(s: &mut String, fs: &Filesystem, nf: &Numfmt, p: &GroupPlace) {
    let (g, lay) = (p.g, &p.lay);
    let mut has_super = g == 0 || lay.super_blk != 0;
    if has_super {
        s.push_str(if g == 0 { "  Primary" } else { "  Backup" });
        s.push_str(" superblock at ");
        nf.num(s, lay.super_blk);
    }
    if lay.old_desc_blk != 0 {
        s.push_str(", Group descriptors at ");
        nf.range(
            s,
            lay.old_desc_blk,
            (lay.old_desc_blk + p.old_desc_blocks).wrapping_sub(1),
        );
        if fs.geo.reserved_gdt_blocks != 0 {
            s.push_str("\n  Reserved GDT blocks at ");
            let a = lay.old_desc_blk + p.old_desc_blocks;
            nf.range(
                s,
                a,
                (a + u64::from(fs.geo.reserved_gdt_blocks)).wrapping_sub(1),
            );
        }
    } else if lay.new_desc_blk != 0 {
        s.push(if has_super { ',' } else { ' ' });
        s.push_str(" Group descriptor at ");
        nf.num(s, lay.new_desc_blk);
        has_super = true;
    }
    if has_super {
        s.push('\n');
    }
}

/// Where the block bitmap, inode bitmap and inode table are, with their checksums.
fn group_bitmaps_and_table(
    s: &mut String,
    fs: &Filesystem,
    opts: &DumpOptions,
    nf: &Numfmt,
    p: &GroupPlace,
) {
    let (gd, first, last) = (&p.gd, p.first, p.last);
    s.push_str("  Block bitmap at ");
    nf.num(s, gd.block_bitmap);
    rel_offset(s, fs, gd.block_bitmap, false, first, last);
    if fs.sb.has_metadata_csum() {
        let _ = write!(s, ", csum 0x{:08x}", gd.block_bitmap_csum);
    }
    s.push_str(if opts.ignore_80col { "," } else { "\n " });
    s.push_str(" Inode bitmap at ");
    nf.num(s, gd.inode_bitmap);
    rel_offset(s, fs, gd.inode_bitmap, false, first, last);
    if fs.sb.has_metadata_csum() {
        let _ = write!(s, ", csum 0x{:08x}", gd.inode_bitmap_csum);
    }
    s.push_str("\n  Inode table at ");
    nf.range(
        s,
        gd.inode_table,
        (gd.inode_table + u64::from(fs.geo.inode_blocks_per_group)).wrapping_sub(1),
    );
    rel_offset(s, fs, gd.inode_table, true, first, last);
}

/// The descriptor's free block, free inode, directory and unused inode counts.
fn group_free_counts(s: &mut String, fs: &Filesystem, gd: &crate::reader::group::GroupDesc) {
    let units = if fs.sb.is_bigalloc() {
        "clusters"
    } else {
        "blocks"
    };
    let _ = write!(
        s,
        "\n  {} free {units}, {} free inodes, {} directories{}",
        gd.free_blocks_count,
        gd.free_inodes_count,
        gd.used_dirs_count,
        if gd.itable_unused != 0 { "" } else { "\n" }
    );
    if gd.itable_unused != 0 {
        let _ = writeln!(s, ", {} unused inodes", gd.itable_unused);
    }
}

/// The free block and free inode ranges read from the group's bitmaps; the first read error
/// met (the text then says `<unreadable: ...>`).
fn group_free_lists(
    s: &mut String,
    fs: &Filesystem,
    nf: &Numfmt,
    p: &GroupPlace,
    marks: &UninitMarks,
    scratch: &mut Vec<u8>,
) -> Option<String> {
    let mut read_error = None;
    let (geo, g, gd) = (&fs.geo, u64::from(p.g), &p.gd);
    s.push_str("  Free blocks: ");
    match bitmap::group_block_bitmap(fs, gd, marks, scratch) {
        Ok(()) => print_free(
            s,
            nf,
            g,
            scratch,
            u64::from(geo.clusters_per_group),
            geo.first_data_block,
            geo.cluster_ratio(),
        ),
        Err(e) => {
            let _ = write!(s, "<unreadable: {e}>");
            read_error = read_error.or(is_read_error(&e).then(|| e.to_string()));
        }
    }
    s.push('\n');
    s.push_str("  Free inodes: ");
    match bitmap::group_inode_bitmap(fs, gd, scratch) {
        Ok(()) => print_free(s, nf, g, scratch, u64::from(geo.inodes_per_group), 1, 1),
        Err(e) => {
            let _ = write!(s, "<unreadable: {e}>");
            read_error = read_error.or(is_read_error(&e).then(|| e.to_string()));
        }
    }
    s.push('\n');
    read_error
}

/// The bad blocks list (ext2fs_read_bb_inode): every data block of inode 1's block map inside the
/// filesystem, sorted; an illegal indirect block or an unreadable inode is an error (dumpe2fs then
/// prints no list and no newline).
fn bad_blocks(fs: &Filesystem, ignore_csum: bool) -> Result<Vec<u32>, LibError> {
    let raw = fs.read_inode_checked(1, ignore_csum)?;
    let ind = crate::reader::inode::Inode::parse(&raw);
    // ext2fs_block_iterate3 refuses an inline-data inode before looking at its map, even inode 1.
    if ind.has_flag(crate::reader::inode::INLINE_DATA_FL) {
        return Err(LibError::InlineDataCantIterate);
    }
    if ind.has_flag(crate::reader::inode::EXTENTS_FL) {
        return Ok(Vec::new());
    }
    let map = ind.block_map();
    let geo = &fs.geo;
    let mut out = Vec::new();
    let mut err: Option<LibError> = None;
    let valid = |b: u64| b >= geo.first_data_block && b < geo.blocks_count;
    for &b in &map.direct {
        let b = u64::from(b);
        if b != 0 && valid(b) {
            out.push(b as u32);
        }
    }
    // Bounded: at most 1 + per + per^2 indirect blocks are read, each once.
    fn walk(
        fs: &Filesystem,
        blk: u64,
        level: u32,
        out: &mut Vec<u32>,
        err: &mut Option<LibError>,
        budget: &mut u32,
    ) {
        let geo = &fs.geo;
        if blk < geo.first_data_block || blk >= geo.blocks_count {
            *err = Some(LibError::IllegalIndirectBlock);
            return;
        }
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let Ok(b) = fs.block(blk) else {
            *err = Some(LibError::ShortRead);
            return;
        };
        for e in crate::reader::ondisk::blockmap::pointers(&b) {
            let e = u64::from(e);
            if e == 0 {
                continue;
            }
            if level == 1 {
                if e >= geo.first_data_block && e < geo.blocks_count {
                    out.push(e as u32);
                }
            } else {
                walk(fs, e, level - 1, out, err, budget);
            }
        }
    }
    let mut budget: u32 = 1 << 16;
    for level in 1..=3u32 {
        let b = u64::from(map.indirect(level).unwrap_or(0));
        if b != 0 {
            walk(fs, b, level, &mut out, &mut err, &mut budget);
        }
    }
    if let Some(e) = err {
        return Err(e);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Write the full dumpe2fs output for `fs` to `out`.
pub fn dump(fs: &Filesystem, opts: &DumpOptions, out: &mut dyn Write) -> io::Result<DumpReport> {
    let lists_groups = !(opts.bad_blocks_only || opts.header_only);
    if lists_groups {
        // Every group is visited three or four times (bitmap hints, check, marks, text).
        fs.load_descriptors();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        if lists_groups && !opts.group_only && fs.source.takes_hints() {
            // The bitmap check reads every bitmap: on a cold device they are all requested at
            // once, from another thread, while this one reads the header. (No thread for an
            // in-memory source: the hints would do nothing, and a thread per call is what a
            // leak checker sees as a leak when its TLS destructors have not run yet.)
            scope.spawn(|| prefetch_all_bitmaps(fs, &done));
        }
        let rep = dump_sections(fs, opts, out);
        // An aborted dump (unreadable journal, closed pipe) stops the hints at once.
        done.store(true, Ordering::Relaxed);
        rep
    })
}

/// The sections of the output, in dumpe2fs' order.
fn dump_sections(
    fs: &Filesystem,
    opts: &DumpOptions,
    out: &mut dyn Write,
) -> io::Result<DumpReport> {
    let mut rep = DumpReport::default();
    // dumpe2fs remembers the first failure (open with checksums, or bitmaps) and reports it last.
    let mut retval_csum: Option<String> = fs
        .strict_failure
        .map(|f: OpenFailure| format!("{} while trying to open the filesystem", f.message()));
    let verify = fs.strict_failure.is_none();
    if opts.bad_blocks_only {
        write_bad_blocks_only(fs, verify, out, &mut rep)?;
        finish(out, &mut rep, retval_csum)?;
        return Ok(rep);
    }
    if !opts.group_only {
        match write_header(fs, verify, out, &mut rep)? {
            Header::Aborted => return Ok(rep),
            Header::JournalDevice => {
                finish(out, &mut rep, retval_csum)?;
                return Ok(rep);
            }
            Header::Done if opts.header_only => {
                finish(out, &mut rep, retval_csum)?;
                return Ok(rep);
            }
            Header::Done => {}
        }
    }
    let marks = if opts.group_only {
        None
    } else {
        read_bitmaps(fs, &mut rep, &mut retval_csum)
    };
    out.write_all(b"\n")?;
    if opts.group_only {
        out.write_all(b"group:block:super:gdt:bbitmap:ibitmap:itable\n")?;
    }
    rep.read_error = write_groups(fs, opts, marks.as_ref(), out)?;
    finish(out, &mut rep, retval_csum)?;
    Ok(rep)
}

/// `-b` (list_bad_blocks(fs, 1)): one number per line; a failure only on stderr.
fn write_bad_blocks_only(
    fs: &Filesystem,
    verify: bool,
    out: &mut dyn Write,
    rep: &mut DumpReport,
) -> io::Result<()> {
    match bad_blocks(fs, !verify) {
        Ok(bb) => {
            let mut s = String::new();
            for b in bb {
                let _ = writeln!(s, "{b}");
            }
            out.write_all(s.as_bytes())?;
        }
        Err(m) => rep
            .stderr
            .push(format!("{m} while reading the bad blocks inode")),
    }
    Ok(())
}

/// How the header (superblock, journal, MMP, bad blocks) ended.
enum Header {
    /// Written whole: the groups follow.
    Done,
    /// The image is a journal device: nothing follows its journal superblock.
    JournalDevice,
    /// The journal superblock could not be read: dumpe2fs exits there.
    Aborted,
}

/// The superblock, journal superblock, MMP block and bad blocks list.
fn write_header(
    fs: &Filesystem,
    verify: bool,
    out: &mut dyn Write,
    rep: &mut DumpReport,
) -> io::Result<Header> {
    let mut s = RawText(Vec::with_capacity(4096));
    list_super(&fs.sb, &mut s);
    let journal = journal_text(fs, verify, &mut s, rep);
    if !matches!(journal, Header::Done) {
        out.write_all(&s.0)?;
        return Ok(journal);
    }
    mmp_text(fs, verify, &mut s, rep);
    bad_blocks_line(fs, verify, &mut s, rep);
    out.write_all(&s.0)?;
    Ok(Header::Done)
}

/// The journal superblock: of the device itself (journal_dev, and nothing else follows), or of
/// the internal journal inode. A failure ends the dump, as dumpe2fs exits there.
fn journal_text(fs: &Filesystem, verify: bool, s: &mut RawText, rep: &mut DumpReport) -> Header {
    let external = fs.geo.journal_dev;
    if !(external || (fs.sb.has_compat(COMPAT_HAS_JOURNAL) && fs.sb.journal_inum != 0)) {
        return Header::Done;
    }
    // dumpe2fs -i (EXT2_FLAG_IMAGE_FILE) prints no journal: a normal e2image holds none.
    if !external && fs.source.container() == Some(ContainerKind::E2image) {
        return Header::Done;
    }
    let read = if external {
        journal::read_external(fs)
    } else {
        journal::read_internal(fs, verify)
    };
    match read {
        Ok(buf) => list_journal(
            &buf,
            fs.block_size() as u32,
            fs.sb.has_compat(COMPAT_FAST_COMMIT),
            s,
        ),
        Err(e) => {
            rep.stderr.push(journal_failure_message(e, external));
            rep.aborted = true;
            return Header::Aborted;
        }
    }
    if external {
        Header::JournalDevice
    } else {
        Header::Done
    }
}

/// The MMP block's fields (dumpe2fs' print_mmp_block), or why it could not be read.
fn mmp_text(fs: &Filesystem, verify: bool, s: &mut RawText, rep: &mut DumpReport) {
    if !(fs.sb.has_incompat(INCOMPAT_MMP) && fs.sb.mmp_block != 0) {
        return;
    }
    match journal::read_mmp(fs, verify) {
        Ok(m) => {
            let _ = writeln!(s, "MMP_block:");
            let _ = writeln!(s, "    mmp_magic: 0x{:x}", m.magic);
            let _ = writeln!(s, "    mmp_check_interval: {}", m.check_interval);
            let _ = writeln!(s, "    mmp_sequence: {}", alt_hex8(m.seq));
            let _ = write!(s, "    mmp_update_date: {}", ctime(m.time as i64));
            let _ = writeln!(s, "    mmp_update_time: {}", m.time);
            let _ = write!(s, "    mmp_node_name: ");
            s.field(&m.nodename);
            let _ = write!(s, "\n    mmp_device_name: ");
            s.field(&m.bdevname);
            s.0.push(b'\n');
        }
        Err(m) => rep
            .stderr
            .push(format!("{m} reading MMP block {}", fs.sb.mmp_block)),
    }
}

/// `Bad blocks: a, b, ...` (just a newline when there are none), or why the list is unreadable.
fn bad_blocks_line(fs: &Filesystem, verify: bool, s: &mut RawText, rep: &mut DumpReport) {
    match bad_blocks(fs, !verify) {
        Ok(bb) => {
            if let Some((first, rest)) = bb.split_first() {
                let _ = write!(s, "Bad blocks: {first}");
                for b in rest {
                    let _ = write!(s, ", {b}");
                }
            }
            s.0.push(b'\n');
        }
        Err(m) => rep
            .stderr
            .push(format!("{m} while reading the bad blocks inode")),
    }
}

/// Bitmaps, as dumpe2fs: strict read first; on failure (only if nothing failed before) retry
/// ignoring checksums; a failure that remains leaves no bitmaps to print.
fn read_bitmaps(
    fs: &Filesystem,
    rep: &mut DumpReport,
    retval_csum: &mut Option<String>,
) -> Option<UninitMarks> {
    let mut have_bitmaps = false;
    match bitmap::read_check(fs, false) {
        Ok(()) => have_bitmaps = true,
        Err(f) => {
            rep.trouble = true;
            if retval_csum.is_none() {
                *retval_csum = Some(format!("{} while trying to read bitmaps", f.message()));
                have_bitmaps = bitmap::read_check(fs, true).is_ok();
            } else if let ReadFailure::Csum(..) = f {
                // already failing: libext2fs does not retry; bitmaps stay unavailable
            }
        }
    }
    if !have_bitmaps {
        return None;
    }
    match UninitMarks::compute(fs) {
        Ok(m) => Some(m),
        Err(e) => {
            rep.stderr.push(format!("{e} while reading bitmaps"));
            None
        }
    }
}

/// Every group's text, formatted in parallel batches and written in order.
fn write_groups(
    fs: &Filesystem,
    opts: &DumpOptions,
    marks: Option<&UninitMarks>,
    out: &mut dyn Write,
) -> io::Result<Option<String>> {
    const BATCH: u32 = 2048;
    let mut read_error = None;
    let nf = Numfmt {
        hex: opts.hex,
        wide: fs.sb.is_64bit(),
    };
    let n = fs.geo.group_count;
    let mut start = 0u32;
    while start < n {
        let end = start.saturating_add(BATCH).min(n);
        // The bitmaps were read (and are in the page cache) by the check before: this is CPU.
        let texts: Vec<(String, Option<String>)> = (start..end)
            .into_par_iter()
            .map_init(Vec::new, |scratch, g| {
                group_text(fs, g, opts, marks, &nf, scratch)
            })
            .collect();
        for (text, error) in texts {
            out.write_all(text.as_bytes())?;
            read_error = read_error.or(error);
        }
        start = end;
    }
    Ok(read_error)
}

/// Every bitmap is requested up front (in chunks of groups, so the block list stays small): a
/// cold device then has them all queued at once (4,100 reads of the 8 TiB sparse image complete
/// in ~60 ms this way, against ~0.5 s one after another) while the header is read and the
/// bitmap check consumes them in group order.
fn prefetch_all_bitmaps(fs: &Filesystem, done: &AtomicBool) {
    const HINT_CHUNK: u32 = 1 << 10;
    let n = fs.geo.group_count;
    for c in 0..n.div_ceil(HINT_CHUNK) {
        if done.load(Ordering::Relaxed) {
            return;
        }
        let first = c * HINT_CHUNK;
        prefetch_bitmaps(fs, first..first.saturating_add(HINT_CHUNK).min(n));
    }
}

/// Hint the bitmaps of `groups`, so that a cold device fetches them in parallel.
fn prefetch_bitmaps(fs: &Filesystem, groups: std::ops::Range<u32>) {
    let mut blocks: Vec<u64> = groups
        .filter_map(|g| fs.desc(g).ok())
        .flat_map(|gd| {
            [
                crate::reader::bitmap::bitmap_source(fs, &gd, crate::reader::bitmap::Kind::Block),
                crate::reader::bitmap::bitmap_source(fs, &gd, crate::reader::bitmap::Kind::Inode),
            ]
        })
        .flatten()
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    fs.prefetch(blocks);
}

/// dumpe2fs' message for a journal superblock it could not show.
fn journal_failure_message(e: JournalFailure, external: bool) -> String {
    match (e, external) {
        (JournalFailure::BadMagic, true) => {
            "Couldn't find journal superblock magic numbers".to_string()
        }
        (JournalFailure::BadMagic, false) => "Journal superblock magic number invalid!".to_string(),
        (JournalFailure::ReadInode(m) | JournalFailure::ReadSuper(m), true) => {
            format!("{m} while reading journal superblock")
        }
        (JournalFailure::ReadInode(m), false) => {
            format!("{m} while reading journal inode")
        }
        (JournalFailure::ReadSuper(m), false) => {
            format!("{m} while reading journal super block")
        }
    }
}

/// `dumpe2fs -m -i`: the MMP block's fields, then `    mmp_block_number: N` (in hexadecimal
/// with `hex`, as print_number). A block that cannot be read is a message in
/// [`DumpReport::stderr`] and the number line still follows, as in dumpe2fs.
pub fn mmp_info(fs: &Filesystem, hex: bool, out: &mut dyn Write) -> io::Result<DumpReport> {
    let mut rep = DumpReport::default();
    let retval_csum = fs
        .strict_failure
        .map(|f: OpenFailure| format!("{} while trying to open the filesystem", f.message()));
    let mut s = RawText(Vec::with_capacity(512));
    mmp_text(fs, fs.strict_failure.is_none(), &mut s, &mut rep);
    let mut n = String::new();
    Numfmt {
        hex,
        wide: fs.sb.is_64bit(),
    }
    .num(&mut n, fs.sb.mmp_block);
    s.0.extend_from_slice(format!("    mmp_block_number: {n}\n").as_bytes());
    out.write_all(&s.0)?;
    finish(out, &mut rep, retval_csum)?;
    Ok(rep)
}

fn finish(
    out: &mut dyn Write,
    rep: &mut DumpReport,
    retval_csum: Option<String>,
) -> io::Result<()> {
    if let Some(msg) = retval_csum {
        rep.stderr.push(msg);
        out.write_all(b"*** Run e2fsck now!\n\n")?;
        rep.trouble = true;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals() {
        assert_eq!(interval_string(0), "<none>");
        assert_eq!(interval_string(15552000), "6 months");
        assert_eq!(
            interval_string(86400 * 38 + 3661),
            "1 month, 1 week, 1 day, 1:01:01"
        );
    }

    #[test]
    fn alt_hex() {
        assert_eq!(alt_hex8(0), "00000000");
        assert_eq!(alt_hex8(1), "0x000001");
        assert_eq!(alt_hex8(0xff4d4d50), "0xff4d4d50");
    }

    /// The skipping search agrees with a bit-by-bit one everywhere: every start and limit over
    /// patterns with runs crossing byte and 64-byte boundaries, and past the bitmap's end.
    #[test]
    fn next_bit_matches_bit_by_bit() {
        let slow = |b: &[u8], from: u64, limit: u64, set: bool| {
            (from..limit)
                .find(|&i| bitmap::test_bit(b, i as usize) == set)
                .unwrap_or(limit)
        };
        let mut patterns: Vec<Vec<u8>> = vec![vec![0u8; 150], vec![0xFF; 150]];
        for bit in [0usize, 7, 8, 511, 512, 513, 1023, 1199] {
            let mut z = vec![0u8; 150];
            z[bit / 8] |= 1 << (bit % 8);
            let mut o = vec![0xFFu8; 150];
            o[bit / 8] &= !(1 << (bit % 8));
            patterns.push(z);
            patterns.push(o);
        }
        patterns.push((0..150u32).map(|i| (i * 37 % 251) as u8).collect());
        for b in &patterns {
            for from in (0..1300u64).step_by(7) {
                for limit in [from, from + 1, from + 9, from + 513, 1200, 1300] {
                    for set in [false, true] {
                        assert_eq!(next_bit(b, from, limit, set), slow(b, from, limit, set));
                    }
                }
            }
        }
    }

    #[test]
    fn free_ranges() {
        let nf = Numfmt {
            hex: false,
            wide: false,
        };
        let mut s = String::new();
        // bits: 0 used, 1-3 free, 4 used, 5 free, 6-7 used
        print_free(&mut s, &nf, 0, &[0b1101_0001], 8, 1, 1);
        assert_eq!(s, "2-4, 6");
        // word-skipping path: 128 bits, free 1..=70 and 127
        let mut b = vec![0xFFu8; 16];
        for i in 1..=70usize {
            b[i / 8] &= !(1 << (i % 8));
        }
        b[15] &= 0x7F;
        let mut s = String::new();
        print_free(&mut s, &nf, 1, &b, 128, 0, 1);
        assert_eq!(s, "129-198, 255");
        let mut s = String::new();
        print_free(&mut s, &nf, 0, &[0u8; 16], 128, 0, 4);
        assert_eq!(s, "0-508");
    }
}
