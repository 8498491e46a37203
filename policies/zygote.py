# csrun zygote: the warm interpreter of a pool of jails (csrun-batch(1),
# WARM JAILS; src/lib/jail/zygote.h has csrun's side).  csrun starts it once,
# as the payload of a jail of its own (the rootfs read-only, its own user,
# mount, pid, network, ipc, uts and cgroup namespaces, no capabilities,
# no_new_privs), except that its /proc has no masks and it has no seccomp
# filter: its children need both to make jails of their own.  It runs as
#     python3 -I -S -u -c <the gate's bootstrap + this file> "" SETUP
# with fd 3 one end of a socketpair only csrun holds (the control socket)
# and fd 4 the precompiled gate (gatecode.h), which it loads as a module.
# It never runs anything but this file: no snippet runs in this process.
#
# For each request (one message on fd 3: "ns FLAGS\n", a JSON line, then the
# seccomp program; with descriptors, the sync socket first) it clones G
# straight into new namespaces, the item's jail, before anything of the
# item exists:
#   G  pid 1 of a new pid namespace, in a new user namespace (its one id
#      mapped to its own) and, owned by it, new mount, network, ipc and uts
#      namespaces (FLAGS: csrun says which); enters the item's cgroup ("0"
#      written to descriptors csrun opened), unshares its cgroup namespace,
#      forks P; then is the jail's init (as init.c): not dumpable, its
#      command line wiped, reaps everything and reports P's end (its wait
#      status, the cpu time and peak memory of the jail's processes) on the
#      sync socket.
#   P  pid 2: has the jail's tree: the zygote's own, a snippet jail's
#      (mounts.c; its tables come in SETUP), copied and locked read-only,
#      with its own /proc (masked), /dev/shm, /dev/pts, /tmp and working
#      directory mounted over the zygote's; hostname; lo up.  Then its descriptors (0-3 and 6,
#      csrun-run(1) DESCRIPTORS), the signal dispositions of a fresh
#      interpreter, rlimits, every capability dropped, securebits,
#      no_new_privs, the seccomp filter (child.c, caps.c); says READY on the
#      sync socket (the kernel tells csrun its pid) and waits on a socket of
#      its own for the code.  csrun checks from outside (/proc/P/status,
#      /proc/P/ns/*) that P is confined before it sends the first attempt's
#      policy and code; P then forgets the zygote (its frames unwound, its
#      modules out of sys.modules) and runs the gate on the code exactly as
#      a one-shot jail's interpreter does (gate.py _main), and ends as that
#      interpreter would.
# Errors of G and P before any code came go on the sync socket as csrun's
# own set-up errors do (struct csr_sync_msg, launch.h).
#
# What a child shares with the zygote and with the other items: the
# interpreter's memory as it was at the fork (the gate's code, this file,
# SETUP, the request: nothing secret), its hash seed (str hashes are the
# same in every item of a pool) and its address layout.  `random` is not
# loaded here: each item seeds its own when it imports it.
import sys


