from kernlint.model import Level, Phase
from kernlint.rule import Confirmation, Rule


class DynamicRace(Rule):
    code = "KL402"
    name = "dynamic-race"
    category = "race"
    level = Level.ERROR
    phase = Phase.DYNAMIC
    precision = "high"
    confirm = Confirmation(
        tool="interpreter",
        check="write-overlap",
        threshold="> 1 program writing one address non-atomically, or reading what another program writes",
        fallback="compute-sanitizer",
        description="found by running the kernel: Triton's interpreter records which program wrote which byte "
        "non-atomically (global memory); compute-sanitizer racecheck covers shared memory only",
    )
    summary = "Two programs of one launch wrote the same address non-atomically (or one read what another wrote)."
    docs = """
## What it does
Reported by `kernlint check --confirm` / `kernlint confirm` only: while running your entry point
under Triton's interpreter, kernlint recorded which program (pid x, y, z) wrote each byte without
an atomic, and found an address written by two programs of the same launch, or read by a program
while another program of the launch writes it, at a line no static rule had flagged. The finding
carries the tensor, the number of programs involved and the bytes they share.

A read that atomics order after the other program's write, in the run, is not reported: the
writer made a releasing atomic (the default, `acq_rel`) after its write, and the reader an
acquiring one on the same element before its read, later than the writer's. This is the
last-arriver reduction (each program stores its part, then `tl.atomic_add`s a counter; the one
that draws the last ticket reads every part). As in any dynamic race detector, the order is the
one the run took: a read that the atomics order only by the luck of that order is missed, and an
order through a third program is not followed (that read is reported).

## Why is this bad?
Programs of a launch run in no defined order and have no way to wait for each other: the value
left behind is whichever write landed last, and a read sees the old or the new value by chance.
No sanitizer sees this on global memory (racecheck covers shared memory only), so the result is
simply wrong, differently from run to run.

## Example
```python
s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
tl.store(out_ptr, s)  # every program writes out_ptr[0]
```

## Use instead
```python
s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
tl.atomic_add(out_ptr, s)  # or write out_ptr + pid and reduce in a second pass
```
"""
