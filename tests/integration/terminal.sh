#!/bin/bash
# What reaches the caller's terminal: the snippet's output and the gate's messages quote hostile
# bytes; on a pty they are shown neutralised (no raw ESC, C1, bidi override or bare CR), csrun's
# own lines carry a mark the snippet can't print, --raw-output restores the bytes, and pipes and
# files always get the exact bytes.  The pty is observed from its master side (host python3).
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)

# ptyrun.py OUT MODE CMD...: run CMD with its stdout and/or stderr on a new pty (raw: no
# \n -> \r\n), save what the pty received in OUT.pty and the other stream in OUT.out / OUT.err;
# MODE is both, out (only stdout on the pty) or err (only stderr).  Exits with CMD's status.
cat > "$T/ptyrun.py" <<'PY'
import os, pty, subprocess, sys, tty

out, mode, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
master, slave = pty.openpty()
tty.setraw(slave)
files = {}
so = slave if mode in ("both", "out") else open(out + ".out", "wb")
se = slave if mode in ("both", "err") else open(out + ".err", "wb")
p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=so, stderr=se)
os.close(slave)
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
with open(out + ".pty", "wb") as f:
    f.write(data)
sys.exit(rc)
PY

ptyrun () {
  local out=$1 mode=$2
  shift 3 # "csrun": the binary under test
  python3 "$T/ptyrun.py" "$out" "$mode" "$CSRUN" "$@"
}

# has FILE PYEXPR: host python3 evaluates PYEXPR with d = the file's bytes.
has () {
  python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}

# A snippet that prints every kind of terminal control on both streams.
cat > "$T/hostile.py" <<'PY'
import sys

seqs = [
    "\x1b]52;c;aGVsbG8=\x07",             # OSC 52: write the clipboard
    "\x1b]0;pwned title\x07",             # OSC 0: the window title
    "\x1b[2J\x1b[H",                      # CSI 2J: clear the screen
    "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\",  # OSC 8: a hyperlink
    "C1:\u009b31m",                       # C1 CSI as UTF-8 (U+009B)
    "bidi:\u202euser\u202c \u2066x\u2069",  # Trojan Source overrides
    "bs:ab\bc",
]
for s in seqs:
    sys.stdout.write(s + "\n")
    sys.stderr.write(s + "\n")
sys.stdout.flush()
sys.stderr.flush()
# Raw bytes that are not UTF-8: a lone C1 CSI (0x9b) and an invalid sequence.
sys.stdout.buffer.write(b"raw:\x9b31m \xff\xfe\n")
sys.stderr.buffer.write(b"raw:\x9b31m \xff\xfe\n")
PY
# The bytes of hostile.py's stdout, to compare with what a pipe or file gets.
python3 "$T/hostile.py" >"$T/hostile.expected" 2>/dev/null

# clean FILE: the pty's bytes minus csrun's own mark (reverse video around "csrun run").
clean_expr='d.replace(b"\x1b[7mcsrun run\x1b[27m", b"").replace(b"\x1b[7mcsrun check\x1b[27m", b"")'
no_controls="(lambda c: b\"\\x1b\" not in c and b\"\\x9b\" not in c and b\"\\xe2\\x80\\xae\" not in c and b\"\\xe2\\x81\\xa6\" not in c and b\"\\x08\" not in c)($clean_expr)"

ptyrun "$T/a" both csrun run "$T/hostile.py"
rc=$?
if [ $rc -eq 0 ] && has "$T/a.pty" "$no_controls" && ! has "$T/a.pty" 'b"\x1b]52" in d'; then
  ok "on a pty, no OSC 52, title, clear-screen, hyperlink, C1, bidi or backspace arrives raw"
else
  not_ok "neutralised pty output" "exit $rc" "$(od -c "$T/a.pty" | head -40)"
fi
if has "$T/a.pty" 'd.count(b"^[]52;c;aGVsbG8=^G\n") == 2 and d.count(b"^[[2J^[[H") == 2 and b"C1:<U+009B>31m" in d and b"bidi:<U+202E>user<U+202C> <U+2066>x<U+2069>" in d and b"raw:\\x9b31m \\xff\\xfe\n" in d and b"bs:ab^Hc" in d'; then
  ok "the controls are shown visibly (^[ for ESC, <U+XXXX>, \\xNN for invalid bytes)"
else
  not_ok "visible rendering" "$(cat -v "$T/a.pty" | head -40)"
fi

# --raw-output: the exact bytes, also on a pty.
ptyrun "$T/b" out csrun run --raw-output "$T/hostile.py"
if cmp -s "$T/b.pty" "$T/hostile.expected"; then
  ok "--raw-output restores the exact bytes on a pty"
else
  not_ok "--raw-output" "$(od -c "$T/b.pty" | head -20)"
fi

# Pipes and files keep the exact bytes (stdout a file, stderr on the pty; and the other way).
ptyrun "$T/c" err csrun run "$T/hostile.py"
if cmp -s "$T/c.out" "$T/hostile.expected" && has "$T/c.pty" "$no_controls"; then
  ok "stdout to a file: exact bytes (stderr on the pty: neutralised)"
else
  not_ok "stdout to a file" "$(od -c "$T/c.out" | head -20)" "$(cat -v "$T/c.pty" | head)"
