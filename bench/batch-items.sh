# bench/batch-items.sh — sourced by bench/batch and bench/batch-profile.
# gen DIR COUNT: COUNT small snippets in DIR, 80% ok, 10% healed by a local
# rule before they run (a Python 2 print), 10% raising.
gen () {
  mkdir -p "$1"
  local i f
  for ((i = 0; i < $2; i++)); do
    f=$(printf '%s/s%05d.py' "$1" "$i")
    case $((i % 10)) in
    0) printf 'print "item %d"\n' "$i" >"$f" ;;               # healed: py2-print
    1) printf 'raise ValueError("item %d")\n' "$i" >"$f" ;;   # failed
    *) printf 'x = sum(range(%d))\nprint("item", x)\n' "$i" >"$f" ;;
    esac
  done
}
