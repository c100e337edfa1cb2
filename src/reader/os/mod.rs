//! The C library calls the library needs, behind safe functions: `localtime_r` (after `tzset`, so
//! `TZ` is honoured exactly as glibc's `ctime()` honours it), the user and group databases
//! (`getpwuid_r`, `getgrgid_r`, through NSS) and a live file's extended attributes (`llistxattr`,
//! `lgetxattr`, never following symlinks), and for the input source the block device size
//! (`BLKGETSIZE64`) and page-cache hints (`posix_fadvise`). Going through libc gives glibc's exact answers, which
//! byte-identical dumpe2fs/debugfs output needs.
//!
//! [`at`] holds the directory-relative calls `extract` creates files with; [`map`] the read-only
//! mappings (with their `SIGBUS` handler) the check walk reads warm inode tables through.
//!
//! This is the one module allowed `unsafe` (see `#![deny(unsafe_code)]` in the crate root);
//! every block states why it is sound.
#![allow(unsafe_code)]

pub mod at;
pub mod map;

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Once;

static TZSET: Once = Once::new();

/// Size in bytes of the block device open as `file` (`BLKGETSIZE64`).
#[cfg(target_os = "linux")]
pub fn block_device_size(file: &File) -> std::io::Result<u64> {
    use std::os::unix::io::AsRawFd;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes exactly one u64 through the pointer, which points to `size`,
    // a live, aligned u64 for the whole call; the descriptor is open for the call's duration.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

/// Size in bytes of the block device open as `file` (its end, by seeking).
#[cfg(not(target_os = "linux"))]
pub fn block_device_size(file: &File) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::End(0))
}

/// Access-pattern hints for the kernel's page cache.
#[derive(Clone, Copy, Debug)]
pub enum Advice {
    /// Scattered metadata: no speculative readahead.
    Random,
    /// This range is about to be read: start reading it now.
    WillNeed,
}

/// Give the page cache an access-pattern hint for `[offset, offset+len)` of `file`
/// (`posix_fadvise`); ignored where it fails or the platform has none.
#[cfg(target_os = "linux")]
pub fn fadvise(file: &File, offset: u64, len: u64, advice: Advice) {
    use std::os::unix::io::AsRawFd;
    let (Ok(off), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return;
    };
    let adv = match advice {
        Advice::Random => libc::POSIX_FADV_RANDOM,
        Advice::WillNeed => libc::POSIX_FADV_WILLNEED,
    };
    // SAFETY: posix_fadvise only takes integers and an open descriptor (valid for the call); it
    // touches no memory of ours. A failure only means the hint is ignored.
    let _ = unsafe { libc::posix_fadvise(file.as_raw_fd(), off, len, adv) };
}

/// Copy up to `count` bytes of `input` at `offset` to the current position of `out` inside the
/// kernel (`sendfile`: from the page cache, without a copy through user memory); returns the
/// bytes copied (0 at the end of `input`). Errors such as `EINVAL` say the pair does not support
/// it, and the caller reads and writes instead.
#[cfg(target_os = "linux")]
pub fn sendfile(out: &File, input: &File, offset: u64, count: usize) -> std::io::Result<usize> {
    use std::os::unix::io::AsRawFd;
    let mut off = libc::off_t::try_from(offset)
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EOVERFLOW))?;
    // SAFETY: two descriptors valid for the call and a pointer to a local offset; the kernel
    // touches no other memory of ours.
    let n = unsafe { libc::sendfile(out.as_raw_fd(), input.as_raw_fd(), &mut off, count) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Whether bytes `[offset, offset + buf.len())` of `file` are in the page cache, by reading
/// them into `buf` with `RWF_NOWAIT` (`preadv2`: the kernel refuses with `EAGAIN` rather than
/// wait for the device). `Some(true)` when all of them came back, `Some(false)` when the kernel
/// would have had to wait (or returned fewer), `None` when it cannot tell (older kernels, other
/// platforms, an error): the caller then judges another way. Only a strategy hint: the bytes
/// read are not used as data.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn in_page_cache(file: &File, offset: u64, buf: &mut [u8]) -> Option<bool> {
    use std::os::unix::io::AsRawFd;
    let off = libc::off_t::try_from(offset).ok()?;
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: one iovec describing `buf`, which is valid and exclusively ours for the call's
    // length; the descriptor is open for the call. The kernel writes at most `buf.len()` bytes.
    let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, off, libc::RWF_NOWAIT) };
    if n >= 0 {
        return Some(n as usize == buf.len());
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN) => Some(false),
        _ => None,
    }
}

/// No `RWF_NOWAIT` on this platform: the caller judges another way.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn in_page_cache(_file: &File, _offset: u64, _buf: &mut [u8]) -> Option<bool> {
    None
}

/// No in-kernel copy on this platform.
#[cfg(not(target_os = "linux"))]
pub fn sendfile(_out: &File, _input: &File, _offset: u64, _count: usize) -> std::io::Result<usize> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// No page-cache hints on this platform.
#[cfg(not(target_os = "linux"))]
pub fn fadvise(_file: &File, _offset: u64, _len: u64, _advice: Advice) {}

