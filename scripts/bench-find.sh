#!/usr/bin/env bash
# Benchmark (not a test): `e4inspect find --xattr` (a name, NAME=VALUE, NAME=~REGEX) against
# `e4inspect xattrs` on the 400,000-file image (xattrs on every 4th file, some spilling to an
# xattr block), warm, in the same sitting, with peak RSS. The target (issue 24): find --xattr
# within 1.2x of xattrs. Also times a name-only find (the tree walk alone) and a listing of
# everything, for scale.
#
# Interleaved: ROUNDS rounds of `hyperfine -N` over all the commands (RUNS/ROUNDS runs each per
# round; 3 warm-up runs in the first, 1 in the others), so that a change in the machine's load
# falls on every command alike; the per-run times of all rounds are then summarised together
# (mean, median, user and system CPU, ratio to xattrs).
#
# Usage: scripts/bench-find.sh [WORKDIR]     (default /tmp/e4inspect-bench)
#   env: BIN (default target/release/e4inspect), RUNS (default 20), ROUNDS (default 5),
#        NAME (default: the most common xattr name of the image, from `xattrs --json`),
#        VALUE and REGEX (default vvvv and ^v{20,}$: values of bench-images' user.tag).
# On a shared machine wall times depend on the load (printed before and after): compare the
# ratios and the CPU times, not the absolute wall times.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/e4inspect-bench}
bin=${BIN:-target/release/e4inspect}
[ -x "$bin" ] || cargo build --release --quiet
runs=${RUNS:-20}
rounds=${ROUNDS:-5}
. scripts/bench-images.sh
pop=$work/pop-400000.img
[ -f "$pop" ] || make_populated "$work" 400000
name=${NAME:-$("$bin" xattrs --json --no-progress "$pop" | python3 -c 'import json,sys; print(json.load(sys.stdin)["top_names"][0]["name"])')}
value=${VALUE:-vvvv}
regex=${REGEX:-'^v{20,}$'}
echo "image: $pop   name: $name"
for t in "$name" "$name=$value" "$name=~$regex"; do
  echo "  find --xattr '$t': $("$bin" find "$pop" --xattr "$t" | wc -l) paths"
done
scripts/warm-image.sh "$pop"   # warm, in large folios (see warm-image.sh)
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(mktemp -d)
per=$(( (runs + rounds - 1) / rounds ))
for r in $(seq 1 "$rounds"); do
  warm=1; [ "$r" = 1 ] && warm=3
  hyperfine -N -w "$warm" -r "$per" --style none --export-json "$out/round$r.json" \
    -n xattrs "$bin xattrs --no-progress $pop" \
    -n "find --xattr $name" "$bin find $pop --xattr $name" \
    -n "find --xattr $name=$value" "$bin find $pop --xattr $name=$value" \
    -n "find --xattr $name=~$regex" "$bin find $pop --xattr $name=~$regex" \
    -n "find --name 'f00*'" "$bin find $pop --name f00*" \
    -n "find (everything)" "$bin find $pop" > /dev/null
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" <<'PY'
import json, statistics, sys, glob
runs = {}
for f in sorted(glob.glob(sys.argv[1] + "/round*.json")):
    for r in json.load(open(f))["results"]:
        d = runs.setdefault(r["command"], {"t": [], "u": [], "s": []})
        # hyperfine 1.15 exports the CPU times as means per round: weighted by its runs.
        d["t"] += r["times"]; d["u"] += [r["user"]] * len(r["times"]); d["s"] += [r["system"]] * len(r["times"])
base = runs["xattrs"]
bmean, bmed = statistics.mean(base["t"]), statistics.median(base["t"])
print(f"{'command':34} {'runs':>4} {'mean ms':>8} {'median':>8} {'min':>7} {'user':>6} {'sys':>6} {'x mean':>7} {'x median':>8}")
for c, d in runs.items():
    t = d["t"]
    print(f"{c:34} {len(t):4} {1e3*statistics.mean(t):8.1f} {1e3*statistics.median(t):8.1f} {1e3*min(t):7.1f}"
          f" {1e3*statistics.mean(d['u']):6.1f} {1e3*statistics.mean(d['s']):6.1f}"
          f" {statistics.mean(t)/bmean:7.2f} {statistics.median(t)/bmed:8.2f}")
PY
rm -rf "$out"
for c in "xattrs --no-progress $pop" "find $pop --xattr $name"; do
  /usr/bin/time -f "peak RSS %M KiB: $c" "$bin" $c >/dev/null
done
