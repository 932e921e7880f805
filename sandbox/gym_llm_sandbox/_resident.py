"""Resident nsjail daemons: ``nsjail -Ml`` per jail configuration, a fresh jail per run.

Starting nsjail costs ≈ 5 ms of CPU per run (exec, dynamic loading, page faults) before
any jail exists. In listen mode one nsjail process stays up and, for every TCP
connection on 127.0.0.1 of a private network namespace (see :class:`Daemons`), clones
a **fresh** jail (new namespaces, cgroups, tmpfs
``/work``) running our tiny init (``_init.c``) as PID 1 with the connection as its
fds 0/1/2. The host sends a request (:func:`request`: the program's argv unless the
daemon's command line already started it, input files, the names of output files,
stdin); the init writes the files into ``/work``, runs the program and frames its
stdout/stderr, the output files, its wait status and its CPU time back (see
``_init.c``). The host
never trusts those frames: anything malformed is a failed run.

A daemon is keyed by everything on its command line (limits, mounts, env); a
configuration has one daemon per slot of the pool (at most 4), used in turn. Each is
started lazily on first use, restarted when it has died, stopped by :func:`stop_all`
and at interpreter exit (and by the kernel if this process dies: PDEATHSIG).
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import contextlib
import ctypes
import errno
import fcntl
import functools
import hashlib
import logging
import os
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gym_llm_sandbox import _nsjail
from gym_llm_sandbox._files import base_dir
from gym_llm_sandbox._types import Limits, SandboxError

log = logging.getLogger("gym_llm_sandbox")

#: Where the init binary is mounted inside each jail.
INIT_PATH = "/gym_llm_init"
#: Configurations whose daemons are kept at once (least recently used stopped beyond).
MAX_CONFIGURATIONS = 8
#: Daemons per configuration at most, used in turn: one per slot of the pool. A single
#: nsjail serialises every jail's set-up, and it sleeps in the kernel at times (moving
#: each jail into its cgroups waits for an RCU grace period): with one daemon at 2
#: concurrent trivial runs the cores sat 12-15% idle, with two 8-10%.
MAX_DAEMONS_PER_CONFIGURATION = 4
#: Spare jails per daemon at most (each holds an idle interpreter, about 10 MB).
MAX_SPARES = 4
#: A spare jail idle longer than this is discarded, not used (it extends the daemon's
#: nsjail time limit, a backstop to the exact wall-time kill done here).
MAX_IDLE_S = 30.0
_SOURCE = Path(__file__).with_name("_init.c")
_HELLO, _STDOUT, _STDERR, _EXIT, _FILE, _FILE_DATA = 0, 1, 2, 3, 4, 5
_CHUNK = 256 * 1024
#: The init's frames carry at most 64 KiB (its buffer); anything longer is malformed.
_MAX_FRAME = 64 * 1024
_PR_SET_PDEATHSIG = 1
_SYS_PIDFD_GETFD = 438  # the same number on every architecture
_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


class Malformed(Exception):
    """The jail's frames broke the protocol (a failed run, never trusted)."""


@functools.lru_cache(maxsize=1)
def init_binary() -> str | None:
    """The compiled init (static when libc.a exists), built once per source version into
    the staging dir; None when no C compiler is available (resident mode then off)."""
    try:
        src = _SOURCE.read_bytes()
    except OSError:  # an install that did not ship the source
        return None
    digest = hashlib.sha256(src).hexdigest()[:16]
    out = os.path.join(base_dir(), f"init-{digest}")
    if os.path.isfile(out) and os.access(out, os.X_OK):
        return out
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        log.info("no C compiler: resident nsjail mode unavailable")
        return None
    tmp = f"{out}.{os.getpid()}.{threading.get_ident()}"
    for static in (["-static"], []):
        r = subprocess.run([cc, "-O2", "-Wall", *static, "-o", tmp, str(_SOURCE)],
                           capture_output=True, text=True, timeout=120)
        if r.returncode == 0:
            os.chmod(tmp, 0o755)
            os.replace(tmp, out)  # atomic: concurrent builders agree
            return out
    log.info("cannot build the jail init: %s", r.stderr[-500:])
    return None


def _pdeathsig() -> None:  # in the daemon, between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


