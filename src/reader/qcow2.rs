//! qcow2 images (QEMU's docs/interop/qcow2.txt), read as the disk they hold: any qcow2 that
//! `qemu-img` writes (versions 2 and 3, deflate or zstd compressed clusters, extended L2
//! entries with subclusters), and the metadata-only qcow2 that `e2image -Q` writes.
//!
//! A virtual offset is translated through the L1 table (read whole at open, bounded) and one
//! L2 table (read on demand and kept in a bounded cache, shared by the scan's threads);
//! consecutive clusters stored back to back in the file are read with one `pread`.
//! Refcounts and snapshots are not needed to read the active disk and are ignored. Backing
//! files, encryption and external data files are refused with a one-line error saying what
//! to do: the disk is not in this file alone.
//!
//! Why not a crate: imago 0.2 (the maintained qcow2 crate, whose synchronous API would do) refuses
//! images with a `compression_type` (zstd) or extended L2 entries as unknown incompatible
//! features, and reads an L1 table of any size the header declares; docs/architecture.md.
//!
//! An unallocated cluster reads as zeros, as in QEMU, with one exception. `e2image -Q`
//! (misc/e2image.c, `initialize_qcow2_image`) copies every metadata block of the filesystem
//! except all-zero ones and no file data, so there an unallocated cluster is a zero metadata
//! block or a data block left out: metadata reads ([`Access::Metadata`]) see zeros, exactly what
//! `e2image -r` makes of it, and file data reads ([`Access::FileData`]) are absent
//! ([`ReadFailure::Absent`]). Such a file is told from a qemu-img one by the traits of
//! e2image's writer (`written_by_e2image`): a version 2 header, the L1 table in the
//! second cluster and the refcount table right after it (qemu-img puts the refcount table
//! there), clusters of the filesystem's block size and a disk exactly the filesystem's size.

use crate::error::{Error, Result};
use crate::reader::container::{Access, ContainerKind, Disk, ReadFailure};
use crate::reader::ondisk::qcow2::*;
use crate::reader::ondisk::{decode, decode_at, OnDisk};
use crate::reader::source::Source;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The first bytes of a qcow (any version) file.
pub const MAGIC: &[u8] = b"QFI\xfb";

/// Smallest and largest cluster_bits QEMU accepts (512 bytes to 2 MiB).
const MIN_CLUSTER_BITS: u32 = 9;
const MAX_CLUSTER_BITS: u32 = 21;
/// Largest L1 table QEMU accepts (QCOW_MAX_L1_SIZE): read whole at open.
const MAX_L1_BYTES: u64 = 32 << 20;
/// Bytes of L2 tables kept in the cache.
const L2_CACHE_BYTES: u64 = 32 << 20;
/// Bytes of decompressed clusters kept (block reads of a compressed image inflate a cluster
/// at most twice, not once per block: `Qcow2::inflate`).
const INFLATED_CACHE_BYTES: u64 = 8 << 20;
const SHARDS: usize = 16;
/// Subclusters of a cluster with extended L2 entries.
const SUBCLUSTERS: u32 = 32;
/// Most bytes of disk one [`Disk::will_need`] hint maps (callers hint a few MiB at a time).
const MAX_HINT: u64 = 256 << 20;
/// Compressed data is counted in 512-byte sectors.
const SECTOR: u64 = 512;

/// How compressed clusters are compressed (`compression_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compression {
    Deflate,
    Zstd,
}

/// A bounded map shared by threads: sharded, an arbitrary entry leaves a full shard.
struct Cache<V: ?Sized> {
    shards: Vec<Mutex<HashMap<u64, Arc<V>>>>,
    per_shard: usize,
}

impl<V: ?Sized> Cache<V> {
    fn new(entries: u64) -> Self {
        let per_shard = (entries / SHARDS as u64).max(1) as usize;
        Cache {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            per_shard,
        }
    }

    fn shard(&self, key: u64) -> Option<&Mutex<HashMap<u64, Arc<V>>>> {
        self.shards.get(((key >> 9) % SHARDS as u64) as usize)
    }

    fn get(&self, key: u64) -> Option<Arc<V>> {
        self.shard(key)?.lock().ok()?.get(&key).cloned()
    }

    fn put(&self, key: u64, value: &Arc<V>) {
        let Some(Ok(mut shard)) = self.shard(key).map(|s| s.lock()) else {
            return;
        };
        if shard.len() >= self.per_shard {
            if let Some(victim) = shard.keys().next().copied() {
                shard.remove(&victim);
            }
        }
        shard.insert(key, Arc::clone(value));
    }
}

/// What a guest cluster (or subcluster) holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece {
    /// Stored at this file offset.
    Host(u64),
    /// Reads as zeros (the zero flag, or a zero subcluster).
    Zero,
    /// Not allocated: zeros in a full-disk image, absent in an e2image one.
    Unallocated,
    /// A compressed cluster: its data at this file offset, this long.
    Compressed(u64, u64),
}

