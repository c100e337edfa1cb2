//! What dumpe2fs takes from the C library: `ctime()` in the local time zone (honouring `TZ`) and
//! user/group names from the system's user database. Going through libc gives exactly glibc's
//! answers (time zone rules, NSS), which is what byte-identical output needs.

use std::ffi::CStr;
use std::sync::Once;

static TZSET: Once = Once::new();

extern "C" {
    fn tzset();
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `ctime(&t)` including the trailing newline; `(null)` where glibc's ctime would return NULL
/// (printf prints a NULL string that way).
pub fn ctime(t: i64) -> String {
    TZSET.call_once(|| {
        // SAFETY: tzset only reads the environment and initialises libc's time zone state.
        unsafe { tzset() }
    });
    let tt: libc::time_t = t as libc::time_t;
    // SAFETY: zeroed `tm` is a valid value; localtime_r writes into it and reads `tt`.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::localtime_r(&tt, &mut tm) };
    if r.is_null() {
        return "(null)".to_string();
    }
    let year = i64::from(tm.tm_year) + 1900;
    let day = DAYS.get(tm.tm_wday as usize).copied().unwrap_or("???");
    let mon = MONTHS.get(tm.tm_mon as usize).copied().unwrap_or("???");
    format!(
        "{day} {mon}{:3} {:02}:{:02}:{:02} {year}\n",
        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec
    )
}

/// User name for `uid` (getpwuid), `None` when unknown.
pub fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: zeroed passwd is valid; getpwuid_r writes into pw/buf within the given length.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || pw.pw_name.is_null() {
        return None;
    }
    // SAFETY: pw_name points into `buf`, NUL-terminated by getpwuid_r.
    Some(
        unsafe { CStr::from_ptr(pw.pw_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Group name for `gid` (getgrgid), `None` when unknown.
pub fn group_name(gid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 65536];
    // SAFETY: as in user_name.
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::group = std::ptr::null_mut();
    let rc = unsafe { libc::getgrgid_r(gid, &mut gr, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || gr.gr_name.is_null() {
        return None;
    }
    // SAFETY: gr_name points into `buf`, NUL-terminated.
    Some(
        unsafe { CStr::from_ptr(gr.gr_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_exists() {
        assert_eq!(user_name(0).as_deref(), Some("root"));
        assert_eq!(group_name(0).as_deref(), Some("root"));
    }

    #[test]
    fn ctime_shape() {
        let s = ctime(0);
        assert_eq!(s.len(), 25);
        assert!(s.ends_with('\n'));
    }
}
