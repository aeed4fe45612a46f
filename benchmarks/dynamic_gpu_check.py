"""Run the dynamic fixtures under compute-sanitizer and ncu on a GPU; keep the raw outputs.

    python benchmarks/dynamic_gpu_check.py OUT_DIR [--dry-run] [--fixtures NAME ...] [--repeat N]

(a) runs every fixture of ``fixtures/dynamic/`` (planted bugs and clean twins) natively under
    compute-sanitizer memcheck (PYTORCH_NO_CUDA_MEMORY_CACHING=1, with and without --padding),
    racecheck, synccheck, initcheck, and ncu; and under the interpreter checker;
(b) writes the RAW tool outputs into OUT_DIR as one ``dynamic_raw_outputs.tar.gz`` (plus
    ``dynamic_results.json`` and ``dynamic_results.md``): at most 8 flat files, for committing
    as parser test data under tests/data/dynamic/;
(c) times the batched ``--confirm``-style plan (one process per tool, kernel filter, parsing
    included) against the raw commands a person would type for the same checks, and prints a
    table: fixture, tool, expected, verdict, numbers, and the overhead ratio.

``--dry-run`` prints the commands without running anything (works without a GPU).
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from kernlint.dynamic import ncu, sanitizer  # noqa: E402
from kernlint.dynamic.interp_check import run_interpreted  # noqa: E402
from dynamic.fixture_marks import expected  # noqa: E402 - the records each fixture's snapshot asks for

FIXTURES = ROOT / "fixtures" / "dynamic"
KERNEL = re.compile(r"^def (\w+)\(", re.M)
NCU_METRICS = ncu.metrics_for(["bank-conflict", "divergence", "occupancy", "spill"])
SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def fixtures(selected: list[str]) -> list[Path]:
    files = sorted(p for p in FIXTURES.glob("*.py") if not p.name.startswith("_"))
    return [p for p in files if not selected or p.stem in selected]


def kernels(path: Path) -> list[str]:
    text = path.read_text()
    return [m.group(1) for m in KERNEL.finditer(text) if "@triton.jit\n" + m.group(0) in text]


def native(path: Path) -> list[str]:
    return [sys.executable, str(path)]


def batched_commands(path: Path) -> list[tuple[str, list[str], dict]]:
    """What ``kernlint confirm`` runs: one process per tool, limited to the file's kernels."""
    ks = kernels(path)
    out = []
    for tool in sanitizer.TOOLS:
        argv, env = sanitizer.sanitizer_command(tool, native(path), kernels=ks,
                                                padding=64 if tool == "memcheck" else None)
        out.append((tool, argv, env))
    out.append(("ncu", ncu.ncu_command(native(path), NCU_METRICS, kernels=ks), {}))
    return out


