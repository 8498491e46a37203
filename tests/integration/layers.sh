#!/bin/bash
# Package layers (csrun-rootfs(1)): `csrun rootfs add PKG` builds, without
# root, a cached read-only layer of Debian packages over the rootfs, and
# `csrun run --with PKG` runs on rootfs + layer.  These tests download from
# Debian's archive (python3-numpy's closure is ~25 MB, python3-pandas' ~33
# MB, measured with apt-cache show); when apt can't reach it, or knows no
# packages (no `apt-get update`), they skip (a failure under
# CSRUN_MUST_WORK=1).
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

if [ ! -r "$CSRUN_TEST_ROOTFS" ]; then
  skip "package layers" "no rootfs tarball at $CSRUN_TEST_ROOTFS"
  done_testing
  exit
fi
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  skip "package layers" "no apt-get or dpkg-deb on this machine"
  done_testing
  exit
fi

T=$(tmpdir)
C=$T/cache
mkdir -m 0700 "$C"
me=$(id -u)

cat >"$T/np.py" <<'EOF'
import numpy as np
a = np.arange(12).reshape(3, 4)
det = np.linalg.det(np.array([[2.0, 1.0], [1.0, 3.0]]))  # LAPACK: the alternatives' link
print(int(a.sum()), a.T.shape, round(float(det), 6))
EOF
cat >"$T/pd.py" <<'EOF'
import pandas as pd
df = pd.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.5, 6.5]})
print(int(df["a"].sum()), round(df["b"].mean(), 4), df.groupby(df["a"] % 2)["b"].sum().to_dict())
EOF

# add OUT ERR PKG... (with --cache-dir $C --json): sets $rc.
add () {
  local out=$1 err=$2
  shift 2
  csrun rootfs add --cache-dir "$C" --json "$@" >"$out" 2>"$err" </dev/null
  rc=$?
}

# ---------------------------------------------------------------- rootfs add python3-numpy
add "$T/a1.json" "$T/a1.err" python3-numpy
if [ "$rc" = 2 ] && grep -qE "Failed to fetch|Could not resolve|Temporary failure|Unable to connect|apt knows no packages|Unable to locate package python3-numpy|Network is unreachable" "$T/a1.err"; then
  skip "package layers" "apt can't get python3-numpy here: $(head -c 300 "$T/a1.err")"
  done_testing
  exit
fi
if [ "$rc" = 0 ] && [ "$(json_get "$T/a1.json" 'j["built"]')" = True ]; then
  ok "rootfs add python3-numpy builds a layer (exit 0, built)"
else
  not_ok "rootfs add python3-numpy builds a layer" "rc=$rc" "$(cat "$T/a1.err" "$T/a1.json")"
fi
L=$(json_get "$T/a1.json" 'j["dir"]')
digest=$(json_get "$T/a1.json" 'j["digest"]')
np_version=$(json_get "$T/a1.json" '[p["version"] for p in j["packages"] if p["name"] == "python3-numpy"][0]')
if [[ $digest =~ ^[0-9a-f]{64}$ ]] && [ -n "$np_version" ] &&
  [ "$(json_get "$T/a1.json" '"libc6" in [p["name"] for p in j["in_base"]]')" = True ] &&
  [ "$(json_get "$T/a1.json" '"libc6" in [p["name"] for p in j["packages"]]')" = False ]; then
  ok "the json records the packages, their versions, the digest; libc6 (the base's) is dropped"
else
  not_ok "the json records packages, versions, digest, what the base has" "$(cat "$T/a1.json")"
fi
if [ -f "$C/layers/$(basename "$L").json" ] && [ -f "$C/layers/$(basename "$L").manifest" ] &&
  [ "$(sha256sum <"$C/layers/$(basename "$L").manifest" | cut -d' ' -f1)" = "$digest" ]; then
  ok "the layer's json and manifest are cached next to it; the digest is the manifest's sha256"
else
  not_ok "the layer's json and manifest are cached next to it" "$(ls -la "$C/layers")"
fi
bad=$(find "$L" \( -perm /6000 -o -type b -o -type c -o -type p -o -type s -o ! -user "$me" \
  -o \( ! -type l -perm /022 \) \) -print | head -5)
if [ -d "$L/usr/lib/python3/dist-packages/numpy" ] && [ -z "$bad" ] &&
  [ ! -e "$L/usr/share/man" ] && [ "$(stat -c %a "$L")" = 555 ]; then
  ok "the layer: numpy's modules, no setuid/special/foreign/writable entry, no manual pages, read-only"
else
  not_ok "the layer's tree" "bad: $bad" "$(ls -la "$L" "$L/usr/share" 2>&1)"
fi

