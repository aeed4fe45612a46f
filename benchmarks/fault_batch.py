#!/usr/bin/env python
"""A large CPU batch of ``kernlint eval`` with injected faults, killed mid-batch and run again.

    python benchmarks/fault_batch.py [--out benchmarks/results] [--candidates 1000] [--fault-share 0.1]
        [--kill-at 0.4] [--workers 2] [--timeout 30] [--seed 0]

The batch: the honest fixture candidates (fixtures/eval/candidates, those expected to pass) copied
under new names, and at ``--fault-share`` the injected faults of fixtures/eval/faults (crash,
abort, hang, out-of-memory, illegal address, an exit with status 0 before returning, a thread
explosion, writes outside the executor's folder, a network attempt), placed by a seeded shuffle.
It runs the ``kernlint eval`` command line as a user would (correctness only: ``--no-timing``, one
seed, one shape variant), kills the command's whole process group with SIGKILL once ``--kill-at``
of the candidates have records, and runs the same command again, which resumes.

Checks: every candidate has exactly one record (no id twice), every fault is classified as
the fault fixtures' snapshots (fixtures/eval/faults/*/NAME.expected) say, every honest candidate passed, and after the second run
no executor process is left (counted, with the temporary folders the killed run left, under the
batch's own TMPDIR). Writes OUT/fault_batch.md and OUT/fault_batch.json.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from helpers import expected_records  # noqa: E402 - the fixtures' snapshots, as the tests read them

from gpu_eval_check import fault_classified  # noqa: E402

FIX = ROOT / "fixtures" / "eval"


def build(folder: Path, n: int, fault_share: float, seed: int) -> dict[str, dict]:
    """Write the batch's candidates under ``folder``/<problem>/; id -> what its record must be."""
    expected = expected_records(FIX / "candidates")
    honest = sorted(k for k, v in expected.items() if v["verdict"] == "passed")
    faults = expected_records(FIX / "faults")
    n_faults = round(n * fault_share)
    plan = [("fault", sorted(faults)[i % len(faults)]) for i in range(n_faults)]
    plan += [("honest", honest[i % len(honest)]) for i in range(n - n_faults)]
    random.Random(seed).shuffle(plan)
    want = {}
    for i, (kind, src) in enumerate(plan):
        problem, name = src.split("/")
        base = FIX / ("faults" if kind == "fault" else "candidates") / problem
        cid = f"{problem}/c{i:04d}_{name}"
        (folder / problem).mkdir(parents=True, exist_ok=True)
        shutil.copy(base / f"{name}.py", folder / f"{cid}.py")
        want[cid] = {"kind": kind, "source": src, **(faults[src] if kind == "fault" else {"verdict": "passed"})}
    return want


def executors_left(work: Path) -> int:
    """Processes still running in a folder of the batch's (the executors' folders are under its TMPDIR)."""
    n = 0
    for proc in Path("/proc").iterdir():
        try:
            n += proc.name.isdigit() and os.readlink(proc / "cwd").startswith(str(work))
        except OSError:
            continue
    return n


