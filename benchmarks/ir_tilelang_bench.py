"""IR phase cost for TileLang kernels: cold (lower + nvcc + ptxas in workers) and warm (cache).

    python benchmarks/ir_tilelang_bench.py [PATHS...] [-o benchmarks/results/ir_tilelang.md]

Default corpus: the TileLang kernels of ``fixtures/tilelang`` and ``fixtures/ir/tilelang_*``.
Cold runs the phase with an empty cache and one worker per core; warm runs it again. The stage
times (``tilelang.lower`` in a CUDA target context, nvcc to PTX, ptxas -v) come from each lowered
kernel's record, and the line-mapping counts say how the generated CUDA lines were mapped back.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "ir"))
import conftest  # noqa: E402,F401  - maps kernlint.rules in a plain checkout

from kernlint.ir.phase import run_ir_phase  # noqa: E402
from kernlint.ir.tilelang import nvcc_path, tilelang_available, toolchain_version  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*")
    ap.add_argument("-o", "--output", default=str(ROOT / "benchmarks" / "results" / "ir_tilelang.md"))
    ap.add_argument("--jobs", type=int, default=0)
    args = ap.parse_args()
    if not tilelang_available() or nvcc_path() is None:
        sys.exit("needs the tilelang extra and nvcc")
    paths = args.paths or [str(ROOT / "fixtures" / "tilelang")] + sorted(
        str(p) for p in (ROOT / "fixtures" / "ir").glob("tilelang_*.py"))
    cache = Path(tempfile.mkdtemp(prefix="kernlint-tl-bench-"))
    cold_stats: dict = {}
    t0 = time.perf_counter()
    findings = run_ir_phase(paths, cache_dir=cache, jobs=args.jobs, stats=cold_stats)
    cold = time.perf_counter() - t0
    warm_stats: dict = {}
    t0 = time.perf_counter()
    run_ir_phase(paths, cache_dir=cache, jobs=args.jobs, stats=warm_stats)
    warm = time.perf_counter() - t0
    stages: dict[str, list[float]] = {"lower": [], "nvcc": [], "ptxas": [], "total": []}
    mapping = {"direct": 0, "op": 0, "def": 0, "unmapped": 0}
    for f in cache.rglob("*.artifact.json.gz"):
        rec = json.loads(gzip.open(f, "rt").read())
        md = rec.get("metadata") or {}
        if not rec.get("ok") or md.get("frontend") != "tilelang":
            continue
        for k in ("lower", "nvcc", "ptxas"):
            stages[k].append(md["seconds"][k])
        stages["total"].append(rec.get("compile_seconds", 0.0))
        for k, v in md.get("line_mapping", {}).items():
            mapping[k] = mapping.get(k, 0) + v
    n = len(stages["total"])
    rules: dict[str, int] = {}
    for f in findings:
        rules[f.rule] = rules.get(f.rule, 0) + 1

    def row(name: str) -> str:
        v = stages[name]
        return f"| {name} | {statistics.median(v):.2f} | {min(v):.2f} | {max(v):.2f} |" if v else f"| {name} | - | - | - |"

    mapped = sum(mapping.values()) or 1
    lines = [
        "# IR phase on TileLang kernels",
        "",
        f"- corpus: {', '.join(os.path.relpath(p, ROOT) for p in paths)}",
        f"- {toolchain_version()}; target sm_90; jobs {args.jobs or os.cpu_count()} on {os.cpu_count()} cores "
        "(a machine shared with other jobs: ratios are more telling than seconds)",
        f"- kernels lowered: {cold_stats.get('tilelang_kernels')}; specializations: "
        f"{cold_stats.get('specializations')}; failed: {cold_stats.get('failed')}",
        f"- cold (empty cache): {cold:.1f} s; warm (cache filled): {warm:.2f} s (cold/warm = {cold / max(warm, 1e-9):.0f}x)",
        f"- findings: {', '.join(f'{k} {v}' for k, v in sorted(rules.items())) or 'none'}",
        "",
        "Seconds per lowered kernel, inside a worker (the first kernel of each worker also pays for",
        "importing TileLang, about 2-4 s, counted in total only):",
        "",
        "| stage | median | min | max |",
        "|---|---|---|---|",
        row("lower"), row("nvcc"), row("ptxas"), row("total"),
        "",
        f"Generated CUDA lines mapped back ({n} kernels): {mapping['direct']} ({100 * mapping['direct'] / mapped:.0f}%) "
        f"to the user's own statement, {mapping['op']} ({100 * mapping['op'] / mapped:.0f}%) from TileLang's macro "
        f"code to the user's tile op of that kind, {mapping['def']} ({100 * mapping['def'] / mapped:.0f}%) to the "
        f"kernel's def line, {mapping['unmapped']} before any directive (the kernel's signature).",
        "",
    ]
    Path(args.output).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
