#!/bin/bash
# The self-healing loop through the real binary: gate, run, scan, diagnose, heal, retry.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)

# run_case NAME CODE [csrun options...]: writes $T/NAME.py, runs csrun run --json,
# leaves the JSON in $T/NAME.json and the exit code in $rc.
run_case () {
  local name=$1 code=$2
  shift 2
  printf '%s\n' "$code" > "$T/$name.py"
  csrun run --json "$@" "$T/$name.py" >"$T/$name.json" 2>"$T/$name.err"
  rc=$?
}
q () { json_get "$T/$1.json" "$2"; }
expect () { # expect NAME DESC EXPECTED-RC PYTHON-EXPR EXPECTED-VALUE
  local name=$1 desc=$2 want_rc=$3 expr=$4 want=$5 got
  got=$(q "$name" "$expr" 2>&1)
  if [ "$rc" = "$want_rc" ] && [ "$got" = "$want" ]; then
    ok "$desc"
  else
    not_ok "$desc" "exit $rc (want $want_rc)" "got:  $got" "want: $want" "$(head -c 3000 "$T/$name.json")" "$(cat "$T/$name.err")"
  fi
}

run_case clean 'import json
print(json.dumps({"a": [1, 2]}))'
expect clean "clean code runs once: status ok" 0 \
  '(j["status"], len(j["attempts"]), j["attempts"][0]["gate"]["verdict"], j["attempts"][0]["stdout"])' \
  "('ok', 1, 'pass', '{\"a\": [1, 2]}\\n')"

run_case sqrt 'print(math.sqrt(16))'
expect sqrt "print(math.sqrt(16)) heals to 4.0 (missing import fixed before anything ran)" 0 \
  '(j["status"], len(j["attempts"]), j["attempts"][0]["gate"]["verdict"], j["attempts"][0]["patch"]["rules"], "+import math" in j["attempts"][0]["patch"]["diff"], j["attempts"][1]["stdout"], j["final_code"].startswith("import math"))' \
  "('healed', 2, 'blocked', 'missing-import', True, '4.0\\n', True)"

run_case concat 'print("Result: " + 42)'
expect concat 'print("Result: " + 42) heals to Result: 42' 0 \
  '(j["status"], j["attempts"][0]["diagnosis"]["error_type"], j["attempts"][0]["patch"]["rules"], j["attempts"][-1]["stdout"])' \
  "('healed', 'TypeError', 'str-concat', 'Result: 42\\n')"

run_case three 'data = json.loads("[3, 1, 2]")
c = Counter(data)
print(math.floor(2.5), sorted(c))'
expect three "three missing imports heal within the attempt limit" 0 \
  '(j["status"], len(j["attempts"]) <= 3, j["attempts"][-1]["stdout"])' \
  "('healed', True, '2 [1, 2, 3]\\n')"

run_case zero 'def ratio(a, b):
    return a / b

x = 1
print(ratio(x, 0))'
expect zero "ZeroDivisionError fails with a diagnosis at the right line" 1 \
  '(j["status"], j["diagnosis"]["error_type"], j["diagnosis"]["line"], "return a / b" in j["diagnosis"]["context"], j["attempts"][-1].get("patch"))' \
  "('failed', 'ZeroDivisionError', 2, True, None)"

run_case nomod 'import numpyy
print(numpyy.zeros(3))'
expect nomod "a missing third-party module fails with ModuleNotFoundError" 1 \
  '(j["status"], j["diagnosis"]["error_type"], j["diagnosis"]["line"])' \
  "('failed', 'ModuleNotFoundError', 1)"

run_case silent 'print("Pipeline failed")'
expect silent 'print("Pipeline failed") is a silent failure' 1 \
  '(j["status"], j["attempts"][0]["exit_code"], j["attempts"][0]["silent_failure"]["detected"], j["diagnosis"]["error_type"])' \
  "('failed', 0, True, 'SilentFailure')"

run_case silentoff 'print("Pipeline failed")' --no-silent-scan
expect silentoff "--no-silent-scan trusts exit status 0" 0 '(j["status"], "silent_failure" in j["attempts"][0])' "('ok', False)"

run_case pattern 'print("WARN: 3 rows rejected")' --silent-pattern 'rows\s+rejected'
expect pattern "--silent-pattern adds a pattern" 1 '(j["status"], j["attempts"][0]["silent_failure"]["pattern"])' "('failed', 'rows\\\\s+rejected')"

