"""Every install command in README.md and docs/*.md resolves on a fresh
machine, as written (issue 38, item 4: the docs said ``pip install
gym-llm[trl]``, which is on no package index, and ``-e ".[verl]"`` could not
resolve).

The commands are read from the docs themselves (fenced ``pip install`` lines
and inline ``pip install ...`` spans), so the docs and what this test runs
cannot drift apart. They are resolved by ``pip install --dry-run`` in one
fresh venv (nothing is installed, so every command sees a fresh machine),
from a copy of the checkout (pip writes build metadata into local projects;
the copies keep parallel runs apart), with ``torch==2.13.0`` as a
constraint: the CPU build the Makefile pins. A dry run, not an install: a
real install of torch and the peers takes many minutes per command, while
what fails on a fresh machine (a name the index lacks, pins that conflict)
fails the resolution already.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: The pins a command resolves under (the Makefile's TORCH).
CONSTRAINTS = "torch==2.13.0\n"
#: What the checkout copies leave out (not needed to resolve, and large or volatile).
NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "runs", "outputs", "multirun", "__pycache__", "*.egg-info",
                                    "benchmarks", "tests", "build", "dist")


def install_commands() -> list[tuple[str, str]]:
    """``(doc name, command)`` for every ``pip install`` in the docs: fenced
    code lines (``pip install ...`` or ``.venv/bin/pip install ...``, the
    trailing comment dropped) and inline code spans (wrapped lines joined)."""
    found: list[tuple[str, str]] = []
    for doc in DOCS:
        text = doc.read_text()
        fenced = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
        for block in fenced:
            for line in block.splitlines():
                line = line.split(" #")[0].strip()
                if re.match(r"(\.venv/bin/)?pip install ", line):
                    found.append((doc.name, line))
        prose = re.sub(r"```[a-z]*\n.*?```", "", text, flags=re.S)
        for span in re.findall(r"`(pip install [^`]+)`", prose):
            found.append((doc.name, " ".join(span.split())))
    return found


def test_the_docs_name_no_package_the_index_lacks():
    """gym-llm, gym-llm-sandbox and the plugins install from a checkout only:
    no command asks the package index for them by name."""
    commands = install_commands()
    assert len(commands) >= 15, commands
    for doc, command in commands:
        requirements = [a for a in shlex.split(command)[2:] if not a.startswith("-") and "/" not in a
                        and not a.startswith(".")]
        ours = [r for r in requirements if re.match(r"gym[-_]llm", r)]
        assert not ours, f"{doc}: `{command}` asks the index for {ours}: install from the checkout"


def _dry_run(python: Path, args: list[str], checkout: Path) -> tuple[int, str]:
    """``pip install --dry-run ARGS`` in ``checkout``, under :data:`CONSTRAINTS`."""
    constraints = checkout / "constraints.txt"
    constraints.write_text(CONSTRAINTS)
    run = [str(python), "-m", "pip", "install", "--dry-run", "--quiet", "-c", str(constraints), *args]
    done = subprocess.run(run, cwd=checkout, capture_output=True, text=True, timeout=900)
    problems = "\n".join(line for line in done.stderr.splitlines() if not line.startswith("WARNING: Location"))
    return done.returncode, problems


def requirements(command: str) -> tuple[bool, dict[str, set[str]]]:
    """A command as ``(no_deps, {project or requirement: extras})``: local
    projects (``./sandbox``, ``.``, ``plugins/x[data]``) keyed by their path,
    editable or not (the same metadata)."""
    argv = shlex.split(command)
    assert argv[0] in ("pip", ".venv/bin/pip") and argv[1] == "install", command
    no_deps, wanted, editable = False, {}, False
    for arg in argv[2:]:
        if arg in ("--no-deps", "-e"):
            no_deps, editable = no_deps or arg == "--no-deps", arg == "-e"
            continue
        assert not arg.startswith("-"), f"`{command}`: option {arg} not understood by this test"
        name, _, extras = arg.partition("[")
        if editable or name.startswith(".") or "/" in name:
            name = "./" + os.path.normpath(name) if name != "." else "."  # a local project
        wanted.setdefault(name, set()).update(e for e in extras.rstrip("]").split(",") if e)
        editable = False
    return no_deps, wanted


def _args(wanted: dict[str, set[str]]) -> list[str]:
    args: list[str] = []
    for name, extras in sorted(wanted.items()):
        spec = name + (f"[{','.join(sorted(extras))}]" if extras else "")
        args += ["-e", spec] if name.startswith(".") else [spec]
    return args


@pytest.mark.slow
def test_every_install_command_resolves_in_a_fresh_venv(tmp_path):
    """Each doc command's requirements are part of one of two resolutions
    (the ``--no-deps`` commands together, the others together): when the
    union of requirements resolves, each command's own part does (the union's
    solution, cut to that part, satisfies it), so two dry runs stand for the
    ~25 commands (one dry run takes ~50 s here, mostly waiting on the index).
    When a union fails, each of its commands runs alone, to name the one
    that does not resolve."""
    commands = sorted({command for _, command in install_commands()})
    groups: dict[bool, list[str]] = {True: [], False: []}
    unions: dict[bool, dict[str, set[str]]] = {True: {}, False: {}}
    for command in commands:
        no_deps, wanted = requirements(command)
        groups[no_deps].append(command)
        for name, extras in wanted.items():
            unions[no_deps].setdefault(name, set()).update(extras)
    assert groups[True] and groups[False]
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"

    def checkout(name: str) -> Path:
        return Path(shutil.copytree(ROOT, tmp_path / name, ignore=NOT_COPIED))

    runs = {no_deps: ((["--no-deps"] if no_deps else []) + _args(unions[no_deps]), checkout(f"union-{no_deps}"))
            for no_deps in (True, False)}
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcome = dict(zip(runs, pool.map(lambda run: _dry_run(python, *run), runs.values()), strict=True))
    failed = []
    for no_deps, (code, problems) in outcome.items():
        if code:  # name the commands that fail on their own
            for i, command in enumerate(groups[no_deps]):
                alone = (["--no-deps"] if no_deps else []) + _args(requirements(command)[1])
                alone_code, alone_problems = _dry_run(python, alone, checkout(f"alone-{no_deps}-{i}"))
                if alone_code:
                    failed.append(f"`{command}` (exit {alone_code}):\n{alone_problems[-2000:]}")
            failed.append(f"together: `pip install {' '.join(runs[no_deps][0])}` (exit {code}):\n{problems[-2000:]}")
    assert not failed, "\n\n".join(failed)
    print(f"{len(commands)} install commands resolved:", *commands, sep="\n  ", file=sys.stderr)
