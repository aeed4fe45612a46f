import re

import libcst as cst

from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule
from kernlint.source.values import Elected


_SINGLE_GUARD = re.compile(r"==\s*1\b|\b1\s*==")


def _asserted_one(asserts) -> set[str]:
    """Names the wrapper asserts equal to 1 (``assert n == 1``, ``assert 1 == n``)."""
    out = set()
    for test in asserts:
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Equal)):
            continue
        left, right = test.left, test.comparisons[0].comparator
        for name, one in ((left, right), (right, left)):
            if isinstance(name, cst.Name) and isinstance(one, cst.Integer) and one.value == "1":
                out.add(name.value)
    return out


def _one(element) -> bool:
    """A grid element the host code fixes at 1 (a parameter's default is not fixed: a caller may
    pass another value)."""
    return element.value is not None and element.value.value == 1 and element.value.how != "default"


def _single_program_axes(state) -> set[int]:
    """Grid axes every launch in the module leaves at one program (absent, a value the host code
    resolves to 1, or a name the wrapper asserts is 1)."""
    launches = state.info.facts.launches_of(state.name)
    if not launches:
        return set()
    common = None
    for launch in launches:
        if launch.grid is None:
            return set()
        asserted = _asserted_one(launch.scope.asserts if launch.scope is not None else ())
        axes = {i for i in range(3) if i >= len(launch.grid) or _one(launch.grid[i]) or launch.grid[i].text.strip() in asserted}
        common = axes if common is None else common & axes
    return common or set()


class CrossProgramRace(SourceRule):
    code = "KL103"
    name = "cross-program-race"
    category = "race"
    level = Level.ERROR
    confirm = Confirmation(
        tool="interpreter",
        check="write-overlap",
        threshold="> 1 program writes the same address non-atomically",
        fallback="differential",
        description="racecheck covers shared memory only, so a race between programs on global memory is "
        "invisible to every sanitizer: the interpreter records which program wrote each address, and a "
        "differential GPU run (two launch orders) must agree",
    )
    summary = "A non-atomic `tl.store` to an address that does not depend on the program id, from many programs."
    docs = """
## What it does
Finds the program-id axes the kernel uses and reports a plain `tl.store` whose address does not
depend on one of them (directly, through loop counters or through loaded indices) and that is not
guarded by a condition on that axis (or on a ticket drawn with `tl.atomic_add(counter, 1)`, which
lets one program through) nor inside a spin-lock critical section (`while
tl.atomic_cas(lock, 0, 1) == 1: pass` ... `tl.atomic_xchg(lock, 0)`). Axes every launch in the
module leaves at one program, and stores under a compile-time `if SPLIT_K == 1:`, are exempt. A load-modify-store of one location from every program is
reported with its read.

## Why is this bad?
Every program along that axis writes the same address; which write wins depends on scheduling, and
read-modify-write sequences lose updates. The result changes from run to run, and no sanitizer sees
it: racecheck only watches shared memory.

## Example
```python
pid = tl.program_id(0)
x = tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK))
total = tl.load(out_ptr)
tl.store(out_ptr, total + tl.sum(x))
```

## Use instead
```python
tl.atomic_add(out_ptr, tl.sum(x))
```
or write one partial result per program (`out_ptr + pid`) and reduce them afterwards.
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = tl.load(out_ptr)
    tl.store(out_ptr, acc + tl.sum(x, axis=0))  # expect: KL103
''',
        '''
import triton
import triton.language as tl

@triton.jit
def split_k(a_ptr, c_ptr, K, BLOCK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs = pid_k * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + pid_m * K + offs, mask=offs < K, other=0.0)
    tl.store(c_ptr + pid_m, tl.sum(a, axis=0))  # expect: KL103
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def first_writes(flag_ptr, x_ptr, out_ptr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    tl.store(out_ptr + pid, x)
    if pid == 0:
        tl.store(flag_ptr, 1)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def last_one_finishes(x_ptr, partial_ptr, counter_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK)), axis=0))
    ticket = tl.atomic_add(counter_ptr, 1)
    if ticket == tl.num_programs(0) - 1:  # each program draws a different ticket: one passes
        tl.store(out_ptr, 1.0)
''',
    )

    def check(self, state):
        if not state.pid_axes:
            return
        for access in state.accesses:
            if access.kind != "store" or access.locked:
                continue
            missing = state.pid_axes - access.ptr.pid
            if not missing:
                continue
            if any(g.pid & missing for g in access.guards):
                continue
            if access.mask is not None and access.mask.pid & missing:
                continue
            if access.static_guard and any(
                _SINGLE_GUARD.search(state.code(g)) for g in access.guard_nodes
            ):
                continue  # `if SPLIT_K == 1: tl.store(...)` - only one program along that axis
            for g in access.guards:  # `if ticket == n - 1:` with `ticket = tl.atomic_add(counter, 1)`
                for elected in g.facts_of(Elected):
                    missing -= elected.axes
            missing -= _single_program_axes(state)
            if not missing:
                continue
            target = state.code(access.ptr_node) if access.ptr_node is not None else "?"
            axes = ", ".join(str(a) for a in sorted(missing))
            rmw = any(a.kind == "load" and a.ptr_node is not None and state.code(a.ptr_node) == target for a in state.accesses)
            what = "reads, modifies and writes" if rmw else "writes"
            yield self.finding(
                state, access.node,
                f"cross-program race: every program along program_id axis {axes} {what} `{target}` "
                f"non-atomically (the address does not depend on that axis)",
                pointer=target, missing_axes=sorted(missing), read_modify_write=rmw,
            )
