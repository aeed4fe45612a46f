"""Check supplied TritonBench test code by evaluating each reference as its own candidate.

A usable test must let the reference pass against itself (deterministic, finite, seed-dependent
outputs that the null models fail). On a machine without a GPU the kernels run in Triton's
interpreter, so keep the shapes moderate.

    python benchmarks/study/self_check.py ID [ID ...]     # or: --all (every test in the folder)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE / "tritonbench_tests"
CORPUS = HERE.parents[1].parent / "shared" / "corpora" / "tritonbench" / "TritonBench_G_v1.json"


def main(argv: list[str]) -> int:
    from kernlint.eval.problems import load_problems

    ids = sorted(p.stem for p in TESTS.glob("*.py")) if argv == ["--all"] else argv
    probs = load_problems(CORPUS)
    with tempfile.TemporaryDirectory() as tmp:
        cands = Path(tmp, "cands")
        cands.mkdir()
        for pid in ids:
            (cands / f"{pid}.py").write_text(probs[pid].source)
        out = Path(tmp, "out")
        cmd = [sys.executable, "-m", "kernlint", "eval", str(CORPUS), str(cands), "--tests", str(TESTS),
               "--problem-ids", ",".join(ids), "-o", str(out), "--no-timing", "--no-progress",
               "--fail-level", "none", "--timeout", "900"]
        subprocess.run(cmd, check=False)
        bad = 0
        for line in (out / "records.jsonl").read_text().splitlines():
            r = json.loads(line)
            corr = r.get("correctness", {})
            ok = r.get("verdict") == "passed" and not corr.get("null_models_passing")
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} {r['problem']:32} {r.get('verdict')} "
                  f"{'; '.join(r.get('reasons', []))[:300]} null={corr.get('null_models_passing')}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
