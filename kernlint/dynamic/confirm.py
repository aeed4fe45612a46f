"""Plan, run and merge the dynamic checks for a set of findings.

Each finding's rule says how a run confirms it (``rule.confirm``: tool, check, threshold,
fallback). :func:`plan` groups the findings into the fewest processes: one per compute-sanitizer
tool (the sanitizer runs one tool per process) over the whole user command with
``--kernel-name`` limited to the kernels with findings, one ``ncu`` run collecting every metric
needed, and one interpreter run for what only the interpreter sees (races between programs on
global memory) and, without a GPU, for what it can stand in for (out-of-bounds).

:func:`confirm` runs the plan. Without a CUDA GPU the GPU steps are skipped with a notice and the
findings they would have judged stay *suspected* (``require_gpu=True`` raises instead); the
interpreter fallback still runs. Importing this module needs no GPU.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Sequence

from kernlint.dynamic import gsan, interp_check, ncu, ncu_judges, sanitizer
from kernlint.dynamic.interp_hook import WAIT_MESSAGE
from kernlint.dynamic.verdicts import CONFIRMED_THROUGH, apply_evidence, rule_category
from kernlint.model import Finding, Verdict


class GpuRequired(RuntimeError):
    """``require_gpu`` was set and no CUDA GPU (or no tool) is available."""


def cuda_available() -> bool:
    """A usable CUDA device, asked of the driver directly: importing torch for this would cost
    seconds of every ``--confirm`` run."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        return False
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    try:
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except AttributeError:
        return False


@dataclass
class Step:
    kind: str  # "sanitizer" | "ncu" | "interpreter" | "gsan"
    tool: str  # memcheck / racecheck / synccheck / initcheck / ncu / interpreter / gsan
    findings: list[Finding] = field(default_factory=list)
    #: discovery: the step runs every kernel (no kernel filter), whatever its findings
    metrics: list[str] = field(default_factory=list)
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    #: interpreter step on a GPU: out-of-bounds findings it judges only when memcheck did not
    #: confirm them (memcheck stops a kernel at its first error and misses over-reads inside an
    #: allocation's granularity)
    second_opinion: list[Finding] = field(default_factory=list)
    every_kernel: bool = False

    @property
    def kernels(self) -> list[str]:
        if self.every_kernel:
            return []
        return sorted({f.device_symbol for f in self.findings if f.device_symbol})

    def to_judge(self) -> list[Finding]:
        return self.findings + [f for f in self.second_opinion if f.verdict != Verdict.CONFIRMED]


def _rule(code: str):
    try:
        from kernlint.catalogue import get_rule

        return get_rule(code)
    except Exception:
        return None


def entry_command(target: str | Sequence[str]) -> list[str]:
    """The user's entry point as an argv that runs natively: a file's ``run()``/``__main__`` or a command."""
    if isinstance(target, (list, tuple)):
        return list(target)
    if target.endswith(".py") and " " not in target:
        return [sys.executable, "-m", "kernlint.dynamic.interp_runner", "--no-interpret", os.path.abspath(target)]
    import shlex

    return shlex.split(target)


