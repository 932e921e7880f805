"""math/Dataset-v0: file formats, gold formats, splits and the Hugging Face path
(offline: a local dataset folder, loaded by `datasets` for real)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from gym_llm_math.dataset import DatasetTasks

import gym_llm
from gym_llm.envs.datasets import DatasetFileError, read_rows

FIXTURES = Path(__file__).with_name("fixtures")
GSM8K = FIXTURES / "gsm8k_small.jsonl"
MATH = FIXTURES / "math_small.jsonl"
BARE = FIXTURES / "bare_answers.json"


def rows(path: Path) -> list[dict]:
    return read_rows(path)


def play(env, task_index: int, response: str):
    env.reset(options={"task_index": task_index})
    return env.step(response)


def test_gsm8k_format_gold_is_the_number_after_hashes():
    env = gym_llm.make("math/Dataset-v0", path=str(GSM8K))
    golds = [env.unwrapped.task_set.get("train", i).answer for i in range(env.unwrapped.num_tasks)]
    assert golds == ["26", "83", "10,000", "30", "1/4"]
    assert {t.metadata["gold_format"] for t in env.unwrapped.task_set.tasks("train")} == {"gsm8k"}
    _, reward, term, _, info = play(env, 2, "He runs 10000 meters, so \\boxed{10000}.")
    assert reward == 1.0 and term
    _, reward, _, _, info = play(env, 4, "\\boxed{0.25}")
    assert reward == 1.0
    _, reward, _, _, info = play(env, 0, "\\boxed{36}")
    assert reward == 0.0 and info["reason"] == "wrong answer"


def test_math_format_gold_is_the_last_box_and_level_is_difficulty():
    env = gym_llm.make("math/Dataset-v0", path=str(MATH)).unwrapped
    tasks = env.task_set.tasks("train")
    assert [t.answer for t in tasks] == [
        "14", "9", "1, 3", "\\frac{5\\sqrt{3}}{3}", "(-1, 5)",
        "\\begin{pmatrix} 1 & 4 \\\\ 0 & 1 \\end{pmatrix}",
    ]
    assert [t.difficulty for t in tasks] == [0.0, 0.0, 0.25, 0.5, 0.75, 1.0]
    assert tasks[0].metadata["type"] == "Prealgebra" and tasks[0].metadata["gold_format"] == "math"
    for i, task in enumerate(tasks):  # each gold, boxed, earns full reward
        _, reward, *_ = play(env, i, f"The answer is $\\boxed{{{task.answer}}}$")
        assert reward == 1.0, task.answer
    assert play(env, 3, "\\boxed{\\frac{5}{\\sqrt{3}}}")[1] == 1.0
    assert play(env, 2, "\\boxed{1}")[1] == 0.0


def test_one_file_gives_its_rows_to_whichever_split_is_asked_in_file_order():
    for split in ("train", "heldout"):
        env = gym_llm.make("math/Dataset-v0", path=str(GSM8K), split=split)
        obs, info = env.reset(options={"task_index": 3})
        assert info["split"] == split and env.unwrapped.task.metadata["row"] == 3
        assert obs[-1]["content"] == rows(GSM8K)[3]["question"]
        assert env.unwrapped.num_tasks == 5


def test_a_split_mapping_and_disjoint_ids():
    env_train = gym_llm.make("math/Dataset-v0", path={"train": str(GSM8K), "heldout": str(MATH)})
    env_held = gym_llm.make("math/Dataset-v0", path={"train": str(GSM8K), "test": str(MATH)}, split="heldout")
    train_ids = {t.id for t in env_train.unwrapped.task_set.tasks("train")}
    held_ids = {t.id for t in env_held.unwrapped.task_set.tasks("heldout")}
    assert len(train_ids) == 5 and len(held_ids) == 6 and not train_ids & held_ids
    with pytest.raises(ValueError, match="no dataset given for split"):
        gym_llm.make("math/Dataset-v0", path={"train": str(GSM8K)}, split="heldout")


def test_json_file_with_problem_and_bare_answers():
    env = gym_llm.make("math/Dataset-v0", path=str(BARE))
    tasks = env.unwrapped.task_set.tasks("train")
    assert [t.answer for t in tasks] == ["42", "0.5", "(2, -1)"]
    assert {t.metadata["gold_format"] for t in tasks} == {"bare"}
    assert play(env, 2, "\\boxed{(2,-1)}")[1] == 1.0
    assert play(env, 1, "\\boxed{1/2}")[1] == 1.0


def test_parquet_file(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "gsm.parquet"
    pq.write_table(pa.Table.from_pylist(rows(GSM8K)), path)
    env = gym_llm.make("math/Dataset-v0", path=str(path))
    assert [t.answer for t in env.unwrapped.task_set.tasks("train")] == ["26", "83", "10,000", "30", "1/4"]
    assert play(env, 1, "\\boxed{83}")[1] == 1.0


def test_gzipped_files_and_rows_under_a_key(tmp_path):
    """The shapes code/Dataset-v0 always read: gzip, and {"rows": [...]}."""
    lines = "".join(json.dumps(r) + "\n" for r in rows(GSM8K))
    jsonl_gz = tmp_path / "gsm.jsonl.gz"
    jsonl_gz.write_bytes(gzip.compress(lines.encode()))
    keyed = tmp_path / "gsm.json"
    keyed.write_text(json.dumps({"rows": rows(GSM8K)}))
    json_gz = tmp_path / "gsm.json.gz"
    json_gz.write_bytes(gzip.compress(json.dumps({"data": rows(GSM8K)}).encode()))
    for path in (jsonl_gz, keyed, json_gz):
        env = gym_llm.make("math/Dataset-v0", path=str(path))
        assert [t.answer for t in env.unwrapped.task_set.tasks("train")] == ["26", "83", "10,000", "30", "1/4"]
        assert play(env, 1, "\\boxed{83}")[1] == 1.0
    plain = gym_llm.make("math/Dataset-v0", path=str(GSM8K)).unwrapped.task_set.tasks("train")
    assert [t.id for t in DatasetTasks(jsonl_gz).tasks("train")] == [t.id for t in plain]  # same ids


def test_a_corrupt_file_fails_at_make_naming_it(tmp_path):
    path = tmp_path / "gsm.jsonl.gz"
    path.write_bytes(gzip.compress(GSM8K.read_bytes())[:-12])  # cut short
    with pytest.raises(DatasetFileError, match=r"gsm\.jsonl\.gz: corrupt or truncated gzip") as caught:
        gym_llm.make("math/Dataset-v0", path=str(path))
    assert caught.value.path == str(path)


def test_hugging_face_dataset_folder_maps_test_to_heldout(tmp_path):
    pytest.importorskip("datasets")
    folder = tmp_path / "my_math"
    folder.mkdir()
    shutil.copy(GSM8K, folder / "train.jsonl")
    # one schema for all splits, as on the hub: MATH rows renamed to GSM8K's fields
    (folder / "test.jsonl").write_text("".join(
        json.dumps({"question": r["problem"], "answer": r["solution"]}) + "\n" for r in rows(MATH)))
    train = gym_llm.make("math/Dataset-v0", path=str(folder)).unwrapped
    held = gym_llm.make("math/Dataset-v0", path=str(folder), split="heldout").unwrapped
    assert [t.answer for t in train.task_set.tasks("train")][:2] == ["26", "83"]
    assert held.num_tasks == 6 and held.task_set.get("heldout", 0).answer == "14"


def test_custom_field_names(tmp_path):
    path = tmp_path / "custom.jsonl"
    path.write_text(json.dumps({"q": "What is 2 + 3?", "final": "5"}) + "\n")
    env = gym_llm.make("math/Dataset-v0", path=str(path), question_key="q", answer_key="final")
    assert play(env, 0, "\\boxed{5}")[1] == 1.0


@pytest.mark.parametrize(("content", "suffix", "match"), [
    ('{"question": "What is 1 + 1?"}\n', ".jsonl", "no answer field"),
    ('{"text": "What is 1 + 1?", "answer": "2"}\n', ".jsonl", "no question field"),
    ('{"question": "", "answer": "2"}\n', ".jsonl", "question is empty"),
    ('{"question": "What is 1 + 1?", "answer": "2"}', ".json", "list of row objects"),
    ("question,answer\n", ".csv", "unsupported dataset file type"),
])
def test_broken_datasets_fail_at_make_with_the_row(tmp_path, content, suffix, match):
    path = tmp_path / f"broken{suffix}"
    path.write_text(content)
    with pytest.raises(ValueError, match=match):
        gym_llm.make("math/Dataset-v0", path=str(path))


def test_unparseable_gold_is_a_reward_error(tmp_path):
    path = tmp_path / "bad_gold.jsonl"
    path.write_text(json.dumps({"question": "What is x?", "answer": "\\frac{"}) + "\n")
    env = gym_llm.make("math/Dataset-v0", path=str(path))
    _, reward, term, _, info = play(env, 0, "\\boxed{5}")
    assert reward == 0.0 and term and "could not be parsed" in info["reward_error"]


def test_repeated_questions_keep_distinct_ids(tmp_path):
    path = tmp_path / "dup.jsonl"
    row = json.dumps({"question": "What is 2 + 2?", "answer": "#### 4"})
    path.write_text(row + "\n" + row + "\n")
    ids = [t.id for t in DatasetTasks(path).tasks("train")]
    assert len(set(ids)) == 2


def test_the_bundled_sample_is_the_default_and_its_answers_are_not_in_the_prompts():
    for split in ("train", "heldout"):
        env = gym_llm.make("math/Dataset-v0", split=split).unwrapped
        tasks = env.task_set.tasks(split)
        assert len(tasks) >= 12
        for i, task in enumerate(tasks):
            assert task.answer not in task.prompt
            assert play(env, i, f"\\boxed{{{task.answer}}}")[1] == 1.0


def test_difficulty_keeps_rows_up_to_a_level():
    env = gym_llm.make("math/Dataset-v0", path=str(MATH), difficulty=0.25).unwrapped
    assert [t.answer for t in env.task_set.tasks("train")] == ["14", "9", "1, 3"]
    assert gym_llm.make("math/Dataset-v0", difficulty=0.0).unwrapped.num_tasks == 24  # no levels: all kept
    assert gym_llm.make("math/Dataset-v0", path=str(MATH), difficulty=0.0).unwrapped.num_tasks == 2
    with pytest.raises(ValueError, match="difficulty"):
        gym_llm.make("math/Dataset-v0", difficulty=2.0)
