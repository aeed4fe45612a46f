"""The dynamic fixtures and the interpreter records their snapshots ask for: each row a ``--confirm``
run confirms stands for a record of its kind at its line (``NAME.expected``, the one fixture format)."""

from __future__ import annotations

from pathlib import Path

from helpers import expected_findings, expected_verdicts
from kernlint.model import Phase

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "dynamic"
#: interpreter record kind -> the static rule that predicts it
RULE_OF_KIND = {"oob-read": "KL101", "oob-write": "KL102", "race-write": "KL103", "race-read": "KL103"}
#: interpreter record kind -> the dynamic rule that reports it where no static finding predicted it
DYNAMIC_RULE_OF_KIND = {"oob-read": "KL401", "oob-write": "KL401", "race-write": "KL402", "race-read": "KL402",
                        "unwritten-output": "KL403"}


def fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*.py") if not p.name.startswith("_"))


#: a confirmed finding's rule -> the kind of interpreter record that confirms it (reads on a load's line)
_RECORD_OF_RULE = {"KL101": "oob", "KL102": "oob", "KL104": "oob", "KL109": "oob", "KL401": "oob",
                   "KL103": "race", "KL402": "race", "KL403": "unwritten-output", "KL108": "unwritten-output"}


def expected(path: Path) -> set[tuple[str, int]]:
    """(record kind, line) of every record a run of the fixture makes: one per confirmed row of its
    snapshot (``oob-read`` on a load's line, ``oob-write`` elsewhere; likewise ``race-*``)."""
    lines = access_lines(path)
    out = set()
    for (line, _, code), verdict in expected_verdicts(path, {Phase.SOURCE, Phase.DYNAMIC}).items():
        kind = _RECORD_OF_RULE.get(code)
        if verdict == "confirmed" and kind is not None:
            out.add((kind if kind == "unwritten-output" else f"{kind}-{'read' if lines.get(line) == 'load' else 'write'}",
                     line))
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
DISCOVERY = ("oob_other_tensor_bound_bad", "store_wrong_bound_bad", "race_scatter_duplicates_bad", "race_reader_writer_bad",
             "unwritten_narrow_tile_bad", "unwritten_floor_grid_bad", "block_ptr_overrun_bad",
             "race_ticket_reduction_bad")


def discovery_fixtures() -> list[Path]:
    """The planted discovery fixtures, then their clean twins."""
    planted = [FIXTURES / f"{stem}.py" for stem in DISCOVERY]
    return planted + [p.with_name(p.stem.removesuffix("_bad") + "_good.py") for p in planted]


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
