import libcst as cst

from kernlint.engine.findings import once_at
from kernlint.engine.run import called_names, masks_a_load
from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.interpret import REDUCTIONS
from kernlint.source.rulebase import SourceRule
from kernlint.source.values import ZERO_PADDED, Fact, PaddedAxis, PaddingSide


def _padded_axis(arg, axis) -> bool:
    axes = {pad.axis for pad in arg.facts_of(PaddedAxis)}
    if axis is None or arg.rank == 0:
        return bool(axes)
    return (int(axis) % arg.rank) - arg.rank in axes


def _trailing_scan(node, arg, axis) -> bool:
    """A forward scan along an axis whose padding all comes after the real lanes (``offs < n``)."""
    for i, a in enumerate(node.args):
        if (a.keyword is not None and a.keyword.value == "reverse") or (a.keyword is None and i == 2):
            if not (isinstance(a.value, cst.Name) and a.value.value == "False"):
                return False
    if arg.rank == 0:
        return False
    ax = (int(axis) % arg.rank) - arg.rank if axis is not None else -arg.rank
    return PaddingSide(ax, trailing=True) in arg.facts and PaddingSide(ax, trailing=False) not in arg.facts


class WrongReductionIdentity(SourceRule):
    code = "KL105"
    name = "wrong-reduction-identity"
    category = "wrong-identity"
    #: a warning until its hand triage on production kernels says an error is a bug: 8 of 20 findings
    #: on flash-linear-attention and the TritonBench-G references are (benchmarks/results/triage_kl105.md);
    #: most false ones are loops over whole blocks whose launch facts the engine does not read
    level = Level.WARNING
    reads_padding = True
    confirm = Confirmation(
        tool="differential",
        check="reference comparison at a size that is not a multiple of the block",
        threshold="result differs from the reference",
        fallback="interpreter",
        description="run the kernel on a size that leaves padding lanes and compare with the reference; ncu and "
        "the sanitizers cannot see a wrong value",
    )
    summary = "Padding lanes of a masked load (missing `other`, or 0) reach a max/min or a sum after exp/log/shift."
    docs = """
## What it does
Follows the lanes a mask switches off in a `tl.load`. Their value is `other` (undefined when it is
missing). The rule reports a reduction whose result those lanes change: `tl.max`/`tl.min`/`tl.argmax`/
`tl.argmin` over lanes padded with 0 or nothing, and `tl.sum` over padded lanes that stopped being
0 on the way (`x - mean`, `tl.exp(x)`, `tl.log(x)`, `1 / x`). `tl.where(mask, x, identity)` resets
the padding and silences it, and so does a factor that is 0 on the padding (`dy * (x - mean)` with
`dy` loaded with `other=0`), unless the other factor is infinite there (`log(0)`, `1 / 0`, `-inf`).
`tl.exp` of a `-inf` padding is 0 again; `1 / tl.sqrt(var + eps)` is finite. A mask that is true in
every lane (`tl.arange(0, B) < B`) pads nothing, and padding on an axis the reduction does not reduce
only affects rows that are not stored.
A reduction in a `@triton.jit` helper is judged with the values each call passes (the helper
inlined at the call), and reported once, at the helper's line. `tl.min(x, 10.0)` (a clamp written
as a reduction, with a float for an axis) is not a reduction.
A forward `tl.cumsum` over padding that trails the real lanes (a mask `offs < n`) reaches it only
after every real lane; `reverse=True` adds it to all of them.
A one-argument function named `exp`, `exp2`, `log`, `log2`, `sqrt` or `rsqrt` (libdevice's, or a
project's own wrapper such as `def exp(x): return tl.exp(x.to(tl.float32))`, whose body may live in
another module) is followed as that function. `0 / (d + eps)` stays 0. A reduction of a block padded
with 0 keeps the padding of the axes it does not reduce (`tl.sum(A * x[:, None], 0)` is 0 on the
padding columns). `tl.dot(a, b)` keeps `a`'s row padding and `b`'s column padding; padding of the
contracted axis is summed away when one side is 0 there, and otherwise taints the result.
Not modelled: loop ranges that only visit whole blocks (`range(0, i * B, B)` below a block that is
in bounds), padding of block pointers with `boundary_check`, and which axis a padding *value* sits
on (NaN on padding rows also taints a reduction along the columns).

## Why is this bad?
0 is the identity of a sum, not of a max (a row of negative numbers gets max 0) nor of a sum of
`exp(x)` (every padded lane adds `exp(0) = 1` to a softmax denominator). The result is silently
wrong exactly when the size is not a multiple of the block — the case tests with power-of-two
shapes never exercise.

## Example
```python
x = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
m = tl.max(x, axis=0)
```

## Use instead
```python
x = tl.load(x_ptr + cols, mask=cols < n, other=-float("inf"))
m = tl.max(x, axis=0)
```
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def row_max(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr, tl.max(x, axis=0))  # expect: KL105
''',
        '''
import triton
import triton.language as tl

@triton.jit
def variance(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    mean = tl.sum(x, axis=0) / n
    xc = x - mean
    var = tl.sum(xc * xc, axis=0) / n  # expect: KL105
    tl.store(out_ptr, var)
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def variance(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    mean = tl.sum(x, axis=0) / n
    xc = tl.where(cols < n, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n
    amax = tl.max(tl.abs(x), axis=0)
    tl.store(out_ptr, var + amax)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def softmax(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + cols, e / tl.sum(e, axis=0), mask=cols < n)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def masked_softmax_sum(x_ptr, m_ptr, y_ptr, n, BLOCK: tl.constexpr):
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + c, mask=c < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))  # exp(-inf) = 0 on the padding
    e = e * tl.load(m_ptr + c, mask=c < n, other=0.0)
    tl.store(y_ptr, tl.sum(e, axis=0))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def norm_bwd(dy_ptr, x_ptr, mean_ptr, var_ptr, dx_ptr, n, eps, BLOCK: tl.constexpr):
    c = tl.arange(0, BLOCK)
    m = c < n
    dy = tl.load(dy_ptr + c, mask=m, other=0.0)
    xc = tl.load(x_ptr + c, mask=m, other=0.0) - tl.load(mean_ptr + c, mask=m, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.load(var_ptr + c, mask=m, other=0.0) + eps)
    g = tl.sum(dy * xc * rstd, axis=0)  # dy is 0 on the padding, rstd finite
    tl.store(dx_ptr + c, dy * rstd - g * xc, mask=m)
''',
    )

    def check(self, state):
        called = called_names(state)
        if called is not None and not called & {name.rsplit(".", 1)[-1] for name in REDUCTIONS}:
            return  # no reduction to judge: the padding walk is not needed
        if masks_a_load(state) is False:
            return  # no load pads lanes (block pointers with boundary_check among them): nothing to judge
        for red in state.reductions:
            arg = red.arg
            axis_node = red.node.args[1].value if len(red.node.args) > 1 else next(
                (a.value for a in red.node.args if a.keyword is not None and a.keyword.value == "axis"), None
            )
            axis = None
            if isinstance(axis_node, cst.UnaryOperation):
                axis_node = axis_node.expression if isinstance(axis_node.expression, cst.Float) else axis_node
            if isinstance(axis_node, cst.Float):
                continue  # `tl.min(x, 10.0)`: a clamp written as a reduction (Triton takes no such axis)
            if axis_node is not None:
                try:
                    axis = int(state.code(axis_node))
                except ValueError:
                    axis = None
            if axis is not None and arg.rank and not -arg.rank - 1 <= axis <= arg.rank:
                # `tl.min(x, 7)` on a vector: an element-wise clamp written as a reduction (one axis
                # of slack: the rank of a `tl.dot` is not tracked exactly)
                continue
            if any(a.keyword is not None and a.keyword.value == "mask" for a in red.node.args):
                continue  # `tl.sum(x, mask=mask)`: the author excludes the padding (not Triton's API)
            if not _padded_axis(arg, axis):
                continue
            head = "wrong reduction identity" + (
                f" (in `{red.helper}`, inlined from `{state.name}`)" if red.helper else "")
            if red.op in ("max", "argmax") and Fact.PAD_NEG_INF in arg.facts:
                continue  # the padding was forced to -inf
            if red.op in ("max", "min", "argmax", "argmin") and arg.facts & ZERO_PADDED:
                what = "no `other`" if Fact.PAD_UNDEFINED in arg.facts else "`other=0`"
                yield from once_at(
                    self, state, red.node,
                    f"{head}: `tl.{red.op}` over lanes a mask padded with {what}; pad with "
                    f"{'-inf' if red.op in ('max', 'argmax') else '+inf'} (or `tl.where` the padding away)",
                    scope=state.refine_padding, reduction=red.op,
                )
            elif red.op == "cumsum" and _trailing_scan(red.node, arg, axis):
                continue  # a prefix sum reaches its padding only after every real lane
            elif red.op in ("sum", "cumsum") and Fact.PAD_NONZERO in arg.facts:
                yield from once_at(
                    self, state, red.node,
                    f"{head}: `tl.{red.op}` adds padding lanes of a masked load that are no "
                    f"longer 0 (shifted, exp/log or divided); reset them with `tl.where(mask, x, 0.0)`",
                    scope=state.refine_padding, reduction=red.op,
                )
