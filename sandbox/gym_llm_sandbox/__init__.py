"""Run untrusted code in a fresh nsjail per run: isolated, resource-limited, fast.

>>> from gym_llm_sandbox import Sandbox, Limits
>>> sb = Sandbox(limits=Limits(wall_time_s=10, memory_mb=512))
>>> sb.run_code("python", "print(1 + 1)").stdout
'2\\n'

See ``docs/sandbox.md`` for limits, languages, isolation and measured costs.
"""

from gym_llm_sandbox._files import FileState, Snapshot, Usage, snapshot_dir
from gym_llm_sandbox._pool import SandboxPool, default_pool
from gym_llm_sandbox._session import SandboxSession
from gym_llm_sandbox._types import ExecResult, Isolation, Limits, SandboxError
from gym_llm_sandbox.core import Sandbox, SandboxPolicy
from gym_llm_sandbox.doctor import diagnose
from gym_llm_sandbox.languages import ALIASES, LANGUAGES, Language, available_languages

__all__ = [
    "ALIASES",
    "LANGUAGES",
    "ExecResult",
    "FileState",
    "Isolation",
    "Language",
    "Limits",
    "Sandbox",
    "SandboxError",
    "SandboxPolicy",
    "SandboxPool",
    "SandboxSession",
    "Snapshot",
    "Usage",
    "available_languages",
    "default_pool",
    "diagnose",
    "snapshot_dir",
]
