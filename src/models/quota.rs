//! Quota usage as e2fsck computes it in pass 1 (`e2fsck/pass1.c` `check_blocks` calling
//! lib/support/mkquota.c `quota_data_add` and `quota_data_inodes`): per user, group and project
//! ID, the space (clusters held x cluster size: data, mapping and tree blocks, the xattr block
//! and values in EA inodes) and the inodes (the inode itself and the EA inodes its xattrs use) of
//! every in-use inode that is the root or at least `s_first_ino`, except the project quota inode
//! and EA inodes themselves.
//!
//! An accumulator per walk worker; the workers' parts are merged after the walk.

use crate::reader::quota::{Dquot, QuotaType};
use std::collections::HashMap;

/// Space (bytes) and inodes charged to one ID.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Usage {
    /// Bytes.
    pub space: u64,
    /// Inodes.
    pub inodes: u64,
}

/// The IDs of one inode, as `get_qid` reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Owner {
    /// i_uid (with i_uid_high).
    pub uid: u32,
    /// i_gid (with i_gid_high).
    pub gid: u32,
    /// i_projid (0 when the inode's extra size does not cover it).
    pub projid: u32,
}

impl Owner {
    fn id(&self, qtype: QuotaType) -> u32 {
        match qtype {
            QuotaType::User => self.uid,
            QuotaType::Group => self.gid,
            QuotaType::Project => self.projid,
        }
    }
}

