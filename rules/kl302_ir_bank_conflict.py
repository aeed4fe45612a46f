"""KL302: shared-memory accesses predicted to conflict on banks (excess wavefronts)."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from kernlint.ir.artifacts import CompiledKernel
from kernlint.ir.rulebase import IRRule
from kernlint.model import Finding, Level
from kernlint.rule import Confirmation

BAD_GLUON = '''from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def roundtrip(x_ptr, y_ptr, BM: gl.constexpr, BN: gl.constexpr):
    rows: gl.constexpr = gl.BlockedLayout([1, BN], [32, 1], [4, 1], [1, 0])
    cols: gl.constexpr = gl.BlockedLayout([BM // 32, 1], [1, 32], [1, 4], [0, 1])
    rm = gl.arange(0, BM, layout=gl.SliceLayout(1, rows))
    rn = gl.arange(0, BN, layout=gl.SliceLayout(0, rows))
    x = gl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    smem = gl.allocate_shared_memory(gl.float32, [BM, BN], gl.SwizzledSharedLayout(SWIZZLE_ARGS, [1, 0]))
    smem.store(x)  # expect: KL302
    y = smem.load(cols)
    cm = gl.arange(0, BM, layout=gl.SliceLayout(1, cols))
    cn = gl.arange(0, BN, layout=gl.SliceLayout(0, cols))
    gl.store(y_ptr + cm[:, None] * BN + cn[None, :], y)
'''


class SharedBankConflict(IRRule):
    code = "KL302"
    name = "shared-bank-conflict"
    category = "bank-conflict"
    level = Level.WARNING
    precision = "high"
    options = {"min_ratio": 1.5}
    confirm = Confirmation(
        "ncu",
        check="l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,"
              "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        threshold="> 0, and at least 90% of the predicted excess wavefronts per block x blocks launched "
                  "(more is consistent: a loop repeats the access)",
        description="ncu counts the excess shared-memory wavefronts that bank conflicts cause.",
    )
    summary = ("Shared-memory loads/stores (ld.shared, st.shared, ldmatrix) whose per-lane addresses, "
               "evaluated from the PTX, hit the same bank with different words: extra wavefronts.")
    docs = """
## What it does
Evaluates the PTX address arithmetic of every ``ld.shared``/``st.shared``/``ldmatrix``/
``stmatrix``/``cp.async`` for each thread of a block (``%tid.x`` = 0..32*num_warps-1) and counts,
per warp and per 128-byte phase (32 threads for 4-byte accesses, 16 for 8-byte, 8 for 16-byte and
for each ldmatrix matrix), the largest number of distinct 4-byte words that share one of the 32
banks: that many wavefronts are needed where one would do. Lines whose accesses need at least
``min_ratio`` (default 1.5) times the ideal wavefronts are reported with the predicted numbers.

## Why is this bad?
An N-way bank conflict serialises the access N times: shared memory, meant to be the fast path,
becomes the bottleneck (visible in ncu as ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_*``).

## Example
An unswizzled shared layout written row-wise by one thread per row and read column-wise:
```python
smem = gl.allocate_shared_memory(gl.float32, [BM, BN], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
smem.store(x)   # each quarter-warp writes 8 rows 128 bytes apart: 8 wavefronts instead of 1
```

## Use instead
Swizzle the layout (``gl.SwizzledSharedLayout(4, 1, 8, [1, 0])``), pad rows, or let Triton pick
the shared layout (``tl.trans``/``convert_layout`` are swizzled by the compiler).
"""
    bad = (BAD_GLUON.replace("SWIZZLE_ARGS", "1, 1, 1"),)
    good = (BAD_GLUON.replace("SWIZZLE_ARGS", "4, 1, 8").replace("  # expect: KL302", ""),)

    def check(self, compiled: CompiledKernel) -> Iterable[Finding]:
        if not compiled.ok or "ptx" not in compiled.asm:
            return
        from kernlint.ir.lanes import shared_wavefronts  # numpy: loaded once kernels are checked

        ev_a, ev_b = compiled.lane_evaluations
        per_line: dict[tuple[int, int], dict] = defaultdict(
            lambda: {"total": 0, "ideal": 0, "ld_excess": 0, "st_excess": 0, "insts": [], "chain": []})
        for acc_a, acc_b in zip(ev_a.accesses, ev_b.accesses):
            if acc_a.space != "shared" or acc_a.addresses is None or acc_b.addresses is None:
                continue
            total, ideal, _ = shared_wavefronts(acc_a.addresses, acc_a.active, acc_a.bytes_per_thread, acc_a.kind)
            total_b, ideal_b, _ = shared_wavefronts(acc_b.addresses, acc_b.active, acc_b.bytes_per_thread,
                                                    acc_b.kind)
            if (total - ideal) != (total_b - ideal_b):
                continue  # depends on integer arguments: not a conclusion we can draw
            loc = acc_a.inst.loc
            frames = loc.frames() if loc else []
            line, col, chain = compiled.user_frame(frames)
            rec = per_line[(line, col)]
            rec["total"] += total
            rec["ideal"] += ideal
            key = "ld_excess" if acc_a.kind in ("ld", "ldmatrix") else "st_excess"
            rec[key] += total - ideal
            rec["insts"].append(acc_a.inst.text())
            rec["chain"] = chain
        for (line, col), rec in sorted(per_line.items()):
            if rec["ideal"] == 0 or rec["total"] < self.opts["min_ratio"] * rec["ideal"]:
                continue
            ratio = rec["total"] / rec["ideal"]
            excess = rec["total"] - rec["ideal"]
            yield self.finding(
                compiled, line, col,
                f"shared-memory accesses here need {rec['total']} wavefronts per block where "
                f"{rec['ideal']} would do (~{ratio:.1f}-way bank conflict) [{compiled.spec.label}]",
                ir="ptx", excerpt=rec["insts"], chain=rec["chain"],
                measurements={
                    "predicted_wavefronts_per_block": rec["total"],
                    "ideal_wavefronts_per_block": rec["ideal"],
                    "predicted_excess_wavefronts_per_block": excess,
                    "predicted_ld_excess_per_block": rec["ld_excess"],
                    "predicted_st_excess_per_block": rec["st_excess"],
                    "conflict_ways": round(ratio, 2),
                },
            )
