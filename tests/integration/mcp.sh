#!/bin/bash
# csrun mcp (csrun-mcp(1)) driven by the official MCP TypeScript SDK (tests/mcp/client.mjs:
# initialize, tools/list, a healing case, a blocked case, a timeout, progress, invalid
# arguments, files, a 5 MiB output, concurrent calls, a cancellation, the sandbox tools: files
# written and read back (binary), listed, searched, paths out of the sandbox, publish;
# sandbox_run with a file, healing, a session, a blocked snippet, a cancellation; checkpoint
# and restore), then malformed and edge-case frames written raw to its stdin
# (tests/mcp/raw.py), version negotiation, the server's options in sandbox_run, a cut run
# document, --sandbox-upstream, SIGTERM; csrun tool-schema in every format.  Root and
# rootless.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
. "$CSRUN_SRCDIR/tests/lib/sandbox.sh"

SHARED=$T/shared
mkdir -p "$SHARED"
chmod 777 "$SHARED" # as root the jail's uid 0 is the host's nobody: it writes here too

PY=/usr/bin/python3

# Turn the JSON lines of a driver into TAP; LAST is the description of its last check.
tap_lines () {
  local file=$1 last=$2 line
  "$PY" -c '
import json, sys
for line in open(sys.argv[1]):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    print(("1" if j["ok"] else "0") + "\t" + j["desc"].replace("\t", " ") + "\t"
          + json.dumps(j["details"]))
' "$file" >"$file.tsv"
  while IFS=$'\t' read -r okay desc details; do
    if [ "$okay" = 1 ]; then ok "$desc"; else not_ok "$desc" "$details"; fi
  done <"$file.tsv"
  grep -qF -- "$last" "$file.tsv" || not_ok "the driver ran to its end" "$(tail -c 3000 "$file")"
}

# ---------------------------------------------------------------- the official SDK
MODULES=$CSRUN_SRCDIR/tests/mcp/node_modules/@modelcontextprotocol/sdk
if ! command -v node >/dev/null; then
  skip "csrun mcp with the MCP TypeScript SDK" "node is not installed (apt-get install nodejs npm)"
elif [ ! -f "$MODULES/package.json" ]; then
  skip "csrun mcp with the MCP TypeScript SDK" \
    "the SDK is not installed: npm ci --prefix tests/mcp (in the source tree)"
else
  diag "SDK $("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$MODULES/package.json"), node $(node --version)"
  timeout 600 node "$CSRUN_SRCDIR/tests/mcp/client.mjs" "$CSRUN" "$SHARED" \
    --mount "$SHARED:/work/shared:rw" >"$T/sdk.out" 2>&1
  rc=$?
  [ $rc = 0 ] || not_ok "the SDK driver exits 0" "exit $rc" "$(tail -c 3000 "$T/sdk.out")"
  tap_lines "$T/sdk.out" "the server logged no error on stderr"
fi

# ---------------------------------------------------------------- raw frames
timeout 600 "$PY" "$CSRUN_SRCDIR/tests/mcp/raw.py" "$CSRUN" --max-request 256K >"$T/raw.out" 2>&1
rc=$?
[ $rc = 0 ] || not_ok "the raw-frame driver exits 0" "exit $rc" "$(tail -c 3000 "$T/raw.out")"
tap_lines "$T/raw.out" "SIGTERM with a call running"

# ---------------------------------------------------------------- usage
for args in "--stdin $T/x" "--live" "--out $T/o" "extra" "--jobs 0" "--max-frame 1K" \
  "--net host" "--sandbox-upstream 7000" "--sandbox-upstream 7000:h:1 --sandbox-upstream 7000:h:2"; do
  # shellcheck disable=SC2086
  out=$(csrun mcp $args </dev/null 2>"$T/u.err")
  rc=$?
  [ $rc = 2 ] && [ -z "$out" ] && [ -s "$T/u.err" ] \
    && ok "csrun mcp $args: exit 2, a message on stderr, nothing on stdout" \
    || not_ok "csrun mcp $args: exit 2" "exit $rc, stdout '$out'" "$(cat "$T/u.err")"
done
out=$(csrun mcp --rootfs "$T/no-such-rootfs" </dev/null 2>"$T/u.err")
rc=$?
{ [ $rc = 2 ] || [ $rc = 125 ]; } && [ -z "$out" ] && grep -q "no-such-rootfs" "$T/u.err" \
  && ok "csrun mcp with a missing rootfs: fails at start ($rc), names it, nothing on stdout" \
  || not_ok "csrun mcp with a missing rootfs" "exit $rc, stdout '$out'" "$(cat "$T/u.err")"
out=$(csrun mcp </dev/null 2>"$T/u.err")
rc=$?
[ $rc = 0 ] && [ -z "$out" ] && ok "csrun mcp with an empty input: exit 0, nothing on stdout" \
  || not_ok "csrun mcp with an empty input" "exit $rc, stdout '$out'" "$(cat "$T/u.err")"

