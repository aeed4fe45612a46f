"""Run the IR phase over the TritonBench-G reference modules and count what compiled.

    python benchmarks/ir_tritonbench.py [CORPUS_JSON] [-o benchmarks/results/ir_tritonbench.md]

Each module's ``output`` field is written to its own file in a temporary folder; the phase runs
over all of them once (cold, private cache), and the report gives kernels, specializations,
compiled/failed counts, the failure stages and messages grouped, findings per rule and the time.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "ir"))
import conftest  # noqa: E402,F401  - maps kernlint.rules in a plain checkout

from kernlint.ir.phase import run_ir_phase  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "tritonbench" / "TritonBench_G_v1.json"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default=str(DEFAULT_CORPUS))
    ap.add_argument("-o", "--output", default=str(ROOT / "benchmarks" / "results" / "ir_tritonbench.md"))
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--jobs", type=int, default=0)
    args = ap.parse_args()
    entries = json.loads(Path(args.corpus).read_text())
    tmp = Path(tempfile.mkdtemp(prefix="kernlint-tb-"))
    paths = []
    for i, e in enumerate(entries):
        name = re.sub(r"[^A-Za-z0-9_]", "_", Path(e.get("file", f"m{i}")).stem)
        p = tmp / f"tb{i:03d}_{name}.py"
        p.write_text(e["output"])
        paths.append(str(p))
    stats: dict = {}
    t0 = time.perf_counter()
    findings = run_ir_phase(paths, arch=args.arch, cache_dir=tmp / "cache", jobs=args.jobs, stats=stats)
    wall = time.perf_counter() - t0
    per_rule = collections.Counter(f.rule for f in findings)
    failures = [f for f in findings if f.rule == "KL300"]
    reasons = collections.Counter()
    for f in failures:
        stage = f.evidence.get("stage", "compile")
        msg = f.message.split(": ", 1)[-1]
        msg = re.sub(r"\d+", "N", msg)[:90]
        reasons[(stage, msg)] += 1
    files_with_kernels = len({f.path for f in findings} | set())
    lines = [
        f"# IR phase over TritonBench-G ({len(entries)} reference modules)",
        "",
        f"- target: {args.arch}; jobs: {args.jobs or os.cpu_count()}; wall time: {wall:.1f} s",
        f"- kernels: {stats.get('kernels')}; specializations compiled: {stats.get('compiled')}; "
        f"failed: {stats.get('failed')} "
        f"({stats.get('compiled', 0) - stats.get('failed', 0)} compiled)",
        "",
        "## Findings per rule",
        "",
        "| rule | findings |",
        "|---|---|",
        *[f"| {r} | {n} |" for r, n in sorted(per_rule.items())],
        "",
        "## Why specializations did not compile (KL300, grouped)",
        "",
        "| stage | message (numbers as N) | count |",
        "|---|---|---|",
        *[f"| {s} | {m.replace('|', '/')} | {n} |" for (s, m), n in reasons.most_common()],
        "",
    ]
    del files_with_kernels
    Path(args.output).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