run_case alias 'import os as o
o.system("id")'
expect alias "the gate blocks os.system through an alias (exit 3)" 3 \
  '(j["status"], [v["rule"] for v in j["attempts"][0]["gate"]["violations"]], j["attempts"][0]["stdout"], j["diagnosis"]["error_type"])' \
  "('blocked', ['dangerous-call'], '', 'StaticSafetyViolation')"

run_case allowed 'import os as o
print(o.getcwd())' --allow call:os.system
expect allowed "harmless os calls pass" 0 '(j["status"], j["attempts"][0]["stdout"])' "('ok', '/work\\n')"

run_case py2 'x = 3
print "x is", x'
expect py2 "a Python 2 print statement heals" 0 '(j["status"], j["attempts"][0]["gate"]["verdict"], j["attempts"][-1]["stdout"])' "('healed', 'syntax_error', 'x is 3\\n')"

run_case noheal 'print(math.pi > 3)' --no-heal
expect noheal "--no-heal: a missing import fails" 1 '(j["status"], j["diagnosis"]["error_type"], len(j["attempts"]))' "('failed', 'NameError', 1)"

run_case onlyone 'print("a" + 1)' --max-attempts 1
expect onlyone "--max-attempts 1 makes no patch" 1 '(j["status"], len(j["attempts"]), j["attempts"][0]["no_patch"])' "('failed', 1, 'the attempt limit was reached')"

run_case slow 'import time
time.sleep(30)' --timeout 1
expect slow "a timeout is not healed (exit 124)" 124 '(j["status"], len(j["attempts"]), j["diagnosis"]["error_type"])' "('timeout', 1, 'Timeout')"

# --patch-cmd: a fixer, garbage, forbidden code, a hang.
cat > "$T/fixer" <<'SH'
#!/bin/sh
# Reads the request, answers with a fenced, fixed program.
python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["attempt"]>=1 and r["diagnosis"]["error_type"]=="ZeroDivisionError", r; print("Here you go:\n```python\nprint(\"fixed\", " + str(r["attempt"]) + ")\n```")'
SH
printf '#!/bin/sh\ncat >/dev/null\necho "%%%% not python at all"\n' > "$T/garbage"
printf '#!/bin/sh\ncat >/dev/null\nprintf "import os\\nos.system(\\"id\\")\\n"\n' > "$T/forbidden"
printf '#!/bin/sh\nsleep 30\n' > "$T/hang"
chmod +x "$T/fixer" "$T/garbage" "$T/forbidden" "$T/hang"
div='print(1 / 0)'
run_case pfix "$div" --patch-cmd "$T/fixer"
expect pfix "--patch-cmd that fixes: healed" 0 '(j["status"], j["attempts"][0]["patch"]["source"], j["attempts"][1]["stdout"])' "('healed', 'patch-cmd', 'fixed 1\\n')"
run_case pgarbage "$div" --patch-cmd "$T/garbage"
expect pgarbage "--patch-cmd that returns garbage: failed, never run as a pass" 1 '(j["status"], j["attempts"][1]["gate"]["verdict"], j["attempts"][1]["stdout"])' "('failed', 'syntax_error', '')"
run_case pforbid "$div" --patch-cmd "$T/forbidden"
expect pforbid "--patch-cmd that returns forbidden code: blocked, and says so" 3 '(j["status"], j["attempts"][1]["no_patch"], j["attempts"][1]["stdout"])' "('blocked', 'the patch from --patch-cmd was blocked by the gate', '')"
start=$(date +%s)
run_case phang "$div" --patch-cmd "$T/hang" --patch-timeout 1
took=$(( $(date +%s) - start ))
expect phang "--patch-cmd that hangs is cut off (${took}s)" 1 '(j["status"], "timed out" in j["attempts"][0]["no_patch"], len(j["attempts"]))' "('failed', True, 1)"

