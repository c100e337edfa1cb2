#!/usr/bin/env bash
# Benchmark (not a test): issue 24's two speed bars measured together, in one sitting, round
# robin: every round runs each command twice, timing the second run (so that a change in the
# machine's speed, which on a shared host moves wall times by half, falls on every command alike,
# while no timed run follows another command: a virtual CPU left idle by the single-threaded
# e2fsck wakes slowly for the next parallel scan), then the medians, the CPU times and the ratios
# are printed:
#   - `xattrs` against `e2fsck -fn` (the bar: e2fsck takes >= 10x as long);
#   - `find --xattr NAME`, `NAME=VALUE` and `NAME=~REGEX` against `xattrs` (the bar: <= 1.2x).
# Warm: the image is read once first, and the first two rounds are not counted.
#
# Usage: scripts/bench-bars.sh [IMAGE]   (default /tmp/e4inspect-bench/pop-400000.img)
#   env: BIN (default target/release/e4inspect), ROUNDS (default 30), NAME, VALUE, REGEX
#        (defaults: bench-images' user.tag, vvvv and ^v{20,}$).
set -euo pipefail
cd "$(dirname "$0")/.."
img=${1:-/tmp/e4inspect-bench/pop-400000.img}
bin=${BIN:-target/release/e4inspect}
[ -x "$bin" ] || cargo build --release --quiet
[ -f "$img" ] || { echo "no image $img (scripts/bench-images.sh makes it)" >&2; exit 1; }
name=${NAME:-user.tag}
value=${VALUE:-vvvv}
regex=${REGEX:-'^v{20,}$'}
scripts/warm-image.sh "$img"   # warm, in large folios (see warm-image.sh)
echo "image: $img   load before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${ROUNDS:-30}" \
  "xattrs" "$bin xattrs --no-progress $img" \
  "find --xattr $name" "$bin find $img --xattr $name" \
  "find --xattr $name=$value" "$bin find $img --xattr $name=$value" \
  "find --xattr $name=~$regex" "$bin find $img --xattr $name=~$regex" \
  "e2fsck -fn" "e2fsck -fn $img" <<'PY'
import os, shlex, statistics, sys, time
rounds = int(sys.argv[1])
pairs = list(zip(sys.argv[2::2], sys.argv[3::2]))
wall = {label: [] for label, _ in pairs}
cpu = {label: [] for label, _ in pairs}
null = os.open(os.devnull, os.O_WRONLY)
def run(argv):
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execvp(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    took = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 4):
        sys.exit(f"{shlex.join(argv)}: exit status {code}")
    return took, usage
for r in range(rounds + 2):
    for label, cmd in pairs:
        argv = shlex.split(cmd)
        run(argv)
        took, usage = run(argv)
        if r >= 2:
            wall[label].append(took * 1e3)
            cpu[label].append((usage.ru_utime + usage.ru_stime) * 1e3)
med = {label: statistics.median(times) for label, times in wall.items()}
print(f"{'command':36} {'median ms':>9} {'mean':>7} {'stdev':>6} {'cpu ms':>7} {'vs xattrs':>9}")
for label, times in wall.items():
    print(f"{label:36} {med[label]:9.1f} {statistics.mean(times):7.1f} {statistics.stdev(times):6.1f}"
          f" {statistics.median(cpu[label]):7.1f} {med[label] / med['xattrs']:9.2f}")
print(f"e2fsck -fn / xattrs (median): {med['e2fsck -fn'] / med['xattrs']:.2f}x (bar: >= 10)")
worst = max((med[l] / med['xattrs'], l) for l in med if l.startswith("find"))
print(f"slowest find / xattrs (median): {worst[0]:.2f}x, {worst[1]} (bar: <= 1.2)")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
