#!/bin/bash
# csrun batch (issue 17): statuses and the exit code, the report (one valid
# line per item, under -j8 too), --resume after SIGKILL (no completed item
# run twice), SIGINT, shards, --merge, the manifest (overrides, bad lines),
# per-item --in/--out, --summary/--html (escaped), the progress line on a
# pty, a report that can't be written.  Root and rootless.  The 1,000-item
# run is bench/batch (here: 100 tiny items).
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
export TMPDIR=$T
# lines FILE: the report's lines, each parsed: "label status" sorted; fails on a bad line.
cat > "$T/lines.py" <<'PY'
import json, sys
out = []
for n, l in enumerate(open(sys.argv[1], "rb"), 1):
    if not l.endswith(b"\n"):
        sys.exit("line %d: no newline" % n)
    d = json.loads(l)
    out.append("%s %s" % (d["label"], d["status"]))
print("\n".join(sorted(out)))
PY
lines () { python3 "$T/lines.py" "$1"; }

# ---------------------------------------------------------------- mixed statuses
mkdir -p "$T/mix/sub"
printf 'print("fine")\n' > "$T/mix/ok.py"
printf 'print "old style"\n' > "$T/mix/healed.py"
printf 'raise ValueError("<b>bad</b> & worse")\n' > "$T/mix/sub/failed.py"
printf 'import os\nos.system("true")\n' > "$T/mix/sub/blocked.py"
printf 'import time\ntime.sleep(60)\n' > "$T/mix/timeout.py"
printf 'not a snippet\n' > "$T/mix/README.txt"
csrun batch -j3 --no-llm --timeout 1s --report "$T/mix.jsonl" --summary "$T/mix.md" \
  --html "$T/mix.html" "$T/mix" > "$T/mix.out" 2> "$T/mix.err"
rc=$?
got=$(lines "$T/mix.jsonl" 2>&1)
want="$T/mix/healed.py healed
$T/mix/ok.py ok
$T/mix/sub/blocked.py blocked
$T/mix/sub/failed.py failed
$T/mix/timeout.py timeout"
[ $rc = 1 ] && [ "$got" = "$want" ] \
  && ok "a directory: every *.py below it, one result per item, exit 1 when one is not ok or healed" \
  || not_ok "mixed statuses" "exit $rc" "got: $got" "want: $want" "$(cat "$T/mix.err")"
grep -qE '^  failed +1$' "$T/mix.err" && grep -qE '^  healed +1$' "$T/mix.err" \
  && grep -qE '^  timeout +1$' "$T/mix.err" && grep -qE '^  blocked +1$' "$T/mix.err" \
  && ok "the summary table counts every status" \
  || not_ok "summary table" "$(cat "$T/mix.err")"
# The line's batch fields: path, the code's sha256, the index (directory order), the try.
got=$(python3 - "$T/mix.jsonl" <<'PY'
import json, sys, hashlib
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["label"].endswith("/ok.py"):
        print(d["path"] == d["label"] == d["file"], d["code_sha256"] == hashlib.sha256(open(d["path"], "rb").read()).hexdigest(),
              d["index"], d["try"], len(d["options_sha256"]), d["attempts"][0]["stdout"].strip())
PY
)
[ "$got" = "True True 1 1 64 fine" ] && ok "each line: label, path, code_sha256, options_sha256, index, try, the run's document" \
  || not_ok "batch fields" "got: $got"
printf 'print(1)\n' > "$T/one.py"
csrun batch --report "$T/one.jsonl" "$T/one.py" "$T/mix/ok.py" > /dev/null 2> "$T/one.err"
rc=$?
[ $rc = 0 ] && [ "$(wc -l < "$T/one.jsonl")" = 2 ] && ok "every item ok: exit 0" \
  || not_ok "all ok" "exit $rc" "$(cat "$T/one.err")"
# Without a terminal: one plain line per finished item.
[ "$(grep -c '^csrun batch: \[[0-9]/5\] ' "$T/mix.err")" = 5 ] && ! grep -q $'\r' "$T/mix.err" \
  && ok "no terminal: one plain line per finished item" || not_ok "plain lines" "$(cat -v "$T/mix.err")"

