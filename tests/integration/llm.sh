#!/bin/bash
# LLM healing end to end: the real binary, real libcurl, and a local fake
# provider (tests/llm/server.py) that speaks each wire format, checks the
# shape of every request and replays scripted replies.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
. "$CSRUN_SRCDIR/tests/llm/lib.sh"

T=$(tmpdir)
KEY="sk-csrun-test-$$-do-not-leak-$RANDOM$RANDOM"
BAD='print("Result: " + 42)'
FIX='```python\nprint(\"Result: \" + str(42))\n```'

# No key or setting of the host may leak in; retries wait 1% of the usual backoff.
CLEAN_ENV=(env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u GEMINI_API_KEY -u DEEPSEEK_API_KEY
  -u OLLAMA_HOST -u CSRUN_LLM -u CSRUN_LLM_MODEL -u CSRUN_LLM_BASE_URL -u GOOGLE_API_KEY
  -u OPENAI_MODEL -u ANTHROPIC_MODEL -u GEMINI_MODEL -u DEEPSEEK_MODEL -u OLLAMA_MODEL
  CSRUN_LLM_BACKOFF_SCALE=0.01)
# More VAR=VALUE for the next run_llm (reset by it).
EXTRA_ENV=()

# run_llm NAME PROVIDER SCRIPT-JSON CODE [csrun options...]
#   Starts the fake provider with SCRIPT-JSON, runs `csrun run --json --no-heal`
#   with PROVIDER's key in the environment (PROVIDER "none": no key, no --llm),
#   stops the server.  Leaves $T/NAME.{json,err,log}, $rc, $nreq, $shape, $secs.
run_llm () {
  local name=$1 prov=$2 script=$3 code=$4
  shift 4
  printf '%s\n' "$script" >"$T/$name.script.json"
  printf '%s\n' "$code" >"$T/$name.py"
  rc=999 nreq=0 shape="" secs=0
  local keyarg=(--key "$KEY")
  case $prov in local-*) keyarg=(--no-key) ;; esac
  if ! llm_server_start "$T/$name.script.json" "${keyarg[@]}" 2>"$T/$name.server.err"; then
    shape="the fake provider did not start: $(cat "$T/$name.server.err")"
    return
  fi
  local envs=("${CLEAN_ENV[@]}") opts=()
  case $prov in
  openai) envs+=(OPENAI_API_KEY="$KEY") opts=(--llm openai --llm-base-url "$LLM_URL") ;;
  anthropic) envs+=(ANTHROPIC_API_KEY="$KEY") opts=(--llm anthropic --llm-base-url "$LLM_URL") ;;
  gemini) envs+=(GEMINI_API_KEY="$KEY") opts=(--llm gemini --llm-base-url "$LLM_URL") ;;
  deepseek) envs+=(DEEPSEEK_API_KEY="$KEY") opts=(--llm-base-url "$LLM_URL") ;;
  ollama) envs+=(OLLAMA_HOST="127.0.0.1:$LLM_PORT") opts=(--llm ollama) ;;
  auto-openai) envs+=(OPENAI_API_KEY="$KEY" CSRUN_LLM_BASE_URL="$LLM_URL") ;;
  local-openai) opts=(--llm openai --llm-base-url "$LLM_URL") ;;
  local-url) opts=(--llm-base-url "$LLM_URL") ;;
  none) ;;
  esac
  envs+=("${EXTRA_ENV[@]+"${EXTRA_ENV[@]}"}")
  EXTRA_ENV=()
  local t0 t1
  t0=$(date +%s%N)
  "${envs[@]}" "$CSRUN" run --json --no-heal "${opts[@]}" "$@" "$T/$name.py" \
    >"$T/$name.json" 2>"$T/$name.err" </dev/null
  rc=$?
  t1=$(date +%s%N)
  secs=$(((t1 - t0) / 1000000000))
  llm_server_stop >/dev/null 2>&1
  cp "$LLM_LOG" "$T/$name.log" 2>/dev/null || : >"$T/$name.log"
  nreq=$(llm_requests "$T/$name.log")
  shape=$(llm_shape_errors "$T/$name.log")
}
q () { json_get "$T/$1.json" "$2"; }
# expect NAME DESC WANT-RC WANT-REQUESTS PYTHON-EXPR WANT-VALUE
expect () {
  local name=$1 desc=$2 want_rc=$3 want_n=$4 expr=$5 want=$6 got
  got=$(q "$name" "$expr" 2>&1)
  if [ "$rc" = "$want_rc" ] && [ "$nreq" = "$want_n" ] && [ -z "$shape" ] && [ "$got" = "$want" ]; then
    ok "$desc"
  else
    not_ok "$desc" "exit $rc (want $want_rc), requests $nreq (want $want_n)" "got:  $got" \
      "want: $want" "shape errors: $shape" "$(head -c 3000 "$T/$name.json")" "$(cat "$T/$name.err")"
  fi
}
# The request body of request N of NAME, as the fake provider logged it.
req_body () { llm_log_get "$2" 'json.dumps(r["body"])' "$T/$1.log"; }

