//! Filesystem state and open-time rules (`state.*`), what e2fsck judges before pass 1
//! (`e2fsck/unix.c` `check_if_skip` and `check_mount`, `e2fsck/super.c` `check_super_block` and
//! `release_orphan_inodes`, `e2fsck/journal.c` `e2fsck_check_ext3_journal`): the error state and
//! error record, unfinished journal recovery, the orphan list and orphan file, a mounted device,
//! and implausible lifetime writes (times in the future are `sb.time_future`, printed as dates).
//!
//! Also collects the orphan inodes (list and file), which pass 1 and pass 4 must not call
//! deleted-but-used or unreferenced.

use super::{Finding, Findings, RuleId};
use crate::reader::csum::crc32c_raw;
use crate::reader::features::*;
use crate::reader::fs::Filesystem;
use crate::reader::inode::{data_map, DataMap, Inode};
use crate::reader::ondisk::orphan::{OrphanBlockTail, ORPHAN_BLOCK_MAGIC};
use crate::reader::superblock::{cstr, Superblock};

/// `EXT2_ERROR_FS` in `s_state`.
const STATE_ERROR_FS: u16 = 0x0002;
/// Most orphan-list links followed (the chain is bounded by inodes_count too).
const MAX_ORPHAN_CHAIN: u32 = 1 << 16;
/// Most orphan-file blocks read.
const MAX_ORPHAN_FILE_BLOCKS: u64 = 1 << 12;

/// `seconds since the epoch` as `YYYY-MM-DD HH:MM:SS UTC` (proleptic Gregorian).
pub fn utc_date(timestamp: i64) -> String {
    let days = timestamp.div_euclid(86400);
    let secs = timestamp.rem_euclid(86400);
    // Howard Hinnant's days-to-civil.
    let shifted_days = days + 719_468;
    let era = shifted_days.div_euclid(146_097);
    let doe = shifted_days - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// State rules that need only the superblock.
pub(super) fn check_superblock(sb: &Superblock, findings: &mut Findings) {
    if sb.state & STATE_ERROR_FS != 0 {
        findings.push(Finding::new(
            RuleId::StateErrors,
            None,
            "the superblock state says \"not clean with errors\": the kernel met an error and e2fsck has not repaired it since",
        ));
    }
    if sb.error_count > 0 {
        findings.push(error_record(sb));
    }
    if sb.has_incompat(INCOMPAT_RECOVER) {
        findings.push(Finding::new(
            RuleId::StateNeedsRecovery,
            None,
            "the journal needs recovery (needs_recovery): the image was taken while mounted or after a crash, so it is not a finished image; transactions in the journal are not yet written to their home blocks, and inconsistencies reported below may be ones that journal replay (mount, or e2fsck without -n) would fix",
        ));
    }
    if sb.last_orphan != 0 {
        findings.push(
            Finding::new(
                RuleId::StateOrphanList,
                None,
                format!(
                    "the orphan list is not empty (s_last_orphan = inode {}): deletions or truncations were left unfinished; the kernel completes them at mount, e2fsck when not read-only",
                    sb.last_orphan
                ),
            )
            .with("inode", sb.last_orphan),
        );
    }
    let written_max = sb.blocks_count().saturating_mul(sb.block_size()) / 1024;
    // No device survives being rewritten a million times over.
    if sb.kbytes_written > written_max.saturating_mul(1 << 20).max(1 << 40) {
        findings.push(
            Finding::new(
                RuleId::StateKbytesWritten,
                None,
                format!(
                    "lifetime writes of {} KiB are implausible for a filesystem of {} KiB",
                    sb.kbytes_written, written_max
                ),
            )
            .with("stored", sb.kbytes_written),
        );
    }
}

fn error_record(sb: &Superblock) -> Finding {
    let func = String::from_utf8_lossy(cstr(&sb.first_error_func)).into_owned();
    let when = i64::from(sb.first_error_time) | (i64::from(sb.first_error_time_hi) << 32);
    let mut msg = format!("{} error(s) recorded by the kernel", sb.error_count);
    if when != 0 {
        msg.push_str(&format!(
            "; first at {} in {func}:{}",
            utc_date(when),
            sb.first_error_line
        ));
        if sb.first_error_ino != 0 {
            msg.push_str(&format!(", inode {}", sb.first_error_ino));
        }
        if sb.first_error_block != 0 {
            msg.push_str(&format!(", block {}", sb.first_error_block));
        }
    }
    Finding::new(RuleId::StateErrorRecord, None, msg)
        .with("error_count", sb.error_count)
        .with_time("first_error_time", when)
        .with("first_error_function", func)
        .with("first_error_line", sb.first_error_line)
}

/// Is the block device at `path` mounted (an entry of /proc/self/mounts names it or a device
/// with the same number)? Read-only: nothing is opened for writing.
pub fn device_mounted(path: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(path).ok()?.rdev();
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|line| {
        let mut it = line.split_whitespace();
        let dev = it.next()?;
        let dir = it.next()?;
        let same = std::fs::metadata(dev).is_ok_and(|m| m.rdev() == rdev && rdev != 0);
        same.then(|| dir.replace("\\040", " "))
    })
}

