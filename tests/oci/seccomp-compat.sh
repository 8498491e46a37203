#!/bin/bash
# linux.seccomp as runc and crun take it: an entry comparing one argument
# several times (runtime-tools' default profile) is ORed, and
# listenerPath/SCMP_ACT_NOTIFY send the filter's listener with the container
# process state to an agent (tests/oci/seccomp-agent.py), for the container
# and for exec.  Runs as root and as an unprivileged user.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
AGENT_PID=
trap '[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null; for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done; _tap_cleanup' EXIT
. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs

# ---------------------------------------------------------------- repeated arguments
SEC='{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": 22, "args": [{"index": 0, "value": 6, "op": "SCMP_CMP_EQ"}, {"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]}]}'
make_bundle "$T/b1" "$(args 'import ctypes, os; p = ctypes.CDLL(None, use_errno=True).personality; r = [p(x) for x in (6, 8, 0xffffffff)]; print(r[0], r[1], ctypes.get_errno(), r[2] >= 0)'); c[\"linux\"][\"seccomp\"] = json.loads('$SEC')"
out=$("${C[@]}" run -b "$T/b1" s1 </dev/null 2>&1)
[ "$out" = "-1 -1 22 True" ] && ok "an entry comparing arg 0 twice: either value matches (runc, crun)" ||
  not_ok "an entry comparing arg 0 twice" "$out"

# startContainer hooks run under the container's filter (runc, crun), also
# with noNewPrivileges (where csrun loads the filter last).
HOOK='import os
try:
    os.mkdir("/tmp/csrun-hook")
except OSError:
    pass'
make_bundle "$T/bh" "$(args 'pass'); c[\"process\"][\"noNewPrivileges\"] = True; c[\"linux\"][\"seccomp\"] = {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"mkdir\", \"mkdirat\"], \"action\": \"SCMP_ACT_KILL\"}]}; c[\"hooks\"] = {\"startContainer\": [{\"path\": \"$PY\", \"args\": [\"python3\", \"-c\", $(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$HOOK")]}]}"
out=$("${C[@]}" run -b "$T/bh" h1 </dev/null 2>&1)
rc=$?
[ "$rc" != 0 ] && [[ $out == *"error running hook (startContainer)"*"signal 31"* ]] &&
  ok "a startContainer hook runs under the container's seccomp filter" ||
  not_ok "startContainer hook under seccomp" "exit $rc: $out"
"${C[@]}" delete --force h1 >/dev/null 2>&1

# ---------------------------------------------------------------- listenerPath, SCMP_ACT_NOTIFY
if [ "$(uname -m)" != x86_64 ]; then
  skip "seccomp agent" "the test agent knows x86_64's syscall numbers only"
  done_testing
  exit
fi
SOCK=$T/agent.sock
python3 "$CSRUN_SRCDIR/tests/oci/seccomp-agent.py" "$SOCK" "$T/got" 2>"$T/agent.err" &
AGENT_PID=$!
for _ in $(seq 100); do [ -e "$T/got.ready" ] && break; sleep 0.1; done
NOTIFY='{"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "'$SOCK'", "listenerMetadata": "meta-x", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}'
MKDIR='import os
try:
    os.mkdir("/tmp/csrun-notify")
    print("made")
except OSError as e:
    print(e.strerror)'
