"""The Python client against the real csrun binary ($CSRUN), root and rootless
(tests/integration/python-client.sh runs it; python3 -m unittest works too)."""

import base64
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from csrun import (CheckResult, CsrunError, ErrorDiagnosis, RunResult, Sandbox,  # noqa: E402
                   Session, ToolRunner, check, create_code_execution_tool, run)

BIN = os.environ.get("CSRUN")


def setUpModule():
    if not BIN or not os.access(BIN, os.X_OK):
        raise unittest.SkipTest("CSRUN does not name the csrun binary")
    if not os.environ.get("CSRUN_SANDBOX_DIR"):
        os.environ["CSRUN_SANDBOX_DIR"] = tempfile.mkdtemp(prefix="csrun-py-sbx.")
    if not os.environ.get("CSRUN_CHECKPOINT_DIR"):
        os.environ["CSRUN_CHECKPOINT_DIR"] = tempfile.mkdtemp(prefix="csrun-py-ck.")


def tearDownModule():
    d = os.environ.get("CSRUN_SANDBOX_DIR")
    for name in os.listdir(d) if d and os.path.isdir(d) else []:
        if not name.startswith("."):
            os.system("'%s' sandbox rm --force %s >/dev/null 2>&1" % (BIN, name))


class TestRun(unittest.TestCase):
    def test_ok(self):
        r = run("import sys\nprint('hi', sys.argv[1:])\n", args=["a", 1])
        self.assertIsInstance(r, RunResult)
        self.assertEqual((r.status, r.ok, r.healed), ("ok", True, False))
        self.assertEqual(r.stdout, "hi ['a', '1']\n")
        self.assertEqual((r.exit_code, r.timed_out, r.silent_failure_detected), (0, False, False))
        self.assertIsNone(r.diagnosis)
        self.assertEqual(r.patches, [])
        self.assertGreater(r.duration, 0)
        self.assertEqual(r.duration, r.duration_seconds)
        self.assertEqual(r.raw["version"], 1)

    def test_healed_with_its_patch(self):
        r = run('print("Result: " + 42)\n')
        self.assertEqual((r.status, r.ok, r.healed), ("healed", True, True))
        self.assertEqual(r.stdout, "Result: 42\n")
        self.assertEqual(len(r.patches), 1)
        p = r.patches[0]
        self.assertEqual((p.attempt, p.source, p.rules), (1, "local", "str-concat"))
        self.assertIn("+print(\"Result: \" + str(42))", p.diff)
        self.assertIn("str(42)", r.final_code)
        self.assertEqual(len(r.attempts), 2)

    def test_failed_diagnosis_like_codeshield(self):
        r = run("def f(x):\n    return 1 / x\n\nprint(f(0))\n")
        self.assertEqual((r.status, r.ok), ("failed", False))
        d = r.diagnosis
        self.assertIsInstance(d, ErrorDiagnosis)
        self.assertEqual((d.error_type, d.root_cause_line, d.message),
                         ("ZeroDivisionError", 2, "division by zero"))
        self.assertTrue(any(c.startswith("> 2:") and "return 1 / x" in c for c in d.context),
                        d.context)
        self.assertEqual(r.exit_code, 1)
        self.assertIn("ZeroDivisionError", r.stderr)

    def test_blocked(self):
        r = run("import subprocess as sp\nsp.run(['ls'])\n")
        self.assertEqual(r.status, "blocked")
        self.assertEqual(r.diagnosis.error_type, "StaticSafetyViolation")

    def test_timeout(self):
        r = run("import time\ntime.sleep(30)\n", timeout=0.5)
        self.assertEqual(r.status, "timeout")
        self.assertTrue(r.timed_out)
        self.assertIsNone(r.exit_code)
        self.assertEqual(r.diagnosis.error_type, "Timeout")

    def test_silent_failure(self):
        r = run("print('Pipeline failed: no rows')\n")
        self.assertEqual(r.status, "failed")
        self.assertTrue(r.silent_failure_detected)
        self.assertEqual(r.exit_code, 0)

    def test_files_stdin_env_options(self):
        r = run("import os, sys\nprint(open('in/a.txt').read(), open('/tmp/b', 'rb').read(),"
                " sys.stdin.read(), os.environ['X'])\n",
                files={"in/a.txt": "text", "/tmp/b": b"\x00\x01"}, stdin="from stdin",
                env={"X": "y"}, options=["--memory", "256M"])
        self.assertEqual(r.stdout, "text b'\\x00\\x01' from stdin y\n", r.raw)
        self.assertEqual(r.raw["limits"]["memory_bytes"], 256 << 20)

    def test_usage_errors_raise(self):
        with self.assertRaises(CsrunError) as cm:
            run("print(1)", options=["--memory", "nonsense"])
        self.assertEqual(cm.exception.returncode, 2)
        self.assertIn("--memory", str(cm.exception))
        with self.assertRaises(CsrunError):
            run("   \n")
        with self.assertRaises(ValueError):
            run("print(1)", timeout=-1)
        with self.assertRaises(CsrunError):
            run("print(1)", binary="/nonexistent/csrun")


