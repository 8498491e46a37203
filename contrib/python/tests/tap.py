"""Run the Python client's unittest tests and print TAP (for make check's
tests/integration/python-client.sh).  A skip is a failure under
CSRUN_MUST_WORK=1 unless its reason starts with "n/a:", as in tests/lib/tap.sh."""

import os
import sys
import traceback
import unittest

MUST_WORK = os.environ.get("CSRUN_MUST_WORK") == "1"


class TapResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.n = 0
        self.bad = 0

    def _line(self, ok, test, extra="", details=""):
        self.n += 1
        if not ok:
            self.bad += 1
        name = test.id().replace("test_csrun.", "")
        print("%s %d - %s%s" % ("ok" if ok else "not ok", self.n, name, extra), flush=True)
        for line in details.splitlines():
            print("# " + line)

    def addSuccess(self, test):
        self._line(True, test)

    def addFailure(self, test, err):
        self._line(False, test, details="".join(traceback.format_exception(*err)))

    def addError(self, test, err):
        self._line(False, test, details="".join(traceback.format_exception(*err)))

    def addSkip(self, test, reason):
        if MUST_WORK and not reason.startswith("n/a:"):
            self._line(False, test, details="skipped, but CSRUN_MUST_WORK=1: " + reason)
        else:
            self._line(True, test, " # SKIP " + reason)

    def addExpectedFailure(self, test, err):
        self._line(True, test)

    def addUnexpectedSuccess(self, test):
        self._line(False, test, details="unexpected success")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=here)
    result = TapResult()
    suite.run(result)
    if result.n == 0:
        print("not ok 1 - no test ran")
        result.n, result.bad = 1, 1
    print("1..%d" % result.n)
    return 1 if result.bad else 0


if __name__ == "__main__":
    sys.exit(main())
