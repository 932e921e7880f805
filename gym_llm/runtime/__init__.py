"""Layer 2, running environments. Imports :mod:`gym_llm.envs` and the sandbox,
never :mod:`gym_llm.apps`.

=============  ==============================================================
mixture        ``Mixture``: the one planner (weights, GRPO groups, held-out episodes)
schedule       ``StaticSchedule`` / ``AdaptiveSchedule``: each step's env weights
heldout        rotating held-out evals, per-env and per-domain curves, the forgetting alarm
pool           ``EnvPool``: the one pool of env instances; reset onto a task, then score
vector         ``VectorLLMEnv`` (``gym_llm.make_vec``): slots over a mixture
distributed    the same vector env with its instances in Ray actors
chat           ``ChatFormat``: token-exact chat-template accounting
rollout        the rollout engine and ``Trajectory`` (token-exact JSONL)
policies       transformers, vLLM and OpenAI-compatible policies
models         the locally built tiny model and the one atomic model cache
pretrained     model specs (hub id, folder, GGUF, ``pkg://``) to a loadable folder
monitoring     hack-signal fractions, the strict grader, alarms
=============  ==============================================================
"""
