#!/bin/bash
# The snippet's standard input (kept and replayed to every attempt, spilled to a temporary file
# past 1 MiB, capped by --stdin-max, --stdin FILE, a terminal never read unless asked), live
# output on a terminal (the order of stdout and stderr, a separator before a healed attempt),
# the order of the output in the buffered print and the JSON, and interruption (SIGINT, SIGTERM:
# the jail is stopped, status "interrupted", exit 128+N).  Only what csrun guarantees is
# asserted: orders and bytes, never how long something took.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)

# jq_ FILE EXPR: host python3 evaluates EXPR with j = the JSON document in FILE.
jq_ () {
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}
sha () { sha256sum "$1" | cut -d' ' -f1; }

# A snippet printing the length and sha256 of what it read on stdin.
cat > "$T/sum.py" <<'PY'
import hashlib, sys
d = sys.stdin.buffer.read()
print(len(d), hashlib.sha256(d).hexdigest())
PY

# 1. `< data`: the snippet reads csrun's stdin.
printf 'name,n\nalpha,1\nbeta,2\n' > "$T/data.csv"
out=$(csrun run --quiet "$T/sum.py" < "$T/data.csv" 2>&1)
[ "$out" = "$(stat -c %s "$T/data.csv") $(sha "$T/data.csv")" ] \
  && ok "csrun run FILE < data: the snippet reads the data" || not_ok "< data" "$out"

# 2. Binary stdin with NUL bytes arrives exactly.
printf 'a\0b\0\377\376\0\n\0' > "$T/bin"
out=$(csrun run --quiet "$T/sum.py" < "$T/bin" 2>&1)
[ "$out" = "$(stat -c %s "$T/bin") $(sha "$T/bin")" ] \
  && ok "binary stdin with NULs arrives byte for byte" || not_ok "binary stdin" "$out"

# 3. Replay: attempt 1 reads stdin, prints its sha, fails with a NameError (a missing import the
# local healer fixes, at run time: --allow undefined-name); attempt 2 reads the same bytes.
cat > "$T/heal.py" <<'PY'
import hashlib, sys
d = sys.stdin.buffer.read()
print("sha", hashlib.sha256(d).hexdigest(), flush=True)
print(json.dumps({"n": len(d)}))
PY
head -c 20000 /dev/urandom > "$T/rand"
csrun run --json --no-llm --allow undefined-name "$T/heal.py" < "$T/rand" > "$T/heal.json" 2>"$T/heal.err"
rc=$?
want="sha $(sha "$T/rand")"
got=$(jq_ "$T/heal.json" '(j["status"], [a["stdout"].splitlines()[0] for a in j["attempts"]], [a["stdin_consumed_bytes"] for a in j["attempts"]], j["stdin"]["bytes"])')
[ $rc = 0 ] && [ "$got" = "('healed', ['$want', '$want'], [20000, 20000], 20000)" ] \
  && ok "stdin is replayed: a healed attempt reads the same bytes" \
  || not_ok "stdin replay" "exit $rc" "$got" "$(cat "$T/heal.err")"

# 4. Past the memory threshold (1 MiB) the input is kept in a temporary file; still exact.
head -c 3000000 /dev/urandom > "$T/big"
csrun run --json "$T/sum.py" < "$T/big" > "$T/big.json" 2>/dev/null
got=$(jq_ "$T/big.json" '(j["attempts"][0]["stdout"].strip(), j["stdin"]["spilled"], j["stdin"]["truncated"])')
[ "$got" = "('3000000 $(sha "$T/big")', True, False)" ] \
  && ok "a 3 MB stdin is spilled to a temporary file and arrives exactly" || not_ok "spill" "$got"

# A snippet that closes its stdin without reading it is normal (no EPIPE, no SIGPIPE for csrun).
printf 'import sys\nsys.stdin.close()\nprint("closed")\n' > "$T/close.py"
out=$(csrun run --quiet "$T/close.py" < "$T/big" 2>&1)
rc=$?
[ $rc = 0 ] && [ "$out" = closed ] && ok "a snippet that closes a large stdin unread succeeds" \
  || not_ok "close stdin" "exit $rc" "$out"

# 5. --stdin-max: the snippet sees end-of-file at the cap; a warning and the JSON say so.
csrun run --stdin-max 1000 "$T/sum.py" < "$T/big" > "$T/cap.out" 2>"$T/cap.err"
rc=$?
[ $rc = 0 ] && [ "$(cat "$T/cap.out")" = "1000 $(head -c 1000 "$T/big" | sha256sum | cut -d' ' -f1)" ] \
  && grep -q "stdin-max" "$T/cap.err" \
  && ok "--stdin-max: the snippet reads the first SIZE bytes, csrun warns" \
  || not_ok "--stdin-max" "exit $rc" "$(cat "$T/cap.out")" "$(cat "$T/cap.err")"
