#!/usr/bin/env python
"""GPU acceptance check for the structural verdicts of ``kernlint eval`` (issue 22).

    python benchmarks/gpu_structure_check.py [--out benchmarks/results/]

1. the device's attainable ceilings, measured side by side: a 1 GiB device copy (bytes/s), bf16
   and fp32 8192^3 matmuls (FLOP/s), next to the datasheet ceilings kernlint judges with;
2. the structural fixture suite (fixtures/eval/structure) evaluated with timing and the default
   ``--profile`` (one ncu pass per correct candidate): each verdict and reason against
   its snapshot (NAME.expected), the measured numbers behind each flaw, the efficiency;
3. what ``--profile`` costs per candidate: the profile pass's wall time against the candidate's
   whole evaluation, measured in the same run.

Writes OUT/gpu_structure_check.json and OUT/gpu_structure_check.md (date and device in both).
About 10 minutes on an H200 (55-94 s per candidate, 2026-12-01): on machines that limit one command's
length, run it twice, the second time with ``--resume-from`` the first call's records.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from helpers import expected_records  # noqa: E402 - the fixtures' snapshots, as the tests read them
STRUCT = ROOT / "fixtures" / "eval" / "structure"


def measure_ceilings() -> dict:
    import torch

    def timed(fn, reps: int = 10) -> float:
        fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3 / reps

    n = 1 << 28  # 1 GiB of fp32
    x, y = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
    copy_s = timed(lambda: y.copy_(x))
    del x, y
    out = {"copy_bytes_per_s": 2 * 4 * n / copy_s}
    m = 8192
    for name, dtype in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        torch.backends.cuda.matmul.allow_tf32 = False
        a, b = torch.randn(m, m, device="cuda", dtype=dtype), torch.randn(m, m, device="cuda", dtype=dtype)
        out[f"matmul_{name}_flops_per_s"] = 2 * m**3 / timed(lambda: a @ b, reps=5)
        del a, b
    torch.cuda.empty_cache()
    return out


def run_suite(rec_path: Path) -> tuple[dict, float]:
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates, load_problems
    from kernlint.eval.runner import run_batch

    probs = load_problems(STRUCT / "problems")
    cands = load_candidates(STRUCT / "candidates", probs)
    t0 = time.monotonic()
    run_batch(probs, cands, rec_path, EvalOptions(seeds=(0,), shape_variants=(0,), iters=10, compile_baseline=False,
                                                  timeout_s=240))
    wall = time.monotonic() - t0
    return {r["id"]: r for r in map(json.loads, rec_path.read_text().splitlines())}, wall


def check(recs: dict) -> list[dict]:
    expected = expected_records(STRUCT / "candidates")
    rows = []
    for cid, exp in sorted(expected.items()):
        rec = recs.get(cid, {})
        s = rec.get("structure") or {}
        prof = s.get("profile") or {}
        want = exp["gpu"]
        reasons_ok = all(any(r.startswith(w) for r in rec.get("reasons", [])) for w in want["reasons"])
        rows.append({
            "id": cid, "verdict": rec.get("verdict"), "expected": want["verdict"],
            "ok": rec.get("verdict") == want["verdict"] and reasons_ok,
            "reasons": rec.get("reasons", []), "flaws": s.get("flaws", []),
            "efficiency": (s.get("roofline") or {}).get("efficiency"),
            "roofline": s.get("roofline"), "profile_kernels": prof.get("kernels"),
            "profile_error": prof.get("error"), "profile_wall_s": prof.get("wall_s"),
            "candidate_wall_s": rec.get("wall_s"), "error": rec.get("error"),
        })
    return rows


def to_markdown(result: dict) -> str:
    c = result["ceilings_measured"]
    lines = [f"# Structural verdicts on the GPU ({result['date']}, {result['device']})", "",
             f"Software: {result['software']}", "",
             "## Ceilings", "",
             "| ceiling | measured here | kernlint's attainable | datasheet |", "|---|---|---|---|",
             f"| copy bandwidth | {c['copy_bytes_per_s'] / 1e12:.2f} TB/s | {result['ceilings']['bandwidth'] / 1e12:.2f} TB/s "
             f"| {result['ceilings']['bandwidth_spec'] / 1e12:.2f} TB/s |",
             f"| bf16 matmul | {c['matmul_bf16_flops_per_s'] / 1e12:.0f} TFLOP/s | {result['ceilings']['half'] / 1e12:.0f} "
             f"| {result['ceilings']['half_spec'] / 1e12:.0f} |",
             f"| fp32 matmul (no TF32) | {c['matmul_fp32_flops_per_s'] / 1e12:.1f} TFLOP/s | {result['ceilings']['fp32'] / 1e12:.0f} "
             f"| {result['ceilings']['fp32_spec'] / 1e12:.0f} |", "",
             f"## Verdicts ({sum(r['ok'] for r in result['rows'])}/{len(result['rows'])} as expected)", "",
             "| candidate | verdict | expected | efficiency | flaws (measured) | --profile s | candidate s |",
             "|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        flaws = "; ".join(f"{f['kind']}: {f['reason']}" for f in r["flaws"]) or "-"
        eff = "-" if r["efficiency"] is None else f"{r['efficiency']:.0%}"
        lines.append(f"| {r['id']} | {r['verdict']} | {r['expected']}{'' if r['ok'] else ' **MISMATCH**'} | {eff} "
                     f"| {flaws} | {r['profile_wall_s'] or '-'} | {r['candidate_wall_s']} |")
    cost = result["profile_cost"]
    lines += ["", "## Cost of --profile", "",
              f"Mean per profiled candidate: {cost['mean_profile_s']:.1f} s of {cost['mean_candidate_s']:.1f} s "
              f"({cost['share']:.0%} of the evaluation; throughput x{cost['throughput_ratio']:.2f} of an evaluation "
              "without it). Wall time of the candidates evaluated in this run: " + f"{result['suite_wall_s']:.0f} s.", ""]
    errors = [r for r in result["rows"] if r["profile_error"]]
    if errors:
        lines += ["Profile errors:", ""] + [f"- {r['id']}: {r['profile_error']}" for r in errors]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--resume-from", help="an earlier (cut off) run's gpu_structure_records.jsonl: evaluate only "
                                          "the candidates it lacks (records are written as each one finishes)")
    args = ap.parse_args()
    import torch
    import triton

    from kernlint.dynamic.ncu import find_ncu
    from kernlint.eval.roofline import ceilings_for

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    if not find_ncu():
        print("needs ncu on PATH (the --profile pass)", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device = torch.cuda.get_device_name()
    measured = measure_ceilings()
    rec_path = out / "gpu_structure_records.jsonl"
    if args.resume_from and Path(args.resume_from).resolve() != rec_path.resolve():
        shutil.copy(args.resume_from, rec_path)
    elif not args.resume_from and rec_path.exists():
        rec_path.unlink()
    recs, wall = run_suite(rec_path)
    rows = check(recs)
    profiled = [r for r in rows if r["profile_wall_s"]]
    mean_p = sum(r["profile_wall_s"] for r in profiled) / len(profiled) if profiled else 0.0
    mean_c = sum(r["candidate_wall_s"] for r in profiled) / len(profiled) if profiled else 0.0
    ceilings = ceilings_for(device)
    result = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "device": device,
        "software": {"torch": torch.__version__, "triton": triton.__version__},
        "ceilings_measured": measured, "ceilings": ceilings.to_dict() if ceilings else {},
        "rows": rows, "suite_wall_s": wall,
        "profile_cost": {"mean_profile_s": mean_p, "mean_candidate_s": mean_c,
                         "share": mean_p / mean_c if mean_c else 0.0,
                         "throughput_ratio": (mean_c - mean_p) / mean_c if mean_c else 1.0},
    }
    (out / "gpu_structure_check.json").write_text(json.dumps(result, indent=2, default=str))
    (out / "gpu_structure_check.md").write_text(to_markdown(result))
    print(to_markdown(result))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
