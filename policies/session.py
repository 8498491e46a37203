# csrun session server: a persistent interpreter of a sandbox, for
# `csrun sandbox run ID --session NAME` (csrun-sandbox(1), SESSIONS).  The
# keeper starts it through the sandbox's exec machinery (the sandbox's
# namespaces, cgroup, seccomp filter, rlimits; no capabilities) as
#     python3 -I -S -u -c <this file> GATE_SOURCE
# with fds 0-2 /dev/null and fd 3 one end of a socketpair whose other end
# only the keeper holds: the control channel.  For each request the keeper
# sends one JSON line, with descriptors (SCM_RIGHTS), and reads one JSON
# line back:
#
#   {"op": "cell", "policy": POLICY, "args": [...]}
#       with stdin, stdout, stderr, the verdict pipe and the cell's code.
#       The cell is gated by policies/gate.py's own functions (POLICY as the
#       one-shot gate gets it); the verdict goes on the verdict pipe, which
#       is closed before the cell runs.  A cell that passes runs in the
#       session's globals (a module named __main__ that survives between
#       cells) with the given streams as fds 0, 1 and 2.  Reply
#       {"status": N, "interrupted": bool, "cpu_ms": N, "cell": N}: N is what
#       `python3 snippet.py` would exit with (0, 1 for an exception, the
#       SystemExit code, 3 blocked by the gate, 4 the gate failed).
#   {"op": "save"} with one descriptor: the picklable globals, pickled and
#       written there (the descriptor closed before the reply).  Reply
#       {"saved": [...], "modules": [...], "skipped": [{"name", "why"}]}.
#   {"op": "load"} with one descriptor: a save, read and put into the
#       globals.  Reply {"loaded": [...], "skipped": [{"name", "why"}]}.
#   Both replies stay under the keeper's 64 KiB line: long names and reasons
#   are cut, and the names that do not fit are counted in "omitted".
#
# SIGINT raises KeyboardInterrupt in a running cell, save or load (the
# keeper's timeout: the reply is then {"error": "interrupted"}) and is
# ignored between requests.  The channel is the keeper's, but a cell runs in this process: a
# cell can do anything this server can (the sandbox is the boundary, not
# this file), so the keeper checks every reply it reads.
import sys


