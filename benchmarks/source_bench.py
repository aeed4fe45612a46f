"""Source phase vs the bare libcst parse of the same files (a ratio, measured in one run).

Usage: python benchmarks/source_bench.py [--corpus PATH] [--repeat N] [--out FILE]

Runs on the 184 TritonBench-G reference modules (the ``output`` field of TritonBench_G_v1.json).
Each repeat times the bare parse and the full source phase (parse + discovery + interpretation +
every source rule) back to back; the ratio of the medians is reported with files/s and kernels/s.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import libcst as cst

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernlint import __version__, catalogue  # noqa: E402
from kernlint.model import Phase  # noqa: E402
from kernlint.source.phase import lint_text  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "tritonbench")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    tasks = json.loads((args.corpus / "TritonBench_G_v1.json").read_text())
    sources = [t["output"] for t in tasks]
    lines = sum(s.count("\n") + 1 for s in sources)
    rules = [r() for r in catalogue.all_rules().values() if r.phase is Phase.SOURCE]

    parse_times, phase_times = [], []
    kernels = findings = 0
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for s in sources:
            cst.parse_module(s)
        parse_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        kernels = findings = 0
        for i, s in enumerate(sources):
            result, _ = lint_text(f"tb{i:03d}.py", s, rules)
            kernels += len(result.kernels)
            findings += len(result.findings)
        phase_times.append(time.perf_counter() - t0)

    parse_s, phase_s = statistics.median(parse_times), statistics.median(phase_times)
    ratio = phase_s / parse_s
    report = f"""# Source phase vs bare libcst parse

- date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}
- kernlint {__version__}, libcst {importlib.metadata.version('libcst')}, Python {platform.python_version()}, {platform.machine()}
- corpus: {len(sources)} TritonBench-G reference modules, {lines} lines, {kernels} kernels; {len(rules)} source rules, {findings} findings
- repeats: {args.repeat} (medians)

| measure | value |
| --- | --- |
| bare `libcst.parse_module` | {parse_s:.3f} s |
| source phase (parse + discovery + dataflow + rules) | {phase_s:.3f} s |
| **ratio source phase / bare parse** | **{ratio:.2f}x** |
| files/s (source phase) | {len(sources) / phase_s:.1f} |
| kernels/s (source phase) | {kernels / phase_s:.1f} |
| lines/s (source phase) | {lines / phase_s:.0f} |
"""
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)


if __name__ == "__main__":
    main()
