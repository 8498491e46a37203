#!/bin/bash
# The OCI command line as runc's, which tools and runc's own tests script
# against: help on every command, the version lines, list/ps/kill/delete/
# run --keep/--log behaviour (events: tests/oci/cgroup-compat.sh) (see csrun-oci(8), "runc compatibility").
# Runs as root and as an unprivileged user; what needs a cgroup (the paused
# container) runs as root only.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
PY=/usr/bin/python3
CG=csrun-cli-test-$$
cleanup () {
  for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done
  for d in /sys/fs/cgroup/*/$CG /sys/fs/cgroup/$CG /sys/fs/cgroup/*/csruncli$$.slice \
    /sys/fs/cgroup/csruncli$$.slice; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
  _tap_cleanup
}
trap cleanup EXIT
. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs
status_of () { "${C[@]}" state "$1" 2>/dev/null | json_get /dev/stdin 'j["status"]' 2>/dev/null; }
wait_status () {
  for _ in $(seq 200); do [ "$(status_of "$1")" = "$2" ] && return 0; sleep 0.05; done
  return 1
}
# A cgroupsPath of our own as root (removed at exit), none rootless.
cgpath () { is_root && printf '; c["linux"]["cgroupsPath"] = "/%s/%s"' "$CG" "$1"; }

# ---------------------------------------------------------------- help and version
bad=""
for cmd in create run start state kill delete list ps spec features pause resume exec \
  update checkpoint restore; do
  for h in -h --help; do
    out=$("${C[@]}" "$cmd" "$h" 2>&1)
    rc=$?
    l0=$(sed -n 1p <<<"$out")
    l1=$(sed -n 2p <<<"$out")
    [ "$rc" = 0 ] && [ "$l0" = "NAME:" ] && [[ $l1 == "   csrun $cmd - "* ]] || bad+="$cmd $h: exit $rc: $l0 / $l1; "
  done
done
[ -z "$bad" ] && ok "every OCI command's -h/--help: exit 0, NAME: then 'csrun CMD - ...'" ||
  not_ok "-h/--help on every OCI command" "$bad"
out=$("$CSRUN" -h 2>&1)
rc=$?
[ "$rc" = 0 ] && [[ $(sed -n 2p <<<"$out") == "   csrun - Open Container Initiative runtime"* ]] &&
  [ "$("$CSRUN" --help 2>&1)" = "$out" ] && ok "csrun -h and --help: runc's NAME: layout" ||
  not_ok "csrun -h" "exit $rc: $out"
out=$("$CSRUN" help ps 2>&1) && [[ $(sed -n 2p <<<"$out") == "   csrun ps - "* ]] &&
  out=$("$CSRUN" help 2>&1) && [[ $out == *"GLOBAL OPTIONS:"* ]] &&
  ok "csrun help [COMMAND]" || not_ok "csrun help [COMMAND]" "$out"
out=$("$CSRUN" foo -h 2>&1)
rc=$?
[ "$rc" != 0 ] && [[ $out == *"No help topic for 'foo'"* ]] &&
  ! "$CSRUN" help foo >/dev/null 2>&1 && ok "help of an unknown command: No help topic, exit non-zero" ||
  not_ok "csrun foo -h" "exit $rc: $out"
# A link named after another runtime prints that name (what runc's tests read).
mkdir -p "$T/bin" && ln -s "$CSRUN" "$T/bin/runc"
v=$("$T/bin/runc" -v)
h=$("$T/bin/runc" --root "$R" run -h | sed -n 2p)
if [[ $(sed -n 1p <<<"$v") =~ ^runc\ version\ [0-9]+\.[0-9]+\.[0-9]+ ]] &&
  [[ $(sed -n 2p <<<"$v") == "commit: "* ]] && [[ $(sed -n 3p <<<"$v") =~ ^spec:\ 1\.[0-9]+\.[0-9]+ ]] &&
  [[ $h == "   runc run - "* ]] && [ "$("$CSRUN" -v)" = "$("$CSRUN" --version)" ]; then
  ok "-v/--version: '<name> version X', 'commit:', 'spec:' with the name it was started as"
