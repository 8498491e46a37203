# tests/lib/oci.sh — OCI bundles for the tests that drive the runtime CLI
# (sourced after tap.sh, with T set to the test's temporary directory).
#
#   oci_rootfs             unpacks the test rootfs into $T/rootfs (once)
#   make_bundle DIR EDIT [ROOTFS]
#                          a bundle in DIR whose rootfs links to ROOTFS
#                          (default $T/rootfs), config.json from `csrun spec`
#                          (--rootless when unprivileged), edited by the Python
#                          statements EDIT on the dict `c`; `without(TYPE...)`
#                          drops namespaces, linux.resources exists
#   args CODE              the EDIT that sets process.args to python3 -c CODE
PY=${PY:-/usr/bin/python3}

oci_rootfs () {
  [ -d "$T/rootfs/usr" ] && return 0
  mkdir -p "$T/rootfs"
  zstd -dc "$CSRUN_TEST_ROOTFS" | tar -x -C "$T/rootfs" 2>"$T/untar.err" ||
    not_ok "unpack the test rootfs" "$(cat "$T/untar.err")"
}

make_bundle () {
  local dir=$1 edit=$2 rootfs=${3:-$T/rootfs}
  mkdir -p "$dir"
  ln -sfn "$rootfs" "$dir/rootfs"
  rm -f "$dir/config.json"
  if is_root; then
    (cd "$dir" && "$CSRUN" spec) || return 1
  else
    (cd "$dir" && "$CSRUN" spec --rootless) || return 1
  fi
  python3 - "$dir/config.json" "$edit" <<'PYEOF'
import json, sys
p, edit = sys.argv[1], sys.argv[2]
c = json.load(open(p))
c["process"]["terminal"] = False
c["root"]["path"] = "rootfs"
c["linux"].setdefault("resources", {})
def without(*types):
    c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] not in types]
exec(edit)
json.dump(c, open(p, "w"), indent=2)
PYEOF
}

args () {
  printf 'c["process"]["args"] = ["%s", "-c", %s]' "$PY" "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1")"
}
