#!/usr/bin/env bash
# Benchmark (not a test): `dump` and `check` of a qcow2 image against the raw image it was
# converted from, warm and cold page cache. The qcow2 copies are made with qemu-img in WORKDIR
# (plain, and deflate-compressed with -c) from the populated benchmark image of
# scripts/bench-images.sh; the raw image is not changed.
#
# Each figure is the best of $RUNS runs: wall time, and CPU (user + system, from getrusage: on a
# shared machine the wall time depends on the load, the CPU much less). Cold runs drop the page
# cache first (root only).
#
# Usage: scripts/bench-qcow2.sh [WORKDIR]   (default: a new temp dir)
#   env: BIN (default target/release/e4inspect), RAW (default /tmp/e4inspect-bench/pop-400000.img,
#        made by scripts/bench-images.sh when missing), RUNS (default 5), MODES (default "warm cold"),
#        COMPRESSED=0 to skip the compressed copy (its conversion takes a while).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
bin=${BIN:-target/release/e4inspect}
[ -x "$bin" ] || cargo build --release --quiet
runs=${RUNS:-5}
modes=${MODES:-warm cold}
raw=${RAW:-/tmp/e4inspect-bench/pop-400000.img}
command -v qemu-img >/dev/null || { echo "qemu-img not installed (apt-get install qemu-utils)" >&2; exit 1; }
if [ ! -f "$raw" ]; then
  . scripts/bench-images.sh
  make_populated "$(dirname "$raw")" 400000
fi
if [ "$(id -u)" != 0 ]; then
  echo "not root: no cold runs (drop_caches needs root)" >&2
  modes=warm
fi
plain=$work/$(basename "$raw" .img).qcow2
[ -f "$plain" ] || qemu-img convert -O qcow2 "$raw" "$plain"
images=("$raw" "$plain")
if [ "${COMPRESSED:-1}" = 1 ]; then
  packed=$work/$(basename "$raw" .img).c.qcow2
  [ -f "$packed" ] || qemu-img convert -c -O qcow2 "$raw" "$packed"
  images+=("$packed")
fi
# Outputs first: the qcow2 copies must read as the raw image.
for img in "${images[@]:1}"; do
  for cmd in dump check; do
    if ! cmp -s <("$bin" $cmd "$raw" 2>&1 | sed "s|$raw|IMG|g") <("$bin" $cmd "$img" 2>&1 | sed "s|$img|IMG|g"); then
      echo "OUTPUT DIFFERS: $cmd $img" >&2
      exit 1
    fi
  done
done
measure() { # mode, command...: "wall W ms  cpu C ms", best of $runs each
  python3 - "$runs" "$@" <<'EOF'
import resource, subprocess, sys, time
runs, mode, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
wall = cpu = None
for _ in range(runs):
    if mode == "cold":
        subprocess.run(["sync"])
        open("/proc/sys/vm/drop_caches", "w").write("3\n")
    else:
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    w = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    c = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    wall = w if wall is None else min(wall, w)
    cpu = c if cpu is None else min(cpu, c)
print(f"wall {wall * 1000:8.1f} ms  cpu {cpu * 1000:8.1f} ms")
EOF
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in $modes; do
  for cmd in dump check; do
    for img in "${images[@]}"; do
      printf '%-5s %-6s %-28s %s\n' "$mode" "$cmd" "$(basename "$img")" "$(measure "$mode" "$bin" "$cmd" "$img")"
    done
  done
done
