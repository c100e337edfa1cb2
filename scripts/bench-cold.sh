#!/usr/bin/env bash
# Benchmark (not a test): cold and warm page cache, side by side with e2fsprogs.
#   - dump vs dumpe2fs and check vs e2fsck -fn on an 8 TiB sparse ext4 image;
#   - xattrs and check vs e2fsck -fn on a populated image (default 400,000 files, 256-byte
#     inodes, xattrs on every 4th file, some spilling to a block).
# Cold runs drop the page cache first (root only: echo 3 > /proc/sys/vm/drop_caches) and report
# how much of the image the run pulled into the page cache (fincore).
# Usage: scripts/bench-cold.sh [WORKDIR]       env: BIN (default target/release/e4inspect),
#        OLD_BIN (an older build to compare), FILES (default 400000), RUNS (default 3),
#        ONLY (run only the rows whose label contains it, e.g. ONLY=dump: dumpe2fs and dump on
#        the 8 TiB image; the populated image is then not built unless a row needs it)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/e4inspect-bench}
mkdir -p "$work"
bin=${BIN:-target/release/e4inspect}
[ -x "$bin" ] || cargo build --release --quiet
files=${FILES:-400000}
runs=${RUNS:-3}
[ "$(id -u)" = 0 ] || { echo "cold runs need root (drop_caches); warm only" >&2; }

. scripts/bench-images.sh
big=$work/sparse-8T.img
make_sparse_8t "$work"
pop=$work/pop-$files.img
case "e2fsck -fn e4inspect xattrs e4inspect check" in *"${ONLY:-}"*) make_populated "$work" "$files" ;; esac

drop() { [ "$(id -u)" = 0 ] && sync && echo 3 > /proc/sys/vm/drop_caches; }
cached_mb() { fincore -b -n -o RES "$1" 2>/dev/null | awk '{printf "%.1f", $1/1048576}'; }
# time LABEL MODE IMAGE CMD...: best wall of $runs runs; MODE cold drops caches before each.
bench() {
  local label=$1 mode=$2 img=$3; shift 3
  case "$label" in *"${ONLY:-}"*) ;; *) return 0 ;; esac
  local best=999999 pulled=0
  for _ in $(seq "$runs"); do
    [ "$mode" = cold ] && drop
    [ "$mode" = warm ] && "$@" >/dev/null 2>&1 || true
    local t0 t1
    t0=$(date +%s.%N)
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    local d; d=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
    best=$(awk -v a="$d" -v b="$best" 'BEGIN{print (a<b)?a:b}')
    [ "$mode" = cold ] && pulled=$(cached_mb "$img")
  done
  read -r _ user sys rss < "$work/time"
  if [ "$mode" = cold ]; then
    printf '%-28s %-5s %8.3f s  (user %s s, sys %s s, RSS %s KiB, page cache pulled %s MB)\n' \
      "$label" "$mode" "$best" "$user" "$sys" "$rss" "$pulled"
  else
    printf '%-28s %-5s %8.3f s  (user %s s, sys %s s, RSS %s KiB)\n' "$label" "$mode" "$best" "$user" "$sys" "$rss"
  fi
}

for mode in cold warm; do
  echo "== 8 TiB sparse image, $mode page cache"
  bench "dumpe2fs" $mode "$big" dumpe2fs "$big"
  bench "e4inspect dump" $mode "$big" "$bin" dump "$big"
  [ -n "${OLD_BIN:-}" ] && bench "old e4inspect dump" $mode "$big" "$OLD_BIN" dump "$big"
  bench "e2fsck -fn" $mode "$big" e2fsck -fn "$big"
  bench "e4inspect check" $mode "$big" "$bin" check "$big"
  [ -n "${OLD_BIN:-}" ] && bench "old e4inspect check" $mode "$big" "$OLD_BIN" check "$big"
  echo "== $files-file image, $mode page cache"
  bench "e2fsck -fn" $mode "$pop" e2fsck -fn "$pop"
  bench "e4inspect xattrs" $mode "$pop" "$bin" xattrs --no-progress "$pop"
  [ -n "${OLD_BIN:-}" ] && bench "old e4inspect xattrs" $mode "$pop" "$OLD_BIN" xattrs --no-progress "$pop"
  bench "e4inspect check" $mode "$pop" "$bin" check "$pop"
done
if cmp -s <(dumpe2fs "$big" 2>/dev/null) <("$bin" dump "$big" 2>/dev/null); then
  echo "dump output identical to dumpe2fs"
else
  echo "DUMP OUTPUT DIFFERS"
fi