else
  not_ok "-v/--version as runc" "$v" "$h"
fi

# ---------------------------------------------------------------- spec
mkdir -p "$T/spec" && (cd "$T/spec" && "$CSRUN" spec)
ns=$(json_get "$T/spec/config.json" '" ".join(n["type"] for n in j["linux"]["namespaces"])')
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then want="pid network ipc uts mount cgroup"; else want="pid network ipc uts mount"; fi
[ "$ns" = "$want" ] && ok "spec: runc's namespaces, and cgroup on a cgroup v2 host only (crun)" ||
  not_ok "spec namespaces" "got '$ns', want '$want'"

# ---------------------------------------------------------------- --log, checkpoint
H=$T/hello
make_bundle "$H" "$(args 'print("Hello World")')"
rm -f "$T/log.out"
out=$("${C[@]}" --log "$T/log.out" run -b "$H" h1 2>&1 </dev/null)
rc=$?
[ "$rc" = 0 ] && [ "$out" = "Hello World" ] && [ -f "$T/log.out" ] &&
  ok "--log FILE is created even when nothing failed" || not_ok "--log created" "exit $rc: $out" "$(ls -l "$T" 2>&1)"
out=$("${C[@]}" --log "$T/log.json" --log-format json --debug run -b "$H" h2 2>"$T/h2.err" </dev/null)
if [ "$out" = "Hello World" ] && grep -q '"level":"debug"' "$T/log.json" &&
  ! grep -q debug "$T/h2.err"; then
  ok "--debug with --log: the debug messages go to the log (json), not stderr"
else
  not_ok "--debug to --log" "$(head -5 "$T/log.json" 2>&1)" "$(cat "$T/h2.err")"
fi
"${C[@]}" --log "$T/log.txt" --debug run -b "$H" h3 >/dev/null 2>&1 </dev/null
grep -q '^time=".*" level=debug msg="' "$T/log.txt" && ok "--log-format text: time=... level=... msg=..." ||
  not_ok "--log text format" "$(head -3 "$T/log.txt" 2>&1)"
out=$("${C[@]}" checkpoint h1 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"not supported"* ]] && ok "checkpoint: not supported, exit 1" ||
  not_ok "checkpoint" "exit $rc: $out"

# ---------------------------------------------------------------- run --keep
out=$("${C[@]}" run --keep -b "$H" keep1 2>&1 </dev/null)
rc=$?
if [ "$rc" = 0 ] && [ "$(status_of keep1)" = stopped ] && "${C[@]}" delete keep1 &&
  ! "${C[@]}" state keep1 >/dev/null 2>&1; then
  ok "run --keep leaves the stopped container for delete"
else
  not_ok "run --keep" "exit $rc: $out" "$("${C[@]}" state keep1 2>&1)"
fi
make_bundle "$T/exit7" "$(args 'raise SystemExit(7)')"
"${C[@]}" run -b "$T/exit7" ex7 >/dev/null 2>&1 </dev/null
rc=$?
[ "$rc" = 7 ] && ! "${C[@]}" state ex7 >/dev/null 2>&1 &&
  ok "run exits with the container's status and deletes it" || not_ok "run exit status" "exit $rc"

# ---------------------------------------------------------------- config.json changed after create
make_bundle "$T/snap" "$(args 'import time; time.sleep(60)'); c[\"hooks\"] = {\"poststop\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"echo done > $T/poststop.out\"]}]}"
"${C[@]}" create -b "$T/snap" snap1 >/dev/null 2>&1 </dev/null
echo '{"ociVersion": "1.0.0"}' >"$T/snap/config.json"
"${C[@]}" start snap1 && [ "$(status_of snap1)" = running ] && "${C[@]}" delete -f snap1 &&
  [ "$(cat "$T/poststop.out" 2>/dev/null)" = done ] &&
  ok "config.json edited after create does not affect the container (its hooks still run)" ||
  not_ok "config.json edited after create" "$(ls -l "$T" 2>&1)"

