//! Safe wrappers over the few directory-relative system calls that `std` does not expose and that
//! `extract` needs to create files beneath an opened destination directory without ever following
//! a symbolic link: `openat`, `mkdirat`, `symlinkat`, `linkat`, `mknodat`, `unlinkat`,
//! `fchownat`, `utimensat`, `fstatat`, `fsetxattr`/`lsetxattr` and `geteuid`.
//!
//! Part of [`crate::reader::os`], the one module with `unsafe`: every function here is a thin, safe
//! wrapper (NUL-terminated names are built with `CString`, return values checked, descriptors
//! returned as `OwnedFd`). Names are single path components: a name containing `/` is refused, so
//! a call can never walk anywhere but the directory descriptor given.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// One path component as a C string: refuses empty names, `.`, `..`, `/` and NUL.
pub fn component(name: &[u8]) -> io::Result<CString> {
    if name.is_empty() || name == b"." || name == b".." || name.contains(&b'/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a single path component",
        ));
    }
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name has NUL"))
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// `openat(dir, name, flags | O_CLOEXEC | O_NOFOLLOW, mode)`.
fn openat(dir: BorrowedFd<'_>, name: &CStr, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    // SAFETY: `name` is NUL-terminated and lives across the call; the descriptor is borrowed.
    let fd = check(unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            flags | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            mode as libc::c_uint,
        )
    })?;
    // SAFETY: `fd` was just returned by openat and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Open a directory by path (the destination root; its last component is not followed).
pub fn open_dir_path(path: &std::path::Path) -> io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    Ok(f.into())
}

/// Open the subdirectory `name` of `dir`; fails (ELOOP/ENOTDIR) on a symlink or non-directory.
pub fn open_dir_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<OwnedFd> {
    openat(dir, name, libc::O_RDONLY | libc::O_DIRECTORY, 0)
}

/// Create a new regular file `name` in `dir` for writing (`O_EXCL`: never an existing one, never
/// through a symlink).
pub fn create_file_at(dir: BorrowedFd<'_>, name: &CStr, mode: u32) -> io::Result<std::fs::File> {
    let fd = openat(
        dir,
        name,
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
        mode,
    )?;
    Ok(std::fs::File::from(fd))
}

/// `mkdirat`.
pub fn mkdir_at(dir: BorrowedFd<'_>, name: &CStr, mode: u32) -> io::Result<()> {
    // SAFETY: valid NUL-terminated name, borrowed descriptor.
    check(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode as libc::mode_t) })?;
    Ok(())
}

/// `symlinkat(target, dir, name)`.
pub fn symlink_at(target: &[u8], dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    let t = CString::new(target)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "symlink target has NUL"))?;
    // SAFETY: valid NUL-terminated strings, borrowed descriptor.
    check(unsafe { libc::symlinkat(t.as_ptr(), dir.as_raw_fd(), name.as_ptr()) })?;
    Ok(())
}

/// `linkat(old_dir, old, new_dir, new, 0)`: a hard link, never following `old` if a symlink.
pub fn link_at(
    old_dir: BorrowedFd<'_>,
    old: &CStr,
    new_dir: BorrowedFd<'_>,
    new: &CStr,
) -> io::Result<()> {
    // SAFETY: valid NUL-terminated names, borrowed descriptors.
    check(unsafe {
        libc::linkat(
            old_dir.as_raw_fd(),
            old.as_ptr(),
            new_dir.as_raw_fd(),
            new.as_ptr(),
            0,
        )
    })?;
    Ok(())
}

/// `mknodat(dir, name, mode, makedev(major, minor))` (FIFOs, sockets and device nodes).
pub fn mknod_at(
    dir: BorrowedFd<'_>,
    name: &CStr,
    mode: u32,
    major: u32,
    minor: u32,
) -> io::Result<()> {
    let dev = libc::makedev(major, minor);
    // SAFETY: valid NUL-terminated name, borrowed descriptor.
    check(unsafe { libc::mknodat(dir.as_raw_fd(), name.as_ptr(), mode as libc::mode_t, dev) })?;
    Ok(())
}

/// `unlinkat` (with `AT_REMOVEDIR` when `dir_entry`).
pub fn unlink_at(dir: BorrowedFd<'_>, name: &CStr, dir_entry: bool) -> io::Result<()> {
    let flags = if dir_entry { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: valid NUL-terminated name, borrowed descriptor.
    check(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) })?;
    Ok(())
}

/// File type bits (`S_IFMT`) of `name` in `dir`, not following a symlink; `None` when absent.
pub fn lstat_type_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<Option<u32>> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: valid name and descriptor; `st` is a writable stat buffer.
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::ENOENT) {
            Ok(None)
        } else {
            Err(e)
        };
    }
    // SAFETY: fstatat succeeded and filled the buffer.
    let st = unsafe { st.assume_init() };
    Ok(Some(st.st_mode & libc::S_IFMT))
}

