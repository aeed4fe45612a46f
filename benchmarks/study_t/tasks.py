"""The TritonBench-T tasks of the study, in a fixed seeded order.

Each session evaluates a prefix of a seeded shuffle of the 166 task ids and a later session grows
the prefix, so earlier results stay part of the sample.

    python benchmarks/study_t/tasks.py 80 > benchmarks/study_t/tasks.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study"))
from tasks import seeded_order  # noqa: E402  (the TritonBench-G study's seeded order)

SEED = 20261201
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "tritonbench"


def ordered_ids(corpus: Path = CORPUS) -> list[str]:
    return seeded_order(corpus / "T" / "TritonBench_T_v1.jsonl", SEED)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    corpus = Path(sys.argv[2]) if len(sys.argv) > 2 else CORPUS
    print(f"# seed {SEED}: the first {n} of a seeded shuffle of the TritonBench-T task ids")
    for pid in ordered_ids(corpus)[:n]:
        print(pid)
