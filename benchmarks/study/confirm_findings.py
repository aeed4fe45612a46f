"""Confirm or refute the study candidates' static findings with the dynamic phase.

    python benchmarks/study/confirm_findings.py CANDS_DIR OUT_DIR [--jobs 8] [--limit N]

For every candidate ``CANDS_DIR/<task>/<model>.py`` (see candidates.py) whose source phase reports
an out-of-bounds or race finding, writes the candidate followed by the task's test code and a
``run()`` calling it (the lines of the candidate stay where they are), runs ``kernlint check
--confirm`` on it (compute-sanitizer on a GPU; Triton's interpreter without one) and appends one JSON
line per finding to ``OUT_DIR/confirmations.jsonl``: task, model, rule, line, verdict, tools,
measurements. A rerun skips the candidates that file already holds, so a run cut short resumes.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TESTS = HERE / "tritonbench_tests"
RULES = ("KL101", "KL102", "KL103", "KL109")


def confirm_one(cand: Path, work: Path) -> list[dict]:
    from kernlint.eval.problems import TEST_FN

    task, model = cand.parent.name, cand.stem
    test = TESTS / f"{task}.py"
    if not test.exists():
        return []
    test_code = test.read_text()
    fn = TEST_FN.search(test_code).group(1)
    target = work / f"{task}__{model}.py"
    target.write_text(cand.read_text().rstrip() + "\n\n\n" + test_code.rstrip()
                      + f"\n\n\ndef run():\n    {fn}()\n")
    r = subprocess.run([sys.executable, "-m", "kernlint", "check", target.name, "--confirm", "--select", ",".join(RULES),
                        "--output-format", "json"], capture_output=True, text=True, timeout=900, cwd=work)
    try:
        data = json.loads(r.stdout)
    except json.JSONDecodeError:
        return [{"task": task, "model": model, "error": (r.stdout + r.stderr)[-500:]}]
    out = []  # a candidate without findings has nothing to confirm: no rows, no GPU work
    for f in data["findings"]:
        tools = sorted({e.get("tool", "?") for e in f["evidence"].get("dynamic", []) if isinstance(e, dict)})
        out.append({"task": task, "model": model, "rule": f["rule"], "line": f["line"], "phase": f["phase"],
                    "verdict": f["verdict"], "tools": tools, "measurements": f.get("measurements", {}),
                    "notes": [e.get("note") for e in f["evidence"].get("dynamic", []) if isinstance(e, dict) and e.get("note")][:3]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cands", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "confirm_work"
    work.mkdir(exist_ok=True)
    sink = args.out / "confirmations.jsonl"
    done = {(r["task"], r["model"]) for r in map(json.loads, sink.read_text().splitlines())} if sink.exists() else set()
    cands = [c for c in sorted(args.cands.glob("*/*.py")) if (c.parent.name, c.stem) not in done][: args.limit]
    with cf.ThreadPoolExecutor(args.jobs) as pool, sink.open("a") as fh:
        for rows in pool.map(lambda c: confirm_one(c, work), cands):
            for row in rows:
                fh.write(json.dumps(row) + "\n")
                fh.flush()
    rows = [json.loads(x) for x in sink.read_text().splitlines()]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.get("verdict", "error")] = counts.get(r.get("verdict", "error"), 0) + 1
    print(f"{len(rows)} findings judged: {counts}")


if __name__ == "__main__":
    main()
