"""The structural filter: from a worker result, static findings and a policy to a verdict.

Taxonomy, in the order a candidate is judged (the first that applies wins):
``did-not-compile``, ``cheating``, ``runtime-error``, ``wrong``, ``structurally-flawed``
(:mod:`kernlint.eval.structure`), ``slower-than-baseline``, ``low-occupancy``, ``passed``; plus
``skipped`` when the task itself cannot be evaluated.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from kernlint.eval.structure import StructureThresholds, verdict_reasons as structure_verdict
from kernlint.model import Finding, Level

TAXONOMY = ("did-not-compile", "cheating", "runtime-error", "wrong", "structurally-flawed",
            "slower-than-baseline", "low-occupancy", "passed")
RUNTIME_KINDS = {"runtime-error", "illegal-address", "out-of-memory", "timeout", "crash"}
TASK_KINDS = {"reference-error", "no-test"}
REWARDS = {"did-not-compile": 0.0, "runtime-error": 0.0, "wrong": 0.0, "cheating": -1.0,
           "slower-than-baseline": 0.25, "low-occupancy": 0.25, "skipped": 0.0}


@dataclass
class Policy:
    #: reject when the candidate is slower than the reference by more than this fraction
    max_slowdown: float = 0.05
    #: reject when a compiled kernel's theoretical occupancy is below this (GPU only)
    min_occupancy: float = 0.0
    #: lint findings at or above this level make the candidate "cheating"; None disables
    fail_level: str | None = "error"
    #: apply the speed rule even when the timer is the CPU smoke-test timer
    speed_on_cpu: bool = False
    #: thresholds of the ``structurally-flawed`` verdict (:mod:`kernlint.eval.structure`)
    structure: StructureThresholds = field(default_factory=StructureThresholds)

    def to_dict(self) -> dict:
        return asdict(self)


#: the timings a candidate is compared with: the reference as written (its GEMMs on cuBLAS through
#: torch), torch.compile of it, and the reference with its GEMMs on CUTLASS (GEMM-family problems)
BASELINES = ("reference", "torch_compile", "cutlass")


def speedups(timings: dict) -> dict:
    out = {}
    cand = (timings.get("candidate") or {}).get("median_ms")
    for base in BASELINES:
        b = (timings.get(base) or {}).get("median_ms")
        if cand and b:
            out[f"vs_{base}"] = b / cand
    return out


def _wrong_reason(result: dict) -> str:
    ff = result.get("correctness", {}).get("first_failure", {})
    return (f"wrong: {ff.get('reason', 'outputs differ')} "
            f"(variant {ff.get('variant', '-')}, seed {ff.get('seed', '-')}, run {ff.get('run', '-')})")


def judge(result: dict, findings: list[Finding], policy: Policy) -> tuple[str, list[str]]:
    """(verdict, reasons). Reasons are short machine-readable strings with details after ':'."""
    reasons: list[str] = []
    kind = result.get("error_kind")
    if kind == "did-not-compile":
        return "did-not-compile", [f"did-not-compile: {result.get('error', '')[:300]}"]
    if kind in TASK_KINDS:
        return "skipped", [f"{kind}: {result.get('error', '')[:300]}"]
    if policy.fail_level:
        rank = Level(policy.fail_level).rank
        for f in findings:
            if f.level.rank >= rank:
                reasons.append(f"static:{f.rule}: {f.message} (line {f.span.line})")
    for c in result.get("cheats", []):
        reasons.append(f"runtime:{c['reason']}: {c.get('detail', '')}")
    if reasons:
        # what the trusted side found besides: the evidence that the attack did not work either
        if kind:
            reasons.append(f"{kind}: {result.get('error', '')[:300]}")
        elif not result.get("correctness", {}).get("passed_all", True):
            reasons.append(_wrong_reason(result))
        return "cheating", reasons
    if kind:
        return "runtime-error", [f"{kind}: {result.get('error', '')[:300]}"]
    if not result.get("correctness", {}).get("passed_all"):
        return "wrong", [_wrong_reason(result)]
    structural, why = structure_verdict(result.get("structure"))
    if structural:
        return structural, why
    timings = result.get("timings", {})
    cand = timings.get("candidate", {})
    on_gpu = str(cand.get("timer", "")).startswith("cuda")
    sp = speedups(timings).get("vs_reference")
    if sp is not None and (on_gpu or policy.speed_on_cpu) and sp < 1.0 / (1.0 + policy.max_slowdown):
        return "slower-than-baseline", [f"slower-than-baseline: {sp:.3f}x the reference"]
    occ = result.get("metrics", {}).get("min_occupancy")
    if occ is not None and policy.min_occupancy and occ < policy.min_occupancy:
        return "low-occupancy", [f"low-occupancy: {occ:.3f} < {policy.min_occupancy}"]
    return "passed", []


def reward(verdict: str, speedup: float | None, efficiency: float | None = None) -> float:
    """A scalar for RL loops: -1 cheating, 0 broken or wrong, 0.25 correct but rejected by the
    policy, and for a pass 1 + 0.5*log2(speedup) clamped to [0.5, 2] (1 when not timed on a GPU).

    Shaped by the roofline efficiency ``e`` (time on the roof / measured time) when one was measured:
    ``structurally-flawed`` gets 0.1 + 0.3*min(1, e) (0.2 without a roofline), always below any
    pass; a pass is scaled by 0.75 + 0.25*min(1, e/0.5) (full reward from half the roof up), never
    below 0.5."""
    e = None if efficiency is None else max(0.0, efficiency)
    if verdict == "structurally-flawed":
        return 0.2 if e is None else 0.1 + 0.3 * min(1.0, e)
    if verdict != "passed":
        return REWARDS.get(verdict, 0.0)
    base = 1.0 if not speedup or speedup <= 0 else max(0.5, min(2.0, 1.0 + 0.5 * math.log2(speedup)))
    if e is None:
        return base
    return max(0.5, base * (0.75 + 0.25 * min(1.0, e / 0.5)))
