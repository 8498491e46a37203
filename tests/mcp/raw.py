#!/usr/bin/python3
"""tests/mcp/raw.py -- malformed and edge-case frames written raw to `csrun mcp`
(no SDK: bytes on its stdin), for tests/integration/mcp.sh.

    python3 tests/mcp/raw.py CSRUN [csrun mcp options...]

Prints one JSON line per check: {"ok": bool, "desc": ..., "details": ...}.
"""
import http.server
import json
import os
import select
import subprocess
import sys
import threading
import time

CSRUN = sys.argv[1]
OPTS = sys.argv[2:]


def report(ok, desc, details=""):
    print(json.dumps({"ok": bool(ok), "desc": desc, "details": str(details)[:3000]}), flush=True)


class Server:
    def __init__(self, *extra):
        self.p = subprocess.Popen([CSRUN, "mcp", *OPTS, *extra], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buf = b""
        self.lines = []  # every line read, raw

    def send(self, data):
        self.p.stdin.write(data if isinstance(data, bytes) else data.encode())
        self.p.stdin.flush()

    def msg(self, obj):
        self.send(json.dumps(obj) + "\n")

    def read(self, timeout=30):
        """The next line of stdout, parsed (None on timeout or end)."""
        end = time.time() + timeout
        while b"\n" not in self.buf:
            left = end - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if not r:
                return None
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        self.lines.append(line)
        return json.loads(line)

    def call(self, obj, timeout=30):
        self.msg(obj)
        return self.read(timeout)

    def close(self, timeout=20):
        self.p.stdin.close()
        self.p.stdin = None  # communicate() must not flush it
        rest = b""
        try:
            out, err = self.p.communicate(timeout=timeout)
            rest = out
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
            return None, err.decode(errors="replace")
        for line in (self.buf + rest).split(b"\n"):
            if line:
                self.lines.append(line)
        return self.p.returncode, err.decode(errors="replace")


def init(srv, version="2025-06-18"):
    r = srv.call({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": version, "capabilities": {},
                             "clientInfo": {"name": "raw", "version": "1"}}})
    srv.msg({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return r


def err_of(r):
    return (r or {}).get("error") or {}


def main():
    s = Server()
    r = s.call({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    report(err_of(r).get("code") == -32600 and "initialize" in err_of(r).get("message", ""),
           "tools/list before initialize: -32600, start with initialize", r)
    r = s.call({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {}})
    report(err_of(r).get("code") == -32602 and "params.protocolVersion" in err_of(r).get("message", ""),
           "initialize without protocolVersion: -32602 naming params.protocolVersion", r)
    r = init(s)
    report(r["result"]["protocolVersion"] == "2025-06-18", "initialize 2025-06-18: the same version back", r)
    r = s.call({"jsonrpc": "2.0", "id": 3, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18"}})
    report(err_of(r).get("code") == -32600, "a second initialize: -32600", r)

    cases = [
        (b"{not json\n", -32700, "Parse error", "malformed JSON"),
        (b'{"jsonrpc":"2.0","id":4,"method":"ping"\n', -32700, "Parse error", "a cut message"),
        (b'{"jsonrpc":"2.0","id":5,"method":"ping"} trailing\n', -32700, "Parse error",
         "text after the object"),
        (b'\xff\xfe{"jsonrpc":"2.0","id":6,"method":"ping"}\n', -32700, "Parse error",
         "bytes that are not UTF-8"),
        (b'{"jsonrpc":"2.0","id":7,"method":"pi\x00ng"}\n', -32700, "NUL", "a NUL byte"),
        (b"[" * 200 + b"]" * 200 + b"\n", -32700, "nested deeper", "nesting 200 deep"),
        (b'{"jsonrpc":"2.0","id":8,"method":"ping"} /* c */\n', -32700, "comment", "a comment"),
        (b"[]\n", -32600, "batches", "an empty batch"),
        (b'[{"jsonrpc":"2.0","id":9,"method":"ping"}]\n', -32600, "batches", "a batch"),
        (b"42\n", -32600, "expected a JSON object", "a number"),
        (b'{"jsonrpc":"1.0","id":10,"method":"ping"}\n', -32600, "jsonrpc", "jsonrpc 1.0"),
        (b'{"id":11,"method":"ping"}\n', -32600, "jsonrpc", "no jsonrpc member"),
        (b'{"jsonrpc":"2.0","id":12}\n', -32600, "method: required", "no method"),
        (b'{"jsonrpc":"2.0","id":13,"method":7}\n', -32600, "method: expected a string", "a numeric method"),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n', -32600, "id: expected", "an object id"),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n', -32600, "id: expected", "a fractional id"),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n', -32600, "null", "a null id"),
        (b'{"jsonrpc":"2.0","id":14,"method":"ping","params":[1]}\n', -32600, "params: expected an object",
         "params as an array"),
        (b'{"jsonrpc":"2.0","id":15,"id":16,"method":"ping"}\n', -32600, "duplicate key", "a duplicate key"),
        (b'{"jsonrpc":"2.0","id":17,"method":"resources/list"}\n', -32601, "resources/list",
         "an unknown method"),
        (b'{"jsonrpc":"2.0","id":18,"method":"tools/call"}\n', -32602, "params", "tools/call without params"),
        (b'{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"arguments":{}}}\n', -32602,
         "params.name: required", "tools/call without a name"),
        (b'{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"rm_rf"}}\n', -32602,
         "unknown tool 'rm_rf'", "an unknown tool"),
        (b'{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"execute_python_code","arguments":{"code":5}}}\n',
         -32602, "arguments.code: expected a string", "a wrong type (2025-06-18: a protocol error)"),
        (b'{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"execute_python_code","arguments":{}}}\n',
         -32602, "arguments.code: required", "a missing argument"),
        (b'{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"execute_python_code","arguments":{"code":"x","cwd":"/"}}}\n',
         -32602, "arguments.cwd: unknown argument", "an unknown argument"),
        (b'{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"execute_python_code","arguments":{"code":"print(1)","timeout":100000}}}\n',
         -32602, "arguments.timeout: 100000 is above the maximum", "a timeout above the server's"),
        (b'{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"execute_python_code","arguments":{"code":"   \\n"}}}\n',
         -32602, "arguments.code:", "blank code"),
        (b'{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"execute_python_code","arguments":{"code":"print(1)","files":[{"path":"../etc/x","content":""}]}}}\n',
         -32602, "arguments.files[0].path", "a file path out of /work"),
        (b'{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"execute_python_code","arguments":{"code":"print(1)","files":[{"path":"a","content":"!!","encoding":"base64"}]}}}\n',
         -32602, "arguments.files[0].content: not base64", "bad base64"),
        (b'{"jsonrpc":"2.0","id":28,"method":"tools/call","params":{"name":"sandbox_exec","arguments":{"sandbox":"--force","argv":["true"]}}}\n',
         -32602, "arguments.sandbox", "a sandbox id that looks like an option"),
        (b'{"jsonrpc":"2.0","id":29,"method":"tools/call","params":{"name":"execute_python_code","arguments":{"code":"print(1)"},"_meta":{"progressToken":{"x":1}}}}\n',
         -32602, "progressToken", "a progress token that is an object"),
    ]
    for data, code, words, desc in cases:
        s.send(data)
        r = s.read()
        e = err_of(r)
        report(e.get("code") == code and words in e.get("message", ""),
               "%s: error %d (%s)" % (desc, code, words), r)

    # Lines that get no answer: notifications, responses, blank lines.
    s.send(b"\n   \r\n")
    s.msg({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}})
    s.msg({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}})
    s.msg({"jsonrpc": "2.0", "method": "notifications/cancelled"})
    s.msg({"jsonrpc": "2.0", "id": 77, "result": {}})
    r = s.call({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    report(r == {"jsonrpc": "2.0", "id": "after", "result": {}},
           "blank lines, unknown notifications, a cancel of nothing and a stray response get no "
           "answer: the next answer is the ping's", r)

    # A line over --max-request, then the server goes on.
    s.send(b'{"jsonrpc":"2.0","id":30,"method":"ping","params":{"pad":"' + b"y" * (300 << 10) + b'"}}\n')
    r = s.read()
    e = err_of(r)
    report(e.get("code") == -32600 and "longer than" in e.get("message", ""),
           "a message over --max-request (256K here): -32600, dropped", r)
    r = s.call({"jsonrpc": "2.0", "id": 31, "method": "ping"})
    report(r == {"jsonrpc": "2.0", "id": 31, "result": {}}, "and the next message is read", r)

    # The call still works after all that; \r\n endings are accepted.
    s.send(b'{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"execute_python_code",'
           b'"arguments":{"code":"print(6 * 7)"}}}\r\n')
    r = s.read(60)
    res = (r or {}).get("result", {})
    report(res.get("content", [{}])[0].get("text") == "42" and res.get("isError") is False
           and res.get("structuredContent", {}).get("status") == "ok",
           "after every bad frame: a tools/call (ended by \\r\\n) works", r)

    # A call in progress: the same id again is refused; the call is answered.
    s.msg({"jsonrpc": "2.0", "id": 33, "method": "tools/call",
           "params": {"name": "execute_python_code", "arguments": {"code": "import time\ntime.sleep(1.5)\nprint('slow')"}}})
    r2 = s.call({"jsonrpc": "2.0", "id": 33, "method": "ping"})
    r1 = s.read(60)
    report(err_of(r2).get("code") == -32600 and "in progress" in err_of(r2).get("message", "")
           and r1.get("result", {}).get("content", [{}])[0].get("text") == "slow",
           "an id already in use by a call in progress: -32600; the call still ends", [r2, r1])

    # A call left running when the input ends: stopped, the server exits.
    s.msg({"jsonrpc": "2.0", "id": 34, "method": "tools/call",
           "params": {"name": "execute_python_code", "arguments": {"code": "import time\ntime.sleep(60)"}}})
    time.sleep(0.5)
    t0 = time.time()
    rc, err = s.close()
    took = time.time() - t0
    report(rc == 0 and took < 15, "end of input with a call running: exit status 0 in %.1f s" % took,
           "%s %s" % (rc, err[-1500:]))
    bad = []
    for line in s.lines:
        try:
            m = json.loads(line)
            if m.get("jsonrpc") != "2.0":
                bad.append(line)
        except ValueError:
            bad.append(line)
    report(not bad and len(s.lines) >= 40,
           "stdout carried %d lines, every one a JSON-RPC 2.0 message" % len(s.lines), bad[:3])
    report("warning: mcp:" in err and "Parse error" in err,
           "the bad frames were logged on stderr", err[-800:])

    # Version negotiation and what the versions change.
    for asked, got in (("2024-11-05", "2024-11-05"), ("2025-03-26", "2025-03-26"),
                       ("1999-01-01", "2025-11-25"), ("2025-11-25", "2025-11-25")):
        s = Server()
        r = init(s, asked)
        v = r["result"]["protocolVersion"]
        tools = s.call({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})["result"]["tools"]
        py = [t for t in tools if t["name"] == "execute_python_code"][0]
        c = s.call({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "execute_python_code", "arguments": {"code": "print('v')"}}}, 60)
        bad_args = s.call({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                           "params": {"name": "execute_python_code", "arguments": {"code": []}}})
        s.close()
        res = c["result"]
        new = got >= "2025-06-18"
        ok = (v == got and ("outputSchema" in py) == new and ("title" in py) == new
              and ("structuredContent" in res) == new and ("annotations" in py) == (got >= "2025-03-26")
              and res["content"][0]["text"] == "v")
        if got >= "2025-11-25":
            ok = ok and bad_args.get("result", {}).get("isError") is True \
                and "arguments.code" in bad_args["result"]["content"][0]["text"]
        else:
            ok = ok and err_of(bad_args).get("code") == -32602
        report(ok, "initialize %s: %s; outputSchema, title, structuredContent %s; bad arguments are "
               "%s" % (asked, got, "present" if new else "absent",
                       "a tool error (SEP-1303)" if got >= "2025-11-25" else "-32602"),
               [r, py.keys(), res.keys(), bad_args])

    # --max-frame below what --max-output keeps: the result is cut again to fit.
    s = Server("--max-output", "4M", "--max-frame", "256K")
    init(s)
    r = s.call({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "execute_python_code", "arguments": {
                    "code": "import sys\nsys.stdout.write('x' * (5 << 20))\nprint('END')"}}}, 120)
    s.close()
    size = len(s.lines[-1]) if s.lines else 0
    res = (r or {}).get("result", {})
    text = res.get("content", [{}])[0].get("text", "")
    report(size <= 256 * 1024 and "bytes cut to fit the response" in text and text.endswith("END")
           and res.get("structuredContent", {}).get("status") == "ok" and res.get("isError") is False,
           "--max-output 4M, --max-frame 256K, 5 MiB printed: the message is %d bytes, cut again "
           "(head and tail kept), still ok" % size, text[:200] + " ... " + text[-200:])

    # The input ends while a sandbox is being made: it is made, then removed with the session.
    sbx = os.environ.get("CSRUN_SANDBOX_DIR")
    if sbx:
        before = set(os.listdir(sbx)) if os.path.isdir(sbx) else set()
        s = Server()
        init(s)
        s.msg({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "sandbox_create", "arguments": {}}})
        rc, err = s.close(60)
        after = set(os.listdir(sbx)) if os.path.isdir(sbx) else set()
        answered = any(b'"Created sandbox' in line for line in s.lines)
        report(rc == 0 and answered and not [d for d in after - before if not d.startswith(".")],
               "the input ends during sandbox_create: it ends, and the sandbox goes with the session",
               "%s %s %s" % (rc, sorted(after - before), err[-500:]))

    # sandbox_run: the server's pipeline options apply to it (no healing, an allowed call), and
    # a run document larger than a message is cut as execute_python_code's.
    if sbx:
        s = Server("--no-heal", "--allow", "broad-except", "--max-output", "4M",
                   "--max-frame", "256K")
        init(s)
        c = s.call({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "sandbox_create", "arguments": {}}}, 60)
        sid = ((c or {}).get("result", {}).get("structuredContent") or {}).get("id", "")

        def run(i, code):
            r = s.call({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                "name": "sandbox_run", "arguments": {"sandbox": sid, "code": code}}}, 120)
            return (r or {}).get("result", {}), len(s.lines[-1]) if s.lines else 0
        h, _ = run(2, "print(math.sqrt(16))\n")
        a, _ = run(3, "try:\n    n = 1\nexcept Exception:\n    n = 0\nprint(n == 1)\n")
        big, size = run(4, "import sys\nsys.stdout.write('x' * (5 << 20))\nprint('END')\n")
        bt = (big.get("content") or [{}])[0].get("text", "")
        s.close(60)
        report(sid and h.get("isError") is True
               and h.get("structuredContent", {}).get("status") == "failed"
               and len(h["structuredContent"]["attempts"]) == 1
               and (a.get("content") or [{}])[0].get("text") == "True",
               "sandbox_run under csrun mcp --no-heal --allow broad-except: the missing import "
               "is not healed (1 attempt) and the allowed broad except runs",
               [h.get("structuredContent", {}).get("status"), a.get("content")])
        report(size <= 256 * 1024 and "bytes cut to fit the response" in bt and bt.endswith("END")
               and big.get("structuredContent", {}).get("status") == "ok"
               and big.get("isError") is False,
               "sandbox_run printing 5 MiB under --max-output 4M --max-frame 256K: the message is "
               "%d bytes, cut (head and tail kept), still ok" % size, bt[:200] + " ... " + bt[-200:])

    # The input ends while sandbox_restore runs: the restored sandbox goes with the session.
    if sbx and os.environ.get("CSRUN_CHECKPOINT_DIR"):
        made = subprocess.run([CSRUN, "sandbox", "create"], capture_output=True, text=True)
        src = made.stdout.strip()
        ck = subprocess.run([CSRUN, "sandbox", "checkpoint", src], capture_output=True, text=True)
        ckid = ck.stdout.strip()
        subprocess.run([CSRUN, "sandbox", "rm", "--force", src], capture_output=True)
        before = set(os.listdir(sbx))
        s = Server()
        init(s)
        s.msg({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "sandbox_restore", "arguments": {"checkpoint": ckid}}})
        rc, err = s.close(60)
        after = set(os.listdir(sbx))
        answered = any(b'"Restored checkpoint' in line for line in s.lines)
        subprocess.run([CSRUN, "sandbox", "checkpoint", "rm", ckid], capture_output=True)
        report(made.returncode == 0 and ck.returncode == 0 and rc == 0 and answered
               and not [d for d in after - before if not d.startswith(".")],
               "the input ends during sandbox_restore: it ends, and the new sandbox goes with "
               "the session", "%s %s %s %s" % (ck.stderr, rc, sorted(after - before), err[-500:]))

    # A call cancelled after its command made the sandbox (the server stopped meanwhile, so that
    # the cancellation is read before the command's end): the sandbox is still the session's,
    # removed when it ends, and the call gets no response.
    # The interleaving needs the server stopped while its command still runs: on a busy
    # machine the command may end (and be reaped) before the stop lands; then that try
    # proves nothing and is made again (at most 5 times).
    if sbx:
        for attempt in range(5):
            before = set(os.listdir(sbx))
            s = Server()
            init(s)

            def children():
                """The server's children but those it had before the call (its
                zygote's jail: csrun-batch(1), WARM JAILS)."""
                out = []
                for d in os.listdir("/proc"):
                    try:
                        with open("/proc/%s/stat" % d) as f:
                            st = f.read()
                    except OSError:
                        continue
                    fields = st[st.rfind(")") + 2:].split()
                    if d.isdigit() and int(fields[1]) == s.p.pid and int(d) not in standing:
                        out.append((int(d), fields[0]))
                return out
            standing = set()
            standing = set(pid for pid, _ in children())
            s.msg({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "sandbox_create", "arguments": {}}})
            end = time.time() + 60
            while time.time() < end and not children():
                time.sleep(0.005)
            os.kill(s.p.pid, 19)  # SIGSTOP: the server reads and reaps nothing until SIGCONT
            made = False
            while time.time() < end and children() and not made:
                made = all(state == "Z" for _, state in children())
                time.sleep(0.05)
            new = [d for d in set(os.listdir(sbx)) - before if not d.startswith(".")]
            s.msg({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 7, "reason": "the test cancels it late"}})
            os.kill(s.p.pid, 18)  # SIGCONT
            time.sleep(1)
            rc, err = s.close(60)
            left = [d for d in set(os.listdir(sbx)) - before if not d.startswith(".")]
            answered = any(b'"id":7' in line for line in s.lines)
            if made or attempt == 4:
                break
        report(made and len(new) == 1 and rc == 0 and not left and not answered,
               "sandbox_create cancelled after its command made the sandbox: no response, and "
               "the sandbox goes with the session all the same",
               "%s %s %s %s %s" % (made, new, rc, left, err[-800:]))

    # --sandbox-upstream: every sandbox the session makes reaches the operator's endpoint (a
    # server of this script's, on a port the kernel chose), and a publish of its port is refused.
    if sbx:
        class Hello(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"from the host\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        httpd = http.server.HTTPServer(("127.0.0.1", 0), Hello)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        s = Server("--sandbox-upstream", "7000:127.0.0.1:%d" % httpd.server_address[1])
        init(s)
        bad = s.call({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "sandbox_create", "arguments": {"publish": [8080, 7000]}}})
        c = s.call({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "sandbox_create", "arguments": {}}}, 60)
        res = (c or {}).get("result", {})
        sid = res.get("structuredContent", {}).get("id", "")
        ctext = res.get("content", [{}])[0].get("text", "")
        e = s.call({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "sandbox_exec", "arguments": {"sandbox": sid, "argv": [
                "python3", "-c", "import urllib.request\nprint(urllib.request.urlopen("
                "'http://127.0.0.1:7000/', timeout=20).read().decode().strip())"]}}}, 60)
        etext = ((e or {}).get("result", {}).get("content") or [{}])[0].get("text", "")
        rc, err = s.close(60)
        httpd.shutdown()
        report(err_of(bad).get("code") == -32602
               and "arguments.publish[1]: port 7000 of the sandbox leads to the host already"
               in err_of(bad).get("message", "")
               and "In the sandbox, tcp://127.0.0.1:7000 leads to tcp://127.0.0.1:%d on the host"
               % httpd.server_address[1] in ctext and etext == "from the host\n" and rc == 0,
               "--sandbox-upstream: every sandbox reaches that endpoint at its own port (said in "
               "sandbox_create's text); a publish of that port is refused, naming "
               "arguments.publish[1]", [bad, ctext, etext, rc, err[-500:]])

    # SIGTERM: the server stops its calls and exits 143.
    s = Server()
    init(s)
    s.msg({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "execute_python_code", "arguments": {"code": "import time\ntime.sleep(60)"}}})
    time.sleep(1)
    s.p.terminate()
    try:
        rc = s.p.wait(15)
    except subprocess.TimeoutExpired:
        s.p.kill()
        rc = None
    report(rc == 143, "SIGTERM with a call running: the server stops it and exits 143", rc)


main()
