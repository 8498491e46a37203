#!/bin/bash
# tests/security/run-suite.sh — the hostile-snippet suite (issue 4).
#
# Every tests/security/cases/*.py is a hostile snippet with a header:
#
#   # class: escape|info-leak|resources|supervisor|network
#   # expect: CLAUSE; CLAUSE; ...       (several "expect:" lines are joined)
#   # options: extra `csrun run` options (shell words; optional)
#   # why: one line
#   # host-tty: yes                     (optional: csrun gets a host pty as stdin and
#                                        controlling terminal; nothing may be injected into it)
#   # known: REASON                     (optional: a known, documented weakness; the case is
#                                        reported as TAP "TODO" while it fails, and an
#                                        unexpected pass (XPASS) says the note can go)
#
# Each case runs through the real binary as
#   $CSRUN run --json --timeout 20 [options] case.py TOKEN hostdir=... canary=... port=... ...
# (sys.argv[1] is a token unique to the run; the other arguments tell the snippet what to aim
# at on the host: the harness's directory and canary file, its listeners on the host's
# loopback and abstract socket namespace, the host's addresses).
#
# Clauses (evaluated by host python3 on the JSON result; keys are looked up at the top level
# of the result, then in the last attempt):
#   KEY=V  KEY!=V  KEY in A,B  KEY~TEXT (contains)  KEY!~TEXT  KEY<N  KEY<=N  KEY>N  KEY>=N
#   KEY: status, exit_code, signal, timed_out, stdout, stderr, stdout_bytes, duration_ms,
#        limits.mechanism (any dotted path), diagnosis (= diagnosis.error_type),
#        exit (csrun's own exit status), len(stdout)/len(stderr) (kept bytes)
#   TEXT may use \xNN, \uNNNN, \\ escapes.
#   if KEY OP V then CLAUSE     only checked when the condition holds
#   json-valid                  csrun printed exactly one line of valid JSON (always checked)
#   no-secret                   the secret in csrun's environment is nowhere in its output
#                               (always checked)
# Snippets print one line per attempt of a forbidden action: "DENIED what ERRNO" or
# "ALLOWED what" (and "LEAK ..." for information that should not be visible), so most
# expectations are "stdout~DENIED what" plus "stdout!~ALLOWED".
#
# Checked from outside for every case, whatever it expects: csrun printed valid JSON; the
# secret is not in its output; a host canary file's content, inode and mtime are unchanged;
# the csrun binary is unchanged; the host's mount table is unchanged; no process carrying the
# case's token is left, and no process was reparented to the harness (it is a child
# subreaper); no cgroup csrun-<pid>-* of that csrun is left; csrun's own peak RSS stayed
# under 64 MiB; the harness's sentinel process (same user) is alive; the host listeners saw
# no connection or datagram; with host-tty, nothing was pushed into the host pty.
#
# Output: TAP ("ok N - class/case: observed") and a table as TAP diagnostics.  In "observed",
# rss<=N is an upper bound of csrun's peak RSS in KiB (getrusage of csrun and everything it
# reaped, the jail's processes included); rss~N is csrun's own VmHWM, sampled every 20 ms, used
# when that bound is above the limit.  The secret is shown as <SECRET>.
# Environment: CSRUN_SUITE_CASES="name ..." runs only those cases; CSRUN_SUITE_VERBOSE=1 shows
# every snippet's output; CSRUN_SUITE_EXTRA_OPTIONS="--seccomp unconfined" adds options to every
# run (to see what the suite catches without a protection); CSRUN_SUITE_VIA=batch runs each case
# as the one item of `csrun batch` (its warm jail; tests/integration/security-batch.sh): the report
# line is the result, csrun's expected exit status is batch's (0 or 1), and a warm jail refused by
# csrun's check fails the case.
# Needs: bash, python3 on the host.  Works as root and as an unprivileged user.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

CASES_DIR=$CSRUN_SRCDIR/tests/security/cases
T=$(tmpdir)
RSS_LIMIT_KIB=${CSRUN_SUITE_RSS_LIMIT_KIB:-65536}
DEFAULT_TIMEOUT=${CSRUN_SUITE_TIMEOUT:-20}

