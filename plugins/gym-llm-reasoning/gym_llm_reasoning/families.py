"""reasoning-gym's task families, as reasoning-gym's own registry lists them.

* :func:`catalogue`: every family of the installed reasoning-gym
  (``reasoning_gym.factory.DATASETS``), with its category, a one-line
  description and whether it has a curriculum. Reading the registry imports
  all of reasoning-gym (about a second, matplotlib included), too slow for
  every ``import gym_llm``: the catalogue is kept per reasoning-gym version in
  ``$GYM_LLM_CACHE/reasoning/catalogue-<version>.json`` (default
  ``~/.cache/gym_llm``), written on first use. A newer reasoning-gym has a new
  version, so its families show up without code.
* :func:`env_id`: the one naming rule, ``reasoning/<CamelCase family>-v0``
  (``knights_knaves`` -> ``reasoning/KnightsKnaves-v0``, ``arc_1d`` ->
  ``reasoning/Arc1d-v0``).
* :func:`generate`: the task at (block, index) of a family at a difficulty.
  Difficulty ``d`` in [0, 1] sets every attribute of the family's curriculum
  to level ``round(d * (levels - 1))``; the configuration is reasoning-gym's
  own (``generate_configuration``: a range attribute spans its lowest level
  to the chosen one).
"""

from __future__ import annotations

import contextlib
import decimal
import functools
import json
import os
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

__all__ = [
    "EXCLUDED", "LEVEL_FLOORS", "BLOCK_SIZE", "catalogue", "env_id", "family_of", "dataset", "generate",
    "reasoning_gym_version",
]

#: Registry names that are no task family of their own, with the reason
#: (docs/reasoning.md lists them).
EXCLUDED = {
    "composite": "a weighted mix of other families (it needs a list of datasets to mix); "
                 "gym-llm's mixtures do that across every domain",
    "knight_swap": "its generator gives up on most seeds at every curriculum level (\"no valid puzzle "
                   "after 100 boards\"), so one task takes seconds to minutes of retries: it would stall "
                   "rollouts",
    "sokoban": "its curriculum's boards (6x6 to 19x19 with 4 to 10 boxes) took 1 to 36 s a task to "
               "generate here (a search for a solvable board): it would stall rollouts",
    **{family: "its generator iterates a set of strings, so the task at a seed depends on the process's "
               "PYTHONHASHSEED: tasks, ids and splits would differ from one process to the next"
       for family in ("isomorphic_strings", "polynomial_multiplication", "ransom_note")},
}

#: family -> {curriculum attribute: lowest level used}, where reasoning-gym's
#: lowest level makes a generator that never returns (puzzle24 at level 0 draws
#: four 1s and retries until they make 24).
LEVEL_FLOORS = {"puzzle24": {"value": 1}}

#: Tasks per reasoning-gym dataset object (one seed block).
BLOCK_SIZE = 500


def reasoning_gym_version() -> str:
    """The installed reasoning-gym's version."""
    return version("reasoning-gym")


def env_id(family: str) -> str:
    """``reasoning/<CamelCase family>-v0``: each ``_``-separated part capitalised."""
    return "reasoning/" + "".join(p[:1].upper() + p[1:] for p in family.split("_")) + "-v0"


def _cache_file() -> Path:
    root = os.environ.get("GYM_LLM_CACHE") or os.path.join(Path.home(), ".cache", "gym_llm")
    return Path(root) / "reasoning" / f"catalogue-{reasoning_gym_version()}.json"


def _read_registry() -> dict[str, dict[str, Any]]:
    from reasoning_gym.factory import CURRICULA, DATASETS

    out = {}
    for name in sorted(DATASETS):
        cls = DATASETS[name][0]
        doc = (cls.__doc__ or "").strip().split("\n")[0].strip()
        parts = cls.__module__.split(".")
        out[name] = {
            "category": parts[1] if len(parts) >= 3 else "other",
            "description": doc or f"reasoning-gym's {name}",
            "curriculum": name in CURRICULA,
        }
    return out


