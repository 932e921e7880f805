"""The environments a training run makes: the `sandbox` config group reaches
every code-running environment of the mixture, train and held-out."""

from __future__ import annotations

from gym_llm_sandbox.aio import run_sync
from gym_llm_trainers.collection import RolloutCollector, run_entries
from gym_llm_trainers.curriculum import Curriculum
from gym_llm_trainers.distributed import DistContext
from gym_llm_trainers.train import compose, run_config


def _collector(*overrides: str) -> RolloutCollector:
    cfg = run_config(compose(list(overrides)))
    entries = run_entries(cfg)
    curriculum = Curriculum(cfg.trainer.curriculum, {n: float(e.kwargs.get("difficulty", 0.0)) for n, e in entries.items()})
    return RolloutCollector(cfg, entries, cfg.mixture.mixture(), curriculum, DistContext())


def _sandbox_of(collector: RolloutCollector, entry: str, split: str):
    """The sandbox of an env the run's vector env of ``split`` makes for ``entry``."""
    vec = collector.vec(split, 1)
    try:
        run_sync(vec.areset_at(0, entry=entry, seed=0))
        return vec.env_at(0).unwrapped.sandbox  # built from the env's sandbox kwarg on first use
    finally:
        collector.close()


def test_the_sandbox_group_reaches_the_code_envs_train_and_heldout():
    strict = _collector("sandbox=strict")
    functions = strict.entries["functions"].kwargs["sandbox"]
    assert functions["memory_mb"] == 256 and functions["wall_time_s"] == 5
    assert None not in functions.values()  # nulls mean "the domain's own value": left out
    assert "sandbox" not in strict.entries["arithmetic"].kwargs  # takes no sandbox kwarg
    for split in ("train", "heldout"):
        limits = _sandbox_of(_collector("sandbox=strict"), "functions", split).limits
        assert (limits.memory_mb, limits.wall_time_s, limits.max_processes) == (256, 5, 16)
    # the default group keeps the code domain's own limits (1 GiB), so the above is the group's doing
    assert _sandbox_of(_collector(), "functions", "train").limits.memory_mb == 1024


def test_an_entry_s_own_sandbox_kwarg_wins():
    col = _collector("sandbox=strict", "+mixture.envs.functions.kwargs.sandbox={memory_mb: 512}")
    assert col.entries["functions"].kwargs["sandbox"] == {"memory_mb": 512}
    assert _sandbox_of(col, "functions", "heldout").limits.memory_mb == 512


def test_the_warm_start_and_the_trainer_see_the_run_s_sandbox(run_dir):
    from trainer_support import make_trainer

    tr = make_trainer(run_dir, "mixture=code_only", "sandbox=strict")
    assert tr.entries["functions"].kwargs["sandbox"]["memory_mb"] == 256  # what reference_examples makes
    assert tr.collector.env_kwargs("functions", "heldout")["sandbox"]["memory_mb"] == 256
