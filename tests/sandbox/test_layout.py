"""The sandbox package's module structure: imports run one way, every module stands alone.

The graph counts every import of a ``gym_llm_sandbox`` module anywhere in a module (top
level, ``if TYPE_CHECKING``, inside functions): a lazy import inside a function is still
a dependency, so it may not point back up either.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import gym_llm_sandbox
import pytest

PKG = "gym_llm_sandbox"
ROOT = Path(gym_llm_sandbox.__file__).parent
MODULES = sorted(p.stem for p in ROOT.glob("*.py"))


def _imports(name: str) -> set[str]:
    """The package modules ``name`` imports (``__init__`` for names from the package)."""
    tree = ast.parse((ROOT / f"{name}.py").read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == PKG:
                    out.add("__init__")
                elif a.name.startswith(PKG + "."):
                    out.add(a.name.split(".")[1])
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:  # relative: from . import x / from .x import y
                base = mod.split(".")[0] if mod else None
                targets = [base] if base else [a.name for a in node.names]
            elif mod == PKG:
                targets = [a.name if a.name in MODULES else "__init__" for a in node.names]
            elif mod.startswith(PKG + "."):
                targets = [mod.split(".")[1]]
            else:
                continue
            out.update(t for t in targets if t)
    out.discard(name)
    return out


GRAPH = {m: _imports(m) for m in MODULES}


def test_import_graph_has_no_cycle():
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> None:
        if m in path:
            raise AssertionError("import cycle: " + " -> ".join([*path[path.index(m):], m]))
        if m in done:
            return
        for dep in sorted(GRAPH.get(m, ())):
            visit(dep, [*path, m])
        done.add(m)

    for m in MODULES:
        visit(m, [])


def test_only_the_package_init_imports_from_the_package_init():
    assert not [m for m, deps in GRAPH.items() if "__init__" in deps and m != "__init__"]


@pytest.mark.parametrize("module", [m for m in MODULES if m != "__init__"])
def test_each_module_imports_on_its_own(module):
    # A bare package object stands in for gym_llm_sandbox, so its __init__ (which
    # imports everything) does not run first: only the module's own dependencies
    # are imported, in its order.
    code = (
        "import importlib, importlib.util, sys, types\n"
        "spec = importlib.util.find_spec('gym_llm_sandbox')\n"
        "pkg = types.ModuleType('gym_llm_sandbox')\n"
        "pkg.__path__ = list(spec.submodule_search_locations)\n"
        "sys.modules['gym_llm_sandbox'] = pkg\n"
        f"importlib.import_module('{PKG}.{module}')\n"
        "assert not hasattr(sys.modules['gym_llm_sandbox'], '__all__')  # __init__ never ran\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
