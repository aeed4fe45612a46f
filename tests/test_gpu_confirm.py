"""On a GPU: compute-sanitizer and ncu turn static findings into confirmed / refuted verdicts."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernlint.model import Finding, Level, Phase, Span, Verdict

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.gpu


def _check(*args):
    r = subprocess.run([sys.executable, "-m", "kernlint", "check", *args, "--confirm", "--require-gpu",
                        "--output-format", "json"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return json.loads(r.stdout)["findings"]


def test_memcheck_confirms_planted_out_of_bounds_load():
    found = _check("fixtures/triton/vector_add_bad.py", "--select", "KL101")
    assert [(f["rule"], f["line"], f["verdict"]) for f in found] == [("KL101", 14, "confirmed")]
    tools = {e.get("tool") for e in found[0]["evidence"]["dynamic"]}
    assert "memcheck" in " ".join(map(str, tools)) or "compute-sanitizer" in " ".join(map(str, tools))


def test_memcheck_refutes_a_finding_on_the_clean_twin():
    from kernlint.dynamic.confirm import confirm

    path = ROOT / "fixtures" / "triton" / "vector_add_good.py"
    finding = Finding("KL101", "fixtures/triton/vector_add_good.py", Span(14, 9, 14, 30), "planted for the test",
                      Level.ERROR, Phase.SOURCE, kernel="add_kernel")
    result = confirm([finding], str(path), require_gpu=True, cwd=str(ROOT))
    assert result.findings[0].verdict is Verdict.REFUTED


def test_ncu_confirms_predicted_bank_conflict_and_clean_twin_stays_clean():
    found = _check("fixtures/ir/bank_conflict_bad.py", "--ir", "--select", "KL302")
    assert [(f["rule"], f["line"], f["verdict"]) for f in found] == [("KL302", 15, "confirmed")]
    assert any(v > 0 for k, v in found[0]["measurements"].items() if "bank_conflicts" in k)
    assert _check("fixtures/ir/bank_conflict_good.py", "--ir", "--select", "KL302") == []


def test_discovery_on_the_gpu_finds_what_only_a_run_shows_and_clean_twins_stay_clean():
    from tests.dynamic.fixture_marks import check_discovered, discovery_fixtures

    files = [str(p.relative_to(ROOT)) for p in discovery_fixtures()]
    r = subprocess.run([sys.executable, "-m", "kernlint", "check", *files, "--confirm", "--require-gpu",
                        "--output-format", "json"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 1, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["errors"] == [], data["errors"]
    check_discovered(data["findings"])
    tools = {run["tool"] for run in data["runs"]}
    assert {"memcheck", "interpreter"} <= tools
    assert any("gsan" in n for n in data["notices"]) or "gsan" in tools  # GSan used, or its absence said