csrun run --json --stdin-max 1000 "$T/sum.py" < "$T/big" > "$T/cap.json" 2>/dev/null
got=$(jq_ "$T/cap.json" '(j["stdin"]["bytes"], j["stdin"]["max_bytes"], j["stdin"]["truncated"])')
[ "$got" = "(1000, 1000, True)" ] && ok "--stdin-max: the JSON records the cut" || not_ok "cap json" "$got"

# 6. Code from -, input from --stdin FILE; an unreadable --stdin FILE is a usage error.
out=$(csrun run --quiet --stdin "$T/bin" - < "$T/sum.py" 2>&1)
[ "$out" = "$(stat -c %s "$T/bin") $(sha "$T/bin")" ] \
  && ok "--stdin FILE with the code from -" || not_ok "--stdin FILE" "$out"
csrun run --stdin "$T/no-such-file" "$T/sum.py" </dev/null >"$T/u.out" 2>"$T/u.err"
rc=$?
[ $rc = 2 ] && grep -q "no-such-file" "$T/u.err" && [ ! -s "$T/u.out" ] \
  && ok "--stdin FILE unreadable: exit 2" || not_ok "--stdin missing" "exit $rc" "$(cat "$T/u.err")"
csrun run --stdin "$T" "$T/sum.py" </dev/null >/dev/null 2>&1
rc=$?
[ $rc = 2 ] && ok "--stdin DIR: exit 2" || not_ok "--stdin dir" "exit $rc"

# ptyrun OUT STDIN_TEXT CMD...: run CMD with stdin, stdout and stderr on one new pty (raw mode);
# STDIN_TEXT is typed into it first.  OUT gets what the pty showed.  Exits with CMD's status.
cat > "$T/ptyrun.py" <<'PY'
import os, pty, subprocess, sys, tty

out, typed, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
master, slave = pty.openpty()
tty.setraw(slave)
p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave)
os.close(slave)
if typed:
    os.write(master, typed.encode())
data = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: every slave fd is closed
        break
    if not chunk:
        break
    data += chunk
rc = p.wait()
with open(out, "wb") as f:
    f.write(data)
sys.exit(rc)
PY
ptyrun () { python3 "$T/ptyrun.py" "$@"; }
# clean FILE: the pty's bytes without csrun's own mark.
clean () { sed 's/\x1b\[7mcsrun run\x1b\[27m/csrun run/g' "$1"; }

# 7. A terminal on stdin is not read unless asked (-i / --stdin -).
printf 'import sys\nprint("read:%%r" %% sys.stdin.readline())\n' > "$T/line.py"
ptyrun "$T/tty0" "typed line
" "$CSRUN" run --quiet --timeout 30s "$T/line.py"
grep -q "read:''" "$T/tty0" && ! grep -q "read:'typed" "$T/tty0" \
  && ok "a terminal on stdin is not read without -i" || not_ok "tty not read" "$(cat -v "$T/tty0")"
ptyrun "$T/tty1" "typed line
" "$CSRUN" run --quiet --timeout 30s -i "$T/line.py"
grep -q "read:'typed line" "$T/tty1" && ok "-i: the snippet reads the terminal" \
  || not_ok "-i" "$(cat -v "$T/tty1")"

# 8. Live output on a pty keeps the order of stdout and stderr as written.
cat > "$T/order.py" <<'PY'
import sys, time
for i in range(3):
    print("out%d" % i, flush=True)
    time.sleep(0.05)
    print("err%d" % i, file=sys.stderr, flush=True)
    time.sleep(0.05)
print("esc:\x1b]0;title\x07", flush=True)
PY
order_of () { grep -aoE '(out|err)[0-9]' "$1" | tr '\n' ' '; }
want_order="out0 err0 out1 err1 out2 err2 "
ptyrun "$T/live" "" "$CSRUN" run --quiet "$T/order.py"
rc=$?
[ $rc = 0 ] && [ "$(order_of "$T/live")" = "$want_order" ] \
  && ok "live output on a terminal keeps the order of stdout and stderr" \
  || not_ok "live order" "exit $rc" "$(cat -v "$T/live")"
! grep -q $'\x1b]0' "$T/live" && grep -qF 'esc:^[]0;title^G' "$T/live" \
  && ok "live output on a terminal is neutralised" || not_ok "live termsafe" "$(cat -v "$T/live")"
[ "$(grep -c 'out0' "$T/live")" = 1 ] && ok "live output is not printed again at the end" \
  || not_ok "live printed twice" "$(cat -v "$T/live")"
