# expect: broad-except 12
# expect: dangerous-call 15
# expect: dangerous-call 16
# expect: broad-except 19
import os
import json


def main():
    try:
        cfg = json.loads(open("config.json").read())
    except:  # VIOLATION: broad-except
        cfg = {}
    cmd = cfg.get("cmd", "ls")
    os.system(cmd)  # VIOLATION: dangerous-call
    total = eval(cfg.get("expr", "1+1"))  # VIOLATION: dangerous-call
    try:
        print(total)
    except Exception:  # VIOLATION: broad-except
        pass


if __name__ == "__main__":
    main()
