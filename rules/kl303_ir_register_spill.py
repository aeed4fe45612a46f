"""KL303: ptxas spills registers to local memory."""

from __future__ import annotations

from typing import Iterable

from kernlint.ir.artifacts import CompiledKernel
from kernlint.ir.rulebase import IRRule
from kernlint.model import Finding, Level
from kernlint.rule import Confirmation


class RegisterSpill(IRRule):
    code = "KL303"
    name = "register-spill"
    category = "spill"
    level = Level.WARNING
    precision = "very-high"
    confirm = Confirmation(
        "ncu", check="l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
        threshold="> 0", description="Local-memory traffic measured by ncu confirms the spills.",
    )
    summary = "ptxas spills registers to local memory (spill stores/loads in its resource report)."
    docs = """
## What it does
Reads ptxas' resource report for the compiled cubin (``N bytes spill stores, M bytes spill
loads``, the stack frame, the registers used) and reports the kernel when it spills.

## Why is this bad?
Spilled values live in local memory, which is as slow as global memory (cached in L1/L2 at best):
each spill turns a register access into a memory round trip, usually in the hot loop.

## Example
```python
# kernlint: specialize(BLOCK=8192, num_warps=1)
@triton.jit
def centre(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)           # 256 values per thread stay live across the sum
    tl.store(y_ptr + offs, x - tl.sum(x, axis=0))
```

## Use instead
Smaller blocks per thread: more warps (``num_warps=8``), a smaller ``BLOCK``, a loop over
chunks, or fewer pipeline stages; for matmuls smaller tiles.
"""
    bad = (
        '''import triton
import triton.language as tl


# kernlint: specialize(BLOCK=8192, num_warps=1)
@triton.jit
def centre(x_ptr, y_ptr, BLOCK: tl.constexpr):  # expect: KL303
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x - tl.sum(x, axis=0))
''',
    )
    good = (
        '''import triton
import triton.language as tl


# kernlint: specialize(BLOCK=8192, num_warps=8)
@triton.jit
def centre(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x - tl.sum(x, axis=0))
''',
    )

    def check(self, compiled: CompiledKernel) -> Iterable[Finding]:
        res = compiled.resources
        if not compiled.ok or res is None:
            return
        spilled = res.spills if res.source == "ptxas-log" else res.local_bytes > 0
        if not spilled:
            return
        yield self.finding(
            compiled, compiled.kernel_line, 1,
            f"registers spill to local memory: {res.spill_store_bytes} bytes stored, "
            f"{res.spill_load_bytes} bytes loaded per thread with {res.registers} registers "
            f"[{compiled.spec.label}]",
            ir="ptxas", excerpt=[f"{res.stack_frame_bytes} bytes stack frame, {res.spill_store_bytes} bytes spill "
                                 f"stores, {res.spill_load_bytes} bytes spill loads",
                                 f"Used {res.registers} registers"],
            measurements={"registers": res.registers, "spill_store_bytes": res.spill_store_bytes,
                          "spill_load_bytes": res.spill_load_bytes, "local_bytes": res.local_bytes},
        )
