#!/usr/bin/env bash
# Behaviour check (not a test): run two builds of e4inspect over the same images and commands
# and compare stdout, stderr and exit status byte for byte. Used to prove that a refactoring
# changes nothing (or only what it means to change).
#
# Images: fixtures/*.img, every image of the shared e2fsprogs corpus (../shared/corpus/e2fsprogs,
# decompressed into WORKDIR), and the benchmark images of scripts/bench-images.sh when they
# already exist in BENCH (default /tmp/e4inspect-bench; the slow per-inode commands are skipped
# there). Commands: dump (plain, -h, -b, -x, -g, --json), check (text, json, junit, github,
# --quick), inode (a few numbers, text and json), ls (-l, -p, json), cat of every regular file
# ls lists in the root, xattrs (text, json), fit --from-image (text, json), find (names, types,
# --xattr present / =VALUE / =~REGEX, --spills, -0, --json), freefrag (text,
# json), journal (text, json), extract (--json, and the extracted tree's listing: type, mode,
# owner, size but a directory's, mtime, link target).
#
# Usage: scripts/compare-bins.sh OLD_BIN NEW_BIN [WORKDIR]
#   env: BENCH (benchmark image directory), CORPUS (the e2fsprogs corpus, default
#        ../shared/corpus/e2fsprogs: from a worktree, /work/shared/corpus/e2fsprogs), JOBS (parallel images, default 2),
#        ONLY (a substring: only images whose name contains it), KEEP=1 (keep the outputs),
#        LABELS (an extended regex: only the commands whose label matches, e.g. '^(xattrs|fit)';
#        cat and extract run only when it matches 'cat' / 'extract').
# Prints one line per differing (image, command) and the counts; exits 4 when anything differs.
set -uo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "${1:?usage: compare-bins.sh OLD_BIN NEW_BIN [WORKDIR]}")
new=$(realpath "${2:?usage: compare-bins.sh OLD_BIN NEW_BIN [WORKDIR]}")
work=${3:-$(mktemp -d /tmp/e4inspect-compare.XXXXXX)}
bench=${BENCH:-/tmp/e4inspect-bench}
jobs=${JOBS:-2}
corpus=${CORPUS:-../shared/corpus/e2fsprogs}
mkdir -p "$work/img" "$work/out"
export TZ=UTC LC_ALL=C

# Gather the images: name<TAB>path<TAB>heavy (heavy = skip per-inode commands).
list=$work/images.tsv
: > "$list"
for f in fixtures/*.img; do printf '%s\t%s\t0\n' "fixture-$(basename "$f" .img)" "$(realpath "$f")" >> "$list"; done
if [ -d "$corpus" ]; then
  for d in "$corpus"/*/; do
    n=$(basename "$d")
    [ -f "$d/image.gz" ] || continue
    [ -f "$work/img/$n.img" ] || gunzip -c "$d/image.gz" > "$work/img/$n.img" 2>/dev/null || continue
    printf '%s\t%s\t0\n' "corpus-$n" "$work/img/$n.img" >> "$list"
  done
else
  echo "note: no shared corpus at $corpus" >&2
fi
for f in "$bench"/pop-*.img "$bench"/sparse-8T.img; do
  [ -f "$f" ] && printf '%s\t%s\t1\n' "bench-$(basename "$f" .img)" "$f" >> "$list"
done
if [ -n "${ONLY:-}" ]; then grep -F -- "$ONLY" "$list" > "$list.only"; mv "$list.only" "$list"; fi

# The commands run on one image, one per line: LABEL<TAB>ARGS (IMG stands for the image).
commands() {
  local heavy=$1
  cat <<'EOF'
dump	dump IMG
dump-h	dump -h IMG
dump-b	dump -b IMG
dump-x	dump -x IMG
dump-g	dump -g IMG
dump-json	dump --json IMG
check	check --no-progress IMG
check-json	check --no-progress --json IMG
check-junit	check --no-progress --format junit IMG
check-github	check --no-progress --format github IMG
check-quick	check --no-progress --quick IMG
freefrag	freefrag IMG
freefrag-json	freefrag --json IMG
journal	journal IMG
journal-json	journal --json IMG
xattrs	xattrs --no-progress IMG
xattrs-json	xattrs --no-progress --json IMG
fit	fit --from-image IMG
fit-json	fit --json --from-image IMG
find	find IMG
find-name	find IMG --name *1*
find-type	find IMG --type d,l
find-uid	find IMG --uid -1 --type f
find-x	find IMG --xattr user.tag
find-x-value	find IMG --xattr user.tag=vvvv
find-x-regex	find IMG --xattr user.tag=~^v{20,}$
find-x-block	find IMG --xattr user.big=~^b+$
find-x-two	find IMG --xattr user.tag --xattr user.big
find-x-print0	find IMG --xattr user.tag --name f00* -0
find-x-json	find IMG --xattr user.tag=~v --json
find-x-system	find IMG --xattr system.data
find-x-acl	find IMG --xattr system.posix_acl_access=~.
find-x-selinux	find IMG --xattr security.selinux=~_t
find-x-ea-inode	find IMG --xattr user.myattr=~. --json
find-x-zero	find IMG --xattr user.ie=~^ --xattr user.be
find-x-odd	find IMG --xattr index11.v
find-x-crypt	find IMG --xattr encryption.c
find-x-example	find IMG --xattr user.comment --json
find-spills	find IMG --spills
find-spills-json	find IMG --spills --json --type f
EOF
  [ "$heavy" = 1 ] && return
  cat <<'EOF'
inode-2	inode IMG <2>
inode-11	inode IMG <11>
inode-12	inode IMG <12>
inode-json	inode --json IMG <2> <7> <8> <11> <12> <13>
ls-l	ls -l IMG /
ls-p	ls -p -d IMG /
ls-json	ls --json IMG /
EOF
}