def plan(
    findings: list[Finding],
    target: str | Sequence[str],
    *,
    gpu: bool,
    padding: int | None = 64,
    launch_skip: int | None = None,
    launch_count: int | None = None,
    sanitizer_exe: str = "compute-sanitizer",
    ncu_exe: str = "ncu",
    discover: bool = False,
    features: frozenset[str] = frozenset(),
    gsan_available: bool = False,
) -> list[Step]:
    """The fewest processes that judge ``findings`` (in order: sanitizers, interpreter, gsan, ncu).

    ``discover``: also run every kernel under the checkers whatever the findings ask for: the
    interpreter (exact bounds, races, unwritten outputs) always, and on a GPU memcheck, racecheck
    where the source uses shared memory (``features`` has ``shared``), synccheck where it has
    barriers (``barrier``), and GSan where the installed Triton ships it.
    """
    steps: dict[tuple[str, str], Step] = {}
    if discover and "no-triton" not in features:  # the interpreter runs Triton kernels only
        steps[("interpreter", "interpreter")] = Step("interpreter", "interpreter", every_kernel=True)
        if gpu:
            wanted = ["memcheck"] + (["racecheck"] if "shared" in features else []) + \
                (["synccheck"] if "barrier" in features else [])
            for name in wanted:
                steps[("sanitizer", name)] = Step("sanitizer", name, every_kernel=True)
            if gsan_available and not isinstance(target, (list, tuple)) and str(target).endswith(".py"):
                steps[("gsan", "gsan")] = Step("gsan", "gsan", every_kernel=True)
    for f in findings:
        rule = _rule(f.rule)
        if rule is None or rule.confirm.tool in ("none", "eval", ""):
            continue
        tool, check = rule.confirm.tool, rule.confirm.check
        exact = rule.confirm.fallback == "interpreter" and rule.category in interp_check.CATEGORIES
        if tool in ("compute-sanitizer", "ncu") and not gpu:
            if exact:
                tool = "interpreter"
            elif discover and rule.category in CONFIRMED_THROUGH and ("interpreter", "interpreter") in steps:
                # an int32 wrap is confirmed by the invalid access it causes: the interpreter sees those
                steps[("interpreter", "interpreter")].second_opinion.append(f)
                continue
            else:
                continue
        elif tool == "compute-sanitizer" and (exact or (discover and rule.category in CONFIRMED_THROUGH)):
            # memcheck stops a kernel at its first invalid access and cannot see over-reads inside an
            # allocation's granularity: the exact-bounds interpreter judges what it leaves unconfirmed
            steps.setdefault(("interpreter", "interpreter"), Step("interpreter", "interpreter")).second_opinion.append(f)
        if tool == "interpreter" or tool == "differential":
            if rule.category not in interp_check.CATEGORIES:
                continue
            steps.setdefault(("interpreter", "interpreter"), Step("interpreter", "interpreter")).findings.append(f)
        elif tool == "compute-sanitizer":
            name = check if check in sanitizer.TOOLS else "memcheck"
            steps.setdefault(("sanitizer", name), Step("sanitizer", name)).findings.append(f)
        elif tool == "ncu":
            step = steps.setdefault(("ncu", "ncu"), Step("ncu", "ncu"))
            step.findings.append(f)
            for metric in ncu.metrics_for([rule.category], [check]):
                if metric not in step.metrics:
                    step.metrics.append(metric)
    command = entry_command(target)
    order = {"sanitizer": 0, "interpreter": 1, "gsan": 2, "ncu": 3}
    out = sorted(steps.values(), key=lambda s: (order[s.kind], s.tool))
    for s in out:
        if s.kind == "sanitizer":
            s.argv, s.env = sanitizer.sanitizer_command(
                s.tool, command, kernels=s.kernels, launch_skip=launch_skip, launch_count=launch_count,
                padding=padding if s.tool == "memcheck" else None, executable=sanitizer_exe)
        elif s.kind == "gsan":
            s.argv = gsan.command(os.path.abspath(str(target)))
        elif s.kind == "ncu":
            s.argv = ncu.ncu_command(command, s.metrics, kernels=s.kernels, launch_skip=launch_skip,
                                     launch_count=launch_count, executable=ncu_exe)
    return out


@dataclass
class ConfirmResult:
    findings: list[Finding]
    new_findings: list[Finding]
    notices: list[str]
    steps: list[dict]
    seconds: float
    #: the entry point could not be run (did not start, or failed with nothing found): with its stderr tail
    errors: list[str] = field(default_factory=list)


