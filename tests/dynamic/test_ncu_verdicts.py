"""ncu verdicts on a recorded ncu CSV (H200, see tests/data/dynamic/): thresholds as the catalogue writes them."""

from pathlib import Path

from kernlint.catalogue import get_rule
from kernlint.dynamic import confirm as confirm_mod
from kernlint.dynamic.ncu import meets
from kernlint.model import Finding, Level, Phase, Span, Verdict

DATA = Path(__file__).resolve().parents[1] / "data" / "dynamic"


def test_catalogue_thresholds_parse():
    # the measured store conflicts of fixtures/ir/bank_conflict_bad.py on an H200: 3584
    assert meets(3584.0, get_rule("KL302").confirm.threshold) is True
    assert meets(0.0, get_rule("KL302").confirm.threshold) is False
    assert meets("n/a", "> 0") is None and meets(1.0, "no number here") is None


def test_recorded_conflict_free_kernel_refutes_a_bank_conflict_finding(monkeypatch):
    text = (DATA / "smem_matmul_clean.ncu.plain.txt").read_text()
    monkeypatch.setattr(confirm_mod, "_run", lambda argv, env, cwd, timeout: (0, text, None))
    finding = Finding("KL302", "fixtures/dynamic/smem_matmul_clean.py", Span(1, 1, 1, 2), "m", Level.WARNING,
                      Phase.IR, kernel="matmul_kernel")
    step = confirm_mod.Step("ncu", "ncu", findings=[finding], argv=["ncu"])
    judged, new, _ = confirm_mod._run_ncu(step, None, 10)
    assert judged[0].verdict is Verdict.REFUTED
    conflicts = {k: v for k, v in judged[0].measurements.items() if "bank_conflicts" in k}
    assert conflicts and set(conflicts.values()) == {0.0}
    assert new == []
