"""Source phase vs the bare libcst parse of the same files (a ratio, measured in one run).

Usage: python benchmarks/source_bench.py [--corpus PATH] [--tree DIR] [--repeat N] [--by-rule] [--out FILE]

Runs on the 184 TritonBench-G reference modules (the ``output`` field of TritonBench_G_v1.json),
or with ``--tree`` on every ``.py`` file under a directory (e.g. ``../shared/corpora/fla``).
Each repeat times, file by file, the bare parse and the full source phase (parse + discovery +
interpretation + every source rule + locating findings); the median of the per-repeat ratios is
reported with files/s and kernels/s. ``--by-rule`` adds one more pass that times each rule's
``check`` (the first rule to ask the engine pays for evaluating the kernel), to say where the time goes.
"""

from __future__ import annotations

import argparse
import gc
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
from kernlint.engine import query  # noqa: E402
from kernlint.source.phase import lint_text  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "tritonbench")
    parser.add_argument("--tree", type=Path, default=None, help="every .py file under this directory instead")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--by-rule", action="store_true", help="one more pass, timing each rule")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.tree is not None:
        sources = [p.read_text(errors="replace") for p in sorted(args.tree.rglob("*.py"))]
        label = f"{len(sources)} modules under {args.tree.name}/"
    else:
        tasks = json.loads((args.corpus / "TritonBench_G_v1.json").read_text())
        sources = [t["output"] for t in tasks]
        label = f"{len(sources)} TritonBench-G reference modules"
    lines = sum(s.count("\n") + 1 for s in sources)
    rules = [r() for r in catalogue.all_rules().values() if r.phase is Phase.SOURCE]

    # Interleaved file by file (parse, then the source phase, of the same file) so that drifts in the
    # machine's speed hit both sides alike; the ratio is taken per repeat, then the median.
    parse_times, phase_times, ratios = [], [], []
    kernels = findings = 0
    for _ in range(args.repeat):
        query.clear_cache()  # each repeat solves cold, as one run of `kernlint check` does
        parse_total = phase_total = 0.0
        kernels = findings = 0
        for i, s in enumerate(sources):
            # the source phase pauses the cycle collector while it lints a file: so does the bare parse
            gc.disable()
            t0 = time.perf_counter()
            cst.parse_module(s)
            t1 = time.perf_counter()
            gc.enable()
            result, _ = lint_text(f"tb{i:03d}.py", s, rules)
            t2 = time.perf_counter()
            parse_total += t1 - t0
            phase_total += t2 - t1
            kernels += len(result.kernels)
            findings += len(result.findings)
        parse_times.append(parse_total)
        phase_times.append(phase_total)
        ratios.append(phase_total / parse_total)

    parse_s, phase_s = statistics.median(parse_times), statistics.median(phase_times)
    ratio = statistics.median(ratios)
    report = f"""# Source phase vs bare libcst parse

- date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}
- kernlint {__version__}, libcst {importlib.metadata.version('libcst')}, Python {platform.python_version()}, {platform.machine()}
- corpus: {label}, {lines} lines, {kernels} kernels; {len(rules)} source rules, {findings} findings
- repeats: {args.repeat}, interleaved file by file; ratio = median of the per-repeat ratios
  (all: {", ".join(f"{r:.2f}" for r in sorted(ratios))})

| measure | value |
| --- | --- |
| bare `libcst.parse_module` | {parse_s:.3f} s |
| source phase (parse + discovery + dataflow + rules) | {phase_s:.3f} s |
| **ratio source phase / bare parse** | **{ratio:.2f}x** |
| files/s (source phase) | {len(sources) / phase_s:.1f} |
| kernels/s (source phase) | {kernels / phase_s:.1f} |
| lines/s (source phase) | {lines / phase_s:.0f} |
"""
    if args.by_rule:
        report += _by_rule(sources, rules, phase_s)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)


def _by_rule(sources: list[str], rules: list, phase_s: float) -> str:
    """One more pass with each rule's ``check`` timed: the seconds each rule's checks take, and the
    rest of the phase (parse, discovery, what no rule's check pays for)."""
    spent = dict.fromkeys((r.code for r in rules), 0.0)

    def timed(rule, check):
        def run(state):
            t = time.perf_counter()
            try:
                return list(check(state))
            finally:
                spent[rule.code] += time.perf_counter() - t
        return run

    originals = [(rule, rule.check) for rule in rules]
    for rule, check in originals:
        rule.check = timed(rule, check)
    query.clear_cache()
    t0 = time.perf_counter()
    try:
        for i, s in enumerate(sources):
            lint_text(f"tb{i:03d}.py", s, rules)
    finally:
        for rule, check in originals:
            rule.check = check
    total = time.perf_counter() - t0
    rows = "\n".join(f"| {code} | {t:.2f} s | {t / total:.0%} |" for code, t in
                     sorted(spent.items(), key=lambda kv: -kv[1]) if t >= 0.005)
    rest = total - sum(spent.values())
    return f"""
## Where the time goes (one more pass, {total:.2f} s; the median pass above took {phase_s:.2f} s)

| rule | seconds in its checks | share |
| --- | --- | --- |
{rows}
| parse, discovery and the rest | {rest:.2f} s | {rest / total:.0%} |
"""


if __name__ == "__main__":
    main()