def raw_commands(path: Path) -> list[tuple[str, list[str], dict]]:
    """What a person would type for the same checks."""
    out = [(t, ["compute-sanitizer", "--tool", t, *native(path)],
            {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"} if t == "memcheck" else {}) for t in sanitizer.TOOLS]
    out.append(("ncu", ["ncu", "--csv", "--metrics", ",".join(NCU_METRICS), *native(path)], {}))
    return out


def run(argv: list[str], env: dict, timeout: float = 600) -> tuple[int | None, str, float]:
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout,
                           cwd=str(FIXTURES))
        return p.returncode, (p.stdout or "") + (p.stderr or ""), time.perf_counter() - t0
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, time.perf_counter() - t0


def verdict_of(tool: str, text: str, exp: set) -> dict:
    if tool == "ncu":
        rows = ncu.parse_csv(text)
        return {"profiled": len(rows), "metrics": {r.kernel: {k: v for k, v in r.metrics.items()
                                                              if isinstance(v, float)} for r in rows}}
    rep = sanitizer.parse_report(text, tool)
    lines = sorted({(r.kind, r.line) for r in rep.records})
    return {"completed": rep.completed, "errors": rep.error_summary, "records": lines,
            "failures": [r.message for r in rep.records if r.kind == "tool-failure"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    ap.add_argument("--fixtures", nargs="*", default=[], help="fixture stems (default: all)")
    ap.add_argument("--repeat", type=int, default=1, help="timing repetitions (the minimum is kept)")
    ap.add_argument("--timeout", type=float, default=600)
    ns = ap.parse_args(argv)
    files = fixtures(ns.fixtures)
    if ns.dry_run:
        for path in files:
            for label, cmds in (("batched", batched_commands(path)), ("raw", raw_commands(path))):
                for tool, a, env in cmds:
                    prefix = " ".join(f"{k}={v}" for k, v in env.items())
                    print(f"{label:8} {path.stem:28} {tool:10} {prefix} {' '.join(a)}".replace("  ", " "))
        return 0
    if not (shutil.which("compute-sanitizer") and shutil.which("ncu")):
        print("compute-sanitizer and ncu must be on PATH (use --dry-run to see the commands)", file=sys.stderr)
        return 2
    out_dir = Path(ns.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    raw: dict[str, str] = {}
    rows = []
    batched_total = raw_total = 0.0
    for tool_help in (["compute-sanitizer", "--version"], ["compute-sanitizer", "--help"], ["ncu", "--version"],
                      ["nvidia-smi", "-L"]):
        raw["env_" + "_".join(tool_help).replace("-", "") + ".txt"] = run(tool_help, {})[1]
    for path in files:
        exp = expected(path)
        interp = run_interpreted(path)
        rows.append({"fixture": path.stem, "tool": "interpreter", "expected": sorted(exp),
                     "seen": sorted({(r.kind, r.line) for r in interp.records}), "seconds": interp.seconds})
        for (tool, b_argv, b_env), (_, r_argv, r_env) in zip(batched_commands(path), raw_commands(path)):
            b_best = r_best = float("inf")
            for _ in range(max(1, ns.repeat)):
                rc, b_out, b_s = run(b_argv, b_env, ns.timeout)
                t0 = time.perf_counter()
                judged = verdict_of(tool, b_out, exp)  # parsing is part of --confirm's cost
                b_s += time.perf_counter() - t0
                rc_raw, r_out, r_s = run(r_argv, r_env, ns.timeout)
                b_best, r_best = min(b_best, b_s), min(r_best, r_s)
            batched_total += b_best
            raw_total += r_best
            raw[SAFE_NAME.sub("_", f"{path.stem}.{tool}.batched.txt")] = b_out
            raw[SAFE_NAME.sub("_", f"{path.stem}.{tool}.raw.txt")] = r_out
            rows.append({"fixture": path.stem, "tool": tool, "expected": sorted(exp), "result": judged,
                         "returncode": rc, "batched_s": round(b_best, 3), "raw_s": round(r_best, 3)})
        # memcheck without --padding, and XML output, for the parsers' test data
        for label, extra in (("memcheck_nopad", []), ("memcheck_xml", ["--xml", "yes"])):
            a = ["compute-sanitizer", "--tool", "memcheck", *extra, *native(path)]
            raw[f"{path.stem}.{label}.txt"] = run(a, {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, ns.timeout)[1]
    ratio = batched_total / raw_total if raw_total else float("nan")
    device = raw.get("env_nvidiasmi_L.txt", "").strip().splitlines()[:1]
    meta = {"date": datetime.date.today().isoformat(), "device": device[0] if device else "?",
            "python": platform.python_version(), "batched_s": round(batched_total, 3),
            "raw_s": round(raw_total, 3), "ratio": round(ratio, 3)}
    try:
        import torch
        import triton

        meta.update(torch=torch.__version__, triton=triton.__version__)
    except Exception:
        pass
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in sorted(raw.items()):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (out_dir / "dynamic_raw_outputs.tar.gz").write_bytes(buf.getvalue())
    (out_dir / "dynamic_results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1, default=list))
    lines = [f"# dynamic phase on {meta['device']} ({meta['date']})", "",
             f"batched (--confirm style) {meta['batched_s']} s vs raw tool commands {meta['raw_s']} s: "
             f"ratio {meta['ratio']}", "", "| fixture | tool | expected | result | batched s | raw s |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        res = r.get("seen", r.get("result"))
        lines.append(f"| {r['fixture']} | {r['tool']} | {r['expected']} | {json.dumps(res, default=list)[:160]} "
                     f"| {r.get('batched_s', r.get('seconds'))} | {r.get('raw_s', '')} |")
    (out_dir / "dynamic_results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
