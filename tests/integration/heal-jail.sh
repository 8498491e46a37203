#!/bin/bash
# Attempts whose code never ran share one jail (issue 17): when the gate
# stops the code before it runs (a syntax error, a blocked name), the next
# attempt runs in the same jail and interpreter, and the JSON still shows
# each attempt with its own verdict, exit status, output, cpu and memory.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)

run_case () { # run_case NAME CODE [csrun run options...]: $T/NAME.json, $rc
  local name=$1 code=$2
  shift 2
  printf '%s\n' "$code" > "$T/$name.py"
  csrun run --json "$@" "$T/$name.py" >"$T/$name.json" 2>"$T/$name.err"
  rc=$?
}
expect () { # expect NAME DESC EXPECTED-RC PYTHON-EXPR EXPECTED-VALUE
  expect_json "$T/$1.json" "$2" "$3" "$4" "$5" "$T/$1.err"
}

# A Python 2 print: attempt 1 is the gate's syntax error (exit 1, the
# report on stderr, nothing on stdout), attempt 2 the healed code.
run_case py2 'print "py2", 6 * 7'
expect py2 "a statically healed snippet keeps two attempts, each with its own verdict" 0 \
  '(j["status"], len(j["attempts"]), [a["gate"]["verdict"] for a in j["attempts"]], [a["exit_code"] for a in j["attempts"]], j["attempts"][0]["stdout"], "SyntaxError" in j["attempts"][0]["stderr"], j["attempts"][1]["stdout"], j["attempts"][1]["stderr"])' \
  "('healed', 2, ['syntax_error', 'pass'], [1, 0], '', True, 'py2 42\\n', '')"
expect py2 "the healed attempt ran in the first one's jail (reused_jail), the first did not" 0 \
  '(j["attempts"][0].get("reused_jail"), j["attempts"][1].get("reused_jail"), j["attempts"][0]["code_sha256"] != j["attempts"][1]["code_sha256"])' \
  "(None, True, True)"
expect py2 "each attempt has its own duration, cpu time and peak memory" 0 \
  'all(a["duration_ms"] >= 0 and a["peak_memory_kib"] > 0 for a in j["attempts"]) and j["attempts"][0]["patch"]["rules"] == "py2-print"' \
  "True"

# The snippet sees its own code as snippet.py (tracebacks show its lines).
run_case tb 'print "tb"
x = 1 / 0'
expect tb "a traceback in the reused jail shows the healed code's line" 1 \
  '(j["status"], j["attempts"][1].get("reused_jail"), j["diagnosis"]["error_type"], "x = 1 / 0" in j["attempts"][1]["stderr"], j["attempts"][1]["stdout"])' \
  "('failed', True, 'ZeroDivisionError', True, 'tb\\n')"

# The descriptors (csrun-run(1), Descriptors): in the reused jail the
# healed code sees none of the gate's (3 the verdict pipe, 4 the gate, 6 the
# next code; 5 is a sandbox's snippet, not open here).
run_case fds 'print "fds", [fd for fd in range(3, 64) if os.path.exists("/proc/self/fd/%d" % fd)]'
expect fds "the code in the reused jail sees only fds 0-2 (3, 4, 5 and 6 closed)" 0 \
  '(j["status"], j["attempts"][1].get("reused_jail"), j["attempts"][1]["stdout"])' \
  "('healed', True, 'fds []\\n')"

# A missing import is blocked before anything runs, then fixed.
run_case imp 'print(json.dumps([1, 2]))'
expect imp "a missing import: blocked (exit 3), then the fix runs in the same jail" 0 \
  '(j["status"], [a["gate"]["verdict"] for a in j["attempts"]], [a["exit_code"] for a in j["attempts"]], j["attempts"][1].get("reused_jail"), j["attempts"][1]["stdout"])' \
  "('healed', ['blocked', 'pass'], [3, 0], True, '[1, 2]\\n')"

# Python 2 and a missing import: the gate checks the patched code in the
# same jail (not a new one) and both fixes make one patch.
run_case both 'print "both", os.sep'
expect both "a py2 print with a missing import: one patch, two attempts, one jail" 0 \
  '(j["status"], len(j["attempts"]), j["attempts"][0]["patch"]["rules"], j["attempts"][1].get("reused_jail"), j["attempts"][1]["stdout"])' \
  "('healed', 2, 'py2-print,missing-import', True, 'both /\\n')"

# Figures: attempt 2 allocates 96 MiB and spins 0.3 s of CPU; attempt 1
# (only the gate) reports neither.
run_case figs 'import time
print "figs"
b = bytearray(96 << 20)
for i in range(0, len(b), 4096): b[i] = 1
t = time.process_time()
while time.process_time() - t < 0.3: pass'
expect figs "the reused jail's numbers are each attempt's own (peak memory, cpu)" 0 \
  '(j["status"], j["attempts"][1].get("reused_jail"), j["attempts"][1]["peak_memory_kib"] >= 96 * 1024, j["attempts"][0]["peak_memory_kib"] < 64 * 1024, j["attempts"][1]["cpu_ms"] >= 300, j["attempts"][0]["cpu_ms"] < 300)' \
  "('healed', True, True, True, True, True)"

