# expect: dangerous-call 6
# expect: dangerous-call 7
import shutil
from pathlib import os as pos

shutil.os.system("ls")  # VIOLATION: dangerous-call
pos.popen("id")  # VIOLATION: dangerous-call
