"""``Sandbox``: a long-lived jail (``csrun sandbox``), with openYuanrong
yr.sandbox's methods: create (with ports), exec, exec_async, terminate, the
context manager, files (``sb.files.read``, ``write``, ``list``, ``exists``,
``copy_from_local``, ``copy_to_local``, as yr.sandbox's Filesystem),
``get_port_url``, ``checkpoint(ttl=-1, leave_running=False)`` and
``Sandbox.restore(ckpt_id)``; plus inspect, stop, start, find, ports,
shorter names for the files (``read``, ``write``, ``ls``, ``find``,
``upload``, ``download``), Python through csrun's pipeline in the sandbox
(``run``) and persistent interpreters (``session(name).run(code)``,
``sessions``, ``remove_session``), and the checkpoints (``checkpoints``,
``remove_checkpoint``).
"""

import json
import os
import subprocess

from ._binary import CsrunError, find_binary, last_line, run_json
from .results import ExecResult, FileEntry, RunResult


def _secs(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError("%s must be a number of seconds >= 0, not %r" % (what, value))
    return "0" if value == 0 else "%gs" % value


def _port_spec(p, what):
    """A --publish from an int (a sandbox port, forwarded from a free port of
    the host's 127.0.0.1), an object with .port (yr's PortForwarding) or a
    csrun spec string "[HOSTIP:]HOSTPORT:PORT"."""
    if hasattr(p, "port") and not isinstance(p, (str, int)):
        p = p.port
    if isinstance(p, bool) or not isinstance(p, (int, str)):
        raise ValueError("%s: %r is not a port or a '[HOSTIP:]HOSTPORT:PORT' string" % (what, p))
    if isinstance(p, int):
        if not 1 <= p <= 65535:
            raise ValueError("%s: port %d is not between 1 and 65535" % (what, p))
        return "127.0.0.1:0:%d" % p
    return p


def _code(code):
    if isinstance(code, str):
        return code.encode("utf-8")
    if isinstance(code, (bytes, bytearray, memoryview)):
        return bytes(code)
    raise TypeError("code must be str or bytes, not %s" % type(code).__name__)


def _local(path):
    """A host path for ``csrun sandbox cp``: never read as ID:PATH or '-'."""
    path = os.fspath(path)
    return path if path.startswith(("/", "./", "../")) else "./" + path


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
    publish       -- ports of the sandbox the host reaches: an int PORT (from a
                     free port of the host's 127.0.0.1: see ``get_port_url``)
                     or csrun's "[HOSTIP:]HOSTPORT:PORT"
    port_forwardings -- yr.sandbox's name for ``publish`` (ints or objects with .port)
    upstream      -- "PORT:HOST:HOSTPORT" (or a list of them): the sandbox reaches
                     HOST:HOSTPORT at its own 127.0.0.1:PORT, and nothing else
    A failed create raises :class:`CsrunError` (never a silent None).
    """

    def __init__(self, name=None, rootfs=None, env=None, working_dir=None, cpu=None,
                 memory=None, idle_timeout=300, ttl=None, *, pids=None, publish=None,
                 port_forwardings=None, upstream=None, allow_all_interfaces=False,
                 binary=None):
        self._binary = find_binary(binary)
        argv = ["sandbox", "create", "--json"]
        for p in list(publish or []) + list(port_forwardings or []):
            argv += ["--publish", _port_spec(p, "publish")]
        if isinstance(upstream, str):
            upstream = [upstream]
        for u in upstream or []:
            argv += ["--upstream", str(u)]
        if allow_all_interfaces:
            argv.append("--allow-all-interfaces")
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

    # ---- files (csrun sandbox read/write/ls/find/cp): binary-safe

    @property
    def files(self):
        """yr.sandbox's file API: ``sb.files.read/write/list/exists/copy_from_local/
        copy_to_local`` (and ``find``)."""
        return SandboxFiles(self)

    def _run(self, argv, input=None):
        """csrun ARGV; its completed process, or CsrunError with its last line."""
        try:
            p = subprocess.run([self._binary] + argv, input=input, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
        except OSError as e:
            raise CsrunError("cannot run csrun: %s" % e) from None
        if p.returncode != 0:
            err = p.stderr.decode("utf-8", "replace")
            raise CsrunError(last_line(err) or "exit status %d" % p.returncode, p.returncode, err)
        return p

    def read(self, path, format="text", max_size=None):
        """The contents of the file PATH of the sandbox (absolute, or relative to
        its working directory): a str (``format="text"``, UTF-8, undecodable
        bytes replaced) or the bytes as they are (``format="bytes"``).
        MAX_SIZE: refuse a larger file (default: csrun's 1G)."""
        if format not in ("text", "bytes"):
            raise ValueError("format must be 'text' or 'bytes', not %r" % (format,))
        argv = ["sandbox", "read"]
        if max_size is not None:
            argv += ["--max-size", str(int(max_size))]
        data = self._run(argv + [self.id, path]).stdout
        return data if format == "bytes" else data.decode("utf-8", "replace")

    def write(self, path, data, mode=None):
        """Write DATA (str: UTF-8; bytes) to the file PATH of the sandbox: its
        parents made, an existing file replaced whole.  MODE: permission bits
        (an int, e.g. 0o755, or octal text, "755").  Returns {"sandbox", "path" (the whole path), "bytes"}."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError("data must be str or bytes, not %s" % type(data).__name__)
        argv = ["sandbox", "write", "--json"]
        if mode is not None:
            argv += ["--mode", mode if isinstance(mode, str) else "%o" % mode]
        p = self._run(argv + [self.id, path], input=bytes(data))
        return json.loads(p.stdout.decode("utf-8"))

    def _listing(self, argv):
        doc = json.loads(self._run(argv).stdout.decode("utf-8"))
        entries = doc.get("entries", doc.get("matches")) or []
        return [FileEntry.from_json(e) for e in entries], doc

    def ls(self, path=".", recursive=False, max_entries=None):
        """The entries of the directory PATH (default: the working directory;
        a file: itself) as :class:`FileEntry` objects, sorted by name; the
        whole tree below with RECURSIVE.  More than MAX_ENTRIES (csrun's
        default 100000) raises CsrunError rather than a silent cut."""
        argv = ["sandbox", "ls", "--json"] + (["--recursive"] if recursive else [])
        if max_entries is not None:
            argv += ["--max-entries", str(int(max_entries))]
        entries, doc = self._listing(argv + [self.id, path])
        if doc.get("truncated"):
            raise CsrunError("%s: more than %d entries (max_entries)" % (path, len(entries)))
        return entries

    def list(self, path=".", depth=1):
        """yr.sandbox's ``list``: the entries of PATH down to DEPTH levels
        (1: the directory itself; None or 0: all)."""
        entries = self.ls(path, recursive=depth != 1)
        if depth:
            entries = [e for e in entries if e.name.count("/") < depth]
        return entries

    def find(self, pattern, path=".", max_entries=None):
        """The entries below PATH whose name matches the glob PATTERN (or whose
        path below PATH does, when PATTERN has a '/'), as :class:`FileEntry`."""
        argv = ["sandbox", "find", "--json"]
        if max_entries is not None:
            argv += ["--max-entries", str(int(max_entries))]
        entries, doc = self._listing(argv + [self.id, pattern, path])
        if doc.get("truncated"):
            raise CsrunError("%s: more than %d matches (max_entries)" % (path, len(entries)))
        return entries

    def exists(self, path):
        """Whether PATH exists in the sandbox (a symlink counts, even dangling)."""
        try:
            self._run(["sandbox", "ls", "--json", "--max-entries", "1", self.id, path])
        except CsrunError as e:
            if e.returncode == 1 and "No such file or directory" in str(e):
                return False
            raise
        return True

    def _cp(self, src, dst):
        argv = [self._binary, "sandbox", "cp", "--json", src, dst]
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        err = p.stderr.decode("utf-8", "replace")
        doc = None
        try:
            doc = json.loads(p.stdout.decode("utf-8") or "null")
        except ValueError:
            pass
        if p.returncode != 0 or not doc:
            e = CsrunError(last_line(err) or "exit status %d" % p.returncode, p.returncode, err)
            e.result = doc  # a copy that refused some entries says which
            raise e
        return doc

    def upload(self, local_path, remote_path):
        """Copy the host's file or directory LOCAL_PATH into the sandbox at
        REMOTE_PATH (as cp -r: into it when it is a directory).  Binary-safe;
        symlinks are copied as links.  Returns csrun's counts {files, dirs,
        symlinks, bytes, ...}; an entry refused raises CsrunError (its
        ``result`` has the counts and the refused entries)."""
        return self._cp(_local(local_path), "%s:%s" % (self.id, remote_path))

    def download(self, remote_path, local_path):
        """Copy the sandbox's file or directory REMOTE_PATH to the host's
        LOCAL_PATH (as cp -r).  Returns csrun's counts, as ``upload``."""
        return self._cp("%s:%s" % (self.id, remote_path), _local(local_path))

    # ---- ports (csrun sandbox port ls)

    def ports(self):
        """The sandbox's ports as ``csrun sandbox port ls --json`` gives them:
        dicts with type (publish, upstream), port (in the sandbox),
        host_port, host_url, sandbox_url, connections."""
        doc, _ = run_json(["sandbox", "port", "ls", "--json", self.id], self._binary)
        return doc.get("ports") or []

    def get_port_url(self, port):
        """The host's URL of the sandbox's published PORT (tcp://127.0.0.1:N);
        ValueError when PORT is not published (as yr.sandbox)."""
        for p in self.ports():
            if p.get("type") == "publish" and p.get("port") == port:
                return p["host_url"]
        raise ValueError("port %r of the sandbox is not published" % (port,))

    def get_tunnel_url(self, port=None):
        """The sandbox's URL of an upstream (tcp://127.0.0.1:PORT): the only
        one, or the one at PORT; ValueError when there is none."""
        ups = [p for p in self.ports() if p.get("type") == "upstream"
               and (port is None or p.get("port") == port)]
        if len(ups) != 1:
            raise ValueError("no upstream%s (or several: give the port)"
                             % ("" if port is None else " at port %r" % (port,)))
        return ups[0]["sandbox_url"]

    # ---- Python through the pipeline (csrun sandbox run), sessions

    def run(self, code, session=None, *, timeout=None, options=()):
        """Run CODE (a Python program, str or bytes) in the sandbox through
        csrun's pipeline -- the gate, the silent-failure scan, the diagnosis
        and the healing of ``csrun.run`` -- every attempt inside the
        sandbox, in its working directory, seeing and changing its files.
        With SESSION (a name), CODE is a cell of that persistent interpreter
        (see :meth:`session`).  Returns a :class:`RunResult`, as
        ``csrun.run`` does (``result.session``: the cell's session).

        timeout -- seconds per attempt (csrun's default: 60); the sandbox and
                   a session live on after it
        options -- more csrun sandbox run options (the pipeline's: --policy,
                   --allow, --no-heal, --llm, ...)

        A usage error, an unknown or stopped sandbox, a busy session raise
        :class:`CsrunError`."""
        argv = ["sandbox", "run", "--json"]
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
                raise ValueError("timeout must be a positive number of seconds, not %r"
                                 % (timeout,))
            argv += ["--timeout", "%gs" % timeout]
        if session is not None:
            argv += ["--session", str(session)]
        argv += list(options) + [self.id, "-"]
        doc, _ = run_json(argv, self._binary, input=_code(code))
        return RunResult.from_json(doc)

    def session(self, name):
        """The session NAME of this sandbox: a Python interpreter that lives
        between runs (like a notebook's kernel).  ``session.run(code)`` runs a
        cell in it (started by the first cell); its globals stay for the next
        cells."""
        return Session(self, name)

    def sessions(self):
        """The sandbox's sessions (``csrun sandbox session ls --json``): dicts
        with name, pid, state (idle, busy), cells, created, idle_ms."""
        doc, _ = run_json(["sandbox", "session", "ls", "--json", self.id], self._binary)
        return doc

    def remove_session(self, name):
        """End the session NAME (a cell running in it is reported lost).  An
        unknown session raises :class:`CsrunError`."""
        run_json(["sandbox", "session", "rm", "--json", self.id, str(name)], self._binary)

    # ---- checkpoints (csrun sandbox checkpoint/restore)

    def checkpoint(self, ttl=-1, leave_running=False):
        """Save the sandbox's files (its writable layer and spec; not its
        processes' memory, nor /tmp) as a checkpoint and return its id, as
        yr.sandbox does.  TTL: seconds the checkpoint is kept (-1 or None:
        until it is removed).  Without LEAVE_RUNNING the sandbox is stopped
        afterwards (``start`` brings it back).  The whole description
        (counts, what was not saved) is in ``last_checkpoint``."""
        argv = ["sandbox", "checkpoint", "--json"]
        if ttl is not None and ttl != -1:
            if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl <= 0:
                raise ValueError("ttl must be a positive number of seconds, or -1, not %r"
                                 % (ttl,))
            argv += ["--ttl", "%gs" % ttl]
        if leave_running:
            argv.append("--leave-running")
        doc, _ = run_json(argv + [self.id], self._binary)
        self.last_checkpoint = doc
        return doc["id"]

    @classmethod
    def restore(cls, ckpt_id, name=None, *, binary=None):
        """A new sandbox made from the checkpoint CKPT_ID (its id or a unique
        prefix), running once this returns: the checkpoint's files, the
        limits and environment of the sandbox it came from, no process.
        NAME: a name for the new sandbox.  A damaged, expired or unknown
        checkpoint raises :class:`CsrunError`.  ``restored`` holds csrun's
        report (layer counts, not_restored)."""
        self = cls.__new__(cls)
        self._binary = find_binary(binary)
        argv = ["sandbox", "restore", "--json"]
        if name is not None:
            argv += ["--name", name]
        doc, _ = run_json(argv + [ckpt_id], self._binary)
        self.id = doc["id"]
        self.name = doc.get("name")
        self.restored = doc
        self._terminated = False
        return self

    @staticmethod
    def checkpoints(*, binary=None):
        """Every checkpoint of this user (``csrun sandbox checkpoint ls --json``):
        dicts with id, created, expires, sandbox {id, name}, layer, archive..."""
        doc, _ = run_json(["sandbox", "checkpoint", "ls", "--json"], find_binary(binary))
        return doc

    @staticmethod
    def remove_checkpoint(ckpt_id, *, binary=None):
        """Remove the checkpoint CKPT_ID.  An unknown one raises :class:`CsrunError`."""
        run_json(["sandbox", "checkpoint", "rm", "--json", ckpt_id], find_binary(binary))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.terminate()
        return False


class Session:
    """A session of a sandbox (``Sandbox.session(name)``): a persistent
    Python interpreter whose globals survive between cells.  A cell that
    raises leaves it alive; a timeout interrupts the cell, not the session."""

    def __init__(self, sandbox, name):
        self.sandbox = sandbox
        self.name = name

    def __repr__(self):
        return "Session(sandbox=%r, name=%r)" % (self.sandbox.id, self.name)

    def run(self, code, *, timeout=None, options=()):
        """Run CODE as the next cell: a :class:`RunResult` (``sandbox.run``)."""
        return self.sandbox.run(code, session=self.name, timeout=timeout, options=options)

    def remove(self):
        """End the session (its globals are gone)."""
        self.sandbox.remove_session(self.name)

    def save(self, path):
        """Write the session's picklable globals to the host file PATH;
        returns csrun's report of what was saved and what was not."""
        doc, _ = run_json(["sandbox", "session", "save", "--json", self.sandbox.id, self.name,
                           _local(path)], self.sandbox._binary)
        return doc

    def load(self, path):
        """Put a save (``save``) into this session (started if needed).
        Unpickling runs the save's code in the session: load only your own."""
        doc, _ = run_json(["sandbox", "session", "load", "--json", self.sandbox.id, self.name,
                           _local(path)], self.sandbox._binary)
        return doc


class SandboxFiles:
    """``sb.files``: yr.sandbox's Filesystem names over ``csrun sandbox``."""

    def __init__(self, sandbox):
        self._sb = sandbox

    def read(self, path, format="text"):
        return self._sb.read(path, format=format)

    def write(self, path, data, mode=None):
        """Write DATA; returns the written file as a :class:`FileEntry`."""
        r = self._sb.write(path, data, mode=mode)
        return self._sb.ls(r["path"])[0]

    def list(self, path=".", depth=1):
        return self._sb.list(path, depth=depth)

    def find(self, pattern, path="."):
        return self._sb.find(pattern, path)

    def exists(self, path):
        return self._sb.exists(path)

    def copy_from_local(self, local_path, remote_path):
        self._sb.upload(local_path, remote_path)

    def copy_to_local(self, remote_path, local_path):
        self._sb.download(remote_path, local_path)


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


__all__ = ["Sandbox", "Session", "SandboxFiles", "AsyncExec"]
