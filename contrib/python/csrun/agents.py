"""Agent tools: CodeShield's ``create_code_execution_tool()``, and a
``ToolRunner`` that gives an OpenAI or Anthropic tool-call loop csrun's tools
(the schemas come from ``csrun tool-schema``: the same table as ``csrun mcp``)
and answers the model's calls.  Plain dicts in and out: no SDK is imported
(SDK objects with ``model_dump()`` are accepted too).

The annotations here are real objects (no ``from __future__ import
annotations``): agent SDKs read ``execute_python_code.__annotations__`` to
build a function schema.
"""

import json
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._binary import CsrunError, run_json
from .run import run
from .sandbox import Sandbox


def format_report(result) -> str:
    """The text CodeShield's tool returns for a :class:`RunResult`: the
    standard output when the code succeeded, else a report."""
    if result.ok:
        return result.stdout.strip()
    if result.status == "error":
        d = result.diagnosis
        return "error_type: CsrunError\nmessage: %s" % (d.message if d else "csrun failed")
    lines = ["The Python script did not execute successfully."]
    d = result.diagnosis
    if d is not None:
        lines.append("error_type: %s" % d.error_type)
        if d.root_cause_line is not None:
            lines.append("root_cause_line: %s" % d.root_cause_line)
        if d.message:
            lines.append("message: %s" % d.message)
    if result.stderr.strip():
        lines.append("stderr: %s" % result.stderr.strip())
    if result.timed_out:
        lines.append("timed_out: true")
    if result.silent_failure_detected:
        lines.append("silent_failure_detected: true")
    return "\n".join(lines)


def format_listing(doc) -> str:
    """The text of ``csrun sandbox ls/find --json``'s document DOC, as the
    MCP server's sandbox_list_files gives it: ls -l lines."""
    find = "matches" in doc
    entries = doc.get("matches" if find else "entries") or []
    n = len(entries)
    plural = "entry" if n == 1 else "entries"
    if find:
        lines = ["%d %s below %s matching '%s':" % (n, plural, doc["path"], doc.get("pattern", ""))]
    elif doc.get("type", "dir") != "dir":
        lines = ["%s:" % doc["path"]]
    else:
        lines = ["%s: %d %s" % (doc["path"], n, plural)]
    kinds = {"file": "-", "dir": "d", "symlink": "l", "fifo": "p", "socket": "s", "char": "c",
             "block": "b"}
    for e in entries:
        mode = int(e.get("mode") or "0", 8)
        bits = "".join(c if mode & (0o400 >> i) else "-" for i, c in enumerate("rwxrwxrwx"))
        name = e.get("path" if find else "name") or "?"
        lines.append("%s%s %10d %s %s%s%s" % (
            kinds.get(e.get("type"), "?"), bits, e.get("size") or 0, e.get("mtime") or "?", name,
            "/" if e.get("type") == "dir" else "",
            " -> " + e["target"] if e.get("target") else ""))
    if doc.get("truncated"):
        lines.append("(stopped after %d entries: max_entries; list a directory below, or use a "
                     "pattern)" % n)
    for s in doc.get("skipped") or []:
        lines.append("(not entered: %s: %s)" % (s.get("path"), s.get("reason")))
    if doc.get("skipped_more"):
        lines.append("(and %d more not entered)" % doc["skipped_more"])
    return "\n".join(lines)


def _layer_counts(layer):
    kinds = (("files", "file", "files"), ("dirs", "directory", "directories"),
             ("symlinks", "symbolic link", "symbolic links"),
             ("whiteouts", "deleted file of the rootfs", "deleted files of the rootfs"))
    parts = []
    for i, (key, one, many) in enumerate(kinds):
        n = (layer or {}).get(key) or 0
        if n or i == 0:
            parts.append("%d %s" % (n, one if n == 1 else many))
    return "%s (%d bytes)" % (", ".join(parts), (layer or {}).get("bytes") or 0)


def _list_line(title, items, total=0):
    items = items or []
    if not items and not total:
        return ""
    text = "\n%s (%d): %s" % (title, max(total, len(items)), "; ".join(items[:20]))
    return text + ("; ..." if len(items) > 20 or total > len(items) else "")


