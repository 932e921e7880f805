"""Environments beyond one process: :mod:`gym_llm.runtime.distributed.ray_vec` runs a
vector env's instances in Ray actors (``gym_llm.make_vec(..., backend="ray")``).
Importing this package does not import Ray; the submodule does."""