# The agent numbers what it receives: got.1, got.2, ...
next_got () { echo "$T/got.$(($(ls "$T" | grep -c '^got\.[0-9]') + 1))"; }
for nnp in True False; do
  id=n-$nnp
  g=$(next_got)
  make_bundle "$T/b-$nnp" "$(args "$MKDIR"); c[\"linux\"][\"seccomp\"] = json.loads('$NOTIFY'); c[\"process\"][\"noNewPrivileges\"] = $nnp"
  out=$("${C[@]}" run -b "$T/b-$nnp" "$id" </dev/null 2>&1)
  [ "$out" = "No medium found" ] && ok "SCMP_ACT_NOTIFY (noNewPrivileges $nnp): the agent answers mkdir" ||
    not_ok "SCMP_ACT_NOTIFY (noNewPrivileges $nnp)" "$out" "$(cat "$T/agent.err")"
  got=$(json_get "$g" '(j["ociVersion"], j["fds"], j["received_fds"], j["pid"] > 0, j["metadata"], j["state"]["status"], j["state"]["id"])' 2>&1)
  [ "$got" = "('0.2.0', ['seccompFd'], 1, True, 'meta-x', 'creating', '$id')" ] &&
    ok "the agent gets the listener and the container process state (noNewPrivileges $nnp)" ||
    not_ok "the container process state (noNewPrivileges $nnp)" "$got"
done

make_bundle "$T/b2" "$(args 'import time; time.sleep(60)'); c[\"linux\"][\"seccomp\"] = json.loads('$NOTIFY')"
g=$(next_got)
"${C[@]}" run -d -b "$T/b2" n2 </dev/null >"$T/n2.out" 2>&1 || not_ok "run -d n2" "$(cat "$T/n2.out")"
# (the agent writes what it got for the container itself asynchronously)
for _ in $(seq 100); do [ -e "$g" ] && break; sleep 0.1; done
g=$(next_got)
out=$("${C[@]}" exec n2 "$PY" -c "$MKDIR" 2>&1)
got=$(json_get "$g" '(j["received_fds"], j["metadata"], j["state"]["status"], j["state"]["id"])' 2>&1)
[ "$out" = "No medium found" ] && [ "$got" = "(1, 'meta-x', 'running', 'n2')" ] &&
  ok "exec: the new process's listener goes to the agent too" || not_ok "exec with SCMP_ACT_NOTIFY" "$out" "$got"
"${C[@]}" delete --force n2 >/dev/null 2>&1

# A listenerPath alone (crun): the agent gets a listener that sees nothing.
g=$(next_got)
make_bundle "$T/b3" "$(args "$MKDIR"); c[\"linux\"][\"seccomp\"] = {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"$SOCK\"}; c[\"root\"][\"readonly\"] = False"
out=$("${C[@]}" run -b "$T/b3" n3 </dev/null 2>&1)
for _ in $(seq 100); do [ -e "$g" ] && break; sleep 0.1; done
[[ $out == made* || $out == "File exists" ]] && [ -e "$g" ] && ok "listenerPath without SCMP_ACT_NOTIFY: a listener, nothing notified" ||
  not_ok "listenerPath without SCMP_ACT_NOTIFY" "$out"

# ---------------------------------------------------------------- errors
make_bundle "$T/b4" "$(args 'pass'); c[\"linux\"][\"seccomp\"] = {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"mkdir\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}"
out=$("${C[@]}" run -b "$T/b4" n4 </dev/null 2>&1)
rc=$?
[ "$rc" != 0 ] && [[ $out == *"SCMP_ACT_NOTIFY needs a listenerPath"* ]] && ok "SCMP_ACT_NOTIFY without listenerPath is refused" ||
  not_ok "SCMP_ACT_NOTIFY without listenerPath" "exit $rc: $out"
make_bundle "$T/b5" "$(args 'pass'); c[\"linux\"][\"seccomp\"] = json.loads('$NOTIFY'.replace('$SOCK', '$T/no-agent.sock'))"
out=$("${C[@]}" run -b "$T/b5" n5 </dev/null 2>&1)
rc=$?
[ "$rc" != 0 ] && [[ $out == *"failed to connect with seccomp agent"*"no-agent.sock"* ]] && ok "no agent at listenerPath: run fails and says so" ||
  not_ok "no agent at listenerPath" "exit $rc: $out"
[ -z "$("${C[@]}" list -q 2>/dev/null | grep -x n5)" ] && ok "... and leaves no container" || not_ok "n5 left behind"
done_testing
