"""fixtures/: every planted bug is reported at its line and column, clean twins yield nothing.

Each fixture ``NAME.py`` has ``NAME.expected`` beside it: one ``LINE:COL CODE`` per expected
finding (empty for a clean twin). This test checks the source phase's; the IR phase's (``LINE CODE``)
are checked by tests/ir, and the verdicts a ``--confirm`` run gives (``LINE:COL CODE VERDICT``, for
fixtures/dynamic) by tests/dynamic.
"""

from pathlib import Path

import pytest

from helpers import UPDATE_SNAPSHOTS, expected_findings, write_expected
from kernlint.check import Options, run_check
from kernlint.config import load
from kernlint.model import Phase

ROOT = Path(__file__).resolve().parents[1]
# (the eval candidates' snapshots are of their records: tests/eval reads them)
FIXTURES = sorted(p for p in (ROOT / "fixtures").rglob("*.py")
                  if p.with_suffix(".expected").exists() and "eval" not in p.relative_to(ROOT).parts[:2])


def test_there_are_planted_and_clean_fixtures():
    names = {p.stem for p in FIXTURES}
    assert any(n.endswith("_bad") for n in names) and any(n.endswith("_good") for n in names)
    for name in names:
        if name.endswith("_bad"):
            assert name[:-4] + "_good" in names, f"{name} has no clean twin (NAME_good.py)"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_fixture_findings_match_expected(path):
    config = load(ROOT)
    result = run_check([path], config, Options())
    assert result.errors == []
    found = {(f.span.line, f.span.col, f.rule) for f in result.findings}
    if UPDATE_SNAPSHOTS:
        write_expected(path, Phase.SOURCE, found)
    assert found == expected_findings(path, Phase.SOURCE)
    # bugs the IR phase or only a run finds: tests/ir and tests/dynamic check those
    planted_elsewhere = bool(expected_findings(path, Phase.IR) | expected_findings(path, Phase.DYNAMIC))
    if path.stem.endswith("_bad") and not planted_elsewhere:
        assert found, "a planted-bug fixture must yield findings"


def test_snapshot_update_replaces_one_phase_and_keeps_the_others(tmp_path):
    snap = tmp_path / "k_bad.expected"
    snap.write_text("8:12 KL101\n8 KL301\n3:1 KL999  # a code no rule has\n")
    fixture = tmp_path / "k_bad.py"
    write_expected(fixture, Phase.SOURCE, {(9, 5, "KL102")})
    assert snap.read_text() == "8 KL301\n9:5 KL102\n"
    assert expected_findings(fixture, Phase.IR) == {(8, None, "KL301")}
    assert expected_findings(fixture, Phase.SOURCE) == {(9, 5, "KL102")}
