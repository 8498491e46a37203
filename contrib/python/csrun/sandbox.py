"""``Sandbox``: a long-lived jail (``csrun sandbox``), with the methods of
openYuanrong's yr.sandbox whose csrun commands exist: create, exec,
exec_async, terminate and the context manager; plus inspect, stop, start.

Not here yet, because ``csrun sandbox`` has no command for them in this
build: file read/write/list/search and cp, checkpoint/restore, ports.
"""

import json
import subprocess

from ._binary import CsrunError, find_binary, last_line, run_json
from .results import ExecResult


def _secs(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError("%s must be a number of seconds >= 0, not %r" % (what, value))
    return "0" if value == 0 else "%gs" % value


class Sandbox:
    """A sandbox: ``Sandbox()`` creates one (and ``with Sandbox() as sb:``
    removes it at the end); ``Sandbox.attach(id_or_name)`` uses an existing one.

    name          -- a unique name, usable instead of the id
    rootfs        -- a rootfs tarball or directory (default: csrun's)
    env           -- {KEY: VALUE} for every command
    working_dir   -- the commands' working directory (default /work)
    cpu           -- CPU limit in millicores (1000 = one CPU)
    memory        -- memory limit in MiB
    idle_timeout  -- seconds without activity before it is removed (0: never)
    ttl           -- seconds after creation before it is removed
    A failed create raises :class:`CsrunError` (never a silent None).
    """

    def __init__(self, name=None, rootfs=None, env=None, working_dir=None, cpu=None,
                 memory=None, idle_timeout=300, ttl=None, *, pids=None, binary=None):
        self._binary = find_binary(binary)
        argv = ["sandbox", "create", "--json"]
        if name is not None:
            argv += ["--name", name]
        if rootfs is not None:
            argv += ["--rootfs", rootfs]
        for k, v in (env or {}).items():
            argv += ["--env", "%s=%s" % (k, v)]
        if working_dir is not None:
            argv += ["--workdir", working_dir]
        if cpu is not None:
            argv += ["--cpu", "%dm" % int(cpu)]
        if memory is not None:
            argv += ["--memory", "%dM" % int(memory)]
        if pids is not None:
            argv += ["--pids", str(int(pids))]
        if idle_timeout is not None:
            argv += ["--idle-timeout", _secs(idle_timeout, "idle_timeout")]
        if ttl is not None:
            argv += ["--ttl", _secs(ttl, "ttl")]
        doc, _ = run_json(argv, self._binary)
        self.id = doc["id"]
        self.name = doc.get("name")
        self._terminated = False

    @classmethod
    def attach(cls, id_or_name, *, binary=None):
        """The existing sandbox ID_OR_NAME (its id, a unique prefix, or its name)."""
        self = cls.__new__(cls)
        self._binary = find_binary(binary)
        doc, _ = run_json(["sandbox", "inspect", id_or_name], self._binary)
        self.id = doc["id"]
        self.name = doc.get("name")
        self._terminated = False
        return self

    def __repr__(self):
        return "Sandbox(id=%r, name=%r)" % (self.id, self.name)

    def _exec_argv(self, command, working_dir, env, timeout):
        argv = ["sandbox", "exec", "--json"]
        if working_dir is not None:
            argv += ["--workdir", working_dir]
        for k, v in (env or {}).items():
            argv += ["--env", "%s=%s" % (k, v)]
        if timeout is not None:
            argv += ["--timeout", _secs(timeout, "timeout")]
        argv.append(self.id)
        if isinstance(command, str):
            argv += ["--sh", command]
        else:
            argv += ["--"] + [str(a) for a in command]
        return argv

    def exec(self, command, working_dir=None, env=None, timeout=None):
        """Run COMMAND in the sandbox: a string runs under /bin/sh -c, a list
        as argv.  Returns an :class:`ExecResult` ({returncode, stdout,
        stderr, ...}); like yr.sandbox, a command that could not run comes
        back as returncode -1 with the reason in stderr (a timeout: "Command
        timed out after N seconds")."""
        doc, p = run_json(self._exec_argv(command, working_dir, env, timeout), self._binary,
                          accept=set(range(256)))
        if doc is None:
            why = last_line(p.stderr.decode("utf-8", "replace")) or "exit status %d" % p.returncode
            return ExecResult(returncode=-1, stdout="", stderr=why, error=why)
        return ExecResult(doc)

    def exec_async(self, command, working_dir=None, env=None, timeout=None):
        """Start COMMAND and return at once: an :class:`AsyncExec` whose
        ``result()`` waits for the :class:`ExecResult`."""
        argv = [self._binary] + self._exec_argv(command, working_dir, env, timeout)
        return AsyncExec(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE))

    def inspect(self):
        """The sandbox as ``csrun sandbox inspect`` prints it (a dict)."""
        doc, _ = run_json(["sandbox", "inspect", self.id], self._binary)
        return doc

    @property
    def status(self):
        return self.inspect().get("status")

    def stop(self):
        """Kill its processes; its files stay (``start`` brings it back)."""
        run_json(["sandbox", "stop", "--json", self.id], self._binary)

    def start(self):
        run_json(["sandbox", "start", "--json", self.id], self._binary)

    def terminate(self):
        """Remove the sandbox: its processes and files.  Doing it twice is no error."""
        if self._terminated:
            return
        doc, p = run_json(["sandbox", "rm", "--force", "--json", self.id], self._binary,
                          accept={2})
        if doc is None and "no such sandbox" not in p.stderr.decode("utf-8", "replace"):
            raise CsrunError(last_line(p.stderr.decode("utf-8", "replace")), p.returncode)
        self._terminated = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.terminate()
        return False


class AsyncExec:
    """A command started by ``Sandbox.exec_async``."""

    def __init__(self, proc):
        self._proc = proc
        self._result = None

    def done(self):
        return self._proc.poll() is not None

    def result(self, timeout=None):
        """Wait for the command (at most TIMEOUT seconds: subprocess.TimeoutExpired)."""
        if self._result is None:
            out, err = self._proc.communicate(timeout=timeout)
            text = out.decode("utf-8", "replace").strip()
            try:
                self._result = ExecResult(json.loads(text))
            except ValueError:
                why = last_line(err.decode("utf-8", "replace")) or "exit status %d" % self._proc.returncode
                self._result = ExecResult(returncode=-1, stdout="", stderr=why, error=why)
        return self._result

    def kill(self):
        """Stop it: the sandbox's keeper kills the command when its client goes."""
        self._proc.terminate()


__all__ = ["Sandbox", "AsyncExec"]