/// `fchownat(dir, name, uid, gid, AT_SYMLINK_NOFOLLOW)`.
pub fn chown_at(dir: BorrowedFd<'_>, name: &CStr, uid: u32, gid: u32) -> io::Result<()> {
    // SAFETY: valid NUL-terminated name, borrowed descriptor.
    check(unsafe {
        libc::fchownat(
            dir.as_raw_fd(),
            name.as_ptr(),
            uid,
            gid,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    })?;
    Ok(())
}

/// `fchmodat(dir, name, mode, AT_SYMLINK_NOFOLLOW)` (refused on a symlink, never follows one).
pub fn chmod_at(dir: BorrowedFd<'_>, name: &CStr, mode: u32) -> io::Result<()> {
    // SAFETY: valid NUL-terminated name, borrowed descriptor.
    check(unsafe {
        libc::fchmodat(
            dir.as_raw_fd(),
            name.as_ptr(),
            mode as libc::mode_t,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    })?;
    Ok(())
}

/// A time as seconds and nanoseconds since the epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timespec {
    /// Seconds since the epoch.
    pub secs: i64,
    /// Nanoseconds.
    pub nsec: u32,
}

/// `utimensat(dir, name, [atime, mtime], AT_SYMLINK_NOFOLLOW)` (works on symlinks too).
pub fn set_times_at(
    dir: BorrowedFd<'_>,
    name: &CStr,
    atime: Timespec,
    mtime: Timespec,
) -> io::Result<()> {
    let ts = |t: Timespec| libc::timespec {
        tv_sec: t.secs as libc::time_t,
        tv_nsec: i64::from(t.nsec.min(999_999_999)) as _,
    };
    let times = [ts(atime), ts(mtime)];
    // SAFETY: valid name and descriptor; `times` is an array of two timespecs.
    check(unsafe {
        libc::utimensat(
            dir.as_raw_fd(),
            name.as_ptr(),
            times.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    })?;
    Ok(())
}

/// `fsetxattr(fd, name, value, 0)`.
pub fn set_xattr_fd(fd: BorrowedFd<'_>, name: &CStr, value: &[u8]) -> io::Result<()> {
    // SAFETY: valid NUL-terminated name; `value` is valid for `value.len()` bytes.
    check(unsafe {
        libc::fsetxattr(
            fd.as_raw_fd(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    })?;
    Ok(())
}

/// `lsetxattr` on `name` in `dir` (for symlinks and special files, which cannot be opened for
/// this): the path goes through `/proc/self/fd/<dir>`, and its last component is not followed.
pub fn set_xattr_at(
    dir: BorrowedFd<'_>,
    name: &CStr,
    xname: &CStr,
    value: &[u8],
) -> io::Result<()> {
    let mut p = format!("/proc/self/fd/{}/", dir.as_raw_fd()).into_bytes();
    p.extend_from_slice(name.to_bytes());
    let p = CString::new(p).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: valid NUL-terminated strings; `value` is valid for `value.len()` bytes.
    check(unsafe {
        libc::lsetxattr(
            p.as_ptr(),
            xname.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    })?;
    Ok(())
}

fn path_c(path: &std::path::Path) -> io::Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// Names of the xattrs of `path` (`llistxattr`: a symlink itself, not its target).
pub fn list_xattrs(path: &std::path::Path) -> io::Result<Vec<Vec<u8>>> {
    let c = path_c(path)?;
    let mut buf = vec![0u8; 4096];
    loop {
        // SAFETY: `c` is NUL-terminated; the buffer is valid for `buf.len()` bytes.
        let n = unsafe { libc::llistxattr(c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            buf.truncate(n as usize);
            break;
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ERANGE) if buf.len() < (1 << 20) => buf.resize(buf.len() * 4, 0),
            Some(libc::EOPNOTSUPP) => return Ok(Vec::new()),
            _ => return Err(e),
        }
    }
    Ok(buf
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

/// Value of xattr `name` of `path` (`lgetxattr`), at most 64 KiB.
pub fn get_xattr(path: &std::path::Path, name: &[u8]) -> io::Result<Vec<u8>> {
    let c = path_c(path)?;
    let n = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut buf = vec![0u8; 65536];
    // SAFETY: NUL-terminated strings; the buffer is valid for `buf.len()` bytes.
    let got =
        unsafe { libc::lgetxattr(c.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(got as usize);
    Ok(buf)
}

/// Effective user id of this process.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Effective group id of this process.
pub fn effective_gid() -> u32 {
    // SAFETY: getegid has no preconditions and cannot fail.
    unsafe { libc::getegid() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn components_are_single() {
        for bad in [&b""[..], b".", b"..", b"a/b", b"/", b"a\0b"] {
            assert!(component(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            component(b"caf\xc3\xa9").unwrap().as_bytes(),
            b"caf\xc3\xa9"
        );
    }

    #[test]
    fn never_follows_a_symlink() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), t.path().join("l")).unwrap();
        let d = open_dir_path(t.path()).unwrap();
        let l = component(b"l").unwrap();
        assert!(open_dir_at(d.as_fd(), &l).is_err());
        assert!(create_file_at(d.as_fd(), &l, 0o600).is_err());
        assert_eq!(lstat_type_at(d.as_fd(), &l).unwrap(), Some(libc::S_IFLNK));
        let f = component(b"f").unwrap();
        create_file_at(d.as_fd(), &f, 0o600).unwrap();
        assert!(create_file_at(d.as_fd(), &f, 0o600).is_err(), "O_EXCL");
        let ts = Timespec {
            secs: 1_600_000_000,
            nsec: 123_456_789,
        };
        set_times_at(d.as_fd(), &l, ts, ts).unwrap();
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