/// A multiplicative hash for u32 IDs (the map is filled once per inode: SipHash cost a quarter
/// of the walk's CPU on a 400,000-file image). IDs are not chosen by an adversary who can see the
/// hash, and a collision costs time only.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(byte)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn write_u32(&mut self, value: u32) {
        self.0 = (u64::from(value) ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IdMap = HashMap<u32, Usage, std::hash::BuildHasherDefault<IdHasher>>;

/// Usage per ID for the quota types being counted.
#[derive(Clone, Debug, Default)]
pub struct QuotaUsage {
    /// Which types are counted (those the superblock has a quota inode for).
    pub enabled: [bool; 3],
    maps: [IdMap; 3],
    /// The last ID charged per type and what it was charged since it went into the map:
    /// neighbouring inodes mostly share their owner, group and project.
    pending: [Option<(u32, Usage)>; 3],
}

impl QuotaUsage {
    /// An empty accumulator counting the `enabled` types.
    pub fn new(enabled: [bool; 3]) -> QuotaUsage {
        QuotaUsage {
            enabled,
            maps: Default::default(),
            pending: [None; 3],
        }
    }
    /// True when no type is counted.
    pub fn is_off(&self) -> bool {
        !self.enabled.iter().any(|&e| e)
    }
    /// Charge one inode: `space` bytes and `inodes` inodes (`quota_data_add` +
    /// `quota_data_inodes`).
    pub fn add(&mut self, owner: Owner, space: u64, inodes: u64) {
        for qtype in QuotaType::ALL {
            let index = qtype.index();
            if !self.enabled[index] {
                continue;
            }
            let id = owner.id(qtype);
            match &mut self.pending[index] {
                Some((pending_id, pending)) if *pending_id == id => {
                    pending.space = pending.space.saturating_add(space);
                    pending.inodes = pending.inodes.saturating_add(inodes);
                }
                slot => {
                    if let Some((pending_id, pending)) = slot.replace((id, Usage { space, inodes }))
                    {
                        add_one(&mut self.maps[index], pending_id, pending);
                    }
                }
            }
        }
    }
    /// Move the pending charges into the maps.
    fn flush(&mut self) {
        for (map, pending) in self.maps.iter_mut().zip(self.pending.iter_mut()) {
            if let Some((id, usage)) = pending.take() {
                add_one(map, id, usage);
            }
        }
    }
    /// Fold another worker's part in.
    pub fn merge(&mut self, mut other: QuotaUsage) {
        self.flush();
        other.flush();
        for (mine, theirs) in self.enabled.iter_mut().zip(other.enabled) {
            *mine |= theirs;
        }
        for (mine, theirs) in self.maps.iter_mut().zip(other.maps) {
            if mine.len() < theirs.len() {
                let small = std::mem::replace(mine, theirs);
                add_all(mine, small);
            } else {
                add_all(mine, theirs);
            }
        }
    }
    /// The computed usage of `id` (zeros when nothing is charged to it).
    pub fn get(&self, qtype: QuotaType, id: u32) -> Usage {
        let mut usage = self.maps[qtype.index()]
            .get(&id)
            .copied()
            .unwrap_or_default();
        if let Some((pending_id, pending_usage)) = self.pending[qtype.index()] {
            if pending_id == id {
                usage.space = usage.space.saturating_add(pending_usage.space);
                usage.inodes = usage.inodes.saturating_add(pending_usage.inodes);
            }
        }
        usage
    }
    /// Every ID charged, sorted.
    pub fn ids(&self, qtype: QuotaType) -> Vec<u32> {
        let mut ids: Vec<u32> = self.maps[qtype.index()].keys().copied().collect();
        ids.extend(self.pending[qtype.index()].map(|p| p.0));
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

fn add_one(into: &mut IdMap, id: u32, usage: Usage) {
    let entry = into.entry(id).or_default();
    entry.space = entry.space.saturating_add(usage.space);
    entry.inodes = entry.inodes.saturating_add(usage.inodes);
}

fn add_all(into: &mut IdMap, from: IdMap) {
    for (id, usage) in from {
        add_one(into, id, usage);
    }
}

/// One ID whose stored usage differs from the computed one (e2fsck's
/// `[QUOTA WARNING] Usage inconsistent for ID %u:actual (%lld, %lld) != expected (%lld, %lld)`,
/// or `Missing quota entry ID` when the file has none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The ID.
    pub id: u32,
    /// What the quota file stores (None: no entry).
    pub stored: Option<Usage>,
    /// What the inodes add up to.
    pub computed: Usage,
}

/// Compare the stored entries (`stored`, any order) with the computed usage of type `qtype`
/// (`quota_compare_and_update`): every stored ID and every computed one.
pub fn compare(usage: &QuotaUsage, qtype: QuotaType, stored: &[Dquot]) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::with_capacity(stored.len());
    for dquot in stored {
        if !seen.insert(dquot.id) {
            continue;
        }
        let computed = usage.get(qtype, dquot.id);
        let on_disk = Usage {
            space: dquot.space,
            inodes: dquot.inodes,
        };
        if on_disk != computed {
            out.push(Mismatch {
                id: dquot.id,
                stored: Some(on_disk),
                computed,
            });
        }
    }
    for id in usage.ids(qtype) {
        if !seen.contains(&id) {
            let computed = usage.get(qtype, id);
            out.push(Mismatch {
                id,
                stored: None,
                computed,
            });
        }
    }
    out.sort_unstable_by_key(|m| m.id);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_each_enabled_type_and_merges() {
        let mut usage = QuotaUsage::new([true, false, true]);
        let owner = Owner {
            uid: 5,
            gid: 6,
            projid: 7,
        };
        usage.add(owner, 4096, 1);
        let mut other = QuotaUsage::new([true, false, true]);
        other.add(owner, 1024, 1);
        usage.merge(other);
        assert_eq!(
            usage.get(QuotaType::User, 5),
            Usage {
                space: 5120,
                inodes: 2
            }
        );
        assert_eq!(usage.get(QuotaType::Group, 6), Usage::default());
        assert_eq!(usage.get(QuotaType::Project, 7).inodes, 2);
        let stored = [Dquot {
            id: 5,
            space: 5120,
            inodes: 2,
            ..Dquot::default()
        }];
        assert!(compare(&usage, QuotaType::User, &stored).is_empty());
        let mismatches = compare(&usage, QuotaType::Project, &stored);
        assert_eq!(mismatches.len(), 2, "{mismatches:?}");
    }
}
