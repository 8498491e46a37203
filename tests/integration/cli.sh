#!/bin/bash
# The command line: version, help, and bad input (one-line errors, documented exit codes).
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
printf 'print("hi")\n' > "$T/ok.py"

out=$(csrun --version)
if [ "$(echo "$out" | wc -l)" = 4 ] && echo "$out" | sed -n 1p | grep -qE '^csrun version [0-9]+\.[0-9]+\.[0-9]+$' \
  && echo "$out" | sed -n 2p | grep -q '^commit: ' && echo "$out" | sed -n 3p | grep -qE '^spec: 1\.' \
  && [ "$(echo "$out" | sed -n 4p)" = "+SECCOMP +CAP +NL3 +YAJL +CURL +ARCHIVE +SYSTEMD_NOTIFY" ]; then
  ok "--version prints version, commit, spec and the build features"
else
  not_ok "--version" "$out"
fi
check "csrun --help exits 0 and lists run" bash -c '"$CSRUN" --help | grep -q "run "'
check "csrun run --help documents every option" bash -c '"$CSRUN" run --help | grep -q -- --timeout && "$CSRUN" run --help | grep -q -- --max-output && "$CSRUN" run --help | grep -q -- --json'

# expect_usage DESC EXPECTED_CODE PATTERN CMD...: exit code, one line on stderr matching PATTERN, nothing on stdout.
expect_error () {
  local desc=$1 code=$2 pattern=$3
  shift 3
  "$@" >"$T/stdout" 2>"$T/stderr" </dev/null
  local rc=$?
  local lines
  lines=$(grep -c . "$T/stderr")
  if [ $rc -eq "$code" ] && [ "$lines" -ge 1 ] && head -n1 "$T/stderr" | grep -qE "$pattern" \
    && [ ! -s "$T/stdout" ]; then
    # argp adds a "Try ... --help" hint after an unknown option; everything else is one line.
    if [ "$lines" -eq 1 ] || { [ "$lines" -eq 2 ] && grep -q -- '--help' "$T/stderr"; }; then
      ok "$desc (exit $code)"
      return
    fi
  fi
  not_ok "$desc" "expected exit $code and one line matching '$pattern'" "got exit $rc" "stderr: $(cat "$T/stderr")" "stdout: $(head -c 300 "$T/stdout")"
}

expect_error "missing file" 2 "cannot read the snippet '$T/nope.py'.*No such file" csrun run "$T/nope.py"
expect_error "a directory" 2 "cannot read the snippet.*[Ii]s a directory" csrun run "$T"
printf '' > "$T/empty.py"
expect_error "an empty snippet" 2 "empty" csrun run "$T/empty.py"
printf '  \n\t\n' > "$T/blank.py"
expect_error "a whitespace-only snippet" 2 "empty" csrun run "$T/blank.py"
printf 'print("\xff\xfe")\n' > "$T/latin.py"
expect_error "a non-UTF-8 snippet" 2 "not valid UTF-8" csrun run "$T/latin.py"
printf 'print(1)\0\n' > "$T/nul.py"
expect_error "a snippet with a NUL byte" 2 "NUL" csrun run "$T/nul.py"
expect_error "a snippet over --max-code-size" 2 "too large|larger|exceeds" csrun run --max-code-size 4 "$T/ok.py"
expect_error "an empty snippet on stdin" 2 "empty" csrun run -
expect_error "no FILE" 2 "missing FILE" csrun run
expect_error "a bad --timeout" 2 "invalid --timeout" csrun run --timeout abc "$T/ok.py"
expect_error "a zero --timeout" 2 "invalid --timeout" csrun run --timeout 0 "$T/ok.py"
expect_error "a negative --timeout" 2 "invalid --timeout" csrun run --timeout -5 "$T/ok.py"
expect_error "an absurd --timeout" 2 "invalid --timeout" csrun run --timeout 99999h "$T/ok.py"
expect_error "an absurd --memory" 2 "invalid --memory" csrun run --memory 99999T "$T/ok.py"
expect_error "a bad --max-output" 2 "invalid --max-output" csrun run --max-output 12Q "$T/ok.py"
expect_error "a bad --env" 2 "invalid --env" csrun run --env "1X=2" "$T/ok.py"
expect_error "an unknown option" 2 "unrecognized option" csrun run --frobnicate "$T/ok.py"
expect_error "an unknown command" 2 "unknown command 'frob'" csrun frob
expect_error "no command" 2 "missing COMMAND" csrun
expect_error "a missing --rootfs" 125 "rootfs.*/nonexistent" csrun run --rootfs /nonexistent/rootfs.tar.zst "$T/ok.py"

if is_root; then
  # root reads any file: read as nobody to see the unreadable-file error.
  if command -v setpriv >/dev/null; then
    printf 'print(1)\n' > "$T/secret.py"
    chmod 000 "$T/secret.py"
    chmod 755 "$T"
    expect_error "an unreadable file" 2 "cannot read the snippet.*Permission denied" \
      setpriv --reuid 65534 --regid 65534 --clear-groups "$CSRUN" run "$T/secret.py"
  else
    skip "an unreadable file" "setpriv (util-linux) is not installed"
  fi
else
  printf 'print(1)\n' > "$T/secret.py"
  chmod 000 "$T/secret.py"
  expect_error "an unreadable file" 2 "cannot read the snippet.*Permission denied" csrun run "$T/secret.py"
fi

# With --json, a csrun failure still yields a result document.
csrun run --json --rootfs /nonexistent/rootfs.tar.zst "$T/ok.py" >"$T/err.json" 2>/dev/null
rc=$?
[ $rc -eq 125 ] && [ "$(json_get "$T/err.json" 'j["version"], j["status"], "/nonexistent" in j["error"]')" = "(1, 'error', True)" ] \
  && ok "--json on a csrun failure prints status error with the reason" || not_ok "--json error document" "exit $rc" "$(cat "$T/err.json")"

# --json success document: one line, stable top-level fields.
csrun run --json "$T/ok.py" >"$T/ok.json"
rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$T/ok.json")" = 1 ] && [ "$(json_get "$T/ok.json" 'j["version"], j["status"], j["attempts"][0]["stdout"], j["attempts"][0]["exit_code"], len(j["attempts"][0]["code_sha256"]), j["limits"]["memory_enforced"]')" = "(1, 'ok', 'hi\n', 0, 64, True)" ]; then
  ok "--json prints one line with version, status, attempts and limits"
else
  not_ok "--json document" "exit $rc" "$(cat "$T/ok.json")"
fi
want=$(sha256sum "$T/ok.py" | cut -d' ' -f1)
[ "$(json_get "$T/ok.json" 'j["attempts"][0]["code_sha256"]')" = "$want" ] && ok "code_sha256 is the snippet's sha256" || not_ok "code_sha256" "$want"

# --env adds variables; KEY alone copies the host's value; nothing else leaks.
printf 'import os\nprint(os.environ.get("A"), os.environ.get("B"), os.environ.get("HOME"), os.environ.get("C"))\n' > "$T/env.py"
out=$(B=from-host C=leak csrun run --quiet --env A=1 --env B --env HOME=/tmp "$T/env.py" 2>&1)
[ "$out" = "1 from-host /tmp None" ] && ok "--env KEY=VALUE, --env KEY and overriding a default" || not_ok "--env" "$out"

done_testing
