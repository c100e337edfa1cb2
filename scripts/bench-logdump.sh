#!/usr/bin/env bash
# Benchmark: e4inspect journal vs debugfs logdump on a busy journal: an ext4 image with a 256 MiB
# journal is loop-mounted (root needed), 3000 small files are written and fsync'ed so the log
# holds thousands of transactions, and the image is copied while mounted (a crash image).
# Usage: scripts/bench-logdump.sh [WORKDIR]
set -euo pipefail
work=${1:-$(mktemp -d)}
bin=${BIN:-$(dirname "$0")/../target/release/e4inspect}
[ -x "$bin" ] || cargo build --release --manifest-path "$(dirname "$0")/../Cargo.toml"
img=$work/busy.img
crash=$work/busy-crash.img
if [ ! -f "$crash" ]; then
  rm -f "$img"; truncate -s 2G "$img"
  mke2fs -q -F -t ext4 -J size=256 "$img"
  mkdir -p "$work/mnt"
  mount -o loop "$img" "$work/mnt"
  # Every fsync commits a transaction; copied within seconds, before writeback lets jbd2
  # checkpoint, the live log keeps them all (and the revokes of the deleted directories).
  python3 - "$work/mnt" <<'PY'
import os, sys, shutil
root = sys.argv[1]
for d in range(20):
    dd = os.path.join(root, f"d{d}")
    os.mkdir(dd)
    for i in range(150):
        fd = os.open(os.path.join(dd, f"f{i}"), os.O_CREAT | os.O_WRONLY)
        os.write(fd, b"x" * 100)
        os.fsync(fd)
        os.close(fd)
    if d >= 10:
        shutil.rmtree(os.path.join(root, f"d{d - 10}"))
PY
  cp "$img" "$crash"
  umount "$work/mnt"
fi
run() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time.$label" "$@" > "$work/out.$label" 2>/dev/null || true
  read -r secs rss < "$work/time.$label"
  printf '%-10s %8.3f s   peak RSS %s KiB   %s lines\n' "$label" "$secs" "$rss" "$(wc -l < "$work/out.$label")"
  echo "$secs" > "$work/t.$label"
}
for f in "" "-a" "-a -O" "-a -c"; do
  echo "== logdump ${f:-(no flags)}"
  run debugfs debugfs -R "logdump $f" "$crash"
  run e4inspect "$bin" journal $f "$crash"
  if cmp -s "$work/out.debugfs" "$work/out.e4inspect"; then echo "outputs identical"; else echo "OUTPUTS DIFFER"; fi
  awk -v a="$(cat "$work/t.debugfs")" -v b="$(cat "$work/t.e4inspect")" \
    'BEGIN{ if (b > 0) printf "speedup: %.1fx\n", a/b; else print "speedup: (too fast to time)" }'
done
