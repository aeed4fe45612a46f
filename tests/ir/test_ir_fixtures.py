"""Planted IR bugs in fixtures/ir are found at the recorded lines; clean twins yield nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernlint.ir.phase import run_ir_phase
from kernlint.ir.tilelang import nvcc_path, tilelang_available

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "ir"
FILES = sorted(FIXTURES.glob("*.py"))
#: TileLang fixtures are lowered with TileLang and compiled with nvcc: without them, skipped
TILELANG_READY = tilelang_available() and nvcc_path() is not None


def test_every_fixture_has_a_twin_and_expectations():
    names = {p.stem for p in FILES}
    for p in FILES:
        assert p.with_suffix(".expected.json").exists(), p
        twin = p.stem.replace("_bad", "_clean") if p.stem.endswith("_bad") else p.stem.replace("_clean", "_bad")
        assert twin in names, p


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_fixture(path, ir_cache):
    if path.stem.startswith("tilelang_") and not TILELANG_READY:
        pytest.skip("needs the tilelang extra and nvcc")
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    findings = run_ir_phase([str(path)], cache_dir=ir_cache, jobs=2)
    got = sorted((f.rule, f.span.line) for f in findings)
    assert got == sorted((e["rule"], e["line"]) for e in expected), [f.message for f in findings]
