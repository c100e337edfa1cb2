#!/usr/bin/env bash
# cat of a 1 GiB file: `e4inspect cat` against `debugfs -R "cat ..."` (warm page cache, output
# through a pipe, best of RUNS). Prints both times and the ratio (goal: e4inspect >= 5x faster).
#   scripts/bench-cat.sh [SIZE_MIB] [RUNS]      (defaults: 1024, 2)
# The image is built once under ${BENCH_DIR:-/tmp/e4inspect-bench-cat} and reused.
set -euo pipefail
SIZE_MIB=${1:-1024}
RUNS=${2:-2}
DIR=${BENCH_DIR:-/tmp/e4inspect-bench-cat}
BIN=${E4INSPECT:-$(dirname "$0")/../target/release/e4inspect}
[ -x "$BIN" ] || { echo "build first: cargo build --release" >&2; exit 1; }
mkdir -p "$DIR"
IMG="$DIR/cat-${SIZE_MIB}M.img"
if [ ! -f "$IMG" ]; then
    rm -rf "$DIR/tree" && mkdir -p "$DIR/tree"
    # Random data: mke2fs -d would turn zero blocks into holes.
    head -c "$((SIZE_MIB << 20))" /dev/urandom > "$DIR/tree/big"
    truncate -s "$((SIZE_MIB * 5 / 4 + 64))M" "$IMG"
    E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -d "$DIR/tree" "$IMG"
    rm -rf "$DIR/tree"
fi
best() { # command... -> best wall time in seconds
    local b=""
    for _ in $(seq "$RUNS"); do
        local s e t
        # Through a pipe: writing an mmap'd range to /dev/null would never read it.
        s=$(date +%s.%N); "$@" 2>/dev/null | cat > /dev/null; e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc -l)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
    done
    echo "$b"
}
cat "$IMG" > /dev/null # warm the page cache
ours=$(best "$BIN" cat "$IMG" /big)
theirs=$(best debugfs -R "cat /big" "$IMG")
same=$(cmp <("$BIN" cat "$IMG" /big) <(debugfs -R "cat /big" "$IMG" 2>/dev/null) && echo identical || echo DIFFERENT)
printf 'cat of a %d MiB file (warm, best of %d): e4inspect %.3f s, debugfs %.3f s, ratio %.1fx; output %s\n' \
    "$SIZE_MIB" "$RUNS" "$ours" "$theirs" "$(echo "$theirs / $ours" | bc -l)" "$same"
