#!/usr/bin/env bash
# Run every cargo-fuzz target for a bounded time, with seed corpora generated from the shipped
# fixture and a few small mke2fs images. Not run in CI (it takes minutes and needs libFuzzer).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, every target)
#
# Environment: FUZZ_JOBS (parallel jobs per target, default 1), FUZZ_RSS_MB (default 1024),
# FUZZ_MALLOC_MB (largest single allocation allowed, default 256: catches allocations sized by a
# hostile field), CARGO_TARGET_DIR (default fuzz/target).
# Crashes land in fuzz/artifacts/TARGET/; minimise with
#   RUSTC_BOOTSTRAP=1 cargo fuzz tmin TARGET fuzz/artifacts/TARGET/crash-...
# and add each one as a regression test (tests/hostile.rs or a unit test beside the code).
set -euo pipefail

secs=${1:-60}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
fuzz="$root/fuzz"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(superblock descriptors inode extent xattr journal dir ondisk logdump dirhash image e2image qcow2
        xattr_dosattrib xattr_ntacl xattr_lma xattr_link xattr_lov xattr_filter_fid xattr_som quota mmp replay)
fi
export RUSTC_BOOTSTRAP=1 # cargo-fuzz needs -Z flags; only the stable toolchain is installed
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz missing: cargo install cargo-fuzz" >&2
    exit 1
