#!/bin/bash
# Honest reporting (issue 14): exit statuses, cut output, the JSON document
# (one write, file/args/label), the no-network hint, the limits warning, the
# rlimit fallback's memory bound, `csrun run FILE` next to a config.json.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)

# ------------------------------------------------------------ exit status
# sys.exit(N) without a traceback: ExitStatus, exit_code N, csrun exits 1,
# and nothing is asked to heal it (the --patch-cmd would leave a file).
printf 'import sys\nsys.exit(3)\n' > "$T/exit3.py"
csrun run --json --patch-cmd "touch '$T/asked'; cat" "$T/exit3.py" >"$T/exit3.json" 2>"$T/exit3.err"
rc=$?
res=$(json_get "$T/exit3.json" '(j["status"], j["diagnosis"]["error_type"], j["diagnosis"]["message"], j["attempts"][0]["exit_code"], len(j["attempts"]), "own choosing" in j["attempts"][0]["no_patch"])' 2>&1)
[ $rc = 1 ] && [ "$res" = "('failed', 'ExitStatus', 'exit status 3', 3, 1, True)" ] && [ ! -e "$T/asked" ] \
  && ok "sys.exit(3): ExitStatus 'exit status 3', exit_code 3, exit 1, not healed (no --patch-cmd call)" \
  || not_ok "sys.exit(3)" "exit $rc" "$res" "asked: $([ -e "$T/asked" ] && echo yes || echo no)"
printf 'import os\nos._exit(4)\n' > "$T/exit4.py"
out=$(csrun run "$T/exit4.py" 2>&1)
rc=$?
[ $rc = 1 ] && [[ $out == *"csrun run: failed after 1 attempt: ExitStatus: exit status 4;"* ]] \
  && ok "os._exit(4): the outcome line says 'ExitStatus: exit status 4'" || not_ok "os._exit(4)" "exit $rc" "$out"
printf 'import sys\nsys.exit("no input file")\n' > "$T/exitmsg.py"
csrun run --json "$T/exitmsg.py" >"$T/exitmsg.json" 2>/dev/null
res=$(json_get "$T/exitmsg.json" '(j["diagnosis"]["error_type"], j["diagnosis"]["message"])' 2>&1)
[ "$res" = "('ExitStatus', 'exit status 1: no input file')" ] \
  && ok "sys.exit(TEXT): the message keeps the last stderr line" || not_ok "sys.exit(TEXT)" "$res"
printf 'import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n' > "$T/term.py"
csrun run --json "$T/term.py" >"$T/term.json" 2>/dev/null
res=$(json_get "$T/term.json" '(j["diagnosis"]["error_type"], j["diagnosis"]["message"], j["attempts"][0]["signal"])' 2>&1)
[ "$res" = "('Signal', 'killed by signal 15 (SIGTERM)', 'SIGTERM')" ] \
  && ok "a signal without traceback: 'killed by signal 15 (SIGTERM)'" || not_ok "signal diagnosis" "$res"

# ------------------------------------------------------------ --max-output
printf 'import sys\nprint("x" * 100000)\nsys.stderr.write("e" * 5000)\n' > "$T/big.py"
csrun run --max-output 1K "$T/big.py" >"$T/big.out" 2>"$T/big.err"
rc=$?
n=$(grep -c 'max-output' "$T/big.err")
[ $rc = 0 ] && [ "$n" = 1 ] \
  && grep -qx 'csrun run: warning: output cut by --max-output (1024 bytes per stream: the first and last half kept): stdout: 98977 bytes dropped, stderr: 3976 bytes dropped' "$T/big.err" \
  && ok "--max-output: one warning line naming the streams and the bytes dropped" \
  || not_ok "--max-output warning" "exit $rc" "$(tail -c 400 "$T/big.err")"
csrun run --quiet --max-output 1K "$T/big.py" >/dev/null 2>"$T/bigq.err"
grep -q 'max-output' "$T/bigq.err" && not_ok "--quiet: no --max-output warning" "$(tail -c 300 "$T/bigq.err")" \
  || ok "--quiet: no --max-output warning"
csrun run --json --max-output 1K "$T/big.py" >"$T/big.json" 2>/dev/null
res=$(json_get "$T/big.json" '(lambda a: (a["stdout_truncated"], a["stdout_dropped_bytes"], a["stderr_truncated"], a["stderr_dropped_bytes"]))(j["attempts"][0])' 2>&1)
[ "$res" = "(True, 98977, True, 3976)" ] && ok "JSON: stdout_truncated/stderr_truncated with the dropped bytes" \
  || not_ok "JSON truncation fields" "$res"
printf 'print("small")\n' > "$T/small.py"
csrun run --json "$T/small.py" >"$T/small.json" 2>/dev/null
res=$(json_get "$T/small.json" '(j["attempts"][0]["stdout_truncated"], j["attempts"][0]["stderr_truncated"])' 2>&1)
[ "$res" = "(False, False)" ] && ok "JSON: nothing cut, *_truncated false" || not_ok "not truncated" "$res"

