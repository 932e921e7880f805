"""gym-llm instruct domain: verifiable instruction following.

Every IFEval instruction type and IFBench's offline-checkable ones
(:data:`CONSTRAINTS`, under their ids and argument names), attached to
generated requests (write, explain, list, summarise, rewrite) or read from
IFEval-format data; scored by :func:`score_response` (strict or partial, loose
optional) with a check that the request itself was done. docs/instruct.md
lists every constraint with its exact rule.
"""

from __future__ import annotations

from .constraints import CONSTRAINTS, component_keys, describe, loose_variants, validate, verdict
from .reward import REWARD_MODES, score_response

__all__ = ["CONSTRAINTS", "validate", "verdict", "describe", "loose_variants", "component_keys", "score_response",
           "REWARD_MODES"]
