#!/bin/bash
# policies/gate.py run by the host's /usr/bin/python3, as the jail runs it:
#   python3 -I -S -u -c <gate.py> POLICY_JSON [ARG...]   (cwd has snippet.py, fd 3 = verdict)
# over the corpus in tests/gate/ (clean/ must pass, blocked/ must report
# exactly its "# expect: RULE LINE" lines), then the special cases: syntax
# errors, limits, running the snippet, fd 3, undefined names and heal names.
# CSRUN_GATE_PYTHONS="python3.8 python3.12 ..." runs the corpus with more interpreters.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

PY=/usr/bin/python3
GATE="$CSRUN_SRCDIR/policies/gate.py"
CONF="$CSRUN_SRCDIR/policies/gate.conf"
T=$(tmpdir)

if [ ! -x "$PY" ]; then
  skip "gate.py tests" "no $PY"
  done_testing
  exit
fi

# The policy JSON csr_gate_policy_to_json_ex makes from gate.conf (same format
# rules: '#' comment lines, trailing-backslash continuation, "--" message).
# policy.py CONF [run=0|1] [heal=a,b] [allow=RULE,...] [full=1] [set=RULE:ARG]
cat >"$T/policy.py" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
opts = dict(a.split("=", 1) for a in sys.argv[2:])
logical, rules = [], []
for raw in text.split("\n") + [""]:
    if raw.lstrip().startswith("#"):
        continue
    line = raw.rstrip()
    logical.append(line[:-1] if line.endswith("\\") else line)
    if line.endswith("\\"):
        continue
    words = " ".join(logical).split()
    logical = []
    if not words:
        continue
    rid, kind, rest = words[0], words[1], words[2:]
    args = rest[: rest.index("--")] if "--" in rest else rest
    msg = " ".join(rest[rest.index("--") + 1 :]) if "--" in rest else ""
    rules.append({"id": rid, "kind": kind, "args": args, "message": msg or None})
allow = [a for a in opts.get("allow", "").split(",") if a]
rules = [r for r in rules if r["id"] not in allow]
for s in [s for s in opts.get("set", "").split(",") if s]:
    rid, arg = s.split(":", 1)
    for r in rules:
        if r["id"] == rid:
            r["args"] = [arg]
doc = {"rules": rules, "run": opts.get("run", "0") == "1",
       "heal_names": [h for h in opts.get("heal", "").split(",") if h]}
if opts.get("full") == "1":
    doc["full"] = True
print(json.dumps(doc, ensure_ascii=False))
PY
policy () {
  "$PY" "$T/policy.py" "$CONF" "$@"
}
CHECK=$(policy run=0)
RUN=$(policy run=1)

# gate DIR POLICY [ARG...]: run the gate in DIR (which holds snippet.py);
# verdict in DIR/verdict.json, output in DIR/out and DIR/err, exit status in $rc.
gate () {
  local dir=$1 pol=$2
  shift 2
  (cd "$dir" && "$PY" -I -S -u -c "$(cat "$GATE")" "$pol" "$@" 3>verdict.json >out 2>err)
  rc=$?
}

# snippet NAME: a fresh directory with snippet.py read from stdin; prints the directory.
snippet () {
  local d="$T/$1"
  mkdir -p "$d"
  cat >"$d/snippet.py"
  echo "$d"
}

# ---------------------------------------------------------------- corpus
# One Python driver runs the whole corpus (fast) and prints one TAP verdict
# per file: "ok|desc" or "not ok|desc|details".
cat >"$T/corpus.py" <<'PY'
import glob, json, os, re, shutil, subprocess, sys, tempfile
py, gate_file, check, full, srcdir = sys.argv[1:6]
gate = open(gate_file).read()
work = tempfile.mkdtemp(dir=os.environ.get("TMPDIR", "/tmp"))
version = tuple(int(x) for x in subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                                capture_output=True, text=True).stdout.split("."))

def run(path, policy):
    shutil.copy(path, os.path.join(work, "snippet.py"))
    fd = os.open(os.path.join(work, "verdict.json"), os.O_RDWR | os.O_CREAT | os.O_TRUNC)
    if fd != 3:  # the gate's fd 3 (this process does not use its own fd 3)
        os.dup2(fd, 3)
        os.close(fd)
    try:
        p = subprocess.run([py, "-I", "-S", "-u", "-c", gate, policy], cwd=work, capture_output=True, pass_fds=(3,),
                           timeout=60)
    finally:
        os.close(3)
    return p.returncode, open(os.path.join(work, "verdict.json")).read(), p.stderr.decode()


