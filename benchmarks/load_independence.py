"""Do the source phase's findings depend on how loaded the machine is?

Usage: python benchmarks/load_independence.py FILE... [--busy N] [--wall-clock] [--out FILE]

Lints the files once on the idle machine, then again with N processes spinning on the cores
(default: two per core), and compares the findings line by line. ``--wall-clock`` caps each z3
check with z3's own wall-clock ``timeout`` instead of the thread's CPU time (what the engine did
before ``kernlint.engine.cpu_cap``), for the comparison.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernlint import catalogue  # noqa: E402
from kernlint.engine import cpu_cap, query  # noqa: E402
from kernlint.model import Phase  # noqa: E402
from kernlint.source.phase import lint_text  # noqa: E402


def _spin() -> None:
    while True:
        pass


def _lint(paths: list[Path], rules) -> tuple[list[str], float]:
    query.clear_cache()
    t0 = time.perf_counter()
    out = []
    for p in paths:
        result, _ = lint_text(str(p), p.read_text(errors="replace"), rules)
        out += [f"{p.name}:{f.span.line}:{f.span.col}:{f.rule}:{f.level.value}: {f.message}"
                for f in result.sorted_findings()]
    return out, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--busy", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--wall-clock", action="store_true", help="z3's wall-clock timeout as the cap")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.wall_clock:
        cpu_cap.thread_clock = lambda: None  # every check falls back to z3's timeout, set per solver
    rules = [r() for r in catalogue.all_rules().values() if r.phase is Phase.SOURCE]
    alone, alone_s = _lint(args.files, rules)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for s in spinners:
        s.start()
    try:
        loaded, loaded_s = _lint(args.files, rules)
    finally:
        for s in spinners:
            s.terminate()
    lost = sorted(set(alone) - set(loaded))
    new = sorted(set(loaded) - set(alone))
    cap = "z3's wall-clock timeout" if args.wall_clock else "the thread's CPU time (cpu_cap)"
    report = f"""## {', '.join(p.name for p in args.files)}: the cap is {cap}

- date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; {os.cpu_count()} cores, Python {platform.python_version()}
- idle: {alone_s:.1f} s, {len(alone)} findings; beside {args.busy} spinning processes: {loaded_s:.1f} s, {len(loaded)} findings
- **{'identical' if not lost and not new else f'{len(lost)} lost, {len(new)} new under load'}**
"""
    report += "".join(f"  - lost: `{x[:160]}`\n" for x in lost) + "".join(f"  - new: `{x[:160]}`\n" for x in new)
    print(report)
    if args.out:
        with args.out.open("a") as fh:
            fh.write(report + "\n")


if __name__ == "__main__":
    main()
