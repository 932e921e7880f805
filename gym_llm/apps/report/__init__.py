"""``gym-llm report RUN_DIR``: one self-contained HTML page of a run.

For a training run (``metrics.jsonl``, ``trajectories/``): train vs held-out
reward, KL, entropy, length and clip-fraction curves per environment, the
strict grader's gap and the hack signals over time, a browser of sampled
trajectories (filter by env, split, step, reward, signal; each turn with its
reward, environment turns marked apart from policy turns, reward components
and reasons), and the held-out tasks' answers at the first eval beside the
last. For an eval directory (``results.json``, ``samples.jsonl``): the
results with the strict grader beside the training reward, links to the
files, and the sample browser. docs/report.md describes the page.

Contract: :func:`write_report` reads whatever the directory holds (a
partial run, one from an older gym-llm, one still being written) and says
what it could not show in the page's notes, never raising on the
directory's contents (:mod:`.data`); :func:`try_write_report` is what the
trainer and ``gym-llm-eval`` call at the end of a run: it never raises, it
logs. The page needs no network (:mod:`.page`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from gym_llm.apps.report.data import RunData, load_run
from gym_llm.apps.report.page import render
from gym_llm.apps.runs import REPORT_FILE

__all__ = ["write_report", "try_write_report", "load_run", "render", "RunData", "REPORT_FILE"]

log = logging.getLogger(__name__)


def write_report(run_dir: str | os.PathLike, output: str | os.PathLike | None = None, *,
                 max_trajectories: int = 400, max_chars: int = 2000) -> Path:
    """Write the report of ``run_dir`` to ``output`` (default
    ``<run_dir>/report.html``) atomically; returns its path. At most
    ``max_trajectories`` episodes are embedded, each message cut to
    ``max_chars`` characters. ``FileNotFoundError`` when ``run_dir`` is not
    a directory."""
    data = load_run(run_dir, max_trajectories=max_trajectories, max_chars=max_chars)
    out = Path(output) if output is not None else Path(run_dir) / REPORT_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_text(render(data, out), encoding="utf-8")
    os.replace(tmp, out)
    return out


def try_write_report(run_dir: str | os.PathLike, logger: logging.Logger | None = None) -> Path | None:
    """:func:`write_report` for the end of a run: a failure is logged as a
    warning (with its traceback at debug level) and returns ``None``, so a
    report can never fail the run it describes."""
    logger = logger or log
    try:
        path = write_report(run_dir)
    except Exception as e:  # the run is done and must stay a success
        logger.warning("report.html not written for %s: %s: %s", run_dir, type(e).__name__, e)
        logger.debug("report failure", exc_info=True)
        return None
    logger.info("report: %s", path)
    return path
