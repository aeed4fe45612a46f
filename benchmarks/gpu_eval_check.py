#!/usr/bin/env python
"""GPU acceptance check for ``kernlint eval`` (run on the device; needs no network).

    python benchmarks/gpu_eval_check.py OUT_DIR [--repeats 10] [--skip-ncu] [--parts boundary,suite,timing,faults]
                                        [--resume-from DIR]

Records are written as each candidate finishes; ``--resume-from`` starts from an earlier (cut off)
run's ``*_records.jsonl`` and evaluates only the candidates they lack.

0. the trust-boundary attacks (result forgery, comparison patching, gc/frame walk, seed
   re-derivation, forged timings) and the honest relu with timing on, with the clock evidence;
1. the hack + honest fixture suite on the GPU, each verdict and reason checked against
   the candidates' snapshots (fixtures/eval/candidates/*/NAME.expected, with the GPU-only runtime reasons);
2. timing quality: coefficient of variation of the median over N repeats for a >=20 us kernel,
   and the ratio to ncu's gpu__time_duration when ncu is on PATH;
3. candidates per GPU-hour (wall time of the suite batch);
4. an injected-fault batch (segfault, abort, hang, OOM, illegal address) with every record
   written and classified.

Writes OUT_DIR/gpu_eval_check.json and OUT_DIR/gpu_eval_check.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from helpers import expected_records  # noqa: E402 - the fixtures' snapshots, as the tests read them
FIX = ROOT / "fixtures" / "eval"

KERNEL_SRC = '''
import sys, torch, triton, triton.language as tl

@triton.jit
def add_kernel(x, y, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

N = 1 << 24
x = torch.randn(N, device="cuda"); y = torch.randn(N, device="cuda"); o = torch.empty_like(x)
def run():
    add_kernel[(triton.cdiv(N, 1024),)](x, y, o, N, BLOCK=1024)
if __name__ == "__main__":
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 20):
        run()
    torch.cuda.synchronize()
'''


#: each evaluating part's records in OUT_DIR (appended as candidates finish)
RECORDS = {"boundary": "boundary_records.jsonl", "suite": "suite_records.jsonl", "faults": "fault_records.jsonl"}


def missing_reasons(rec: dict, exp: dict) -> list[str]:
    """The reasons a candidate's snapshot names for a GPU run that its record lacks (prefix match)."""
    want = exp["gpu"]["reasons"] if exp else []
    return [w for w in want if not any(x.startswith(w) for x in rec.get("reasons", []))]


def check_suite(out: Path, only: set[str] | None = None) -> dict:
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates, load_problems
    from kernlint.eval.runner import run_batch

    expected = expected_records(FIX / "candidates")
    probs = load_problems(FIX / "problems")
    cands = load_candidates(FIX / "candidates", probs)
    if only:
        cands = [c for c in cands if c.problem_id in only]
        expected = {k: v for k, v in expected.items() if k.split("/")[0] in only}
    rec_path = out / RECORDS["suite"]
    t0 = time.time()
    # policy speed rule off: the fixtures are tiny and the point here is hack detection
    from kernlint.eval.policy import Policy

    evaluated = len(run_batch(probs, cands, rec_path, EvalOptions(policy=Policy(max_slowdown=1e9))))
    wall = time.time() - t0
    recs = {r["id"]: r for r in map(json.loads, rec_path.read_text().splitlines())}
    rows = []
    for cid, exp in sorted(expected.items()):
        r = recs.get(cid, {})
        missing = missing_reasons(r, exp)
        rows.append({"id": cid, "expected": exp["verdict"], "got": r.get("verdict"),
                     "ok": r.get("verdict") == exp["verdict"] and not missing, "missing_reasons": missing,
                     "reasons": r.get("reasons", []), "speedup": r.get("speedup", {})})
    return {"rows": rows, "wall_s": wall, "n": len(cands), "evaluated": evaluated,
            "candidates_per_gpu_hour": evaluated / wall * 3600 if wall and evaluated else 0.0}