# ---------------------------------------------------------------- summaries
grep -q '| failed | 1 |' "$T/mix.md" && grep -q '^+print("old style")' "$T/mix.md" \
  && grep -qF 'ValueError: \<b\>bad\</b\> & worse' "$T/mix.md" && ! grep -q '^[^>]*<b>' "$T/mix.md" \
  && ok "--summary: counts, the heal's diff, the failure's diagnosis (markup escaped)" \
  || not_ok "--summary" "$(cat "$T/mix.md")"
grep -q '<td class="n-failed">1</td>' "$T/mix.html" && grep -q '&lt;b&gt;bad&lt;/b&gt; &amp; worse' "$T/mix.html" \
  && ! grep -q '<b>bad' "$T/mix.html" && grep -q 'print(&quot;old style&quot;)' "$T/mix.html" \
  && ok "--html: counts, diffs, diagnoses, everything from the snippets escaped" \
  || not_ok "--html" "$(cat "$T/mix.html")"
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chromium" ]; then
  # Headless, its profile in the test's directory (CI has no usable HOME); the DOM it
  # rendered has the counts, and it can draw the page.
  cr=(timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome")
  HOME=$T "${cr[@]}" --dump-dom "file://$T/mix.html" > "$T/dom.html" 2> "$T/chrome.err"
  HOME=$T "${cr[@]}" --screenshot="$T/shot.png" --window-size=1000,1200 "file://$T/mix.html" > /dev/null 2>> "$T/chrome.err"
  grep -q 'n-failed">1<' "$T/dom.html" && grep -q 'n-healed">1<' "$T/dom.html" && [ -s "$T/shot.png" ] \
    && ok "the HTML report rendered by headless chromium: the counts are in its DOM, a screenshot is drawn" \
    || not_ok "chromium" "$(head -c 2000 "$T/dom.html")" "$(tail -5 "$T/chrome.err")"
else
  skip "the HTML report in a headless browser" "no chromium here (apt-get install chromium)"
fi

# ---------------------------------------------------------------- -j8, 100 tiny items
mkdir -p "$T/many"
for i in $(seq 1 100); do printf 'print(%d * 2)\n' "$i" > "$T/many/i$(printf %03d "$i").py"; done
csrun batch -j8 -q --report "$T/many.jsonl" "$T/many" > /dev/null 2> "$T/many.err"
rc=$?
got=$(python3 - "$T/many.jsonl" "$T/many" <<'PY'
import json, sys, os
labels = []
for l in open(sys.argv[1]):
    d = json.loads(l)
    assert d["status"] == "ok", d["status"]
    assert d["attempts"][0]["stdout"] == "%d\n" % (int(d["label"][-6:-3]) * 2)
    labels.append(d["label"])
want = sorted(os.path.join(sys.argv[2], f) for f in os.listdir(sys.argv[2]))
print(sorted(labels) == want, len(labels))
PY
)
[ $rc = 0 ] && [ "$got" = "True 100" ] && ok "-j8, 100 items: every line parses, exactly one per item, each its own output" \
  || not_ok "-j8" "exit $rc" "$got" "$(tail -5 "$T/many.err")"

# ---------------------------------------------------------------- NUL bytes in the output
# The result of a snippet that prints a NUL is csrun's own JSON with a \u0000:
# the batch takes it (an item "ok", not "the worker ended without a result"),
# the summary counts it, --resume finds it in the report.
mkdir -p "$T/nul"
printf 'import sys\nsys.stdout.write("a\\x00b\\n")\n' > "$T/nul/nul.py"
csrun batch -q --report "$T/nul.jsonl" --summary "$T/nul.md" "$T/nul" > /dev/null 2> "$T/nul.err"
rc=$?
got=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); print(d["status"], repr(d["attempts"][0]["stdout"]))' "$T/nul.jsonl" 2>&1)
csrun batch -q --resume --report "$T/nul.jsonl" "$T/nul" > /dev/null 2> "$T/nul2.err"
rc2=$?
[ $rc = 0 ] && [ "$got" = "ok 'a\x00b\n'" ] && grep -q '| ok | 1 |' "$T/nul.md" && [ $rc2 = 0 ] \
  && grep -q '(1 from the report: --resume)' "$T/nul2.err" && [ "$(wc -l < "$T/nul.jsonl")" = 1 ] \
  && ok "an item that prints a NUL byte: its result kept whole, counted in the summary, found by --resume" \
  || not_ok "NUL in the output" "exit $rc/$rc2" "$got" "$(cat "$T/nul.err" "$T/nul2.err" "$T/nul.md")"