@dataclass
class Daemon:
    """One resident ``nsjail -Ml`` on ``127.0.0.1:port`` of the private network
    namespace that ``netns`` (the spawner thread) lives in, with up to ``max_spares``
    spare connections: jails already set up whose program (the interpreter) is
    already started and waiting for its input."""

    proc: subprocess.Popen[bytes]
    port: int
    #: nsjail's log: a memfd, so no file outlives this process however it ends.
    log_fd: int
    netns: concurrent.futures.Executor
    #: One per slot of the pool: with a single spare, of two runs that start together
    #: the second waited for a whole jail and interpreter start-up (at 2 concurrent
    #: runs the cores sat 15% idle).
    max_spares: int = 1
    spares: collections.deque[tuple[socket.socket, float]] = field(
        default_factory=collections.deque)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: The configuration it serves: nsjail's argv without mode, port and log.
    key: tuple[str, ...] = ()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_text(self, tail: int = 64 * 1024) -> str:
        """The last ``tail`` bytes of nsjail's log ("" once stopped)."""
        try:
            size = os.fstat(self.log_fd).st_size
            return os.pread(self.log_fd, tail, max(0, size - tail)).decode(errors="replace")
        except OSError:
            return ""

    def _connect(self) -> socket.socket:
        """A new connection (in the ``netns`` thread: a socket belongs to the network
        namespace of the thread that creates it)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            # Loopback: completes in the kernel's backlog at once; nsjail accepts the
            # connection and clones the jail on its own time.
            sock.connect(("127.0.0.1", self.port))
        except OSError as e:
            sock.close()
            raise SandboxError(f"resident nsjail not reachable: {e}") from None
        sock.setblocking(False)
        return sock

    def _top_up_spares(self) -> None:
        while True:
            with self.lock:
                if len(self.spares) >= self.max_spares:
                    return
            try:
                spare = self._connect()
            except SandboxError:
                return
            with self.lock:
                self.spares.append((spare, time.monotonic()))

    async def connection(self) -> socket.socket:
        """A connection to a fresh jail (the oldest spare that is fresh enough); tops
        the spares up again. Every jail serves one connection only."""
        sock, stale = None, []
        with self.lock:
            while self.spares and sock is None:
                spare, born = self.spares.popleft()
                if time.monotonic() - born > MAX_IDLE_S:
                    stale.append(spare)
                else:
                    sock = spare
        for spare in stale:
            spare.close()
        if sock is None:
            sock = await asyncio.get_running_loop().run_in_executor(self.netns, self._connect)
        self.netns.submit(self._top_up_spares)
        return sock

    def stop_spare(self) -> None:
        """Close the spare connections (their jails end: EOF to their init)."""
        with self.lock:
            spares = [s for s, _ in self.spares]
            self.spares.clear()
        for spare in spares:
            spare.close()

    def stop(self) -> None:
        """SIGTERM: nsjail kills its jails and exits; then remove the cgroups its jails
        left (a daemon stopping, or killed from outside, does not remove them)."""
        self.stop_spare()
        jails: list[int] = []
        with contextlib.suppress(OSError), open(
                f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
            jails = [int(p) for p in f.read().split()]  # nsjail names cgroups after them
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        remove_cgroups(jails)
        with contextlib.suppress(OSError):
            os.close(self.log_fd)


def remove_cgroups(pids: Sequence[int], timeout_s: float = 2.0) -> None:
    """Remove the cgroups of the jails ``pids`` of a stopped daemon and any other whose
    jail is gone (their processes may take a moment to die)."""
    deadline = time.monotonic() + timeout_s
    while not all([_nsjail.cleanup_cgroups(p)
                   for p in {*pids, *_nsjail.stale_cgroup_pids()}]):
        if time.monotonic() > deadline:
            log.warning("could not remove the cgroups of dead jails")
            return
        time.sleep(0.01)


def _listening(port: int) -> bool:
    """Is something listening on 127.0.0.1:port of this thread's network namespace
    (from /proc/thread-self/net/tcp, without connecting: a connection would start a
    jail). nsjail binds ``::ffff:127.0.0.1`` (tcp6)."""
    want = f"0100007F:{port:04X}"
    for table in ("/proc/thread-self/net/tcp6", "/proc/thread-self/net/tcp"):
        with contextlib.suppress(OSError), open(table) as f:
            for line in list(f)[1:]:
                fields = line.split()
                if fields[1].endswith(want) and fields[3] == "0A":
                    return True
    return False


def tcp_sockets(pid: int) -> Iterator[socket.socket]:
    """Duplicates of the TCP sockets of process ``pid`` (``pidfd_getfd``: root, or a
    process we may ptrace), each closed after use; fds it closes meanwhile are skipped."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                    continue
            except OSError:  # closed meanwhile
                continue
            fd = libc.syscall(_SYS_PIDFD_GETFD, pidfd, int(name), 0)
            if fd < 0:
                err = ctypes.get_errno()
                if err == errno.EBADF:  # closed meanwhile
                    continue
                raise OSError(err, f"pidfd_getfd: {os.strerror(err)}")
            with socket.socket(fileno=fd) as dup:  # closes our duplicate only
                if dup.type == socket.SOCK_STREAM and dup.family in (socket.AF_INET,
                                                                      socket.AF_INET6):
                    yield dup
    finally:
        os.close(pidfd)


