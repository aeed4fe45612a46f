"""The dynamic fixtures and what their ``# dyn-expect: KIND[, KIND]`` markers ask for."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import expected_findings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "dynamic"
MARK = re.compile(r"#\s*dyn-expect:\s*([a-z-]+(?:\s*,\s*[a-z-]+)*)")
#: interpreter record kind -> the static rule that predicts it
RULE_OF_KIND = {"oob-read": "KL101", "oob-write": "KL102", "race-write": "KL103", "race-read": "KL103"}
#: interpreter record kind -> the dynamic rule that reports it where no static finding predicted it
DYNAMIC_RULE_OF_KIND = {"oob-read": "KL401", "oob-write": "KL401", "race-write": "KL402", "race-read": "KL402",
                        "unwritten-output": "KL403"}


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


#: fixtures planted for discovery: bugs a run shows whatever the static phase makes of them
DISCOVERY = ("oob_other_tensor_bound", "store_wrong_bound", "race_scatter_duplicates", "race_reader_writer",
             "unwritten_narrow_tile", "unwritten_floor_grid", "block_ptr_overrun")


def discovery_fixtures() -> list[Path]:
    """The planted discovery fixtures, then their clean twins."""
    planted = [FIXTURES / f"{stem}.py" for stem in DISCOVERY]
    return planted + [p.with_name(p.stem + "_good.py") for p in planted]


def confirmed_at_mark(kind: str, line: int, findings: list[dict], static_lines: set[int]) -> bool:
    """A confirmed finding (JSON output) at a marker's line: the dynamic rule that reports ``kind``,
    or any rule where a static finding is planted on that line."""
    rules = {f["rule"] for f in findings if f["line"] == line and f["verdict"] == "confirmed"}
    return DYNAMIC_RULE_OF_KIND[kind] in rules or (line in static_lines and bool(rules))


def check_discovered(findings: list[dict]) -> None:
    """Every marker of the discovery fixtures has a confirmed finding at its line (the dynamic
    rule, unless a static finding there predicted it); clean twins have none but refuted ones."""
    by_file: dict[str, list[dict]] = {}
    for f in findings:
        by_file.setdefault(Path(f["path"]).name, []).append(f)
    for path in discovery_fixtures():
        mine = by_file.get(path.name, [])
        if path.stem.endswith("_good"):
            assert all(f["verdict"] == "refuted" for f in mine), (path.name, mine)
            continue
        static = {line for line, _, _ in expected_findings(path)}
        for kind, line in expected(path):
            assert confirmed_at_mark(kind, line, mine, static), (path.name, kind, line, mine)