# ---------------------------------------------------------------- the second add is a cache hit
mkdir "$T/fakebin"
for tool in apt-get apt-cache dpkg-deb; do
  printf '#!/bin/sh\ntouch %s/called-%s\nexit 1\n' "$T" "$tool" >"$T/fakebin/$tool"
  chmod 755 "$T/fakebin/$tool"
done
PATH=$T/fakebin:$PATH csrun rootfs add --cache-dir "$C" --json python3-numpy python3-numpy \
  >"$T/a2.json" 2>"$T/a2.err" </dev/null
rc=$?
if [ "$rc" = 0 ] && [ "$(json_get "$T/a2.json" 'j["built"]')" = False ] &&
  [ "$(json_get "$T/a2.json" 'j["digest"]')" = "$digest" ] && ! ls "$T"/called-* >/dev/null 2>&1; then
  ok "the same set again is a cache hit: no apt, no dpkg-deb, the same digest"
else
  not_ok "the same set again is a cache hit" "rc=$rc" "$(ls "$T"/called-* 2>&1)" "$(cat "$T/a2.err" "$T/a2.json")"
fi

# ---------------------------------------------------------------- run --with python3-numpy
csrun run --cache-dir "$C" --json --with python3-numpy "$T/np.py" >"$T/r1.json" 2>"$T/r1.err" </dev/null
rc=$?
if [ "$rc" = 0 ] && [ "$(json_get "$T/r1.json" 'j["attempts"][-1]["stdout"]')" = "66 (4, 3) 5.0" ]; then
  ok "run --with python3-numpy: numpy (and LAPACK) work in the jail"
else
  not_ok "run --with python3-numpy" "rc=$rc" "$(cat "$T/r1.err" "$T/r1.json")"
fi
if [ "$(json_get "$T/r1.json" 'j["layer"]["digest"]')" = "$digest" ] &&
  [ "$(json_get "$T/r1.json" 'j["layer"]["built"]')" = False ] &&
  [ "$(json_get "$T/r1.json" '[p["version"] for p in j["layer"]["packages"] if p["name"] == "python3-numpy"][0]')" = "$np_version" ]; then
  ok "the run's JSON records the layer (digest, packages and versions; not built)"
else
  not_ok "the run's JSON records the layer" "$(json_get "$T/r1.json" 'j.get("layer")')"
fi
csrun run --cache-dir "$C" --quiet --no-heal "$T/np.py" >"$T/r0.out" 2>&1 </dev/null
rc=$?
if [ "$rc" = 1 ] && grep -q "No module named 'numpy'" "$T/r0.out"; then
  ok "without --with the rootfs has no numpy (the layer is not in the base)"
else
  not_ok "without --with the rootfs has no numpy" "rc=$rc" "$(cat "$T/r0.out")"
fi
printf 'import os\nopen("/usr/lib/python3/dist-packages/x", "w")\n' >"$T/w.py"
csrun run --cache-dir "$C" --quiet --no-heal --with python3-numpy "$T/w.py" >"$T/w.out" 2>&1 </dev/null
rc=$?
if [ "$rc" = 1 ] && grep -q "Read-only file system" "$T/w.out"; then
  ok "the layer is read-only in the jail"
else
  not_ok "the layer is read-only in the jail" "rc=$rc" "$(cat "$T/w.out")"
fi

# ---------------------------------------------------------------- pandas (a ~33 MB closure)
csrun run --cache-dir "$C" --json --with python3-pandas "$T/pd.py" >"$T/p1.json" 2>"$T/p1.err" </dev/null
rc=$?
if [ "$rc" = 0 ] &&
  [ "$(json_get "$T/p1.json" 'j["attempts"][-1]["stdout"]')" = "6 5.3333 {0: 5.5, 1: 10.5}" ] &&
  [ "$(json_get "$T/p1.json" 'j["layer"]["built"]')" = True ]; then
  ok "run --with python3-pandas builds its layer first, and pandas works"
else
  not_ok "run --with python3-pandas" "rc=$rc" "$(cat "$T/p1.err" "$T/p1.json")"
fi

# ---------------------------------------------------------------- unknown packages: exit 2
add "$T/u.json" "$T/u.err" python3-no-such-package-csrun
if [ "$rc" = 2 ] && [ "$(wc -l <"$T/u.err")" = 1 ] && grep -q "python3-no-such-package-csrun" "$T/u.err"; then
  ok "rootfs add of an unknown package: exit 2, one line naming it"
else
  not_ok "rootfs add of an unknown package" "rc=$rc" "$(cat "$T/u.err")"
fi
csrun run --cache-dir "$C" --with python3-no-such-package-csrun "$T/np.py" >"$T/u2.out" 2>"$T/u2.err" </dev/null
rc=$?
if [ "$rc" = 2 ] && grep -q "python3-no-such-package-csrun" "$T/u2.err" && [ ! -s "$T/u2.out" ]; then
  ok "run --with an unknown package: exit 2 naming it, nothing ran"
