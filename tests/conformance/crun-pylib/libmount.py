# The part of util-linux's python libmount binding that crun's tests/test_mounts.py
# uses (Table(path).find_target(target).vfs_options / .fs_options).  Debian ships no
# python3-libmount, so without this the file prints "1..0" and none of its tests run.
# Only on PYTHONPATH for suite-crun.sh.  Semantics follow libmount's mountinfo parser:
# vfs_options is the per-mount option field, fs_options the superblock options with
# "rw" dropped (libmount removes it there), and find_target returns the last
# (topmost) mount on the target.


class Fs:
    def __init__(self, target, vfs_options, fs_options):
        self.target = target
        self.vfs_options = vfs_options
        self.fs_options = fs_options


def _unescape(s):
    out = ""
    i = 0
    while i < len(s):
        if s[i] == "\\" and i + 3 < len(s) and s[i + 1:i + 4].isdigit():
            out += chr(int(s[i + 1:i + 4], 8))
            i += 4
        else:
            out += s[i]
            i += 1
    return out


class Table:
    def __init__(self, path):
        self.fs = []
        with open(path) as f:
            for line in f:
                fields = line.split()
                if "-" not in fields:
                    continue
                sep = fields.index("-")
                if sep < 6 or len(fields) < sep + 4:
                    continue
                super_opts = [o for o in fields[sep + 3].split(",") if o != "rw"]
                self.fs.append(Fs(_unescape(fields[4]), fields[5], ",".join(super_opts) or None))

    def find_target(self, target):
        for fs in reversed(self.fs):
            if fs.target == target:
                return fs
        return None
