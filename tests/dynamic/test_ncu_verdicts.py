"""ncu verdicts on a recorded ncu CSV (H200, see tests/data/dynamic/): thresholds as the catalogue writes them."""

from pathlib import Path

import pytest

from kernlint.catalogue import get_rule
from kernlint.dynamic import confirm as confirm_mod
from kernlint.dynamic import ncu
from kernlint.dynamic.ncu import meets
from kernlint.model import Finding, Level, Phase, Span, Verdict

DATA = Path(__file__).resolve().parents[1] / "data" / "dynamic"


def test_catalogue_thresholds_parse():
    # the measured store conflicts of fixtures/ir/bank_conflict_bad.py on an H200: 3584
    assert meets(3584.0, get_rule("KL302").confirm.threshold) is True
    assert meets(0.0, get_rule("KL302").confirm.threshold) is False
    assert meets("n/a", "> 0") is None and meets(1.0, "no number here") is None


def test_recorded_conflict_free_kernel_refutes_a_bank_conflict_finding(monkeypatch):
    text = (DATA / "smem_matmul_good.ncu.plain.txt").read_text()
    monkeypatch.setattr(confirm_mod, "_run", lambda argv, env, cwd, timeout: (0, text, None))
    finding = Finding("KL302", "fixtures/dynamic/smem_matmul_good.py", Span(1, 1, 1, 2), "m", Level.WARNING,
                      Phase.IR, kernel="matmul_kernel")
    step = confirm_mod.Step("ncu", "ncu", findings=[finding], argv=["ncu"])
    judged, new, _ = confirm_mod._run_ncu(step, None, 10)
    assert judged[0].verdict is Verdict.REFUTED
    conflicts = {k: v for k, v in judged[0].measurements.items() if "bank_conflicts" in k}
    assert conflicts and set(conflicts.values()) == {0.0}
    assert new == []


ROOT = DATA.parents[2]
CONFLICT_CSV = DATA / "bank_conflict_bad.ncu.plain.txt"
TILELANG_CSV = DATA / "tilelang_bank_conflict_bad.ncu.plain.txt"


def _judge(monkeypatch, csv_path: Path, findings):
    text = csv_path.read_text()
    monkeypatch.setattr(confirm_mod, "_run", lambda argv, env, cwd, timeout: (0, text, None))
    step = confirm_mod.Step("ncu", "ncu", findings=findings, argv=["ncu"])
    return confirm_mod._run_ncu(step, None, 10)[0]


def _kl302(path: str, line: int, kernel: str, ld: int, st: int, symbol: str | None = None) -> Finding:
    f = Finding("KL302", path, Span(line, 5, line, 9), "m", Level.WARNING, Phase.IR, kernel=kernel)
    f.measurements.update(predicted_ld_excess_per_block=ld, predicted_st_excess_per_block=st)
    if symbol:
        f.evidence["device_symbol"] = symbol
    return f


def test_recorded_conflicts_confirm_the_ir_phase_prediction(monkeypatch, tmp_path):
    """End to end on CPU: the IR phase's own prediction for the fixture, judged by the ncu output
    recorded on an H200 (8 blocks of the planted kernel, store conflicts only)."""
    pytest.importorskip("triton")
    from kernlint.ir.phase import run_ir_phase

    findings = [f for f in run_ir_phase([str(ROOT / "fixtures/ir/bank_conflict_bad.py")], cache_dir=tmp_path, jobs=1)
                if f.rule == "KL302"]
    assert len(findings) == 1 and findings[0].measurements["predicted_st_excess_per_block"] > 0
    judged = _judge(monkeypatch, CONFLICT_CSV, findings)[0]
    assert judged.verdict is Verdict.CONFIRMED, judged.evidence
    m = judged.measurements
    assert m["blocks_launched"] == 8
    assert m["predicted_conflicts"] == m["predicted_st_excess_per_block"] * 8
    assert 0.9 <= m["measured_over_predicted"] <= 1.1, m
    assert judged.evidence["dynamic"][-1]["metric"].endswith("_op_st.sum")  # the op the model predicts


