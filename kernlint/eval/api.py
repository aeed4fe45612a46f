"""Python API: ``evaluate(problem, candidate) -> EvalResult`` with a scalar ``reward``."""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst

from kernlint.eval import isolation, policy as P, structure
from kernlint.eval.device_share import SLOTS_PER_GPU, Unshared
from kernlint.eval.problems import Candidate, Problem, problem_from_text
from kernlint.eval.reuse import ProblemCache
from kernlint.eval.rulebase import check_source
from kernlint.model import Finding


@dataclass
class EvalOptions:
    seeds: tuple[int, ...] = (0, 1, 2)
    shape_variants: tuple[int, ...] = (0, 1)
    timeout_s: float = 300.0
    #: address-space limit for CPU workers (MiB); GPU workers use the RSS watchdog instead
    mem_limit_mb: int | None = 8192
    rss_limit_mb: float | None = 32768
    tolerance_scale: float = 1.0
    timing: bool = True
    iters: int = 50
    compile_baseline: bool | None = None  # None: on GPU only
    #: the CUTLASS baseline of GEMM-family problems (None: on GPU only; needs kernlint[cutlass] and nvcc)
    cutlass_baseline: bool | None = None
    policy: P.Policy = field(default_factory=P.Policy)
    env: dict[str, str] = field(default_factory=dict)
    inject_fault: str | None = None
    cuda: bool | None = None  # None: probe in the parent
    #: one ncu pass per candidate that passed correctness, on a GPU (None: on when timing)
    profile: bool | None = None
    #: local worker slots per GPU when ``--workers`` is not given (:mod:`kernlint.eval.device_share`)
    slots_per_gpu: int = SLOTS_PER_GPU

    def job_fields(self) -> dict:
        d = {"seeds": list(self.seeds), "shape_variants": list(self.shape_variants),
             "tolerance_scale": self.tolerance_scale, "timing": self.timing, "iters": self.iters,
             "profile": self.timing if self.profile is None else self.profile}
        if self.compile_baseline is not None:
            d["compile_baseline"] = self.compile_baseline
        if self.cutlass_baseline is not None:
            d["cutlass_baseline"] = self.cutlass_baseline
        if self.inject_fault:
            d["inject_fault"] = self.inject_fault
        return d


@dataclass
class EvalResult:
    id: str
    problem: str
    verdict: str
    reasons: list[str]
    reward: float
    speedup: dict[str, float]
    findings: list[Finding]
    record: dict[str, Any]

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"


def _cuda_visible() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


def _gpu_timed(result: dict) -> bool:
    return str(result.get("timings", {}).get("candidate", {}).get("timer", "")).startswith("cuda")


def static_findings(source: str, path: str) -> tuple[list[Finding], str | None]:
    try:
        return check_source(source, path), None
    except cst.ParserSyntaxError as exc:
        return [], f"SyntaxError: {str(exc).splitlines()[0]} (line {exc.raw_line})"


def lint_findings(source: str, path: str) -> list[dict]:
    """The source phase's findings on the candidate (out-of-bounds, races, overflow...): recorded for
    the structural filter; they change the verdict only through the policy's ``fail_level`` on the
    reward-hack rules."""
    from kernlint.catalogue import select_codes
    from kernlint.check import source_rules
    from kernlint.source.phase import lint_text

    try:
        result, _ = lint_text(path, source, source_rules(select_codes(None, None)))
    except Exception:  # noqa: BLE001 - a lint failure must not lose the candidate's record
        return []
    return [{"rule": f.rule, "line": f.span.line, "level": f.level.value, "message": f.message[:200]}
            for f in result.findings]


def device_memory_fraction(cuda: bool, share) -> float | None:
    """Each executor's cap on its GPU's memory: 90%, split among the slots that share the GPU."""
    return round(0.9 / max(1, share.slots), 4) if cuda else None


