"""gym_llm.envs.datasets.read_rows: every file type, Hugging Face folders and
names, and one error naming the file and the reason for what it cannot read.
Every file here is written by the test; nothing reaches the network."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gym_llm.envs.datasets import DatasetFileError, read_rows

#: IFEval-shaped rows: nested lists and objects must come back as written.
ROWS = [
    {"key": 1000, "prompt": "Write a haiku about rain, without commas.",
     "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{"num_words": 17}]},
    {"key": 1001, "prompt": "Résumé in exactly 3 bullet points.",
     "instruction_id_list": ["detectable_format:number_bullet_lists"], "kwargs": [{"num_words": 3}]},
]


def _jsonl(rows: list) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _write(path: Path, rows: list) -> Path:
    """``rows`` in the format ``path``'s name says."""
    name = path.name.lower()
    if name.endswith(".parquet"):
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
        return path
    text = _jsonl(rows) if ".jsonl" in name else json.dumps(
        {"rows": rows} if "rows" in name else {"data": rows} if "data" in name else rows)
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", [
    "d.jsonl", "d.jsonl.gz", "d.json", "d-rows.json", "d-data.json", "d-rows.json.gz", "d.json.gz",
    "d.parquet", "D.JSONL",
])
def test_every_file_type_reads_back_its_rows_in_order(tmp_path, name):
    path = _write(tmp_path / name, ROWS)
    assert read_rows(path) == ROWS
    assert read_rows(str(path), "heldout") == ROWS  # one file serves whichever split is asked


def test_jsonl_skips_blank_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("\n" + _jsonl(ROWS[:1]) + "  \n\n" + _jsonl(ROWS[1:]))
    assert read_rows(path) == ROWS


def test_hugging_face_folders_saved_or_of_data_files(tmp_path):
    datasets = pytest.importorskip("datasets")
    one = tmp_path / "one"
    datasets.Dataset.from_list(ROWS).save_to_disk(str(one))
    assert read_rows(one) == ROWS and read_rows(one, "heldout") == ROWS  # no splits: every row
    splits = tmp_path / "splits"
    datasets.DatasetDict({"train": datasets.Dataset.from_list(ROWS[:1]),
                          "validation": datasets.Dataset.from_list(ROWS[1:])}).save_to_disk(str(splits))
    assert read_rows(splits) == ROWS[:1]
    assert read_rows(splits, "heldout", hf_splits={"heldout": "validation"}) == ROWS[1:]
    with pytest.raises(DatasetFileError, match=r"splits: the saved dataset has no split 'test'"):
        read_rows(splits, "test")  # our heldout is their test by default
    files = tmp_path / "files"
    files.mkdir()
    (files / "train.jsonl").write_text(_jsonl(ROWS[:1]))
    (files / "test.jsonl").write_text(_jsonl(ROWS[1:]))
    assert read_rows(files) == ROWS[:1] and read_rows(files, "heldout") == ROWS[1:]


@pytest.mark.parametrize(("name", "content", "reason"), [
    ("cut.jsonl.gz", gzip.compress(_jsonl(ROWS).encode())[:-12], "corrupt or truncated gzip data"),
    ("plain.json.gz", json.dumps(ROWS).encode(), "corrupt or truncated gzip data .*Not a gzipped file"),
    ("bad.json", b'[{"key": 1000,', "malformed JSON .*line 1 column"),
    ("bad.jsonl", b'{"key": 1}\n\n{"key": \n', None),  # the line is named: checked below
    ("latin1.jsonl", '{"prompt": "Résumé"}\n'.encode("latin-1"), "not UTF-8 text"),
    ("junk.parquet", b"PAR1 not really", "not a readable Parquet file"),
    ("scalars.jsonl", b'{"key": 1}\n[1, 2]\n', "row 1 is a list, not an object"),
    ("object.json", b'{"prompt": "one row, not a list"}', 'a list of row objects, or an object holding .*"rows"'),
    ("rows.csv", b"key,prompt\n", r"unsupported dataset file type '\.csv' \(use \.jsonl, \.jsonl\.gz"),
])
def test_an_unreadable_file_is_one_error_naming_it_and_why(tmp_path, name, content, reason):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DatasetFileError) as caught:
        read_rows(path)
    message = str(caught.value)
    assert caught.value.path == str(path) and isinstance(caught.value, ValueError)
    if reason is None:
        assert message.startswith(f"{path}:3: malformed JSON row"), message
    else:
        assert message.startswith(f"{path}: "), message
        assert re.search(reason, message), message


def test_a_missing_file_is_file_not_found(tmp_path):
    for missing in (tmp_path / "nowhere.jsonl", tmp_path / "no" / "dir", "data/train.jsonl.gz"):
        with pytest.raises(FileNotFoundError, match="no dataset file or folder"):
            read_rows(missing)


def test_a_missing_local_path_says_so_at_once_without_the_hub(tmp_path, monkeypatch):
    """Issue 38, item 7: ``path: {train: data/nope.jsonl}`` asked the hub for
    27 s, then ConnectionError. Each source here is missing and local by the
    rule of local_path_reason; none may reach the datasets library."""
    import time

    import gym_llm
    from gym_llm.envs.datasets import local_path_reason

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    monkeypatch.setitem(sys.modules, "datasets", None)  # the hub reader: any use of it fails differently
    started = time.monotonic()
    for source, why in [("data/nope.jsonl", "ends as a data file"), ("data/nope", "data/ is a folder here"),
                        ("nope.csv", "ends as a data file"), ("./nope", "NAME or OWNER/NAME"),
                        ("a/b/c", "NAME or OWNER/NAME")]:
        with pytest.raises(FileNotFoundError, match=f"no dataset file or folder .*{re.escape(why)}"):
            read_rows(source)
    with pytest.raises(FileNotFoundError, match="'data/nope.jsonl'"):
        gym_llm.make("math/Dataset-v0", path={"train": "data/nope.jsonl"}).reset(seed=0)
    assert time.monotonic() - started < 5
    for hub_name in ("openai/gsm8k", "AI-MO/NuminaMath-1.5", "gsm8k"):
        assert local_path_reason(hub_name) is None


def test_a_home_relative_path_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    _write(tmp_path / "d.jsonl", ROWS)
    assert read_rows("~/d.jsonl") == ROWS


def test_unknown_split_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown split"):
        read_rows(_write(tmp_path / "d.jsonl", ROWS), "validation")


def test_hub_names_go_to_the_datasets_library():
    """Offline here: the hub's own error, naming the dataset, shows it was asked."""
    code = ("from gym_llm.envs.datasets import read_rows\n"
            "try:\n    read_rows('openai_humaneval')\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert "openai_humaneval" in out.stdout and "Hub" in out.stdout, out.stdout + out.stderr
