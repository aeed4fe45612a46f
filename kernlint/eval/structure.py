"""Structural judgement of a candidate, in the trusted process, from data only.

Input: the launches the candidate's process captured (:mod:`kernlint.eval.structure_capture`),
the candidate's source text, optionally an ncu profile (:mod:`kernlint.eval.structure_profile`)
and the problem's cost. Output: ``record["structure"]``:

- ``kernels``: one entry per captured specialization, with the IR rules' findings (KL302-KL307)
  on the kernel *as launched*. A GPU worker hands over the TTGIR/PTX Triton compiled; a CPU worker
  (Triton's interpreter compiles nothing) hands over the launch's signature, which is compiled here
  ahead of time by the IR phase's compile workers (:func:`kernlint.ir.compile.run_jobs`) for the
  target architecture.
- ``profile``: ncu's counters per kernel and their judgement against the static predictions.
- ``roofline``: bytes and FLOPs per call against the device's ceilings (:mod:`kernlint.eval.roofline`).
- ``flaws``: ``{"kind", "kernel", "reason", "measured"}`` for each threshold crossed
  (:class:`StructureThresholds`); any flaw makes the verdict ``structurally-flawed``. A time above
  the roofline is not a flaw but the judge's ``above-roofline`` cheat (one check,
  :func:`kernlint.eval.roofline.implausible`).
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

STRUCTURE_RULES = ("KL302", "KL303", "KL304", "KL305", "KL306", "KL307")
FLAW_KINDS = ("bank-conflict", "spill", "low-occupancy", "uncoalesced", "below-roofline")


@dataclass
class StructureThresholds:
    """When a correct candidate is ``structurally-flawed`` (each check off with ``None``).

    Measured numbers (an ncu profile) are used when there are any; otherwise, where noted, the IR
    phase's exact static facts of the kernels as launched (``static_verdicts``)."""

    #: shared-memory bank conflicts: excess wavefronts over the conflict-free count (ncu: conflicts /
    #: (wavefronts - conflicts); static: KL302's predicted excess / ideal wavefronts at its lines)
    bank_conflict_excess: float | None = 0.25
    #: any register spill (ptxas' spill stores/loads, or ncu's local-memory traffic) of the
    #: specialization launched last (the one in use): a spill in a kernel is in its hot path
    spills: bool = True
    #: achieved occupancy (ncu ``sm__warps_active``) below this while latency-bound (neither DRAM nor
    #: SM throughput above ``latency_bound_below`` percent of peak); measured only
    min_achieved_occupancy: float | None = 0.25
    latency_bound_below: float = 60.0
    #: global accesses needing more than this multiple of the ideal 32-byte sectors (ncu's sectors per
    #: request against KL305's ideal; static: KL305's predicted sector ratio)
    max_sector_ratio: float | None = 2.0
    #: efficiency (time on the roof / measured time) below this; judged only when the roof time is at
    #: least ``roofline_min_us`` (smaller problems are launch-latency bound)
    min_efficiency: float | None = 0.20
    roofline_min_us: float = 20.0
    #: a time beating the datasheet memory roof by this factor, with a working set larger than L2:
    #: the judge's ``above-roofline`` cheat (:func:`kernlint.eval.roofline.implausible`)
    implausible_efficiency: float | None = 1.10
    #: measured flaws are judged on kernels running at least this long per call (ncu): below it
    #: launch latency, not structure, decides the time
    min_kernel_us: float = 10.0
    #: judge from static facts when no profile ran (CPU workers): spills, KL305's predicted sector
    #: ratio, and KL302 conflicts of at least ``static_min_conflict_ways`` (a line's prediction
    #: overstates the kernel's share of excess wavefronts, so only unambiguous conflicts count)
    static_verdicts: bool = True
    static_min_conflict_ways: float = 4.0

    def to_dict(self) -> dict:
        return asdict(self)


# -- the kernels as launched ------------------------------------------------------------------


