from kernlint.engine.findings import discovered_helper
from kernlint.engine.run import scalar_pointer_masks
from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.compiles import blockers, compiled
from kernlint.source.rulebase import SourceRule


class KernelCannotCompile(SourceRule):
    code = "KL113"
    name = "kernel-cannot-compile"
    category = "api-misuse"
    level = Level.ERROR
    confirm = Confirmation(
        tool="none",
        check="compilation",
        threshold="triton.compile raises at this line (AttributeError, TypeError or a shape that is not constexpr)",
        description="the IR phase compiles the specialization and reports the compiler's error at this line",
    )
    summary = "A `@triton.jit` function that no supported Triton release compiles."
    docs = """
## What it does
Finds what stops a `@triton.jit` function from compiling on every Triton release kernlint supports.
The names and signatures of `triton.language` come from a table made from those releases (the
versions are named in the message). It reads:
- a `triton.language` name none of them has (`tl.eye`, `tl.launch`);
- a call of a `triton.language` function that binds its arguments as none of them accepts (a
  `tl.make_block_ptr` without `order`, a keyword it does not take, such as PyTorch's
  `tl.sum(x, axis=1, keepdim=True)` or `tl.softmax(x, axis=1)`, too many positional arguments);
- a method no Triton tensor has, called on a block a `triton.language` function returned
  (`k.transpose(1, 0)` of `k = tl.load(...)`; Triton's is `tl.trans` / `k.trans()`);
- a name nothing binds (`alpha_` beside a parameter `alpha`): no parameter or assignment of the
  function, no name of its module (assignments, imports, functions, classes), no builtin; Triton
  looks names up in those three places (not asked where a star import hides the module's names);
- a block indexed by position (`x[i]`, `x[0::2]`, `x[i, :]`, `mask[:, :k]` of `mask = offs[:, None]
  < M`): a block takes only `None` and `:`; an assignment into a block (`x[i] = v`): Triton has no
  item assignment;
- a load or store through a pointer to one element with a block for a mask (from the bounds
  engine's shapes);
- `float(n)`, `int(n)`, `math.sqrt(n)` of a parameter that is not `tl.constexpr` (a tensor inside
  the kernel);
- a launch from inside a `@triton.jit` function (`helper[grid](...)`), a program axis other than
  0, 1 and 2 (`tl.program_id(3)`);
- `with tl.atomic_cas(lock, 0, 1):` (a `with` over a `triton.language` function that returns a
  tensor, taken for a lock or a context manager);
- a reduction or scan (`tl.min`, `tl.max`, `tl.sum`, `tl.cumsum`, `tl.reduce`, ...) of a number, a
  literal or a `tl.constexpr` parameter (`tl.min(BLOCK_K, K - k)`, meant as `tl.minimum`): it reads
  its argument's dtype and shape, which a number has none of;
- a `**meta` parameter (Triton 1.0's way of passing block sizes): Triton 3.9 rejects it where the
  function is defined, earlier releases bind it as one required parameter that no launch fills;
- a block shape (`tl.zeros`, `tl.full`, `tl.reshape`, `tl.broadcast_to`, the `block_shape` of
  `tl.make_block_ptr`) read from a parameter of a launched kernel that is not `tl.constexpr` (a
  `@triton.jit` helper is not asked: its parameters are what its callers pass, constexprs included).

Only what Triton compiles is asked: a kernel the module launches and the helpers it calls (every
function, where the module launches none); a helper no launched kernel calls never fails. Every
line Triton rejects is reported, also after an earlier one in the same kernel or in a kernel launched
before it: each is one to fix. What would go wrong at run time (out of bounds, races, overflow) is
not judged of a kernel that cannot compile, nor of one every launch of which comes after a launch
that fails (an earlier statement of the same function, run on every path to it: the first launch
raises, so the second never runs).
A kernel that cannot compile (or that calls a helper that cannot) runs nothing: no other rule
judges what it would have done (out of bounds, races, overflow). `tl.arange` bounds are KL112's.

## Why is this bad?
Triton compiles a kernel at its first launch, so every call raises: `AttributeError: module
'triton.language' has no attribute 'eye'`, `TypeError: make_block_ptr() missing 1 required
positional argument: 'order'`, or a shape that is not a `tl.constexpr`. Code written for another
framework's tensors (NumPy, PyTorch) is the usual cause.

## Example
```python
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), x.transpose(0))
```

## Use instead
```python
@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), x)
```
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    eye = tl.eye(BLOCK)  # expect: KL113
    tl.store(x_ptr + offs, tl.sum(eye, 1))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, T, D, stride_t, stride_d, BT: tl.constexpr, BD: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (T, D), (stride_t, stride_d), (tl.program_id(0) * BT, 0), (BT, BD))  # expect: KL113
    tl.store(p, tl.zeros((BT, BD), dtype=tl.float32))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(y_ptr + offs[:, None] * BLOCK + offs[None, :], x.transpose(1, 0))  # expect: KL113
''',
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK, n), dtype=tl.float32)  # expect: KL113
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.sum(acc, 1))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    total = 0.0
    for i in range(BLOCK):
        total += x[i]  # expect: KL113
    tl.store(y_ptr, total)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def _fill(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)

@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    _fill[(1,)](x_ptr, BLOCK=BLOCK)  # expect: KL113
''',
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    total = tl.load(x_ptr + tl.program_id(0), mask=offs < n)  # expect: KL113
    tl.store(y_ptr + tl.program_id(0), total)
''',
        '''
import math
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, head_dim, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    scale = 1.0 / math.sqrt(head_dim)  # expect: KL113
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * scale)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, **meta):  # expect: KL113
    offs = tl.program_id(0) * meta["BLOCK"] + tl.arange(0, meta["BLOCK"])
    tl.store(x_ptr + offs, 0.0, mask=offs < n)
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(y_ptr + offs[:, None] * BLOCK + offs[None, :], tl.trans(x).to(tl.float32))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, T, D, stride_t, stride_d, BT: tl.constexpr, BD: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (T, D), (stride_t, stride_d), (tl.program_id(0) * BT, 0), (BT, BD), (1, 0))
    tl.store(p, tl.zeros((BT, BD), dtype=tl.float32), boundary_check=(0, 1))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def _tile(width, BLOCK):
    return tl.zeros((BLOCK, width), dtype=tl.float32)  # a helper's parameters are what its callers pass

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr, W: tl.constexpr):
    acc = _tile(W, BLOCK)
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.sum(acc, 1), mask=tl.arange(0, BLOCK) < n)
''',
        '''
import torch
import triton
import triton.language as tl

@triton.jit
def _next_multiple_of(a, b):
    return tl.cidv(a, b) * b  # no kernel calls it: Triton never compiles it

@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs[:, None], x[:, None], mask=(offs < n)[:, None])

def copy(x):
    y = torch.empty_like(x)
    k[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
    return y
''',
    )

    def check(self, state):
        if not compiled(state.info, state.kernel.node):
            return  # a helper no launched kernel calls: Triton never compiles it
        for blocker in blockers(state.info, state.kernel.node):
            yield self.finding(state, blocker.node, blocker.message)
        reported = state.info.__dict__.setdefault("_scalar_masks_reported", set())
        for access in scalar_pointer_masks(state):
            if id(access.node) in reported:
                continue
            reported.add(id(access.node))
            within = f" (in `{access.helper}`, called from `{state.name}`)" if access.helper is not None else ""
            finding = self.finding(state, access.node, (
                f"this {access.kind}{within} goes through a pointer to one element with a block for a mask: Triton "
                "rejects the kernel when it compiles it (`Mask argument cannot be block type if pointer argument "
                "is not a block`); add the block's offsets to the pointer, or reduce the mask to one value"))
            helper = discovered_helper(state, access.helper)
            if helper is not None:
                finding.span = helper.locator.span(access.node, None)
            yield finding
