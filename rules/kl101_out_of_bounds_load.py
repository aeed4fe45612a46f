from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.bounds import check_access
from kernlint.source.rulebase import SourceRule


class OutOfBoundsLoad(SourceRule):
    code = "KL101"
    name = "out-of-bounds-load"
    category = "out-of-bounds"
    level = Level.ERROR
    confirm = Confirmation(
        tool="compute-sanitizer",
        check="memcheck",
        threshold="> 0 invalid global reads at the line",
        env=(("PYTORCH_NO_CUDA_MEMORY_CACHING", "1"),),
        fallback="interpreter",
        description="memcheck (caching allocator off, --padding) reports an invalid __global__ read at the "
        "line; over-reads inside the allocation granularity are confirmed by the interpreter's exact-bounds check",
    )
    summary = "A `tl.load` whose offsets can run past the tensor on an axis no mask bounds."
    docs = """
## What it does
Follows the offsets of every `tl.load` back to `tl.program_id`, loop counters and `tl.arange`, and
checks that each axis of the block that can run past the end of the tensor is bounded by the mask.
It reports: no mask at all, a mask that bounds rows but not columns, a mask computed but not passed,
`<=` where `<` is needed, and a mask built for a block of another size.

## Why is this bad?
The grid covers `cdiv(n, BLOCK)` programs, so the last block reads past the end whenever `n` is not a
multiple of `BLOCK`. The read is silent: it returns whatever lies behind the tensor (another tensor,
or garbage), or faults with an illegal address when it crosses into unmapped memory.

## Example
```python
offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
x = tl.load(x_ptr + offs)
```

## Use instead
```python
offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
```
Accesses whose offsets are provably in range are not reported: a block equal to a constexpr full
size that no mask ever bounds, offsets wrapped with `%` or clamped with `tl.minimum`, gathers through
loaded indices, and block pointers (`tl.make_block_ptr`, with `boundary_check` where needed).
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # expect: KL101
    tl.store(y_ptr + offs, x, mask=offs < n)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def rows(x_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=rm[:, None] < M)  # expect: KL101
''',
        '''
import triton
import triton.language as tl

@triton.jit
def off_by_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs <= n)  # expect: KL101
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def head(x_ptr, y_ptr, stride, D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, D)
    tl.store(y_ptr + row * stride + cols, tl.load(x_ptr + row * stride + cols))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def wrapped(a_ptr, M, K, stride, BM: tl.constexpr, BK: tl.constexpr):
    rm = (tl.program_id(0) * BM + tl.arange(0, BM)) % M
    rk = tl.arange(0, BK)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr + rm[:, None] * stride + (k * BK + rk)[None, :], mask=(k * BK + rk)[None, :] < K, other=0.0)
''',
    )

    def check(self, state):
        for access in state.accesses:
            if access.kind != "load":
                continue
            problems = check_access(state, access)
            if problems:
                p = problems[0]
                yield self.finding(
                    state, access.node, f"out-of-bounds load: {p.message}",
                    pointer=state.code(access.ptr_node),
                    mask=state.code(access.mask_node) if access.mask_node is not None else None,
                    problems=[q.kind for q in problems],
                )
