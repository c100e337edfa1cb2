//! Formatting, kept apart from parsing: dumpe2fs-identical text, JSON views, tables.

pub mod advise;
pub mod check_text;
pub mod debugfs_ls;
pub mod debugfs_stat;
pub mod dumpe2fs;
pub mod e2freefrag;
pub mod escape;
pub mod fit;
pub mod github;
pub mod inode_json;
pub mod json;
pub mod junit;
pub mod logdump;
pub mod maps;
pub mod sys;
pub mod table;
