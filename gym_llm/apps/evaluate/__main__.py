"""``python -m gym_llm.apps.evaluate``: the same as ``gym-llm-eval``."""

from gym_llm.apps.evaluate.app import main

main()
