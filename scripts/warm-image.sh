#!/usr/bin/env bash
# Put an image in the page cache the same way every time, for warm benchmarks: drop its cached
# pages (POSIX_FADV_DONTNEED: only this file's clean pages) and read it whole, sequentially.
# Why: a host that reclaims page cache behind our back (DAMON's pageout runs on these machines)
# leaves holes that a later scan refills page by page (the tool reads with POSIX_FADV_RANDOM), as
# 4 KiB folios; a sequential read fills the file in large folios instead. The difference is large:
# on pop-400000.img `xattrs` took 38.4 ms on a cache refilled page by page (system time 33 ms)
# and 30.8 ms after this (system time 21 ms), e2fsck -fn alike ~350 ms, in the same minute.
# A `cat` alone does not re-read what is already cached, so it cannot undo the holes.
#
# Usage: scripts/warm-image.sh IMAGE...
set -euo pipefail
for img in "$@"; do
    python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)' "$img"
    cat "$img" > /dev/null
done
