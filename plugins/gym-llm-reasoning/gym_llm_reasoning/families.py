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
* The entry cache: every generated entry is kept on disk, in
  ``$GYM_LLM_CACHE/reasoning/entries-<version>.sqlite`` (pickled; one row per
  family, difficulty, block and index), and read from there by any later
  process: a search-based generator (puzzle24: about half a second a task)
  pays once per machine. :func:`pregenerate` fills it ahead of a run
  (``python -m gym_llm_reasoning.pregenerate``). An unwritable or unreadable
  cache is no error: entries are generated as without it.
"""

from __future__ import annotations

import contextlib
import decimal
import functools
import json
import os
import pickle
import sqlite3
import sys
import tempfile
import threading
import warnings
from importlib.metadata import version
from pathlib import Path
from typing import Any

__all__ = [
    "EXCLUDED", "LEVEL_FLOORS", "BLOCK_SIZE", "catalogue", "env_id", "family_of", "dataset", "verifier", "generate",
    "pregenerate", "reasoning_gym_version",
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


@functools.cache
def reasoning_gym_version() -> str:
    """The installed reasoning-gym's version."""
    return version("reasoning-gym")


def env_id(family: str) -> str:
    """``reasoning/<CamelCase family>-v0``: each ``_``-separated part capitalised."""
    return "reasoning/" + "".join(p[:1].upper() + p[1:] for p in family.split("_")) + "-v0"


def _cache_root() -> Path:
    return Path(os.environ.get("GYM_LLM_CACHE") or os.path.join(Path.home(), ".cache", "gym_llm")) / "reasoning"


def _cache_file() -> Path:
    return _cache_root() / f"catalogue-{reasoning_gym_version()}.json"


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


_UNSET = object()


class _EntryCache:
    """Generated entries on disk (see the module doc): one sqlite database per
    reasoning-gym version and cache root, shared by processes (WAL), read and
    written under one lock per process. The first failure to open, read or
    write it turns it off for the process with one warning."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._root: object = _UNSET  # the GYM_LLM_CACHE value (None: unset) the database belongs to
        self._path: Path | None = None
        self._pid = os.getpid()
        self._off = False

    def _connect(self) -> sqlite3.Connection | None:
        if self._pid != os.getpid():  # a forked child: the parent's connection is not its to use
            self._db, self._root, self._pid = None, _UNSET, os.getpid()
        root = os.environ.get("GYM_LLM_CACHE")
        if self._root is _UNSET or self._root != root:  # first use, or GYM_LLM_CACHE changed (tests)
            if self._db is not None:
                self._db.close()
            self._root, self._off = root, False
            self._db, self._path = None, _cache_root() / f"entries-{reasoning_gym_version()}.sqlite"
        path = self._path
        if self._db is None and not self._off:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=60, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS entries (family TEXT, difficulty REAL, block INTEGER, "
                       "idx INTEGER, entry BLOB, PRIMARY KEY (family, difficulty, block, idx))")
            self._db = db
        return self._db

    def _run(self, action: Any) -> Any:
        with self._lock:
            try:
                db = self._connect()
                return None if db is None else action(db)
            except (OSError, sqlite3.Error, pickle.UnpicklingError) as e:
                self._off = True
                warnings.warn(f"reasoning entry cache {self._path} turned off for this process: {e}", stacklevel=3)
                return None

    def get(self, key: tuple[str, float, int, int]) -> dict[str, Any] | None:
        row = self._run(lambda db: db.execute(
            "SELECT entry FROM entries WHERE family=? AND difficulty=? AND block=? AND idx=?", key).fetchone())
        return pickle.loads(row[0]) if row else None

    def put(self, key: tuple[str, float, int, int], entry: dict[str, Any]) -> None:
        try:
            blob = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # an entry holding something pickle cannot write is generated each time
            return
        self._run(lambda db: db.execute("INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?, ?)", (*key, blob)))


_ENTRIES = _EntryCache()


def verifier(family: str, difficulty: float) -> Any:
    """reasoning-gym's ``score_answer`` for ``family`` at ``difficulty``: the
    method of seed block 0's dataset object, for an entry of any block (the
    blocks' configurations differ only in their seed, which a verdict does not
    read), so a process that reads its tasks from the entry cache makes one
    dataset object per family and difficulty (some load data), not one per block."""
    return dataset(family, difficulty, 0).score_answer


def generate(family: str, difficulty: float, block: int, index: int) -> dict[str, Any]:
    """reasoning-gym's entry (``question``, ``answer``, ``metadata``) at
    ``index`` of seed block ``block``: the same in any process; read from
    the entry cache when an earlier process generated it.

    What a generator prints (bf's compiler prints progress dots) goes to
    stderr: stdout belongs to the program using the env (a JSON answer, a
    stdio protocol). A generator that sets the thread's decimal context
    (decimal_arithmetic sets ``getcontext().prec``) sets a local copy: every
    other Decimal computation of the process (other domains' verifiers) keeps
    its own precision."""
    key = (family, float(difficulty), block, index)
    entry = _ENTRIES.get(key)
    if entry is None:
        with contextlib.redirect_stdout(sys.stderr), decimal.localcontext():
            entry = dataset(family, difficulty, block)[index]
        _ENTRIES.put(key, entry)
    return entry


def pregenerate(family: str, difficulty: float, blocks: range) -> int:
    """Generate every entry of ``blocks`` of ``family`` at ``difficulty`` into
    the entry cache (those already there are read, not generated); the count
    of entries reasoning-gym could not generate (its generator raised)."""
    failed = 0
    for block in blocks:
        for index in range(BLOCK_SIZE):
            try:
                generate(family, difficulty, block, index)
            except Exception:
                failed += 1
    return failed
