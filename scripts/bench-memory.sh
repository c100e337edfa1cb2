#!/usr/bin/env bash
# Peak anonymous memory (RssAnon, sampled from /proc/PID/status every 10 ms) and wall time of
# each image-reading e4inspect command on an 8 TiB sparse ext4 image (truncate -s 8T, mke2fs -t
# ext4 with lazy inode-table and journal init), with dumpe2fs / e2fsck -fn for reference.
# Issue 7's bound: anonymous memory under 64 MiB. Not a test: prints figures.
#
#   scripts/bench-memory.sh [IMAGE]      (default: builds /var/tmp/e4inspect-8t.img once)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${E4INSPECT:-${CARGO_TARGET_DIR:-$root/target}/release/e4inspect}
[ -x "$bin" ] || (cd "$root" && cargo build --release)
img=${1:-/var/tmp/e4inspect-8t.img}
if [ ! -s "$img" ]; then
    truncate -s 8T "$img"
    E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -E lazy_itable_init=1,lazy_journal_init=1 "$img"
fi

# peak RssAnon (KiB) of a command, and its wall time; stdout discarded
measure() {
    local start end pid peak=0 kb
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        kb=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        [ -n "$kb" ] && [ "$kb" -gt "$peak" ] && peak=$kb
        sleep 0.01
    done
    wait "$pid" || true
    end=$(date +%s.%N)
    printf '%-44s peak RssAnon %7.1f MiB   %6.2f s\n' "$*" "$(echo "$peak / 1024" | bc -l)" "$(echo "$end - $start" | bc -l)" | sed "s|$img|IMG|; s|$bin|e4inspect|"
}

echo "image: $img ($(du -h --apparent-size "$img" | cut -f1) apparent, $(du -h "$img" | cut -f1) allocated)"
# Every subcommand that reads an image, from --help (check/inode/xattrs once they exist).
for sub in $("$bin" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR>1 && $1 != "help" {print $1}'); do
    case $sub in
        dump) measure "$bin" dump "$img"; measure "$bin" dump -h "$img"; measure "$bin" dump --json "$img" ;;
        check | xattrs) measure "$bin" "$sub" "$img" ;;
        inode) measure "$bin" inode "$img" 2 11 / ;;
        fit) measure "$bin" fit --from-image "$img" ;;
        advise) measure "$bin" advise --size 8T --from-image "$img" ;;
    esac
done
command -v dumpe2fs >/dev/null && measure dumpe2fs "$img"
command -v e2fsck >/dev/null && measure e2fsck -fn "$img"