/// The mounted-device rule.
pub(super) fn check_mounted(path: &std::path::Path, is_device: bool, findings: &mut Findings) {
    if !is_device {
        return;
    }
    if let Some(dir) = device_mounted(path) {
        findings.push(
            Finding::new(
                RuleId::StateMounted,
                None,
                format!(
                    "the device is mounted on {dir}: what is read may change under the check, and findings may be transient"
                ),
            )
            .with("mountpoint", dir),
        );
    }
}

/// Follow the orphan list (`s_last_orphan`, linked through `i_dtime`), bounded and cycle-safe.
fn orphan_chain(fs: &Filesystem) -> Vec<u32> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let max = fs.sb.inodes_count;
    let mut ino = fs.sb.last_orphan;
    while ino != 0 && ino <= max && out.len() < MAX_ORPHAN_CHAIN as usize && seen.insert(ino) {
        out.push(ino);
        let Ok(raw) = fs.inode_raw(ino) else { break };
        ino = Inode::parse(&raw).dtime;
    }
    out
}

/// An orphan-file block the kernel refuses at mount (`ext4_init_orphan_info`).
struct BadOrphanBlock {
    /// Index of the block in the file.
    index: u64,
    /// Its physical block number.
    physical: u64,
    /// "magic" or "checksum".
    what: &'static str,
}

/// What the orphan file holds: the inodes recorded and the blocks failing their tail.
#[derive(Default)]
struct OrphanFile {
    entries: Vec<u32>,
    bad: Vec<BadOrphanBlock>,
}

/// The orphan file's blocks as (index in the file, physical block), bounded.
fn orphan_file_blocks(fs: &Filesystem, ino: u32, inode: &Inode) -> Vec<(u64, u64)> {
    // The kernel reads i_size / block size blocks; later mapped blocks are not part of the file.
    let count = (inode.size / fs.block_size().max(1)).min(MAX_ORPHAN_FILE_BLOCKS);
    let mut blocks = Vec::new();
    match data_map(fs, ino, inode, None) {
        DataMap::Extents(walk) => {
            for leaf in walk.leaves().filter(|leaf| !leaf.uninit) {
                for offset in 0..u64::from(leaf.len) {
                    blocks.push((u64::from(leaf.logical) + offset, leaf.physical + offset));
                }
                if blocks.len() as u64 > MAX_ORPHAN_FILE_BLOCKS {
                    break;
                }
            }
        }
        DataMap::Blocks(walk) => {
            for run in &walk.runs {
                let crate::reader::extent::MapKind::Data(logical) = run.kind else {
                    continue;
                };
                for offset in 0..run.len {
                    blocks.push((logical + offset, run.physical + offset));
                }
                if blocks.len() as u64 > MAX_ORPHAN_FILE_BLOCKS {
                    break;
                }
            }
        }
        _ => {}
    }
    blocks.retain(|&(index, _)| index < count);
    blocks
}

/// `ext4_orphan_file_block_csum_verify` (fs/ext4/orphan.c): crc32c seeded with the orphan
/// inode's checksum seed (`i_csum_seed`: fs seed, inode number, generation), over the physical
/// block number as a little-endian 64-bit value, then the inode slots (not the tail).
fn orphan_block_csum(fs: &Filesystem, ino: u32, inode: &Inode, physical: u64, data: &[u8]) -> u32 {
    let seed = inode.csum_seed(fs.csum_seed(), ino);
    let slots = OrphanBlockTail::slots(data.len()) * 4;
    let crc = crc32c_raw(seed, &physical.to_le_bytes());
    crc32c_raw(crc, &data[..slots.min(data.len())])
}