def evaluate_candidate(problem: Problem, cand: Candidate, opts: EvalOptions,
                       spares: isolation.Spares | None = None, cache: ProblemCache | None = None,
                       share=None) -> dict:
    """Evaluate one candidate in its own two executor processes; return the JSONL record.

    In a batch, ``spares`` are the slot's executors started ahead, ``cache`` its GPU's values of the
    problem measured for earlier candidates (:mod:`kernlint.eval.reuse`) and ``share`` the lock of
    the GPU it shares with other slots (:mod:`kernlint.eval.device_share`)."""
    t0 = time.time()
    share = share or Unshared()
    path = cand.origin or f"{cand.id}.py"
    findings, syntax_error = static_findings(cand.source, path)
    checked_at = time.time()
    cuda = _cuda_visible() if opts.cuda is None else opts.cuda
    probed_at = time.time()
    if syntax_error:
        result = {"status": "error", "error_kind": "did-not-compile", "error": syntax_error, "stage": "parse"}
    else:
        job = {"problem": problem.to_job(), "candidate": {"id": cand.id, "source": cand.source, "path": path},
               "device_memory_fraction": device_memory_fraction(cuda, share), **opts.job_fields(),
               "structure": opts.policy.structure.to_dict()}
        result = isolation.run_job(job, timeout_s=opts.timeout_s,
                                   mem_limit_mb=None if cuda else opts.mem_limit_mb,
                                   rss_limit_mb=opts.rss_limit_mb, env=opts.env, spares=spares, cache=cache,
                                   share=share)
    judged_at = time.time()
    verdict, reasons = P.judge(result, findings, opts.policy)
    sp = P.speedups(result.get("timings", {}))
    corr = result.get("correctness", {})
    return {
        "id": cand.id,
        "problem": problem.id,
        "problem_kind": problem.kind,
        "origin": cand.origin,
        "mapping": cand.meta.get("mapping"),
        "candidate_sha": cand.sha,
        "verdict": verdict,
        "reasons": reasons,
        "reward": P.reward(verdict, sp.get("vs_reference") if _gpu_timed(result) else None,
                           structure.efficiency(result.get("structure"))),
        "structure": result.get("structure", {}),
        "speedup": sp,
        "error_kind": result.get("error_kind"),
        "error": result.get("error"),
        "stage": result.get("stage_final", result.get("stage")),
        "correctness": corr,
        "task_degenerate": bool(corr.get("null_models_passing")),
        "timings": result.get("timings", {}),
        "metrics": result.get("metrics", {}),
        "cheats": result.get("cheats", []),
        "findings": [f.to_dict() for f in findings],
        "lint_findings": lint_findings(cand.source, path) if not syntax_error else [],
        "stage_s": _stage_seconds((t0, checked_at, probed_at, judged_at), result),
        # the problem's values taken from an earlier candidate's run: name -> that candidate's id
        "reused": result.get("reused", {}),
        "executors_started_ahead": bool(result.get("executors_started_ahead")),
        # seconds of stage_s spent waiting for the GPU other slots held (shared, exclusive)
        "gpu_wait_s": result.get("gpu_wait_s"),
        "retried": result.get("retried"),
        "notes": result.get("notes", []),
        "artifacts": result.get("artifacts", []),
        # the judge's secret behind every input seed, recorded once the candidate has exited
        "input_secret": result.get("input_secret"),
        "device": result.get("device", "cuda" if cuda else "cpu"),
        "software": result.get("software", {}),
        "host": platform.node(),
        "policy": opts.policy.to_dict(),
        "options": {**opts.job_fields(), "timeout_s": opts.timeout_s},
        "wall_s": round(time.time() - t0, 3),
        "log_tail": result.get("log_tail", "")[-800:] if verdict != "passed" else "",
    }


def _stage_seconds(marks: tuple[float, float, float, float], result: dict) -> dict:
    """Seconds per stage, from the clock readings (start, static checks done, GPU probed, isolated run
    done): the static checks, finding out whether a GPU is visible, starting the two executor
    processes (the rest of the isolated run's wall time beyond the judge's stages: process start-up
    and tear-down), each stage of the judge, and the verdict with the lint of the source."""
    start, checked_at, probed_at, judged_at = marks
    judge_s = result.get("stage_s") or {}
    run_s = result.get("wall_s")
    out = {"static-checks": round(checked_at - start, 3), "device-probe": round(probed_at - checked_at, 3)}
    if run_s is not None:
        out["processes"] = round(max(0.0, run_s - sum(judge_s.values())), 3)
    out.update(judge_s)
    out["verdict-and-lint"] = round(time.time() - judged_at, 3)
    return out


def _as_problem(problem: Problem | str | Path) -> Problem:
    if isinstance(problem, Problem):
        return problem
    p = Path(problem) if not (isinstance(problem, str) and "\n" in problem) else None
    if p is not None and p.exists():
        return problem_from_text(p.stem, p.read_text(), str(p))
    return problem_from_text("problem", str(problem))


def evaluate(problem: Problem | str | Path, candidate: Candidate | str | Path,
             options: EvalOptions | None = None, **overrides) -> EvalResult:
    """Evaluate one candidate against one problem (a :class:`Problem`, a path, or source text).

    ``overrides`` set fields of :class:`EvalOptions` (e.g. ``seeds=(0,)``, ``timing=False``).
    """
    opts = options or EvalOptions()
    for k, v in overrides.items():
        setattr(opts, k, v)
    prob = _as_problem(problem)
    if not isinstance(candidate, Candidate):
        p = Path(candidate) if not (isinstance(candidate, str) and "\n" in candidate) else None
        src = p.read_text() if p is not None and p.exists() else str(candidate)
        candidate = Candidate(f"{prob.id}/{p.stem if p else 'candidate'}", prob.id, src, str(p) if p else "")
    rec = evaluate_candidate(prob, candidate, opts)
    return EvalResult(rec["id"], rec["problem"], rec["verdict"], rec["reasons"], rec["reward"],
                      rec["speedup"], [Finding.from_dict(f) for f in rec["findings"]], rec)
