"""The tiny local model: deterministic build, atomic cache, a tokenizer that
reloads exactly as trained, and a chat template that renders tools."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from gym_llm.runtime import models


def digest(path: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.iterdir()) if p.is_file()}


@pytest.mark.slow
def test_build_is_deterministic_and_loads_like_a_checkpoint(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    a = models.build_tiny_model(tmp_path / "a")
    b = models.build_tiny_model(tmp_path / "b")
    assert digest(a) == digest(b)
    assert {"config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja"} <= set(digest(a))
    model = AutoModelForCausalLM.from_pretrained(a)
    tok = AutoTokenizer.from_pretrained(a)
    assert model.config.model_type == "qwen2"
    assert model.config.vocab_size == len(tok) == models.TINY_VOCAB_SIZE
    n = sum(p.numel() for p in model.parameters())
    assert 1_000_000 < n < 5_000_000
    assert json.loads((a / "gym_llm_build.json").read_text())["parameters"] == n
    assert not model.config.tie_word_embeddings


@pytest.mark.slow
def test_cache_is_built_once_and_rebuilt_when_stale(tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_LLM_CACHE", str(tmp_path))
    path = Path(models.tiny_model_path())
    assert path == tmp_path / "models" / "tiny-chat"
    stamp = path / "gym_llm_build.json"
    mtime = stamp.stat().st_mtime_ns
    assert models.tiny_model_path() == str(path)
    assert stamp.stat().st_mtime_ns == mtime  # cached, not rebuilt
    stamp.write_text(json.dumps({"version": models.TINY_BUILD_VERSION - 1}))
    models.tiny_model_path()
    assert json.loads(stamp.read_text())["version"] == models.TINY_BUILD_VERSION
    leftovers = [p.name for p in path.parent.iterdir() if p.name != "tiny-chat"]
    assert leftovers == []  # temp and stale dirs cleaned up
    assert oct(path.stat().st_mode & 0o777) == "0o755"


def test_tokenizer_reloads_exactly_as_trained(tiny_path, tiny_tokenizer):
    from transformers import PreTrainedTokenizerFast

    raw = PreTrainedTokenizerFast(tokenizer_file=os.path.join(tiny_path, "tokenizer.json"))
    texts = [
        "Hello  world\n\n  x = 1\t\ttabs   ",
        "What is 123 + 4567? \\boxed{4690}",
        '<tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>',
        "def f(items):\n    return sorted(items)\n",
        "ünïcödé 😀 and a\x00nul byte",
    ]
    for text in texts:
        ids = tiny_tokenizer.encode(text, add_special_tokens=False)
        assert ids == raw.encode(text, add_special_tokens=False)
        assert tiny_tokenizer.decode(ids) == text
    for special in ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "</tool_response>"]:
        assert len(tiny_tokenizer.encode(special, add_special_tokens=False)) == 1
    assert tiny_tokenizer.eos_token == "<|im_end|>"
    assert tiny_tokenizer.pad_token == "<|endoftext|>"


def test_chat_template_renders_tools_calls_and_tool_messages(tiny_tokenizer):
    tools = [{"type": "function", "function": {"name": "add", "description": "Add.",
                                               "parameters": {"type": "object", "properties": {}}}}]
    messages = [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 2}}},
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}},
        ]},
        {"role": "tool", "tool_call_id": "c0", "content": "4"},
        {"role": "tool", "tool_call_id": "c1", "content": "1"},
        {"role": "assistant", "content": "\\boxed{4}"},
    ]
    text = tiny_tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
    assert text.startswith("<|im_start|>system\nYou are a helpful assistant.\n\n# Tools")
    assert json.dumps(tools[0]) in text
    assert ('<|im_start|>assistant\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 2}}\n</tool_call>\n'
            '<tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call><|im_end|>\n') in text
    assert ("<|im_start|>user\n<tool_response>\n4\n</tool_response>\n<tool_response>\n1\n</tool_response>"
            "<|im_end|>\n") in text
    assert text.endswith("<|im_start|>assistant\n\\boxed{4}<|im_end|>\n")
    prompt = tiny_tokenizer.apply_chat_template(messages[:1], add_generation_prompt=True, tokenize=False)
    assert prompt == "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"