def _record_from_capture(entry: dict) -> dict:
    """An IR-phase artefact record from what the candidate's process handed over of a compiled
    kernel: its text, metadata and the driver's register count (a GPU launch) or ptxas' figures (a
    kernel it compiled ahead of time). A launch that did not compile is a failed record."""
    from kernlint.ir.resources import ResourceUsage

    if not entry.get("asm"):
        return {"ok": False, "stage": "compile", "error": entry.get("compile_error") or "no compiled kernel"}
    meta = dict(entry.get("metadata") or {})
    res = None
    if entry.get("n_regs") is not None:
        # the driver reports local memory per thread (Triton divides it by 4 into n_spills)
        res = ResourceUsage(registers=int(entry["n_regs"]), local_bytes=4 * int(entry.get("n_spills") or 0),
                            dynamic_shared_bytes=int(meta.get("shared") or 0), source="driver").to_dict()
    elif isinstance(entry.get("resources"), dict):  # ptxas' figures, from the compile worker
        res = entry["resources"]
    return {"ok": True, "asm": entry.get("asm", {}), "metadata": meta, "resources": res}


def _hot_entries(capture: list[dict]) -> set[int]:
    """Index of the specialization each kernel launched last: the one in use once an autotuner has
    chosen (its benchmarking launches every config, many times)."""
    best: dict[str, int] = {}
    for i, e in enumerate(capture):
        j = best.get(e["kernel"])
        if j is None or e.get("last_launch", 0) > capture[j].get("last_launch", 0):
            best[e["kernel"]] = i
    return set(best.values())


def static_structure(capture: list[dict], source: str, origin: str, arch: str = "sm_90") -> list[dict]:
    """The IR rules KL302-KL307 on every captured specialization; one dict per specialization.
    Nothing of the candidate is imported or compiled here: its process handed over the compiled
    text (:func:`kernlint.eval.structure_capture.compile_records`). TileLang kernels are not
    captured: :func:`tilelang_structure` lowers them where candidate code may run."""
    from kernlint.cache import DiskCache
    from kernlint.ir.compile import CompileJob
    from kernlint.ir.occupancy import parse_arch
    from kernlint.ir.phase import _check, ir_rules
    from kernlint.ir.specialize import Specialization
    from kernlint.source.phase import read_module

    if not capture:
        return []
    rules = [cls() for cls in ir_rules(STRUCTURE_RULES)]
    info = read_module(origin or "candidate.py", source)
    def_lines = {k.kernel.name: k.kernel.span.line for k in reversed(info.kernels)} if info is not None else {}
    hot = _hot_entries(capture)
    out: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="kernlint-structure-") as tmp:
        path = str(Path(tmp) / (Path(origin).name if origin.endswith(".py") else "candidate.py"))
        Path(path).write_text(source)
        jobs: list[tuple[dict, CompileJob, dict]] = []
        for i, entry in enumerate(capture):
            spec = Specialization.from_dict({"label": "as launched", "origin": "launch", **entry["spec"]})
            capability = int((entry.get("metadata") or {}).get("capability") or parse_arch(arch))
            key = hashlib.sha256(f"{entry['kernel']}\0{spec.key()}\0{capability}".encode()).hexdigest()
            record = _record_from_capture(entry)
            # the file the compiled text's locations name (the candidate's process compiled it)
            where = str(entry.get("source_path") or path)
            jobs.append(({"index": i, "hot": i in hot}, CompileJob(where, entry["kernel"], spec, capability, key),
                         record))
        for info, job, record in jobs:
            entry = capture[info["index"]]
            source_of = ("compiled from the launch's signature" if entry.get("compiled_here") or not entry.get("asm")
                         else "captured from the launch")
            findings = _check(rules, record, job, def_lines.get(job.kernel, 1), DiskCache(None), "")
            for f in findings:
                f.path = origin or path
            res = record.get("resources") or {}
            out.append({
                "kernel": job.kernel, "device_symbol": (record.get("metadata") or {}).get("name") or job.kernel,
                "hot": info["hot"], "launches": entry.get("launches", 0), "grid": entry.get("grid"),
                "spec": job.spec.to_dict(), "ir_source": source_of, "target": f"sm_{job.capability}",
                "compiled": bool(record.get("ok")), "error": record.get("error", "")[:300],
                "registers": res.get("registers"), "spill_bytes": (res.get("spill_store_bytes", 0) or 0)
                + (res.get("spill_load_bytes", 0) or 0) or res.get("local_bytes") or 0,
                "shared_bytes": (res.get("static_shared_bytes", 0) or 0) + (res.get("dynamic_shared_bytes", 0) or 0),
                "num_warps": job.spec.num_warps,
                "findings": [f.to_dict() for f in findings],
            })
    return out


