#!/usr/bin/env bash
# Benchmark: e4inspect freefrag vs e2freefrag on an 8 TiB sparse ext4 image (made like
# bench-dump.sh), checking the outputs are identical. One timed run each (e2freefrag takes tens
# of seconds at 8 TiB). Usage: scripts/bench-freefrag.sh [SIZE] [WORKDIR]  (defaults: 8T, temp)
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
run() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time.$label" "$@" > "$work/out.$label" 2>/dev/null || true
  read -r secs rss < "$work/time.$label"
  printf '%-10s %8.3f s   peak RSS %s KiB\n' "$label" "$secs" "$rss"
  echo "$secs" > "$work/t.$label"
}
for c in "" "-c 64"; do
  echo "== freefrag ${c:-(default chunk)}"
  run e2freefrag e2freefrag $c "$img"
  run e4inspect "$bin" freefrag $c "$img"
  sed -i "s|^Device: .*||" "$work/out.e2freefrag" "$work/out.e4inspect"
  if cmp -s "$work/out.e2freefrag" "$work/out.e4inspect"; then echo "outputs identical"; else echo "OUTPUTS DIFFER"; fi
  awk -v a="$(cat "$work/t.e2freefrag")" -v b="$(cat "$work/t.e4inspect")" \
    'BEGIN{ if (b > 0) printf "speedup: %.1fx\n", a/b; else print "speedup: (too fast to time)" }'
done