def confirm(
    findings: list[Finding],
    target: str | Sequence[str],
    *,
    require_gpu: bool = False,
    gpu: bool | None = None,
    cwd: str | None = None,
    timeout: float = 600.0,
    padding: int | None = 64,
    launch_skip: int | None = None,
    launch_count: int | None = None,
    interpreter_fallback: bool = True,
    discover: bool = False,
    features: frozenset[str] = frozenset(),
) -> ConfirmResult:
    """Judge ``findings`` by running ``target`` (a file with ``run()``/``__main__``, or a command).

    ``discover``: run every kernel under the checkers (see :func:`plan`); what they see at a line no
    finding covers comes back as new findings. The interpreter then runs beside the GPU tools, in
    a second process at the same time, so discovery costs the slower of the two, not their sum.
    """
    started = time.perf_counter()
    have_gpu = cuda_available() if gpu is None else gpu
    notices: list[str] = []
    if have_gpu and not sanitizer.find_sanitizer() and not ncu.find_ncu():
        notices.append("dynamic phase: a GPU is present but neither compute-sanitizer nor ncu is on PATH")
    if not have_gpu:
        if require_gpu:
            raise GpuRequired("--require-gpu: no CUDA GPU available for the dynamic phase")
        notices.append("dynamic phase: no CUDA GPU; compute-sanitizer and ncu checks skipped"
                       + ("; out-of-bounds, race, atomic and unwritten-output findings judged on Triton's interpreter"
                          if interpreter_fallback else ""))
    has_gsan = have_gpu and discover and gsan.available()
    if have_gpu and discover and not has_gsan:
        notices.append("dynamic phase: this Triton has no global-memory race sanitizer (triton.tools.gsan): "
                       "races on global memory judged on the interpreter only")
    steps = plan(findings, target, gpu=have_gpu, padding=padding, launch_skip=launch_skip,
                 launch_count=launch_count, discover=discover, features=features, gsan_available=has_gsan)
    if not interpreter_fallback:
        steps = [s for s in steps if s.kind != "interpreter" or have_gpu]
    new: list[Finding] = []
    ran: list[dict] = []
    errors: list[str] = []
    interp_errors: list[str] = []
    native_ran = False
    early = None
    interp_step = next((s for s in steps if s.kind == "interpreter" and s.every_kernel), None)
    if interp_step is not None and len(steps) > 1:
        pool = ThreadPoolExecutor(max_workers=1)
        early = pool.submit(interp_check.run_interpreted, target, cwd=cwd, timeout=timeout)
        pool.shutdown(wait=False)
    for step in steps:
        t0 = time.perf_counter()
        if step.kind == "interpreter":
            todo = step.to_judge()
            if not todo and not step.every_kernel:
                continue  # memcheck confirmed every out-of-bounds finding: no second opinion needed
            result = early.result() if early is not None else interp_check.run_interpreted(target, cwd=cwd,
                                                                                           timeout=timeout)
            step.argv = list(result.command)
            judged, added, notes = interp_check.judge(todo, result)
            failed = _entry_failed(result.returncode, result.output_tail, bool(result.records),
                                   result.failure, result.launches)
            if failed and _fails_inside_triton(result.output_tail):
                # the interpreter, not the program, cannot go on (a Gluon kernel, a driver call)
                notes = [*notes, f"dynamic phase: Triton's interpreter cannot run {step_target(target)}: "
                                 f"{_last_line(result.output_tail)}"]
            else:
                interp_errors += failed
            if not result.launches and not result.failure and result.returncode == 0:
                notes = [*notes, f"dynamic phase: {' '.join(map(str, result.command[-1:]))} ran no kernel under the "
                                 "interpreter (does its entry point launch one?)"]
        elif step.kind == "sanitizer":
            judged, added, notes, failed, completed = _run_sanitizer(step, cwd, timeout)
            errors += failed
            native_ran = native_ran or (completed and not failed)
        elif step.kind == "gsan":
            judged, added, notes = _run_gsan(step, findings, cwd, timeout)
        else:
            judged, added, notes = _run_ncu(step, cwd, timeout)
        new += added
        notices += notes
        ran.append({"tool": step.tool, "argv": step.argv, "findings": len(step.findings) + len(step.second_opinion),
                    "seconds": round(time.perf_counter() - t0, 3)})
    if native_ran and interp_errors:
        # the program ran natively under the sanitizer: what failed is the interpreter's run of it
        notices += [f"dynamic phase: Triton's interpreter could not run {step_target(target)}: {e.splitlines()[-1]}"
                    for e in interp_errors]
    else:
        errors += interp_errors
    return ConfirmResult(findings, _dedupe(new), notices, ran, round(time.perf_counter() - started, 3),
                         list(dict.fromkeys(errors)))


def step_target(target) -> str:
    return " ".join(map(str, target)) if isinstance(target, (list, tuple)) else os.path.basename(str(target))


def _last_line(output: str) -> str:
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    return lines[-1].strip()[:300] if lines else ""


def _fails_inside_triton(output: str) -> bool:
    """The traceback's innermost frame is in Triton's own package."""
    import re

    frames = re.findall(r'File "([^"]+)", line \d+', output)
    if not frames:
        return False
    try:
        import importlib.util

        spec = importlib.util.find_spec("triton")
        root = os.path.dirname(spec.origin) if spec and spec.origin else None
    except (ImportError, ValueError):
        root = None
    return bool(root) and os.path.abspath(frames[-1]).startswith(root + os.sep)


def _entry_failed(returncode, output: str, saw_something: bool, failure: str | None, launches=()) -> list[str]:
    """The entry point itself failed: it could not start, or it exited non-zero and no tool saw a
    defect that would explain it (a run stopped by the watchdog or by a found defect is no error)."""
    if failure and failure.startswith("could not start"):
        return [failure]
    if returncode in (0, None) or saw_something:
        return []
    if any(WAIT_MESSAGE in (launch.get("error") or "") for launch in launches):
        return []
    tail = "\n".join(output.strip().splitlines()[-12:])
    return [f"the entry point exited with {returncode}" + (f"; its output ends:\n{tail}" if tail else "")]


def _launch_is_unique(f: Finding, own: tuple) -> bool:
    """No other kernel under the same GPU name was compiled with this grid and block (or an unknown one)."""
    launches = f.evidence.get("device_symbol_launches") or {}
    others = [ncu.launch_shape(c) for kernel, configs in launches.items() if kernel != f.kernel for c in configs]
    return bool(others) and all(o is not None and o != own for o in others)