# ------------------------------------------------------------------ host listeners
# TCP (a minimal HTTP responder) on 127.0.0.1 and ::1, UDP on 127.0.0.1, and a stream
# socket in the abstract namespace; every connection or datagram is logged to HITS.
cat > "$T/listeners.py" <<'PY'
import os, socket, sys, threading, time

hits, info, abstract = sys.argv[1], sys.argv[2], sys.argv[3]
lock = threading.Lock()


def log(msg):
    with lock, open(hits, "a") as f:
        f.write("%.3f %s\n" % (time.time(), msg))


def serve_stream(sock, label):
    while True:
        c, addr = sock.accept()
        log("%s: connection from %r" % (label, addr))
        try:
            c.settimeout(1)
            c.recv(1024)
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 14\r\n\r\nHOST-LISTENER\n")
        except OSError:
            pass
        c.close()


def serve_udp(sock):
    while True:
        data, addr = sock.recvfrom(65536)
        log("udp: %r from %r" % (data[:40], addr))


def start(target, *args):
    threading.Thread(target=target, args=args, daemon=True).start()


tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("127.0.0.1", 0))
tcp.listen(16)
start(serve_stream, tcp, "tcp 127.0.0.1")
port6 = ""
try:
    tcp6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    tcp6.bind(("::1", 0))
    tcp6.listen(16)
    port6 = str(tcp6.getsockname()[1])
    start(serve_stream, tcp6, "tcp ::1")
except OSError:
    pass
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 0))
start(serve_udp, udp)
unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
unix.bind("\0" + abstract)
unix.listen(16)
start(serve_stream, unix, "abstract @" + abstract)
with open(info + ".tmp", "w") as f:
    f.write("port=%d port6=%s udpport=%d abstract=%s\n" % (tcp.getsockname()[1], port6, udp.getsockname()[1], abstract))
os.rename(info + ".tmp", info)
while True:
    time.sleep(3600)
PY

# ------------------------------------------------------------------ one case
cat > "$T/runcase.py" <<'PY'
import ctypes, hashlib, json, os, re, resource, select, shlex, signal, subprocess, sys, termios, time, tty
import fcntl

CASE, INDEX = sys.argv[1], sys.argv[2]
E = os.environ
CSRUN = E["SUITE_CSRUN"]
DETAILS = E["SUITE_DETAILS"]
SECRET = E["SUITE_SECRET"]
RSS_LIMIT = int(E["SUITE_RSS_LIMIT_KIB"])
NAME = os.path.basename(CASE)[:-3]
details = []


def detail(*lines):
    for ln in lines:
        details.extend(str(ln).splitlines() or [""])


def finish(result, klass, expected, observed):
    with open(DETAILS, "w") as f:
        f.write("\n".join(details).replace(SECRET, "<SECRET>") + ("\n" if details else ""))
    flat = lambda s: re.sub(r"[\t\n]+", " ", s).replace("#", "(hash)")
    print("\t".join([result, klass or "?", NAME, flat(expected), flat(observed).replace(SECRET, "<SECRET>")]))
    sys.exit(0)


# ---- the header
hdr, expects = {}, []
with open(CASE, encoding="utf-8") as f:
    for line in f:
        if not line.startswith("#"):
            break
        m = re.match(r"#\s*([a-z-]+)\s*:\s*(.*?)\s*$", line)
        if m:
            if m.group(1) == "expect":
                expects.append(m.group(2))
            else:
                hdr[m.group(1)] = m.group(2)
expect = "; ".join(expects)
klass = hdr.get("class", "")
if klass not in ("escape", "info-leak", "resources", "supervisor", "network") or not expect or "why" not in hdr:
    finish("fail", klass, expect, "bad header: needs class (escape|info-leak|resources|supervisor|network), expect and why")

# ---- what the snippet may aim at
token = "csrun-suite-%d-%s-%s" % (os.getpid(), INDEX, os.urandom(4).hex())
info = dict(kv.split("=", 1) for kv in open(E["SUITE_LISTENERS"]).read().split())
subst = {"@SECRET@": SECRET, "@TOKEN@": token}
subst.update({"@%s@" % k.upper(): v for k, v in info.items()})


