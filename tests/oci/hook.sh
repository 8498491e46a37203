#!/bin/bash
# `csrun hook STAGE`: the OCI hook that gates a container's Python program
# before it starts (prestart, createRuntime) and scans its log after it stops
# (poststop).  Part 1 plays the runtime: a bundle, a state document on stdin,
# and this shell's pid as the container's (so /proc/PID/root is /).  Part 2
# runs podman with contrib/oci-hooks.d (root only).
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
. "$CSRUN_SRCDIR/tests/lib/podman-cgroups.sh"

T=$(tmpdir)
B=$T/bundle
mkdir -p "$B/rootfs"

# config ARGS-JSON ANNOTATIONS-JSON [ROOT-PATH]: write $B/config.json.
config () {
  cat > "$B/config.json" <<EOF
{"ociVersion": "1.0.2",
 "root": {"path": "${3:-rootfs}"},
 "process": {"args": $1, "cwd": "/", "env": ["PATH=/usr/bin:/bin"]},
 "annotations": $2}
EOF
}
# state [EXTRA-JSON-MEMBERS]: write $T/state.json for container "hooktest".
state () {
  printf '{"ociVersion": "1.0.2", "id": "hooktest", "status": "creating", "pid": %d, "bundle": "%s"%s}\n' \
    $$ "$B" "${1:+, $1}" > "$T/state.json"
}
# hook STAGE [env ...]: run the hook on $T/state.json; $rc, $T/out, $T/err.
hook () {
  local stage=$1
  shift
  "$@" "$CSRUN" hook "$stage" < "$T/state.json" > "$T/out" 2> "$T/err"
  rc=$?
}
# expect DESC RC [GREP-PATTERN-IN-STDERR]
expect () {
  local desc=$1 want=$2 pat=${3:-}
  if [ "$rc" = "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" "$T/err"; } && [ ! -s "$T/out" ]; then
    ok "$desc"
  else
    not_ok "$desc" "exit $rc (want $want), stderr should match: $pat" "stderr: $(cat "$T/err")" \
      "stdout: $(cat "$T/out")"
  fi
}

GATE='{"run.csrun.gate": "true"}'
printf 'import json\nprint(json.dumps({"a": 1}))\n' > "$B/rootfs/job.py"
config '["python3", "/job.py"]' "$GATE"
state
hook prestart
expect "prestart: a clean script passes (exit 0, nothing printed)" 0
[ ! -s "$T/err" ] && ok "prestart: a pass is silent" || not_ok "prestart: a pass is silent" "$(cat "$T/err")"

printf 'import os\nx = 1\nos.system("id")\n' > "$B/rootfs/job.py"
hook prestart
expect "prestart: os.system is blocked (exit 1, the violation on stderr)" 1 \
  '^csrun hook: /job.py:3: dangerous-call: os.system()'
hook createRuntime
expect "createRuntime gates as prestart does" 1 'dangerous-call'

hook prestart env -i
expect "an empty environment (no PATH, no HOME) still finds the rootfs and policies" 1 \
  '/job.py:3: dangerous-call'

printf 'def f(:\n    pass\n' > "$B/rootfs/job.py"
hook prestart
expect "a syntax error blocks the start" 1 '^csrun hook: /job.py:1: syntax:'

printf 'import os\nos.system("id")\n' > "$B/rootfs/job.py"
config '["python3", "/job.py"]' '{}'
hook prestart
expect "no annotation: not gated (exit 0)" 0
[ ! -s "$T/err" ] && ok "no annotation: nothing printed" || not_ok "no annotation: nothing printed" "$(cat "$T/err")"
config '["python3", "/job.py"]' '{"run.csrun.gate": "false"}'
hook prestart
expect "run.csrun.gate=false: not gated" 0
config '["python3", "/job.py"]' '{}'
state '"annotations": {"run.csrun.gate": "true"}'
hook prestart
expect "the annotation in the state (not in config.json) is enough" 1 'dangerous-call'
state

config '["python3", "-u", "-X", "dev", "-W", "decoy.py", "/job.py", "arg.py"]' "$GATE"
hook prestart
expect "interpreter options are skipped: the script is found" 1 '/job.py:2: dangerous-call'

