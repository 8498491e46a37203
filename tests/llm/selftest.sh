#!/bin/bash
# tests/llm/selftest.sh — TAP self-test of the fake LLM server (server.py)
# and its bash helpers (lib.sh).  Needs python3; the TLS tests need openssl
# (Debian package "openssl") and use curl too when it is installed.
#
#   bash tests/llm/selftest.sh
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/llm/lib.sh
. "$HERE/lib.sh"

N=0
FAILED=0
ok () { N=$((N + 1)); echo "ok $N - $1"; }
not_ok () {
  N=$((N + 1))
  FAILED=$((FAILED + 1))
  echo "not ok $N - $1"
  shift
  local l
  for l in "$@"; do
    printf '%s\n' "$l" | head -c 3000 | sed 's/^/# /'
  done
}
skip () { N=$((N + 1)); echo "ok $N - $1 # SKIP $2"; }

T=$(mktemp -d "${TMPDIR:-/tmp}/csrun-llm-selftest.XXXXXX")
trap 'rm -rf -- "$T"' EXIT # lib.sh chains its own cleanup in front of this one

KEY="sk-test-SECRET-0123456789"

# A small HTTP client: prints {"status", "headers", "text", "json", "elapsed", "error"}.
cat >"$T/client.py" <<'EOF'
import argparse, json, ssl, sys, time, urllib.error, urllib.request
ap = argparse.ArgumentParser()
ap.add_argument("url")
ap.add_argument("-X", dest="method", default="POST")
ap.add_argument("-H", dest="headers", action="append", default=[])
ap.add_argument("-d", dest="data")
ap.add_argument("--cafile")
ap.add_argument("--strict", action="store_true")
ap.add_argument("--timeout", type=float, default=10)
a = ap.parse_args()
ctx = None
if a.url.startswith("https:"):
    ctx = ssl.create_default_context(cafile=a.cafile) if a.cafile else ssl.create_default_context()
    if a.strict:
        ctx.verify_flags |= ssl.VERIFY_X509_STRICT
hdrs = dict(h.split(": ", 1) for h in a.headers)
data = a.data.encode() if a.data is not None else None
req = urllib.request.Request(a.url, data=data, headers=hdrs, method=a.method)
out = {"status": None, "headers": {}, "text": None, "json": None, "error": None}
t0 = time.monotonic()
try:
    try:
        resp = urllib.request.urlopen(req, timeout=a.timeout, context=ctx)
    except urllib.error.HTTPError as e:
        resp = e
    out["status"] = resp.status if hasattr(resp, "status") else resp.code
    out["headers"] = {k.lower(): v for k, v in resp.headers.items()}
    out["text"] = resp.read().decode("utf-8", "replace")
    try:
        out["json"] = json.loads(out["text"])
    except ValueError:
        pass
except Exception as e:  # timeouts, TLS failures, refused connections
    out["error"] = "%s: %s" % (type(e).__name__, e)
out["elapsed"] = time.monotonic() - t0
print(json.dumps(out))
EOF

# call NAME URL [client args...]: run one request, keep the result in $T/NAME.json.
call () {
  local name=$1
  shift
  "$LLM_PYTHON" "$T/client.py" "$@" >"$T/$name.json"
}

# check NAME DESC EXPR: pass when the Python expression EXPR (j: the response
# of call NAME; also r: the last log entry) is true.
check () {
  local name=$1 desc=$2 expr=$3 out
  if out=$("$LLM_PYTHON" - "$T/$name.json" "$expr" "${LLM_LOG:-/dev/null}" 2>&1 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
r = rows[-1] if rows else None
sys.exit(0 if eval(sys.argv[2]) else 1)
EOF
  ); then
    ok "$desc"
  else
    not_ok "$desc" "expected: $expr" "response: $(cat "$T/$name.json")" "$out"
  fi
}

expect () {
  # expect DESC COMMAND...: pass when the command succeeds.
  local desc=$1 out
  shift
  if out=$("$@" 2>&1); then
    ok "$desc"
  else
    not_ok "$desc" "command: $*" "$out"
  fi
}