def test_far_fewer_conflicts_than_predicted_is_inconclusive(monkeypatch):
    # the same recorded kernel, but a prediction twice what it does: it conflicts, not as claimed
    f = _kl302("fixtures/ir/bank_conflict_bad.py", 15, "stage_tile", ld=0, st=896)
    judged = _judge(monkeypatch, CONFLICT_CSV, [f])[0]
    assert judged.verdict is Verdict.INCONCLUSIVE
    assert judged.measurements["measured_over_predicted"] == 0.5
    assert "not as this line's model says" in judged.evidence["dynamic"][-1]["note"]


def test_a_load_prediction_is_not_confirmed_by_store_conflicts(monkeypatch):
    f = _kl302("fixtures/ir/bank_conflict_bad.py", 15, "stage_tile", ld=448, st=0)
    judged = _judge(monkeypatch, CONFLICT_CSV, [f])[0]
    assert judged.verdict is Verdict.REFUTED  # the recorded kernel has no shared-load conflicts
    assert judged.evidence["dynamic"][-1]["metric"].endswith("_op_ld.sum")


def test_tilelang_kernel_is_found_by_its_gpu_name(monkeypatch):
    """TileLang compiles the Python `transpose` as `main_kernel` (recorded: 4096x4096 in 32x32 tiles,
    16384 blocks); 992 excess wavefronts per block is the IR phase's prediction for that tile walk."""
    f = _kl302("fixtures/ir/tilelang_bank_conflict_bad.py", 17, "transpose", ld=992, st=0, symbol="main_kernel")
    judged = _judge(monkeypatch, TILELANG_CSV, [f])[0]
    assert judged.verdict is Verdict.CONFIRMED
    assert judged.measurements["blocks_launched"] == 16384
    assert 0.99 < judged.measurements["measured_over_predicted"] < 1.01
    by_python_name = _kl302("fixtures/ir/tilelang_bank_conflict_bad.py", 17, "transpose", ld=992, st=0)
    assert _judge(monkeypatch, TILELANG_CSV, [by_python_name])[0].verdict is Verdict.INCONCLUSIVE  # not profiled


def test_blocks_launched_reads_the_grid_column():
    rows = ncu.parse_csv((DATA / "smem_matmul_good.ncu.plain.txt").read_text())
    matmul = [r for r in rows if r.kernel == "matmul_kernel"]
    assert ncu.blocks_launched(matmul) == 9  # grid (3, 3, 1)
    assert ncu.blocks_launched([ncu.KernelMetrics("k", grid="")]) is None


def _ir_findings(tmp_path, fixture: str, rule: str):
    pytest.importorskip("triton")
    from kernlint.ir.phase import run_ir_phase

    return [f for f in run_ir_phase([str(ROOT / "fixtures/ir" / fixture)], cache_dir=tmp_path, jobs=1) if f.rule == rule]


def test_recorded_sectors_per_request_confirm_an_uncoalesced_load(monkeypatch, tmp_path):
    findings = _ir_findings(tmp_path, "uncoalesced_bad.py", "KL305")
    assert len(findings) == 1 and findings[0].measurements["access"] == "load"
    judged = _judge(monkeypatch, DATA / "uncoalesced_bad.ncu.plain.txt", findings)[0]
    assert judged.verdict is Verdict.CONFIRMED, judged.evidence
    m = judged.measurements
    assert m["ideal_sectors_per_request"] == 4.0 and m["measured_sector_ratio"] >= 2.0
    assert abs(m["measured_sector_ratio"] - m["sector_ratio"]) < 0.5  # the model's 8x, measured


def test_coalesced_counters_refute_an_uncoalesced_claim(monkeypatch):
    # the recorded kernel's stores (one lane writes one float per program) are not what a load finding claims
    f = Finding("KL305", "fixtures/ir/uncoalesced_bad.py", Span(12, 16, 12, 20), "m", Level.WARNING, Phase.IR,
                kernel="column_sum")
    f.measurements.update(bytes_per_lane=4, access="store", sector_ratio=8.0)
    judged = _judge(monkeypatch, DATA / "uncoalesced_bad.ncu.plain.txt", [f])[0]
    assert judged.verdict is Verdict.REFUTED, judged.measurements
    assert judged.measurements["measured_sector_ratio"] < 1.25


def test_recorded_launch_limits_confirm_the_predicted_occupancy(monkeypatch, tmp_path):
    findings = _ir_findings(tmp_path, "occupancy_bad.py", "KL304")
    assert len(findings) == 1
    judged = _judge(monkeypatch, DATA / "occupancy_bad.ncu.plain.txt", findings)[0]
    assert judged.verdict is Verdict.CONFIRMED, judged.evidence
    assert judged.measurements["measured_limiters"] == "shared_mem"
    assert abs(judged.measurements["measured_theoretical_occupancy"] - judged.measurements["theoretical_occupancy"]) <= 0.05


