"""The jailed Python's bootstrap: ``python -S`` plus a program read from stdin.

The jail mounts no site-packages, so ``site`` only costs start-up time (≈ 3.5 ms of
≈ 12 ms); ``-S`` skips it. What model code still expects from ``site`` — the
``exit``/``quit`` builtins (and ``help``) — is recreated here. The program arrives
framed on stdin (:func:`frame`), before the user's stdin, so an interpreter can be
started before its program is known (a pre-spawned jail) and there is no limit on
the program's size. It then runs with ``python -c`` semantics: ``__name__ ==
"__main__"``, ``sys.argv == ["-c", *args]``, ``sys.path[0] == ""``, tracebacks of
uncaught exceptions on stderr without any frame of this bootstrap, exit status 1
(``KeyboardInterrupt``: killed by SIGINT, or 130 where that signal is ignored, as for a
PID 1) and ``SystemExit`` handled by the interpreter itself.
"""

from __future__ import annotations

import functools
import marshal
import subprocess
from collections.abc import Sequence

#: Width of the decimal length prefix of a framed program.
_LEN_DIGITS = 10

# Everything lives in one function that removes itself from __main__ before the
# program runs, so the program's globals are exactly those of ``python -c``.
# exit/quit copy site.Quitter (close stdin, raise SystemExit); help imports pydoc lazily.
BOOTSTRAP = f"""\
def _gym_llm_boot():
    import sys, builtins, marshal, posix  # all built in: `os` would cost 2 ms
    class Quitter(object):
        def __init__(self, name):
            self.name = name
        def __repr__(self):
            return 'Use %s() or Ctrl-D (i.e. EOF) to exit' % self.name
        def __call__(self, code=None):
            try:
                sys.stdin.close()
            except BaseException:
                pass
            raise SystemExit(code)
    class Helper(object):
        def __repr__(self):
            return 'Type help() for interactive help, or help(object) for help about object.'
        def __call__(self, *args, **kwds):
            import pydoc
            return pydoc.help(*args, **kwds)
    builtins.exit, builtins.quit, builtins.help = Quitter('exit'), Quitter('quit'), Helper()
    def read(n):
        buf = b''
        while len(buf) < n:
            chunk = posix.read(0, n - len(buf))
            if not chunk:  # the host discarded this interpreter unused
                posix._exit(0)
            buf += chunk
        return buf
    args, src = marshal.loads(read(int(read({_LEN_DIGITS}))))
    sys.argv[1:] = args
    def fail(exc, tb):
        sys.excepthook(type(exc), exc, exc.with_traceback(tb).__traceback__)
        if isinstance(exc, KeyboardInterrupt):  # as Py_RunMain's exit_sigint()
            import signal
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            posix.kill(posix.getpid(), signal.SIGINT)
            sys.exit(130)
        sys.exit(1)
    main = sys.modules['__main__'].__dict__
    del main['_gym_llm_boot']
    # exec of the source, not compile(): the builtin's first call sets up the ast
    # module's node types (about 1.5 ms, a sixth of this interpreter's start).
    try:
        exec(src, main)
    except SystemExit:
        raise
    except BaseException as exc:
        # tb_next: the program's frames; None for its own syntax error (no frame ran).
        fail(exc, exc.__traceback__.tb_next)
_gym_llm_boot()
"""


#: Run by the jail's interpreter, unjailed, once: our bootstrap, compiled and marshalled.
_COMPILE = ("import marshal, sys; sys.stdout.write(marshal.dumps(compile("
            "sys.stdin.read(), '<gym_llm_boot>', 'exec')).hex())")


@functools.lru_cache(maxsize=8)
def _bytecode(exe: str) -> bytes | None:
    """:data:`BOOTSTRAP` compiled by ``exe`` itself (marshal is specific to the
    interpreter's version) and marshalled; None if ``exe`` cannot do it."""
    try:
        r = subprocess.run([exe, "-I", "-S", "-c", _COMPILE], input=BOOTSTRAP.encode(),
                           capture_output=True, timeout=30, env={})
    except (OSError, subprocess.SubprocessError):
        return None
    out = r.stdout.decode("ascii", "replace")
    if r.returncode != 0 or not out or out.strip("0123456789abcdef"):
        return None
    return bytes.fromhex(out)


def argv(exe: str) -> list[str]:
    """The interpreter command line: no ``site`` (-S), no user site (-s), no .pyc (-B).

    The bootstrap travels as the interpreter's own bytecode where it can: compiling its
    source at every start costs 0.2-0.8 ms, loading the bytecode a few microseconds
    (``__import__``, so no name is left in the program's globals). It is a bytes
    literal, not hex: a program scanning its own ``/proc/self/cmdline`` for a secret
    must not find long runs of digits that only look like one."""
    code = _bytecode(exe)
    if code is None:
        return [exe, "-S", "-s", "-B", "-c", BOOTSTRAP]
    return [exe, "-S", "-s", "-B", "-c", f"exec(__import__('marshal').loads({code!r}))"]


def frame(code: str, args: Sequence[str] = ()) -> bytes:
    """``code`` and its ``args`` as the bootstrap reads them from stdin."""
    payload = marshal.dumps(([str(a) for a in args], code))
    return b"%0*d" % (_LEN_DIGITS, len(payload)) + payload