def substitute(s):
    for k, v in subst.items():
        s = s.replace(k, v)
    return s


try:
    options = [substitute(w) for w in shlex.split(hdr.get("options", ""))]
except ValueError as e:
    finish("fail", klass, expect, "bad options header: %s" % e)
snippet_args = [token, "hostdir=" + E["SUITE_HOSTDIR"], "canary=" + E["SUITE_CANARY"],
                "hostips=" + E.get("SUITE_HOSTIPS", "")] + ["%s=%s" % kv for kv in info.items()]
if E.get("CSRUN_CACHE_DIR"):
    snippet_args.append("cachedir=" + os.path.realpath(E["CSRUN_CACHE_DIR"]))


def seconds(text):
    m = re.fullmatch(r"([0-9.]+)(ms|s|m|h)?", text)
    if not m:
        return None
    return float(m.group(1)) * {"ms": 0.001, None: 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


timeout = float(E["SUITE_DEFAULT_TIMEOUT"])
for i, w in enumerate(options):
    v = options[i + 1] if w in ("--timeout", "-t") and i + 1 < len(options) else (w.split("=", 1)[1] if w.startswith("--timeout=") else None)
    if v is not None and seconds(v) is not None:
        timeout = seconds(v)


# ---- host state before
def file_state(path):
    st = os.stat(path)
    return (st.st_ino, st.st_size, st.st_mtime_ns, hashlib.sha256(open(path, "rb").read()).hexdigest())


def mounts():
    out = set()
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        sep = f.index("-")
        out.add("%s %s %s %s" % (f[4], f[3], f[sep + 1], f[sep + 2]))
    return out


def proc_cmdlines():
    out = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                out[int(p)] = open("/proc/%s/cmdline" % p, "rb").read()
            except OSError:
                pass
    return out


canary_before = file_state(E["SUITE_CANARY"])
binary_before = file_state(CSRUN)
mounts_before = mounts()
hits_before = os.path.getsize(E["SUITE_HITS"])

# ---- run csrun as a child of a child subreaper, sampling its peak RSS
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans of csrun come to us
env = dict(os.environ)
for k in list(env):
    if k.startswith("SUITE_"):
        del env[k]
env.update(CSRUN_SUITE_SECRET=SECRET, OPENAI_API_KEY=SECRET, AWS_SECRET_ACCESS_KEY=SECRET)
extra = shlex.split(E.get("CSRUN_SUITE_EXTRA_OPTIONS", ""))  # e.g. "--seccomp unconfined", to see what the suite catches
VIA_BATCH = E.get("CSRUN_SUITE_VIA") == "batch"
if VIA_BATCH:
    # The same case as the one item of `csrun batch` (a warm jail forked by
    # the batch's zygote, csrun-batch(1) WARM JAILS): its report line is the
    # result; csrun's exit is batch's (0 iff ok or healed).
    manifest, report = DETAILS + ".manifest.jsonl", DETAILS + ".report.jsonl"
    with open(manifest, "w") as f:
        f.write(json.dumps({"path": CASE, "label": NAME, "args": snippet_args}) + "\n")
    argv = [CSRUN, "batch", "-j1", "--no-progress", "-q", "--report", report, "--timeout", "%g" % float(E["SUITE_DEFAULT_TIMEOUT"])] \
        + extra + options + ["--manifest", manifest]
else:
    argv = [CSRUN, "run", "--json", "--timeout", "%g" % float(E["SUITE_DEFAULT_TIMEOUT"])] + extra + options + [CASE] + snippet_args
host_tty = hdr.get("host-tty", "").lower() == "yes"
master = slave = None
if host_tty:
    master, slave = os.openpty()
    tty.setraw(slave)


def preexec():
    if host_tty:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)


