//! The reader: everything that turns bytes of the input into typed values, and nothing that
//! judges or formats them.
//!
//! - [`source`]: positional reads of a file or block device (the only I/O), [`os`]: the one
//!   module with `unsafe` (libc calls);
//! - [`partition`]: MBR/EBR/GPT tables; [`container`]: disks held in qcow2 ([`qcow2`]) and
//!   e2image ([`e2image`]) files, read through the source; other containers named;
//! - [`ondisk`]: every fixed-layout on-disk structure, declared once with binrw;
//! - [`geometry`]: groups, backups, descriptor locations, computed once;
//! - [`fs`]: an opened filesystem (source, superblock, geometry, descriptors, block cache);
//! - decoders built on the declarations: [`superblock`], [`group`], [`inode`], [`extent`],
//!   [`xattr`] (values: [`samba`] over the [`ndr`] reader, [`lustre`]), [`dir`], [`journal`],
//!   [`bitmap`], [`features`], [`csum`], [`dirhash`];
//! - [`values`]: decoded values every layer shares (named enums, times, modes, UUID text);
//! - [`replay`]: the journal replayed in memory, an overlay of the source (nothing written);
//! - walks: [`namei`] (path resolution as ext2fs_namei), [`fileblocks`] (a file's block map),
//!   [`walk`] (the one parallel inode-table walk engine, driving a `TableVisitor`), [`itable`]
//!   (the scan of every in-use inode on it, and the shared xattr block cache).

pub mod bitmap;
pub mod container;
pub mod csum;
pub mod dir;
pub mod dirhash;
pub mod e2image;
pub mod extent;
pub mod features;
pub mod fileblocks;
pub mod fs;
pub mod geometry;
pub mod group;
pub mod inode;
pub mod itable;
pub mod journal;
pub mod lustre;
pub mod mmp;
pub mod namei;
pub mod ndr;
pub mod ondisk;
pub mod os;
pub mod partition;
pub mod pathname;
pub mod qcow2;
pub mod quota;
pub mod replay;
pub mod samba;
pub mod source;
pub mod superblock;
pub mod values;
pub mod walk;
pub mod xattr;
