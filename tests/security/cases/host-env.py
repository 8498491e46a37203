# class: info-leak
# expect: status=ok; no-secret; stdout~DENIED unexpected environment variables; stdout~DENIED read /proc/1/environ; stdout!~LEAK
# why: csrun's environment holds API keys (the harness sets CSRUN_SUITE_SECRET, OPENAI_API_KEY and AWS_SECRET_ACCESS_KEY to a random secret): none may reach the jail, not even through init's /proc/1/environ
import errno
import os


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


allowed = {"PATH", "HOME", "LANG", "TMPDIR", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"}
extra = sorted(set(os.environ) - allowed)
print("INFO environment:", dict(os.environ))
print(("LEAK unexpected environment variables: %s" % extra) if extra else "DENIED unexpected environment variables: none")
print("INFO /proc/self/environ:", open("/proc/self/environ", "rb").read().replace(b"\0", b" ").decode(errors="replace"))
for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()):
    try:
        data = open("/proc/%d/environ" % pid, "rb").read()
    except OSError as e:
        print("DENIED read /proc/%d/environ %s" % (pid, ename(e.errno)))
        continue
    print("INFO /proc/%d/environ:" % pid, data.replace(b"\0", b" ").decode(errors="replace"))
    names = {kv.split(b"=", 1)[0].decode(errors="replace") for kv in data.split(b"\0") if kv}
    if names - allowed:
        print("LEAK /proc/%d/environ holds" % pid, sorted(names - allowed))