def _sessions_lines(sessions, key, title):
    """The sessions' globals a checkpoint saved (KEY "saved") or a restore
    loaded ("loaded"), when csrun's document has them."""
    if not sessions:
        return ""
    def names(items):
        items = [i if isinstance(i, str) else (i or {}).get("name", "?") for i in items or []]
        return ", ".join(items[:20]) + (", ..." if len(items) > 20 else "")
    text = "\n%s:" % title
    for x in sessions[:32]:
        text += "\n- session '%s': " % x.get("name", "?")
        if x.get("error"):
            text += "failed (%s)" % x["error"]
            continue
        done = x.get(key) or []
        text += "%d global%s" % (len(done), "" if len(done) == 1 else "s")
        text += " (%s)" % names(done) if done else ""
        text += "; not: %s" % names(x["skipped"]) if x.get("skipped") else ""
    return text + ("\n- ..." if len(sessions) > 32 else "")


def format_checkpoint(doc) -> str:
    """The text of ``csrun sandbox checkpoint --json``'s document, as the MCP
    server's sandbox_checkpoint gives it."""
    import time
    sbx = doc.get("sandbox") or {}
    text = "Checkpoint %s saved what was written in sandbox %s%s: %s; not its running " \
        "processes, nor /tmp." % (doc["id"], sbx.get("id"),
                                  " (%s)" % sbx["name"] if sbx.get("name") else "",
                                  _layer_counts(doc.get("layer")))
    if doc.get("expires"):
        text += " It expires at %s." % time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                    time.gmtime(doc["expires"]))
    else:
        text += " It does not expire."
    if doc.get("stopped"):
        text += (" The sandbox is stopped now (its processes ended, its files kept; it runs no "
                 "more commands): make a new running sandbox from the checkpoint with "
                 "sandbox_restore (checkpoint: \"%s\")." % doc["id"])
    else:
        text += (" The sandbox goes on running. sandbox_restore (checkpoint: \"%s\") makes a "
                 "new sandbox with these files." % doc["id"])
    text += _list_line("Not saved", doc.get("not_saved"), doc.get("not_saved_total") or 0)
    return text + _sessions_lines(doc.get("sessions"), "saved",
                                  "The sessions' variables saved with it (sandbox_restore loads "
                                  "them into sessions of the same names)")


def format_restore(doc) -> str:
    """The text of ``csrun sandbox restore --json``'s document, as the MCP
    server's sandbox_restore gives it."""
    name = doc.get("name")
    text = ("Restored checkpoint %s as a new sandbox %s%s, running: %s. The processes of the "
            "checkpointed sandbox do not run in it. Use it as any sandbox (sandbox: \"%s\") and "
            "remove it with sandbox_terminate." % (doc.get("checkpoint"), doc["id"],
                                                   " (name %s)" % name if name else "",
                                                   _layer_counts(doc.get("layer")),
                                                   name or doc["id"]))
    text += _list_line("Not restored", doc.get("not_restored"))
    text += _sessions_lines(doc.get("sessions"), "loaded",
                            "Sessions started again with their saved variables (sandbox_run "
                            "with the same session)")
    if doc.get("warning"):
        text += "\nWarning: %s" % doc["warning"]
    return text


# The options of csrun run that csrun sandbox run takes too (the pipeline's),
# those of them that take a value, and the others that take one (the jail's).
_PIPELINE_FLAGS = {"--no-heal", "--no-llm", "--no-silent-scan"}
_PIPELINE_VALUED = {"--policy", "--allow", "--max-code-size", "--max-attempts", "--heal-conf",
                    "--patch-cmd", "--patch-timeout", "--llm", "--llm-base-url", "--llm-ca-file",
                    "--env-file", "--llm-retries", "--llm-max-calls", "--llm-timeout",
                    "--silent-pattern", "--silent-conf"}
_JAIL_VALUED = {"--timeout", "-t", "--rootfs", "--cache-dir", "--with", "--memory", "-m",
                "--pids", "--cpus", "--cpu", "--seccomp", "--net", "--user", "--max-output",
                "--env", "-e", "--tmp-size", "--stdin", "--stdin-max", "--label", "--in",
                "--in-max", "--mount", "--out", "--out-max", "--out-path"}