def report(ok, desc, *details):
    print("|".join(["ok" if ok else "not ok", desc] + [d.replace("|", "/").replace("\n", "\\n") for d in details]))

name = os.path.basename(py)
for kind in ("clean", "blocked"):
    files = sorted(glob.glob(os.path.join(srcdir, "tests", "gate", kind, "*.py")))
    for path in files:
        head = open(path).read().split("\n")
        need = [tuple(int(x) for x in l.split(":")[1].split(".")) for l in head[:3] if l.startswith("# requires:")]
        base = "%s %s/%s" % (name, kind, os.path.basename(path))
        if need and version < need[0]:
            print("skip|%s|needs Python %s" % (base, ".".join(map(str, need[0]))))
            continue
        expect = sorted((l.split()[2], int(l.split()[3])) for l in head if l.startswith("# expect:"))
        verdicts = []
        for policy in (check, full):
            rc, data, err = run(path, policy)
            try:
                v = json.loads(data)
            except ValueError:
                v = {"verdict": "no JSON", "violations": []}
            got = sorted((x["rule"], x["line"]) for x in v["violations"])
            verdicts.append((v["verdict"], got, rc, data, err))
        (verdict, got, rc, data, err), second = verdicts
        if kind == "clean":
            report(verdict == "pass" and not got and rc == 0, base + " passes", data, err)
        else:
            report(verdict == "blocked" and got == expect and rc == 3, base + " reports exactly its expect lines",
                   "expected %s" % expect, "got %s %s" % (verdict, got), err)
        report(second[:2] == (verdict, got), base + " same verdict with the resolver forced on",
               "prefiltered %s %s" % (verdict, got), "forced %s %s" % second[:2])
    if kind == "clean":
        report(len(files) >= 30, "at least 30 clean snippets (%d)" % len(files))
shutil.rmtree(work)
PY
FULL=$(policy run=0 full=1)
for py in "$PY" ${CSRUN_GATE_PYTHONS:-}; do
  if ! command -v "$py" >/dev/null; then
    skip "corpus with $py" "not installed"
    continue
  fi
  while IFS='|' read -r status desc details; do
    case $status in
      ok) ok "$desc" ;;
      skip) skip "$desc" "$details" ;;
      *) not_ok "$desc" "$(printf '%s' "$details" | tr '|' '\n')" ;;
    esac
  done < <("$PY" "$T/corpus.py" "$(command -v "$py")" "$GATE" "$CHECK" "$FULL" "$CSRUN_SRCDIR" 2>&1)
done

# --------------------------------------------------------- verdict details
vget () { # vget DIR EXPR: a Python expression over the verdict `v`
  "$PY" -c 'import json,sys; v=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1/verdict.json" "$2" 2>&1
}

