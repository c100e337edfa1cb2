#!/usr/bin/env bash
# Benchmark: e4inspect ncheck of 1,000 inodes and icheck of 1,000 blocks against debugfs for the
# same request, on the 400,000-file image, in the same sitting (hyperfine, interleaved, warm
# cache); the outputs are checked identical first. Prints the load average (the machine may be
# shared). Usage: scripts/bench-maps.sh [IMAGE]  (default /tmp/e4inspect-bench/pop-400000.img)
set -euo pipefail
img=${1:-/tmp/e4inspect-bench/pop-400000.img}
bin=${BIN:-$(dirname "$0")/../target/release/e4inspect}
[ -x "$bin" ] || cargo build --release --manifest-path "$(dirname "$0")/../Cargo.toml"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# 1,000 inodes spread over the used ones, 1,000 blocks spread over the whole filesystem.
inodes=$("$bin" dump --json -h "$img" | python3 -c '
import json, sys
sb = json.load(sys.stdin)["superblock"]
used = sb["inodes_count"] - sb["free_inodes_count"]
step = max(1, used // 1000)
print(" ".join(str(12 + i * step) for i in range(1000)))')
blocks=$("$bin" dump --json -h "$img" | python3 -c '
import json, sys
n = json.load(sys.stdin)["superblock"]["blocks_count"]
print(" ".join(str(i * (n // 1000)) for i in range(1000)))')
for cmd in ncheck icheck; do
  args=$([ "$cmd" = ncheck ] && echo "$inodes" || echo "$blocks")
  debugfs -R "$cmd $args" "$img" > "$work/debugfs.$cmd" 2>/dev/null
  "$bin" "$cmd" "$img" $args > "$work/e4inspect.$cmd" 2>/dev/null || true
  if cmp -s "$work/debugfs.$cmd" "$work/e4inspect.$cmd"; then
    echo "$cmd: outputs identical ($(wc -l < "$work/debugfs.$cmd") lines)"
  else
    echo "$cmd: OUTPUTS DIFFER"
  fi
  echo "$args" > "$work/args.$cmd"
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N --warmup 2 --runs 10 --style basic \
  -n "debugfs ncheck" "debugfs -R 'ncheck $(cat "$work/args.ncheck")' $img" \
  -n "e4inspect ncheck" "$bin ncheck $img $(cat "$work/args.ncheck")" \
  -n "debugfs icheck" "debugfs -R 'icheck $(cat "$work/args.icheck")' $img" \
  -n "e4inspect icheck" "$bin icheck $img $(cat "$work/args.icheck")" \
  --export-markdown "$work/summary.md" 2>&1 | grep -v '^ *$'
cat "$work/summary.md"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
