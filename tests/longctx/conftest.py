"""Fixtures of the long-context tests: real tokenizers, built or found locally."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from gym_llm_longctx import prose


def _corpus() -> list[str]:
    rng = random.Random(0)
    units = prose.paragraph_units(rng)
    text = ["".join(next(units) for _ in range(40)) for _ in range(100)]
    text += [" ".join(prose.invented_word(rng, 2) for _ in range(200)) for _ in range(20)]
    text += [f"VAR {prose.variable_name(rng)} = {rng.randrange(10**6, 10**7)}." for _ in range(500)]
    return text


@pytest.fixture(scope="session")
def bpe_dir(tmp_path_factory) -> Path:
    """A byte-level BPE tokenizer (vocabulary 800) trained here on generated
    text and saved as a Hugging Face tokenizer directory."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=800, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"], show_progress=False,
    )
    tok.train_from_iterator(_corpus(), trainer)
    out = tmp_path_factory.mktemp("bpe")
    PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>").save_pretrained(out)
    return out


def _mistral_data() -> Path:
    mistral_common = pytest.importorskip(
        "mistral_common", reason="needs the tokenizers that mistral-common ships (a vllm dependency)"
    )
    return Path(mistral_common.__file__).parent / "data"


@pytest.fixture(scope="session")
def spm_dir(tmp_path_factory) -> Path:
    """Mistral-7B's SentencePiece model (shipped by mistral-common) as a local
    Hugging Face tokenizer directory: a real 32k tokenizer, no download."""
    out = tmp_path_factory.mktemp("spm")
    shutil.copy(_mistral_data() / "tokenizer.model.v1", out / "tokenizer.model")
    (out / "tokenizer_config.json").write_text('{"tokenizer_class": "LlamaTokenizer"}')
    return out


@pytest.fixture(scope="session")
def reference_counters() -> dict[str, Callable[[str], int]]:
    """Two real tokenizer families, as ``count(text)``: SentencePiece 32k
    (Mistral 7B) and Tekken 131k (Mistral Nemo), both shipped by mistral-common."""
    data = _mistral_data()
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    out = {}
    for name, file in (("sentencepiece-32k", "tokenizer.model.v1"), ("tekken-131k", "tekken_240911.json")):
        tok = MistralTokenizer.from_file(str(data / file)).instruct_tokenizer.tokenizer
        out[name] = lambda text, tok=tok: len(tok.encode(text, bos=False, eos=False))
    return out
