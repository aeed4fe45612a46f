from kernlint.engine.findings import discovered_helper
from kernlint.engine.run import runtime_aranges
from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule


class ArangeRuntimeExtent(SourceRule):
    code = "KL112"
    name = "arange-runtime-extent"
    category = "api-misuse"
    level = Level.ERROR
    confirm = Confirmation(
        tool="none",
        check="compilation",
        threshold="triton.compile raises 'arange's arguments must be of type tl.constexpr'",
        description="the IR phase compiles the specialization and reports the compiler's error at this line",
    )
    summary = "`tl.arange(start, end)` whose start or end is a kernel parameter that is not `tl.constexpr`."
    docs = """
## What it does
Finds each `tl.arange(start, end)` whose bounds are computed from a parameter of the kernel that is
not declared `tl.constexpr` (a runtime size such as `n_cols`), also through the kernel's
`@triton.jit` helpers, under what each call passes (reported once, at the helper's arange, naming
the kernel that passes the value). A helper judged only where it is called is not
asked about alone: its parameters are what its callers pass; nor is an arange under an `if` on
compile-time values (a specialization may leave it out). A kernel with such an arange is not judged
further (out of bounds, races, overflow): it runs nothing.

## Why is this bad?
Triton builds blocks of a shape known at compile time: the kernel fails to compile (`arange's
arguments must be of type tl.constexpr`) at its first launch. Triton specializes an integer argument
equal to 1 as a constant, so a run with that value alone compiles, which hides the error in a small
test.

## Example
```python
@triton.jit
def row_sum(x_ptr, y_ptr, n_cols):
    cols = tl.arange(0, n_cols)
```

## Use instead
```python
@triton.jit
def row_sum(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)          # BLOCK = triton.next_power_of_2(n_cols) at the launch
    mask = cols < n_cols
```
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, seqlens_ptr, D, BLOCK: tl.constexpr):
    n = tl.load(seqlens_ptr + tl.program_id(0))
    if tl.program_id(1) * BLOCK >= n:  # a test of run-time values: every specialization compiles past it
        return
    tl.store(x_ptr + tl.arange(0, D), 0.0)  # expect: KL112
''',
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n):
    offs = tl.arange(0, n)  # expect: KL112
    tl.store(x_ptr + offs, 0.0)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def _lanes(width):
    return tl.arange(0, width)  # expect: KL112

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = _lanes(n)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    if MODE == 1:  # a specialization that is never launched may keep a runtime arange
        offs = tl.arange(0, n)
    else:
        offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def _lanes(width):
    return tl.arange(0, width)

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = _lanes(BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)
''',
    )

    def check(self, state):
        reported = state.info.__dict__.setdefault("_runtime_aranges_reported", set())
        for lane, names in runtime_aranges(state):
            if id(lane.node) in reported:
                continue
            reported.add(id(lane.node))
            helper = discovered_helper(state, lane.helper)
            within = f" (in `{lane.helper}`, called from `{state.name}`)" if lane.helper is not None else ""
            shown = ", ".join(f"`{n}`" for n in names)
            message = (f"`{lane.text}`{within} reads {shown}, a parameter of `{state.name}` that is not "
                       f"`tl.constexpr`: Triton rejects the kernel at its first launch (`arange's arguments must "
                       f"be of type tl.constexpr`) unless the value is 1; pass a constexpr block "
                       f"(`triton.next_power_of_2(...)`) and mask")
            finding = self.finding(state, lane.node, message, parameters=names)
            if helper is not None:
                finding.span = helper.locator.span(lane.node, None)
            yield finding
