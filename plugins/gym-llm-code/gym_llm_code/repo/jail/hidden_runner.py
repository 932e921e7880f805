# The hidden-test runner of code/Repo-v0. It runs INSIDE the sandbox, in a fresh
# jail whose /work holds only the package's source files, after the source of
# gym_llm_code/jail/plain.py (its encode() is used below). Stdlib only.
#
# stdin: JSON {"package", "modules", "tests": [call expression, ...], "test_timeout_s"}.
# Output, on a private copy of fd 1 taken before the package is imported (fd 1 then
# points at /dev/null, so the package's prints never mix in): first
# {"import": true} or {"import": false, "e": "<exception class>"}, then one line per
# test: {"i": index, "ok": true, "v": <plain value>} or {"i": index, "ok": false,
# "e": "<exception class>"}. The expected values never enter this jail: the host
# compares. Everything this runner needs is imported before the package is.
import importlib
import json
import os
import signal
import sys

_job = json.loads(sys.stdin.read())
_out = os.fdopen(os.dup(1), "w")
_null = os.open(os.devnull, os.O_WRONLY)
os.dup2(_null, 1)
_dumps, _eval, _encode = json.dumps, eval, encode  # noqa: F821 - encode: plain.py, prepended


def _name_of(e):
    return type(e).__name__


class _TestTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _TestTimeout()


def _emit(record):
    _out.write(_dumps(record) + "\n")
    _out.flush()


_namespace = {}
try:
    importlib.import_module(_job["package"])
    for _m in _job["modules"]:
        _namespace[_m] = importlib.import_module(f"{_job['package']}.{_m}")
except BaseException as _e:  # noqa: BLE001 - a package that does not import scores 0
    _emit({"import": False, "e": _name_of(_e)})
    os._exit(0)
_emit({"import": True})
signal.signal(signal.SIGALRM, _alarm)
for _i, _expr in enumerate(_job["tests"]):
    try:
        signal.setitimer(signal.ITIMER_REAL, _job["test_timeout_s"])
        try:
            _value = _eval(_expr, dict(_namespace))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        _record = {"i": _i, "ok": True, "v": _encode(_value)}
    except BaseException as _e:  # noqa: BLE001 - SystemExit is a result like any other
        _record = {"i": _i, "ok": False, "e": _name_of(_e)}
    try:
        _emit(_record)
    except (TypeError, ValueError, RecursionError):
        _emit({"i": _i, "ok": False, "e": "unencodable"})
os._exit(0)
