"""``python -m gym_llm.evaluate``: the same as ``gym-llm-eval``."""

from .app import main

main()