def check_boundary(out: Path) -> dict:
    """The trust-boundary attacks (fixtures/eval/candidates/relu) with timing on: every hack
    rejected with its reason, the honest one passed, and for each the clock evidence the judge
    used (the candidate's CUDA events and profiled kernels, the judge's own clock around its
    synchronized calls)."""
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.policy import Policy
    from kernlint.eval.problems import load_candidates, load_problems
    from kernlint.eval.runner import run_batch

    expected = expected_records(FIX / "candidates")
    probs = {"relu": load_problems(FIX / "problems")["relu"]}
    cands = load_candidates(FIX / "candidates", probs)
    cands = [c for c in cands if c.problem_id == "relu"]
    rec_path = out / RECORDS["boundary"]
    t0 = time.time()
    run_batch(probs, cands, rec_path, EvalOptions(policy=Policy(max_slowdown=1e9), compile_baseline=False))
    recs = {r["id"]: r for r in map(json.loads, rec_path.read_text().splitlines())}
    rows = []
    for c in cands:
        r, exp = recs.get(c.id, {}), expected.get(c.id, {})
        missing = missing_reasons(r, exp)
        t = (r.get("timings") or {}).get("candidate") or {}
        o = t.get("outside") or {}
        calls = o.get("calls") or 1
        rows.append({"id": c.id, "expected": exp.get("verdict"), "got": r.get("verdict"),
                     "ok": r.get("verdict") == exp.get("verdict") and not missing, "missing_reasons": missing,
                     "reasons": r.get("reasons", []), "events_ms": t.get("median_ms"),
                     "kernels_ms": (t.get("kernels") or {}).get("median_ms"),
                     "judge_clock_ms_per_call": o.get("outside_ms", 0) / calls if o else None,
                     "own_clock_ms_per_call": o.get("inside_ms", 0) / calls if o else None,
                     "artifacts": len(r.get("artifacts", []))})
    return {"rows": rows, "wall_s": time.time() - t0}


def _ncu_durations_us(ncu: str, path: Path, extra: list[str]) -> tuple[list[float], str]:
    proc = subprocess.run([ncu, *extra, "--metrics", "gpu__time_duration.sum", "--csv", "--kernel-name",
                           "add_kernel", sys.executable, str(path), "20"],
                          capture_output=True, text=True, timeout=600)
    vals = []
    for line in proc.stdout.splitlines():
        cells = [c.strip('"') for c in line.split('","')]
        if any("gpu__time_duration" in c for c in cells):
            unit, value = cells[-2].strip(), cells[-1].strip('"').replace(",", "")
            try:
                v = float(value)
            except ValueError:
                continue
            vals.append(v / 1e3 if unit in ("nsecond", "ns") else v if unit in ("usecond", "us") else v * 1e3)
    return vals, (proc.stdout[-500:] + proc.stderr[-500:]) if not vals else ""


