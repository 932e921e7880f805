"""The difficulty curriculum: each environment's ``difficulty`` kwarg moves
towards a target success rate (``trainer.curriculum``)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .config import CurriculumConfig

__all__ = ["Curriculum"]


@dataclass
class _EnvState:
    difficulty: float
    window: deque
    held: bool = False  # the last full window asked for a move past a bound


class Curriculum:
    """Keeps each environment's success rate near a target by moving its
    ``difficulty`` kwarg.

    After each step, :meth:`update` records the episodes' successes (reward >=
    ``success_threshold``) in a moving window per environment; once the window
    is full, a success rate above ``target + tolerance`` raises the difficulty
    by ``step_size`` (too easy), below ``target - tolerance`` lowers it, and the
    window is cleared so the next decision sees only the new difficulty.
    """

    def __init__(self, cfg: CurriculumConfig, initial: Mapping[str, float]):
        self.cfg = cfg
        self.envs = {
            name: _EnvState(float(d), deque(maxlen=cfg.window)) for name, d in initial.items()
        }

    def difficulty(self, name: str) -> float:
        return self.envs[name].difficulty

    def success_rate(self, name: str) -> float | None:
        w = self.envs[name].window
        return sum(w) / len(w) if w else None

    def update(self, name: str, rewards: Sequence[float]) -> bool:
        """Record episode rewards of env ``name``; returns True when its
        difficulty changed."""
        state = self.envs[name]
        state.window.extend(float(r >= self.cfg.success_threshold) for r in rewards)
        if len(state.window) < self.cfg.window:
            return False
        rate = sum(state.window) / len(state.window)
        if rate > self.cfg.target_success + self.cfg.tolerance:
            new = state.difficulty + self.cfg.step_size
        elif rate < self.cfg.target_success - self.cfg.tolerance:
            new = state.difficulty - self.cfg.step_size
        else:
            return False
        new = round(min(self.cfg.max_difficulty, max(self.cfg.min_difficulty, new)), 6)
        state.window.clear()
        state.held = new == state.difficulty
        if state.held:
            return False
        state.difficulty = new
        return True

    def steering(self, name: str) -> bool:
        """Whether the curriculum is still moving env ``name``: its last full
        window did not ask for a move past a bound (too easy at
        ``max_difficulty``, too hard at ``min_difficulty``). The adaptive
        schedule keeps such an env drawn, so its window fills."""
        return self.cfg.min_difficulty < self.cfg.max_difficulty and not self.envs[name].held

    def unsolved_at_hardest(self, name: str, success: float) -> bool:
        """Whether env ``name`` is at ``max_difficulty`` with a success rate
        (over its window so far) of at most ``success``."""
        rate = self.success_rate(name)
        return self.envs[name].difficulty >= self.cfg.max_difficulty and rate is not None and rate <= success

    def metrics(self) -> dict[str, float]:
        """``curriculum/<name>/difficulty`` and ``.../success`` for logging."""
        out = {}
        for name, s in self.envs.items():
            out[f"curriculum/{name}/difficulty"] = s.difficulty
            rate = self.success_rate(name)
            if rate is not None:
                out[f"curriculum/{name}/success"] = rate
        return out

    def state_dict(self) -> dict[str, Any]:
        return {n: {"difficulty": s.difficulty, "window": list(s.window), "held": s.held} for n, s in self.envs.items()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        for name, s in state.items():
            if name in self.envs:
                self.envs[name].difficulty = float(s["difficulty"])
                self.envs[name].window = deque(s["window"], maxlen=self.cfg.window)
                self.envs[name].held = bool(s.get("held", False))
