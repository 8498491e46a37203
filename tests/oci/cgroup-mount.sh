#!/bin/bash
# A config mount of type "cgroup" (issue 12), as runc gives it: on a cgroup v1
# or hybrid host a tmpfs at /sys/fs/cgroup with one directory per hierarchy
# (named as on the host, the host's cpu -> cpu,cpuacct links too, and the
# unified one on a hybrid host), each showing the container's own cgroup;
# read-only unless the mount asks rw; in a cgroup namespace each hierarchy
# mounted anew (its root is the container's cgroup).  On a v2 host, one
# cgroup2 mount.  Nothing of it reaches the host's mount table.
# Root: the v1/hybrid cases (a v2-only host: the v2 case).  Rootless: the
# mount in a user and cgroup namespace (mounted, or left empty with a warning).
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
trap '"${C[@]}" list -q 2>/dev/null | while read -r id; do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done; _tap_cleanup' EXIT

. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs

# What the container sees below /sys/fs/cgroup, as one JSON line.
PROBE='import json, os, errno
r = {"names": {}, "procs": {}, "mk": {}, "fs": {}, "cg": open("/proc/self/cgroup").read()}
for n in sorted(os.listdir("/sys/fs/cgroup")):
    p = "/sys/fs/cgroup/" + n
    r["names"][n] = ("link:" + os.readlink(p)) if os.path.islink(p) else "dir"
    if not os.path.islink(p):
        try: r["procs"][n] = open(p + "/cgroup.procs").read().split()
        except OSError as e: r["procs"][n] = "E" + errno.errorcode[e.errno]
try: r["root_procs"] = open("/sys/fs/cgroup/cgroup.procs").read().split()
except OSError as e: r["root_procs"] = "E" + errno.errorcode[e.errno]
for n in ("memory", "unified", ""):
    d = "/sys/fs/cgroup/%s/csrun-probe" % n
    try:
        os.mkdir(d); os.rmdir(d); r["mk"][n] = "ok"
    except OSError as e: r["mk"][n] = errno.errorcode[e.errno]
for l in open("/proc/self/mountinfo"):
    f = l.split(); d = f.index("-")
    if f[4].startswith("/sys/fs/cgroup"): r["fs"][f[4]] = f[d + 1]
print(json.dumps(r))'

# probe ID EDIT: run the probe in a container edited by EDIT; $T/ID.json, rc.
probe () {
  make_bundle "$T/$1" "$(args "$PROBE"); $2" || return 1
  "${C[@]}" run -b "$T/$1" "$1" >"$T/$1.json" 2>"$T/$1.err" </dev/null
  rc=$?
}
# check ID DESC PYTHON-EXPR (on r, the probe's JSON; host: the host's names)
check () {
  if [ "$rc" = 0 ] && python3 - "$T/$1.json" "$3" <<'PYEOF'; then
import json, os, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
# The host's hierarchies: cgroup mounts right below /sys/fs/cgroup, and links
# (plain directories in the host's tmpfs are no hierarchy: conmon makes some).
host = {}
for l in open("/proc/self/mountinfo"):
    f = l.split(); d = f.index("-")
    if f[d + 1] in ("cgroup", "cgroup2") and os.path.dirname(f[4]) == "/sys/fs/cgroup":
        host[os.path.basename(f[4])] = "dir"
for n in os.listdir("/sys/fs/cgroup"):
    p = "/sys/fs/cgroup/" + n
    if os.path.islink(p):
        host[n] = "link:" + os.readlink(p)
ok = eval(sys.argv[2])
if not ok:
    print(json.dumps(r), file=sys.stderr)
sys.exit(0 if ok else 1)
PYEOF
    ok "$2"
  else
    not_ok "$2" "exit $rc" "$(cat "$T/$1.err")" "$(cat "$T/$1.json")"
  fi
}

CGMOUNT='c["mounts"] = [m for m in c["mounts"] if m["destination"] != "/sys/fs/cgroup"] + [{"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": OPTS}]'
mnt () { printf '%s' "${CGMOUNT/OPTS/$1}"; }
CGNS='c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "cgroup"] + [{"type": "cgroup"}]'
NOCGNS='without("cgroup")'
RO='["nosuid", "noexec", "nodev", "relatime", "ro"]'
RW='["nosuid", "noexec", "nodev", "relatime"]'

host_before=$(grep -c ' /sys/fs/cgroup' /proc/self/mountinfo)
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
  V2=1
else
  V2=0
fi
HYBRID=0
[ "$V2" = 0 ] && [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] && HYBRID=1

