"""The language table: how each language is compiled and run, and what it must see.

Each language names its executables and the host paths they need, resolved on this
machine on first use (``available_languages()`` reports which ones exist). Mounts are
kept to what the program needs: Python gets its binary, its standard library and the
shared libraries it links, not ``/usr`` (and so no host ``dist-packages``); bash and the
C/C++ compilers get ``/usr`` read-only because a shell or a toolchain is useless
without the system's tools and headers.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gym_llm_sandbox import _pyboot
from gym_llm_sandbox._nsjail import python_executable
from gym_llm_sandbox._types import Limits, SandboxError

log = logging.getLogger("gym_llm_sandbox")

#: Code longer than this goes into a read-only file instead of the command line
#: (Linux caps one argument at 128 KiB).
MAX_INLINE_CODE = 64 * 1024


@dataclass(frozen=True)
class Language:
    """One row of the language table.

    ``run_inline(exe, code)`` / ``run_file(exe, path)`` build the argv that runs the
    source. A language with ``run_stdin(exe)`` instead starts an interpreter that reads
    the program from stdin, framed by ``frame_program(code, args)`` ahead of the
    user's stdin (so the interpreter can be started before the program is known); for compiled languages ``compile_argv(exe, out)`` reads the source on
    stdin and writes the binary to ``out``, under ``compile_limits`` (merged over the
    caller's limits); ``link_probe`` is a program that uses every library the compile
    command line links, so its libraries' directories are those of any program built
    (:func:`runtime_library_dirs`). ``use_rlimit_as=False`` for runtimes that reserve
    huge address space (V8): memory is then limited by the cgroup only.
    """

    name: str
    find: Callable[[], str | None]
    mounts: Callable[[str], list[str]]
    source_name: str
    run_inline: Callable[[str, str], list[str]] | None = None
    run_file: Callable[[str, str], list[str]] | None = None
    run_stdin: Callable[[str], list[str]] | None = None
    frame_program: Callable[[str, Sequence[str]], bytes] | None = None
    compile_argv: Callable[[str, str], list[str]] | None = None
    compile_limits: dict[str, float | int] = field(default_factory=dict)
    link_probe: str = ""
    use_rlimit_as: bool = True
    env: dict[str, str] = field(default_factory=dict)
    oom_markers: tuple[str, ...] = ()

    @property
    def compiled(self) -> bool:
        return self.compile_argv is not None

    def compile_limits_for(self, limits: Limits) -> Limits:
        """The limits of the compile step: the caller's, raised to the compiler's needs."""
        merged = {k: max(getattr(limits, k), v) for k, v in self.compile_limits.items()}
        return limits.replace(**merged)


def _which(name: str) -> str | None:
    path = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin")
    return os.path.realpath(path) if path else None


@functools.cache
def library_dirs(exe: str) -> tuple[str, ...]:
    """Directories (symlinks resolved) holding the shared libraries ``exe`` links
    (cached: for installed executables, whose path names them)."""
    return _library_dirs(exe)


def _library_dirs(exe: str) -> tuple[str, ...]:
    try:
        # the jail runs with no host environment, so resolve libraries as it will:
        # an LD_LIBRARY_PATH set by torch or a venv must not add host mounts
        out = subprocess.run(["ldd", exe], capture_output=True, text=True, timeout=10,
                             env={"PATH": "/usr/bin:/bin"}).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    dirs = []
    for path in re.findall(r"(/\S+\.so[\w.\-]*)", out):
        dirs.append(os.path.dirname(path))
        dirs.append(os.path.dirname(os.path.realpath(path)))
    if not dirs:  # static binary, or ldd missing: the usual places
        return _usual_library_dirs()
    return _existing(dirs)


def _existing(dirs: Sequence[str]) -> tuple[str, ...]:
    """``dirs`` with symlinks resolved, those that exist, each once."""
    return tuple(d for d in dict.fromkeys(os.path.realpath(d) for d in dirs) if os.path.isdir(d))


def _usual_library_dirs() -> tuple[str, ...]:
    return _existing(["/lib", "/lib64", "/usr/lib", "/usr/lib64"])


@functools.cache
def _python_stdlib(exe: str) -> tuple[str, ...]:
    code = "import sysconfig as s;print(s.get_path('stdlib'));print(s.get_path('platstdlib'))"
    try:
        out = subprocess.run([exe, "-S", "-c", code], capture_output=True, text=True,
                             timeout=30, env={}).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise SandboxError(f"cannot query the standard library of {exe}: {e}") from e
    return tuple(dict.fromkeys(os.path.realpath(p) for p in out.split() if os.path.isdir(p)))


def _find_python() -> str | None:
    try:
        return python_executable()
    except SandboxError:
        return None


def _python_mounts(exe: str) -> list[str]:
    extra = [p for p in ("/usr/share/zoneinfo",) if os.path.isdir(p)]
    return [exe, *_python_stdlib(exe), *library_dirs(exe), *extra]


def _usr_mounts(exe: str) -> list[str]:
    # Tools outside /usr (a node or gcc in /opt) need their own tree and libraries.
    own = [] if exe.startswith("/usr/") else [os.path.dirname(exe)]
    return ["/usr", *own, *library_dirs(exe)]


def _binary_mounts(exe: str) -> list[str]:
    return [exe, *library_dirs(exe)]


_COMPILE_LIMITS: dict[str, float | int] = {
    "wall_time_s": 30.0, "cpu_time_s": 30, "memory_mb": 1024, "max_processes": 16,
    "max_file_mb": 64, "tmpfs_mb": 256,
}

LANGUAGES: dict[str, Language] = {
    "python": Language(
        name="python", find=_find_python, mounts=_python_mounts, source_name="main.py",
        # python -S with a bootstrap that adds exit/quit/help and reads the program
        # from stdin (see _pyboot): no `site` start-up cost, pre-spawnable.
        run_stdin=_pyboot.argv, frame_program=_pyboot.frame,
        env={"PYTHONIOENCODING": "utf-8", "PYTHONPATH": "/work"},
        oom_markers=("MemoryError", "Cannot allocate memory"),
    ),
    "bash": Language(
        name="bash", find=lambda: _which("bash"), mounts=_usr_mounts, source_name="main.sh",
        run_inline=lambda exe, code: [exe, "-c", code],
        run_file=lambda exe, path: [exe, path],
        oom_markers=("Cannot allocate memory", "cannot allocate memory"),
    ),
    "javascript": Language(
        name="javascript", find=lambda: _which("node") or _which("nodejs"),
        mounts=_binary_mounts, source_name="main.js",
        run_inline=lambda exe, code: [exe, "-e", code],
        run_file=lambda exe, path: [exe, path],
        use_rlimit_as=False,
        oom_markers=("JavaScript heap out of memory", "Fatal process OOM"),
    ),
    "c": Language(
        name="c", find=lambda: _which("gcc") or _which("cc"), mounts=_usr_mounts,
        source_name="main.c",
        compile_argv=lambda exe, out: [exe, "-O2", "-std=gnu17", "-pipe", "-x", "c", "-",
                                       "-o", out, "-lm"],
        compile_limits=_COMPILE_LIMITS,
        link_probe="#include <math.h>\n#include <stdio.h>\n"
                   "int main(int c, char **v) { printf(\"%f\", sqrt(c)); }\n",
        oom_markers=("Cannot allocate memory",),
    ),
    "cpp": Language(
        name="cpp", find=lambda: _which("g++") or _which("c++"), mounts=_usr_mounts,
        source_name="main.cpp",
        compile_argv=lambda exe, out: [exe, "-O2", "-std=gnu++17", "-pipe", "-x", "c++", "-",
                                       "-o", out],
        compile_limits=_COMPILE_LIMITS,
        link_probe="#include <cmath>\n#include <iostream>\n"
                   "int main(int c, char **) { std::cout << std::sqrt(c); }\n",
        oom_markers=("std::bad_alloc", "Cannot allocate memory"),
    ),
}

ALIASES = {
    "py": "python", "python3": "python", "sh": "bash", "shell": "bash", "js": "javascript",
    "node": "javascript", "nodejs": "javascript", "c++": "cpp", "cxx": "cpp",
}


def get_language(name: str) -> Language:
    """The table row for ``name`` (aliases such as ``py``, ``js``, ``c++`` accepted)."""
    key = ALIASES.get(name.lower(), name.lower())
    try:
        return LANGUAGES[key]
    except KeyError:
        known = sorted({*LANGUAGES, *ALIASES})
        raise ValueError(f"unknown language {name!r}; known: {known}") from None


@functools.cache
def runtime_library_dirs(name: str, exe: str) -> tuple[str, ...]:
    """The directories a program built by ``name``'s compiler ``exe`` loads libraries
    from: those of its :attr:`Language.link_probe`, built once, unjailed (our own
    source). A program cannot link anything else (it cannot add linker flags), so a
    run jail mounts these whatever the program, and no per-program ``ldd`` is needed.
    Where the probe cannot be built, the compiler's own and the usual library
    directories (with a warning): the jailed compile of the program then reports what
    is wrong as its result."""
    lang = get_language(name)
    assert lang.compile_argv is not None and lang.link_probe
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "probe")
        try:
            r = subprocess.run(lang.compile_argv(exe, out), input=lang.link_probe.encode(),
                               capture_output=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
            why = r.stderr.decode(errors="replace")[-500:]
        except (OSError, subprocess.SubprocessError) as e:
            r, why = None, str(e)
        if r is not None and r.returncode == 0 and os.path.isfile(out):
            return _library_dirs(out)
    log.warning("cannot build the %s link probe with %s (%s): its programs get the "
                "compiler's and the usual library directories", name, exe, why.strip())
    return _existing([*library_dirs(exe), *_usual_library_dirs()])


@functools.cache
def resolve(name: str) -> str:
    """The host path of ``name``'s executable, or :class:`SandboxError` if absent."""
    lang = get_language(name)
    exe = lang.find()
    if not exe:
        raise SandboxError(f"language {lang.name!r} is not installed on this machine "
                           f"(see gym_llm_sandbox.available_languages())")
    return exe


def available_languages() -> dict[str, str | None]:
    """``{language: executable path or None}`` for every row of the table."""
    return {name: lang.find() for name, lang in LANGUAGES.items()}