def _no_delay(pid: int) -> None:
    """Set TCP_NODELAY on the sockets of daemon ``pid`` (just started: its listening
    socket), so every connection it accepts inherits it. nsjail relays each frame of the
    init as a write of its own, and with Nagle's algorithm the next small frame (the exit
    status after the output, say) waited for our delayed ACK: a run that printed
    anything took 11 ms longer at the median and 45 ms at the 90th percentile."""
    for sock in tcp_sockets(pid):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(argv_tail: Sequence[str], netns: concurrent.futures.Executor,
           spares: int) -> Daemon:
    """Start a daemon on a free port and wait until it listens (retrying a lost port
    race). Runs in the ``netns`` thread, so the daemon is born in its namespace."""
    last = ""
    for _ in range(5):
        port = _free_port()
        log_fd = os.memfd_create(f"gym_llm-nsjaild-{port}", os.MFD_CLOEXEC)
        argv = [argv_tail[0], "-Ml", "--port", str(port), "--bindhost", "127.0.0.1",
                "-q", "--log_fd", str(log_fd), *argv_tail[1:]]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True,
                                pass_fds=(log_fd,), preexec_fn=_pdeathsig)
        daemon = Daemon(proc, port, log_fd, netns, spares, key=tuple(argv_tail))
        deadline = time.monotonic() + 10
        while proc.poll() is None and time.monotonic() < deadline:
            if _listening(port):
                try:
                    _no_delay(proc.pid)
                except OSError as e:  # slower runs (see _no_delay), never failed ones
                    log.warning("cannot set TCP_NODELAY on the resident nsjail: %s", e)
                return daemon
            time.sleep(0.002)
        last = daemon.log_text(800)
        daemon.stop()
    raise SandboxError(f"could not start a resident nsjail: {last or 'no log'}")