/// An opened qcow2 image.
pub struct Qcow2 {
    file: Source,
    size: u64,
    cluster_bits: u32,
    /// log2 of the entries of an L2 table.
    l2_bits: u32,
    extended_l2: bool,
    compression: Compression,
    l1: Vec<u64>,
    l2_cache: Cache<[u64]>,
    inflated: Cache<[u8]>,
    metadata_only: bool,
}

impl std::fmt::Debug for Qcow2 {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Qcow2")
            .field("size", &self.size)
            .field("cluster_bits", &self.cluster_bits)
            .field("extended_l2", &self.extended_l2)
            .field("compression", &self.compression)
            .field("metadata_only", &self.metadata_only)
            .finish()
    }
}

/// How to make a raw image of a qcow2 this reader refuses.
const CONVERT: &str = "convert it first (qemu-img convert -O raw IMAGE OUT.img)";

impl Qcow2 {
    /// Open the qcow2 image in `file` (which starts with [`MAGIC`]).
    pub fn open(file: Source) -> Result<Qcow2> {
        let path = file.path().to_path_buf();
        let bad = |message: String| Error::Container {
            path: path.clone(),
            message,
        };
        let head = file.read_partial(0, 4096);
        let v2: Qcow2HeaderV2 = decode(&head)
            .map_err(|_| bad("qcow2 image: the file is shorter than its header".into()))?;
        if v2.version == 1 {
            return Err(bad(format!("qcow (version 1) disk image: {CONVERT}")));
        }
        if !(2..=3).contains(&v2.version) {
            return Err(bad(format!(
                "qcow2 image of unknown version {}",
                v2.version
            )));
        }
        if !(MIN_CLUSTER_BITS..=MAX_CLUSTER_BITS).contains(&v2.cluster_bits) {
            return Err(bad(format!(
                "qcow2 image: cluster_bits {} is outside {MIN_CLUSTER_BITS}-{MAX_CLUSTER_BITS}",
                v2.cluster_bits
            )));
        }
        let cluster_size = 1u64 << v2.cluster_bits;
        if v2.backing_file_offset != 0 {
            let name = backing_name(&file, &v2);
            return Err(bad(format!(
                "qcow2 image with a backing file ({name}): the disk is not in this file alone; {}",
                "merge the chain first (qemu-img convert -O qcow2 IMAGE OUT.qcow2)"
            )));
        }
        if v2.crypt_method != 0 {
            return Err(bad(format!(
                "encrypted qcow2 image (crypt_method {}): decrypt it first (qemu-img convert with its secret)",
                v2.crypt_method
            )));
        }
        let (extended_l2, compression) = if v2.version == 3 {
            v3_features(&head, cluster_size).map_err(|m| bad(format!("qcow2 image: {m}")))?
        } else {
            (false, Compression::Deflate)
        };
        if extended_l2 && v2.cluster_bits < 14 {
            return Err(bad(format!(
                "qcow2 image: extended L2 entries need clusters of at least 16 KiB, not 2^{}",
                v2.cluster_bits
            )));
        }
        let entry_bytes: u32 = if extended_l2 { 16 } else { 8 };
        let l2_bits = v2.cluster_bits - entry_bytes.trailing_zeros();
        let l1 = read_l1(&file, &v2, l2_bits).map_err(|m| bad(format!("qcow2 image: {m}")))?;
        let mut qcow2 = Qcow2 {
            size: v2.size,
            cluster_bits: v2.cluster_bits,
            l2_bits,
            extended_l2,
            compression,
            l1,
            l2_cache: Cache::new((L2_CACHE_BYTES >> v2.cluster_bits).max(SHARDS as u64)),
            inflated: Cache::new((INFLATED_CACHE_BYTES >> v2.cluster_bits).max(SHARDS as u64)),
            metadata_only: false,
            file,
        };
        qcow2.metadata_only = written_by_e2image(&qcow2, &v2);
        Ok(qcow2)
    }

    fn cluster_size(&self) -> u64 {
        1 << self.cluster_bits
    }

    fn corrupt(&self, message: String) -> ReadFailure {
        ReadFailure::Error(Error::Container {
            path: self.file.path().to_path_buf(),
            message: format!("qcow2 image: {message}"),
        })
    }

