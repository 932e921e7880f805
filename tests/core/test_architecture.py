"""The layering the design promises, checked on the source.

The core's layers, bottom up: the sandbox (``gym_llm_sandbox``, its own
distribution: the standard library only), ``gym_llm.envs`` (the env
contract), ``gym_llm.runtime`` (running envs), ``gym_llm.apps`` (what users
run). Each imports only those below it; plugins import the env contract and
the sandbox; the trainers import the core only; plugins never import each
other; and no module graph has an import cycle. Every import counts: inside
functions and under ``if TYPE_CHECKING:`` alike."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "gym_llm_sandbox": ROOT / "sandbox" / "gym_llm_sandbox",
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
    targets: list[str] = []
    for node in ast.walk(tree):
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


#: The core's layers, bottom up; the package ``gym_llm`` itself (the public
#: facade: ``make``, ``make_vec``, the hook markers) sits with the runtime.
CORE_LAYERS = ["gym_llm_sandbox", "gym_llm.envs", "gym_llm.runtime", "gym_llm.apps"]
#: What each distribution above the core may import.
ABOVE_CORE = {
    "plugins": {"gym_llm_sandbox", "gym_llm.envs", "gym_llm"},
    "gym_llm_trainers": {*CORE_LAYERS, "gym_llm"},
}


def _layer(module: str) -> str:
    if module == "gym_llm":
        return "gym_llm"
    for layer in CORE_LAYERS:
        if module == layer or module.startswith(layer + "."):
            return layer
    return "plugins" if _top(module) in PLUGINS else _top(module)


def _rank(layer: str) -> int:
    return CORE_LAYERS.index("gym_llm.runtime" if layer == "gym_llm" else layer)


def test_every_core_module_is_in_a_layer():
    loose = [m for m in GRAPH if _top(m) in ("gym_llm", "gym_llm_sandbox")
             and m != "gym_llm" and _layer(m) not in CORE_LAYERS]
    assert loose == []


def test_layers_import_only_downwards():
    wrong = []
    for name, deps in GRAPH.items():
        src = _layer(name)
        for dep in deps:
            dst = _layer(dep)
            if src in ABOVE_CORE:
                allowed = dst in ABOVE_CORE[src] or (src == dst and _top(name) == _top(dep))
            elif dst in ABOVE_CORE:
                allowed = False  # the core never imports a plugin or the trainers
            else:
                allowed = _rank(dst) <= _rank(src)
            if not allowed:
                wrong.append(f"{name} ({src}) imports {dep} ({dst})")
    assert wrong == []


def test_the_sandbox_needs_only_the_standard_library():
    import sys

    foreign = set()
    for name, path in MODULES.items():
        if _top(name) != "gym_llm_sandbox":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                tops = [(node.module or "").split(".")[0]]
            else:
                continue
            foreign |= {f"{name}: {t}" for t in tops
                        if t not in sys.stdlib_module_names and t != "gym_llm_sandbox"}
    assert foreign == set()


def test_the_public_module_paths_are_their_homes():
    import importlib

    import gym_llm

    for public, home in gym_llm.PUBLIC_MODULES.items():
        module = importlib.import_module(public)
        assert module is importlib.import_module(home)
        assert module.__spec__.name == home
    from gym_llm.integrations.trl import reward_function
    from gym_llm.sandbox import ExecResult, Limits, Sandbox  # noqa: F401  (shared/DESIGN.md)

    assert reward_function.__module__ == "gym_llm.apps.integrations.trl"


def test_our_code_imports_modules_from_their_homes():
    import gym_llm

    public = list(gym_llm.PUBLIC_MODULES)
    assert [f"{name} imports {t}" for name, path in MODULES.items()
            for t in _raw_imports(path) if any(t == p or t.startswith(p + ".") for p in public)] == []


def _raw_imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    return out


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
