"""Layer 3, what users run: the ``gym-llm`` command, ``gym-llm-eval``, the env
server, the run report, the adapters for other trainers (TRL, verl, SkyRL,
verifiers), the Hydra apps' shared helper and their configs.
"""
