"""The TritonBench-G tasks of the study, in a fixed seeded order.

The order is a seeded shuffle of the 184 task ids; each session evaluates a prefix of it and a
later session grows the prefix, so earlier results stay part of the sample.

    python benchmarks/study/tasks.py 60 > benchmarks/study/tasks.txt
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

SEED = 20261130
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "tritonbench"


def seeded_order(listing: Path, seed: int) -> list[str]:
    """The task ids of a task list, shuffled with ``seed`` (the studies' fixed orders)."""
    from kernlint.eval.problems import load_problems

    ids = list(load_problems(listing))
    random.Random(seed).shuffle(ids)
    return ids


def ordered_ids(corpus: Path = CORPUS) -> list[str]:
    return seeded_order(corpus / "TritonBench_G_v1.json", SEED)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    corpus = Path(sys.argv[2]) if len(sys.argv) > 2 else CORPUS
    print(f"# seed {SEED}: the first {n} of a seeded shuffle of the TritonBench-G task ids")
    for pid in ordered_ids(corpus)[:n]:
        print(pid)
