"""`kernlint check` over a tree, as a user runs it: one process vs worker processes, and a cold
vs a warm source cache, measured side by side in one run (ratios; the machine's speed cancels).

Usage: python benchmarks/check_bench.py [--tree DIR] [--repeat N] [--out FILE]

Each repeat runs, in this order, in a scratch project folder (so the cache starts empty):
  1. ``--no-cache -j1``   one process, nothing kept (the source bench's setting);
  2. ``--no-cache``       one worker per core;
  3. cold cache           one worker per core, every file's findings written to the cache;
  4. warm cache           the same command again: every file read back.
The JSON reports of all four must be identical (the benchmark fails otherwise).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUNS = [
    ("one process, no cache (`--no-cache -j1`)", ["--no-cache", "-j1"]),
    ("one worker per core, no cache (`--no-cache`)", ["--no-cache"]),
    ("cold cache (default)", []),
    ("warm cache (default, again)", []),
]


def _run(tree: Path, cwd: Path, extra: list[str]) -> tuple[float, str]:
    out = cwd / "report.json"
    cmd = [sys.executable, "-m", "kernlint", "check", str(tree), "--output-format", "json", "-o", str(out),
           "--exit-zero", "-q", *extra]
    env = {k: v for k, v in os.environ.items() if k != "KERNLINT_NO_CACHE"}
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, hashlib.sha256(out.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=ROOT.parent / "shared" / "corpora" / "fla")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    tree = args.tree.resolve()
    times: list[list[float]] = [[] for _ in RUNS]
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as scratch:
            cwd = Path(scratch)
            (cwd / "pyproject.toml").write_text("[tool.kernlint]\n")
            digests = set()
            for i, (_, extra) in enumerate(RUNS):
                seconds, digest = _run(tree, cwd, extra)
                times[i].append(seconds)
                digests.add(digest)
            if len(digests) != 1:
                sys.exit("the four runs reported different findings")
            shutil.rmtree(cwd / ".kernlint_cache", ignore_errors=True)
    base = statistics.median(times[0])
    files = sum(1 for _ in tree.rglob("*.py"))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    lines = [
        f"# `kernlint check` on {tree.name}/ ({files} files): workers and the source cache",
        "",
        f"- date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, {cores} cores",
        f"- repeats: {args.repeat} (median seconds; each repeat in a fresh project folder); every run's JSON report identical",
        "",
        "| run | seconds | vs one process, no cache |",
        "| --- | --- | --- |",
    ]
    for (label, _), ts in zip(RUNS, times):
        m = statistics.median(ts)
        lines.append(f"| {label} | {m:.2f} | {m / base:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