# A UTF-8 character cut between two writes is shown whole; a truncated one at the end as \xNN.
cat > "$T/split.py" <<'PY'
import sys, time
w = sys.stdout.buffer
for part in (b"caf\xc3", b"\xa9 \xe2\x82", b"\xac\n", b"end\xc3"):
    w.write(part)
    w.flush()
    time.sleep(0.1)
PY
ptyrun "$T/split" "" "$CSRUN" run --quiet "$T/split.py"
python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); sys.exit(0 if d == "café €\n".encode() + b"end\\xc3" else 1)' "$T/split" \
  && ok "live on a terminal: a UTF-8 character cut between writes is shown whole" \
  || not_ok "live utf-8 carry" "$(od -c "$T/split" | head)"

# Without a terminal (both streams to one file), the buffered print keeps the order too.
csrun run --quiet "$T/order.py" > "$T/buf" 2>&1
[ "$(order_of "$T/buf")" = "$want_order" ] && grep -q $'esc:\x1b]0;title\x07' "$T/buf" \
  && ok "the buffered print writes stdout and stderr back in their order (exact bytes)" \
  || not_ok "buffered order" "$(cat -v "$T/buf")"
csrun run --json "$T/order.py" > "$T/order.json" 2>/dev/null
got=$(jq_ "$T/order.json" '" ".join(p["text"].strip() for p in j["attempts"][0]["output"] if not p["text"].startswith("esc"))')
[ "$got" = "out0 err0 out1 err1 out2 err2" ] && ok "the JSON 'output' view is in the order written" \
  || not_ok "json output order" "$got"
# A dropped middle is marked in the view.  (The order between the two streams is the order csrun
# saw the bytes arrive: the sleeps let each write arrive on its own.)
cat > "$T/flood.py" <<'PY'
import sys, time
sys.stdout.write("a" * 100000)
sys.stdout.flush()
time.sleep(0.3)
sys.stderr.write("E\n")
sys.stderr.flush()
time.sleep(0.3)
sys.stdout.write("z\n")
PY
csrun run --json --max-output 1000 "$T/flood.py" > "$T/flood.json" 2>/dev/null
got=$(jq_ "$T/flood.json" '[(p["stream"], "text" in p, p.get("dropped_bytes")) for p in j["attempts"][0]["output"]]')
[ "$got" = "[('stdout', True, None), ('stdout', False, 99002), ('stdout', True, None), ('stderr', True, None), ('stdout', True, None)]" ] \
  && ok "the JSON 'output' view marks the dropped middle" || not_ok "output dropped" "$got"

# 9. A healed live run: one separator line naming the patch before the next attempt's output.
ptyrun "$T/healed" "" "$CSRUN" run --no-llm --allow undefined-name "$T/heal.py"
rc=$?
clean "$T/healed" > "$T/healed.c"
sep=$(grep -n -- '---- attempt 1 failed (NameError); healed by missing-import: attempt 2 ----' "$T/healed.c" | cut -d: -f1)
shas=$(grep -n '^sha ' "$T/healed.c" | cut -d: -f1 | tr '\n' ' ')
if [ $rc = 0 ] && [ -n "$sep" ] && [ "$(echo $shas | wc -w)" = 2 ] && [ "${shas%% *}" -lt "$sep" ] \
  && [ "$(echo $shas | cut -d' ' -f2)" -gt "$sep" ] && [ "$(grep -c '{"n": 0}' "$T/healed.c")" = 1 ]; then
  ok "a healed live run prints a separator naming the patch between the attempts"
else
  not_ok "separator" "exit $rc" "$(cat -v "$T/healed.c")"
fi

# 10. Ctrl-C mid-run with --json: one valid JSON object, status interrupted, exit 130, and no
# process of the jail survives (the token is in the jail's python3 command line).
cat > "$T/slow.py" <<'PY'
import sys, time
print("marker", flush=True)
print("on-stderr", file=sys.stderr, flush=True)
time.sleep(120)
PY
# interrupt SIG OUT ERR ARGS...: start csrun ARGS, wait for "marker" in OUT or ERR, send SIG.
interrupt () {
  local sig=$1 out=$2 err=$3
  shift 3
  "$CSRUN" "$@" >"$out" 2>"$err" </dev/null &
  local pid=$! i
  for i in $(seq 600); do
    grep -q marker "$out" "$err" 2>/dev/null && break
    sleep 0.1
  done
  kill -"$sig" $pid
  wait $pid
}
token="csrun-int-$$-$RANDOM"
interrupt INT "$T/int.json" "$T/int.err" run --json --live "$T/slow.py" "$token"
rc=$?
got=$(jq_ "$T/int.json" '(j["status"], j["interrupted_by"], j["attempts"][-1]["interrupted_by"], "marker" in j["attempts"][0]["stdout"], len(j["attempts"]))')
[ $rc = 130 ] && [ "$got" = "('interrupted', 'SIGINT', 'SIGINT', True, 1)" ] \
  && ok "SIGINT with --json: status interrupted, exit 130" \
  || not_ok "SIGINT --json" "exit $rc" "$got" "$(cat "$T/int.err")"
