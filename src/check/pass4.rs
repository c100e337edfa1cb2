//! Pass 4: reference counts, as e2fsck's pass 4 (e2fsck/pass4.c `e2fsck_pass4`,
//! `disconnect_inode`): every in-use inode's `i_links_count` equals the directory entries
//! naming it (`.` and `..` included), with dir_nlink's rule that a directory of more than
//! 65,000 links stores 1; an in-use inode that no entry names is unattached.
//!
//! Skipped as e2fsck skips them: the bad-blocks inode, the reserved inodes other than the root,
//! EA inodes (referenced by xattrs, not names), the quota inodes, the orphan file, and inodes on
//! the orphan list (open but unlinked files).

use super::dirtree::InodeIndex;
use super::{Finding, Findings, RuleId};
use crate::dir::ROOT_INO;
use crate::features::RO_COMPAT_DIR_NLINK;
use crate::fs::Filesystem;
use crate::inode::{EA_INODE_FL, INDEX_FL};
use std::sync::atomic::Ordering::Relaxed;

/// `EXT4_LINK_MAX`: above this many links a directory stores 1 (dir_nlink).
pub const LINK_MAX: u32 = 65_000;

/// Run pass 4.
pub fn run(fs: &Filesystem, index: &InodeIndex, orphans: &[u32], f: &mut Findings) {
    let sb = &fs.sb;
    let first_ino = sb.first_ino();
    let ipg = fs.geo.inodes_per_group.max(1);
    let dir_nlink = sb.has_ro_compat(RO_COMPAT_DIR_NLINK);
    let skip = [
        sb.prj_quota_inum,
        sb.orphan_file_inum,
        sb.usr_quota_inum,
        sb.grp_quota_inum,
        sb.journal_inum,
    ];
    let mut nlink_reported = false;
    for s in index.slots() {
        let ino = s.ino;
        if ino == 1 || (ino > ROOT_INO && ino < first_ino) || skip.contains(&ino) {
            continue;
        }
        if s.flags & EA_INODE_FL != 0 || orphans.binary_search(&ino).is_ok() {
            continue;
        }
        let group = (ino - 1) / ipg;
        let mut counted = s.refs.load(Relaxed);
        let stored = u32::from(s.links_count);
        if counted == 0 {
            let zero = s.no_blocks && (s.is_dir() || s.mode & 0xF000 == 0x8000);
            f.push_with(RuleId::LinkUnattached, || {
                Finding::inode(
                    RuleId::LinkUnattached,
                    group,
                    ino,
                    if zero {
                        format!("unattached zero-length inode (links_count {stored}): no directory entry names it")
                    } else {
                        format!("unattached inode (links_count {stored}): no directory entry names it")
                    },
                )
            });
            continue;
        }
        if s.is_dir() && counted > LINK_MAX {
            if !dir_nlink && !nlink_reported {
                nlink_reported = true;
                f.push(Finding::inode(
                    RuleId::LinkDirNlink,
                    group,
                    ino,
                    format!("directory has {counted} links, over {LINK_MAX}, but the filesystem lacks dir_nlink"),
                ));
            }
            counted = 1;
        }
        if counted == stored {
            continue;
        }
        // A directory that once exceeded the limit keeps 1 until e2fsck -f rewrites it: not an
        // error (pass4.c "i_link_count was previously exceeded").
        if s.is_dir() && counted > 1 && stored == 1 && s.flags & INDEX_FL != 0 {
            continue;
        }
        f.push_with(RuleId::LinkCount, || {
            Finding::inode(
                RuleId::LinkCount,
                group,
                ino,
                format!("links_count is {stored}, but {counted} directory entries name it"),
            )
            .with("stored", stored)
            .with("counted", counted)
        });
    }
}
