"""``--profile``: one ncu pass per candidate over its own kernels (GPU only).

The trusted side starts one more worker process, in ``profile`` mode, under ``ncu
--profile-from-start off``: the worker builds the problem's inputs, calls the candidate once to
compile and autotune, then calls it once more between ``cudaProfilerStart``/``Stop``, so ncu sees
exactly one forward call. ncu writes its CSV to a file the candidate is never told about; the
trusted side parses it (:mod:`kernlint.dynamic.ncu`) and judges the static predictions with the
dynamic phase's judges (:mod:`kernlint.dynamic.ncu_judges`). Only candidates that passed
correctness are profiled.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kernlint.dynamic import ncu

CATEGORIES = ("bank-conflict", "divergence", "occupancy", "spill", "uncoalesced")
#: beside the categories' metrics: SM throughput, DRAM bytes and FP32 instructions for the roofline
EXTRA_METRICS = ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum", "dram__bytes_write.sum",
                 "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                 "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
                 "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum")
_SCALE = {"": 1, "n": 1e-9, "u": 1e-6, "m": 1e-3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def metrics(extra: bool = True) -> list[str]:
    return ncu.metrics_for(CATEGORIES) + (list(EXTRA_METRICS) if extra else [])


def _base(value: Any, unit: str, base: str) -> float | None:
    """``value`` in ``unit`` (``Kbyte``, ``usecond``...) converted to ``base`` (``byte``, ``second``)."""
    if not isinstance(value, (int, float)):
        return None
    prefix = unit[: len(unit) - len(base)] if unit.endswith(base) else ""
    return float(value) * _SCALE.get(prefix, 1)


def _sum(rows: list, metric: str, base: str | None = None) -> float | None:
    vals = []
    for r in rows:
        v = r.metrics.get(metric)
        if base is not None:
            v = _base(v, r.units.get(metric, base), base)
        if isinstance(v, (int, float)):
            vals.append(float(v))
    return sum(vals) if vals else None


def _weighted(rows: list, metric: str) -> float | None:
    """Mean of a rate over launches, weighted by each launch's duration."""
    pairs = [(r.metrics.get(metric), r.metrics.get("gpu__time_duration.sum")) for r in rows]
    pairs = [(v, w if isinstance(w, (int, float)) and w > 0 else 1.0) for v, w in pairs if isinstance(v, (int, float))]
    if not pairs:
        return None
    return sum(v * w for v, w in pairs) / sum(w for _, w in pairs)


