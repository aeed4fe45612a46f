"""fixtures/dynamic/ through ``kernlint check --confirm`` without a GPU (the interpreter judges): every
finding and its verdict as the fixture's snapshot records it (``LINE:COL CODE VERDICT``), what only a
run shows included (KL401-KL403), and clean twins with nothing a run confirms."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import UPDATE_SNAPSHOTS, expected_verdicts, write_expected
from kernlint.model import Phase

from .fixture_marks import FIXTURES, check_discovered, fixture_files

ROOT = FIXTURES.parents[1]
FILES = fixture_files()
PHASES = (Phase.SOURCE, Phase.DYNAMIC)


@pytest.fixture(scope="module")
def report():
    r = subprocess.run(
        [sys.executable, "-m", "kernlint", "check", str(FIXTURES), "--confirm", "--output-format", "json"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["errors"] == []
    return data


def _found(report, path: Path) -> dict[Phase, dict[tuple[int, int, str], str]]:
    out: dict[Phase, dict] = {phase: {} for phase in PHASES}
    for f in report["findings"]:
        if Path(f["path"]).name == path.name:
            out[Phase(f["phase"])][(f["line"], f["col"], f["rule"])] = f["verdict"]
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_confirmed_findings_match_the_snapshot(report, path):
    found = _found(report, path)
    if UPDATE_SNAPSHOTS:
        for phase in PHASES:
            write_expected(path, phase, set(found[phase]), found[phase])
    assert {**found[Phase.SOURCE], **found[Phase.DYNAMIC]} == expected_verdicts(path, set(PHASES))
    if path.stem.endswith("_good"):
        assert "confirmed" not in found[Phase.SOURCE].values() and not found[Phase.DYNAMIC]
    else:
        assert "confirmed" in {**found[Phase.SOURCE], **found[Phase.DYNAMIC]}.values()


def test_discovery_finds_what_only_a_run_shows_and_clean_twins_stay_clean(report):
    check_discovered(report["findings"])
    for f in report["findings"]:
        if f["phase"] == "dynamic":
            assert f["verdict"] == "confirmed" and f["evidence"]["dynamic"][0]["tool"] == "interpreter"
    # one interpreter process per file, whether or not it has a static finding
    assert sorted(run["tool"] for run in report["runs"]) == ["interpreter"] * len(FILES)