def _pipeline_options(options):
    """Of csrun run's OPTIONS (a list of arguments), those of the pipeline,
    which csrun sandbox run takes too: a sandbox has its own jail."""
    out, it = [], iter(options)
    for a in it:
        name = a.split("=", 1)[0]
        if name in _PIPELINE_FLAGS:
            out.append(a)
        elif name in _PIPELINE_VALUED:
            out.append(a)
            if "=" not in a:
                out.append(next(it, ""))
        elif name in _JAIL_VALUED and "=" not in a:
            next(it, None)
    return out


def create_code_execution_tool(timeout: Optional[float] = None, options=(),
                               binary: Optional[str] = None) -> Callable[[str], str]:
    """Return CodeShield's drop-in ``execute_python_code(code: str) -> str``,
    running each call in a new csrun jail (``options`` are csrun run's, e.g.
    ``["--llm", "anthropic"]``)."""

    def execute_python_code(code: str) -> str:
        """Execute Python code in an isolated, self-healing sandbox.

        Use this tool to run numerical, statistical or data-processing
        computations that cannot be done directly in the conversation.

        Args:
            code: A valid Python script as a string.

        Returns:
            The stdout of the script if execution succeeds, or a structured
            error report if it fails after all self-healing attempts.
        """
        try:
            return format_report(run(code, timeout=timeout, options=options, binary=binary))
        except (CsrunError, ValueError) as exc:
            return "error_type: %s\nmessage: %s" % (type(exc).__name__, exc)

    return execute_python_code


