"""The test runner that runs inside the sandbox (stdlib only).

Reads ``job.bin`` (marshal, written by the host) from its own directory,
runs every test of the job and prints exactly one line, ``MARK`` followed by
the JSON outcome. The host builds the job (:mod:`gym_llm_code.harness`) and
reads that line. The tests' inputs are in ``inputs.bin`` (:class:`Inputs`),
which the runner opens and unlinks before anything else runs and copies from,
one test at a time, straight into the test's pipe or stdin file: the runner
never holds an input in its memory, so no process forked from it does, and a
program under test holds no input but those of the tests it has been given
(in the job's order: the public examples before the hidden tests).

Trust model: the runner process never executes the program under test. It
compiles it (which runs no code), then forks child processes that run it with
stdin/stdout/stderr redirected and send back what it produced. Whatever a
child sends is only a *claimed output* for one test: expected outputs never
enter the sandbox, and the host compares. A child that exits early, kills
itself or hangs produces no output for the test it was on. Jobs:

* ``call``: exec the program once, call ``entry(*args)`` for each input, send
  each result reduced to plain data (:mod:`plain`);
* ``stdio``: run the program (Python source, or an executable built by the
  job's ``compile`` step) once per input text; send stdout and exit status;
* ``probe`` / ``check``: dataset test code, which runs in the runner itself
  against the program served from a child (see :func:`run_checked`).

``call`` tests run one after another in one child, which reads one
length-prefixed input frame per test from a pipe and sends one result frame;
the next input is sent only after the result of the one before arrived. When a
test hangs or the child dies, the test fails and a fresh child carries on with
the next one. ``stdio`` tests get a process each, whose stdin file is written
just before it starts.

A job may carry a trusted ``generator`` (only jobs that run a reference
solution) that draws extra inputs from seeds; they are returned as ``generated``.
"""

import builtins
import marshal
import os
import select
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import plain  # noqa: E402  (needs the path above)

MARK = "@@gym-llm-code-result@@"
SOURCE_NAME = "solution.py"
JOB_NAME = "job.bin"
INPUTS_NAME = "inputs.bin"
_FRAME = struct.Struct(">I")
_MAX_FD = 1 << 16
_SIGKILL = 9  # not signal.SIGKILL: importing signal costs a few ms per job