# ---------------------------------------------------------------- SIGKILL, then --resume
# Each item appends to its own marker in a host directory: a second run shows.
mkdir -p "$T/marks" "$T/slow"
chmod 777 "$T/marks"
for i in $(seq 1 24); do
  printf 'import time\nopen("/work/marks/%d", "a").write("x")\ntime.sleep(0.2)\nprint(%d)\n' "$i" "$i" \
    > "$T/slow/s$(printf %02d "$i").py"
done
# wait_lines FILE N PID: until FILE has N lines or PID ended.
wait_lines () {
  local i
  for i in $(seq 1 600); do
    [ -f "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ] && return 0
    kill -0 "$3" 2>/dev/null || return 0
    sleep 0.05
  done
}
"$CSRUN" batch -j3 -q --mount "$T/marks:/work/marks:rw" --report "$T/k.jsonl" "$T/slow" > /dev/null 2> "$T/k.err" &
pid=$!
wait_lines "$T/k.jsonl" 6 $pid
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
cp "$T/k.jsonl" "$T/k-before.jsonl"
before=$(grep -c . "$T/k-before.jsonl")
csrun batch -j3 -q --resume --mount "$T/marks:/work/marks:rw" --report "$T/k.jsonl" "$T/slow" > /dev/null 2> "$T/k2.err"
rc=$?
got=$(python3 - "$T/k-before.jsonl" "$T/k.jsonl" "$T/marks" <<'PY'
import json, sys, os
done = [json.loads(l)["label"] for l in open(sys.argv[1]) if l.endswith("\n")]
after = [json.loads(l) for l in open(sys.argv[2])]
labels = [d["label"] for d in after]
twice = [l for l in done if open(os.path.join(sys.argv[3], str(int(l[-5:-3])))).read() != "x"]
print(len(set(labels)) == len(labels) == 24, all(d["status"] == "ok" for d in after), twice)
PY
)
[ $rc = 0 ] && [ "$got" = "True True []" ] \
  && ok "SIGKILL after $before results, then --resume: every item once in the report, none that had completed run again" \
  || not_ok "resume after SIGKILL" "exit $rc, $before lines before" "$got" "$(cat "$T/k2.err")"
grep -q "(${before} from the report: --resume)" "$T/k2.err" && ok "--resume says how many results it kept" \
  || not_ok "resume count" "$(cat "$T/k2.err")"
# A changed snippet runs again; an unchanged one does not.
printf 'print("changed")\n' > "$T/slow/s01.py"
csrun batch -q --resume --report "$T/k.jsonl" "$T/slow" > /dev/null 2> "$T/k3.err"
grep -q '(23 from the report' "$T/k3.err" && [ "$(grep -c . "$T/k.jsonl")" = 24 ] \
  && ok "--resume runs an item whose code changed (and only it)" || not_ok "changed code" "$(cat "$T/k3.err")"

# ---------------------------------------------------------------- SIGINT
rm -f "$T/marks"/*
"$CSRUN" batch -j3 --no-progress -q --mount "$T/marks:/work/marks:rw" --report "$T/i.jsonl" "$T/slow" > /dev/null 2> "$T/i.err" &
pid=$!
wait_lines "$T/i.jsonl" 3 $pid
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
got=$(lines "$T/i.jsonl" 2>&1 | awk '{print $2}' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
n=$(grep -c . "$T/i.jsonl")
if [ $rc = 130 ] && lines "$T/i.jsonl" > /dev/null && [ "$n" -lt 24 ] && grep -q 'interrupted by SIGINT' "$T/i.err"; then
  ok "SIGINT: exit 130, the report valid ($got), the rest not run"
elif [ $rc = 0 ]; then
  skip "SIGINT" "the batch ended before the signal"
else
  not_ok "SIGINT" "exit $rc" "$got" "$(cat "$T/i.err")"
fi
csrun batch -j3 -q --resume --mount "$T/marks:/work/marks:rw" --report "$T/i.jsonl" "$T/slow" > /dev/null 2> "$T/i2.err"
rc=$?
got=$(lines "$T/i.jsonl" | awk '{print $2}' | sort | uniq -c | tr -s ' ')
[ $rc = 0 ] && [ "$got" = " 24 ok" ] && ok "then --resume runs the interrupted and the remaining items: one line each" \
  || not_ok "resume after SIGINT" "exit $rc" "$got" "$(cat "$T/i2.err")"

# SIGINT to the whole process group (what a terminal's Ctrl-C does): workers and jails get it too.
if command -v setsid > /dev/null; then
  setsid "$CSRUN" batch -j3 --no-progress -q --mount "$T/marks:/work/marks:rw" --report "$T/g.jsonl" "$T/slow" > /dev/null 2> "$T/g.err" &
  pid=$!
  wait_lines "$T/g.jsonl" 3 $pid
  kill -INT -- -$pid 2>/dev/null
  wait $pid
  rc=$?
  bad=$(python3 -c '
import json, sys
print([d["status"] for d in map(json.loads, open(sys.argv[1])) if d["status"] not in ("ok", "interrupted")])' "$T/g.jsonl" 2>&1)
  if [ $rc = 130 ] && [ "$bad" = "[]" ]; then
    ok "SIGINT to the process group (Ctrl-C): exit 130, running items recorded as interrupted, not failed"
  elif [ $rc = 0 ]; then
    skip "SIGINT to the process group" "the batch ended before the signal"
  else
    not_ok "SIGINT to the process group" "exit $rc" "$bad" "$(tail -5 "$T/g.err")"
  fi
else
  skip "SIGINT to the process group" "no setsid"
fi

# ---------------------------------------------------------------- shards and --merge
for s in 0 1 2; do
  csrun batch -q --shard $s/3 --report "$T/shard$s.jsonl" "$T/many" > /dev/null 2>&1
done
got=$(cat "$T/shard0.jsonl" "$T/shard1.jsonl" "$T/shard2.jsonl" | python3 -c '
import json, sys
labels = [json.loads(l)["label"] for l in sys.stdin]
print(len(labels), len(set(labels)))')
n0=$(grep -c . "$T/shard0.jsonl")
[ "$got" = "100 100" ] && [ "$n0" -ge 33 ] && [ "$n0" -le 34 ] \
  && ok "--shard I/3: every item in exactly one shard, even split" || not_ok "shards" "$got, shard 0 has $n0"
csrun batch -q --shard 1/3 --report "$T/shard1b.jsonl" "$T/many" > /dev/null 2>&1
[ "$(lines "$T/shard1.jsonl")" = "$(lines "$T/shard1b.jsonl")" ] && ok "a shard is the same items every time" \
  || not_ok "deterministic shard"
csrun batch --merge --report "$T/merged.jsonl" "$T/shard0.jsonl" "$T/shard1.jsonl" "$T/shard2.jsonl" "$T/shard1b.jsonl" \
  > /dev/null 2> "$T/merge.err"
rc=$?
[ $rc = 0 ] && [ "$(grep -c . "$T/merged.jsonl")" = 100 ] && grep -qE '^  ok +100$' "$T/merge.err" \
  && ok "--merge: one line per item (the last wins), the summary" || not_ok "merge" "exit $rc" "$(cat "$T/merge.err")"
csrun batch --merge "$T/mix.jsonl" "$T/one.jsonl" > "$T/merged2.jsonl" 2>/dev/null
[ $? = 1 ] && [ "$(grep -c . "$T/merged2.jsonl")" = 6 ] && ok "--merge to stdout; exit 1 when an item failed" \
  || not_ok "merge stdout"
expect_usage () {
  local desc=$1 pattern=$2
  shift 2
  "$@" > "$T/u.out" 2> "$T/u.err" < /dev/null
  local rc=$?
  [ $rc -eq 2 ] && grep -qE -- "$pattern" "$T/u.err" && ok "$desc (exit 2)" \
    || not_ok "$desc" "want exit 2 and '$pattern'" "got exit $rc" "$(cat "$T/u.err")"
}
expect_usage "--shard 3/3 is refused" "invalid --shard" "$CSRUN" batch --shard 3/3 "$T/one.py"

# ---------------------------------------------------------------- the manifest
mkdir -p "$T/mf"
printf 'import os, sys\nprint(sys.argv[1:], os.environ.get("COLOR"))\nopen("/work/result.txt", "w").write(open("/work/in.txt").read().upper())\n' > "$T/mf/io.py"
echo "hello" > "$T/mf/in.txt"
cat > "$T/mf/m.jsonl" <<'J'
{"path": "io.py", "label": "first", "args": ["a", "b"], "env": ["COLOR=red"], "in": ["in.txt"], "memory": "96M", "timeout": "7s"}

# comments and blank lines are skipped
{"path": "io.py", "label": "second", "args": ["c"], "in": ["in.txt"]}
J
csrun batch -q --out "$T/outs" --report "$T/m.jsonl" --manifest "$T/mf/m.jsonl" > /dev/null 2> "$T/m.err"
rc=$?
got=$(python3 - "$T/m.jsonl" <<'PY'
import json, sys
out = []
for l in open(sys.argv[1]):
    d = json.loads(l)
    out.append("%s %s %s %s %s" % (d["label"], d["status"], d["attempts"][0]["stdout"].strip(), d["limits"]["memory_bytes"], d["limits"]["timeout_s"]))
print("\n".join(sorted(out)))
PY
)
want="first ok ['a', 'b'] red 100663296 7.0
second ok ['c'] None 536870912 60.0"
[ $rc = 0 ] && [ "$got" = "$want" ] && ok "manifest lines override args, env, in, memory and timeout (others get the defaults)" \
  || not_ok "manifest overrides" "exit $rc" "got: $got" "want: $want" "$(cat "$T/m.err")"
[ "$(cat "$T/outs/first/result.txt" 2>&1)" = HELLO ] && [ "$(cat "$T/outs/second/result.txt" 2>&1)" = HELLO ] \
  && ok "--out DIR: each item's files in DIR/LABEL" || not_ok "per-item out" "$(find "$T/outs" 2>&1)"
printf 'io.py\ttsv-one\tx\ty z\nio.py\t\n' > "$T/mf/m.tsv"
csrun batch -q --in "$T/mf/in.txt" --report "$T/tsv.jsonl" --manifest "$T/mf/m.tsv" > /dev/null 2> "$T/tsv.err"
rc=$?
got=$(python3 -c '
import json, sys
print(sorted((d["label"], d["attempts"][0]["stdout"].strip()) for d in map(json.loads, open(sys.argv[1]))))' "$T/tsv.jsonl" 2>&1)
[ $rc = 0 ] && [ "$got" = "[('io.py', '[] None'), ('tsv-one', \"['x', 'y z'] None\")]" ] \
  && ok "a TSV manifest: path, label (empty: the path), one argument per field" \
  || not_ok "TSV manifest" "exit $rc" "$got" "$(cat "$T/tsv.err")"
cp "$T/mf/m.jsonl" "$T/mf/bad.jsonl"
echo '{"path": "io.py", "label": "third", "timeot": "1s"}' >> "$T/mf/bad.jsonl"
echo '{"path": "io.py", "label": "fourth"' >> "$T/mf/bad.jsonl"
expect_usage "a manifest line that does not parse: its line number" "bad.jsonl:5: unknown key 'timeot'" \
  "$CSRUN" batch --manifest "$T/mf/bad.jsonl"
csrun batch -q --skip-bad --report "$T/sb.jsonl" --manifest "$T/mf/bad.jsonl" > /dev/null 2> "$T/sb.err"
rc=$?
[ $rc = 0 ] && [ "$(lines "$T/sb.jsonl" | awk '{print $1}' | tr '\n' ' ')" = "first second " ] \
  && grep -q 'bad.jsonl:5: skipped' "$T/sb.err" && grep -q 'bad.jsonl:6: skipped' "$T/sb.err" \
  && ok "--skip-bad: bad lines named and skipped, the others run" \
  || not_ok "--skip-bad" "exit $rc" "$(cat "$T/sb.err")"
printf '{"path": "io.py", "label": "x"}\n{"path": "in.txt", "label": "x"}\n' > "$T/mf/dup.jsonl"
expect_usage "duplicate labels are refused" "duplicate label 'x'" "$CSRUN" batch --manifest "$T/mf/dup.jsonl"
expect_usage "a missing PATH" "cannot read" "$CSRUN" batch "$T/nothere.py"
# An unreadable item is that item's error, not the batch's.
printf 'print(1)\n' > "$T/locked.py"
chmod 000 "$T/locked.py"
if ! cat "$T/locked.py" > /dev/null 2>&1; then
  csrun batch -q --report "$T/locked.jsonl" "$T/locked.py" "$T/one.py" > /dev/null 2>&1
  rc=$?
  got=$(lines "$T/locked.jsonl" | awk '{print $2}' | tr '\n' ' ')
  [ $rc = 1 ] && [ "$got" = "error ok " ] && ok "an unreadable item: status error for it, the others run, exit 1" \
    || not_ok "unreadable item" "exit $rc" "$got"
else
  skip "an unreadable item" "n/a: root reads mode 000 files"
fi

# ---------------------------------------------------------------- --total-memory, --fail-fast, --retry-failed
expect_usage "an item above --total-memory" "exceeds --total-memory" "$CSRUN" batch --memory 256M --total-memory 128M "$T/one.py"
csrun batch -q -j4 --memory 64M --total-memory 128M --report "$T/tm.jsonl" "$T/many" > /dev/null 2> "$T/tm.err"
[ $? = 0 ] && [ "$(grep -c . "$T/tm.jsonl")" = 100 ] && ok "--total-memory: the batch runs within it" \
  || not_ok "--total-memory" "$(tail -3 "$T/tm.err")"
mkdir -p "$T/ff"
printf 'raise SystemExit(1)\n' > "$T/ff/a.py"
for i in 1 2 3 4 5; do printf 'print(1)\n' > "$T/ff/b$i.py"; done
csrun batch -j1 -q --fail-fast --report "$T/ff.jsonl" "$T/ff" > /dev/null 2> "$T/ff.err"
rc=$?
[ $rc = 1 ] && [ "$(grep -c . "$T/ff.jsonl")" = 1 ] && grep -qE '^  not run +5$' "$T/ff.err" \
  && ok "--fail-fast: nothing starts after the first failure" || not_ok "--fail-fast" "exit $rc" "$(cat "$T/ff.err")"
csrun batch -j1 -q --retry-failed 2 --report "$T/rf.jsonl" "$T/ff/a.py" > /dev/null 2> "$T/rf.err"
[ "$(json_get "$T/rf.jsonl" 'j["try"]')" = 3 ] && [ "$(grep -c . "$T/rf.jsonl")" = 1 ] \
  && ok "--retry-failed 2: three tries, the last one recorded" || not_ok "--retry-failed" "$(cat "$T/rf.jsonl" | head -c 300)"

# ---------------------------------------------------------------- a report that can't be written
if [ -w /dev/full ]; then
  csrun batch -q --report /dev/full "$T/one.py" > /dev/null 2> "$T/full.err"
  rc=$?
  [ $rc = 125 ] && grep -q "cannot write the report '/dev/full'" "$T/full.err" \
    && ok "a full disk while writing the report: exit 125, said" || not_ok "full disk" "exit $rc" "$(cat "$T/full.err")"
else
  skip "a full disk" "no writable /dev/full"
fi

# ---------------------------------------------------------------- warm jails (WARM JAILS)
# An item runs in a warm jail forked by the batch's zygote; with --no-warm in
# a one-shot jail; a warm jail that csrun's check from outside finds not
# confined is refused before any code reaches it, and the item runs in a
# one-shot jail (CSRUN_TEST_WARM_BREAK, tests only, makes the zygote skip a
# step).
warm_of () {
  python3 -c 'import json,sys; a=json.loads(open(sys.argv[1]).readline())["attempts"][0]; print(a.get("warm_jail", False), a.get("warm_refused", "-"), a["stdout"].strip())' "$1" 2>&1
}
csrun batch -q --report "$T/warm.jsonl" "$T/one.py" > /dev/null 2> "$T/warm.err"
rc=$?
got=$(warm_of "$T/warm.jsonl")
csrun batch -q --no-warm --report "$T/cold.jsonl" "$T/one.py" > /dev/null 2> "$T/cold.err"
rc2=$?
got2=$(warm_of "$T/cold.jsonl")
[ $rc = 0 ] && [ "$got" = "True - 1" ] && [ $rc2 = 0 ] && [ "$got2" = "False - 1" ] \
  && ok "an item runs in a warm jail (warm_jail in its attempt); --no-warm: in a one-shot jail" \
  || not_ok "warm and --no-warm" "exit $rc/$rc2" "$got" "$got2" "$(cat "$T/warm.err" "$T/cold.err")"
for brk in caps seccomp netns ipcns utsns cgroupns; do
  CSRUN_TEST_WARM_BREAK=$brk csrun batch -q --report "$T/brk-$brk.jsonl" "$T/one.py" > /dev/null 2> "$T/brk-$brk.err"
  rc=$?
  got=$(warm_of "$T/brk-$brk.jsonl")
  case $brk in
    caps) want="it has capabilities" ;;
    seccomp) want="its seccomp mode is 0" ;;
    utsns) want="sethostname: Operation not permitted" ;; # the host's: the kernel refuses first
    *) want="its ${brk%ns} namespace is the zygote's" ;;
  esac
  [ $rc = 0 ] && [[ "$got" == "False "*"$want"*" 1" ]] && grep -q "a warm jail was refused" "$T/brk-$brk.err" \
    && ok "a warm jail without its ${brk}: refused by csrun's check before the code, the item runs in a one-shot jail" \
    || not_ok "warm jail without $brk" "exit $rc" "$got" "$(cat "$T/brk-$brk.err")"
done

# ---------------------------------------------------------------- -j N with warm jails
# With warm jails, as many items as --jobs make their jails ahead while --jobs
# run: never more than --jobs snippets at once (each prints its own start
# and end), and an item's duration is its own, not its wait.
mkdir -p "$T/ahead"
for i in 1 2 3 4 5 6 7 8; do
  printf 'import time\nprint(time.time())\ntime.sleep(0.3)\nprint(time.time())\n' > "$T/ahead/a$i.py"
done
for j in 1 2; do
  csrun batch -j$j -q --report "$T/ahead-$j.jsonl" "$T/ahead" > /dev/null 2> "$T/ahead-$j.err"
  rc=$?
  got=$(python3 - "$T/ahead-$j.jsonl" <<'PY'
import json, sys
iv, durs, warm = [], [], 0
for l in open(sys.argv[1]):
    a = json.loads(l)["attempts"][0]
    s, e = map(float, a["stdout"].split())
    iv.append((s, e)); durs.append(a["duration_ms"]); warm += bool(a.get("warm_jail"))
ev = sorted([(s, 1) for s, e in iv] + [(e, -1) for s, e in iv], key=lambda x: (x[0], x[1]))
c = m = 0
for t, d in ev:
    c += d
    m = max(m, c)
print(len(iv), warm, m, max(durs) < 1500)
PY
)
  [ $rc = 0 ] && [ "$got" = "8 8 $j True" ] \
    && ok "-j$j, warm jails made ahead: at most $j snippets at once, each item's duration its own" \
    || not_ok "-j$j with jails made ahead" "exit $rc" "got: $got (items, warm, most at once, durations)" "$(cat "$T/ahead-$j.err")"
done

# ---------------------------------------------------------------- the progress line on a pty
cat > "$T/ptyrun.py" <<'PY'
import os, pty, subprocess, sys, tty
out, argv = sys.argv[1], sys.argv[2:]
master, slave = pty.openpty()
tty.setraw(slave)
p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave)
os.close(slave)
data = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
rc = p.wait()
open(out, "wb").write(data)
sys.exit(rc)
PY
python3 "$T/ptyrun.py" "$T/pty.out" "$CSRUN" batch -j2 "$T/mix/ok.py" "$T/one.py" "$T/mix/healed.py"
rc=$?
if [ $rc = 0 ] && grep -qa $'\r\x1b\[Kcsrun batch: 3/3 ok 2 healed 1 failed 0 blocked 0 timeout 0' "$T/pty.out" \
  && ! grep -qa '^csrun batch: \[' "$T/pty.out"; then
  ok "on a terminal: a live progress line (done/total, counts, rate, ETA), no per-item lines"
else
  not_ok "progress on a pty" "exit $rc" "$(cat -v "$T/pty.out" | head -c 2000)"
fi

done_testing
