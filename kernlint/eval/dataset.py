"""Export verified candidates (passed, optionally all correct ones) with code and metrics."""

from __future__ import annotations

import json
from pathlib import Path

from kernlint.eval.problems import Candidate


def export(recs: list[dict], candidates: dict[str, Candidate], out_path: str | Path,
           include_correct: bool = False) -> int:
    keep = {"passed"} | ({"structurally-flawed", "slower-than-baseline", "low-occupancy"} if include_correct else set())
    n = 0
    with open(out_path, "w") as fh:
        for r in recs:
            c = candidates.get(r["id"])
            if r.get("verdict") not in keep or c is None or c.sha != r.get("candidate_sha"):
                continue
            fh.write(json.dumps({
                "id": r["id"], "problem": r["problem"], "code": c.source, "verdict": r["verdict"],
                "speedup": r.get("speedup", {}), "timings": r.get("timings", {}),
                "metrics": r.get("metrics", {}), "correctness": r.get("correctness", {}),
                "findings": r.get("findings", []), "device": r.get("device"),
            }, default=str) + "\n")
            n += 1
    return n