# ---------------------------------------------------------------- list, ps, kill
S=$T/sleep
make_bundle "$S" "$(args 'import time; time.sleep(60)')$(cgpath l1)"
make_bundle "$T/sleep2" "$(args 'import time; time.sleep(60)')$(cgpath l2)"
"${C[@]}" run -d -b "$S" l1 >/dev/null 2>&1 </dev/null
"${C[@]}" run -d -b "$T/sleep2" l2 >/dev/null 2>&1 </dev/null
out=$("${C[@]}" list --format json)
if [ "$(wc -l <<<"$out")" = 1 ] &&
  [[ $out == '[{"ociVersion":"'*'","id":"l1","pid":'*',"status":"running","bundle":"'"$S"'","rootfs":'*'},{"ociVersion":'*'"id":"l2"'*'}]' ]]; then
  ok "list --format json: one line, runc's field order"
else
  not_ok "list --format json" "$out"
fi
out=$("${C[@]}" list -f table)
[[ $(sed -n 1p <<<"$out") =~ ^ID\ +PID\ +STATUS\ +BUNDLE\ +CREATED\ +OWNER ]] &&
  [[ $(sed -n 2p <<<"$out") == "l1 "*running*"$S"* ]] && [ "$("${C[@]}" list -q | tr '\n' ' ')" = "l1 l2 " ] &&
  ok "list -f table and list -q" || not_ok "list table" "$out"
pid=$("${C[@]}" state l1 | json_get /dev/stdin 'j["pid"]')
out=$("${C[@]}" ps l1)
[[ $(sed -n 1p <<<"$out") =~ ^UID\ +PID\ +PPID\ +C\ +STIME\ +TTY\ +TIME\ +CMD ]] &&
  [ "$(sed 1d <<<"$out" | awk '{print $2}')" = "$pid" ] &&
  ok "ps: ps -ef's table filtered to the container's processes" || not_ok "ps" "$out (pid $pid)"
out=$("${C[@]}" ps l1 -e -x)
out2=$("${C[@]}" ps l1 -- -o pid,comm)
[[ $(sed -n 1p <<<"$out") =~ ^\ +PID\ +TTY\ +STAT\ +TIME\ +COMMAND ]] &&
  [ "$(sed 1d <<<"$out" | awk '{print $1}')" = "$pid" ] &&
  [ "$(sed 1d <<<"$out2" | tr -s ' ' | sed 's/^ //')" = "$pid python3" ] &&
  ok "ps ID PS-OPTIONS (and ps ID -- PS-OPTIONS) passes them to ps(1)" || not_ok "ps -e -x" "$out" "$out2"
out=$("${C[@]}" ps -f json l1)
[ "$out" = "[$pid]" ] && ok "ps -f json: the pids as a JSON array" || not_ok "ps -f json" "$out"
out=$("${C[@]}" ps l1 -o comm 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"no PID column"* ]] && ok "ps with options that drop the PID column: an error" ||
  not_ok "ps -o comm" "exit $rc: $out"
bad=""
for sig in 0 SIGCONT CONT cont 18 sigcont; do
  "${C[@]}" kill l1 "$sig" 2>>"$T/kill.err" || bad+="$sig "
done
[ -z "$bad" ] && [ "$(status_of l1)" = running ] &&
  ok "kill ID 0 / names with and without SIG / numbers" || not_ok "kill signals" "refused: $bad" "$(cat "$T/kill.err")"
"${C[@]}" kill l1 KILL && wait_status l1 stopped || not_ok "kill KILL" "$(status_of l1)"
out=$("${C[@]}" kill -a l1 0 2>&1)
rc=$?
out2=$("${C[@]}" kill l1 0 2>&1)
rc2=$?
[ "$rc" = 0 ] && [ "$rc2" = 1 ] && [[ $out2 == *"not running"* ]] &&
  ok "kill --all on a stopped container succeeds; without --all it is 'not running'" ||
  not_ok "kill -a stopped" "exit $rc: $out" "exit $rc2: $out2"
"${C[@]}" delete l1 && ok "delete of a stopped container" || not_ok "delete stopped"

