"""IR phase cost: cold vs bare ``triton.compile`` of the same specializations, and warm vs cold.

    python benchmarks/ir_bench.py [PATHS...] [-o benchmarks/results/ir_bench.md] [--repeat 3]

- *bare*: one fresh Python process imports each module and calls ``triton.compile`` for every
  specialization the IR phase would compile, sequentially, with an empty Triton cache; timed from
  the first compile to the last (imports excluded, so the baseline is the compiler alone).
- *cold*: ``run_ir_phase`` with an empty kernlint cache (workers, compile, parse, rules), with
  ``--jobs 1`` and with one worker per core.
- *warm*: ``run_ir_phase`` again with the cache filled.
Each measurement is the median of ``--repeat`` runs. Default corpus: ``fixtures/ir``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "ir"))
import conftest  # noqa: E402,F401  - maps kernlint.rules in a plain checkout

from kernlint.ir.phase import _collect, run_ir_phase  # noqa: E402
from kernlint.ir.discovery import helper_functions  # noqa: E402
from kernlint.ir.specialize import specializations_for  # noqa: E402
from kernlint.model import Frontend  # noqa: E402

BARE = r'''
import json, os, sys, time, tempfile
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
import warnings; warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[2])
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from kernlint.ir.loader import load_kernel
jobs = json.load(open(sys.argv[1]))
fns = [load_kernel(j["path"], j["kernel"]) for j in jobs]
t0 = time.perf_counter()
for fn, j in zip(fns, jobs):
    names = list(fn.arg_names)
    sig = {p: j["signature"].get(p, "i32") for p in names}
    consts = {(names.index(k),): v for k, v in j["constexprs"].items()}
    attrs = {(names.index(p),): [["tt.divisibility", 16]] for p in j["divisible"] if p in names}
    src = ASTSource(fn, sig, consts, attrs)
    if type(fn).__name__ == "GluonJITFunction":
        from triton.experimental.gluon import GluonASTSource
        src = GluonASTSource(fn, sig, consts, attrs)
    try:
        triton.compile(src, target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": j["num_warps"], "num_stages": j["num_stages"]})
    except Exception:
        pass
print(time.perf_counter() - t0)
'''


def bare_jobs(paths: list[str]) -> list[dict]:
    jobs = []
    modules: dict = {}
    for path, kernels in _collect(paths, modules).items():
        info = modules[path]
        helpers = helper_functions(info)
        for k in kernels:
            if k.name in helpers or k.frontend is not Frontend.TRITON:
                continue
            for s in specializations_for(k, info)[0]:
                jobs.append({"path": path, "kernel": k.name, "signature": s.signature,
                             "constexprs": s.constexprs, "divisible": list(s.divisible),
                             "num_warps": s.num_warps, "num_stages": s.num_stages})
    return jobs


def time_bare(jobs: list[dict]) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(jobs, f)
    try:
        out = subprocess.run([sys.executable, "-c", BARE, f.name, str(ROOT)], capture_output=True, text=True,
                             check=True, env={**os.environ, "PYTHONPATH": str(ROOT / "tests" / "ir")})
        return float(out.stdout.strip().splitlines()[-1])
    finally:
        os.unlink(f.name)


def time_phase(paths: list[str], cache: Path, jobs: int) -> float:
    t0 = time.perf_counter()
    run_ir_phase(paths, cache_dir=cache, jobs=jobs)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*", default=[str(ROOT / "fixtures" / "ir")])
    ap.add_argument("-o", "--output", default=str(ROOT / "benchmarks" / "results" / "ir_bench.md"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    jobs = bare_jobs(args.paths)
    cores = os.cpu_count() or 1
    bare, cold1, coldn, warm = [], [], [], []
    for _ in range(args.repeat):
        bare.append(time_bare(jobs))
        for n, bucket in ((1, cold1), (0, coldn)):
            cache = Path(tempfile.mkdtemp(prefix="kernlint-bench-"))
            bucket.append(time_phase(args.paths, cache, n))
            if n == 0:
                warm.append(min(time_phase(args.paths, cache, 0) for _ in range(3)))
            shutil.rmtree(cache, ignore_errors=True)
    med = statistics.median
    b, c1, cn, w = med(bare), med(cold1), med(coldn), med(warm)
    import triton

    rel = [os.path.relpath(p, ROOT) for p in args.paths]
    lines = [
        "# IR phase benchmark",
        "",
        f"- corpus: {', '.join(rel)} ({len(jobs)} specializations); target sm_90; "
        f"triton {triton.__version__}; {cores} cores; median of {args.repeat} runs",
        "",
        "| measurement | seconds | ratio |",
        "|---|---|---|",
        f"| bare triton.compile, sequential (compiler only) | {b:.2f} | 1.00 |",
        f"| IR phase cold, 1 worker | {c1:.2f} | {c1 / b:.2f}x bare |",
        f"| IR phase cold, {cores} workers | {cn:.2f} | {cn / b:.2f}x bare |",
        f"| IR phase warm (cache filled) | {w:.3f} | cold/warm = {cn / w:.0f}x |",
        "",
        "Cold includes worker start-up, loading the modules, compiling, parsing PTX/TTIR and running "
        "every IR rule; warm reads the cached findings (no worker, no import of the user's modules).",
        "",
    ]
    Path(args.output).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