/// The orphan file (`s_orphan_file_inum`) as the kernel reads it at mount
/// (`ext4_init_orphan_info`): every block must carry the orphan block magic and, with
/// metadata_csum, its checksum; the inodes recorded are every non-zero slot before the tail.
fn read_orphan_file(fs: &Filesystem) -> OrphanFile {
    let ino = fs.sb.orphan_file_inum;
    let mut out = OrphanFile::default();
    if !fs.sb.has_compat(COMPAT_ORPHAN_FILE) || ino == 0 {
        return out;
    }
    let Ok(raw) = fs.inode_raw(ino) else {
        return out;
    };
    let inode = Inode::parse(&raw);
    for (index, physical) in orphan_file_blocks(fs, ino, &inode) {
        let Ok(data) = fs.block(physical) else {
            continue;
        };
        let Ok(tail) = OrphanBlockTail::of_block(&data) else {
            continue;
        };
        let bad = |what| BadOrphanBlock {
            index,
            physical,
            what,
        };
        if tail.magic != ORPHAN_BLOCK_MAGIC {
            // Not an orphan block at all: its slots are not orphan entries.
            out.bad.push(bad("magic"));
            continue;
        }
        if fs.sb.has_metadata_csum()
            && tail.checksum != orphan_block_csum(fs, ino, &inode, physical, &data)
        {
            out.bad.push(bad("checksum"));
        }
        let slot_count = OrphanBlockTail::slots(data.len());
        for slot in 0..slot_count {
            let entry =
                u32::from_le_bytes(data[4 * slot..4 * slot + 4].try_into().unwrap_or([0; 4]));
            if entry != 0 {
                out.entries.push(entry);
            }
        }
    }
    out
}

/// `state.orphan_file_block`: the first block failing its tail, and how many do.
fn bad_orphan_blocks(fs: &Filesystem, bad: &[BadOrphanBlock], findings: &mut Findings) {
    let Some(first) = bad.first() else { return };
    findings.push(
        Finding::new(
            RuleId::StateOrphanFileBlock,
            None,
            format!(
                "orphan file (inode {}) block {} (physical {}) has a wrong {}{}: the kernel refuses the mount (\"orphan file block {}: bad {}\")",
                fs.sb.orphan_file_inum,
                first.index,
                first.physical,
                first.what,
                if bad.len() > 1 {
                    format!(", as do {} more block(s)", bad.len() - 1)
                } else {
                    String::new()
                },
                first.index,
                first.what
            ),
        )
        .with("block", first.index)
        .with("physical", first.physical)
        .with("count", bad.len()),
    );
}

/// Orphan rules that need the filesystem; returns every orphan inode (list and file).
pub(super) fn check_orphans(fs: &Filesystem, findings: &mut Findings) -> Vec<u32> {
    let mut orphans = orphan_chain(fs);
    let OrphanFile {
        entries: in_file,
        bad,
    } = read_orphan_file(fs);
    bad_orphan_blocks(fs, &bad, findings);
    if !in_file.is_empty() {
        findings.push(
            Finding::new(
                RuleId::StateOrphanFile,
                None,
                format!(
                    "the orphan file lists {} inode(s) (first {}): deletions or truncations were left unfinished",
                    in_file.len(),
                    in_file[0]
                ),
            )
            .with("count", in_file.len()),
        );
    } else if fs.sb.has_ro_compat(RO_COMPAT_ORPHAN_PRESENT) {
        findings.push(Finding::new(
            RuleId::StateOrphanFile,
            None,
            "orphan_present is set (the filesystem was in use, or not cleanly unmounted) although the orphan file lists no inode",
        ));
    }
    orphans.extend(in_file);
    orphans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc_date(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_date(1_700_000_000), "2023-11-14 22:13:20 UTC");
        assert_eq!(utc_date(951_782_400), "2000-02-29 00:00:00 UTC");
    }
}
