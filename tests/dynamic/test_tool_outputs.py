"""The sanitizer and ncu parsers on every recorded tool output under tests/data/dynamic/.

Recorded on the GPU by ``benchmarks/dynamic_gpu_check.py`` (``dynamic_raw_outputs.tar.gz``, or its
members as plain files); each output is named ``<fixture>.<tool>.<variant>.txt``. Never
hand-written: without recordings these tests are skipped.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from kernlint.dynamic import ncu, sanitizer

from .fixture_marks import FIXTURES, expected

DATA = Path(__file__).resolve().parents[1] / "data" / "dynamic"


def recorded_outputs() -> list[tuple[str, str]]:
    out = []
    for path in sorted(DATA.glob("*")) if DATA.is_dir() else []:
        if path.name.endswith(".tar.gz"):
            with tarfile.open(path) as tar:
                for m in tar.getmembers():
                    if m.isfile():
                        out.append((m.name, tar.extractfile(m).read().decode(errors="replace")))
        elif path.suffix == ".txt":
            out.append((path.name, path.read_text(errors="replace")))
    return out


OUTPUTS = recorded_outputs()
SANITIZER = [(n, t) for n, t in OUTPUTS if n.count(".") >= 3 and n.split(".")[1] in sanitizer.TOOLS]
NCU = [(n, t) for n, t in OUTPUTS if n.count(".") >= 3 and n.split(".")[1] == "ncu"]


def _fixture(name: str) -> Path:
    """The fixture a recording was made of (planted ones were recorded before they took the ``_bad``
    suffix that names every planted fixture)."""
    stem = name.split(".")[0]
    named = FIXTURES / (stem + ".py")
    return named if named.exists() or stem.endswith("_good") else FIXTURES / (stem + "_bad.py")


@pytest.mark.skipif(not SANITIZER, reason="no recorded compute-sanitizer outputs in tests/data/dynamic")
@pytest.mark.parametrize("name,text", SANITIZER, ids=[n for n, _ in SANITIZER])
def test_sanitizer_report(name, text):
    tool = name.split(".")[1]
    report = sanitizer.parse_report(text, tool)
    defects = [r for r in report.records if r.kind != "tool-failure"]
    if report.completed and report.error_summary == 0:
        assert defects == []
    if report.completed and report.error_summary:
        assert defects or any(r.kind == "tool-failure" for r in report.records)
    fixture = _fixture(name)
    if not fixture.exists():
        return
    oob_lines = {ln for kind, ln in expected(fixture) if kind.startswith("oob")}
    for r in defects:
        assert r.kernel, r
        if r.kind.startswith("invalid") and r.line is not None:
            assert Path(r.path).stem == name.split(".")[0]  # the recorded run's own file
            assert r.line in oob_lines, (r, oob_lines)
        if r.kind.startswith("invalid"):  # every part of the record the tool printed was read
            assert r.address is not None and r.block is not None and r.thread is not None, r
            assert r.allocation_size and (r.bytes_after is not None or r.bytes_before is not None), r
    if fixture.stem.endswith("_good") and tool == "memcheck":
        assert defects == []


@pytest.mark.skipif(not NCU, reason="no recorded ncu outputs in tests/data/dynamic")
@pytest.mark.parametrize("name,text", NCU, ids=[n for n, _ in NCU])
def test_ncu_csv(name, text):
    rows = ncu.parse_csv(text)
    assert rows, "no profiled kernel parsed"
    for r in rows:
        assert r.kernel and r.metrics
        assert isinstance(r.metrics.get("gpu__time_duration.sum"), float)


SYNCCHECK_DIVERGENT = DATA / "divergent_barrier_bad.synccheck.plain.txt"


@pytest.mark.skipif(not SYNCCHECK_DIVERGENT.exists(), reason="no recorded synccheck output of the divergent barrier")
def test_recorded_synccheck_confirms_the_ir_phase_divergent_barrier(tmp_path):
    """Recorded with triton 3.6, whose line table puts the inline PTX at the call's last line (19);
    the IR finding points at the barrier's own line and matches through its debug lines."""
    from kernlint.dynamic.verdicts import apply_evidence
    from kernlint.ir.phase import run_ir_phase
    from kernlint.model import Verdict

    root = Path(__file__).resolve().parents[2]
    path = root / "fixtures" / "ir" / "divergent_barrier_bad.py"
    report = sanitizer.parse_report(SYNCCHECK_DIVERGENT.read_text(), "synccheck")
    records = [r.to_evidence() for r in report.records]
    assert report.completed and report.error_summary == 64
    assert {(r.kind, r.kernel, Path(r.path).name, r.line) for r in records} == {
        ("barrier-error", "half_barrier", "divergent_barrier_bad.py", 19)}
    findings = [f for f in run_ir_phase([str(path)], cache_dir=tmp_path, jobs=1) if f.rule == "KL306"]
    assert [f.span.line for f in findings] == [16]
    judged, new, _ = apply_evidence(findings, records, tool="compute-sanitizer synccheck", categories={"sync"},
                                    executed=lambda f: True)
    assert judged[0].verdict == Verdict.CONFIRMED and new == []