def tilelang_structure(source: str, origin: str, arch: str = "sm_90") -> list[dict]:
    """TileLang kernels: the IR phase lowers each factory with the arguments its source gives
    (TileLang fixes the launch at lowering; TileLang launches are not captured yet). Lowering
    imports the module: the evaluation runs this in the candidate's executor."""
    from kernlint.ir.discovery import kernels_in_source
    from kernlint.ir.phase import run_ir_phase
    from kernlint.model import Frontend

    if "tilelang" not in source:
        return []
    with tempfile.TemporaryDirectory(prefix="kernlint-structure-") as tmp:
        path = str(Path(tmp) / "candidate.py")
        Path(path).write_text(source)
        kernels = [k for k in kernels_in_source(source, path) if k.frontend is Frontend.TILELANG]
        # a prim_func defined inside a factory is lowered as part of it
        kernels = [k for k in kernels if not any(o is not k and o.span.line < k.span.line <= o.span.end_line
                                                 for o in kernels)]
        if not kernels:
            return []
        stats: dict[str, Any] = {}
        findings = run_ir_phase(kernels, arch=arch, select=STRUCTURE_RULES, cache_dir=None, jobs=1, stats=stats)
    out = []
    for k in kernels:
        mine = [f for f in findings if f.kernel == k.name]
        for f in mine:
            f.path = origin or f.path
        out.append({"kernel": k.name, "device_symbol": next((f.device_symbol for f in mine), k.name), "hot": True,
                    "launches": None, "grid": None, "spec": {}, "target": arch, "num_warps": None,
                    "ir_source": "lowered from the factory's arguments in the source (TileLang)",
                    "compiled": not stats.get("notices") and not stats.get("failed"),
                    "error": "; ".join(stats.get("notices") or []), "registers": None, "spill_bytes": None,
                    "shared_bytes": None, "findings": [f.to_dict() for f in mine]})
    return out


# -- flaws ------------------------------------------------------------------------------------


def _flaw(kind: str, kernel: str, reason: str, **measured: Any) -> dict:
    return {"kind": kind, "kernel": kernel, "reason": reason, "measured": measured}


def _static_flaws(kernels: list[dict], t: StructureThresholds) -> list[dict]:
    flaws = []
    for k in kernels:
        if not k["hot"]:
            continue
        for f in k["findings"]:
            m = f.get("measurements", {})
            if f["rule"] == "KL303" and t.spills:
                flaws.append(_flaw("spill", k["kernel"], f"registers spill (ptxas): {f['message']}", **m))
            elif f["rule"] == "KL302" and t.bank_conflict_excess is not None:
                ideal = m.get("ideal_wavefronts_per_block") or 0
                excess = m.get("predicted_excess_wavefronts_per_block") or 0
                if (ideal and excess / ideal > t.bank_conflict_excess
                        and (m.get("conflict_ways") or 0) >= t.static_min_conflict_ways):
                    flaws.append(_flaw("bank-conflict", k["kernel"],
                                       f"predicted {excess / ideal:.0%} excess shared-memory wavefronts "
                                       f"(line {f['line']}, static)", excess_share=round(excess / ideal, 3), **m))
            elif f["rule"] == "KL305" and t.max_sector_ratio is not None:
                ratio = m.get("sector_ratio") or 0
                if ratio > t.max_sector_ratio:
                    flaws.append(_flaw("uncoalesced", k["kernel"],
                                       f"predicted {ratio:.1f}x the ideal global sectors (line {f['line']}, static)",
                                       **m))
    return flaws


