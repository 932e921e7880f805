"""benchmarks/run_all.py: runs every bench_*.py, keeps failures visible."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

RUN_ALL = Path(__file__).resolve().parents[2] / "benchmarks" / "run_all.py"


def _bench(folder: Path, name: str, body: str) -> None:
    (folder / f"bench_{name}.py").write_text(textwrap.dedent(body))


def _bench_dir(tmp_path: Path, **bodies: str) -> Path:
    """A ``benchmarks/`` folder under ``tmp_path`` holding ``bench_<name>.py`` for each body."""
    bench = tmp_path / "benchmarks"
    bench.mkdir()
    for name, body in bodies.items():
        _bench(bench, name, body)
    return bench


def _run_all(bench: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    """``run_all.py`` over the benchmarks in ``bench``, writing ``out``."""
    return subprocess.run([sys.executable, str(RUN_ALL), "--dir", str(bench), "--out", str(out), *args],
                          capture_output=True, text=True, timeout=60)


def test_run_all_collects_sections_and_reports_failures(tmp_path: Path) -> None:
    bench = _bench_dir(
        tmp_path,
        zeta="print('## zeta\\n\\n| x | 1.0 |')\n",
        trainer_vs_trl="print('## trainer_vs_trl')\n",
        math_verify="print('## math_verify')\n",
        core="print('## core\\n\\nfigure 42 ops/s')\n",
        broken="import sys\nprint('partial line')\nsys.exit('boom: the verifier crashed')\n",
        hangs="import time\ntime.sleep(60)\n",
        silent="pass\n",
        # vLLM's logs would land in the section: benchmarks get them sent to stderr
        logs="import os\nprint('## logs to', os.environ.get('VLLM_LOGGING_STREAM'))\n",
    )
    out = tmp_path / "RESULTS.md"
    proc = _run_all(bench, out, "--timeout", "5")
    assert proc.returncode == 1, proc.stderr  # failures make the run fail, after writing
    text = out.read_text()
    # header: command, machine, date
    assert "run_all.py --dir" in text
    assert "cores (`nproc`)" in text
    assert "- Date: 20" in text
    assert "## logs to ext://sys.stderr" in text
    # layers first (by name prefix), then the others alphabetically
    order = ["## core", "## math_verify", "## trainer_vs_trl", "## broken", "## hangs", "## zeta"]
    positions = [text.index(section) for section in order]
    assert positions == sorted(positions)
    assert "figure 42 ops/s" in text and "| x | 1.0 |" in text
    assert "| [broken](#broken) | failed (exit 1) | " in text
    assert "boom: the verifier crashed" in text and "partial line" in text
    assert "| [hangs](#hangs) | timed out | " in text
    assert "| [silent](#silent) | failed (no output) | " in text
    assert "| [core](#core) | ok | " in text


def test_run_all_only_and_unknown_name(tmp_path: Path) -> None:
    bench = _bench_dir(tmp_path, core="print('## core ok')\n", extra="raise SystemExit(3)\n")
    out = tmp_path / "R.md"
    ok = _run_all(bench, out, "--only", "core")
    assert ok.returncode == 0, ok.stderr
    assert "## core ok" in out.read_text() and "extra" not in out.read_text()
    bad = _run_all(bench, out, "--only", "nope")
    assert bad.returncode == 2 and "no benchmark named ['nope']" in bad.stderr


def test_update_replaces_only_the_benchmarks_run(tmp_path: Path) -> None:
    bench = _bench_dir(tmp_path, core="print('## core\\n\\nfigure 1')\n",
                       sandbox="print('## sandbox\\n\\nfigure 2')\n")
    out = tmp_path / "RESULTS.md"

    def run(*args: str) -> str:
        proc = _run_all(bench, out, *args)
        assert proc.returncode == 0, proc.stderr
        return out.read_text()

    run()
    _bench(bench, "core", "print('## core\\n\\nfigure 3')\n")
    _bench(bench, "sandbox", "print('## sandbox\\n\\nfigure 4')\n")
    _bench(bench, "serve", "print('## serve\\n\\nfigure 5')\n")
    text = run("--only", "sandbox,serve", "--update")
    assert "figure 1" in text and "figure 3" not in text  # core kept as it was
    assert "figure 2" not in text and "figure 4" in text and "figure 5" in text
    assert text.count('<a id="sandbox">') == 1 and text.count("| [sandbox](#sandbox) |") == 1
    assert text.index('<a id="core">') < text.index('<a id="sandbox">') < text.index('<a id="serve">')
    assert "- Command: `python benchmarks/run_all.py --dir" in text
    assert "- Updated by: `python benchmarks/run_all.py --dir" in text and "--update`" in text
    assert "figure 5" in run("--only", "core", "--update")  # a second update keeps the first one's
