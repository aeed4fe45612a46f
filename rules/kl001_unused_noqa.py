from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule


class UnusedNoqa(SourceRule):
    """Reported by the pipeline's filter, after every phase ran: it has no kernel check of its own."""

    code = "KL001"
    name = "unused-noqa"
    category = "suppression"
    level = Level.WARNING
    precision = "very-high"
    default_enabled = False
    frontends = ()
    confirm = Confirmation("none", description="a fact of the run: no finding of that code on that line")
    summary = "A `# noqa: KL...` directive names a code that reported nothing on its line (off unless selected)."
    docs = """
## What it does
Reports the kernlint codes of a `# noqa: KL...` directive that silenced nothing in this run, as
ruff's RUF100 does. Only codes of rules that ran count: an IR rule's code is not judged unused by
a run without `--ir`, nor a dynamic rule's without `--confirm`. Off by default: enable it with
`--select KL001` or `extend-select = ["KL001"]`.

## Why is this bad?
A directive that no longer matches a finding hides the next real bug on that line, and tells the
reader a defect is there when there is none.

## Example
```python
x = tl.load(x_ptr + offs, mask=offs < n)  # noqa: KL101
```

## Use instead
```python
x = tl.load(x_ptr + offs, mask=offs < n)
```
"""
    bad = (
        """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)  # noqa: KL101  # expect: KL001
    tl.store(x_ptr + offs, x + 1, mask=offs < n)
""",
    )
    good = (
        """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # noqa: KL101 (the caller pads x to a multiple of BLOCK)
    tl.store(x_ptr + offs, x + 1, mask=offs < n)
""",
    )

    def check(self, state):
        return ()
