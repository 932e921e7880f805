"""What runs a program for a :class:`~gym_llm_sandbox.Sandbox`, once it is configured.

:class:`Runner` resolves the program (an argv, or code in a language, compiled in a
jail of its own first where the language needs it), takes a slot of its pool, picks
the path (a jail cloned by a resident nsjail, a pre-spawned per-run jail, a new
per-run jail, or an unjailed process for ``isolation="none"``) and turns what the
program did into an :class:`ExecResult`. It checks nothing about the machine: the
``Sandbox`` facade validates its configuration and proves isolation works first.
"""

from __future__ import annotations

import asyncio
import functools
import os
import resource
import shutil
from collections.abc import Mapping, Sequence

from gym_llm_sandbox import _nsjail, _resident
from gym_llm_sandbox._exec import RawResult, drive, run_process
from gym_llm_sandbox._files import (
    base_dir,
    check_name,
    jail_owner,
    read_regular,
    staged,
    to_bytes,
    write_tree,
)
from gym_llm_sandbox._jail import (
    BASE_ENV,
    Jail,
    JailSpec,
    cleanup_soon,
    decode_status,
    parse_log,
    reap_cgroups,
)
from gym_llm_sandbox._nsjail import SRCDIR, WORKDIR
from gym_llm_sandbox._pool import SandboxPool
from gym_llm_sandbox._spares import SPARES
from gym_llm_sandbox._types import ExecResult, Limits, SandboxError
from gym_llm_sandbox.languages import (
    MAX_INLINE_CODE,
    Language,
    get_language,
    library_dirs,
    resolve,
    runtime_library_dirs,
)

#: The compiled program's name in the run jail's ``/work`` on the resident path.
BINARY = ".gym_llm_prog"


