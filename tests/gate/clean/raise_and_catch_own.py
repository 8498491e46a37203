class ValidationError(Exception):
    pass


class Retryable(ValidationError):
    pass


EXPECTED = (KeyError, ValidationError)


def errors_for(kind):
    return (OSError, EOFError) if kind == "io" else (ArithmeticError,)


def check(x):
    if x < 0:
        raise ValidationError(f"negative: {x}")
    if x == 0:
        raise Exception("zero is not allowed here")
    if x > 100:
        raise Retryable("too big, try again")
    return 10 / (x - 5)


for value in (3, -1, 500, 5):
    try:
        print(check(value))
    except EXPECTED as err:
        print("invalid:", err)
    except errors_for("math"):
        print("math error")
    except (RuntimeError, errors_for("io")[0]):
        print("io")
try:
    print(check(7))
except ValidationError:
    print("not reached")
except RuntimeError:
    print("not reached either")
except ZeroDivisionError:
    pass
except LookupError as missing:
    print(missing)
except TypeError:
    print("type")
except (AttributeError, NameError):
    print("names")
except ValueError:
    print("value")
except OSError:
    print("os")
except ImportError:
    print("import")
except AssertionError:
    print("assert")
except NotImplementedError:
    print("not implemented")
except UnicodeError:
    print("unicode")
except StopIteration:
    print("stop")
except MemoryError:
    print("memory")
except RecursionError:
    print("recursion")
except Warning:
    print("warning")
except SystemError:
    print("system")
except BufferError:
    print("buffer")
except IndexError:
    print("index")
except KeyError:
    print("key")
except EOFError:
    print("eof")
except ArithmeticError:
    print("arith")
except ConnectionError:
    print("conn")
except TimeoutError:
    print("timeout")
except PermissionError:
    print("perm")
except FileNotFoundError:
    print("fnf")
except IsADirectoryError:
    print("dir")
except InterruptedError:
    print("intr")
except BlockingIOError:
    print("block")
except ChildProcessError:
    print("child")
except ProcessLookupError:
    print("proc")
except UnboundLocalError:
    print("unbound")
except FloatingPointError:
    print("float")
except OverflowError:
    print("overflow")
except ReferenceError:
    print("ref")
except EnvironmentError:
    print("env")
except IOError:
    print("io")
except StopAsyncIteration:
    print("stop async")
except ModuleNotFoundError:
    print("module")
except GeneratorExit:
    print("genexit")
except KeyboardInterrupt:
    print("kbd")
except SystemExit:
    print("exit")
