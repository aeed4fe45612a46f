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
Reports `tl.atomic_add`/`atomic_max`/`atomic_min` whose footprint belongs to one program: the same
question KL103 asks of a plain store (two distinct programs of a launch, both reaching the atomic
with its mask and path, at one element), with two lanes of one program counted as well, refuted by
the solver at every size and stride (not only in the layouts KL103 seeks a witness in: a grid of
`cdiv(cdiv(n, 1024), 1024)` programs is a single program at some sizes only). Iterations of
one program's loop may update one element: they run in order. The element must also be out of reach
of every other access of that pointer by another program (a second atomic statement under a
program-id branch, a plain store, a load that polls it): where one of those can reach it, or cannot
be modelled, the atomic is needed. An atomic given `sem=` or `scope=` is kept for the ordering it
asks for (memory ordering is not modelled), and is not reported. A ticket (`tl.atomic_add(counter, 1)`
on one address) is shared by every program and is never reported. An atomic the engine cannot model
(gathered indices, an unmodelled `if` around it), or one whose layouts the solver cannot all settle
within its work budget, is not reported.

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
        '''
import triton
import triton.language as tl

@triton.jit
def publish(x_ptr, out_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    # release: the count is read by a consumer that waits for it, not only summed
    tl.atomic_add(flag_ptr + tl.program_id(0), 1, sem="release", scope="gpu")
''',
    )

    def check(self, state):
        from kernlint.engine.findings import reported_once
        from kernlint.engine.run import exclusive_atomics
        from kernlint.source.names import source_text

        for access in exclusive_atomics(state):
            op = source_text(state.info.module, access.node.func).rsplit(".", 1)[-1]
            if "triton.language." + op not in ACCUMULATING:
                continue
            if any(a.keyword is not None and a.keyword.value in ("sem", "scope") for a in access.node.args):
                continue  # an ordering the author asked for (memory ordering is not modelled)
            yield from reported_once(self, state, access,
                f"unneeded atomic: no two programs (and no two lanes) of a launch update one element of this "
                f"`tl.{op}` (its footprints are disjoint at every size and stride); a plain load and store "
                f"suffice")
