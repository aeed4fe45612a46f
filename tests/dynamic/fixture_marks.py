"""The dynamic fixtures and what their ``# dyn-expect: KIND[, KIND]`` markers ask for."""

from __future__ import annotations

import re
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "dynamic"
MARK = re.compile(r"#\s*dyn-expect:\s*([a-z-]+(?:\s*,\s*[a-z-]+)*)")
#: interpreter record kind -> the static rule that predicts it
RULE_OF_KIND = {"oob-read": "KL101", "oob-write": "KL102", "race-write": "KL103", "race-read": "KL103"}


def fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*.py") if not p.name.startswith("_"))


def expected(path: Path) -> set[tuple[str, int]]:
    out = set()
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        m = MARK.search(line)
        if m:
            out |= {(k.strip(), lineno) for k in m.group(1).split(",")}
    return out


def access_lines(path: Path) -> dict[int, str]:
    """Line -> 'load'/'store' for every tl.load / tl.store call line of the file."""
    out = {}
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        if "tl.load(" in line:
            out[lineno] = "load"
        elif "tl.store(" in line:
            out[lineno] = "store"
    return out
