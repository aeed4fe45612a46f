from kernlint.model import Level, Phase
from kernlint.rule import Confirmation, Rule


class DynamicOutOfBounds(Rule):
    code = "KL401"
    name = "dynamic-out-of-bounds"
    category = "out-of-bounds"
    level = Level.ERROR
    phase = Phase.DYNAMIC
    precision = "very-high"
    confirm = Confirmation(
        tool="interpreter",
        check="exact-bounds",
        threshold="> 0 unmasked lanes outside every tensor argument",
        fallback="compute-sanitizer",
        description="found by running the kernel: Triton's interpreter with every lane checked against the exact "
        "byte ranges of the tensors passed in, or compute-sanitizer memcheck on a GPU",
    )
    summary = "A kernel run touched memory outside every tensor it was given, at a line no static rule flagged."
    docs = """
## What it does
Reported by `kernlint check --confirm` / `kernlint confirm` only: while running your entry point
(under Triton's interpreter, each unmasked lane is checked against the exact byte range of every
tensor argument; on a GPU, compute-sanitizer memcheck), an access fell outside all of them at a
line that no static rule had flagged. The finding carries the tensor it ran past, the number of
lanes and how many bytes past the end (or before the start) the worst one went.

## Why is this bad?
An out-of-bounds read returns whatever lies behind the tensor: another tensor's data, or garbage;
an out-of-bounds write corrupts it. Small over-runs stay inside the allocator's granularity and
never fault, so the kernel looks correct until the sizes change.

## Example
```python
offs = pid * BLOCK + tl.arange(0, BLOCK)
idx = tl.load(index_ptr + offs, mask=offs < n)
x = tl.load(x_ptr + idx, mask=offs < n)  # idx can exceed x's length
```

## Use instead
```python
offs = pid * BLOCK + tl.arange(0, BLOCK)
idx = tl.load(index_ptr + offs, mask=offs < n)
x = tl.load(x_ptr + idx, mask=(offs < n) & (idx < x_len), other=0.0)
```
"""
