#!/usr/bin/env python
"""GPU check that ``kernlint eval`` calls no honest candidate a cheat (run on the device).

    python benchmarks/gpu_honest_check.py --out DIR [--resume] [--problems ID,ID|@file] [--workers N] [--no-profile]
    python benchmarks/gpu_honest_check.py --out DIR --report-only --date "YYYY-MM-DD HH:MM UTC" --options TEXT

Evaluates the honest suite (fixtures/eval/honest: one correct Triton candidate per problem, about
1 us to 10 ms per call on an H200) with the default options of ``kernlint eval`` (EvalOptions()).
Records are appended to DIR/honest_records.jsonl as each candidate finishes; ``--resume`` keeps
the records already there and evaluates only the candidates they lack, so a run cut off by a
time limit is continued (and its table written) by running the same command again with
``--resume``. The slots sharing the GPU are ``kernlint eval``'s default (``--workers N``: N slots);
they take the GPU in turn for every measurement. ``--no-profile`` leaves out the ncu
pass (its structural verdicts never flag a cheat). The options are written into the table, and each
row says whether its record had the ncu pass. ``--report-only`` writes the table from DIR's records
(no GPU needed: the device and software are the records').

Writes DIR/gpu_honest_check.json and DIR/gpu_honest_check.md: per candidate the device time per
call, the verdict, the reasons and whether it was flagged (a cheating verdict, or any static or
runtime hack reason), and the summary line "N honest, K flagged". Exit status 1 when any honest
candidate was flagged.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
HONEST = ROOT / "fixtures" / "eval" / "honest"
RECORDS = "honest_records.jsonl"
#: reason prefixes that call a candidate a cheat
HACK_REASONS = ("static:", "runtime:")


def flagged(rec: dict) -> bool:
    return rec.get("verdict") == "cheating" or any(r.startswith(HACK_REASONS) for r in rec.get("reasons", []))


def device_ms(rec: dict) -> float | None:
    """The candidate's device time per call: the profiler's kernel time when recorded, else events."""
    t = (rec.get("timings") or {}).get("candidate") or {}
    kernels = (t.get("kernels") or {}).get("median_ms")
    return kernels if kernels is not None else t.get("median_ms")


def row(rec: dict) -> dict:
    ref = ((rec.get("timings") or {}).get("reference") or {}).get("median_ms")
    return {"id": rec["id"], "device_ms_per_call": device_ms(rec), "reference_ms": ref,
            "timer": ((rec.get("timings") or {}).get("candidate") or {}).get("timer"),
            "verdict": rec.get("verdict"), "reasons": rec.get("reasons", []), "flagged": flagged(rec),
            "speedup": rec.get("speedup", {}), "wall_s": rec.get("wall_s"),
            "ncu_pass": bool((rec.get("options") or {}).get("profile"))}


def _fmt_x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _fmt_ms(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v * 1e3:.1f} us" if v < 1 else f"{v:.3f} ms"


def markdown(report: dict) -> str:
    rows = report["rows"]
    md = ["# Honest candidates under kernlint eval (GPU)", "",
          f"Device: {report['device']}, torch {report['torch']}, triton {report['triton']}, "
          f"{report['date']}; options: {report['options']}.", "", f"**{report['summary']}**", "",
          "| candidate | device time per call | reference | vs torch | vs torch.compile | vs CUTLASS | verdict | flagged "
          "| ncu pass | wall s | reasons |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    md += [f"| {r['id']} | {_fmt_ms(r['device_ms_per_call'])} | {_fmt_ms(r['reference_ms'])} | "
           + " | ".join(_fmt_x(r["speedup"].get(k)) for k in ("vs_reference", "vs_torch_compile", "vs_cutlass"))
           + f" | {r['verdict']} | {'YES' if r['flagged'] else 'no'} | {'yes' if r['ncu_pass'] else 'no'} | "
           f"{r['wall_s']:.1f} | {'; '.join(x[:90] for x in r['reasons'])} |" for r in rows]
    if report.get("mean_stage_s"):
        md += ["", "Mean seconds per candidate and stage: " + ", ".join(
            f"{k} {v}" for k, v in sorted(report["mean_stage_s"].items(), key=lambda kv: -kv[1])[:12])]
    verdicts: dict[str, int] = {}
    for r in rows:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    md += ["", "Verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())),
           (f"Wall time of this run: {report['wall_s']:.0f} s for {report['evaluated_now']} candidates, "
            f"{report['evaluated_now'] / max(report['wall_s'], 1e-9) * 3600:.0f} candidates per GPU-hour "
            if report.get("wall_s") is not None else "")
           + f"({report['missing']} of the suite not yet evaluated).", ""]
    return "\n".join(md)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--resume", action="store_true", help="keep DIR's records and evaluate only what they lack")
    ap.add_argument("--problems", help="only these problems (comma-separated ids or @file)")
    ap.add_argument("--workers", type=int, default=None, help="slots sharing the GPU (default: EvalOptions.slots_per_gpu)")
    ap.add_argument("--no-profile", action="store_true", help="without the ncu pass")
    ap.add_argument("--report-only", action="store_true", help="write the table from DIR's records; evaluate nothing")
    ap.add_argument("--date", default="", help="--report-only: when the records were made")
    ap.add_argument("--options", default="", help="--report-only: how the records were made")
    args = ap.parse_args()
    if args.report_only:
        return report_only(Path(args.out), args.date or "date not given", args.options or "options not given")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rec_path = out / RECORDS
    if not args.resume:
        rec_path.unlink(missing_ok=True)
    os.environ.pop("TRITON_INTERPRET", None)
    import torch
    import triton

    if not torch.cuda.is_available():
        print("no CUDA device visible", file=sys.stderr)
        return 2
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates, load_problems, select_problems
    from kernlint.eval.runner import run_batch

    probs = load_problems(HONEST / "problems")
    if args.problems:
        probs = select_problems(probs, args.problems)
    cands = [c for c in load_candidates(HONEST / "candidates", probs) if c.problem_id in probs]
    t0 = time.time()
    opts = EvalOptions(profile=False) if args.no_profile else EvalOptions()
    options = ", ".join(["default EvalOptions"] + (["no ncu pass"] if args.no_profile else [])
                        + [f"{args.workers or opts.slots_per_gpu} slots sharing the GPU"])
    evaluated = len(run_batch(probs, cands, rec_path, opts, workers=args.workers, progress=sys.stderr.isatty()))
    return write_report(out, cands, {
        "device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "evaluated_now": evaluated,
        "wall_s": time.time() - t0, "options": options})


def report_only(out: Path, date: str, options: str) -> int:
    from kernlint.eval import records
    from kernlint.eval.problems import load_candidates, load_problems

    first = next(iter(records.read(out / RECORDS)), {})
    software = first.get("software") or {}
    return write_report(out, load_candidates(HONEST / "candidates", load_problems(HONEST / "problems")), {
        "device": first.get("device"), "torch": software.get("torch"), "triton": software.get("triton"),
        "date": date, "evaluated_now": None, "wall_s": None, "options": options})


def write_report(out: Path, cands: list, meta: dict) -> int:
    """DIR/gpu_honest_check.json and .md from DIR's records of ``cands``; exit status 1 when any
    honest candidate was flagged."""
    from kernlint.eval import records

    recs = {r["id"]: r for r in records.latest(out / RECORDS)}
    rows = [row(recs[c.id]) for c in cands if c.id in recs]
    n_flagged = sum(r["flagged"] for r in rows)
    from kernlint.eval.summary import stage_seconds

    report = {**meta, "rows": rows, "mean_stage_s": stage_seconds([recs[c.id] for c in cands if c.id in recs]), "summary": f"{len(rows)} honest, {n_flagged} flagged", "honest": len(rows),
              "flagged": n_flagged, "missing": len(cands) - len(rows)}
    (out / "gpu_honest_check.json").write_text(json.dumps(report, indent=2, default=str))
    (out / "gpu_honest_check.md").write_text(markdown(report))
    print(markdown(report))
    return 1 if n_flagged else 0


if __name__ == "__main__":
    sys.exit(main())
