"""Layer 2, running environments: the mixture planner, vector envs, the
rollout engine and its trajectories, policies (transformers, vLLM, any
OpenAI-compatible server), env instances in Ray actors and the hack monitors.
Imports :mod:`gym_llm.envs` and the sandbox, never :mod:`gym_llm.apps`.
"""
