#!/bin/bash
# Bounded output, timeouts, tmpfs sizes and the numbers the result reports.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)

# Head and tail are kept exactly; the middle is counted.
cat > "$T/lines.py" <<'PY'
import sys
for i in range(100000):
    sys.stdout.write("line %06d\n" % i)
sys.stderr.write("E" * 10)
PY
csrun run --json --max-output 2k "$T/lines.py" >"$T/lines.json"
rc=$?
res=$(json_get "$T/lines.json" '(lambda a: (a["stdout_bytes"], a["stdout_dropped_bytes"], a["stdout"].startswith("line 000000\nline 000001\n"), a["stdout"].endswith("line 099999\n"), "[... csrun: 1197952 bytes dropped ...]" in a["stdout"], len(a["stdout"].split("\n[... csrun")[0]), a["stderr"], a["stderr_dropped_bytes"]))(j["attempts"][0])')
[ $rc -eq 0 ] && [ "$res" = "(1200000, 1197952, True, True, True, 1024, 'EEEEEEEEEE', 0)" ] \
  && ok "--max-output keeps the first and last half, counts the dropped bytes" || not_ok "bounded output" "exit $rc" "$res"

# Without --json the kept head streams live, then a marker and the kept tail.
csrun run --quiet --max-output 2k "$T/lines.py" >"$T/lines.out" 2>"$T/lines.err"
rc=$?
if [ $rc -eq 0 ] && head -c 24 "$T/lines.out" | grep -q '^line 000000' && grep -q '^\[... csrun: 1197952 bytes dropped ...\]$' "$T/lines.out" \
  && [ "$(tail -n1 "$T/lines.out")" = "line 099999" ] && [ "$(cat "$T/lines.err")" = "EEEEEEEEEE" ]; then
  ok "passthrough output shows head, marker, tail"
else
  not_ok "passthrough bounded output" "exit $rc" "$(head -c 300 "$T/lines.out")" "$(tail -c 300 "$T/lines.out")"
fi

# A 1 GiB flood finishes with bounded supervisor memory.
cat > "$T/flood.py" <<'PY'
import sys
chunk = b"x" * (1 << 20)
w = sys.stdout.buffer.write
for _ in range(1024):
    w(chunk)
PY
res=$(python3 - "$CSRUN" "$T/flood.py" <<'PY'
import json, resource, subprocess, sys, time
t = time.monotonic()
p = subprocess.run([sys.argv[1], "run", "--json", "--timeout", "120", sys.argv[2]], capture_output=True)
elapsed = time.monotonic() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, the largest child: csrun itself
a = json.loads(p.stdout)["attempts"][0]
print(p.returncode, a["stdout_bytes"], a["stdout_dropped_bytes"], len(a["stdout"]) < 1100000, rss < 65536, "rss=%dKiB" % rss, "%.1fs" % elapsed)
PY
)
set -- $res "" "" "" "" "" "" ""
if [ "$1 $2 $3 $4 $5" = "0 1073741824 1072693248 True True" ]; then
  ok "a 1 GiB flood is counted in full and csrun stays small ($6, $7)"
else
  not_ok "1 GiB flood" "$res"
fi

# The timeout is wall-clock and reported.  What csrun guarantees: status
# "timeout", the jail killed by SIGKILL, exit 124, never before the timeout
# (the attempt's clock starts with the jail), and well before a generous bound
# even on a loaded 2-core machine; cpu_ms is reported as a number.  How much
# CPU the loop got in that half second is the scheduler's business, not
# csrun's: no bound on it.
printf 'while True:\n    pass\n' > "$T/spin.py"
csrun run --json --timeout 500ms "$T/spin.py" >"$T/spin.json"
rc=$?
res=$(json_get "$T/spin.json" '(j["status"], j["attempts"][0]["timed_out"], j["attempts"][0]["signal"], 500 <= j["attempts"][0]["duration_ms"] < 30000, type(j["attempts"][0]["cpu_ms"]) is int and j["attempts"][0]["cpu_ms"] >= 0, j["limits"]["timeout_s"])')
[ $rc -eq 124 ] && [ "$res" = "('timeout', True, 'SIGKILL', True, True, 0.5)" ] \
  && ok "a busy loop is killed at --timeout 500ms (SIGKILL, exit 124) and its cpu time is reported" || not_ok "busy-loop timeout" "exit $rc" "$res" "$(cat "$T/spin.json")"

