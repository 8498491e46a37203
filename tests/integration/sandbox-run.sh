#!/bin/bash
# csrun sandbox run (csrun-sandbox(1), RUN and SESSIONS): the snippet pipeline with every attempt in
# the sandbox (its files, working directory, environment); healing; a file of the sandbox written
# back only when the final attempt succeeds; the gate; timeouts that spare the sandbox; --json;
# sessions (globals across cells, exceptions, blocked and timed-out cells, a lost session, ls/rm,
# independence, concurrency, the end with the sandbox, save/load).  Root and rootless.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
. "$CSRUN_SRCDIR/tests/lib/sandbox.sh"

# in_box PYTHON: run a line of Python in the sandbox (an exec, not the pipeline).
in_box () { csrun sandbox exec box -- python3 -c "$1" 2>&1; }

id=$(csrun sandbox create --name box --env GREETING=hi --idle-timeout 600s 2>"$T/c.err")
if [ ${#id} != 32 ]; then
  not_ok "create a sandbox" "$id" "$(cat "$T/c.err")"
  done_testing
  exit
fi

# ---------------------------------------------------------------- run: the sandbox's files
in_box 'open("/work/data.txt", "w").write("41")' >/dev/null
cat > "$T/use.py" <<'EOF'
import os, sys
n = int(open("data.txt").read()) + 1
open("result.txt", "w").write(str(n))
print(os.getcwd(), os.environ.get("GREETING"), os.environ.get("EXTRA"), sys.argv[1:], n)
EOF
out=$(csrun sandbox run --env EXTRA=x box "$T/use.py" a1 a2 2>"$T/use.err")
rc=$?
back=$(in_box 'print(open("/work/result.txt").read())')
left=$(in_box 'import os; print(sorted(f for f in os.listdir("/work") if f.endswith(".py")))')
[ $rc = 0 ] && [ "$out" = "/work hi x ['a1', 'a2'] 42" ] && [ "$back" = 42 ] && [ "$left" = "[]" ] \
  && ok "run sees and changes the sandbox's files, in its working directory and environment (+ --env, ARGS); no snippet.py left there" \
  || not_ok "run in the sandbox" "exit $rc" "$out" "$back" "$left" "$(cat "$T/use.err")"

printf 'import sys\nprint(sys.stdin.read().upper())\n' > "$T/stdin.py"
out=$(printf 'piped data' | csrun sandbox run box "$T/stdin.py" 2>&1)
[ "$out" = "PIPED DATA" ] && ok "run: the snippet reads csrun's standard input" || not_ok "stdin" "$out"

# ---------------------------------------------------------------- healing
printf 'print(math.sqrt(16))\n' > "$T/heal.py"
cp "$T/heal.py" "$T/heal.orig"
csrun sandbox run --json box "$T/heal.py" > "$T/h.json" 2>"$T/h.err"
rc=$?
got=$(jget "$T/h.json" '(j["status"], j["sandbox"], len(j["attempts"]), j["attempts"][-1]["stdout"], "write_back" in j)')
[ $rc = 0 ] && [ "$got" = "('healed', '$id', 2, '4.0\n', False)" ] && cmp -s "$T/heal.py" "$T/heal.orig" \
  && ok "a missing import heals in the sandbox; --json names the sandbox; the host FILE is never modified" \
  || not_ok "healing" "exit $rc" "$got" "$(cat "$T/h.err")"

in_box 'open("/work/app.py", "w").write("print(json.dumps([1, 2]))\n")' >/dev/null
in_box 'import os; os.chmod("/work/app.py", 0o640)' >/dev/null
csrun sandbox run --json box :app.py > "$T/w.json" 2>"$T/w.err"
rc=$?
got=$(jget "$T/w.json" '(j["status"], j["file"], j["write_back"], j["attempts"][-1]["stdout"])')
now=$(in_box 'import os; print(repr(open("/work/app.py").read()), oct(os.stat("/work/app.py").st_mode & 0o777), sorted(f for f in os.listdir("/work") if "csrun" in f))')
[ $rc = 0 ] && [ "$got" = "('healed', ':app.py', {'path': '/work/app.py', 'written': True, 'reason': None}, '[1, 2]\n')" ] \
  && [ "$now" = "'import json\nprint(json.dumps([1, 2]))\n' 0o640 []" ] \
  && ok ":PATH: a file of the sandbox healed, and its healed version written back (same mode, nothing left beside it)" \
  || not_ok ":PATH write-back" "exit $rc" "$got" "$now" "$(cat "$T/w.err")"

# issue 17: an exec whose code never ran (the gate stopped it) waits for the
# fix, which runs in the same interpreter, from memory: nothing written to
# the working directory, none of the gate's descriptors (3-6) open.
cat > "$T/py2.py" <<'EOF'
print "py2", [fd for fd in range(3, 64) if os.path.exists("/proc/self/fd/%d" % fd)]
x = 1 / 0
EOF
csrun sandbox run --json box "$T/py2.py" > "$T/r.json" 2>"$T/r.err"
rc=$?
got=$(jget "$T/r.json" '(j["status"], [a["gate"]["verdict"] for a in j["attempts"]], [a["exit_code"] for a in j["attempts"]], [a.get("reused_jail") for a in j["attempts"]], j["attempts"][1]["stdout"], j["diagnosis"]["error_type"], j["attempts"][0]["patch"]["rules"])')
left=$(in_box 'import os; print(sorted(f for f in os.listdir("/work") if f.endswith(".py")))')
[ $rc = 1 ] && [ "$got" = "('failed', ['syntax_error', 'pass'], [1, 1], [None, True], 'py2 []\n', 'ZeroDivisionError', 'py2-print,missing-import')" ] \
  && [ "$left" = "['app.py']" ] \
  && ok "an exec whose code never ran runs the fix (reused_jail): fds 3-6 closed, no snippet.py in the sandbox" \
  || not_ok "reused exec" "exit $rc" "$got" "$left" "$(cat "$T/r.err")"
printf 'print "ok"\n' > "$T/py2b.py"
csrun sandbox run --json --no-heal box "$T/py2b.py" > "$T/r2.json" 2>"$T/r2.err"
rc=$?
got=$(jget "$T/r2.json" '(j["status"], len(j["attempts"]), j["attempts"][0].get("reused_jail"))')
[ $rc = 1 ] && [ "$got" = "('failed', 1, None)" ] \
  && ok "no fix to wait for (--no-heal): the exec ends with its syntax error (exit 1)" \
  || not_ok "no fix" "exit $rc" "$got" "$(cat "$T/r2.err")"

# Healed once (the import), then it still fails: the file stays as it was.
in_box 'open("/work/bad.py", "w").write("print(math.floor(2.5))\nprint(1 / 0)\n")' >/dev/null
out=$(csrun sandbox run box :bad.py 2>&1)
rc=$?
now=$(in_box 'print(repr(open("/work/bad.py").read()))')
[ $rc = 1 ] && [ "$now" = "'print(math.floor(2.5))\nprint(1 / 0)\n'" ] && echo "$out" | grep -q ZeroDivisionError \
  && ok ":PATH whose final attempt still fails: exit 1, the file is left alone" \
  || not_ok ":PATH left alone" "exit $rc" "$now" "$out"

out=$(csrun sandbox run box :nosuch.py 2>&1)
rc=$?
out2=$(csrun sandbox run box : 2>&1)
rc2=$?
mkdir -p "$T/d"
out3=$(csrun sandbox run box :/proc/self/status 2>&1)
rc3=$?
[ $rc = 2 ] && echo "$out" | grep -q "nosuch.py: No such file" && [ $rc2 = 2 ] && [ $rc3 = 2 ] \
  && ok ":PATH that is missing, empty, or not a regular file of the sandbox: exit 2 with the reason" \
  || not_ok ":PATH errors" "$rc: $out" "$rc2: $out2" "$rc3: $out3"

# ---------------------------------------------------------------- the gate, timeouts
printf 'import os\nopen("/work/ran.txt", "w").write("yes")\nos.system("id")\n' > "$T/block.py"
out=$(csrun sandbox run box "$T/block.py" 2>&1)
rc=$?
ran=$(in_box 'import os; print(os.path.exists("/work/ran.txt"))')
[ $rc = 3 ] && [ "$ran" = False ] && echo "$out" | grep -q "dangerous-call" \
  && ok "blocked by the gate: exit 3, nothing ran" || not_ok "blocked" "exit $rc" "$out" "$ran"

printf 'import os, time\nopen("/work/slow.pid", "w").write(str(os.getpid()))\ntime.sleep(60)\n' > "$T/slow.py"
out=$(csrun sandbox run --timeout 1s box "$T/slow.py" 2>&1)
rc=$?
st=$(csrun sandbox ls --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["status"])' 2>&1)
alive=$(in_box 'import os; print(os.path.exists("/proc/" + open("/work/slow.pid").read()))')
[ $rc = 124 ] && [ "$st" = running ] && [ "$alive" = False ] && echo "$out" | grep -q Timeout \
  && ok "a timeout (124) kills that attempt's processes only: the sandbox runs on" \
  || not_ok "timeout" "exit $rc" "$st" "$alive" "$out"

# Interrupted: exit 130, that attempt stopped, the sandbox runs on.
in_box 'import os; os.remove("/work/slow.pid")' >/dev/null
started () { [ "$(in_box 'import os; print(os.path.exists("/work/slow.pid"))')" = True ]; }
"$CSRUN" sandbox run --json box "$T/slow.py" > "$T/int.json" 2>"$T/int.err" </dev/null &
pid=$!
wait_until 20 started
kill -INT $pid
wait $pid
rc=$?
got=$(jget "$T/int.json" '(j["status"], j["interrupted_by"])')
st=$(csrun sandbox ls --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["status"])' 2>&1)
[ $rc = 130 ] && [ "$got" = "('interrupted', 'SIGINT')" ] && [ "$st" = running ] \
  && ok "SIGINT to csrun sandbox run: exit 130, status interrupted, the sandbox runs on" \
  || not_ok "interrupt" "exit $rc" "$got" "$st" "$(cat "$T/int.err")"

printf 'print(1)\n' > "$T/one.py"
csrun sandbox inspect box > "$T/in.json" 2>&1
csrun sandbox run --json box "$T/one.py" > "$T/j.json" 2>&1
got=$(jget "$T/j.json" '(j["version"], j["status"], j["sandbox"], j["limits"]["mechanism"], j["attempts"][0]["gate"]["verdict"], j["attempts"][0]["exit_code"])')
mech=$(jget "$T/in.json" 'j["limits"]["mechanism"]')
[ "$got" = "(1, 'ok', '$id', '$mech', 'pass', 0)" ] \
  && ok "--json: csrun run's document, with the sandbox's id and its limits ($mech)" \
  || not_ok "--json" "$got" "$mech" "$(head -c 2000 "$T/j.json")"

out=$(csrun sandbox run nosuchbox "$T/one.py" 2>&1)
rc=$?
out2=$(csrun sandbox run box 2>&1)
rc2=$?
out3=$(csrun sandbox run --session 'a/b' box "$T/one.py" 2>&1)
rc3=$?
out4=$(csrun sandbox run --session s --env A=1 box "$T/one.py" 2>&1)
rc4=$?
out5=$(csrun sandbox run --memory 1G box "$T/one.py" 2>&1)
rc5=$?
[ $rc = 2 ] && [ $rc2 = 2 ] && [ $rc3 = 2 ] && [ $rc4 = 2 ] && echo "$out4" | grep -q "does not apply to a session" \
  && [ $rc5 = 2 ] && echo "$out5" | grep -q "memory" \
  && ok "bad input: unknown sandbox, no FILE, a bad session name, --env with --session, a limit (the sandbox's): exit 2" \
  || not_ok "bad input" "$rc: $out" "$rc2: $out2" "$rc3: $out3" "$rc4: $out4" "$rc5: $out5"

# ---------------------------------------------------------------- sessions
cell () { # cell SESSION CODE [OPTIONS...]: run CODE as a cell
  local s=$1 code=$2
  shift 2
  printf '%s\n' "$code" | csrun sandbox run "$@" --session "$s" box -
}
out1=$(cell s1 'x = 41' 2>&1)
out2=$(cell s1 'x += 1; print(x, open("data.txt").read())' 2>&1)
rc=$?
[ $rc = 0 ] && [ -z "$out1" ] && [ "$out2" = "42 41" ] \
  && ok "a session keeps a variable across cells (and sees the sandbox's files)" || not_ok "session variable" "exit $rc" "$out1" "$out2"

out=$(cell s1 'x += 1; 1 / 0' 2>&1)
rc=$?
out2=$(cell s1 'print(x)' 2>&1)
[ $rc = 1 ] && echo "$out" | grep -q 'File "snippet.py", line 1' && echo "$out" | grep -q ZeroDivisionError \
  && [ "$out2" = 43 ] \
  && ok "a cell that raises: diagnosed (exit 1, snippet.py line 1), not re-run, the session lives" \
  || not_ok "exception" "exit $rc" "$out" "$out2"

out=$(cell s1 'x += 100; import os; os.system("id")' 2>&1)
rc=$?
out2=$(cell s1 'print(x)' 2>&1)
[ $rc = 3 ] && [ "$out2" = 43 ] && ok "a blocked cell: exit 3, it did not run, the session lives" \
  || not_ok "blocked cell" "exit $rc" "$out" "$out2"

cell s1 'import json' >/dev/null 2>&1
out=$(cell s1 'x += 1; print(math.floor(x / 2), json.dumps(x))' --json 2>/dev/null > "$T/sh.json"; cell s1 'print(x)' 2>&1)
got=$(jget "$T/sh.json" '(j["status"], len(j["attempts"]), j["attempts"][0]["gate"]["verdict"], j["attempts"][-1]["stdout"], j["session"]["name"], [a.get("reused_jail") for a in j["attempts"]])')
[ "$got" = "('healed', 2, 'blocked', '22 44\n', 's1', [None, None])" ] && [ "$out" = 44 ] \
  && ok "a cell missing an import: blocked, healed, run once (session names like json are not 'undefined'); each cell its own request (no reused_jail)" \
  || not_ok "session healing" "$got" "$out"

out=$(cell s1 'import time; x += 1; time.sleep(60)' --timeout 1s 2>&1)
rc=$?
out2=$(cell s1 'print(x)' 2>&1)
[ $rc = 124 ] && echo "$out" | grep -q KeyboardInterrupt && [ "$out2" = 45 ] \
  && ok "a timed-out cell is interrupted (KeyboardInterrupt, 124); the session keeps its globals" \
  || not_ok "cell timeout" "exit $rc" "$out" "$out2"

cell s2 'y = "two"' >/dev/null 2>&1
a=$(cell s1 'print(x, "y" in globals())' 2>&1)
b=$(cell s2 'print(y, "x" in globals())' 2>&1)
[ "$a" = "45 False" ] && [ "$b" = "two False" ] && ok "two sessions are independent" || not_ok "independent" "$a" "$b"

csrun sandbox session ls box > "$T/ls.txt" 2>&1
csrun sandbox session ls --json box > "$T/ls.json" 2>&1
got=$(jget "$T/ls.json" 'sorted((s["name"], s["state"], s["cells"] > 0, s["pid"] > 0) for s in j)')
[ "$got" = "[('s1', 'idle', True, True), ('s2', 'idle', True, True)]" ] && grep -q '^s1 ' "$T/ls.txt" \
  && ok "session ls (and --json): names, state, cells, pid" || not_ok "session ls" "$got" "$(cat "$T/ls.txt")"

# A cell that ignores the interrupt: the session is killed and reported lost.
pid=$(jget "$T/ls.json" '[s["pid"] for s in j if s["name"] == "s2"][0]')
cell s2 'import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)' --timeout 1s --json > "$T/lost.json" 2>/dev/null
rc=$?
got=$(jget "$T/lost.json" '(j["status"], j["session"]["lost"])')
out=$(cell s2 'print("y" in globals())' --json 2>/dev/null > "$T/new.json"; jget "$T/new.json" '(j["attempts"][0]["stdout"], j["session"]["started"])')
[ $rc = 124 ] && [ "$got" = "('timeout', True)" ] && wait_until 10 gone "$pid" && [ "$out" = "('False\n', True)" ] \
  && ok "a cell that does not stop: its session is killed and reported lost; the next cell starts a new one" \
  || not_ok "lost session" "exit $rc" "$got" "$out"

out=$(csrun sandbox session rm box s2 2>&1)
rc=$?
out2=$(csrun sandbox session rm box s2 2>&1)
rc2=$?
n=$(csrun sandbox session ls --json box | python3 -c 'import json,sys; print([s["name"] for s in json.load(sys.stdin)])' 2>&1)
[ $rc = 0 ] && [ $rc2 = 2 ] && echo "$out2" | grep -q "no such session" && [ "$n" = "['s1']" ] \
  && ok "session rm; rm of an unknown session: exit 2" || not_ok "session rm" "$rc: $out" "$rc2: $out2" "$n"

# Concurrent cells to different sessions, and a second cell to a busy one.
for s in c1 c2 c3 c4; do
  cell "$s" "import time; v = '$s'; time.sleep(1); print(v)" > "$T/cc.$s" 2>&1 &
done
sleep 0.5
busy=$(cell c1 'print("second")' 2>&1)
brc=$?
wait
n=0
for s in c1 c2 c3 c4; do [ "$(cat "$T/cc.$s")" = "$s" ] && n=$((n + 1)); done
[ $n = 4 ] && [ $brc = 1 ] && echo "$busy" | grep -q "busy" \
  && ok "4 concurrent cells to 4 sessions; a cell to a busy session: exit 1" \
  || not_ok "concurrent cells: $n ok" "$(cat "$T"/cc.*)" "$brc: $busy"

# save -> load into a new session: the variables are there.
cell s1 'import json as J; data = {"k": [1, 2]}; f = lambda: 1' >/dev/null 2>&1
csrun sandbox session save --json box s1 "$T/s1.save" > "$T/save.json" 2>"$T/save.err"
rc=$?
csrun sandbox session load --json box fresh "$T/s1.save" > "$T/load.json" 2>"$T/load.err"
rc2=$?
out=$(cell fresh 'print(x, data, J.dumps(1), "f" in globals())' 2>&1)
got=$(jget "$T/save.json" '(sorted(j["saved"]), j["modules"], [s["name"] for s in j["skipped"]])')
[ $rc = 0 ] && [ $rc2 = 0 ] && [ "$out" = "45 {'k': [1, 2]} 1 False" ] \
  && [ "$got" = "(['data', 'x'], ['J', 'json', 'math', 'time'], ['f'])" ] \
  && ok "session save and load (the keeper's keeper_session_save/load): variables and modules restored, a cell's function listed as skipped" \
  || not_ok "save/load" "$rc $rc2" "$out" "$got" "$(cat "$T/save.err" "$T/load.err")"
out=$(csrun sandbox session save box nosuch "$T/x.save" 2>&1)
rc=$?
[ $rc = 2 ] && [ ! -e "$T/x.save" ] && ! ls "$T" | grep -q csrun-tmp \
  && ok "save of an unknown session: exit 2, no file left" || not_ok "save unknown" "exit $rc" "$out"

# stop ends the sessions (their interpreters), start has none; rm --force too.
csrun sandbox session ls --json box > "$T/ls2.json" 2>&1
pids=$(jget "$T/ls2.json" '" ".join(str(s["pid"]) for s in j)')
csrun sandbox stop box >/dev/null 2>&1
all_gone=yes
for p in $pids; do wait_until 10 gone "$p" || all_gone="no ($p)"; done
out=$(cell s1 'print(1)' 2>&1)
rc=$?
out2=$(csrun sandbox run box "$T/one.py" 2>&1)
rc2=$?
csrun sandbox start box >/dev/null 2>&1
n=$(csrun sandbox session ls --json box 2>&1)
[ -n "$pids" ] && [ "$all_gone" = yes ] && [ $rc = 1 ] && echo "$out" | grep -q stopped && [ "$n" = "[]" ] \
  && [ $rc2 = 1 ] && echo "$out2" | grep -q stopped \
  && ok "stop ends the sandbox's sessions; a run or a cell in a stopped sandbox: exit 1; start has none" \
  || not_ok "stop ends sessions" "$pids: $all_gone" "$rc: $out" "$rc2: $out2" "$n"
cell s9 'z = 1' >/dev/null 2>&1
pid=$(csrun sandbox session ls --json box | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["pid"])' 2>&1)
csrun sandbox rm --force box >/dev/null 2>&1
wait_until 10 gone "$pid" && ok "rm --force ends the sandbox's sessions" || not_ok "rm ends sessions" "$pid"

done_testing
