"""KL103's solver-free proof of "no two programs meet" answers only what the solver answers: on
every fixture, the race findings are the same with the proof and with every question sent to z3."""

from pathlib import Path

import pytest

from kernlint import catalogue
from kernlint.engine import races
from kernlint.source.phase import lint_text

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(p for p in (ROOT / "fixtures").rglob("*.py") if "eval" not in p.parts)


def _races(path: Path) -> list[tuple]:
    result, _ = lint_text(path.name, path.read_text(errors="replace"), [catalogue.all_rules()["KL103"]()])
    return [(f.span, f.message) for f in result.findings]


def test_the_proof_changes_no_race_finding(monkeypatch):
    proven = []
    proof = races._disjoint

    def counted(*args):
        out = proof(*args)
        proven.append(out)
        return out

    monkeypatch.setattr(races, "_disjoint", counted)
    with_proof = {p: _races(p) for p in FILES}
    monkeypatch.setattr(races, "_disjoint", lambda *args: False)
    without = {p: _races(p) for p in FILES}
    assert any(proven), "no fixture question was proven without the solver: the test checks nothing"
    assert any(without.values())
    assert with_proof == without


@pytest.mark.parametrize("name", ["sum_race_bad.py", "overlapping_blocks_race_bad.py", "splitk_race_bad.py",
                                  "chunk_digits_race_bad.py", "flat_grid_race_bad.py"])
def test_a_real_race_is_not_proven_away(name):
    assert _races(ROOT / "fixtures" / "triton" / name)
