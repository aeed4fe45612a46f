"""The trusted side of one evaluation: it never imports problem or candidate code.

Two sandboxed executors (:mod:`kernlint.eval.worker`) do the running: the *reference* executor
imports only the problem, the *candidate* executor only the candidate. The judge

- draws a secret for the job and derives every seed from it: the reference executor makes the
  inputs of each trial, of the stale-cache check and of every timing set from seeds the candidate's
  process never sees (it receives tensors, not seeds), so precomputed or seed-derived answers fail;
- sends those inputs to the candidate, reads its outputs back as data (:mod:`kernlint.eval.wire`),
  and compares them here with the reference's outputs, which never enter the candidate's process;
- runs the null-model audit, the input-mutation, determinism, null-output and stale-cache checks
  on what it holds;
- times each executor's synchronized calls with its own clock (minus the handshake it measures)
  and rejects the candidate's own timing when it disagrees with that clock beyond the measured
  noise or beats the memory roof (:func:`kernlint.eval.roofline.implausible`);
- reads the profiler's record of the candidate's timed calls (CUDA, :mod:`kernlint.eval.device_trace`):
  work on another stream or thread, launched after the call returned, or outside the call's
  events is a cheat; the library's share of the device time (and of the FLOPs, on any device) is
  the policy's ``library-fallback``; the host wall clock (less an empty call) is only recorded;
- names a wrong output for what it looks like (an error of half-precision size, with the
  candidate's dtype census; one value everywhere), for the policy's reasons;
- judges the structure of the kernels the candidate launched (:mod:`kernlint.eval.structure`):
  the candidate's process hands over its launch records and compiled-kernel text as data, the
  IR rules, the ncu pass (started here, over a third sandboxed executor; its CSV read here),
  the roofline and the flaws are computed on this side.

What the candidate's process reports about itself (launch counts, patched timers, flipped flags,
threads, tensor subclasses) is taken as evidence *against* it only: it can turn a verdict into a
rejection, never into a pass. The verdict is :func:`kernlint.eval.policy.judge`'s, on this record.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
from typing import Any

from kernlint.eval import correctness as C, cpu_wait, device_trace, roofline
from kernlint.eval.cutlass_baseline import default_cache as cutlass_cache
from kernlint.eval.device_share import Unshared
from kernlint.eval.reuse import ProblemCache, Reuse
from kernlint.eval.isolation import Gone, Process

#: checks of the candidate's compiled kernels: ``check(artifacts, judge)``; they may add to
#: ``judge.res["metrics"]`` and call ``judge.cheat``. Artifacts come from :meth:`Judge.artifacts`.
ARTIFACT_CHECKS: list = []
#: the candidate's own clock may see this fraction of the judge's (the rest: loop and sync overhead)
CLOCK_AGREEMENT = 0.5
#: the judge's clock measures at most this many calls, or calls lasting this long in all
MAX_CLOCK_CALLS = 160
MAX_CLOCK_MS = 3000.0


class Failed(Exception):
    """An executor answered with an error: (error_kind, message)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def derive_seed(secret: int, *parts: Any) -> int:
    h = hashlib.blake2b(repr((secret, *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") >> 2


def conclusive(outside: dict) -> bool:
    """The calls lasted long enough to tell them from the handshake's noise."""
    return outside["outside_ms"] > 5 * outside["noise_ms"] + 0.05


def clock_disagreement(own: dict, outside: dict) -> str | None:
    """Why an executor's own timing ``own`` cannot be right, given :meth:`Judge.outside_clock`'s
    numbers for its synchronized calls (None: nothing contradicts it)."""
    n, noise, seen = outside["calls"], outside["noise_ms"], outside["outside_ms"]
    med = own.get("median_ms")
    if not isinstance(med, (int, float)):
        return "it reported no median time"
    if conclusive(outside):
        inside = outside["inside_ms"]
        if inside < CLOCK_AGREEMENT * seen - noise:
            return (f"its own clock saw {inside / n:.4f} ms per synchronized call, the harness's clock "
                    f"{seen / n:.4f} ms ({n} calls)")
        # a median sits below the mean the harness's clock sees when a loaded CPU slows some calls:
        # only a median under a quarter of it is not explained by load (an honest relu read 0.35 in CI)
        if str(own.get("timer", "")).startswith("cpu") and med * n < 0.25 * seen - noise:
            return f"it reported a median of {med:.4f} ms per call, the harness's clock {seen / n:.4f} ms"
    kern = (own.get("kernels") or {}).get("median_ms")
    # events enclose the kernels they time: events well below the kernels' own durations are not real
    if isinstance(kern, (int, float)) and med < CLOCK_AGREEMENT * kern - 1e-3:
        return f"its CUDA events read {med:.4f} ms per call, the profiled kernels alone last {kern:.4f} ms"
    return None


#: events above this multiple of the profiled kernels' own time (and above them by more than
#: STALL_GAP_MS) are timed once more: a host stall during the timed calls (a neighbour's compile on
#: a loaded CPU) reads as event time that the device never spent
STALL_RATIO, STALL_GAP_MS = 1.5, 0.005


def host_stalled(timing: dict) -> str | None:
    """Why a CUDA timing may hold host stalls, or None: its event median well above the summed
    device time of the kernels it launched (work on the host inside the call does that too, so
    the timing is repeated, never replaced by the device time)."""
    med = timing.get("median_ms")
    kern = (timing.get("kernels") or {}).get("median_ms")
    if not isinstance(med, (int, float)) or not isinstance(kern, (int, float)):
        return None
    if med > STALL_RATIO * kern + STALL_GAP_MS:
        return f"events {med:.4f} ms per call over {kern:.4f} ms of kernels"
    return None


def steadier(first: dict, again: dict, why: str) -> dict:
    """Of two timings of the same calls, the one with the lower median (a stall only adds time),
    with the other's median kept as evidence."""
    keep, other = (again, first) if again.get("median_ms", float("inf")) < first.get("median_ms", float("inf")) \
        else (first, again)
    return {**keep, "retimed": {"why": why, "medians_ms": [first.get("median_ms"), again.get("median_ms")],
                                "other_median_ms": other.get("median_ms")}}


def _sizes(x: Any) -> list[int]:
    import torch

    return [v.numel() * v.element_size() for _, v in C.flatten(x) if isinstance(v, torch.Tensor)]


def _bitwise_equal(a, b) -> bool:
    import torch

    for (_, x), (_, y) in zip(C.flatten(a), C.flatten(b)):
        if isinstance(x, torch.Tensor) and (not isinstance(y, torch.Tensor) or x.shape != y.shape or x.dtype != y.dtype
                                            or not torch.equal(torch.nan_to_num(x), torch.nan_to_num(y))):
            return False
    return True


class Judge:
    def __init__(self, job: dict, ref: Process, cand: Process, deadline: float,
                 cache: ProblemCache | None = None, share=None) -> None:
        self.job, self.ref, self.cand, self.deadline = job, ref, cand, deadline
        #: the GPU's lock among the slots that share it (:mod:`kernlint.eval.device_share`)
        self.share = share or Unshared()
        self._waited0 = dict(self.share.waited)
        self.reuse = Reuse(cache, job)  # the reference's values measured for an earlier candidate
        self.staged: list = []
        self.secret = secrets.randbits(62)
        self.scale = float(job.get("tolerance_scale", 1.0))
        self.tol: C.Tolerances = {}  # the problem's own tolerances (its reference module's TOLERANCE)
        self.res: dict[str, Any] = {"stage": "start", "stages": [], "stage_s": {}, "cheats": [], "notes": [],
                                    "correctness": {}, "timings": {}, "metrics": {}}
        self._stage_started = time.monotonic()
        self.cuda = False
        self.has_kernels = True
        self.autotuned = False
        self.loaded = False
        self._trace: dict | None = None  # the profiler's record of the candidate's calls (CUDA)

    # -- bookkeeping --------------------------------------------------------------------------

    def stage(self, name: str) -> None:
        self._close_stage()
        self.res["stage"] = name
        self.res["stages"].append(name)

    def _close_stage(self) -> None:
        """Add the time since the current stage began to its seconds (``stage_s``: where a
        candidate's evaluation spends its time, stage by stage, on the judge's clock)."""
        now = time.monotonic()
        spent = self.res["stage_s"]
        spent[self.res["stage"]] = round(spent.get(self.res["stage"], 0.0) + now - self._stage_started, 3)
        self._stage_started = now

    def cheat(self, reason: str, detail: str = "", source: str = "judge") -> None:
        if reason not in [c["reason"] for c in self.res["cheats"]]:
            self.res["cheats"].append({"reason": reason, "detail": detail[:500], "source": source})

    def note(self, text: str) -> None:
        self.res["notes"].append(text)

    def seed(self, *parts: Any) -> int:
        return derive_seed(self.secret, *parts)

    def per_problem(self, name: str, compute, *parts: Any, timed: bool = True):
        """A value of the problem's alone (:mod:`kernlint.eval.reuse`): measured once per problem
        and device, given ``parts`` (the request and the input shapes it depends on)."""
        return self.reuse.value(name, self.res.get("device"), compute, *parts, timed=timed)

    def ask(self, proc: Process, header: dict, values: dict | None = None, texts: dict | None = None):
        return self.ask_texts(proc, header, values, texts)[:2]

    def ask_texts(self, proc: Process, header: dict, values: dict | None = None, texts: dict | None = None,
                  locked: bool = True):
        """``locked=False``: a request that compiles for seconds and ends with a few launches (a
        baseline's build, the profiler's start, a warm-up call) holds no lock, or every slot's
        measurement would wait for the compile (a waiting measurement stops new shared requests)."""
        with self.share.shared() if self.cuda and locked else contextlib.nullcontext():
            answer = proc.request(header, values, texts, self.deadline)
        return self.checked(proc, answer)

    def ask_unlocked(self, proc: Process, header: dict, values: dict | None = None):
        return self.ask_texts(proc, header, values, None, locked=False)[:2]

    def measuring(self):
        """The GPU to this slot alone while it measures (a no-op on the CPU)."""
        return self.share.exclusive() if self.cuda else contextlib.nullcontext()

    def tuning(self, first_at_shape: bool):
        """A candidate call that may autotune (the first at its shapes, of an autotuned module) has
        the GPU alone: the configurations it benchmarks decide what is timed later."""
        return self.measuring() if first_at_shape and self.autotuned else contextlib.nullcontext()

    def checked(self, proc: Process, answer: tuple[dict, dict, dict]):
        """An executor's answer: the cheats it reports (a candidate's), or its error raised."""
        head, vals, txt = answer
        if proc is self.cand:
            for c in head.get("cheats", []) if isinstance(head.get("cheats"), list) else []:
                if isinstance(c, dict) and isinstance(c.get("reason"), str):
                    self.cheat(c["reason"][:64], str(c.get("detail", "")), source="candidate-process")
        if head.get("ok") is not True:
            raise Failed(str(head.get("error_kind", "runtime-error"))[:64], str(head.get("error", ""))[:2000])
        return head, vals, txt

    def evidence(self, fetch):
        """Optional evidence (profiles, artifacts, FLOP counts): its failure is a note, not an error."""
        try:
            return fetch()
        except Failed as exc:
            self.note(f"{getattr(fetch, '__name__', 'evidence')} unavailable: {str(exc)[:200]}")
            return None

    def artifacts(self) -> list[dict]:
        """The candidate's compiled kernels as text: ``{"kernel", "kind", "text"}`` each, from its
        launch records (kept in ``res["kernel_capture"]`` for :mod:`kernlint.eval.structure`). They
        are data for checks that run here (:data:`ARTIFACT_CHECKS`); nothing in them is executed."""
        head, _, txt = self.ask_texts(self.cand, {"op": "artifacts", "capability": 90,
                                                  "origin": self.origin()})
        capture, out = [], []
        for rec in head.get("launches", []) if isinstance(head.get("launches"), list) else []:
            if not isinstance(rec, dict) or not isinstance(rec.get("texts", {}), dict):
                continue
            named = {k: txt.get(v, "") for k, v in rec.pop("texts", {}).items() if isinstance(v, str)}
            capture.append({**rec, "asm": named})
            out += [{"kernel": str(rec.get("kernel")), "kind": kind, "text": text} for kind, text in named.items()]
        self.res["kernel_capture"] = capture
        if isinstance(head.get("tilelang_kernels"), list):
            self.res["tilelang_kernels"] = head["tilelang_kernels"]
        self.res["artifacts"] = [{"kernel": a["kernel"], "kind": a["kind"], "chars": len(a["text"])} for a in out]
        for check in ARTIFACT_CHECKS:
            check(out, self)
        return out

    def origin(self) -> str:
        cand = self.job["candidate"]
        return str(cand.get("path") or cand.get("id") or "candidate.py")

    def structure(self) -> None:
        """The structural judgement (:mod:`kernlint.eval.structure`) of the kernels the candidate
        launched, with one ncu pass over it when wanted (:mod:`kernlint.eval.structure_profile`)."""
        from kernlint.eval import structure, structure_profile

        self.stage("structure")
        if "kernel_capture" not in self.res:
            self.evidence(self.artifacts)
        profile_run = None
        if structure_profile.wanted(self.job, self.res, self.cuda):
            symbols = structure.kernel_symbols(self.res)
            if symbols:
                self.stage("profile")
                profile_run = structure_profile.run_profile(self, symbols)
        elif self.job.get("profile") and self.cuda and not structure_profile.ncu.find_ncu():
            profile_run = {"error": "--profile asked for, but ncu is not on PATH"}
        thresholds = structure.StructureThresholds(**(self.job.get("structure") or {}))
        self.res["structure"] = structure.analyze(self.res, self.job["candidate"]["source"], self.origin(),
                                                  thresholds, profile_run)

    # -- the flows ----------------------------------------------------------------------------

    def load_request(self, role: str, label: str = "load") -> tuple[dict, dict]:
        """The ``load`` request of an executor of ``role``: its header and texts (only its side's source)."""
        job, prob = self.job, self.job["problem"]
        head = {"op": "load", "kind": prob["kind"], "block_network": job.get("block_network", True),
                "block_writes": role == "candidate" and job.get("block_writes", True),
                "device_memory_fraction": job.get("device_memory_fraction"), "seed": self.seed(label), "role": role}
        if prob["kind"] == "tritonbench":  # its test may import the task's function from the task's file
            head["module_alias"] = prob["id"]
        tests = {"test_code": prob.get("test_code", "")} if prob["kind"] == "tritonbench" else {}
        source = prob["source"] if role == "reference" else job["candidate"]["source"]
        return head, {"source": source, **tests}

    def build_models(self, cand: Process, variant: int, init) -> None:
        """The reference's model built with ``init``; ``cand``'s from the same arguments and weights."""
        init_seed = self.seed("init", variant)
        _, state = self.ask(self.ref, {"op": "model", "init_seed": init_seed}, {"init": init})
        self.ask(cand, {"op": "model", "init_seed": init_seed}, {"init": init, "state": state["state"]})

    def load(self) -> None:
        job = self.job
        self.stage("load-reference")
        header, texts = self.load_request("candidate")
        # the candidate loads while the reference does: two processes, neither waits for the other
        self.cand.send({**header, "inject_fault": job.get("inject_fault")}, texts=texts)
        header, texts = self.load_request("reference")
        head, _ = self.ask(self.ref, header, texts=texts)
        self.res["device"], self.res["software"] = head.get("device"), head.get("software")
        self.problem_tolerances(head.get("tolerance"))
        self.cuda = head.get("device") != "cpu"
        self.stage("load-candidate")
        head, _ = self.checked(self.cand, self.cand.answer(self.deadline))[:2]
        self.res["metrics"]["candidate_kernels_defined"] = list(head.get("kernels_defined", []))[:50]
        self.has_kernels = bool(head.get("has_kernels"))
        #: its kernels benchmark their configurations at a shape's first launch (``@triton.autotune``)
        self.autotuned = bool(head.get("autotuned"))
        self.loaded = True

    def problem_tolerances(self, spec) -> None:
        """The problem's own tolerances, from its reference module (the harness's side)."""
        try:
            self.tol = C.parse_tolerances(spec)
        except ValueError as exc:
            raise Failed("reference-error", f"the problem's {exc}") from None
        if self.tol:
            self.res["correctness"]["tolerances"] = C.tolerances_to_json(self.tol)

    def compare(self, cand, ref) -> C.Comparison:
        return C.compare(cand, ref, self.scale, tolerances=self.tol)

    def failure_evidence(self, out_c, out_r, inputs) -> None:
        """What the first wrong output looks like: an error of half-precision size (then the
        candidate's intermediate dtypes, its kernels' argument dtypes and, on CUDA, the conversion
        kernels, from its process's ``dtypes`` request), or one value everywhere. Recorded beside
        ``first_failure`` for the policy's reasons."""
        ff = self.res["correctness"]["first_failure"]
        low = C.low_precision_sized(out_c, out_r, self.scale, self.tol)
        if low:
            ff["low_precision_sized"] = low
            got = self.evidence(lambda: self.ask(self.cand, {"op": "dtypes"}, {"inputs": inputs})[0])
            if got:
                ff["precision_evidence"] = {k: got[k] for k in ("dtype_census", "kernel_arg_dtypes",
                                                                 "conversion_kernels") if k in got}
        const = C.constant_leaves(out_c, out_r)
        if const:
            ff["constant_leaves"] = const

    def ref_inputs(self, variant: int, *label: Any):
        _, v = self.ask(self.ref, {"op": "inputs", "variant": variant, "seed": self.seed("inputs", variant, *label)})
        return v["init"], v["inputs"]

    def ref_call(self, inputs):
        return self.ask(self.ref, {"op": "call"}, {"inputs": inputs})[1]["out"]

    def launch_evidence(self, launches) -> None:
        if not self.has_kernels:
            self.cheat("no-candidate-kernel", "the module defines no Triton kernel object")
        elif launches == 0:
            self.cheat("no-candidate-kernel", "forward launched none of the module's kernels")

    def kernelbench(self) -> None:
        job = self.job
        labels = list(job.get("seeds", [0, 1, 2]))
        variants = list(job.get("shape_variants", [0, 1]))
        corr = self.res["correctness"]
        corr.update({"trials": 0, "passed": 0, "variants": [], "deterministic": True})
        nulls: list[str] = []
        constants: dict[str, float] | None = None
        first = None
        for variant in variants:
            self.stage(f"inputs-v{variant}")
            try:
                init, probe = self.ref_inputs(variant, "probe")
            except Failed as f:
                if variant == 0 and f.kind != "no-variant":
                    raise Failed("reference-error", f"reference inputs failed: {f}") from None
                self.note(f"shape variant {variant} skipped: " + (str(f) if f.kind == "no-variant"
                                                                  else f"the reference fails on it ({f})"))
                continue
            self.stage(f"init-v{variant}")
            self.build_models(self.cand, variant, init)
            corr["variants"].append({"variant": variant, "input_shapes": [list(x.shape) for _, x in C.flatten(probe)
                                                                           if hasattr(x, "shape")]})
            for label in labels:
                self.stage(f"correctness-v{variant}-s{label}")
                _, inputs = self.ref_inputs(variant, "trial", label)
                out_r = self.ref_call(inputs)
                if first is None:
                    constants = self.per_problem(
                        "null-constants", lambda: C.output_constants(self.ref_call(self.ref_inputs(variant, "null-anchor")[1])),
                        variant, timed=False)
                    nulls = self.per_problem(
                        "null-audit", lambda: C.audit_null_models(out_r, inputs, self.scale, self.tol, constants),
                        variant, self.scale, repr(self.tol), timed=False)
                    corr["null_models_passing"] = nulls
                poison = _sizes(out_r) + _sizes(inputs)
                with self.tuning(label == labels[0]):
                    h1, v1 = self.ask(self.cand, {"op": "call", "poison": poison, "inputs_after": True},
                                      {"inputs": inputs})
                changed = C.unchanged(inputs, list(v1.get("inputs_after", [])))
                if changed:
                    self.cheat("input-mutated", f"inputs {changed} changed by the candidate")
                if h1.get("plain_tensors") is False:
                    self.cheat("tensor-subclass-output", "an output is a tensor subclass (lazy evaluation)",
                               source="candidate-process")
                _, v2 = self.ask(self.cand, {"op": "call", "poison": poison}, {"inputs": inputs})
                corr["trials"] += 1
                self.launch_evidence(h1.get("launches"))
                out_c1, out_c2 = v1.get("out"), v2.get("out")
                cmp1, cmp2 = self.compare(out_c1, out_r), self.compare(out_c2, out_r)
                if not (cmp1.ok and cmp2.ok):
                    bad = cmp1 if not cmp1.ok else cmp2
                    corr["first_failure"] = {"variant": variant, "seed": label, "run": 1 if not cmp1.ok else 2,
                                             **bad.to_dict()}
                    corr["passed_all"] = False
                    self.failure_evidence(out_c1 if not cmp1.ok else out_c2, out_r, inputs)
                    return
                corr["passed"] += 1
                corr["max_abs_err"] = max(corr.get("max_abs_err", 0.0), cmp1.max_abs_err, cmp2.max_abs_err)
                if not _bitwise_equal(out_c1, out_c2):
                    corr["deterministic"] = False
                for name, null in C.null_models(out_r, inputs, constants).items():
                    if name in nulls and _bitwise_equal(out_c1, null):
                        self.cheat("null-model-output", f"output equals the {name} null model on a degenerate task")
                if first is None:
                    first = (variant, inputs, out_r)
            self.stage(f"cache-check-v{variant}")
            self.stale_cache_check(variant)
        corr["passed_all"] = corr["trials"] > 0 and corr["passed"] == corr["trials"]
        if not corr["trials"]:
            raise Failed("reference-error", "no shape variant could be evaluated")
        if job.get("timing", True) and first is not None:
            self.timing(first)

    def stale_cache_check(self, variant: int) -> None:
        """Same buffers, new values: a data_ptr/id keyed cache returns the stale answer."""
        import torch

        _, a = self.ref_inputs(variant, "cache-a")
        _, b = self.ref_inputs(variant, "cache-b")
        if not any(isinstance(x, torch.Tensor) and x.is_floating_point() for x in a):
            return
        self.ask(self.cand, {"op": "call", "keep": True, "output": False}, {"inputs": a})
        _, vb = self.ask(self.cand, {"op": "call", "refill": True}, {"inputs": b})
        if not self.compare(vb.get("out"), self.ref_call(b)).ok:
            if self.compare(vb.get("out"), self.ref_call(a)).ok:
                self.cheat("stale-cached-result", "same buffers refilled with new values returned the old result")
            else:
                self.cheat("stale-cached-result", "wrong result when the same buffers are refilled with new values")

    def outside_clock(self, proc: Process, function: str | None, n: int) -> dict:
        """The executor's ``n`` synchronized calls timed by this process's clock, less the
        handshake (a request of no call, measured three times; its spread is the noise), and less
        the time the executor waited for a CPU (:mod:`kernlint.eval.cpu_wait`)."""
        def timed(k: int):
            before = cpu_wait.sample(proc.proc.pid)
            t0 = time.perf_counter()
            head, _ = self.ask(proc, {"op": "wall", "n": k, "function": function})
            wall = (time.perf_counter() - t0) * 1e3
            return wall - cpu_wait.waited_ms(before, cpu_wait.sample(proc.proc.pid), wall), head.get("samples_ms", [])

        hand = sorted(timed(0)[0] for _ in range(5))
        runs = [timed(n) for _ in range(2)]
        wall, samples = min(runs, key=lambda r: r[0])
        inside = sum(float(s) for s in samples) if isinstance(samples, list) and len(samples) == n else 0.0
        # the spread of the middle three handshakes: one stalled handshake on a loaded machine
        # must not make every measurement look like noise
        return {"calls": n, "outside_ms": max(0.0, wall - hand[2]), "inside_ms": inside,
                "handshake_ms": hand[2], "noise_ms": hand[3] - hand[1]}

    def conclusive_clock(self, proc: Process, function: str | None, n: int) -> dict:
        """:meth:`outside_clock` over more calls until the calls stand out of the handshake's noise
        (or the calls are too short to ever do so within a few seconds)."""
        while True:
            seen = self.outside_clock(proc, function, n)
            if conclusive(seen) or n >= MAX_CLOCK_CALLS or seen["outside_ms"] * 4 > MAX_CLOCK_MS:
                return seen
            n *= 4

    def stage_sets(self, sets: list) -> None:
        """Send both executors the same input sets for the timing and profiling that follow."""
        for p in (self.cand, self.ref):
            self.ask(p, {"op": "stage"}, {"sets": sets})
        self.staged = [[(list(x.shape), str(x.dtype)) for _, x in C.flatten(s) if hasattr(x, "shape")] for s in sets]

    def time_both(self, function: str | None, iters: int, warmup: int, flush_l2=True,
                  entry: str = "") -> tuple[dict, dict]:
        """Each executor's own timing of the staged sets, with the judge's clock beside it (``entry``:
        a TritonBench task's function, whose calls' kernels are timed apart from the rest of its test)."""
        req = {"op": "time", "iters": iters, "warmup": warmup, "function": function, "flush_l2": flush_l2,
               "kernels": self.cuda, **({"entry": entry} if entry else {})}
        n = max(3, min(10, iters))
        with self.measuring():
            t_c = self.timed_twice_if_stalled(self.cand, req)
            t_c["outside"] = self.conclusive_clock(self.cand, function, n)

        def reference():
            with self.measuring():
                return {**self.timed_twice_if_stalled(self.ref, req), "outside": self.outside_clock(self.ref, function, n)}

        t_r = self.per_problem("reference-timing", reference, req, n, self.staged)
        why = clock_disagreement(t_c, t_c["outside"])
        if why:
            self.cheat("timing-disagrees", why)
        return t_c, t_r

    def timed_twice_if_stalled(self, proc: Process, req: dict) -> dict:
        """An executor's timing, asked again once where :func:`host_stalled` says so."""
        first = dict(self.ask(proc, req)[0].get("timing") or {})
        why = host_stalled(first)
        if why is None:
            return first
        return steadier(first, dict(self.ask(proc, req)[0].get("timing") or {}), why)

    def timing(self, first) -> None:
        job = self.job
        variant, inputs, out_r = first
        n_sets = int(job.get("input_sets", 4 if self.cuda else 2))
        sets = [self.ref_inputs(variant, "timing", i)[1] for i in range(n_sets)]
        self.stage("stage-sets")
        self.stage_sets(sets)
        self.stage("flops")
        flops = self.evidence(lambda: self.per_problem(
            "flops", lambda: int(self.ask(self.ref, {"op": "flops"})[0].get("flops", 0)), self.staged, timed=False))
        self.res["metrics"]["problem_cost"] = roofline.problem_cost(inputs, out_r, flops)
        self.library_flops(flops)
        self.stage("census")
        head = self.census()
        self.res["metrics"]["census"] = head.get("census")
        if self.cuda:
            self.read_device_trace(head)
            if (self.res["metrics"]["census"] or {}).get("candidate_kernels", 1) == 0 and self.has_kernels:
                self.cheat("no-candidate-kernel", "the profiler saw no kernel of the candidate", source="candidate-process")
            if head.get("stream_switched"):
                self.cheat("stream-switched", "forward left a non-default current stream", source="candidate-process")
            kms = [k for k in head.get("kernels", []) if isinstance(k, dict)]
            self.res["metrics"]["kernels"] = kms
            occs = [k["occupancy"] for k in kms if isinstance(k.get("occupancy"), (int, float))]
            if occs:
                self.res["metrics"]["min_occupancy"] = min(occs)
            spills = [k["n_spills"] for k in kms if isinstance(k.get("n_spills"), int)]
            if spills:
                self.res["metrics"]["max_spills"] = max(spills)
            self.stage("artifacts")
            self.evidence(self.artifacts)
        self.stage("timing")
        if self.cuda:
            t_c, t_r = self.time_both(None, int(job.get("iters", 50)), int(job.get("warmup", 5)))
            self.device_checks(t_c, t_r, inputs, out_r)
        else:
            t_c, t_r = self.time_both(None, int(job.get("cpu_iters", 3)), 1)
        self.res["timings"] = {"candidate": t_c, "reference": t_r}
        self.baselines()

    def baselines(self, function: str | None = None, entry: str = "") -> None:
        """The library baselines beside the reference's time: torch.compile of the reference (a
        TritonBench task: of its ``entry`` function, which ``function``, its test, calls) and
        CUTLASS for GEMM-family references."""
        job = self.job
        if job.get("compile_baseline", self.cuda) and self.res["cheats"]:
            # a baseline cannot change a rejection; it costs a compile (the reuse keeps no time from this run)
            self.note(f"torch.compile baseline skipped: already rejected ({self.res['cheats'][0]['reason']})")
        elif job.get("compile_baseline", self.cuda) and function and not entry:
            self.note("torch.compile baseline skipped: the task names no function of the reference to compile")
        elif job.get("compile_baseline", self.cuda):
            self.stage("baseline-compile")
            try:
                req = {"op": "compile_baseline", "iters": int(job.get("iters", 50))}
                if function:
                    req.update(function=function, entry=entry, kernels=self.cuda)
                self.res["timings"]["torch_compile"] = self.per_problem(
                    "torch-compile", lambda: self.built_then_timed(req)["timing"], req, self.staged)
            except Failed as exc:
                self.note(f"torch.compile baseline failed: {str(exc)[:200]}")
        if function:
            self.note("CUTLASS baseline skipped: a TritonBench task's reference runs inside its test function")
        elif job.get("cutlass_baseline", self.cuda) and self.res["cheats"]:
            self.note(f"CUTLASS baseline skipped: already rejected ({self.res['cheats'][0]['reason']})")
        elif job.get("cutlass_baseline", self.cuda):
            self.stage("baseline-cutlass")
            try:
                req = {"op": "cutlass_baseline", "iters": int(job.get("iters", 50)),
                       "cache": job.get("cutlass_cache") or str(cutlass_cache())}
                head = self.per_problem("cutlass", lambda: self.built_then_timed(req), req, self.staged)
                self.res["metrics"]["cutlass"] = head.get("info")
                if head.get("timing"):
                    self.res["timings"]["cutlass"] = head["timing"]
                else:
                    self.note(f"CUTLASS baseline skipped: {head.get('skipped')}")
            except Failed as exc:
                self.note(f"CUTLASS baseline failed: {str(exc)[:300]}")
        else:
            self.note("CUTLASS baseline skipped: " + ("disabled" if self.cuda else "no CUDA device"))

    def census(self, function: str | None = None) -> dict:
        """The candidate's census (:meth:`Executor.op_census`): the profiler started once outside the
        lock (its start costs seconds), the recorded calls while the GPU is this slot's alone."""
        if self.cuda:
            self.ask_unlocked(self.cand, {"op": "census", "function": function, "warm_only": True})
        with self.measuring():
            return self.ask(self.cand, {"op": "census", "function": function})[0]

    def built_then_timed(self, req: dict) -> dict:
        """A baseline of the reference executor: compiled outside the lock, then timed while the GPU
        is this slot's alone."""
        self.ask_unlocked(self.ref, {**req, "build_only": True})
        with self.measuring():
            return self.ask(self.ref, req)[0]

    def library_flops(self, ref_flops: int | None) -> None:
        """The FLOPs the candidate's torch operators do (torch's FLOP counter in its process: its
        own kernels are not torch operators) against the reference's: the library's share of the
        arithmetic, on any device (``metrics.library_flop_share``)."""
        if not ref_flops:
            return
        got = self.evidence(lambda: self.ask(self.cand, {"op": "flops"})[0].get("flops"))
        if isinstance(got, (int, float)) and got >= 0:
            self.res["metrics"]["library_flop_share"] = min(1.0, float(got) / ref_flops)

    def read_device_trace(self, head: dict) -> None:
        """The profiler's record of the candidate's calls (:mod:`kernlint.eval.device_trace`): the
        library census from it; its stream and launch evidence once the timing is known."""
        trace = head.get("trace")
        if not isinstance(trace, dict) or not isinstance(trace.get("activities"), list):
            self.note(f"device trace unavailable: {str(head.get('trace_error', 'no record'))[:200]}")
            return
        self._trace = trace
        self.res["metrics"]["census"] = device_trace.library_share(trace, head.get("kernel_symbols") or [])

    def stream_evidence(self, t_c: dict) -> None:
        """The trace's findings (another stream or thread, a launch after the call returned, device
        work the events miss, a reported timing below the events recorded around the profiled
        calls) as cheats; the host wall clock, less an empty call's synchronize, only recorded."""
        trace = self._trace
        if trace is None:
            return
        per_call = device_trace.device_us_per_call(trace)
        ev = sorted(float(x) for x in trace.get("event_ms") or [])
        self.res["metrics"]["device_trace"] = {
            "calls": trace.get("calls"), "harness_streams": trace.get("harness_streams"),
            "device_us_per_call": per_call, "event_ms_per_call": trace.get("event_ms"),
            "launches": {k: sum(a.get("launch") == k for a in trace["activities"])
                         for k in ("call", "thread", "outside", "unknown")}}
        for reason, detail in device_trace.findings(trace, t_c.get("median_ms")):
            self.cheat(reason, detail)
        empty = self.evidence(lambda: self.outside_clock(self.cand, device_trace.EMPTY_CALL, t_c["outside"]["calls"]))
        oc = t_c["outside"]
        if empty:
            wall, idle = oc["outside_ms"] / oc["calls"], empty["outside_ms"] / empty["calls"]
            self.res["metrics"]["wall_cross_check"] = {
                "wall_ms": wall, "empty_call_ms": idle, "wall_less_sync_ms": max(0.0, wall - idle),
                "events_ms": t_c.get("median_ms"), "profiled_events_ms": ev[len(ev) // 2] if ev else None}

    def device_checks(self, t_c: dict, t_r: dict, inputs, out_r) -> None:
        """GPU: the profiler's stream and launch evidence, and the roofline."""
        ev = float(t_c.get("median_ms", 0.0))
        self.stream_evidence(t_c)
        cost = self.res["metrics"].get("problem_cost") or {}
        ceilings = roofline.ceilings_for(str(self.res.get("device", "")))
        if ceilings is None or ev <= 0:
            return
        roof = roofline.roofline(cost.get("bytes"), cost.get("flops"), ev * 1e-3, ceilings, cost.get("dtypes", ()))
        self.res["metrics"].update(implied_bytes_per_s=roof.get("achieved_bytes_per_s"),
                                   peak_bytes_per_s=ceilings.bandwidth_spec)
        why = roofline.implausible(roof, (self.job.get("structure") or {}).get("implausible_efficiency",
                                                                              roofline.IMPLAUSIBLE_EFFICIENCY))
        if why:
            self.cheat("above-roofline", why)

    def tritonbench(self) -> None:
        job, prob = self.job, self.job["problem"]
        fn = prob.get("test_function")
        if not fn:
            raise Failed("no-test", "the reference module has no test function after a ##### line")
        corr = self.res["correctness"]
        corr.update({"trials": 0, "passed": 0, "deterministic": True})
        for label in list(job.get("seeds", [0, 1])):
            self.stage(f"correctness-s{label}")
            req = {"op": "test", "function": fn, "seed": self.seed("test", label)}
            with self.tuning(corr["trials"] == 0):
                h1, v1 = self.ask(self.cand, req)
            _, vr = self.ask(self.ref, req)
            out_r = vr["out"]
            if label == job.get("seeds", [0, 1])[0]:
                anchor = {**req, "seed": self.seed("test", "null-anchor")}
                constants = self.per_problem(
                    "null-constants", lambda: C.output_constants(self.ask(self.ref, anchor)[1]["out"]), fn, timed=False)
                corr["null_models_passing"] = self.per_problem(
                    "null-audit", lambda: C.audit_null_models(out_r, [], self.scale, self.tol, constants), fn,
                    self.scale, repr(self.tol), timed=False)
                # TritonBench's own criterion: the printed results are identical
                corr["tritonbench_stdout_match"] = str(v1.get("out")) == str(out_r)
            _, v2 = self.ask(self.cand, req)
            corr["trials"] += 1
            self.launch_evidence(h1.get("launches"))
            if h1.get("plain_tensors") is False:
                self.cheat("tensor-subclass-output", "an output is a tensor subclass", source="candidate-process")
            cmp1, cmp2 = self.compare(v1.get("out"), out_r), self.compare(v2.get("out"), out_r)
            if not (cmp1.ok and cmp2.ok):
                bad = cmp1 if not cmp1.ok else cmp2
                corr["first_failure"] = {"seed": label, "run": 1 if not cmp1.ok else 2, **bad.to_dict()}
                corr["passed_all"] = False
                return
            corr["passed"] += 1
            if not _bitwise_equal(v1.get("out"), v2.get("out")):
                corr["deterministic"] = False
        corr["passed_all"] = True
        self.note("TritonBench task: shapes are those of the reference's test function")
        if job.get("timing", True):
            self.stage("timing")
            self.stage_sets([[]])
            entry = prob.get("entry") or ""
            if self.cuda:
                t_c, t_r = self.time_both(fn, int(job.get("iters", 20)), 2, entry=entry)
                self.res["metrics"]["kernels"] = self.census(fn).get("kernels", [])
            else:
                t_c, t_r = self.time_both(fn, 1, 0)
            t_c["scope"] = t_r["scope"] = "whole test function (includes input creation)" + (
                f"; kernels.within: the kernels of its calls of {entry}" if entry and self.cuda else "")
            self.res["timings"] = {"candidate": t_c, "reference": t_r}
            self.baselines(fn, entry)

    def run(self) -> dict:
        res = self.res
        try:
            self.load()
            if self.job["problem"]["kind"] == "kernelbench":
                self.kernelbench()
            else:
                self.tritonbench()
            res["status"] = "ok"
        except Failed as f:
            res.update(status="error", error_kind=f.kind, error=str(f)[:2000])
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            # an answer of the wrong shape: the reference's are the harness's own, so the candidate's
            res.update(status="error", error_kind="runtime-error",
                       error=f"malformed answer in stage {res['stage']!r}: {type(exc).__name__}: {exc}"[:2000])
        except Gone as g:
            kind, detail = g.kind()
            who = "the candidate's process" if g.process is self.cand else "the reference's process"
            if g.process is self.ref and kind not in ("timeout", "harness-error"):
                kind = "reference-error"
            res.update(status="error", error_kind=kind,
                       error=f"{kind} in stage {res['stage']!r}: {who} stopped ({detail})")
            if "signal" in detail:
                res["signal"] = detail.rsplit("signal ", 1)[1]
        res["stage_final"] = res["stage"]
        if self.job.get("structure") is not None and self.loaded and self.cand.proc.poll() is None:
            try:  # a candidate that failed at run time still has the structure of what it launched
                self.structure()
            except (Failed, Gone, TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
                self.note(f"structure unavailable: {type(exc).__name__}: {str(exc)[:200]}")
        self._close_stage()
        if self.share.slots > 1:  # seconds of the stages above spent waiting for the GPU's lock
            res["gpu_wait_s"] = {k: round(v - self._waited0[k], 3) for k, v in self.share.waited.items()}
        self.reuse.commit(res)
        res["input_secret"] = self.secret  # written once the candidate can no longer run
        return res


def judge_job(job: dict, ref: Process, cand: Process, deadline: float, cache: ProblemCache | None = None,
              share=None) -> dict:
    return Judge(job, ref, cand, deadline, cache, share).run()