else
  not_ok "run --with an unknown package" "rc=$rc" "$(cat "$T/u2.err" "$T/u2.out")"
fi
add "$T/b.json" "$T/b.err" 'Bad;name'
if [ "$rc" = 2 ] && grep -q "not a Debian package name" "$T/b.err"; then
  ok "a malformed package name: exit 2"
else
  not_ok "a malformed package name" "rc=$rc" "$(cat "$T/b.err")"
fi

# ---------------------------------------------------------------- a tampered layer is rebuilt, not used
victim=$L/usr/lib/python3/dist-packages/numpy/version.py
chmod 0666 "$victim"
csrun run --cache-dir "$C" --json --with python3-numpy "$T/np.py" >"$T/t1.json" 2>"$T/t1.err" </dev/null
rc=$?
if [ "$rc" = 0 ] && [ "$(json_get "$T/t1.json" 'j["layer"]["built"]')" = True ] &&
  json_get "$T/t1.json" 'j["layer"]["rebuilt_why"]' | grep -q "writable by group or others" &&
  [ "$(stat -c %a "$victim")" = 444 ]; then
  ok "a layer file made writable by others: the layer is rebuilt (rebuilt_why says why), not used"
else
  not_ok "a layer file made writable: rebuilt" "rc=$rc" "$(stat -c %a "$victim")" "$(cat "$T/t1.err")" \
    "$(json_get "$T/t1.json" 'j.get("layer")')"
fi
if is_root; then
  chown -h nobody "$victim"
  csrun rootfs add --cache-dir "$C" python3-numpy >"$T/t2.out" 2>"$T/t2.err" </dev/null
  rc=$?
  if [ "$rc" = 0 ] && grep -q "not owned by the effective uid" "$T/t2.err" &&
    [ "$(stat -c %u "$victim")" = 0 ]; then
    ok "a layer file owned by another user: rebuilt, not used (said on stderr)"
  else
    not_ok "a layer file owned by another user: rebuilt" "rc=$rc" "$(cat "$T/t2.err" "$T/t2.out")"
  fi
else
  skip "a layer file owned by another user: rebuilt" "n/a: chown needs root (the root pass runs it)"
fi
chmod u+w "$(dirname "$victim")"
echo "# extra" >"$(dirname "$victim")/extra.py"
chmod u-w "$(dirname "$victim")"
csrun run --cache-dir "$C" --json --with python3-numpy "$T/np.py" >"$T/t3.json" 2>"$T/t3.err" </dev/null
rc=$?
if [ "$rc" = 0 ] && json_get "$T/t3.json" 'j["layer"]["rebuilt_why"]' | grep -q "not in the manifest" &&
  [ ! -e "$(dirname "$victim")/extra.py" ]; then
  ok "a file added to a layer: rebuilt, not used"
else
  not_ok "a file added to a layer: rebuilt" "rc=$rc" "$(json_get "$T/t3.json" 'j.get("layer")')"
fi

# ---------------------------------------------------------------- the ModuleNotFoundError hint
printf 'import pandas as pd\nprint(pd.DataFrame({"a": [1]}))\n' >"$T/h.py"
csrun run --cache-dir "$C" --json "$T/h.py" >"$T/h.json" 2>"$T/h.err" </dev/null
rc=$?
hint=$(json_get "$T/h.json" 'j["diagnosis"].get("hint")')
if [ "$rc" = 1 ] && [[ $hint == *"python3-pandas"* ]] && [[ $hint == *"csrun run --with python3-pandas"* ]]; then
  ok "ModuleNotFoundError: diagnosis.hint names python3-pandas and csrun run --with"
else
  not_ok "ModuleNotFoundError hint" "rc=$rc" "hint: $hint" "$(cat "$T/h.err")"
fi
printf 'import yaml.constructor\n' >"$T/h2.py"
csrun run --cache-dir "$C" "$T/h2.py" >"$T/h2.out" 2>"$T/h2.err" </dev/null
rc=$?
if [ "$rc" = 1 ] && grep -q "Debian package python3-yaml: run with \`csrun run --with python3-yaml" "$T/h2.err"; then
  ok "import yaml.constructor without yaml: the hint names python3-yaml, on stderr too"
else
  not_ok "the hint for yaml.constructor" "rc=$rc" "$(cat "$T/h2.err")"
fi

printf 'import numpy.nosuchmodule\n' >"$T/h3.py"
csrun run --cache-dir "$C" --json --with python3-numpy "$T/h3.py" >"$T/h3.json" 2>"$T/h3.err" </dev/null
rc=$?
if [ "$rc" = 1 ] && [ "$(json_get "$T/h3.json" 'j["diagnosis"]["message"]')" = "No module named 'numpy.nosuchmodule'" ] &&
  [ "$(json_get "$T/h3.json" 'j["diagnosis"].get("hint")')" = None ]; then
  ok "a missing submodule of a module the layer has: no package hint"
