"""Planted IR bugs in fixtures/ir are found at the recorded lines; clean twins yield nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import UPDATE_SNAPSHOTS, expected_findings, write_expected
from kernlint.ir.phase import run_ir_phase
from kernlint.ir.tilelang import nvcc_path, tilelang_available
from kernlint.model import Phase

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "ir"
FILES = sorted(FIXTURES.glob("*.py"))
#: TileLang fixtures are lowered with TileLang and compiled with nvcc: without them, skipped
TILELANG_READY = tilelang_available() and nvcc_path() is not None


def test_every_fixture_has_a_twin_and_expectations():
    names = {p.stem for p in FILES}
    for p in FILES:
        assert p.with_suffix(".expected").exists(), p
        twin = p.stem.replace("_bad", "_good") if p.stem.endswith("_bad") else p.stem.replace("_good", "_bad")
        assert twin in names, p


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_fixture(path, ir_cache):
    if path.stem.startswith("tilelang_") and not TILELANG_READY:
        pytest.skip("needs the tilelang extra and nvcc")
    findings = run_ir_phase([str(path)], cache_dir=ir_cache, jobs=2)
    got = sorted((f.rule, f.span.line) for f in findings)
    if UPDATE_SNAPSHOTS:
        write_expected(path, Phase.IR, {(line, None, rule) for rule, line in got})
    expected = sorted((code, line) for line, _, code in expected_findings(path, Phase.IR))
    assert got == expected, [f.message for f in findings]
