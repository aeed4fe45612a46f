from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule

ACCUMULATING = {"triton.language.atomic_add", "triton.language.atomic_max", "triton.language.atomic_min"}


class UnneededAtomic(SourceRule):
    code = "KL110"
    name = "unneeded-atomic"
    category = "atomic"
    level = Level.NOTE
    precision = "medium"
    confirm = Confirmation(
        tool="interpreter",
        check="atomic-overlap",
        threshold="every address the atomic updates is updated by one program only; an address two programs "
                  "update refutes",
        description="Triton's interpreter records which program each atomic update came from (CPU or GPU "
        "machine alike): an atomic whose addresses each belong to one program is unneeded",
    )
    summary = "An atomic add/max/min to addresses only one program ever writes: a plain store (or load-add-store) suffices."
    docs = """
## What it does
Reports `tl.atomic_add`/`atomic_max`/`atomic_min` whose address depends on every program-id axis the
kernel uses and on lanes of `tl.arange` (no gathered indices), outside loops: each address belongs
to exactly one program, so no other program can race with it.

## Why is this bad?
Atomics go through the L2 reduction units, serialise per address and cannot be vectorised; for
addresses no other program touches they cost throughput and add no safety (this is the opposite of
KL103, where an atomic is missing).

## Example
```python
offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
tl.atomic_add(out_ptr + offs, x, mask=offs < n)
```

## Use instead
```python
tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=offs < n) + x, mask=offs < n)
```
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr + offs, x, mask=offs < n)  # expect: KL110
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def scatter(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    idx = tl.load(idx_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(out_ptr + idx, x, mask=offs < n)
''',
    )

    def check(self, state):
        if not state.pid_axes:
            return
        for call in state.calls:
            if call.name not in ACCUMULATING or not call.args or call.loops:
                continue
            ptr = call.args[0]
            if ptr.data or not ptr.lanes or state.pid_axes - ptr.pid:
                continue
            if any(lane.data or not lane.shift for _, lane in ptr.lanes):
                continue
            op = call.name.rsplit(".", 1)[-1]
            yield self.finding(
                state, call.node,
                f"unneeded atomic: every address of this `tl.{op}` belongs to one program (it moves with every "
                f"program id and no indices are gathered); a plain store suffices",
            )
