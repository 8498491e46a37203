class ValidationError(Exception):
    pass


class Retryable(ValidationError):
    pass


EXPECTED = (KeyError, ValidationError)


def check(x):
    if x < 0:
        raise ValidationError(f"negative: {x}")
    if x == 0:
        raise Exception("zero is not allowed here")
    return x


for value in (3, -1, 0):
    try:
        print(check(value))
    except EXPECTED as err:
        print("invalid:", err)
    except (Retryable, RuntimeError):
        print("retry")
    except ArithmeticError:
        print("math")
    except BaseExceptionGroup if False else ZeroDivisionError:
        pass
    except RuntimeError:
        pass
    except ValueError:
        pass
    except LookupError:
        pass
    except TypeError:
        pass
    except OSError:
        pass
    except StopIteration:
        pass
    except AssertionError:
        pass
    except AttributeError:
        pass
    except NotImplementedError:
        pass
    except UnicodeError:
        pass
    except EOFError:
        pass
    except MemoryError:
        pass
    except RecursionError:
        pass
    except ImportError:
        pass
    except IndexError:
        pass
    except NameError:
        pass
    except SystemError:
        pass
    except BufferError:
        pass
    except Warning:
        pass
    except Exception as other:
        print("other:", other)
