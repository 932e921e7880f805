"""Data parallelism over ``torchrun`` processes (gloo on CPU, nccl on GPU).

Every rank holds the whole model, rolls out its own groups (its draws are
keyed by its rank) and computes gradients on them; before each optimizer step
the gradients are summed across ranks in one flat bucket, exactly what
``DistributedDataParallel`` does, but *after* gradient accumulation over
however many token-budget micro-batches that rank happened to need (DDP's
per-backward hooks require every rank to run the same number of backward
passes, which length-aware batching and dynamic sampling do not guarantee).
The loss of each micro-batch is divided by the step's *global* token or
sequence count (all-reduced first), so the summed gradient is the gradient of
the global batch's loss, independent of how it was split.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn

__all__ = ["DistContext", "init_distributed"]


@dataclass
class DistContext:
    """``rank``/``world_size`` of this process and its ``device``."""

    rank: int = 0
    world_size: int = 1
    device: torch.device = torch.device("cpu")

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def all_reduce_sum(self, values: list[float]) -> list[float]:
        """Sum a list of floats across ranks (identity on one process)."""
        if not self.enabled:
            return list(values)
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        dist.all_reduce(t)
        return t.tolist()

    def broadcast_parameters(self, module: nn.Module) -> None:
        """Make every rank start from rank 0's weights."""
        if self.enabled:
            for t in list(module.parameters()) + list(module.buffers()):
                dist.broadcast(t.data, src=0)

    def sum_gradients(self, params: list[nn.Parameter]) -> None:
        """Sum gradients across ranks in one flat bucket (missing grads count as 0)."""
        if not self.enabled:
            return
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        offset = 0
        for p in params:
            n = p.numel()
            p.grad = flat[offset:offset + n].view_as(p).to(p.dtype)
            offset += n

    def param_divergence(self, module: nn.Module) -> float:
        """Largest difference between any rank's parameters and rank 0's
        (0.0 when in sync), measured on a position-weighted checksum."""
        if not self.enabled:
            return 0.0
        with torch.no_grad():
            total = torch.zeros((), dtype=torch.float64, device=self.device)
            for i, p in enumerate(module.parameters()):
                flat = p.detach().reshape(-1).double()
                weights = torch.arange(1, flat.numel() + 1, dtype=torch.float64, device=flat.device)
                total += (i + 1) * (flat * weights).sum() / flat.numel()
            gathered = [torch.zeros_like(total) for _ in range(self.world_size)]
            dist.all_gather(gathered, total)
        return max(abs(float(g - gathered[0])) for g in gathered)

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()


def init_distributed() -> DistContext:
    """Join the process group that ``torchrun`` describes (``RANK``,
    ``WORLD_SIZE``, ``LOCAL_RANK``); a single process otherwise."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return DistContext(0, 1, device)
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device, backend = torch.device("cuda", local_rank), "nccl"
    else:
        device, backend = torch.device("cpu"), "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend=backend)
    return DistContext(dist.get_rank(), dist.get_world_size(), device)