out_path, err_path = DETAILS + ".out", DETAILS + ".err"
start = time.monotonic()
with open(out_path, "wb") as out, open(err_path, "wb") as err, open(os.devnull, "rb") as devnull:
    p = subprocess.Popen(argv, stdin=slave if host_tty else devnull, stdout=out, stderr=err, env=env,
                         preexec_fn=preexec, close_fds=True)
with open(E["SUITE_PIDS"], "a") as f:
    f.write("%d\n" % p.pid)
hwm = 0
hard_deadline = start + timeout * 2 + 30
killed_by_harness = False
while p.poll() is None:
    try:
        for line in open("/proc/%d/status" % p.pid):
            if line.startswith("VmHWM:"):
                hwm = max(hwm, int(line.split()[1]))
    except (OSError, ValueError):
        pass
    if time.monotonic() > hard_deadline:
        p.kill()
        killed_by_harness = True
    time.sleep(0.02)
elapsed = time.monotonic() - start
rusage_max = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # csrun and all it reaped: an upper bound
raw_out, raw_err = open(out_path, "rb").read(), open(err_path, "rb").read()

# ---- outside checks
problems = []  # each a short text; any makes the case fail
if killed_by_harness:
    problems.append("csrun still running %.0fs after start: killed by the harness" % elapsed)

leftovers = []
for _ in range(50):  # orphans reparented to us
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid == 0:
        for q, cmd in proc_cmdlines().items():
            try:
                ppid = int(open("/proc/%d/stat" % q).read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == os.getpid():
                leftovers.append((q, cmd))
                os.kill(q, signal.SIGKILL)
        time.sleep(0.1)
        continue
deadline = time.monotonic() + 2
while True:  # processes carrying the token (in the jail's PID namespace or not)
    tok = token.encode()
    found = [(q, cmd) for q, cmd in proc_cmdlines().items() if tok in cmd and q != os.getpid()]
    if not found or time.monotonic() > deadline:
        break
    time.sleep(0.05)
for q, cmd in found:
    leftovers.append((q, cmd))
    try:
        os.kill(q, signal.SIGKILL)
    except OSError:
        pass
if leftovers:
    problems.append("%d process(es) left behind" % len(leftovers))
    detail("left behind: " + "; ".join("%d %r" % (q, c.replace(b"\0", b" ")[:120]) for q, c in leftovers[:10]))

cgroups = []


def walk(path, depth):
    if depth > 7:
        return
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for ent in entries:
        try:
            if not ent.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        if ent.name.startswith("csrun-%d-" % p.pid) or ent.name == "csrun-%d" % p.pid:
            cgroups.append(ent.path)
        walk(ent.path, depth + 1)


walk("/sys/fs/cgroup", 1)
if cgroups:
    problems.append("cgroup(s) left: %s" % ", ".join(cgroups[:4]))

if file_state(E["SUITE_CANARY"]) != canary_before:
    problems.append("host canary file changed")
binary_after = file_state(CSRUN)
if binary_after != binary_before:
    if binary_after[0] == binary_before[0]:
        problems.append("the csrun binary was modified in place")
    else:
        detail("note: the csrun binary was replaced during the case (a rebuild?): not attributed to the case")
added, removed = mounts() - mounts_before, mounts_before - mounts()
if added or removed:
    problems.append("host mount table changed")
    detail("mounts added: %s" % sorted(added), "mounts removed: %s" % sorted(removed))
try:
    os.kill(int(E["SUITE_SENTINEL_PID"]), 0)
    alive = E["SUITE_SENTINEL_MARK"].encode() in open("/proc/%s/cmdline" % E["SUITE_SENTINEL_PID"], "rb").read()
except OSError:
    alive = False
if not alive:
    problems.append("the harness's sentinel process was killed")
time.sleep(0.05)
with open(E["SUITE_HITS"], "rb") as f:
    f.seek(hits_before)
    hits = f.read().decode(errors="replace").strip()
if hits:
    problems.append("a host listener was reached")
    detail("host listener log: " + hits)
if host_tty:
    os.set_blocking(slave, False)
    try:
        injected = os.read(slave, 4096)
    except BlockingIOError:
        injected = b""
    if injected:
        problems.append("bytes pushed into the host pty: %r" % injected[:40])
    os.close(master)
    os.close(slave)
if rusage_max <= RSS_LIMIT:
    rss_note = "rss<=%dKiB" % rusage_max
elif hwm and hwm <= RSS_LIMIT:
    rss_note = "rss~%dKiB" % hwm  # sampled; the rusage bound includes the jail's processes
else:
    rss_note = "rss=%dKiB" % max(hwm, 1)
    problems.append("csrun's peak RSS %d KiB > %d KiB" % (hwm or rusage_max, RSS_LIMIT))
if SECRET.encode() in raw_out or SECRET.encode() in raw_err:
    problems.append("the secret from csrun's environment is in its output")

# ---- the JSON result
j, json_problem = None, None
if VIA_BATCH:
    try:
        raw_report = open(report, "rb").read()
    except OSError:
        raw_report = b""
    if SECRET.encode() in raw_report:
        problems.append("the secret from csrun's environment is in the report")
    raw_out = raw_report  # what the clauses look at; batch's own stdout is checked above
try:
    text = raw_out.decode("utf-8")
    if not text.endswith("\n") or text.count("\n") != 1:
        json_problem = "not exactly one line"
    j = json.loads(text)
    if not isinstance(j, dict):
        json_problem, j = "not an object", None
except (UnicodeDecodeError, ValueError) as e:
    json_problem = "invalid (%s)" % str(e)[:80]
if json_problem:
    problems.append("JSON result %s" % json_problem)
attempt = (j.get("attempts") or [{}])[-1] if j else {}
if not isinstance(attempt, dict):
    attempt = {}

MISSING = object()


def lookup(key):
    if key == "exit":
        return p.returncode
    m = re.fullmatch(r"len\((\w+)\)", key)
    if m:
        v = lookup(m.group(1))
        return len(v.encode("utf-8", "surrogatepass")) if isinstance(v, str) else MISSING
    if key == "diagnosis":
        d = (j or {}).get("diagnosis") or attempt.get("diagnosis")
        return d.get("error_type") if isinstance(d, dict) else None
    for root in (j or {}, attempt):
        cur = root
        for part in key.split("."):
            if isinstance(cur, dict) and part in cur:
                cur = cur[part]
            else:
                cur = MISSING
                break
        if cur is not MISSING:
            return cur
    return MISSING


def show(v):
    if v is MISSING:
        return "(absent)"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def unescape(s):
    return re.sub(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\\nt0])",
                  lambda m: {"\\": "\\", "n": "\n", "t": "\t", "0": "\0"}.get(m.group(1)) or chr(int(m.group(1)[1:], 16)), s)