class TestCheck(unittest.TestCase):
    def test_verdicts(self):
        c = check("print(1)\n")
        self.assertIsInstance(c, CheckResult)
        self.assertTrue(c.passed)
        c = check("import os\nos.system('ls')\n")
        self.assertEqual((c.verdict, c.passed), ("blocked", False))
        self.assertEqual(c.violations[0]["rule"], "dangerous-call")
        self.assertEqual(c.diagnosis.root_cause_line, 2)
        self.assertEqual(check("x = (\n").verdict, "syntax_error")


class TestCodeShieldTool(unittest.TestCase):
    def test_the_callable(self):
        tool = create_code_execution_tool(timeout=1)
        self.assertEqual(tool.__name__, "execute_python_code")
        self.assertEqual(tool.__annotations__, {"code": str, "return": str})
        self.assertEqual(tool("print(math.sqrt(16))\n"), "4.0")
        text = tool("x = [1]\nprint(x[3])\n")
        self.assertEqual(text.splitlines()[:4], [
            "The Python script did not execute successfully.", "error_type: IndexError",
            "root_cause_line: 2", "message: list index out of range"])
        self.assertIn("\nstderr: Traceback", text)
        self.assertTrue(tool("while True:\n    pass\n").endswith("timed_out: true"))
        self.assertTrue(tool("print('all NaN here')\n").endswith("silent_failure_detected: true"))
        self.assertTrue(tool("  ").startswith("error_type: CsrunError\nmessage: "))


class TestSandbox(unittest.TestCase):
    def test_exec_and_context_manager(self):
        with Sandbox(name="pyclient", memory=256, cpu=500, idle_timeout=120,
                     env={"GREETING": "hello"}) as sb:
            self.assertRegex(sb.id, "^[0-9a-f]{32}$")
            self.assertEqual(sb.name, "pyclient")
            self.assertEqual(sb.status, "running")
            r = sb.exec(["python3", "-c", "import os; open('/work/f', 'w').write(os.environ['GREETING'])"])
            self.assertEqual(r["returncode"], 0)
            self.assertEqual(r.returncode, 0)
            # the rootfs has sh and python3, not coreutils
            r = sb.exec("read x < /work/f; echo \"$x\"; echo err >&2; exit 4")
            self.assertEqual((r["returncode"], r["stdout"], r["stderr"]), (4, "hello\n", "err\n"))
            r = sb.exec(["python3", "-c", "import os; print(os.getcwd(), os.environ['A'])"],
                        working_dir="/tmp", env={"A": "b"})
            self.assertEqual(r["stdout"], "/tmp b\n")
            r = sb.exec(["python3", "-c", "import time; time.sleep(30)"], timeout=0.5)
            self.assertEqual(r["returncode"], -1)
            self.assertTrue(r["timed_out"])
            self.assertIn("timed out after", r["stderr"])
            a = sb.exec_async(["python3", "-c", "import time; time.sleep(0.3); print('later')"])
            self.assertEqual(a.result(timeout=30)["stdout"], "later\n")
            self.assertTrue(a.done())
            same = Sandbox.attach("pyclient")
            self.assertEqual(same.id, sb.id)
            self.assertEqual(same.inspect()["limits"]["memory_bytes"], 256 << 20)
            sb.stop()
            self.assertEqual(sb.status, "stopped")
            self.assertEqual(sb.exec(["true"])["returncode"], -1, "a stopped sandbox runs nothing")
            sb.start()
            self.assertEqual(sb.exec("read x < /work/f; echo $x")["stdout"], "hello\n",
                             "the layer stayed")
            sid = sb.id
        self.assertFalse(os.path.exists(os.path.join(os.environ["CSRUN_SANDBOX_DIR"], sid)))
        sb.terminate()  # twice: no error

    def test_errors(self):
        with self.assertRaises(CsrunError):
            Sandbox(name="bad name!")
        with self.assertRaises(CsrunError):
            Sandbox.attach("no-such-sandbox")
        with Sandbox() as sb:
            r = sb.exec(["no-such-program"])
            self.assertEqual(r["returncode"], 127)
            self.assertTrue(r["not_found"])