def _enter_private_netns() -> None:
    """Move the calling thread into a new network namespace with its loopback up.

    Only a process with ``CAP_SYS_ADMIN`` on the host (root) can enter it (``setns``),
    so no other uid can reach a daemon listening there, nor can a jail run with
    ``network=True`` (it shares the host's namespace)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare(CLONE_NEWNET): {os.strerror(err)}")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifr = fcntl.ioctl(s, _SIOCGIFFLAGS, struct.pack("16sH22x", b"lo", 0))
        flags = struct.unpack("16sH22x", ifr)[1] | _IFF_UP
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags))


class Daemons:
    """The daemons of this process: for each jail command line (configuration), a group
    of up to :data:`MAX_DAEMONS_PER_CONFIGURATION`, used in turn.

    Daemons are started from one long-lived thread, the *spawner*: PDEATHSIG follows
    the thread that forked, so a daemon must not be tied to a short-lived caller
    thread; and that thread lives in a private network namespace (entered once, when
    it starts), so every daemon it forks listens there and every connection to one is
    made from it. Where that namespace cannot be made (not root) there are no daemons:
    a TCP port on the host's loopback would be open to every local uid.
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        """Fresh state; also in a forked child, where the parent's daemons are not ours
        (not our children: left alone) and the spawner thread did not survive the fork."""
        self._lock = threading.Lock()
        # configuration -> its daemons (None: not started yet), least recently started first
        self._groups: dict[tuple[str, ...], list[Daemon | None]] = {}
        self._turns: dict[tuple[str, ...], int] = {}
        self._netns_error: str | None = None
        self.__dict__.pop("unavailable", None)
        self._spawner = concurrent.futures.ThreadPoolExecutor(
            1, "gym_llm-nsjaild", initializer=self._init_spawner)

    def _init_spawner(self) -> None:
        try:
            _enter_private_netns()
        except OSError as e:
            self._netns_error = str(e)
            log.info("no private network namespace for resident nsjail: %s", e)

    @property
    def netns(self) -> concurrent.futures.Executor:
        """The spawner thread, in the daemons' network namespace."""
        return self._spawner

    @functools.cached_property
    def unavailable(self) -> str | None:
        """Why there can be no daemons here (None: there can)."""
        self._spawner.submit(lambda: None).result()  # runs the initializer once
        return self._netns_error

    def all(self) -> list[Daemon]:
        """Every daemon started and not stopped (alive or found dead later)."""
        with self._lock:
            return [d for group in self._groups.values() for d in group if d is not None]

    def where(self) -> str:
        """Where the daemons listen, for ``gym-llm doctor``."""
        if self.unavailable:
            return f"none: {self.unavailable}"
        tid = self._spawner.submit(threading.get_native_id).result()
        ports = sorted(d.port for d in self.all())
        return (f"127.0.0.1 in the private network namespace /proc/{os.getpid()}/task/{tid}/ns/net "
                f"(enterable by root only); ports in use now: {ports or 'none'}")

    def _start_sync(self, key: tuple[str, ...], slot: int, concurrency: int) -> Daemon:
        """Daemon ``slot`` of ``key``'s group, (re)started unless another caller did."""
        with self._lock:
            group = self._groups.pop(key, None) or [None] * daemon_count(concurrency)
            self._groups[key] = group  # most recently used last
            d = group[slot]
            if d is not None and d.alive():
                return d
        if d is not None:
            log.warning("resident nsjail on port %d died (status %s); restarting",
                        d.port, d.proc.returncode)
            d.stop()
        if self._netns_error:
            raise SandboxError(f"no resident nsjail: {self._netns_error}")
        new = _start(key, self._spawner, spare_count(concurrency))
        with self._lock:
            group[slot] = new
            old = list(self._groups)[:max(0, len(self._groups) - MAX_CONFIGURATIONS)]
            evicted = [self._groups.pop(k) for k in old]
            for k in old:
                self._turns.pop(k, None)
        for e in evicted:
            for d in e:
                if d is not None:
                    d.stop()
        return new

    async def get(self, key: tuple[str, ...], concurrency: int) -> Daemon:
        """A live daemon for ``key`` (nsjail argv without mode/port) serving a sandbox of
        ``concurrency`` slots: the group's daemons in turn (:func:`daemon_count` of
        them, each keeping :func:`spare_count` spares), each started when first needed."""
        with self._lock:
            turn = self._turns.get(key, 0)
            self._turns[key] = turn + 1
            slot = turn % daemon_count(concurrency)
            group = self._groups.get(key)
            d = group[slot] if group is not None else None
            if d is not None and d.alive():
                return d
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._spawner, self._start_sync, key, slot,
                                          concurrency)

    def stop_all(self) -> None:
        """Stop every daemon (their jails die with them), those being started when this
        is called included, and wait until they are gone.

        The stop runs on the spawner thread, which starts every daemon: after each start
        already queued there (a run cancelled while its daemon was starting leaves its
        start queued). Stopping from the caller's thread missed those: a start that
        finished later put its daemon into a group no longer registered, and no later
        ``stop_all`` found it again."""
        try:
            stop = self._spawner.submit(self._stop_registered)
        except RuntimeError:  # interpreter exit: the spawner takes no more work
            self._stop_registered()
        else:
            stop.result()

    def _stop_registered(self) -> None:
        """Stop the daemons registered now."""
        with self._lock:
            ds = [d for group in self._groups.values() for d in group if d is not None]
            self._groups.clear()
            self._turns.clear()
        for d in ds:
            d.stop()


DAEMONS = Daemons()
atexit.register(DAEMONS.stop_all)
os.register_at_fork(after_in_child=DAEMONS._reset)


