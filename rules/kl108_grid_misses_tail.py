from kernlint.engine.findings import grid_misses_tail
from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule


class GridMissesTail(SourceRule):
    code = "KL108"
    name = "grid-misses-tail"
    category = "uninitialized-read"
    level = Level.ERROR
    confirm = Confirmation(
        tool="differential",
        check="reference comparison at a size that is not a multiple of the block",
        threshold="the tail of the output is never written",
        fallback="interpreter",
        description="the interpreter records which output elements no program wrote (for an autotuned launch, "
        "each config's run on its own: elements one config leaves that another writes); a reference "
        "comparison on an odd size shows the unwritten tail",
    )
    summary = "A launch's grid stops short of the last element the kernel's mask lets through (e.g. `n // BLOCK` programs)."
    docs = """
## What it does
Asks the bounds engine, for each launch of a kernel in the module and each mask conjunct
`index < bound` whose index moves with program ids (`offs = pid * BLOCK + tl.arange(0, BLOCK)`,
`offs < n`): is there a size the launch allows (the values it passes, its grid, the wrapper's
asserts and branches) where no program of the grid and no lane reaches the last element the mask
lets through, `bound - 1`? A mask on that index says the kernel was written for a partial last
block; a grid that never starts it leaves that block undone. Satisfiable: a finding at the launch
with a witness (the sizes, the number of programs, the element missed and the last one reached).
The grid may be written in any form the launch reader follows (`n // BLOCK`, a name bound to it,
`max(1, n // BLOCK)`, a constant, a lambda of the autotuned block); a wrapper that asserts
`n % BLOCK == 0` is proven covered. Indices that share one bound are asked together (even and odd
lanes written by two stores cover the elements between them). A block size the wrapper passes on
from its own caller counts where the grid is made of it too (`grid = (DK // BK,)`).

Not asked about (no finding): an index that also moves with a loop (grid-stride and persistent
kernels), one the engine cannot show to grow with each program id and lane (swizzled program
ids), a grid axis or size the launch does not give, and a bound the grid is not made of (a size the
wrapper receives apart from the one the grid is computed from: they may be equal), a mask that
lets an access leave its tensor (KL101/KL102's: its bound is not the data's extent), and a
load's bound looser than that of a store whose index moves with the same program ids and lanes
and which the grid covers (`x[2 * i]` masked by `2 * i < n`, the stores by `i < n // 2`: the
odd last input is no output's). Two axes of
one tensor are not sizes received apart: `M, N = x.shape` holds any pair, so a grid of `cdiv(M, 32)`
column blocks for a mask `rn < N` (a transpose counting both axes with the rows) is asked about.

## Why is this bad?
The elements past the last full block are never computed: the output keeps whatever the allocation
held (`torch.empty` garbage, or stale values), and only sizes that are multiples of the block are
correct. Tests with power-of-two sizes pass.

## Example
```python
add_kernel[(n // BLOCK,)](x, y, out, n, BLOCK=BLOCK)
```

## Use instead
```python
add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)
```
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def add(x, out):
    add_kernel[(x.numel() // 1024,)](x, out, x.numel(), BLOCK=1024)  # expect: KL108
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def add(x, out):
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
''',
    )

    def check(self, state):
        yield from grid_misses_tail(self, state)
