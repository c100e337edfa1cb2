#!/bin/sh
# Benchmark `e4inspect check` against `e2fsck -fn` on an 8 TiB sparse ext4 image.
# Not run by the tests. Usage: scripts/bench-check.sh [IMAGE] (default: a temp file, removed after).
# Needs: mke2fs, e2fsck, /usr/bin/time (GNU time), a filesystem that holds 8 TiB sparse files.
set -eu
cd "$(dirname "$0")/.."
: "${CARGO_TARGET_DIR:=target}"
export CARGO_TARGET_DIR
cargo build --release --quiet
BIN="$CARGO_TARGET_DIR/release/e4inspect"
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
measure() {
    name="$1"; shift
    /usr/bin/time -v "$@" >/dev/null 2>"/tmp/bench-$name.time" || true
    wall=$(grep 'Elapsed (wall clock)' "/tmp/bench-$name.time" | awk '{print $NF}')
    rss=$(grep 'Maximum resident set size' "/tmp/bench-$name.time" | awk '{print $NF}')
    cpu=$(grep 'Percent of CPU' "/tmp/bench-$name.time" | awk '{print $NF}')
    echo "$name: wall $wall, max RSS ${rss} KiB, CPU $cpu"
}
# Warm the page cache once so both tools read the same cached metadata.
"$BIN" check "$IMG" >/dev/null || true
measure e4inspect-check "$BIN" check "$IMG"
measure e2fsck-fn e2fsck -fn "$IMG"
# Anonymous memory (not the file mapping): peak of RssAnon while checking.
"$BIN" check "$IMG" >/dev/null &
pid=$!
peak=0
while kill -0 "$pid" 2>/dev/null; do
    a=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    [ "${a:-0}" -gt "$peak" ] && peak=$a
    sleep 0.01
done
echo "e4inspect-check: peak RssAnon ${peak} KiB (sampled every 10 ms)"
