# csrun launcher: runs as `python3 -I -S -u -c <this file>` inside the jail.
# It loads ./snippet.py, runs it as __main__ under the file name snippet.py,
# and prints an uncaught exception's traceback without this launcher's frame.
import sys


def _csrun_prepare():
    major, minor = sys.version_info[:2]
    # -S skips site.py (faster start-up); add the rootfs's package dirs by hand.
    sys.path.extend(
        (
            "/usr/local/lib/python%d.%d/dist-packages" % (major, minor),
            "/usr/lib/python3/dist-packages",
        )
    )
    with open("snippet.py", "rb") as f:
        source = f.read()
    main = type(sys)("__main__")
    main.__file__ = "snippet.py"
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    sys.argv[:] = ["snippet.py"] + sys.argv[1:]
    return source, main.__dict__


def _csrun_run():
    source, namespace = _csrun_prepare()
    try:
        code = compile(source, "snippet.py", "exec", dont_inherit=True)
        del source
        exec(code, namespace)
    except SystemExit:
        raise
    except BaseException as e:
        tb = e.__traceback__
        # Drop the frames of this launcher: the traceback starts in snippet.py.
        while tb is not None and tb.tb_frame.f_code.co_filename != "snippet.py":
            tb = tb.tb_next
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        sys.exit(1)


_csrun_run()
