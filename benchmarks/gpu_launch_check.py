"""Run KL111's fixture pairs on the GPU: each planted launch must raise before its kernel runs, each
clean twin must run. Also a kernel declared with ``**meta`` (which KL111 reports at its launches):
does this Triton reject it where it is defined, or at the launch?

Usage: python benchmarks/gpu_launch_check.py OUT.md
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path

import torch
import triton

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ("launch_unknown_keyword", "launch_missing_argument", "launch_autotuned_value", "heuristic_reads_autotuned")


def outcome(call) -> str:
    try:
        call()
        torch.cuda.synchronize()
        return "ran"
    except Exception as exc:  # noqa: BLE001 - what a launch raises is the measurement
        return f"raised {type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"


def fixture(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def meta_kernel_source() -> str:
    return (
        "import triton\nimport triton.language as tl\n\n"
        "@triton.jit\n"
        "def fill(x_ptr, n, **meta):\n"
        "    offs = tl.arange(0, meta['BLOCK'])\n"
        "    tl.store(x_ptr + offs, 1.0, mask=offs < n)\n"
    )


def meta_kernel() -> str:
    path = Path("/tmp") / "kernlint_meta_kernel.py"  # triton.jit reads the kernel's source file
    path.write_text(meta_kernel_source())
    try:
        module = fixture(path)
    except Exception as exc:  # noqa: BLE001
        return f"definition raised {type(exc).__name__}: {exc}"
    x = torch.zeros(128, device="cuda")
    return "definition accepted; launch " + outcome(lambda: module.fill[(1,)](x, 100, BLOCK=128))


def tuned_kernel_with_num_warps() -> str:
    path = Path("/tmp") / "kernlint_tuned_kernel.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n"
        "@triton.autotune(configs=[triton.Config({'BLOCK': 64}), triton.Config({'BLOCK': 128})], key=['n'])\n"
        "@triton.jit\n"
        "def fill(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, 1.0, mask=offs < n)\n"
    )
    module = fixture(path)
    x = torch.zeros(1000, device="cuda")
    return outcome(lambda: module.fill[lambda m: (triton.cdiv(1000, m["BLOCK"]),)](x, 1000, num_warps=8))


def main() -> None:
    out = Path(sys.argv[1])
    rows = []
    for pair in PAIRS:
        for side in ("bad", "good"):
            path = ROOT / "fixtures" / "triton" / f"{pair}_{side}.py"
            rows.append((path.name, "raises" if side == "bad" else "runs",
                         outcome(lambda: fixture(path).run(device="cuda"))))
    try:
        meta = meta_kernel()
    except Exception:  # noqa: BLE001
        meta = traceback.format_exc().splitlines()[-1]
    ok = all((want == "raises") == got.startswith("raised") for _, want, got in rows)
    lines = [
        "# KL111 on the GPU: launches that cannot bind",
        "",
        f"- {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}",
        f"- fixtures as expected: **{'yes' if ok else 'no'}**",
        "",
        "| fixture | expected | outcome |",
        "| --- | --- | --- |",
        *[f"| {name} | {want} | {got} |" for name, want, got in rows],
        "",
        f"- a kernel declared `def fill(x_ptr, n, **meta)`, launched `fill[(1,)](x, 100, BLOCK=128)`: {meta}",
        f"- an autotuned kernel launched with `num_warps=8`: {tuned_kernel_with_num_warps()}",
    ]
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
