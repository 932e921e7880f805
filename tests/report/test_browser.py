"""The report of a real short training run in a real headless Chromium (the
Debian package, driven by playwright with ``executable_path``: playwright's own
browser download is not used). It loads with no console error, the curves
render, the filters change the rows, a row opens its turns.

``GYM_LLM_REPORT_SCREENSHOT=docs/report.png`` also saves the screenshot the
docs show (``docs/report.md``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gym_llm.apps.report import REPORT_FILE
from tests.report.conftest import REPORT_ENV
from tests.report.report_support import page_data

CHROMIUM = next((p for p in (os.environ.get("GYM_LLM_CHROMIUM"), shutil.which("chromium"),
                             shutil.which("chromium-browser")) if p), None)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium executable (apt-get install -y chromium; "
                                                         "or set GYM_LLM_CHROMIUM)")


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright==1.65.2")
    with sync_api.sync_playwright() as p:
        # --no-sandbox: CI containers run as root, where Chromium's own sandbox cannot start
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def test_the_report_works_in_a_browser(browser, trained_run: Path, tmp_path: Path) -> None:
    path = trained_run / REPORT_FILE
    data = page_data(path)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: errors.append(f"network request {r.url}") if not r.url.startswith("file:") else None)
    page.goto(path.as_uri())
    page.wait_for_selector("tr.traj-row")
    assert errors == []

    charts = page.locator("[id^=charts-] svg.chart")
    assert charts.count() == len(data["charts"]) >= 8
    for i in range(charts.count()):
        lines = charts.nth(i).locator("polyline.series")
        assert lines.count() >= 1
        assert all(len(lines.nth(j).get_attribute("points").split()) >= 1 for j in range(lines.count()))
    box = charts.first.bounding_box()
    assert box and box["width"] > 100 and box["height"] > 100
    for chart in data["charts"]:  # the y labels drawn are the axis the data chose (tests/report/test_charts.py)
        drawn = page.locator(f"svg.chart[data-title='{chart['title']}'] text.ytick").all_text_contents()
        assert drawn == [label for _, label in chart["axis"]["ticks"]], chart["title"]

    rows = page.locator("tr.traj-row")
    total = len(data["trajectories"])
    assert rows.count() == total == int(page.text_content("#traj-count"))
    page.select_option("#f-split", "heldout")
    assert rows.count() == sum(t["split"] == "heldout" for t in data["trajectories"]) < total
    page.select_option("#f-split", "")
    page.select_option("#f-signal", "even_length")
    signalled = sum("even_length" in t["signals"] for t in data["trajectories"])
    assert rows.count() == signalled == int(page.text_content("#traj-count"))
    assert 0 < signalled < total
    page.select_option("#f-signal", "")
    page.fill("#f-step-min", "2")
    assert rows.count() == sum(t["step"] is not None and t["step"] >= 2 for t in data["trajectories"])
    page.fill("#f-step-min", "")
    page.fill("#f-reward-min", "0.3")
    assert rows.count() == sum(t["reward"] is not None and t["reward"] >= 0.3 for t in data["trajectories"])
    page.fill("#f-reward-min", "")

    # a multi-turn episode: its turns, the environment's marked apart from the policy's
    page.select_option("#f-env", REPORT_ENV)
    page.select_option("#f-split", "train")
    for i in range(rows.count()):
        rows.nth(i).click()
        if page.locator("#traj-detail .turn.env").count():
            break
    assert page.locator("#traj-detail .turn.policy").count() >= 2
    assert page.locator("#traj-detail .turn.env").count() >= 1
    assert "turn reward" in page.text_content("#traj-detail .turn.policy >> nth=0")
    assert page.locator("#fl-body tr").count() == len(data["first_last"]) > 0
    assert errors == []

    shot = Path(os.environ.get("GYM_LLM_REPORT_SCREENSHOT") or tmp_path / "report.png")
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page.close()
