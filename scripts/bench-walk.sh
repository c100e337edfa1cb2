#!/usr/bin/env bash
# Benchmark (not a test): the scans on the one inode-table walk, warm, in one sitting, against
# e2fsck -fn (read-only) on the same image: `xattrs`, `fit --from-image` and `check` (hyperfine,
# interleaved runs), then each one's peak anonymous memory (RssAnon sampled every 5 ms, as
# scripts/bench-memory.sh does) and the load average. Issue 24's bar: xattrs >= 10x e2fsck -fn
# with anonymous memory < 64 MiB; check no slower than before (pass OLD=path/to/e4inspect to run
# that build's commands too).
#
#   scripts/bench-walk.sh [IMAGE]   (default /tmp/e4inspect-bench/pop-400000.img)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${E4INSPECT:-${CARGO_TARGET_DIR:-$root/target}/release/e4inspect}
[ -x "$bin" ] || (cd "$root" && cargo build --release)
img=${1:-/tmp/e4inspect-bench/pop-400000.img}
[ -f "$img" ] || { echo "no image $img (scripts/bench-images.sh makes it)" >&2; exit 1; }
"$root/scripts/warm-image.sh" "$img"   # warm, in large folios (see warm-image.sh)
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
cmds=("$bin xattrs --no-progress $img" "$bin fit --from-image $img" "$bin check --no-progress $img")
if [ -n "${OLD:-}" ]; then
    cmds+=("$OLD xattrs --no-progress $img" "$OLD fit --from-image $img" "$OLD check --no-progress $img")
fi
cmds+=("e2fsck -fn $img")
hyperfine -N -w 2 -r "${RUNS:-15}" "${cmds[@]}" 2>&1 | grep -v '^ *$'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

peak() { # peak RssAnon (KiB) of a command
    local pid p=0 kb
    "$@" >/dev/null 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        kb=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        [ -n "$kb" ] && [ "$kb" -gt "$p" ] && p=$kb
        sleep 0.005
    done
    wait "$pid" || true
    echo "$p"
}
for c in "${cmds[@]}"; do
    # shellcheck disable=SC2086
    kb=$(peak $c)
    # shellcheck disable=SC2086
    rss=$(/usr/bin/time -f %M $c 2>&1 >/dev/null | tail -1)
    printf '%-70s peak RssAnon %6.1f MiB  max RSS %6.1f MiB\n' "${c//$img/IMG}" "$(echo "$kb / 1024" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
done
