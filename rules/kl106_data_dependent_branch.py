import libcst as cst

from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.engine.run import data_branches
from kernlint.source.rulebase import SourceRule


class DataDependentBranch(SourceRule):
    code = "KL106"
    name = "data-dependent-branch"
    category = "divergence"
    level = Level.NOTE
    precision = "high"
    confirm = Confirmation(
        tool="ncu",
        check="smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
        threshold="< 0.9 (lanes predicated off)",
        description="Triton lowers data-dependent control flow mostly to predicated-off lanes, not divergent "
        "branches: confirm with the predicated-on thread-instruction ratio",
    )
    summary = "An `if`/`while` or a loop trip count that depends on values loaded from memory."
    docs = """
## What it does
Reports control flow inside a kernel whose condition or trip count is computed from values the
kernel loaded (`tl.load`), directly or through arithmetic: `if tl.load(flag) > 0:`, `while x < t:`,
`for i in range(start, end)` with `start`/`end` read from an offsets tensor.

## Why is this bad?
Programs of one launch then do different amounts of work: the slowest program sets the kernel's
time (load imbalance), and the compiler cannot pipeline loops whose trip count it does not know.
Lanes whose work is skipped stay predicated off, so the warp still pays for them. It is often
intended (ragged batches, early exit), which is why this is a note: look at whether the data can be
sorted or bucketed, or the work split evenly.

## Example
```python
seq_len = tl.load(lens_ptr + pid)
for start in range(0, seq_len, BLOCK):
    ...
```

## Use instead
Bucket sequences by length before the launch (or launch one program per fixed-size block of work,
as in a persistent/stream-K schedule), so programs get equal trip counts.
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def ragged(x_ptr, lens_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = tl.load(lens_ptr + pid)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):  # expect: KL106
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def skip(x_ptr, flag_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    flag = tl.load(flag_ptr + pid)
    if flag != 0:  # expect: KL106
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs))
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def fixed(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        if EVEN:
            acc += tl.load(x_ptr + offs)
        else:
            acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))
''',
    )

    def check(self, state):
        seen = set()
        for branch in data_branches(state):
            if branch.elected or id(branch.node) in seen:
                continue  # one program elected by an atomic ticket, or a lock: not data-dependent work
            seen.add(id(branch.node))
            node = branch.node
            what = ("the trip count of this loop" if isinstance(node, cst.For)
                    else f"this `{'if' if isinstance(node, cst.If) else 'while'}`")
            yield self.finding(
                state, branch.where,
                f"data-dependent control flow: {what} depends on values loaded from memory, so programs do "
                f"unequal work and skipped lanes stay predicated off",
                condition=state.code(branch.where),
            )
