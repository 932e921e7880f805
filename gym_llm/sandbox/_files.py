"""Host-side files: per-run staging dirs, and bounded, symlink-safe handling of the
trees jails write.

A jail's work dir is written by untrusted code, so the host never follows a symlink
in it, reads at most a cap from any file and walks at most a bounded number of
entries. Everything here runs on the host; nothing starts a process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from gym_llm.sandbox import _nsjail
from gym_llm.sandbox._nsjail import JAIL_ID
from gym_llm.sandbox._types import SandboxError


def base_dir() -> str:
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


def new_stage() -> str:
    """A fresh per-run staging dir under :func:`base_dir` (the caller removes it)."""
    stage = tempfile.mkdtemp(prefix="run-", dir=base_dir())
    try:
        os.chmod(stage, 0o755)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return stage


@contextlib.contextmanager
def staged() -> Iterator[str]:
    """A fresh staging dir for the duration of the block."""
    stage = new_stage()
    try:
        yield stage
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def check_name(name: str) -> str:
    """A file name for the work dir: relative, normalized, inside it."""
    norm = os.path.normpath(name)
    if (not name or "\x00" in name or os.path.isabs(name) or norm.startswith("..")
            or norm in (".", "")):
        raise ValueError(f"invalid sandbox file name {name!r}: must be a relative path "
                         "inside the work dir")
    return norm


def to_bytes(data: str | bytes) -> bytes:
    return data.encode() if isinstance(data, str) else bytes(data)


def jail_owner() -> tuple[int, int]:
    """The host uid/gid the jail's files belong to (``nobody`` as root, else ours)."""
    caps = _nsjail.host_caps()
    return (JAIL_ID, JAIL_ID) if caps.is_root else (caps.uid, caps.gid)


def write_tree(root: str, files: Mapping[str, str | bytes], owner: tuple[int, int] | None) -> None:
    """Write ``files`` under ``root`` without following any symlink (the tree may have
    been written by a jail before, in a session)."""
    for name, data in files.items():
        rel = check_name(name)
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
                f.write(to_bytes(data))
            if owner:
                os.chown(parts[-1], *owner, dir_fd=dfd, follow_symlinks=False)
        finally:
            os.close(dfd)


def read_regular(root: str, name: str, max_bytes: int) -> bytes | None:
    """Read ``root/name`` if it is a regular file reached without any symlink, else None.

    Reads at most ``max_bytes``. Used on trees a jail wrote, so a planted symlink
    (``out.txt -> /etc/shadow``) must never be followed on the host.
    """
    parts = check_name(name).split(os.sep)
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
                content = (read_regular(root, rel, max_file_bytes)
                           if st.st_size <= max_file_bytes else None)
                out[rel] = FileState("file", mode, st.st_size, content=content)
            else:
                out[rel] = FileState("other", mode, 0)
    return dict(sorted(out.items()))


def dir_bytes(root: str, max_entries: int = 100_000) -> int:
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
