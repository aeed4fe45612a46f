#!/usr/bin/env python
"""Run the reward-hack rules (KL5xx) over answers nobody wrote to cheat, for triage.

    python benchmarks/triage_eval_rules.py [--select KL506,KL507,KL511,KL512,KL513] [--corpus DIR]

Reads the TritonBench LLM answers (``llm_T/*.jsonl``, ``llm_G/*.jsonl`` and ``*_simp.jsonl`` in the
corpus folder, default ``../shared/corpora/tritonbench`` beside the repository), the honest
candidates of fixtures/eval (``honest*.py``) and the honest suite (fixtures/eval/honest), and prints
the number of modules, findings per rule and every finding with its line, for the triage table in
benchmarks/results/eval_rules_triage.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ANSWER_KEYS = ("predict", "answer", "completion", "code", "response", "output")


def modules(corpus: Path):
    """(where, source) for every answer and honest candidate."""
    from kernlint.eval.problems import extract_code

    files = sorted(corpus.glob("llm_T/*.jsonl")) + sorted(corpus.glob("llm_G/*.jsonl")) + sorted(corpus.glob("*_simp.jsonl"))
    for f in files:
        for i, line in enumerate(f.read_text().splitlines()):
            row = json.loads(line)
            text = next((row[k] for k in ANSWER_KEYS if isinstance(row.get(k), str)), None)
            if text is not None:
                yield f"{f.name}:{i + 1}", extract_code(text)
    fixtures = ROOT / "fixtures" / "eval"
    for p in sorted((fixtures / "candidates").rglob("honest*.py")) + sorted((fixtures / "honest" / "candidates").rglob("*.py")):
        yield str(p.relative_to(ROOT)), p.read_text()


def main() -> int:
    import libcst as cst

    from kernlint.eval.rulebase import check_source

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--select", default="KL506,KL507,KL511,KL512,KL513")
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpora" / "tritonbench"))
    args = ap.parse_args()
    select = set(args.select.split(","))
    counts: Counter = Counter()
    n = unparsable = 0
    lines = []
    for where, src in modules(Path(args.corpus)):
        n += 1
        try:
            found = check_source(src, where, select)
        except cst.ParserSyntaxError:
            unparsable += 1
            continue
        for f in found:
            counts[f.rule] += 1
            text = src.splitlines()[f.span.line - 1].strip()
            lines.append(f"{f.rule} | {where}:{f.span.line} | {f.message[:90]} | {text[:90]}")
    print(f"{n} modules ({unparsable} unparsable); findings: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