gone () {
  # A process that has exited (or is a zombie nobody reaped yet).
  local pid=$1 state
  kill -0 "$pid" 2>/dev/null || return 0
  state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
  [ "$state" = Z ]
}

OPENAI_BODY='{"model":"gpt-4o-mini","messages":[{"role":"system","content":"Fix the code."},{"role":"user","content":"print(1"}],"temperature":0,"max_tokens":4096}'
ANTHROPIC_BODY='{"model":"claude-sonnet-4-5","max_tokens":4096,"system":"Fix the code.","messages":[{"role":"user","content":"print(1"}],"temperature":0}'
GEMINI_BODY='{"systemInstruction":{"parts":[{"text":"Fix the code."}]},"contents":[{"role":"user","parts":[{"text":"print(1"}]}],"generationConfig":{"temperature":0,"maxOutputTokens":4096}}'
OLLAMA_BODY='{"model":"llama3.2","messages":[{"role":"system","content":"Fix the code."},{"role":"user","content":"print(1"}],"stream":false,"options":{"temperature":0}}'
JSON='Content-Type: application/json'

openai () { call "$1" "$LLM_URL/v1/chat/completions" -H "Authorization: Bearer $KEY" -H "$JSON" -d "$OPENAI_BODY" "${@:2}"; }
anthropic () { call "$1" "$LLM_URL/v1/messages" -H "x-api-key: $KEY" -H "anthropic-version: 2023-06-01" -H "$JSON" -d "$ANTHROPIC_BODY" "${@:2}"; }
gemini () { call "$1" "$LLM_URL/v1beta/models/gemini-2.5-flash:generateContent" -H "x-goog-api-key: $KEY" -H "$JSON" -d "$GEMINI_BODY" "${@:2}"; }
ollama () { call "$1" "$LLM_URL/api/chat" -H "$JSON" -d "$OLLAMA_BODY" "${@:2}"; }

start_time=$(date +%s.%N)

# ------------------------------------------------------------------ a bad script
echo '[{"reply": "x"}, {"kind": "nonsense"}]' >"$T/bad-script.json"
if out=$(llm_server_start "$T/bad-script.json" 2>&1); then
  not_ok "a script with an unknown kind is refused" "started: $out"
  llm_server_stop
else
  case $out in
    *"unknown kind"*) ok "a script with an unknown kind is refused" ;;
    *) not_ok "a script with an unknown kind is refused" "$out" ;;
  esac
fi

# ------------------------------------------------------------------ the main server
cat >"$T/script.json" <<'EOF'
[
  {"reply": "openai says hi", "input_tokens": 12, "output_tokens": 3},
  {"reply": "anthropic says hi"},
  {"reply": "gemini says hi"},
  {"reply": "ollama says hi"},
  {"reply": "after the bad requests", "comment": "shape errors consume no step"},
  {"kind": "rate_limit", "retry_after": 1},
  {"kind": "rate_limit", "retry_after": 2},
  {"kind": "quota"},
  {"kind": "quota"},
  {"kind": "quota"},
  {"kind": "quota"},
  {"kind": "overloaded"},
  {"kind": "server_error", "status": 503},
  {"kind": "malformed"},
  {"kind": "blocked"},
  {"kind": "blocked"},
  {"kind": "auth"},
  {"status": 418, "headers": {"X-Test": "yes"}, "body": {"hello": "world"}},
  {"status": 200, "body": "plain text"},
  {"reply": "slow", "delay": 1},
  {"reply": "too slow", "delay": 1.5},
  {"reply": "parallel", "delay": 1},
  {"reply": "parallel", "delay": 1}
]
EOF

if llm_server_start "$T/script.json" --key "$KEY"; then
  ok "the server starts (port $LLM_PORT)"
else
  not_ok "the server starts"
  echo "1..$N"
  exit 1
fi
expect "LLM_URL, LLM_PORT, LLM_LOG and LLM_PID are set" \
  test "$LLM_URL" = "http://127.0.0.1:$LLM_PORT" -a -f "$LLM_LOG" -a -n "$LLM_PID"
expect "no request logged yet" test "$(llm_requests)" = 0