if is_root && [ "$V2" = 0 ]; then
  probe v1ro "$NOCGNS; $(mnt "$RO")"
  check v1ro "v1 host: one directory or link per host hierarchy, named as on the host" \
    'r["names"] == host'
  check v1ro "v1 host: memory shows the container's own cgroup (pid 1 in cgroup.procs)" \
    '"1" in r["procs"].get("memory", []) and r["procs"]["memory"] == ["1"]'
  check v1ro "v1 host: every hierarchy directory shows the container's cgroup" \
    'all(v == ["1"] for v in r["procs"].values())'
  check v1ro "v1 host: read-only by default (ro): mkdir is EROFS, in the tmpfs too" \
    'r["mk"]["memory"] == "EROFS" and r["mk"][""] == "EROFS"'
  check v1ro "v1 host: /sys/fs/cgroup is a tmpfs, memory a cgroup mount" \
    'r["fs"]["/sys/fs/cgroup"] == "tmpfs" and r["fs"]["/sys/fs/cgroup/memory"] == "cgroup"'
  if [ "$HYBRID" = 1 ]; then
    check v1ro "hybrid host: the unified hierarchy at /sys/fs/cgroup/unified, the container's" \
      'r["fs"].get("/sys/fs/cgroup/unified") == "cgroup2" and r["procs"]["unified"] == ["1"]'
  else
    skip "hybrid host: the unified hierarchy" "no cgroup2 at /sys/fs/cgroup/unified here"
  fi

  probe v1rw "$NOCGNS; $(mnt "$RW")"
  check v1rw "v1 host: without ro the hierarchies are writable (a sub-cgroup can be made)" \
    'r["mk"]["memory"] == "ok" and r["procs"]["memory"] == ["1"]'

  probe v1ns "$CGNS; $(mnt "$RO")"
  check v1ns "v1 host, cgroup namespace: the same directories and links" 'r["names"] == host'
  check v1ns "v1 host, cgroup namespace: memory and freezer show the container's cgroup" \
    'r["procs"]["memory"] == ["1"] and r["procs"]["freezer"] == ["1"] and ":memory:/\n" in r["cg"]'
  check v1ns "v1 host, cgroup namespace: read-only (ro)" 'r["mk"]["memory"] == "EROFS"'

  probe v1nsrw "$CGNS; $(mnt "$RW")"
  check v1nsrw "v1 host, cgroup namespace, rw: a sub-cgroup can be made" \
    'r["mk"]["memory"] == "ok" and all(v == ["1"] for v in r["procs"].values())'
elif is_root; then
  probe v2ro "$CGNS; $(mnt "$RO")"
  check v2ro "v2 host, cgroup namespace: one cgroup2 mount, the container's cgroup, read-only" \
    'r["fs"]["/sys/fs/cgroup"] == "cgroup2" and "1" in r["root_procs"] and r["mk"][""] == "EROFS"'
  probe v2rw "$NOCGNS; $(mnt "$RW")"
  if grep -q '0::/\\n' "$T/v2rw.json"; then
    skip "v2 host: rw" "the container got no cgroup of its own (the root cgroup is not its to write)"
  else
    check v2rw "v2 host: without ro the container's cgroup is writable (a sub-cgroup can be made)" \
      'r["fs"]["/sys/fs/cgroup"] == "cgroup2" and "1" in r["root_procs"] and r["mk"][""] == "ok"'
  fi
else
  # Rootless: a user namespace owning a new cgroup namespace may mount the
  # hierarchies; what it may not is left empty with a warning.
  # Rootless containers get no cgroup of their own on v1: what they see is
  # the cgroup they were started in, others' processes in it too ("0" in v2's
  # cgroup.procs: outside the pid namespace).
  if [ "$V2" = 0 ]; then
    probe rl "$CGNS; $(mnt "$RO")"
    check rl "rootless, cgroup namespace: the host's hierarchies are there" 'r["names"] == host'
    if grep -q 'left empty' "$T/rl.err"; then
      check rl "rootless, cgroup namespace: each shows the container's cgroup or is left empty" \
        '"memory" in r["procs"] and all("1" in v or v == "EENOENT" for v in r["procs"].values())'
      ok "rootless: a hierarchy that can't be mounted is said so: $(head -1 "$T/rl.err")"
    else
      check rl "rootless, cgroup namespace: each hierarchy is mounted, the container's cgroup" \
        '"memory" in r["procs"] and all("1" in v for v in r["procs"].values()) and ":memory:/\n" in r["cg"]'
    fi
    check rl "rootless, cgroup namespace: read-only (ro)" 'r["mk"]["memory"] == "EROFS"'
    probe rlb "$NOCGNS; $(mnt "$RO")"
    check rlb "rootless, no cgroup namespace: the host's hierarchies, each the container's cgroup" \
      'r["names"] == host and all("1" in v for v in r["procs"].values())'
  else
    probe rl "$CGNS; $(mnt "$RO")"
    check rl "rootless, v2 host: one cgroup2 mount" 'r["fs"]["/sys/fs/cgroup"] == "cgroup2"'
  fi
fi

if [ "$(grep -c ' /sys/fs/cgroup' /proc/self/mountinfo)" = "$host_before" ]; then
  ok "the container's cgroup mounts don't reach the caller's mount table"
else
  not_ok "the container's cgroup mounts don't reach the caller's mount table" \
    "$(grep ' /sys/fs/cgroup' /proc/self/mountinfo)"
fi

done_testing