def _text(e, limit=300):
    """``Type: message`` of an exception, robust to a hostile ``__str__``."""
    try:
        msg = str(e)
    except BaseException:
        msg = "<unprintable>"
    name = type(e).__name__
    return (f"{name}: {msg}" if msg else name)[:limit]


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# JSON is written by hand: importing the json module (and re, enum with it)
# would cost more CPU than the rest of the runner's start-up.
_ESCAPES = {i: f"\\u{i:04x}" for i in range(0x20)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\"})


def dumps(x, depth=0):
    """JSON text of plain data (dict keys are strings); ``ValueError`` for
    anything else, non-finite floats included."""
    if depth > plain.MAX_DEPTH + 4:
        raise ValueError("nesting too deep")
    t = type(x)
    if t is str:
        return '"' + x.translate(_ESCAPES) + '"'
    if x is None:
        return "null"
    if t is bool:
        return "true" if x else "false"
    if t is int:
        return int.__repr__(x)
    if t is float:
        if x != x or x in (float("inf"), float("-inf")):
            raise ValueError("non-finite float")
        return float.__repr__(x)
    if t is list:
        return "[" + ",".join(dumps(v, depth + 1) for v in x) + "]"
    if t is dict:
        if any(type(k) is not str for k in x):
            raise ValueError("non-string key")
        return "{" + ",".join(f"{dumps(k)}:{dumps(v, depth + 1)}" for k, v in x.items()) + "}"
    raise ValueError(f"not JSON data: {t.__name__}")


def _send(fd, payload):
    try:
        data = marshal.dumps(payload)
    except BaseException as e:
        data = marshal.dumps({"error": _text(e)})
    _write_all(fd, _FRAME.pack(len(data)) + data)


def _null_fd(flags):
    try:
        return os.open(os.devnull, flags)
    except OSError:  # no /dev/null in the jail: a scratch file will do
        return os.open(os.path.join(HERE, ".null"), os.O_RDWR | os.O_CREAT, 0o600)


class Child:
    """A forked process running ``body(result_fd)``, with the pipes the parent
    reads: ``result`` always, ``stdout``/``stderr`` when ``capture``. The
    child keeps no other fd of the runner's but those in ``keep``."""

    def __init__(self, body, stdin_fd=None, capture=False, keep=()):
        r_res, w_res = os.pipe()
        self.pipes = {"result": r_res}
        write_ends = [w_res]
        if capture:
            self.pipes["stdout"], w_out = os.pipe()
            self.pipes["stderr"], w_err = os.pipe()
            write_ends += [w_out, w_err]
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            status = 1
            try:
                os.setpgid(0, 0)
                for fd in self.pipes.values():
                    os.close(fd)
                os.dup2(stdin_fd if stdin_fd is not None else _null_fd(os.O_RDONLY), 0)
                out, err = (w_out, w_err) if capture else (_null_fd(os.O_WRONLY),) * 2
                os.dup2(out, 1)
                os.dup2(err, 2)
                low = 3
                for fd in sorted({w_res, *keep}):
                    os.closerange(low, fd)
                    low = fd + 1
                os.closerange(low, _MAX_FD)
                status = body(w_res)
            except BaseException as e:
                try:
                    _send(w_res, {"error": _text(e)})
                except BaseException:
                    pass
            finally:
                os._exit(status if isinstance(status, int) else 1)
        for fd in write_ends:
            os.close(fd)
        self.pid = pid
        self.data = {name: bytearray() for name in self.pipes}
        self.open = {fd: name for name, fd in self.pipes.items()}
        self.status = None

    def pump(self, deadline, caps):
        """Read what is available, waiting until ``deadline`` at most 50 ms.
        Returns ``"eof"`` (the child is done), ``"deadline"``, ``"cap"`` (a
        stream outgrew its cap) or ``None`` (keep going)."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "deadline"
        if not self.open:
            return "eof"
        ready, _, _ = select.select(list(self.open), [], [], min(remaining, 0.05))
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                del self.open[fd]
                continue
            name = self.open[fd]
            self.data[name] += chunk
            if len(self.data[name]) > caps.get(name, 1 << 20):
                return "cap"
        if not self.open:
            return "eof"
        if not ready:
            # A grandchild may keep a pipe open after the child is gone.
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
                return "eof"
        return None

    def frame(self, keys=("value", "error")):
        """Pop one complete result frame (a dict with one of ``keys``), if buffered."""
        buf = self.data["result"]
        if len(buf) < _FRAME.size:
            return None
        (size,) = _FRAME.unpack_from(buf)
        if len(buf) < _FRAME.size + size:
            return None
        raw = bytes(buf[_FRAME.size:_FRAME.size + size])
        del buf[:_FRAME.size + size]
        try:
            out = marshal.loads(raw)
            if type(out) is not dict or len(out) != 1 or not set(out) <= set(keys):
                raise ValueError("malformed")
            dumps(out)  # plain JSON data only (no code objects, no odd types)
        except Exception:
            return {"error": "the test process sent a malformed result"}
        return out

    def finish(self):
        """Kill the child's process group, reap it; returns ``(exit code, signal)``."""
        for kill in (lambda: os.killpg(self.pid, _SIGKILL), lambda: os.kill(self.pid, _SIGKILL)):
            try:
                kill()
            except OSError:
                pass
        for fd in self.pipes.values():
            os.close(fd)
        if self.status is None:
            _, self.status = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(self.status):
            return None, os.WTERMSIG(self.status)
        return os.WEXITSTATUS(self.status), None


def _fresh_globals(name):
    return {"__name__": name, "__builtins__": builtins, "__file__": SOURCE_NAME}


class Budget:
    """The per-test wall-clock limit and the total one; tests that would start
    after the total is used up are skipped."""

    def __init__(self, per_test, total, cap):
        self.per_test = per_test
        self.deadline = time.monotonic() + total
        self.cap = cap

    def test_deadline(self):
        return min(time.monotonic() + self.per_test, self.deadline)

    def left(self):
        return self.deadline - time.monotonic()


class Inputs:
    """The tests' inputs: ``inputs.bin`` (written by the host: a big-endian
    ``uint32`` count, ``count + 1`` ``uint64`` offsets, then each input's
    bytes), opened and unlinked before the program under test is compiled or
    run, then extra inputs a trusted generator drew (``extend``).

    The file's inputs are copied by the kernel (``sendfile``) from the open
    file to where a test reads them (:meth:`copy_to`), so they never enter the
    runner's memory: a process forked from the runner, which is all the
    program under test ever runs in, holds no input it was not sent. Nor does
    it inherit the file's fd, and the runner is non-dumpable, so no
    ``/proc/<runner>/fd`` reaches it. Even the offsets stay in the file: the
    lengths of inputs not yet sent are not the program's either."""

    _COUNT = struct.Struct(">I")
    _SPAN = struct.Struct(">QQ")

    def __init__(self, path):
        self.extra = []
        try:
            self.fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:  # a job of generated inputs only
            self.fd, self.stored = None, 0
            return
        os.unlink(path)
        (self.stored,) = self._COUNT.unpack(os.pread(self.fd, self._COUNT.size, 0))

    def __len__(self):
        return self.stored + len(self.extra)

    def extend(self, encoded):
        """Add inputs (bytes each) drawn in the runner by a trusted generator."""
        self.extra += encoded

    def _span(self, i):
        """Where stored input ``i`` lies in the file: ``(start, end)``."""
        return self._SPAN.unpack(os.pread(self.fd, self._SPAN.size, self._COUNT.size + 8 * i))

    def size(self, i):
        """The length in bytes of input ``i``."""
        if i >= self.stored:
            return len(self.extra[i - self.stored])
        start, end = self._span(i)
        return end - start

    def copy_to(self, i, fd):
        """Write input ``i`` to ``fd`` (a pipe or a file; blocking)."""
        if i >= self.stored:
            _write_all(fd, self.extra[i - self.stored])
            return
        start, end = self._span(i)
        while start < end:
            sent = os.sendfile(fd, self.fd, start, end - start)
            if sent == 0:
                raise OSError("inputs.bin is truncated")
            start += sent


def _call_server(code, entry, r_req, w_res):
    """A ``call`` child: exec ``code`` once, then for each input frame read
    from ``r_req`` send ``entry(*args)`` (or the error) as one result frame,
    until the runner closes the pipe. Nothing of an input outlives its call
    here but what the program keeps itself."""
    ns = _fresh_globals("solution")
    failed = None
    try:
        if code is not None:
            exec(code, ns)
    except BaseException as e:  # every test fails the same way
        failed = {"error": _text(e)}
    while True:
        head = _read_exact(r_req, _FRAME.size)
        if head is None:
            return 0 if failed is None else 1
        request = _read_exact(r_req, _FRAME.unpack(head)[0])
        if failed is not None:
            _send(w_res, failed)
            continue
        try:
            fn = ns.get(entry)
            if not callable(fn):
                raise NameError(f"the solution does not define a function {entry}()")
            payload = {"value": plain.encode(fn(*[plain.decode(a) for a in marshal.loads(request)]))}
        except BaseException as e:
            payload = {"error": _text(e)}
        request = None
        _send(w_res, payload)


def run_call(job, code, inputs, budget):
    """Run the ``call`` tests in one child (a fresh one after a timeout, a
    crash or an oversized result), sending each input only once the result
    of the test before it arrived."""
    entry = job["entry"]
    caps = {"result": budget.cap}
    results = []
    child = w_req = None
    while len(results) < len(inputs):
        i = len(results)
        if budget.left() <= 0:
            results += [{"skipped": True}] * (len(inputs) - i)
            break
        if child is None:
            r_req, w_req = os.pipe()
            child = Child(lambda w_res: _call_server(code, entry, r_req, w_res), keep=(r_req,))  # noqa: B023
            os.close(r_req)
        try:
            _write_all(w_req, _FRAME.pack(inputs.size(i)))
            inputs.copy_to(i, w_req)
        except BrokenPipeError:  # the child is gone: pump reports how
            pass
        deadline = budget.test_deadline()
        end = None
        while (got := child.frame()) is None:
            end = child.pump(deadline, caps)
            if end is not None:
                got = child.frame()  # a frame read along with the end still counts
                break
        if end is not None:  # this child is done: a fresh one runs the next test
            os.close(w_req)
            status, sig = child.finish()
            child = None
            if got is None and end == "deadline":
                got = {"timeout": True}
            elif got is None and end == "cap":
                got = {"error": f"result larger than {budget.cap} bytes"}
            elif got is None:
                how = f"killed by signal {sig}" if sig is not None else f"exit status {status}"
                got = {"crash": f"the test process ended without a result ({how})"}
        results.append(got)
    if child is not None:
        os.close(w_req)
        child.finish()
    return results


# ----------------------------------------------------------------------------- checked jobs
#
# ``probe`` and ``check`` jobs run dataset test code. That code runs here, in
# the runner (the *checker*), never in the answer's process: the answer runs in
# a forked child that serves calls (``Answer``), and every name it defines is
# only a ``Remote`` handle in the checker. What crosses back is plain data, so
# the test compares builtin values with the checker's own builtins and the
# prompt's helpers as the task defines them. The checker is non-dumpable (the
# answer, same uid, cannot reach its memory or fds through /proc), ignores
# SIGINT, imports nothing from the work dir, writes its result line to a
# private fd, and reads the test code (``SECRET_NAME``) only after the answer's
# process was forked from it, so that process never holds the tests.

SECRET_NAME = "secret.bin"
_PR_SET_DUMPABLE = 4
_ANSWER_KEYS = ("ready", "value", "raise", "error")


class AnswerBroken(BaseException):
    """The answer's process timed out, crashed or broke the protocol. A
    ``BaseException``, so test code's ``except Exception`` does not swallow it
    (and the verdict checks ``Answer.broken`` anyway)."""


class AnswerError(Exception):
    """An exception raised by the answer, of a class the checker does not know."""


class Remote:
    """A name or object that lives in the answer's process: calling it is a
    call there; it equals only itself and has no truth value."""

    __slots__ = ("answer", "ref")

    def __init__(self, answer, ref):
        self.answer, self.ref = answer, ref

    def __call__(self, *args, **kwargs):
        return self.answer.call(self.ref, args, kwargs)

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError(f"{self!r} has no truth value")

    def __repr__(self):
        return f"<{self.ref} of the answer>" if type(self.ref) is str else f"<object #{self.ref} of the answer>"


def _read_exact(fd, n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def _serve(code, r_req, w_res, path):
    """The answer's process: run ``code`` once, then answer ``[ref, args,
    kwargs]`` requests with one frame each until the checker closes the pipe."""
    sys.path[:] = path
    ns = _fresh_globals("solution")
    exec(code, ns)  # an exception here is sent as {"error"} by Child
    _send(w_res, {"ready": [k for k, v in list(ns.items())[:10000] if type(k) is str and callable(v)]})
    objects = {}

    def resolve(ref):
        return ns[ref] if type(ref) is str else objects[ref]

    def handle(x):
        objects[len(objects) + 1] = x
        return {"$ref": len(objects)}

    while True:
        head = _read_exact(r_req, _FRAME.size)
        if head is None:
            return 0
        ref, args, kwargs = marshal.loads(_read_exact(r_req, _FRAME.unpack(head)[0]))
        try:
            fn = resolve(ref)
        except KeyError:
            _send(w_res, {"raise": ["NameError", f"the solution does not define {ref}"]})
            continue
        try:
            value = fn(*plain.decode(args, ref=resolve), **dict(plain.decode(kwargs, ref=resolve)))
            payload = {"value": plain.encode(value, other=handle)}
        except Exception as e:  # SystemExit and the like end the process: a crash
            try:
                message = str(e)[:300]
            except Exception:
                message = ""
            payload = {"raise": [type(e).__name__, message]}
        _send(w_res, payload)


class Answer:
    """The program under test in a child process, serving the checker's calls.

    ``broken`` is set (and the child killed) when it times out, crashes or
    sends a malformed frame; every call after that raises :class:`AnswerBroken`.
    """

    def __init__(self, code, budget, path):
        self.budget = budget
        self.broken = None
        self.remotes = {}
        self.classes = {}
        self.names = []
        r_req, self.w_req = os.pipe()
        self.child = Child(lambda w_res: _serve(code, r_req, w_res, path), keep=(r_req,))
        os.close(r_req)
        try:
            got = self._receive(budget.test_deadline())
            if "ready" not in got or type(got["ready"]) is not list:
                self._break({"error": "the test process sent a malformed result"})
        except AnswerBroken:
            return
        self.names = [n for n in got["ready"] if type(n) is str]

    def remote(self, ref):
        if type(ref) is not int and type(ref) is not str:
            raise ValueError("malformed handle")
        if ref not in self.remotes:
            self.remotes[ref] = Remote(self, ref)
        return self.remotes[ref]

    def _break(self, result):
        if self.broken is None:
            self.broken = result
            self.close()
        raise AnswerBroken(str(next(iter(self.broken.values()))))

    def close(self):
        if self.child is not None:
            os.close(self.w_req)
            self.child.finish()
            self.child = None

    def _receive(self, deadline):
        caps = {"result": self.budget.cap}
        while True:
            got = self.child.frame(_ANSWER_KEYS)
            if got is None:
                end = self.child.pump(deadline, caps)
                if end is None:
                    continue
                got = self.child.frame(_ANSWER_KEYS)  # a frame read along with the end still counts
                if got is None:
                    code, sig = self.child.finish()
                    self.child = None
                    os.close(self.w_req)
                    how = f"killed by signal {sig}" if sig is not None else f"exit status {code}"
                    self._break({"timeout": True} if end == "deadline" else
                                {"error": f"result larger than {self.budget.cap} bytes"} if end == "cap" else
                                {"crash": f"the test process ended without a result ({how})"})
            if "error" in got and "ready" not in got:
                self._break(got)
            return got

    def call(self, ref, args, kwargs):
        if self.broken is not None:
            raise AnswerBroken("the answer's process is gone")
        other = lambda x: {"$ref": x.ref} if type(x) is Remote and x.answer is self else None  # noqa: E731
        request = [ref, plain.encode(list(args), other=other), plain.encode(kwargs, other=other)]
        try:
            _send(self.w_req, request)
        except OSError:
            self._receive(time.monotonic())  # the child is gone: report how
        got = self._receive(self.budget.test_deadline())
        try:
            if "value" in got:
                return plain.decode(got["value"], ref=self.remote)
            name, message = got["raise"]
            if type(name) is not str or type(message) is not str:
                raise ValueError("malformed")
        except (ValueError, TypeError, KeyError, RecursionError):
            self._break({"error": "the test process sent a malformed result"})
        raise self.exception(name, message)

    def exception(self, name, message):
        """The answer's exception as the checker's own class of that name (a
        builtin, or one the task's code defines), else :class:`AnswerError`."""
        cls = self.classes.get(name, getattr(builtins, name, None))
        # Raised in the test's own loops, StopIteration would end them early as if
        # every remaining check passed (``all(map(candidate, cases))``): as PEP 479
        # does for generators, it reaches the test as an ordinary error.
        if isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(
                cls, StopIteration | StopAsyncIteration):
            try:
                return cls(message)
            except Exception:
                pass
        return AnswerError(f"{name}: {message}")


def _undumpable():
    """Put the runner out of reach of the program under test (same uid): no
    ``/proc/<pid>/fd``, ``mem`` or ptrace of it. For every job kind: through the
    runner's result fd a program could write a forged result line and kill the
    runner, so that only its line arrives."""
    import ctypes

    if ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError("prctl(PR_SET_DUMPABLE) failed")


def _harden():
    """Make the runner a checker the answer's process cannot reach (see above;
    :func:`_undumpable` is done already)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    path = list(sys.path)
    sys.path[:] = [p for p in path if p and os.path.abspath(p) != HERE]
    return path


class TaskError(Exception):
    """The task's own setup code failed in the checker (not the answer's fault)."""


def _checked_namespace(setup, answer, entry, bind):
    ns = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(setup, ns)
    except Exception as e:
        raise TaskError(_text(e)) from None
    for name in answer.names:  # never a builtin or a name the task defines: the task's win
        if name not in ns and not hasattr(builtins, name) and not name.startswith("__"):
            ns[name] = answer.remote(name)
    ns[entry] = answer.remote(entry)
    for alias, name in bind.items():
        ns[alias] = ns[name]
    answer.classes = {k: v for k, v in ns.items() if isinstance(v, type)}
    return ns


def _checked_result(answer, run):
    """``run()``'s value as a result, unless the answer broke on the way."""
    try:
        value = run()
    except AnswerBroken:
        value = None
    except TaskError:
        raise
    except BaseException as e:
        if answer.broken is None:
            return {"error": _text(e)}
    return answer.broken or {"value": plain.encode(value)}


def run_checked(job, code, budget):
    """A ``probe`` job (evaluate the ``exprs``, one plain value each) or a
    ``check`` job (run ``test``; it passes when it runs to its end) in the
    checker, after the task's ``setup`` code, with ``entry``, the names the
    answer defines and the ``bind`` aliases bound to the answer's process."""
    secret_path = os.path.join(HERE, SECRET_NAME)
    secret_fd = os.open(secret_path, os.O_RDONLY)
    os.unlink(secret_path)
    path = _harden()
    answer = Answer(code, budget, path)  # forked before the tests are read
    with os.fdopen(secret_fd, "rb") as f:
        secret = marshal.loads(f.read())  # written by the host: trusted
    setup = compile(secret.get("setup", ""), "test_setup.py", "exec")
    entry, bind = job["entry"], secret.get("bind", {})
    if "test" in secret:
        test = compile(secret["test"], "test.py", "exec")
        if answer.broken is not None:
            return [answer.broken]
        ns = _checked_namespace(setup, answer, entry, bind)
        result = _checked_result(answer, lambda: exec(test, ns) or True)
        answer.close()
        return [result]
    exprs = [compile(src, "test.py", "eval") for src in secret["exprs"]]
    results = []
    ns = None
    for expr in exprs:
        # No fresh process after a timeout or crash: one forked now would hold
        # the tests. The remaining tests fail the same way.
        if answer.broken is not None:
            results.append(answer.broken)
        elif budget.left() <= 0:
            results.append({"skipped": True})
        else:
            if ns is None:
                ns = _checked_namespace(setup, answer, entry, bind)
            results.append(_checked_result(answer, lambda: eval(expr, ns)))  # noqa: B023
    answer.close()
    return results


def _python_main(code):
    def body(w_res):
        sys.argv = [SOURCE_NAME]
        status = 0
        try:
            exec(code, _fresh_globals("__main__"))
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                status = e.code or 0
            else:
                print(e.code, file=sys.stderr)
                status = 1
        except BaseException:
            import traceback

            traceback.print_exc()
            status = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        return status

    return body


def _exec_main(argv):
    path = os.path.join(HERE, argv[0])  # the built program lives in the work dir

    def body(w_res):
        os.execv(path, argv)

    return body


def run_stdio(job, code, inputs, budget):
    cap = int(job.get("max_output_bytes", 1 << 20))
    caps = {"result": 1 << 16, "stdout": cap, "stderr": cap}
    body = _exec_main(job["argv"]) if code is None else _python_main(code)
    results = []
    for i in range(len(inputs)):
        if budget.left() <= 0:
            results.append({"skipped": True})
            continue
        # An anonymous file: no path that an earlier test's process could have
        # planted a link or a FIFO at, nothing left behind for a later one.
        stdin = os.memfd_create("stdin")
        inputs.copy_to(i, stdin)
        os.lseek(stdin, 0, os.SEEK_SET)
        child = Child(body, stdin_fd=stdin, capture=True)
        os.close(stdin)
        deadline = budget.test_deadline()
        end = None
        while end is None:
            end = child.pump(deadline, caps)
        status, sig = child.finish()
        results.append({
            "stdout": bytes(child.data["stdout"][:cap]).decode("utf-8", "replace"),
            "stderr": bytes(child.data["stderr"][-2000:]).decode("utf-8", "replace"),
            "exit": None if end == "deadline" else status,
            "signal": sig,
            "timeout": end == "deadline",
            "truncated": end == "cap",
        })
    return results


def generate(gen):
    """Draw inputs from the job's (trusted) generator, one seed each."""
    import random

    ns = {}
    exec(compile(gen["source"], "generator.py", "exec"), ns)
    produced = []
    for seed in gen["seeds"]:
        value = ns["gen"](random.Random(seed))
        produced.append(str(value) if gen.get("kind") == "text" else [plain.encode(a) for a in value])
    return produced


def compile_step(spec):
    """Run the job's build command (e.g. g++); returns an error text or None."""
    import subprocess

    try:
        proc = subprocess.run(
            spec["argv"], cwd=HERE, capture_output=True, timeout=spec.get("timeout", 30),
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": HERE},
        )
    except subprocess.TimeoutExpired:
        return "compilation timed out"
    except OSError as e:
        return f"the compiler could not be started: {e}"
    if proc.returncode != 0:
        return (proc.stderr or proc.stdout).decode("utf-8", "replace")[-3000:] or f"exit status {proc.returncode}"
    return None


def main():
    # The result line goes to a private copy of stdout; fd 1 itself is
    # /dev/null, so that nothing else the runner runs can print a result line.
    _undumpable()
    sys.stdout.flush()
    result_fd = os.dup(1)
    os.dup2(_null_fd(os.O_WRONLY), 1)
    path = os.path.join(HERE, JOB_NAME)
    with open(path, "rb") as f:
        job = marshal.loads(f.read())  # written by the host: trusted
    os.unlink(path)  # the program under test must not find the job (and a check job's tests) on disk
    inputs = Inputs(os.path.join(HERE, INPUTS_NAME))  # before the program under test is compiled or run
    out = {}
    if job.get("generator"):
        out["generated"] = generate(job["generator"])
        inputs.extend([text.encode() if type(text) is str else marshal.dumps(text) for text in out["generated"]])
    code = None
    if job.get("compile"):
        error = compile_step(job["compile"])
        if error is not None:
            out["compile_error"] = error
    elif job.get("program") is not None:
        try:
            code = compile(job["program"], SOURCE_NAME, "exec")
        except BaseException as e:  # SyntaxError, also MemoryError/RecursionError on odd input
            out["compile_error"] = _text(e, 2000)
    if "compile_error" not in out:
        budget = Budget(float(job["test_timeout"]), float(job["budget"]), int(job.get("max_result_bytes", 1 << 20)))
        kind = job["kind"]
        if kind == "call":
            out["results"] = run_call(job, code, inputs, budget)
        elif kind == "stdio":
            out["results"] = run_stdio(job, code, inputs, budget)
        elif kind in ("probe", "check"):
            try:
                out["results"] = run_checked(job, code, budget)
            except TaskError as e:
                out["task_error"] = str(e)
        else:
            raise ValueError(f"unknown job kind {kind!r}")
    line = MARK + dumps(out) + "\n"
    # a lone surrogate from the program's output becomes a JSON \udcxx escape
    _write_all(result_fd, line.encode("utf-8", "backslashreplace"))


if __name__ == "__main__":
    main()