class Runner:
    """Runs programs with a fixed configuration; every run gets a fresh jail.

    ``nsjail`` is the binary's path, or None to run unjailed. ``languages`` (canonical
    names) restricts ``run_code``, None allows all; ``extra_ro_mounts`` are already
    reachable by the jail (see :func:`~gym_llm_sandbox._jail.reachable_mount`).
    """

    def __init__(self, *, limits: Limits, nsjail: str | None, languages: tuple[str, ...] | None,
                 extra_ro_mounts: tuple[str, ...], env: dict[str, str], pool: SandboxPool,
                 prespawn: bool, resident: bool) -> None:
        self.limits = limits
        self.nsjail = nsjail
        self.languages = languages
        self.extra_ro_mounts = extra_ro_mounts
        self.env = env
        self.pool = pool
        self.prespawn = prespawn
        self.resident = resident

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
        """:meth:`Sandbox.arun` in ``session_dir`` as ``/work`` (None: a fresh one)."""
        if not argv:
            raise ValueError("argv must not be empty")
        exe = argv[0]
        if not os.path.isabs(exe):
            exe = shutil.which(exe, path=BASE_ENV["PATH"]) or exe
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
        """:meth:`Sandbox.arun_code` in ``session_dir`` as ``/work`` (None: a fresh one)."""
        lang = self._language(language)
        exe = resolve(lang.name)
        limits = limits or self.limits
        if lang.run_stdin is not None:
            assert lang.frame_program
            return await self._execute(
                lang.run_stdin(exe), limits=limits, ro_mounts=lang.mounts(exe),
                stdin=lang.frame_program(code, args) + to_bytes(stdin), files=files,
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
        # source on stdin; the run jail sees the binary and the libraries any program
        # of this compiler links.
        clim = lang.compile_limits_for(limits)
        run_mounts = list(runtime_library_dirs(lang.name, exe))
        if self._resident_init() is not None and session_dir is None:
            # The binary comes back as an output file of the compile jail and goes into
            # the run jail's /work as an input file: both jails are resident ones.
            comp = await self._execute(
                lang.compile_argv(exe, f"{WORKDIR}/{BINARY}"), limits=clim,
                ro_mounts=lang.mounts(exe), stdin=code, files=None, output_files=[BINARY],
                env=None, session_dir=None, lang=lang)
            comp.stage = "compile"
            binary = comp.files.pop(BINARY, None)
            if not comp.ok or binary is None:
                return comp
            run = await self._execute(
                [f"{WORKDIR}/{BINARY}", *args], limits=limits, ro_mounts=run_mounts,
                stdin=stdin, files={**(files or {}), BINARY: binary}, executable=(BINARY,),
                output_files=output_files, env=env, session_dir=None, lang=lang)
            run.compile_result = comp
            return run
        # Otherwise the binary is written to a host dir mounted at /src.
        with staged() as stage:
            out_dir = os.path.join(stage, "bin")
            os.mkdir(out_dir, 0o755)
            os.chown(out_dir, *jail_owner())
            comp = await self._execute(
                lang.compile_argv(exe, f"{SRCDIR}/prog"), limits=clim,
                ro_mounts=lang.mounts(exe), stdin=code, files=None, output_files=(), env=None,
                session_dir=None, lang=lang, rw_mounts=[f"{out_dir}:{SRCDIR}"])
            comp.stage = "compile"
            prog = os.path.join(out_dir, "prog")
            if not comp.ok or not os.path.isfile(prog) or os.path.islink(prog):
                return comp
            run = await self._execute(
                [f"{SRCDIR}/prog", *args], limits=limits,
                ro_mounts=[f"{out_dir}:{SRCDIR}", *run_mounts], stdin=stdin,
                files=files, output_files=output_files, env=env, session_dir=session_dir,
                lang=lang)
            run.compile_result = comp
            return run

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
        executable: Sequence[str] = (),
    ) -> ExecResult:
        """Run ``command`` in a fresh jail (the ``files`` named in ``executable`` get
        mode 0755, the others 0644)."""
        output_files = [check_name(n) for n in output_files]
        for name in files or ():
            check_name(name)
        full_env = {**BASE_ENV, **self.env, **(env or {})}
        async with self.pool.slot():
            if self.nsjail is None:
                with staged() as stage:
                    workdir = session_dir
                    if workdir is None and (files or output_files):
                        workdir = os.path.join(stage, "work")
                        os.mkdir(workdir, 0o700)
                    if files:
                        assert workdir is not None
                        write_tree(workdir, files, None)
                    raw = await self._run_unjailed(command, limits, stdin, full_env, workdir,
                                                   stage)
                    raw_exit, raw_sig, nsjail_timeout = decode_status(raw.returncode)
                    return self._result(raw, raw_exit, raw_sig, nsjail_timeout, limits, lang,
                                        workdir, output_files)
            # The work dir is a size-capped tmpfs inside the jail, unless files must go
            # in or come out: then it is a host dir (on /dev/shm) bind-mounted rw.
            spec = JailSpec(
                nsjail=self.nsjail, command=tuple(command), limits=limits,
                ro_mounts=(*ro_mounts, *self.extra_ro_mounts), rw_mounts=tuple(rw_mounts),
                env=tuple(full_env.items()),
                use_rlimit_as=lang.use_rlimit_as if lang else True,
                host_workdir=bool(files or output_files) and session_dir is None,
                init=_resident.init_binary())
            if ((init := self._resident_init()) is not None
                    and spec_residentable(spec, session_dir, src_files, files)):
                resident = await self._execute_resident(spec, init, stdin, limits, lang,
                                                        files or {}, output_files, executable)
                if resident is not None:
                    return resident
            # Only runs whose whole program arrives on stdin can use a jail started
            # before the program was known; every jail still serves exactly one run.
            reusable = (self.prespawn and session_dir is None and not src_files
                        and lang is not None and lang.run_stdin is not None)
            jail = await (SPARES.take(spec) if reusable else
                          Jail.start(spec, session_dir=session_dir, src_files=src_files))
            try:
                workdir = session_dir or jail.workdir
                if files:
                    assert workdir is not None
                    write_tree(workdir, files, jail_owner(), executable)
                # Under the init (spec.init) stdin carries its request and stdout its
                # frames; else they are the program's own.
                frames = _resident.Frames(limits.max_output_bytes)
                raw = await drive(jail.proc,
                                  stdin=(to_bytes(stdin) if spec.init is None else
                                         _resident.request((), (), (), 0, to_bytes(stdin))),
                                  wall_time_s=limits.wall_time_s,
                                  max_output_bytes=limits.max_output_bytes,
                                  on_cancel_kill=cleanup_soon,
                                  decode_stdout=None if spec.init is None else frames.feed)
                if raw.killed:
                    await reap_cgroups(raw.killed_children)
                raw_exit, raw_sig, nsjail_timeout = parse_log(jail.logfile, raw)
                if spec.init is None or not frames.hello:  # no init, or it never came up
                    return self._result(raw, raw_exit, raw_sig, nsjail_timeout, limits, lang,
                                        workdir, output_files)
                out = frames.outcome(timed_out=raw.timed_out, wall_time_s=raw.wall_time_s)
                return self._framed_result(out, limits, lang, killed=raw.killed,
                                           nsjail_timeout=nsjail_timeout, workdir=workdir,
                                           output_files=output_files)
            finally:
                if jail.proc.returncode is None:  # never driven (e.g. a bad file name)
                    await jail.discard()
                else:
                    # In a thread: a jail can leave millions of hard links or empty
                    # dirs (no tmpfs blocks, only kernel memory bounds them), seconds
                    # of unlinking that must not stall every other run on this loop.
                    await asyncio.to_thread(jail.remove_stage)

    async def _execute_resident(self, spec: JailSpec, init: str, stdin: str | bytes,
                                limits: Limits, lang: Language | None,
                                files: Mapping[str, str | bytes],
                                output_files: Sequence[str],
                                executable: Sequence[str]) -> ExecResult | None:
        """One run in a fresh jail cloned by the resident daemon of ``spec``; None when the
        daemon is alive but started no jail (it refuses connections past its ``--max_conns``
        while jails of cancelled runs are still being torn down): the program never ran,
        so the caller runs it in a per-run jail instead of failing the answer.

        A language that reads its program from stdin (Python) is on the daemon's command
        line, so a spare jail has its interpreter started already; any other argv travels
        in the request, as do input and output files (the jail's ``/work`` is its tmpfs)."""
        prestart = lang is not None and lang.run_stdin is not None
        key = _daemon_key(spec, init, prestart, self.pool.max_concurrency)
        cap = limits.max_file_mb * 1024 * 1024
        req = _resident.request(() if prestart else spec.command,
                                [(check_name(n), 0o755 if n in executable else 0o644, to_bytes(d))
                                 for n, d in files.items()],
                                output_files, cap, to_bytes(stdin))
        for attempt in (0, 1):
            daemon = await _resident.DAEMONS.get(key, self.pool.max_concurrency)
            try:
                out = await _resident.run(daemon, req, wall_time_s=limits.wall_time_s,
                                          max_output_bytes=limits.max_output_bytes,
                                          output_files=output_files, max_file_bytes=cap)
                break
            except SandboxError:
                if daemon.alive():
                    return None
                if attempt:
                    raise
                # The daemon died under us (killed from outside): restart it once.
        return self._framed_result(out, limits, lang, killed=False)

    def _framed_result(self, out: _resident.Outcome, limits: Limits, lang: Language | None, *,
                       killed: bool, nsjail_timeout: bool = False, workdir: str | None = None,
                       output_files: Sequence[str] = ()) -> ExecResult:
        """The result of a run under the jail init (resident or per-run), from what its
        frames reported; ``killed``: the host killed the per-run jail (wall time, output
        cap, malformed frames)."""
        stderr = out.stderr
        if out.malformed:  # never from our init: the program tampered with the jail
            stderr += f"\n[gym_llm_sandbox: {out.detail}]\n".encode()
        killed = killed or out.timed_out or out.output_truncated or out.malformed
        if out.status is None:
            raw_exit, raw_sig = -9, 9
        else:
            code = os.waitstatus_to_exitcode(out.status)
            raw_exit, raw_sig = (code, None) if code >= 0 else (code, -code)
        raw = RawResult(pid=0, returncode=raw_exit, stdout=out.stdout, stderr=stderr,
                        timed_out=out.timed_out, output_truncated=out.output_truncated,
                        killed=killed, wall_time_s=out.wall_time_s, killed_children=[])
        result = self._result(raw, raw_exit, raw_sig, nsjail_timeout, limits, lang, workdir,
                              output_files, program_cpu_s=out.cpu_time_s)
        result.files.update(out.files)
        return result

    def _resident_init(self) -> str | None:
        """The jail init, where this runner uses resident daemons and this host can have
        them; None otherwise."""
        if not self.resident or self.nsjail is None or _resident.DAEMONS.unavailable:
            return None
        return _resident.init_binary()

    def _result(self, raw: RawResult, raw_exit: int, raw_sig: int | None,
                nsjail_timeout: bool, limits: Limits, lang: Language | None,
                workdir: str | None, output_files: Sequence[str], *,
                program_cpu_s: float | None = None) -> ExecResult:
        """The run's result; ``program_cpu_s`` is the program's CPU time as the kernel
        counted it against RLIMIT_CPU, where the jail's init reported it."""
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
        self._classify_kill(result, raw, limits, lang, program_cpu_s)
        if workdir is not None:
            cap = limits.max_file_mb * 1024 * 1024
            for name in output_files:
                data = read_regular(workdir, name, cap)
                if data is not None:
                    result.files[name] = data
        return result

    def _classify_kill(self, r: ExecResult, raw: RawResult, limits: Limits,
                       lang: Language | None, program_cpu_s: float | None) -> None:
        """Set ``timed_out``/``memory_exceeded`` for a program that died of a limit.

        A SIGKILL we did not send comes from RLIMIT_CPU (soft = hard, so SIGKILL rather
        than SIGXCPU), the memory cgroup's OOM killer, or another process of the jail.
        ``program_cpu_s`` decides exactly: the kernel kills for CPU once that very clock
        reaches the limit, and it only grows. Every jail's init reports it (resident and
        per-run alike); only where no init could be built (no C compiler) is it None,
        and the elapsed time decides: a program cannot use ``cpu_time_s`` of CPU in less
        wall time unless it runs threads in parallel or its interpreter started before
        the run (a pre-spawned jail), and the kernel's tick-sampled count can run ahead
        of the real run time on a busy machine (documented limitation). nsjail's own
        time limit is in its log.
        """
        if r.timed_out or raw.killed:
            return
        if r.signal == 24:  # SIGXCPU
            r.timed_out = True
            return
        if r.signal == 9 and self.nsjail is not None:
            used = r.wall_time_s if program_cpu_s is None else program_cpu_s
            if used >= limits.cpu_time_s:
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

        return await run_process(command, stdin=to_bytes(stdin), wall_time_s=limits.wall_time_s,
                                 max_output_bytes=limits.max_output_bytes, env=env, cwd=cwd,
                                 preexec_fn=limit)