@functools.cache
def catalogue() -> dict[str, dict[str, Any]]:
    """Family name -> ``{"category", "description", "curriculum"}`` for every
    family of the installed reasoning-gym (:data:`EXCLUDED` left out), read
    from the per-version cache file, or from the registry (and then cached)."""
    path = _cache_file()
    try:
        families = json.loads(path.read_text())
    except (OSError, ValueError):
        families = _write_cache(path)
    return {name: info for name, info in families.items() if name not in EXCLUDED}


def _write_cache(path: Path) -> dict[str, dict[str, Any]]:
    """Every family of the registry, written to ``path`` (atomically; an
    unwritable cache is no error)."""
    families = _read_registry()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as f:
            json.dump(families, f, indent=0, sort_keys=True)
        os.replace(f.name, path)
    except OSError:
        pass
    return families


def family_of(env_id_: str) -> str:
    """The family behind a ``reasoning/`` id (``KeyError`` if none)."""
    for name in catalogue():
        if env_id(name) == env_id_:
            return name
    raise KeyError(env_id_)


def _config(family: str, difficulty: float, seed: int) -> Any:
    from reasoning_gym.coaching.base_curriculum import DefaultCurriculumContext, RangeAttributeMode
    from reasoning_gym.factory import DATASETS, create_curriculum, has_curriculum

    defaults = {"seed": seed, "size": BLOCK_SIZE}
    if not has_curriculum(family):
        return DATASETS[family][1](**defaults)
    curriculum = create_curriculum(family)
    floors = LEVEL_FLOORS.get(family, {})
    levels = {name: max(round(difficulty * (len(attr.levels) - 1)), floors.get(name, 0))
              for name, attr in curriculum.attributes.items()}
    # some curricula make configs their own validation refuses (knight_swap's ranges
    # always start at 4 nodes, where 6 are the minimum): then each range from the chosen
    # level up (reasoning-gym's UPPER_BOUND mode); then every attribute one level up, one
    # down (caesar_cipher's and rubiks_cube's top levels are over their own limits), two...
    contexts = [DefaultCurriculumContext(mode=m) for m in (RangeAttributeMode.INCLUSIVE, RangeAttributeMode.UPPER_BOUND)]
    most = max((len(a.levels) for a in curriculum.attributes.values()), default=1)
    for shift in [0, *(s for k in range(1, most) for s in (k, -k))]:
        for name, attr in curriculum.attributes.items():
            curriculum.set_attr_level(name, min(max(levels[name] + shift, 0), len(attr.levels) - 1))
        for context in contexts:
            config = curriculum.generate_configuration(defaults, context)
            try:
                if hasattr(config, "validate"):
                    config.validate()
                return config
            except AssertionError:
                continue
    return config


@functools.lru_cache(maxsize=1024)
def dataset(family: str, difficulty: float, block: int) -> Any:
    """reasoning-gym's dataset object of one seed block (cached: some
    families load data or build tables when made)."""
    from reasoning_gym.factory import DATASETS

    return DATASETS[family][0](config=_config(family, difficulty, seed=block))


def generate(family: str, difficulty: float, block: int, index: int) -> dict[str, Any]:
    """reasoning-gym's entry (``question``, ``answer``, ``metadata``) at
    ``index`` of seed block ``block``: the same in any process.

    What a generator prints (bf's compiler prints progress dots) goes to
    stderr: stdout belongs to the program using the env (a JSON answer, a
    stdio protocol). A generator that sets the thread's decimal context
    (decimal_arithmetic sets ``getcontext().prec``) sets a local copy: every
    other Decimal computation of the process (other domains' verifiers) keeps
    its own precision."""
    with contextlib.redirect_stdout(sys.stderr), decimal.localcontext():
        return dataset(family, difficulty, block)[index]