def number(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


CLAUSE = re.compile(r"^([\w.()]+)(\s+in\s+|\s*(?:!=|!~|<=|>=|=|~|<|>)\s*)(.*)$")


def check(clause):
    """(holds, description of what was seen)"""
    if clause == "json-valid":
        return json_problem is None, "json " + (json_problem or "ok")
    if clause == "no-secret":
        return SECRET.encode() not in raw_out + raw_err, "secret " + ("in output" if SECRET.encode() in raw_out + raw_err else "absent")
    m = CLAUSE.match(clause)
    if not m:
        return False, "unparsable clause"
    key, op, want = m.group(1), m.group(2).strip(), unescape(m.group(3).strip())
    if VIA_BATCH and key == "exit" and number(want) is not None:
        want = "0" if number(want) == 0 else "1"  # batch: 0 iff ok or healed, else 1
    v = lookup(key)
    s = show(v)
    if op == "=":
        ok = s == want or (number(s) is not None and number(s) == number(want))
    elif op == "!=":
        ok = not (s == want or (number(s) is not None and number(s) == number(want)))
    elif op == "in":
        ok = s in [w.strip() for w in want.split(",")]
    elif op == "~":
        ok = isinstance(v, str) and want in v
    elif op == "!~":
        ok = isinstance(v, str) and want not in v
    else:
        a, b = number(s), number(want)
        ok = a is not None and b is not None and {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if op in ("~", "!~") and isinstance(v, str):
        seen = "%s has %d chars" % (key, len(v))
        if op == "!~" and not ok:
            i = v.find(want)
            seen = "%s has %r" % (key, v[i:i + 100].split("\n")[0])
    else:
        seen = "%s=%s" % (key, s[:80])
    return ok, seen


failed_clauses = []
for clause in [c.strip() for c in expect.split(";") if c.strip()]:
    m = re.fullmatch(r"if\s+(.+?)\s+then\s+(.+)", clause)
    if m:
        cond, _ = check(m.group(1))
        if not cond:
            continue
        ok, seen = check(m.group(2))
    else:
        ok, seen = check(clause)
    if not ok:
        failed_clauses.append("%s [%s]" % (clause, seen))

# ---- what was observed, in short
stdout = attempt.get("stdout") if isinstance(attempt.get("stdout"), str) else ""
obs = []
if j is None:
    first = raw_err.decode(errors="replace").strip().splitlines()
    obs.append("no JSON: csrun exit %s%s" % (p.returncode, (": " + first[0][:100]) if first else ""))
else:
    obs.append("status=%s" % j.get("status"))
    if attempt.get("signal"):
        obs.append("signal=%s" % attempt["signal"])
    elif attempt.get("exit_code") not in (0, None):
        obs.append("exit_code=%s" % attempt["exit_code"])
    if j.get("status") not in ("ok", "healed") and isinstance(j.get("diagnosis"), dict):
        obs.append("diagnosis=%s" % j["diagnosis"].get("error_type"))
    if klass == "resources":
        obs.append("mechanism=%s" % (j.get("limits") or {}).get("mechanism"))
    lines = stdout.splitlines()
    denied = [ln for ln in lines if ln.startswith("DENIED ")]
    bad = [ln for ln in lines if ln.startswith(("ALLOWED ", "LEAK ", "UNSAFE"))]
    results = [ln[7:] for ln in lines if ln.startswith("RESULT ")]
    if denied:
        obs.append("%d denied" % len(denied))
    if bad:
        obs.append("%d allowed/leaked: %s%s" % (len(bad), " | ".join(b[:70] for b in bad[:3]), " | ..." if len(bad) > 3 else ""))
    obs.extend(r[:90] for r in results[:2])
    if j.get("status") == "error":
        obs.append("error=%s" % str(j.get("error"))[:100])
    if "cpu_ms" in expect:
        obs.append("cpu_ms=%s" % attempt.get("cpu_ms"))
    if "bytes" in expect:
        obs.append("out=%s err=%s kept=%d" % (attempt.get("stdout_bytes"), attempt.get("stderr_bytes"), len(stdout)))
if VIA_BATCH and j is not None:
    atts = [a for a in j.get("attempts") or [] if isinstance(a, dict)]
    refused = [a["warm_refused"] for a in atts if a.get("warm_refused")]
    if refused:  # csrun's check from outside found a warm jail not confined
        problems.append("a warm jail was refused: %s" % refused[0][:150])
    obs.append("warm" if atts and atts[0].get("warm_jail") else "one-shot")
obs.append(rss_note)
obs.append("%dms" % (elapsed * 1000))
if failed_clauses:
    obs.append("UNMET: " + " ; ".join(failed_clauses))
if problems:
    obs.append("OUTSIDE: " + " ; ".join(problems))

ok = not failed_clauses and not problems
if not ok or E.get("CSRUN_SUITE_VERBOSE") == "1":
    detail("command: " + " ".join(shlex.quote(a) for a in argv).replace(SECRET, "<secret>"))
    detail("snippet stdout:", (stdout or "")[:3000])
    err_txt = attempt.get("stderr") if isinstance(attempt.get("stderr"), str) else ""
    if err_txt:
        detail("snippet stderr (tail):", err_txt[-1500:])
    if raw_err:
        detail("csrun stderr:", raw_err.decode(errors="replace")[-1500:])
    if j is None:
        detail("csrun stdout:", raw_out[:1000].decode(errors="replace"))
if "known" in hdr:
    result = "todo-pass" if ok else "todo-fail"
else:
    result = "pass" if ok else "fail"
finish(result, klass, expect, ", ".join(obs))
PY

# ------------------------------------------------------------------ host set-up
SECRET=csrun-secret-$(python3 -c 'import secrets; print(secrets.token_hex(16))')
SENTINEL_MARK=csrun-suite-sentinel-$$
echo "canary $(date +%s%N)" > "$T/canary"
: > "$T/hits"
: > "$T/pids"
python3 "$T/listeners.py" "$T/hits" "$T/listeners.info" "csrun-test-$$" &
LISTENER_PID=$!
python3 -c 'import sys, time; time.sleep(100000)' "$SENTINEL_MARK" &
SENTINEL_PID=$!
trap 'kill "$LISTENER_PID" "$SENTINEL_PID" 2>/dev/null; wait 2>/dev/null; _tap_cleanup' EXIT
for _ in $(seq 100); do
  [ -s "$T/listeners.info" ] && break
  sleep 0.05
done
# The host's own non-loopback addresses (the jail must not reach them either).
HOSTIPS=$(python3 - <<'PY'
import socket
ips = set()
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the source address
    ips.add(s.getsockname()[0])
except OSError:
    pass
print(",".join(sorted(ip for ip in ips if not ip.startswith("127."))))
PY
)

# The listeners must really log what reaches them, or their silence proves nothing.
selftest=$(python3 - "$T/listeners.info" <<'PY'
import socket, sys
info = dict(kv.split("=", 1) for kv in open(sys.argv[1]).read().split())
n = 0
for fam, addr in ((socket.AF_INET, ("127.0.0.1", int(info["port"]))), (socket.AF_UNIX, "\0" + info["abstract"])) + \
        (((socket.AF_INET6, ("::1", int(info["port6"]))),) if info.get("port6") else ()):
    c = socket.socket(fam, socket.SOCK_STREAM)
    c.settimeout(3)
    c.connect(addr)
    c.sendall(b"GET / HTTP/1.0\r\n\r\n")
    n += b"HOST-LISTENER" in c.recv(200)
    c.close()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.sendto(b"selftest", ("127.0.0.1", int(info["udpport"])))
print(n + 1)
PY
)
sleep 0.2
if [ -n "$selftest" ] && [ "$(wc -l < "$T/hits")" -ge "$selftest" ]; then
  ok "setup: the host listeners log what reaches them from the host ($(cat "$T/listeners.info"))"
else
  not_ok "setup: host listeners self-test" "expected $selftest hits" "$(cat "$T/hits")"
fi
: > "$T/hits"
MOUNTS_START=$(awk '{ for (i = 7; $i != "-"; i++); print $5, $4, $(i+1), $(i+2) }' /proc/self/mountinfo | sort)

export SUITE_CSRUN=$CSRUN SUITE_SECRET=$SECRET SUITE_RSS_LIMIT_KIB=$RSS_LIMIT_KIB \
  SUITE_DEFAULT_TIMEOUT=$DEFAULT_TIMEOUT SUITE_LISTENERS=$T/listeners.info SUITE_HITS=$T/hits \
  SUITE_HOSTDIR=$T SUITE_CANARY=$T/canary SUITE_HOSTIPS=$HOSTIPS SUITE_PIDS=$T/pids \
  SUITE_SENTINEL_PID=$SENTINEL_PID SUITE_SENTINEL_MARK=$SENTINEL_MARK SUITE_DETAILS=$T/details

# ------------------------------------------------------------------ the cases
# In class order, then by name; CSRUN_SUITE_CASES="name ..." runs only some.
mapfile -t CASES < <(
  for f in "$CASES_DIR"/*.py; do
    c=$(sed -n 's/^# *class: *\([a-z-]*\).*/\1/p;/^[^#]/q' "$f" | head -n1)
    case $c in
      escape) o=1 ;; info-leak) o=2 ;; resources) o=3 ;; supervisor) o=4 ;; network) o=5 ;; *) o=9 ;;
    esac
    echo "$o $(basename "$f" .py) $f"
  done | sort -k1,1n -k2,2 | cut -d' ' -f3-)

