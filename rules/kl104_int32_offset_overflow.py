import re

from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.bounds import assigned_value
from kernlint.source.discover import tuple_elements
from kernlint.source.rulebase import SourceRule

_SHAPE = re.compile(r"^\s*(\w+)\.(?:shape\[|size\()\s*(-?\d+)\s*[\])]\s*$")
_STRIDE = re.compile(r"^\s*(\w+)\.stride\(\s*(-?\d+)\s*\)\s*$")


def _resolve(state, text: str, before: int) -> str:
    """``head`` -> ``q.shape[1]`` through ``batch, head = b.shape[0], q.shape[1]`` before ``before``."""
    name = text.strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return text
    return assigned_value(state, name, before) or text


def _within_one_slice(state, index: frozenset, params: frozenset) -> bool:
    cache = state.__dict__.setdefault("_one_slice", {})
    key = (index, params)
    if key not in cache:
        cache[key] = _check_one_slice(state, index, params)
    return cache[key]


def _check_one_slice(state, index: frozenset, params: frozenset) -> bool:
    """``pid * stride`` where every launch runs that program-id axis over ``t.shape[k]`` and passes
    ``t.stride(k)``: the product stays below one slice of the outer dimension (``t.stride(k - 1)``),
    e.g. a head index times the head stride inside one token row."""
    if len(index) != 1 or len(params) != 1:
        return False
    (source,), (param,) = tuple(index), tuple(params)
    if not source.startswith("pid") or "stride" not in state.info.source:
        return False
    axis = int(source[3:])
    launches = state.info.launches_of(state.name)
    if not launches:
        return False
    names = [p.name for p in state.kernel.kernel.params]
    for launch in launches:
        elements = launch.grid_elements()
        if elements is None:  # `grid = (...)` assigned before the launch
            elements = tuple_elements(_resolve(state, launch.grid_text, launch.start)) or []
        positional, keywords = launch.argument_texts()
        stride_text = keywords.get(param)
        if stride_text is None and param in names and names.index(param) < len(positional):
            stride_text = positional[names.index(param)]
        if axis >= len(elements) or stride_text is None:
            return False
        shape = _SHAPE.match(_resolve(state, elements[axis], launch.start))
        strides = _STRIDE.match(stride_text)
        if not (shape and strides and shape.groups() == strides.groups() and int(shape.group(2)) != 0):
            return False
    return True


class Int32OffsetOverflow(SourceRule):
    code = "KL104"
    name = "int32-offset-overflow"
    category = "int-overflow"
    level = Level.WARNING
    precision = "medium"
    confirm = Confirmation(
        tool="compute-sanitizer",
        check="memcheck",
        threshold="> 0 invalid global accesses with a tensor of more than 2**31 elements",
        env=(("PYTORCH_NO_CUDA_MEMORY_CACHING", "1"),),
        fallback="interpreter",
        description="run with a tensor whose element count exceeds 2**31: the wrapped offset addresses memory "
        "before the tensor (memcheck) or the interpreter sees the negative offset",
    )
    summary = "`program_id * runtime size` is computed in int32 and feeds a pointer: it wraps past 2**31 elements."
    docs = """
## What it does
Finds products of a program id (or anything derived from it) and a runtime size or stride — `pid *
stride`, `row * n_cols` — that are computed in 32 bits and flow into the address of a load or store,
with neither factor widened by `.to(tl.int64)` first.

## Why is this bad?
`tl.program_id` is int32 and Triton passes integer arguments below 2**31 as int32, so the product is
an int32 multiply. For a tensor of more than 2**31 elements (8 GiB of fp32: long-context logits, KV
caches, large embeddings) it wraps to a negative offset and the kernel reads or writes memory before
the tensor. Casting the product afterwards is too late: the overflow has already happened.

## Example
```python
row = tl.program_id(0)
x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols)
```

## Use instead
```python
row = tl.program_id(0).to(tl.int64)
x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols)
```
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def rows(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    start = row * stride  # expect: KL104
    x = tl.load(x_ptr + start + cols, mask=cols < n_cols)
    tl.store(y_ptr + start + cols, x, mask=cols < n_cols)
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def rows(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols)
    tl.store(y_ptr + row * stride + cols, x, mask=cols < n_cols)
''',
    )

    def check(self, state):
        products: dict[str, tuple] = {}
        tags = set()
        for access in state.accesses:
            if not access.ptr.int64:
                tags |= {t for t in access.ptr.tags if t.startswith("i32mul:")}
        for tag in tags:
            if _within_one_slice(state, *state.product_factors.get(tag, (frozenset(), frozenset()))):
                continue
            node = state.products[tag]
            kind = next(a.kind for a in state.accesses if tag in a.ptr.tags)
            text = state.code(node)
            if text not in products or products[text][0] > int(tag[7:]):
                products[text] = (int(tag[7:]), node, kind)
        if not products:
            return
        # one finding per kernel, at the first product: the fix (widen the program id) is the same
        # headline: a product with a stride (the address arithmetic), else the first one
        ordered = sorted(products.items(), key=lambda item: ("stride" not in item[0].lower(), item[1][0]))
        text, (_, node, kind) = ordered[0]
        others = [t for t, _ in ordered[1:]]
        more = f" (and {len(others)} more: {', '.join(f'`{t}`' for t in others[:4])}{', ...' if len(others) > 4 else ''})" if others else ""
        yield self.finding(
            state, node,
            f"int32 offset overflow: `{text}` multiplies a program id by a runtime size in 32 bits and feeds "
            f"the address of a {kind}{more}; widen the program id with `.to(tl.int64)`",
            products=[text, *others],
        )