@dataclass
class Outcome:
    """What a resident jail reported; ``status`` is a raw wait status, None if the jail
    ended (or was cut off) without a well-formed exit frame; ``cpu_time_s`` (with a
    status) is the program's CPU time as the kernel counted it against RLIMIT_CPU."""

    status: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    output_truncated: bool
    wall_time_s: float
    malformed: bool = False
    detail: str = ""
    files: dict[str, bytes] = field(default_factory=dict)
    cpu_time_s: float | None = None


def _string(s: str | bytes) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    return struct.pack(">I", len(b)) + b


def request(argv: Sequence[str], files: Sequence[tuple[str, int, bytes]],
            output_files: Sequence[str], max_file_bytes: int, stdin: bytes) -> bytes:
    """What the init reads (see ``_init.c``): ``argv`` (empty: the daemon's command line
    started the program), ``files`` as (relative name, mode, content) written into
    ``/work`` first, the ``output_files`` to send back (at most ``max_file_bytes``
    each), then ``stdin``. Names are checked by the caller."""
    parts = [struct.pack(">I", len(argv)), *map(_string, argv), struct.pack(">I", len(files))]
    for name, mode, data in files:
        parts += [_string(name), struct.pack(">IQ", mode, len(data)), data]
    parts += [struct.pack(">I", len(output_files)), *map(_string, output_files),
              struct.pack(">QQ", max_file_bytes, len(stdin)), stdin]
    return b"".join(parts)


class Frames:
    """The host's reading of an init's frames (see ``_init.c``), fed as the bytes come:
    stdout and stderr kept up to ``max_output_bytes`` each (past it ``truncated``), the
    ``output_files`` asked for up to ``max_file_bytes`` each, the exit frame's wait
    status and CPU time. Anything off the protocol is ``malformed`` (why), never
    trusted. The one reader of frames, for resident and per-run jails alike."""

    def __init__(self, max_output_bytes: int, output_files: Sequence[str] = (),
                 max_file_bytes: int = 0) -> None:
        self.max_output_bytes = max_output_bytes
        self.max_file_bytes = max_file_bytes
        self.wanted = set(output_files)
        self.out, self.err = bytearray(), bytearray()
        self.files: dict[str, bytearray] = {}
        self.current: bytearray | None = None  # the output file whose content frames follow
        self.buf = bytearray()
        self.hello = self.truncated = False
        self.status: int | None = None
        self.cpu_ns = 0
        self.malformed: str | None = None

    def feed(self, chunk: bytes) -> bool:
        """Read ``chunk``, the next bytes the init sent; False once the run is cut
        (output over its cap, or malformed): its jail must be ended, read no more."""
        try:
            self._frames(chunk)
        except Malformed as e:
            self.malformed = str(e)
        return not self.truncated and self.malformed is None

    def _frames(self, chunk: bytes) -> None:
        if self.status is not None and chunk:
            raise Malformed("data after the exit frame")
        buf = self.buf
        buf += chunk
        while len(buf) >= 5 and self.status is None and not self.truncated:
            stream, n = buf[0], struct.unpack(">I", buf[1:5])[0]
            if stream > _FILE_DATA or n > _MAX_FRAME or (stream == _EXIT and n != 12) or (
                    stream != _HELLO and not self.hello) or (stream == _HELLO and n) or (
                    stream == _FILE_DATA and self.current is None) or (
                    stream in (_STDOUT, _STDERR) and self.files):
                raise Malformed(f"bad frame (stream {stream}, {n} bytes)")
            if len(buf) < 5 + n:
                break
            data = bytes(buf[5:5 + n])
            del buf[:5 + n]
            if stream == _HELLO:
                self.hello = True
            elif stream == _EXIT:
                status, self.cpu_ns = struct.unpack(">IQ", data)
                if buf:
                    raise Malformed("data after the exit frame")
                self.status = status
            elif stream == _FILE:
                name = data.decode(errors="replace")
                if name not in self.wanted or name in self.files:
                    raise Malformed(f"output file {name!r} not asked for")
                self.current = self.files[name] = bytearray()
            elif stream == _FILE_DATA:
                assert self.current is not None
                if len(self.current) + n > self.max_file_bytes:
                    raise Malformed("output file over its size cap")
                self.current += data
            else:
                sink = self.out if stream == _STDOUT else self.err
                room = self.max_output_bytes - len(sink)
                sink += data[:max(room, 0)]
                if len(data) > room:
                    self.truncated = True

    def outcome(self, *, timed_out: bool, wall_time_s: float, detail: str = "") -> Outcome:
        """What the run reported: no status unless its exit frame was read whole (not
        after a cut: a truncated or malformed run ended with the jail's kill)."""
        status = None if self.truncated or self.malformed is not None else self.status
        return Outcome(status, bytes(self.out), bytes(self.err), timed_out, self.truncated,
                       wall_time_s, self.malformed is not None, self.malformed or detail,
                       {k: bytes(v) for k, v in self.files.items()} if status is not None else {},
                       self.cpu_ns / 1e9 if status is not None else None)


