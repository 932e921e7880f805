"""gym-llm reasoning domain: every task family of reasoning-gym as an
environment (``reasoning/<Family>-v0``), answered in ``<answer>...</answer>``
and scored by reasoning-gym's verifiers hardened on our side (no partial or
substring credit, no candidate lists, fixed verifiers; docs/reasoning.md).

``import gym_llm_reasoning`` is cheap: reasoning-gym is imported when a task
is generated or scored.
"""

from __future__ import annotations

from .families import catalogue, env_id
from .scoring import score_entry

__all__ = ["catalogue", "env_id", "score_entry"]
