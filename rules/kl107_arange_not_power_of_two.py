import libcst as cst

from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.bounds import block_values
from kernlint.source.rulebase import SourceRule


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


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
Computes the extent `end - start` of every `tl.arange` from literals, module constants, constexpr
defaults, `triton.autotune` configs and the keyword arguments of launches in the same module, and
reports an extent that is not a power of two.

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
    )

    def check(self, state):
        for call in state.calls:
            if call.name != "triton.language.arange":
                continue
            vals = call.args + [call.kwargs[k] for k in ("start", "end") if k in call.kwargs]
            if len(vals) < 2:
                continue
            start, end = vals[0], vals[1]
            if start.const is not None and end.const is not None:
                extent = int(end.const - start.const)
                if not _pow2(extent):
                    yield self.finding(state, call.node, f"tl.arange extent {extent} is not a power of two",
                                       extent=extent)
                continue
            end_node = call.arg_nodes[1] if len(call.arg_nodes) > 1 else call.kwarg_nodes.get("end")
            start_zero = start.const == 0
            if isinstance(end_node, cst.Name) and start_zero:
                bad = [(v, src) for v, src in block_values(state, end_node.value) if not _pow2(v)]
                if bad:
                    value, source = bad[0]
                    yield self.finding(
                        state, call.node,
                        f"tl.arange extent `{end_node.value}` = {value} (from {source}) is not a power of two: "
                        f"this specialization fails to compile",
                        extent=value, source=str(source),
                    )
