# tests/llm/lib.sh — drive the fake LLM server (tests/llm/server.py) from bash tests.
#
#   . "$CSRUN_SRCDIR/tests/llm/lib.sh"
#   llm_server_start SCRIPT.json [--key KEY] [--tls-cert C --tls-key K] ...
#       Starts the server in the background (call it in the test's own shell,
#       not in $(...) or a pipeline) and waits up to 10 s for it to listen.
#       Exports LLM_PORT, LLM_URL (http://127.0.0.1:PORT, https:// with
#       --tls-cert), LLM_LOG (the JSON-lines request log), LLM_PID and
#       LLM_DIR (its temporary directory: port, log.jsonl, server.err).
#       A server already running is stopped first.  Returns non-zero (with
#       the server's stderr on ours) when it does not come up.
#   llm_server_stop          Stops LLM_PID (SIGTERM by pid, SIGKILL after 5 s)
#                            and waits for it; returns its exit status (0: a
#                            clean stop).  LLM_LOG stays readable afterwards.
#   llm_shape_errors [LOG]   Prints every shape error, one per line
#                            ("request N (PROVIDER METHOD PATH): ERROR");
#                            nothing when there are none.
#   llm_requests [LOG]       Prints the number of logged requests.
#   llm_log_get N EXPR [LOG] Prints the Python expression EXPR evaluated with
#                            `r` bound to logged request N (1-based; -1: the
#                            last), e.g. llm_log_get 1 'r["body"]["model"]'.
#   llm_make_ca DIR          Makes DIR/ca.pem, DIR/server.pem, DIR/server.key
#                            (a throwaway CA and a server certificate for
#                            IP:127.0.0.1 and DNS:localhost) with openssl.
#
# Cleanup: llm_server_start installs an EXIT trap that stops the server and
# removes its directories, then runs whatever EXIT trap was there before
# (e.g. tests/lib/tap.sh's), with the exit status unchanged.  A test that sets
# its own EXIT trap after starting a server replaces ours, and must then call
# llm_server_stop itself.  The server also stops by itself when the shell that
# started it is gone (--parent-pid) and after LLM_SERVER_LIFETIME seconds
# (default 900), so a killed test never leaves it behind.
#
# Needs python3 (standard library only; LLM_PYTHON names another
# interpreter); llm_make_ca needs openssl (Debian package "openssl").

LLM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The interpreter itself, not a wrapper (a pyenv shim costs 0.2 s a call).
LLM_PYTHON=${LLM_PYTHON:-$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)}
LLM_PYTHON=${LLM_PYTHON:-python3}
LLM_PID=${LLM_PID:-}
_LLM_DIRS=()
_LLM_PREV_EXIT_TRAP=

_llm_on_exit () {
  local rc=$?
  # We are exiting anyway: a failure here must not cut the cleanup short.
  set +e
  if [ -n "${LLM_PID:-}" ]; then
    llm_server_stop >/dev/null 2>&1
  fi
  local d
  for d in "${_LLM_DIRS[@]+"${_LLM_DIRS[@]}"}"; do
    rm -rf -- "$d"
  done
  _LLM_DIRS=()
  if [ -n "$_LLM_PREV_EXIT_TRAP" ]; then
    # Give the previous trap the exit status it would have seen.
    ( exit "$rc" )
    eval "$_LLM_PREV_EXIT_TRAP"
  fi
  return "$rc"
}

_llm_install_trap () {
  local cur
  cur=$(trap -p EXIT)
  case $cur in
    *_llm_on_exit*) return 0 ;;
  esac
  if [ "${BASHPID:-$$}" != "$$" ]; then
    # A subshell: `trap -p` shows the parent's trap, which would not run
    # when the subshell exits, so it must not be chained here either.
    _LLM_PREV_EXIT_TRAP=
  elif [ -n "$cur" ]; then
    # `trap -p` prints: trap -- 'COMMAND' EXIT
    local -a words=()
    eval "words=( $cur )"
    _LLM_PREV_EXIT_TRAP=${words[2]:-}
  else
    _LLM_PREV_EXIT_TRAP=
  fi
  trap _llm_on_exit EXIT
}

