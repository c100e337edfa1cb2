//! Pass 4: reference counts, as e2fsck's pass 4 (e2fsck/pass4.c `e2fsck_pass4`,
//! `disconnect_inode`): every in-use inode's `i_links_count` equals the directory entries
//! naming it (`.` and `..` included), with dir_nlink's rule that a directory of more than
//! 65,000 links stores 1; an in-use inode that no entry names is unattached.
//!
//! Skipped as e2fsck skips them: the bad-blocks inode, the reserved inodes other than the root,
//! inodes in bad blocks of the inode table, the quota inodes, the orphan file, and inodes on
//! the orphan list (open but unlinked files).
//!
//! EA inodes (`check_ea_inode`): an EA_INODE inode that no directory entry names counts one
//! link when xattr entries refer to it, and its stored reference count must equal them; with
//! no xattr reference either it is unattached like any other inode.

use super::context::{Extras, InodeIndex, InodeSlot};
use super::{Finding, Findings, RuleId};
use crate::reader::dir::ROOT_INO;
use crate::reader::features::RO_COMPAT_DIR_NLINK;
use crate::reader::fs::Filesystem;
use crate::reader::inode::{EA_INODE_FL, INDEX_FL};
use crate::reader::ondisk::inode::{S_IFMT, S_IFREG};

/// `EXT4_LINK_MAX`: above this many links a directory stores 1 (dir_nlink).
pub const LINK_MAX: u32 = 65_000;

/// What pass 4 needs besides the index, for every slot.
struct Ctx<'a> {
    fs: &'a Filesystem,
    orphans: &'a [u32],
    extras: &'a Extras,
    first_ino: u32,
    ipg: u32,
    /// Inodes e2fsck's pass 4 does not count (quota inodes, orphan file, journal).
    skip: [u32; 5],
    /// The directory the missing dir_nlink is reported on (the first over the limit).
    nlink_report: Option<u32>,
}

impl Ctx<'_> {
    /// Not judged by pass 4 (see the module documentation).
    fn skipped(&self, ino: u32) -> bool {
        ino == 1
            || (ino > ROOT_INO && ino < self.first_ino)
            || self.skip.contains(&ino)
            || self.orphans.binary_search(&ino).is_ok()
            || self.extras.is_bb_inode(ino)
    }
}

/// Run pass 4: the groups in parallel, their findings merged in inode order. Only the inodes
/// whose counter says the references differ from `i_links_count`, the directories (dir_nlink
/// changes what they must store) and the reserved inodes are judged one by one.
pub fn run(
    fs: &Filesystem,
    index: &InodeIndex,
    orphans: &[u32],
    extras: &Extras,
    findings: &mut Findings,
) {
    use rayon::prelude::*;
    let sb = &fs.sb;
    let mut ctx = Ctx {
        fs,
        orphans,
        extras,
        first_ino: sb.first_ino(),
        ipg: fs.geo.inodes_per_group.max(1),
        skip: [
            sb.prj_quota_inum,
            sb.orphan_file_inum,
            sb.usr_quota_inum,
            sb.grp_quota_inum,
            sb.journal_inum,
        ],
        nlink_report: None,
    };
    // Without dir_nlink, only the first directory over the limit is reported: found before the
    // groups are shared out, from the directories alone.
    if !sb.has_ro_compat(RO_COMPAT_DIR_NLINK) {
        ctx.nlink_report = index
            .dirs()
            .find(|s| s.refs() > LINK_MAX && !ctx.skipped(s.ino()))
            .map(|s| s.ino());
    }
    let found = (0..index.group_count())
        .into_par_iter()
        .fold(Findings::default, |mut acc, group| {
            // The others name an inode as often as its links_count says: nothing to report.
            for slot in index.group_unsettled(group, ctx.first_ino) {
                check_slot(&ctx, slot, &mut acc);
            }
            acc
        })
        .reduce(Findings::default, Findings::merge);
    let merged = std::mem::take(findings).merge(found);
    *findings = merged;
}

/// Pass 4 for one in-use inode.
fn check_slot(ctx: &Ctx<'_>, slot: InodeSlot<'_>, findings: &mut Findings) {
    let ino = slot.ino();
    if ctx.skipped(ino) {
        return;
    }
    // Computed only for a finding (a division per in-use inode otherwise).
    let group = || (ino - 1) / ctx.ipg;
    let mut counted = slot.refs();
    if counted == 0 && slot.flags() & EA_INODE_FL != 0 {
        counted = check_ea_inode(ctx.fs, ino, group(), ctx.extras.ea_refs(ino), findings);
    }
    let stored = u32::from(slot.links_count());
    if counted == 0 {
        let zero = slot.no_blocks() && (slot.is_dir() || slot.mode() & S_IFMT == S_IFREG);
        findings.push_with(RuleId::LinkUnattached, || {
            Finding::inode(
                RuleId::LinkUnattached,
                group(),
                ino,
                if zero {
                    format!("unattached zero-length inode (links_count {stored}): no directory entry names it")
                } else {
                    format!("unattached inode (links_count {stored}): no directory entry names it")
                },
            )
        });
        return;
    }
    if slot.is_dir() && counted > LINK_MAX {
        if ctx.nlink_report == Some(ino) {
            findings.push(Finding::inode(
                RuleId::LinkDirNlink,
                group(),
                ino,
                format!("directory has {counted} links, over {LINK_MAX}, but the filesystem lacks dir_nlink"),
            ));
        }
        counted = 1;
    }
    if counted == stored {
        return;
    }
    // A directory that once exceeded the limit keeps 1 until e2fsck -f rewrites it: not an
    // error (pass4.c "i_link_count was previously exceeded").
    if slot.is_dir() && counted > 1 && stored == 1 && slot.flags() & INDEX_FL != 0 {
        return;
    }
    findings.push_with(RuleId::LinkCount, || {
        Finding::inode(
            RuleId::LinkCount,
            group(),
            ino,
            format!("links_count is {stored}, but {counted} directory entries name it"),
        )
        .with("stored", stored)
        .with("counted", counted)
    });
}

/// An EA inode no entry names: with `xattr_refs` references its stored count
/// (`i_ctime << 32 | i_version`) must match them, unless `i_ctime` equals `i_atime` (Lustre's
/// older EA inodes store no count). Returns the links it counts for: 1 when referenced, else 0.
fn check_ea_inode(
    fs: &Filesystem,
    ino: u32,
    group: u32,
    xattr_refs: u32,
    findings: &mut Findings,
) -> u32 {
    if xattr_refs == 0 {
        return 0;
    }
    let Ok(raw) = fs.inode_raw(ino) else {
        return 1;
    };
    let inode = crate::reader::inode::Inode::parse(&raw);
    let stored = (u64::from(inode.ctime) << 32) | u64::from(inode.version);
    if stored != u64::from(xattr_refs) && inode.ctime != inode.atime {
        findings.push_with(RuleId::XattrEaInodeRefcount, || {
            Finding::inode(
                RuleId::XattrEaInodeRefcount,
                group,
                ino,
                format!(
                    "EA inode has reference count {stored}, {xattr_refs} xattr entries refer to it"
                ),
            )
            .with("stored", stored)
            .with("counted", xattr_refs)
        });
    }
    1
}
