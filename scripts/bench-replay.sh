#!/bin/sh
# --replay cost: a crash image with a 128 MiB journal (4 KiB blocks, metadata_csum), made by
# loop-mounting, writing ~100 MiB of metadata-heavy changes and copying the device while mounted.
# Times `dump` and `check --quick` with and without --replay (hyperfine) and their peak memory
# (/usr/bin/time -v). Needs root (loop mount). Usage: scripts/bench-replay.sh [BIN]
set -eu
bin=${1:-target/release/e4inspect}
work=${TMPDIR:-/tmp}/e4inspect-bench-replay
mkdir -p "$work"
img=$work/crash.img
if [ ! -f "$img" ]; then
    truncate -s 2G "$work/live.img"
    mke2fs -q -F -t ext4 -b 4096 -J size=128 -O metadata_csum "$work/live.img"
    mkdir -p "$work/m"
    mount -o loop,commit=60 "$work/live.img" "$work/m"
    for d in $(seq 1 40); do
        mkdir "$work/m/d$d"
        for f in $(seq 1 500); do echo "$d $f" >"$work/m/d$d/f$f"; done
        sync
    done
    cp --sparse=always "$work/live.img" "$img"
    umount "$work/m"
fi
"$bin" journal "$img" 2>&1 >/dev/null | head -1
hyperfine -w 2 -r 10 \
    "$bin dump $img" "$bin dump --replay $img" \
    "$bin check --quick --no-replay $img" "$bin check --quick $img"
for args in "dump" "dump --replay" "check --quick --no-replay" "check --quick"; do
    /usr/bin/time -v "$bin" $args "$img" 2>&1 >/dev/null | sed -n "s/Maximum resident set size (kbytes)/$args: peak RSS (KiB)/p"
done
