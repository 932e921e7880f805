"""Bring your own project: a local Python project with a pytest suite becomes
``code/Repo-v0`` tasks (SWE-smith's idea, in our sandbox instead of Docker).

:func:`build_repo_tasks` reads the project into memory (the user's files are
never written), runs its tests once in a jail, then mutates its source one
change at a time (operator swaps, comparison flips, off-by-ones, removed
branches, swapped arguments) and runs the passing tests on each mutant, in
fresh jails. A mutant becomes a task when some of those tests fail (the
original passes them by construction): the failing tests are hidden (removed
from the model's copy of the test files; the hidden run takes them from the
original project), the prompt describes the failure as an issue would (what
failed and how, never which file was changed), and ``task.answer`` is the
original file. The tasks are cached on disk per project content (a hash of
every file read, so a commit or an edit is a new project) and build options.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import json
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gym_llm_sandbox import Sandbox
from gym_llm_sandbox.aio import background_loop

from gym_llm import Task
from gym_llm.envs.tasks import content_hash

from .scoring import REPO_POLICY, is_source, is_test_path, pytest_mounts, run_pytest

__all__ = ["build_repo_tasks", "read_project", "source_roots", "mutations", "Mutation", "DEFAULT_TEST_CMD",
           "BuildReport"]

#: The jail's pytest command: no site (no .pth, no customize hooks), no bytecode.
DEFAULT_TEST_CMD = ("python3", "-S", "-s", "-B", "-m", "pytest")
#: Directories never read (besides every hidden one: .git, .tox, .venv, caches).
_SKIP_DIRS = {"__pycache__", "venv", "env", "build", "dist", "node_modules", "docs", "doc"}
_MAX_FILES, _MAX_BYTES, _MAX_FILE_BYTES = 3000, 16 << 20, 1 << 20
_BUILD_VERSION = 3


def read_project(path: str | os.PathLike[str]) -> dict[str, bytes]:
    """The project's files (``{relative path: bytes}``), read-only: UTF-8 text
    files, no hidden directories (VCS, caches, ``.venv``), virtualenv, build or
    docs directories."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise ValueError(f"repo={str(path)!r} is not a directory")
    files: dict[str, bytes] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".")
                             and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            full = Path(dirpath, name)
            if full.is_symlink() or not full.is_file() or full.stat().st_size > _MAX_FILE_BYTES:
                continue
            data = full.read_bytes()
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            files[full.relative_to(root).as_posix()] = data
            total += len(data)
            if len(files) > _MAX_FILES or total > _MAX_BYTES:
                raise ValueError(f"{root} is too large for a sandbox session ({_MAX_FILES} files, "
                                 f"{_MAX_BYTES >> 20} MiB of text)")
    return files


def source_roots(files: Mapping[str, bytes]) -> list[str]:
    """The project's source: top-level packages (``pkg``, or ``src/pkg``) and
    top-level modules that are not tests, ``setup.py`` or ``conftest.py``."""
    roots = []
    for path in files:
        parts = path.split("/")
        if parts[-1] == "__init__.py" and len(parts) == 2 and not is_test_path(path):
            roots.append(parts[0])
        elif parts[-1] == "__init__.py" and len(parts) == 3 and parts[0] == "src":
            roots.append(f"src/{parts[1]}")
        elif len(parts) == 1 and path.endswith(".py") and not is_test_path(path) \
                and path not in ("setup.py", "conftest.py", "noxfile.py", "fabfile.py"):
            roots.append(path)
    return sorted(set(roots))


# ------------------------------------------------------------- mutations
@dataclass(frozen=True)
class Mutation:
    """One change of one file: ``text`` at ``[start, end)`` characters becomes ``new``."""

    path: str
    start: int
    end: int
    new: str
    kind: str

    def apply(self, source: str) -> str:
        return source[:self.start] + self.new + source[self.end:]


_SWAPS = {ast.Add: "-", ast.Sub: "+", ast.Mult: "/", ast.Div: "*", ast.FloorDiv: "*", ast.Mod: "//"}
_OP_TEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}
_CMP_SWAPS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==", " in ": " not in ",
              " is ": " is not "}


