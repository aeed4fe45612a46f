"""Structural judgement of candidates: the static structure of the kernels as launched (CPU), the
ncu profile and roofline verdicts (GPU), thresholds, reward shaping and the report."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, cuda_available
from helpers import expected_records

STRUCT = FIXTURES / "structure"
EXPECTED = expected_records(STRUCT / "candidates")
FLAW_RULES = {"KL302", "KL303", "KL305"}


def _suite(tmp_path_factory, **opts):
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates, load_problems
    from kernlint.eval.runner import run_batch

    out = tmp_path_factory.mktemp("structure") / "records.jsonl"
    probs = load_problems(STRUCT / "problems")
    cands = load_candidates(STRUCT / "candidates", probs)
    run_batch(probs, cands, out, EvalOptions(timeout_s=300, mem_limit_mb=4096, **opts), workers=1 if opts.get("timing", True) else 2)
    return {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}


@pytest.fixture(scope="module")
def cpu_records(tmp_path_factory):
    return _suite(tmp_path_factory, seeds=(0,), shape_variants=(0,), timing=False)


def _hot_rules(rec: dict) -> set[str]:
    return {f["rule"] for k in rec["structure"]["kernels"] if k["hot"] for f in k["findings"]}


@pytest.mark.parametrize("cid", sorted(EXPECTED))
def test_static_structure_of_the_launched_kernels_is_in_the_record(cid, cpu_records):
    rec, exp = cpu_records[cid], EXPECTED[cid]
    assert rec["verdict"] == exp["verdict"], rec["reasons"]
    for reason in exp["reasons"]:
        assert any(r.startswith(reason) for r in rec["reasons"]), (reason, rec["reasons"])
    kernels = rec["structure"]["kernels"]
    assert kernels and all(k["compiled"] for k in kernels), kernels
    # no GPU: compiled ahead of time from the signature the interpreter launched
    assert all(k["ir_source"] == "compiled from the launch's signature" for k in kernels)
    rules = _hot_rules(rec)
    assert set(exp["rules"]) <= rules, rules
    if not exp["rules"]:
        assert not rules & FLAW_RULES, rules


def test_the_specialization_is_the_one_launched(cpu_records):
    spills = cpu_records["softmax/spills"]["structure"]["kernels"][0]
    assert spills["spec"]["num_warps"] == 1 and spills["spec"]["constexprs"] == {"COLS": 8192}
    assert spills["registers"] and spills["spill_bytes"] > 0
    strided = cpu_records["transpose/strided"]["structure"]["kernels"][0]
    assert strided["spec"]["signature"] == {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32"}
    assert strided["spec"]["constexprs"] == {"BLOCK": 256}
    assert strided["grid"] == [64] and strided["launches"] >= 2
    finding = next(f for f in strided["findings"] if f["rule"] == "KL305")
    assert finding["path"].endswith("transpose/strided.py") and finding["line"] == 14


def test_flawed_candidates_are_rewarded_below_any_pass(cpu_records):
    for cid, rec in cpu_records.items():
        if rec["verdict"] == "structurally-flawed":
            assert 0 < rec["reward"] < 0.5, (cid, rec["reward"])
        if rec["verdict"] == "passed":
            assert rec["reward"] >= 0.5


def test_summary_counts_structural_failures_and_report_shows_structure(cpu_records):
    from kernlint.eval import report_html, summary

    recs = list(cpu_records.values())
    s = summary.summarize(recs)
    assert s["structural_failures"]["spill"] == 1 and s["structural_failures"]["uncoalesced"] == 1
    assert s["taxonomy"]["structurally-flawed"] == 2
    page = report_html.render(recs)
    assert "Kernels as launched" in page and "softmax_rows" in page and "spill 1" in page


# -- GPU: profile and roofline ----------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not cuda_available(), reason="ncu profiles need CUDA")
def test_gpu_verdicts_with_profile(tmp_path_factory):
    recs = _suite(tmp_path_factory, seeds=(0,), shape_variants=(0,), iters=20)
    for cid, exp in EXPECTED.items():
        rec = recs[cid]
        assert rec["verdict"] == exp["gpu"]["verdict"], (cid, rec["reasons"], rec["structure"].get("profile"))
        for reason in exp["gpu"]["reasons"]:
            assert any(r.startswith(reason) for r in rec["reasons"]), (cid, reason, rec["reasons"])
        assert rec["structure"]["kernels"][0]["ir_source"] == "captured from the launch"
        prof = rec["structure"].get("profile") or {}
        assert prof.get("kernels"), (cid, prof.get("error"))
        assert rec["structure"]["roofline"].get("efficiency") is not None


# -- units ------------------------------------------------------------------------------------


def test_roofline_memory_and_compute_roofs():
    from kernlint.eval.roofline import CEILINGS, roofline

    c = CEILINGS["H200"]
    r = roofline(4.3e9, 0, 2e-3, c, ["float32"])
    assert r["roof"] == "memory" and r["bound_s"] == pytest.approx(1e-3) and r["efficiency"] == pytest.approx(0.5)
    r = roofline(1e6, 7.9e12, 20e-3, c, ["bfloat16"])
    assert r["roof"] == "compute" and r["compute_roof"] == "bf16/fp16 tensor"
    assert r["efficiency"] == pytest.approx(0.5)
    assert roofline(1e6, 7.9e12, 20e-3, c, ["float32"])["compute_bound_s"] == pytest.approx(7.9e12 / c.fp32)


def _structure(eff_s: float, nbytes: float, seconds: float) -> dict:
    from kernlint.eval.roofline import CEILINGS, roofline
    from kernlint.eval.structure import StructureThresholds, _roofline_flaws

    roof = roofline(nbytes, 0, seconds, CEILINGS["H200"])
    return {"flaws": _roofline_flaws(roof, StructureThresholds()), "roofline": roof}


def test_roofline_flaws_below_above_and_too_small_to_judge():
    from kernlint.eval.structure import verdict_reasons

    big = 512 * 2**20
    slow = _structure(0, big, 10 * big / 4.3e12)  # 10% of the roof
    assert verdict_reasons(slow)[0] == "structurally-flawed"
    assert slow["flaws"][0]["measured"]["efficiency"] == pytest.approx(0.1)
    # above the roof: not a structural flaw but the judge's above-roofline cheat (one check)
    from kernlint.eval.roofline import implausible

    impossible = _structure(0, big, 0.5 * big / 4.8e12)  # twice the datasheet bandwidth
    assert verdict_reasons(impossible)[0] is None and "TB/s" in implausible(impossible["roofline"])
    cached = _structure(0, 1 << 20, 0.5 * (1 << 20) / 4.8e12)  # fits in L2: not judged implausible
    assert verdict_reasons(cached)[0] is None and implausible(cached["roofline"]) is None
    tiny = _structure(0, 4096 * 8, 1e-5)  # the roof is far under the launch latency: not judged
    assert verdict_reasons(tiny) == (None, [])


def _rows(**metrics):
    from kernlint.dynamic.ncu import KernelMetrics

    # durations as ncu's raw page gives them: nanoseconds (a row without a unit row is read so too)
    return [KernelMetrics("k", "0", "(64, 1, 1)", "(128, 1, 1)", metrics={"gpu__time_duration.sum": 50e3, **m})
            for m in [metrics]]


def test_measured_flaws_from_ncu_counters():
    from kernlint.eval.structure import StructureThresholds, _measured_flaws
    from kernlint.eval.structure_profile import profile_summary

    rows = _rows(**{"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 3100.0,
                    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 3200.0,
                    "sm__warps_active.avg.pct_of_peak_sustained_active": 3.0,
                    "dram__throughput.avg.pct_of_peak_sustained_elapsed": 5.0,
                    "sm__throughput.avg.pct_of_peak_sustained_elapsed": 4.0,
                    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum": 0.0})
    prof = profile_summary(rows, [])
    k = prof["kernels"]["k"]
    assert k["bank_conflict_excess"] == pytest.approx(31.0) and k["achieved_occupancy"] == pytest.approx(0.03)
    kinds = {f["kind"] for f in _measured_flaws([], prof, StructureThresholds())}
    assert kinds == {"bank-conflict", "low-occupancy"}
    # busy DRAM: low occupancy is not a flaw when the kernel is bandwidth-bound
    rows[0].metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = 90.0
    off = StructureThresholds(bank_conflict_excess=None)
    assert _measured_flaws([], profile_summary(rows, []), off) == []
    # a kernel of a few microseconds is launch-latency bound: its structure is not judged
    rows[0].metrics.update({"gpu__time_duration.sum": 3e3,
                            "dram__throughput.avg.pct_of_peak_sustained_elapsed": 5.0})
    assert _measured_flaws([], profile_summary(rows, []), StructureThresholds()) == []
    # the short unit names of ncu's details page convert too (2368 ns read as 2368 s judged a 2 us relu)
    rows[0].units["gpu__time_duration.sum"] = "ns"
    rows[0].metrics["gpu__time_duration.sum"] = 2368.0
    assert profile_summary(rows, [])["kernels"]["k"]["seconds"] == 2368e-9


def test_reward_is_shaped_by_efficiency():
    from kernlint.eval.policy import reward

    assert reward("passed", 2.0) == reward("passed", 2.0, None) == 1.5
    assert reward("passed", 2.0, 0.6) == 1.5 and reward("passed", 2.0, 0.1) < 1.5
    assert reward("passed", 1.0, 0.0) == 0.75
    assert reward("structurally-flawed", 1.2, 0.05) < reward("structurally-flawed", 1.2, 0.15) < 0.5
    assert reward("structurally-flawed", None) == 0.2


def test_cli_rejects_a_bad_threshold(tmp_path):
    from click.testing import CliRunner

    from kernlint.eval.cli import eval_command

    res = CliRunner().invoke(eval_command, [str(STRUCT / "problems"), str(STRUCT / "candidates"), "-o", str(tmp_path),
                                            "--structure", "min_effciency=0.3"])
    assert res.exit_code == 2 and "min_efficiency" in res.output


def test_tilelang_kernels_are_lowered_with_the_factory_arguments():
    from kernlint.eval.structure import tilelang_structure
    from kernlint.ir.tilelang import nvcc_path, tilelang_available

    if not tilelang_available() or nvcc_path() is None:
        pytest.skip("lowering TileLang needs tilelang and nvcc")
    source = (FIXTURES.parent / "ir" / "tilelang_bank_conflict_bad.py").read_text()
    kernels = tilelang_structure(source, "cand/transpose.py")
    assert [k["kernel"] for k in kernels] == ["transpose"]
    assert [(f["rule"], f["path"]) for f in kernels[0]["findings"]] == [("KL302", "cand/transpose.py")]


NCU_DETAILS = '''==PROF== Connected to process 123
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","123","python","h","transpose_staged","1","7","(128, 1, 1)","(256, 256, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","250.5"
"0","123","python","h","transpose_staged","1","7","(128, 1, 1)","(256, 256, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","Mbyte","268.4"
"0","123","python","h","transpose_staged","1","7","(128, 1, 1)","(256, 256, 1)","0","9.0","Command line profiler metrics","l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum","Kbyte","2"
"0","123","python","h","transpose_staged","1","7","(128, 1, 1)","(256, 256, 1)","0","9.0","Command line profiler metrics","smsp__thread_inst_executed_pred_on_per_inst_executed.ratio","","24"
'''


def test_ncu_details_csv_to_profile_numbers_in_base_units(tmp_path):
    from kernlint.dynamic import ncu
    from kernlint.eval.structure_profile import profile_argv, profile_summary

    prof = profile_summary(ncu.parse_csv(NCU_DETAILS), [])
    k = prof["kernels"]["transpose_staged"]
    assert k["seconds"] == pytest.approx(250.5e-6) and k["dram_bytes"] == pytest.approx(268.4e6)
    assert k["local_bytes"] == pytest.approx(2000) and k["predicated_on_lane_ratio"] == pytest.approx(0.75)
    assert prof["kernel_seconds"] == pytest.approx(250.5e-6)
    # the wrapper the judge starts the profiled executor under: its output goes to the log, never
    # into the executor's stdout (the channel)
    argv = profile_argv(["transpose_staged"], ["gpu__time_duration.sum"], tmp_path / "l")
    assert argv[1:3] == ["--profile-from-start", "off"] and "--log-file" in argv
    assert argv[argv.index("--log-file") + 1] == str(tmp_path / "l")
    assert any("transpose_staged" in a for a in argv) and "python" not in argv


def test_roofline_plot_places_each_timed_candidate_under_its_roof():
    from kernlint.eval.report_html import COLORS
    from kernlint.eval.roofline import CEILINGS, roofline
    from kernlint.eval.structure_report import roofline_svg

    recs = [{"id": f"p/{i}", "verdict": v, "structure": {"roofline": roofline(512e6, flops, s, CEILINGS["H200"])}}
            for i, (v, flops, s) in enumerate([("passed", 0, 1.5e-4), ("structurally-flawed", 0, 2e-3),
                                               ("passed", 4e12, 0.1)])]
    svg = roofline_svg(recs, COLORS)
    assert svg.count("<circle") == 3 and "p/1: structurally-flawed" in svg and "TFLOP/s" in svg
    assert "No roofline" in roofline_svg([{"id": "x", "verdict": "passed", "structure": {}}], COLORS)


def test_a_gpu_launch_hands_over_the_compiled_kernel(tmp_path):
    """What a GPU worker captures from Triton's CompiledKernel (here compiled ahead of time, so the
    driver's register count is filled in by hand) is judged without compiling again."""
    from kernlint.eval.structure import static_structure
    from kernlint.eval.structure_capture import compiled_data
    from kernlint.ir.compile import _triton_compile
    from kernlint.ir.loader import load_kernel

    import os

    if os.environ.get("TRITON_INTERPRET"):
        pytest.skip("compiling needs Triton's compiler, not its interpreter")
    path = STRUCT / "candidates" / "softmax" / "spills.py"
    spec = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32"}, "constexprs": {"COLS": 8192}, "divisible": [],
            "num_warps": 1, "num_stages": 3}
    ck = _triton_compile(load_kernel(str(path), "softmax_rows"), spec, spec["constexprs"], 90)
    data = compiled_data(ck)
    assert "ptx" in data["asm"] and "ttgir" in data["asm"] and data["metadata"]["num_warps"] == 1
    data.update(n_regs=255, n_spills=148)  # what the driver reports once the kernel is loaded on a GPU
    entry = {"kernel": "softmax_rows", "spec": spec, "launches": 2, "last_launch": 2, "grid": [4096], **data}
    [k] = static_structure([entry], path.read_text(), str(path))
    assert k["ir_source"] == "captured from the launch" and k["compiled"] and k["spill_bytes"] == 592
    assert "KL303" in {f["rule"] for f in k["findings"]}