TABLE=()
n_pass=0 n_fail=0 n_todo=0 i=0
for f in "${CASES[@]}"; do
  name=$(basename "$f" .py)
  if [ -n "${CSRUN_SUITE_CASES:-}" ] && ! [[ " $CSRUN_SUITE_CASES " == *" $name "* ]]; then
    continue
  fi
  i=$((i + 1))
  line=$(python3 "$T/runcase.py" "$f" "$i" 2>"$T/runcase.err" | tail -n1)
  IFS=$'\t' read -r result class cname expected observed <<<"$line"
  if [ -z "$line" ] || [ -z "${observed+x}" ]; then
    result=fail class='?' cname=$name expected='?' observed="harness error: $(tail -c 300 "$T/runcase.err")"
  fi
  mapfile -t det < <(cat "$T/details" 2>/dev/null)
  rm -f "$T/details" "$T/details.out" "$T/details.err"
  known=$(sed -n 's/^# *known: *//p;/^[^#]/q' "$f" | head -n1)
  case $result in
    pass)
      ok "$class/$cname: $observed"
      [ "${CSRUN_SUITE_VERBOSE:-0}" = 1 ] && diag "$(printf '%s\n' "${det[@]}")"
      n_pass=$((n_pass + 1)) verdict=pass ;;
    todo-fail)
      TAP_N=$((TAP_N + 1))
      echo "not ok $TAP_N - $class/$cname: $observed # TODO known weakness: ${known:0:200}"
      n_todo=$((n_todo + 1)) verdict="known (documented)" ;;
    todo-pass)
      TAP_N=$((TAP_N + 1))
      echo "ok $TAP_N - $class/$cname: $observed # TODO fixed? remove the 'known:' line of the case"
      n_todo=$((n_todo + 1)) verdict="pass (known: note stale)" ;;
    *)
      not_ok "$class/$cname: $observed" "$(printf '%s\n' "${det[@]}")"
      n_fail=$((n_fail + 1)) verdict=FAIL ;;
  esac
  TABLE+=("$cname | $class | $expected | $observed | $verdict")
