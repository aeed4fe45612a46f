"""Draw the seeded sample of KL104 findings on the TritonBench-G references and fla, for hand triage.

Usage: python benchmarks/triage_kl104.py [--corpora DIR] [--seed S] [--n N] [--list]

Lints the 184 references (``ref012`` is task 12) and every file of ``fla`` with KL104 alone, sorts
the findings by file and line, and prints ``random.Random(seed).sample`` of ``n`` of them with the
message and the lines around the product. The verdicts are in
``benchmarks/results/triage_kl104.md``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernlint import catalogue  # noqa: E402
from kernlint.source.phase import lint_text  # noqa: E402


def sources(corpora: Path):
    tasks = json.loads((corpora / "tritonbench" / "TritonBench_G_v1.json").read_text())
    for i, t in enumerate(tasks):
        yield f"ref{i:03d}", t["output"]
    fla = corpora / "fla"
    for p in sorted(fla.rglob("*.py")):
        yield p.relative_to(fla).as_posix(), p.read_text(errors="replace")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", type=Path, default=ROOT.parent / "shared" / "corpora")
    ap.add_argument("--seed", default="kl104-2026-12-04")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--list", action="store_true", help="print every finding's file:line instead of the sample")
    args = ap.parse_args()
    rule = catalogue.all_rules()["KL104"]()
    found, texts = [], {}
    for name, text in sources(args.corpora):
        result, _ = lint_text(name + ("" if name.endswith(".py") else ".py"), text, [rule])
        texts[name] = text.splitlines()
        found += [(name, f.span.line, f.message) for f in result.findings]
    found.sort()
    if args.list:
        print("\n".join(f"{name}:{line}" for name, line, _ in found))
        return
    print(f"{len(found)} KL104 findings ({sum(n.startswith('ref') for n, _, _ in found)} on the references)")
    for name, line, message in sorted(random.Random(args.seed).sample(found, min(args.n, len(found)))):
        print(f"\n=== {name}:{line}\n{message}")
        lines = texts[name]
        for n in range(max(line - 3, 1), min(line + 3, len(lines)) + 1):
            print(f"{n:5d}{'>' if n == line else ' '} {lines[n - 1]}")


if __name__ == "__main__":
    main()
