//! Read-only file mappings that cannot kill the process: a page the file no longer has (another
//! process truncated it) or that the device cannot read (`EIO`) raises `SIGBUS` on access, which
//! by default ends the process without a word. Here every live mapping is registered, and a
//! `SIGBUS` handler that finds the faulting address inside one replaces that page with a page of
//! zeros (`mmap(MAP_FIXED | MAP_ANONYMOUS)`, async-signal-safe), marks the mapping damaged and
//! returns, so the access completes. The owner asks [`Mapping::intact`] after reading and
//! treats a damaged mapping's bytes as unread. A `SIGBUS` anywhere else goes to the handler
//! that was installed before ours, or to the default action.
//!
//! Before reading, [`Mapping::populate`] faults a range in with `MADV_POPULATE_READ` (Linux
//! 5.14), which reports the same failures as an error instead of a signal; the handler then only
//! covers a truncation racing with the read.
//!
//! Used where a scan reads large ranges that are already in the page cache (the check walk's
//! inode tables): the bytes are read in place instead of copied out by `pread`.
//!
//! The mapping itself is made, advised and unmapped by `memmap2` (`MmapOptions` with the offset
//! and length, `advise_range` with `PopulateRead`); raw libc stays only where memmap2 has no
//! call: the `SIGBUS` handler (installed with `sigaction`; it replaces one page in place with
//! `mmap(MAP_FIXED | MAP_ANONYMOUS)`, async-signal-safe, which memmap2 cannot do on a live
//! mapping) and `mincore` for [`Mapping::resident`].

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Mappings live at once (a mapping is one scan worker's current window).
const SLOTS: usize = 64;

/// One registered mapping: `[start, end)` in the address space. `seq` is odd while the slot is
/// being changed, so the handler never trusts a half-written pair.
struct Region {
    taken: AtomicBool,
    seq: AtomicUsize,
    start: AtomicUsize,
    end: AtomicUsize,
    damaged: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Region = Region {
    taken: AtomicBool::new(false),
    seq: AtomicUsize::new(0),
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    damaged: AtomicBool::new(false),
};

static REGIONS: [Region; SLOTS] = [FREE; SLOTS];

/// The disposition of `SIGBUS` before ours, and the page size; set once when the handler is
/// installed.
struct Installed {
    previous: libc::sigaction,
    page: usize,
}

// SAFETY: `sigaction` is plain data (a handler address, flags and a signal mask); it is written
// once before the handler can run and only read afterwards.
unsafe impl Sync for Installed {}
unsafe impl Send for Installed {}

static INSTALLED: OnceLock<Option<Installed>> = OnceLock::new();

/// A read-only mapping of a file range, registered with the `SIGBUS` handler.
pub struct Mapping {
    /// The wanted bytes, mapped by memmap2 (which maps from the page holding the first one).
    map: memmap2::Mmap,
    /// Address of the page holding the first wanted byte: where the kernel's mapping starts.
    base: usize,
    /// Bytes mapped from `base` (the wanted bytes and the lead before them).
    mapped: usize,
    slot: usize,
}

impl Mapping {
    /// Map `len` bytes of `file` at `offset` read-only. `None` when it cannot be done here: no
    /// handler (not Linux, or `sigaction` refused), every slot in use, an empty or too large
    /// range, or `mmap` refused it (the caller then reads with `pread`).
    pub fn new(file: &File, offset: u64, len: usize) -> Option<Mapping> {
        let page = installed()?.page;
        if len == 0 {
            return None;
        }
        let lead = usize::try_from(offset % page as u64).ok()?;
        let mapped = len.checked_add(lead)?;
        libc::off_t::try_from(offset - lead as u64).ok()?;
        let slot = take_slot()?;
        // SAFETY: a fresh read-only shared mapping at an address the kernel chooses; it aliases
        // no Rust object. The file may change under it (memmap2's reason for `unsafe`): a page
        // it loses raises SIGBUS, which the handler registered below turns into zeros and a
        // damaged mark instead of a crash, and the owner then reads the range with `pread`.
        let map = match unsafe {
            memmap2::MmapOptions::new()
                .offset(offset)
                .len(len)
                .map(file)
        } {
            Ok(map) => map,
            Err(_) => {
                release_slot(slot);
                return None;
            }
        };
        let base = (map.as_ptr() as usize).wrapping_sub(lead);
        register(slot, base, mapped);
        Some(Mapping {
            map,
            base,
            mapped,
            slot,
        })
    }

    /// Fault bytes `[at, at + n)` of the wanted range in now (`MADV_POPULATE_READ`). An error
    /// when part of it cannot be read (beyond the end of the file, an I/O error): the caller then
    /// reads it with `pread` for the precise error. Kernels without the advice say `EINVAL`,
    /// taken as success: the handler still covers a failing access.
    pub fn populate(&self, at: usize, n: usize) -> io::Result<()> {
        if at.checked_add(n).is_none_or(|end| end > self.map.len()) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // memmap2 rounds `at` down to its page, as madvise requires.
        match self.map.advise_range(memmap2::Advice::PopulateRead, at, n) {
            Ok(()) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// True when every page of the mapping is in the page cache now (`mincore`): reading it then
    /// costs no I/O. A cold page read through a mapping comes one fault at a time (the source
    /// is opened for random access, so without readahead), far slower than one `pread`.
    pub fn resident(&self) -> bool {
        let page = installed().map_or(4096, |i| i.page);
        let mut pages = vec![0u8; self.mapped.div_ceil(page)];
        // SAFETY: `pages` has one byte per page of our own live mapping, as mincore requires;
        // the call only writes those bytes.
        let rc = unsafe {
            libc::mincore(
                self.base as *mut libc::c_void,
                self.mapped,
                pages.as_mut_ptr().cast(),
            )
        };
        rc == 0 && pages.iter().all(|&p| p & 1 != 0)
    }

    /// The wanted bytes. Pages the file lost, or the device could not read, while mapped read
    /// as zeros; [`Mapping::intact`] says whether that happened.
    pub fn bytes(&self) -> &[u8] {
        // A page that cannot be read is replaced by zeros by the handler instead of faulting,
        // so reads of these bytes always complete.
        &self.map
    }

    /// False once an access hit a page that could not be read (then read as zeros).
    pub fn intact(&self) -> bool {
        !REGIONS[self.slot].damaged.load(Ordering::Acquire)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Unregistered before `map` is unmapped (fields drop after this body), so the handler
        // never takes an address the kernel may have handed out again for its own.
        unregister(self.slot);
        release_slot(self.slot);
    }
}

fn take_slot() -> Option<usize> {
    REGIONS.iter().position(|r| {
        r.taken
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    })
}

fn release_slot(slot: usize) {
    REGIONS[slot].taken.store(false, Ordering::Release);
}

fn register(slot: usize, start: usize, len: usize) {
    let r = &REGIONS[slot];
    r.seq.fetch_add(1, Ordering::AcqRel);
    r.damaged.store(false, Ordering::Release);
    r.start.store(start, Ordering::Release);
    r.end.store(start + len, Ordering::Release);
    r.seq.fetch_add(1, Ordering::AcqRel);
}

fn unregister(slot: usize) {
    let r = &REGIONS[slot];
    r.seq.fetch_add(1, Ordering::AcqRel);
    r.end.store(0, Ordering::Release);
    r.start.store(0, Ordering::Release);
    r.seq.fetch_add(1, Ordering::AcqRel);
}

/// The registered region holding `addr`, read consistently (signal context: atomics only).
fn region_of(addr: usize) -> Option<&'static Region> {
    REGIONS.iter().find(|r| {
        let before = r.seq.load(Ordering::Acquire);
        let (start, end) = (
            r.start.load(Ordering::Acquire),
            r.end.load(Ordering::Acquire),
        );
        let after = r.seq.load(Ordering::Acquire);
        before % 2 == 0 && before == after && start != 0 && (start..end).contains(&addr)
    })
}

/// Install the handler once; `None` when it cannot be installed.
fn installed() -> Option<&'static Installed> {
    INSTALLED.get_or_init(install).as_ref()
}

#[cfg(target_os = "linux")]
fn install() -> Option<Installed> {
    // SAFETY: sysconf takes no pointer.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
    if page == 0 || !page.is_power_of_two() {
        return None;
    }
    // SAFETY: a zeroed sigaction is a valid "no handler, empty mask" value; `sigemptyset` and
    // `sigaction` only write the structures we pass, which live for the calls.
    unsafe {
        let mut ours: libc::sigaction = std::mem::zeroed();
        ours.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
        ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut ours.sa_mask);
        let mut previous: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGBUS, &ours, &mut previous) != 0 {
            return None;
        }
        Some(Installed { previous, page })
    }
}

