"""The verifiers taskset id of gym-llm: ``vf-eval gym_llm_verifiers
--env.taskset.env-id ENV_ID ...``.

verifiers imports a taskset by a top-level module name (it cannot name a
submodule), so this module is that name for
:mod:`gym_llm.apps.integrations.verifiers`, which holds everything (install the
``gym-llm[verifiers]`` extra, then ``pip install --no-deps verifiers==0.4.0``).
"""

from gym_llm.apps.integrations.verifiers import *  # noqa: F403
from gym_llm.apps.integrations.verifiers import __all__  # noqa: F401
