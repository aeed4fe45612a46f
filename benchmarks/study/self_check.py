"""Check the TritonBench test code by evaluating each reference as its own candidate.

A usable task must let the reference pass against itself: deterministic, finite (outputs the
kernel never writes stay NaN: the allocator is poisoned), seed-dependent outputs that the null
models fail. A reference that fails this is broken or its test is; the study leaves such tasks out.
Without a GPU the kernels run in Triton's interpreter, so keep the shapes moderate.

    python benchmarks/study/self_check.py [--corpus DIR] [--records FILE] ID [ID ...]
    python benchmarks/study/self_check.py --all          # every task with test code
    python benchmarks/study/self_check.py --tasks-file benchmarks/study/tasks.txt

``--records FILE`` appends one line per task (task, ok, verdict, reasons, device) for the report
(tasks already in it are not checked again);
``--out DIR`` keeps the evaluation's own output (records arrive as tasks finish, so a run cut short
keeps what it did), and ``--from-records DIR/records.jsonl`` summarizes such a run without running.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE / "tritonbench_tests"
CORPUS = HERE.parents[1].parent / "shared" / "corpora" / "tritonbench"


def task_ids(ns: argparse.Namespace) -> list[str]:
    have = {p.stem for p in TESTS.glob("*.py")}
    if ns.all:
        return sorted(have)
    if ns.tasks_file:
        ids = [t.strip() for t in Path(ns.tasks_file).read_text().splitlines() if t.strip() and not t.startswith("#")]
        return [t for t in ids if t in have]
    return ns.ids


def summarize(records: Path, out: Path | None) -> int:
    """Print one line per task and append the JSON lines to ``out``; returns how many failed."""
    bad, lines = 0, []
    for line in records.read_text().splitlines():
        r = json.loads(line)
        corr = r.get("correctness", {})
        ok = r.get("verdict") == "passed" and not corr.get("null_models_passing")
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} {r['problem']:32} {r.get('verdict')} "
              f"{'; '.join(r.get('reasons', []))[:300]} null={corr.get('null_models_passing')}")
        lines.append(json.dumps({"task": r["problem"], "ok": ok, "verdict": r.get("verdict"),
                                 "reasons": r.get("reasons", []), "error": (r.get("error") or "")[-600:],
                                 "null_models_passing": corr.get("null_models_passing"),
                                 "device": r.get("device") or "cpu (Triton interpreter)"}))
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a") as fh:
            fh.write("".join(x + "\n" for x in lines))
    return bad


def main(argv: list[str]) -> int:
    from kernlint.eval.problems import load_problems

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ids", nargs="*")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--tasks-file")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="folder with TritonBench_G_v1.json")
    parser.add_argument("--records", type=Path, help="append one JSON line per task here")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--workers", type=int, help="parallel workers (default: kernlint eval's)")
    parser.add_argument("--out", type=Path, help="keep the evaluation's output folder here")
    parser.add_argument("--from-records", type=Path, help="summarize this records.jsonl instead of running")
    ns = parser.parse_args(argv)
    if ns.from_records:
        return 1 if summarize(ns.from_records, ns.records) else 0
    ids = task_ids(ns)
    if ns.records and ns.records.exists():
        checked = {json.loads(x)["task"] for x in ns.records.read_text().splitlines() if x.strip()}
        ids = [t for t in ids if t not in checked]
        if not ids:
            print(f"every task is already in {ns.records}")
            return 0
    if not ids:
        parser.error("no task ids (give IDs, --all or --tasks-file)")
    corpus = ns.corpus / "TritonBench_G_v1.json"
    probs = load_problems(corpus)
    with tempfile.TemporaryDirectory() as tmp:
        cands = Path(tmp, "cands")
        cands.mkdir()
        for pid in ids:
            (cands / f"{pid}.py").write_text(probs[pid].source)
        out = ns.out or Path(tmp, "out")
        cmd = [sys.executable, "-m", "kernlint", "eval", str(corpus), str(cands), "--tests", str(TESTS),
               "--problem-ids", ",".join(ids), "-o", str(out), "--no-timing", "--no-progress", "--seeds", "0,1",
               "--fail-level", "none", "--timeout", str(ns.timeout)]
        if ns.workers:
            cmd += ["--workers", str(ns.workers)]
        subprocess.run(cmd, check=False)
        return 1 if summarize(out / "records.jsonl", ns.records) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