class WithSandbox(unittest.TestCase):
    """A sandbox of the class's own (self.sb) for all its tests."""

    @classmethod
    def setUpClass(cls):
        cls.sb = Sandbox(idle_timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.sb.terminate()


class TestSandboxFiles(WithSandbox):
    def test_write_read_binary_and_text(self):
        sb = self.sb
        blob = bytes(range(256)) * 300 + b"\0"
        r = sb.write("rw/data/blob.bin", blob)
        self.assertEqual((r["path"], r["bytes"]), ("/work/rw/data/blob.bin", len(blob)))
        self.assertEqual(sb.read("/work/rw/data/blob.bin", format="bytes"), blob)
        sb.write("rw/t.txt", "h\u00e9llo\n", mode=0o600)
        self.assertEqual(sb.read("rw/t.txt"), "h\u00e9llo\n")
        self.assertEqual(sb.read("rw/t.txt", format="bytes"), b"h\xc3\xa9llo\n")
        sb.write("rw/t.txt", b"replaced")  # the mode of the file it replaces stays
        (t,) = sb.ls("rw/t.txt")
        self.assertEqual((t.name, t.path, t.type, t.size, t.mode, t.permissions),
                         ("t.txt", "/work/rw/t.txt", "file", 8, 0o600, "0600"))
        self.assertGreater(t.modified_time, 1.6e9)
        self.assertEqual(sb.exec(["python3", "-c", "print(open('rw/t.txt').read())"])["stdout"],
                         "replaced\n", "what the next command sees")
        with self.assertRaises(CsrunError) as e:
            sb.read("rw/nope")
        self.assertIn("No such file or directory", str(e.exception))
        with self.assertRaises(CsrunError) as e:
            sb.read("../../etc/passwd")
        self.assertIn("leaves the sandbox's /", str(e.exception))
        with self.assertRaises(CsrunError) as e:
            sb.read("rw/data/blob.bin", max_size=100)
        self.assertIn("more than 100", str(e.exception))
        with self.assertRaises(TypeError):
            sb.write("x", 5)

    def test_ls_list_find_exists(self):
        sb = self.sb
        sb.write("ls/a.py", "print(1)\n")
        sb.write("ls/sub/b.py", "print(2)\n")
        sb.write("ls/sub/deeper/c.txt", "3")
        sb.exec(["python3", "-c", "import os; os.symlink('a.py', 'ls/link')"])
        top = sb.ls("ls")
        self.assertEqual([(e.name, e.type) for e in top],
                         [("a.py", "file"), ("link", "symlink"), ("sub", "dir")])
        self.assertEqual(top[1].target, "a.py")
        self.assertTrue(top[2].is_dir)
        everything = sb.ls("/work/ls", recursive=True)
        self.assertEqual([e.name for e in everything],
                         ["a.py", "link", "sub", "sub/b.py", "sub/deeper", "sub/deeper/c.txt"])
        self.assertEqual([e.name for e in sb.list("ls", depth=2)],
                         ["a.py", "link", "sub", "sub/b.py", "sub/deeper"])
        self.assertEqual(len(sb.list("ls", depth=None)), 6)
        self.assertEqual([e.path for e in sb.find("*.py", "ls")],
                         ["/work/ls/a.py", "/work/ls/sub/b.py"])
        self.assertEqual(sb.find("nothing*", "ls"), [])
        self.assertTrue(sb.exists("ls/sub"))
        self.assertTrue(sb.exists("/work/ls/link"))
        self.assertFalse(sb.exists("ls/nope"))
        with self.assertRaises(CsrunError):
            sb.ls("ls", max_entries=2)  # more than asked: an error, not a silent cut
        # yr.sandbox's names
        e = sb.files.write("ls/y.txt", "yr")
        self.assertEqual((e.path, e.size), ("/work/ls/y.txt", 2))
        self.assertEqual(sb.files.read("ls/y.txt"), "yr")
        self.assertTrue(sb.files.exists("ls/y.txt"))
        self.assertIn("y.txt", [x.name for x in sb.files.list("ls")])

    def test_upload_download(self):
        sb = self.sb
        tmp = tempfile.mkdtemp(prefix="csrun-py-cp.")
        try:
            src = os.path.join(tmp, "src")
            os.makedirs(os.path.join(src, "sub"))
            with open(os.path.join(src, "a.txt"), "w") as f:
                f.write("alpha\n")
            blob = os.urandom(300000)
            with open(os.path.join(src, "sub", "b.bin"), "wb") as f:
                f.write(blob)
            os.symlink("/etc/passwd", os.path.join(src, "link"))
            r = sb.upload(src, "/work/up")
            self.assertEqual((r["files"], r["dirs"], r["symlinks"]), (2, 2, 1), r)
            self.assertEqual(sb.read("up/sub/b.bin", format="bytes"), blob)
            (link,) = sb.ls("up/link")
            self.assertEqual((link.type, link.target), ("symlink", "/etc/passwd"),
                             "a symlink is copied as a link, never followed")
            sb.write("up/new.txt", "made inside\n")
            out = os.path.join(tmp, "out")
            r = sb.download("/work/up", out)
            self.assertEqual(r["files"], 3, r)
            with open(os.path.join(out, "sub", "b.bin"), "rb") as f:
                self.assertEqual(f.read(), blob)
            with open(os.path.join(out, "new.txt")) as f:
                self.assertEqual(f.read(), "made inside\n")
            self.assertEqual(os.readlink(os.path.join(out, "link")), "/etc/passwd")
            # relative host paths, even with ':' (never read as ID:PATH)
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                with open("x:y.txt", "w") as f:
                    f.write("colon")
                sb.upload("x:y.txt", "up/colon.txt")
                self.assertEqual(sb.read("up/colon.txt"), "colon")
                sb.download("up/colon.txt", "back:here.txt")
                with open("back:here.txt") as f:
                    self.assertEqual(f.read(), "colon")
            finally:
                os.chdir(cwd)
            # yr.sandbox's names
            sb.files.copy_from_local(os.path.join(src, "a.txt"), "up/yr.txt")
            sb.files.copy_to_local("up/yr.txt", os.path.join(tmp, "yr.txt"))
            with open(os.path.join(tmp, "yr.txt")) as f:
                self.assertEqual(f.read(), "alpha\n")
            with self.assertRaises(CsrunError):
                sb.download("up/nope", os.path.join(tmp, "nope"))
            with self.assertRaises(CsrunError):
                sb.upload(os.path.join(tmp, "nope"), "up/")
        finally:
            shutil.rmtree(tmp)


class TestSandboxPorts(unittest.TestCase):
    def test_publish_upstream_urls(self):
        import http.server
        import socket
        import threading

        class Hello(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Length", "14")
                self.end_headers()
                self.wfile.write(b"from the host\n")

            def log_message(self, *args):
                pass

        httpd = http.server.HTTPServer(("127.0.0.1", 0), Hello)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            with Sandbox(publish=[8080], port_forwardings=[8081],
                         upstream="7000:127.0.0.1:%d" % httpd.server_address[1]) as sb:
                ports = sb.ports()
                self.assertEqual(sorted((p["type"], p["port"]) for p in ports),
                                 [("publish", 8080), ("publish", 8081), ("upstream", 7000)])
                url = sb.get_port_url(8080)
                self.assertRegex(url, r"^tcp://127\.0\.0\.1:\d+$")
                self.assertNotEqual(url, sb.get_port_url(8081))
                with self.assertRaises(ValueError):
                    sb.get_port_url(9999)
                self.assertEqual(sb.get_tunnel_url(), "tcp://127.0.0.1:7000")
                r = sb.exec(["python3", "-c", "import urllib.request; print(urllib.request."
                             "urlopen('http://127.0.0.1:7000/', timeout=20).read().decode(), "
                             "end='')"], timeout=30)
                self.assertEqual(r["stdout"], "from the host\n", r)
                # a server in the sandbox, reached at the published port's URL
                job = sb.exec_async(["python3", "-c", "import socket\ns = socket.socket()\n"
                                     "s.bind(('127.0.0.1', 8080))\ns.listen()\n"
                                     "c, _ = s.accept()\nc.sendall(b'hi from the sandbox')\n"
                                     "c.close()\n"], timeout=30)
                port = int(url.rsplit(":", 1)[1])
                got, deadline = b"", time.time() + 20
                while not got and time.time() < deadline:
                    try:
                        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                            got = c.recv(100)
                    except OSError:  # nothing listened yet: accepted and ended at once
                        pass
                    if not got:
                        time.sleep(0.2)
                self.assertEqual(got, b"hi from the sandbox")
                self.assertEqual(job.result(timeout=30)["returncode"], 0)
        finally:
            httpd.shutdown()
            httpd.server_close()
        with self.assertRaises(ValueError):
            Sandbox(publish=[0])
        with self.assertRaises(CsrunError) as e:
            Sandbox(publish=["80:80:80:80"])
        self.assertEqual(e.exception.returncode, 2)


class TestSandboxRun(WithSandbox):
    def test_run_in_the_sandbox(self):
        sb = self.sb
        sb.write("data/in.csv", "a,b\n1,2\n3,4\n")
        r = sb.run("import csv\nrows = list(csv.reader(open('data/in.csv')))\n"
                   "print(len(rows), sum(int(x[1]) for x in rows[1:]))\n")
        self.assertIsInstance(r, RunResult)
        self.assertEqual((r.status, r.ok, r.stdout), ("ok", True, "3 6\n"))
        self.assertEqual(r.sandbox, sb.id)
        self.assertIsNone(r.session)
        r = sb.run(b"open('out.txt', 'w').write('from run')\n")
        self.assertTrue(r.ok)
        self.assertEqual(sb.read("out.txt"), "from run", "the run changed the sandbox's files")
        r = sb.run("print(math.sqrt(16))\n")
        self.assertEqual((r.status, r.stdout), ("healed", "4.0\n"))
        self.assertEqual(r.patches[0].rules, "missing-import")
        r = sb.run("import os\nos.system('id')\n")
        self.assertEqual((r.status, r.ok), ("blocked", False))
        self.assertEqual(r.diagnosis.error_type, "StaticSafetyViolation")
        self.assertEqual(r.diagnosis.root_cause_line, 2)
        self.assertIn("os.system", r.diagnosis.message)
        r = sb.run("while True:\n    pass\n", timeout=1)
        self.assertEqual((r.status, r.timed_out), ("timeout", True))
        r = sb.run("print(math.sqrt(16))\n", options=["--no-heal"])
        self.assertEqual((r.status, len(r.attempts)), ("failed", 1))
        with self.assertRaises(TypeError):
            sb.run(42)
        with self.assertRaises(ValueError):
            sb.run("print(1)", timeout=0)
        with self.assertRaises(CsrunError) as e:
            Sandbox.attach(sb.id).run("   \n")
        self.assertEqual(e.exception.returncode, 2)
        gone = Sandbox(idle_timeout=60)
        gone.terminate()
        with self.assertRaises(CsrunError) as e:
            gone.run("print(1)")
        self.assertIn("no such sandbox", str(e.exception))

    def test_sessions(self):
        sb = self.sb
        s = sb.session("nb")
        self.assertIsInstance(s, Session)
        r = s.run("import json\nx = 41\n")
        self.assertTrue(r.ok)
        self.assertEqual((r.session["name"], r.session["cell"], r.session["started"]),
                         ("nb", 1, True))
        r = s.run("x += 1\nprint(json.dumps({'x': x}))\n")
        self.assertEqual(r.stdout, '{"x": 42}\n')
        self.assertEqual((r.session["cell"], r.session["started"]), (2, False))
        r = s.run("1 / 0\n")
        self.assertEqual((r.status, r.diagnosis.error_type), ("failed", "ZeroDivisionError"))
        self.assertEqual(s.run("print(x)").stdout, "42\n", "the session lives on after a raise")
        r = sb.run("print(x)\n")
        self.assertFalse(r.ok, "a run without the session does not see x")
        self.assertIn("'x'", r.diagnosis.message)
        info = [i for i in sb.sessions() if i["name"] == "nb"]
        self.assertEqual(len(info), 1)
        self.assertEqual(info[0]["state"], "idle")
        self.assertGreaterEqual(info[0]["cells"], 4)
        tmp = tempfile.mkdtemp(prefix="csrun-py-save.")
        try:
            saved = s.save(os.path.join(tmp, "nb.pickle"))
            self.assertIn("x", saved["saved"])
            other = sb.session("other")
            loaded = other.load(os.path.join(tmp, "nb.pickle"))
            self.assertIn("x", loaded["loaded"])
            self.assertEqual(other.run("print(x, json.dumps(1))").stdout, "42 1\n")
            other.remove()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        s.remove()
        self.assertEqual([i["name"] for i in sb.sessions() if i["name"] in ("nb", "other")], [])
        with self.assertRaises(CsrunError):
            s.remove()
        r = s.run("print('again')")
        self.assertEqual((r.stdout, r.session["started"]), ("again\n", True),
                         "a removed session starts anew")
        s.remove()


class TestCheckpoints(unittest.TestCase):
    def test_checkpoint_and_restore(self):
        with Sandbox(idle_timeout=300) as sb:
            sb.write("keep/notes.txt", "kept across\n")
            sb.write("keep/blob.bin", bytes(range(256)))
            cid = sb.checkpoint(ttl=600, leave_running=True)
            self.assertRegex(cid, "^[0-9a-f]{32}$")
            info = sb.last_checkpoint
            self.assertEqual((info["id"], info["sandbox"]["id"]), (cid, sb.id))
            self.assertEqual(info["layer"]["files"], 2)
            self.assertGreater(info["expires"], info["created"])
            self.assertEqual(sb.status, "running", "leave_running")
            listed = {c["id"]: c for c in Sandbox.checkpoints()}
            self.assertIn(cid, listed)
            self.assertEqual(listed[cid]["sandbox"]["id"], sb.id)
            with Sandbox.restore(cid, name="pyrestored") as again:
                self.assertNotEqual(again.id, sb.id)
                self.assertEqual(again.name, "pyrestored")
                self.assertEqual(again.restored["checkpoint"], cid)
                self.assertEqual(again.status, "running")
                self.assertEqual(again.read("keep/notes.txt"), "kept across\n")
                self.assertEqual(again.read("keep/blob.bin", format="bytes"), bytes(range(256)))
                self.assertEqual(again.run("print(open('keep/notes.txt').read().strip())").stdout,
                                 "kept across\n")
                rid = again.id
            self.assertFalse(os.path.exists(os.path.join(os.environ["CSRUN_SANDBOX_DIR"], rid)))
            cid2 = sb.checkpoint()
            self.assertEqual(sb.status, "stopped", "without leave_running the sandbox stops")
            self.assertTrue(sb.last_checkpoint["stopped"])
            self.assertEqual(sb.last_checkpoint["expires"], 0, "ttl=-1: it does not expire")
            with self.assertRaises(CsrunError):
                sb.run("print(1)")
            with self.assertRaises(ValueError):
                sb.checkpoint(ttl=0)
        Sandbox.remove_checkpoint(cid)
        Sandbox.remove_checkpoint(cid2[:8])
        ids = [c["id"] for c in Sandbox.checkpoints()]
        self.assertNotIn(cid, ids)
        self.assertNotIn(cid2, ids)
        with self.assertRaises(CsrunError) as e:
            Sandbox.remove_checkpoint(cid)
        self.assertEqual(e.exception.returncode, 2)
        with self.assertRaises(CsrunError) as e:
            Sandbox.restore(cid)
        self.assertEqual(e.exception.returncode, 2)
        self.assertIn("no such checkpoint", str(e.exception))


class TestToolRunner(unittest.TestCase):
    def test_schemas_are_csrun_tool_schema(self):
        runner = ToolRunner(tools="all")
        oa = runner.openai_tools()
        self.assertEqual([t["function"]["name"] for t in oa], list(ToolRunner.ALL))
        an = ToolRunner().anthropic_tools()
        self.assertEqual([t["name"] for t in an], ["execute_python_code"])
        self.assertEqual(an[0]["input_schema"]["required"], ["code"])
        self.assertEqual(len(runner.gemini_tools()["functionDeclarations"]), 10)
        with self.assertRaises(ValueError):
            ToolRunner(tools=["rm_rf"])

    def test_openai_chat_and_responses(self):
        runner = ToolRunner()
        msg = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {
                "name": "execute_python_code", "arguments": json.dumps({"code": "print(6*7)"})}},
            {"id": "call_2", "type": "function", "function": {
                "name": "execute_python_code", "arguments": "{not json"}},
            {"id": "call_3", "type": "function", "function": {"name": "sandbox_create",
                                                               "arguments": "{}"}}]}
        out = runner.handle_openai(msg)
        self.assertEqual(out[0], {"role": "tool", "tool_call_id": "call_1", "content": "42"})
        self.assertIn("not JSON", out[1]["content"])
        self.assertIn("Unknown tool 'sandbox_create'", out[2]["content"])
        items = [{"type": "message", "content": []},
                 {"type": "function_call", "call_id": "c9", "name": "execute_python_code",
                  "arguments": json.dumps({"code": "print(1/0)"})}]
        out = runner.handle_openai(items)
        self.assertEqual(out[0]["type"], "function_call_output")
        self.assertEqual(out[0]["call_id"], "c9")
        self.assertIn("error_type: ZeroDivisionError", out[0]["output"])

    def test_anthropic_and_the_sandbox_tools(self):
        with ToolRunner(tools="all", timeout=20) as runner:
            resp = {"content": [{"type": "text", "text": "let me"},
                                {"type": "tool_use", "id": "tu1", "name": "sandbox_create",
                                 "input": {"name": "agentbox"}}]}
            msg = runner.handle_anthropic(resp)
            self.assertEqual(msg["role"], "user")
            r = msg["content"][0]
            self.assertEqual((r["type"], r["tool_use_id"], r["is_error"]),
                             ("tool_result", "tu1", False))
            self.assertIsNone(runner.handle_anthropic([{"type": "text", "text": "done"}]))
            text, err = runner.call("sandbox_exec", {"sandbox": "agentbox",
                                                     "argv": ["python3", "-c", "print(5)"]})
            self.assertEqual((text, err), ("5\n", False))
            text, err = runner.call("sandbox_exec", {"sandbox": "agentbox", "command": "exit 2"})
            self.assertTrue(err)
            self.assertIn("exit status 2", text)
            data = base64.b64encode(b"\xff").decode()
            text, err = runner.call("execute_python_code", {
                "code": "print(open('b', 'rb').read())",
                "files": [{"path": "b", "content": data, "encoding": "base64"}]})
            self.assertEqual((text, err), ("b'\\xff'", False))
            blob = bytes(range(256))
            text, err = runner.call("sandbox_write_file", {
                "sandbox": "agentbox", "path": "d/b.bin",
                "content_base64": base64.b64encode(blob).decode()})
            self.assertEqual((text, err), ("Wrote 256 bytes to /work/d/b.bin.", False))
            text, err = runner.call("sandbox_read_file", {"sandbox": "agentbox", "path": "d/b.bin"})
            self.assertFalse(err)
            head, b64 = text.split("\n")
            self.assertEqual(head, "d/b.bin is 256 bytes of binary data (not UTF-8 text). In base64:")
            self.assertEqual(base64.b64decode(b64), blob)
            runner.call("sandbox_write_file", {"sandbox": "agentbox", "path": "d/t.txt",
                                               "content": "text\n"})
            self.assertEqual(runner.call("sandbox_read_file", {"sandbox": "agentbox",
                                                               "path": "d/t.txt"}),
                             ("text\n", False))
            text, err = runner.call("sandbox_write_file", {"sandbox": "agentbox", "path": "x",
                                                           "content": "a", "content_base64": "YQ=="})
            self.assertTrue(err)
            text, err = runner.call("sandbox_list_files", {"sandbox": "agentbox", "path": "d"})
            self.assertFalse(err)
            self.assertRegex(text, r"^/work/d: 2 entries\n-rw-r--r-- +256 \S+ b\.bin\n"
                                   r"-rw-r--r-- +5 \S+ t\.txt$")
            text, err = runner.call("sandbox_list_files", {"sandbox": "agentbox",
                                                           "pattern": "*.txt"})
            self.assertRegex(text, r"^1 entry below /work matching '\*\.txt':\n.* /work/d/t\.txt$")
            text, err = runner.call("sandbox_read_file", {"sandbox": "agentbox", "path": "nope"})
            self.assertTrue(err)
            self.assertIn("No such file or directory", text)
            sid = runner.sandboxes["agentbox"].id
        self.assertFalse(os.path.exists(os.path.join(os.environ["CSRUN_SANDBOX_DIR"], sid)),
                         "close() removes the runner's sandboxes")

    def test_run_checkpoint_restore_tools(self):
        sbx = os.environ["CSRUN_SANDBOX_DIR"]
        with ToolRunner(tools="all", timeout=20, options=["--memory", "256M", "--no-heal"]) as runner:
            text, err = runner.call("sandbox_create", {"name": "runbox"})
            self.assertFalse(err, text)
            runner.call("sandbox_write_file", {"sandbox": "runbox", "path": "in.txt",
                                               "content": "hello\n"})
            text, err = runner.call("sandbox_run", {"sandbox": "runbox",
                                                    "code": "print(open('in.txt').read().strip())"})
            self.assertEqual((text, err), ("hello", False))
            text, err = runner.call("sandbox_run", {"sandbox": "runbox",
                                                    "code": "print(math.sqrt(4))"})
            self.assertTrue(err, "--no-heal applies to sandbox_run (--memory, the jail's, not)")
            self.assertIn("error_type: NameError", text)
            runner.call("sandbox_run", {"sandbox": "runbox", "code": "y = 7", "session": "s"})
            text, err = runner.call("sandbox_run", {"sandbox": "runbox", "code": "print(y * 6)",
                                                    "session": "s"})
            self.assertEqual((text, err), ("42", False))
            text, err = runner.call("sandbox_run", {"sandbox": "runbox",
                                                    "code": "import subprocess\nsubprocess.run(['id'])"})
            self.assertTrue(err)
            self.assertIn("error_type: StaticSafetyViolation", text)
            text, err = runner.call("sandbox_checkpoint", {"sandbox": "runbox", "ttl": 600})
            self.assertFalse(err, text)
            cid = runner.sandboxes["runbox"].last_checkpoint["id"]
            self.assertRegex(text, r"^Checkpoint %s saved what was written in sandbox \S+ \(runbox\): "
                                   r"1 file, .* It expires at .*The sandbox is stopped now" % cid)
            text, err = runner.call("sandbox_restore", {"checkpoint": cid, "name": "runbox2"})
            self.assertFalse(err, text)
            self.assertIn("(name runbox2), running: 1 file", text)
            text, err = runner.call("sandbox_run", {"sandbox": "runbox2",
                                                    "code": "print(open('in.txt').read().strip())"})
            self.assertEqual((text, err), ("hello", False))
            rid = runner.sandboxes["runbox2"].id
            text, err = runner.call("sandbox_restore", {"checkpoint": "0" * 32})
            self.assertTrue(err)
            self.assertIn("no such checkpoint", text)
        self.assertFalse(os.path.exists(os.path.join(sbx, rid)),
                         "close() removes a restored sandbox too")
        Sandbox.remove_checkpoint(cid)


