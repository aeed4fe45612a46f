"""KL304: theoretical occupancy below a threshold, naming the limiting resource."""

from __future__ import annotations

from typing import Iterable

from kernlint.ir.artifacts import CompiledKernel
from kernlint.ir.rulebase import IRRule
from kernlint.model import Finding, Level
from kernlint.rule import Confirmation

_FIX = {
    "registers": "use fewer registers per thread (smaller tiles per thread, more warps, "
                 "maxnreg) or accept it knowingly",
    "shared_memory": "use less shared memory per block (fewer num_stages, smaller BLOCK_K/tiles)",
    "warps": "the warp count per block limits residency; use fewer warps per block",
    "blocks": "blocks are too small; give each block more warps or more work",
}


class LowOccupancy(IRRule):
    code = "KL304"
    name = "low-occupancy"
    category = "occupancy"
    level = Level.NOTE
    precision = "high"
    options = {"threshold": 0.25}
    confirm = Confirmation(
        "ncu", check="launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,"
                     "launch__occupancy_limit_warps,launch__occupancy_limit_blocks,"
                     "sm__warps_active.avg.pct_of_peak_sustained_active",
        threshold="the launch's theoretical occupancy (fewest blocks any resource allows / blocks the warp limit "
                  "allows) within 5 points of the prediction, with the same limiter; higher refutes",
        description="ncu's launch statistics give the theoretical occupancy and each resource's block limit.",
    )
    summary = ("Theoretical occupancy (resident warps per SM for the target) is below the threshold "
               "(default 25%); the message names the limiting resource.")
    docs = """
## What it does
Computes the theoretical occupancy of the compiled kernel on the target architecture from the
registers per thread and shared memory per block that ptxas and Triton report and the warps per
block, with NVIDIA's per-architecture limits and allocation granularities (see
``kernlint.ir.occupancy``), and reports kernels below ``threshold`` (default 0.25), naming the
resource that limits residency.

## Why is this bad?
Few resident warps leave the SM little to switch to while a warp waits on memory, so latency is
exposed. Some kernels (large-tile matmuls) are fast at low occupancy by design, so this is a note:
check the limiter is the one you chose.

## Example
```python
# kernlint: specialize(a_ptr="*fp16", b_ptr="*fp16", BM=128, BN=128, BK=128, num_warps=4, num_stages=4)
@triton.jit
def matmul(...):   # 4 stages of 128x128 fp16 tiles: 256 KB shared memory -> does not fit / 1 block
```

## Use instead
Fewer pipeline stages or smaller ``BLOCK_K`` (shared memory), fewer live values per thread
(registers), or more warps per block when blocks are small.
"""
    bad = (
        '''import triton
import triton.language as tl


# kernlint: specialize(a_ptr="*fp16", b_ptr="*fp16", BM=128, BN=128, BK=64, num_warps=4, num_stages=4)
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):  # expect: KL304
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
''',
    )
    good = (
        '''import triton
import triton.language as tl


# kernlint: specialize(BLOCK=1024, num_warps=4)
@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
''',
    )

    def check(self, compiled: CompiledKernel) -> Iterable[Finding]:
        occ = compiled.occupancy
        if not compiled.ok or occ is None or occ.occupancy >= self.opts["threshold"]:
            return
        pct = 100 * occ.occupancy
        if occ.active_blocks == 0:
            msg = (f"the kernel cannot be resident on sm_{compiled.capability}: "
                   f"{occ.shared_per_block} bytes of shared memory per block exceed the limit")
        else:
            msg = (f"theoretical occupancy {pct:.1f}% ({occ.active_warps}/{occ.max_warps} warps per SM), "
                   f"limited by {occ.limiter.replace('_', ' ')}: {_FIX.get(occ.limiter, '')}")
        yield self.finding(
            compiled, compiled.kernel_line, 1, f"{msg} [{compiled.spec.label}]",
            ir="ptxas", excerpt=[f"registers/thread={occ.registers_per_thread} shared/block={occ.shared_per_block} "
                                 f"warps/block={occ.warps_per_block}"],
            occupancy=occ.to_dict(),
            measurements={"theoretical_occupancy": round(occ.occupancy, 4), "limiter": occ.limiter,
                          "registers_per_thread": occ.registers_per_thread,
                          "shared_bytes_per_block": occ.shared_per_block,
                          "blocks_by_registers": occ.blocks_by_registers,
                          "blocks_by_shared": occ.blocks_by_shared, "blocks_by_warps": occ.blocks_by_warps},
        )
