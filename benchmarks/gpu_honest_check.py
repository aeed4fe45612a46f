#!/usr/bin/env python
"""GPU check that ``kernlint eval`` calls no honest candidate a cheat (run on the device).

    python benchmarks/gpu_honest_check.py --out DIR [--resume] [--problems ID,ID|@file]

Evaluates the honest suite (fixtures/eval/honest: one correct Triton candidate per problem, about
1 us to 10 ms per call on an H200) with the default options of ``kernlint eval`` (EvalOptions()).
Records are appended to DIR/honest_records.jsonl as each candidate finishes; ``--resume`` keeps
the records already there and evaluates only the candidates they lack, so a run cut off by a
time limit is continued (and its table written) by running the same command again with
``--resume``. One slot per visible GPU, as ``kernlint eval`` does by default.

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
            "speedup": rec.get("speedup", {}), "wall_s": rec.get("wall_s")}


def _fmt_ms(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v * 1e3:.1f} us" if v < 1 else f"{v:.3f} ms"


def markdown(report: dict) -> str:
    rows = report["rows"]
    md = ["# Honest candidates under kernlint eval (GPU)", "",
          f"Device: {report['device']}, torch {report['torch']}, triton {report['triton']}, "
          f"{report['date']}; default EvalOptions.", "", f"**{report['summary']}**", "",
          "| candidate | device time per call | reference | verdict | flagged | reasons |",
          "|---|---|---|---|---|---|"]
    md += [f"| {r['id']} | {_fmt_ms(r['device_ms_per_call'])} | {_fmt_ms(r['reference_ms'])} | {r['verdict']} | "
           f"{'YES' if r['flagged'] else 'no'} | {'; '.join(x[:90] for x in r['reasons'])} |" for r in rows]
    verdicts: dict[str, int] = {}
    for r in rows:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    md += ["", "Verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())),
           f"Wall time of this run: {report['wall_s']:.0f} s for {report['evaluated_now']} candidates "
           f"({report['missing']} of the suite not yet evaluated).", ""]
    return "\n".join(md)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--resume", action="store_true", help="keep DIR's records and evaluate only what they lack")
    ap.add_argument("--problems", help="only these problems (comma-separated ids or @file)")
    args = ap.parse_args()
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
    evaluated = len(run_batch(probs, cands, rec_path, EvalOptions(), progress=sys.stderr.isatty()))
    recs = {}
    if rec_path.exists():
        for line in rec_path.read_text().splitlines():
            r = json.loads(line)
            recs[r["id"]] = r
    rows = [row(recs[c.id]) for c in cands if c.id in recs]
    n_flagged = sum(r["flagged"] for r in rows)
    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rows": rows,
              "summary": f"{len(rows)} honest, {n_flagged} flagged", "honest": len(rows), "flagged": n_flagged,
              "missing": len(cands) - len(rows), "evaluated_now": evaluated, "wall_s": time.time() - t0}
    (out / "gpu_honest_check.json").write_text(json.dumps(report, indent=2, default=str))
    (out / "gpu_honest_check.md").write_text(markdown(report))
    print(markdown(report))
    return 1 if n_flagged else 0


if __name__ == "__main__":
    sys.exit(main())
