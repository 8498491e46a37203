#!/bin/bash
# The Python client (contrib/python: run, check, Sandbox, create_code_execution_tool,
# ToolRunner) against the built binary, with Debian's python3 and unittest
# (contrib/python/tests/test_csrun.py, printed as TAP by contrib/python/tests/tap.py).
# Root and rootless.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
. "$CSRUN_SRCDIR/tests/lib/sandbox.sh"

if [ ! -x /usr/bin/python3 ]; then
  skip "the Python client" "no /usr/bin/python3 (apt-get install python3)"
  done_testing
  exit
fi
# The runner prints the whole TAP stream (its plan last).
CSRUN=$CSRUN PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$CSRUN_SRCDIR/contrib/python/tests/tap.py"
