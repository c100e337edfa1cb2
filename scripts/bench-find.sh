#!/usr/bin/env bash
# Benchmark (not a test): `e4inspect find --xattr NAME` against `e4inspect xattrs` on the
# 400,000-file image (xattrs on every 4th file, some spilling to an xattr block), warm, in the
# same sitting (hyperfine, the commands interleaved run by run), with peak RSS. The target
# (issue 24): find --xattr within 1.2x of xattrs. Also times a name-only find (the tree walk
# alone) and find(1)-like listing of everything, for scale.
#
# Usage: scripts/bench-find.sh [WORKDIR]     (default /tmp/e4inspect-bench)
#   env: BIN (default target/release/e4inspect), RUNS (default 15), NAME (default: the most
#        common xattr name of the image, from `xattrs --json`).
# On a shared machine wall times depend on the load (printed before and after).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/e4inspect-bench}
bin=${BIN:-target/release/e4inspect}
[ -x "$bin" ] || cargo build --release --quiet
runs=${RUNS:-15}
. scripts/bench-images.sh
pop=$work/pop-400000.img
[ -f "$pop" ] || make_populated "$work" 400000
name=${NAME:-$("$bin" xattrs --json --no-progress "$pop" | python3 -c 'import json,sys; print(json.load(sys.stdin)["top_names"][0]["name"])')}
echo "image: $pop   name: $name   matches: $("$bin" find "$pop" --xattr "$name" | wc -l)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N -w 3 -r "$runs" \
  -n xattrs "$bin xattrs --no-progress $pop" \
  -n "find --xattr $name" "$bin find $pop --xattr $name" \
  -n "find --name 'f00*'" "$bin find $pop --name f00*" \
  -n "find (everything)" "$bin find $pop"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "xattrs --no-progress $pop" "find $pop --xattr $name"; do
  /usr/bin/time -f "peak RSS %M KiB: $c" "$bin" $c >/dev/null
done