d=$(snippet syntax <<'EOF'
x = 1
print(x
y = 2
EOF
)
gate "$d" "$CHECK"
got=$(vget "$d" '(v["verdict"], v["syntax_error"]["line"], v["syntax_error"]["col"], v["syntax_error"]["message"], v["syntax_error"]["text"], v["violations"])')
[ "$got" = "('syntax_error', 2, 5, \"'(' was never closed\", 'print(x\\n', [])" ] && [ $rc -eq 1 ] \
  && ok "syntax error: line, column, message and text" || not_ok "syntax error verdict" "rc=$rc" "$got"
if grep -q '^  File "snippet.py", line 2$' "$d/err" && grep -q '^    print(x$' "$d/err" \
  && grep -q '^         \^$' "$d/err" && grep -q "^SyntaxError: '(' was never closed$" "$d/err" \
  && ! grep -q 'Traceback\|<string>' "$d/err"; then
  ok "syntax error: Python's report on stderr, without gate frames"
else
  not_ok "syntax error report" "$(cat "$d/err")"
fi

d=$(snippet py2 <<'EOF'
name = "world"
print "hello", name
EOF
)
gate "$d" "$CHECK"
got=$(vget "$d" '(v["verdict"], v["syntax_error"]["line"], v["syntax_error"]["message"])')
[ "$got" = "('syntax_error', 2, \"Missing parentheses in call to 'print'. Did you mean print(...)?\")" ] \
  && ok "Python 2 print: syntax_error with Python's hint" || not_ok "Python 2 print" "$got"

d=$(snippet indent <<'EOF'
def f():
    x = 1
      y = 2
EOF
)
gate "$d" "$CHECK"
got=$(vget "$d" '(v["verdict"], v["syntax_error"]["line"], v["syntax_error"]["type"])')
[ "$got" = "('syntax_error', 3, 'IndentationError')" ] && grep -q '^IndentationError: unexpected indent' "$d/err" \
  && ok "IndentationError is a syntax error" || not_ok "IndentationError" "$got" "$(cat "$d/err")"

d=$(snippet return-outside <<'EOF'
print("top")
return 5
EOF
)
gate "$d" "$RUN"
got=$(vget "$d" '(v["verdict"], v["syntax_error"]["line"], v["syntax_error"]["message"], v["syntax_error"]["text"])')
[ "$got" = "('syntax_error', 2, \"'return' outside function\", 'return 5\\n')" ] && [ ! -s "$d/out" ] \
  && grep -q '^    return 5$' "$d/err" \
  && ok "errors of the bytecode compiler ('return' outside function) are syntax errors too" \
  || not_ok "'return' outside function" "$got" "$(cat "$d/out" "$d/err")"

d=$(snippet nul </dev/null)
printf 'x = 1\ny = "a\0b"\n' >"$d/snippet.py"
gate "$d" "$CHECK"
got=$(vget "$d" '(v["verdict"], v["syntax_error"]["line"], "null bytes" in v["syntax_error"]["message"])')
[ "$got" = "('syntax_error', 2, True)" ] && ok "a NUL byte is a syntax error" || not_ok "NUL byte" "$got"

# ------------------------------------------------------------------ limits
d=$(snippet depth300 </dev/null)
"$PY" -c 'print("x = " + "+".join(["1"] * 300))' >"$d/snippet.py"
gate "$d" "$CHECK"
got=$(vget "$d" '(v["verdict"], [(x["rule"], x["line"]) for x in v["violations"]])')
[ "$got" = "('blocked', [('max-ast-depth', 1)])" ] && [ $rc -eq 3 ] \
  && ok "a 300-deep expression: max-ast-depth" || not_ok "300-deep expression" "rc=$rc" "$got" "$(cat "$d/err")"

for shape in '"x = " + "+".join(["1"] * 200000)' '"x = " + "-" * 100000 + "1"' '"x = a" + ".b" * 200000' \
  '"x = " + "(" * 300 + "1" + ")" * 300'; do
  d=$(snippet deep-hostile </dev/null)
  "$PY" -c "print($shape)" >"$d/snippet.py"
  gate "$d" "$CHECK"
  got=$(vget "$d" 'v["verdict"] + " " + ",".join(x["rule"] for x in v["violations"])')
  case $got in
    "blocked max-ast-depth" | "syntax_error "*) ok "hostile nesting ($shape): $got, no crash" ;;
    *) not_ok "hostile nesting ($shape)" "rc=$rc" "$got" "$(tail -c 600 "$d/err")" ;;
  esac
done

d=$(snippet depth-allowed </dev/null)
"$PY" -c 'print("x = " + "+".join(["1"] * 5000))' >"$d/snippet.py"
gate "$d" "$(policy run=0 allow=max-ast-depth)"
got=$(vget "$d" '(v["verdict"], [x["rule"] for x in v["violations"]], "1000 levels" in v["violations"][0]["message"])')
[ "$got" = "('blocked', ['max-ast-depth'], True)" ] \
  && ok "with max-ast-depth allowed away, nesting is still capped at 1000" || not_ok "hard depth cap" "$got"

d=$(snippet big </dev/null)
"$PY" -c 'import sys; sys.stdout.write("# padding\n" * 100001)' >"$d/snippet.py"
gate "$d" "$CHECK"
got=$(vget "$d" '(v["verdict"], [(x["rule"], x["line"]) for x in v["violations"]], "1000010 bytes" in v["violations"][0]["message"])')
[ "$got" = "('blocked', [('max-source-bytes', 1)], True)" ] && ok "a source over the limit: max-source-bytes" \
  || not_ok "max-source-bytes" "$got"
