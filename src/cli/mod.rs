pub mod fit;
pub mod inode;
pub mod xattrs;
