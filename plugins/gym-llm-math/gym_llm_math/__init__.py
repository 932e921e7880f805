"""gym-llm math domain: procedural arithmetic, algebra and word problems, a
dataset loader (GSM8K / MATH formats) and a Python-tool environment, all scored
by :func:`verify` (boxed final answer, math-verify behind an exact fast path
for plain numbers, hedging and timeouts handled).

``import gym_llm_math`` is cheap: math-verify runs in worker processes that
start on the first answer that is not a plain number.
"""

from __future__ import annotations

from .answers import extract_gold
from .verifier import Verifier, default_verifier, verify

__all__ = ["verify", "Verifier", "default_verifier", "extract_gold"]