# Output printed before the timeout is kept (the snippet runs unbuffered).
printf 'import time\nprint("progress 1")\ntime.sleep(30)\n' > "$T/progress.py"
csrun run --json --timeout 1 "$T/progress.py" >"$T/progress.json"
[ "$(json_get "$T/progress.json" 'j["attempts"][0]["stdout"]')" = "progress 1" ] \
  && ok "output written before a timeout is not lost" || not_ok "output before timeout" "$(cat "$T/progress.json")"

# Peak memory is measured.
printf 'b = bytearray(100 * 1024 * 1024)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\n' > "$T/mem.py"
csrun run --json "$T/mem.py" >"$T/mem.json"
res=$(json_get "$T/mem.json" 'j["attempts"][0]["peak_memory_kib"] > 100 * 1024')
[ "$res" = True ] && ok "peak_memory_kib sees a 100 MiB allocation" || not_ok "peak memory" "$(cat "$T/mem.json")"

# /tmp and /work are capped by --tmp-size.
cat > "$T/fill.py" <<'PY'
import errno, sys
for path in ("/tmp/big", "/work/big"):
    try:
        with open(path, "wb") as f:
            for _ in range(64):
                f.write(b"\0" * (1 << 20))
        print(path, "wrote 64 MiB")
    except OSError as e:
        print(path, errno.errorcode[e.errno])
PY
out=$(csrun run --quiet --tmp-size 8M "$T/fill.py" 2>&1)
if echo "$out" | grep -qE '^/tmp/big (ENOSPC|EFBIG)$' && echo "$out" | grep -qE '^/work/big (ENOSPC|EFBIG)$'; then
  ok "--tmp-size 8M caps /tmp and /work: $(echo $out)"
else
  not_ok "--tmp-size" "$out"
fi

# File count is capped too (inodes), so a snippet can't exhaust memory with empty files.
printf 'import errno\nn = 0\ntry:\n    while True:\n        open("/tmp/f%%d" %% n, "w").close()\n        n += 1\nexcept OSError as e:\n    print(errno.errorcode[e.errno], n < 20000)\n' > "$T/inodes.py"
out=$(csrun run --quiet "$T/inodes.py" 2>&1)
[ "$out" = "ENOSPC True" ] && ok "the tmpfs inode cap stops a file-creation loop" || not_ok "inode cap" "$out"

# rlimits inside: no core dumps, bounded open files.
printf 'import resource\nprint(resource.getrlimit(resource.RLIMIT_CORE), resource.getrlimit(resource.RLIMIT_NOFILE))\n' > "$T/rl.py"
out=$(csrun run --quiet "$T/rl.py" 2>&1)
[ "$out" = "(0, 0) (1024, 1024)" ] && ok "rlimits: core 0, nofile 1024" || not_ok "rlimits" "$out"

# Limits too small to start the jail are usage errors naming the minimum,
# never "csrun itself failed" (125); the smallest ones accepted still run.
printf 'print("up")\n' > "$T/up.py"
csrun run --pids 1 "$T/up.py" >"$T/p1.out" 2>"$T/p1.err"
rc=$?
[ $rc = 2 ] && grep -qx 'csrun run: --pids: at least 2 processes are needed to start the jail (its init and Python)' "$T/p1.err" \
  && ok "--pids 1 is a usage error naming the minimum" || not_ok "--pids 1" "exit $rc" "$(cat "$T/p1.err")"
out=$(csrun run --quiet --pids 2 "$T/up.py" 2>&1)
rc=$?
[ $rc = 0 ] && [ "$out" = up ] && ok "--pids 2 starts the jail" || not_ok "--pids 2" "exit $rc" "$out"
csrun run --memory 1M "$T/up.py" >"$T/m1.out" 2>"$T/m1.err"
rc=$?
[ $rc = 2 ] && grep -q -- '--memory: 1M is below 16 MiB' "$T/m1.err" \
  && ok "--memory 1M is a usage error naming the minimum" || not_ok "--memory 1M" "exit $rc" "$(cat "$T/m1.err")"
csrun run --json --memory 16M "$T/up.py" >"$T/m16.json" 2>"$T/m16.err"
rc=$?
# With a cgroup, Python starts in 16 MiB; with RLIMIT_DATA (rootless without a
# cgroup) its private memory may not fit: then a MemoryError diagnosis (exit 1).
res=$(json_get "$T/m16.json" '(j["status"], (j.get("diagnosis") or {}).get("error_type"))' 2>&1)
if { [ $rc = 0 ] && [ "$res" = "('ok', None)" ]; } || { [ $rc = 1 ] && [ "$res" = "('failed', 'MemoryError')" ]; }; then
  ok "--memory 16M runs, or fails with a MemoryError diagnosis (exit $rc)"
else
  not_ok "--memory 16M" "exit $rc" "$res" "$(cat "$T/m16.err")"
fi

done_testing
