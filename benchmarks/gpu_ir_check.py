"""Predicted (IR phase) vs measured (Nsight Compute) bank conflicts, registers and occupancy.

Run on a machine with a CUDA GPU, Triton and ``ncu`` on PATH (no network needed)::

    python benchmarks/gpu_ir_check.py benchmarks/results/ir_gpu_check.md

It (1) compiles each kernel below with kernlint's IR pipeline for the GPU's own architecture and
predicts, per kernel, the excess shared-memory wavefronts of loads (``ld.shared``), ``ldmatrix``
and stores, the registers per thread and the occupancy limiter; (2) runs itself under
``ncu --clock-control none --csv`` in launch mode (each kernel launched once) and reads
``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,ldsm,st}.sum``, the shared wavefronts,
``launch__registers_per_thread`` and ``launch__occupancy_limit_*``; (3) writes a markdown table
to the path given. A kernel that fails to compile or launch gets a row saying so; the script
never stops on one kernel.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import os
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

try:
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl

    HAVE_GLUON = True
except ImportError:  # pragma: no cover - old Triton
    HAVE_GLUON = False

# ------------------------------------------------------------------------------------------
# kernels (names start with kl_ so ncu's filter finds them)


@triton.jit
def kl_transpose_f32(x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(y_ptr + rn[:, None] * BM + rm[None, :], tl.trans(x))


@triton.jit
def kl_transpose_f16(x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(y_ptr + rn[:, None] * BM + rm[None, :], tl.trans(x))


@triton.jit
def kl_colsum(x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(y_ptr + rn, tl.sum(x, axis=0))


@triton.jit
def kl_rowsum(x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(y_ptr + rm, tl.sum(x, axis=1))


@triton.jit
def kl_permute3(x_ptr, y_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    ra = tl.arange(0, A)
    rb = tl.arange(0, B)
    rc = tl.arange(0, C)
    x = tl.load(x_ptr + ra[:, None, None] * B * C + rb[None, :, None] * C + rc[None, None, :])
    y = tl.permute(x, (2, 1, 0))
    tl.store(y_ptr + rc[:, None, None] * B * A + rb[None, :, None] * A + ra[None, None, :], y)


@triton.jit
def kl_dot_f16(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


if HAVE_GLUON:

    @gluon.jit
    def _kl_stage(x_ptr, y_ptr, BM: gl.constexpr, BN: gl.constexpr, VEC: gl.constexpr, PHASE: gl.constexpr,
                  MAXPHASE: gl.constexpr, ROW_STORE: gl.constexpr):
        rows: gl.constexpr = gl.BlockedLayout([1, BN], [32, 1], [4, 1], [1, 0])
        cols: gl.constexpr = gl.BlockedLayout([BM // 128, 1], [1, 32], [4, 1], [1, 0])
        rm = gl.arange(0, BM, layout=gl.SliceLayout(1, cols))
        rn = gl.arange(0, BN, layout=gl.SliceLayout(0, cols))
        x = gl.load(x_ptr + rm[:, None] * BN + rn[None, :])
        smem = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [BM, BN],
                                         gl.SwizzledSharedLayout(VEC, PHASE, MAXPHASE, [1, 0]))
        if ROW_STORE:
            smem.store(gl.convert_layout(x, rows))
            y = smem.load(cols)
        else:
            smem.store(x)
            y = gl.convert_layout(smem.load(rows), cols)
        gl.store(y_ptr + rm[:, None] * BN + rn[None, :], y)

    @gluon.jit
    def kl_stage_rows_unswizzled(x_ptr, y_ptr, BM: gl.constexpr, BN: gl.constexpr):
        _kl_stage(x_ptr, y_ptr, BM, BN, 1, 1, 1, True)

    @gluon.jit
    def kl_stage_rows_swizzled(x_ptr, y_ptr, BM: gl.constexpr, BN: gl.constexpr):
        _kl_stage(x_ptr, y_ptr, BM, BN, 4, 1, 8, True)

    @gluon.jit
    def kl_load_rows_unswizzled(x_ptr, y_ptr, BM: gl.constexpr, BN: gl.constexpr):
        _kl_stage(x_ptr, y_ptr, BM, BN, 1, 1, 1, False)

    @gluon.jit
    def kl_load_rows_half_swizzled(x_ptr, y_ptr, BM: gl.constexpr, BN: gl.constexpr):
        _kl_stage(x_ptr, y_ptr, BM, BN, 1, 1, 4, False)


# name -> (function, dtype, constexprs, num_warps, grid, tensor sizes (elements))
def cases():
    c = {
        "kl_transpose_f32": (kl_transpose_f32, "fp32", {"BM": 64, "BN": 64}, 4, 8, (4096, 4096)),
        "kl_transpose_f16": (kl_transpose_f16, "fp16", {"BM": 64, "BN": 64}, 4, 8, (4096, 4096)),
        "kl_colsum": (kl_colsum, "fp32", {"BM": 64, "BN": 64}, 4, 8, (4096, 64)),
        "kl_rowsum": (kl_rowsum, "fp32", {"BM": 64, "BN": 64}, 4, 8, (4096, 64)),
        "kl_permute3": (kl_permute3, "fp32", {"A": 8, "B": 8, "C": 16}, 4, 8, (1024, 1024)),
        "kl_dot_f16": (kl_dot_f16, "fp16", {"BM": 64, "BN": 64, "BK": 32}, 4, 8, (2048, 2048, 4096)),
    }
    if HAVE_GLUON:
        for name in ("kl_stage_rows_unswizzled", "kl_stage_rows_swizzled", "kl_load_rows_unswizzled",
                     "kl_load_rows_half_swizzled"):
            c[name] = (globals()[name], "fp32", {"BM": 128, "BN": 32}, 4, 8, (4096, 4096))
    return c


# ------------------------------------------------------------------------------------------
# predictions


def predict(name, fn, dtype, constexprs, num_warps, grid, capability, workdir):
    from kernlint.ir import lanes, ptx
    from kernlint.ir.compile import compile_job
    from kernlint.ir.occupancy import theoretical_occupancy

    jit = fn
    names = list(jit.arg_names)
    signature = {p: ("constexpr" if p in constexprs else f"*{dtype}") for p in names}
    if name == "kl_dot_f16":
        signature["c_ptr"] = "*fp32"
    spec = {"signature": signature, "num_warps": num_warps, "num_stages": 3,
            "divisible": [p for p in names if p not in constexprs]}
    rec = compile_job({"path": __file__, "kernel": name, "spec": spec, "constexprs": constexprs,
                       "capability": capability, "key": name})
    if not rec.get("ok"):
        return {"error": rec.get("error", "compile failed")}
    module = ptx.parse(rec["asm"]["ptx"])
    ev = lanes.evaluate(module, num_warps)[0]
    excess = {"ld": 0, "ldsm": 0, "st": 0}
    unknown = 0
    for acc in ev.accesses:
        if acc.space != "shared" or acc.kind == "cp.async":
            continue
        if acc.addresses is None:
            unknown += 1
            continue
        total, ideal, _ = lanes.shared_wavefronts(acc.addresses, acc.active, acc.bytes_per_thread, acc.kind)
        key = {"ld": "ld", "ldmatrix": "ldsm", "st": "st", "stmatrix": "st"}.get(acc.kind)
        if key:
            excess[key] += total - ideal
    res = rec.get("resources") or {}
    occ = theoretical_occupancy(capability, num_warps, res.get("registers", 0), res.get("shared_bytes", 0))
    (workdir / f"{name}.ptx").write_text(rec["asm"]["ptx"])
    return {
        "ld": excess["ld"] * grid, "ldsm": excess["ldsm"] * grid, "st": excess["st"] * grid,
        "unknown_shared_insts": unknown, "registers": res.get("registers"),
        "shared": res.get("shared_bytes"), "occupancy": occ.occupancy, "limiter": occ.limiter,
        "blocks": {"registers": occ.blocks_by_registers, "shared_mem": occ.blocks_by_shared,
                   "warps": occ.blocks_by_warps, "blocks": occ.blocks_by_block_limit},
    }


# ------------------------------------------------------------------------------------------
# launching (under ncu)


def launch_all() -> None:
    import torch

    torch.manual_seed(0)
    dt = {"fp32": torch.float32, "fp16": torch.float16}
    for name, (fn, dtype, constexprs, num_warps, grid, sizes) in cases().items():
        try:
            tensors = [torch.randn(n, device="cuda", dtype=dt[dtype]) for n in sizes[:2]]
            out = torch.empty(sizes[-1], device="cuda",
                              dtype=torch.float32 if name == "kl_dot_f16" else dt[dtype])
            args = tensors[: len(fn.arg_names) - len(constexprs) - 1] + [out]
            fn[(grid,)](*args, **constexprs, num_warps=num_warps)
            torch.cuda.synchronize()
            print(f"launched {name}", flush=True)
        except Exception:  # noqa: BLE001
            print(f"FAILED {name}\n{traceback.format_exc()}", flush=True)


METRICS = [
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
]


def run_ncu(names: list[str]) -> tuple[dict[str, dict[str, str]], str]:
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    cmd = [ncu, "--clock-control", "none", "--csv", "--metrics", ",".join(METRICS),
           "--kernel-name", "regex:^(" + "|".join(names) + ")", sys.executable, __file__, "--launch"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    text = proc.stdout
    start = text.find('"ID"')
    measured: dict[str, dict[str, str]] = {}
    if start >= 0:
        for row in csv.DictReader(io.StringIO(text[start:])):
            kname = row.get("Kernel Name", "")
            base = next((n for n in names if kname.startswith(n)), None)
            if base:
                measured.setdefault(base, {})[row.get("Metric Name", "")] = row.get("Metric Value", "")
    log = " ".join(cmd) + "\n" + proc.stdout[-3000:] + "\n" + proc.stderr[-3000:]
    return measured, log


def _num(v):
    try:
        return float(str(v).replace(",", ""))
    except (TypeError, ValueError):
        return None


def _limiter(m: dict[str, str]) -> str:
    lims = {k.replace("launch__occupancy_limit_", ""): _num(v) for k, v in m.items()
            if k.startswith("launch__occupancy_limit_")}
    lims = {k: v for k, v in lims.items() if v is not None}
    if not lims:
        return "n/a"
    low = min(lims.values())
    return "/".join(sorted(k for k, v in lims.items() if v == low)) + f" ({int(low)} blocks)"


def _ncu_theoretical(m: dict[str, str], num_warps: int, capability: int) -> str:
    from kernlint.ir.occupancy import limits_for

    lims = [_num(v) for k, v in m.items() if k.startswith("launch__occupancy_limit_")]
    lims = [v for v in lims if v is not None]
    if not lims:
        return "n/a"
    return f"{100 * min(lims) * num_warps / limits_for(capability).max_warps_per_sm:.1f}%"


def _agree(pred, meas) -> str:
    if pred is None or meas is None:
        return "n/a"
    if meas == 0:
        return "yes" if pred == 0 else "no"
    return "yes" if abs(pred - meas) <= 0.10 * meas else f"no ({(pred - meas) / meas:+.0%})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("output", nargs="?", default="ir_gpu_check.md")
    ap.add_argument("--launch", action="store_true", help="(internal) launch every kernel once")
    ap.add_argument("--predict-only", metavar="ARCH", help="print the predictions for ARCH (e.g. sm_90), no GPU")
    args = ap.parse_args()
    if args.launch:
        launch_all()
        return
    if args.predict_only:
        from kernlint.ir.occupancy import parse_arch

        out = Path(args.output).resolve().parent
        for name, (fn, dtype, constexprs, num_warps, grid, _s) in cases().items():
            print(name, predict(name, fn, dtype, constexprs, num_warps, grid, parse_arch(args.predict_only), out))
        return
    import torch

    major, minor = torch.cuda.get_device_capability()
    capability = major * 10 + minor
    workdir = Path(args.output).resolve().parent / "ir_gpu_check_ptx"
    workdir.mkdir(parents=True, exist_ok=True)
    preds = {}
    for name, (fn, dtype, constexprs, num_warps, grid, _sizes) in cases().items():
        try:
            preds[name] = predict(name, fn, dtype, constexprs, num_warps, grid, capability, workdir)
        except Exception as e:  # noqa: BLE001
            preds[name] = {"error": f"{type(e).__name__}: {e}"}
    measured, log = run_ncu(list(cases()))
    rows = []
    for name, case in cases().items():
        p, m = preds[name], measured.get(name, {})
        if "error" in p:
            rows.append(f"| {name} | prediction failed: {p['error'][:80]} |" + " |" * 10)
            continue
        mld = _num(m.get(METRICS[0]))
        mst = _num(m.get(METRICS[1]))
        mldsm = _num(m.get(METRICS[2]))
        rows.append(
            f"| {name} | {p['ld']} / {m.get(METRICS[0], 'n/a')} ({_agree(p['ld'], mld)}) "
            f"| {p['ldsm']} / {m.get(METRICS[2], 'n/a')} ({_agree(p['ldsm'], mldsm)}) "
            f"| {p['st']} / {m.get(METRICS[1], 'n/a')} ({_agree(p['st'], mst)}) "
            f"| {m.get(METRICS[3], 'n/a')} / {m.get(METRICS[4], 'n/a')} "
            f"| {p['registers']} / {m.get(METRICS[5], 'n/a')} "
            f"| {p['limiter']} ({p['blocks']}) | {_limiter(m)} "
            f"| {100 * p['occupancy']:.1f}% / {_ncu_theoretical(m, case[3], capability)} "
            f"| {m.get(METRICS[10], 'n/a')} | {p['unknown_shared_insts']} |"
        )
    device = torch.cuda.get_device_name()
    text = "\n".join([
        "# IR phase predictions vs Nsight Compute",
        "",
        f"- date: {datetime.date.today().isoformat()}; device: {device} (sm_{capability}); "
        f"triton {triton.__version__}",
        "- bank conflicts are totals over the grid (predicted excess wavefronts per block x blocks) "
        "vs ncu's l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,ldsm,st}.sum; "
        "'yes' = within 10%.",
        "",
        "| kernel | ld conflicts pred/ncu | ldsm conflicts pred/ncu | st conflicts pred/ncu "
        "| shared wavefronts ld/st (ncu) | registers pred/ncu | limiter pred (blocks by resource) "
        "| limiter ncu | theoretical occupancy pred/ncu | achieved occupancy (ncu) | shared insts not evaluated |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "<details><summary>ncu command and output tail</summary>",
        "",
        "```",
        log,
        "```",
        "</details>",
        "",
    ])
    Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    main()
