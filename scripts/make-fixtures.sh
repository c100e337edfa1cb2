#!/usr/bin/env bash
# Rebuild fixtures/example.img: a small, reproducible ext4 image with files, directories, symlinks,
# a hard link, inline data, xattrs in several namespaces and POSIX ACLs.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/docs/sub" "$tree/bin"
printf 'hello\n' > "$tree/docs/small.txt"
head -c 20000 /dev/zero | tr '\0' 'x' > "$tree/docs/big.txt"
ln "$tree/docs/small.txt" "$tree/docs/hardlink.txt"
ln -s small.txt "$tree/docs/fastlink"
ln -s "$(printf 'very/long/target/%.0s' $(seq 1 8))end" "$tree/docs/slowlink"
printf '#!/bin/sh\necho hi\n' > "$tree/bin/tool"; chmod 755 "$tree/bin/tool"
if command -v setfattr >/dev/null; then
  setfattr -n user.comment -v "fixture file" "$tree/docs/small.txt"
  setfattr -n user.DOSATTRIB -v "0sAAAEAAQAAAARAAAAIAAAAAAAAAAAAAA=" "$tree/docs/big.txt"
  setfattr -n trusted.note -v "$(head -c 300 /dev/zero | tr '\0' 'n')" "$tree/docs/big.txt"
  setfattr -n security.selinux -v "system_u:object_r:bin_t:s0" "$tree/bin/tool"
fi
if command -v setfacl >/dev/null; then
  setfacl -m u:1000:rw "$tree/docs/small.txt"
  setfacl -d -m g:100:rx "$tree/docs/sub"
fi
find "$tree" -exec touch -h -d @1700000000 {} +
img=fixtures/example.img
rm -f "$img"
truncate -s 4M "$img"
E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -b 1024 -I 256 -O inline_data,quota \
  -U 4e3a1f2c-5b6d-4e7f-8a9b-0c1d2e3f4a5b -L example -E root_owner=0:0 -d "$tree" "$img"
# mke2fs -d does not account the files it copies in the quota files: e2fsck -fy makes them
# consistent (e2fsck -fn, and check's quota.usage, would otherwise report them).
E2FSPROGS_FAKE_TIME=1700000000 e2fsck -fy "$img" >/dev/null || [ $? -le 1 ]
echo "wrote $img"