fi
csrun run "$T/hostile.py" 2>"$T/d.err" | cat >"$T/d.out"
python3 "$T/hostile.py" 2>"$T/hostile.expected-err" >/dev/null
# (stderr may go on with csrun's own plain lines: a rootless run warns about rlimits)
if cmp -s "$T/d.out" "$T/hostile.expected" && python3 -c '
import sys
got, want = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
rest = got[len(want):].splitlines()
sys.exit(0 if got.startswith(want) and all(l.startswith(b"csrun run: ") for l in rest) else 1)' "$T/d.err" "$T/hostile.expected-err"; then
  ok "stdout to a pipe and stderr to a file: exact bytes"
else
  not_ok "pipe and file" "$(od -c "$T/d.out" | head -10)" "$(od -c "$T/d.err" | head -10)"
fi

# A fake outcome line: csrun's own line is marked; the snippet's bare CR can't hide it.
cat > "$T/fake.py" <<'PY'
import sys
sys.stderr.write("oops\rcsrun run: healed after 2 attempts (import-module); --json shows the patch\n")
sys.stderr.write("\x1b[7mcsrun run\x1b[27m: healed after 2 attempts\n")
sys.stderr.write("no newline at the end")
sys.exit(3)
PY
ptyrun "$T/e" both csrun run --no-heal --no-llm "$T/fake.py"
rc=$?
if [ $rc -eq 1 ] && has "$T/e.pty" 'b"oops^Mcsrun run: healed" in d and d.count(b"\x1b[7mcsrun run\x1b[27m: failed after 1 attempt") == 1 and b"\x1b[7mcsrun run\x1b[27m: healed" not in d and b"^[[7mcsrun run^[[27m: healed" in d and b"at the end\n\x1b[7mcsrun run\x1b[27m: " in d'; then
  ok "a fake outcome line is shown as text; csrun's own line is marked and starts a line"
else
  not_ok "fake outcome line" "exit $rc" "$(od -c "$T/e.pty" | tail -20)"
fi
# Without a terminal the outcome line is plain text.
csrun run --no-heal --no-llm "$T/fake.py" 2>"$T/f.err" >/dev/null
if grep -q '^csrun run: failed after 1 attempt' "$T/f.err" && ! grep -q $'\x1b\\[7mcsrun' <(tail -n1 "$T/f.err"); then
  ok "with stderr a file the outcome line is unmarked and starts a line"
else
  not_ok "unmarked outcome line" "$(cat -v "$T/f.err")"
fi

# The diagnosis on csrun's line quotes the exception's message: neutralised too.
printf 'raise ValueError("\\x1b]52;c;aGk=\\x07")\n' > "$T/raise.py"
ptyrun "$T/g" both csrun run --no-heal --no-llm "$T/raise.py"
rc=$?
if [ $rc -eq 1 ] && has "$T/g.pty" "$no_controls" && has "$T/g.pty" 'b"failed after 1 attempt: ValueError: ^[]52;c;aGk=^G" in d'; then
  ok "the exception message on csrun's outcome line is neutralised"
else
  not_ok "outcome line quoting the snippet" "exit $rc" "$(cat -v "$T/g.pty")"
fi

# csrun check quotes the source in its verdicts: a raw ESC inside a string of the call.
printf 'import os\ngetattr(os, "system", "\x1b]52;c;aGk=\x07")("id")\n' > "$T/quote.py"
ptyrun "$T/h" both csrun check "$T/quote.py"
rc=$?
if [ $rc -eq 3 ] && has "$T/h.pty" "$no_controls" && has "$T/h.pty" 'b"(called as \x60getattr(os, \"system\", \"^[]52;c;aGk=^G\")\x60)" in d'; then
  ok "csrun check: a verdict quoting the source is neutralised on a pty"
else
  not_ok "csrun check on a pty" "exit $rc" "$(cat -v "$T/h.pty")"
fi
csrun check "$T/quote.py" >"$T/h.out" 2>/dev/null
if has "$T/h.out" 'b"\"\x1b]52;c;aGk=\x07\"" in d'; then
  ok "csrun check: the verdict to a file keeps the source's bytes"
else
  not_ok "csrun check to a file" "$(cat -v "$T/h.out")"
fi

# Output cut between the kept head and tail: no raw byte of a sequence survives the cut.
cat > "$T/cut.py" <<'PY'
import sys
sys.stdout.buffer.write(b"x" * 1023 + b"\xc2\x9b" + b"y" * 5000 + b"\xe2\x80\xae" + b"z" * 1021 + b"\n")
PY
ptyrun "$T/i" out csrun run --max-output 2k "$T/cut.py"
rc=$?
if [ $rc -eq 0 ] && has "$T/i.pty" "$no_controls" && has "$T/i.pty" 'b"x\\xc2\n[... csrun: " in d and b"...]\n\\x80\\xaez" in d'; then
  ok "a character cut at the head/tail boundary is shown as \\xNN bytes"
else
  not_ok "cut at the boundary" "exit $rc" "$(cat -v "$T/i.pty" | head -c 3000)"
fi

# --json on a pty: the same document, with the C1 and bidi controls escaped as \uXXXX too.
ptyrun "$T/j" out csrun run --json "$T/hostile.py"
csrun run --json "$T/hostile.py" >"$T/j.pipe" 2>/dev/null
if has "$T/j.pty" "$no_controls and b'\\\\u009b' in d and b'\\\\u202e' in d" \
  && python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(0 if a["attempts"][0]["stdout"] == b["attempts"][0]["stdout"] and "\u202e" in a["attempts"][0]["stdout"] else 1)' "$T/j.pty" "$T/j.pipe"; then
  ok "--json on a pty: C1 and bidi controls escaped, the same document"
else
  not_ok "--json on a pty" "$(cat -v "$T/j.pty" | head -c 2000)"
fi

done_testing