# ------------------------------------------------------------ the JSON document
printf 'import sys\nprint(sys.argv[1:])\n' > "$T/args.py"
csrun run --json --label "batch 7: ünï" "$T/args.py" one "two words" >"$T/args.json" 2>/dev/null
res=$(json_get "$T/args.json" '(j["file"].endswith("/args.py"), j["args"], j["label"])' 2>&1)
[ "$res" = "(True, ['one', 'two words'], 'batch 7: ünï')" ] && ok "JSON: file, args and label" || not_ok "file/args/label" "$res"
res=$(printf 'print(1)\n' | csrun run --json - 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["file"], j["args"], "label" in j)')
[ "$res" = "- [] False" ] && ok "JSON: stdin is file '-', no label without --label" || not_ok "stdin file" "$res"
csrun run --label "$(printf 'a\033[31mb')" "$T/small.py" >/dev/null 2>"$T/lab.err"
rc=$?
[ $rc = 2 ] && grep -q 'invalid --label: it contains a control character' "$T/lab.err" \
  && ok "--label with a control character: usage error" || not_ok "--label control" "exit $rc" "$(cat "$T/lab.err")"
csrun run --label "$(head -c 257 /dev/zero | tr '\0' x)" "$T/small.py" >/dev/null 2>"$T/lab2.err"
rc=$?
[ $rc = 2 ] && grep -q 'invalid --label: longer than 256 bytes' "$T/lab2.err" \
  && ok "--label over 256 bytes: usage error" || not_ok "--label long" "exit $rc" "$(cat "$T/lab2.err")"

# 16 runs appending to one file: every line one whole document (each is
# ~130 KB, far more than one stdio buffer).
printf 'print("y" * 60000)\nprint("z" * 60000)\n' > "$T/wide.py"
pids=()
for i in $(seq 1 16); do
  csrun run --json --label "job-$i" "$T/wide.py" >>"$T/one.jsonl" 2>/dev/null &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
res=$(python3 - "$T/one.jsonl" <<'PY' 2>&1
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "no final newline"
docs = [json.loads(l) for l in lines[:-1]]
labels = sorted(d["label"] for d in docs)
ok = len(docs) == 16 and labels == sorted("job-%d" % i for i in range(1, 17)) \
     and all(d["status"] == "ok" and len(d["attempts"][0]["stdout"]) == 120002 for d in docs)
print("ok" if ok else "bad: %d docs, labels %s" % (len(docs), labels))
PY
)
[ "$res" = ok ] && ok "16 concurrent --json >> one.jsonl: 16 whole documents, one per label" \
  || not_ok "concurrent appends" "$res" "$(wc -c "$T/one.jsonl")"
csrun run --json "$T/small.py" >/dev/full 2>"$T/full.err"
rc=$?
[ $rc = 125 ] && grep -q 'cannot write the result: .*No space left on device' "$T/full.err" \
  && ok "--json to a full device: exit 125 and the error" || not_ok "--json to /dev/full" "exit $rc" "$(cat "$T/full.err")"

# ------------------------------------------------------------ no network
printf 'import socket\nsocket.getaddrinfo("csrun-test.invalid", 80)\n' > "$T/dns.py"
csrun run --json "$T/dns.py" >"$T/dns.json" 2>/dev/null
res=$(json_get "$T/dns.json" '(j["diagnosis"]["error_type"], "--net host --allow-host-net" in j["diagnosis"].get("hint", ""))' 2>&1)
[ "$res" = "('socket.gaierror', True)" ] && ok "a DNS failure in the jail: the diagnosis hints at --net host --allow-host-net" \
  || not_ok "DNS hint" "$res"
out=$(csrun run "$T/dns.py" 2>&1)
[[ $out == *"csrun run: failed after 1 attempt: socket.gaierror: "*"; the jail has no network by default"* ]] \
  && ok "the outcome line carries the hint" || not_ok "hint on stderr" "$(printf '%s' "$out" | tail -n 2)"
printf 'import urllib.request\nurllib.request.urlopen("http://csrun-test.invalid/", timeout=5)\n' > "$T/url.py"
csrun run --json "$T/url.py" >"$T/url.json" 2>/dev/null
res=$(json_get "$T/url.json" '(j["diagnosis"]["error_type"], "hint" in j["diagnosis"])' 2>&1)
[ "$res" = "('urllib.error.URLError', True)" ] && ok "urllib's URLError around it: the hint too" || not_ok "URLError hint" "$res"
csrun run --json --net host --allow-host-net "$T/dns.py" >"$T/dnsh.json" 2>/dev/null
res=$(json_get "$T/dnsh.json" '(j["status"], "hint" in (j.get("diagnosis") or {}))' 2>&1)
[ "$res" = "('failed', False)" ] && ok "--net host: the same failure, no hint" || not_ok "no hint with --net host" "$res"

