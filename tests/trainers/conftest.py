"""Fixtures of tests/trainers; the helpers live in trainer_support.py so that
test modules can import them by a unique name (every test folder has a
conftest.py, and a plain ``from conftest import`` picks whichever was first)."""

from trainer_support import *  # noqa: F401,F403
