"""Token counters: the approximation's documented error, exact HF counts, loading."""

from __future__ import annotations

import random

import pytest
from gym_llm_longctx import prose
from gym_llm_longctx.tokens import APPROX_MAX_ERROR, ApproxCounter, HFCounter, load_counter
from hypothesis import given, settings
from hypothesis import strategies as st

import gym_llm

ENVS = ["longctx/Needle-v0", "longctx/VariableTracking-v0", "longctx/WordFrequency-v0",
        "longctx/MultiHopQA-v0", "longctx/DocNavigator-v0"]


def _text_of(task) -> str:
    """What ``context_tokens`` sizes: the prompt, or DocNavigator's document."""
    return "\n\n".join(task.metadata["pages"]) if "pages" in task.metadata else task.prompt


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 30), st.integers(1, 30))
def test_approx_is_additive_at_spaces(seed, a, b):
    rng = random.Random(seed)
    units = prose.paragraph_units(rng)
    left = "".join(next(units) for _ in range(a)) + f" {rng.randrange(10**6, 10**7)}."
    right = "".join(next(units) for _ in range(b))
    counter = ApproxCounter()
    assert counter.count(left + right) == counter.count(left) + counter.count(right)
    assert counter.count_each([left, right]) == [counter.count(left), counter.count(right)]


def test_approx_counts_long_texts_in_chunks_exactly():
    units = prose.paragraph_units(random.Random(1))
    text = "".join(next(units) for _ in range(3000))
    assert len(text) > 3 * ApproxCounter.CHUNK
    counter = ApproxCounter()
    assert counter.count(text) == sum(counter.cost(p) for p in counter._PIECES.findall(text))


@pytest.mark.parametrize("env_id", ENVS)
@pytest.mark.parametrize("size", [1024, 16384])
def test_approx_error_is_within_the_documented_bound(env_id, size, reference_counters):
    env = gym_llm.make(env_id, context_tokens=size, difficulty=0.5 if size > 4096 else 0.0)
    for index in range(2):
        task = env.unwrapped.task_set.get("train", index)
        text = _text_of(task)
        approx = ApproxCounter().count(text)
        for name, count in reference_counters.items():
            real = count(text)
            assert abs(approx - real) / real <= APPROX_MAX_ERROR, (name, approx, real)


def test_hf_counter_is_the_tokenizers_own_count(bpe_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(bpe_dir, local_files_only=True)
    counter = HFCounter(tok)
    units = prose.paragraph_units(random.Random(2))
    texts = ["".join(next(units) for _ in range(k)) + " 1234567." for k in (1, 5, 50)]
    expected = [len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]
    assert [counter.count(t) for t in texts] == expected
    assert counter.count_each(texts) == expected
    assert counter.count_each([]) == []


def test_load_counter(bpe_dir, tmp_path):
    assert load_counter(None).name == load_counter("approx").name == "approx"
    counter = load_counter(str(bpe_dir))
    assert isinstance(counter, HFCounter) and counter.name == str(bpe_dir)
    assert load_counter(str(bpe_dir)) is counter  # loaded once per process
    assert isinstance(load_counter(counter.tokenizer), HFCounter)
    approx = ApproxCounter()
    assert load_counter(approx) is approx
    with pytest.raises(ValueError, match="nothing is downloaded"):
        load_counter(str(tmp_path / "no-such-tokenizer"))
