"""gym-llm code domain: sandboxed unit-test rewards that cannot be gamed.

Environments (registered by :mod:`gym_llm_code.plugin`):

* ``code/PythonFunctions-v0`` -- bundled Python function tasks;
* ``code/Stdio-v0`` -- bundled stdin/stdout problems, Python or C++ answers;
* ``code/Dataset-v0`` -- HumanEval, MBPP and stdin/stdout datasets from files
  or the Hugging Face hub;
* ``code/Repo-v0`` -- agentic multi-file repository tasks in a sandbox session
  (:mod:`gym_llm_code.repo`).

The verifiers (:mod:`gym_llm_code.verify`) work outside environments too.
"""

__version__ = "0.1.0"
