"""Shared by the benchmark scripts: the machine line every section states."""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import sys

from gym_llm.evaluate.report import cpu_model


def machine() -> str:
    return f"{os.cpu_count()} cores, {cpu_model()}, Python {platform.python_version()}, {platform.system()}"


def header(title: str) -> str:
    """A Markdown section header with the command, machine and date."""
    cmd = " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0])] + sys.argv[1:])
    return (
        f"## {title}\n\n"
        f"- command: `python {cmd}`\n"
        f"- machine: {machine()}\n"
        f"- date: {datetime.date.today().isoformat()}\n"
    )
