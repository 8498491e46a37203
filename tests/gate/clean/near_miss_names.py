import asyncio
import os
import platform
import subprocess
import sys

system = platform.system()  # a string, not os.system
print("system:", system, "cwd is absolute:", os.path.isabs(os.getcwd()))
print(os.environ.get("CSRUN_NOT_SET", "unset"), os.sep, sys.version_info[0])


class App:
    def run(self):
        return "app ran"

    def call(self, n):
        return n + 1


def run():
    return "plain run"


async def main():
    return "async main"


app = App()
print(app.run(), app.call(1), run(), asyncio.run(main()))
try:
    raise subprocess.TimeoutExpired(cmd="nothing", timeout=1)
except subprocess.TimeoutExpired as e:
    print("caught", type(e).__name__)
except subprocess.CalledProcessError:
    print("not this one")