def _measured_flaws(kernels: list[dict], profile: dict, t: StructureThresholds) -> list[dict]:
    flaws = []
    for name, p in (profile.get("kernels") or {}).items():
        if (p.get("seconds") or 0) * 1e6 < t.min_kernel_us:
            continue
        excess = p.get("bank_conflict_excess")
        if t.bank_conflict_excess is not None and excess is not None and excess > t.bank_conflict_excess:
            flaws.append(_flaw("bank-conflict", name, f"{excess:.0%} excess shared-memory wavefronts (ncu)",
                               excess_share=excess, conflicts=p.get("bank_conflicts"),
                               wavefronts=p.get("shared_wavefronts"), predicted=p.get("predicted_conflicts")))
        if t.spills and (p.get("local_bytes") or 0) > 0:
            flaws.append(_flaw("spill", name, f"{p['local_bytes']:.0f} bytes of local-memory (spill) traffic per call "
                               "(ncu)", local_bytes=p["local_bytes"], registers=p.get("registers")))
        occ, dram, sm = p.get("achieved_occupancy"), p.get("dram_pct"), p.get("sm_pct")
        if (t.min_achieved_occupancy is not None and occ is not None and occ < t.min_achieved_occupancy
                and (dram or 0) < t.latency_bound_below and (sm or 0) < t.latency_bound_below):
            flaws.append(_flaw("low-occupancy", name, f"achieved occupancy {occ:.0%} while latency-bound "
                               f"(DRAM {dram or 0:.0f}%, SM {sm or 0:.0f}% of peak; ncu)",
                               achieved_occupancy=occ, dram_pct=dram, sm_pct=sm))
        ratio = p.get("sector_ratio")
        if t.max_sector_ratio is not None and ratio is not None and ratio > t.max_sector_ratio:
            flaws.append(_flaw("uncoalesced", name, f"{ratio:.1f}x the ideal global sectors per request (ncu)",
                               sector_ratio=ratio, sectors_per_request=p.get("sectors_per_request")))
    return flaws


def _roofline_flaws(roof: dict | None, t: StructureThresholds) -> list[dict]:
    if not roof or roof.get("efficiency") is None:
        return []
    eff = roof["efficiency"]
    flaws = []
    if t.min_efficiency is not None and roof["bound_s"] * 1e6 >= t.roofline_min_us and eff < t.min_efficiency:
        flaws.append(_flaw("below-roofline", "*", f"{eff:.0%} of the {roof['roof']} roof "
                           f"({roof['seconds'] * 1e6:.1f} us measured, {roof['bound_s'] * 1e6:.1f} us on the roof)",
                           efficiency=round(eff, 4), roof=roof["roof"]))
    return flaws


def measured_seconds(result: dict, profile: dict | None) -> tuple[float | None, str]:
    """Seconds per call: ncu's kernel durations, else CUPTI's kernel time, else the event median."""
    if profile and profile.get("kernel_seconds"):
        return profile["kernel_seconds"], "ncu gpu__time_duration (sum of the candidate's kernels)"
    cand = (result.get("timings") or {}).get("candidate") or {}
    if not str(cand.get("timer", "")).startswith("cuda"):
        return None, "no GPU timing"
    k = cand.get("kernels") or {}
    if k.get("median_ms"):
        return k["median_ms"] * 1e-3, "CUPTI kernel time (median)"
    if cand.get("median_ms"):
        return cand["median_ms"] * 1e-3, "CUDA events (median)"
    return None, "no GPU timing"