# Good requests, one per provider.
openai o1
check o1 "openai: the reply is wrapped in choices[0].message.content" \
  'j["status"] == 200 and j["json"]["choices"][0]["message"]["content"] == "openai says hi" and j["json"]["usage"]["prompt_tokens"] == 12 and j["json"]["usage"]["completion_tokens"] == 3'
anthropic a1
check a1 "anthropic: the reply is in content[0].text with usage" \
  'j["status"] == 200 and j["json"]["content"] == [{"type": "text", "text": "anthropic says hi"}] and "input_tokens" in j["json"]["usage"] and "output_tokens" in j["json"]["usage"]'
gemini g1
check g1 "gemini: the reply is in candidates[0].content.parts with usageMetadata" \
  'j["status"] == 200 and j["json"]["candidates"][0]["content"]["parts"][0]["text"] == "gemini says hi" and "candidatesTokenCount" in j["json"]["usageMetadata"]'
ollama l1
check l1 "ollama: the reply is in message.content with eval counts" \
  'j["status"] == 200 and j["json"]["message"]["content"] == "ollama says hi" and j["json"]["done"] is True and "prompt_eval_count" in j["json"] and "eval_count" in j["json"]'
expect "no shape errors for the good requests" test -z "$(llm_shape_errors)"
check l1 "the log records provider, lower-case headers, the parsed body and the step" \
  'r["n"] == 4 and r["provider"] == "ollama" and r["method"] == "POST" and r["path"] == "/api/chat" and r["body"]["stream"] is False and r["step"] == {"reply": "ollama says hi"} and r["step_index"] == 4 and r["shape_errors"] == [] and r["headers"]["content-type"] == "application/json"'
expect "llm_log_get reads one request" test "$(llm_log_get 3 'r["path"]')" = "/v1beta/models/gemini-2.5-flash:generateContent"
expect "the openai key went in the Authorization header" test "$(llm_log_get 1 'r["headers"]["authorization"]')" = "Bearer $KEY"

# Bad requests: 400, a shape error, no step consumed.
bad () {
  # bad NAME DESC PATTERN: expects a 400 whose message names PATTERN, and the same in the log.
  local name=$1 desc=$2 pat=$3 status=${4:-400}
  check "$name" "$desc" "j[\"status\"] == $status and j[\"json\"][\"error\"][\"message\"].startswith(\"shape: \") and $pat in j[\"json\"][\"error\"][\"message\"] and any($pat in e for e in r[\"shape_errors\"]) and r[\"step\"] is None"
}
call b1 "$LLM_URL/v1/chat/completions" -H "Authorization: Bearer sk-wrong-key-000" -H "$JSON" -d "$OPENAI_BODY"
bad b1 "openai with a wrong key: 400 and a shape error" '"wrong API key"'
call b2 "$LLM_URL/v1beta/models/gemini-2.5-flash:generateContent?key=$KEY" -H "x-goog-api-key: $KEY" -H "$JSON" -d "$GEMINI_BODY"
bad b2 "gemini with key= in the query: 400 and a shape error" '"key="'
check b2 "... and the key in the URL is reported too" '"the API key appears in the URL" in r["shape_errors"]'
call b3 "$LLM_URL/api/chat" -H "$JSON" -d '{"model":"llama3.2","messages":[{"role":"user","content":"hi"}]}'
bad b3 "ollama without stream: 400 and a shape error" '"stream"'
call b4 "$LLM_URL/api/chat" -H "$JSON" -d '{"model":"llama3.2","messages":[{"role":"user","content":"hi"}],"stream":true}'
bad b4 "ollama with stream true: 400 and a shape error" '"stream"'
call b5 "$LLM_URL/v1/messages" -H "x-api-key: $KEY" -H "anthropic-version: 2023-06-01" -H "$JSON" \
  -d '{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}'