extern "C" {
    fn tzset();
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `asctime(localtime(&t))` with its trailing newline, as `ctime()` prints it; `None` where
/// `localtime` fails (a year libc cannot represent). Callers pick the text for that case.
pub fn ctime(t: i64) -> Option<String> {
    TZSET.call_once(|| {
        // SAFETY: tzset only reads the environment and initialises libc's time zone state; the
        // Once keeps it from racing with itself.
        unsafe { tzset() }
    });
    let tt = libc::time_t::try_from(t).ok()?;
    // SAFETY: an all-zero `tm` is a valid value (integers and a null zone pointer).
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r writes only into `tm`.
    if unsafe { libc::localtime_r(&tt, &mut tm) }.is_null() {
        return None;
    }
    let day = usize::try_from(tm.tm_wday).ok().and_then(|d| DAYS.get(d));
    let mon = usize::try_from(tm.tm_mon).ok().and_then(|m| MONTHS.get(m));
    Some(format!(
        "{} {}{:3} {:02}:{:02}:{:02} {}\n",
        day.copied().unwrap_or("???"),
        mon.copied().unwrap_or("???"),
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        i64::from(tm.tm_year) + 1900
    ))
}

/// User name for `uid` (getpwuid_r), `None` when unknown.
pub fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: an all-zero passwd is a valid value.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: pw, buf (for buf.len() bytes) and out are valid for writes during the call.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || pw.pw_name.is_null() {
        return None;
    }
    // SAFETY: on success pw_name points into `buf`, NUL-terminated, and `buf` is still alive.
    Some(
        unsafe { CStr::from_ptr(pw.pw_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Group name for `gid` (getgrgid_r), `None` when unknown.
pub fn group_name(gid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 65536];
    // SAFETY: an all-zero group is a valid value.
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::group = std::ptr::null_mut();
    // SAFETY: gr, buf (for buf.len() bytes) and out are valid for writes during the call.
    let rc = unsafe { libc::getgrgid_r(gid, &mut gr, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || gr.gr_name.is_null() {
        return None;
    }
    // SAFETY: on success gr_name points into `buf`, NUL-terminated, and `buf` is still alive.
    Some(
        unsafe { CStr::from_ptr(gr.gr_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Largest buffer the xattr calls grow to on ERANGE (the VFS caps lists and values at 64 KiB;
/// this leaves room for filesystems that do not).
const XATTR_BUF_MAX: usize = 1 << 24;

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// Call `f(buf)` with a growing buffer until it fits: `f` returns the byte count or -1 with errno.
fn with_growing_buffer(mut f: impl FnMut(&mut [u8]) -> isize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    loop {
        let n = f(&mut buf);
        if let Ok(n) = usize::try_from(n) {
            buf.truncate(n);
            return Ok(buf);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::ERANGE) && buf.len() < XATTR_BUF_MAX {
            buf.resize(buf.len() * 4, 0);
        } else {
            return Err(err);
        }
    }
}

/// Names of the extended attributes of `path` (not following a symlink), complete whatever their
/// total length. A filesystem without xattr support has none.
pub fn xattr_names(path: &Path) -> io::Result<Vec<Vec<u8>>> {
    let c = c_path(path)?;
    let list = with_growing_buffer(|buf| {
        // SAFETY: `c` is NUL-terminated; `buf` is valid for writes of buf.len() bytes.
        unsafe { libc::llistxattr(c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) }
    });
    match list {
        Ok(list) => Ok(list
            .split(|&b| b == 0)
            .filter(|n| !n.is_empty())
            .map(<[u8]>::to_vec)
            .collect()),
        Err(e) if e.raw_os_error() == Some(libc::ENOTSUP) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The value of xattr `name` of `path` (not following a symlink), complete whatever its size;
/// `Ok(None)` when the attribute disappeared meanwhile (ENODATA).
pub fn xattr_value(path: &Path, name: &[u8]) -> io::Result<Option<Vec<u8>>> {
    let c = c_path(path)?;
    let cn = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name contains a NUL byte"))?;
    let value = with_growing_buffer(|buf| {
        // SAFETY: both strings are NUL-terminated; `buf` is valid for writes of buf.len() bytes.
        unsafe { libc::lgetxattr(c.as_ptr(), cn.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) }
    });
    match value {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.raw_os_error() == Some(libc::ENODATA) => Ok(None),
        Err(e) => Err(e),
    }
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
        let s = ctime(0).unwrap();
        assert_eq!(s.len(), 25);
        assert!(s.ends_with('\n'));
    }

    #[test]
    fn xattrs_longer_than_the_first_buffer_are_complete() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"").unwrap();
        let big = vec![b'v'; 6000];
        let c = c_path(&f).unwrap();
        let name = CString::new("user.big").unwrap();
        // SAFETY: valid strings and a value buffer of big.len() bytes.
        let rc = unsafe {
            libc::lsetxattr(c.as_ptr(), name.as_ptr(), big.as_ptr().cast(), big.len(), 0)
        };
        if rc != 0 {
            eprintln!(
                "skipping: no user xattrs here ({})",
                io::Error::last_os_error()
            );
            return;
        }
        assert_eq!(xattr_names(&f).unwrap(), vec![b"user.big".to_vec()]);
        assert_eq!(xattr_value(&f, b"user.big").unwrap(), Some(big));
        assert_eq!(xattr_value(&f, b"user.none").unwrap(), None);
    }
}
