"""Shared by the benchmark scripts: the machine line every section states."""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import sys


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}, {platform.system()}"


def header(title: str) -> str:
    """A Markdown section header with the command, machine and date."""
    cmd = " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0])] + sys.argv[1:])
    return (
        f"## {title}\n\n"
        f"- command: `python {cmd}`\n"
        f"- machine: {machine()}\n"
        f"- date: {datetime.date.today().isoformat()}\n"
    )