class TestTexts(unittest.TestCase):
    """ToolRunner's texts are the MCP server's (tests/unit/test-mcp.c has the same cases)."""

    def test_checkpoint_and_restore(self):
        from csrun.agents import format_checkpoint, format_restore
        ck = {"id": "c0ffee", "created": 1700000000, "expires": 1700003600,
              "sandbox": {"id": "b0", "name": "box"},
              "layer": {"files": 2, "dirs": 1, "symlinks": 0, "whiteouts": 1, "bytes": 10},
              "not_saved": ["/work/s: a socket"], "not_saved_total": 3, "stopped": True}
        self.assertEqual(format_checkpoint(ck),
                         "Checkpoint c0ffee saved what was written in sandbox b0 (box): 2 files, "
                         "1 directory, 1 deleted file of the rootfs (10 bytes); not its running "
                         "processes, nor /tmp. It expires at 2023-11-14T23:13:20Z. The sandbox "
                         "is stopped now (its processes ended, its files kept; it runs no more "
                         "commands): make a new running sandbox from the checkpoint with "
                         "sandbox_restore (checkpoint: \"c0ffee\").\nNot saved (3): /work/s: a "
                         "socket; ...")
        ck = {"id": "c2", "sandbox": {"id": "b2"}, "layer": {"files": 0}, "sessions": [
            {"name": "nb", "bytes": 90, "saved": ["x", "df"], "modules": ["json"],
             "skipped": [{"name": "f", "why": "a function of a cell"}]},
            {"name": "slow", "error": "interrupted"}]}
        self.assertIn("\nThe sessions' variables saved with it (sandbox_restore loads them into "
                      "sessions of the same names):\n- session 'nb': 2 globals (x, df); not: "
                      "f\n- session 'slow': failed (interrupted)", format_checkpoint(ck))
        rs = {"id": "n0", "name": "again", "checkpoint": "c0ffee",
              "layer": {"files": 1, "dirs": 0, "bytes": 3}, "not_restored": ["sessions/x"],
              "warning": "a directory rootfs"}
        self.assertEqual(format_restore(rs),
                         "Restored checkpoint c0ffee as a new sandbox n0 (name again), running: 1 "
                         "file (3 bytes). The processes of the checkpointed sandbox do not run in "
                         "it. Use it as any sandbox (sandbox: \"again\") and remove it with "
                         "sandbox_terminate.\nNot restored (1): sessions/x\nWarning: a directory "
                         "rootfs")


class TestPackaging(unittest.TestCase):
    def test_pyproject(self):
        try:
            import tomllib
        except ImportError:
            self.skipTest("tomllib needs Python 3.11")
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        with open(os.path.join(here, "pyproject.toml"), "rb") as f:
            meta = tomllib.load(f)
        import csrun
        self.assertEqual(meta["project"]["name"], "csrun")
        self.assertEqual(meta["project"]["version"], csrun.__version__)
        self.assertEqual(meta["project"]["dependencies"], [])
        for name in csrun.__all__:
            self.assertTrue(hasattr(csrun, name), name)


if __name__ == "__main__":
    unittest.main()
