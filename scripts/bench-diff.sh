#!/usr/bin/env bash
# diff of two 400,000-file images that differ in 10 files (5 modes changed with debugfs sif,
# 5 rewritten in place) against rsync -rnc over read-only loop mounts of the same two images
# (warm page cache, best of RUNS, same sitting). Needs root for the mounts.
#   scripts/bench-diff.sh [IMAGE] [RUNS]   (defaults: /tmp/e4inspect-bench/pop-400000.img, 3)
# The second image is made once beside the first (IMAGE-b.img, a sparse copy) and reused.
set -euo pipefail
IMG=${1:-/tmp/e4inspect-bench/pop-400000.img}
RUNS=${2:-3}
BIN=${E4INSPECT:-$(dirname "$0")/../target/release/e4inspect}
[ -x "$BIN" ] || { echo "build first: cargo build --release" >&2; exit 1; }
[ -f "$IMG" ] || { echo "$IMG missing (made by the bench setup)" >&2; exit 1; }
B="${IMG%.img}-b.img"
if [ ! -f "$B" ]; then
    cp --sparse=always "$IMG" "$B.tmp"
    cmds=$(mktemp)
    for i in 0 1 2 3 4; do echo "sif /d000$i/f000$i mode 0100600"; done > "$cmds"
    debugfs -w -f "$cmds" "$B.tmp" > /dev/null 2>&1
    rm -f "$cmds"
    # Rewrite the first byte of five files in place: contents differ, nothing else.
    for i in 5 6 7 8 9; do
        blk=$(debugfs -R "blocks /d000$i/f000$i" "$B.tmp" 2>/dev/null | awk '{print $1}')
        bs=$(dumpe2fs -h "$B.tmp" 2>/dev/null | awk -F: '/^Block size/ {print $2+0}')
        printf 'Z' | dd of="$B.tmp" bs=1 seek=$((blk * bs)) conv=notrunc status=none
    done
    mv "$B.tmp" "$B"
fi
W=$(mktemp -d /tmp/bench-diff.XXXXXX)
cleanup() { umount "$W/a" 2>/dev/null || true; umount "$W/b" 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
mkdir -p "$W/a" "$W/b"
mount -o ro,loop,noload "$IMG" "$W/a"
mount -o ro,loop,noload "$B" "$W/b"
cat "$IMG" "$B" > /dev/null
best() { # command... -> best wall seconds
    local b=""
    for _ in $(seq "$RUNS"); do
        local s e t
        s=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc -l)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
    done
    echo "$b"
}
ours=$(best "$BIN" diff --ignore times "$IMG" "$B")
rsync_t=$(best rsync -rnc --delete "$W/a/" "$W/b/")
paths=$("$BIN" diff "$IMG" "$B" | grep -c '^Modified' || true)
printf 'diff of two 400,000-file images (%s paths differ) %.3f s; rsync -rnc over two loop mounts %.3f s (best of %d, warm)\n' \
    "$paths" "$ours" "$rsync_t" "$RUNS"
