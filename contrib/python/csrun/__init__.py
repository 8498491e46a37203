"""csrun: run untrusted Python in csrun's disposable rootless jails.

    from csrun import run, check, Sandbox

    r = run("print(sum(range(10)))")          # a RunResult
    r.ok, r.stdout, r.status, r.diagnosis, r.patches

    check("import os; os.system('ls')").verdict   # "blocked"

    with Sandbox(memory=512, publish=[8000]) as sb:
        sb.exec(["python3", "-c", "print(1)"])["stdout"]
        sb.write("data/in.bin", b"\x00\xff"); sb.read("data/in.bin", format="bytes")
        sb.ls("data"); sb.find("*.bin"); sb.upload("src", "/work"); sb.download("/work/out", "out")
        sb.get_port_url(8000)                     # tcp://127.0.0.1:N on the host
        sb.run("print(open('data/in.bin', 'rb').read())").stdout   # the pipeline, in the sandbox
        s = sb.session("nb"); s.run("x = 41"); s.run("print(x + 1)").stdout   # "42\n"
        ckpt = sb.checkpoint(ttl=3600, leave_running=True)
    again = Sandbox.restore(ckpt, name="again")   # a new sandbox with those files

    execute_python_code = create_code_execution_tool()   # CodeShield's callable
    runner = ToolRunner()                                  # OpenAI / Anthropic tool loops

Everything runs the csrun binary ($CSRUN, else csrun on PATH) with --json; the
package has no dependency.
"""

from ._binary import CsrunError
from .agents import ToolRunner, create_code_execution_tool, format_report
from .results import CheckResult, ErrorDiagnosis, ExecResult, FileEntry, Patch, RunResult
from .run import check, run
from .sandbox import AsyncExec, Sandbox, SandboxFiles, Session

__version__ = "0.1.0"
__all__ = [
    "run", "check", "Sandbox", "Session", "SandboxFiles", "AsyncExec", "create_code_execution_tool",
    "format_report", "ToolRunner", "RunResult", "CheckResult", "ErrorDiagnosis", "ExecResult",
    "FileEntry", "Patch", "CsrunError",
]
