"""Value types of the sandbox: limits, results and the infrastructure error.

Data only: this module imports nothing of the sandbox (``SandboxPolicy``, which builds
a ``Sandbox``, lives beside it in ``core``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Isolation = Literal["nsjail", "none"]


class SandboxError(RuntimeError):
    """The sandbox itself failed (binary missing, jail setup error, bad configuration).

    This is never raised because the *program* failed: a crash, a non-zero exit, a
    timeout or a memory kill are reported in :class:`ExecResult`. Environments catch
    this to set ``info["reward_error"]`` instead of scoring the model.
    """


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run. All limits apply to the whole jailed process tree.

    ``memory_mb`` is enforced by a memory cgroup where the machine allows it and by
    RLIMIT_AS otherwise (``gym_llm_sandbox.diagnose()`` says which). ``cpu_time_s`` is
    RLIMIT_CPU per process; ``wall_time_s`` is enforced from Python to the
    millisecond. ``max_output_bytes`` caps stdout and stderr each; the run is killed as
    soon as a stream overflows. ``max_file_mb`` caps every file written (RLIMIT_FSIZE)
    and each output file read back; ``tmpfs_mb`` caps the whole work directory.
    """

    wall_time_s: float = 10.0
    cpu_time_s: int = 10
    memory_mb: int = 512
    max_processes: int = 32
    max_output_bytes: int = 1_000_000
    max_file_mb: int = 16
    tmpfs_mb: int = 64
    max_open_files: int = 256
    network: bool = False

    def __post_init__(self) -> None:
        for name in ("wall_time_s", "cpu_time_s", "memory_mb", "max_processes",
                     "max_output_bytes", "max_file_mb", "tmpfs_mb", "max_open_files"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be > 0, got {getattr(self, name)!r}")

    def replace(self, **changes: Any) -> Limits:
        """Return a copy with ``changes`` applied (unknown keys raise ``TypeError``)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base: Limits | None = None) -> Limits:
        """Build limits from a mapping (e.g. a Hydra ``sandbox`` group), over ``base``.

        Unknown keys raise ``ValueError`` so that a typo in a config cannot silently
        leave a limit at its default.
        """
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"unknown sandbox limit(s): {sorted(unknown)}; known: {sorted(names)}")
        return dataclasses.replace(base or cls(), **dict(data))


@dataclass
class ExecResult:
    """The outcome of one sandboxed run.

    ``exit_code`` follows :mod:`subprocess`: the exit status, or ``-N`` when the
    program was killed by signal N (``signal`` is then N). A run killed for exceeding
    its wall time has ``timed_out=True``; one killed for memory has
    ``memory_exceeded=True`` (detected from the cgroup OOM kill or the language's
    out-of-memory message). ``files`` holds the requested output files that existed
    (each at most ``max_file_mb``). For compiled languages a failed compilation is
    returned as the result itself with ``stage="compile"``.
    """

    exit_code: int
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    memory_exceeded: bool = False
    output_truncated: bool = False
    wall_time_s: float = 0.0
    isolation: Isolation = "nsjail"
    signal: int | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    stage: Literal["compile", "run"] = "run"
    compile_result: ExecResult | None = None

    @property
    def ok(self) -> bool:
        """True when the program ran to completion with exit status 0 within its limits."""
        return (self.exit_code == 0 and not self.timed_out and not self.memory_exceeded
                and not self.output_truncated)
