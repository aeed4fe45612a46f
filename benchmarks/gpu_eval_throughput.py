#!/usr/bin/env python
"""Candidates per GPU-hour of ``kernlint eval`` on one GPU at the default options (timing, the
torch.compile baseline, the profile pass when ncu is on PATH), with the mean seconds per stage.

    python benchmarks/gpu_eval_throughput.py --out DIR [--repeat 1] [--cold 2] [--problems a,b] [--no-profile]
        [--suite PROBLEMS CANDIDATES]

The batch: every candidate of the suites (default: the fixture suite, fixtures/eval), grouped by
problem, ``--repeat`` times each (ids ``<id>#<k>``), so most candidates find their problem's
reference values measured (``reused`` in the records) and their executors started ahead. Then, on
the same machine in the same run, the last ``--cold`` candidates that reached the judge (late in
their problem: the usual case) once more with the warm slot off (every candidate measures the
reference and starts its own executors, as before): the ratio on those candidates. Writes DIR/gpu_eval_throughput.md and .json and the records (warm.jsonl,
cold.jsonl); the report of the warm batch is written before the cold part starts.
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from helpers import expected_records  # noqa: E402 - the fixtures' snapshots, as the tests read them

from kernlint.eval.api import EvalOptions  # noqa: E402
from kernlint.eval.problems import load_candidates, load_problems  # noqa: E402
from kernlint.eval.runner import run_local  # noqa: E402
from kernlint.eval.summary import stage_seconds  # noqa: E402

from gpu_eval_check import missing_reasons  # noqa: E402
from gpu_honest_check import flagged  # noqa: E402

EXPECTED = ROOT / "fixtures" / "eval" / "candidates"


def batch(suites, repeat: int, only: set[str] | None = None):
    probs, cands = {}, []
    for problems_dir, candidates_dir in suites:
        p = load_problems(problems_dir)
        probs.update(p)
        cands += load_candidates(candidates_dir, p)
    cands = sorted((c for c in cands if not only or c.problem_id in only), key=lambda c: c.problem_id)
    out = []
    for pid in dict.fromkeys(c.problem_id for c in cands):
        mine = [c for c in cands if c.problem_id == pid]
        out += [replace(c, id=f"{c.id}#{k}") for k in range(repeat) for c in mine]
    return probs, out


def run(probs, cands, path: Path, warm: bool, report: dict, key: str, out: Path, opts: EvalOptions) -> dict:
    """The batch, with the report rewritten after every record (a run cut short still reports)."""
    path.unlink(missing_ok=True)
    recs: list[dict] = []
    t0 = time.time()

    def on_record(rec: dict) -> None:
        recs.append(rec)
        report[key] = rates(recs, time.time() - t0)
        write(out, report)

    run_local(probs, cands, path, opts, on_record=on_record, warm=warm)
    report[key] = rates(recs, time.time() - t0)
    return report[key]


def rates(recs: list[dict], wall: float) -> dict:
    by_verdict: dict[str, list[float]] = defaultdict(list)
    for r in recs:
        by_verdict[r["verdict"]].append(r["wall_s"])
    return {"candidates": len(recs), "wall_s": round(wall, 1), "per_gpu_hour": round(len(recs) / wall * 3600, 1),
            "mean_stage_s": stage_seconds(recs),
            "mean_wall_s_by_verdict": {k: round(statistics.mean(v), 1) for k, v in sorted(by_verdict.items())},
            "reused": sum(bool(r.get("reused")) for r in recs),
            "started_ahead": sum(bool(r.get("executors_started_ahead")) for r in recs),
            "verdicts": {r["id"]: r["verdict"] for r in recs},
            "record_wall_s": {r["id"]: r["wall_s"] for r in recs},
            "stage_names": {r["id"]: sorted(r.get("stage_s") or {}) for r in recs},
            "as_expected": as_expected(recs)}


@functools.cache
def _expected() -> dict:
    return expected_records(EXPECTED)


def as_expected(recs: list[dict]) -> list[dict]:
    """Each record of a fixture candidate against its snapshot (fixtures/eval/candidates/*/NAME.expected), at the default
    options: a rejected candidate needs its verdict and every named reason; one expected to pass
    only needs not to be flagged (its verdict may be a speed verdict against the baselines)."""
    expected = _expected()
    rows = []
    for r in recs:
        exp = expected.get(r["id"].split("#")[0])
        if exp is None:
            continue
        missing = missing_reasons(r, exp)
        ok = not flagged(r) if exp["verdict"] == "passed" else r["verdict"] == exp["verdict"] and not missing
        rows.append({"id": r["id"], "expected": exp["verdict"], "got": r["verdict"], "ok": ok,
                     "missing_reasons": missing, "reasons": r.get("reasons", [])})
    return rows


def device() -> str:
    try:
        import torch

        return torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    except Exception:  # noqa: BLE001
        return "unknown"


def write(out: Path, report: dict) -> None:
    (out / "gpu_eval_throughput.json").write_text(json.dumps(report, indent=2))
    w = report.get("warm")
    if not w or not w["candidates"]:
        return
    md = [f"# kernlint eval throughput on {report['device']} ({report['date']})", "",
          f"`{report['command']}`: {w['candidates']} candidates ({report['repeat']}x the suites), default options "
          f"(timing, torch.compile baseline, ncu pass: {'on' if report['ncu'] else 'off or ncu not found'}), "
          f"{report['slots']} worker slots sharing the GPU.", "",
          f"**{w['per_gpu_hour']:.0f} candidates per GPU-hour** (batch wall {w['wall_s']} s); "
          f"{w['reused']} records reused reference values, {w['started_ahead']} found their executors started ahead.", "",
          "Mean seconds per candidate and stage:", "", "| stage | mean s |", "|---|---|"]
    md += [f"| {k} | {v} |" for k, v in w["mean_stage_s"].items()]
    md += ["", "Mean wall seconds by verdict: " + ", ".join(f"{k} {v}" for k, v in w["mean_wall_s_by_verdict"].items())]
    rows = w["as_expected"]
    md += ["", f"## Verdicts against its snapshot (fixtures/eval/candidates/*/NAME.expected): {sum(r['ok'] for r in rows)}/{len(rows)} as expected", "",
           "A candidate expected to pass must not be flagged (a cheating verdict or a static or runtime hack reason); "
           "any other needs its verdict and every reason named there, the GPU-only ones included.", "",
           "| candidate | expected | got | ok | missing reasons | reasons |", "|---|---|---|---|---|---|"]
    md += [f"| {r['id']} | {r['expected']} | {r['got']} | {'yes' if r['ok'] else 'NO'} | {', '.join(r['missing_reasons'])} | "
           f"{'; '.join(x[:90] for x in r['reasons'])} |" for r in rows]
    cold = report.get("cold")
    if cold:
        ids = list(cold["verdicts"])
        warm_s = sum(w["record_wall_s"].get(i, 0.0) for i in ids)
        md += ["", f"## The same {len(ids)} candidates with the warm slot off (as before)", "",
               f"cold batch wall {cold['wall_s']} s ({cold['per_gpu_hour']:.0f} per GPU-hour); the same candidates' "
               f"records in the warm batch: {warm_s:.1f} s. Ratio cold/warm: **{cold['wall_s'] / max(warm_s, 1e-9):.2f}**",
               "", "| stage | mean s (cold) |", "|---|---|"]
        md += [f"| {k} | {v} |" for k, v in cold["mean_stage_s"].items()]
        diff = {i: (cold["verdicts"][i], w["verdicts"].get(i)) for i in ids if cold["verdicts"][i] != w["verdicts"].get(i)}
        md += ["", "Verdicts that differ (cold -> warm): " + (", ".join(f"`{i}` {a} -> {b}" for i, (a, b) in diff.items())
                                                              or "none")]
    (out / "gpu_eval_throughput.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--repeat", type=int, default=1, help="evaluate each candidate this many times")
    ap.add_argument("--cold", type=int, default=2, help="candidates evaluated again with the warm slot off (0: none)")
    ap.add_argument("--problems", default="", help="comma-separated problem ids (default: all of the suites')")
    ap.add_argument("--no-profile", action="store_true", help="without the ncu pass (to see what it costs)")
    ap.add_argument("--suite", nargs=2, action="append", metavar=("PROBLEMS", "CANDIDATES"), type=Path)
    args = ap.parse_args()
    from kernlint.dynamic.ncu import find_ncu

    suites = args.suite or [(ROOT / "fixtures" / "eval" / "problems", ROOT / "fixtures" / "eval" / "candidates")]
    probs, cands = batch(suites, args.repeat, set(filter(None, args.problems.split(","))))
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "device": device(), "host": platform.node(),
              "command": "python benchmarks/gpu_eval_throughput.py " + " ".join(sys.argv[1:]), "repeat": args.repeat,
              "ncu": bool(find_ncu()) and not args.no_profile}
    opts = EvalOptions(profile=False) if args.no_profile else EvalOptions()
    report["slots"] = opts.slots_per_gpu
    warm_recs = run(probs, cands, args.out / "warm.jsonl", True, report, "warm", args.out, opts)
    write(args.out, report)
    # the cold part: the last candidates that reached the judge (not those the static checks stopped)
    judged = [c for c in cands if "load-candidate" in warm_recs["stage_names"].get(c.id, [])]
    if args.cold and judged:
        run(probs, judged[-args.cold:], args.out / "cold.jsonl", False, report, "cold", args.out, opts)
        write(args.out, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
