"""Layer 1, the environment contract: what a plugin author writes against.
Imports nothing of gym-llm above it (the sandbox below it only).

=============  ==============================================================
core           ``LLMEnv``, ``SingleTurnEnv``, ``Turn``: the contract itself
tasks          ``Task``, ``TaskSet``, ``ProceduralTasks``: tasks and their splits
taskref        ``TaskRef``: which task of which env, the one task identity
rewards        ``RewardResult``, ``WeightedSum``, ``Gate``
grading        ``HackSignal`` and ``Episode``: what an env declares of its grading
parsing        the one parser each: boxed answers, code blocks, tool calls
tools          ``ToolEnv`` and ``@tool``: envs whose actions are tool calls
spaces         the Gymnasium spaces of chat observations and assistant turns
datasets       ``read_rows``: the one reader of dataset files and names
registry       ids to ``EnvSpec``, ``make``, plugin discovery
hookspecs      the plugin hooks (pluggy project ``gym_llm``)
jsonio         JSON's NaN rule, for everything gym-llm writes
=============  ==============================================================
"""
