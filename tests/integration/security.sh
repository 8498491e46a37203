#!/bin/bash
# The hostile-snippet suite (tests/security/run-suite.sh): every case through the real binary.
exec bash "$CSRUN_SRCDIR/tests/security/run-suite.sh" "$@"