def mutations(path: str, source: str) -> list[Mutation]:
    """Every single-site mutation of ``source`` this builder knows: arithmetic
    operator swaps, comparison flips, integer off-by-ones, removed ``if``
    branches, swapped positional arguments."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:
        # ast columns are UTF-8 byte offsets
        return starts[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode("utf-8", "ignore"))

    def span(node: ast.AST) -> tuple[int, int]:
        return offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)

    out: list[Mutation] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in _SWAPS:
            gap_start, gap_end = span(node.left)[1], span(node.right)[0]
            gap = source[gap_start:gap_end]
            op = _OP_TEXT[type(node.op)]
            if gap.count(op) == 1 and "#" not in gap:
                at = gap_start + gap.index(op)
                out.append(Mutation(path, at, at + len(op), _SWAPS[type(node.op)], "operator swap"))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            gap_start, gap_end = span(node.left)[1], span(node.comparators[0])[0]
            gap = f" {source[gap_start:gap_end].strip()} "
            for old, new in _CMP_SWAPS.items():
                if gap.strip() == old.strip():
                    out.append(Mutation(path, gap_start, gap_end, new if new.startswith(" ") else f" {new} ",
                                        "comparison flip"))
                    break
        elif isinstance(node, ast.Constant) and type(node.value) is int and not isinstance(node.value, bool) \
                and 0 <= node.value < 10_000:
            a, b = span(node)
            if source[a:b].isdigit():
                out.append(Mutation(path, a, b, str(node.value + 1), "off by one"))
        elif isinstance(node, ast.If) and not node.orelse:
            a, b = span(node.test)
            out.append(Mutation(path, a, b, "False", "removed branch"))
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args):
            (a0, b0), (a1, b1) = span(node.args[0]), span(node.args[1])
            first, second = source[a0:b0], source[a1:b1]
            if first != second and b0 <= a1:
                out.append(Mutation(path, a0, b1, second + source[b0:a1] + first, "swapped arguments"))
    return out


# ------------------------------------------------------------- building
@dataclass
class BuildReport:
    """What one build did (``build_repo_tasks(..., report=...)`` fills it)."""

    project_tests: int = 0
    passing_tests: int = 0
    mutants_tried: int = 0
    tasks: int = 0
    seconds: float = 0.0
    cached: bool = False


def _strip_tests(source: str, names: set[tuple[str | None, str]]) -> str:
    """``source`` without the test functions ``(class or None, function)``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    drop: list[tuple[int, int]] = []

    def visit(body: list[ast.stmt], cls: str | None) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, node.name)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (cls, node.name) in names:
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                drop.append((first, node.end_lineno or node.lineno))

    visit(tree.body, None)
    lines = source.splitlines(keepends=True)
    for first, last in sorted(drop, reverse=True):
        del lines[first - 1:last]
    return "".join(lines)


def _hide(files: Mapping[str, bytes], node_ids: Sequence[str]) -> dict[str, bytes]:
    by_file: dict[str, set[tuple[str | None, str]]] = {}
    for nid in node_ids:
        path, *rest = nid.split("::")
        if rest:
            func = rest[-1].split("[")[0]
            by_file.setdefault(path, set()).add((rest[0] if len(rest) > 1 else None, func))
    out = dict(files)
    for path, names in by_file.items():
        if path in out:
            out[path] = _strip_tests(out[path].decode(), names).encode()
    return out


def _issue(failed: Sequence[str], messages: Mapping[str, str], total: int) -> str:
    shown = []
    for nid in failed[:3]:
        msg = messages.get(nid, "the test fails")
        shown.append(f"- a check of `{nid.split('::')[-1].split('[')[0]}` fails: {msg[:300]}")
    more = f"\n\n({len(failed)} of the project's {total} passing tests fail now.)" if len(failed) > 3 else ""
    return ("Something broke: tests that passed before fail now.\n\n" + "\n".join(shown) + more +
            "\n\nFind the cause in the package's source and fix it; do not change the tests.")


