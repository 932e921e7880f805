"""The reasoning entry cache (gym_llm_reasoning.families): an entry another
process generated is read, not generated again, and equals a fresh
generation; a cache that cannot be used is no error; the pregenerate command
fills it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest
from gym_llm_reasoning import families

FAMILY = "basic_arithmetic"


def _generate_in_another_process(cache, *keys) -> None:
    code = ("import sys; from gym_llm_reasoning import families\n"
            f"for key in {list(keys)!r}: families.generate(*key)\n")
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "GYM_LLM_CACHE": str(cache)})


def rows(cache) -> int:
    path = cache / "reasoning" / f"entries-{families.reasoning_gym_version()}.sqlite"
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]


def test_an_entry_generated_by_another_process_is_read_and_equals_a_fresh_one(tmp_path, monkeypatch):
    key = (FAMILY, 0.0, 3, 17)
    _generate_in_another_process(tmp_path / "filled", key)
    assert rows(tmp_path / "filled") == 1
    monkeypatch.setenv("GYM_LLM_CACHE", str(tmp_path / "filled"))
    made = families.dataset.cache_info().misses
    cached = families.generate(*key)
    assert families.dataset.cache_info().misses == made  # no reasoning-gym dataset was made for it
    monkeypatch.setenv("GYM_LLM_CACHE", str(tmp_path / "empty"))
    assert families.generate(*key) == cached


@pytest.mark.parametrize("breakage", ["a file where the directory goes", "not a database"])
def test_a_cache_that_cannot_be_used_warns_once_and_entries_are_still_generated(tmp_path, monkeypatch, breakage):
    if breakage == "not a database":
        (tmp_path / "reasoning").mkdir()
        (tmp_path / "reasoning" / f"entries-{families.reasoning_gym_version()}.sqlite").write_bytes(b"\x00junk" * 200)
    else:
        (tmp_path / "reasoning").write_text("")
    monkeypatch.setenv("GYM_LLM_CACHE", str(tmp_path))
    fresh = families.dataset(FAMILY, 0.0, 0)[5]
    with pytest.warns(UserWarning, match="entry cache .* turned off"):
        assert families.generate(FAMILY, 0.0, 0, 5) == fresh
    assert families.generate(FAMILY, 0.0, 0, 6) == families.dataset(FAMILY, 0.0, 0)[6]


def test_pregenerate_fills_whole_seed_blocks(tmp_path):
    subprocess.run([sys.executable, "-m", "gym_llm_reasoning.pregenerate", "reasoning/BasicArithmetic-v0",
                    "--blocks", "2", "--difficulty", "0", "1"], check=True, capture_output=True,
                   env={**os.environ, "GYM_LLM_CACHE": str(tmp_path)})
    assert rows(tmp_path) == 2 * 2 * families.BLOCK_SIZE
    bad = subprocess.run([sys.executable, "-m", "gym_llm_reasoning.pregenerate", "math/Arithmetic-v0"],
                         capture_output=True, text=True, env={**os.environ, "GYM_LLM_CACHE": str(tmp_path)})
    assert bad.returncode == 2 and "not a reasoning/ id" in bad.stderr