def _plain(obj):
    """A dict (or list) from an SDK object, or the object itself."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump()
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    return obj


class ToolRunner:
    """csrun's tools for a model's tool-call loop.

    runner = ToolRunner()                       # execute_python_code only
    runner = ToolRunner(tools="all")            # and the sandbox tools
    tools = runner.openai_tools()               # or anthropic_tools(), gemini_tools()
    ... messages += runner.handle_openai(assistant_message)
    ... messages.append(runner.handle_anthropic(response.content))
    runner.close()                              # removes the sandboxes it made

    A call's failure (bad arguments, failed code) is an answer the model
    reads (is_error), never an exception.  OPTIONS (csrun run's) apply to
    execute_python_code; those of the pipeline among them (--policy,
    --allow, --no-heal, --llm, ...) apply to sandbox_run too.
    """

    ALL = ("execute_python_code", "sandbox_create", "sandbox_exec", "sandbox_write_file",
           "sandbox_read_file", "sandbox_list_files", "sandbox_run", "sandbox_checkpoint",
           "sandbox_restore", "sandbox_terminate")

    def __init__(self, tools=("execute_python_code",), timeout: Optional[float] = None,
                 options=(), binary: Optional[str] = None):
        self.tools = self.ALL if tools == "all" else tuple(tools)
        unknown = set(self.tools) - set(self.ALL)
        if unknown:
            raise ValueError("unknown tools: %s" % ", ".join(sorted(unknown)))
        self.timeout = timeout
        self.options = tuple(options)
        self.binary = binary
        self.sandboxes: Dict[str, Sandbox] = {}

    # ---- schemas
    def schemas(self, fmt: str) -> Any:
        """csrun tool-schema --format FMT, only this runner's tools."""
        doc, _ = run_json(["tool-schema", "--format", fmt, "--compact"], self.binary)
        if fmt == "openai":
            return [t for t in doc if t["function"]["name"] in self.tools]
        if fmt == "anthropic":
            return [t for t in doc if t["name"] in self.tools]
        if fmt == "gemini":
            return {"functionDeclarations": [t for t in doc["functionDeclarations"]
                                             if t["name"] in self.tools]}
        return {"tools": [t for t in doc["tools"] if t["name"] in self.tools]}

    def openai_tools(self) -> List[Dict[str, Any]]:
        return self.schemas("openai")

    def anthropic_tools(self) -> List[Dict[str, Any]]:
        return self.schemas("anthropic")

    def gemini_tools(self) -> Dict[str, Any]:
        return self.schemas("gemini")

    # ---- one call
    def call(self, name: str, arguments: Any) -> Tuple[str, bool]:
        """Run the tool NAME with ARGUMENTS (a dict, or its JSON text): (text, is_error)."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except ValueError as e:
                return "Invalid arguments for %s: not JSON (%s)" % (name, e), True
        if not isinstance(arguments, dict):
            return "Invalid arguments for %s: expected an object" % name, True
        if name not in self.tools:
            return "Unknown tool %r (the tools are %s)" % (name, ", ".join(self.tools)), True
        try:
            return getattr(self, "_" + name)(arguments)
        except (CsrunError, ValueError, TypeError, KeyError) as e:
            return "error_type: %s\nmessage: %s" % (type(e).__name__, e), True

    def _execute_python_code(self, a):
        code = a.get("code")
        if not isinstance(code, str):
            return "Invalid arguments for execute_python_code: arguments.code: expected a string", True
        files = {}
        for f in a.get("files") or []:
            data = f["content"]
            if f.get("encoding") == "base64":
                import base64
                data = base64.b64decode(data, validate=True)
            files[f["path"]] = data
        timeout = a.get("timeout", self.timeout)
        r = run(code, timeout=timeout, files=files, options=self.options, binary=self.binary)
        return format_report(r), not r.ok

    def _sandbox(self, ref):
        return self.sandboxes.get(ref) or Sandbox.attach(ref, binary=self.binary)

    def _sandbox_create(self, a):
        env = dict(kv.split("=", 1) for kv in a.get("env") or [])
        publish = a.get("publish") or []
        if not all(isinstance(p, int) and not isinstance(p, bool) for p in publish):
            return "Invalid arguments for sandbox_create: arguments.publish: expected integers", True
        sb = Sandbox(name=a.get("name"), env=env, working_dir=a.get("working_dir"),
                     cpu=a.get("cpu"), memory=a.get("memory"),
                     idle_timeout=a.get("idle_timeout", 300), ttl=a.get("ttl"),
                     publish=publish, binary=self.binary)
        self.sandboxes[sb.id] = sb
        if sb.name:
            self.sandboxes[sb.name] = sb
        text = ("Created sandbox %s. Run Python in it with sandbox_run and commands with "
                "sandbox_exec, move files with sandbox_write_file, sandbox_read_file and "
                "sandbox_list_files, save it with sandbox_checkpoint." % sb.id)
        for p in sb.ports() if publish else []:
            text += ("\nPort %s of the sandbox (a server there listens on it) is reached from "
                     "the host at %s." % (p["sandbox_url"], p["host_url"]))
        return text, False

    def _sandbox_exec(self, a):
        command = a.get("command") if a.get("command") is not None else a.get("argv")
        if command is None or (a.get("command") is not None and a.get("argv") is not None):
            return "Invalid arguments for sandbox_exec: give either command or argv", True
        env = dict(kv.split("=", 1) for kv in a.get("env") or [])
        r = self._sandbox(a["sandbox"]).exec(command, working_dir=a.get("working_dir"), env=env,
                                             timeout=a.get("timeout", self.timeout))
        if r["returncode"] == 0:
            return r["stdout"], False
        return ("The command failed: %s.\nstderr: %s\nstdout: %s"
                % (r.get("error") or "exit status %d" % r["returncode"], r["stderr"].rstrip("\n"),
                   r["stdout"]), True)

    def _sandbox_write_file(self, a):
        if (a.get("content") is None) == (a.get("content_base64") is None):
            return ("Invalid arguments for sandbox_write_file: give either content (text) or "
                    "content_base64 (bytes in base64)"), True
        if a.get("content") is not None:
            data = a["content"].encode("utf-8")
        else:
            import base64
            import binascii
            try:
                data = base64.b64decode(a["content_base64"], validate=True)
            except (binascii.Error, ValueError) as e:
                return ("Invalid arguments for sandbox_write_file: arguments.content_base64: "
                        "not base64 (%s)" % e), True
        r = self._sandbox(a["sandbox"]).write(a["path"], data, mode=a.get("mode"))
        return "Wrote %d bytes to %s." % (r["bytes"], r["path"]), False

    def _sandbox_read_file(self, a):
        data = self._sandbox(a["sandbox"]).read(a["path"], format="bytes",
                                                max_size=a.get("max_bytes", 131072))
        if b"\0" not in data:
            try:
                return data.decode("utf-8"), False
            except UnicodeDecodeError:
                pass
        import base64
        return ("%s is %d bytes of binary data (not UTF-8 text). In base64:\n%s"
                % (a["path"], len(data), base64.b64encode(data).decode())), False

    def _sandbox_list_files(self, a):
        sb = self._sandbox(a["sandbox"])
        n = str(int(a.get("max_entries", 500)))
        path = a.get("path") or "."
        if a.get("pattern") is not None:
            argv = ["sandbox", "find", "--json", "--max-entries", n, sb.id, a["pattern"], path]
        else:
            argv = ["sandbox", "ls", "--json", "--max-entries", n] \
                + (["--recursive"] if a.get("recursive") else []) + [sb.id, path]
        doc, _ = run_json(argv, self.binary)
        return format_listing(doc), False

    def _sandbox_run(self, a):
        code = a.get("code")
        if not isinstance(code, str):
            return "Invalid arguments for sandbox_run: arguments.code: expected a string", True
        r = self._sandbox(a["sandbox"]).run(code, session=a.get("session"),
                                            timeout=a.get("timeout", self.timeout),
                                            options=_pipeline_options(self.options))
        text = format_report(r)
        if (r.session or {}).get("lost"):
            text += ("\nsession_lost: true (the session '%s' was ended: its variables are gone, "
                     "the next call with it starts a new interpreter)" % r.session.get("name"))
        return text, not r.ok

    def _sandbox_checkpoint(self, a):
        sb = self._sandbox(a["sandbox"])
        sb.checkpoint(ttl=a.get("ttl", -1), leave_running=bool(a.get("leave_running")))
        return format_checkpoint(sb.last_checkpoint), False

    def _sandbox_restore(self, a):
        sb = Sandbox.restore(a["checkpoint"], name=a.get("name"), binary=self.binary)
        self.sandboxes[sb.id] = sb
        if sb.name:
            self.sandboxes[sb.name] = sb
        return format_restore(sb.restored), False

    def _sandbox_terminate(self, a):
        sb = self._sandbox(a["sandbox"])
        sb.terminate()
        for k in [k for k, v in self.sandboxes.items() if v is sb]:
            del self.sandboxes[k]
        return "Removed sandbox %s." % sb.id, False

    # ---- the SDKs' loops
    def handle_openai(self, message: Any) -> List[Dict[str, Any]]:
        """The answers to an OpenAI response's tool calls.

        MESSAGE is a Chat Completions assistant message ({"tool_calls": [...]})
        -> a list of {"role": "tool", "tool_call_id", "content"} messages; or
        the Responses API's output items (a list with {"type": "function_call"}
        items) -> a list of {"type": "function_call_output", "call_id", "output"}.
        """
        message = _plain(message)
        if isinstance(message, list):
            out = []
            for item in map(_plain, message):
                if item.get("type") == "function_call":
                    text, _ = self.call(item["name"], item.get("arguments") or "{}")
                    out.append({"type": "function_call_output", "call_id": item["call_id"],
                                "output": text})
            return out
        out = []
        for tc in message.get("tool_calls") or []:
            tc = _plain(tc)
            fn = tc.get("function") or {}
            text, _ = self.call(fn.get("name", ""), fn.get("arguments") or "{}")
            out.append({"role": "tool", "tool_call_id": tc["id"], "content": text})
        return out

    def handle_anthropic(self, content: Any) -> Optional[Dict[str, Any]]:
        """The user message answering an Anthropic response's tool_use blocks
        (CONTENT: the response's content list, or the response itself):
        {"role": "user", "content": [{"type": "tool_result", ...}]}, or None
        when the model asked for no tool."""
        content = _plain(content)
        if isinstance(content, dict):
            content = content.get("content") or []
        results = []
        for block in map(_plain, content):
            if block.get("type") != "tool_use":
                continue
            text, is_error = self.call(block["name"], block.get("input") or {})
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": text,
                            "is_error": is_error})
        return {"role": "user", "content": results} if results else None

    def close(self):
        """Remove the sandboxes this runner made."""
        for sb in set(self.sandboxes.values()):
            try:
                sb.terminate()
            except CsrunError:
                pass
        self.sandboxes.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


__all__ = ["create_code_execution_tool", "format_report", "format_listing", "format_checkpoint",
           "format_restore", "ToolRunner"]