# The request carries the gate's violations and the attempt's output tails.
cat > "$T/saver" <<'SH'
#!/bin/sh
# Saves the request (one file per attempt), answers with a fixed program.
n=$(ls "$SAVE_DIR" | wc -l)
cat > "$SAVE_DIR/req$n.json"
echo 'print("saved")'
SH
chmod +x "$T/saver"
mkdir -p "$T/saved-blocked" "$T/saved-tails"
SAVE_DIR="$T/saved-blocked" run_case pviol 'import os
os.system("id")' --patch-cmd "SAVE_DIR=$T/saved-blocked $T/saver"
got=$(json_get "$T/saved-blocked/req0.json" '(j["attempt"], j["diagnosis"]["error_type"], len(j["violations"]) >= 1, all(set(v) == {"rule", "line", "col", "message"} for v in j["violations"]), j["violations"][0]["line"], j["violations"][0]["rule"], j["stdout_tail"], "dangerous-call" in j["stderr_tail"])' 2>&1)
if [ "$rc" = 0 ] && [ "$got" = "(1, 'StaticSafetyViolation', True, True, 2, 'dangerous-call', '', True)" ]; then
  ok "--patch-cmd request: the gate's violations when the attempt was blocked"
else
  not_ok "--patch-cmd request: the gate's violations" "exit $rc" "$got" "$(cat "$T/saved-blocked/req0.json" "$T/pviol.json")"
fi
run_case ptails 'import sys
print("x" * 10000)
print("\u00e9" * 3000)
print("done")
sys.stderr.write("warning: about to fail\n")
raise ValueError("boom")' --patch-cmd "SAVE_DIR=$T/saved-tails $T/saver"
got=$(json_get "$T/saved-tails/req0.json" '(j["violations"], j["stdout_truncated"], len(j["stdout_tail"].encode()) <= 4096, j["stdout_tail"].endswith("\u00e9\ndone\n"), j["stdout_tail"].strip("\u00e9\ndone") == "", j["stderr_truncated"], "warning: about to fail" in j["stderr_tail"], j["stderr_tail"].rstrip().endswith("ValueError: boom"))' 2>&1)
if [ "$rc" = 0 ] && [ "$got" = "([], True, True, True, True, False, True, True)" ]; then
  ok "--patch-cmd request: the last 4 KiB of stdout (cut on a character) and stderr"
else
  not_ok "--patch-cmd request: the output tails" "exit $rc" "$got" "$(head -c 600 "$T/saved-tails/req0.json")"
fi
# A program that does not exist: a usage error before any attempt.
for pc in "$T/no-such-fixer --fix" "csrun-no-such-fixer-$$" "$T/c-ok-not-executable"; do
  : > "$T/c-ok-not-executable"
  printf 'print(1 / 0)\n' > "$T/pmissing.py"
  csrun run --json --patch-cmd "$pc" "$T/pmissing.py" >"$T/pmissing.out" 2>"$T/pmissing.err"
  rc=$?
  first=${pc%% *}
  if [ "$rc" = 2 ] && [ "$(wc -l < "$T/pmissing.err")" = 1 ] && grep -qF -- "--patch-cmd: ${first##*/}" "$T/pmissing.err" ||
     { [ "$rc" = 2 ] && [ "$(wc -l < "$T/pmissing.err")" = 1 ] && grep -qF -- "$first" "$T/pmissing.err"; } &&
     [ ! -s "$T/pmissing.out" ]; then
    ok "--patch-cmd '${pc##*/}' that can't run: exit 2, one line, no attempt"
  else
    not_ok "--patch-cmd '${pc##*/}' that can't run: exit 2, one line" "exit $rc" "$(cat "$T/pmissing.err" "$T/pmissing.out")"
  fi
done

# A patch far larger than the snippet (300,000 lines: its diff alone once took
# minutes) is an unusable reply, and so is one that is not UTF-8 (the gate
# once failed on it: exit 125).  `timeout` makes a hang fail, not stall.
printf '#!/bin/sh\ncat >/dev/null\nexec python3 -c "import sys; sys.stdout.write(\\"1\\\\n\\" * %s)"\n' 300000 > "$T/huge"
printf '#!/bin/sh\ncat >/dev/null\nexec python3 -c "import sys; sys.stdout.write(\\"1\\\\n\\" * %s)"\n' 30000 > "$T/big"
printf '#!/bin/sh\ncat >/dev/null\nprintf "x = 1 +\\n\\377\\n"\n' > "$T/notutf8"
chmod +x "$T/huge" "$T/big" "$T/notutf8"
printf '%s\n' "$div" > "$T/phuge.py"
timeout 60 "$CSRUN" run --json --patch-cmd "$T/huge" "$T/phuge.py" >"$T/phuge.json" 2>"$T/phuge.err"
rc=$?
expect phuge "a 300,000-line --patch-cmd reply is refused as too large, quickly" 1 \
  '(j["status"], j["attempts"][0]["no_patch"], len(j["attempts"]), j["attempts"][0]["heal_ms"] >= 0)' \
  "('failed', '--patch-cmd gave no patch: unusable reply: the patch is 600000 bytes, over the limit of 65536 bytes for this snippet', 1, True)"