bad b5 "anthropic without max_tokens: 400 and a shape error" '"max_tokens"'
call b6 "$LLM_URL/v1/messages" -H "x-api-key: $KEY" -H "$JSON" -d "$ANTHROPIC_BODY"
bad b6 "anthropic without anthropic-version: 400" '"anthropic-version"'
call b7 "$LLM_URL/v1/chat/completions?api_key=$KEY" -H "Authorization: Bearer $KEY" -H "$JSON" -d "$OPENAI_BODY"
bad b7 "openai with the key in the URL: 400" '"the API key appears in the URL"'
call b8 "$LLM_URL/v1/chat/completions" -H "Authorization: Bearer $KEY" -H "$JSON" \
  -d '{"model":"","messages":[{"role":"system","content":"x"}],"temprature":0}'
check b8 "openai: empty model, no user message, unknown field: three shape errors" \
  'j["status"] == 400 and any("model" in e for e in r["shape_errors"]) and any("user" in e for e in r["shape_errors"]) and any("temprature" in e for e in r["shape_errors"])'
call b9 "$LLM_URL/v1/chat/completions" -H "Authorization: Bearer $KEY" -H "$JSON" -d '{"model": "x", '
bad b9 "a body that is not JSON: 400" '"not valid JSON"'
call b10 "$LLM_URL/v1/completions" -H "Authorization: Bearer $KEY" -H "$JSON" -d "$OPENAI_BODY"
bad b10 "an unknown endpoint: 404 and a shape error" '"unknown endpoint"' 404
call b11 "$LLM_URL/v1beta/models/:generateContent" -H "x-goog-api-key: $KEY" -H "$JSON" -d "$GEMINI_BODY"
bad b11 "gemini with an empty model in the path: 400" '"empty model"'
call b12 "$LLM_URL/v1/chat/completions" -H "Authorization: Bearer $KEY" -H "Content-Type: text/plain" -d "$OPENAI_BODY"
bad b12 "openai without a JSON Content-Type: 400" '"Content-Type"'
openai o2
check o2 "shape errors consume no step: the next good request gets the next reply" \
  'j["status"] == 200 and j["json"]["choices"][0]["message"]["content"] == "after the bad requests" and r["step_index"] == 5'
expect "llm_shape_errors lists the bad requests" \
  test "$(llm_shape_errors | cut -d' ' -f2 | sort -un | wc -l)" = 12

# Error steps.
openai e1
check e1 "rate_limit: openai 429 with Retry-After: 1" \
  'j["status"] == 429 and j["headers"].get("retry-after") == "1" and j["json"]["error"]["code"] == "rate_limit_exceeded"'
gemini e2
check e2 "rate_limit: gemini RESOURCE_EXHAUSTED with RetryInfo 2s and no per-day quota" \
  'j["status"] == 429 and j["json"]["error"]["status"] == "RESOURCE_EXHAUSTED" and {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"} in j["json"]["error"]["details"] and "PerDay" not in j["text"] and j["headers"].get("retry-after") == "2"'
openai e3
check e3 "quota: openai 429 insufficient_quota" \
  'j["status"] == 429 and j["json"]["error"]["type"] == "insufficient_quota" and j["json"]["error"]["code"] == "insufficient_quota"'
anthropic e4
check e4 "quota: anthropic 400 enforced_spend_limit_reached" \
  'j["status"] == 400 and j["json"]["type"] == "error" and j["json"]["error"]["type"] == "invalid_request_error" and j["json"]["error"]["message"].startswith("enforced_spend_limit_reached")'
gemini e5
check e5 "quota: gemini 429 with a per-day QuotaFailure" \
  'j["status"] == 429 and [v["quotaId"] for d in j["json"]["error"]["details"] if d["@type"].endswith("QuotaFailure") for v in d["violations"]] == ["GenerateRequestsPerDayPerProjectPerModel-FreeTier"]'
ollama e6
check e6 "quota: ollama 429 quota exceeded" 'j["status"] == 429 and j["json"] == {"error": "quota exceeded"}'
anthropic e7
check e7 "overloaded: 529 overloaded_error" 'j["status"] == 529 and j["json"]["error"]["type"] == "overloaded_error"'
gemini e8
check e8 "server_error 503: gemini UNAVAILABLE" 'j["status"] == 503 and j["json"]["error"]["status"] == "UNAVAILABLE"'
openai e9
check e9 "malformed: 200 with a body that is not JSON" 'j["status"] == 200 and j["json"] is None and j["text"]'
gemini e10
check e10 "blocked: gemini 200 promptFeedback.blockReason SAFETY, no candidates" \
  'j["status"] == 200 and j["json"]["promptFeedback"]["blockReason"] == "SAFETY" and "candidates" not in j["json"]'