gate "$d" "$(policy run=0 set=max-source-bytes:2000000)"
[ "$(vget "$d" 'v["verdict"]')" = pass ] && ok "the limit comes from the policy" || not_ok "raised limit" "$(cat "$d/verdict.json")"

# --------------------------------------------------------------- running
d=$(snippet hello <<'EOF'
import sys
print("hello", __name__, __file__, sys.argv)
print(sorted(k for k in globals() if not k.startswith("__")))
print([k for k in dir(sys.modules["__main__"]) if not k.startswith("__")])
EOF
)
gate "$d" "$RUN" one two
[ $rc -eq 0 ] && [ "$(cat "$d/out")" = "hello __main__ snippet.py ['snippet.py', 'one', 'two']
['sys']
['sys']" ] && [ "$(vget "$d" 'v["verdict"]')" = pass ] \
  && ok "run: the snippet runs as __main__ from snippet.py with its args, and sees none of the gate's names" \
  || not_ok "run" "rc=$rc" "$(cat "$d/out" "$d/err")"

gate "$d" "$CHECK"
[ $rc -eq 0 ] && [ ! -s "$d/out" ] && [ "$(vget "$d" 'v["verdict"]')" = pass ] \
  && ok "check only (\"run\": false): the snippet does not run" || not_ok "check only" "$(cat "$d/out")"

d=$(snippet environment <<'EOF'
import gc, sys
print(gc.isenabled(), sys.path[-1], sys.flags.isolated, sys.flags.no_site)
EOF
)
gate "$d" "$RUN"
[ "$(cat "$d/out")" = "True /usr/lib/python3/dist-packages 1 1" ] \
  && ok "the snippet runs with the garbage collector on and dist-packages on sys.path" \
  || not_ok "snippet environment" "$(cat "$d/out" "$d/err")"

d=$(snippet raises <<'EOF'
def divide(a, b):
    return a / b

print("before")
divide(1, 0)
EOF
)
gate "$d" "$RUN"
if [ $rc -eq 1 ] && [ "$(cat "$d/out")" = before ] && [ "$(head -n2 "$d/err")" = 'Traceback (most recent call last):
  File "snippet.py", line 5, in <module>' ] && grep -q '^ZeroDivisionError: division by zero$' "$d/err" \
  && ! grep -q '<string>\|gate' "$d/err"; then
  ok "an uncaught exception: traceback from snippet.py, no gate frames, exit 1"
else
  not_ok "traceback" "rc=$rc" "$(cat "$d/err")"
fi

d=$(snippet exits <<'EOF'
import sys
print("bye")
if len(sys.argv) > 1:
    exit(int(sys.argv[1]))
raise SystemExit(7)
EOF
)
gate "$d" "$RUN"
rc1=$rc
gate "$d" "$RUN" 5
[ $rc1 -eq 7 ] && [ $rc -eq 5 ] && [ ! -s "$d/err" ] \
  && ok "SystemExit passes through; exit() works although site.py was skipped" || not_ok "exit codes" "$rc1 $rc" "$(cat "$d/err")"

d=$(snippet fd3 <<'EOF'
import os
try:
    os.write(3, b'{"verdict":"pass","violations":[],"undefined_names":[]}')
    print("wrote to fd 3")
except OSError as e:
    print("EBADF" if e.errno == 9 else e)
EOF
)
gate "$d" "$RUN"
[ "$(cat "$d/out")" = EBADF ] && [ "$(wc -l <"$d/verdict.json")" -eq 1 ] \
  && [ "$(vget "$d" 'v["verdict"]')" = pass ] \
  && ok "fd 3 is closed before the snippet runs: it can't forge a verdict" || not_ok "fd 3" "$(cat "$d/out" "$d/verdict.json")"

d=$(snippet blocked-run <<'EOF'
import os
print("must not run")
os.system("true")
EOF
)
gate "$d" "$RUN"
[ $rc -eq 3 ] && [ ! -s "$d/out" ] \
  && grep -qx 'csrun gate: snippet.py:3:0: dangerous-call: os.system() runs a shell command: .*' "$d/err" \
  && ok "blocked: nothing runs, one line per violation on stderr, exit 3" || not_ok "blocked run" "rc=$rc" "$(cat "$d/out" "$d/err")"

# A loader that caches the gate's code may hand the resolver precompiled
# (_RESOLVER_CODE in the gate's globals); anything else there is ignored.
d=$(snippet preloaded <<'EOF'
import os as o
try:
    o.system("true")
except Exception:
    pass
EOF
)
for kind in precompiled junk; do
  res='compile(next(n.value.value for n in ast.parse(src).body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_RESOLVER"), "r", "exec")'
  [ $kind = junk ] && res='"not code"'
  loader="import ast, sys
src = sys.argv.pop(1)
_RESOLVER_CODE = $res
exec(compile(src, '<csrun-gate>', 'exec'))"
  (cd "$d" && "$PY" -I -S -u -c "$loader" "$(cat "$GATE")" "$CHECK" 3>verdict.json >out 2>err)
  got=$(vget "$d" '[(x["rule"], x["line"]) for x in v["violations"]]')
  [ "$got" = "[('dangerous-call', 3), ('broad-except', 4)]" ] \
    && ok "a loader's _RESOLVER_CODE ($kind): same verdict" || not_ok "loader's _RESOLVER_CODE ($kind)" "$got" "$(cat "$d/err")"
done

# ---------------------------------------------------------- undefined names
d=$(snippet undefined <<'EOF'
def area(r):
    return math.pi * r ** 2

counts = Counter("hello")
value = helper
print(area(2), counts, value, len([]), exit, __file__)
EOF
)
gate "$d" "$CHECK"
got=$(vget "$d" '(v["verdict"], [(u["name"], u["line"], u["usage"]) for u in v["undefined_names"]])')
[ "$got" = "('pass', [('math', 2, 'attribute'), ('Counter', 4, 'call'), ('helper', 5, 'name')])" ] \
  && ok "undefined names are reported with their first use and usage" || not_ok "undefined names" "$got"

gate "$d" "$(policy run=1 heal=math,Counter,json)"
got=$(vget "$d" '(v["verdict"], [(x["rule"], x["line"], x["col"], x["message"].split(":")[0]) for x in v["violations"]])')
[ "$got" = "('blocked', [('undefined-name', 2, 11, \"name 'math' is used but never defined or imported\"), ('undefined-name', 4, 9, \"name 'Counter' is used but never defined or imported\")])" ] \
  && [ ! -s "$d/out" ] && ok "heal_names: the names the healer can import block the snippet" || not_ok "heal_names" "$got"

gate "$d" "$(policy run=0 heal=math allow=undefined-name)"
got=$(vget "$d" '(v["verdict"], v["undefined_names"])')
[ "$got" = "('pass', [])" ] && ok "with undefined-name allowed away, nothing is reported" || not_ok "undefined-name allowed" "$got"

d=$(snippet undefined-bound <<'EOF'
import os.path
from json import loads as parse
total: int = 0
for i, (a, *rest) in enumerate([(1, 2)]):
    total += i
with open(os.devnull) as fh:
    pass
try:
    pass
except ValueError as err:
    pass
squares = [s * s for s in range(3)]
f = lambda q, *qs, k=1, **kw: q
if (w := 3):
    pass
class K:
    attr = 1
def g(p, /, q, *, r):
    global G
    G = 1
    def h():
        nonlocal p
        p = 2
    return h
del squares
print(os, parse, total, fh, f, w, K, g, G, a, rest, err)
EOF
)
gate "$d" "$CHECK"
got=$(vget "$d" '(v["verdict"], v["undefined_names"])')
[ "$got" = "('pass', [])" ] && ok "every kind of binding counts as a definition" || not_ok "bindings" "$got"

d=$(snippet undefined-dynamic <<'EOF'
from os.path import *
print(join("a", "b"), mystery)
EOF
)
gate "$d" "$(policy run=0 heal=mystery)"
got=$(vget "$d" '(v["verdict"], v["undefined_names"], "import *" in v.get("undefined_skipped", ""))')
[ "$got" = "('pass', [], True)" ] && ok "a star import skips undefined-name analysis (and says so)" || not_ok "star import" "$got"

# ------------------------------------------------------------ policy edges
d=$(snippet allowed <<'EOF'
try:
    pass
except:
    pass
EOF
)
gate "$d" "$(policy run=0 allow=broad-except)"
[ "$(vget "$d" 'v["verdict"]')" = pass ] && ok "a rule the policy does not list is not applied" || not_ok "allow" "$(cat "$d/verdict.json")"

gate "$d" '{"rules": [}'
[ $rc -eq 4 ] && [ "$(vget "$d" 'v["verdict"]')" = error ] && ok "a bad policy: an \"error\" verdict, exit 4" \
  || not_ok "bad policy" "rc=$rc" "$(cat "$d/verdict.json" "$d/err")"

(cd "$d" && "$PY" -I -S -u -c "$(cat "$GATE")" 3>verdict.json >out 2>err)
[ $? -eq 4 ] && [ "$(vget "$d" 'v["verdict"]')" = error ] && ok "no policy: an \"error\" verdict" || not_ok "no policy" "$(cat "$d/err")"

d=$(snippet no-fd3 <<'EOF'
print("must not run")
EOF
)
(cd "$d" && "$PY" -I -S -u -c "$(cat "$GATE")" "$RUN" >out 2>err 3>&-)
[ $? -eq 4 ] && [ ! -s "$d/out" ] && grep -q "can't write the verdict on fd 3" "$d/err" \
  && ok "no fd 3: the snippet does not run" || not_ok "no fd 3" "$(cat "$d/out" "$d/err")"

d=$(snippet escapes <<'EOF'
import os
os.system("echo \"quoted\" \\ tab\t café ✓")
EOF
)
gate "$d" "$(policy run=0 | sed 's/compute in plain Python/say \\"no\\" to \\\\ and \\u00e9/')"
got=$(vget "$d" 'v["violations"][0]["message"]')
case $got in
  *'(called as `os.system`)'*) not_ok "escapes" "$got" ;;
  *'say "no" to \ and é'*) ok "the verdict is valid JSON with escaped strings" ;;
  *) not_ok "escapes" "$got" "$(cat "$d/verdict.json")" ;;
