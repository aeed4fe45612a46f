import libcst as cst

from kernlint.model import Finding, Level, Phase
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule
from kernlint.source.values import ProgramAxis


def _masked_pid_axes(state) -> set[int]:
    """Program-id axes whose blocks the kernel masks: it expects a partial last block there."""
    axes = set()
    for access in state.accesses:
        if access.mask is None or not access.ptr.lanes:
            continue
        shift = access.ptr.rank - access.mask.rank
        bounded = {d + shift for d, _ in access.mask.bounds}
        for d, lane in access.ptr.lanes:
            if d in bounded:
                axes |= {s.axis for s in lane.shift if isinstance(s, ProgramAxis)}
    return axes


class GridMissesTail(SourceRule):
    code = "KL108"
    name = "grid-misses-tail"
    category = "api-misuse"
    level = Level.ERROR
    confirm = Confirmation(
        tool="differential",
        check="reference comparison at a size that is not a multiple of the block",
        threshold="the tail of the output is never written",
        fallback="interpreter",
        description="the interpreter records which output elements no program wrote; a reference comparison on "
        "an odd size shows the unwritten tail",
    )
    summary = "A launch sizes a grid axis with `//` while the kernel masks a partial last block on that axis."
    docs = """
## What it does
Looks at the launches of each kernel in the module. When a grid axis is computed with floor division
(`n // BLOCK`) and the kernel bounds the blocks that program id moves with a mask — so it was written
to handle a partial last block — the launch never starts that last program.

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
        if not state.info.mentions("//"):
            return
        launches = state.info.launches_of(state.name)
        if not launches:
            return
        masked = _masked_pid_axes(state)
        if not masked:
            return
        for launch in launches:
            grid = launch.grid.body if isinstance(launch.grid, cst.Lambda) else launch.grid
            elements = grid.elements if isinstance(grid, (cst.Tuple, cst.List)) else []
            for axis, element in enumerate(elements):
                value = element.value
                if axis in masked and isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.FloorDivide):
                    text = state.info.module.code_for_node(value).strip()
                    yield Finding(
                        rule=self.code,
                        path=state.kernel.kernel.path,
                        span=state.info.span_of_offsets(launch.start, launch.end),
                        message=f"grid misses the tail: axis {axis} of the launch is `{text}` (floor division) but "
                        f"`{state.name}` masks a partial last block on program_id axis {axis}; use triton.cdiv",
                        level=self.level,
                        phase=Phase.SOURCE,
                        kernel=state.name,
                        evidence={"grid": text},
                    )
