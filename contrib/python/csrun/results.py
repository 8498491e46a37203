"""Typed results of csrun's --json documents, shaped like CodeShield's
(``ExecutionResult``, ``ErrorDiagnosis``), with csrun's extra knowledge: the
status, every attempt and the patches that healed the code."""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass(frozen=True)
class ErrorDiagnosis:
    """Why a run failed: the exception's class (or csrun's own kind of failure:
    StaticSafetyViolation, Timeout, OutOfMemory, SilentFailure, ...), the
    failing line of the snippet, the message and the lines around it."""

    error_type: str
    root_cause_line: Optional[int] = None
    message: str = ""
    context: List[str] = field(default_factory=list)
    hint: Optional[str] = None

    @classmethod
    def from_json(cls, d):
        if not d:
            return None
        context = d.get("context") or ""
        return cls(error_type=d.get("error_type") or "UnknownError",
                   root_cause_line=d.get("line"),
                   message=d.get("message") or "",
                   context=context.splitlines(),
                   hint=d.get("hint"))


@dataclass(frozen=True)
class Patch:
    """A fix csrun made after a failed attempt (run by the next one)."""

    attempt: int
    source: str  # "local", "llm", "patch-cmd"
    rules: Optional[str]
    diff: str
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)


@dataclass(frozen=True)
class RunResult:
    """The outcome of ``csrun run``: the final attempt's output and status.

    ``exit_code`` is None when the snippet did not exit by itself (killed,
    timed out, blocked before it ran has the gate's status 3).  ``duration``
    is the whole run in seconds (every attempt, healing included).
    """

    status: str  # ok, healed, failed, blocked, timeout, error, interrupted
    stdout: str
    stderr: str
    exit_code: Optional[int]
    duration: float
    timed_out: bool
    silent_failure_detected: bool
    diagnosis: Optional[ErrorDiagnosis]
    patches: List[Patch]
    final_code: Optional[str]
    attempts: List[Dict[str, Any]] = field(repr=False)
    raw: Dict[str, Any] = field(repr=False)

    @property
    def ok(self):
        """The code succeeded (possibly after healing)."""
        return self.status in ("ok", "healed")

    @property
    def healed(self):
        return self.status == "healed"

    @property
    def duration_seconds(self):
        """CodeShield's name for ``duration``."""
        return self.duration

    @property
    def sandbox(self):
        """The sandbox's id when the run was in one (``Sandbox.run``), else None."""
        return self.raw.get("sandbox")

    @property
    def session(self):
        """A cell's session: {name, cell, started, lost}, else None."""
        return self.raw.get("session")

    @classmethod
    def from_json(cls, doc):
        attempts = doc.get("attempts") or []
        last = attempts[-1] if attempts else {}
        patches = []
        for a in attempts:
            p = a.get("patch")
            if p:
                patches.append(Patch(attempt=a.get("attempt", 0), source=p.get("source", ""),
                                     rules=p.get("rules"), diff=p.get("diff", ""), raw=p))
        diag = doc.get("diagnosis")
        if diag is None and doc.get("status") not in ("ok", "healed"):
            diag = last.get("diagnosis")
        if diag is None and doc.get("status") == "error":
            diag = {"error_type": "CsrunError", "message": doc.get("error", "")}
        return cls(status=doc.get("status", "error"),
                   stdout=last.get("stdout", ""),
                   stderr=last.get("stderr", ""),
                   exit_code=last.get("exit_code"),
                   duration=(doc.get("duration_ms") or 0) / 1000.0,
                   timed_out=bool(last.get("timed_out")),
                   silent_failure_detected=bool((last.get("silent_failure") or {}).get("detected")),
                   diagnosis=ErrorDiagnosis.from_json(diag),
                   patches=patches,
                   final_code=doc.get("final_code"),
                   attempts=attempts,
                   raw=doc)


@dataclass(frozen=True)
class CheckResult:
    """The gate's verdict on a snippet (``csrun check``), without running it."""

    verdict: str  # pass, blocked, syntax_error
    violations: List[Dict[str, Any]]
    diagnosis: Optional[ErrorDiagnosis]
    raw: Dict[str, Any] = field(repr=False)

    @property
    def passed(self):
        return self.verdict == "pass"

    @classmethod
    def from_json(cls, doc):
        attempts = doc.get("attempts") or [{}]
        gate = attempts[0].get("gate") or {}
        return cls(verdict=gate.get("verdict", doc.get("status", "error")),
                   violations=gate.get("violations") or [],
                   diagnosis=ErrorDiagnosis.from_json(doc.get("diagnosis")),
                   raw=doc)


class ExecResult(dict):
    """The result of ``Sandbox.exec``: ``returncode``, ``stdout``, ``stderr``
    as yr.sandbox's dict (``r["returncode"]``) and as attributes
    (``r.returncode``); more keys from ``csrun sandbox exec --json``
    (``timed_out``, ``duration_ms``, ...)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass(frozen=True)
class FileEntry:
    """An entry of a sandbox's files (``csrun sandbox ls/find --json``), with
    yr.sandbox's EntryInfo names too (``permissions``, ``modified_time``).

    name   -- the path below the listed directory (``ls``), or the whole path
    path   -- the whole path in the sandbox
    type   -- file, dir, symlink, fifo, socket, char, block or other
    size   -- bytes
    mode   -- permission bits as an int (``permissions``: "0644")
    mtime  -- modification time, ISO 8601 UTC (``modified_time``: seconds since the epoch)
    target -- a symlink's target, else None
    """

    name: str
    path: str
    type: str
    size: int
    mode: int
    mtime: str
    target: Optional[str] = None

    @property
    def permissions(self):
        return "%04o" % self.mode

    @property
    def modified_time(self):
        import calendar
        import time
        try:
            return float(calendar.timegm(time.strptime(self.mtime, "%Y-%m-%dT%H:%M:%SZ")))
        except ValueError:
            return 0.0

    @property
    def is_dir(self):
        return self.type == "dir"

    @classmethod
    def from_json(cls, d):
        path = d.get("path") or ""
        return cls(name=d.get("name") or path, path=path, type=d.get("type") or "other",
                   size=int(d.get("size") or 0), mode=int(d.get("mode") or "0", 8),
                   mtime=d.get("mtime") or "", target=d.get("target"))
