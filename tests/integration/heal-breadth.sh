#!/bin/bash
# The local healer's breadth through the real binary: the corpus in
# tests/heal/ (did-you-mean, Python 2, other languages' methods, pasted
# code, submodules, true failures, gate cases, clean code) scored by
# tests/heal/score.py: no false heal, and at least as many heals as reached.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
MIN_HEALED=93

python3 "$CSRUN_SRCDIR/tests/heal/score.py" --csrun "$CSRUN" --jobs 2 --min-healed "$MIN_HEALED" \
  >"$T/score.out" 2>&1
rc=$?
healed=$(sed -n 's/^healed \([0-9]*\) \/ \([0-9]*\)$/\1/p' "$T/score.out")
false=$(sed -n 's/^false heals \([0-9]*\)$/\1/p' "$T/score.out")
if [ "$false" = 0 ]; then ok "no false heal in the corpus"; else not_ok "no false heal in the corpus" "$(cat "$T/score.out")"; fi
if [ -n "$healed" ] && [ "$healed" -ge "$MIN_HEALED" ] && [ "$rc" = 0 ]; then
  ok "the corpus heals ($(grep '^healed' "$T/score.out"), at least $MIN_HEALED)"
else
  not_ok "the corpus heals at least $MIN_HEALED" "$(cat "$T/score.out")"
fi

# One case in detail: two slips found by the gate (a missing import and a
# one-edit typo) fixed in one patch, before anything ran.
printf 'values = [1, 2]\nprint(math.sqrt(16), len(valeus) + 1)\n' >"$T/two.py"
csrun run --json --no-llm "$T/two.py" >"$T/two.json" 2>"$T/two.err"
got=$(json_get "$T/two.json" '(j["status"], len(j["attempts"]), j["attempts"][0]["gate"]["verdict"], j["attempts"][0]["patch"]["rules"], j["attempts"][0]["gate"]["undefined_names"][1].get("suggest"), j["attempts"][1]["stdout"])' 2>&1)
want="('healed', 2, 'blocked', 'missing-import,did-you-mean', 'values', '4.0 3\\n')"
if [ "$got" = "$want" ]; then ok "a missing import and a typo: one patch, before the snippet ran"; else not_ok "a missing import and a typo in one patch" "got:  $got" "want: $want" "$(cat "$T/two.err")"; fi

# Python 2 throughout: print statements, except E, e, octal, <>, backquotes, xrange in one patch.
printf 'try:\n    x = int("z")\nexcept ValueError, e:\n    print "bad"\nfor i in xrange(1):\n    print 0777, 1 <> 2, `3`\n' >"$T/py2.py"
csrun run --json --no-llm "$T/py2.py" >"$T/py2.json" 2>"$T/py2.err"
got=$(json_get "$T/py2.json" '(j["status"], len(j["attempts"]), j["attempts"][0]["patch"]["rules"], j["attempts"][1]["stdout"])' 2>&1)
want="('healed', 2, 'py2-idioms,py2-print', 'bad\\n511 True 3\\n')"
if [ "$got" = "$want" ]; then ok "a Python 2 snippet heals in one patch"; else not_ok "a Python 2 snippet heals in one patch" "got:  $got" "want: $want" "$(cat "$T/py2.err")"; fi

# With one attempt the gate does not block a typo (nothing would fix it).
csrun run --json --no-llm --max-attempts 1 "$T/two.py" >"$T/one.json" 2>/dev/null
got=$(json_get "$T/one.json" '(j["attempts"][0]["gate"]["verdict"], j["diagnosis"]["error_type"])' 2>&1)
if [ "$got" = "('pass', 'NameError')" ]; then ok "one attempt: the gate reports, the snippet runs"; else not_ok "one attempt: the gate does not block" "got: $got"; fi

# A missing third-party module: no fix, the diagnosis names the Debian package.
printf 'import sklearn.linear_model\n' >"$T/mod.py"
csrun run --json --no-llm "$T/mod.py" >"$T/mod.json" 2>/dev/null
got=$(json_get "$T/mod.json" '(j["status"], j["diagnosis"]["error_type"], j["diagnosis"]["message"], "python3-sklearn" in j["diagnosis"]["hint"] and "--with" in j["diagnosis"]["hint"])' 2>&1)
want="('failed', 'ModuleNotFoundError', \"No module named 'sklearn'\", True)"
if [ "$got" = "$want" ]; then ok "ModuleNotFoundError names the Debian package"; else not_ok "ModuleNotFoundError names the Debian package" "got:  $got" "want: $want"; fi

# Pasted code that also lacks an import: the gate checks the unwrapped code
# at once, and both fixes are one patch.
printf 'Here it is:\n```python\nprint(math.sqrt(16))\n```\n' >"$T/fence.py"
csrun run --json --no-llm "$T/fence.py" >"$T/fence.json" 2>"$T/fence.err"
got=$(json_get "$T/fence.json" '(j["status"], len(j["attempts"]), j["attempts"][0]["gate"]["verdict"], j["attempts"][0]["patch"]["rules"], j["final_code"], j["attempts"][1]["stdout"])' 2>&1)
want="('healed', 2, 'syntax_error', 'pasted-code,missing-import', 'import math\\nprint(math.sqrt(16))\\n', '4.0\\n')"
if [ "$got" = "$want" ]; then ok "a fenced snippet without its import: one patch"; else not_ok "a fenced snippet without its import: one patch" "got:  $got" "want: $want" "$(cat "$T/fence.err")"; fi

done_testing