    /// The L2 table at file offset `at` (entries as 64-bit words), through the cache.
    fn l2_table(&self, at: u64) -> std::result::Result<Arc<[u64]>, ReadFailure> {
        if let Some(table) = self.l2_cache.get(at) {
            return Ok(table);
        }
        let raw = self
            .file
            .read(at, self.cluster_size(), "qcow2 L2 table")
            .map_err(|e| self.corrupt(format!("L2 table at file offset {at}: {e}")))?;
        let words: Arc<[u64]> = raw
            .chunks_exact(8)
            .map(|c| u64::from_be_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        self.l2_cache.put(at, &words);
        Ok(words)
    }

    /// What byte `pos` of the disk is, and how many bytes from `pos` share that answer (up to
    /// the end of its cluster or subcluster).
    fn piece(&self, pos: u64) -> std::result::Result<(Piece, u64), ReadFailure> {
        let cs = self.cluster_size();
        let within = pos & (cs - 1);
        let vcluster = pos >> self.cluster_bits;
        let l1e = self
            .l1
            .get((vcluster >> self.l2_bits) as usize)
            .copied()
            .unwrap_or(0);
        let l2_at = l1e & L1E_OFFSET_MASK;
        if l2_at == 0 {
            return Ok((Piece::Unallocated, cs - within));
        }
        if l2_at & (cs - 1) != 0 {
            return Err(self.corrupt(format!("L2 table offset {l2_at} is not cluster-aligned")));
        }
        let table = self.l2_table(l2_at)?;
        let index = (vcluster & ((1 << self.l2_bits) - 1)) as usize;
        let per = if self.extended_l2 { 2 } else { 1 };
        let entry = table.get(index * per).copied().unwrap_or(0);
        if entry & QCOW_OFLAG_COMPRESSED != 0 {
            let (host, len) = self.compressed_extent(entry);
            return Ok((Piece::Compressed(host, len), cs - within));
        }
        let host = entry & L2E_OFFSET_MASK;
        if host & (cs - 1) != 0 {
            return Err(self.corrupt(format!(
                "data cluster offset {host} (for disk byte {pos}) is not cluster-aligned"
            )));
        }
        if self.extended_l2 {
            let bitmap = table.get(index * 2 + 1).copied().unwrap_or(0);
            return self.subcluster(pos, host, bitmap);
        }
        let piece = if entry & QCOW_OFLAG_ZERO != 0 {
            Piece::Zero
        } else if host == 0 {
            Piece::Unallocated
        } else {
            Piece::Host(host + within)
        };
        Ok((piece, cs - within))
    }

    /// A subcluster of an extended L2 entry: bit `i` of the low word allocates subcluster `i`,
    /// bit `32 + i` makes it read as zeros; neither is unallocated, both is invalid.
    fn subcluster(
        &self,
        pos: u64,
        host: u64,
        bitmap: u64,
    ) -> std::result::Result<(Piece, u64), ReadFailure> {
        let sc_bits = self.cluster_bits - SUBCLUSTERS.trailing_zeros();
        let sc_size = 1u64 << sc_bits;
        let within = pos & (self.cluster_size() - 1);
        let index = within >> sc_bits;
        let alloc = bitmap >> index & 1 != 0;
        let zero = bitmap >> (32 + index) & 1 != 0;
        let rest = sc_size - (within & (sc_size - 1));
        let piece = match (alloc, zero) {
            (true, true) => {
                return Err(self.corrupt(format!(
                    "subcluster {index} at disk byte {pos} is both allocated and zero"
                )))
            }
            (true, false) if host == 0 => {
                return Err(self.corrupt(format!(
                    "subcluster {index} at disk byte {pos} is allocated in an unallocated cluster"
                )))
            }
            (true, false) => Piece::Host(host + within),
            (false, true) => Piece::Zero,
            (false, false) => Piece::Unallocated,
        };
        Ok((piece, rest))
    }

    /// File offset and length of a compressed cluster's data (QEMU's `qcow2_parse_compressed_l2_entry`):
    /// the offset in the low `62 - (cluster_bits - 8)` bits, then the count of 512-byte sectors
    /// it spans, minus one; the length runs to the end of the last sector.
    fn compressed_extent(&self, entry: u64) -> (u64, u64) {
        let shift = 62 - (self.cluster_bits - 8);
        let host = entry & ((1u64 << shift) - 1);
        let sectors = ((entry >> shift) & ((1u64 << (self.cluster_bits - 8)) - 1)) + 1;
        let len = (sectors * SECTOR).saturating_sub(host & (SECTOR - 1));
        (host, len)
    }

    /// At least the first `need` bytes of the cluster whose compressed data lies at `host`,
    /// decompressed (through the cache).
    ///
    /// A cluster not cached is inflated only up to `need`: a deflate stream must be decoded
    /// from its start, but not past the bytes wanted, and a lone block read (an xattr block,
    /// 64% of the inflating of a compressed image's `check`) then costs half a cluster on
    /// average. A cluster cached too short is inflated whole, so reads walking a cluster
    /// block by block inflate it twice at most.
    fn inflate(
        &self,
        host: u64,
        len: u64,
        need: usize,
    ) -> std::result::Result<Arc<[u8]>, ReadFailure> {
        let cached = self.inflated.get(host);
        if let Some(cluster) = &cached {
            if cluster.len() >= need {
                return Ok(Arc::clone(cluster));
            }
        }
        let cs = self.cluster_size() as usize;
        let want = if cached.is_some() { cs } else { need.min(cs) };
        let input = self.compressed_input(host, len)?;
        let out: Arc<[u8]> = match self.compression {
            Compression::Deflate => inflate_prefix(&input, want),
            Compression::Zstd => {
                let mut out = vec![0u8; want];
                unzstd(&input, &mut out).then_some(out)
            }
        }
        .ok_or_else(|| self.undecodable(host, len, want))?
        .into();
        self.inflated.put(host, &out);
        Ok(out)
    }

    /// The compressed data of the cluster at `host` (`len` bytes at most).
    fn compressed_input(&self, host: u64, len: u64) -> std::result::Result<Vec<u8>, ReadFailure> {
        // The last sector may run past the end of the file: take what there is.
        let avail = self.file.len().saturating_sub(host).min(len);
        if avail == 0 {
            return Err(self.corrupt(format!(
                "compressed cluster at file offset {host} lies beyond the end of the file"
            )));
        }
        self.file
            .read(host, avail, "qcow2 compressed cluster")
            .map_err(ReadFailure::Error)
    }

    fn undecodable(&self, host: u64, len: u64, want: usize) -> ReadFailure {
        self.corrupt(format!(
            "the compressed cluster at file offset {host} ({len} bytes, {:?}) does not decompress to {want} bytes",
            self.compression,
        ))
    }

    /// Decompress the cluster whose compressed data lies at `host` (`len` bytes at most) into
    /// `out`, which it must fill exactly.
    fn inflate_into(
        &self,
        host: u64,
        len: u64,
        out: &mut [u8],
    ) -> std::result::Result<(), ReadFailure> {
        let input = self.compressed_input(host, len)?;
        let ok = match self.compression {
            Compression::Deflate => inflate_raw(&input, out),
            Compression::Zstd => unzstd(&input, out),
        };
        if !ok {
            return Err(self.undecodable(host, len, out.len()));
        }
        Ok(())
    }
}

/// The backing file's name, for the refusal (at most 1023 bytes, as QEMU allows; printable).
fn backing_name(file: &Source, v2: &Qcow2HeaderV2) -> String {
    let len = u64::from(v2.backing_file_size.min(1023));
    let raw = file.read_partial(v2.backing_file_offset, len);
    let name: String = String::from_utf8_lossy(&raw)
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if name.is_empty() {
        "unnamed".into()
    } else {
        format!("\"{name}\"")
    }
}

/// Version 3: refuse what cannot be read from this file alone, and learn the entry format and
/// the compression.
fn v3_features(head: &[u8], cluster_size: u64) -> std::result::Result<(bool, Compression), String> {
    let v3: Qcow2HeaderV3 = decode_at(head, Qcow2HeaderV2::SIZE)
        .map_err(|_| "the file is shorter than its version 3 header".to_string())?;
    let len = u64::from(v3.header_length);
    if len < (Qcow2HeaderV2::SIZE + Qcow2HeaderV3::SIZE) as u64 || len > cluster_size {
        return Err(format!("header_length {len} is invalid"));
    }
    let features = v3.incompatible_features;
    if features & INCOMPAT_DATA_FILE != 0 {
        return Err(format!(
            "its data is in an external data file, not in this one: {CONVERT}"
        ));
    }
    let known = INCOMPAT_DIRTY | INCOMPAT_CORRUPT | INCOMPAT_COMPRESSION | INCOMPAT_EXTL2;
    if features & !known != 0 {
        return Err(format!(
            "unknown incompatible features 0x{:x}: {CONVERT}",
            features & !known
        ));
    }
    let compression = if features & INCOMPAT_COMPRESSION != 0 {
        let ty = (len > COMPRESSION_TYPE_OFFSET as u64)
            .then(|| head.get(COMPRESSION_TYPE_OFFSET).copied())
            .flatten();
        match ty {
            Some(0) => Compression::Deflate,
            Some(1) => Compression::Zstd,
            Some(t) => return Err(format!("unknown compression_type {t}: {CONVERT}")),
            None => return Err("compression_type is flagged but missing".into()),
        }
    } else {
        Compression::Deflate
    };
    Ok((features & INCOMPAT_EXTL2 != 0, compression))
}

/// The active L1 table, checked to be bounded, inside the file, and large enough for the disk.
fn read_l1(
    file: &Source,
    v2: &Qcow2HeaderV2,
    l2_bits: u32,
) -> std::result::Result<Vec<u64>, String> {
    let bytes = u64::from(v2.l1_size) * 8;
    if bytes > MAX_L1_BYTES {
        return Err(format!(
            "l1_size {} exceeds QEMU's limit of {} entries",
            v2.l1_size,
            MAX_L1_BYTES / 8
        ));
    }
    // The disk must be covered: each L1 entry maps 2^(cluster_bits + l2_bits) bytes.
    let span_bits = v2.cluster_bits + l2_bits;
    let needed = v2.size.div_ceil(1u64 << span_bits);
    if needed > u64::from(v2.l1_size) {
        return Err(format!(
            "the L1 table ({} entries) is too small for a disk of {} bytes",
            v2.l1_size, v2.size
        ));
    }
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let cs = 1u64 << v2.cluster_bits;
    if v2.l1_table_offset & (cs - 1) != 0 {
        return Err(format!(
            "L1 table offset {} is not cluster-aligned",
            v2.l1_table_offset
        ));
    }
    let raw = file
        .read(v2.l1_table_offset, bytes, "qcow2 L1 table")
        .map_err(|e| e.to_string())?;
    Ok(raw
        .chunks_exact(8)
        .map(|c| u64::from_be_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

/// True when `qcow2` was written by e2image's qcow2 writer for the filesystem it holds (module
/// documentation): version 2, the L1 table in cluster 1 and the refcount table right after it,
/// and an ext2/3/4 superblock at byte 1024 whose block size is the cluster size and whose
/// size is the disk's.
fn written_by_e2image(qcow2: &Qcow2, v2: &Qcow2HeaderV2) -> bool {
    let cs = qcow2.cluster_size();
    let l1_end = (u64::from(v2.l1_size) * 8).div_ceil(cs) * cs;
    let layout = v2.version == 2
        && v2.nb_snapshots == 0
        && v2.l1_table_offset == cs
        && v2.refcount_table_offset == cs + l1_end;
    if !layout {
        return false;
    }
    let mut raw = [0u8; 1024];
    if qcow2.size < 2048 || qcow2.read_at(1024, &mut raw, Access::Metadata).is_err() {
        return false;
    }
    let Ok(sb) = crate::reader::superblock::Superblock::parse(&raw) else {
        return false;
    };
    sb.magic == crate::reader::superblock::EXT2_MAGIC
        && sb.block_size_checked() == Some(cs)
        && sb.blocks_count().checked_mul(cs) == Some(qcow2.size)
}

/// Run `task` with this thread's inflater, reset for a new raw deflate stream (no zlib header,
/// as QEMU writes with window bits -12; the default 15 bits read it too, and a reused state
/// keeps its allocations: one per rayon thread, not one per cluster).
fn with_inflater<T>(task: impl FnOnce(&mut flate2::Decompress) -> T) -> T {
    use std::cell::RefCell;
    thread_local! {
        static INFLATER: RefCell<flate2::Decompress> = RefCell::new(flate2::Decompress::new(false));
    }
    INFLATER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut d) => {
            d.reset(false);
            task(&mut d)
        }
        Err(_) => task(&mut flate2::Decompress::new(false)),
    })
}

/// Inflate a raw deflate stream into exactly `out`. As QEMU's `qcow2_zlib_decompress`, success
/// is a full output buffer: the input runs to the end of a sector, past the end of the stream,
/// and decoding stops once `out` is full.
fn inflate_raw(input: &[u8], out: &mut [u8]) -> bool {
    with_inflater(|inflater| {
        let result = inflater.decompress(input, out, flate2::FlushDecompress::Finish);
        result.is_ok() && inflater.total_out() == out.len() as u64
    })
}

/// The first `want` bytes a raw deflate stream decodes to (decoding stops there), into a
/// buffer that is not zeroed first; None when the stream is damaged or shorter.
fn inflate_prefix(input: &[u8], want: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(want);
    with_inflater(|inflater| {
        inflater
            .decompress_vec(input, &mut out, flate2::FlushDecompress::Finish)
            .ok()
    })?;
    // Capacity may exceed `want`: only the bytes asked for count.
    out.truncate(want);
    (out.len() == want).then_some(out)
}

/// Decode zstd frames from `input` until `out` is full (QEMU's `qcow2_zstd_decompress`: the
/// data is one or more frames, followed by padding to the sector).
fn unzstd(input: &[u8], out: &mut [u8]) -> bool {
    use std::io::Read;
    let mut rest = input;
    let mut filled = 0usize;
    // Each frame yields at least one byte or the loop ends: at most out.len() frames.
    while filled < out.len() {
        let Ok(mut dec) = ruzstd::StreamingDecoder::new(&mut rest) else {
            return false;
        };
        let before = filled;
        while filled < out.len() {
            match dec.read(out.get_mut(filled..).unwrap_or(&mut [])) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(_) => return false,
            }
        }
        if filled == before {
            return false;
        }
    }
    true
}