def lines(path: Path) -> int:
    try:
        return sum(1 for _ in path.open())
    except OSError:
        return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--candidates", type=int, default=1000)
    ap.add_argument("--fault-share", type=float, default=0.1)
    ap.add_argument("--kill-at", type=float, default=0.4, help="kill the first run once this share has records")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per candidate (a hang costs this much)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="kernlint-fault-batch-"))
    want = build(work / "candidates", args.candidates, args.fault_share, args.seed)
    rec_path = work / "eval" / "records.jsonl"
    cmd = [sys.executable, "-m", "kernlint", "eval", str(FIX / "problems"), str(work / "candidates"),
           "--out", str(work / "eval"), "--no-timing", "--seeds", "0", "--shape-variants", "0",
           "--timeout", str(args.timeout), "--mem-limit-mb", "4096", "--workers", str(args.workers), "--no-progress"]
    (work / "tmp").mkdir()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(work / "tmp")}
    runs = []
    t0 = time.time()
    first = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             start_new_session=True)
    kill_at = int(args.kill_at * args.candidates)
    while first.poll() is None and lines(rec_path) < kill_at:
        time.sleep(0.5)
    killed = first.poll() is None
    if killed:
        os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    runs.append({"run": "first, killed" if killed else "first (ended before the kill)", "records_at_end": lines(rec_path),
                 "wall_s": round(time.time() - t0, 1), "exit": first.returncode})
    t1 = time.time()
    second = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    runs.append({"run": "second (resumes)", "records_at_end": lines(rec_path), "wall_s": round(time.time() - t1, 1),
                 "exit": second.returncode, "stderr_tail": second.stderr[-500:]})
    time.sleep(3)  # executors of the killed run see their requests closed and leave
    left = executors_left(work)
    # what the killed run could not remove (its executors' temporary folders); the second run removes its own
    stale = len(list((work / "tmp").glob("kernlint-eval-*")))

    parsed = []
    for line in rec_path.read_text().splitlines():
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            parsed.append(None)  # a line the SIGKILL cut short
    recs = [r for r in parsed if r is not None]
    counts = collections.Counter(r["id"] for r in recs)
    by_id = {r["id"]: r for r in recs}
    rows = collections.defaultdict(lambda: {"n": 0, "ok": 0, "verdicts": collections.Counter(), "kinds": collections.Counter()})
    bad = []
    for cid, exp in want.items():
        r = by_id.get(cid)
        ok = r is not None and (fault_classified(r, exp) if exp["kind"] == "fault" else r["verdict"] == "passed")
        row = rows[exp["source"]]
        row["n"] += 1
        row["ok"] += ok
        if r is not None:
            row["verdicts"][r["verdict"]] += 1
            row["kinds"][r.get("error_kind") or "-"] += 1
        if not ok:
            bad.append({"id": cid, "expected": exp, "got": None if r is None else
                        {k: r.get(k) for k in ("verdict", "error_kind", "error", "reasons")}})
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "host_cpus": os.cpu_count(),
        "command": " ".join(["kernlint", *cmd[3:]]).replace(str(work), "<batch>").replace(f"{ROOT}/", ""),
        "candidates": args.candidates, "faults": sum(e["kind"] == "fault" for e in want.values()),
        "runs": runs, "records": len(recs), "cut_lines": parsed.count(None),
        "missing": sorted(set(want) - set(by_id)), "duplicates": sorted(k for k, v in counts.items() if v > 1),
        "unexpected_ids": sorted(set(by_id) - set(want)), "executors_left": left, "temp_folders_left": stale,
        "as_expected": sum(r["ok"] for r in rows.values()), "wall_s": round(time.time() - t0, 1),
        "per_source": {k: {**v, "verdicts": dict(v["verdicts"]), "kinds": dict(v["kinds"])} for k, v in sorted(rows.items())},
        "not_as_expected": bad[:50],
    }
    report["ok"] = (not report["missing"] and not report["duplicates"] and not report["unexpected_ids"]
                    and not bad and left == 0)
    (args.out / "fault_batch.json").write_text(json.dumps(report, indent=1, default=str))
    md = [f"# kernlint eval: {args.candidates} candidates with injected faults, killed and resumed ({report['date']})", "",
          f"`{report['command']}` on {os.cpu_count()} CPUs, no GPU; {report['faults']} faults "
          f"({args.fault_share:.0%}), the rest honest fixture candidates, seeded shuffle (seed {args.seed}).", "",
          "| run | records at its end | wall s | exit |", "|---|---|---|---|"]
    md += [f"| {r['run']} | {r['records_at_end']} | {r['wall_s']} | {r['exit']} |" for r in runs]
    md += ["", f"**{report['as_expected']}/{args.candidates} as expected**; records {len(recs)}, missing "
           f"{len(report['missing'])}, duplicated ids {len(report['duplicates'])}, lines cut by the kill "
           f"{report['cut_lines']}, executors left running {left}, temporary folders the killed run left {stale}.", "",
           "| source | candidates | as expected | verdicts | error kinds |", "|---|---|---|---|---|"]
    md += [f"| {k} | {v['n']} | {v['ok']} | {', '.join(f'{a} {b}' for a, b in v['verdicts'].items())} | "
           f"{', '.join(f'{a} {b}' for a, b in v['kinds'].items())} |" for k, v in report["per_source"].items()]
    if bad:
        md += ["", "Not as expected (first 50):", ""] + [f"- `{b['id']}`: {json.dumps(b['got'])[:300]}" for b in bad[:50]]
    (args.out / "fault_batch.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    shutil.rmtree(work, ignore_errors=True)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
