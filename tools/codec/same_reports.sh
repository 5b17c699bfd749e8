#!/bin/bash
# same_reports.sh OLD NEW EFFORT [ASSETS_DIR]
#
# Compresses every shared asset (glTF, BVH, FBX, ACL raw clips, two levels deep) and the
# default character with two skelpack binaries at one effort, and compares both the .skp
# (cmp) and the report each prints (every clip's sizes, keys, max, p99 and midpoint errors).
# Prints each source that differs (a source neither compresses, with the same message, is
# the same) and a count; exit status 1 when any differs.
set -u
OLD=$1; NEW=$2; EFF=$3
ASSETS=${4:-$(dirname "$0")/../../../shared/assets}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
n=0; d=0
while IFS= read -r f; do
  a=$("$OLD" compress "$f" --effort "$EFF" -o "$TMP/a.skp" 2>&1 | grep -v '^wrote')
  b=$("$NEW" compress "$f" --effort "$EFF" -o "$TMP/b.skp" 2>&1 | grep -v '^wrote')
  n=$((n+1))
  if [ "$a" != "$b" ]; then
    d=$((d+1)); echo "DIFF $f (report)"
  elif [ -e "$TMP/a.skp" ] || [ -e "$TMP/b.skp" ]; then
    if ! cmp -s "$TMP/a.skp" "$TMP/b.skp"; then d=$((d+1)); echo "DIFF $f (.skp)"; fi
  else
    echo "neither compressed $f (the same message)"
  fi
  rm -f "$TMP/a.skp" "$TMP/b.skp"
done < <( (find "$ASSETS" -maxdepth 2 \( -name '*.glb' -o -name '*.gltf' -o -name '*.bvh' -o -name '*.fbx' -o -name '*.acl.sjson' \) | sort; echo "$HERE/assets/default_character.glb") )
rmdir "$TMP"
echo "$n sources, $d differ ($EFF)"
[ "$d" -eq 0 ]
