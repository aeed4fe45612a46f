"""Write the study's candidates as a folder: ``OUT/<task_id>/<model>.py``, the ```python block of
each model's answer (``kernlint eval`` reads such a folder; ids become ``<task_id>/<model>``).

    python benchmarks/study/candidates.py CORPUS_DIR OUT_DIR [--tasks benchmarks/study/tasks.txt]

CORPUS_DIR holds TritonBench_G_v1.json and the ``<model>_simp.jsonl`` answer files (same row order
as the tasks).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

MODELS = ("gpt-4o", "claude-3-5-sonnet")


def main() -> None:
    from kernlint.eval.problems import extract_code, load_problems

    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--tasks", type=Path, default=Path(__file__).with_name("tasks.txt"))
    args = ap.parse_args()
    ids = list(load_problems(args.corpus / "TritonBench_G_v1.json"))
    wanted = [ln.split("#", 1)[0].strip() for ln in args.tasks.read_text().splitlines()]
    wanted = [w for w in wanted if w]
    n = 0
    for model in MODELS:
        rows = [json.loads(ln) for ln in (args.corpus / f"{model}_simp.jsonl").read_text().splitlines() if ln.strip()]
        for pid in wanted:
            code = extract_code(rows[ids.index(pid)]["predict"])
            dest = args.out / pid / f"{model}.py"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(code)
            n += 1
    print(f"{n} candidates for {len(wanted)} tasks written to {args.out}")


if __name__ == "__main__":
    main()
