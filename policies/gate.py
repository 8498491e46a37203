# csrun gate: runs inside the jail as
#     python3 -I -S -u -c <this file> POLICY_JSON [ARG...]
# with the snippet in ./snippet.py (read-only) -- or on the descriptor the
# policy's "source_fd" names (an attempt in a sandbox, whose working
# directory is its own) -- and fd 3 a pipe to the supervisor.
#
#  1. takes the policy (made by csr_gate_policy_to_json_ex) out of argv;
#  2. reads the snippet and applies the size limit before parsing;
#  3. parses it with the builtin compile(..., PyCF_ONLY_AST) -- `import ast`
#     alone costs more than this whole check -- and walks the tree without
#     recursion, so hostile nesting can't crash it;
#  4. writes ONE JSON verdict on fd 3 and closes fd 3: what runs later can't
#     forge it;
#  5. only on "pass" with "run": true, runs the snippet as __main__ from
#     snippet.py, as `python3 snippet.py` would.
#  With fd 6 (a socket from the supervisor), a verdict that stops the code
#  before it runs does not end the gate: it says so on fd 3 and waits on fd 6
#  for the next attempt's policy and code (_next), since nothing of the
#  snippet ran.  fds 3, 5 and 6 are closed before any snippet code runs.
#
# The descriptors (launcher.h, csrun-run(1) DESCRIPTORS): 3 the verdict
# pipe, 4 the precompiled gate (read by the bootstrap), 5 the snippet when
# the policy's "source_fd" says so, 6 the next attempt's code.
#
# Verdict schema and rules: csrun-policy(5).  The exit status is only
# informational (fd 3 is the truth): the snippet's own, 1 syntax error or
# uncaught exception, 3 blocked, 4 the gate itself failed.
#
# This is a policy layer that catches obvious mistakes and gives the healer
# precise feedback; the jail is the security boundary.  The gate's names live
# in this module, never in the snippet's (a fresh __main__).
#
# A sandbox's session server (policies/session.py) executes this file as a
# module named "csrun_gate" and applies the same rules to every cell:
# _check, _report and _site are its interface; the run at the bottom happens
# only as __main__.
#
# Speed: Python compiles this file on every run, and that is most of what
# the gate costs.  So the hot path is short: one cheap walk (limits, names
# for undefined-name, and whether anything in the snippet could be a
# dangerous call or a broad except).  The scope-aware resolver that decides
# those rules (_RESOLVER below) is source in a string, compiled only for the
# snippets that need it -- or precompiled by a loader that caches the gate's
# code (see _resolver).  Keep it working on Python 3.8+.
import gc
import sys