esac

# ------------------------------------------------ one-edit suggestions
# With heal names (a healer follows), an undefined name one edit from exactly
# one defined name or builtin blocks, with the suggestion in the verdict.
d=$(snippet suggest <<'EOF'
total = 3
values = [1]
def f(items):
    result = 0
    return reslt

print(totl, lenn(valeus), caz, reslt)
car = cat = 1
EOF
)
gate "$d" "$(policy run=0 heal=math)"
got=$(vget "$d" '(v["verdict"], sorted((u["name"], u.get("suggest")) for u in v["undefined_names"]), sorted((x["rule"], x["line"]) for x in v["violations"]))')
want="('blocked', [('caz', None), ('lenn', 'len'), ('reslt', None), ('totl', 'total'), ('valeus', 'values')], [('undefined-name', 7), ('undefined-name', 7), ('undefined-name', 7)])"
[ "$got" = "$want" ] && ok "one-edit suggestions: unique, visible at every use (caz: two candidates; reslt: not visible at module level)" \
  || not_ok "one-edit suggestions" "got:  $got" "want: $want"
gate "$d" "$CHECK"
got=$(vget "$d" '(v["verdict"], [u.get("suggest") for u in v["undefined_names"]])')
[ "$got" = "('pass', [None, None, None, None, None])" ] && ok "no heal names: suggestions neither block nor show" \
  || not_ok "suggestions without heal names" "$got"

# A snippet that catches NameError or checks the Python version may mean a
# name to be missing: neither heal names nor suggestions block it.
d=$(snippet guarded <<'EOF'
import sys
if sys.version_info[0] < 3:
    rng = xrange
    print(totl)
total = 1
EOF
)
gate "$d" "$(policy run=0 heal=xrange)"
got=$(vget "$d" '(v["verdict"], sorted(u["name"] for u in v["undefined_names"]), [u.get("suggest") for u in v["undefined_names"]])')
[ "$got" = "('pass', ['totl', 'xrange'], [None, None])" ] && ok "a version check: undefined names reported, nothing blocks" \
  || not_ok "a version check does not block" "$got"

done_testing
