"""Source-phase throughput on generated modules of growing size (is `check` linear in file size?).

Usage: python benchmarks/scale_bench.py [--sizes 1000,5000,20000] [--repeat 3] [--out DIR]

Each module repeats one unit (a masked kernel, an unmasked one and a wrapper that launches both
with block sizes bound by tuple unpacking) until it has the number of lines asked for; every
size is linted with every source rule in the same run, interleaved, and the median lines/s per
size is reported with the ratio of the fastest to the slowest size (1.0: perfectly linear).
Writes ``scale_bench.md`` and ``scale_bench.json`` into ``--out`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernlint import __version__, catalogue  # noqa: E402
from kernlint.model import Phase  # noqa: E402
from kernlint.source.phase import lint_text  # noqa: E402

HEADER = "import torch\nimport triton\nimport triton.language as tl\n\n"
UNIT = '''

@triton.jit
def add_{i}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2, mask=mask)


@triton.jit
def copy_{i}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def launch_{i}(x):
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK, WARPS = 1024, 4
    add_{i}[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=WARPS)
    copy_{i}[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
    return y
'''


def module(lines: int) -> str:
    parts, count, i = [HEADER], HEADER.count("\n"), 0
    while count < lines:
        unit = UNIT.format(i=i)
        parts.append(unit)
        count += unit.count("\n")
        i += 1
    return "".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args()
    rules = [r() for r in catalogue.all_rules().values() if r.phase is Phase.SOURCE]
    texts = {int(s): module(int(s)) for s in args.sizes.split(",")}
    rates: dict[int, list[float]] = {n: [] for n in texts}
    findings: dict[int, int] = {}
    for _ in range(args.repeat):
        for n, text in texts.items():
            t0 = time.perf_counter()
            result, _ = lint_text(f"gen{n}.py", text, rules)
            elapsed = time.perf_counter() - t0
            rates[n].append(text.count("\n") / elapsed)
            findings[n] = len(result.findings)
    median = {n: statistics.median(r) for n, r in rates.items()}
    ratio = max(median.values()) / min(median.values())
    rows = "\n".join(f"| {texts[n].count(chr(10))} | {findings[n]} | {median[n]:.0f} |" for n in texts)
    report = f"""# Source phase: lines per second by file size

- date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPU cores, no GPU needed
- kernlint {__version__}, Python {platform.python_version()}, {platform.machine()}; {len(rules)} source rules
- generated modules (`benchmarks/scale_bench.py`), {args.repeat} interleaved repeats, median lines/s

| lines | findings | lines/s |
| --- | --- | --- |
{rows}

**fastest / slowest size: {ratio:.2f}x** (1.0 is linear; the acceptance bound is 1.5x)
"""
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scale_bench.md").write_text(report)
    (args.out / "scale_bench.json").write_text(json.dumps(
        {"lines_per_s": {str(n): median[n] for n in texts}, "ratio": ratio, "findings": findings}, indent=2))
    print(report)


if __name__ == "__main__":
    main()