HEALED='(j["status"], j["attempts"][0]["patch"]["source"], j["attempts"][-1]["stdout"])'

# ---------------------------------------------------------------- each provider heals
for prov in openai anthropic gemini ollama; do
  run_llm "heal-$prov" "$prov" "[{\"reply\": \"Here is the fix:\\n$FIX\\n\"}]" "$BAD"
  expect "heal-$prov" "$prov: print(\"Result: \" + 42) heals through the model" 0 1 \
    "$HEALED + (j[\"attempts\"][0][\"patch\"][\"llm\"][\"provider\"], j[\"llm\"][\"calls\"])" \
    "('healed', 'llm', 'Result: 42\\n', '$prov', 1)"
done

# The prompt carries the code and the diagnosis.
body=$(req_body heal-openai 1)
if [[ $body == *'Result: \" + 42'* && $body == *TypeError* && $body == *'can only concatenate'* &&
  $body == *'Failing line: 1'* ]]; then
  ok "the prompt holds the code, the error type, the message and the failing line"
else
  not_ok "the prompt holds the code, the error type, the message and the failing line" "$body"
fi
# Models: the provider's default, a model after ':', CSRUN_LLM_MODEL.
m1=$(llm_log_get 1 'r["body"]["model"]' "$T/heal-anthropic.log")
m2=$(llm_log_get 1 'r["path"]' "$T/heal-gemini.log")
if [ "$m1" = claude-sonnet-4-5 ] && [ "$m2" = "/v1beta/models/gemini-2.5-flash:generateContent" ]; then
  ok "default models: anthropic $m1, gemini in the path"
else
  not_ok "default models" "anthropic: $m1" "gemini path: $m2"
fi
run_llm model openai "[{\"reply\": \"$FIX\"}]" "$BAD" --llm openai:my-model
expect model "--llm openai:my-model sends that model" 0 1 \
  '(j["status"], j["llm"]["model"], j["attempts"][0]["patch"]["llm"]["model"])' \
  "('healed', 'my-model', 'my-model')"
run_llm deepseek deepseek "[{\"reply\": \"$FIX\"}]" "$BAD" --llm deepseek
expect deepseek "deepseek: the openai wire with DEEPSEEK_API_KEY and model deepseek-chat" 0 1 \
  '(j["status"], j["llm"]["provider"], j["llm"]["model"])' "('healed', 'deepseek', 'deepseek-chat')"

# ---------------------------------------------------------------- reply shapes
run_llm raw openai '[{"reply": "print(\"Result: \" + str(42))"}]' "$BAD"
expect raw "a reply of bare code is used as it is" 0 1 "$HEALED" "('healed', 'llm', 'Result: 42\\n')"
run_llm prose openai '[{"reply": "The bug is the int.\n```\nprint(\"Result: \" + str(42))\n```\nThat is all."}]' "$BAD"
expect prose "prose around a plain fence: the code is taken from the fence" 0 1 "$HEALED" \
  "('healed', 'llm', 'Result: 42\\n')"
run_llm tokens anthropic "[{\"reply\": \"$FIX\", \"input_tokens\": 321, \"output_tokens\": 54}]" "$BAD"
expect tokens "tokens and latency are recorded with the patch" 0 1 \
  '(j["attempts"][0]["patch"]["llm"]["input_tokens"], j["attempts"][0]["patch"]["llm"]["output_tokens"], j["attempts"][0]["patch"]["llm"]["latency_ms"] >= 0, "+print(\"Result: \" + str(42))" in j["attempts"][0]["patch"]["diff"])' \
  "(321, 54, True, True)"