fi
for t in mke2fs debugfs; do
    command -v "$t" >/dev/null || { echo "$t missing (apt-get install e2fsprogs)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export E2FSPROGS_FAKE_TIME=1700000000 MKE2FS_CONFIG=/etc/mke2fs.conf
uuid=7d4c2a6e-1b3f-4e5d-9a8b-0c1d2e3f4a5b

# A populated tree: regular files, a sparse file with many extents (a depth-1 extent tree), a
# directory, a slow symlink.
tree="$work/tree"
mkdir -p "$tree/d"
echo hello >"$tree/a"
head -c 5000 /dev/zero | tr '\0' x >"$tree/b"
for i in $(seq 0 12); do printf 'x' | dd of="$tree/sparse" bs=1 seek=$((i * 4096)) conv=notrunc status=none; done
ln -s "$(printf 'l%.0s' $(seq 1 100))" "$tree/longlink"
for i in $(seq 1 8); do : >"$tree/d/f$i"; done

mk() { # name size mke2fs-args...
    local name=$1 size=$2
    shift 2
    truncate -s "$size" "$work/$name.img"
    mke2fs -q -F -U "$uuid" -E lazy_itable_init=1,lazy_journal_init=1 "$@" "$work/$name.img"
}
mk ext2 256K -t ext2 -b 1024 -N 48 -d "$tree"
mk ext3 2M -t ext3 -b 1024 -N 64 -d "$tree"
mk ext4 2M -t ext4 -b 1024 -I 256 -N 64 -d "$tree"
mk bigalloc 4M -t ext4 -b 1024 -O bigalloc -C 4096 -N 64
mk metabg 4M -t ext4 -b 1024 -O meta_bg,^resize_inode -g 1024 -N 256 -J size=1 -I 1024
mk ext4_4k 4M -t ext4 -b 4096 -O inline_data,^has_journal -N 64 -d "$tree"
# xattrs in the inode body and in an external block
cmds="$work/ea.cmds"
: >"$cmds"
for k in 0 1 2 3 4; do echo "ea_set /a user.k$k $(printf 'v%.0s' $(seq 1 $((20 + 40 * k))))" >>"$cmds"; done
echo "ea_set /b security.selinux system_u:object_r:etc_t:s0" >>"$cmds"
debugfs -w -f "$cmds" "$work/ext4.img" >/dev/null 2>&1
mk quota 4M -t ext4 -b 1024 -N 64 -O quota,project -E quotatype=usrquota:grpquota:prjquota -d "$tree"
mk mmp 4M -t ext4 -b 1024 -N 64 -O mmp
images=("$root/fixtures/example.img" "$work"/*.img)

corpus() { mkdir -p "$fuzz/corpus/$1" && echo "$fuzz/corpus/$1"; }
imap() { # image ino -> "byte-offset inode-size"
    local blk off isz bs
    read -r blk off < <(debugfs -R "imap <$2>" "$1" 2>/dev/null | sed -n 's/.*located at block \([0-9]*\), offset \(0x[0-9a-f]*\).*/\1 \2/p')
    isz=$(debugfs -R stats "$1" 2>/dev/null | awk -F: '/^Inode size/ {gsub(/ /,"",$2); print $2}')
    bs=$(debugfs -R stats "$1" 2>/dev/null | awk -F: '/^Block size/ {gsub(/ /,"",$2); print $2}')
    [ -n "$blk" ] && echo "$((blk * bs + off)) $isz $bs"
}
n=0
for img in "${images[@]}"; do
    n=$((n + 1))
    head -c 2048 "$img" | tail -c 1024 >"$(corpus superblock)/sb$n"
    [ "$(stat -c %s "$img")" -le $((4 << 20)) ] && cp "$img" "$(corpus image)/img$n"
    [ "$(stat -c %s "$img")" -le $((4 << 20)) ] && cp "$img" "$(corpus descriptors)/img$n"
    { head -c 2048 "$img" | tail -c 1024; head -c 4096 "$img" | tail -c 2048; } >"$(corpus descriptors)/raw$n"
    for ino in 2 7 8 11 12 13 14 15; do
        read -r off isz bs < <(imap "$img" $ino) || continue
        raw="$work/ino"
        dd if="$img" of="$raw" bs=1 skip="$off" count="$isz" status=none
        { printf '\x00\x00\x00\x00'; printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((ino & 255)) $((ino >> 8 & 255)) 0 0)"; cat "$raw"; } >"$(corpus inode)/i$n-$ino"
        { dd if="$raw" bs=1 skip=128 count=2 status=none; cat "$raw"; } >"$(corpus xattr)/i$n-$ino"
        acl=$(od -An -tu4 -j104 -N4 "$raw" | tr -d ' ')
        if [ "$acl" != 0 ]; then
            { printf '\x00\x00'; dd if="$img" bs="$bs" skip="$acl" count=1 status=none; } >"$(corpus xattr)/b$n-$ino"
        fi
        if [ "$bs" = 1024 ]; then
            { dd if="$raw" bs=1 skip=40 count=60 status=none; printf '\x05\x00\x00\x00'; cat "$img"; } >"$(corpus extent)/e$n-$ino"
        fi
        if [ $ino = 8 ]; then
            j=$(debugfs -R "bmap <8> 0" "$img" 2>/dev/null | tr -d ' \n')
            if [ -n "$j" ] && [ "$j" != 0 ]; then
                { printf '\x00'; dd if="$img" bs="$bs" skip="$j" count=1 status=none | head -c 1024; } >"$(corpus journal)/j$n"
            fi
        fi
    done
done

# Quota files (the three types) and the MMP block.
for ino in 3 4 12; do
    debugfs -R "dump <$ino> $(corpus quota)/q$ino" "$work/quota.img" >/dev/null 2>&1 || true
done
mmp=$(dumpe2fs -h "$work/mmp.img" 2>/dev/null | awk '/^MMP block number:/ {print $4}')
[ -n "$mmp" ] && dd if="$work/mmp.img" bs=1024 skip="$mmp" count=1 status=none >"$(corpus mmp)/mmp"

# Xattr value decoders: Samba values packed by Samba's own NDR code (python3-samba, when
# installed) and Lustre values built from the uapi layouts (tests/xattr_decoders.rs builds the
# same shapes).
if /usr/bin/python3 -c 'import samba' 2>/dev/null; then
    mkdir -p "$work/samba"
    /usr/bin/python3 "$root/tests/data/samba_values.py" "$work/samba" >/dev/null
    python3 - "$work/samba" "$(corpus xattr_dosattrib)" "$(corpus xattr_ntacl)" <<'PY'
import json, shutil, sys
src, dos, nt = sys.argv[1:4]
for c in json.load(open(src + "/cases.json")):
    shutil.copy(c["value"], (dos if c["name"] == "user.DOSATTRIB" else nt) + "/" + c["file"])
PY
fi
python3 - "$(corpus xattr_lma)" "$(corpus xattr_link)" "$(corpus xattr_lov)" \
    "$(corpus xattr_filter_fid)" "$(corpus xattr_som)" <<'PY'
import struct, sys
lma, link, lov, ffid, som = sys.argv[1:6]
fid = lambda s, o, v: struct.pack("<QII", s, o, v)
def w(d, n, b): open(d + "/" + n, "wb").write(b)
w(lma, "mdt", struct.pack("<II", 0, 0) + fid(0x200000401, 1, 0))
w(lma, "ost", struct.pack("<II", 8, 0) + fid(0x100000000, 0x2b, 0) + fid(0x200000401, 0x2a, 1) + bytes(24))
ents = b"".join(struct.pack(">HQII", 18 + len(n), 0x200000007, i, 0) + n for i, n in enumerate([b"a", b"hard link"]))
w(link, "two", struct.pack("<IIQII", 0x11EAF1DF, 2, 24 + len(ents), 0, 0) + ents)
def v1(count, objs, pool=None):
    magic = 0x0BD30BD0 if pool is not None else 0x0BD10BD0
    b = struct.pack("<II", magic, 1) + fid(0x200000401, 9, 0) + struct.pack("<IHH", 1 << 20, count, 0)
    if pool is not None:
        b += pool.ljust(16, b"\0")
    return b + b"".join(struct.pack("<QQII", i, s, 0, x) for i, s, x in objs)
w(lov, "v1", v1(2, [(0x1234, 0, 0), (0x100000005, 0x77, 3)]))
w(lov, "v3", v1(1, [(0x280000400, 0x99, 7)], b"flash"))
comps = [v1(1, [(0x11, 0, 0)]), v1(2, [(0x12, 0, 1), (0x13, 0, 2)], b"p")]
head = 32 + 48 * len(comps)
b = struct.pack("<IIIHH", 0x0BD60BD0, head + sum(map(len, comps)), 3, 0, len(comps)) + bytes(16)
off = head
for i, c in enumerate(comps):
    b += struct.pack("<IIQQIII", i + 1, 0x10, i << 20, (1 << 20) if i == 0 else 2**64 - 1, off, len(c), 3) + bytes(12)
    off += len(c)
w(lov, "comp", b + b"".join(comps))
foreign = lambda t, f, val: struct.pack("<IIII", 0x0BD70BD0, len(val), t, f) + val
w(lov, "foreign", foreign(0xda05, 0, b"/archive/obj"))
comps = [v1(1, [(0x21, 0, 3)]), foreign(7, 2, b"\xff\x01")]
b = struct.pack("<IIIHH", 0x0BD60BD0, head + sum(map(len, comps)), 4, 0, len(comps)) + struct.pack("<H", 1) + bytes(14)
off = head
for i, c in enumerate(comps):
    b += struct.pack("<IIQQIII", i + 1, 0x10, 0, 2**64 - 1, off, len(c), 4) + bytes(12)
    off += len(c)
w(lov, "comp-foreign", b + b"".join(comps))
w(ffid, "f16", fid(0x200000401, 0x2a, 3))
w(ffid, "f32", fid(0x200000401, 0x2a, 3) + struct.pack("<QQ", 9, 0))
w(ffid, "f52", fid(0x200000401, 0x2a, 3) + struct.pack("<IIQQIII", 1 << 20, 4, 0, 2**64 - 1, 1, 7, 0))
w(som, "som", struct.pack("<HHHHQQ", 1, 0, 0, 0, 123456, 248))
PY

# logdump: whole journals (first 256 KiB), from the generated images and, when the e2fsprogs
# corpus is beside the checkout, from its journal test images (they hold transactions, revoke
# records and v2/v3 tags; without them the target stays at the superblock's coverage).
journals=("${images[@]}")
for gz in "$root"/../shared/corpus/e2fsprogs/j_*/image.gz; do
    [ -f "$gz" ] || continue
    name=$(basename "$(dirname "$gz")")
    gunzip -c "$gz" >"$work/$name.corpus.img" && journals+=("$work/$name.corpus.img")
done
for img in "${journals[@]}"; do
    jf="$work/journal.bin"
    rm -f "$jf"
    debugfs -R "dump <8> $jf" "$img" >/dev/null 2>&1 || continue
    [ -s "$jf" ] && head -c $((256 << 10)) "$jf" >"$(corpus logdump)/$(basename "$img" .img)"
    # replay: the same journals (the scan, revoke and replay passes; 1 KiB-block journals).
    [ -s "$jf" ] && head -c $((256 << 10)) "$jf" >"$(corpus replay)/$(basename "$img" .img)"
done

# Containers: normal e2image files and e2image -Q qcow2 files of the small images, and qcow2
# images written by qemu-img (plain, deflate, zstd, extended L2 entries, version 2) when installed.
for img in "$work"/*.img; do
    [ "$(stat -c %s "$img")" -le $((4 << 20)) ] || continue
    b=$(basename "$img" .img)
    e2image "$img" "$work/$b.e2i" 2>/dev/null && cp "$work/$b.e2i" "$(corpus e2image)/$b"
    e2image -Q "$img" "$work/$b.qcow2" 2>/dev/null && cp "$work/$b.qcow2" "$(corpus qcow2)/q-$b"
    if command -v qemu-img >/dev/null; then
        for v in "plain:" "deflate:-c" "zstd:-c -o compression_type=zstd" \
            "extl2:-o extended_l2=on,cluster_size=16k" "v2:-o compat=0.10,cluster_size=1k"; do
            # shellcheck disable=SC2086 # the options are words
            qemu-img convert -O qcow2 ${v#*:} "$img" "$work/$b.${v%%:*}.qcow2" 2>/dev/null &&
                cp "$work/$b.${v%%:*}.qcow2" "$(corpus qcow2)/${v%%:*}-$b"
        done
    fi
done

cd "$fuzz"
cargo fuzz build -O
status=0
for t in "${targets[@]}"; do
    echo "=== $t: ${secs}s"
    mkdir -p "$fuzz/corpus/$t" # targets without generated seeds start from an empty corpus
    max_len=$((1 << 20))
    rss=${FUZZ_RSS_MB:-1024}
    case $t in image | descriptors | extent | e2image | qcow2) max_len=$((5 << 20)) ;; esac
    # libFuzzer keeps its corpus in memory and counts it in the RSS it limits: the whole-image
    # target's units are images of up to 5 MiB, so a few hundred of them alone pass 1 GiB (seen:
    # RSS = in-memory corpus + ~170 MiB, flat per unit, no leak). Give that target room.
    case $t in image | e2image | qcow2) rss=${FUZZ_RSS_MB:-4096} ;; esac
    if ! cargo fuzz run -O "$t" "$fuzz/corpus/$t" -- -max_total_time="$secs" -timeout=10 \
        -max_len=$max_len -rss_limit_mb="$rss" \
        -malloc_limit_mb="${FUZZ_MALLOC_MB:-256}" -jobs="${FUZZ_JOBS:-1}" -workers="${FUZZ_JOBS:-1}" \
        -print_final_stats=1 2>&1 | tee "$work/$t.log" | grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+==|SUMMARY|panicked|artifact_prefix|Test unit written)'; then
        :
    fi
    if grep -qE 'Test unit written|deadly signal|panicked' "$work/$t.log"; then
        echo "!!! $t found a crash; see fuzz/artifacts/$t" >&2
        status=1
    fi
done
exit $status
