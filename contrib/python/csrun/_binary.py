"""Finding and running the csrun binary (no dependency but the standard library)."""

import json
import os
import shutil
import subprocess


class CsrunError(Exception):
    """csrun could not do what was asked: a usage error (exit status 2), csrun
    itself failed (125), or the binary is missing.  ``returncode`` and
    ``stderr`` say what csrun said."""

    def __init__(self, message, returncode=None, stderr=""):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


def find_binary(binary=None):
    """The csrun to run: BINARY, else $CSRUN, else ``csrun`` on PATH."""
    path = binary or os.environ.get("CSRUN") or shutil.which("csrun")
    if not path:
        raise CsrunError("csrun is not installed (not on PATH; set CSRUN or pass binary=)")
    return path


def last_line(text):
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def run_json(argv, binary=None, input=None, timeout=None, accept=None):
    """Run csrun ARGV (a --json command) and return (document, completed process).

    The document is None when csrun printed none; then a CsrunError is raised
    unless ACCEPT (a set of exit statuses) contains the status.
    """
    cmd = [find_binary(binary)] + list(argv)
    try:
        p = subprocess.run(cmd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
    except FileNotFoundError as e:
        raise CsrunError("cannot run csrun: %s" % e) from None
    except subprocess.TimeoutExpired:
        raise CsrunError("csrun %s did not end within %s s" % (argv[0], timeout)) from None
    stderr = p.stderr.decode("utf-8", "replace")
    doc = None
    out = p.stdout.decode("utf-8", "replace").strip()
    if out:
        try:
            doc = json.loads(out)
        except ValueError:
            doc = None
    if doc is None and not (accept and p.returncode in accept):
        why = last_line(stderr) or "exit status %d" % p.returncode
        raise CsrunError(why, p.returncode, stderr)
    return doc, p
