"""Run kernlint's source phase over TritonBench-G references and two LLM answer sets, for triage.

Usage: python benchmarks/triage_source.py [--corpus DIR] [--dump FILE] [--sample N --seed S]
                                          [--rules KL104,KL106]

- counts findings per rule per corpus (``ref``, ``gpt``, ``claude``) and kernel lines (the sum of
  the kernel spans' lengths) per corpus;
- dumps every finding, with +-3 lines of context, as JSON lines to ``--dump`` (default
  ``/tmp/triage_source_findings.jsonl``);
- with ``--sample N --seed S``: prints a reproducible random sample of at most N findings per rule
  per corpus (``random.Random(f"{seed}:{corpus}:{rule}")`` over the findings sorted by
  path/line/col), with context; ``--rules`` restricts which rules are sampled.

File names: ``ref012_<file>`` for the reference of task 12, ``gpt012.py`` / ``claude012.py`` for
the answers (the ```python fenced block of ``predict`` if there is one, else the whole text).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernlint import catalogue  # noqa: E402
from kernlint.model import Phase  # noqa: E402
from kernlint.source.phase import lint_text  # noqa: E402

CORPORA = ("ref", "gpt", "claude")
ANSWERS = {"gpt": "gpt-4o_simp.jsonl", "claude": "claude-3-5-sonnet_simp.jsonl"}
_FENCE = re.compile(r"```python[^\n]*\n(.*?)(?:```|\Z)", re.S)


def extract_code(predict: str) -> str:
    blocks = _FENCE.findall(predict)
    if blocks:
        return "\n".join(blocks)
    return predict


def load_sources(corpus_dir: Path) -> dict[str, list[tuple[str, str]]]:
    tasks = json.loads((corpus_dir / "TritonBench_G_v1.json").read_text())
    out: dict[str, list[tuple[str, str]]] = {
        "ref": [(f"ref{i:03d}_{t['file']}", t["output"]) for i, t in enumerate(tasks)]
    }
    for key, fname in ANSWERS.items():
        rows = [json.loads(line) for line in (corpus_dir / fname).read_text().splitlines() if line.strip()]
        out[key] = [(f"{key}{i:03d}.py", extract_code(r["predict"])) for i, r in enumerate(rows)]
    return out


def context(text: str, line: int, end_line: int, around: int = 3) -> str:
    lines = text.splitlines()
    lo, hi = max(line - around, 1), min(end_line + around, len(lines))
    return "\n".join(f"{n:5d}{'>' if line <= n <= end_line else ' '} {lines[n - 1]}" for n in range(lo, hi + 1))


def run(corpus_dir: Path):
    rules = [r() for r in catalogue.all_rules().values() if r.phase is Phase.SOURCE]
    sources = load_sources(corpus_dir)
    counts: dict[str, Counter] = {c: Counter() for c in CORPORA}
    kernel_lines: Counter = Counter()
    kernels: Counter = Counter()
    errors: Counter = Counter()
    records: list[dict] = []
    for corpus, files in sources.items():
        for path, text in files:
            result, _ = lint_text(path, text, rules)
            errors[corpus] += len(result.errors)
            for k in result.kernels:
                kernels[corpus] += 1
                kernel_lines[corpus] += k.span.end_line - k.span.line + 1
            for f in sorted(result.findings, key=lambda f: f.sort_key):
                counts[corpus][f.rule] += 1
                d = f.to_dict()
                d["corpus"] = corpus
                d["context"] = context(text, f.span.line, f.span.end_line)
                records.append(d)
    return rules, sources, counts, kernel_lines, kernels, errors, records


def sample(records: list[dict], corpus: str, rule: str, n: int, seed: int) -> list[dict]:
    pool = [r for r in records if r["corpus"] == corpus and r["rule"] == rule]
    pool.sort(key=lambda r: (r["path"], r["line"], r["col"]))
    if len(pool) <= n:
        return pool
    picked = random.Random(f"{seed}:{corpus}:{rule}").sample(range(len(pool)), n)
    return [pool[i] for i in sorted(picked)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "tritonbench")
    parser.add_argument("--dump", type=Path, default=Path("/tmp/triage_source_findings.jsonl"))
    parser.add_argument("--sample", type=int, default=0, help="findings per rule per corpus to sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default="", help="comma-separated rule codes to sample (default: all)")
    parser.add_argument("--corpora", default=",".join(CORPORA), help="corpora to sample from")
    parser.add_argument("--sample-out", type=Path, default=None, help="write the sample as JSON lines here")
    args = parser.parse_args()

    rules, sources, counts, kernel_lines, kernels, errors, records = run(args.corpus)
    args.dump.parent.mkdir(parents=True, exist_ok=True)
    with args.dump.open("w") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")

    codes = sorted({r.code for r in rules})
    print(f"{'rule':6} " + " ".join(f"{c:>7}" for c in CORPORA))
    for code in codes:
        if any(counts[c][code] for c in CORPORA):
            print(f"{code:6} " + " ".join(f"{counts[c][code]:7d}" for c in CORPORA))
    print("files   " + " ".join(f"{len(sources[c]):7d}" for c in CORPORA))
    print("kernels " + " ".join(f"{kernels[c]:7d}" for c in CORPORA))
    print("klines  " + " ".join(f"{kernel_lines[c]:7d}" for c in CORPORA))
    print("errors  " + " ".join(f"{errors[c]:7d}" for c in CORPORA))
    print(f"{len(records)} findings dumped to {args.dump}")

    if args.sample:
        wanted = [c.strip().upper() for c in args.rules.split(",") if c.strip()] or codes
        picked: list[dict] = []
        for corpus in [c.strip() for c in args.corpora.split(",") if c.strip()]:
            for code in wanted:
                picked.extend(sample(records, corpus, code, args.sample, args.seed))
        if args.sample_out:
            with args.sample_out.open("w") as fh:
                for r in picked:
                    fh.write(json.dumps(r) + "\n")
        for r in picked:
            print(f"\n=== [{r['corpus']}] {r['rule']} {r['path']}:{r['line']}  {r['message']}")
            print(r["context"])


if __name__ == "__main__":
    main()
