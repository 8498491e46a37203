#!/bin/bash
# linux.resources and the container cgroup as runc and crun handle them
# (issue 12): cpuset cpus/mems (and an empty v1 cpuset parent filled),
# memory reservation/swappiness/disableOOMKiller, hugetlb page sizes, net_cls
# (an error where the controller is missing), unified on a v1 cgroup (an
# error), the hybrid host's unified placement, `update` with runc's flags and
# -r from a pipe (a cpu quota alone keeps the period), device access letters
# as runc reads them, a non-empty cgroup a warning, pause/resume.
#
# Root: real cgroups, all under /csrun-cgtest-PID (made by the test or by
# csrun, removed at the end); only cgroups the test made are touched.
# Rootless: what needs no cgroup (the config checks).
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
PY=/usr/bin/python3
CG=/csrun-cgtest-$$
V1=/sys/fs/cgroup
cleanup_cgroups () {
  for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done
  if is_root; then
    local d
    for d in $(find "$V1"/*"$CG" "$V1"/*"$CG"-p "$V1$CG" "$V1$CG-p" -depth -type d 2>/dev/null); do
      [ -f "$d/cgroup.freeze" ] && echo 0 >"$d/cgroup.freeze" 2>/dev/null
      [ -f "$d/freezer.state" ] && echo THAWED >"$d/freezer.state" 2>/dev/null
      rmdir "$d" 2>/dev/null
    done
  fi
}
trap 'cleanup_cgroups; _tap_cleanup' EXIT

. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs
SLEEP=$(args 'import time; time.sleep(60)')

# start ID EDIT: a detached container from a bundle edited by EDIT (out/rc set).
start () {
  make_bundle "$T/$1" "$SLEEP; $2" || return 1
  "${C[@]}" run -d -b "$T/$1" "$1" >"$T/$1.out" 2>&1 </dev/null
  rc=$?
  out=$(cat "$T/$1.out")
}
# create_fails ID EDIT PATTERN DESC: create must fail with PATTERN in its message.
create_fails () {
  make_bundle "$T/$1" "$SLEEP; $2" || return 1
  "${C[@]}" create -b "$T/$1" "$1" >"$T/$1.out" 2>&1 </dev/null
  local rc=$? out
  out=$(cat "$T/$1.out")
  "${C[@]}" delete --force "$1" >/dev/null 2>&1
  if [ "$rc" != 0 ] && grep -q -- "$3" <<<"$out"; then
    ok "$4"
  else
    not_ok "$4" "exit $rc" "$out"
  fi
}
val () { tr -d '\n' <"$1" 2>/dev/null; }
path_of () { printf '%s' "c[\"linux\"][\"cgroupsPath\"] = \"$1\""; }

# ------------------------------------------------------------ everywhere: the config checks
create_fails hp1 'c["linux"]["resources"]["hugepageLimits"] = [{"pageSize": "3MB", "limit": 1048576}]' \
  "invalid hugepage size '3MB'" "hugepageLimits: a page size the kernel does not have is an error"
create_fails hp2 'c["linux"]["resources"]["hugepageLimits"] = [{"pageSize": "2XB", "limit": 1}]' \
  "invalid hugepage size '2XB'" "hugepageLimits: a malformed page size is an error"
create_fails sw1 'c["linux"]["resources"]["memory"] = {"limit": 33554432, "swappiness": 101}' \
  "swappiness" "memory.swappiness above 100 is an error"

if ! is_root; then
  make_bundle "$T/acc" "$SLEEP; "'c["linux"]["resources"]["devices"] = [{"allow": False, "type": "c", "major": 1, "minor": 11, "access": "rwa"}, {"allow": True, "type": "c", "major": 1, "minor": 3, "access": "wr"}]'
  if "${C[@]}" create -b "$T/acc" acc >"$T/acc.out" 2>&1 </dev/null; then
    ok "device access 'rwa' and 'wr' accepted (rootless: not enforced, said so)"
  else
    not_ok "device access 'rwa' and 'wr' accepted" "$(cat "$T/acc.out")"
  fi
  "${C[@]}" delete --force acc >/dev/null 2>&1
  done_testing
  exit
fi

# ------------------------------------------------------------ root: real cgroups
# V2: the container cgroup is cgroup v2 (a v2 host); else the v1 hierarchies
# (with a hybrid host's unified placement).  cg CONTROLLER PATH V1FILE V2FILE
# names a limit file of the cgroup at PATH either way.
V2=0
if [ "$(stat -f -c %T "$V1" 2>/dev/null)" = cgroup2fs ] && grep -qw memory "$V1/cgroup.controllers"; then
  V2=1
elif ! grep -q ' - cgroup cgroup .*cpuset' /proc/self/mountinfo; then
  skip "cgroup limits" "this host has neither cgroup v2 with the memory controller nor a v1 cpuset hierarchy"
  done_testing
  exit
fi
cg () {
  if [ "$V2" = 1 ]; then printf '%s' "$V1$2/$4"; else printf '%s' "$V1/$1$2/$3"; fi
}
status_of () { "${C[@]}" state "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])'; }

# cpuset under a parent the test made (v1: with an empty cpuset, which runc
# and crun fill from its parent).
if [ "$V2" = 1 ]; then mkdir "$V1$CG-p"; else mkdir "$V1/cpuset$CG-p"; fi
start cs1 "$(path_of "$CG-p/cs1"); c['linux']['resources']['cpu'] = {'cpus': '0', 'mems': '0'}"
if [ "$rc" = 0 ] && [ "$(val "$(cg cpuset "$CG-p/cs1" cpuset.cpus cpuset.cpus)")" = 0 ] &&
  [ "$(val "$(cg cpuset "$CG-p/cs1" cpuset.mems cpuset.mems)")" = 0 ]; then
  ok "cpu.cpus/mems written (v1: an empty cpuset parent is filled from its parent)"
else
  not_ok "cpu.cpus/mems written (v1: an empty cpuset parent is filled)" "exit $rc" "$out" \
    "cpus=$(val "$(cg cpuset "$CG-p/cs1" cpuset.cpus cpuset.cpus)")"
fi

# Hybrid host: the container also has its place in the unified hierarchy.
if [ "$V2" = 0 ] && [ "$(stat -f -c %T "$V1/unified" 2>/dev/null)" = cgroup2fs ] && [ "$rc" = 0 ]; then
  pid=$("${C[@]}" state cs1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
  if grep -qx "0::$CG-p/cs1" "/proc/$pid/cgroup" && [ -d "$V1/unified$CG-p/cs1" ] &&
    grep -qx "[0-9]*:memory:$CG-p/cs1" "/proc/$pid/cgroup" && grep -qx "[0-9]*:cpuset:$CG-p/cs1" "/proc/$pid/cgroup"; then
    ok "hybrid host: the container is in the unified hierarchy too (as runc and crun), and in the v1 ones"
  else
    not_ok "hybrid host: the container is in the unified hierarchy too" "$(cat "/proc/$pid/cgroup")"
  fi
  "${C[@]}" delete --force cs1 >/dev/null 2>&1
  if [ ! -d "$V1/unified$CG-p/cs1" ] && [ ! -d "$V1/memory$CG-p/cs1" ]; then
    ok "delete removes the unified and v1 directories"
  else
    not_ok "delete removes the unified and v1 directories"
  fi
else
  echo "# not a hybrid host: no unified placement to check"
fi
"${C[@]}" delete --force cs1 >/dev/null 2>&1

# memory extras (v2 has memory.low only: swappiness and disableOOMKiller warn)
start m1 "$(path_of "$CG/m1"); c['linux']['resources']['memory'] = {'limit': 67108864, 'reservation': 33554432, 'swappiness': 10, 'disableOOMKiller': True}"
RES=$(cg memory "$CG/m1" memory.soft_limit_in_bytes memory.low)
LIM=$(cg memory "$CG/m1" memory.limit_in_bytes memory.max)
if [ "$V2" = 1 ]; then
  if [ "$rc" = 0 ] && [ "$(val "$RES")" = 33554432 ] && grep -q "swappiness ignored" <<<"$out"; then
    ok "memory.reservation written (memory.low); swappiness, disableOOMKiller: warnings on v2"
  else
    not_ok "memory.reservation written (memory.low)" "exit $rc" "$out"
  fi
else
  M=$V1/memory$CG/m1
  if [ "$rc" = 0 ] && [ "$(val "$RES")" = 33554432 ] &&
    [ "$(val "$M/memory.swappiness")" = 10 ] && grep -qx 'oom_kill_disable 1' "$M/memory.oom_control"; then
    ok "memory.reservation, swappiness, disableOOMKiller written (v1)"
  else
    not_ok "memory.reservation, swappiness, disableOOMKiller written (v1)" "exit $rc" "$out" \
      "soft=$(val "$RES") swappiness=$(val "$M/memory.swappiness")"
  fi
fi

# update: runc's flags
PIDS=$(cg pids "$CG/m1" pids.max pids.max)
"${C[@]}" update m1 --memory 50M --memory-reservation 20M --pids-limit 10 --cpuset-cpus 0 >"$T/u.out" 2>&1
urc=$?
if [ "$urc" = 0 ] && [ "$(val "$LIM")" = $((50 << 20)) ] && [ "$(val "$RES")" = $((20 << 20)) ] &&
  [ "$(val "$PIDS")" = 10 ] && [ "$(val "$(cg cpuset "$CG/m1" cpuset.cpus cpuset.cpus)")" = 0 ]; then
  ok "update --memory 50M --memory-reservation --pids-limit --cpuset-cpus"
else
  not_ok "update --memory 50M --memory-reservation --pids-limit --cpuset-cpus" "exit $urc" "$(cat "$T/u.out")"
fi
"${C[@]}" update m1 --memory -1 --pids-limit -1 >"$T/u.out" 2>&1
urc=$?
if [ "$V2" = 1 ]; then unlimited=max; else unlimited=$(val "$V1/memory$CG/memory.limit_in_bytes"); fi
if [ "$urc" = 0 ] && [ "$(val "$LIM")" = "$unlimited" ] && [ "$(val "$PIDS")" = max ]; then
  ok "update --memory -1 --pids-limit -1: unlimited"
else
  not_ok "update --memory -1 --pids-limit -1: unlimited" "exit $urc" "$(cat "$T/u.out")" "$(val "$LIM")"
fi
printf '{"pids": {"limit": 42}, "memory": {"reservation": 16777216}}' |
  "${C[@]}" update -r - m1 >"$T/u.out" 2>&1
urc=$?
if [ "$urc" = 0 ] && [ "$(val "$PIDS")" = 42 ] && [ "$(val "$RES")" = 16777216 ]; then
  ok "update -r - reads the resources JSON from a pipe"
else
  not_ok "update -r - reads the resources JSON from a pipe" "exit $urc" "$(cat "$T/u.out")"
fi

# cpu: a quota alone keeps the period, a period alone the quota
start c1 "$(path_of "$CG/c1"); c['linux']['resources']['cpu'] = {'quota': 25000, 'period': 50000}"
# quota_period CTR: "QUOTA PERIOD" as the kernel has them.
quota_period () {
  if [ "$V2" = 1 ]; then
    val "$V1$CG/$1/cpu.max"
  else
    printf '%s %s' "$(val "$V1/cpu$CG/$1/cpu.cfs_quota_us")" "$(val "$V1/cpu$CG/$1/cpu.cfs_period_us")"
  fi
}
if [ "$V2" = 1 ]; then NOQUOTA=max; else NOQUOTA=-1; fi
"${C[@]}" update c1 --cpu-quota 30000 >"$T/u.out" 2>&1
urc=$?
if [ "$urc" = 0 ] && [ "$(quota_period c1)" = "30000 50000" ]; then
  ok "update --cpu-quota alone keeps the period"
else
  not_ok "update --cpu-quota alone keeps the period" "exit $urc" "$(cat "$T/u.out")" "$(quota_period c1)"
fi
"${C[@]}" update c1 --cpu-period=200000 >"$T/u.out" 2>&1
urc=$?
if [ "$urc" = 0 ] && [ "$(quota_period c1)" = "30000 200000" ]; then
  ok "update --cpu-period=N alone keeps the quota"
else
  not_ok "update --cpu-period=N alone keeps the quota" "exit $urc" "$(cat "$T/u.out")" "$(quota_period c1)"
fi
# shares 200 is cpu.weight 8 on v2 (runc's conversion)
SHARES=$(cg cpu "$CG/c1" cpu.shares cpu.weight)
if [ "$V2" = 1 ]; then want_shares=8; else want_shares=200; fi
"${C[@]}" update c1 --cpu-quota -1 --cpu-share 200 >"$T/u.out" 2>&1
if [ $? = 0 ] && [ "$(quota_period c1)" = "$NOQUOTA 200000" ] && [ "$(val "$SHARES")" = "$want_shares" ]; then
  ok "update --cpu-quota -1 --cpu-share"
else
  not_ok "update --cpu-quota -1 --cpu-share" "$(cat "$T/u.out")" "$(quota_period c1) $(val "$SHARES")"
fi
if "${C[@]}" update c1 --no-such-flag 1 >"$T/u.out" 2>&1; then
  not_ok "update: an unknown flag is an error"
else
  ok "update: an unknown flag is an error"
fi

# pause / resume
frozen () {
  if [ "$V2" = 1 ]; then
    grep -qx "frozen $2" "$V1$CG/$1/cgroup.events"
  else
    [ "$(val "$V1/freezer$CG/$1/freezer.state")" = "$([ "$2" = 1 ] && echo FROZEN || echo THAWED)" ]
  fi
}
"${C[@]}" pause c1 >"$T/p.out" 2>&1
prc=$?
st=$(status_of c1)
if [ "$prc" = 0 ] && [ "$st" = paused ] && frozen c1 1; then
  ok "pause: the cgroup is frozen, state paused"
else
  not_ok "pause: the cgroup is frozen, state paused" "exit $prc $st" "$(cat "$T/p.out")"
fi
"${C[@]}" update c1 --pids-limit 30 >/dev/null 2>&1
st=$(status_of c1)
"${C[@]}" resume c1 >"$T/p.out" 2>&1
prc=$?
st2=$(status_of c1)
if [ "$st" = paused ] && [ "$prc" = 0 ] && [ "$st2" = running ] && frozen c1 0; then
  ok "update keeps a paused container paused; resume thaws it"
else
  not_ok "update keeps a paused container paused; resume thaws it" "$st $prc $st2" "$(cat "$T/p.out")"
fi

# events: runc's JSON lines
line=$("${C[@]}" events --stats c1 2>&1 | head -1)
if [[ "$line" == '{"type":"stats","id":"c1","data":{'* ]] &&
  python3 -c 'import json,sys; d=json.loads(sys.argv[1])["data"]; assert d["pids"]["current"] >= 1 and "memory" in d and "cpu" in d' "$line"; then
  ok "events --stats: one stats line as runc prints it"
else
  not_ok "events --stats: one stats line as runc prints it" "$line"
fi
timeout 20 "${C[@]}" events --interval 100ms c1 >"$T/ev.out" 2>&1 &
evpid=$!
for _ in $(seq 50); do grep -q '"type":"stats"' "$T/ev.out" && break; sleep 0.1; done
"${C[@]}" delete --force c1 >/dev/null 2>&1
wait "$evpid"
evrc=$?
if [ "$evrc" = 0 ] && grep -q '^{"type":"stats","id":"c1"' "$T/ev.out"; then
  ok "events --interval 100ms: stats lines until the container is deleted"
else
  not_ok "events --interval 100ms: stats lines until the container is deleted" "exit $evrc" "$(head -c 500 "$T/ev.out")"
fi
start c1 "$(path_of "$CG/c1")"

# A second container in the same cgroup: a warning, as runc.
start c2 "$(path_of "$CG/c1")"
if [ "$rc" = 0 ] && grep -q "container's cgroup is not empty" <<<"$out"; then
  ok "a non-empty existing cgroup is a warning (runc), not an error"
else
  not_ok "a non-empty existing cgroup is a warning (runc)" "exit $rc" "$out"
fi
"${C[@]}" delete --force c2 >/dev/null 2>&1

# A pre-existing frozen cgroup is refused with runc's words.
if [ "$V2" = 1 ]; then
  mkdir -p "$V1$CG/fz" && echo 1 >"$V1$CG/fz/cgroup.freeze"
else
  mkdir -p "$V1/freezer$CG/fz" && echo FROZEN >"$V1/freezer$CG/fz/freezer.state"
fi
create_fails fz "$(path_of "$CG/fz")" "container's cgroup unexpectedly frozen" \
  "a pre-existing frozen cgroup is refused (runc's message)"
if [ "$V2" = 1 ]; then echo 0 >"$V1$CG/fz/cgroup.freeze"; else echo THAWED >"$V1/freezer$CG/fz/freezer.state"; fi

# Errors, never silently ignored.
if [ "$V2" = 1 ] || ! grep -q ' - cgroup cgroup .*net_cls' /proc/self/mountinfo; then
  create_fails n1 "$(path_of "$CG/n1"); c['linux']['resources']['network'] = {'classID': 1048577}" \
    "net_cls" "network.classID without a net_cls controller is an error"
  create_fails n2 "$(path_of "$CG/n2"); c['linux']['resources']['network'] = {'priorities': [{'name': 'lo', 'priority': 1}]}" \
    "net_prio" "network.priorities without a net_prio controller is an error"
else
  start n1 "$(path_of "$CG/n1"); c['linux']['resources']['network'] = {'classID': 1048577}"
  if [ "$rc" = 0 ] && [ "$(val "$V1/net_cls$CG/n1/net_cls.classid")" = 1048577 ]; then
    ok "network.classID written"
  else
    not_ok "network.classID written" "$out"
  fi
fi
if [ "$V2" = 1 ]; then
  start u1 "$(path_of "$CG/u1"); c['linux']['resources']['unified'] = {'memory.high': '10485760'}"
  if [ "$rc" = 0 ] && [ "$(val "$V1$CG/u1/memory.high")" = 10485760 ]; then
    ok "linux.resources.unified written (v2)"
  else
    not_ok "linux.resources.unified written (v2)" "exit $rc" "$out"
  fi
  create_fails u2 "$(path_of "$CG/u2"); c['linux']['resources']['unified'] = {'foo.bar': '1'}" \
    "the requested cgroup controller .foo. is not available" "unified: an unknown controller is an error (crun's words)"
else
  create_fails u1 "$(path_of "$CG/u1"); c['linux']['resources']['unified'] = {'memory.min': '131072'}" \
    "invalid configuration" "linux.resources.unified on a v1 container cgroup is an error"
fi
# Device access "rwa" (runc reads r and w, ignores a): /dev/kmsg denied.
make_bundle "$T/acc" "$(args 'import os
try:
    os.close(os.open("/dev/kmsg", os.O_WRONLY))
    print("kmsg:ok")
except OSError as e:
    print("kmsg:" + str(e.errno))'); $(path_of "$CG/acc"); "'c["linux"]["devices"] = [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11}]; c["linux"]["resources"]["devices"] = [{"allow": False, "access": "rwm"}, {"allow": False, "type": "c", "major": 1, "minor": 11, "access": "rwa"}]'
"${C[@]}" run -b "$T/acc" acc >"$T/acc.out" 2>&1 </dev/null
arc=$?
if [ "$arc" = 0 ] && grep -qx 'kmsg:1' "$T/acc.out"; then
  ok "device access 'rwa' accepted as runc reads it (r and w; 'a' ignored): /dev/kmsg denied"
else
  not_ok "device access 'rwa' accepted" "exit $arc" "$(cat "$T/acc.out")"
fi
"${C[@]}" delete --force acc >/dev/null 2>&1

# events: an OOM kill is reported
start oom "$(path_of "$CG/oom"); c['linux']['resources']['memory'] = {'limit': 33554432, 'swap': 33554432}"
timeout 30 "${C[@]}" events --interval 1s oom >"$T/oom.out" 2>&1 &
evpid=$!
sleep 0.5
"${C[@]}" exec oom "$PY" -c 'b = bytearray(256 << 20)' >/dev/null 2>&1
for _ in $(seq 50); do grep -q '"type":"oom"' "$T/oom.out" && break; sleep 0.1; done
"${C[@]}" delete --force oom >/dev/null 2>&1
wait "$evpid"
if grep -qx '{"type":"oom","id":"oom"}' "$T/oom.out"; then
  ok "events: an OOM kill in the container is an oom event"
else
  not_ok "events: an OOM kill in the container is an oom event" "$(head -c 500 "$T/oom.out")"
fi

cleanup_cgroups
left=$(find "$V1"/*"$CG" "$V1"/*"$CG"-p "$V1$CG" "$V1$CG-p" -maxdepth 0 2>/dev/null)
if [ -z "$left" ]; then
  ok "no test cgroup left behind"
else
  not_ok "no test cgroup left behind" "$left"
fi
done_testing