run_case pbig "$div" --patch-cmd "$T/big"
expect pbig "a 30,000-line patch within the limit is used" 0 \
  '(j["status"], j["attempts"][0]["patch"]["diff"].split("\n")[2], j["attempts"][0]["heal_ms"] >= 0)' \
  "('healed', '@@ -1 +1,30000 @@', True)"
run_case psmallmax "$div" --patch-cmd "$T/big" --max-code-size 32K
expect psmallmax "a patch is never larger than --max-code-size" 1 \
  '(j["status"], j["attempts"][0]["no_patch"])' \
  "('failed', '--patch-cmd gave no patch: unusable reply: the patch is 60000 bytes, over the limit of 32768 bytes for this snippet')"
run_case putf8 "$div" --patch-cmd "$T/notutf8"
expect putf8 "a --patch-cmd reply that is not UTF-8 is an unusable reply, not a csrun failure" 1 \
  '(j["status"], j["attempts"][0]["no_patch"], len(j["attempts"]))' \
  "('failed', '--patch-cmd gave no patch: unusable reply: not valid UTF-8', 1)"

# A heal.conf name whose entry does not fit (a module used bare): the code runs as it is.
run_case bare 'print(string)'
expect bare "an unfixable known name is run as is, not blocked" 1 \
  '(j["status"], [a["gate"]["verdict"] for a in j["attempts"]], j["diagnosis"]["error_type"])' \
  "('failed', ['blocked', 'pass'], 'NameError')"
run_case dead 'if False:
    print(string)
print("fine")'
expect dead "a known name in dead code does not stop the snippet" 0 \
  '(j["status"], j["attempts"][-1]["stdout"], "final_code" in j)' "('ok', 'fine\\n', False)"
printf '#!/bin/sh\ncat >/dev/null\nprintf "print(math.floor(7.5))\\n"\n' > "$T/needsimport"
chmod +x "$T/needsimport"
run_case chain 'print(1 / 0)' --patch-cmd "$T/needsimport"
expect chain "a --patch-cmd patch that lacks an import is completed by the local rules" 0 \
  '(j["status"], [a.get("patch", {}).get("source") for a in j["attempts"]], j["attempts"][-1]["stdout"])' \
  "('healed', ['patch-cmd', 'local', None], '7\\n')"

# Without --json: the final output, and one line about the outcome.
printf 'print(math.sqrt(81))\n' > "$T/human.py"
out=$(csrun run "$T/human.py" 2>"$T/human.err")
rc=$?
[ $rc = 0 ] && [ "$out" = "9.0" ] && grep -q '^csrun run: healed after 2 attempts (missing-import)' "$T/human.err" \
  && ok "plain output shows the healed run's stdout and a healed line" || not_ok "plain healed output" "exit $rc" "$out" "$(cat "$T/human.err")"
out=$(csrun run --quiet "$T/human.py" 2>&1)
[ "$out" = "9.0" ] && ok "--quiet prints only the snippet's output" || not_ok "--quiet" "$out"
printf 'def f():\n    return {}["k"]\nf()\n' > "$T/key.py"
csrun run "$T/key.py" >/dev/null 2>"$T/key.err"
rc=$?
[ $rc = 1 ] && tail -n1 "$T/key.err" | grep -q "^csrun run: failed after 1 attempt: KeyError: 'k' (snippet.py line 2)" \
  && ok "a failure ends with one diagnosis line" || not_ok "failure line" "exit $rc" "$(cat "$T/key.err")"

