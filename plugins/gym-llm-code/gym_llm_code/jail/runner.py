"""The test runner that runs inside the sandbox (stdlib only).

Reads ``job.bin`` (marshal, written by the host) from its own directory,
runs every test of the job and prints exactly one line, ``MARK`` followed by
the JSON outcome. The host builds the job (:mod:`gym_llm_code.harness`) and
reads that line.

Trust model: the runner process never executes the program under test. It
compiles it (which runs no code), then forks child processes that run it with
stdin/stdout/stderr redirected and send back what it produced. Whatever a
child sends is only a *claimed output* for one test: expected outputs never
enter the sandbox, and the host compares. A child that exits early, kills
itself or hangs produces no output for the test it was on. Jobs:

* ``call``: exec the program once, call ``entry(*args)`` for each input, send
  each result reduced to plain data (:mod:`plain`);
* ``exprs``: exec the program then ``setup``, evaluate each expression;
* ``stdio``: run the program (Python source, or an executable built by the
  job's ``compile`` step) once per input text; send stdout and exit status;
* ``check``: run assertion test code after the program (see :func:`run_check`).

``call`` and ``exprs`` tests run one after another in one child, which sends
one length-prefixed frame per test; when a test hangs or the child dies, the
test fails and a fresh child carries on with the next one. ``stdio`` tests
get a process each.

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
_FRAME = struct.Struct(">I")
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
    reads: ``result`` always, ``stdout``/``stderr`` when ``capture``."""

    def __init__(self, body, stdin_path=None, capture=False):
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
                os.dup2(os.open(stdin_path, os.O_RDONLY) if stdin_path else _null_fd(os.O_RDONLY), 0)
                out, err = (w_out, w_err) if capture else (_null_fd(os.O_WRONLY),) * 2
                os.dup2(out, 1)
                os.dup2(err, 2)
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

    def frame(self):
        """Pop one complete result frame, if buffered."""
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
            if type(out) is not dict or len(out) != 1 or not set(out) <= {"value", "error"}:
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


def run_values(count, body_from, budget):
    """Run ``count`` value tests in as few children as possible; ``body_from(i)``
    is a child body running tests ``i..count-1`` and sending a frame each."""
    caps = {"result": budget.cap}
    results = []
    while len(results) < count:
        if budget.left() <= 0:
            results += [{"skipped": True}] * (count - len(results))
            break
        child = Child(body_from(len(results)))
        deadline = budget.test_deadline()
        end = None
        while len(results) < count:
            got = child.frame()
            if got is not None:
                results.append(got)
                deadline = budget.test_deadline()
                continue
            end = child.pump(deadline, caps)
            if end is not None:
                if end != "deadline":  # frames read along with the end still count
                    while len(results) < count and (got := child.frame()) is not None:
                        results.append(got)
                break
        code, sig = child.finish()
        if end is not None and len(results) < count:
            if end == "deadline":
                results.append({"timeout": True})
            elif end == "cap":
                results.append({"error": f"result larger than {budget.cap} bytes"})
            else:
                how = f"killed by signal {sig}" if sig is not None else f"exit status {code}"
                results.append({"crash": f"the test process ended without a result ({how})"})
    return results


def _values_body(code, count, setup, produce):
    """A child body: exec ``code`` and ``setup`` once, then send
    ``produce(ns, i)`` for tests ``start..count-1``."""

    def body_from(start):
        def body(w_res):
            ns = _fresh_globals("solution")
            try:
                if code is not None:
                    exec(code, ns)
                setup(ns)
            except BaseException as e:  # every remaining test fails the same way
                error = {"error": _text(e)}
                for _ in range(start, count):
                    _send(w_res, error)
                return 1
            for i in range(start, count):
                try:
                    payload = {"value": plain.encode(produce(ns, i))}
                except BaseException as e:
                    payload = {"error": _text(e)}
                _send(w_res, payload)
            return 0

        return body

    return body_from


def run_call(job, code, inputs, budget):
    entry = job["entry"]

    def produce(ns, i):
        fn = ns.get(entry)
        if not callable(fn):
            raise NameError(f"the solution does not define a function {entry}()")
        return fn(*[plain.decode(a) for a in inputs[i]])

    return run_values(len(inputs), _values_body(code, len(inputs), lambda ns: None, produce), budget)


def run_exprs(job, code, budget):
    setup_code = compile(job.get("setup", ""), "test_setup.py", "exec")
    exprs = [compile(src, "test.py", "eval") for src in job["exprs"]]
    bind = job.get("bind", {})

    def setup(ns):
        exec(setup_code, ns)
        for alias, name in bind.items():
            ns[alias] = ns[name]

    def produce(ns, i):
        return eval(exprs[i], ns)

    return run_values(len(exprs), _values_body(code, len(exprs), setup, produce), budget)


def run_check(job, code, budget):
    """One in-process assertion test, for dataset tests that cannot be split
    into candidate and expected sides: the test code runs after the program,
    with the builtins as they were before the program ran and with ``==`` and
    ``!=`` already rewritten (on the host) into ``__gym_eq__``, a plain-value
    comparison that uses a private copy of :mod:`plain`. It passes when the
    test code runs to its end and the child says so."""
    test = compile(job["test"], "test.py", "exec")
    with open(os.path.join(HERE, "plain.py")) as f:
        plain_code = compile(f.read(), "plain.py", "exec")

    def body(w_res):
        pristine = dict(builtins.__dict__)
        private = {"__builtins__": dict(pristine), "__name__": "plain_private"}
        exec(plain_code, private)
        encode, decode, equal = private["encode"], private["decode"], private["plain_equal"]

        def gym_eq(a, b):
            return equal(decode(encode(a)), decode(encode(b)))

        ns = _fresh_globals("solution")
        exec(code, ns)
        test_ns = dict(ns)
        test_ns.update(__builtins__=pristine, __gym_eq__=gym_eq)
        exec(test, test_ns)
        _send(w_res, {"value": True})
        return 0

    return run_values(1, lambda start: body, budget)


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
    for i, text in enumerate(inputs):
        if budget.left() <= 0:
            results.append({"skipped": True})
            continue
        path = os.path.join(HERE, f"stdin_{i}.txt")
        with open(path, "w") as f:
            f.write(text)
        child = Child(body, stdin_path=path, capture=True)
        deadline = budget.test_deadline()
        end = None
        while end is None:
            end = child.pump(deadline, caps)
        status, sig = child.finish()
        os.unlink(path)
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
    path = os.path.join(HERE, JOB_NAME)
    with open(path, "rb") as f:
        job = marshal.loads(f.read())  # written by the host: trusted
    os.unlink(path)  # the program under test must not find the job (and a check job's tests) on disk
    out = {}
    inputs = list(job.get("inputs", []))
    if job.get("generator"):
        out["generated"] = generate(job["generator"])
        inputs += out["generated"]
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
        elif kind == "exprs":
            out["results"] = run_exprs(job, code, budget)
        elif kind == "check":
            out["results"] = run_check(job, code, budget)
        else:
            raise ValueError(f"unknown job kind {kind!r}")
    line = MARK + dumps(out) + "\n"
    # a lone surrogate from the program's output becomes a JSON \udcxx escape
    sys.stdout.buffer.write(line.encode("utf-8", "backslashreplace"))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
