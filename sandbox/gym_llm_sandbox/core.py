"""The :class:`Sandbox` facade: fresh nsjail per run, sync and async, pooled, with sessions.

The package's modules import one way, each only from those listed before it:
``_types`` (value types), ``_exec`` (one process), ``_pyboot``, ``_nsjail`` (the
binary, host capabilities, command lines), ``languages``, ``_files`` (staging dirs and
symlink-safe handling of jail-written trees), ``_resident`` (resident ``nsjail -Ml``
daemons), ``_jail`` (one per-run nsjail), ``_spares`` (pre-spawned jails), ``_pool``
(concurrency), ``_runner`` (:class:`~gym_llm_sandbox._runner.Runner`: running one
program), ``_session`` (persistent work dirs), this module, ``doctor``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gym_llm_sandbox import _nsjail, _resident
from gym_llm_sandbox._jail import FIX_JAIL, FIX_NSJAIL, reachable_mount
from gym_llm_sandbox._pool import SandboxPool, default_pool
from gym_llm_sandbox._runner import Runner
from gym_llm_sandbox._session import SandboxSession
from gym_llm_sandbox._spares import SPARES
from gym_llm_sandbox._types import ExecResult, Isolation, Limits, SandboxError
from gym_llm_sandbox.aio import background_loop
from gym_llm_sandbox.languages import get_language

log = logging.getLogger("gym_llm_sandbox")


@dataclass(frozen=True)
class SandboxPolicy:
    """Everything a domain declares about its sandbox, in one place.

    A plugin defines one ``POLICY = SandboxPolicy(...)`` and builds its sandbox with
    ``policy.sandbox()`` or ``Sandbox.from_config(cfg.sandbox, policy=POLICY)`` so a
    Hydra ``sandbox`` override applies on top. ``extra_ro_mounts`` are host paths made
    visible read-only at the same path inside the jail (``"src:dst"`` to rename);
    name nothing secret.
    """

    limits: Limits = field(default_factory=Limits)
    languages: tuple[str, ...] = ("python",)
    extra_ro_mounts: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)

    def sandbox(self, **kwargs: Any) -> Sandbox:
        """Build a :class:`Sandbox` with this policy (kwargs override)."""
        return Sandbox.from_policy(self, **kwargs)


class Sandbox(Runner):
    """Runs untrusted programs, each in a fresh nsjail (see ``docs/sandbox.md``).

    ``Sandbox(limits=Limits(...))`` refuses with :class:`SandboxError` where nsjail
    cannot isolate; ``isolation="none"`` runs programs as plain subprocesses (rlimits
    and timeouts only) and warns loudly. ``languages`` restricts ``run_code`` to a
    subset of the language table; ``extra_ro_mounts`` are host paths the jail may read.
    All methods are safe to call from many threads and coroutines at once.
    ``resident`` runs programs (Python, bash, JavaScript, C/C++ compile and run, any
    ``run`` argv, files in and out; not sessions) in a fresh jail cloned by resident
    ``nsjail -Ml`` daemons of the configuration (no nsjail start-up per run); otherwise, or where
    no C compiler can build the jail init, each run starts nsjail. ``prespawn`` keeps the next such per-run jail of a configuration started
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
        names = tuple(get_language(n).name for n in languages) if languages is not None else None
        mounts = tuple(extra_ro_mounts)
        own_env = dict(env or {})
        pool = pool or (SandboxPool(max_concurrency) if max_concurrency else default_pool())
        nsjail: str | None
        if isolation == "nsjail":
            nsjail = _check_isolation()
        elif isolation == "none":
            nsjail = None
            msg = ("gym_llm_sandbox: isolation='none' -- untrusted code will run UNJAILED as "
                   f"uid {os.getuid()} with full access to this machine's files and network; "
                   "use only for debugging trusted code")
            warnings.warn(msg, RuntimeWarning, stacklevel=2)
            log.warning(msg)
        else:
            raise ValueError(f"isolation must be 'nsjail' or 'none', got {isolation!r}")
        for m in mounts:
            src = m.split(":", 1)[0]
            if not os.path.exists(src):
                raise SandboxError(f"extra read-only mount {src!r} does not exist")
        if nsjail:
            mounts = tuple(reachable_mount(m) for m in mounts)
        super().__init__(limits=limits or Limits(), nsjail=nsjail, languages=names,
                         extra_ro_mounts=mounts, env=own_env, pool=pool, prespawn=prespawn,
                         resident=resident)
        self.isolation: Isolation = isolation

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
        return background_loop().run(self.arun(argv, **kwargs))

    def run_code(self, language: str, code: str, **kwargs: Any) -> ExecResult:
        """Synchronous :meth:`arun_code`."""
        return background_loop().run(self.arun_code(language, code, **kwargs))

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


@functools.lru_cache(maxsize=1)
def _check_isolation() -> str:
    """Find nsjail and prove it can jail here (once per process); else SandboxError.

    The proof is a real jailed run of ``/usr/bin/env`` by a plain :class:`Runner`
    (its own one-slot pool, no pre-spawning, no resident daemon).
    """
    path, how = _nsjail.find_nsjail()
    if path is None:
        raise SandboxError(f"nsjail not found ({how}). Fix: {FIX_NSJAIL}. To run without "
                           "isolation (trusted code only) pass isolation='none'.")
    probe = Runner(limits=Limits(wall_time_s=10), nsjail=path, languages=None,
                   extra_ro_mounts=(), env={}, pool=SandboxPool(1), prespawn=False,
                   resident=False)
    try:
        r = background_loop().run(probe._arun(
            ["/usr/bin/env"], stdin=b"", files=None, output_files=(), limits=None, env=None,
            session_dir=None))
    except SandboxError as e:
        raise SandboxError(f"nsjail ({path}, found via {how}) cannot isolate on this "
                           f"machine: {e}") from None
    if r.exit_code != 0:
        raise SandboxError(f"nsjail ({path}) started but a trivial jailed program failed "
                           f"(exit {r.exit_code}): {r.stderr[-500:]}\nFix: {FIX_JAIL}")
    return path


def release_spares() -> None:
    """End all idle pre-spawned jails and stop the resident nsjail daemons (and so
    their jails) now, waiting until they are gone; they come back on the next run that
    needs them. For tests and shutdown."""
    for loop in set(SPARES.loops()):
        if loop.is_running():
            fut = asyncio.run_coroutine_threadsafe(SPARES.drain(), loop)
            fut.result(timeout=30)
    _resident.DAEMONS.stop_all()