impl Disk for Qcow2 {
    fn kind(&self) -> ContainerKind {
        if self.metadata_only {
            ContainerKind::E2imageQcow2
        } else {
            ContainerKind::Qcow2
        }
    }

    fn len(&self) -> u64 {
        self.size
    }

    fn takes_hints(&self) -> bool {
        self.file.takes_hints()
    }

    /// The hint goes to the clusters stored for the range, coalesced; mapping it reads the L2
    /// tables it needs (which the reads that follow need too). Compressed, zero and
    /// unallocated clusters need no hint. At most `MAX_HINT` bytes of disk are looked at.
    fn will_need(&self, offset: u64, len: u64) {
        let end = offset.saturating_add(len.min(MAX_HINT)).min(self.size);
        let mut pos = offset;
        let mut run: Option<(u64, u64)> = None;
        while pos < end {
            let Ok((piece, span)) = self.piece(pos) else {
                break;
            };
            let step = span.min(end - pos);
            if let Piece::Host(h) = piece {
                match &mut run {
                    Some((start, l)) if *start + *l == h => *l += step,
                    _ => {
                        if let Some((run_start, run_len)) = run.take() {
                            self.file.will_need(run_start, run_len);
                        }
                        run = Some((h, step));
                    }
                }
            }
            pos += step;
        }
        if let Some((run_start, run_len)) = run {
            self.file.will_need(run_start, run_len);
        }
    }

