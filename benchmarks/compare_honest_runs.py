#!/usr/bin/env python
"""Two runs of the honest suite side by side (the JSON reports of ``gpu_honest_check.py``): how far
the candidates' device times (the profiler's kernel time) and their speedups against the reference
(CUDA events) moved, and which verdicts changed.

    python benchmarks/compare_honest_runs.py A.json B.json [--label-a TEXT] [--label-b TEXT] [--out FILE.md]

A report from git history works as well: ``git show REV:benchmarks/results/X.json > /tmp/a.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def ratio(a: float | None, b: float | None) -> float | None:
    return b / a if a and b else None


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return f"median {statistics.median(values):.3f}, {min(values):.3f} to {max(values):.3f} ({len(values)} candidates)"


def compare(a: dict, b: dict, label_a: str, label_b: str) -> str:
    rows_a = {r["id"]: r for r in a["rows"]}
    rows_b = {r["id"]: r for r in b["rows"]}
    both = sorted(set(rows_a) & set(rows_b))
    device = [x for i in both if (x := ratio(rows_a[i]["device_ms_per_call"], rows_b[i]["device_ms_per_call"]))]
    speed = [x for i in both if (x := ratio(rows_a[i]["speedup"].get("vs_reference"), rows_b[i]["speedup"].get("vs_reference")))]
    changed = [i for i in both if rows_a[i]["verdict"] != rows_b[i]["verdict"]]
    md = [f"# Two honest-suite runs: {label_a} against {label_b}", "",
          f"- A: {a.get('device')}, {a.get('date')}, {a.get('options')}; {a.get('summary')}",
          f"- B: {b.get('device')}, {b.get('date')}, {b.get('options')}; {b.get('summary')}", "",
          f"Device time per call (the profiler's kernel time), B / A: {spread(device)}.", "",
          f"Speedup against the reference (CUDA events), B / A: {spread(speed)}.", "",
          f"Verdicts that changed: {len(changed)} of {len(both)}.", ""]
    if changed:
        md += ["| candidate | verdict A | verdict B | device time A | device time B | vs reference A | vs reference B |",
               "|---|---|---|---|---|---|---|"]
        for i in changed:
            ra, rb = rows_a[i], rows_b[i]
            md.append(f"| {i} | {ra['verdict']} | {rb['verdict']} | {ra['device_ms_per_call'] * 1e3:.1f} us | "
                      f"{rb['device_ms_per_call'] * 1e3:.1f} us | {ra['speedup'].get('vs_reference', 0):.3f}x | "
                      f"{rb['speedup'].get('vs_reference', 0):.3f}x |")
    return "\n".join(md) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    md = compare(json.loads(args.a.read_text()), json.loads(args.b.read_text()), args.label_a, args.label_b)
    if args.out:
        args.out.write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