@functools.lru_cache(maxsize=64)
def _daemon_key(spec: JailSpec, init: str, prestart: bool, concurrency: int) -> tuple[str, ...]:
    """The daemon argv serving ``spec`` (built once per configuration, not per run)."""
    return _resident.daemon_argv(
        spec.nsjail, spec.command if prestart else (), limits=spec.limits,
        ro_mounts=spec.ro_mounts, env=dict(spec.env), use_rlimit_as=spec.use_rlimit_as,
        init=init, concurrency=concurrency)


def spec_residentable(spec: JailSpec, session_dir: str | None,
                      src_files: Mapping[str, str | bytes] | None,
                      files: Mapping[str, str | bytes] | None) -> bool:
    """Can a resident daemon serve this run? Programs whose files fit the jail's tmpfs
    ``/work``: a daemon's mounts are fixed, so per-run host dirs (sessions, sources
    too long for the command line, the per-run path's compiler output dir, all in the
    staging dir) need a per-run nsjail; input files
    travel over the connection, each at most ``max_file_mb`` (RLIMIT_FSIZE binds the
    init too) and all together at most half the tmpfs, none inside another (the
    per-run path reports that as ``ValueError``); and without the network (a jail with
    it shares its nsjail's network namespace, and a daemon's is private)."""
    stage = base_dir() + os.sep  # where every per-run host dir lives
    if (session_dir is not None or src_files or spec.rw_mounts or spec.limits.network
            or any(m.startswith(stage) for m in spec.ro_mounts)):
        return False
    names = [check_name(n) for n in files or ()]
    sizes = [len(to_bytes(d)) for d in (files or {}).values()]
    return (all(s <= spec.limits.max_file_mb << 20 for s in sizes)
            and sum(sizes) <= spec.limits.tmpfs_mb << 19
            and not set(names) & _ancestors(names))


def _ancestors(names: Sequence[str]) -> set[str]:
    """Every directory that holds one of ``names`` (``a`` and ``a/b`` for ``a/b/c``)."""
    out = set()
    for n in names:
        while (n := os.path.dirname(n)):
            out.add(n)
    return out
