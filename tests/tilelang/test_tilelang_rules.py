"""The TileLang rules (KL2xx) on their own examples and on the planted-bug fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernlint.catalogue import all_rules
from kernlint.model import Frontend
from kernlint.rule import expected_lines
from kernlint.source.phase import lint_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tilelang"
TILELANG_CODES = [c for c, r in all_rules().items() if Frontend.TILELANG in getattr(r, "frontends", ())]


def source_rules():
    return [r() for r in all_rules().values() if hasattr(r, "frontends") and hasattr(r, "check")]


def findings(path: str, text: str, cols: bool = False) -> set[tuple]:
    result, _ = lint_text(path, text, source_rules())
    assert not result.errors, result.errors
    if cols:
        return {(f.span.line, f.span.col, f.rule) for f in result.findings}
    return {(f.span.line, f.rule) for f in result.findings}


def test_there_are_at_least_three_tilelang_rules():
    assert len([c for c in TILELANG_CODES if c.startswith("KL2")]) >= 3


@pytest.mark.parametrize("code", TILELANG_CODES)
def test_rule_metadata(code):
    assert all_rules()[code].validate() == []


@pytest.mark.parametrize(
    "code,i", [(c, i) for c in TILELANG_CODES for i in range(len(all_rules()[c].bad))]
)
def test_bad_example_yields_exactly_the_marked_lines(code, i):
    example = all_rules()[code].bad[i]
    want = {(line, rule) for line, rules in expected_lines(example).items() for rule in rules}
    assert findings("example.py", example) == want


@pytest.mark.parametrize(
    "code,i", [(c, i) for c in TILELANG_CODES for i in range(len(all_rules()[c].good))]
)
def test_good_example_yields_nothing_from_any_rule(code, i):
    assert findings("example.py", all_rules()[code].good[i]) == set()


FIXTURE_FILES = sorted(FIXTURES.glob("*.py"))


def test_fixtures_come_in_pairs():
    names = {p.stem for p in FIXTURE_FILES}
    assert names, "no TileLang fixtures"
    for name in names:
        if name.endswith("_bad"):
            assert name[: -len("_bad")] + "_good" in names, name


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_findings_match_expected_file(path):
    # NAME.expected: one "LINE:COL CODE" per finding, as for every fixture folder
    want = set()
    for line in path.with_suffix(".expected").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            pos, code = line.split()
            ln, col = pos.split(":")
            want.add((int(ln), int(col), code))
    if path.stem.endswith("_bad"):
        assert want, "a planted-bug fixture must expect a finding"
    else:
        assert want == set()
    assert findings(str(path), path.read_text(), cols=True) == want
