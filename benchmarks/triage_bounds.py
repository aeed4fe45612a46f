"""Every KL101/KL102/KL108/KL109 finding of the bounds engine on the TritonBench-G references and on fla, for
hand triage (benchmarks/results/triage_bounds.md holds the verdicts).

Usage: python benchmarks/triage_bounds.py [--shared DIR] [--dump FILE] [--check]

Prints each finding with +-3 lines of context (and its witness) and writes them as JSON lines to
``--dump``. ``--check`` compares the findings with the verdict table and lists those it lacks.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernlint import catalogue  # noqa: E402
from kernlint.source.phase import lint_text  # noqa: E402

RULES = ("KL101", "KL102", "KL108", "KL109")
TABLE = ROOT / "benchmarks" / "results" / "triage_bounds.md"


def sources(shared: Path) -> list[tuple[str, str]]:
    out = []
    tasks = json.loads((shared / "corpora" / "tritonbench" / "TritonBench_G_v1.json").read_text())
    out += [(f"ref{i:03d}_{t['file']}", t["output"]) for i, t in enumerate(tasks)]
    fla = shared / "corpora" / "fla"
    out += [(str(p.relative_to(fla)), p.read_text(errors="replace")) for p in sorted(fla.rglob("*.py"))]
    return out


def context(text: str, line: int, around: int = 3) -> str:
    lines = text.splitlines()
    lo, hi = max(line - around, 1), min(line + around, len(lines))
    return "\n".join(f"{n:5d}{'>' if n == line else ' '} {lines[n - 1]}" for n in range(lo, hi + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--dump", type=Path, default=Path("/tmp/triage_bounds.jsonl"))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    rules = [r() for code, r in catalogue.all_rules().items() if code in RULES]
    records = []
    for path, text in sources(args.shared):
        result, _ = lint_text(path, text, rules)
        for f in sorted(result.findings, key=lambda f: f.sort_key):
            records.append({"key": f"{path}:{f.span.line}:{f.rule}", "message": f.message,
                            "context": context(text, f.span.line)})
    with args.dump.open("w") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
    if args.check:
        judged = set(re.findall(r"^\| `([^`]+)` \|", TABLE.read_text(), re.M)) if TABLE.exists() else set()
        missing = [r["key"] for r in records if r["key"] not in judged]
        stale = sorted(judged - {r["key"] for r in records})
        print(f"{len(records)} findings, {len(missing)} without a verdict, {len(stale)} verdicts without a finding")
        for key in missing:
            print("  no verdict:", key)
        for key in stale:
            print("  stale verdict:", key)
        return
    for r in records:
        print(f"== {r['key']}\n{r['message']}\n{r['context']}\n")
    print(f"{len(records)} findings")


if __name__ == "__main__":
    main()