# ---------------------------------------------------------------- delete of created / paused
"${C[@]}" create -b "$S" cr1 >/dev/null 2>&1 </dev/null
cpid=$("${C[@]}" state cr1 | json_get /dev/stdin 'j["pid"]')
if "${C[@]}" delete cr1 && ! "${C[@]}" state cr1 >/dev/null 2>&1 &&
  for _ in $(seq 100); do [ -d "/proc/$cpid" ] || break; sleep 0.05; done && [ ! -d "/proc/$cpid" ]; then
  ok "delete of a created container kills its process and removes it (no --force)"
else
  not_ok "delete created" "$("${C[@]}" state cr1 2>&1)"
fi
# --regex (crun's): every container whose id matches.
"${C[@]}" run -d -b "$S" rx-a >/dev/null 2>&1 </dev/null
"${C[@]}" run -d -b "$S" rx-b >/dev/null 2>&1 </dev/null
"${C[@]}" kill --regex '^rx-' 0 && "${C[@]}" delete -f --regex '^rx-' &&
  [ "$("${C[@]}" list -q | grep -c '^rx-')" = 0 ] && "${C[@]}" state l2 >/dev/null &&
  ok "kill --regex and delete -f --regex act on the matching ids only" ||
  not_ok "--regex" "$("${C[@]}" list 2>&1)"

if is_root; then
  # A container in the caller's pid namespace: delete -f (and kill --all
  # without a cgroup) hit its processes only, never the rest of that namespace (here a throwaway
  # one, so that a regression kills nothing else).
  make_bundle "$T/nopid" "$(args 'import time; time.sleep(60)'); without('pid')"
  out=$(unshare -p -f -m --propagation private --mount-proc bash -c '
    sleep 60 & sib=$!
    "$@" run -d -b "'"$T/nopid"'" np1 </dev/null >/dev/null 2>&1
    "$@" delete -f np1 >/dev/null 2>&1; echo "delete=$?"
    echo "sibling=$(cut -d" " -f3 /proc/$sib/stat 2>/dev/null)"
    kill $sib' bash "${C[@]}" 2>&1)
  [ "$out" = $'delete=0\nsibling=S' ] &&
    ok "no pid namespace: delete -f leaves the caller's other processes alone" ||
    not_ok "no pid namespace: delete -f" "$out"
  "${C[@]}" pause l2 && [ "$(status_of l2)" = paused ] || not_ok "pause l2" "$(status_of l2)"
  t0=$(date +%s)
  "${C[@]}" delete --force l2
  rc=$?
  # A frozen process never dies: without the thaw, delete would hang (the
  # bound catches that, with room for a loaded machine).
  if [ "$rc" = 0 ] && ! "${C[@]}" state l2 >/dev/null 2>&1 && [ $(($(date +%s) - t0)) -lt 30 ] &&
    [ ! -d "/sys/fs/cgroup/memory/$CG/l2" ] && [ ! -d "/sys/fs/cgroup/$CG/l2" ]; then
    ok "delete --force of a paused container: killed (thawed), removed, cgroup gone"
  else
    not_ok "delete --force paused" "exit $rc" "$("${C[@]}" list 2>&1)"
  fi
  if [ ! -d /run/systemd/system ]; then
    make_bundle "$T/sd" "$(args 'print("Hello World")'); c[\"linux\"][\"cgroupsPath\"] = \"csruncli$$.slice:t:sd1\""
    out=$("${C[@]}" --systemd-cgroup run -b "$T/sd" sd1 2>&1 </dev/null)
    [[ $out == *"Hello World"* ]] && [[ $out == *"systemd is not running"* ]] &&
      ok "--systemd-cgroup without systemd: a warning, the cgroup made directly" ||
      not_ok "--systemd-cgroup without systemd" "$out"
  else
    skip "--systemd-cgroup without systemd" "systemd runs on this host"
  fi
else
  "${C[@]}" delete --force l2
  skip "delete of a paused container, --systemd-cgroup" "n/a: root only (no writable cgroup for this user)"
fi

done_testing