def summarize_rows(rows: list[ncu.KernelMetrics]) -> dict:
    """One number per structural metric over one kernel's profiled launches."""
    ld = _sum(rows, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
    st = _sum(rows, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
    wf_ld = _sum(rows, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    wf_st = _sum(rows, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
    conflicts = (ld or 0) + (st or 0)
    wavefronts = (wf_ld or 0) + (wf_st or 0)
    sectors = _sum(rows, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") or 0
    sectors += _sum(rows, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") or 0
    requests = _sum(rows, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") or 0
    requests += _sum(rows, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum") or 0
    local = (_sum(rows, "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "byte") or 0) + (
        _sum(rows, "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum", "byte") or 0)
    warps = _weighted(rows, "sm__warps_active.avg.pct_of_peak_sustained_active")
    lanes = _weighted(rows, "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio")
    fp = [_sum(rows, m) for m in EXTRA_METRICS[3:]]
    dram = [_sum(rows, m, "byte") for m in ("dram__bytes_read.sum", "dram__bytes_write.sum")]
    regs = [r.metrics.get("launch__registers_per_thread") for r in rows]
    return {
        "launches": len(rows),
        "seconds": _sum(rows, "gpu__time_duration.sum", "second"),
        "bank_conflicts": conflicts, "shared_wavefronts": wavefronts,
        "bank_conflict_excess": round(conflicts / (wavefronts - conflicts), 4) if wavefronts > conflicts else None,
        "sectors_per_request": round(sectors / requests, 3) if requests else None,
        "local_bytes": local,
        "achieved_occupancy": round(warps / 100, 4) if warps is not None else None,
        "predicated_on_lane_ratio": round(lanes / 32, 4) if lanes is not None else None,
        "dram_pct": _weighted(rows, "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        "sm_pct": _weighted(rows, "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        "dram_bytes": sum(d for d in dram if d) if any(dram) else None,
        # FFMA counts two FLOPs
        "flops": (2 * (fp[0] or 0) + (fp[1] or 0) + (fp[2] or 0)) if any(v is not None for v in fp) else None,
        "registers": max((r for r in regs if isinstance(r, (int, float))), default=None),
        "grid": rows[0].grid if rows else "", "block": rows[0].block if rows else "",
    }


def judge_predictions(rows: list[ncu.KernelMetrics], findings: list[dict]) -> list[dict]:
    """The dynamic phase's verdict on each static finding of the kernel (KL302 against the counted
    conflicts, KL305 against sectors per request, KL304 against ncu's occupancy limits...)."""
    from kernlint.catalogue import all_rules
    from kernlint.dynamic import ncu_judges
    from kernlint.model import Finding

    rules = all_rules()
    objs = [Finding.from_dict(f) for f in findings]
    out = []
    for f in objs:
        j = ncu_judges.judge(f, objs, rows, rules.get(f.rule))
        if j is not None:
            out.append({"rule": f.rule, "line": f.span.line, "verdict": j.verdict.value, "metric": j.metric,
                        "value": j.value, "measurements": j.measurements, "note": j.note})
    return out


def profile_summary(rows: list[ncu.KernelMetrics], structure_kernels: list[dict]) -> dict:
    """Per kernel (by device symbol): the metrics, and the static findings judged against them."""
    by_symbol: dict[str, list] = {}
    for r in rows:
        by_symbol.setdefault(r.kernel, []).append(r)
    kernels = {}
    for symbol, krows in by_symbol.items():
        summary = summarize_rows(krows)
        static = [k for k in structure_kernels if k["hot"] and k["device_symbol"] == symbol]
        findings = [f for k in static for f in k["findings"]]
        summary["judged_findings"] = judge_predictions(krows, findings) if findings else []
        for j in summary["judged_findings"]:
            m = j["measurements"]
            if "measured_sector_ratio" in m:
                summary["sector_ratio"] = max(summary.get("sector_ratio") or 0, m["measured_sector_ratio"])
            if "predicted_conflicts" in m:
                summary["predicted_conflicts"] = m["predicted_conflicts"]
        kernels[symbol] = summary
    total = [k["seconds"] for k in kernels.values() if k.get("seconds")]
    dram = [k["dram_bytes"] for k in kernels.values() if k.get("dram_bytes")]
    flops = [k["flops"] for k in kernels.values() if k.get("flops")]
    return {"kernels": kernels, "kernel_seconds": sum(total) if total else None,
            "dram_bytes": sum(dram) if dram else None, "flops": sum(flops) if flops else None}


def wanted(opts, result: dict, cuda: bool) -> bool:
    """Profile by default when timing ran on a GPU and the candidate passed correctness."""
    on = opts.profile if opts.profile is not None else opts.timing
    return bool(on and cuda and (result.get("correctness") or {}).get("passed_all")
                and result.get("status") == "ok" and ncu.find_ncu())


def profile_argv(command: list[str], kernel_symbols: list[str], wanted_metrics: list[str], log: Path) -> list[str]:
    """ncu over ``command``: only the profiler range, only the candidate's kernels, CSV into ``log``."""
    argv = ncu.ncu_command(command, wanted_metrics, kernels=kernel_symbols, executable=ncu.find_ncu() or "ncu")
    argv[1:1] = ["--profile-from-start", "off", "--print-units", "base", "--log-file", str(log)]
    return argv


def run_profile(job: dict, kernel_symbols: list[str], timeout_s: float, env: dict[str, str] | None = None
                ) -> dict:
    """One ncu pass over a profile-mode worker; the parsed rows as ``{"rows": [...]}`` plus cost."""
    from kernlint.eval import isolation

    t0 = time.monotonic()
    out: dict[str, Any] = {"metrics_requested": 0}
    with tempfile.TemporaryDirectory(prefix="kernlint-profile-") as tmp:
        tmpdir = Path(tmp)
        job_path, result_path, log = tmpdir / "job.json", tmpdir / "result.json", tmpdir / "ncu.csv"
        job_path.write_text(json.dumps({**job, "mode": "profile"}))
        (tmpdir / "work").mkdir()
        (tmpdir / "home").mkdir()
        e = isolation.worker_env(env, home=str(tmpdir / "home"))
        worker = [sys.executable, "-m", "kernlint.eval.worker", str(job_path), str(result_path)]
        for extra in (True, False):  # a metric this ncu does not know fails the pass: retry with the core set
            wanted_metrics = metrics(extra)
            argv = profile_argv(worker, kernel_symbols, wanted_metrics, log)
            try:
                proc = subprocess.run(argv, cwd=tmpdir / "work", env=e, capture_output=True, text=True,
                                      timeout=timeout_s)
            except subprocess.TimeoutExpired:
                out["error"] = f"ncu took longer than {timeout_s:.0f}s"
                break
            text = (log.read_text(errors="replace") if log.exists() else "") or proc.stdout
            rows = ncu.parse_csv(text)
            if rows:
                out.update(rows=rows, metrics_requested=len(wanted_metrics))
                out.pop("error", None)
                break
            out["error"] = (f"ncu exit code {proc.returncode}: "
                            + " ".join((text + proc.stdout + proc.stderr).split())[-400:])
    out["wall_s"] = round(time.monotonic() - t0, 3)
    return out


# -- inside the profile-mode worker (the candidate's process) -------------------------------


def profile_worker(job: dict, workdir: Path) -> None:
    """Build the inputs, warm the candidate up, then one call inside the profiler range."""
    import torch

    from kernlint.eval import worker as W

    device = torch.device("cuda")
    seed = list(job.get("seeds", [0]))[0]
    prob = job["problem"]
    ref_path, cand_path = workdir / "reference_problem.py", workdir / "candidate_module.py"
    if prob["kind"] == "kernelbench":
        ref_path.write_text(prob["source"])
        cand_path.write_text(job["candidate"]["source"])
        ref_mod = W.load_module(ref_path, "reference_problem")
        cand_mod = W.load_module(cand_path, "candidate_module")
        W._set_seed(seed)
        init, inputs = W.shape_variant_inputs(ref_mod, 0)
        W._set_seed(seed)
        model = cand_mod.ModelNew(*init).to(device).eval()
        inputs = W._to(inputs, device)

        def call():
            with torch.no_grad():
                model(*inputs)
    else:
        cand_path.write_text(job["candidate"]["source"] + "\n\n" + prob["test_code"])
        cand_mod = W.load_module(cand_path, "candidate_tb")
        test = getattr(cand_mod, prob["test_function"])

        def call():
            W._set_seed(seed)
            test()
    call()
    torch.cuda.synchronize()
    cudart = torch.cuda.cudart()
    cudart.cudaProfilerStart()
    call()
    torch.cuda.synchronize()
    cudart.cudaProfilerStop()
