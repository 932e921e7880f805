"""Layer 3, what users run. Imports the layers below it.

===============  ============================================================
cli              ``gym-llm``: list, describe, play, doctor, report, compare, serve
sandbox_doctor   the sandbox's ``gym-llm doctor`` rows, through the plugin hook
evaluate         ``gym-llm-eval``: held-out evaluation, pass@k, compare
report           ``gym-llm report``: one HTML page of a training or eval run
serve            ``gym-llm serve``: one env per WebSocket session (OpenEnv)
integrations     gym-llm envs inside TRL, verl, SkyRL and verifiers
runs             the run directories' layout (training and eval runs)
hydra_app        what the Hydra apps share: override checks, signals, the core's configs
sweeps           multirun job-dir names and the sweep's ``summary.md``
conf             the Hydra configs both apps read (the trainers ship their own)
===============  ============================================================
"""
