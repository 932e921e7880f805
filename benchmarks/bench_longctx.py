"""Benchmark: building long-context tasks sized in tokens.

Run: ``python benchmarks/bench_longctx.py`` (about a minute on 2 cores).
Prints a Markdown section: time to build one task (prompt sized by
measuring) per environment and context size with the default counter, peak
Python memory per character of text, and the exact mode with a real
tokenizer (Mistral 7B's SentencePiece, shipped by mistral-common, loaded with
``AutoTokenizer`` from a local directory). The anchor, measured in the same
run, is one plain tokenization of the same text by that tokenizer: the least
that any generator which measures its output with it must spend.
"""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import gym_llm
from gym_llm.apps.evaluate.report import cpu_model

ENVS = ["longctx/Needle-v0", "longctx/VariableTracking-v0", "longctx/WordFrequency-v0",
        "longctx/MultiHopQA-v0", "longctx/DocNavigator-v0"]
SIZES = [1024, 8192, 32768, 131072]
REPEATS = 3


def _text(task) -> str:
    return "\n\n".join(task.metadata["pages"]) if "pages" in task.metadata else task.prompt


def build_time(env_id: str, size: int, **kwargs) -> tuple[float, object]:
    """Best of REPEATS: seconds to build one task (different tasks each time)."""
    env = gym_llm.make(env_id, context_tokens=size, difficulty=1.0 if size >= 32768 else 0.0, **kwargs)
    best, task = float("inf"), None
    for index in range(REPEATS):
        start = time.perf_counter()
        task = env.unwrapped.task_set.get("train", index)
        best = min(best, time.perf_counter() - start)
    return best, task


def peak_per_char(env_id: str, size: int) -> float:
    env = gym_llm.make(env_id, context_tokens=size)
    env.unwrapped.task_set.get("train", 0)
    tracemalloc.start()
    task = env.unwrapped.task_set.get("train", 1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / len(_text(task))


def spm_dir() -> str | None:
    try:
        import mistral_common
    except ImportError:
        return None
    out = Path(tempfile.mkdtemp(prefix="bench-spm-"))
    shutil.copy(Path(mistral_common.__file__).parent / "data" / "tokenizer.model.v1", out / "tokenizer.model")
    (out / "tokenizer_config.json").write_text('{"tokenizer_class": "LlamaTokenizer"}')
    return str(out)


def main() -> None:
    rows = []
    for env_id in ENVS:
        cells = []
        for size in SIZES:
            seconds, task = build_time(env_id, size)
            cells.append(f"{seconds * 1000:.0f} ms")
        rows.append((env_id, cells, peak_per_char(env_id, 131072)))

    lines = [
        "## Long-context generation (`gym-llm-longctx`)",
        "",
        "Time to build one task, prompt sized by measuring (default counter, best of "
        f"{REPEATS}; sizes {SIZES[2]} and up at difficulty 1), and peak Python memory "
        "(tracemalloc) per character of text at 131072 tokens:",
        "",
        "| environment | " + " | ".join(f"{s} tok" for s in SIZES) + " | peak bytes/char |",
        "|---" * (len(SIZES) + 2) + "|",
    ]
    lines += [f"| `{e}` | " + " | ".join(c) + f" | {p:.1f} |" for e, c, p in rows]

    path = spm_dir()
    if path is not None:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
        backend = tok.backend_tokenizer
        gym_llm.make("longctx/Needle-v0", context_tokens=1024, tokenizer=path).unwrapped.task_set.get("train", 9)
        approx_s, task = build_time("longctx/Needle-v0", 131072)
        exact_s, exact_task = build_time("longctx/Needle-v0", 131072, tokenizer=path)
        anchor = float("inf")
        for _ in range(REPEATS):
            start = time.perf_counter()
            n = len(backend.encode(exact_task.prompt, add_special_tokens=False))
            anchor = min(anchor, time.perf_counter() - start)
        assert n == exact_task.metadata["prompt_tokens"]
        lines += [
            "",
            "Needle-v0 at 131072 tokens against the anchor, one plain tokenization of the same "
            "prompt by Mistral 7B's SentencePiece tokenizer (HF fast, local files):",
            "",
            "| what | time | vs anchor |",
            "|---|---|---|",
            f"| anchor: tokenize the prompt once | {anchor * 1000:.0f} ms | 1.00x |",
            f"| build, default counter (`tokenizer=None`) | {approx_s * 1000:.0f} ms | {approx_s / anchor:.2f}x |",
            f"| build, exact (`tokenizer=<that dir>`), measured {exact_task.metadata['prompt_tokens']} "
            f"tokens | {exact_s * 1000:.0f} ms | {exact_s / anchor:.2f}x |",
        ]
        shutil.rmtree(path, ignore_errors=True)
    else:
        lines += ["", "(mistral-common not installed: the exact-mode comparison was skipped)"]

    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip() or str(os.cpu_count())
    lines += [
        "",
        f"Command: `python benchmarks/bench_longctx.py`. Machine: {nproc} CPUs ({cpu_model()}), "
        f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}. "
        f"Date: {datetime.date.today().isoformat()}.",
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
