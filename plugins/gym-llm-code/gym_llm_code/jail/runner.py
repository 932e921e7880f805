"""The test runner that runs inside the sandbox (stdlib only).

Reads ``job.json`` from its own directory, runs every test of the job and
prints exactly one line, ``MARK`` followed by the JSON outcome. The host
builds the job (:mod:`gym_llm_code.harness`) and reads that line.

Trust model: the runner process itself never executes the program under
test. It compiles it (which runs no code), then forks one child per test; the
child runs the program with its stdin/stdout/stderr redirected and sends back
what it produced. Whatever a child sends is only a *claimed output* for its own
test: the expected outputs never enter the sandbox, and the host compares.
A child that exits early, kills itself or hangs simply produces no output for
its test. Jobs:

* ``call``: exec the program, call ``entry(*args)`` for each input, return the
  result reduced to plain data (:mod:`plain`).
* ``stdio``: run the program (Python source, or an executable built by the
  job's ``compile`` step) on each input text, return stdout and the exit status.
* ``exprs``: exec the program then ``setup``, evaluate each expression, return
  its plain value.

A job may carry a trusted ``generator`` (only in jobs that run a reference
solution) that draws extra inputs from seeds; they are returned as ``generated``.
"""

import builtins
import json
import os
import random
import select
import signal
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import plain  # noqa: E402  (needs the path above)

MARK = "@@gym-llm-code-result@@"
SOURCE_NAME = "solution.py"


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
        n = os.write(fd, view)
        view = view[n:]


def _null_fd(flags):
    try:
        return os.open(os.devnull, flags)
    except OSError:  # no /dev/null in the jail: a scratch file does
        return os.open(os.path.join(HERE, ".null"), os.O_RDWR | os.O_CREAT, 0o600)


class Child:
    """One forked test process and the pipes the parent reads from it."""

    def __init__(self, body, stdin_path=None, capture_stdout=False):
        r_res, w_res = os.pipe()
        pipes = {"result": r_res}
        w_out = w_err = None
        if capture_stdout:
            pipes["stdout"], w_out = os.pipe()
            pipes["stderr"], w_err = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            status = 0
            try:
                os.setpgid(0, 0)
                for fd in pipes.values():
                    os.close(fd)
                stdin = os.open(stdin_path, os.O_RDONLY) if stdin_path else _null_fd(os.O_RDONLY)
                os.dup2(stdin, 0)
                out = w_out if capture_stdout else _null_fd(os.O_WRONLY)
                err = w_err if capture_stdout else out
                os.dup2(out, 1)
                os.dup2(err, 2)
                status = body(w_res)
            except BaseException as e:
                try:
                    _write_all(w_res, json.dumps({"error": _text(e)}).encode())
                except BaseException:
                    status = 1
            finally:
                os._exit(status if isinstance(status, int) else 1)
        os.close(w_res)
        for fd in (w_out, w_err):
            if fd is not None:
                os.close(fd)
        self.pid = pid
        self.pipes = pipes
        self.data = {name: bytearray() for name in pipes}

    def collect(self, timeout, caps):
        """Read the pipes until the child is done or ``timeout`` passes.
        Returns ``(timed_out, over_cap, exit_code, signal)``."""
        deadline = time.monotonic() + timeout
        open_fds = {fd: name for name, fd in self.pipes.items()}
        timed_out = over_cap = False
        exited = None
        while open_fds:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready, _, _ = select.select(list(open_fds), [], [], min(remaining, 0.05))
            for fd in ready:
                chunk = os.read(fd, 65536)
                name = open_fds[fd]
                if not chunk:
                    del open_fds[fd]
                    continue
                self.data[name] += chunk
                if len(self.data[name]) > caps.get(name, 1 << 20):
                    over_cap = True
            if over_cap:
                break
            if not ready and exited is None:
                # A grandchild may hold a pipe open after the child is gone.
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    exited = status
                    break
        self._kill()
        for fd in self.pipes.values():
            os.close(fd)
        if exited is None:
            _, exited = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(exited):
            return timed_out, over_cap, None, os.WTERMSIG(exited)
        return timed_out, over_cap, os.WEXITSTATUS(exited), None

    def _kill(self):
        for target in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, signal.SIGKILL)):
            try:
                target()
            except OSError:
                pass


def _fresh_globals(name):
    return {"__name__": name, "__builtins__": builtins, "__file__": SOURCE_NAME}


