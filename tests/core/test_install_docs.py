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

import configparser
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
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "sandbox" / "README.md",
        *sorted(ROOT.glob("plugins/*/README.md"))]
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
                    found.append((str(doc.relative_to(ROOT)), line))
        prose = re.sub(r"```[a-z]*\n.*?```", "", text, flags=re.S)
        for span in re.findall(r"`(pip install [^`]+)`", prose):
            found.append((str(doc.relative_to(ROOT)), " ".join(span.split())))
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


def local_projects() -> dict[str, tuple[str, set[str]]]:
    """``{distribution name: (its path as the commands write it, the local
    distributions it requires)}`` for the checkout's projects."""
    found: dict[str, tuple[str, set[str]]] = {}
    for cfg in [ROOT / "setup.cfg", *sorted(ROOT.glob("*/setup.cfg")), *sorted(ROOT.glob("plugins/*/setup.cfg"))]:
        parser = configparser.ConfigParser()
        parser.read(cfg)
        if not parser.has_option("metadata", "name"):
            continue
        needs = {re.split(r"[\[<>=!~ ;]", line.strip(), maxsplit=1)[0]
                 for line in parser.get("options", "install_requires", fallback="").splitlines()
                 if line.strip() and not line.strip().startswith("#")}
        path = "./" + os.path.normpath(cfg.parent.relative_to(ROOT)) if cfg.parent != ROOT else "."
        found[parser.get("metadata", "name")] = (path, needs)
    return found


def test_each_command_brings_the_local_projects_it_needs():
    """gym-llm and gym-llm-sandbox are on no index, so a command that installs
    a plugin (or the core) without ``--no-deps`` must install what it needs
    from the checkout in the same command: ``pip install -e plugins/x`` alone
    fails on a fresh machine even though it resolves beside the core."""
    projects = local_projects()
    path_of = {name: path for name, (path, _) in projects.items()}
    needs_of = {path: {n for n in needs if n in projects} for path, needs in projects.values()}
    for needs in needs_of.values():  # what a local dependency needs, it needs too
        while grown := {m for n in needs for m in needs_of[path_of[n]]} - needs:
            needs |= grown
    problems = []
    for doc, command in install_commands():
        no_deps, wanted = requirements(command)
        if no_deps:
            continue
        for path in [w for w in wanted if w in needs_of]:
            missing = sorted(path_of[n] for n in needs_of[path] if path_of[n] not in wanted)
            if missing:
                problems.append(f"{doc}: `{command}` installs {path} without {missing}")
    assert not problems, "\n".join(problems)


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
