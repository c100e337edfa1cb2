//! The models: answers computed from the reader's values or from a workload description.
//!
//! - [`fit`]: where the kernel places xattrs for a given inode size (`ext4_xattr_set_handle`);
//! - [`mkfs`]: the layout mke2fs 1.47 would make (`PRS`, `ext2fs_initialize`,
//!   `figure_journal_size`);
//! - [`advise`]: the advisor that turns a workload into a verified `mkfs.ext4` line;
//! - [`profiles`]: `/etc/mke2fs.conf` profiles and xattr workload profiles;
//! - [`quota`]: quota usage per ID as e2fsck counts it (`quota_data_add`).

pub mod advise;
pub mod fit;
pub mod mkfs;
pub mod profiles;
pub mod quota;