    fn read_at(
        &self,
        offset: u64,
        buf: &mut [u8],
        access: Access,
    ) -> std::result::Result<(), ReadFailure> {
        // Stored pieces that continue each other in the file are read together.
        let mut pending: Option<(usize, u64, usize)> = None;
        let flush = |run: &mut Option<(usize, u64, usize)>, buf: &mut [u8]| -> Result<()> {
            if let Some((at, host, len)) = run.take() {
                if let Some(dst) = buf.get_mut(at..at + len) {
                    self.file.read_into(host, dst, "qcow2 data cluster")?;
                }
            }
            Ok(())
        };
        // Whole compressed clusters are decompressed after the walk, in parallel: a 4 MiB read
        // of inode tables spans 64 clusters of 64 KiB, and one thread inflating them in turn
        // made a compressed image's check 2.3x the raw image's time.
        let mut whole: Vec<(usize, usize, u64, u64)> = Vec::new();
        let mut done = 0usize;
        while done < buf.len() {
            let pos = offset + done as u64;
            let (piece, span) = self.piece(pos)?;
            let step = span.min((buf.len() - done) as u64) as usize;
            if let Piece::Host(host) = piece {
                match &mut pending {
                    Some((at, h, len)) if *at + *len == done && *h + *len as u64 == host => {
                        *len += step;
                    }
                    _ => {
                        flush(&mut pending, buf)?;
                        pending = Some((done, host, step));
                    }
                }
                done += step;
                continue;
            }
            flush(&mut pending, buf)?;
            let Some(dst) = buf.get_mut(done..done + step) else {
                break;
            };
            match piece {
                Piece::Host(_) => {}
                Piece::Zero => dst.fill(0),
                Piece::Unallocated if access == Access::FileData && self.metadata_only => {
                    return Err(ReadFailure::Absent {
                        offset: pos,
                        len: step as u64,
                    });
                }
                Piece::Unallocated => dst.fill(0),
                Piece::Compressed(host, len) if step as u64 == self.cluster_size() => {
                    // A whole cluster is wanted: decompressed in place, not through the cache.
                    whole.push((done, step, host, len));
                }
                Piece::Compressed(host, len) => {
                    let within = (pos & (self.cluster_size() - 1)) as usize;
                    let cluster = self.inflate(host, len, within + step)?;
                    match cluster.get(within..within + step) {
                        Some(src) => dst.copy_from_slice(src),
                        None => dst.fill(0),
                    }
                }
            }
            done += step;
        }
        flush(&mut pending, buf)?;
        self.inflate_whole(buf, &whole)
    }
}

