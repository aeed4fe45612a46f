"""On a GPU: `kernlint check --confirm --require-gpu` over every Triton and TileLang fixture.

Usage: python benchmarks/gpu_confirm_fixtures.py OUT_DIR [--jobs 4]

For every fixture (planted bugs and clean twins under fixtures/triton, fixtures/dynamic and
fixtures/ir, the last with the IR phase on) it runs kernlint's own command line with the dynamic
phase and records each finding's verdict and the measured numbers. A planted bug passes when every finding its ``.expected`` file lists comes back
*confirmed*; a clean twin passes when it has no finding, or only *refuted* ones. What ``--confirm``
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


def fixtures() -> list[Path]:
    """Every fixture; TileLang ones only where TileLang is installed (the IR phase needs it to lower them)."""
    import importlib.util

    has_tilelang = importlib.util.find_spec("tilelang") is not None
    out = []
    for folder in ("fixtures/triton", "fixtures/dynamic", "fixtures/ir"):
        out += sorted(p for p in (ROOT / folder).glob("*.py") if not p.name.startswith("_")
                      and (has_tilelang or "import tilelang" not in p.read_text()))
    return out


#: the rules a sanitizer or ncu judges: out-of-bounds, race, sync, bank conflicts, and the IR phase's
#: spill, occupancy, uncoalesced-access and divergent-branch rules
SELECT = ("KL101", "KL102", "KL103", "KL109", "KL301", "KL302", "KL303", "KL304", "KL305", "KL306", "KL307")


def expected(path: Path) -> set[tuple[int, str]]:
    """The planted findings of the rules this run confirms (source phase: ``.expected``; IR phase:
    ``.expected.json``)."""
    rows = set()
    exp = path.with_suffix(".expected")
    if exp.exists():
        for line in exp.read_text().splitlines():
            if line.strip():
                pos, code = line.split()
                rows.add((int(pos.split(":")[0]), code))
    ir_exp = path.with_suffix(".expected.json")
    if ir_exp.exists():
        rows |= {(e["line"], e["rule"]) for e in json.loads(ir_exp.read_text())}
    return {(line, code) for line, code in rows if code in SELECT}


def confirm(path: Path) -> dict:
    ir = ["--ir"] if path.parent.name == "ir" else []
    argv = [sys.executable, "-m", "kernlint", "check", str(path.relative_to(ROOT)), *ir, "--confirm", "--require-gpu",
            "--select", ",".join(SELECT), "--output-format", "json"]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--jobs", type=int, default=4)
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    files = fixtures()
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip(files, pool.map(confirm, files)))

    rows, passed = [], 0
    for path, data in results.items():
        exp = expected(path)
        planted = bool(exp)
        got = {(f["line"], f["rule"]): f for f in data["findings"]}
        if planted:
            ok = all(key in got and got[key]["verdict"] == "confirmed" for key in exp)
        else:
            ok = all(f["verdict"] == "refuted" for f in data["findings"])
        passed += ok
        for f in data["findings"] or [None]:
            if f is None:
                rows.append((path, "-", "-", "clean" if not planted else "MISSING", "", ok))
                continue
            numbers = ", ".join(f"{k}={v}" for k, v in sorted(f["measurements"].items())[:5])
            tools = sorted({e.get("tool", "?") for e in f["evidence"].get("dynamic", []) if isinstance(e, dict)})
            rows.append((path, f["rule"], f["line"], f["verdict"], f"{'/'.join(tools)} {numbers}", ok))

    device = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                            capture_output=True, text=True).stdout.strip()
    import torch
    import triton

    lines = [
        "# Dynamic phase on the GPU: every fixture through `kernlint check --confirm --require-gpu`",
        "",
        f"- date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- device: {device}; torch {torch.__version__}, triton {triton.__version__}, Python {platform.python_version()}",
        f"- fixtures passing: **{passed} / {len(files)}** (planted: every expected finding confirmed; clean: no "
        f"finding or only refuted ones)",
        "",
        "| fixture | rule | line | verdict | evidence (tool, numbers) | pass |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for path, rule, line, verdict, numbers, ok in rows:
        lines.append(f"| {path.relative_to(ROOT)} | {rule} | {line} | {verdict} | {numbers} | {'yes' if ok else 'NO'} |")
    notices = sorted({n for d in results.values() for n in d.get("notices", [])})
    errors = {str(p.relative_to(ROOT)): d["error"] for p, d in results.items() if d.get("error")}
    if notices:
        lines += ["", "Notices:", *[f"- {n}" for n in notices]]
    report = "\n".join(lines) + "\n"
    print(report)
    (args.out_dir / "gpu_confirm_fixtures.md").write_text(report)
    (args.out_dir / "gpu_confirm_fixtures.json").write_text(json.dumps(
        {"results": {str(p.relative_to(ROOT)): d for p, d in results.items()}, "errors": errors}, indent=1))


if __name__ == "__main__":
    main()