def _value_body(code, produce):
    """A child body that runs ``produce(namespace)`` after exec'ing ``code``
    and sends the plain result."""

    def body(w_res):
        ns = _fresh_globals("solution")
        if code is not None:
            exec(code, ns)
        try:
            payload = {"value": plain.encode(produce(ns))}
        except BaseException as e:
            payload = {"error": _text(e)}
        try:
            data = json.dumps(payload, separators=(",", ":")).encode()
        except BaseException as e:  # e.g. an int too large for str()
            data = json.dumps({"error": _text(e)}).encode()
        _write_all(w_res, data)
        return 0

    return body


def _value_result(child, timeout, cap):
    timed_out, over_cap, code, sig = child.collect(timeout, {"result": cap})
    raw = bytes(child.data["result"])
    if timed_out:
        return {"timeout": True}
    if over_cap:
        return {"error": f"result larger than {cap} bytes"}
    if not raw:
        how = f"killed by signal {sig}" if sig is not None else f"exit status {code}"
        return {"crash": f"the test process ended without a result ({how})"}
    try:
        out = json.loads(raw)
    except ValueError:
        return {"error": "the test process sent an unreadable result"}
    if not isinstance(out, dict) or not (set(out) <= {"value", "error"}) or len(out) != 1:
        return {"error": "the test process sent a malformed result"}
    return out


def run_call(job, code, inputs, budget):
    entry = job["entry"]

    def produce_for(args_json):
        def produce(ns):
            fn = ns.get(entry)
            if not callable(fn):
                raise NameError(f"the solution does not define a function {entry}()")
            args = [plain.decode(a) for a in args_json]
            return fn(*args)

        return produce

    return [budget.run(lambda a=args: Child(_value_body(code, produce_for(a))), budget.value) for args in inputs]


def run_exprs(job, code, budget):
    setup = compile(job.get("setup", ""), "test_setup.py", "exec")
    bind = job.get("bind", {})

    def produce_for(expr_src):
        expr = compile(expr_src, "test.py", "eval")

        def produce(ns):
            exec(setup, ns)
            for alias, name in bind.items():
                ns[alias] = ns[name]
            return eval(expr, ns)

        return produce

    return [budget.run(lambda e=e: Child(_value_body(code, produce_for(e))), budget.value) for e in job["exprs"]]


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
    def body(w_res):
        os.execv(argv[0], argv)

    return body


def run_stdio(job, code, inputs, budget):
    cap = int(job.get("max_output_bytes", 1 << 20))
    body = _exec_main(job["argv"]) if code is None else _python_main(code)
    results = []
    for i, text in enumerate(inputs):
        path = os.path.join(HERE, f"stdin_{i}.txt")
        with open(path, "w") as f:
            f.write(text)

        def finish(child, timeout):
            timed_out, over_cap, status, sig = child.collect(timeout, {"stdout": cap, "stderr": cap})
            return {
                "stdout": bytes(child.data["stdout"][:cap]).decode("utf-8", "replace"),
                "stderr": bytes(child.data["stderr"][-2000:]).decode("utf-8", "replace"),
                "exit": status,
                "signal": sig,
                "timeout": timed_out,
                "truncated": over_cap,
            }

        results.append(budget.run(lambda p=path: Child(body, stdin_path=p, capture_stdout=True), finish))
        os.unlink(path)
    return results


class Budget:
    """Per-test and total wall-clock limits; tests past the total are skipped."""

    def __init__(self, per_test, total, cap):
        self.per_test = per_test
        self.deadline = time.monotonic() + total
        self.cap = cap

    def run(self, start, finish):
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            return {"skipped": True}
        return finish(start(), min(self.per_test, remaining))

    def value(self, child, timeout):
        """Finish a value-returning test (``call`` and ``exprs`` jobs)."""
        return _value_result(child, timeout, self.cap)


def generate(gen):
    """Draw inputs from the job's (trusted) generator, one seed each."""
    ns = {}
    exec(compile(gen["source"], "generator.py", "exec"), ns)
    produced = []
    for seed in gen["seeds"]:
        value = ns["gen"](random.Random(seed))
        if gen.get("kind") == "text":
            produced.append(str(value))
        else:
            produced.append([plain.encode(a) for a in value])
    return produced


def compile_step(spec):
    """Run the job's build command (e.g. g++); returns an error text or None."""
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
    with open(os.path.join(HERE, "job.json")) as f:
        job = json.load(f)
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
        else:
            raise ValueError(f"unknown job kind {kind!r}")
    sys.stdout.write(MARK + json.dumps(out, separators=(",", ":")) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