def kernel_symbols(result: dict) -> list[str]:
    """The names the candidate's kernels have on the GPU (what ncu's kernel filter matches)."""
    return sorted({(e.get("metadata") or {}).get("name") or e["kernel"] for e in result.get("kernel_capture") or []})


def analyze(result: dict, source: str, origin: str, thresholds: StructureThresholds | None = None,
            profile_run: dict | None = None, arch: str = "sm_90") -> dict:
    """``record["structure"]`` from the judge's result (see the module's docstring): its
    ``kernel_capture`` (the launch records), ``tilelang_kernels`` (lowered in the candidate's
    executor), ``device``, ``timings``, ``correctness`` and ``metrics.problem_cost``;
    ``profile_run`` is :func:`kernlint.eval.structure_profile.run_profile`'s output when a profile ran."""
    from kernlint.eval import roofline
    from kernlint.eval.structure_profile import profile_summary

    t = thresholds or StructureThresholds()
    capture = result.get("kernel_capture") or []
    out: dict[str, Any] = {"thresholds": t.to_dict()}
    t0 = time.perf_counter()
    try:
        out["kernels"] = static_structure(capture, source, origin, arch) + list(result.get("tilelang_kernels") or [])
    except Exception as exc:  # noqa: BLE001 - a harness failure here must not lose the record
        out["kernels"], out["error"] = [], f"static structure failed: {type(exc).__name__}: {exc}"[:300]
    out["static_s"] = round(time.perf_counter() - t0, 3)
    profile = None
    if profile_run is not None:
        rows = profile_run.get("rows") or []
        profile = {**(profile_summary(rows, out["kernels"]) if rows else {}),
                   **{k: v for k, v in profile_run.items() if k != "rows"}}
        out["profile"] = profile
    cost = (result.get("metrics") or {}).get("problem_cost") or {}
    # CPU workers: the bound on the default device from the problem's size (no time to compare)
    ceilings = roofline.ceilings_for(result.get("device")) or (
        roofline.CEILINGS[roofline.DEFAULT_DEVICE] if result.get("device") == "cpu" else None)
    seconds, timer = measured_seconds(result, profile)
    if ceilings is not None and cost:
        # the roof is the work the problem needs, not what the kernel did (a kernel moving 3x the
        # bytes at full bandwidth is at a third of it); ncu's FP counters only when the count failed
        flops = cost["flops"] if cost.get("flops") is not None else (profile or {}).get("flops")
        out["roofline"] = {**roofline.roofline(cost.get("bytes"), flops, seconds, ceilings, cost.get("dtypes", ())),
                           "timer": timer, "measured_dram_bytes": (profile or {}).get("dram_bytes")}
    passed = (result.get("correctness") or {}).get("passed_all")
    flaws: list[dict] = []
    if passed:
        if profile and profile.get("kernels"):
            flaws = _measured_flaws(out["kernels"], profile, t)
        elif t.static_verdicts:
            flaws = _static_flaws(out["kernels"], t)
        flaws += _roofline_flaws(out.get("roofline"), t)
    out["flaws"] = flaws
    return out


def verdict_reasons(structure: dict | None) -> tuple[str | None, list[str]]:
    """(verdict, reasons) the structure decides: ``structurally-flawed`` for any flaw, None when
    there is none (a time above the roofline is the judge's ``above-roofline`` cheat)."""
    flaws = (structure or {}).get("flaws") or []
    if not flaws:
        return None, []
    return "structurally-flawed", [f"structure:{f['kind']}: {f['kernel']}: {f['reason']}" for f in flaws]


def efficiency(structure: dict | None) -> float | None:
    return ((structure or {}).get("roofline") or {}).get("efficiency")


def counts_by_kind(recs: list[dict]) -> dict[str, int]:
    """Structural flaws per kind over records (a candidate counts once per kind)."""
    out = {k: 0 for k in FLAW_KINDS}
    for r in recs:
        for kind in {f["kind"] for f in ((r.get("structure") or {}).get("flaws") or [])}:
            out[kind] = out.get(kind, 0) + 1
    return out

