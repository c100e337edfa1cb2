#!/bin/sh
# Benchmark (not a test): `e4inspect check` (full, and --quick) against `e2fsck -fn`
#   1. on an 8 TiB sparse ext4 image (metadata only);
#   2. on a populated image of 400,000 files (256-byte inodes, xattrs, some spilling to blocks),
#      made once under $WORK and reused.
# Prints wall time, CPU, max RSS and the peak anonymous memory (RssAnon, sampled) of each.
#
# Usage: scripts/bench-check.sh [8TIB-IMAGE]   (default: a temp file, removed after)
#        WORK=/tmp/e4inspect-bench-check (where the 400k-file image lives; ~4 GB sparse)
#        SKIP_8T=1 / SKIP_400K=1 to run one part only.
# Needs: mke2fs, e2fsck, /usr/bin/time (GNU time), python3 (for the 400k tree), a filesystem that
# holds 8 TiB sparse files. Warm page cache: each tool runs once before it is measured.
set -eu
cd "$(dirname "$0")/.."
: "${CARGO_TARGET_DIR:=target}"
export CARGO_TARGET_DIR
cargo build --release --quiet
BIN="$CARGO_TARGET_DIR/release/e4inspect"
WORK="${WORK:-/tmp/e4inspect-bench-check}"

measure() {
    name="$1"; shift
    "$@" >/dev/null 2>&1 || true
    /usr/bin/time -v "$@" >/dev/null 2>"/tmp/bench-$name.time" || true
    wall=$(grep 'Elapsed (wall clock)' "/tmp/bench-$name.time" | awk '{print $NF}')
    rss=$(grep 'Maximum resident set size' "/tmp/bench-$name.time" | awk '{print $NF}')
    cpu=$(grep 'Percent of CPU' "/tmp/bench-$name.time" | awk '{print $NF}')
    # Anonymous memory (not the file mapping or page cache): peak of RssAnon while running.
    "$@" >/dev/null 2>&1 &
    pid=$!
    peak=0
    while kill -0 "$pid" 2>/dev/null; do
        a=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        [ "${a:-0}" -gt "$peak" ] && peak=$a
        sleep 0.01
    done
    wait "$pid" || true
    echo "$name: wall $wall, CPU $cpu, max RSS ${rss} KiB, peak RssAnon ${peak} KiB"
}

if [ "${SKIP_8T:-0}" != 1 ]; then
    IMG="${1:-}"
    CLEANUP=""
    if [ -z "$IMG" ]; then
        IMG="$(mktemp /var/tmp/e4inspect-bench-XXXXXX.img)"
        CLEANUP="$IMG"
    fi
    trap '[ -n "$CLEANUP" ] && rm -f "$CLEANUP"' EXIT
    if [ ! -s "$IMG" ]; then
        truncate -s 8T "$IMG"
        E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -U 11111111-2222-3333-4444-555555555555 "$IMG"
    fi
    echo "== 8 TiB sparse image"
    measure e4inspect-check "$BIN" check "$IMG"
    measure e4inspect-check-quick "$BIN" check --quick "$IMG"
    measure e2fsck-fn e2fsck -fn "$IMG"
fi

if [ "${SKIP_400K:-0}" != 1 ]; then
    mkdir -p "$WORK"
    BIG="$WORK/files400k.img"
    if [ ! -s "$BIG" ]; then
        tree="$WORK/tree"
        rm -rf "$tree"; mkdir -p "$tree"
        echo "generating 400,000 files (400 dirs x 1000; xattrs on every 4th, 300-byte ones on every 50th)..." >&2
        python3 - "$tree" <<'PY'
import os, sys
root = sys.argv[1]
for d in range(400):
    p = os.path.join(root, "d%03d" % d)
    os.mkdir(p)
    for f in range(1000):
        fp = os.path.join(p, "f%03d" % f)
        with open(fp, "wb") as fh:
            if f % 10 == 0:
                fh.write(b"y" * (f * 7 % 9000))
        if f % 4 == 0:
            os.setxattr(fp, "user.tag", b"x" * (f % 64))
        if f % 50 == 0:
            os.setxattr(fp, "user.big", b"z" * 300)
PY
        E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -I 256 -N 450000 -d "$tree" "$BIG" 4G
        rm -rf "$tree"
    fi
    echo "== 400,000-file image ($BIG)"
    measure e4inspect-check "$BIN" check "$BIG"
    measure e4inspect-check-quick "$BIN" check --quick "$BIG"
    measure e2fsck-fn e2fsck -fn "$BIG"
fi
