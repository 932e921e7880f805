"""Host-side files: per-run staging dirs, and bounded, symlink-safe handling of the
trees jails write.

A jail's work dir is written by untrusted code, so the host never follows a symlink
in it, reads at most a cap from any file and walks at most a bounded number of
entries. Everything here runs on the host; nothing starts a process.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from gym_llm_sandbox import _nsjail
from gym_llm_sandbox._types import SandboxError

log = logging.getLogger("gym_llm_sandbox")


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
    # Others may pass through (the jail init lives here) but never list; each stage dir
    # below is reachable by its own jail only.
    os.chmod(root, 0o711)
    return root


def _jail_traversable(path: str) -> None:
    """Mode 0710, group the jail's outside gid: nsjail resolves mount sources with the
    jail's ids, so the jail may pass through ``path`` to a name it knows, and nobody
    else (but us) may even do that. Not root: the jail runs as us, so 0700."""
    uid, gid = jail_owner()
    if uid == os.getuid():
        os.chmod(path, 0o700)
        return
    os.chown(path, os.getuid(), gid)
    os.chmod(path, 0o710)


def new_stage(prefix: str = "run-") -> str:
    """A fresh staging dir under :func:`base_dir` that only we and the jail can pass
    through (the caller removes it)."""
    stage = tempfile.mkdtemp(prefix=prefix, dir=base_dir())
    try:
        _jail_traversable(stage)
    except BaseException:
        remove_tree(stage)
        raise
    return stage


@contextlib.contextmanager
def staged() -> Iterator[str]:
    """A fresh staging dir for the duration of the block."""
    stage = new_stage()
    try:
        yield stage
    finally:
        remove_tree(stage)


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
    """The host uid/gid the jail's files belong to (this process's id of the dedicated
    range as root, else ours)."""
    caps = _nsjail.host_caps()
    return caps.jail_uid, caps.jail_gid


def write_tree(root: str, files: Mapping[str, str | bytes], owner: tuple[int, int] | None,
               executable: Sequence[str] = ()) -> None:
    """Write ``files`` under ``root`` without following any symlink (the tree may have
    been written by a jail before, in a session); those named in ``executable`` get
    mode 0755, the others 0644."""
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
                if name in executable:
                    os.fchmod(f.fileno(), 0o755)
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
    # the type first, on the raw fd: fdopen refuses a directory and leaves the fd open
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(max_bytes)


#: Bounds of every host-side walk of a tree a jail wrote: a program can leave a tree
#: thousands of levels deep or with millions of entries, and the host must neither
#: recurse nor run out of memory or file descriptors walking it.
MAX_WALK_DEPTH = 64
MAX_WALK_ENTRIES = 10_000

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _names(dfd: int, limit: int) -> list[str]:
    """Up to ``limit`` names in the directory ``dfd``, sorted; [] when it cannot be read."""
    out: list[str] = []
    try:
        with os.scandir(dfd) as it:  # scandir dups the fd: ``dfd`` stays open
            for entry in it:
                if len(out) >= limit:
                    break
                out.append(entry.name)
    except OSError:
        return []
    return sorted(out)


def walk_tree(root: str, visit: Callable[[str, os.stat_result, int, str], None], *,
              max_depth: int = MAX_WALK_DEPTH, max_entries: int = MAX_WALK_ENTRIES) -> bool:
    """Call ``visit(relative path, lstat, parent dir fd, name)`` for the entries under
    ``root``, depth first, names sorted within each directory.

    Iterative (no recursion), never follows a symlink, at most ``max_depth`` levels
    (one fd open per level) and ``max_entries`` entries. Returns True when the whole
    tree was visited, False when a bound cut it short or a directory could not be
    read; never raises ``OSError`` (``visit`` must not either).
    """
    try:
        top = os.open(root, _DIR_FLAGS)
    except OSError:
        return False
    complete = True
    seen = 0
    stack: list[tuple[int, str, Iterator[str]]] = [(top, "", iter(_names(top, max_entries + 1)))]
    try:
        while stack:
            dfd, prefix, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(dfd)
                stack.pop()
                continue
            if seen >= max_entries:
                complete = False
                break
            try:
                st = os.lstat(name, dir_fd=dfd)
            except OSError:
                continue
            seen += 1
            rel = prefix + name
            visit(rel, st, dfd, name)
            if not stat.S_ISDIR(st.st_mode):
                continue
            if len(stack) >= max_depth:
                complete = False
                continue
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=dfd)
            except OSError:  # unreadable (chmod 000 and we are not root)
                complete = False
                continue
            stack.append((sub, rel + os.sep, iter(_names(sub, max_entries - seen + 1))))
    finally:
        for dfd, _, _ in stack:
            os.close(dfd)
    return complete


@dataclass(frozen=True)
class FileState:
    """One entry of a work-dir snapshot. ``content`` is None for directories and links,
    and for files larger than the snapshot's cap; ``target`` is a symlink's text."""

    kind: str  # "file" | "dir" | "symlink" | "other"
    mode: int  # permission bits (e.g. 0o644)
    size: int
    content: bytes | None = None
    target: str | None = None


class Snapshot(dict[str, FileState]):
    """``{relative path: FileState}``, sorted; ``complete`` is False when a bound (depth,
    entries, bytes read) or an unreadable directory left part of the tree out."""

    complete: bool = True


def _read_at(dfd: int, name: str, max_bytes: int) -> bytes | None:
    """At most ``max_bytes`` of the regular file ``name`` in ``dfd`` (no symlink, no
    blocking on a fifo), else None."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        try:
            return f.read(max_bytes)
        except OSError:
            return None


