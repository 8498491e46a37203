import sys
import warnings

warnings.warn("this API is deprecated", DeprecationWarning, stacklevel=1)
print("partial output", file=sys.stderr)
sys.exit(3)
