# A snippet that fails: csrun run exits with status 1 and the traceback on
# stderr starts in snippet.py (the launcher's own frames are hidden).
#
#   ./csrun run examples/fails.py; echo "exit status $?"
#   ./csrun run --json examples/fails.py


def average(values):
    return sum(values) / len(values)


print("average of [] is", average([]))
