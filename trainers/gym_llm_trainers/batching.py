"""Length-aware micro-batching under a token budget, and collation.

A micro-batch is bounded by *tokens* (rows x padded length), not by a count of
sequences: sequences are sorted by length and packed greedily, so short ones
travel together (little padding) and a long-context episode gets a micro-batch
of its own instead of running the trainer out of memory.

Collation left-pads every row so that all responses end at the last position:
the model is then asked for the logits of the last ``K + 1`` positions only
(``logits_to_keep``), where ``K`` is the longest response, and the prompt's
logits are never materialised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

__all__ = ["Sample", "MicroBatch", "token_budget_batches", "padding_fraction", "collate"]


@dataclass
class Sample:
    """One trajectory as the trainer sees it.

    ``prompt_ids`` + ``response_ids`` is the sequence; ``loss_mask`` (one per
    response token) is 1 on policy tokens; ``token_fields`` maps a name to one
    float per response token (engine log-probs, advantages, ...)."""

    prompt_ids: list[int]
    response_ids: list[int]
    loss_mask: list[int]
    token_fields: dict[str, list[float]] = field(default_factory=dict)
    index: int = -1

    def __len__(self) -> int:
        return len(self.prompt_ids) + len(self.response_ids)


@dataclass
class MicroBatch:
    """Padded tensors of one micro-batch. ``input_ids``/``attention_mask``/
    ``position_ids`` are ``[B, L]``; every response tensor is ``[B, K]``,
    right-aligned with the sequences (``mask`` is the loss mask, 0 on
    padding); ``indices`` are the samples' positions in the step batch."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    position_ids: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor
    fields: dict[str, torch.Tensor]
    indices: list[int]

    @property
    def response_len(self) -> int:
        return self.targets.shape[1]


def token_budget_batches(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Group indices of sequences of ``lengths`` into micro-batches whose padded
    size (rows x longest length) stays within ``budget`` tokens.

    Sequences are sorted longest first and packed greedily, so similar lengths
    share a micro-batch. A sequence longer than the budget gets one of its own
    (it is never split or dropped). Deterministic for the same input.
    """
    if budget < 1:
        raise ValueError(f"token budget must be >= 1, got {budget}")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # sorted longest first: the batch's padded length is its first element's
        width = lengths[current[0]] if current else lengths[i]
        if current and (len(current) + 1) * width > budget:
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def padding_fraction(lengths: Sequence[int], batches: Sequence[Sequence[int]]) -> float:
    """Share of padded positions across ``batches`` (0 = no waste)."""
    padded = sum(len(b) * max(lengths[i] for i in b) for b in batches if b)
    real = sum(lengths[i] for b in batches for i in b)
    return 1.0 - real / padded if padded else 0.0


def collate(samples: Sequence[Sample], pad_id: int) -> MicroBatch:
    """Left-pad ``samples`` into a :class:`MicroBatch` (see the module docstring)."""
    L = max(len(s) for s in samples)
    K = max(len(s.response_ids) for s in samples)
    B = len(samples)
    input_ids = torch.full((B, L), pad_id, dtype=torch.long)
    attention = torch.zeros((B, L), dtype=torch.long)
    mask = torch.zeros((B, K), dtype=torch.float32)
    names = sorted(samples[0].token_fields)
    fields = {n: torch.zeros((B, K), dtype=torch.float32) for n in names}
    for b, s in enumerate(samples):
        ids = s.prompt_ids + s.response_ids
        input_ids[b, L - len(ids):] = torch.tensor(ids, dtype=torch.long)
        attention[b, L - len(ids):] = 1
        R = len(s.response_ids)
        if R:
            mask[b, K - R:] = torch.tensor(s.loss_mask, dtype=torch.float32)
            for n in names:
                fields[n][b, K - R:] = torch.tensor(s.token_fields[n], dtype=torch.float32)
    position_ids = (attention.cumsum(-1) - 1).clamp(min=0)
    return MicroBatch(
        input_ids=input_ids,
        attention_mask=attention,
        position_ids=position_ids,
        targets=input_ids[:, L - K:],
        mask=mask,
        fields=fields,
        indices=[s.index for s in samples],
    )