async def _build(files: dict[str, bytes], test_cmd: Sequence[str], max_mutants: int, sandbox: Sandbox,
                 seed: str, report: BuildReport) -> list[dict[str, Any]]:
    base = await run_pytest(sandbox, files, test_cmd)
    report.project_tests = len(base.outcomes)
    passing = sorted(t for t, o in base.outcomes.items() if o == "passed")
    report.passing_tests = len(passing)
    if not passing:
        tail = (base.result.stdout + base.result.stderr)[-2000:]
        raise ValueError(f"no test of the project passes in the sandbox with {' '.join(test_cmd)}:\n{tail}")
    roots = source_roots(files)
    candidates = [m for path in sorted(files) if is_source(path, roots) for m in mutations(path, files[path].decode())]
    random.Random(seed).shuffle(candidates)
    candidates = candidates[:max_mutants]
    report.mutants_tried = len(candidates)

    async def one(m: Mutation) -> dict[str, Any] | None:
        mutated = {**files, m.path: m.apply(files[m.path].decode()).encode()}
        run = await run_pytest(sandbox, mutated, test_cmd, passing)
        failed = [t for t in passing if run.outcomes.get(t) in ("failed", "error")]
        # every passing test must have run (an unparsed or killed run proves nothing)
        if not failed or len(run.outcomes) < len(passing) or len(failed) == len(passing) > 1:
            return None
        project = _hide(mutated, failed)
        regression = [t for t in passing if t not in failed]
        return {
            "mutation": {"path": m.path, "kind": m.kind, "start": m.start, "end": m.end, "new": m.new},
            "prompt": _issue(failed, run.messages, len(passing)),
            "answer": {m.path: files[m.path].decode()},
            "changed": {p: v.decode() for p, v in project.items() if files.get(p) != v},
            "hidden": failed, "regression": regression,
            "visible": random.Random(seed + m.path).sample(regression, min(20, len(regression))),
        }

    found = await asyncio.gather(*(one(m) for m in candidates))
    return [t for t in found if t is not None]


def _cache_dir(cache_dir: str | None) -> Path:
    if cache_dir:
        return Path(cache_dir)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gym_llm" / "repo"


def build_repo_tasks(repo: str | os.PathLike[str], *, test_cmd: Sequence[str] = DEFAULT_TEST_CMD,
                     max_mutants: int = 40, cache_dir: str | None = None,
                     sandbox: Mapping[str, Any] | Sandbox | None = None,
                     report: BuildReport | None = None) -> list[Task]:
    """``code/Repo-v0`` tasks from the local project at ``repo`` (see the module
    docstring). Splits: a task is held out when the hash of its id falls in the
    lowest 20 % (with two tasks or more, each split gets at least one). Raises ``ValueError`` when no test of the project passes in the
    sandbox. ``report`` (a :class:`BuildReport`) is filled in when given."""
    report = report if report is not None else BuildReport()
    t0 = time.perf_counter()
    files = read_project(repo)
    key = content_hash([sorted((p, content_hash(v.decode())) for p, v in files.items()), list(test_cmd),
                        max_mutants, _BUILD_VERSION])
    name = Path(repo).resolve().name
    cache = _cache_dir(cache_dir) / f"{name}-{key[:16]}.json"
    if cache.exists():
        built = json.loads(cache.read_text())
        report.cached = True
    else:
        if not isinstance(sandbox, Sandbox):
            policy = dataclasses.replace(REPO_POLICY, extra_ro_mounts=REPO_POLICY.extra_ro_mounts + pytest_mounts())
            sandbox = Sandbox.from_config(dict(sandbox or {}), policy=policy)
        built = background_loop().run(_build(files, test_cmd, max_mutants, sandbox, key, report))
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp")
        tmp.write_text(json.dumps(built))
        os.replace(tmp, cache)
    roots = source_roots(files)
    # everything the hidden run takes from the original project: all but the source
    support = {p: v.decode() for p, v in files.items() if not is_source(p, roots)}
    tasks = []
    ids = [f"repo-{name}-{content_hash([key, item['mutation']])[:12]}" for item in built]
    held = {i for i in ids if int(content_hash(i)[:8], 16) < int(0.2 * 2**32)}
    if len(ids) >= 2 and not held:  # each split gets at least one task
        held = {min(ids, key=content_hash)}
    if held == set(ids) and len(ids) >= 2:
        held.discard(max(ids, key=content_hash))
    for task_id, item in zip(ids, built, strict=True):
        split = "heldout" if task_id in held else "train"
        prompt = (f"You are working in the repository `{name}` (in /work).\n\n## Issue\n\n{item['prompt']}\n\n"
                  f"Run the tests with `{' '.join(test_cmd)}`.")
        tasks.append(Task(task_id, prompt, item["answer"], split=split, metadata={
            "kind": "bug", "mode": "pytest", "roots": roots, "support_files": support,
            "files": {**{p: v.decode() for p, v in files.items()}, **item["changed"]},
            "hidden": item["hidden"], "regression": item["regression"], "visible": item["visible"],
            "test_files": [p for p in files if is_test_path(p) and p.endswith(".py")],
            "mutation": item["mutation"]}))
    report.tasks = len(tasks)
    report.seconds = time.perf_counter() - t0
    if not tasks:
        raise ValueError(f"no mutation of {repo} made one of its tests fail ({report.mutants_tried} tried)")
    return tasks