# The limits are the jail's: --memory holds in the reused jail too (an OOM
# kill with a cgroup, a MemoryError with RLIMIT_DATA).
run_case mem 'print "mem"
b = bytearray(256 << 20)
for i in range(0, len(b), 4096): b[i] = 1' --memory 64M
expect mem "--memory holds for the attempt in the reused jail" 1 \
  '(j["status"], j["attempts"][1].get("reused_jail"), j["diagnosis"]["error_type"] in ("OutOfMemory", "MemoryError"))' \
  "('failed', True, True)"

# The timeout is the attempt's own: it starts again with the reused jail.
run_case loop 'print "spin"
while True: pass' --timeout 2
expect loop "a healed attempt that loops times out in the reused jail" 124 \
  '(j["status"], j["attempts"][1].get("reused_jail"), j["attempts"][1]["timed_out"], j["attempts"][1]["stdout"])' \
  "('timeout', True, True, 'spin\\n')"

# Blocked and not healable: the jail waits for nothing, the attempt is as before.
run_case blocked 'import os
os.system("id")'
expect blocked "a blocked snippet with no fix: one attempt, exit 3" 3 \
  '(j["status"], len(j["attempts"]), j["attempts"][0]["exit_code"], j["attempts"][0].get("reused_jail"))' \
  "('blocked', 1, 3, None)"

# With --out the gate does not rewrite snippet.py (it would be an output):
# every attempt has a jail of its own, and snippet.py is not delivered.
run_case out 'print "out"
open("result.txt", "w").write("r")' --out "$T/outdir"
expect out "with --out each attempt has its own jail" 0 \
  '(j["status"], [a.get("reused_jail") for a in j["attempts"]])' \
  "('healed', [None, None])"
if [ -f "$T/outdir/result.txt" ] && [ ! -e "$T/outdir/snippet.py" ]; then
  ok "with --out the healed attempt's file is delivered, snippet.py is not"
else
  not_ok "with --out the healed attempt's file is delivered, snippet.py is not" "$(ls -la "$T/outdir" 2>&1)"
fi

# --max-attempts 1: no next attempt, nothing waits.
run_case one 'print "one"' --max-attempts 1
expect one "--max-attempts 1: the syntax error is the result (exit 1)" 1 \
  '(j["status"], len(j["attempts"]), j["attempts"][0]["exit_code"])' "('failed', 1, 1)"

# The standard input is the healed attempt's whole (the gate read none of it).
printf 'print "in", input()\n' > "$T/stdin.py"
echo 'kept line' | csrun run --json --stdin - "$T/stdin.py" >"$T/stdin.json" 2>"$T/stdin.err"
rc=$?
expect stdin "the kept stdin reaches the healed attempt in the reused jail" 0 \
  '(j["status"], j["attempts"][1].get("reused_jail"), j["attempts"][0]["stdin_consumed_bytes"], j["attempts"][1]["stdout"])' \
  "('healed', True, 0, 'in kept line\\n')"

# Live output: the healed code's output once, after attempt 1's report (the
# gate's check of a patched syntax error used to run the code in a jail of
# its own, streaming it before attempt 2 ran it again).
printf 'print "live-marker", os.sep\n' > "$T/live.py"
csrun run --live "$T/live.py" >"$T/live.out" 2>"$T/live.err"
rc=$?
n=$(grep -c 'live-marker' "$T/live.out")
if [ "$rc" = 0 ] && [ "$n" = 1 ]; then
  ok "--live prints the healed code's output once"
else
  not_ok "--live prints the healed code's output once" "exit $rc, $n times" "$(cat "$T/live.out")" "$(cat "$T/live.err")"
fi

# One jail, counted: the jails csrun clones (CLONE_NEWUSER) for a snippet
# healed statically, and for one that runs once.
if command -v strace >/dev/null 2>&1; then
  jails () {
    strace -f -qq -e trace=clone3,clone -o "$T/strace.$1" "$CSRUN" run "$T/$1.py" >/dev/null 2>&1
    grep -c 'CLONE_NEWUSER' "$T/strace.$1"
  }
  printf 'print("fine")\n' > "$T/fine.py"
  a=$(jails py2)
  b=$(jails fine)
  if [ "$a" = "$b" ] && [ "$a" -ge 1 ]; then
    ok "a statically healed snippet uses as many jails as one that runs once ($a)"
  else
    not_ok "a statically healed snippet uses as many jails as one that runs once" "healed: $a jails, plain: $b" "$(grep NEWUSER "$T/strace.py2")"
  fi
else
  skip "a statically healed snippet uses as many jails as one that runs once" "strace is not installed"
fi

# csrun batch: the report line of a statically healed item.
mkdir -p "$T/items"
printf 'print "batch item"\n' > "$T/items/a.py"
printf 'print("plain")\n' > "$T/items/b.py"
csrun batch -j 2 --no-progress -q --report "$T/r.jsonl" "$T/items" >/dev/null 2>"$T/batch.err"
rc=$?
got=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["path"].endswith("a.py"):
        print(d["status"], [a["gate"]["verdict"] for a in d["attempts"]], [a["exit_code"] for a in d["attempts"]], [a.get("reused_jail") for a in d["attempts"]], repr(d["attempts"][1]["stdout"]))
' "$T/r.jsonl" 2>&1)
want="healed ['syntax_error', 'pass'] [1, 0] [None, True] 'batch item\\n'"
if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
  ok "csrun batch reports both attempts of a statically healed item"
else
  not_ok "csrun batch reports both attempts of a statically healed item" "exit $rc" "got:  $got" "want: $want" "$(cat "$T/batch.err")"
fi

done_testing
