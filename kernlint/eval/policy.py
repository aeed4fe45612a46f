"""The structural filter: from a worker result, static findings and a policy to a verdict.

Taxonomy, in the order a candidate is judged (the first that applies wins):
``did-not-compile``, ``cheating``, ``runtime-error``, ``wrong``, ``library-fallback`` (library
kernels do most of the work: :data:`Policy.max_library_share`), ``structurally-flawed``
(:mod:`kernlint.eval.structure`), ``slower-than-baseline``, ``low-occupancy``, ``passed``; plus
``skipped`` when the task itself cannot be evaluated.

A wrong output is named for what it looks like where the judge saw it (beside ``wrong: ...``):
``precision-downgrade`` (an fp32 task's error of half-precision size, with the candidate's
conversions as evidence), ``shape-overfit`` (right on the problem's shape, wrong on a variant),
``constant-output`` (one value everywhere).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field

from kernlint.eval.structure import StructureThresholds, verdict_reasons as structure_verdict
from kernlint.model import Finding, Level

TAXONOMY = ("did-not-compile", "cheating", "runtime-error", "wrong", "library-fallback", "structurally-flawed",
            "slower-than-baseline", "low-occupancy", "passed")
RUNTIME_KINDS = {"runtime-error", "illegal-address", "out-of-memory", "timeout", "thread-limit", "crash"}
#: errors that are not the candidate's: the evaluation could not be made (verdict ``skipped``)
TASK_KINDS = {"reference-error", "no-test", "harness-error"}
REWARDS = {"did-not-compile": 0.0, "runtime-error": 0.0, "wrong": 0.0, "cheating": -1.0,
           "library-fallback": 0.25, "slower-than-baseline": 0.25, "low-occupancy": 0.25, "skipped": 0.0}


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
    #: ``library-fallback`` when library kernels (aten, cuBLAS, cuDNN) take at least this share of
    #: the candidate's device time (CUDA) or do this share of the reference's FLOPs (any device);
    #: None disables
    max_library_share: float | None = 0.5
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


def _precision_evidence(ev: dict) -> str:
    conv = (ev.get("dtype_census") or {}).get("conversions") or {}
    parts = [f"conversions {', '.join(f'{k} x{v}' for k, v in list(conv.items())[:4])}" if conv
             else "no conversion among torch operators"]
    produced = (ev.get("dtype_census") or {}).get("produced") or {}
    if produced:
        parts.append(f"intermediate dtypes {', '.join(sorted(produced))}")
    args = ev.get("kernel_arg_dtypes") or {}
    if args:
        parts.append(f"kernel arguments {', '.join(sorted(args))[:160]}")
    kern = ev.get("conversion_kernels") or []
    if kern:
        parts.append("conversion kernels " + ", ".join(f"{k['kernel'][:60]} {k['share']:.0%}" for k in kern[:3]))
    return "; ".join(parts)


def _wrong_reasons(result: dict) -> list[str]:
    """The named shapes of the first wrong output, then ``wrong: ...``."""
    corr = result.get("correctness", {})
    ff = corr.get("first_failure", {})
    named = []
    if ff.get("low_precision_sized"):
        named.append(f"precision-downgrade: {', '.join(ff['low_precision_sized'][:3])} misses its dtype's tolerance "
                     f"by an error of half-precision size (max abs err {ff.get('max_abs_err', 0):.3g}); "
                     + _precision_evidence(ff.get("precision_evidence") or {}))
    if isinstance(ff.get("variant"), int) and ff["variant"] > 0 and corr.get("passed", 0) > 0:
        shapes = next((v["input_shapes"] for v in corr.get("variants", []) if v.get("variant") == ff["variant"]), "")
        named.append(f"shape-overfit: correct on the problem's shape, wrong on shape variant {ff['variant']} {shapes}")
    if ff.get("constant_leaves"):
        named.append(f"constant-output: {', '.join(ff['constant_leaves'][:3])} holds one value everywhere")
    return named + [f"wrong: {ff.get('reason', 'outputs differ')} "
                    f"(variant {ff.get('variant', '-')}, seed {ff.get('seed', '-')}, run {ff.get('run', '-')})"]


def _variant_failure(result: dict) -> list[str]:
    """``shape-overfit`` for a candidate that ran correctly on the problem's shape and then failed
    to run on a shape variant (its stage names the variant)."""
    m = re.match(r"(?:init|correctness)-v(\d+)\b", str(result.get("stage_final", "")))
    if m and int(m.group(1)) > 0 and result.get("correctness", {}).get("passed", 0) > 0:
        return [f"shape-overfit: correct on the problem's shape, fails to run on shape variant {m.group(1)}"]
    return []


def library_fallback(result: dict, policy: Policy) -> str | None:
    """Why library kernels did the candidate's work (None: they did not, or it is not measured)."""
    if policy.max_library_share is None:
        return None
    metrics = result.get("metrics", {})
    census = metrics.get("census") or {}
    share, flops = census.get("library_time_share"), metrics.get("library_flop_share")
    why = []
    if isinstance(share, (int, float)) and census.get("device_us") and share >= policy.max_library_share:
        top = ", ".join(f"{k['kernel'][:70]} {k['share']:.0%}" for k in census.get("top_library_kernels", [])[:3])
        why.append(f"library kernels take {share:.0%} of the device time ({top})")
    if isinstance(flops, (int, float)) and flops >= policy.max_library_share:
        why.append(f"torch operators do {flops:.0%} of the reference's FLOPs")
    return "library-fallback: " + "; ".join(why) if why else None


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
            reasons += _wrong_reasons(result)
        return "cheating", reasons
    if kind:
        return "runtime-error", _variant_failure(result) + [f"{kind}: {result.get('error', '')[:300]}"]
    if not result.get("correctness", {}).get("passed_all"):
        return "wrong", _wrong_reasons(result)
    fallback = library_fallback(result, policy)
    if fallback:
        return "library-fallback", [fallback]
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
