"""gym-llm plugin hooks of the math domain (entry point ``gym_llm: math``).

Registration is cheap: entry points are ``"module:attr"`` strings, imported
only when an environment is made.
"""

from __future__ import annotations

from typing import Any

import gym_llm

#: id -> (entry point, description, default kwargs)
ENVIRONMENTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "math/Arithmetic-v0": (
        "gym_llm_math.envs:ArithmeticEnv",
        "Procedural integer, fraction and decimal arithmetic; difficulty scales digits, operators and nesting",
        {"difficulty": 0.0},
    ),
    "math/Algebra-v0": (
        "gym_llm_math.envs:AlgebraEnv",
        "Procedural linear equations, expansion, quadratics, 2x2 systems and simplification (symbolic answers)",
        {"difficulty": 0.0},
    ),
    "math/WordProblems-v0": (
        "gym_llm_math.envs:WordProblemsEnv",
        "Procedural multi-step word problems with units (money, distance, mass, length)",
        {"difficulty": 0.0},
    ),
    "math/Dataset-v0": (
        "gym_llm_math.envs:DatasetEnv",
        "Math dataset loader (.jsonl/.json/.parquet or Hugging Face; GSM8K, MATH or bare answers)",
        {},
    ),
    "math/PythonTool-v0": (
        "gym_llm_math.python_tool:PythonToolEnv",
        "Multi-turn math with a sandboxed python tool (sympy available), final answer in \\boxed{}",
        {"source": "arithmetic", "difficulty": 0.8},
    ),
}


@gym_llm.hookimpl
def gym_llm_register(registry: Any) -> None:
    registry.register_all(ENVIRONMENTS)


@gym_llm.hookimpl
def gym_llm_doctor() -> list[dict[str, Any]]:
    """One real symbolic comparison through a math-verify worker."""
    from gym_llm_math import verify

    result = verify("x^2 - 1", "\\boxed{(x - 1)(x + 1)}")
    ok = result.score == 1.0 and not result.error
    return [{
        "name": "math: math-verify worker",
        "ok": ok,
        "detail": "symbolic answers verified in a worker process" if ok else str(result.info),
        "fix": "" if ok else "pip install 'math-verify[antlr4_9_3]' (antlr4 must match omegaconf's 4.9)",
    }]