_HARD_MAX_DEPTH = 1000  # nesting cap even when max-ast-depth is allowed away or set higher
_MAX_REPORTED = 100  # violations and undefined names listed in one verdict
# Builtins that site.py adds (the jail runs with -S; _run adds exit/quit).
_SITE_NAMES = ("exit", "quit", "help", "copyright", "credits", "license")
# Uses that bind globals behind the analysis' back: undefined-name is skipped.
_DYNAMIC = ("globals", "locals", "vars", "exec", "eval", "__import__")
# Reflection: with any of these, a target can hide in a computed string.
_REFLECTION = ("getattr", "vars", "__dict__", "modules", "import_module", "__import__", "__builtins__")
_JSON_ESC = dict((c, "\\u%04x" % c) for c in range(32))
_JSON_ESC.update({34: '\\"', 92: "\\\\", 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"})


def _json(v):
    """Compact JSON of str, int, bool, None, list and dict."""
    if isinstance(v, str):
        return '"' + v.translate(_JSON_ESC) + '"'
    if v is None or v is True or v is False:
        return {None: "null", True: "true", False: "false"}[v]
    if isinstance(v, int):
        return str(v)
    if isinstance(v, dict):
        return "{" + ",".join(_json(k) + ":" + _json(x) for k, x in v.items()) + "}"
    return "[" + ",".join(map(_json, v)) + "]"


def _literal(n):
    """A JSON document, parsed by the builtin parser: JSON from yajl is a
    Python literal but for true/false/null, and only literal nodes are
    accepted (`import json` would cost more than this whole gate)."""
    k = type(n).__name__
    if k == "Constant":
        return n.value
    if k == "List":
        return [_literal(x) for x in n.elts]
    if k == "Dict" and None not in n.keys:
        return dict(zip(map(_literal, n.keys), map(_literal, n.values)))
    if k == "Name" and n.id in ("true", "false", "null"):
        return {"true": True, "false": False, "null": None}[n.id]
    raise ValueError("the policy is not JSON")


class _Policy:
    """The enabled rules of the policy JSON."""

    def __init__(self, doc):
        self.run = doc.get("run", True) is True
        fd = doc.get("source_fd")
        self.source_fd = fd if type(fd) is int and fd >= 0 else None
        self.heal_names = set(doc.get("heal_names") or ())
        self.full = doc.get("full") is True  # tests: always run the resolver
        self.max_bytes = self.max_depth = self.undefined = None
        self.excepts, self.calls = {}, {}  # target as written -> (rule id, message)
        for r in doc["rules"]:
            kind, rule = r["kind"], (r["id"], r.get("message") or "")
            for a in r.get("args") or ():
                if kind in ("except", "call"):
                    getattr(self, kind + "s")[a] = rule
            if kind == "limit" and r["id"] in ("max-source-bytes", "max-ast-depth"):
                setattr(self, "max_bytes" if r["id"] == "max-source-bytes" else "max_depth", (int(r["args"][0]), rule))
            elif kind == "undefined":
                self.undefined = rule

    def needs_resolver(self, mentions, loads, bound, assigned):
        """Could the snippet break an except or call rule?  For a call
        target, every component must appear in it (as a name, attribute,
        import or string): a builtin (one component) as a loaded name, or
        anywhere once the builtins module is named.  For an except target, an
        except clause must name it, or name something the snippet assigns
        (an alias).  A bare except always counts, and so does a string
        computed from constants ("sys" + "tem") when reflection (getattr...)
        could turn it into a target."""
        if self.full or "except:" in mentions:
            return True
        every = mentions.union(loads, bound)
        if "<folded>" in mentions and every.intersection(_REFLECTION):
            return True
        caught = set(m[7:] for m in mentions if m.startswith("except "))
        aliased = "?" in caught or bool(caught.intersection(assigned))
        for target in self.excepts:
            last = target.rpartition(".")[2]
            if last in caught or "." + last in caught or (aliased and last in every):
                return True
        builtins = "builtins" in every or "__builtins__" in every

        def seen(part, pool):
            return any(m.startswith(part[:-1]) for m in pool) if part.endswith("*") else part in pool

        for target in self.calls:
            parts = target.split(".")
            if parts[0] in ("builtins", "__builtins__"):
                parts = parts[1:]
            if len(parts) == 1:
                if seen(parts[0], loads) or (builtins and seen(parts[0], every)):
                    return True
            elif all(seen(x, every) for x in parts):
                return True
        return False


def _scan(tree, max_depth):
    """The cheap walk every snippet gets: breadth-first, a level at a time
    (no recursion, and the depth comes free).  Returns (a node nested deeper
    than MAX_DEPTH or None, loads, bound, mentions, star): loads maps each
    loaded name to its uses [(Name node, usage)], bound holds every name bound
    anywhere, mentions every attribute, imported name and string constant (for
    _Policy.needs_resolver; "except:" stands for a bare except, "<folded>"
    for a string computed from constants)."""
    import _ast as A

    Name, Attribute, Call, Constant, Load, AST = A.Name, A.Attribute, A.Call, A.Constant, A.Load, A.AST
    BinOp, JoinedStr, FormattedValue = A.BinOp, A.JoinedStr, A.FormattedValue
    # node type -> field holding a name it binds (a str, or a list of them)
    binders = {A.FunctionDef: "name", A.AsyncFunctionDef: "name", A.ClassDef: "name", A.arg: "arg"}
    binders.update({A.ExceptHandler: "name", A.Global: "names", A.Nonlocal: "names"})
    for k in ("MatchAs", "MatchStar", "MatchMapping", "TypeVar", "ParamSpec", "TypeVarTuple"):
        binders[getattr(A, k, None)] = "rest" if k == "MatchMapping" else "name"
    loads, bound, assigned, mentions, star = {}, set(), set(), set(), False
    fields = {}

    def load(node, usage):
        uses = loads.get(node.id)
        if uses is None:
            loads[node.id] = [(node, usage)]
        else:
            uses.append((node, usage))

    level, depth = [tree], 0
    while level:
        if depth > max_depth:
            return next((n for n in level if hasattr(n, "lineno")), level[0]), loads, bound, assigned, mentions, star
        depth += 1
        below = []
        add = below.append
        for node in level:
            t = type(node)
            if t is Name:
                if type(node.ctx) is Load:
                    load(node, "name")
                else:
                    bound.add(node.id)
                    assigned.add(node.id)
                continue
            if t is Constant:
                if type(node.value) is str and len(node.value) < 64:
                    mentions.add(node.value)
                    mentions.add(node.value.partition(".")[0])
                continue
            if t is Attribute:  # a name used as X.attr, or as X(...): its usage
                mentions.add(node.attr)
                v = node.value
                if type(v) is Name and type(v.ctx) is Load:
                    load(v, "attribute")
                else:
                    add(v)
                continue
            if t is Call:
                v = node.func
                if type(v) is Name:
                    load(v, "call")
                else:
                    add(v)
                below += node.args
                below += node.keywords
                continue
            if t is A.alias:  # import a.b [as c], from m import a [as c], from m import *
                star = star or node.name == "*"
                mentions.update(node.name.split("."))
                bound.add(node.asname or node.name.partition(".")[0])
                assigned.add(node.asname or node.name.partition(".")[0])
                continue
            if t is A.ImportFrom:
                mentions.update((node.module or "").split("."))
            elif t is BinOp and type(node.left) is Constant and type(node.right) is Constant:
                mentions.add("<folded>")
            elif t is JoinedStr and any(type(v) is FormattedValue and type(v.value) is Constant for v in node.values):
                mentions.add("<folded>")
            f = binders.get(t)
            if f is not None:
                v = getattr(node, f)
                if v:
                    bound.update([v] if type(v) is str else v)
                if t is A.ExceptHandler:
                    e = node.type
                    for e in e.elts if type(e) is A.Tuple else [e]:
                        k = type(e)
                        mentions.add("except:" if e is None else "except " + (e.id if k is Name else "." + e.attr if k is Attribute else "?"))
            fs = fields.get(t)
            if fs is None:
                fs = fields[t] = [f for f in t._fields if f not in ("ctx", "op", "ops", "type_comment")]
            for f in fs:
                v = getattr(node, f, None)
                if type(v) is list:
                    for x in v:
                        if isinstance(x, AST):
                            add(x)
                elif isinstance(v, AST):
                    add(v)
        level = below
    return None, loads, bound, assigned, mentions, star


def _undefined(loads, bound, star):
    """([(line, col, name, usage)], None) for the names loaded but never
    bound anywhere (nor builtins, nor dunders), at their first use; or
    (None, why) when the snippet can bind names the gate can't see."""
    import builtins

    if star:
        return None, "from ... import * binds names the gate can't see"
    for n in _DYNAMIC:
        if n in loads:
            return None, "%s() can bind names the gate can't see" % n
    known = bound.union(dir(builtins), _SITE_NAMES)
    out = []
    for name, uses in loads.items():
        if name not in known and not (name[:2] == "__" == name[-2:]):
            node, usage = min(uses, key=lambda u: (u[0].lineno, u[0].col_offset))
            out.append((node.lineno, node.col_offset, name, usage))
    return sorted(out), None


def _one_edit(a, b):
    """Is B one edit from A: one character inserted, deleted, replaced, or
    two neighbours swapped?"""
    la, lb = len(a), len(b)
    if a == b or abs(la - lb) > 1:
        return False
    i = 0
    while i < min(la, lb) and a[i] == b[i]:
        i += 1
    if la == lb:
        if a[i + 1 :] == b[i + 1 :]:
            return True
        return a[i + 2 :] == b[i + 2 :] and a[i] == b[i + 1] and a[i + 1] == b[i]
    return a[i + 1 :] == b[i:] if la > lb else a[i:] == b[i + 1 :]


def _visible(tree, name, cand):
    """Is CAND bound where every use of NAME is: at module level (a global
    statement counts), or in a function that encloses the use?  Class bodies
    and comprehensions do not count (their names are not visible below)."""
    import _ast as A

    fn = (A.FunctionDef, A.AsyncFunctionDef, A.Lambda)
    scopes = fn + (A.ClassDef, A.ListComp, A.SetComp, A.DictComp, A.GeneratorExp)

    def binds(node):
        """The names bound directly in scope NODE."""
        out, stack = set(), list(getattr(node, "body", [])) if type(node) is not A.Lambda else [node.body]
        a = getattr(node, "args", None)
        if a is not None and type(node) is not A.ClassDef:
            for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
                if x is not None:
                    out.add(x.arg)
        while stack:
            n = stack.pop()
            t = type(n)
            if t is A.Name and type(n.ctx) is not A.Load:
                out.add(n.id)
            elif t is A.alias:
                out.add(n.asname or n.name.partition(".")[0])
            elif t in (A.Global, A.Nonlocal):
                out.update(n.names)
            elif t is A.ExceptHandler and n.name:
                out.add(n.name)
            if t in (A.FunctionDef, A.AsyncFunctionDef, A.ClassDef):
                out.add(n.name)
            if isinstance(n, scopes):
                continue
            for f in t._fields:
                v = getattr(n, f, None)
                if type(v) is list:
                    stack += [x for x in v if isinstance(x, A.AST)]
                elif isinstance(v, A.AST):
                    stack.append(v)
        return out

    if cand in binds(tree):
        return True
    # Every use of NAME: the functions around it must bind CAND.
    stack, memo = [(tree, ())], {}
    while stack:
        n, chain = stack.pop()
        t = type(n)
        if t is A.Name and n.id == name:
            if not any(cand in memo.setdefault(id(f), binds(f)) for f in chain):
                return False
            continue
        inner = chain + (n,) if isinstance(n, fn) else chain
        for f in t._fields:
            v = getattr(n, f, None)
            if type(v) is list:
                stack += [(x, inner) for x in v if isinstance(x, A.AST)]
            elif isinstance(v, A.AST):
                stack.append((v, inner))
    return True


def _suggest(tree, undefined, loads, bound, heal):
    """{undefined name: the one name one edit away} for names the healer's
    tables do not know: a defined name or a builtin, unique at that
    distance, visible at every use.  Short names (under 4 characters) are
    left alone: one edit turns too many of them into each other.  A builtin
    that is not a class (or True, False, None) only for a name that is
    always called (`sums` used as a value is no slip for the function
    `sum`; `true` is one for True)."""
    import builtins

    known = bound.union(dir(builtins), _SITE_NAMES)
    out = {}
    for line, col, name, usage in undefined:
        if name in heal or len(name) < 4 or name in out:
            continue
        near = [k for k in known if _one_edit(name, k)]
        if len(near) != 1:
            continue
        k = near[0]
        if k in bound:
            if _visible(tree, name, k):
                out[name] = k
        elif k in ("True", "False", "None") or isinstance(getattr(builtins, k, None), type) or all(u == "call" for n, u in loads[name]):
            out[name] = k
    return out


def _lines(src):
    """The source's lines as UTF-8 (the AST's columns count bytes of the
    decoded text in UTF-8): a snippet that declares another encoding (PEP 263,
    which compile() honoured) is decoded first, and a UTF-8 BOM is dropped."""
    if src[:3] == b"\xef\xbb\xbf":
        src = src[3:]
    head = b"\n".join(src[:4096].split(b"\n", 2)[:2])
    if b"coding" in head:
        flat = head.lower().replace(b"_", b"-").replace(b" ", b"").replace(b"\t", b"")
        utf8 = flat.count(b"coding") == 1 and any(c in flat for c in (b"coding:utf-8", b"coding=utf-8", b"coding:utf8", b"coding=utf8"))
        if not utf8:
            import io, tokenize  # rare: only for a declared non-UTF-8 encoding

            try:
                enc = tokenize.detect_encoding(io.BytesIO(src).readline)[0]
                if enc not in ("utf-8", "utf-8-sig"):
                    return src.decode(enc, "replace").encode("utf-8", "replace").split(b"\n")
            except (SyntaxError, LookupError, ValueError):
                pass
    return src.split(b"\n")


def _syntax_error(e, src):
    """The verdict for a SyntaxError (filling in the text it may lack)."""
    if e.text is None and e.lineno:  # errors found by the bytecode compiler carry no text
        lines = _lines(src)
        if e.lineno <= len(lines):
            e.text = lines[e.lineno - 1].decode("utf-8", "replace") + "\n"
    err = {"line": e.lineno or 0, "col": max((e.offset or 1) - 1, 0), "message": str(e.msg), "text": e.text or ""}
    err["type"] = type(e).__name__
    return {"verdict": "syntax_error", "violations": [], "syntax_error": err, "undefined_names": []}


def _blocked(violations, undefined=()):
    violations = sorted(set(violations))
    v = {"verdict": "blocked", "violations": [], "undefined_names": list(undefined)}
    for line, col, rule, message in violations[:_MAX_REPORTED]:
        v["violations"].append({"rule": rule, "line": line, "col": col, "message": message})
    if len(violations) > _MAX_REPORTED:
        v["violations_dropped"] = len(violations) - _MAX_REPORTED
    return v


def _with(rule, message):
    """A violation message: what is wrong, then the rule's advice."""
    return message + (": " + rule[1] if rule[1] else "")


def _check(p, f=None, known=()):
    """Read, parse and check the snippet: the open binary file F, else the
    descriptor the policy names, else snippet.py.  KNOWN: names defined
    before it (a session's globals), never undefined.  Return (verdict, code
    object to run or None, SyntaxError to report or None)."""
    if f is None:
        f = open("snippet.py" if p.source_fd is None else p.source_fd, "rb")
    with f:
        src = f.read(-1 if p.max_bytes is None else p.max_bytes[0] + 1)
        if p.max_bytes and len(src) > p.max_bytes[0]:
            msg = "snippet.py is %d bytes, over the limit of %d" % (f.seek(0, 2), p.max_bytes[0])
            return _blocked([(1, 0, p.max_bytes[1][0], _with(p.max_bytes[1], msg))]), None, None
    depth, rule = p.max_depth or (_HARD_MAX_DEPTH, ("max-ast-depth", ""))
    depth = min(depth, _HARD_MAX_DEPTH)
    deep = [(1, 0, rule[0], _with(rule, "the code is nested too deeply (the limit is %d levels)" % depth))]
    try:
        try:
            tree = compile(src, "snippet.py", "exec", 0x400, True)  # PyCF_ONLY_AST
        except ValueError:  # NUL bytes (a SyntaxError from Python 3.12 on)
            at = src.find(b"\0")
            if at < 0:
                raise
            pos = ("snippet.py", src.count(b"\n", 0, at) + 1, at - src.rfind(b"\n", 0, at), None)
            e = SyntaxError("source code cannot contain null bytes", pos)
            return _syntax_error(e, src), None, e
        node, loads, bound, assigned, mentions, star = _scan(tree, depth)
        if node is not None:
            deep[0] = (getattr(node, "lineno", 1), getattr(node, "col_offset", 0)) + deep[0][2:]
            return _blocked(deep), None, None
        violations = []
        if (p.excepts or p.calls) and p.needs_resolver(mentions, loads, bound, assigned):
            violations = _resolver()(p, tree, _lines(src))
        defined = bound.union(known) if known else bound
        undefined, why = _undefined(loads, defined, star) if p.undefined else ([], None)
        # Names one edit from exactly one defined name: blocked (so healed
        # before anything runs) only when a healer follows (heal_names sent).
        # A snippet that catches NameError or checks the Python version may
        # mean a name to be missing (`try: unicode` / `if PY2: xrange`):
        # neither these nor the heal names block it (it runs as it is).
        guarded = "except NameError" in mentions or "version_info" in mentions
        near = {}
        if undefined and p.heal_names and not guarded:
            near = _suggest(tree, undefined, loads, defined, p.heal_names)
        for line, col, name, usage in undefined or ():
            if name in p.heal_names and not guarded:
                msg = "name '%s' is used but never defined or imported" % name
                violations.append((line, col, p.undefined[0], _with(p.undefined, msg)))
            elif name in near:
                msg = "name '%s' is used but never defined; did you mean '%s' (one edit away)?" % (name, near[name])
                violations.append((line, col, p.undefined[0], msg))
        # Some errors only show when compiling to bytecode ('return' outside
        # a function...): compile now, so check-only verdicts are right too.
        code = compile(tree, "snippet.py", "exec", 0, True)
    except SyntaxError as e:
        return _syntax_error(e, src), None, e
    except (RecursionError, MemoryError):
        return _blocked(deep), None, None
    undefined = [{"name": n, "line": line, "usage": u} for line, col, n, u in (undefined or ())[:_MAX_REPORTED]]
    for u in undefined:
        if u["name"] in near:
            u["suggest"] = near[u["name"]]
    if violations:
        return _blocked(violations, undefined), None, None
    v = {"verdict": "pass", "violations": [], "undefined_names": undefined}
    if why:
        v["undefined_skipped"] = why
    return v, code, None


def _resolver():
    """The resolver's analyse(), compiled from _RESOLVER, or from the code
    object _RESOLVER_CODE when the loader that ran this gate put one in its
    globals (csrun's cache of the gate compiled for this interpreter)."""
    code = globals().get("_RESOLVER_CODE")
    if type(code) is not type(_resolver.__code__):
        code = compile(_RESOLVER, "<csrun gate resolver>", "exec")
    ns = {}
    exec(code, ns)
    return ns["analyse"]


_NEXT_FD = 6  # the next attempt's code (see _next); csrun-run(1) DESCRIPTORS


def _write(fd, data):
    import posix

    while data:
        data = data[posix.write(fd, data) :]


def _send(verdict, fd=3, keep=False):
    """Write the verdict on FD and close it (KEEP: leave it open for the
    next attempt's); False if that failed."""
    import posix

    try:
        _write(fd, (_json(verdict) + "\n").encode("utf-8", "replace"))
        return True
    except OSError as e:
        sys.stderr.write("csrun gate: can't write the verdict on fd %d: %s\n" % (fd, e))
        keep = False
        return False
    finally:
        if not keep:
            try:
                posix.close(fd)
            except OSError:
                pass


def _next_fd():
    """Is fd 6 the supervisor's socket (the attempt may wait for the next
    code, see _next)?"""
    import posix

    try:
        return posix.fstat(_NEXT_FD).st_mode & 0o170000 == 0o140000  # S_ISSOCK
    except OSError:
        return False


def _next(status):
    """Nothing of the snippet ran and fd 6 is the supervisor's: say that this
    attempt ended (fd 3: "end STATUS CPU_NS HWM_KIB", after the output), then
    wait on fd 6 for the next code ("POLICY_LEN CODE_LEN\n" + policy + code).
    Returns (the policy text, the code); exits with STATUS when fd 6 ends
    (no next attempt)."""
    import posix
    import time

    sys.stdout.flush()
    sys.stderr.flush()
    hwm = 0
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    hwm = int(line.split()[1])
                    break
    except (OSError, ValueError, IndexError):
        pass
    try:
        _write(3, b"end %d %d %d\n" % (status, time.process_time_ns(), hwm))
    except OSError:
        sys.exit(status)

    def read(n):
        out = b""
        while len(out) < n:
            b = posix.read(_NEXT_FD, min(n - len(out), 1 << 20))
            if not b:
                sys.exit(status)
            out += b
        return out

    head = b""
    while not head.endswith(b"\n") and len(head) < 64:
        head += read(1)
    try:
        plen, clen = [int(x) for x in head.split()]
    except ValueError:
        sys.exit(status)
    body = read(plen + clen)
    try:  # the next attempt's peak memory is its own (Linux 4.0+)
        with open("/proc/self/clear_refs", "wb", buffering=0) as f:
            f.write(b"5")
    except OSError:
        pass
    return body[:plen].decode("utf-8", "replace"), body[plen:]


def _replace_snippet(src):
    """The next attempt's code becomes ./snippet.py (what its tracebacks
    and __file__ name)."""
    import posix

    try:
        posix.unlink("snippet.py")
    except FileNotFoundError:
        pass
    fd = posix.open("snippet.py", posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL | posix.O_NOFOLLOW | posix.O_CLOEXEC, 0o444)
    try:
        _write(fd, src)
    finally:
        posix.close(fd)


def _report(p, verdict, syntax_error, sent):
    """After the verdict was sent: what `python3 snippet.py` would print for
    a snippet that does not run (its SyntaxError, the violations), and the
    exit status; None when the snippet is to run."""
    if syntax_error is not None:  # the report `python3 snippet.py` prints
        sys.excepthook(SyntaxError, syntax_error.with_traceback(None), None)
        return 1
    for v in verdict["violations"]:
        sys.stderr.write("csrun gate: snippet.py:%d:%d: %s: %s\n" % (v["line"], v["col"], v["rule"], v["message"]))
    if verdict["violations"] or not sent:
        return 3 if sent else 4
    if not p.run:
        return 0
    return None


def _gate(first=None):
    """Everything before the snippet runs.  Return its code object when it
    must run; otherwise exit (or, with fd 6, wait for the next code: see
    _next).  FIRST: the first attempt's (policy text, code), when they did
    not come in argv and ./snippet.py (a warm jail's, policies/zygote.py)."""
    import posix

    gc.disable()  # the gate makes many objects and frees them all: no GC passes
    more = _next_fd()
    text, src = first or (None, None)
    while True:
        try:
            if text is None:
                # argv was decoded with the locale's codec; the policy is UTF-8.
                text = sys.argv.pop(1).encode(sys.getfilesystemencoding(), "surrogateescape").decode("utf-8", "replace")
            p = _Policy(_literal(compile(text, "<policy>", "eval", 0x400).body))
            f = None
            if src is not None:  # the next attempt's, from fd 6
                if p.source_fd is None:
                    _replace_snippet(src)
                f = __import__("io").BytesIO(src)
            verdict, code, syntax_error = _check(p, f)
        except (IndexError, SyntaxError, ValueError, TypeError, KeyError, AttributeError, OSError) as e:
            msg = "%s: %s" % (type(e).__name__, e)
            sys.stderr.write("csrun gate: %s\n" % msg)
            _send({"verdict": "error", "message": msg, "violations": [], "undefined_names": []})
            sys.exit(4)
        sys.argv[0] = "snippet.py"
        runs = code is not None and p.run
        sent = _send(verdict, keep=more and not runs)
        status = _report(p, verdict, syntax_error, sent)
        if status is None:
            if more:
                posix.close(_NEXT_FD)
            return code
        if not more or not sent:
            sys.exit(status)
        try:
            text, src = _next(status)
        except OSError as e:
            sys.stderr.write("csrun gate: the next attempt's code: %s\n" % e)
            sys.exit(4)


class _Quitter:
    """exit() and quit(), which site.py would have added to builtins."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "Use %s() or Ctrl-D (i.e. EOF) to exit" % self.name

    def __call__(self, code=None):
        raise SystemExit(code)


def _site():
    """-S skipped site.py (faster start-up): add its package dirs and exit()."""
    import builtins

    sys.path += ["/usr/local/lib/python%d.%d/dist-packages" % sys.version_info[:2], "/usr/lib/python3/dist-packages"]
    if not hasattr(builtins, "exit"):
        builtins.exit, builtins.quit = _Quitter("exit"), _Quitter("quit")


def _run(code):
    """Run the snippet as __main__ from snippet.py, as launch.py does."""
    import builtins

    _site()
    gc.enable()
    main = type(sys)("__main__")
    main.__file__ = "snippet.py"
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "snippet.py":
            tb = tb.tb_next  # the traceback starts in snippet.py, not in the gate
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        sys.exit(1)


# --------------------------------------------------------------- resolver
# Compiled only when _Policy.needs_resolver says the snippet may break the
# except or call rules (see _resolver: a loader may hand it precompiled).  analyse(policy, tree, lines) walks the tree again,
# this time with Python's scopes, resolves aliases and returns the
# violations as (line, col, rule id, message).
_RESOLVER = r'''
_WHAT = {
    "eval": "runs a string as Python code",
    "exec": "runs a string as Python code",
    "compile": "turns a string into runnable code",
    "__import__": "imports a module chosen at run time",
}
_SHELL = ("system", "popen", "getoutput", "getstatusoutput")
_PROGRAM = ("exec", "spawn", "posix_spawn", "Popen", "run", "call", "check_", "create_subprocess_")


def _what(target):
    """What a dangerous call target does, for the message."""
    last = target.rpartition(".")[2]
    if target in _WHAT:
        return _WHAT[target]
    if "." in target and last in _SHELL:
        return "runs a shell command"
    if "." in target and last.startswith(_PROGRAM):
        return "starts another program"
    return "is not allowed by the gate policy"


def _canon(dotted):
    """Builtins are named without their module: builtins.eval -> eval."""
    if dotted.startswith("__builtins__"):
        dotted = "builtins" + dotted[12:]
    return dotted[9:] if dotted.startswith("builtins.") else dotted


def _join(base, attr):
    return attr if base == "builtins" else base + "." + attr


def _const_str(n):
    """The value of a constant string expression ("a", "a" "b", "a" + "b",
    f"a{'b'}"), else None."""
    k = type(n).__name__
    if k == "Index":  # Python 3.8 wraps subscripts
        return _const_str(n.value)
    if k == "Constant":
        return n.value if type(n.value) is str else None
    if k == "BinOp" and type(n.op).__name__ == "Add":
        a, b = _const_str(n.left), _const_str(n.right)
        return None if a is None or b is None else a + b
    if k == "FormattedValue" and n.format_spec is None and n.conversion in (-1, 115):
        return _const_str(n.value)
    if k == "JoinedStr":
        parts = [_const_str(v) for v in n.values]
        return None if None in parts else "".join(parts)
    return None


def _bound_by(stmt, out):
    """Names a statement binds for sure once it ran (def, class, import,
    plain assignment)."""
    k = type(stmt).__name__
    if k in ("FunctionDef", "AsyncFunctionDef", "ClassDef"):
        out.append(stmt.name)
    elif k == "Import" or k == "ImportFrom":
        out.extend(a.asname or a.name.partition(".")[0] for a in stmt.names if a.name != "*")
    elif k == "Assign" or (k == "AnnAssign" and stmt.value is not None):
        todo = list(getattr(stmt, "targets", None) or [stmt.target])
        while todo:
            t = todo.pop()
            k = type(t).__name__
            if k == "Name":
                out.append(t.id)
            elif k in ("Tuple", "List", "Starred"):
                todo.extend(getattr(t, "elts", None) or [t.value])


class _Scope:
    """A scope: module, class, function (def and lambda) or comp.  bindings
    maps a name to what each of its bindings can hold: None (unknown: a def,
    a parameter...), a dotted name (an import: "os", "os.system") or
    (expr, scope) for `name = expr`, resolved on demand (`f = os.system`)."""

    __slots__ = ("kind", "parent", "body", "bindings", "declared", "dels", "firsts")

    def __init__(self, kind, parent, body=None):
        self.kind, self.parent, self.body = kind, parent, body
        self.bindings, self.declared, self.dels, self.firsts = {}, {}, set(), None

    def bind(self, name, value):
        self.bindings.setdefault(name, []).append(value)

    def surely_bound(self, name, pos):
        """In a module or class body: did a statement directly in the body
        bind NAME before POS?  Only then is the builtin of that name out of
        reach (`del NAME` in the scope cancels that)."""
        if self.firsts is None:
            self.firsts = {}
            for stmt in self.body:
                names = []
                _bound_by(stmt, names)
                for n in names:
                    self.firsts.setdefault(n, (stmt.lineno, stmt.col_offset))
        first = self.firsts.get(name)
        return first is not None and first <= pos and name not in self.dels


class _Analysis:
    def __init__(self, policy, lines):
        self.lines = lines
        self.excepts = dict((_canon(k), v) for k, v in policy.excepts.items())
        self.calls, self.prefixes = {}, []
        for target, rule in policy.calls.items():
            if target.endswith("*"):
                self.prefixes.append((_canon(target[:-1]), rule))
            else:
                self.calls[_canon(target)] = rule
        # Only an expression ending in a target's last component can be one.
        self.last = set(t.rpartition(".")[2] for t in self.calls)
        self.last_prefixes = tuple(p.rpartition(".")[2] for p, _ in self.prefixes) or ("\0",)
        self.violations, self.memo = [], {}

    def interesting(self, name):
        return name in self.last or name.startswith(self.last_prefixes)

    def match(self, dotted):
        """(target, rule) when DOTTED is a call target.  A target of two or
        more components also matches as a suffix: a module re-exported by
        another (shutil.os.system) is still that module."""
        i = 0
        while i >= 0:
            d = dotted[i:]
            if i and "." not in d:
                return None
            if d in self.calls:
                return d, self.calls[d]
            for p, rule in self.prefixes:
                if d.startswith(p) and "." not in d[len(p) :] and (not i or "." in p):
                    return d, rule
            i = dotted.find(".", i) + 1 or -1
        return None

    def violation(self, rule, node, message):
        self.violations.append((node.lineno, node.col_offset, rule[0], message + (rule[1] and ": " + rule[1])))

    def walk(self, tree):
        """Collect scopes, bindings and the uses worth checking.  A stack
        entry is (node, scope, hint); hint tells how the parent uses the
        node: "call" (the callee), "attribute" (X in X.y), "alias" (X in
        `name = X`), or (X, scope) for that name."""
        import _ast as A

        Name, Attribute, Call, Load, Del, AST = A.Name, A.Attribute, A.Call, A.Load, A.Del, A.AST
        # Nodes needing more than "visit the children in the same scope".
        kinds = {A.FunctionDef: 1, A.AsyncFunctionDef: 1, A.Lambda: 2, A.ClassDef: 3}
        kinds.update(dict.fromkeys((A.ListComp, A.SetComp, A.GeneratorExp, A.DictComp), 4))
        kinds.update({A.Assign: 5, A.AnnAssign: 5, A.NamedExpr: 5, A.ExceptHandler: 6, A.Import: 7})
        kinds.update({A.ImportFrom: 7, A.Global: 8, A.Nonlocal: 8, A.Subscript: 9})
        for k in ("MatchAs", "MatchStar", "MatchMapping", "TypeVar", "ParamSpec", "TypeVarTuple"):
            kinds[getattr(A, k, None)] = 10
        resolvable = (Name, Attribute, A.Subscript, Call)
        interesting = self.interesting
        self.module = _Scope("module", None, tree.body)
        self.scopes = [self.module]
        self.loads = loads = {}  # name -> [(Name node, scope, hint)]
        self.calls_seen = calls = []  # (Call node, scope, hint)
        self.refs = refs = []  # (node, scope): possible uses of a dangerous callable as a value
        self.handlers = []  # (ExceptHandler node, scope)
        self.stars = []  # M of every `from M import *`
        fields = {}
        stack = [(tree, self.module, None)]
        push, pop = stack.append, stack.pop
        while stack:
            node, scope, hint = pop()
            t = type(node)
            if t is Name:
                if type(node.ctx) is Load:
                    loads.setdefault(node.id, []).append((node, scope, hint))
                elif type(node.ctx) is Del:
                    scope.dels.add(node.id)
                else:
                    scope.bind(node.id, hint if type(hint) is tuple else None)
                continue
            if t is Attribute:
                if hint != "call" and hint != "alias" and type(node.ctx) is Load and interesting(node.attr):
                    refs.append((node, scope))
                push((node.value, scope, "attribute"))
                continue
            if t is Call:
                calls.append((node, scope, hint))
                push((node.func, scope, "call"))
                for x in node.args + [k.value for k in node.keywords]:
                    push((x, scope, None))
                continue
            k = kinds.get(t)
            if k is not None and k <= 3:  # def, lambda, class: a new scope
                inner = _Scope("class" if k == 3 else "function", scope, node.body if k == 3 else None)
                self.scopes.append(inner)
                if k != 2:
                    scope.bind(node.name, None)
                    for x in node.decorator_list + (node.bases if k == 3 else []):
                        push((x, scope, None))
                    for x in getattr(node, "type_params", None) or ():  # 3.12+
                        push((x, inner, None))
                if k == 3:
                    for x in node.keywords:
                        push((x.value, scope, None))
                else:
                    a = node.args
                    if k == 1 and node.returns is not None:
                        push((node.returns, scope, None))
                    for x in a.defaults + a.kw_defaults:
                        if x is not None:
                            push((x, scope, None))
                    for x in getattr(a, "posonlyargs", []) + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
                        if x is not None:
                            inner.bind(x.arg, None)
                            if x.annotation is not None:
                                push((x.annotation, scope, None))
                for x in [node.body] if k == 2 else node.body:
                    push((x, inner, None))
                continue
            if k == 4:  # comprehension: the first iterable is evaluated outside
                inner = _Scope("comp", scope)
                self.scopes.append(inner)
                for i, g in enumerate(node.generators):
                    push((g.iter, inner if i else scope, None))
                    push((g.target, inner, None))
                    for x in g.ifs:
                        push((x, inner, None))
                for x in (node.key, node.value) if t is A.DictComp else (node.elt,):
                    push((x, inner, None))
                continue
            if k == 5:  # `name = X` makes name an alias of X; other targets let X escape
                v = node.value
                targets = getattr(node, "targets", None) or [node.target]
                names = all(type(x) is Name for x in targets)
                alias = names and isinstance(v, resolvable)
                where = scope
                while t is A.NamedExpr and where.kind == "comp":  # := binds outside comprehensions
                    where = where.parent
                # A tuple of names is remembered too (for `except ERRORS:`),
                # but its items still count as uses.
                track = alias or (names and type(v) in (A.Tuple, A.List))
                for x in targets:
                    push((x, where, (v, scope) if track else None))
                if v is not None:
                    push((v, scope, "alias" if alias else None))
                if t is A.AnnAssign:
                    push((node.annotation, scope, None))
                continue
            if k == 6:
                self.handlers.append((node, scope))
                if node.name:
                    scope.bind(node.name, None)
            elif k == 7:
                mod = None if getattr(node, "level", 0) else getattr(node, "module", "")
                for a in node.names:
                    if a.name == "*":
                        self.stars += [mod] if mod else []
                    elif t is A.Import and not a.asname:
                        scope.bind(a.name.partition(".")[0], a.name.partition(".")[0])
                    elif t is A.Import:
                        scope.bind(a.asname, _canon(a.name))
                    else:
                        scope.bind(a.asname or a.name, mod and _canon(mod + "." + a.name))
                continue
            elif k == 8:
                scope.declared.update(dict.fromkeys(node.names, t.__name__))
                continue
            elif k == 9:
                if hint != "call" and hint != "alias" and type(node.ctx) is Load:
                    key = _const_str(node.slice)
                    if key is not None and interesting(key):
                        refs.append((node, scope))
            elif k == 10:  # match captures, type parameters
                n = getattr(node, "name", None) or getattr(node, "rest", None)
                if n:
                    scope.bind(n, None)
            fs = fields.get(t)
            if fs is None:
                fs = fields[t] = [f for f in t._fields if f not in ("ctx", "op", "ops", "type_comment")]
            for f in fs:
                v = getattr(node, f, None)
                if type(v) is list:
                    for x in v:
                        if isinstance(x, AST):
                            push((x, scope, None))
                elif isinstance(v, AST):
                    push((v, scope, None))

    def settle(self):
        """Move what a scope binds under `global`/`nonlocal` to the scope it
        really binds in."""
        for s in self.scopes:
            for name, decl in s.declared.items():
                to = s.parent
                while to and decl == "Nonlocal" and (to.kind != "function" or to.declared.get(name) or name not in to.bindings):
                    to = to.parent
                to = to if to and decl == "Nonlocal" else self.module
                if to is not s:
                    for v in s.bindings.pop(name, ()):
                        to.bind(name, v)
                    if name in s.dels:
                        to.dels.add(name)

    def lookup(self, name, scope, pos):
        """The dotted names NAME can stand for at POS, by Python's scoping
        rules (flow-insensitive, except for what shadows a builtin)."""
        out = set()
        s, first = scope, True
        while s.kind != "module" and s.declared.get(name) != "Global":
            if name in s.bindings and name not in s.declared and (first or s.kind != "class"):
                self.values(s, name, out)
                if s.kind != "class" or s.surely_bound(name, pos):
                    return out
            s, first = s.parent, False
        m = self.module
        if name in m.bindings:
            self.values(m, name, out)
            if m.surely_bound(name, pos):
                return out
        # Maybe unbound here: the builtin, or a name from a star import.
        out.add("builtins" if name == "__builtins__" else name)
        out.update(_join(mod, name) for mod in self.stars)
        return out

    def values(self, scope, name, out):
        for v in scope.bindings[name]:
            if type(v) is tuple:  # `name = X`: resolve X once (a cycle gives nothing)
                got = self.memo.get(id(v))
                if got is None:
                    self.memo[id(v)] = ()
                    got = self.memo[id(v)] = self.resolve(*v)
                out.update(got)
            elif v:
                out.add(v)

    def resolve(self, node, scope):
        """The dotted names an expression can evaluate to (builtins without
        their module); empty when unknown."""
        attrs = []
        while type(node).__name__ == "Attribute":  # unrolled: chains can be long
            attrs.append(node.attr)
            node = node.value
        k = type(node).__name__
        out = set()
        if k == "Name":
            out = self.lookup(node.id, scope, (node.lineno, node.col_offset))
        elif k == "Call":
            funcs, args = self.resolve(node.func, scope), node.args
            first = _const_str(args[0]) if args else None
            if "getattr" in funcs and len(args) >= 2 and _const_str(args[1]) is not None:
                out = set(_join(b, _const_str(args[1])) for b in self.resolve(args[0], scope))
            elif first and "importlib.import_module" in funcs:
                out = {first}
            elif first and "__import__" in funcs:
                out = {first.partition(".")[0]}
            elif "vars" in funcs and len(args) == 1:
                out = set(b + ".__dict__" for b in self.resolve(args[0], scope))
        elif k in ("Tuple", "List"):  # ERRORS = (KeyError, Exception)
            for e in node.elts:
                out |= self.resolve(e, scope)
        elif k == "Subscript":
            key = _const_str(node.slice)
            for b in self.resolve(node.value, scope) if key is not None else ():
                if b.endswith(".__dict__"):  # os.__dict__["system"]
                    out.add(_join(b[:-9], key))
                elif b in ("builtins", "sys.modules"):  # __builtins__["eval"], sys.modules["os"]
                    out.add(key)
        for a in reversed(attrs):
            out = set(_join(b, a) for b in out)
        return out

    def dangerous(self, node, scope):
        for n in sorted(self.resolve(node, scope)):
            hit = self.match(n)
            if hit:
                return hit
        return None

    def text(self, node):
        """The source of a one-line node, or None."""
        try:
            if node.lineno == node.end_lineno:
                return self.lines[node.lineno - 1][node.col_offset : node.end_col_offset].decode("utf-8", "replace")
        except (AttributeError, IndexError):
            pass
        return None

    def maybe(self, node):
        """Can this expression be a call target?  (A cheap syntactic test
        before resolving: its last component must be a target's.)"""
        k = type(node).__name__
        if k == "Attribute":
            return self.interesting(node.attr) or self.maybe(node.value)
        if k == "Call":
            return len(node.args) >= 2 and self.interesting(_const_str(node.args[1]) or "")
        if k == "Subscript":
            return self.interesting(_const_str(node.slice) or "")
        return k == "Name"

    def check_calls(self):
        if not self.calls and not self.prefixes:
            return
        # Names worth resolving: a target's last component, or a name bound
        # to an import or an alias that may be one.
        hot = set(n for n in self.loads if self.interesting(n))
        for s in self.scopes:
            for name, vals in s.bindings.items():
                if name in self.loads and any(type(v) is tuple and self.maybe(v[0]) or type(v) is str and self.match(v) for v in vals):
                    hot.add(name)
        for node, scope, hint in self.calls_seen:
            f = node.func
            k = type(f).__name__
            if (k == "Name" and f.id not in hot) or (k == "Attribute" and not self.maybe(f)):
                continue
            hit = self.dangerous(f, scope)
            if hit:
                written = self.text(f)
                where = " (called as `%s`)" % written if written and written != hit[0] else ""
                self.violation(hit[1], node, "%s() %s%s" % (hit[0], _what(hit[0]), where))
            elif hint not in ("call", "alias") and len(node.args) >= 2 and self.interesting(_const_str(node.args[1]) or ""):
                self.refs.append((node, scope))  # getattr(os, "system") as a value
        # A dangerous callable used as a value (passed, stored, returned) is
        # flagged where it is used.  `f = os.system` alone is not: f is an
        # alias, and every use of f is checked as a use of os.system.
        for name in hot:
            self.refs.extend((n, s) for n, s, h in self.loads[name] if h not in ("call", "alias"))
        for node, scope in self.refs:
            hit = self.dangerous(node, scope)
            if hit:
                msg = "`%s` is %s, which %s; using it as a value counts as calling it"
                self.violation(hit[1], node, msg % (self.text(node) or hit[0], hit[0], _what(hit[0])))

    def check_excepts(self):
        for h, scope in self.handlers if self.excepts else ():
            if h.type is None:
                rule = self.excepts.get("BaseException") or next(iter(self.excepts.values()))
                msg = "bare `except:` catches every exception, even KeyboardInterrupt and SystemExit, and hides real errors"
                self.violation(rule, h, msg)
                continue
            # A handler that ends with a bare `raise` hides nothing: it
            # re-raises whatever it caught (after logging, cleaning up...).
            last = h.body[-1] if h.body else None
            if type(last).__name__ == "Raise" and last.exc is None:
                continue
            for e in h.type.elts if type(h.type).__name__ == "Tuple" else [h.type]:
                hit = [n for n in sorted(self.resolve(e, scope)) if n in self.excepts]
                if hit:
                    msg = "`except %s` catches %s and all its subclasses, which hides real errors"
                    msg %= (self.text(e) or hit[0], hit[0])
                    name = " as " + h.name if h.name else ""
                    msg += "; write the narrower form, e.g. `except (ValueError, KeyError)%s:`, or end the handler with a bare `raise`" % name
                    self.violation(self.excepts[hit[0]], h, msg)
                    break


def analyse(policy, tree, lines):
    a = _Analysis(policy, lines)
    a.walk(tree)
    a.settle()
    a.check_excepts()
    a.check_calls()
    return a.violations
'''


def _exit_status(e):
    """The exit status of SystemExit E, as Python's own handling makes it
    (a code that is neither None nor an int is printed to stderr: 1)."""
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if -(1 << 63) <= code < 1 << 63 else 0xFF
    try:
        sys.stderr.write("%s\n" % (code,))
    except BaseException:
        pass
    return 1


def _flush(status):
    """Flush sys.stdout and sys.stderr as the interpreter does at its exit:
    status 120 if that fails."""
    for i, f in enumerate((sys.stdout, sys.stderr)):
        try:
            if f is not None and not getattr(f, "closed", False):
                f.flush()
        except BaseException as e:
            status = 120
            if i == 0:
                try:
                    sys.stderr.write("Exception ignored in: %r\n%s: %s\n" % (f, type(e).__name__, e))
                except BaseException:
                    pass
    return status


def _finish(status):
    """End the interpreter after the snippet as Python's own exit would, as
    far as a snippet can tell: its non-daemon threads joined, its atexit
    functions run, sys.stdout and sys.stderr flushed (120 if that fails),
    its module's globals released (their __del__, files closed) and its
    garbage collected; then _exit, without tearing down every module, which
    costs a fresh interpreter little but a warm jail's (policies/zygote.py,
    every page of the zygote's modules copied to be freed) more than its
    snippet: csrun-run(1), THE SNIPPET, "The end of a run"."""
    import posix

    t = sys.modules.get("threading")
    if t is not None:
        try:
            t._shutdown()
        except BaseException:
            pass
    try:
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        pass
    flush, end = _flush, posix._exit  # the globals below may be the gate's own
    status = flush(status)
    try:
        d = sys.modules["__main__"].__dict__
        if d is not globals():  # the snippet's (the gate ran without one: nothing)
            for first in (True, False):  # as Python clears a module: _names first
                for k in list(d):
                    if k != "__builtins__" and k.startswith("_") == first:
                        d[k] = None
    except BaseException:
        pass
    try:
        gc.collect()
    except BaseException:
        pass
    end(flush(status))


def _main(first=None):
    """The gate, then the snippet (see _gate for FIRST), then the end
    (_finish)."""
    try:
        try:
            code = _gate(first)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as e:  # a bug in the gate: never a pass
            sys.stderr.write("csrun gate: internal error: %s: %s\n" % (type(e).__name__, e))
            _send({"verdict": "error", "message": "internal error: %r" % e, "violations": [], "undefined_names": []})
            sys.exit(4)
        _run(code)
        status = 0
    except SystemExit as e:
        status = _exit_status(e)
    _finish(status)


if __name__ == "__main__":
    _main()
