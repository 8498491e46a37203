#!/usr/bin/env python3
"""A tiny seccomp agent for tests/oci/seccomp-compat.sh: listens on argv[1],
writes each container process state it receives to argv[2].N (N = 1, 2, ...),
and answers the notifications of each listener fd: mkdir/mkdirat fail with
ENOMEDIUM, everything else continues."""
import array, errno, fcntl, json, os, select, socket, struct, sys, threading

NOTIF_RECV = 0xC0502100  # _IOWR('!', 0, struct seccomp_notif), 80 bytes
NOTIF_SEND = 0xC0182101  # _IOWR('!', 1, struct seccomp_notif_resp), 24 bytes
FLAG_CONTINUE = 1
MKDIR = {83, 258}  # x86_64 mkdir, mkdirat


def serve(fd):
    while True:
        r, _, _ = select.select([fd], [], [], 30)
        if not r:
            return
        buf = bytearray(80)
        try:
            fcntl.ioctl(fd, NOTIF_RECV, buf, True)
        except OSError:
            return  # every process under the filter is gone
        nid, pid, flags, nr = struct.unpack_from("=QIIi", buf)
        if nr in MKDIR:
            resp = struct.pack("=QqiI", nid, 0, -errno.ENOMEDIUM, 0)
        else:
            resp = struct.pack("=QqiI", nid, 0, 0, FLAG_CONTINUE)
        try:
            fcntl.ioctl(fd, NOTIF_SEND, bytearray(resp), True)
        except OSError:
            pass


def main():
    path, out = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(4)
    with open(out + ".ready", "w"):
        pass
    n = 0
    while True:
        conn, _ = s.accept()
        fds = array.array("i")
        msg, anc, _, _ = conn.recvmsg(65536, socket.CMSG_LEN(4 * fds.itemsize))
        for level, typ, data in anc:
            if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
        conn.close()
        n += 1
        try:
            state = json.loads(msg)
        except ValueError:
            state = {"unparsable": msg.decode(errors="replace")}
        state["received_fds"] = len(fds)
        # Whole or not at all: the test reads it as soon as it appears.
        with open("%s.tmp" % out, "w") as f:
            json.dump(state, f)
        os.rename("%s.tmp" % out, "%s.%d" % (out, n))
        for fd in fds:
            threading.Thread(target=serve, args=(fd,), daemon=True).start()


main()
