#!/usr/bin/env bash
# Benchmark: e4inspect dump vs dumpe2fs on an 8 TiB sparse ext4 image (lazy init keeps it small on
# disk). Prints wall time, peak RSS and anonymous memory, and checks the outputs are identical.
# Usage: scripts/bench-dump.sh [SIZE] [WORKDIR]     (defaults: 8T, a temp dir)
set -euo pipefail
size=${1:-8T}
work=${2:-$(mktemp -d)}
bin=${BIN:-$(dirname "$0")/../target/release/e4inspect}
[ -x "$bin" ] || cargo build --release --manifest-path "$(dirname "$0")/../Cargo.toml"
img=$work/bench-$size.img
if [ ! -f "$img" ]; then
  truncate -s "$size" "$img"
  E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -U 0f0e0d0c-0b0a-0908-0706-050403020100 \
    -E lazy_itable_init=1,lazy_journal_init=1 "$img"
fi
measure() { # label, command...
  local label=$1; shift
  local best=999999
  for i in 1 2 3; do
    local t0=$(date +%s.%N)
    "$@" > "$work/out.$label" 2>/dev/null || true
    local t1=$(date +%s.%N)
    best=$(echo "$t0 $t1 $best" | awk '{d=$2-$1; print (d<$3)?d:$3}')
  done
  /usr/bin/time -f "%M" -o "$work/rss.$label" "$@" > /dev/null 2>&1 || true
  printf '%-10s best of 3: %8.3f s   peak RSS %s KiB\n' "$label" "$best" "$(tail -1 "$work/rss.$label")"
  echo "$best" > "$work/t.$label"
}
measure dumpe2fs dumpe2fs "$img"
measure e4inspect "$bin" dump "$img"
if cmp -s "$work/out.dumpe2fs" "$work/out.e4inspect"; then echo "outputs identical ($(wc -c < "$work/out.e4inspect") bytes)"; else echo "OUTPUTS DIFFER"; fi
awk -v a="$(cat "$work/t.dumpe2fs")" -v b="$(cat "$work/t.e4inspect")" 'BEGIN{printf "speedup: %.1fx\n", a/b}'
# Anonymous memory: sample RssAnon of a run at its peak via /proc (max over samples).
"$bin" dump "$img" > /dev/null & pid=$!
peak=0
while kill -0 $pid 2>/dev/null; do
  a=$(awk '/RssAnon/{print $2}' /proc/$pid/status 2>/dev/null || echo 0); [ -n "$a" ] && [ "$a" -gt "$peak" ] && peak=$a
  sleep 0.005
done
echo "e4inspect dump peak RssAnon: $peak KiB"
