"""``code/Repo-v0``: repository-level tasks in a sandbox session.

:mod:`.projects` generates procedural projects and their tasks, :mod:`.byo`
turns a local project into tasks, :mod:`.scoring` selects what reaches the
hidden-test run and runs it, :mod:`.env` is the environment, :mod:`.signals`
its hack signals.
"""