else
  not_ok "a missing submodule: no hint" "rc=$rc" "$(json_get "$T/h3.json" 'j.get("diagnosis")')"
fi

# The cache verifier still sees only the rootfs trees.
check "csrun cache verify ignores the layers" csrun cache verify --quick --cache-dir "$C"

# ---------------------------------------------------------------- cache ls / prune and the layers
# (csrun-cache(1)): listed with their packages; one a running `run --with`
# uses is kept, the rest go with their manifest, json, use lock and .known.
np_key=$(basename "$L")
csrun cache ls --cache-dir "$C" --json >"$T/ls.json" 2>"$T/ls.err" </dev/null
rc=$?
np_entry='[e for e in j["entries"] if e["kind"] == "layer" and e["name"] == "layers/'$np_key'"]'
if [ "$rc" = 0 ] && [ "$(json_get "$T/ls.json" "len([e for e in j['entries'] if e['kind'] == 'layer'])")" = 2 ] &&
  [ "$(json_get "$T/ls.json" "$np_entry[0]['asked']")" = "['python3-numpy']" ] &&
  [ "$(json_get "$T/ls.json" "[p['version'] for p in $np_entry[0]['packages'] if p['name'] == 'python3-numpy'][0]")" = "$np_version" ] &&
  [ "$(json_get "$T/ls.json" "$np_entry[0]['bytes'] > 1000000 and $np_entry[0]['in_use'] is False")" = True ] &&
  csrun cache ls --cache-dir "$C" </dev/null | grep -q "^layer .*/layers/$np_key  \[python3-numpy; [0-9]* packages\]$"; then
  ok "cache ls lists the two layers: kind layer, size, the packages asked for and in it (JSON and text)"
else
  not_ok "cache ls lists the layers" "rc=$rc" "$(cat "$T/ls.err" "$T/ls.json")"
fi
printf 'import time, numpy\ntime.sleep(8)\nprint("slept", numpy.__name__)\n' >"$T/sleeper.py"
csrun run --cache-dir "$C" --with python3-numpy "$T/sleeper.py" >"$T/sleeper.out" 2>"$T/sleeper.err" </dev/null &
sleeper=$!
busy=
for _ in $(seq 1 200); do
  if [ "$(csrun cache ls --cache-dir "$C" --json </dev/null | python3 -c 'import json,sys; print(any(e.get("in_use") for e in json.load(sys.stdin)["entries"] if e["kind"] == "layer"))')" = True ]; then
    busy=1
    break
  fi
  sleep 0.1
done
csrun cache prune --cache-dir "$C" --json >"$T/pr.json" 2>"$T/pr.err" </dev/null
rc=$?
wait "$sleeper"
src=$?
got=$(json_get "$T/pr.json" 'sorted((e["name"] == "layers/'$np_key'", e["removed"], e.get("kept")) for e in j["entries"] if e["kind"] == "layer")')
others=$(find "$C/layers" -mindepth 1 -maxdepth 1 ! -name "$np_key*" ! -name 'base-*.known' ! -name .lock -printf '%P\n')
if [ -n "$busy" ] && [ "$rc" = 0 ] && [ "$src" = 0 ] && [ "$(cat "$T/sleeper.out")" = "slept numpy" ] &&
  [ "$got" = "[(False, True, None), (True, False, 'in use by a running csrun')]" ] &&
  [ -z "$others" ] && [ -d "$L/usr/lib/python3/dist-packages/numpy" ] && ls "$C"/layers/base-*.known >/dev/null; then
  ok "cache prune keeps the layer a running run --with uses (the run goes on), removes the other"
else
  not_ok "cache prune keeps a layer in use" "busy '$busy', prune exit $rc, run exit $src: $(cat "$T/sleeper.out" "$T/sleeper.err")" \
    "$got" "left: $others" "$(cat "$T/pr.err")"
fi
csrun cache prune --cache-dir "$C" >"$T/pr2.out" 2>"$T/pr2.err" </dev/null
rc=$?
left=$(find "$C/layers" -mindepth 1 -maxdepth 1 ! -name .lock -printf '%P\n')
if [ "$rc" = 0 ] && [ -z "$left" ] && grep -q "^removed layer .*/layers/$np_key$" "$T/pr2.out"; then
  ok "a plain cache prune then removes the read-only layer, its manifest, json, use lock and base-*.known"
else
  not_ok "cache prune removes the layer" "rc=$rc" "left: $left" "$(cat "$T/pr2.out" "$T/pr2.err")"
fi

done_testing