def timing_quality(out: Path, repeats: int, skip_ncu: bool) -> dict:
    """CV of the median over ``repeats`` for the default timer, and every L2-flush mode against
    ncu's gpu__time_duration (ncu flushes and invalidates caches before each kernel by default;
    measured with locked base clocks, its default, and with ``--clock-control none``)."""
    import importlib.util

    from kernlint.eval import timing

    path = out / "timing_kernel.py"
    path.write_text(KERNEL_SRC)
    spec = importlib.util.spec_from_file_location("timing_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    modes = {}
    for mode in timing.FLUSH_MODES:
        medians = [timing.time_cuda(lambda: mod.run(), [[]], warmup=10, iters=100, flush_l2=mode)["median_ms"]
                   for _ in range(repeats if mode == "read" else 3)]
        mean = statistics.fmean(medians)
        modes[mode] = {"medians_ms": medians, "mean_of_medians_us": mean * 1e3,
                       "cv": statistics.pstdev(medians) / mean if mean else None}
    kern = [timing.time_cuda_kernels(lambda: mod.run(), [[]], iters=50) for _ in range(repeats)]
    kern_ms = [k["median_ms"] for k in kern if "median_ms" in k]
    modes["cupti-kernels"] = {"medians_ms": kern_ms, "mean_of_medians_us": statistics.fmean(kern_ms) * 1e3 if kern_ms else float("nan"),
                              "cv": statistics.pstdev(kern_ms) / statistics.fmean(kern_ms) if kern_ms else None,
                              "errors": [k["error"] for k in kern if "error" in k]}
    default = modes["read"]
    result = {"kernel": "vector add, 2^24 fp32", "repeats": repeats, "flush_modes": modes,
              "medians_ms": default["medians_ms"], "mean_of_medians_us": default["mean_of_medians_us"],
              "cv": default["cv"], "cv_ok": default["cv"] is not None and default["cv"] <= 0.01,
              "kernel_at_least_20us": default["mean_of_medians_us"] >= 20}
    ncu = shutil.which("ncu")
    if not ncu or skip_ncu:
        result["ncu_note"] = "ncu not on PATH (or skipped)"
        return result
    for label, extra in (("ncu_base_clocks", []), ("ncu_clock_control_none", ["--clock-control", "none"])):
        try:
            vals, note = _ncu_durations_us(ncu, path, extra)
        except Exception as exc:  # noqa: BLE001 - recorded, the rest of the check goes on
            vals, note = [], f"ncu failed: {exc}"
        if vals:
            result[label] = {"median_us": statistics.median(vals), "n": len(vals),
                             "ratios": {m: v["mean_of_medians_us"] / statistics.median(vals) for m, v in modes.items()}}
        else:
            result[label] = {"note": note}
    ref = result.get("ncu_clock_control_none", {})
    if "median_us" in ref:
        ratio = default["mean_of_medians_us"] / ref["median_us"]
        result.update(ncu_median_us=ref["median_us"], ratio_to_ncu=ratio, within_3pct=abs(ratio - 1) <= 0.03)
        kr = modes["cupti-kernels"]["mean_of_medians_us"] / ref["median_us"]
        result.update(kernel_ratio_to_ncu=kr, kernel_within_3pct=abs(kr - 1) <= 0.03)
    return result


def fault_classified(rec: dict, exp: dict) -> bool:
    """A fault's record as its snapshot (fixtures/eval/faults/*/NAME.expected) says: its verdict, one of its error
    kinds, and the words its error must hold."""
    return (rec.get("verdict") == exp["verdict"] and rec.get("error_kind") in exp["error_kind"]
            and exp.get("error", "") in (rec.get("error") or ""))


def fault_batch(out: Path) -> dict:
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates, load_problems
    from kernlint.eval.runner import run_batch

    expected = expected_records(FIX / "faults")
    probs = load_problems(FIX / "problems")
    cands = load_candidates(FIX / "faults", probs)
    rec_path = out / RECORDS["faults"]
    t0 = time.time()
    run_batch(probs, cands, rec_path, EvalOptions(seeds=(0,), shape_variants=(0,), timeout_s=60,
                                                   rss_limit_mb=16384, timing=False))
    recs = {r["id"]: r for r in map(json.loads, rec_path.read_text().splitlines())}
    rows = [{"id": cid, "verdict": recs.get(cid, {}).get("verdict"), "error_kind": recs.get(cid, {}).get("error_kind"),
             "ok": cid in recs and fault_classified(recs[cid], exp),
             "error": (recs.get(cid, {}).get("error") or "")[:200]} for cid, exp in sorted(expected.items())]
    return {"rows": rows, "all_written": set(recs) == set(expected), "wall_s": time.time() - t0}


PARTS = ("boundary", "suite", "timing", "faults")


def boundary_markdown(b: dict) -> list[str]:
    md = ["## Trust boundary (relu attacks, timing on)", "",
          "| candidate | expected | got | ok | events ms | kernels ms | judge clock ms/call | own clock ms/call | artifacts | reasons |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    md += [f"| {r['id']} | {r['expected']} | {r['got']} | {'yes' if r['ok'] else 'NO'} | {r['events_ms']} | "
           f"{r['kernels_ms']} | {r['judge_clock_ms_per_call']} | {r['own_clock_ms_per_call']} | {r['artifacts']} | "
           f"{'; '.join(x[:80] for x in r['reasons'])} |" for r in b["rows"]]
    return md + [""]


def suite_markdown(s: dict) -> list[str]:
    md = [f"## Hack and honest suite: {sum(r['ok'] for r in s['rows'])}/{len(s['rows'])} as expected", "",
          "| candidate | expected | got | ok | missing reasons | reasons |", "|---|---|---|---|---|---|"]
    md += [f"| {r['id']} | {r['expected']} | {r['got']} | {'yes' if r['ok'] else 'NO'} | {', '.join(r['missing_reasons'])} | "
           f"{'; '.join(x[:70] for x in r['reasons'])} |" for r in s["rows"]]
    return md + ["", f"Suite wall time {s['wall_s']:.1f} s for the {s['evaluated']} candidates evaluated in this run "
                 f"(of {s['n']}): {s['candidates_per_gpu_hour']:.0f} candidates per GPU-hour (fixture sizes, timing "
                 "and the --profile pass on).", ""]


def timing_markdown(t: dict) -> list[str]:
    return ["## Timing quality", "", f"Kernel: {t['kernel']}, mean of medians {t['mean_of_medians_us']:.2f} us over {t['repeats']} repeats, "
            f"CV {t['cv']:.4f} ({'<= 1%' if t['cv_ok'] else '> 1%'}).",
            f"ncu (--clock-control none): {t.get('ncu_median_us', '-')} us, ratio {t.get('ratio_to_ncu', '-')}, "
            f"within 3%: {t.get('within_3pct', '-')} {t.get('ncu_note', '')}", "",
            "| L2 flush | mean of medians (us) | CV | / ncu base clocks | / ncu clock-control none |", "|---|---|---|---|---|",
            *[f"| {m} | {v['mean_of_medians_us']:.2f} | {(v['cv'] if v['cv'] is not None else float('nan')):.4f} | "
              f"{t.get('ncu_base_clocks', {}).get('ratios', {}).get(m, float('nan')):.3f} | "
              f"{t.get('ncu_clock_control_none', {}).get('ratios', {}).get(m, float('nan')):.3f} |"
              for m, v in t.get("flush_modes", {}).items()],
            f"(read/write/none: CUDA events around each call with that L2 flush; cupti-kernels: the kernels' device "
            f"durations from the profiler, read flush; kernel-time ratio to ncu {t.get('kernel_ratio_to_ncu', '-')})", ""]


def faults_markdown(f: dict) -> list[str]:
    md = [f"## Injected faults: all written {f['all_written']}", "", "| candidate | verdict | error kind | ok |", "|---|---|---|---|"]
    return md + [f"| {r['id']} | {r['verdict']} | {r['error_kind']} | {'yes' if r['ok'] else 'NO'} |" for r in f["rows"]] + [""]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {','.join(PARTS)}")
    ap.add_argument("--problems", help="the suite part: only these problems' candidates (comma-separated)")
    ap.add_argument("--resume-from", help="a directory with an earlier run's *_records.jsonl to continue from "
                                          "(without it, the chosen parts start from nothing)")
    args = ap.parse_args()
    parts = [p for p in args.parts.split(",") if p]
    unknown = set(parts) - set(PARTS)
    if unknown:
        print(f"unknown part(s): {', '.join(sorted(unknown))} (choose from {', '.join(PARTS)})", file=sys.stderr)
        return 2
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for part in set(parts) & set(RECORDS):  # a run starts from nothing unless it resumes
        earlier = Path(args.resume_from) / RECORDS[part] if args.resume_from else None
        if earlier is not None and earlier.exists():
            if earlier.resolve() != (out / RECORDS[part]).resolve():
                shutil.copy(earlier, out / RECORDS[part])
        else:
            (out / RECORDS[part]).unlink(missing_ok=True)
    os.environ.pop("TRITON_INTERPRET", None)
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device visible", file=sys.stderr)
        return 2
    import triton

    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
              "gpus": torch.cuda.device_count(), "parts": parts}
    md = ["# kernlint eval GPU check", "",
          f"Device: {report['device']} x{report['gpus']}, torch {report['torch']}, triton {report['triton']}", ""]
    ok = True
    for part, run, render in (("boundary", lambda: check_boundary(out), boundary_markdown),
                              ("suite", lambda: check_suite(out, set(args.problems.split(",")) if args.problems else None),
                               suite_markdown),
                              ("timing", lambda: timing_quality(out, args.repeats, args.skip_ncu), timing_markdown),
                              ("faults", lambda: fault_batch(out), faults_markdown)):
        if part not in parts:
            continue
        report[part] = result = run()
        md += render(result)
        ok = ok and all(r["ok"] for r in result.get("rows", [])) and result.get("all_written", True)
        (out / "gpu_eval_check.json").write_text(json.dumps(report, indent=2, default=str))
        (out / "gpu_eval_check.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
