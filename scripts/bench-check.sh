#!/usr/bin/env bash
# Benchmark (not a test): full `e4inspect check` against `e2fsck -fn`, warm and cold page cache,
# with peak RSS, on
#   1. an 8 TiB sparse ext4 image (65,536 groups, metadata only);
#   2. a populated image of 400,000 files (256-byte inodes, xattrs on every 4th file, some
#      spilling to an xattr block) — the images of scripts/bench-cold.sh, made once and reused.
# Each timing is the best (minimum wall) of $RUNS runs; user and system CPU and peak RSS
# (/usr/bin/time %M, KiB) are those of the best run. Cold runs drop the page cache first (root
# only: echo 3 > /proc/sys/vm/drop_caches); without root only warm runs are made. Warm runs are
# preceded by one unmeasured run that loads the page cache.
#
# Usage: scripts/bench-check.sh [WORKDIR]     (default /tmp/e4inspect-bench)
#   env: BIN (default target/release/e4inspect), OLD_BIN (an older build: printed as "before"),
#        RUNS (default 3), MODES (default "warm cold"), SKIP_8T=1 / SKIP_400K=1, QUICK=1 (also
#        time check --quick).
# On a shared machine the wall times depend on the load (printed): compare the CPU columns too.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/e4inspect-bench}
mkdir -p "$work"
bin=${BIN:-target/release/e4inspect}
[ -x "$bin" ] || cargo build --release --quiet
runs=${RUNS:-3}
modes=${MODES:-warm cold}
if [ "$(id -u)" != 0 ]; then
  echo "not root: no cold runs (drop_caches needs root)" >&2
  modes=warm
fi

. scripts/bench-images.sh
big=$work/sparse-8T.img
[ "${SKIP_8T:-0}" = 1 ] || make_sparse_8t "$work"
pop=$work/pop-400000.img
[ "${SKIP_400K:-0}" = 1 ] || make_populated "$work" 400000

drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
# run LABEL MODE CMD...: best of $runs; prints wall, CPU, peak RSS; sets REPLY to the wall.
run() {
  local label=$1 mode=$2; shift 2
  local best=999999 line="" t
  [ "$mode" = warm ] && { "$@" >/dev/null 2>&1 || true; }
  for _ in $(seq "$runs"); do
    [ "$mode" = cold ] && drop
    local t0=$EPOCHREALTIME
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.$$" "$@" >/dev/null 2>&1 || true
    # Wall to the microsecond (time's %e has 10 ms steps, too coarse for a 50 ms run).
    t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.4f", b-a}')
    sed -i "s/^[^ ]*/$t/" "$work/time.$$"
    if awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then
      best=$t
      line=$(cat "$work/time.$$")
    fi
  done
  rm -f "$work/time.$$"
  read -r wall user sys rss <<<"$line"
  printf '  %-24s %-4s %7.3f s wall  %5.2f user %5.2f sys  peak RSS %6.1f MB\n' \
    "$label" "$mode" "$wall" "$user" "$sys" "$(awk -v k="$rss" 'BEGIN{print k/1024}')"
  REPLY=$wall
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.1fx", a/b; else print "-" }'; }

bench_image() {
  local name=$1 img=$2 mode=$3 ref mine old
  echo "== $name, $mode page cache (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  run "e2fsck -fn" "$mode" e2fsck -fn "$img"; ref=$REPLY
  if [ -n "${OLD_BIN:-}" ]; then
    run "before: check" "$mode" "$OLD_BIN" check "$img"; old=$REPLY
    echo "    before: e2fsck / check = $(ratio "$ref" "$old")"
  fi
  run "check" "$mode" "$bin" check "$img"; mine=$REPLY
  echo "    e2fsck / check = $(ratio "$ref" "$mine")"
  if [ "${QUICK:-0}" = 1 ]; then
    run "check --quick" "$mode" "$bin" check --quick "$img"
  fi
}

for mode in $modes; do
  [ "${SKIP_8T:-0}" != 1 ] && bench_image "8 TiB sparse image" "$big" "$mode"
  [ "${SKIP_400K:-0}" != 1 ] && bench_image "400,000-file image" "$pop" "$mode"
done
