from kernlint.model import Level, Phase
from kernlint.rule import Confirmation, Rule


class DynamicUnwrittenOutput(Rule):
    code = "KL403"
    name = "dynamic-unwritten-output"
    category = "uninitialized-read"
    level = Level.WARNING
    phase = Phase.DYNAMIC
    precision = "high"
    confirm = Confirmation(
        tool="interpreter",
        check="unwritten-output",
        threshold="> 0 elements of a fresh output allocation that no launch wrote",
        fallback="compute-sanitizer",
        description="found by running the kernel: under Triton's interpreter every torch.empty* allocation is "
        "poisoned (NaN, or an unlikely integer) and every kernel store into it is marked; on a GPU, "
        "compute-sanitizer initcheck reports reads of memory nothing wrote",
    )
    summary = "A launch stored into a freshly allocated output but left some of its elements unwritten."
    docs = """
## What it does
Reported by `kernlint check --confirm` / `kernlint confirm` only. While your entry point runs under
Triton's interpreter, each tensor made by `torch.empty`, `empty_like`, `empty_strided` or
`new_empty` is filled with a poison value (NaN for floats) and every byte a kernel stores into it
is marked. When the run ends, an allocation that a kernel wrote to, with elements that no kernel
wrote and that still hold the poison (the host did not fill them either), is reported at the store
that wrote it, with the launch's grid and the number of elements left unwritten. On a GPU,
compute-sanitizer initcheck reports the reads of such memory.

## Why is this bad?
`torch.empty` returns whatever the allocator last held. Elements a kernel never writes keep that
garbage, which often happens to be zeros or an earlier correct result, so tests pass until the
allocator hands out different memory. The usual causes: a grid that is too small
(`n // BLOCK` instead of `triton.cdiv(n, BLOCK)`), a store guarded by one program id, or a loop
that stops one block early. A buffer that is only partly used on purpose is better allocated at
the size that is written.

## Example
```python
grid = (n // BLOCK,)  # drops the tail block when n is not a multiple of BLOCK
out = torch.empty(n)
copy_kernel[grid](x, out, n, BLOCK=BLOCK)
```

## Use instead
```python
grid = (triton.cdiv(n, BLOCK),)
out = torch.empty(n)
copy_kernel[grid](x, out, n, BLOCK=BLOCK)
```
"""
