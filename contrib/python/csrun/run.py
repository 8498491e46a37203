"""``run`` and ``check``: one snippet through csrun's pipeline (a disposable jail,
the AST gate, the silent-failure scan, healing) or through the gate alone."""

import os
import shutil
import tempfile

from ._binary import CsrunError, run_json
from .results import CheckResult, RunResult


def _seconds(value):
    """A duration for csrun's options: 1.5 -> "1.5s"."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError("a duration in seconds must be a positive number, not %r" % (value,))
    return "%gs" % value


def _dest(path):
    if not isinstance(path, str) or not path or ":" in path:
        raise ValueError("a file's path must be a non-empty string without ':': %r" % (path,))
    return path if path.startswith("/") else "/work/" + path


def _bytes(data):
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def run(code, *, args=(), timeout=None, files=None, stdin=None, env=None, options=(),
        binary=None):
    """Run CODE (a whole Python program, str or bytes) in a new jail and return a
    :class:`RunResult` (``result.ok``, ``result.stdout``, ``result.diagnosis``...).

    args     -- sys.argv[1:] of the snippet
    timeout  -- seconds per attempt (csrun's default: 60)
    files    -- {path: str or bytes} put in the jail first (relative paths are below /work)
    stdin    -- str or bytes the snippet reads on its standard input (every attempt)
    env      -- {KEY: VALUE} added to the jail's environment
    options  -- more csrun run options, e.g. ["--memory", "1G", "--llm", "openai"]
    binary   -- the csrun binary (default $CSRUN, else csrun on PATH)

    A usage error (bad options, empty code...) raises :class:`CsrunError`; a
    failure of csrun itself comes back as a result whose status is "error".
    """
    argv = ["run", "--json"]
    t = _seconds(timeout)
    if t:
        argv += ["--timeout", t]
    for k, v in (env or {}).items():
        argv += ["--env", "%s=%s" % (k, v)]
    tmp = None
    try:
        if files or stdin is not None:
            tmp = tempfile.mkdtemp(prefix="csrun-py.")
        for i, (path, data) in enumerate((files or {}).items()):
            dest = _dest(path)
            src = os.path.join(tmp, str(i))
            with open(src, "wb") as f:
                f.write(_bytes(data))
            argv += ["--in", "%s:%s" % (src, dest)]
        if stdin is not None:
            src = os.path.join(tmp, "stdin")
            with open(src, "wb") as f:
                f.write(_bytes(stdin))
            argv += ["--stdin", src]
        argv += list(options) + ["-"] + [str(a) for a in args]
        doc, _ = run_json(argv, binary, input=_bytes(code))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return RunResult.from_json(doc)


def check(code, *, options=(), binary=None):
    """Run only the AST gate on CODE (in a jail; the code does not run) and
    return a :class:`CheckResult` (``passed``, ``verdict``, ``violations``)."""
    doc, _ = run_json(["check", "--json"] + list(options) + ["-"], binary, input=_bytes(code))
    return CheckResult.from_json(doc)


__all__ = ["run", "check", "CsrunError"]
