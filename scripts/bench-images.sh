# Sourced by the benchmark scripts (not run on its own): the two shared benchmark images, made
# once in the work directory and reused.
#   make_sparse_8t WORK      -> WORK/sparse-8T.img: 8 TiB sparse ext4 (65,536 groups, metadata only)
#   make_populated WORK N    -> WORK/pop-N.img: N files in directories of 1,000, 256-byte inodes,
#                               xattrs on every 4th file, a 300-byte one on every 97th (spills)

make_sparse_8t() {
  local img=$1/sparse-8T.img
  [ -f "$img" ] && return 0
  truncate -s 8T "$img"
  E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -U 0f0e0d0c-0b0a-0908-0706-050403020100 \
    -E lazy_itable_init=1,lazy_journal_init=1 "$img"
}

make_populated() {
  local work=$1 files=$2
  local img=$work/pop-$files.img tree=$work/tree
  [ -f "$img" ] && return 0
  rm -rf "$tree"; mkdir -p "$tree"
  echo "generating $files files..." >&2
  python3 - "$tree" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
per = 1000
for i in range(n):
    d = os.path.join(root, "d%04d" % (i // per))
    if i % per == 0:
        os.mkdir(d)
    p = os.path.join(d, "f%04d" % (i % per))
    with open(p, "wb") as f:
        f.write(b"x" * (i % 3000))
    if i % 4 == 0:
        os.setxattr(p, "user.tag", b"v" * (i % 64))
    if i % 97 == 0:
        os.setxattr(p, "user.big", b"b" * 300)
PY
  E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -I 256 -N $((files + files / 4)) \
    -d "$tree" "$img" $((files / 1000 * 12 + 512))M
  rm -rf "$tree"
}