openai e11
check e11 "blocked: openai 400" 'j["status"] == 400 and "error" in j["json"]'
anthropic e12
check e12 "auth: 401 whose message quotes the key sent" \
  "j[\"status\"] == 401 and j[\"json\"][\"error\"][\"type\"] == \"authentication_error\" and \"$KEY\" in j[\"json\"][\"error\"][\"message\"]"
openai e13
check e13 "raw step: status, headers and an object body" \
  'j["status"] == 418 and j["headers"].get("x-test") == "yes" and j["json"] == {"hello": "world"}'
ollama e14
check e14 "raw step: a string body is sent as is" 'j["status"] == 200 and j["text"] == "plain text"'

# Delays.
openai d1
check d1 "delay 1: the answer comes after about a second" \
  'j["status"] == 200 and j["json"]["choices"][0]["message"]["content"] == "slow" and 0.9 <= j["elapsed"] < 3'
openai d2 --timeout 0.3
check d2 "delay 1.5 and a client timeout of 0.3 s: the client times out, the request is logged" \
  'j["status"] is None and "timed out" in j["error"] and r["step"]["reply"] == "too slow"'
t0=$(date +%s.%N)
openai p1 &
p1=$!
anthropic p2 &
p2=$!
wait "$p1" "$p2"
t1=$(date +%s.%N)
check p1 "concurrent requests: first delayed reply" 'j["status"] == 200'
check p2 "concurrent requests: second delayed reply" 'j["status"] == 200'
expect "concurrent requests are served in parallel (two 1 s delays in < 1.8 s)" \
  "$LLM_PYTHON" -c "import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) < 1.8 else 1)" "$t0" "$t1"

# Exhaustion.
gemini x1
check x1 "script exhausted: 500 and a logged shape error" \
  'j["status"] == 500 and j["json"]["error"]["message"] == "script exhausted" and r["shape_errors"] == ["script exhausted"]'
expect "llm_requests counts every request" test "$(llm_requests)" = 36

pid=$LLM_PID
if llm_server_stop; then
  ok "llm_server_stop: the server exits cleanly (status 0) on SIGTERM"
else
  not_ok "llm_server_stop: the server exits cleanly on SIGTERM" "status $?" "$(cat "$LLM_DIR/server.err")"
fi
expect "the server process is gone" gone "$pid"
expect "the log is still readable after the stop" test "$(llm_requests)" = 36

# ------------------------------------------------------------------ the EXIT trap chains
cat >"$T/trap-test.sh" <<EOF
set -u
trap 'echo "previous trap ran, status \$?"' EXIT
. "$HERE/lib.sh"
llm_server_start "$T/script.json" || exit 9
echo "pid \$LLM_PID dir \$LLM_DIR"
exit 3
EOF
out=$(bash "$T/trap-test.sh" 2>&1)
rc=$?
tpid=$(printf '%s\n' "$out" | sed -n 's/^pid \([0-9]*\) .*/\1/p')
tdir=$(printf '%s\n' "$out" | sed -n 's/^pid [0-9]* dir \(.*\)$/\1/p')
if [ "$rc" = 3 ] && [[ $out == *"previous trap ran, status 3"* ]] && [ -n "$tpid" ] && gone "$tpid" && [ ! -e "$tdir" ]; then
  ok "the EXIT trap stops the server, removes its directory and runs the previous trap"
else
  not_ok "the EXIT trap stops the server, removes its directory and runs the previous trap" "rc=$rc" "$out"
fi

# ------------------------------------------------------------------ a killed test leaves no server
out=$(bash -c '. "$1"; llm_server_start "$2" >/dev/null || exit 9; echo "$LLM_PID $LLM_DIR"; kill -KILL $$' _ "$HERE/lib.sh" "$T/script.json" 2>/dev/null)
kpid=$(printf '%s\n' "$out" | head -n 1 | cut -d' ' -f1)
kdir=$(printf '%s\n' "$out" | head -n 1 | cut -d' ' -f2-)
for ((i = 0; i < 30; i++)); do
  if [ -n "$kpid" ] && gone "$kpid"; then
    break
  fi
  sleep 0.1
