"""gym-llm report on real run directories: what a finished training run's page
holds, and what it does with a partial run, one from an older gym-llm, and one
still being written (a report of what is there, with a note; never a traceback)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from gym_llm.apps.report import REPORT_FILE, load_run, write_report
from gym_llm.apps.runs import trajectory_file, trajectory_files
from tests.report.conftest import REPORT_ENV
from tests.report.report_support import jsonl, page_data


def test_the_trainer_writes_the_report_of_the_whole_run(trained_run: Path) -> None:
    page = trained_run / REPORT_FILE
    assert page.is_file()  # written by Trainer.train at its end
    data = page_data(page)
    files = trajectory_files(trained_run)
    assert len(data["trajectories"]) == sum(len(jsonl(p)) for p in files)  # under the cap: every episode
    titles = {c["title"] for c in data["charts"]}
    for title in ("Reward (all environments)", f"Reward: {REPORT_ENV}", "KL", "Entropy", "Length (tokens)",
                  "Clip fraction", "Gap: training reward - strict score",
                  f"Hack signals: {REPORT_ENV}"):
        assert title in titles, titles
    reward = next(c for c in data["charts"] if c["title"] == f"Reward: {REPORT_ENV}")
    metrics = jsonl(trained_run / "metrics.jsonl")
    held = [[r["step"], r[f"heldout/{REPORT_ENV}/reward/mean"]] for r in metrics if f"heldout/{REPORT_ENV}/reward/mean" in r]
    assert {s["name"]: s["points"] for s in reward["series"]}["held-out"] == held and len(held) == 3
    # policy turns apart from the environment's, each with its turn reward
    multi = [t for t in data["trajectories"] if t["env"] == REPORT_ENV and t["split"] == "train"]
    records = {(r["group_id"], r["sample_index"]): r for r in jsonl(trajectory_file(trained_run, 1))}
    checked = 0
    for t in multi:
        record = records.get((t["group"], t["sample"])) if t["step"] == 1 else None
        if record is None:
            continue
        checked += 1
        assert t["turns"][0]["side"] == "prompt"
        assert [turn["reward"] for turn in t["turns"] if turn["side"] == "policy"] == record["turn_rewards"]
    assert checked
    assert any("env" in [turn["side"] for turn in t["turns"]] for t in multi)
    signalled = [t for t in multi if t["signals"]]
    assert signalled and all(t["signals"] == ["even_length"] for t in signalled)
    assert any(t["strict"] is not None for t in multi)
    # first held-out eval (step 0) beside the last (step 2), the same tasks
    first = {(r["group_id"], r["sample_index"]): r for r in jsonl(trajectory_file(trained_run, 0, heldout=True))}
    last = {(r["group_id"], r["sample_index"]): r for r in jsonl(trajectory_file(trained_run, 2, heldout=True))}
    assert len(data["first_last"]) == len(first)
    answers = {(r["task_id"], r["messages"][-1]["content"]) for r in first.values()}
    assert all((p["task"], p["first"]) in answers for p in data["first_last"])
    assert {p["last"] for p in data["first_last"]} == {r["messages"][-1]["content"] for r in last.values()}


def test_a_partial_run_is_reported_with_notes(run_copy: Path) -> None:
    for p in trajectory_files(run_copy):
        p.unlink()
    data = load_run(run_copy)
    assert data.kind == "train" and data.charts and not data.trajectories
    assert any("no trajectories/" in n for n in data.notes)
    (run_copy / "metrics.jsonl").unlink()
    empty = load_run(run_copy)
    assert empty.kind == "empty" and "nothing to report yet" in empty.notes[0]
    assert "nothing to report yet" in write_report(run_copy).read_text()


def test_a_run_still_being_written(run_copy: Path) -> None:
    """A torn last line in metrics.jsonl and in a trajectory file (a writer
    killed, or the run still going)."""
    metrics = run_copy / "metrics.jsonl"
    text = metrics.read_text()
    metrics.write_text(text + text.splitlines()[-1][: len(text.splitlines()[-1]) // 2])
    traj = trajectory_file(run_copy, 2)
    rows = traj.read_text()
    traj.write_text(rows + rows.splitlines()[0][:100])
    data = load_run(run_copy)
    torn = [n for n in data.notes if "last line is incomplete" in n]
    assert len(torn) == 2 and any(n.startswith("metrics.jsonl") for n in torn)
    assert [r["step"] for r in data.metrics] == [r["step"] for r in jsonl_lines(text)]
    assert sum(t["source"] == traj.name for t in data.trajectories) == len(rows.splitlines())
    page = write_report(run_copy).read_text()
    assert "last line is incomplete" in page


def jsonl_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_a_run_from_an_older_version(run_copy: Path) -> None:
    """No hack_signals / strict_reward in the trajectories, no hacks/, strict/, gap/ metrics."""
    for p in trajectory_files(run_copy):
        rows = jsonl(p)
        for r in rows:
            r.pop("hack_signals"), r.pop("strict_reward")
        p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    metrics = run_copy / "metrics.jsonl"
    rows = [{k: v for k, v in r.items() if not k.startswith(("hacks/", "strict/", "gap/"))} for r in jsonl(metrics)]
    metrics.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_run(run_copy)
    assert not [c for c in data.charts if c["group"] == "monitoring"]
    assert [c for c in data.charts if c["title"] == "KL"]
    assert any("predate the hack_signals / strict_reward fields" in n for n in data.notes)
    assert all(t["old"] and t["signals"] == [] and t["strict"] is None for t in data.trajectories)
    write_report(run_copy)


def test_compressed_trajectories_are_read(run_copy: Path) -> None:
    """``gzip trajectories/*.jsonl`` to save space: the report reads them; one cut
    short (a copy in progress) gives what it holds up to the cut, with a note."""
    whole, cut = trajectory_file(run_copy, 1), trajectory_file(run_copy, 2)
    rows = {p: len(jsonl(p)) for p in (whole, cut)}
    for p in (whole, cut):
        p.with_name(p.name + ".gz").write_bytes(gzip.compress(p.read_bytes()))
        p.unlink()
    packed = cut.with_name(cut.name + ".gz")
    packed.write_bytes(packed.read_bytes()[: len(packed.read_bytes()) // 2])
    (run_copy / "trajectories" / "junk.jsonl.gz").write_bytes(b"not gzip at all")
    data = load_run(run_copy)
    assert sum(t["source"] == whole.name + ".gz" for t in data.trajectories) == rows[whole]
    assert 0 < sum(t["source"] == packed.name for t in data.trajectories) < rows[cut]
    assert any(n.startswith(f"{packed.name}: the compressed file is cut short") for n in data.notes), data.notes
    assert any(n.startswith("junk.jsonl.gz: could not be read") for n in data.notes), data.notes
    assert "cut short" in write_report(run_copy).read_text()


def test_malformed_lines_and_records_are_skipped_and_said(run_copy: Path) -> None:
    traj = trajectory_file(run_copy, 1)
    rows = traj.read_text().splitlines()
    bad = json.loads(rows[1])
    bad["messages"] = "not a list"
    traj.write_text("\n".join([rows[0], "{not json", json.dumps(bad), "[1, 2]", *rows[2:]]) + "\n")
    data = load_run(run_copy)
    assert any(n == f"{traj.name}: 2 malformed line(s) skipped." for n in data.notes), data.notes
    assert any(n.startswith(f"{traj.name}: 1 record(s) without the trajectory fields") for n in data.notes)
    assert sum(t["source"] == traj.name for t in data.trajectories) == len(rows) - 1


def test_model_text_cannot_break_the_page(run_copy: Path) -> None:
    traj = trajectory_file(run_copy, 1)
    rows = jsonl(traj)
    evil = "</script><script>document.title='owned'</script><!-- <b>bold</b>"
    rows[0]["messages"][-1]["content"] = evil
    traj.write_text("".join(json.dumps(r) + "\n" for r in rows))
    page = write_report(run_copy, run_copy / "out" / "page.html")
    assert evil not in page.read_text()
    data = page_data(page)
    assert any(turn["text"] == evil for t in data["trajectories"] for turn in t["turns"])
    assert "href='../metrics.jsonl'" in page.read_text()  # links relative to where the page is


def test_cli(run_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere" / "r.html"
    proc = subprocess.run([sys.executable, "-m", "gym_llm.apps.cli", "report", str(run_copy), "-o", str(out),
                           "--max-trajectories", "10"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = page_data(out)
    assert 0 < len(data["trajectories"]) <= 10 + len(trajectory_files(run_copy))  # at least one per file
    assert "sampled evenly over the files" in out.read_text()
    # 10 episodes: at most 10 // 4 = 2 files of each split, evenly spaced (held-out: steps 0 and 2 of 0, 1, 2)
    assert "episodes are sampled from 4 of the 5 trajectory files" in out.read_text()
    assert {t["source"] for t in data["trajectories"] if t["split"] == "heldout"} == {
        "heldout_step_000000.jsonl", "heldout_step_000002.jsonl"}
    proc = subprocess.run([sys.executable, "-m", "gym_llm.apps.cli", "report", str(tmp_path / "nowhere")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "is not a directory" in proc.stderr
