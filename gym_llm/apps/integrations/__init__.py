"""gym-llm environments inside other trainers.

One thin module per peer, each importing its peer package lazily (install
the matching extra, e.g. ``pip install -e ./sandbox -e ".[trl]"`` from a
checkout; docs/integrations.md gives each peer's command):

* :mod:`gym_llm.apps.integrations.trl`: datasets, reward functions,
  ``environment_factory`` and ``rollout_func`` for TRL's ``GRPOTrainer``;
* :mod:`gym_llm.apps.integrations.verl`: ``compute_score``, a Parquet exporter and
  the ``gym_llm`` agent loop for verl;
* :mod:`gym_llm.apps.integrations.skyrl` and :mod:`gym_llm.apps.integrations.verifiers`.

Every adapter scores through :mod:`gym_llm.apps.integrations._tasks` (task
identity carried in a row, and ``env.step`` on that task), so the score a
peer sees is exactly the score ``env.step`` gives the same completion on the
same task. Importing this package imports no peer.
"""

from gym_llm.apps.integrations._tasks import (
    TASK_COLUMNS,
    Score,
    TaskColumnError,
    TaskRef,
    ascore,
    score,
    score_row,
    task_rows,
)

__all__ = ["TASK_COLUMNS", "Score", "TaskColumnError", "TaskRef", "ascore", "score", "score_row", "task_rows"]
