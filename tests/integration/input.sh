#!/bin/bash
# What csrun takes in: --env values (no newline), and source encodings (UTF-8, a UTF-8 BOM,
# or a PEP 263 coding declaration; anything else is refused).
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
printf 'print("hi")\n' > "$T/ok.py"

# expect_usage DESC PATTERN CMD...: exit 2, one line on stderr matching PATTERN, nothing on stdout.
expect_usage () {
  local desc=$1 pattern=$2
  shift 2
  "$@" >"$T/stdout" 2>"$T/stderr" </dev/null
  local rc=$?
  if [ $rc -eq 2 ] && [ "$(grep -c . "$T/stderr")" -eq 1 ] && grep -qE "$pattern" "$T/stderr" \
    && [ ! -s "$T/stdout" ]; then
    ok "$desc (exit 2)"
  else
    not_ok "$desc" "expected exit 2 and one line matching '$pattern'" "got exit $rc" \
      "stderr: $(cat -v "$T/stderr")" "stdout: $(head -c 300 "$T/stdout")"
  fi
}

# ---------------------------------------------------------------- --env
expect_usage "--env KEY=VALUE with a newline in VALUE" "invalid --env: the value of FOO contains a newline" \
  csrun run --env $'FOO=a\nb' "$T/ok.py"
expect_usage "--env KEY copying a host value with a newline" "invalid --env: the value of FOO .*contains a newline" \
  env FOO=$'a\nb' "$CSRUN" run --env FOO "$T/ok.py"
expect_usage "--env with an empty name" "invalid --env" csrun run --env =x "$T/ok.py"
expect_usage "--env with a space in the name" "invalid --env" csrun run --env 'A B=1' "$T/ok.py"
printf 'import os\nprint(repr(os.environ["FOO"]))\n' > "$T/env.py"
out=$(FOO=$'tab\there' csrun run --quiet --env FOO --env BAR=x=y "$T/env.py" 2>&1)
[ "$out" = "'tab\\there'" ] && ok "--env values with a tab or '=' still pass" || not_ok "--env tab" "$out"

# ---------------------------------------------------------------- source encodings
# Latin-1 bytes (é is 0xe9) with a PEP 263 declaration: Python reads them as latin-1.
printf '# -*- coding: latin-1 -*-\ns = "caf\xe9"\nprint(s, len(s), ord(s[-1]))\n' > "$T/latin1.py"
out=$(csrun run --quiet "$T/latin1.py" 2>&1)
[ "$out" = "café 4 233" ] && ok "a latin-1 snippet with a coding declaration runs and prints correctly" \
  || not_ok "latin-1 with a declaration" "$out"
printf '#!/usr/bin/env python3\n# vim: set fileencoding=iso-8859-15 :\nprint("\xa4")\n' > "$T/vim.py"
out=$(csrun run --quiet "$T/vim.py" 2>&1)
[ "$out" = "€" ] && ok "a vim fileencoding= declaration on line 2 is honoured" || not_ok "vim declaration" "$out"
csrun check "$T/latin1.py" >"$T/check.out" 2>&1 && grep -q ': pass$' "$T/check.out" \
  && ok "csrun check passes a declared latin-1 snippet" || not_ok "check latin-1" "$(cat "$T/check.out")"
csrun run --json "$T/latin1.py" >"$T/latin1.json" 2>/dev/null
[ "$(json_get "$T/latin1.json" 'j["status"], j["attempts"][0]["stdout"]')" = "('ok', 'café 4 233\n')" ] \
  && ok "--json of a latin-1 snippet is valid JSON" || not_ok "latin-1 --json" "$(cat "$T/latin1.json")"

# The gate quotes the source of a latin-1 snippet from its decoded text (the AST's columns
# count UTF-8 bytes, not the file's).
printf '# coding: latin-1\nimport os\nx = "\xe9\xe9"; getattr(os, "system")("id")\n' > "$T/quote.py"
csrun check "$T/quote.py" >"$T/quote.out" 2>&1
rc=$?
[ $rc -eq 3 ] && grep -q 'called as `getattr(os, "system")`' "$T/quote.out" \
  && ok "a latin-1 snippet's violation quotes the right source text" || not_ok "latin-1 quote" "exit $rc" "$(cat "$T/quote.out")"

# Not declared, or declared too late, or after a code line: refused as before.
printf 's = "caf\xe9"\nprint(s)\n' > "$T/undeclared.py"
expect_usage "latin-1 bytes without a declaration" "'$T/undeclared.py' is not valid UTF-8" csrun run "$T/undeclared.py"
printf '\n\n# coding: latin-1\nprint("\xe9")\n' > "$T/line3.py"
expect_usage "a declaration on line 3" "not valid UTF-8" csrun run "$T/line3.py"
printf 'x = 1\n# coding: latin-1\nprint("\xe9")\n' > "$T/aftercode.py"
expect_usage "a declaration on line 2 after a code line" "not valid UTF-8" csrun run "$T/aftercode.py"
printf '\xef\xbb\xbf# coding: latin-1\nprint("\xe9")\n' > "$T/bomlatin.py"
expect_usage "a UTF-8 BOM with latin-1 bytes" "not valid UTF-8" csrun run "$T/bomlatin.py"
expect_usage "csrun check: latin-1 bytes without a declaration" "not valid UTF-8" csrun check "$T/undeclared.py"

# A UTF-8 BOM is UTF-8.
printf '\xef\xbb\xbfprint("caf\xc3\xa9")\n' > "$T/bom.py"
out=$(csrun run --quiet "$T/bom.py" 2>&1)
[ "$out" = "café" ] && ok "a snippet starting with a UTF-8 BOM runs" || not_ok "BOM" "$out"

# An encoding Python does not know: the gate in the jail says so, as a syntax error.
printf '# coding: no-such-codec\nprint("\xe9")\n' > "$T/unknown.py"
csrun check "$T/unknown.py" >"$T/unknown.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "unknown encoding: no-such-codec" "$T/unknown.out" \
  && ok "an unknown declared encoding is a syntax error (exit 1)" || not_ok "unknown encoding" "exit $rc" "$(cat "$T/unknown.out")"

# Not healed: the healer works on UTF-8 text; the result says why.
printf '# coding: latin-1\nprint("\xe9", json.dumps(1))\n' > "$T/heal.py"
csrun run --json --no-llm "$T/heal.py" >"$T/heal.json" 2>/dev/null
rc=$?
[ $rc -eq 1 ] && [ "$(json_get "$T/heal.json" 'j["status"], len(j["attempts"]), "not UTF-8" in j["attempts"][-1]["no_patch"]')" = "('failed', 1, True)" ] \
  && ok "a non-UTF-8 snippet is not healed, and the result says why" || not_ok "latin-1 not healed" "exit $rc" "$(cat "$T/heal.json")"
printf '# coding: latin-1\nprint("e", json.dumps(1))\n' > "$T/heal-ascii.py"
out=$(csrun run --no-llm "$T/heal-ascii.py" 2>&1)
case $out in *"e 1"*"healed after 2 attempts"*) ok "an ASCII snippet declaring latin-1 is still healed" ;;
  *) not_ok "ASCII latin-1 healed" "$out" ;; esac

done_testing
