//! Pass 3: directory connectivity, as e2fsck's pass 3 (e2fsck/pass3.c `check_root`,
//! `check_directory`, `e2fsck_get_lost_and_found`): the root is an in-use directory, every
//! directory reaches the root through the parents pass 2 recorded, each `..` names that parent,
//! and `/lost+found` exists and is a directory.
//!
//! Parent chains are followed with a state per directory (unknown, on the current chain,
//! connected, unconnected), so every directory is visited a bounded number of times overall and a
//! loop ends the chain that closes it — no hang, whatever the parents say.

use super::context::{InodeIndex, Pass2Result};
use super::{Finding, Findings, RuleId};
use crate::reader::dir::ROOT_INO;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Unknown,
    OnChain,
    Connected,
    Unconnected,
}

/// Run pass 3.
pub fn run(index: &InodeIndex, p2: &Pass2Result, ipg: u32, findings: &mut Findings) {
    let group = |ino: u32| (ino - 1) / ipg.max(1);
    let root_ok = match index.get(ROOT_INO) {
        None => {
            findings.push(Finding::inode(
                RuleId::ConnectRoot,
                0,
                ROOT_INO,
                "the root directory (inode 2) is not in use",
            ));
            false
        }
        Some(r) if !r.is_dir() => {
            findings.push(Finding::inode(
                RuleId::ConnectRoot,
                0,
                ROOT_INO,
                format!("the root inode is not a directory (mode {:#o})", r.mode()),
            ));
            false
        }
        Some(_) => true,
    };
    // Over the directories only (in inode order), as e2fsck's pass 3 walks its dir_info.
    let mut state = vec![State::Unknown; index.dir_count()];
    if let Some(root_position) = index.dir_position(ROOT_INO) {
        state[root_position] = if root_ok {
            State::Connected
        } else {
            State::Unconnected
        };
    }
    let mut chain = Vec::new();
    for position in 0..index.dir_count() {
        if state[position] != State::Unknown {
            continue;
        }
        // Follow parents until a directory whose state is known, a missing parent, or a loop.
        chain.clear();
        let mut cur = position;
        let outcome = loop {
            match state[cur] {
                State::Connected => break State::Connected,
                State::Unconnected => break State::Unconnected,
                State::OnChain => {
                    let ino = index.dir(cur).ino();
                    findings.push(Finding::inode(
                        RuleId::ConnectUnconnectedDir,
                        group(ino),
                        ino,
                        "directory is part of a loop of directories: not connected to the root",
                    ));
                    break State::Unconnected;
                }
                State::Unknown => {}
            }
            state[cur] = State::OnChain;
            chain.push(cur);
            let parent = index.dir(cur).parent();
            match (parent != 0).then(|| index.dir_position(parent)).flatten() {
                Some(parent_position) => cur = parent_position,
                _ => {
                    let dir = index.dir(cur);
                    let ino = dir.ino();
                    let dotdot = dir.dotdot();
                    findings.push(
                        Finding::inode(
                            RuleId::ConnectUnconnectedDir,
                            group(ino),
                            ino,
                            format!("directory is not named by any directory ('..' says {dotdot})"),
                        )
                        .with("dotdot", dotdot),
                    );
                    break State::Unconnected;
                }
            }
        };
        for &position in &chain {
            state[position] = outcome;
        }
    }
    check_dotdot(index, ipg, findings);
    check_lost_found(index, p2, findings);
}

/// `..` of every directory names the directory that holds its name.
fn check_dotdot(index: &InodeIndex, ipg: u32, findings: &mut Findings) {
    for dir in index.dirs() {
        let parent = dir.parent();
        let dotdot = dir.dotdot();
        if parent == 0 || parent == dotdot {
            continue;
        }
        let ino = dir.ino();
        findings.push_with(RuleId::ConnectDotdot, || {
            Finding::inode(
                RuleId::ConnectDotdot,
                (ino - 1) / ipg.max(1),
                ino,
                format!("'..' is inode {dotdot}, but the directory is named in inode {parent}"),
            )
            .with("dotdot", dotdot)
            .with("parent", parent)
        });
    }
}

/// `/lost+found` exists and is a directory (e2fsck -n does not look for it unless it must
/// reconnect something, and a read-write e2fsck creates it: a warning).
fn check_lost_found(index: &InodeIndex, p2: &Pass2Result, findings: &mut Findings) {
    if index.get(ROOT_INO).is_none() {
        return;
    }
    match p2.lost_found {
        None => findings.push(Finding::new(
            RuleId::ConnectLostFound,
            None,
            "/lost+found not found (e2fsck would create it)",
        )),
        Some(ino) => {
            if !index.get(ino).is_some_and(|s| s.is_dir()) {
                findings.push(Finding::new(
                    RuleId::ConnectLostFound,
                    None,
                    format!("/lost+found (inode {ino}) is not a directory in use"),
                ));
            }
        }
    }
}
