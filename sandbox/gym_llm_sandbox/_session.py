"""Sessions: a jail work dir that persists across the runs of one episode."""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from gym_llm_sandbox import _nsjail, _resident
from gym_llm_sandbox._files import (
    Snapshot,
    Usage,
    jail_owner,
    new_stage,
    read_regular,
    remove_tree,
    snapshot_dir,
    tree_usage,
    write_tree,
)
from gym_llm_sandbox._runner import Runner
from gym_llm_sandbox._types import ExecResult, Limits, SandboxError
from gym_llm_sandbox.aio import background_loop

log = logging.getLogger("gym_llm_sandbox")

_MS_NOSUID, _MS_NODEV, _MNT_DETACH = 2, 4, 2


def _mount_tmpfs(path: str, size_mb: int) -> bool:
    """Mount a ``size_mb`` tmpfs owned by the jail uid on ``path``; False where we may
    not mount (not root)."""
    if not _nsjail.host_caps().is_root:
        return False
    import ctypes

    uid, gid = jail_owner()
    opts = f"{_nsjail.tmpfs_options(size_mb)},mode=0700,uid={uid},gid={gid}".encode()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, opts) != 0:
        log.warning("could not mount a tmpfs on session dir %s: %s", path,
                    os.strerror(ctypes.get_errno()))
        return False
    return True


def _remove_session_dir(home: str, path: str, mounted: bool) -> None:
    if mounted:
        import ctypes

        ctypes.CDLL(None, use_errno=True).umount2(path.encode(), _MNT_DETACH)
        # The tmpfs pages the jails wrote were charged to their memory cgroups and kept
        # nsjail from removing those (EBUSY); freed now, they can go.
        _resident.remove_cgroups((), timeout_s=0.5)
    remove_tree(home)


class SandboxSession:
    """A host work dir that persists across the runs of one episode.

    Each call is still a fresh jail; only ``/work`` (``path``, owned by the jail's
    unprivileged uid, bind-mounted read-write) carries over. Closing removes it.
    ``path`` lies in a staging dir only we and the jail may pass through, so a jail
    that opens up the modes of its work dir still opens it to no one else.
    """

    def __init__(self, sandbox: Runner) -> None:
        self.sandbox = sandbox
        self._home = new_stage("session-")
        self.path = os.path.join(self._home, "work")
        os.mkdir(self.path, 0o700)
        os.chown(self.path, *jail_owner())
        self.closed = False
        #: The work dir's cap in MiB (the sandbox's ``tmpfs_mb`` at creation).
        self.max_mb = sandbox.limits.tmpfs_mb
        # Root: the dir is a tmpfs of its own, so the kernel enforces the cap (ENOSPC).
        # Otherwise the size is checked after every run (see _enforce).
        self.mounted = _mount_tmpfs(self.path, self.max_mb)
        self._finalizer = weakref.finalize(self, _remove_session_dir, self._home, self.path,
                                          self.mounted)

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
        return background_loop().run(self.arun(argv, **kwargs))

    def run_code(self, language: str, code: str, **kwargs: Any) -> ExecResult:
        """Synchronous :meth:`arun_code`."""
        return background_loop().run(self.arun_code(language, code, **kwargs))

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
        if not self.mounted and (used := tree_usage(self.path)).bytes > self.max_mb << 20:
            result.exit_code = result.exit_code or 1
            result.stderr += (f"\n[gym_llm_sandbox: the session work dir holds {used.bytes} "
                              f"bytes, over its cap of tmpfs_mb={self.max_mb} MiB]\n")
        return result

    def write_files(self, files: Mapping[str, str | bytes]) -> None:
        """Put files into the work dir (owned by the jail uid, mode 0644)."""
        write_tree(self._check(), files, jail_owner())

    def read_file(self, name: str, max_bytes: int = 16 << 20) -> bytes | None:
        """A regular file's bytes (never through a symlink), or None."""
        return read_regular(self._check(), name, max_bytes)

    def snapshot(self, max_file_bytes: int = 1 << 20) -> Snapshot:
        """Names, kinds, permission bits and contents of the work dir (bounded; see
        :func:`~gym_llm_sandbox.snapshot_dir`: ``complete`` says if all of it)."""
        return snapshot_dir(self._check(), max_file_bytes=max_file_bytes)

    def usage(self, max_entries: int = 100_000) -> Usage:
        """Entries and bytes in the work dir, counted by a bounded walk that never
        raises (``complete`` is False past ``max_entries`` or too deep a tree)."""
        return tree_usage(self._check(), max_entries=max_entries)
