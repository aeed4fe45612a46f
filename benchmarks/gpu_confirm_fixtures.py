"""On a GPU: `kernlint check --confirm --require-gpu` over every Triton and TileLang fixture.

Usage: python benchmarks/gpu_confirm_fixtures.py OUT_DIR [--jobs 4] [--folders fixtures/dynamic ...]
                                                   [--confirm-mode discover|judge]

For every fixture (planted bugs and clean twins under fixtures/triton, fixtures/dynamic and
fixtures/ir, the last with the IR phase on) it runs kernlint's own command line with the dynamic
phase and records each finding's verdict and the measured numbers. A planted bug passes when every finding its ``.expected`` file lists comes back
*confirmed*, and every record a ``fixtures/dynamic`` snapshot's confirmed row stands for has a confirmed finding at its
line (the bugs only a run shows come back as KL401/KL402/KL403 in the default discovery mode, and the
other access of a confirmed race is the run evidence of the finding on it); a
clean twin passes when it has no finding, or only *refuted* ones. What ``--confirm``
costs is measured by ``benchmarks/confirm_cost.py``.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from dynamic.fixture_marks import confirmed_at_mark, expected as marks  # noqa: E402 - the tests' reading of the fixtures
from helpers import expected_findings  # noqa: E402


FOLDERS = ("fixtures/triton", "fixtures/dynamic", "fixtures/ir")
def fixtures(folders=FOLDERS) -> list[Path]:
    """Every fixture; TileLang ones only where TileLang is installed (the IR phase needs it to lower them)."""
    import importlib.util

    has_tilelang = importlib.util.find_spec("tilelang") is not None
    out = []
    for folder in folders:
        out += sorted(p for p in (ROOT / folder).glob("*.py") if not p.name.startswith("_")
                      and (has_tilelang or "import tilelang" not in p.read_text()))
    return out


#: the rules a sanitizer, ncu or the interpreter judges: out-of-bounds, race, needless atomic, sync, bank
#: conflicts, and the IR phase's spill, occupancy, uncoalesced-access and divergent-branch rules
SELECT = ("KL101", "KL102", "KL103", "KL108", "KL109", "KL110", "KL301", "KL302", "KL303", "KL304", "KL305", "KL306",
          "KL307", "KL401", "KL402", "KL403")


def expected(path: Path) -> set[tuple[int, str]]:
    """The planted findings (``NAME.expected``, every phase) of the rules this run confirms."""
    if not path.with_suffix(".expected").exists():
        return set()
    return {(line, code) for line, _, code in expected_findings(path) if code in SELECT}


def mark_seen(kind: str, line: int, findings: list[dict], static_lines: set[int]) -> bool:
    """A marker is met by a confirmed finding at its line (the tests' rule), or by a confirmed finding
    whose run evidence is that record at that line (the load of a load-modify-store race belongs to
    the finding on its store)."""
    if confirmed_at_mark(kind, line, findings, static_lines):
        return True
    return any(e.get("line") == line and e.get("kind") == kind
               for f in findings if f["verdict"] == "confirmed"
               for e in f["evidence"].get("dynamic", []) if isinstance(e, dict))


def confirm(path: Path, mode: str = "discover") -> dict:
    ir = ["--ir"] if path.parent.name == "ir" else []
    argv = [sys.executable, "-m", "kernlint", "check", str(path.relative_to(ROOT)), *ir, "--confirm", "--require-gpu",
            "--confirm-mode", mode, "--select", ",".join(SELECT), "--output-format", "json"]
    t0 = time.perf_counter()
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - t0
    try:
        data = json.loads(r.stdout)
    except json.JSONDecodeError:
        data = {"findings": [], "notices": [], "error": (r.stdout + r.stderr)[-2000:]}
    data["seconds"] = seconds
    data["returncode"] = r.returncode
    return data


#: measurements a row shows first: what the tools measured, before what the static phase predicted
_SHOWN_FIRST = ("measured_", "sanitizer_errors", "max_bytes", "race_bytes", "racing_programs", "barrier_errors")


def numbers(measurements: dict, limit: int = 5) -> str:
    def rank(key: str) -> int:
        if key.startswith(_SHOWN_FIRST) or "bank_conflicts" in key or "local_op" in key or key.endswith(".pct"):
            return 0
        return 2 if key.startswith(("predicted_", "dram__", "gpu__time")) else 1

    keys = sorted(measurements, key=lambda k: (rank(k), k))[:limit]
    return ", ".join(f"{k}={measurements[k]}" for k in keys)


def render(results: dict[str, dict], device: str, software: str, date: str) -> str:
    rows, passed = [], 0
    for name, data in results.items():
        exp, marked = expected(ROOT / name), marks(ROOT / name)
        planted = bool(exp or marked)
        got = {(f["line"], f["rule"]): f for f in data["findings"]}
        if planted:
            static_lines = {line for line, _ in exp}
            ok = (all(key in got and got[key]["verdict"] == "confirmed" for key in exp)
                  and all(mark_seen(kind, line, data["findings"], static_lines) for kind, line in marked))
        else:
            ok = all(f["verdict"] == "refuted" for f in data["findings"])
        passed += ok
        for f in data["findings"] or [None]:
            if f is None:
                rows.append((name, "-", "-", "clean" if not planted else "MISSING", "", ok))
                continue
            tools = sorted({e.get("tool", "?") for e in f["evidence"].get("dynamic", []) if isinstance(e, dict)})
            rows.append((name, f["rule"], f["line"], f["verdict"], f"{'/'.join(tools)} {numbers(f['measurements'])}", ok))
    lines = [
        "# Dynamic phase on the GPU: every fixture through `kernlint check --confirm --require-gpu`",
        "",
        f"- date: {date}",
        f"- device: {device}; {software}",
        f"- fixtures passing: **{passed} / {len(results)}** (planted: every expected finding confirmed; clean: no "
        f"finding or only refuted ones)",
        "",
        "| fixture | rule | line | verdict | evidence (tool, numbers) | pass |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, rule, line, verdict, shown, ok in rows:
        lines.append(f"| {name} | {rule} | {line} | {verdict} | {shown} | {'yes' if ok else 'NO'} |")
    notices = sorted({n for d in results.values() for n in d.get("notices", [])})
    if notices:
        lines += ["", "Notices:", *[f"- {n}" for n in notices]]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--folders", nargs="*", default=list(FOLDERS), help="fixture folders (default: all three)")
    parser.add_argument("--confirm-mode", default="discover", choices=("discover", "judge"))
    parser.add_argument("--from-json", type=Path, help="render the table of an earlier run's JSON again (no GPU)")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        report = render(saved["results"], saved.get("device", "?"), saved.get("software", "?"), saved.get("date", "?"))
        (args.out_dir / "gpu_confirm_fixtures.md").write_text(report)
        print(report)
        return
    files = fixtures(args.folders)
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        results = {str(p.relative_to(ROOT)): d
                   for p, d in zip(files, pool.map(lambda p: confirm(p, args.confirm_mode), files))}
    device = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                            capture_output=True, text=True).stdout.strip()
    import torch
    import triton

    software = (f"torch {torch.__version__}, triton {triton.__version__}, Python {platform.python_version()}; "
                f"--confirm-mode {args.confirm_mode}")
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    report = render(results, device, software, date)
    print(report)
    (args.out_dir / "gpu_confirm_fixtures.md").write_text(report)
    errors = {name: d["error"] for name, d in results.items() if d.get("error")}
    (args.out_dir / "gpu_confirm_fixtures.json").write_text(json.dumps(
        {"results": results, "errors": errors, "device": device, "software": software, "date": date}, indent=1))


if __name__ == "__main__":
    main()