impl Qcow2 {
    /// Decompress whole clusters into their places in `buf` (`(at, n, host, len)`, ascending and
    /// disjoint), in parallel when there are several; the first failure is returned.
    fn inflate_whole(
        &self,
        buf: &mut [u8],
        jobs: &[(usize, usize, u64, u64)],
    ) -> std::result::Result<(), ReadFailure> {
        use rayon::prelude::*;
        if let [(at, size, host, len)] = jobs {
            return match buf.get_mut(*at..*at + *size) {
                Some(dst) => self.inflate_into(*host, *len, dst),
                None => Ok(()),
            };
        }
        let mut parts: Vec<(&mut [u8], u64, u64)> = Vec::with_capacity(jobs.len());
        let mut rest = buf;
        let mut base = 0usize;
        for &(at, size, host, len) in jobs {
            let Some(skip) = at.checked_sub(base) else {
                break;
            };
            if skip + size > rest.len() {
                break;
            }
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(skip);
            let (dst, tail) = tail.split_at_mut(size);
            parts.push((dst, host, len));
            rest = tail;
            base = at + size;
        }
        // The rayon pool only from one of its own threads: that thread runs the jobs itself
        // while it waits, so nothing depends on the other workers. From any other thread (the
        // walk's read-ahead leader, whose tables every worker may be waiting for) the jobs would
        // be queued to workers blocked on this very read, and the read never ends: `check` of
        // a compressed qcow2 hung that way on a loaded machine. There, scoped threads of its own.
        if rayon::current_thread_index().is_some() {
            return parts
                .into_par_iter()
                .map(|(dst, host, len)| self.inflate_into(host, len, dst))
                .find_first(|r| r.is_err())
                .unwrap_or(Ok(()));
        }
        self.inflate_on_own_threads(parts)
    }

