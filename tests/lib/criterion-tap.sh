#!/bin/bash
# Run one Criterion test binary with TAP output for automake's tap-driver.
# With CSRUN_MUST_WORK=1 a skipped test becomes a failure, except a skip whose
# reason starts with "n/a:": a test of another mode (say, one that needs root
# when the suite runs unprivileged), which the other pass of the suite runs.
# CRITERION_JOBS sets how many tests run at once (default 2; make check-asan: 1).
set -o pipefail
if [ "${CSRUN_MUST_WORK:-0}" = 1 ]; then
  "$@" --tap=- -j"${CRITERION_JOBS:-2}" | sed -e '/# SKIP n\/a:/!s/^ok \(.*\)  *# SKIP \(.*\)$/not ok \1 # CSRUN_MUST_WORK=1 forbids skipping: \2/'
else
  "$@" --tap=- -j"${CRITERION_JOBS:-2}"
fi
