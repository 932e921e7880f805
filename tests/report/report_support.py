"""Reading a report page back: the data it embeds."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_DATA = re.compile(r"<script type='application/json' id='report-data'>(.*?)</script>", re.S)


def page_data(path: Path) -> dict[str, Any]:
    """The JSON a report page draws from (what the browser's script parses)."""
    (blob,) = _DATA.findall(path.read_text(encoding="utf-8"))
    return json.loads(blob)


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