# The gate is precompiled once per interpreter and cached; a bad cache entry is
# never trusted (the bootstrap compiles the source instead).
C=$(tmpdir)
printf 'print("cached")\n' > "$T/cache.py"
out=$(CSRUN_CACHE_DIR="$C" "$CSRUN" run --quiet "$T/cache.py" 2>&1)
n=$(ls "$C"/gate/*.bin 2>/dev/null | wc -l)
[ "$out" = cached ] && [ "$n" = 1 ] && ok "the precompiled gate is cached next to the rootfs trees" || not_ok "gate cache" "$out" "entries: $n"
for f in "$C"/gate/*.bin; do printf 'not the right interpreter\nxx' > "$f"; done
out=$(CSRUN_CACHE_DIR="$C" "$CSRUN" run --quiet "$T/cache.py" 2>&1)
[ "$out" = cached ] && ok "a stale gate cache entry falls back to compiling the gate" || not_ok "stale gate cache" "$out"
printf 'import os\nprint([fd for fd in range(3, 64) if os.path.exists("/proc/self/fd/%%d" %% fd)])\n' > "$T/fds.py"
out=$(csrun run --quiet "$T/fds.py" 2>&1)
[ "$out" = "[]" ] && ok "the snippet sees neither the verdict pipe (fd 3) nor the gate's code (fd 4)" || not_ok "fds 3/4 leak" "$out"

# No verdict is never a pass: a rootfs whose python3 exits 0 without running
# the gate ends as a csrun error (125), the snippet never counted as run.
tree=$(json_get "$T/clean.json" 'j["rootfs"]["dir"]')
F=$(tmpdir)
# A real copy, not hard links: the cached tree is read-only and must stay as
# it is (the cleanup's chmod -R would change its files' modes through links).
if cp -a "$tree" "$F/root" && chmod -R u+w "$F/root"; then
  rm -f "$F/root/usr/bin/python3"
  printf '#!/bin/sh\nexit 0\n' > "$F/root/usr/bin/python3"
  chmod 755 "$F/root/usr/bin/python3"
  printf 'print("never")\n' > "$T/nov.py"
  csrun run --json --rootfs "$F/root" "$T/nov.py" > "$T/nov.json" 2>"$T/nov.err"
  rc=$?
  [ $rc = 125 ] && [ "$(json_get "$T/nov.json" '(j["status"], j["attempts"][0]["gate"]["verdict"], "no usable verdict" in j["error"])')" = "('error', 'failed', True)" ] \
    && ok "a missing gate verdict is an error, never a pass" || not_ok "missing verdict" "exit $rc" "$(cat "$T/nov.json" "$T/nov.err")"
else
  not_ok "copy the rootfs tree for the missing-verdict test" "$tree"
fi

# csrun check: the gate alone.
printf 'print(1)\n' > "$T/c-ok.py"
printf 'try:\n    pass\nexcept:\n    pass\n' > "$T/c-bad.py"
printf 'print(\n' > "$T/c-syn.py"
out=$(csrun check "$T/c-ok.py"); rc=$?
[ $rc = 0 ] && [ "$out" = "$T/c-ok.py: pass" ] && ok "csrun check: pass exits 0" || not_ok "check pass" "exit $rc" "$out"
out=$(csrun check "$T/c-bad.py"); rc=$?
[ $rc = 3 ] && echo "$out" | grep -q "c-bad.py:3:0: broad-except:" && ok "csrun check: blocked exits 3 with rule and position" || not_ok "check blocked" "exit $rc" "$out"
out=$(csrun check "$T/c-syn.py"); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "c-syn.py:1:.*syntax" && ok "csrun check: a syntax error exits 1" || not_ok "check syntax" "exit $rc" "$out"
csrun check --json "$T/c-bad.py" > "$T/c.json"; rc=$?
[ $rc = 3 ] && [ "$(json_get "$T/c.json" '(j["status"], j["attempts"][0]["gate"]["violations"][0]["rule"], j["attempts"][0]["stdout"])')" = "('blocked', 'broad-except', '')" ] \
  && ok "csrun check --json" || not_ok "check --json" "exit $rc" "$(cat "$T/c.json")"
out=$(csrun check --allow broad-except "$T/c-bad.py"); rc=$?
[ $rc = 0 ] && ok "csrun check --allow switches a rule off" || not_ok "check --allow" "exit $rc" "$out"
csrun check --allow no-such-rule "$T/c-ok.py" >/dev/null 2>"$T/allow.err"; rc=$?
[ $rc = 2 ] && grep -q "no-such-rule" "$T/allow.err" && ok "an unknown --allow rule is a usage error" || not_ok "--allow unknown" "exit $rc" "$(cat "$T/allow.err")"
printf 'syntax syntax\nbad-line\n' > "$T/bad.conf"
csrun check --policy "$T/bad.conf" "$T/c-ok.py" >/dev/null 2>"$T/policy.err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l < "$T/policy.err")" = 1 ] && grep -q "line 2" "$T/policy.err" && ok "a broken --policy file is a one-line usage error naming the line" || not_ok "--policy broken" "exit $rc" "$(cat "$T/policy.err")"

done_testing