# ---------------------------------------------------------------- unusable replies
run_llm empty openai "[{\"reply\": \"\"}, {\"reply\": \"$FIX\"}]" "$BAD"
expect empty "an empty reply is discarded and asked again" 0 2 \
  "$HEALED + (j[\"attempts\"][0][\"patch\"][\"llm\"][\"discarded_replies\"], j[\"attempts\"][0][\"patch\"][\"llm\"][\"requests\"])" \
  "('healed', 'llm', 'Result: 42\\n', 1, 2)"
run_llm same openai "[{\"reply\": \"\`\`\`python\\n${BAD//\"/\\\"}\\n\`\`\`\"}, {\"reply\": \"$FIX\"}]" "$BAD"
expect same "a reply identical to the failing code is discarded" 0 2 "$HEALED" \
  "('healed', 'llm', 'Result: 42\\n')"
body=$(req_body same 2)
if [[ $body == *"unchanged program"* ]]; then
  ok "the next request says why the previous reply was discarded"
else
  not_ok "the next request says why the previous reply was discarded" "$body"
fi
run_llm forbidden gemini "[{\"reply\": \"\`\`\`python\\nimport os\\nos.system('id')\\nprint('Result: 42')\\n\`\`\`\"}, {\"reply\": \"$FIX\"}]" "$BAD"
expect forbidden "a reply the gate blocks is discarded before an attempt is spent on it" 0 2 \
  '(j["status"], len(j["attempts"]), j["attempts"][0]["patch"]["llm"]["discarded_replies"], "os.system" in j["final_code"], j["attempts"][-1]["stdout"])' \
  "('healed', 2, 1, False, 'Result: 42\\n')"
if [[ $(req_body forbidden 2) == *"gate blocked it"* ]]; then
  ok "the gate's refusal is passed back to the model"
else
  not_ok "the gate's refusal is passed back to the model" "$(req_body forbidden 2)"
fi
run_llm allbad openai '[{"reply": ""}, {"reply": ""}]' "$BAD" --llm-retries 2
expect allbad "--llm-retries 2: two unusable replies, then no patch" 1 2 \
  '(j["status"], "no usable patch in 2 replies" in j["attempts"][0]["no_patch"])' "('failed', True)"
# A reply that is not UTF-8 (the JSON escape \udcff decodes to a lone
# surrogate; next to the syntax error it once made the gate fail, exit 125),
# and one far larger than the snippet: unusable, asked again.
script=$(python3 -c 'import json,sys
fix = "```python\nprint(\"Result: \" + str(42))\n```"
body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "x = 1 +\n@@\n"},
                   "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
print(json.dumps([{"status": 200, "body": body.replace("@@", "\\udcff")}, {"reply": fix}]))')
run_llm notutf8 openai "$script" "$BAD"
expect notutf8 "a reply that is not UTF-8 is discarded as unusable" 0 2 \
  '(j["status"], j["attempts"][0]["patch"]["llm"]["discarded_replies"], j["attempts"][-1]["stdout"])' \
  "('healed', 1, 'Result: 42\\n')"
if [[ $(req_body notutf8 2) == *"unusable reply: not valid UTF-8"* ]]; then
  ok "the next request says the reply was not UTF-8"
else
  not_ok "the next request says the reply was not UTF-8" "$(req_body notutf8 2 | head -c 2000)"
