//! Quota rules (`quota.*`): the quota inodes and files as e2fsck opens them
//! (lib/support/quotaio.c `quota_file_open`, quotaio_v2.c `v2_init_io`), and the stored usage
//! per ID against what pass 1 charged (`e2fsck/quota.c`, lib/support/mkquota.c
//! `quota_compare_and_update`: `[QUOTA WARNING] Usage inconsistent for ID ...` and
//! `Missing quota entry ID ...`, then `PR_6_UPDATE_QUOTAS`, exit 4 when answered no).

use super::{Finding, Findings, RuleId};
use crate::models::quota::{compare, QuotaUsage};
use crate::reader::features::RO_COMPAT_QUOTA;
use crate::reader::fs::Filesystem;
use crate::reader::quota::{self, Dquot, QuotaOpenError, QuotaType};
use std::ops::ControlFlow;

/// Most stored entries read per quota file (72 bytes each on disk, 80 in memory).
const MAX_ENTRIES: usize = 1 << 22;

/// Check the quota feature, inodes and files, and compare the usage `usage` charged by pass 1.
pub(super) fn check(fs: &Filesystem, usage: &QuotaUsage, findings: &mut Findings) {
    let feature = fs.sb.has_ro_compat(RO_COMPAT_QUOTA);
    let inodes: Vec<(QuotaType, u32)> = QuotaType::ALL
        .into_iter()
        .map(|t| (t, t.inode(fs)))
        .filter(|&(_, i)| i != 0)
        .collect();
    if feature && inodes.is_empty() {
        findings.push(Finding::new(
            RuleId::QuotaFeature,
            None,
            "the quota feature is set but the superblock names no quota inode",
        ));
        return;
    }
    if !feature {
        for (qtype, ino) in inodes {
            findings.push(
                Finding::new(
                    RuleId::QuotaFeature,
                    None,
                    format!(
                        "the superblock names {} quota inode {ino} without the quota feature",
                        qtype.name()
                    ),
                )
                .with("inode", ino),
            );
        }
        return;
    }
    for (qtype, ino) in inodes {
        check_file(fs, qtype, ino, usage, findings);
    }
}

fn check_file(
    fs: &Filesystem,
    qtype: QuotaType,
    ino: u32,
    usage: &QuotaUsage,
    findings: &mut Findings,
) {
    let name = qtype.name();
    let mut qf = match quota::open(fs, qtype) {
        Ok(q) => q,
        Err(QuotaOpenError::BadInode(_)) => return, // inode.quota_inum reports it
        Err(e @ QuotaOpenError::NotRegular(..)) => {
            findings.push(
                Finding::new(RuleId::QuotaInodeType, None, format!("{name} quota: {e}"))
                    .with("inode", ino),
            );
            return;
        }
        Err(e) => {
            findings.push(
                Finding::new(RuleId::QuotaFile, None, format!("{name} quota: {e}"))
                    .with("inode", ino),
            );
            return;
        }
    };
    let mut stored: Vec<Dquot> = Vec::new();
    let info = qf.info;
    let rep = quota::scan(&mut qf.blocks, &info, |dquot| {
        stored.push(*dquot);
        if stored.len() >= MAX_ENTRIES {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    for problem in &rep.problems {
        findings.push(
            Finding::new(
                RuleId::QuotaFile,
                None,
                format!("{name} quota file (inode {ino}): {problem}"),
            )
            .with("inode", ino),
        );
    }
    if stored.len() >= MAX_ENTRIES {
        findings.push(
            Finding::new(
                RuleId::QuotaFile,
                None,
                format!("{name} quota file (inode {ino}) holds more than {MAX_ENTRIES} entries: not compared"),
            )
            .with("inode", ino),
        );
        return;
    }
    for mismatch in compare(usage, qtype, &stored) {
        let computed = serde_json::json!({"space": mismatch.computed.space, "inodes": mismatch.computed.inodes});
        let msg = match mismatch.stored {
            Some(s) => format!(
                "{name} ID {}: usage inconsistent: computed ({}, {}) != stored ({}, {}) (bytes, inodes)",
                mismatch.id, mismatch.computed.space, mismatch.computed.inodes, s.space, s.inodes
            ),
            None => format!(
                "{name} ID {}: missing quota entry: computed ({}, {}) (bytes, inodes)",
                mismatch.id, mismatch.computed.space, mismatch.computed.inodes
            ),
        };
        let stored = mismatch
            .stored
            .map(|s| serde_json::json!({"space": s.space, "inodes": s.inodes}));
        findings.push(
            Finding::new(RuleId::QuotaUsage, None, msg)
                .with("quota_type", name)
                .with("id", mismatch.id)
                .with("computed", computed)
                .with("stored", stored.unwrap_or(serde_json::Value::Null)),
        );
    }
}