def _zygote():
    """The zygote's loop; returns only in P, with the first attempt (its
    policy and code) once P is confined."""
    import builtins
    import gc
    import posix
    import _signal
    import _socket

    import _ast  # the gate's, imported before any snippet runs: kept

    boot_modules = set(sys.modules)
    gate = {"__name__": "csrun_gate", "__builtins__": builtins}
    code = _csrun_boot()  # the bootstrap's (gatecode.c): the gate from fd 4
    if "_RESOLVER_CODE" in globals():
        gate["_RESOLVER_CODE"] = globals()["_RESOLVER_CODE"]
    exec(code, gate)
    setup = gate["_literal"](compile(sys.argv.pop(1), "<setup>", "eval", 0x400).body)
    k = setup["consts"]
    import ctypes
    import fcntl
    import resource
    import struct

    libc = ctypes.CDLL(None, use_errno=True)
    c_ulong, c_char_p, c_int = ctypes.c_ulong, ctypes.c_char_p, ctypes.c_int
    libc.mount.argtypes = [c_char_p, c_char_p, c_char_p, c_ulong, c_char_p]
    libc.umount2.argtypes = [c_char_p, c_int]
    libc.prctl.argtypes = [c_int, c_ulong, c_ulong, c_ulong, c_ulong]
    libc.unshare.argtypes = [c_int]
    libc.sethostname.argtypes = [c_char_p, ctypes.c_size_t]
    EINVAL = 22

    def check(r, what):
        if r < 0:
            e = ctypes.get_errno()
            raise OSError(e, "%s: %s" % (what, posix.strerror(e)))
        return r

    def enc(s):
        return s.encode() if type(s) is str else s

    def mount(src, dst, fstype, flags, data=None):
        what = "mount %s on %s" % (fstype or src or "none", dst)
        check(libc.mount(enc(src), enc(dst), enc(fstype), flags, enc(data)), what)

    def prctl(op, a, what):
        return check(libc.prctl(op, a, 0, 0, 0), what)

    def write_file(path, data):
        fd = posix.open(path, posix.O_WRONLY | posix.O_CLOEXEC)
        try:
            posix.write(fd, data)
        finally:
            posix.close(fd)

    def high(fd):
        """FD's copy at 64 or above, out of the way of the payload's."""
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 64)

    # ---- the sync socket (struct csr_sync_msg, launch.h)
    def sync_msg(kind, err=0, status=0, text=b""):
        return struct.pack("=Iii500s", kind, err, status, text[:499])

    def fail(sync, e):
        if isinstance(e, OSError) and e.errno:
            text, err = str(e.strerror or e), e.errno
            if e.filename is not None:
                text = "%s: %s" % (e.filename, text)
        else:
            text, err = "%s: %s" % (type(e).__name__, e), 0
        tb = e.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is not None:
            text += " (zygote.py line %d)" % tb.tb_lineno
        try:
            posix.write(sync, sync_msg(k["SYNC_ERROR"], err, 0, ("warm jail: " + text).encode("utf-8", "replace")))
        except OSError:
            pass
        posix._exit(125)

    # ---- P: the jail's mount tree.  Everything but the item's tmpfs sizes
    # and ids is known here, once: the plan is a list of mounts with their
    # arguments ready, so that each jail runs little Python (and copies few
    # of the zygote's pages).
    MS = lambda *names: sum(k["MS_" + n] for n in names)

    def kept(path):
        """The flags a remount of (a bind of) PATH's mount must keep in a
        user namespace (mounts.c locked_flags)."""
        f = posix.statvfs(path).f_flag
        return sum(ms for st, ms in k["locked"] if f & st)

    plan = [(None, b"/", None, MS("REC", "PRIVATE"), None)]

    def m(src, dst, fstype, flags, data=None):
        plan.append((enc(src), enc(dst), enc(fstype), flags, enc(data)))

    def restrict(path, flags, like):
        m(None, path, None, MS("REMOUNT", "BIND") | flags | kept(like))

    # No pivot_root (and no unmount of an old root, which waits for an RCU
    # grace period): the zygote's own tree is a snippet jail's (the launcher
    # made it with mounts.c, from the same rootfs, package layer and /dev),
    # and its copy in the new mount namespace is locked there, read-only.
    # What must be the item's own is mounted over it: a /proc of its pid
    # namespace (allowed because the zygote's, under it, is unmasked),
    # masked as mounts.c masks one; /dev/shm and /dev/pts; /tmp and the
    # working directory (tree).
    m("proc", "/proc", "proc", MS("NOSUID", "NODEV", "NOEXEC"))
    for p in setup["masked"]:
        try:
            st = posix.lstat(p)
        except OSError:
            continue
        if st.st_mode & 0o170000 == 0o040000:
            m("tmpfs", p, "tmpfs", MS("RDONLY", "NOSUID", "NODEV", "NOEXEC"), "size=0,nr_inodes=1,mode=0555")
        else:
            m("/dev/null", p, None, MS("BIND"))
            restrict(p, MS("RDONLY", "NOSUID", "NOEXEC"), "/dev/null")
    for p in setup["readonly"]:
        try:
            posix.stat(p)
        except OSError:
            continue
        m(p, p, None, MS("BIND", "REC"))
        restrict(p, MS("RDONLY", "NOSUID", "NODEV", "NOEXEC"), "/proc")
    m("tmpfs", "/dev/shm", "tmpfs", MS("NOSUID", "NODEV", "NOEXEC"), "size=64m,nr_inodes=1024,mode=1777")
    m("devpts", "/dev/pts", "devpts", MS("NOSUID", "NOEXEC"), "newinstance,ptmxmode=0666,mode=0620")
    root_flags = MS("REMOUNT", "BIND", "RDONLY", "NOSUID", "NODEV") | kept("/")
    tmpfs_flags = MS("NOSUID", "NODEV")
    plan = tuple(plan)

    def tree(req):
        mnt = libc.mount
        for a, b, c, d, e in plan:
            if mnt(a, b, c, d, e) < 0:
                check(-1, "mount %s on %s" % ((c or a or b"none").decode(), b.decode()))
        opts = "size=%d,nr_inodes=%d,mode=%%s,uid=%d,gid=%d" % (req["tmp_size"], req["tmp_inodes"], req["uid"], req["gid"])
        mount("tmpfs", "/tmp", "tmpfs", tmpfs_flags, opts % "1777")
        mount("tmpfs", "/work", "tmpfs", tmpfs_flags, opts % "0755")  # csrun sends no other cwd
        posix.chdir("/")
        mount(None, "/", None, root_flags)

    def loopback():
        s = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM, 0)
        try:
            ifr = fcntl.ioctl(s.fileno(), k["SIOCGIFFLAGS"], struct.pack("16sH22x", b"lo", 0))
            flags = struct.unpack("16sH22x", ifr)[1] | k["IFF_UP"]
            fcntl.ioctl(s.fileno(), k["SIOCSIFFLAGS"], struct.pack("16sH22x", b"lo", flags))
        finally:
            s.close()

    # ---- P: the payload's confinement (child.c start_payload, caps.c)
    def install_fds(req, fds):
        """0, 1, 2 (/dev/null when not given), 3 the verdict, 6 the next
        attempt's socket (when given); 4 and 5 closed."""
        role = req["fds"]
        want = [role.get(x) for x in ("stdin", "stdout", "stderr", "verdict")]
        src = [high(fds[i]) if i is not None else high(posix.open("/dev/null", posix.O_RDWR)) for i in want]
        nxt = high(fds[role["next"]]) if role.get("next") is not None else None
        for i, fd in enumerate(src):
            posix.dup2(fd, i)
        for fd in (4, 5, 6):
            try:
                posix.close(fd)
            except OSError:
                pass
        if nxt is not None:
            posix.dup2(nxt, 6)

    fd = posix.open("/proc/sys/kernel/cap_last_cap", posix.O_RDONLY)
    caps = range(int(posix.read(fd, 32)) + 1)  # the kernel's, all of them in a new user namespace
    posix.close(fd)

    def drop_caps(req):
        drop = k["PR_CAPBSET_DROP"]
        for c in caps:  # the bounding set
            if libc.prctl(drop, c, 0, 0, 0) < 0:
                check(-1, "drop capability %d from the bounding set" % c)
        if libc.prctl(k["PR_CAP_AMBIENT"], k["PR_CAP_AMBIENT_CLEAR_ALL"], 0, 0, 0) < 0 and ctypes.get_errno() != EINVAL:
            check(-1, "clear ambient capabilities")
        prctl(k["PR_SET_SECUREBITS"], k["securebits"], "set securebits")
        posix.setresgid(req["gid"], req["gid"], req["gid"])
        posix.setresuid(req["uid"], req["uid"], req["uid"])
        header = (ctypes.c_uint32 * 2)(k["CAP_VERSION"], 0)
        data = (ctypes.c_uint32 * 6)()
        check(libc.capset(header, data), "clear capability sets")
        prctl(k["PR_SET_NO_NEW_PRIVS"], 1, "set no_new_privs")

    def seccomp(bpf):
        class Filter(ctypes.Structure):
            _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

        class Prog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

        n = len(bpf) // 8
        prog = Prog(n, (Filter * n).from_buffer_copy(bpf))
        check(libc.prctl(k["PR_SET_SECCOMP"], k["SECCOMP_MODE_FILTER"], ctypes.addressof(prog), 0, 0), "load the seccomp filter")

    def read_code(go):
        """The first attempt: "POLICY_LEN CODE_LEN\n", the policy, the code
        (the format of gate.py's _next); nothing (csrun refused the jail):
        exit."""

        def read(n):
            out = b""
            while len(out) < n:
                b = posix.read(go, min(n - len(out), 1 << 20))
                if not b:
                    posix._exit(125)
                out += b
            return out

        head = b""
        while not head.endswith(b"\n") and len(head) < 64:
            head += read(1)
        plen, clen = [int(x) for x in head.split()]
        body = read(plen + clen)
        return body[:plen].decode("utf-8", "replace"), body[plen:]

    def payload(req, fds, bpf, sync):
        """P: the jail's tree, confinement, READY; returns the first attempt
        once it came."""
        brk = req.get("test_break") or ""
        sync = high(sync)
        try:
            go = high(fds[req["fds"]["go"]])
            posix.setsid()
            tree(req)
            hn = req["hostname"].encode()
            check(libc.sethostname(hn, len(hn)), "sethostname")
            if req["net"]:
                loopback()
            # As a fresh interpreter's start-up leaves them (the zygote
            # changed these alone; SIGPIPE and SIGXFSZ are ignored there too).
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)
            _signal.signal(_signal.SIGTERM, _signal.SIG_DFL)
            _signal.signal(_signal.SIGHUP, _signal.SIG_DFL)
            install_fds(req, fds)
            for res, val in req["rlimits"]:
                resource.setrlimit(res, (val, val))
            posix.chdir(req["cwd"])
            if brk == "caps":  # tests only: csrun must refuse this jail
                prctl(k["PR_SET_NO_NEW_PRIVS"], 1, "set no_new_privs")
            else:
                drop_caps(req)
            keep = sorted(set([0, 1, 2, 3, 6, sync, go]))
            last = -1
            for fd in keep:
                if fd > last + 1:
                    posix.closerange(last + 1, fd)
                last = fd
            posix.closerange(last + 1, 1 << 20)
            if req["fds"].get("next") is None:
                try:
                    posix.close(6)
                except OSError:
                    pass
            if bpf and brk != "seccomp":
                seccomp(bpf)
            _signal.pthread_sigmask(_signal.SIG_SETMASK, [])
            posix.write(sync, sync_msg(k["SYNC_READY"]))  # csrun checks, then sends the code
        except BaseException as e:
            fail(sync, e)
        posix.close(sync)
        first = read_code(go)
        posix.close(go)
        # What the item sees: the modules of a fresh interpreter, its
        # arguments, its environment (os.environ is made from posix.environ
        # when os is imported).
        for m in list(sys.modules):
            if m not in boot_modules:
                del sys.modules[m]
        sys.argv[:] = ["snippet.py"] + list(req["args"])
        env = posix.environ
        for key in list(env):
            posix.unsetenv(key)
            del env[key]
        for kv in req["env"]:
            key, _, val = kv.encode("utf-8", "surrogateescape").partition(b"=")
            posix.putenv(key, val)
            env[key] = val
        return gate["_main"], first

    # ---- G: init (init.c)
    def hide_cmdline():
        """/proc/1/cmdline says "csrun-init" (init.c hide_cmdline), not this
        program."""
        fd = posix.open("/proc/self/stat", posix.O_RDONLY)
        try:
            fields = posix.read(fd, 4096).rpartition(b")")[2].split()
        finally:
            posix.close(fd)
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (48 and 49)
        if 0 < start < end and end - start < 1 << 24:
            ctypes.memset(start, 0, end - start)
            ctypes.memmove(start, b"csrun-init", min(10, end - start - 1))

    def init(sync, p):
        prctl(k["PR_SET_DUMPABLE"], 0, "set not dumpable")
        hide_cmdline()
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, sync)
        posix.closerange(0, sync)
        posix.closerange(sync + 1, 1 << 20)
        status = None
        while status is None:
            if _signal.sigtimedwait([_signal.SIGCHLD], 1.0) is None:
                try:  # csrun gone: so is the jail
                    if sock.recv(1, _socket.MSG_DONTWAIT | _socket.MSG_PEEK) == b"":
                        break
                except BlockingIOError:
                    pass
                except OSError:
                    break
                continue
            while True:
                try:
                    pid, st = posix.waitpid(-1, posix.WNOHANG)
                except ChildProcessError:
                    break
                if pid <= 0:
                    break
                if pid == p:
                    status = st
        # The payload is done: what it left behind goes first, so that its
        # cpu time is in the account.
        try:
            posix.kill(-1, 9)
        except OSError:
            pass
        while True:
            try:
                posix.waitpid(-1, 0)
            except ChildProcessError:
                break
            except InterruptedError:
                continue
        if status is not None:
            me = resource.getrusage(resource.RUSAGE_SELF)
            kids = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = int((me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime) * 1e6)
            try:
                sock.send(sync_msg(k["SYNC_EXIT"], 0, status, b"%d %d" % (cpu, kids.ru_maxrss)))
            except OSError:
                pass
        posix._exit(0)

    def child(msg, fds):
        """G, in its new namespaces (clone); returns only in P.  What G needs
        is on the first line ("ns FLAGS UID GID CGROUPNS N_CGROUP_FILES": the
        cgroup files are the descriptors after the sync socket); P reads the
        rest."""
        sync = fds[0]
        try:
            nl = msg.index(b"\n")
            _, _, in_uid, in_gid, cgns, n_cg = msg[:nl].split()
            write_file("/proc/self/setgroups", b"deny")
            write_file("/proc/self/uid_map", b"%s %d 1\n" % (in_uid, uid))
            write_file("/proc/self/gid_map", b"%s %d 1\n" % (in_gid, gid))
            for fd in fds[1 : 1 + int(n_cg)]:
                posix.write(fd, b"0")
                posix.close(fd)
            if cgns == b"1":
                check(libc.unshare(k["CLONE_NEWCGROUP"]), "unshare the cgroup namespace")
            # P's end is waited for: SIGCHLD, ignored by default, is blocked.
            _signal.pthread_sigmask(_signal.SIG_BLOCK, [_signal.SIGCHLD])
            p = posix.fork()
            if p == 0:
                try:
                    end = msg.index(b"\n", nl + 1)
                    req = gate["_literal"](compile(msg[nl + 1 : end].decode("utf-8"), "<request>", "eval", 0x400).body)
                except BaseException as e:
                    fail(sync, e)
                return payload(req, fds, msg[end + 1 :], sync)
            for fd in fds:
                if fd != sync:
                    try:
                        posix.close(fd)
                    except OSError:
                        pass
            init(sync, p)
        except BaseException as e:
            fail(sync, e)

    # ---- the zygote: G is cloned straight into its namespaces (one fork
    # less than fork + unshare + fork), as os.fork does it (the GIL held,
    # the interpreter's fork hooks around it).  G never calls raise(3): its
    # C library's cached thread id is the zygote's.
    pyapi = ctypes.pythonapi
    raw = ctypes.PyDLL(None, use_errno=True)
    raw.syscall.restype = ctypes.c_long

    def clone(flags):
        pyapi.PyOS_BeforeFork()
        pid = raw.syscall(ctypes.c_long(k["SYS_clone"]), ctypes.c_ulong(flags | _signal.SIGCHLD), None, None, None, None)
        if pid == 0:
            pyapi.PyOS_AfterFork_Child()
            return 0
        err = ctypes.get_errno()
        pyapi.PyOS_AfterFork_Parent()
        if pid < 0:
            raise OSError(err, "clone the jail: %s" % posix.strerror(err))
        return pid

    for s in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGPIPE):
        _signal.signal(s, _signal.SIG_IGN)
    uid, gid = posix.geteuid(), posix.getegid()
    ctl = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, 3)
    gc.collect()
    gc.freeze()  # shared with every child: no collection of ours copies it
    ctl.send(b"ready")
    space = _socket.CMSG_SPACE(64 * 4)
    while True:
        while True:  # the G of items that ended
            try:
                if posix.waitpid(-1, posix.WNOHANG)[0] <= 0:
                    break
            except ChildProcessError:
                break
        try:
            msg, anc, _, _ = ctl.recvmsg(1 << 20, space)
        except InterruptedError:
            continue
        if not msg:
            posix._exit(0)  # csrun closed the pool
        fds = []
        for level, kind, data in anc:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                fds += struct.unpack("%di" % (len(data) // 4), data[: len(data) - len(data) % 4])
        try:
            pid = clone(int(msg[3 : msg.index(b" ", 3)]))
            if pid == 0:
                ctl.detach()
                posix.close(3)
                return child(msg, fds)
        except Exception as e:
            if fds:  # the requester's sync socket: why
                try:
                    posix.write(fds[0], sync_msg(k["SYNC_ERROR"], getattr(e, "errno", 0) or 0, 0, ("warm jail: %s" % e).encode()))
                except OSError:
                    pass
        for fd in fds:
            posix.close(fd)


if __name__ == "__main__":
    _main, _first = _zygote()
    del _zygote
    _main(_first)