fi
script=$(python3 -c 'import json
fix = "```python\nprint(\"Result: \" + str(42))\n```"
print(json.dumps([{"reply": "```python\n" + "1\n" * 300000 + "```"}, {"reply": fix}]))')
timeout_start=$(date +%s)
run_llm huge anthropic "$script" "$BAD"
expect huge "a 300,000-line reply is discarded as too large ($(( $(date +%s) - timeout_start ))s)" 0 2 \
  '(j["status"], j["attempts"][0]["patch"]["llm"]["discarded_replies"], j["attempts"][0]["heal_ms"] >= 0)' \
  "('healed', 1, True)"
if [[ $(req_body huge 2) == *"unusable reply: the patch is 600000 bytes, over the limit of 65536 bytes"* ]]; then
  ok "the next request says the reply was too large"
else
  not_ok "the next request says the reply was too large" "$(req_body huge 2 | head -c 2000)"
fi

# ---------------------------------------------------------------- HTTP errors and retries
run_llm ratelimit openai "[{\"kind\": \"rate_limit\", \"retry_after\": 1}, {\"reply\": \"$FIX\"}]" "$BAD"
expect ratelimit "429 with Retry-After: 1 is retried after the wait" 0 2 \
  "$HEALED + (j[\"attempts\"][0][\"patch\"][\"llm\"][\"latency_ms\"] >= 1000,)" \
  "('healed', 'llm', 'Result: 42\\n', True)"
run_llm gemini429 gemini "[{\"kind\": \"rate_limit\", \"retry_after\": 1, \"retry_after_header\": false}, {\"reply\": \"$FIX\"}]" "$BAD"
expect gemini429 "gemini RESOURCE_EXHAUSTED with retryDelay 1s is retried after the wait" 0 2 \
  "$HEALED + (j[\"attempts\"][0][\"patch\"][\"llm\"][\"latency_ms\"] >= 1000,)" \
  "('healed', 'llm', 'Result: 42\\n', True)"
run_llm overloaded anthropic "[{\"kind\": \"overloaded\"}, {\"reply\": \"$FIX\"}]" "$BAD"
expect overloaded "anthropic 529 overloaded is retried" 0 2 "$HEALED" "('healed', 'llm', 'Result: 42\\n')"
run_llm e500 openai '[{"kind": "server_error"}, {"kind": "server_error", "status": 502}, {"kind": "server_error", "status": 503}, {"kind": "server_error", "status": 504}]' "$BAD"
expect e500 "500/502/503/504 four times: given up after 4 requests, the error in one line" 1 4 \
  '(j["status"], "HTTP 504" in j["attempts"][0]["no_patch"], "\n" in j["attempts"][0]["no_patch"])' \
  "('failed', True, False)"
for prov in openai anthropic gemini; do
  run_llm "quota-$prov" "$prov" '[{"kind": "quota"}]' "$BAD"
  expect "quota-$prov" "$prov: a quota or spend-limit error is not retried" 1 1 \
    '(j["status"], j["attempts"][0]["no_patch"].startswith("'"$prov"': "))' "('failed', True)"
done
grep -q 'enforced_spend_limit_reached' "$T/quota-anthropic.json" &&
  grep -q 'exceeded your current quota' "$T/quota-openai.json" &&
  ok "the provider's own message reaches the user" ||
  not_ok "the provider's own message reaches the user" "$(cat "$T/quota-anthropic.json" "$T/quota-openai.json")"
run_llm malformed ollama '[{"kind": "malformed"}]' "$BAD"
expect malformed "a malformed JSON body: no patch, no retry, a clear reason" 1 1 \
  '(j["status"], "malformed" in j["attempts"][0]["no_patch"])' "('failed', True)"
run_llm blocked gemini '[{"kind": "blocked"}]' "$BAD"
expect blocked "gemini blocked prompt: no patch, with the reason" 1 1 \
  '(j["status"], "blocked" in j["attempts"][0]["no_patch"] and "SAFETY" in j["attempts"][0]["no_patch"])' \
  "('failed', True)"
run_llm slow openai "[{\"reply\": \"$FIX\", \"delay\": 30}, {\"reply\": \"$FIX\", \"delay\": 30}, {\"reply\": \"$FIX\", \"delay\": 30}, {\"reply\": \"$FIX\", \"delay\": 30}]" "$BAD" --llm-timeout 1s
got=$(q slow '(j["status"], "Timeout" in j["attempts"][0]["no_patch"] or "timed out" in j["attempts"][0]["no_patch"])' 2>&1)
if [ "$rc" = 1 ] && [ "$got" = "('failed', True)" ] && [ "$secs" -lt 15 ]; then
  ok "a slow provider hits --llm-timeout 1s on each of 4 requests (${secs}s in all)"
else
  not_ok "a slow provider hits --llm-timeout" "exit $rc, ${secs}s, $got" "$(cat "$T/slow.json" "$T/slow.err")"
fi

# ---------------------------------------------------------------- budget
run_llm budget openai '[{"reply": "print(\"Result: \" + 42 + 1)"}, {"reply": "raise SystemExit(1)"}]' "$BAD" --llm-max-calls 1
expect budget "--llm-max-calls 1: the second healing step makes no request" 1 1 \
  '(j["status"], j["llm"]["calls"], "budget" in j["attempts"][1]["no_patch"])' "('failed', 1, True)"
run_llm budget0 openai '[]' "$BAD" --llm-max-calls 0
expect budget0 "--llm-max-calls 0: never calls" 1 0 '(j["status"], j["llm"]["calls"])' "('failed', 0)"

# ---------------------------------------------------------------- selection
run_llm nokey none '[]' "$BAD"
expect nokey "no key, no --llm: local healing only, no request" 1 0 \
  '(j["status"], "llm" in j)' "('failed', False)"
run_llm auto auto-openai "[{\"reply\": \"$FIX\"}]" "$BAD"
expect auto "OPENAI_API_KEY alone selects openai (CSRUN_LLM_BASE_URL points it here)" 0 1 \
  '(j["status"], j["llm"]["provider"])' "('healed', 'openai')"
run_llm nollm openai '[]' "$BAD" --no-llm
expect nollm "--no-llm: no request even with --llm and a key" 1 0 '(j["status"], "llm" in j)' \
  "('failed', False)"
printf '# keys\nexport ANTHROPIC_API_KEY="%s"\nCSRUN_LLM=anthropic:from-env-file\n' "$KEY" >"$T/keys.env"
# (--llm-base-url must name this server: started here, not by run_llm.)
printf '%s\n' "[{\"reply\": \"$FIX\"}]" >"$T/envfile2.script.json"
printf '%s\n' "$BAD" >"$T/envfile2.py"
llm_server_start "$T/envfile2.script.json" --key "$KEY"
"${CLEAN_ENV[@]}" "$CSRUN" run --json --no-heal --env-file "$T/keys.env" --llm-base-url "$LLM_URL" \
  "$T/envfile2.py" >"$T/envfile2.json" 2>"$T/envfile2.err"
rc=$?
llm_server_stop >/dev/null 2>&1
nreq=$(llm_requests "$LLM_LOG") shape=$(llm_shape_errors "$LLM_LOG")
expect envfile2 "--env-file: the key and CSRUN_LLM come from the file (export, quotes, comments)" 0 1 \
  '(j["status"], j["llm"]["provider"], j["llm"]["model"])' "('healed', 'anthropic', 'from-env-file')"

for c in "--llm anthropic|ANTHROPIC_API_KEY" "--llm nosuch|nosuch" "--llm openai --llm-base-url ftp://x|llm-base-url" \
  "--env-file $T/missing.env|missing.env" "--llm-retries 0|llm-retries" "--llm-max-calls -1|llm-max-calls"; do
  args=${c%%|*} word=${c#*|}
  # shellcheck disable=SC2086
  "${CLEAN_ENV[@]}" OPENAI_API_KEY=sk-dummy "$CSRUN" run $args "$T/nokey.py" >"$T/usage.out" 2>"$T/usage.err"
  rc=$?
  if [ "$rc" = 2 ] && [ "$(wc -l <"$T/usage.err")" = 1 ] && grep -q -- "$word" "$T/usage.err" && [ ! -s "$T/usage.out" ]; then
    ok "bad LLM setting ($args): exit 2, one line naming it"
  else
    not_ok "bad LLM setting ($args): exit 2, one line naming it" "exit $rc" "$(cat "$T/usage.err")"
  fi
done

# ---------------------------------------------------------------- local servers, no key
run_llm local local-openai "[{\"reply\": \"$FIX\"}]" "$BAD"
expect local "--llm openai --llm-base-url without a key: healed (a local server)" 0 1 \
  '(j["status"], j["llm"]["provider"])' "('healed', 'openai')"
if [ "$(llm_log_get 1 '"authorization" in r["headers"]' "$T/local.log")" = False ]; then
  ok "no key: no Authorization header is sent"
else
  not_ok "no key: no Authorization header is sent" "$(llm_log_get 1 'r["headers"]' "$T/local.log")"
fi
run_llm localurl local-url "[{\"reply\": \"$FIX\"}]" "$BAD"
expect localurl "--llm-base-url alone (no provider, no key): the openai format, not silence" 0 1 \
  '(j["status"], j["llm"]["provider"], j["llm"]["model"])' "('healed', 'openai', 'gpt-4.1-mini')"
run_llm local401 local-openai '[{"kind": "auth"}]' "$BAD"
expect local401 "a server that wants a key answers 401: reported, naming the variable" 1 1 \
  '(j["status"], "401" in j["attempts"][0]["no_patch"], "no API key was sent: OPENAI_API_KEY is not set" in j["attempts"][0]["no_patch"])' \
  "('failed', True, True)"

# ---------------------------------------------------------------- models from the environment
# PROVIDER_MODEL is the model requested; the model the server says it used
# is recorded next to it (openai/anthropic/ollama "model", gemini "modelVersion").
for pm in openai:OPENAI_MODEL anthropic:ANTHROPIC_MODEL gemini:GEMINI_MODEL ollama:OLLAMA_MODEL deepseek:DEEPSEEK_MODEL; do
  prov=${pm%%:*} var=${pm#*:}
  EXTRA_ENV=("$var=env-$prov-model")
  run_llm "envmodel-$prov" "$prov" "[{\"reply\": \"$FIX\", \"model\": \"served-$prov-2026\"}]" "$BAD"
  expect "envmodel-$prov" "$var picks $prov's model; the reply's model is recorded as model_used" 0 1 \
    '(j["status"], j["llm"]["model"], j["attempts"][0]["patch"]["llm"]["model"], j["attempts"][0]["patch"]["llm"]["model_used"])' \
    "('healed', 'env-$prov-model', 'env-$prov-model', 'served-$prov-2026')"
done
sent=$(llm_log_get 1 'r["path"]' "$T/envmodel-gemini.log")
[ "$sent" = "/v1beta/models/env-gemini-model:generateContent" ] && ok "GEMINI_MODEL is the model in gemini's path" ||
  not_ok "GEMINI_MODEL is the model in gemini's path" "$sent"
sent=$(llm_log_get 1 'r["body"]["model"]' "$T/envmodel-openai.log")
[ "$sent" = env-openai-model ] && ok "OPENAI_MODEL is the model in the request body" ||
  not_ok "OPENAI_MODEL is the model in the request body" "$sent"
EXTRA_ENV=(OPENAI_MODEL=env-openai-model CSRUN_LLM_MODEL=csrun-model)
run_llm envmodel-wins openai "[{\"reply\": \"$FIX\"}]" "$BAD"
expect envmodel-wins "CSRUN_LLM_MODEL wins over OPENAI_MODEL; model_used is what the server reports" 0 1 \
  '(j["llm"]["model"], j["attempts"][0]["patch"]["llm"]["model_used"])' "('csrun-model', 'csrun-model')"
EXTRA_ENV=(OPENAI_MODEL=env-openai-model CSRUN_LLM_MODEL=csrun-model)
run_llm envmodel-opt openai "[{\"reply\": \"$FIX\"}]" "$BAD" --llm openai:option-model
expect envmodel-opt "--llm openai:MODEL wins over both" 0 1 '(j["llm"]["model"],)' "('option-model',)"
run_llm nomodel openai "[{\"status\": 200, \"body\": {\"choices\": [{\"message\": {\"role\": \"assistant\", \"content\": \"$FIX\"}}]}}]" "$BAD"
expect nomodel "a reply that names no model: model_used is null" 0 1 \
  '(j["status"], j["attempts"][0]["patch"]["llm"]["model_used"])' "('healed', None)"

# ---------------------------------------------------------------- no code in the reply
run_llm nocode openai "[{\"reply\": \"I am sorry, I cannot fix this program.\"}, {\"reply\": \"$FIX\"}]" "$BAD"
expect nocode "a reply of prose only is discarded as having no code" 0 2 \
  '(j["status"], j["attempts"][0]["patch"]["llm"]["discarded_replies"])' "('healed', 1)"
body=$(req_body nocode 2)
if [[ $body == *"no code in the reply"* && $body != *"does not parse"* ]]; then
  ok "the next request says there was no code in the reply, not a syntax error"
else
  not_ok "the next request says there was no code in the reply" "$(head -c 2000 <<<"$body")"
fi
run_llm nocode2 openai '[{"reply": "Sorry, no."}, {"reply": ""}]' "$BAD" --llm-retries 2
expect nocode2 "two replies without code: no patch, \"no code in the reply\"" 1 2 \
  '(j["status"], j["attempts"][0]["no_patch"])' \
  "('failed', 'openai gave no usable patch in 2 replies (last: no code in the reply)')"
run_llm fencedbad openai '[{"reply": "```python\nprint(\"Result: \" + str(42)\n```"}, {"reply": "Sorry."}]' "$BAD" --llm-retries 2
expect fencedbad "a fenced block that does not parse is still a syntax error, prose after it no code" 1 2 \
  '(j["status"], j["attempts"][0]["no_patch"].startswith("openai gave no usable patch in 2 replies (last: no code in the reply (no"))' \
  "('failed', True)"
if [[ $(req_body fencedbad 2) == *"it does not parse"* ]]; then
  ok "a fenced block with a syntax error is reported as not parsing"
else
  not_ok "a fenced block with a syntax error is reported as not parsing" "$(req_body fencedbad 2 | head -c 2000)"
fi

# ---------------------------------------------------------------- secrets
run_llm secret openai "[{\"kind\": \"auth\"}]" 'import os
print(sorted(os.environ.items()))
print("Result: " + 42)'
if grep -rqF -- "$KEY" "$T/secret.json" "$T/secret.err"; then
  not_ok "the API key is nowhere in csrun's output" "$(grep -rF -- "$KEY" "$T/secret.json" "$T/secret.err" | head -c 2000)"
else
  ok "the API key is nowhere in csrun's output (not in the jail's environment, not in the provider's error message)"
fi
got=$(q secret '(j["status"], "401" in j["attempts"][0]["no_patch"], "OPENAI_API_KEY" in j["attempts"][0]["stdout"])')
if [ "$got" = "('failed', True, False)" ] && [ "$nreq" = 1 ]; then
  ok "401: no retry, the scrubbed message is reported, the jail has no key variable"
else
  not_ok "401: no retry, the scrubbed message is reported" "$got, $nreq requests" "$(cat "$T/secret.json")"
fi
if [ "$(llm_log_get 1 'r["headers"]["authorization"]' "$T/secret.log")" = "Bearer $KEY" ]; then
  ok "the key does reach the provider, in the Authorization header"
else
  not_ok "the key does reach the provider" "$(llm_log_get 1 'r["headers"]' "$T/secret.log")"
fi

# ---------------------------------------------------------------- TLS
if command -v openssl >/dev/null; then
  C=$(tmpdir)
  llm_make_ca "$C" >/dev/null 2>&1
  printf '%s\n' "[{\"reply\": \"$FIX\"}]" >"$T/tls.script.json"
  printf '%s\n' "$BAD" >"$T/tls.py"
  llm_server_start "$T/tls.script.json" --key "$KEY" --tls-cert "$C/server.pem" --tls-key "$C/server.key"
  "${CLEAN_ENV[@]}" OPENAI_API_KEY="$KEY" "$CSRUN" run --json --no-heal --llm openai \
    --llm-base-url "$LLM_URL" "$T/tls.py" >"$T/tls-untrusted.json" 2>/dev/null
  rc1=$?
  "${CLEAN_ENV[@]}" OPENAI_API_KEY="$KEY" "$CSRUN" run --json --no-heal --llm openai \
    --llm-base-url "$LLM_URL" --llm-ca-file "$C/ca.pem" "$T/tls.py" >"$T/tls.json" 2>/dev/null
  rc=$?
  llm_server_stop >/dev/null 2>&1
  got=$(json_get "$T/tls-untrusted.json" '(j["status"], "certificate" in j["attempts"][0]["no_patch"].lower() or "SSL" in j["attempts"][0]["no_patch"])' 2>&1)
  if [ "$rc1" = 1 ] && [ "$got" = "('failed', True)" ]; then
    ok "https with an untrusted certificate: refused (verification is always on)"
  else
    not_ok "https with an untrusted certificate: refused" "exit $rc1: $got"
  fi
  nreq=1 shape=""
  expect tls "https with --llm-ca-file: trusted, healed" 0 1 "$HEALED" "('healed', 'llm', 'Result: 42\\n')"
else
  skip "TLS to the provider" "openssl is not installed"
fi

done_testing
