#!/bin/sh
# Benchmark (not a test): `e4inspect xattrs` inode-table scan throughput on an image with >= 1 million
# in-use inodes, on one core (RAYON_NUM_THREADS=1) and on all cores, against `cat` of the same
# inode-table bytes (the physical reference). Prints GB/s of inode table scanned.
#
# Usage: scripts/bench-scan.sh [WORKDIR]   (needs mke2fs, setfattr optional; ~1.5 GB of disk)
set -eu
work=${1:-/tmp/e4inspect-bench-scan}
mkdir -p "$work"
img=$work/scan1m.img
bin=${CARGO_TARGET_DIR:-target}/release/e4inspect
cargo build --release --quiet
if [ ! -f "$img" ]; then
    tree=$work/tree
    rm -rf "$tree"; mkdir -p "$tree"
    echo "generating 1,000,000 files (1000 dirs x 1000), every 4th with xattrs..." >&2
    python3 - "$tree" <<'PY'
import os, sys
root = sys.argv[1]
have_xattr = hasattr(os, "setxattr")
for d in range(1000):
    p = os.path.join(root, "d%03d" % d)
    os.mkdir(p)
    for f in range(1000):
        fp = os.path.join(p, "f%03d" % f)
        open(fp, "wb").close()
        if have_xattr and f % 4 == 0:
            os.setxattr(fp, "user.tag", b"x" * (f % 64))
            if f % 16 == 0:
                os.setxattr(fp, "security.selinux", b"system_u:object_r:default_t:s0\0")
PY
    E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -I 256 -N 1100000 -d "$tree" "$img" 6G
    rm -rf "$tree"
fi
# Warm the page cache so both sides read from memory.
cat "$img" > /dev/null
json=$($bin xattrs --json --no-progress "$img")
bytes=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["itable_bytes"])')
scanned=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["inodes_scanned"])')
echo "inodes scanned: $scanned, inode-table bytes read: $bytes"
t() { # seconds of the best of 3 runs of "$@"
    best=
    for _ in 1 2 3; do
        s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
        d=$(echo "$e - $s" | bc -l)
        if [ -z "$best" ] || [ "$(echo "$d < $best" | bc -l)" = 1 ]; then best=$d; fi
    done
    echo "$best"
}
one=$(RAYON_NUM_THREADS=1 t $bin xattrs --json --no-progress "$img")
all=$(t $bin xattrs --json --no-progress "$img")
# The physical reference: cat of as many bytes of the (cached) image as the scan read.
catt=$(t sh -c "head -c $bytes '$img' | cat")
gbs() { echo "scale=2; $bytes / $1 / 1000000000" | bc -l; }
echo "one core : ${one}s  $(gbs "$one") GB/s"
echo "all cores ($(nproc)): ${all}s  $(gbs "$all") GB/s"
echo "cat of $bytes bytes: ${catt}s  $(gbs "$catt") GB/s"
# CPU seconds (user+sys) of the one-core scan: steadier than wall time on a shared machine.
cpu=$(RAYON_NUM_THREADS=1 /usr/bin/time -f "%U %S" $bin xattrs --json --no-progress "$img" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}')
echo "one core, CPU time: ${cpu}s  $(gbs "$cpu") GB/s per CPU-second"
$bin xattrs --no-progress "$img" | head -8
