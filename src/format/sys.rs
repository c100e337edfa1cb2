//! What dumpe2fs takes from the C library: `ctime()` in the local time zone (honouring `TZ`) and
//! user/group names from the system's user database. The libc calls live in [`crate::reader::os`].

/// `ctime(&secs)` including the trailing newline; `(null)` where glibc's ctime would return NULL
/// (printf prints a NULL string that way).
pub fn ctime(secs: i64) -> String {
    ctime_or(secs, "(null)")
}

/// `ctime(&secs)` including the trailing newline, or `fallback` where libc cannot represent `secs`:
/// the one place every format turns a time into text.
pub fn ctime_or(secs: i64, fallback: &str) -> String {
    crate::reader::os::ctime(secs).unwrap_or_else(|| fallback.to_string())
}

pub use crate::reader::os::{group_name, user_name};
