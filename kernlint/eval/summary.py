"""Summary of a run's records: pass rates, fast_p, geometric-mean speedup, taxonomy counts."""

from __future__ import annotations

import math
import re
from collections import Counter

from kernlint.eval.policy import TAXONOMY
from kernlint.eval.structure import counts_by_kind

FAST_P = (0.0, 1.0, 1.5, 2.0)
CORRECT = {"passed", "structurally-flawed", "slower-than-baseline", "low-occupancy"}


def _speedup(rec: dict) -> float | None:
    return (rec.get("speedup") or {}).get("vs_reference")


def stage_seconds(recs: list[dict]) -> dict[str, float]:
    """Mean seconds per candidate in each kind of stage (``correctness-v1-s0`` counts as
    ``correctness``), most expensive first: where a batch spends its time."""
    spent: Counter = Counter()
    for r in recs:
        for name, s in (r.get("stage_s") or {}).items():
            spent[re.sub(r"(-[vs]\d+)+$", "", name)] += s
    return {k: round(v / len(recs), 3) for k, v in spent.most_common()} if recs else {}


def summarize(recs: list[dict]) -> dict:
    verdicts = Counter(r["verdict"] for r in recs)
    evaluated = [r for r in recs if r["verdict"] != "skipped"]
    n = len(evaluated)
    correct = [r for r in evaluated if r["verdict"] in CORRECT]
    timers = Counter(str((r.get("timings") or {}).get("candidate", {}).get("timer", "none")) for r in evaluated)
    fast = {}
    for p in FAST_P:
        hits = [r for r in correct if (p == 0.0 or ((_speedup(r) or 0.0) > p))]
        fast[f"fast_{p:g}"] = (len(hits) / n) if n else 0.0
    sps = [s for s in (_speedup(r) for r in correct) if s and s > 0]
    geo = math.exp(sum(math.log(s) for s in sps) / len(sps)) if sps else None
    reasons = Counter()
    for r in evaluated:
        for reason in r.get("reasons", []):
            reasons[reason.split(": ")[0]] += 1
    return {
        "candidates": len(recs),
        "evaluated": n,
        "skipped": verdicts.get("skipped", 0),
        "taxonomy": {k: verdicts.get(k, 0) for k in TAXONOMY},
        "pass_rate": (verdicts.get("passed", 0) / n) if n else 0.0,
        "correct_rate": (len(correct) / n) if n else 0.0,
        **fast,
        "geomean_speedup": geo,
        "speedup_count": len(sps),
        "timers": dict(timers),
        "degenerate_tasks": sorted({r["problem"] for r in recs if r.get("task_degenerate")}),
        "top_reasons": dict(reasons.most_common(15)),
        "structural_failures": counts_by_kind(evaluated),  # structure hook (#22)
        "mean_reward": (sum(r.get("reward", 0.0) for r in evaluated) / n) if n else 0.0,
        "mean_stage_s": stage_seconds(recs),
        # records that took the reference's values from an earlier candidate's run (:mod:`kernlint.eval.reuse`)
        "reused_reference_values": sum(bool(r.get("reused")) for r in recs),
    }


def to_markdown(s: dict) -> str:
    lines = ["# kernlint eval summary", "",
             f"{s['evaluated']} candidates evaluated ({s['skipped']} skipped).", "",
             "| verdict | count |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in s["taxonomy"].items()]
    lines += ["", "| metric | value |", "|---|---|"]
    for k in ("pass_rate", "correct_rate", "fast_0", "fast_1", "fast_1.5", "fast_2", "geomean_speedup", "mean_reward"):
        v = s.get(k)
        lines.append(f"| {k} | {'-' if v is None else f'{v:.3f}'} |")
    failures = s.get("structural_failures") or {}
    lines += ["", "Structural failures by kind: " + (", ".join(f"{k} {v}" for k, v in failures.items() if v) or "none")]
    lines += ["", f"Timers: {s['timers']}", ""]
    if any("cpu-perf-counter" in t for t in s["timers"]):
        lines.append("Speedups measured with the CPU perf_counter fallback are a smoke test, not GPU performance.")
    return "\n".join(lines) + "\n"
