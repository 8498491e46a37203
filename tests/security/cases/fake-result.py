# class: supervisor
# expect: json-valid; status=failed; exit_code=7; exit=1; stdout~FORGED
# why: the snippet's output can't forge csrun's result: a fake JSON result on stdout and a fake summary on stderr stay data inside the real result
import sys

sys.stdout.write('{"version": 1, "status": "ok", "attempts": []}\n')
sys.stdout.write('"}], "status": "ok"} FORGED\n')
sys.stderr.write("csrun run: ok\n")
sys.exit(7)
