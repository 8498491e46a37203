# A broad handler that ends with a bare `raise` hides nothing: it logs and
# re-raises whatever it caught.
import logging


def load(path):
    try:
        with open(path) as f:
            return f.read()
    except Exception as e:
        logging.error("cannot read %s: %s", path, e)
        raise


try:
    print(len("x"))
except BaseException:
    raise