def snapshot_dir(root: str, max_file_bytes: int = 1 << 20, max_entries: int = MAX_WALK_ENTRIES,
                 *, max_depth: int = MAX_WALK_DEPTH, max_total_bytes: int = 16 << 20) -> Snapshot:
    """The file-system state under ``root`` as a :class:`Snapshot`, sorted by path.

    Never follows symlinks, never raises for what is in the tree, and is bounded: at
    most ``max_entries`` entries ``max_depth`` levels deep, file contents up to
    ``max_file_bytes`` each and ``max_total_bytes`` in all (``content`` is None past
    either); ``Snapshot.complete`` says whether anything was left out. Names that are
    not UTF-8 keep their bytes as surrogate escapes (:func:`os.fsdecode`).
    """
    out = Snapshot()
    budget = [max_total_bytes]

    def visit(rel: str, st: os.stat_result, dfd: int, name: str) -> None:
        mode = stat.S_IMODE(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            try:
                target: str | None = os.readlink(name, dir_fd=dfd)
            except OSError:
                target = None
            out[rel] = FileState("symlink", mode, st.st_size, target=target)
        elif stat.S_ISDIR(st.st_mode):
            out[rel] = FileState("dir", mode, 0)
        elif stat.S_ISREG(st.st_mode):
            content = None
            if st.st_size <= min(max_file_bytes, budget[0]):
                content = _read_at(dfd, name, max_file_bytes)
                budget[0] -= len(content or b"")
            elif st.st_size <= max_file_bytes:
                out.complete = False  # the total budget is spent
            out[rel] = FileState("file", mode, st.st_size, content=content)
        else:
            out[rel] = FileState("other", mode, 0)

    complete = walk_tree(root, visit, max_depth=max_depth, max_entries=max_entries)
    snap = Snapshot(sorted(out.items()))
    snap.complete = complete and out.complete
    return snap


@dataclass(frozen=True)
class Usage:
    """What a tree holds: ``entries`` counted, ``bytes`` of regular files (allocated
    blocks), ``complete`` False when a bound stopped the count (so the tree holds more)."""

    entries: int
    bytes: int
    complete: bool


def tree_usage(root: str, max_entries: int = 100_000, max_depth: int = MAX_WALK_DEPTH) -> Usage:
    """Entries and bytes under ``root`` (bounded walk, no symlink followed, never raises)."""
    entries = total = 0

    def visit(rel: str, st: os.stat_result, dfd: int, name: str) -> None:
        nonlocal entries, total
        entries += 1
        if stat.S_ISREG(st.st_mode):
            total += st.st_blocks * 512

    complete = walk_tree(root, visit, max_depth=max_depth, max_entries=max_entries)
    return Usage(entries, total, complete)


def remove_tree(path: str) -> bool:
    """Remove ``path`` and everything under it; True when it is gone. Never raises.

    The tree may be any a jail left (thousands of levels deep, millions of entries,
    symlink loops, fifos, sockets, directories made unreadable, names of any bytes)
    and must not leak (staging dirs live in RAM), so removal is iterative with two
    fds open at a time: each directory, once emptied of files, has its
    subdirectories renamed up into ``path`` itself, so no walk ever goes deeper than
    one level. Only dead jails' trees are removed: nothing changes them meanwhile.
    """
    try:
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(path)
            return True
        top = _open_dir(None, path)
    except FileNotFoundError:
        return True
    except OSError as e:
        log.warning("cannot remove %s: %s", path, e)
        return False
    token = secrets.token_hex(8)
    hoisted = 0
    pending = [None]  # None: ``path`` itself; else a name in it
    try:
        while pending:
            name = pending.pop()
            try:
                dfd = top if name is None else _open_dir(top, name)
            except OSError:
                continue
            try:
                for child in _names(dfd, 1 << 62):
                    try:
                        if not stat.S_ISDIR(os.lstat(child, dir_fd=dfd).st_mode):
                            os.unlink(child, dir_fd=dfd)
                        elif name is None:
                            pending.append(child)
                        else:
                            hoisted += 1
                            new = f".gym_llm-rm-{token}-{hoisted}"
                            os.rename(child, new, src_dir_fd=dfd, dst_dir_fd=top)
                            pending.append(new)
                    except OSError:
                        continue
            finally:
                if dfd != top:
                    os.close(dfd)
            if name is not None:
                with contextlib.suppress(OSError):
                    os.rmdir(name, dir_fd=top)
    finally:
        os.close(top)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError as e:
        log.warning("could not remove all of %s: %s", path, e)
        return False
    return True


def _open_dir(parent: int | None, name: str) -> int:
    """Open the directory ``name`` (in ``parent``) to list and empty it, first making it
    ours to do so (a jail may have left it mode 000: a non-root host needs this)."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except PermissionError:
        os.chmod(name, 0o700, dir_fd=parent)  # a directory: lstat said so, nothing moves
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    if os.geteuid() != 0:
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o700)  # write and search permission to empty it
    return fd
