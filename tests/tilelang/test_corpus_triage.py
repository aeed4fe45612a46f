"""Every TileLang finding on TileLang's upstream examples has a hand verdict, and >= 90% are real."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpora" / "tilelang"


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason="TileLang corpus not present")
def test_every_finding_is_triaged_and_nine_in_ten_are_real():
    spec = importlib.util.spec_from_file_location("triage_tilelang", ROOT / "benchmarks" / "triage_tilelang.py")
    triage = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(triage)
    findings = triage.run(CORPUS)
    keys = {f"{Path(f['path']).resolve().relative_to(CORPUS.resolve()).as_posix()}:{f['line']} {f['rule']}"
            for f in findings}
    assert keys <= set(triage.VERDICTS), sorted(keys - set(triage.VERDICTS))
    real = sum(triage.VERDICTS[k][0] == "real" for k in keys)
    assert real >= 0.9 * len(keys)
