#!/bin/bash
# The hostile-snippet suite (tests/security/run-suite.sh) with every case the
# one item of `csrun batch`: the warm jails a batch's zygote forks (issue 17)
# must hold every case a one-shot jail holds.
CSRUN_SUITE_VIA=batch exec bash "$CSRUN_SRCDIR/tests/security/run-suite.sh" "$@"