mkdir -p "$B/rootfs/app"
printf 'import os\nos.system("id")\n' > "$B/rootfs/app/run.py"
config '["/usr/bin/python3", "run.py"]' "$GATE"
sed -i 's|"cwd": "/"|"cwd": "/app"|' "$B/config.json"
hook prestart
expect "a relative script is found in process.cwd" 1 '^csrun hook: /app/run.py:2: dangerous-call'

config '["python3", "-c", "import os; os.system(\"id\")"]' "$GATE"
hook prestart
expect "python -c CODE gates CODE" 1 '<string>:1: dangerous-call'
config '["python3", "-c", "print(1)"]' "$GATE"
hook prestart
expect "python -c with clean code passes" 0

config '["python3", "-m", "http.server"]' "$GATE"
hook prestart
expect "python -m MODULE: not gated, a note on stderr" 0 'note: .*http.server.*not gated'

config '["sh", "-c", "echo hi"]' "$GATE"
hook prestart
expect "not Python: nothing to do" 0

# Symlinks resolve inside the container's root, never on the host.
printf 'print("host file")\nimport os\nos.system("id")\n' > "$T/host.py"
rm -f "$B/rootfs/job.py"
ln -s "$T/host.py" "$B/rootfs/job.py"
config '["python3", "/job.py"]' "$GATE"
hook prestart
expect "an absolute symlink to a host file is resolved in the container (not found: refused)" 1 \
  'cannot gate: .*No such file'
rm -f "$B/rootfs/job.py"
ln -s "../../../../../../../../..$T/host.py" "$B/rootfs/job.py"
hook prestart
expect "a ../ symlink can't climb out of the container's root" 1 'cannot gate: .*No such file'
rm -f "$B/rootfs/job.py"
mkdir -p "$B/rootfs/srv"
printf 'import os\nos.system("id")\n' > "$B/rootfs/srv/real.py"
ln -s /srv/real.py "$B/rootfs/job.py"
hook prestart
expect "a symlink inside the container is followed there" 1 '/job.py:2: dangerous-call'
rm -f "$B/rootfs/job.py"

hook prestart
expect "a missing script is refused (the gate can't see it)" 1 "cannot gate: open '/job.py'"
head -c 1100000 /dev/zero | tr '\0' '#' > "$B/rootfs/job.py"
hook prestart
expect "a script over 1 MiB is refused" 1 'larger than 1048576 bytes'
printf 'print(1)\n' > "$B/rootfs/job.py"

config '["python3", "/job.py"]' "$GATE" "$B/rootfs"
hook prestart
expect "an absolute root.path" 0
printf 'eval("1")\n' > "$B/rootfs/job.py"
hook prestart
expect "an absolute root.path: eval is blocked" 1 'dangerous-call: eval()'

# run.csrun.policy: a lax policy lets os.system through; a private file is refused.
printf 'syntax syntax\ndangerous-call call eval -- no eval here\n' > "$T/lax.conf"
chmod 644 "$T/lax.conf"
printf 'import os\nos.system("id")\n' > "$B/rootfs/job.py"
config '["python3", "/job.py"]' '{"run.csrun.gate": "true", "run.csrun.policy": "'"$T"'/lax.conf"}'
hook prestart
expect "run.csrun.policy replaces gate.conf" 0
printf 'eval("1")\n' > "$B/rootfs/job.py"
hook prestart
expect "run.csrun.policy's own rules apply (and their message)" 1 'dangerous-call: eval() .*no eval here'
chmod 600 "$T/lax.conf"
hook prestart
expect "a policy file not readable by everyone is refused (errors would quote it)" 1 \
  'not readable by everyone'
config '["python3", "/job.py"]' '{"run.csrun.gate": "true", "run.csrun.policy": "lax.conf"}'
hook prestart
expect "a relative policy path is refused" 1 'not an absolute path'