def test_occupancy_claims_the_launch_does_not_bear_out(monkeypatch):
    f = Finding("KL304", "fixtures/ir/occupancy_bad.py", Span(11, 1, 11, 2), "m", Level.WARNING, Phase.IR, kernel="matmul")
    f.measurements.update(theoretical_occupancy=0.0, limiter="shared_memory")  # the recorded launch allows 1/16
    assert _judge(monkeypatch, DATA / "occupancy_bad.ncu.plain.txt", [f])[0].verdict is Verdict.REFUTED
    f = Finding("KL304", "fixtures/ir/occupancy_bad.py", Span(11, 1, 11, 2), "m", Level.WARNING, Phase.IR, kernel="matmul")
    f.measurements.update(theoretical_occupancy=0.0625, limiter="registers")  # right number, wrong limiter
    assert _judge(monkeypatch, DATA / "occupancy_bad.ncu.plain.txt", [f])[0].verdict is Verdict.INCONCLUSIVE


def test_recorded_local_memory_traffic_confirms_a_spill(monkeypatch):
    f = Finding("KL303", "fixtures/ir/spill_bad.py", Span(8, 1, 8, 2), "m", Level.WARNING, Phase.IR, kernel="softmax_row")
    judged = _judge(monkeypatch, DATA / "spill_bad.ncu.plain.txt", [f])[0]
    assert judged.verdict is Verdict.CONFIRMED
    assert judged.measurements["l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"] > 0


SHARED_NAME_CSV = DATA / "tilelang_shared_name_bad.ncu.plain.txt"


def _sharing(kernel: str, own: dict, launches: dict, ld: int) -> Finding:
    f = _kl302("fixtures/ir/tilelang_shared_name_bad.py", 18, kernel, ld=ld, st=0, symbol="main_kernel")
    f.evidence.update(device_symbol_shared_by=sorted(launches), launch_config=own, device_symbol_launches=launches)
    return f


TRANSPOSE = {"grid": [128, 128, 1], "block": [128, 1, 1]}
COPY = {"grid": [64, 64, 1], "block": [256, 1, 1]}


def test_kernels_sharing_a_gpu_name_are_judged_by_their_own_launches(monkeypatch):
    """Recorded on an H200: two TileLang kernels of one file both run as main_kernel (the transpose,
    grid 128x128 of 128 threads, and a staged copy, 64x64 of 256 threads); the evidence is the IR
    phase's (launch shape of each kernel under that name)."""
    launches = {"transpose": [TRANSPOSE], "staged_copy": [COPY]}
    judged = _judge(monkeypatch, SHARED_NAME_CSV, [_sharing("transpose", TRANSPOSE, launches, ld=992)])[0]
    assert judged.verdict is Verdict.CONFIRMED
    assert judged.evidence["dynamic"][-1]["launches"] == 1  # the copy's launch is not mixed in
    assert judged.measurements["blocks_launched"] == 16384
    # a load-conflict claim on the copy: its own launch has none (the transpose's 16 million are not its)
    copy = _judge(monkeypatch, SHARED_NAME_CSV, [_sharing("staged_copy", COPY, launches, ld=992)])[0]
    assert copy.verdict is Verdict.REFUTED


def test_kernels_sharing_a_gpu_name_and_a_launch_shape_stay_inconclusive(monkeypatch):
    same = {"transpose": [TRANSPOSE], "transpose_again": [TRANSPOSE]}
    judged = _judge(monkeypatch, SHARED_NAME_CSV, [_sharing("transpose", TRANSPOSE, same, ld=992)])[0]
    assert judged.verdict is Verdict.INCONCLUSIVE
    assert "cannot be told apart" in judged.evidence["dynamic"][-1]["note"]
    unknown = {"transpose": [TRANSPOSE], "staged_copy": [None]}  # a shape that depends on runtime sizes
    judged = _judge(monkeypatch, SHARED_NAME_CSV, [_sharing("transpose", TRANSPOSE, unknown, ld=992)])[0]
    assert judged.verdict is Verdict.INCONCLUSIVE