python3 -c 'import json, sys; s = open(sys.argv[1]).read(); json.loads(s); assert s.count("\n") == 1' "$T/int.json" \
  && ok "the interrupted --json output is one JSON object" || not_ok "one object" "$(head -c 600 "$T/int.json")"
grep -q "interrupted by SIGINT" "$T/int.err" && ok "one line on stderr says it was interrupted" \
  || not_ok "interrupted line" "$(cat "$T/int.err")"
sleep 0.5 # the kernel's pid namespace teardown; csrun already reaped the jail's init
if ps -eo args | grep -v grep | grep -q -- "$token"; then
  not_ok "no process of the jail survives" "$(ps -eo pid,args | grep -- "$token")"
else
  ok "no process of the jail survives the interrupt"
fi

# Ctrl-C typed on csrun's controlling terminal (SIGINT to its foreground process group: csrun
# and the jail's init, which forwards it to the snippet): still status interrupted, exit 130.
cat > "$T/ctrlc.py" <<'PY'
import fcntl, os, pty, subprocess, sys, termios

out, argv = sys.argv[1], sys.argv[2:]
master, slave = pty.openpty()

def ctty():
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)

p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, preexec_fn=ctty)
os.close(slave)
data = b""
sent = False
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
    if not sent and b"marker" in data:
        os.write(master, b"\x03")
        sent = True
rc = p.wait()
with open(out, "wb") as f:
    f.write(data)
sys.exit(rc)
PY
python3 "$T/ctrlc.py" "$T/ctrlc.out" "$CSRUN" run "$T/slow.py" "$token-c"
rc=$?
[ $rc = 130 ] && grep -q "interrupted by SIGINT" "$T/ctrlc.out" && [ "$(grep -c marker "$T/ctrlc.out")" = 1 ] \
  && ok "Ctrl-C on the terminal: the jail is stopped, exit 130, the output is not printed twice" \
  || not_ok "Ctrl-C on a pty" "exit $rc" "$(cat -v "$T/ctrlc.out")"

# 11. SIGTERM: what was captured is printed, exit 143.
interrupt TERM "$T/term.out" "$T/term.err" run --live "$T/slow.py" "$token-t"
rc=$?
[ $rc = 143 ] && grep -q marker "$T/term.out" && grep -q on-stderr "$T/term.err" \
  && grep -q "interrupted by SIGTERM" "$T/term.err" \
  && ok "SIGTERM: the output so far is printed, exit 143" \
  || not_ok "SIGTERM" "exit $rc" "$(cat "$T/term.out")" "$(cat "$T/term.err")"
# Buffered (not live): the captured output is printed when csrun is interrupted.  The snippet
# prints its marker, then reads 300 kB from stdin, a FIFO: the test's write of them can only
# finish once the snippet is reading (the FIFO, csrun's read and the jail's pipe hold far less).
cat > "$T/reader.py" <<'PY'
import sys, time
print("marker", flush=True)
print("on-stderr", file=sys.stderr, flush=True)
sys.stdin.buffer.read(300000)
time.sleep(120)
PY
mkfifo "$T/fifo"
"$CSRUN" run "$T/reader.py" "$token-b" <"$T/fifo" >"$T/buf.out" 2>"$T/buf.err" &
pid=$!
head -c 300000 /dev/zero > "$T/fifo"
kill -TERM $pid
wait $pid
rc=$?
[ $rc = 143 ] && [ "$(cat "$T/buf.out")" = marker ] && grep -q on-stderr "$T/buf.err" \
  && grep -q "interrupted by SIGTERM" "$T/buf.err" \
  && ok "SIGTERM, buffered: what was captured is printed, exit 143" \
  || not_ok "SIGTERM buffered" "exit $rc" "$(cat "$T/buf.out")" "$(cat "$T/buf.err")"

# SIGHUP gives 129.
"$CSRUN" run --json --live "$T/slow.py" "$token-h" >/dev/null 2>"$T/hup.err" </dev/null &
pid=$!
for i in $(seq 600); do grep -q marker "$T/hup.err" && break; sleep 0.1; done
kill -HUP $pid
wait $pid
rc=$?
[ $rc = 129 ] && ok "SIGHUP: exit 129" || not_ok "SIGHUP" "exit $rc" "$(cat "$T/hup.err")"

sleep 0.5
if ps -eo args | grep -v grep | grep -q -- "$token"; then
  not_ok "no process of any interrupted jail survives" "$(ps -eo pid,args | grep -- "$token")"
else
  ok "no process of any interrupted jail survives"
fi

done_testing
