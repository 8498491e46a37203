#!/usr/bin/env python3
"""Score csrun's local healer on the corpus: tests/heal/expected.txt lists
the cases (cases/NAME.py) and what each must end as.  Runs
`CSRUN run --json --no-llm` on every case (two at a time) and prints one
line a case that is not as expected, then `healed H / E` (E: the cases
expected to heal) and `false heals F` (a heal of a case that must not
heal, a heal that prints the wrong output, or clean code that was
changed).  Exit status 0 when F is 0 and H >= --min-healed; 1 otherwise.

    score.py [--csrun PATH] [--min-healed N] [--jobs N] [NAME...]
"""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))


def load():
    cases = []
    with open(os.path.join(HERE, "expected.txt")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, expect, out = line.split(None, 2)
            cases.append((name, expect, None if out == "-" else json.loads(out)))
    return cases


def run(csrun, name):
    path = os.path.join(HERE, "cases", name + ".py")
    p = subprocess.run([csrun, "run", "--json", "--no-llm", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"status": "csrun-error", "error": p.stderr.decode("utf-8", "replace")[:300]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csrun", default=os.environ.get("CSRUN", "csrun"))
    ap.add_argument("--min-healed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    cases = [c for c in load() if not a.names or c[0] in a.names]
    with ThreadPoolExecutor(a.jobs) as ex:
        results = list(ex.map(lambda c: run(a.csrun, c[0]), cases))
    healed = expected = false = 0
    for (name, expect, out), j in zip(cases, results):
        status = j.get("status")
        attempts = j.get("attempts") or [{}]
        stdout = attempts[-1].get("stdout")
        rules = [x["patch"]["rules"] for x in attempts if x.get("patch")]
        bad = None
        if expect == "healed":
            expected += 1
            if status == "healed" and (out is None or stdout == out):
                healed += 1
            elif status == "healed":
                false += 1
                bad = "FALSE HEAL (wrong output %r)" % stdout
            else:
                bad = "not healed"
        elif status == "healed" or (expect == "ok" and len(attempts) != 1):
            false += 1
            bad = "FALSE HEAL"
        elif status != expect or (out is not None and stdout != out):
            bad = "unexpected"
        if bad:
            diag = (j.get("diagnosis") or {}).get("message") or j.get("error") or ""
            print("%-30s %-8s -> %-8s %s rules=%s %s" % (name, expect, status, bad, rules, diag[:100]))
    print("healed %d / %d" % (healed, expected))
    print("false heals %d" % false)
    return 0 if false == 0 and healed >= a.min_healed else 1


if __name__ == "__main__":
    sys.exit(main())
