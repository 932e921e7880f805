"""tests/servers.py, the helper that runs ``vllm serve`` for the tests: a
shared server asked for again after ``startup_timeout_s`` has passed since its
launch is ready, not late (a later module's fixture reuses it; the old check
gave up without asking and failed 7 tests of one CI run). A static file server
stands in for vLLM: only ``/v1/models`` answering 200 matters here."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/servers.py, as the other users import it
import servers  # noqa: E402


def test_a_server_up_past_its_startup_timeout_is_ready(tmp_path: Path):
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "models").write_text("{}")
    server = servers.VLLMServer("unused", startup_timeout_s=30)
    server.args = [sys.executable, "-m", "http.server", str(server.port), "--bind", "127.0.0.1",
                   "--directory", str(tmp_path)]
    try:
        server.start()
        server.launched_at = time.monotonic() - 3600  # launched an hour ago, as a late module sees it
        assert server.wait_ready() is server
    finally:
        server.__exit__(None, None, None)