done

# ------------------------------------------------------------------ after all cases
# No csrun cgroup left anywhere: ours (by csrun pid) fail the suite; others are shown.
ours=() others=()
if [ -r /sys/fs/cgroup ]; then
  while IFS= read -r cg; do
    pid=$(basename "$cg" | sed -n 's/^csrun-\([0-9]*\).*/\1/p')
    if [ -n "$pid" ] && grep -qx "$pid" "$T/pids"; then ours+=("$cg"); else others+=("$cg"); fi
  done < <(find /sys/fs/cgroup -maxdepth 7 -type d -name 'csrun-*' 2>/dev/null)
  if [ ${#ours[@]} -eq 0 ]; then
    ok "after the suite: no cgroup of the suite's csrun runs is left${others:+ (not ours: ${others[*]})}"
  else
    not_ok "after the suite: cgroups left" "${ours[@]}"
  fi
else
  skip "after the suite: no csrun cgroups left" "/sys/fs/cgroup is not readable"
fi
MOUNTS_END=$(awk '{ for (i = 7; $i != "-"; i++); print $5, $4, $(i+1), $(i+2) }' /proc/self/mountinfo | sort)
if [ "$MOUNTS_START" = "$MOUNTS_END" ]; then
  ok "after the suite: the host's mount table is as before"
else
  not_ok "after the suite: the host's mount table changed" "$(diff <(echo "$MOUNTS_START") <(echo "$MOUNTS_END"))"
fi
if kill -0 "$SENTINEL_PID" 2>/dev/null && kill -0 "$LISTENER_PID" 2>/dev/null && [ ! -s "$T/hits" ]; then
  ok "after the suite: sentinel and listeners alive, no host listener reached"
else
  not_ok "after the suite: sentinel/listeners" "$(cat "$T/hits")"
fi

diag "hostile-snippet suite as uid $(id -u): $n_pass passed, $n_fail failed, $n_todo known (TODO), of $i cases"
diag "case | class | expected | observed | pass/fail"
for row in "${TABLE[@]}"; do
  diag "$row"
done
done_testing
