"""gym-llm plugin hooks of the code domain."""

from __future__ import annotations

from typing import Any

import gym_llm

#: Defaults shared by every code environment (documented on
#: :class:`gym_llm_code.envs.CodeEnv`).
COMMON_DEFAULTS: dict[str, Any] = {
    "max_turns": 1,
    "tests": "both",
    "random_tests": 10,
    "rotation_seed": None,
    "reward": "passed",
    "test_timeout_s": 2.0,
    "time_budget_s": 10.0,
    "sandbox": None,  # overrides of the domain's SandboxPolicy (the Hydra `sandbox` group)
}


#: id -> (entry point, description, default kwargs)
ENVIRONMENTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "code/PythonFunctions-v0": (
        "gym_llm_code.envs:PythonFunctionsEnv",
        "Implement a Python function from its signature and examples; hidden fixed "
        "and randomized unit tests, run in nsjail, decide the reward",
        COMMON_DEFAULTS,
    ),
    "code/Stdio-v0": (
        "gym_llm_code.envs:StdioEnv",
        "Competitive-programming problems with stdin/stdout tests; answer in Python "
        "or C++ (g++ in nsjail), outputs compared token by token",
        COMMON_DEFAULTS,
    ),
    "code/Dataset-v0": (
        "gym_llm_code.dataset_env:DatasetEnv",
        "Code datasets in HumanEval, MBPP or stdin/stdout format (.jsonl/.json/.parquet "
        "or a Hugging Face name), verified in nsjail; default: a bundled sample",
        {"path": None, "format": "auto", "max_turns": 1, "tests": "fixed", "reward": "passed",
         "test_timeout_s": 2.0, "time_budget_s": 10.0, "sandbox": None},
    ),
    "code/Repo-v0": (
        "gym_llm_code.repo.env:RepoEnv",
        "Agentic repository tasks in a sandbox session (interface changes across modules, bugs "
        "described by symptom, features from a spec; or your own project with repo=PATH): hidden "
        "tests on the source files decide the reward",
        {"kind": None, "difficulty": 0.5, "repo": None, "test_cmd": None, "max_turns": 30,
         "token_budget": 32_000, "sandbox": None},
    ),
}


@gym_llm.hookimpl
def gym_llm_register(registry: Any) -> None:
    registry.register_all(ENVIRONMENTS)


@gym_llm.hookimpl
def gym_llm_doctor() -> list[dict[str, Any]]:
    from gym_llm_sandbox import available_languages

    languages = available_languages()
    rows = []
    for lang, needed_by in (("python", "every code environment"), ("cpp", "C++ answers in code/Stdio-v0")):
        path = languages.get(lang)
        rows.append({
            "name": f"code: {lang} for {needed_by}",
            "ok": path is not None,
            "detail": path or "not found",
            "fix": "" if path else f"install {'g++' if lang == 'cpp' else 'python3'} on the host",
        })
    return rows