    /// [`Qcow2::inflate_whole`]'s jobs on scoped threads (one per core at most), which take
    /// the next job in turn; the caller takes jobs too, so all are done even when no thread
    /// can be started. The first failure in job order is returned.
    fn inflate_on_own_threads(
        &self,
        parts: Vec<(&mut [u8], u64, u64)>,
    ) -> std::result::Result<(), ReadFailure> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let jobs: Vec<Mutex<(&mut [u8], u64, u64)>> = parts.into_iter().map(Mutex::new).collect();
        let results: Vec<Mutex<Option<ReadFailure>>> =
            jobs.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        let work = || loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let (Some(job), Some(slot)) = (jobs.get(index), results.get(index)) else {
                return;
            };
            let Ok(mut job) = job.lock() else {
                continue;
            };
            let (dst, host, len) = &mut *job;
            if let (Err(error), Ok(mut slot)) = (self.inflate_into(*host, *len, dst), slot.lock()) {
                *slot = Some(error);
            }
        };
        let helpers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(jobs.len())
            .saturating_sub(1);
        std::thread::scope(|scope| {
            for _ in 0..helpers {
                // A thread that cannot be started leaves its jobs to the others.
                let _ = std::thread::Builder::new().spawn_scoped(scope, work);
            }
            work();
        });
        results
            .into_iter()
            .find_map(|r| r.into_inner().ok().flatten())
            .map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version 2 image of `size` bytes with 512-byte clusters, its L1 at cluster 1 and one L2
    /// table at cluster 2 mapping guest cluster 0 to cluster 3, which holds `0xab`s.
    fn tiny() -> Vec<u8> {
        let mut image = vec![0u8; 4 * 512];
        image[..4].copy_from_slice(MAGIC);
        image[4..8].copy_from_slice(&2u32.to_be_bytes());
        image[20..24].copy_from_slice(&9u32.to_be_bytes());
        image[24..32].copy_from_slice(&(64u64 * 512).to_be_bytes());
        image[36..40].copy_from_slice(&1u32.to_be_bytes());
        image[40..48].copy_from_slice(&512u64.to_be_bytes());
        image[512..520].copy_from_slice(&1024u64.to_be_bytes());
        image[1024..1032].copy_from_slice(&1536u64.to_be_bytes());
        image[1536..2048].fill(0xab);
        image
    }

    fn open(bytes: &[u8]) -> Result<Qcow2> {
        Qcow2::open(Source::from_bytes(bytes).unwrap())
    }

    #[test]
    fn maps_allocated_and_unallocated_clusters() {
        let qcow2 = open(&tiny()).unwrap();
        assert_eq!(qcow2.kind(), ContainerKind::Qcow2);
        let mut buf = vec![1u8; 1024];
        qcow2.read_at(0, &mut buf, Access::FileData).unwrap();
        assert!(buf[..512].iter().all(|&b| b == 0xab));
        assert!(buf[512..].iter().all(|&b| b == 0));
    }

    #[test]
    fn hostile_headers_are_refused() {
        let set = |f: &mut Vec<u8>, at: usize, v: &[u8]| f[at..at + v.len()].copy_from_slice(v);
        let cases: Vec<(usize, Vec<u8>, &str)> = vec![
            (20, 8u32.to_be_bytes().to_vec(), "cluster_bits"),
            (20, 40u32.to_be_bytes().to_vec(), "cluster_bits"),
            (20, u32::MAX.to_be_bytes().to_vec(), "cluster_bits"),
            (36, u32::MAX.to_be_bytes().to_vec(), "l1_size"),
            (24, u64::MAX.to_be_bytes().to_vec(), "too small"),
            (40, (1u64 << 50).to_be_bytes().to_vec(), "beyond the end"),
            (40, 513u64.to_be_bytes().to_vec(), "aligned"),
            (8, 512u64.to_be_bytes().to_vec(), "backing file"),
            (32, 1u32.to_be_bytes().to_vec(), "encrypted"),
            (4, 1u32.to_be_bytes().to_vec(), "version 1"),
            (4, 9u32.to_be_bytes().to_vec(), "unknown version"),
        ];
        for (at, value, want) in cases {
            let mut image = tiny();
            set(&mut image, at, &value);
            let error = open(&image).unwrap_err().to_string();
            assert!(error.contains(want), "{want}: {error}");
        }
        assert!(open(&tiny()[..40]).is_err());
    }

    #[test]
    fn damaged_tables_are_errors_not_panics() {
        let mut image = tiny();
        // L2 entry pointing past the end of the file.
        image[1024..1032].copy_from_slice(&(1u64 << 40).to_be_bytes());
        let qcow2 = open(&image).unwrap();
        let mut buf = [0u8; 512];
        assert!(qcow2.read_at(0, &mut buf, Access::Metadata).is_err());
        // The zero flag wins over the offset.
        image[1024..1032].copy_from_slice(&1537u64.to_be_bytes());
        let qcow2 = open(&image).unwrap();
        qcow2.read_at(0, &mut buf, Access::Metadata).unwrap();
        assert_eq!(buf, [0u8; 512]);
        // A compressed entry whose data does not inflate.
        image[1024..1032].copy_from_slice(&(QCOW_OFLAG_COMPRESSED | 1536).to_be_bytes());
        let qcow2 = open(&image).unwrap();
        assert!(qcow2.read_at(0, &mut buf, Access::Metadata).is_err());
        // An L1 entry pointing at an L2 table past the end of the file.
        let mut image = tiny();
        image[512..520].copy_from_slice(&(1u64 << 45).to_be_bytes());
        let qcow2 = open(&image).unwrap();
        assert!(qcow2.read_at(0, &mut buf, Access::Metadata).is_err());
    }

    /// `tiny()` with guest clusters 0 and 1 deflate-compressed (`0x11`s and `0x22`s), their
    /// data at file clusters 3 and 4.
    fn tiny_compressed() -> Vec<u8> {
        let mut image = tiny();
        image.resize(5 * 512, 0);
        for (index, fill) in [(0usize, 0x11u8), (1, 0x22)] {
            let mut compressor = flate2::Compress::new(flate2::Compression::fast(), false);
            let mut packed = Vec::with_capacity(512);
            compressor
                .compress_vec(&[fill; 512], &mut packed, flate2::FlushCompress::Finish)
                .unwrap();
            let host = (3 + index as u64) * 512;
            image[host as usize..host as usize + packed.len()].copy_from_slice(&packed);
            let entry = QCOW_OFLAG_COMPRESSED | host;
            image[1024 + 8 * index..1032 + 8 * index].copy_from_slice(&entry.to_be_bytes());
        }
        image
    }

    #[test]
    fn compressed_clusters_read_whole_and_in_part() {
        let qcow2 = open(&tiny_compressed()).unwrap();
        let mut buf = vec![0u8; 1024];
        qcow2.read_at(0, &mut buf, Access::Metadata).unwrap();
        assert!(buf[..512].iter().all(|&b| b == 0x11) && buf[512..].iter().all(|&b| b == 0x22));
        // A part of a cluster, then a later part of it (cached too short: inflated again).
        let mut part = [0u8; 100];
        qcow2.read_at(600, &mut part, Access::Metadata).unwrap();
        assert_eq!(part, [0x22; 100]);
        qcow2.read_at(900, &mut part, Access::Metadata).unwrap();
        assert_eq!(part, [0x22; 100]);
    }

    /// Regression: a read of several compressed clusters from a thread outside the rayon pool
    /// while every pool thread waits for that read (as the walk's workers wait for its
    /// read-ahead leader) queued its decompression on the blocked pool and never returned.
    #[test]
    fn whole_cluster_reads_do_not_wait_for_a_blocked_pool() {
        use std::sync::{Condvar, Mutex};
        use std::time::Duration;
        let qcow2 = Arc::new(open(&tiny_compressed()).unwrap());
        let gate = Arc::new((Mutex::new((0usize, false)), Condvar::new()));
        let workers = rayon::current_num_threads();
        for _ in 0..workers {
            let gate = Arc::clone(&gate);
            rayon::spawn(move || {
                let (counts, cv) = &*gate;
                let mut st = counts.lock().unwrap();
                st.0 += 1;
                cv.notify_all();
                while !st.1 {
                    st = cv.wait(st).unwrap();
                }
            });
        }
        {
            let (counts, cv) = &*gate;
            let mut st = counts.lock().unwrap();
            while st.0 < workers {
                st = cv.wait(st).unwrap();
            }
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = Arc::clone(&qcow2);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1024];
            let result = reader.read_at(0, &mut buf, Access::Metadata);
            let _ = tx.send((result.is_ok(), buf));
        });
        let got = rx.recv_timeout(Duration::from_secs(20));
        let (counts, cv) = &*gate;
        counts.lock().unwrap().1 = true;
        cv.notify_all();
        let (ok, buf) = got.expect("the read waited for the blocked rayon pool");
        assert!(ok);
        assert!(buf[..512].iter().all(|&b| b == 0x11) && buf[512..].iter().all(|&b| b == 0x22));
    }

    #[test]
    fn compressed_extent_follows_qemu() {
        let qcow2 = open(&tiny()).unwrap();
        // cluster_bits 9: shift 61, one sector count bit.
        let entry = QCOW_OFLAG_COMPRESSED | (1u64 << 61) | 1000;
        assert_eq!(
            qcow2.compressed_extent(entry),
            (1000, 2 * 512 - (1000 % 512))
        );
    }

    #[test]
    fn deflate_and_zstd_fill_or_fail() {
        let mut out = [0u8; 8];
        assert!(!inflate_raw(&[0xff; 4], &mut out));
        assert!(!unzstd(&[0u8; 16], &mut out));
        assert!(!unzstd(&[], &mut out));
        // A stored deflate block holding 8 bytes, then padding.
        let stored = [1u8, 8, 0, 0xf7, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0];
        assert!(inflate_raw(&stored, &mut out));
        assert_eq!(out, [1, 2, 3, 4, 5, 6, 7, 8]);
        // A prefix stops early; more than the stream holds is refused.
        assert_eq!(inflate_prefix(&stored, 3), Some(vec![1, 2, 3]));
        assert_eq!(inflate_prefix(&stored, 9), None);
        assert_eq!(inflate_prefix(&[0xff; 4], 2), None);
    }
}