# A refusal also goes to the container's log, BUNDLE/ctr.log (conmon's k8s-file log, what
# `podman logs` shows), and one more line on stderr names it: crun does not pass a hook's
# stderr on, so there it is what the user finds.  Never created, never through a symlink.
state
printf 'import os\nos.system("id")\n' > "$B/rootfs/job.py"
config '["python3", "/job.py"]' "$GATE"
rm -f "$B/ctr.log"
hook prestart
[ "$rc" = 1 ] && [ ! -e "$B/ctr.log" ] && ! grep -q 'also in its log' "$T/err" \
  && ok "a refusal without a ctr.log in the bundle: none is created" \
  || not_ok "a refusal without a ctr.log: none is created" "exit $rc" "$(cat "$T/err")" "$(ls "$B")"
printf '2024-05-01T10:00:00Z stdout F earlier output\n' > "$B/ctr.log"
hook prestart
if [ "$rc" = 1 ] && [ "$(sed -n 1p "$B/ctr.log")" = '2024-05-01T10:00:00Z stdout F earlier output' ] \
  && grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}\+00:00 stderr F csrun hook: /job.py:2: dangerous-call: os\.system\(\)' "$B/ctr.log" \
  && grep -q ' stderr F csrun hook: /job.py: blocked by the gate (container hooktest' "$B/ctr.log" \
  && [ "$(wc -l < "$B/ctr.log")" = 3 ] \
  && grep -qx "csrun hook: container hooktest: the lines above are also in its log $B/ctr.log (podman logs hooktest)" "$T/err"; then
  ok "a refusal is appended to the container's ctr.log as k8s-file records, and stderr names the log"
else
  not_ok "a refusal is appended to the container's ctr.log" "exit $rc" "$(cat "$T/err")" "$(cat "$B/ctr.log")"
fi
: > "$T/elsewhere.log"
rm -f "$B/ctr.log"
ln -s "$T/elsewhere.log" "$B/ctr.log"
hook prestart
[ "$rc" = 1 ] && [ ! -s "$T/elsewhere.log" ] && ok "a ctr.log that is a symlink is not followed" \
  || not_ok "a ctr.log that is a symlink is not followed" "exit $rc" "$(cat "$T/elsewhere.log")"
rm -f "$B/ctr.log"
: > "$B/ctr.log"
printf 'print(1)\n' > "$B/rootfs/job.py"
hook prestart
[ "$rc" = 0 ] && [ ! -s "$B/ctr.log" ] && [ ! -s "$T/err" ] && ok "a pass writes nothing to the log" \
  || not_ok "a pass writes nothing to the log" "exit $rc" "$(cat "$T/err")" "$(cat "$B/ctr.log")"
rm -f "$B/ctr.log"

# Bad usage and bad input.
"$CSRUN" hook > "$T/out" 2> "$T/err" < /dev/null
rc=$?
expect "no STAGE: exit 2" 2 'missing STAGE'
"$CSRUN" hook prestart extra > "$T/out" 2> "$T/err" < /dev/null
rc=$?
expect "an extra argument: exit 2" 2 'too many arguments'
"$CSRUN" hook nosuchstage > "$T/out" 2> "$T/err" < /dev/null
rc=$?
expect "an unknown stage: exit 2" 2 "unknown stage 'nosuchstage'"
[ "$(wc -l < "$T/err")" = 1 ] && ok "bad usage is one line" || not_ok "bad usage is one line" "$(cat "$T/err")"
for s in createContainer startContainer poststart; do
  hook "$s"
  expect "stage $s: nothing to do" 0
done
echo 'not json' > "$T/state.json"
hook prestart
expect "prestart: a state that is not JSON is bad input (exit 2)" 2 'not JSON'
printf '{"ociVersion": "1.0.2", "id": "hooktest", "status": "creating", "bundle": "%s"}\n' "$B" > "$T/state.json"
config '["python3", "/job.py"]' "$GATE"
hook prestart
expect "prestart: a state without pid can't be gated (refused)" 1 'no "pid"'
state
mv "$B/config.json" "$B/config.json.off"
hook prestart
expect "prestart: no config.json: refused" 1 'config.json'
mv "$B/config.json.off" "$B/config.json"

# poststop: the silent-failure scan of conmon's k8s-file log.
V=$B/csrun-verdict.json
config '["python3", "/job.py"]' '{"run.csrun.scan": "true"}'
printf '{"ociVersion": "1.0.2", "id": "hooktest", "status": "stopped", "bundle": "%s"}\n' "$B" > "$T/state.json"
cat > "$B/ctr.log" <<'EOF'
2024-05-01T10:00:00.100000000+00:00 stdout F loading data.csv
2024-05-01T10:00:00.200000000+00:00 stderr F warning: 0 rows
2024-05-01T10:00:00.300000000+00:00 stdout P Empty Data
2024-05-01T10:00:00.400000000+00:00 stdout F Frame
2024-05-01T10:00:00.500000000+00:00 stdout F Columns: []
EOF
hook poststop env -i
if [ "$rc" = 0 ] && [ ! -s "$T/out" ] && [ ! -s "$T/err" ] && [ -f "$V" ] \
  && [ "$(json_get "$V" '(j["id"], j["status"], j["pattern"], j["line"], j["log"])')" \
    = "('hooktest', 'silent_failure', 'empty\\\\s+dataframe', 'Empty DataFrame', '$B/ctr.log')" ]; then
  ok "poststop: 'Empty DataFrame' (split over two k8s-file records) is a silent failure"
else
  not_ok "poststop: 'Empty DataFrame' is a silent failure" "exit $rc" "$(cat "$T/err")" "$(cat "$V" 2>&1)"
fi
[ "$(stat -c %a "$V" 2>/dev/null)" = 600 ] && ok "the verdict is private (0600)" \
  || not_ok "the verdict is private (0600)" "$(stat -c %a "$V" 2>&1)"
tmps=("$B"/*.tmp-*)
[ -e "${tmps[0]}" ] && not_ok "no temporary file left" "${tmps[*]}" || ok "no temporary file left"

printf '2024-05-01T10:00:00Z stdout F all 3 rows written\n2024-05-01T10:00:01Z stderr F done\n' > "$B/ctr.log"
hook poststop
if [ "$rc" = 0 ] && [ ! -s "$T/err" ] \
  && [ "$(json_get "$V" '(j["id"], j["status"], j["pattern"], j["line"])')" = "('hooktest', 'ok', None, None)" ]; then
  ok "poststop: a clean log gives status ok"
else
  not_ok "poststop: a clean log gives status ok" "exit $rc" "$(cat "$T/err")" "$(cat "$V" 2>&1)"
fi

# The prefix is stripped: a pattern anchored at the start of a line matches.
printf '2024-05-01T10:00:00Z stderr F error:loader: bad header\n' > "$B/ctr.log"
hook poststop
[ "$(json_get "$V" 'j["line"]' 2>&1)" = "error:loader: bad header" ] \
  && ok "poststop: the k8s-file prefix is stripped before the scan" \
  || not_ok "poststop: the k8s-file prefix is stripped before the scan" "$(cat "$V" 2>&1)"

# Only the last MiB is read: an early failure scrolled out of it is not seen.
{
  echo '2024-05-01T10:00:00Z stdout F Pipeline failed at step 1'
  yes '2024-05-01T10:00:00Z stdout F ok ok ok ok ok ok ok ok ok ok ok ok' | head -n 30000
} > "$B/ctr.log"
hook poststop
[ "$rc" = 0 ] && [ "$(json_get "$V" 'j["status"]' 2>&1)" = ok ] \
  && ok "poststop: only the last MiB of the log is scanned" \
  || not_ok "poststop: only the last MiB of the log is scanned" "$(cat "$T/err")" "$(cat "$V" 2>&1)"

printf 'plain text\nTraceback (most recent call last):\n' > "$T/other.log"
config '["python3", "/job.py"]' '{"run.csrun.scan": "true", "run.csrun.log": "'"$T"'/other.log"}'
hook poststop
[ "$rc" = 0 ] && [ "$(json_get "$V" '(j["status"], j["log"])' 2>&1)" = "('silent_failure', '$T/other.log')" ] \
  && ok "poststop: run.csrun.log names the log (plain lines are scanned as they are)" \
  || not_ok "poststop: run.csrun.log names the log" "$(cat "$T/err")" "$(cat "$V" 2>&1)"

config '["python3", "/job.py"]' '{"run.csrun.scan": "true", "run.csrun.log": "'"$T"'/missing.log"}'
hook poststop
if [ "$rc" = 0 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -q 'missing.log' "$T/err" && [ ! -e "$V" ]; then
  ok "poststop: an unreadable log: one line on stderr, exit 0, no (stale) verdict"
else
  not_ok "poststop: an unreadable log: one line, exit 0, no verdict" "exit $rc" "$(cat "$T/err")" "$(ls "$B")"
fi

config '["python3", "/job.py"]' '{}'
printf '2024-05-01T10:00:00Z stdout F Pipeline failed\n' > "$B/ctr.log"
hook poststop
[ "$rc" = 0 ] && [ ! -e "$V" ] && [ ! -s "$T/err" ] && ok "poststop without run.csrun.scan: nothing" \
  || not_ok "poststop without run.csrun.scan: nothing" "exit $rc" "$(cat "$T/err")"
state '"annotations": {"run.csrun.scan": "true"}'
sed -i 's/"creating"/"stopped"/' "$T/state.json"
mv "$B/config.json" "$B/config.json.off"
hook poststop
[ "$rc" = 0 ] && [ "$(json_get "$V" 'j["status"]' 2>&1)" = silent_failure ] \
  && ok "poststop: the state's annotations are enough (config.json gone)" \
  || not_ok "poststop: the state's annotations are enough" "exit $rc" "$(cat "$T/err")" "$(cat "$V" 2>&1)"
mv "$B/config.json.off" "$B/config.json"
echo 'not json' > "$T/state.json"
hook poststop
[ "$rc" = 0 ] && [ "$(wc -l < "$T/err")" = 1 ] && ok "poststop: bad input is one line and exit 0" \
  || not_ok "poststop: bad input is one line and exit 0" "exit $rc" "$(cat "$T/err")"

# Source encodings: a script file is read by Python with its PEP 263 declaration (as csrun run
# does); `python -c` text is not (Python compiles it as text), so a declaration there is refused:
# the gate, which compiles bytes, would read other code than runs.
state
printf '# -*- coding: latin-1 -*-\nprint("caf\xe9")\n' > "$B/rootfs/job.py"
config '["python3", "/job.py"]' "$GATE"
hook prestart
expect "a latin-1 script with a coding declaration passes" 0
printf 'print("caf\xe9")\n' > "$B/rootfs/job.py"
hook prestart
expect "a latin-1 script without a declaration is refused" 1 '/job.py: refused: is not valid UTF-8'
config '["python3", "-c", "# coding: utf-7\nimport os #+AAo-\"\"\"\nos.system(\"id\")\n#\"\"\"\n"]' "$GATE"
hook prestart
expect "-c code with a utf-7 declaration (hiding os.system from the gate) is refused" 1 \
  '<string>: refused: -c code declares coding: utf-7'
config '["python3", "-c", "# -*- coding: utf-8 -*-\nprint(1)\n"]' "$GATE"
hook prestart
expect "-c code declaring utf-8 passes" 0

# Messages quote the script: never a raw terminal control (podman shows them on a terminal).
printf 'import os\ngetattr(os, "system", "\x1b]52;c;aGk=\x07")("id")\n' > "$B/rootfs/job.py"
config '["python3", "/job.py"]' "$GATE"
hook prestart
if [ "$rc" = 1 ] && grep -q 'called as `getattr(os, "system", "^\[\]52;c;aGk=^G")`' "$T/err" \
  && ! grep -q $'\x1b' "$T/err"; then
  ok "a violation quoting an escape sequence is shown neutralised"
else
  not_ok "hook messages neutralised" "exit $rc" "$(cat -v "$T/err")"
fi

# ---------------------------------------------------------------- podman
# crun refuses a cgroup v1/v2 hybrid host whose v2 hierarchy lists controllers
# ("cgroups in hybrid mode not supported"); hidden from it (and only it) in a
# private mount namespace, as tests/conformance/suite-crun.sh does.  The host's
# file is never written.
crun_needs_mask () {
  [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = tmpfs ] \
    && [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] \
    && grep -q . /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null
}
# podman_rt RT ARGS...: podman --runtime RT ARGS, under the mask when $RT_MASK is set.
podman_rt () {
  local rt=$1
  shift
  if [ -n "${RT_MASK:-}" ]; then
    unshare -m --propagation private sh -c \
      'mount --bind "$0" /sys/fs/cgroup/unified/cgroup.controllers && exec "$@"' \
      "$RT_MASK" "${P[@]}" --runtime "$rt" "$@"
  else
    "${P[@]}" --runtime "$rt" "$@"
  fi
}

podman_tests () {
  local PD IMAGE=localhost/csrun-hook-test:latest rt out job name bundle v want desc got
  PD=$(tmpdir)
  mkdir -p "$PD/hooks" "$PD/tmp"
  cat > "$PD/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
log_driver = "k8s-file"
[engine]
events_logger = "file"
cgroup_manager = "cgroupfs"
EOF
  export CONTAINERS_CONF=$PD/containers.conf
  P=(timeout 300 podman --root "$PD/root" --runroot "$PD/runroot" --tmpdir "$PD/tmp" --hooks-dir "$PD/hooks")
  PODMAN_DIR=$PD
  local csrun_abs
  csrun_abs=$(realpath "$CSRUN")
  for f in "$CSRUN_SRCDIR"/contrib/oci-hooks.d/*.json; do
    sed "s|\"/usr/local/bin/csrun\"|\"$csrun_abs\"|" "$f" > "$PD/hooks/${f##*/}"
  done
  if ! out=$(zstd -dc "$CSRUN_TEST_ROOTFS" | "${P[@]}" import - "$IMAGE" 2>&1); then
    not_ok "podman imports the test rootfs" "$out"
    return
  fi
  printf 'print("hello from the job")\n' > "$PD/good.py"
  printf 'import os\nx = 1\nos.system("id")\n' > "$PD/bad.py"
  printf 'print("Empty DataFrame")\nprint("Columns: []")\n' > "$PD/silent.py"
  chmod 644 "$PD"/*.py

  local runtimes=() tried=0 logs name
  local rtname
  for rtname in crun runc csrun; do
    rt=$csrun_abs
    [ "$rtname" = csrun ] || rt=$(command -v "$rtname" 2>/dev/null)
    if [ -z "$rt" ] || [ ! -x "$rt" ]; then
      skip "podman --runtime $rtname: gate tests" "$rtname is not installed"
      continue
    fi
    tried=$((tried + 1))
    # crun refuses a hybrid host whose v2 hierarchy lists controllers: it
    # runs under podman_rt, which hides them in a private mount namespace.
    RT_MASK=
    if "$rt" --version 2>/dev/null | head -n 1 | grep -q '^crun version' && crun_needs_mask; then
      RT_MASK=$PD/empty-controllers
      : > "$RT_MASK"
    fi
    # Can this runtime run a container here at all (without the hook)?
    if ! out=$(podman_rt "$rt" run --rm --network none "$IMAGE" python3 -c 'print(42)' 2>&1) \
      || [ "$out" != 42 ]; then
      if [ "$rt" = "$csrun_abs" ]; then
        not_ok "podman --runtime csrun runs a container (before the gate tests)" "$out"
      else
        skip "podman --runtime $rt: gate tests" "$rt can't run any container on this host (not a csrun feature): $(printf '%s' "$out" | tail -n 1)"
      fi
      continue
    fi
    runtimes+=("$rt")
    out=$(podman_rt "$rt" run --rm --network none --annotation run.csrun.gate=true \
      -v "$PD/good.py:/job.py:ro" "$IMAGE" python3 /job.py 2>&1)
    [ $? = 0 ] && [ "$out" = "hello from the job" ] \
      && ok "podman --runtime $rt: a clean job passes the gate and runs" \
      || not_ok "podman --runtime $rt: a clean job passes the gate and runs" "$out"
    # The refusal must reach the user whatever the runtime does with the
    # hook's stderr (runc and csrun pass it on, crun does not): podman logs.
    name=csrun-hook-gate-$tried
    out=$(podman_rt "$rt" run --name "$name" --network none --annotation run.csrun.gate=true \
      -v "$PD/bad.py:/job.py:ro" "$IMAGE" python3 /job.py 2>&1)
    local prc=$?
    logs=$("${P[@]}" logs "$name" 2>&1)
    if [ "$prc" != 0 ] && grep -q 'csrun hook: /job.py:3: dangerous-call: os.system()' <<<"$logs" \
      && grep -q 'csrun hook: /job.py: blocked by the gate' <<<"$logs" \
      && { [ "$rtname" = crun ] || grep -q 'csrun hook: /job.py:3: dangerous-call: os.system()' <<<"$out"; }; then
      ok "podman --runtime $rt: a job calling os.system is refused; the violation is in podman logs$([ "$rtname" = crun ] || echo ' and on stderr')"
    else
      not_ok "podman --runtime $rt: a job calling os.system is refused with the violation" \
        "podman exit $prc" "run: $out" "logs: $logs"
    fi
    "${P[@]}" rm -f "$name" > /dev/null 2>&1
  done
  [ "$tried" -gt 0 ] || skip "podman gate tests" "no OCI runtime found"
  [ "${#runtimes[@]}" -gt 0 ] || return
  # The rest with one runtime: the first that needs no mask (else crun, under it).
  rt=${runtimes[0]}
  RT_MASK=$PD/empty-controllers
  local r
  for r in "${runtimes[@]}"; do
    if ! { "$r" --version 2>/dev/null | head -n 1 | grep -q '^crun version' && crun_needs_mask; }; then
      rt=$r
      RT_MASK=
      break
    fi
  done

  out=$(podman_rt "$rt" run --rm --network none -v "$PD/bad.py:/job.py:ro" "$IMAGE" \
    python3 /job.py 2>&1)
  grep -q 'csrun hook' <<<"$out" \
    && not_ok "podman: without the annotation the hook does not run" "$out" \
    || ok "podman: without the annotation the hook does not run"

  # poststop: podman runs it itself (any runtime), on the container's k8s-file log.
  for job in silent good; do
    name=csrun-hook-scan-$job
    podman_rt "$rt" run --name "$name" --network none --annotation run.csrun.scan=true \
      -v "$PD/$job.py:/job.py:ro" "$IMAGE" python3 /job.py > "$PD/$job.out" 2>&1
    bundle=$("${P[@]}" inspect "$name" --format '{{.StaticDir}}' 2>/dev/null)
    v=$bundle/csrun-verdict.json
    for _ in $(seq 50); do
      [ -s "$v" ] && break
      sleep 0.2
    done
    if [ "$job" = silent ]; then
      want="('silent_failure', 'Empty DataFrame', '$bundle/ctr.log')"
      desc="podman: poststop finds 'Empty DataFrame' in the container's log"
    else
      want="('ok', None, '$bundle/ctr.log')"
      desc="podman: poststop gives a clean job status ok"
    fi
    got=$(json_get "$v" '(j["status"], j["line"], j["log"])' 2>&1)
    [ -n "$bundle" ] && [ "$got" = "$want" ] && ok "$desc" \
      || not_ok "$desc" "got:  $got" "want: $want" "$(cat "$PD/$job.out")"
    "${P[@]}" rm -f "$name" > /dev/null 2>&1
  done
}

podman_cleanup () {
  [ -n "${PODMAN_DIR:-}" ] || return 0
  "${P[@]}" rm -af -t 0 > /dev/null 2>&1
  "${P[@]}" rmi -af > /dev/null 2>&1
  # Anything containers/storage left mounted under the test's directory.
  findmnt -rn -o TARGET | grep "^$PODMAN_DIR/" | sort -r | while read -r m; do
    umount -l "$m" 2> /dev/null
  done
}

if ! is_root; then
  skip "podman: hooks.d gate and scan" "n/a: podman tests need root"
elif ! command -v podman > /dev/null 2>&1; then
  skip "podman: hooks.d gate and scan" "podman is not installed"
elif ! command -v zstd > /dev/null 2>&1; then
  skip "podman: hooks.d gate and scan" "zstd is not installed (to import the rootfs)"
else
  trap 'podman_cleanup; podman_cgroups_restore; _tap_cleanup' EXIT
  podman_cgroups_mark
  podman_tests
fi

done_testing
