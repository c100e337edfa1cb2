//! Formatting, kept apart from parsing: dumpe2fs-identical text, JSON views, tables.

pub mod dumpe2fs;
pub mod json;
pub mod sys;