def _dedupe(new: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for f in new:
        key = (f.rule, f.path, f.span.line)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _run(argv: list[str], env: dict[str, str], cwd: str | None, timeout: float) -> tuple[int | None, str, str | None]:
    full_env = {**os.environ, **env}
    try:
        proc = subprocess.run(argv, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)
        return proc.returncode, (proc.stdout or "") + (proc.stderr or ""), None
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout:g} s"
    except OSError as e:
        return None, "", f"could not start {argv[0]}: {e}"


def _run_sanitizer(step: Step, cwd, timeout):
    with tempfile.TemporaryDirectory(prefix="kernlint-sanitizer-") as tmp:
        log = os.path.join(tmp, "report.txt")
        argv = list(step.argv)
        argv[1:1] = ["--log-file", log]
        rc, output, failure = _run(argv, step.env, cwd, timeout)
        text = open(log, encoding="utf-8", errors="replace").read() if os.path.exists(log) else output
    report = sanitizer.parse_report(text, step.tool)
    if failure is None and not report.completed:
        failure = f"compute-sanitizer {step.tool} ended without its summary (exit {rc})"
    cats = {rule_category(f.rule) for f in step.findings}
    cats |= {CONFIRMED_THROUGH[c] for c in cats if c in CONFIRMED_THROUGH}  # a wrapped offset shows as its access
    if step.every_kernel:
        cats |= {"out-of-bounds"} if step.tool == "memcheck" else {"race"} if step.tool == "racecheck" else {"sync"}
    # a kernel with an error was aborted there: its other lines were never judged, not clean
    aborted = {e.kernel for e in (r.to_evidence() for r in report.records) if e.kernel}
    failed = _entry_failed(rc, output, bool(report.records), failure) if report.completed else []
    return (*apply_evidence(step.findings, [r.to_evidence() for r in report.records],
                            tool=f"compute-sanitizer {step.tool}", categories=cats,
                            executed=lambda f: None if rc != 0 or f.device_symbol in aborted else True,
                            failure=failure), failed, report.completed and failure is None)


def _run_gsan(step: Step, findings: list[Finding], cwd, timeout):
    """GSan's race reports judge the race findings as a further witness (it never refutes: it samples)."""
    rc, output, failure = _run(step.argv, {}, cwd, timeout)
    races = [f for f in findings if rule_category(f.rule) == "race"]
    judged, added, notes = apply_evidence(races, gsan.parse(output), tool="gsan", categories={"race"},
                                          executed=lambda f: None, failure=failure)
    for f in races:  # a silent GSan run says nothing: drop its "never ran" notes
        f.evidence["dynamic"] = [e for e in f.evidence.get("dynamic", []) if e.get("tool") != "gsan" or e.get("kind")]
    return findings, added, notes


def _run_ncu(step: Step, cwd, timeout):
    rc, output, failure = _run(step.argv, {}, cwd, timeout)
    rows = ncu.parse_csv(output)
    notices = []
    for f in step.findings:
        rule = _rule(f.rule)
        mine = [r for r in rows if r.kernel == f.device_symbol] if f.device_symbol else rows
        shared = f.evidence.get("device_symbol_shared_by")
        if shared:
            own = ncu.launch_shape(f.evidence.get("launch_config"))
            if own is None or not _launch_is_unique(f, own):
                if f.verdict != Verdict.CONFIRMED:
                    f.verdict = Verdict.INCONCLUSIVE
                note = (f"{', '.join(shared)} all run as `{f.device_symbol}` with the same grid and block: ncu's rows "
                        "for them cannot be told apart (give the prim_funcs distinct names)")
                f.evidence.setdefault("dynamic", []).append({"tool": "ncu", "note": note})
                continue
            mine = [r for r in mine if ncu.row_shape(r) == own]  # this kernel's launches, told apart by their shape
        j = ncu_judges.judge(f, step.findings, mine, rule) if mine and not failure else None
        if j is None:
            f.verdict = Verdict.INCONCLUSIVE if f.verdict != Verdict.CONFIRMED else f.verdict
            names = ncu_judges.check_metrics(rule) or ["metric"]
            why = failure or ("the kernel was not profiled" if not mine else f"ncu reported no {names[0]}")
            f.evidence.setdefault("dynamic", []).append({"tool": "ncu", "note": why})
            continue
        f.measurements.update(j.measurements)
        for base in ncu.BASE_METRICS:
            vals = [r.metrics.get(base) for r in mine if isinstance(r.metrics.get(base), (int, float))]
            if vals:
                f.measurements[base] = max(vals)
        if f.verdict != Verdict.CONFIRMED:
            f.verdict = j.verdict
        f.evidence.setdefault("dynamic", []).append(
            {"tool": "ncu", "metric": j.metric, "value": j.value, "threshold": rule.confirm.threshold,
             "launches": len(mine), **({"note": j.note} if j.note else {})})
    return step.findings, [], notices
