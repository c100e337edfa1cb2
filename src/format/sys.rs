//! What dumpe2fs takes from the C library: `ctime()` in the local time zone (honouring `TZ`) and
//! user/group names from the system's user database. The libc calls live in [`crate::reader::os`].

/// `ctime(&t)` including the trailing newline; `(null)` where glibc's ctime would return NULL
/// (printf prints a NULL string that way).
pub fn ctime(t: i64) -> String {
    ctime_or(t, "(null)")
}

/// `ctime(&t)` including the trailing newline, or `fallback` where libc cannot represent `t`:
/// the one place every format turns a time into text.
pub fn ctime_or(t: i64, fallback: &str) -> String {
    crate::reader::os::ctime(t).unwrap_or_else(|| fallback.to_string())
}

pub use crate::reader::os::{group_name, user_name};
