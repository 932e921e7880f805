"""The layering the design promises, checked on the source: the core never
imports a plugin or the trainers, the trainers import only the core, plugins
never import each other, and no module graph has an import cycle (imports
inside functions count; ``if TYPE_CHECKING:`` blocks do not)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "gym_llm": ROOT / "gym_llm",
    "gym_llm_trainers": ROOT / "trainers" / "gym_llm_trainers",
    "gym_llm_math": ROOT / "plugins" / "gym-llm-math" / "gym_llm_math",
    "gym_llm_code": ROOT / "plugins" / "gym-llm-code" / "gym_llm_code",
    "gym_llm_tools": ROOT / "plugins" / "gym-llm-tools" / "gym_llm_tools",
    "gym_llm_longctx": ROOT / "plugins" / "gym-llm-longctx" / "gym_llm_longctx",
}
PLUGINS = {"gym_llm_math", "gym_llm_code", "gym_llm_tools", "gym_llm_longctx"}


def _modules() -> dict[str, Path]:
    out = {}
    for pkg, top in PACKAGES.items():
        for f in top.rglob("*.py"):
            parts = f.relative_to(top.parent).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if "jail" in parts and pkg == "gym_llm_code":
                continue  # runs inside the sandbox, not part of the import graph
            out[".".join(parts)] = f
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Modules of ours that ``name`` imports (the longest known prefix)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for n in ast.walk(node)}
    targets: list[str] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
            targets += subs if len(subs) == len(node.names) else [base, *subs]
    found = set()
    for t in targets:
        while t and t not in MODULES:
            t = t.rpartition(".")[0]
        if t and t != name:
            found.add(t)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _top(module: str) -> str:
    return module.split(".")[0]


def test_layers_import_only_downwards():
    wrong = []
    for name, deps in GRAPH.items():
        for dep in deps:
            src, dst = _top(name), _top(dep)
            if src == dst:
                continue
            allowed = dst == "gym_llm"  # the core is the only shared layer
            if not allowed:
                wrong.append(f"{name} imports {dep}")
    assert wrong == []


def _cycles() -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert _cycles() == []


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_the_graph_sees_the_package(package):
    # guards the test itself: a path change must not leave it checking nothing
    assert sum(_top(m) == package for m in GRAPH) >= 3
