#!/bin/sh
# Regenerates the fixtures of test-classify.c: each NAME.py runs as snippet.py
# through csrun's gate (policies/gate.py, which runs the snippet on a pass) with the host's python3, as it
# runs in the jail, and NAME.txt receives its stderr.  Two kinds are special:
#   abspath-*.py     run as "python3 snippet.py" (frames name the absolute
#                    path; the temporary directory becomes /tmp/fixture)
#   *-truncated.py   cut the way csrun bounds output: the first 1500 and the
#                    last 1500 bytes, with csrun's marker in between
#   csrun-*.py       run by the built csrun itself ($CSRUN, default ./csrun
#                    of the source tree) with --max-output=4000 (skipped
#                    when it is missing)
# Usage: tests/unit/tracebacks/runner.sh [NAME.py...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
launch=$(cat "$here/../../../policies/gate.py")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here"
[ $# -gt 0 ] || set -- *.py
for f in "$@"; do
  name=${f%.py}
  cp "$here/$f" "$tmp/snippet.py"
  case $name in
    abspath-*)
      (cd "$tmp" && /usr/bin/python3 snippet.py > /dev/null 2> err.txt)
      sed "s|$tmp|/tmp/fixture|g" "$tmp/err.txt" > "$name.txt"
      ;;
    csrun-*)
      csrun=${CSRUN:-$here/../../../csrun}
      if [ -x "$csrun" ]; then
        cp "$here/$f" "$tmp/$f"
        "$csrun" run --max-output=4000 "$tmp/$f" > /dev/null 2> "$name.txt"
      else
        echo "$0: $csrun not built: $name.txt left as it is" >&2
      fi
      ;;
    *-truncated)
      (cd "$tmp" && /usr/bin/python3 -I -S -u -c "$launch" '{"rules":[],"run":true,"heal_names":[]}' 3>/dev/null > /dev/null 2> err.txt)
      size=$(wc -c < "$tmp/err.txt")
      {
        head -c 1500 "$tmp/err.txt"
        printf '\n[... csrun: %d bytes dropped ...]\n' $((size - 3000))
        tail -c 1500 "$tmp/err.txt"
      } > "$name.txt"
      ;;
    *)
      (cd "$tmp" && /usr/bin/python3 -I -S -u -c "$launch" > /dev/null 2> "$here/$name.txt")
      ;;
  esac
done