# run_one BIN SIDE NAME IMG LABEL ARGS: outputs in $work/out/NAME/LABEL.SIDE.{out,err,rc}
run_one() {
  local bin=$1 side=$2 name=$3 img=$4 label=$5 args=$6
  local dir=$work/out/$name
  local -a argv
  read -r -a argv <<< "${args//IMG/$img}"
  timeout 120 "$bin" "${argv[@]}" > "$dir/$label.$side.out" 2> "$dir/$label.$side.err" < /dev/null
  echo $? > "$dir/$label.$side.rc"
  # The image path appears in messages; the two sides read the same path, so no rewriting.
}

one_image() {
  local name=$1 img=$2 heavy=$3
  local dir=$work/out/$name
  mkdir -p "$dir"
  while IFS=$'\t' read -r label args; do
    run_one "$old" old "$name" "$img" "$label" "$args"
    run_one "$new" new "$name" "$img" "$label" "$args"
  done < <(commands "$heavy" | awk -F'\t' -v re="${LABELS:-.}" '$1 ~ re')
  if [ "$heavy" = 0 ] && { [ -z "${LABELS:-}" ] || [[ cat-extract =~ ${LABELS} ]]; }; then
    # cat every regular file the root lists (names as ls -p prints them: /ino/mode/uid/gid/name/size/)
    local i=0
    while IFS=/ read -r _ ino mode _ _ fname _; do
      [ "${mode:0:2}" = 10 ] || continue
      i=$((i + 1)); [ $i -le 8 ] || break
      run_one "$old" old "$name" "$img" "cat-$ino" "cat IMG <$ino>"
      run_one "$new" new "$name" "$img" "cat-$ino" "cat IMG <$ino>"
    done < "$dir/ls-p.old.out"
    # extract the whole tree; compare the JSON summary and the tree's listing
    for side in old new; do
      local bin=$old; [ $side = new ] && bin=$new
      rm -rf "$dir/x" "$dir/x.$side"
      # Both sides extract to the same relative name (the summary names the paths it wrote).
      (cd "$dir" && timeout 120 "$bin" extract --no-progress --json "$img" / x \
        > "extract.$side.out" 2> "extract.$side.err" < /dev/null; echo $? > "extract.$side.rc")
      mv "$dir/x" "$dir/x.$side" 2>/dev/null
      # The order of the entries extract lists depends on its parallel copy: compare them sorted.
      sort -o "$dir/extract.$side.out" "$dir/extract.$side.out"
      # Times extract could not restore are the time of the run: shown as "now".
      (cd "$dir/x.$side" 2>/dev/null && find . -printf '%p %y %m %U %G %s %T@ %l\n' | sort) \
        | awk -v t0="$start" '{ if ($7 + 0 >= t0) $7 = "now"; if ($2 == "d") $6 = "-"; print }' > "$dir/tree.$side.out" 2>/dev/null
      : > "$dir/tree.$side.err"; echo 0 > "$dir/tree.$side.rc"
      [ "${KEEP:-0}" = 1 ] || rm -rf "$dir/x.$side"
    done
  fi
  for o in "$dir"/*.old.out; do
    local label; label=$(basename "$o" .old.out)
    local what=""
    cmp -s "$dir/$label.old.out" "$dir/$label.new.out" || what="$what stdout"
    cmp -s "$dir/$label.old.err" "$dir/$label.new.err" || what="$what stderr"
    cmp -s "$dir/$label.old.rc" "$dir/$label.new.rc" || what="$what exit($(cat "$dir/$label.old.rc")->$(cat "$dir/$label.new.rc"))"
    if [ -n "$what" ]; then echo "DIFF $name $label:$what"; else echo "SAME $name $label"; fi
  done
}
export -f one_image run_one commands
start=$(date +%s)
export old new work start

results=$work/results.txt
tr '\t' '\n' < "$list" | xargs -d '\n' -n 3 -P "$jobs" bash -c 'one_image "$1" "$2" "$3"' _ > "$results"
grep '^DIFF' "$results" | sort
same=$(grep -c '^SAME' "$results"); diff=$(grep -c '^DIFF' "$results")
images=$(wc -l < "$list")
echo "compared $((same + diff)) (image, command) pairs over $images images: $same identical, $diff different"
echo "outputs in $work/out (old and new side by side: LABEL.old.out / LABEL.new.out)"
[ "$diff" = 0 ] || exit 4