# ------------------------------------------------------------ typo next to a config.json
mkdir "$T/bundle"
echo '{"ociVersion": "1.0.2"}' > "$T/bundle/config.json"
printf 'print("snippet ran")\n' > "$T/bundle/ok.py"
out=$(cd "$T/bundle" && csrun run typo.py 2>&1)
rc=$?
[ $rc = 2 ] && [ "$out" = "csrun run: cannot read the snippet 'typo.py': read 'typo.py': No such file or directory" ] \
  && ok "csrun run typo.py next to a config.json: 'cannot read the snippet', exit 2" || not_ok "typo next to config.json" "exit $rc" "$out"
out=$(cd "$T/bundle" && csrun run -q ok.py 2>&1)
rc=$?
[ $rc = 0 ] && [ "$out" = "snippet ran" ] && ok "csrun run FILE next to a config.json runs the snippet" || not_ok "snippet next to config.json" "exit $rc" "$out"
out=$(cd "$T/bundle" && csrun run 2>&1)
[[ $out == *"missing container ID"* ]] && ok "csrun run without FILE next to a config.json is the OCI run" \
  || not_ok "OCI run without FILE" "$out"

# ------------------------------------------------------------ limits
mech=$(json_get "$T/small.json" 'j["limits"]["mechanism"]')
warning=$(json_get "$T/small.json" 'j["limits"]["warning"]')
diag "limits mechanism: $mech; warning: $warning"
if [[ $mech == *rlimit* ]]; then
  [[ $warning == *"enforced by rlimits"*"RLIMIT_DATA"* ]] && ok "JSON: limits.warning names the rlimit fallback" \
    || not_ok "limits.warning" "$warning"
  C="$T/cache"
  csrun run --cache-dir "$C" "$T/small.py" >/dev/null 2>"$T/w1.err"
  csrun run --cache-dir "$C" "$T/small.py" >/dev/null 2>"$T/w2.err"
  csrun run --cache-dir "$C" --memory 512M "$T/small.py" >/dev/null 2>"$T/w3.err"
  csrun run --cache-dir "$C" --json "$T/small.py" >"$T/w4.json" 2>"$T/w4.err"
  n1=$(grep -c 'warning: limits enforced by rlimits' "$T/w1.err")
  n2=$(grep -c 'warning: limits' "$T/w2.err")
  n3=$(grep -c 'warning: limits enforced by rlimits' "$T/w3.err")
  w4=$(json_get "$T/w4.json" 'j["limits"]["warning"] is not None')
  if [ "$n1" = 1 ] && [ "$n2" = 0 ] && [ "$n3" = 1 ] && [ "$w4" = True ] && ls "$C"/limits-warned.* >/dev/null 2>&1; then
    ok "the rlimit warning: once per cache directory and boot, again with an explicit --memory, always in the JSON"
  else
    not_ok "rlimit warning once" "first $n1, second $n2, --memory $n3, json $w4" "$(cat "$T/w1.err" "$T/w2.err" "$T/w3.err")" "$(ls -la "$C")"
  fi
else
  [ "$warning" = None ] && ok "limits in a cgroup ($mech): no limits.warning" || not_ok "no warning in a cgroup" "$warning"
  skip "the rlimit warning once per cache directory" "n/a: limits are in a cgroup ($mech) here; the rootless pass runs it"
fi

# 32 threads fit under the default 512M (RLIMIT_AS counted each glibc arena's
# 64 MiB reservation and broke at 15); a 1 GiB buffer still does not.
cat > "$T/threads.py" <<'PY'
import threading
ev = threading.Event()
done = []
def work():
    done.append(len(bytearray(1 << 20)))
    ev.wait()
ts = [threading.Thread(target=work) for _ in range(32)]
try:
    for t in ts:
        t.start()
finally:
    ev.set()
for t in ts:
    if t.ident:
        t.join()
print("threads", len(done))
PY
out=$(csrun run -q --no-heal --timeout 60 "$T/threads.py" 2>&1)
rc=$?
[ $rc = 0 ] && [ "$out" = "threads 32" ] && ok "32 threads run under the default limits ($mech)" || not_ok "32 threads" "exit $rc" "$out"
printf 'b = bytearray(1 << 30)\nprint("allocated", len(b))\n' > "$T/gib.py"
csrun run --json --no-heal --memory 512M "$T/gib.py" >"$T/gib.json" 2>/dev/null
rc=$?
res=$(json_get "$T/gib.json" '(j["status"], j["diagnosis"]["error_type"], j["limits"]["memory_limit_kind"])' 2>&1)
case "$mech:$res" in
  *rlimit*:"('failed', 'MemoryError', 'private-data')" | cgroup*:"('failed', 'OutOfMemory', 'resident')" | cgroup*:"('failed', 'MemoryError', 'resident')")
    [ $rc = 1 ] && ok "a 1 GiB bytearray fails under --memory 512M ($res)" || not_ok "1 GiB exit status" "exit $rc" ;;
  *) not_ok "a 1 GiB bytearray fails under --memory 512M" "exit $rc" "$mech" "$res" ;;
esac

done_testing