#[cfg(not(target_os = "linux"))]
fn install() -> Option<Installed> {
    None
}

/// The `SIGBUS` handler: async-signal-safe (atomics, `mmap`, `sigaction`, a call).
#[cfg(target_os = "linux")]
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for a SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    if let (Some(r), Some(inst)) = (region_of(addr), INSTALLED.get().and_then(Option::as_ref)) {
        let page = addr & !(inst.page - 1);
        // SAFETY: replaces one page of a registered read-only file mapping of ours (its owner
        // only reads it) with a private page of zeros, so that the faulting read completes.
        let p = unsafe {
            libc::mmap(
                page as *mut libc::c_void,
                inst.page,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            r.damaged.store(true, Ordering::Release);
            return;
        }
    }
    pass_on(sig, info, ctx);
}

/// A `SIGBUS` that is not ours: to the handler installed before, else the default action (the
/// disposition is reset and the faulting access, re-run on return, raises it again).
#[cfg(target_os = "linux")]
fn pass_on(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let Some(inst) = INSTALLED.get().and_then(Option::as_ref) else {
        return;
    };
    let prev = inst.previous.sa_sigaction;
    if prev != libc::SIG_DFL && prev != libc::SIG_IGN {
        if inst.previous.sa_flags & libc::SA_SIGINFO != 0 {
            // SAFETY: the previous handler was installed with SA_SIGINFO, so this is its type.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { std::mem::transmute(prev) };
            f(sig, info, ctx);
        } else {
            // SAFETY: a handler installed without SA_SIGINFO takes the signal number only.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(prev) };
            f(sig);
        }
        return;
    }
    // SAFETY: a zeroed sigaction with SIG_DFL restores the default disposition.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The slot test fills the table: the other tests wait for it.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn temp_file(tag: &str, bytes: &[u8]) -> (std::path::PathBuf, File) {
        let p = std::env::temp_dir().join(format!("e4inspect-map-{tag}-{}", std::process::id()));
        let mut f = File::create(&p).unwrap();
        f.write_all(bytes).unwrap();
        (p.clone(), File::open(&p).unwrap())
    }

    #[test]
    fn maps_an_unaligned_range() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        let (p, f) = temp_file("range", &data);
        let m = Mapping::new(&f, 5_000, 9_000).expect("mapping");
        m.populate(0, 9_000).unwrap();
        assert!(m.resident(), "just written and faulted in");
        assert_eq!(m.bytes(), &data[5_000..14_000]);
        assert!(m.intact());
        assert!(m.populate(8_000, 2_000).is_err(), "past the wanted range");
        drop(m);
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn a_file_truncated_under_the_mapping_reads_zeros_instead_of_killing() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let data = vec![0xA5u8; 64 << 10];
        let (p, f) = temp_file("shrink", &data);
        let m = Mapping::new(&f, 0, data.len()).expect("mapping");
        m.populate(0, 4096).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(8192)
            .unwrap();
        assert!(
            m.populate(0, data.len()).is_err(),
            "populate reports the hole"
        );
        let bytes = m.bytes();
        // Pages past the new end fault: each reads as zeros, and the mapping says so.
        assert!(bytes[16 << 10..].iter().all(|&b| b == 0));
        assert!(!m.intact());
        assert!(bytes[..8192].iter().all(|&b| b == 0xA5));
        drop(m);
        // The slot is free and clean again.
        let again = Mapping::new(&f, 0, 4096).expect("mapping");
        assert!(again.intact());
        drop(again);
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn slots_are_bounded_and_reused() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let (p, f) = temp_file("slots", &[1u8; 4096]);
        let maps: Vec<Mapping> = (0..SLOTS * 2)
            .filter_map(|_| Mapping::new(&f, 0, 4096))
            .collect();
        assert!(maps.len() <= SLOTS);
        drop(maps);
        assert!(Mapping::new(&f, 0, 4096).is_some());
        std::fs::remove_file(p).unwrap();
    }
}
