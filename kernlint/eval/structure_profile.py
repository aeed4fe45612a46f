"""``--profile``: one ncu pass per candidate over its own kernels (GPU only).

The judge (:mod:`kernlint.eval.judge`) starts one more candidate executor, in the same sandbox, under
``ncu --profile-from-start off`` (:func:`run_profile`): it sends the candidate's source, the
reference's weights and fresh inputs the reference executor made, and asks for one warm-up call and
one call between ``cudaProfilerStart``/``Stop``, so ncu sees exactly one forward call. ncu writes its
CSV to a file in the judge's folder; the judge parses it (:mod:`kernlint.dynamic.ncu`) and judges
the static predictions with the dynamic phase's judges (:mod:`kernlint.dynamic.ncu_judges`). Only
candidates that passed correctness are profiled.
"""

from __future__ import annotations

import os
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
#: the unit ncu reports a metric in when its output carries no unit row
_RAW_UNIT = {"gpu__time_duration.sum": "nsecond"}
#: ncu's short unit names (its details page) as the long ones of its raw page
_LONG = {"ns": "nsecond", "us": "usecond", "ms": "msecond", "s": "second", "B": "byte", "KB": "Kbyte", "MB": "Mbyte",
         "GB": "Gbyte", "TB": "Tbyte"}
_SCALE = {"": 1, "n": 1e-9, "u": 1e-6, "m": 1e-3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def metrics(extra: bool = True) -> list[str]:
    return ncu.metrics_for(CATEGORIES) + (list(EXTRA_METRICS) if extra else [])


def _base(value: Any, unit: str, base: str) -> float | None:
    """``value`` in ``unit`` (``Kbyte``, ``usecond``...) converted to ``base`` (``byte``, ``second``)."""
    if not isinstance(value, (int, float)):
        return None
    unit = _LONG.get(unit, unit)
    prefix = unit[: len(unit) - len(base)] if unit.endswith(base) else ""
    return float(value) * _SCALE.get(prefix, 1)


def _sum(rows: list, metric: str, base: str | None = None) -> float | None:
    vals = []
    for r in rows:
        v = r.metrics.get(metric)
        if base is not None:
            v = _base(v, r.units.get(metric) or _RAW_UNIT.get(metric, base), base)
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


def wanted(job: dict, result: dict, cuda: bool) -> bool:
    """Profile when asked (``job["profile"]``, on by default when timing), on a GPU, for a candidate
    that passed correctness and that no run-time check rejected (a profile cannot change a
    rejection), when ncu is there."""
    return bool(job.get("profile") and cuda and (result.get("correctness") or {}).get("passed_all")
                and result.get("status") == "ok" and not result.get("cheats") and ncu.find_ncu())


def profile_argv(kernel_symbols: list[str], wanted_metrics: list[str], log: Path) -> list[str]:
    """ncu's argv (the executor's command follows it): only the profiler range, only the
    candidate's kernels, everything ncu prints into ``log`` (the executor's stdout is its channel)."""
    argv = ncu.ncu_command([], wanted_metrics, kernels=kernel_symbols, executable=ncu.find_ncu() or "ncu")
    argv[1:1] = ["--profile-from-start", "off", "--print-units", "base", "--log-file", str(log)]
    return argv


def run_profile(judge, kernel_symbols: list[str]) -> dict:
    """One ncu pass over a third candidate executor, started and read by the judge
    (:class:`kernlint.eval.judge.Judge`): it loads the candidate, gets the same weights and fresh
    inputs from the judge, warms up and makes one call inside the profiler range. ncu's CSV goes
    to a file in the judge's folder, outside the executor's; the rows are parsed here. Returns
    ``{"rows": [...]}`` plus its cost, or ``{"error": ...}``."""
    from kernlint.eval.isolation import Gone, Process

    t0 = time.monotonic()
    out: dict[str, Any] = {"metrics_requested": 0}
    root = judge.cand.dir.parent
    for attempt, extra in enumerate((True, False)):  # a metric this ncu does not know fails the pass
        wanted_metrics = metrics(extra)
        log = root / f"ncu-{attempt}.csv"
        proc = Process(root, f"profile-{attempt}", _profile_env(judge.cand), None, judge.cand.cpu_seconds,
                       judge.cand.rss_limit_mb, wrapper=profile_argv(kernel_symbols, wanted_metrics, log))
        try:
            _profiled_call(judge, proc)
        except Gone as g:
            out["error"] = f"the profiled executor stopped: {g.kind()[1]}"
        except Exception as exc:  # noqa: BLE001 - the profile is optional evidence
            out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        finally:
            if proc.proc.poll() is None:
                proc.stop()
            try:
                proc.proc.wait(timeout=max(1.0, judge.deadline - time.monotonic()))
            except Exception:  # noqa: BLE001
                proc.kill()
        text = log.read_text(errors="replace") if log.exists() else ""
        rows = ncu.parse_csv(text)
        if rows:
            out.update(rows=rows, metrics_requested=len(wanted_metrics))
            out.pop("error", None)
            break
        out.setdefault("error", f"ncu exit code {proc.proc.returncode}: " + " ".join(text.split())[-400:])
    out["wall_s"] = round(time.monotonic() - t0, 3)
    return out


def _profile_env(cand) -> dict | None:
    """The candidate executor's environment, with its Triton cache (under its HOME) as the profiled
    executor's: the same candidate's kernels are not compiled twice. Only this candidate's own
    processes ever read or write that cache."""
    env = dict(cand.env or {})
    if "TRITON_CACHE_DIR" not in env and "TRITON_CACHE_DIR" not in os.environ:
        env["TRITON_CACHE_DIR"] = str(cand.dir / ".triton" / "cache")
    return env


def _profiled_call(judge, proc) -> None:
    """The requests of the profile pass: the judge's own inputs and weights, never the problem."""
    job, prob = judge.job, judge.job["problem"]
    header, texts = judge.load_request("candidate", "profile-load")
    judge.ask_texts(proc, header, texts=texts, locked=False)  # imports under ncu: seconds, no device work
    if prob["kind"] == "kernelbench":
        variant = list(job.get("shape_variants", [0]))[0]
        init, inputs = judge.ref_inputs(variant, "profile")
        judge.build_models(proc, variant, init)
        judge.ask(proc, {"op": "stage"}, {"sets": [inputs]})
        req = {"op": "profile"}
    else:
        judge.ask(proc, {"op": "stage"}, {"sets": [[]]})
        req = {"op": "profile", "function": prob["test_function"]}
    with judge.tuning(True):  # compiled outside the lock (tuned while the GPU is this slot's alone)
        judge.ask_unlocked(proc, {**req, "warm_only": True})
    with judge.measuring():
        judge.ask(proc, req)