done
if [ -n "$kpid" ] && gone "$kpid"; then
  ok "the server stops by itself when the shell that started it is killed"
else
  not_ok "the server stops by itself when the shell that started it is killed" "pid '$kpid'"
  [ -n "$kpid" ] && kill -TERM "$kpid" 2>/dev/null
fi
# Its EXIT trap never ran: remove its directory here.
case $kdir in
  */csrun-llm.*) rm -rf -- "$kdir" ;;
esac

# ------------------------------------------------------------------ TLS
if ! command -v openssl >/dev/null 2>&1; then
  skip "TLS tests" "openssl is not installed (Debian package: openssl)"
else
  if llm_make_ca "$T/ca"; then
    ok "llm_make_ca makes a CA and a server certificate"
  else
    not_ok "llm_make_ca makes a CA and a server certificate"
  fi
  expect "the server certificate verifies against the CA for IP 127.0.0.1" \
    openssl verify -CAfile "$T/ca/ca.pem" -x509_strict -purpose sslserver -verify_ip 127.0.0.1 "$T/ca/server.pem"
  echo '[{"reply": "over tls"}, {"reply": "curl over tls"}]' >"$T/tls-script.json"
  if llm_server_start "$T/tls-script.json" --key "$KEY" --tls-cert "$T/ca/server.pem" --tls-key "$T/ca/server.key"; then
    ok "the TLS server starts ($LLM_URL)"
    openai s1 --cafile "$T/ca/ca.pem" --strict
    check s1 "TLS with the generated CA (strict X.509 checks): the reply comes back" \
      'j["status"] == 200 and j["json"]["choices"][0]["message"]["content"] == "over tls" and r["tls"] is True'
    openai s2
    check s2 "TLS without the CA: certificate verification fails" \
      'j["status"] is None and "CERTIFICATE_VERIFY_FAILED" in j["error"]'
    call s3 "http://127.0.0.1:$LLM_PORT/v1/chat/completions" -H "Authorization: Bearer $KEY" -H "$JSON" -d "$OPENAI_BODY" --timeout 3
    check s3 "plain HTTP to the TLS server fails" 'j["status"] is None'
    if command -v curl >/dev/null 2>&1; then
      code=$(curl -sS -o "$T/curl.out" -w '%{http_code}' --cacert "$T/ca/ca.pem" \
        -H "Authorization: Bearer $KEY" -H "$JSON" --data "$OPENAI_BODY" "$LLM_URL/v1/chat/completions" 2>&1)
      if [ "$code" = 200 ] && grep -q '"curl over tls"' "$T/curl.out"; then
        ok "curl (libcurl) with --cacert accepts the certificate"
      else
        not_ok "curl (libcurl) with --cacert accepts the certificate" "$code" "$(cat "$T/curl.out")"
      fi
      curl -sS -o /dev/null --max-time 5 -H "$JSON" --data "$OPENAI_BODY" "$LLM_URL/v1/chat/completions" 2>/dev/null
      rc=$?
      if [ "$rc" = 60 ]; then
        ok "curl without the CA refuses the certificate (exit 60)"
      else
        not_ok "curl without the CA refuses the certificate (exit 60)" "curl exit $rc"
      fi
    else
      skip "curl with the CA" "curl is not installed"
    fi
    expect "only the requests that got through TLS are logged, without shape errors" \
      test "$(llm_requests)" = 2 -a -z "$(llm_shape_errors)"
    if llm_server_stop; then
      ok "the TLS server stops cleanly"
    else
      not_ok "the TLS server stops cleanly" "status $?"
    fi
  else
    not_ok "the TLS server starts"
  fi
fi

end_time=$(date +%s.%N)
diag_time=$("$LLM_PYTHON" -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start_time" "$end_time")
echo "# took $diag_time s"
echo "1..$N"
[ "$FAILED" -eq 0 ]
