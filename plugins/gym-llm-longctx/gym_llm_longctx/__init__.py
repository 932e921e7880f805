"""gym-llm-longctx: long-context environments for gym-llm.

Synthetic haystacks sized in tokens by measuring (``context_tokens``,
``tokenizer``), exact scoring with an anti-hedging rule, and multi-turn
document navigation. Everything is generated locally from seeds.

Environments (registered by :mod:`gym_llm_longctx.plugin`):
``longctx/Needle-v0``, ``longctx/VariableTracking-v0``,
``longctx/WordFrequency-v0``, ``longctx/MultiHopQA-v0``,
``longctx/DocNavigator-v0``.

The verifier is usable on its own: :func:`score_answer`, :func:`reward_fn`
(TRL and verl take the environments themselves: :mod:`gym_llm.apps.integrations`).
"""

from __future__ import annotations

from .rewards import answer_span, named, reward_fn, score_answer, string_match_all
from .tokens import ApproxCounter, HFCounter, TokenCounter, load_counter

__all__ = [
    "answer_span", "named", "reward_fn", "score_answer", "string_match_all",
    "ApproxCounter", "HFCounter", "TokenCounter", "load_counter",
]
