"""The fault batch benchmark in small: every injected fault once among honest candidates, the
command line killed with SIGKILL mid-batch and run again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import expected_records

ROOT = Path(__file__).resolve().parents[2]


def test_a_killed_batch_with_faults_resumes_with_one_classified_record_each(tmp_path):
    faults = len(expected_records(ROOT / "fixtures" / "eval" / "faults"))
    n = 2 * faults
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "fault_batch.py"), "--out", str(tmp_path),
                           "--candidates", str(n), "--fault-share", "0.5", "--kill-at", "0.25", "--timeout", "30"],
                          capture_output=True, text=True, timeout=1200)
    report = json.loads((tmp_path / "fault_batch.json").read_text())
    assert proc.returncode == 0, (report["not_as_expected"], report["runs"])
    first, second = report["runs"]
    assert first["run"] == "first, killed" and 0 < first["records_at_end"] < n
    assert second["exit"] == 0 and report["records"] == n
    assert report["faults"] == faults and report["as_expected"] == n
    assert not report["missing"] and not report["duplicates"] and report["executors_left"] == 0
    assert set(report["per_source"]) >= {f"vector_add/{p.stem}" for p in (ROOT / "fixtures" / "eval" / "faults" / "vector_add").glob("*.py")}