async def run(daemon: Daemon, req: bytes, *, wall_time_s: float, max_output_bytes: int,
              output_files: Sequence[str] = (), max_file_bytes: int = 0) -> Outcome:
    """One run in a fresh jail of ``daemon``: send the :func:`request` ``req``, collect
    frames (``output_files`` are the names it asked for, at most ``max_file_bytes``).

    Closing the socket ends the jail (its init exits, the PID namespace dies); that is
    how timeouts, output overflow and cancellation kill it. Raises
    :class:`SandboxError` when the jail never came up (no hello frame).
    """
    loop = asyncio.get_running_loop()
    t0 = time.perf_counter()
    sock = await daemon.connection()
    frames = Frames(max_output_bytes, output_files, max_file_bytes)
    timed_out = False
    detail = ""
    sender: asyncio.Future[None] | None = None
    try:
        async with asyncio.timeout(wall_time_s):
            sender = asyncio.ensure_future(loop.sock_sendall(sock, req))
            while frames.status is None:
                try:
                    chunk = await loop.sock_recv(sock, _CHUNK)
                except OSError:
                    chunk = b""
                if not chunk:
                    detail = "the jail closed its connection without an exit status"
                    break
                if not frames.feed(chunk):
                    break
    except TimeoutError:
        timed_out = True
    finally:
        if sender is not None:
            sender.cancel()
        sock.close()  # ends the jail if it is still running
    if not frames.hello and not timed_out:
        errors = [ln for ln in daemon.log_text().splitlines() if ln.startswith(("[E]", "[F]", "[W]"))]
        raise SandboxError("nsjail could not run the program (resident jail): "
                           + ("\n".join(errors[-8:]) or frames.malformed or detail))
    return frames.outcome(timed_out=timed_out, wall_time_s=time.perf_counter() - t0,
                          detail=detail)


def spare_count(concurrency: int) -> int:
    """Spare jails kept by each daemon of a sandbox running at most ``concurrency``
    programs at once: one per slot, at most :data:`MAX_SPARES`."""
    return max(1, min(concurrency, MAX_SPARES))


def daemon_count(concurrency: int) -> int:
    """Daemons serving one configuration of a sandbox running at most ``concurrency``
    programs at once: one per slot, at most :data:`MAX_DAEMONS_PER_CONFIGURATION`."""
    return max(1, min(concurrency, MAX_DAEMONS_PER_CONFIGURATION))


def max_conns(concurrency: int) -> int:
    """Each daemon's cap on live jails (nsjail ``--max_conns``) for a sandbox running at
    most ``concurrency`` programs at once: those (all may be on one daemon of the
    group), its spares, as many as run that were closed and are still being torn down,
    and one more. A backstop: the pool already bounds the runs, and no other uid can
    connect."""
    return 2 * concurrency + spare_count(concurrency) + 1


def daemon_argv(nsjail: str, command: Sequence[str], *, limits: Limits, ro_mounts: Sequence[str],
                env: dict[str, str], use_rlimit_as: bool, init: str,
                concurrency: int) -> tuple[str, ...]:
    """The daemon's nsjail argv (mode, port and log added by :func:`_start`); at most
    :func:`max_conns` of ``concurrency`` jails live at once."""
    argv = _nsjail.build_argv(nsjail, [INIT_PATH, *command], limits=limits,
                              ro_mounts=[*ro_mounts, f"{init}:{INIT_PATH}"], env=env,
                              tmpfs_work=True, log_path="", use_rlimit_as=use_rlimit_as,
                              idle_s=MAX_IDLE_S)
    # build_argv's run-mode head is "<nsjail> -Mo --log <path>"; the daemon sets its own.
    assert argv[1:4] == ["-Mo", "--log", ""]
    return (argv[0], "--max_conns", str(max_conns(concurrency)), *argv[4:])