llm_server_start () {
  if [ "$#" -lt 1 ]; then
    echo "llm_server_start: usage: llm_server_start SCRIPT.json [server args...]" >&2
    return 2
  fi
  local script=$1
  shift
  if [ ! -r "$script" ]; then
    echo "llm_server_start: cannot read the script $script" >&2
    return 2
  fi
  if [ -n "${LLM_PID:-}" ]; then
    llm_server_stop >/dev/null 2>&1
  fi
  _llm_install_trap
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/csrun-llm.XXXXXX") || return 1
  _LLM_DIRS+=("$dir")
  local scheme=http arg
  for arg in "$@"; do
    if [ "$arg" = "--tls-cert" ]; then
      scheme=https
    fi
  done
  "$LLM_PYTHON" "$LLM_LIB_DIR/server.py" --script "$script" --port-file "$dir/port" \
    --log "$dir/log.jsonl" --parent-pid "$$" --lifetime "${LLM_SERVER_LIFETIME:-900}" "$@" \
    </dev/null >"$dir/server.out" 2>"$dir/server.err" &
  LLM_PID=$!
  export LLM_PID
  export LLM_DIR="$dir"
  export LLM_LOG="$dir/log.jsonl"
  local i
  for ((i = 0; i < 100; i++)); do
    if [ -s "$dir/port" ]; then
      break
    fi
    if ! kill -0 "$LLM_PID" 2>/dev/null; then
      break
    fi
    sleep 0.1
  done
  if [ ! -s "$dir/port" ]; then
    echo "llm_server_start: the fake LLM server did not start:" >&2
    sed 's/^/  /' "$dir/server.err" >&2
    llm_server_stop >/dev/null 2>&1
    return 1
  fi
  LLM_PORT=$(tr -d '[:space:]' <"$dir/port")
  export LLM_PORT
  export LLM_URL="$scheme://127.0.0.1:$LLM_PORT"
  return 0
}

llm_server_stop () {
  local pid=${LLM_PID:-}
  if [ -z "$pid" ]; then
    return 0
  fi
  LLM_PID=
  local i rc=0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      break
    fi
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "llm_server_stop: server $pid ignored SIGTERM; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  # `wait` reaps it (and gives its status) when it is this shell's child.
  wait "$pid" 2>/dev/null || rc=$?
  # 127: not our child (started in another shell); nothing more to know.
  if [ "$rc" -eq 127 ]; then
    rc=0
  fi
  return "$rc"
}

llm_shape_errors () {
  local log=${1:-${LLM_LOG:-}}
  if [ -z "$log" ] || [ ! -e "$log" ]; then
    return 0
  fi
  "$LLM_PYTHON" - "$log" <<'EOF'
import json, sys
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        line = line.strip()
        if not line:
            continue
        try:
            r = json.loads(line)
        except ValueError:
            print("log: unreadable line: %s" % line[:200])
            continue
        for e in r.get("shape_errors") or []:
            print("request %s (%s %s %s): %s" % (r.get("n"), r.get("provider"), r.get("method"), r.get("path"), e))
EOF
}

llm_requests () {
  local log=${1:-${LLM_LOG:-}}
  if [ -z "$log" ] || [ ! -e "$log" ]; then
    echo 0
    return 0
  fi
  "$LLM_PYTHON" -c 'import sys; print(sum(1 for l in open(sys.argv[1], encoding="utf-8") if l.strip()))' "$log"
}

llm_log_get () {
  if [ "$#" -lt 2 ]; then
    echo "llm_log_get: usage: llm_log_get N EXPR [LOG]" >&2
    return 2
  fi
  local log=${3:-${LLM_LOG:-}}
  "$LLM_PYTHON" - "$log" "$1" "$2" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
n = int(sys.argv[2])
r = rows[n - 1 if n > 0 else n]
print(eval(sys.argv[3]))
EOF
}

llm_make_ca () {
  if [ "$#" -ne 1 ]; then
    echo "llm_make_ca: usage: llm_make_ca DIR" >&2
    return 2
  fi
  local dir=$1
  if ! command -v openssl >/dev/null 2>&1; then
    echo "llm_make_ca: openssl is not installed (Debian package: openssl)" >&2
    return 1
  fi
  mkdir -p -- "$dir" || return 1
  (
    set -e
    cd "$dir"
    umask 077
    cat >ca.cnf <<'EOF'
[req]
distinguished_name = dn
prompt = no
x509_extensions = v3_ca
[dn]
CN = csrun test CA (throwaway)
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EOF
    cat >server.ext <<'EOF'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
EOF
    openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -keyout ca.key -out ca.pem -days 2 -config ca.cnf
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -keyout server.key -out server.csr -subj "/CN=127.0.0.1"
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
      -out server.pem -days 2 -extfile server.ext
    chmod 644 ca.pem server.pem
    rm -f server.csr ca.srl ca.cnf server.ext
  ) >"$dir/openssl.log" 2>&1 || {
    echo "llm_make_ca: openssl failed:" >&2
    sed 's/^/  /' "$dir/openssl.log" >&2
    return 1
  }
  return 0
}
