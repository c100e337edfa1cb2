#!/bin/sh
# Benchmark (not a test): `e4inspect extract IMG / DEST` of a 100,000-file tree against
# `debugfs -R "rdump / DEST"` of the same image (warm page cache, destination on the same
# filesystem, one run each, to stay near a minute). Prints both wall times and the ratio (goal: >= 5x).
#
# Also prints CPU seconds (user+sys) of each, steadier than wall time on a shared machine. Set
# OUT_DIR to extract elsewhere (e.g. /dev/shm/x, to leave disk writeback out of the figures).
#
# Usage: scripts/bench-extract.sh [WORKDIR]   (needs mke2fs, debugfs, python3; ~1 GB of disk;
# the image is built once and kept in WORKDIR)
set -eu
work=${1:-/tmp/e4inspect-bench-extract}
mkdir -p "$work"
img=$work/tree100k.img
bin=${CARGO_TARGET_DIR:-target}/release/e4inspect
cargo build --release --quiet
if [ ! -f "$img" ]; then
    tree=$work/tree
    rm -rf "$tree"; mkdir -p "$tree"
    echo "generating 100,000 files (200 dirs x 500, 0-16 KiB, every 8th with an xattr)..." >&2
    python3 - "$tree" <<'PY'
import os, sys
root = sys.argv[1]
blob = bytes(range(256)) * 64
for d in range(200):
    p = os.path.join(root, "d%03d" % d, "sub")
    os.makedirs(p)
    for f in range(500):
        fp = os.path.join(p, "f%03d" % f)
        with open(fp, "wb") as fh:
            fh.write(blob[: (f * 37) % 16384])
        if f % 8 == 0 and hasattr(os, "setxattr"):
            os.setxattr(fp, "user.tag", b"x" * (f % 64))
PY
    E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -I 256 -N 120000 -d "$tree" "$img" 2G
    rm -rf "$tree"
fi
cat "$img" > /dev/null
out=${OUT_DIR:-$work/out}
t() { # "wall cpu" seconds of "$@" into a fresh $out
    rm -rf "$out"; mkdir -p "$out"; sync
    /usr/bin/time -f "%e %U %S" -o "$work/time.txt" "$@" > /dev/null 2>&1
    awk '{print $1, $2 + $3}' "$work/time.txt"
}
ours=$(t $bin extract --no-progress "$img" / "$out")
files=$(find "$out" -type f | wc -l)
theirs=$(t debugfs -R "rdump / $out" "$img")
rm -rf "$out"
set -- $ours; ow=$1; oc=$2
set -- $theirs; tw=$1; tc=$2
echo "files extracted: $files (into $out)"
echo "e4inspect extract: ${ow}s wall, ${oc}s CPU"
echo "debugfs rdump    : ${tw}s wall, ${tc}s CPU"
echo "ratio: $(echo "scale=2; $tw / $ow" | bc -l)x wall, $(echo "scale=2; $tc / $oc" | bc -l)x CPU  (goal >= 5x)"
