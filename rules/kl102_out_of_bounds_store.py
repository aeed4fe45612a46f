from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.engine.findings import out_of_bounds
from kernlint.source.rulebase import SourceRule


class OutOfBoundsStore(SourceRule):
    code = "KL102"
    name = "out-of-bounds-store"
    category = "out-of-bounds"
    level = Level.ERROR
    confirm = Confirmation(
        tool="compute-sanitizer",
        check="memcheck",
        threshold="> 0 invalid global writes at the line",
        env=(("PYTORCH_NO_CUDA_MEMORY_CACHING", "1"),),
        fallback="interpreter",
        description="memcheck reports an invalid __global__ write at the line; writes inside the allocation "
        "granularity are confirmed by the interpreter's exact-bounds check",
    )
    summary = "A `tl.store` or atomic whose offsets can run past the tensor on an axis no mask bounds."
    docs = """
## What it does
The same solver query as KL101, for `tl.store` and `tl.atomic_*`: is there a program, lane and
loop iteration where the mask holds and the address falls outside the tensor, at sizes a launch
in the module allows (or, without one, outside a bound the kernel's own masks state)? The
message carries the witness. Stores are accepted without a mask when the solver proves them in
range: sizes asserted divisible by the block, grids that count whole blocks, and extents the
wrapper rounds up to a multiple of the block (`round_n = math.ceil(n / 64) * 64`). What the
wrapper's checks state of a tensor's shape, and masks bounded by loaded lengths, are read as KL101
reads them.

## Why is this bad?
An out-of-bounds store corrupts whatever lives after the output tensor — often another live tensor
of the same program, so results go wrong far from the kernel that caused it — or crashes the context
with an illegal address.

## Example
```python
offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
x = tl.load(x_ptr + offs, mask=offs < n)
tl.store(y_ptr + offs, x)
```

## Use instead
```python
tl.store(y_ptr + offs, x, mask=offs < n)
```
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x)  # expect: KL102
''',
        '''
import triton
import triton.language as tl

@triton.jit
def softmax(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    y = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, y / tl.sum(y, axis=0))  # expect: KL102
''',
        '''
import math
import torch
import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, y_ptr, n, ROUND_N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row = tl.program_id(1).to(tl.int64)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + row * ROUND_N + offs, 2 * x)  # expect: KL102

def run(x):
    rows, n = x.shape
    round_n = math.ceil(n / 64) * 64  # padded to 64, but the block is 128
    y = torch.empty((rows, round_n), device=x.device, dtype=x.dtype)
    grid = lambda META: (triton.cdiv(n, META["BLOCK"]), rows)
    scale[grid](x, y, n, round_n, BLOCK=128)
    return y
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def softmax(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    y = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, y / tl.sum(y, axis=0), mask=cols < n_cols)
''',
        '''
import math
import torch
import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, y_ptr, n, ROUND_N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row = tl.program_id(1).to(tl.int64)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + row * ROUND_N + offs, 2 * x)  # rows of y are padded to a multiple of the block

def run(x):
    rows, n = x.shape
    round_n = math.ceil(n / 64) * 64
    y = torch.empty((rows, round_n), device=x.device, dtype=x.dtype)
    grid = lambda META: (triton.cdiv(n, META["BLOCK"]), rows)
    scale[grid](x, y, n, round_n, BLOCK=64)
    return y
''',
    )

    def check(self, state):
        yield from out_of_bounds(self, state, ("store", "atomic"))
