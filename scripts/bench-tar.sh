#!/usr/bin/env bash
# extract --tar of the 100,000-file image against extract to tmpfs and GNU tar -c of a read-only
# loop mount of the same image (warm page cache, best of RUNS, same sitting). Needs root for the
# mount and the tmpfs.
#   scripts/bench-tar.sh [IMAGE] [RUNS]   (defaults: /tmp/e4inspect-bench/pop-100000.img, 3)
set -euo pipefail
IMG=${1:-/tmp/e4inspect-bench/pop-100000.img}
RUNS=${2:-3}
BIN=${E4INSPECT:-$(dirname "$0")/../target/release/e4inspect}
[ -x "$BIN" ] || { echo "build first: cargo build --release" >&2; exit 1; }
[ -f "$IMG" ] || { echo "$IMG missing (made by the bench setup)" >&2; exit 1; }
W=$(mktemp -d /tmp/bench-tar.XXXXXX)
cleanup() { umount "$W/mnt" 2>/dev/null || true; umount "$W/tmpfs" 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
mkdir -p "$W/mnt" "$W/tmpfs"
mount -o ro,loop,noload "$IMG" "$W/mnt"
mount -t tmpfs -o size=90% tmpfs "$W/tmpfs"
cat "$IMG" > /dev/null
best() { # label command... -> best wall seconds
    local b=""
    for _ in $(seq "$RUNS"); do
        rm -rf "$W/tmpfs/x" && mkdir "$W/tmpfs/x"
        local s e t
        s=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc -l)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
    done
    echo "$b"
}
tarout() { "$BIN" extract --tar - --no-progress "$IMG" | cat > /dev/null; }
gnutar() { tar -C "$W/mnt" -cf - . | cat > /dev/null; }
ours=$(best tarout)
tmpfs=$(best "$BIN" extract --no-progress "$IMG" / "$W/tmpfs/x")
gnu=$(best gnutar)
printf 'extract --tar (pipe) %.3f s; extract to tmpfs %.3f s; tar -c of a loop mount %.3f s (best of %d, warm)\n' \
    "$ours" "$tmpfs" "$gnu" "$RUNS"
