"""Layer 1, the environment contract: what a plugin author writes against.

:mod:`~gym_llm.envs.core` (``LLMEnv``, ``SingleTurnEnv``, ``Turn``), tasks and
splits, rewards, the one parser each for answers and tool calls, tool envs,
the registry of ids and the plugin hooks. Imports nothing of gym-llm above it.
"""