def _serve():
    import builtins
    import os
    import signal
    import socket
    import time

    gate = {"__name__": "csrun_gate", "__builtins__": builtins}
    exec(compile(sys.argv.pop(1), "<csrun-gate>", "exec"), gate)
    gate["_site"]()
    ctl = socket.socket(fileno=os.dup(3))  # not inherited by what cells start
    os.close(3)
    null = [os.dup(i) for i in range(3)]
    main = type(sys)("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main  # pickle looks classes of cells up there
    g = main.__dict__
    policies = {}
    state = {"interruptible": False, "cells": 0}

    def on_sigint(sig, frame):
        if state["interruptible"]:
            raise KeyboardInterrupt

    def parse(text):
        return gate["_literal"](compile(text, "<request>", "eval", 0x400).body)

    def reply(doc):
        ctl.sendall((gate["_json"](doc) + "\n").encode("utf-8", "replace"))

    def close_all(fds):
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass

    def rename(code, name):
        """The code object and the functions in it, as file NAME."""
        consts = tuple(rename(c, name) if type(c) is type(code) else c for c in code.co_consts)
        return code.replace(co_filename=name, co_consts=consts)

    def show(e, n):
        """The traceback `python3 snippet.py` would print, from the cell's
        frame on; the cell is snippet.py, earlier cells are <cell N>."""
        import traceback

        tb = e.__traceback__
        while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<cell "):
            tb = tb.tb_next
        # Without this server's frames (the SIGINT handler's, at the end).
        frames = [f for f in traceback.extract_tb(tb) if f.filename not in ("<string>", "<csrun-gate>")]
        text = "".join(traceback.format_list(frames)) if frames else ""
        text = ("Traceback (most recent call last):\n" + text if text else "") + "".join(traceback.format_exception_only(type(e), e))
        sys.__stderr__.write(text.replace('File "<cell %d>"' % n, 'File "snippet.py"'))

    def run(code, src, n):
        """Run one cell's code object: (status, interrupted)."""
        import linecache

        name = "<cell %d>" % n
        text = src.decode("utf-8", "replace")
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
        code = rename(code, name)
        signal.signal(signal.SIGINT, on_sigint)
        try:
            try:
                state["interruptible"] = True
                exec(code, g)
            finally:
                state["interruptible"] = False
            return 0, False
        except SystemExit as e:
            if e.code is None or type(e.code) is int:
                return (e.code or 0) & 0xFF, False
            sys.__stderr__.write("%s\n" % (e.code,))
            return 1, False
        except KeyboardInterrupt as e:
            show(e, n)
            return 1, True
        except BaseException as e:
            show(e, n)
            return 1, False

    def streams(fds):
        """The cell's stdin, stdout and stderr as fds 0, 1 and 2."""
        for i in range(3):
            os.dup2(fds[i], i)
        close_all(fds[:3])
        sys.stdin = open(0, "r", closefd=False)

    def unstreams():
        for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                f.flush()
            except BaseException:
                pass
        sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__
        for i in range(3):
            os.dup2(null[i], i)

    def cell(req, fds):
        if len(fds) != 5:
            close_all(fds)
            return {"error": "a cell needs 5 descriptors"}
        text = req.get("policy")
        p = policies.get(text)
        t0 = time.process_time()
        state["cells"] += 1
        n = state["cells"]
        code, src, syntax_error = None, b"", None
        try:
            if p is None:
                p = policies[text] = gate["_Policy"](parse(text))
            with open(fds[4], "rb") as f:
                src = f.read()
            # The session's globals are defined: never "undefined", never healed.
            verdict, code, syntax_error = gate["_check"](p, __import__("io").BytesIO(src), g.keys())
        except (SyntaxError, ValueError, TypeError, KeyError, AttributeError, OSError, MemoryError) as e:
            verdict = {"verdict": "error", "message": "%s: %s" % (type(e).__name__, e), "violations": [], "undefined_names": []}
        streams(fds)
        try:
            sys.argv = ["snippet.py"] + [a for a in req.get("args") or () if type(a) is str]
            sent = gate["_send"](verdict, fds[3])
            if verdict["verdict"] == "error":
                sys.__stderr__.write("csrun gate: %s\n" % verdict.get("message"))
                status, interrupted = 4, False
            else:
                status = gate["_report"](p, verdict, syntax_error, sent)
                interrupted = False
                if status is None:
                    status, interrupted = run(code, src, n)
        finally:
            unstreams()
        cpu = int((time.process_time() - t0) * 1000)
        return {"status": status, "interrupted": interrupted, "cpu_ms": cpu, "cell": n}

    def bounded(report, limit=60000):
        """REPORT (a save's or a load's) within LIMIT bytes, under the
        keeper's 64 KiB line: names and reasons cut, the lists cut short,
        the names left out counted in "omitted"."""
        def size(v):
            return len(gate["_json"](v).encode("utf-8", "replace")) + 1

        def cut(text, n):
            text = str(text)
            return text if len(text) <= n else text[:n] + "..."

        # What was not saved or loaded comes first: it is the news.
        out, used, omitted = {}, 100, 0
        for key in ("skipped", "modules", "saved", "loaded"):
            if key not in report:
                continue
            out[key] = []
            for x in report[key]:
                if key == "skipped":
                    x = {"name": cut(x["name"], 200), "why": cut(x["why"], 400)}
                else:
                    x = cut(x, 200)
                n = size(x)
                if used + n > limit:
                    omitted += 1
                    continue
                used += n
                out[key].append(x)
        if omitted:
            out["omitted"] = omitted
        return out

    def save(fds):
        import pickle
        import types

        class MainRef(Exception):
            pass

        class Probe(pickle.Unpickler):
            def find_class(self, module, name):
                if module == "__main__":
                    raise MainRef(name)
                return super().find_class(module, name)

        blobs, modules, saved, skipped = {}, {}, [], []
        plain = (bytes, bytearray, str, int, float, complex, bool, type(None))
        # The descriptor is closed on the way out, whatever happens (the
        # keeper reads it to its end).
        with open(fds[0], "wb") as f:
            state["interruptible"] = True
            try:
                for name, v in list(g.items()):
                    if name[:2] == "__" == name[-2:]:
                        continue
                    if isinstance(v, types.ModuleType):
                        modules[name] = v.__name__
                        continue
                    try:
                        data = pickle.dumps(v, 4)
                        # A class or function of a cell, by reference?  (Not
                        # in the plain types: their data need no search.)
                        if type(v) not in plain and b"__main__" in data:
                            Probe(__import__("io").BytesIO(data)).load()
                    except MainRef:
                        skipped.append({"name": name, "why": "defined in a cell (pickled by reference): it can't be restored in another session"})
                        continue
                    except Exception as e:
                        skipped.append({"name": name, "why": "%s: %s" % (type(e).__name__, e)})
                        continue
                    blobs[name] = data
                    saved.append(name)
                # Streamed: large values go to F without another copy.
                pickle.Pickler(f, 4).dump({"csrun-session": 1, "globals": blobs, "modules": modules})
            finally:
                state["interruptible"] = False
        return bounded({"saved": saved, "modules": sorted(modules), "skipped": skipped})

    def load(fds):
        import importlib
        import pickle

        loaded, skipped = [], []
        with open(fds[0], "rb") as f:
            state["interruptible"] = True
            try:
                doc = pickle.load(f)
                if type(doc) is not dict or doc.get("csrun-session") != 1:
                    return {"error": "not a csrun session save"}
                items = [(n, m, True) for n, m in dict(doc.get("modules") or {}).items()]
                items += [(n, d, False) for n, d in dict(doc.get("globals") or {}).items()]
                for name, v, is_module in items:
                    if type(name) is not str or not name.isidentifier() or name[:2] == "__" == name[-2:]:
                        skipped.append({"name": repr(name), "why": "not a name a save holds"})
                        continue
                    try:
                        g[name] = importlib.import_module(v) if is_module else pickle.loads(v)
                        loaded.append(name)
                    except Exception as e:
                        skipped.append({"name": name, "why": "%s: %s" % (type(e).__name__, e)})
            finally:
                state["interruptible"] = False
        return bounded({"loaded": loaded, "skipped": skipped})

    def receive():
        """Bytes and the descriptors with them (close-on-exec); 64 KiB at a
        time, under malloc's mmap threshold.  (socket.recv_fds is 3.9+.)"""
        import array

        ints = array.array("i")
        data, anc, flags, addr = ctl.recvmsg(1 << 16, socket.CMSG_LEN(8 * ints.itemsize), socket.MSG_CMSG_CLOEXEC)
        for level, kind, extra in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                ints.frombytes(extra[: len(extra) - len(extra) % ints.itemsize])
        return data, list(ints)

    signal.signal(signal.SIGINT, on_sigint)
    buf, fds = b"", []
    while True:
        data, got = receive()
        fds += got
        if not data:
            return
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            mine, fds = fds, []
            try:
                req = parse(line.decode("utf-8"))
                op = req.get("op")
                if op == "cell":
                    out = cell(req, mine)
                elif op == "save" and len(mine) == 1:
                    out = save(mine)
                elif op == "load" and len(mine) == 1:
                    out = load(mine)
                else:
                    close_all(mine)
                    out = {"error": "unknown request"}
            except KeyboardInterrupt:
                out = {"error": "interrupted"}
            except Exception as e:
                out = {"error": "%s: %s" % (type(e).__name__, e)}
            reply(out)


_serve()