# ---------------------------------------------------------------- csrun tool-schema
for f in mcp openai anthropic gemini; do
  csrun tool-schema --format $f >"$T/schema-$f.json" 2>"$T/schema.err" \
    || not_ok "tool-schema --format $f" "$(cat "$T/schema.err")"
done
got=$("$PY" - "$T" <<'PY' 2>&1
import json, sys
t = sys.argv[1]
load = lambda f: json.load(open("%s/schema-%s.json" % (t, f)))
mcp, oa, an, ge = load("mcp")["tools"], load("openai"), load("anthropic"), load("gemini")
names = [x["name"] for x in mcp]
assert names == [x["function"]["name"] for x in oa] == [x["name"] for x in an] \
    == [x["name"] for x in ge["functionDeclarations"]], "names differ"
assert all(x["type"] == "function" for x in oa)
for i, m in enumerate(mcp):
    assert m["inputSchema"] == oa[i]["function"]["parameters"] == an[i]["input_schema"], m["name"]
    assert m["description"] == oa[i]["function"]["description"] == an[i]["description"]
    assert "outputSchema" in m and "annotations" in m
def walk(v):
    if isinstance(v, dict):
        assert "additionalProperties" not in v, "gemini has no additionalProperties"
        for x in v.values():
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(ge)
py = mcp[0]["inputSchema"]
assert py["required"] == ["code"] and py["properties"]["timeout"]["maximum"] == 60
tools = {m["name"]: m for m in mcp}
for i, g in enumerate(ge["functionDeclarations"]):
    # the same parameters, less what Gemini's subset has not
    strip = lambda v: {k: strip(x) for k, x in v.items() if k != "additionalProperties"} \
        if isinstance(v, dict) else v
    assert g["parameters"] == strip(mcp[i]["inputSchema"]), g["name"]
rd, wr, ls = (tools["sandbox_%s" % n] for n in ("read_file", "write_file", "list_files"))
assert rd["inputSchema"]["required"] == ["sandbox", "path"]
assert rd["inputSchema"]["properties"]["max_bytes"]["maximum"] == 131072
assert set(rd["outputSchema"]["properties"]) >= {"path", "bytes", "encoding", "content"}
assert rd["annotations"]["readOnlyHint"] and not wr["annotations"]["readOnlyHint"]
assert wr["annotations"]["destructiveHint"]
assert set(wr["inputSchema"]["properties"]) == {"sandbox", "path", "content", "content_base64", "mode"}
assert set(ls["inputSchema"]["properties"]) == {"sandbox", "path", "recursive", "pattern", "max_entries"}
assert ls["inputSchema"]["properties"]["recursive"]["type"] == "boolean"
pub = tools["sandbox_create"]["inputSchema"]["properties"]["publish"]
assert pub["type"] == "array" and pub["items"] == {"type": "integer", "minimum": 1, "maximum": 65535}
run, ck, rs = (tools["sandbox_%s" % n] for n in ("run", "checkpoint", "restore"))
assert run["inputSchema"]["required"] == ["sandbox", "code"]
assert set(run["inputSchema"]["properties"]) == {"sandbox", "code", "session", "timeout"}
assert run["inputSchema"]["properties"]["timeout"]["maximum"] == 60
assert set(run["outputSchema"]["required"]) == {"version", "status", "attempts"}
assert "session" in run["outputSchema"]["properties"]
assert ck["inputSchema"]["required"] == ["sandbox"]
assert set(ck["inputSchema"]["properties"]) == {"sandbox", "ttl", "leave_running"}
assert ck["inputSchema"]["properties"]["leave_running"]["type"] == "boolean"
assert ck["annotations"]["destructiveHint"] and not ck["annotations"]["readOnlyHint"]
assert rs["inputSchema"]["required"] == ["checkpoint"]
assert set(rs["inputSchema"]["properties"]) == {"checkpoint", "name"}
assert set(rs["outputSchema"]["required"]) == {"id", "checkpoint"}
print(",".join(names))
PY
)
[ "$got" = "execute_python_code,sandbox_create,sandbox_exec,sandbox_write_file,sandbox_read_file,sandbox_list_files,sandbox_run,sandbox_checkpoint,sandbox_restore,sandbox_terminate" ] \
  && ok "tool-schema: the same ten tools and parameters in mcp, openai, anthropic and gemini form (gemini without additionalProperties); sandbox_run's, sandbox_checkpoint's and sandbox_restore's schemas" \
  || not_ok "tool-schema formats" "$got"
csrun tool-schema --timeout 5m --compact >"$T/s5.json" 2>&1
got=$(json_get "$T/s5.json" 'j["tools"][0]["inputSchema"]["properties"]["timeout"]["maximum"] == 300' 2>&1)
[ "$got" = True ] && [ "$(wc -l <"$T/s5.json")" = 1 ] \
  && ok "tool-schema --timeout 5m: the timeout's maximum is 300; --compact is one line" \
  || not_ok "tool-schema --timeout" "$got" "$(head -c 500 "$T/s5.json")"
out=$(csrun tool-schema --format xml 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "invalid --format 'xml'" \
  && ok "tool-schema --format xml: exit 2 naming it" || not_ok "tool-schema --format xml" "exit $rc" "$out"

done_testing
