#!/usr/bin/env python
"""Candidates per hour of ``kernlint eval`` on the fixture batch, this tree against another one,
side by side in one run (alternating, so both see the same machine load).

    git archive <commit> kernlint rules | tar -x -C /tmp/before
    python benchmarks/eval_throughput.py --baseline-src /tmp/before --baseline-label <commit> [--rounds 1] [--timing]

Run it with an interpreter that has no editable install of kernlint (an editable install maps
``kernlint.rules`` to its own checkout whatever PYTHONPATH says). Each run evaluates every candidate under fixtures/eval/candidates (of this tree, for both
implementations) with seeds 0 and 1, two shape variants, ``--workers`` workers, and ``--no-timing``
unless ``--timing`` is given (then the CPU timing, FLOP count and structure stages run as well: the
reference's values are measured once per problem). Records of each run: OUT/eval_throughput_<run>.jsonl.
Writes OUT/eval_throughput.md and .json (default OUT: benchmarks/results).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from kernlint.eval.summary import stage_seconds  # noqa: E402
FIX = ROOT / "fixtures" / "eval"

RUN = """
import json, sys, time
from kernlint.eval.api import EvalOptions
from kernlint.eval.problems import load_candidates, load_problems
from kernlint.eval.runner import run_batch
probs = load_problems(sys.argv[1])
cands = load_candidates(sys.argv[2], probs)
t0 = time.time()
run_batch(probs, cands, sys.argv[3], EvalOptions(seeds=(0, 1), timeout_s=300, timing=sys.argv[5] == "1"),
          workers=int(sys.argv[4]))
print(json.dumps({"n": len(cands), "wall_s": time.time() - t0}))
"""


def run_once(src: Path, workers: int, timing: bool, records_path: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(src)}
        out = subprocess.run([sys.executable, "-c", RUN, str(FIX / "problems"), str(FIX / "candidates"),
                              str(Path(tmp) / "r.jsonl"), str(workers), "1" if timing else "0"], env=env, cwd=tmp,
                             capture_output=True, text=True, check=True)
        text = (Path(tmp) / "r.jsonl").read_text()
        records_path.write_text(text)
        recs = [json.loads(x) for x in text.splitlines()]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["verdicts"] = {r["id"]: r["verdict"] for r in recs}
    res["per_hour"] = res["n"] / res["wall_s"] * 3600
    res["mean_stage_s"] = stage_seconds(recs)
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline-src", required=True, type=Path, help="a tree holding the kernlint package to compare with")
    ap.add_argument("--baseline-label", default="baseline")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timing", action="store_true", help="evaluate with timing (default: --no-timing)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[dict]] = {"baseline": [], "this": []}
    for _ in range(args.rounds):
        for name, src in (("baseline", args.baseline_src.resolve()), ("this", ROOT)):
            runs[name].append(run_once(src, args.workers, args.timing, args.out / f"eval_throughput_{name}.jsonl"))
    rate = {k: statistics.median(r["per_hour"] for r in v) for k, v in runs.items()}
    changed = {cid: (runs["baseline"][0]["verdicts"].get(cid), v) for cid, v in runs["this"][0]["verdicts"].items()
               if runs["baseline"][0]["verdicts"].get(cid) != v}
    report = {"date": time.strftime("%Y-%m-%d"), "host": platform.machine(), "cpus": os.cpu_count(),
              "workers": args.workers, "timing": args.timing, "rounds": args.rounds, "baseline": args.baseline_label,
              "candidates": runs["this"][0]["n"], "per_hour": rate, "ratio_this_to_baseline": rate["this"] / rate["baseline"],
              "wall_s": {k: [round(r["wall_s"], 1) for r in v] for k, v in runs.items()}, "verdicts_changed": changed,
              "mean_stage_s": {k: v[0]["mean_stage_s"] for k, v in runs.items()}}
    (args.out / "eval_throughput.json").write_text(json.dumps(report, indent=2))
    md = [f"# kernlint eval throughput, CPU ({report['date']})", "",
          f"{report['candidates']} fixture candidates, {'timing on' if args.timing else '`--no-timing`'}, seeds 0,1, two shape variants, "
          f"{args.workers} workers on {report['cpus']} CPUs (shared), {args.rounds} round(s), alternating.", "",
          "| implementation | wall (s) | candidates per hour |", "|---|---|---|",
          f"| before ({args.baseline_label}) | {report['wall_s']['baseline']} | {rate['baseline']:.0f} |",
          f"| this tree | {report['wall_s']['this']} | {rate['this']:.0f} |", "",
          f"Ratio this/before: **{report['ratio_this_to_baseline']:.2f}**", "",
          "Verdicts that differ (before -> this):", ""]
    md += [f"- `{cid}`: {a} -> {b}" for cid, (a, b) in sorted(changed.items())] or ["- none"]
    stages = report["mean_stage_s"]
    md += ["", "Mean seconds per candidate and stage (first round):", "", "| stage | before | this tree |", "|---|---|---|"]
    md += [f"| {k} | {stages['baseline'].get(k, '-')} | {stages['this'].get(k, '-')} |"
           for k in dict.fromkeys([*stages["baseline"], *stages["this"]])]
    (args.out / "eval_throughput.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
