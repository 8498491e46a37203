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
                   ToolRunner, check, create_code_execution_tool, run)

BIN = os.environ.get("CSRUN")


def setUpModule():
    if not BIN or not os.access(BIN, os.X_OK):
        raise unittest.SkipTest("CSRUN does not name the csrun binary")
    if not os.environ.get("CSRUN_SANDBOX_DIR"):
        os.environ["CSRUN_SANDBOX_DIR"] = tempfile.mkdtemp(prefix="csrun-py-sbx.")


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


class TestToolRunner(unittest.TestCase):
    def test_schemas_are_csrun_tool_schema(self):
        runner = ToolRunner(tools="all")
        oa = runner.openai_tools()
        self.assertEqual([t["function"]["name"] for t in oa], list(ToolRunner.ALL))
        an = ToolRunner().anthropic_tools()
        self.assertEqual([t["name"] for t in an], ["execute_python_code"])
        self.assertEqual(an[0]["input_schema"]["required"], ["code"])
        self.assertEqual(len(runner.gemini_tools()["functionDeclarations"]), 4)
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
            sid = runner.sandboxes["agentbox"].id
        self.assertFalse(os.path.exists(os.path.join(os.environ["CSRUN_SANDBOX_DIR"], sid)),
                         "close() removes the runner's sandboxes")


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
