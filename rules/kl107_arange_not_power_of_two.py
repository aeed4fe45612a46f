from kernlint.engine.run import arange_extents
from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule


class ArangeNotPowerOfTwo(SourceRule):
    code = "KL107"
    name = "arange-not-power-of-two"
    category = "api-misuse"
    level = Level.ERROR
    confirm = Confirmation(
        tool="none",
        check="compilation",
        threshold="triton.compile raises 'arange's range must be a power of 2'",
        description="the IR phase compiles the specialization and reports the compiler's error at this line",
    )
    summary = "`tl.arange(start, end)` with an extent that is not a power of two (literal, default, config or launch)."
    docs = """
## What it does
Asks the bounds engine, for every `tl.arange(start, end)`, whether its extent `end - start` can be
something else than a power of two for the values the kernel is compiled with: literals, module
constants, constexpr defaults, `triton.autotune` configs and the constexprs of launches in the same
module (an expression of them too, `2 * BLOCK`). A constexpr nothing in the module fixes is not
asked about. An arange under an `if` on constexprs that those values make false is not compiled in
that specialization (`if ROPE > 0:` launched with `ROPE=0`) and is not asked about either. The
message names the values (the witness) and where they come from.

## Why is this bad?
Triton blocks have power-of-two shapes: the kernel fails to compile (`arange's range must be a power
of 2`) as soon as that specialization is launched — often only for the one autotune config or
problem size nobody tested. The usual cause is passing the problem size (`BLOCK=n_cols`) where
`triton.next_power_of_2(n_cols)` plus a mask is needed.

## Example
```python
softmax_kernel[(n_rows,)](y, x, n_cols, BLOCK=n_cols)   # 781 columns
```

## Use instead
```python
softmax_kernel[(n_rows,)](y, x, n_cols, BLOCK=triton.next_power_of_2(n_cols))
```
and mask the columns past `n_cols`.
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, 100)  # expect: KL107
    tl.store(x_ptr + offs, 0.0, mask=offs < n)
''',
        '''
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 96})], key=["n"])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # expect: KL107
    tl.store(x_ptr + offs, 0.0, mask=offs < n)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def pairs(x_ptr, n, HALF: tl.constexpr):
    offs = tl.arange(0, 2 * HALF)  # expect: KL107
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

def launch(x):
    pairs[(1,)](x, x.numel(), HALF=3 * 16)
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr = 256):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

def launch(x):
    k[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr = 64):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

def launch(x):
    # the launch, not the default, sets BLOCK, from a shape kernlint cannot know
    k[(1,)](x, x.shape[-1], BLOCK=x.shape[-1])
''',
    )

    def check(self, state):
        for lane, extent, source, witness in arange_extents(state):
            text = state.code(lane.node.args[1].value) if len(lane.node.args) > 1 else lane.text
            if source == "literal":
                message = f"tl.arange extent {extent} is not a power of two"
            else:
                shown = ", ".join(f"{k}={v}" for k, v in witness.items())
                message = (f"tl.arange extent `{text}` = {extent} (from {source}) is not a power of two: this "
                           f"specialization fails to compile; witness: {shown}")
            yield self.finding(state, lane.node, message, extent=extent, source=source, witness=witness or None)
