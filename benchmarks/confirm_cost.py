"""On a GPU: what `kernlint check --confirm` costs against the raw tool commands, and where it goes.

Usage: python benchmarks/confirm_cost.py OUT_DIR [--repeats 3] [FILE ...]

For each planted file (default: three whose findings memcheck judges) and each repeat, in turn:
- ``raw``: the command a person would type for the same check: ``compute-sanitizer --tool memcheck``
  with PyTorch's caching allocator off, running the file's ``run()``;
- ``confirm``: ``kernlint check FILE --confirm --require-gpu`` (lint, plan, every tool process, verdicts),
  in the default discovery mode (memcheck over every kernel, the interpreter beside it);
- ``judge``: the same with ``--confirm-mode judge`` (only the tools the findings ask for);
- ``static``: the same without ``--confirm`` (kernlint's own share);
- ``tool argv``: the sanitizer command line kernlint ran, run again by itself (what its flags and
  entry point cost compared with the raw command).
With ``--diagnose`` also ``raw --padding 64`` (the raw command with the padding kernlint asks for)
and ``raw kernlint entry`` (the raw command running the file through kernlint's entry runner).
The fastest of the repeats counts (the first run of a file also compiles its kernels). The ratio is
the summed ``confirm`` time over the summed ``raw`` time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILES = ("fixtures/triton/block_ptr_bad.py", "fixtures/triton/layernorm_bad.py",
                 "fixtures/dynamic/oob_no_mask_bad.py")
SELECT = "KL101,KL102,KL103,KL109,KL301,KL302,KL306"


def _timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=900)
    return time.perf_counter() - t0, proc


def raw_memcheck_argv(path: str) -> tuple[list[str], dict[str, str]]:
    folder = str((ROOT / path).parent)
    code = (f"import sys, runpy; sys.path.insert(0, {folder!r}); "
            f"runpy.run_path({str(ROOT / path)!r}, run_name='fixture')['run']()")
    return ["compute-sanitizer", "--tool", "memcheck", sys.executable, "-c", code], {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}


def kernlint_argv(path: str, confirm: bool, mode: str = "discover") -> list[str]:
    ir = ["--ir"] if "/ir/" in path else []
    extra = ["--confirm", "--require-gpu", "--confirm-mode", mode] if confirm else []
    return [sys.executable, "-m", "kernlint", "check", path, *ir, *extra, "--select", SELECT, "--output-format", "json"]


def measure(path: str, repeats: int, diagnose: bool = False) -> dict:
    samples: dict[str, list[float]] = {"raw": [], "confirm": [], "judge": [], "static": [], "tool argv": []}
    steps: list[dict] = []
    for _ in range(repeats):
        argv, env = raw_memcheck_argv(path)
        samples["raw"].append(_timed(argv, env)[0])
        seconds, proc = _timed(kernlint_argv(path, confirm=True))
        samples["confirm"].append(seconds)
        try:
            runs = json.loads(proc.stdout).get("runs", [])
        except json.JSONDecodeError:
            runs = []
        if not steps or seconds <= min(samples["confirm"]):
            steps = runs
        samples["judge"].append(_timed(kernlint_argv(path, confirm=True, mode="judge"))[0])
        samples["static"].append(_timed(kernlint_argv(path, confirm=False))[0])
        for run in runs[:1]:
            samples["tool argv"].append(_timed(run["argv"], {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"})[0])
        if diagnose:
            samples.setdefault("raw --padding 64", []).append(_timed(argv[:3] + ["--padding", "64"] + argv[3:], env)[0])
            entry = [sys.executable, "-m", "kernlint.dynamic.interp_runner", "--no-interpret", str(ROOT / path)]
            samples.setdefault("raw kernlint entry", []).append(_timed(argv[:3] + entry, env)[0])
    best = {k: min(v) for k, v in samples.items() if v}
    return {"file": path, "best": best, "samples": samples, "steps": steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("files", nargs="*", default=list(DEFAULT_FILES))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--diagnose", action="store_true", help="also time the raw command with kernlint's "
                        "padding and with kernlint's entry runner")
    args = parser.parse_intermixed_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for f in args.files:  # the report is rewritten after each file: a run cut short keeps what it measured
        rows.append(measure(f, args.repeats, args.diagnose))
        report = render(rows, args.repeats)
        (args.out_dir / "confirm_cost.md").write_text(report)
        (args.out_dir / "confirm_cost.json").write_text(json.dumps({"rows": rows}, indent=1))
    print(report)


def render(rows: list[dict], repeats: int) -> str:
    total = {k: sum(r["best"].get(k, 0.0) for r in rows) for k in ("raw", "confirm", "judge", "static", "tool argv")}
    ratio = total["confirm"] / total["raw"] if total["raw"] else float("nan")
    judge = total["judge"] / total["raw"] if total["raw"] else float("nan")
    lines = [f"Cost of `--confirm` against the raw memcheck command (fastest of {repeats}): **{ratio:.2f}x** "
             f"(discovery, the default); `--confirm-mode judge`: **{judge:.2f}x**",
             "", "| file | raw memcheck (s) | --confirm (s) | ratio | judge mode (s) | ratio | static only (s) "
             "| kernlint's sanitizer argv alone (s) | --confirm's tool steps (s) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        b = r["best"]
        steps = ", ".join(f"{s['tool']} {s['seconds']:.1f}" for s in r["steps"])
        lines.append(f"| {r['file']} | {b['raw']:.2f} | {b['confirm']:.2f} | {b['confirm'] / b['raw']:.2f} | "
                     f"{b.get('judge', float('nan')):.2f} | {b.get('judge', float('nan')) / b['raw']:.2f} | "
                     f"{b['static']:.2f} | {b.get('tool argv', float('nan')):.2f} | {steps} |")
    extra = sorted({k for r in rows for k in r["best"]} - {"raw", "confirm", "judge", "static", "tool argv"})
    if extra:
        lines += ["", "| file | " + " | ".join(f"{k} (s)" for k in extra) + " |", "| --- |" + " ---: |" * len(extra)]
        lines += [f"| {r['file']} | " + " | ".join(f"{r['best'].get(k, float('nan')):.2f}" for k in extra) + " |"
                  for r in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
