//! The journal replayed before checking, as e2fsck recovers and then checks
//! (`e2fsck_run_ext3_journal`, e2fsck/journal.c): an image that needs recovery is judged as the
//! next mount will see it, read through the overlay of [`crate::reader::replay`] (nothing is
//! written). `journal.replayed` says how many transactions were applied; a journal that cannot
//! be replayed (a checksum failure inside a committed transaction, a block logged outside the
//! filesystem) is `journal.unreplayable`, naming the transaction and block.

use super::{Finding, Findings, RuleId};
use crate::error::Error;
use crate::reader::fs::{Filesystem, OpenOptions};
use crate::reader::replay::{self, Plan};
use crate::reader::source::Source;
use std::path::Path;

/// `src` as after recovery when it needs recovery (with the findings saying so), else `src`.
pub(super) fn apply(src: Source, journal: Option<&Path>, findings: &mut Findings) -> Source {
    match replay::replay_source(src.clone(), journal) {
        Ok(None) => src,
        Ok(Some((replayed, plan))) => {
            report(&plan, findings);
            journal_inode_on_disk(&src, findings);
            replayed
        }
        // A filesystem that does not open is judged by the superblock checks, as it is.
        Err(Error::Open { .. }) => src,
        Err(e) => {
            findings.push(Finding::new(
                RuleId::JournalUnreplayable,
                None,
                format!("the journal cannot be replayed ({e}); the image is checked as it is"),
            ));
            src
        }
    }
}

/// The journal inode as the kernel finds it before recovering (see
/// [`super::journal::check_inode_before_replay`]); the replayed image may have a good one.
fn journal_inode_on_disk(src: &Source, findings: &mut Findings) {
    let open = OpenOptions {
        offset: Some(0),
        force: true,
        ..OpenOptions::default()
    };
    // The replay opened it just before: an error here leaves the judgement to the passes.
    if let Ok(fs) = Filesystem::from_source(src.clone(), &open) {
        super::journal::check_inode_before_replay(&fs, findings);
    }
}

fn report(plan: &Plan, findings: &mut Findings) {
    let mut msg = format!(
        "the image needed recovery: {} committed journal transactions replayed in memory before checking (--no-replay checks the bytes as they are)",
        plan.committed()
    );
    if let Some(fc) = &plan.fast_commit {
        msg.push_str(&format!(
            "; the fast-commit transaction {} is not replayed (journal.fast_commit)",
            fc.tid
        ));
    }
    findings.push(
        Finding::new(RuleId::JournalReplayed, None, msg)
            .with("transactions", plan.committed())
            .with("first_transaction", plan.start_tid),
    );
    if let Some(fc) = &plan.fast_commit {
        fast_commit(fc, findings);
    }
    for fail in &plan.failures {
        if let replay::Failure::FastCommit {
            kernel_accepts: true,
            ..
        } = fail
        {
            // e2fsck 1.47 fails recovery on it; the kernel mounts: not a damage finding.
            findings.push(Finding::new(
                RuleId::JournalFastCommit,
                None,
                format!("journal recovery by e2fsck 1.47 fails, nothing is replayed: {fail}"),
            ));
            continue;
        }
        findings.push(Finding::new(
            RuleId::JournalUnreplayable,
            None,
            format!("journal recovery fails, the kernel refuses to mount: {fail}"),
        ));
    }
    if let Some(tid) = plan.failed_commit {
        findings.push(
            Finding::new(
                RuleId::JournalUnreplayable,
                None,
                format!(
                    "journal transaction {tid} is corrupt (its commit block fails its checksum): replay stops before it"
                ),
            )
            .with("transaction", tid),
        );
    }
}

/// What the fast-commit transaction would change and the checked state does not hold: one
/// finding naming every tag e2fsck 1.47 applies (`journal.fast_commit`).
fn fast_commit(fc: &replay::FastCommit, findings: &mut Findings) {
    let mut ops: Vec<String> = fc.ops.iter().map(|o| format!("{} {o}", o.tag())).collect();
    if fc.more_ops > 0 {
        ops.push(format!("and {} more", fc.more_ops));
    }
    let inodes: Vec<String> = fc.inodes().iter().map(u32::to_string).collect();
    findings.push(
        Finding::new(
            RuleId::JournalFastCommit,
            None,
            format!(
                "the fast-commit transaction {} ({} tags) is not replayed: e2fsck 1.47 and the kernel apply it after the log, so inodes {} are checked as the log leaves them; it applies: {}",
                fc.tid,
                fc.tags,
                inodes.join(", "),
                ops.join("; ")
            ),
        )
        .with("transaction", fc.tid)
        .with("tags", fc.tags),
    );
}
