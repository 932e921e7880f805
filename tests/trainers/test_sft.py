"""The SFT warm start: verified reference examples, and training on them."""

from __future__ import annotations

import pytest
import torch
from gym_llm_trainers.batching import collate
from gym_llm_trainers.config import EnvEntry, SFTConfig
from gym_llm_trainers.modeling import forward_logprobs
from gym_llm_trainers.sft import reference_examples, sft_train, weighted_passes
from trainer_support import HERE  # noqa: F401  (registers the test/* envs)
from transformers import AutoModelForCausalLM, AutoTokenizer

from gym_llm.runtime.chat import ChatFormat
from gym_llm.runtime.models import tiny_model_path


def _setup():
    tok = AutoTokenizer.from_pretrained(tiny_model_path())
    model = AutoModelForCausalLM.from_pretrained(tiny_model_path())
    eos = [tok.convert_tokens_to_ids(tok.eos_token)]
    return tok, model, ChatFormat(tok), eos


def _nll(model, samples, pad_id: int) -> list[float]:
    """Mean negative log-likelihood of each sample's response."""
    model.eval()
    with torch.no_grad():
        mb = collate(samples, pad_id)
        logp, _ = forward_logprobs(model, mb, 1.0)
    return [float(-row.mean()) for row in mb.rows(logp)]


def test_reference_examples_are_verified_by_the_env():
    tok, _, chat, eos = _setup()
    entries = {"echo": EnvEntry(id="test/Echo-v0", sft_examples=6),
               "vowels": EnvEntry(id="test/Vowels-v0")}  # no reference answers
    samples, skipped, sources = reference_examples(entries, chat, eos, per_env=4, seed=0)
    assert sources == ["echo"] * len(samples) and 1 <= len(samples) <= 6
    assert skipped == {"echo": 0, "vowels": 4}
    for s in samples:
        assert s.response_ids[-len(eos):] == eos and s.loss_mask == [1] * len(s.response_ids)
        word = tok.decode(s.response_ids[: -len(eos)])
        assert f"Repeat: {word}" in tok.decode(s.prompt_ids)  # the env's own answer, scored 1.0


def test_sft_fits_the_examples_and_follows_the_weights():
    tok, model, chat, eos = _setup()
    entries = {"echo": EnvEntry(id="test/Echo-v0", sft_examples=16)}
    samples, _, _ = reference_examples(entries, chat, eos, per_env=16, seed=0)
    half = len(samples) // 2
    before = _nll(model, samples, tok.pad_token_id)
    # only the first half is ever drawn: the second half learns only what transfers
    weights = [1.0] * half + [0.0] * (len(samples) - half)
    steps, loss = sft_train(model, samples, SFTConfig(epochs=30, batch_size=8, lr=3e-3), lr=3e-3,
                            pad_id=tok.pad_token_id, seed=0, token_budget=4096, weights=weights)
    after = _nll(model, samples, tok.pad_token_id)
    assert steps == round(30 * (len(samples) // 8)) and loss < 1.0
    drawn = sum(b - a for a, b in zip(before[:half], after[:half], strict=True)) / half
    held = sum(b - a for a, b in zip(before[half:], after[half:], strict=True)) / (len(samples) - half)
    assert drawn < -3.0, (before, after)  # fitted
    assert drawn < held - 0.5, (drawn, held)  # the weighted draw trained on the first half


def test_weighted_passes_use_each_example_by_its_weight():
    gen = torch.Generator().manual_seed(0)
    plain = weighted_passes([1.0] * 5, gen)
    for _ in range(3):  # equal weights: epochs, each example exactly once per pass
        assert sorted(next(plain) for _ in range(5)) == [0, 1, 2, 3, 4]
    weighted = weighted_passes([3.0, 1.0, 0.0, 0.5, 0.5], gen)
    counts = torch.bincount(torch.tensor([next(weighted) for _ in range(5000)]), minlength=5)
    assert counts[2] == 0
    assert abs(counts[0] / 5000 - 0.6) < 0.02 and abs(counts[1] / 5000 - 0.2) < 0.02, counts
    with pytest.raises(ValueError, match="non-negative"):
        next(weighted_passes([0.0, 0.0], gen))


def test_warm_start_leaves_its_moments_in_the_given_optimizer():
    tok, model, chat, eos = _setup()
    samples, _, _ = reference_examples({"echo": EnvEntry(id="test/Echo-v0", sft_examples=8)}, chat, eos,
                                       per_env=8, seed=0)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01)
    steps, _ = sft_train(model, samples, SFTConfig(epochs=4, batch_size=4, weight_decay=0.0), lr=3e-3,
                         pad_id=tok.pad_token_id, seed=0, token_budget=4096, optimizer=opt)
    # the RL optimizer continues from the warm start's moments, at its own settings
    assert all(float(opt.state[p]["step"]) == steps and opt.state[p]["exp_avg_sq"].abs().sum() > 0
               for p in params)
    assert [(g["lr"], g["weight_decay"]) for g in opt.param_groups] == [(1e-4, 0.01)]
