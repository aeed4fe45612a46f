from kernlint.engine.findings import named, reported_once
from kernlint.engine.run import foreign_strides
from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule


class ForeignStride(SourceRule):
    code = "KL114"
    name = "foreign-stride"
    category = "out-of-bounds"
    level = Level.ERROR
    confirm = Confirmation(
        tool="compute-sanitizer",
        check="memcheck",
        threshold="> 0 invalid global accesses at the line",
        env=(("PYTORCH_NO_CUDA_MEMORY_CACHING", "1"),),
        fallback="interpreter",
        description="where the stride passed is larger than the tensor's own, the access leaves the tensor: memcheck "
        "(or the interpreter's exact-bounds check) reports it at the line; a smaller one reads the wrong "
        "elements, which only a reference comparison shows (a clean run does not refute it)",
        refutes=False,
    )
    summary = "A launch passes one tensor's stride (`idx.stride(0)`) for a parameter the kernel walks another tensor with."
    docs = """
## What it does
For each launch in the module, finds the scalar arguments written as a tensor's stride
(`x.stride(0)`, or a name bound to one before the launch) and the pointers whose addresses the
kernel computes with that parameter. Where none of those pointers is bound to the tensor the stride
is taken from (nor to a tensor sharing its storage, `x.view(-1)`, or made like it,
`torch.empty_like(x)`), the kernel walks one tensor by another's stride. The bounds engine then asks,
under the launch's facts (the values it passes, the wrapper's asserts) with each tensor laid out
contiguously in its sizes: can the stride passed differ from every stride of the tensor walked? A
witness (the sizes, the stride passed, the walked tensor's strides there) is reported at the first
access through that pointer. A stride that equals one of the walked tensor's strides for every size
the wrapper accepts (two tensors of one shape, both contiguous) is not reported; neither is a pointer
to a slice or an expression, whose tensor's layout is not known.

A stride that walks its own tensor too (`x.stride(0)` for `x` and for `residual`) is a layout shared
on purpose, except where the launch also passes the other tensor's own stride of that axis
(`residual.stride(0)` as `stride_r`) and the access does not read it: the wrapper hands each tensor
its stride and the kernel walks one by another's. That is a warning where the two agree while both
tensors are contiguous (wrong for a caller's view of a wider buffer, which the wrapper accepts; not
reported where the wrapper makes or asserts both contiguous), an error where they can differ. A
stride the launch passes twice, for its own tensor (`stride_x=x.stride(0)`) and for another's
parameter (`stride_r=x.stride(0) if r is not None else 0`), both tensors laid out by the caller, is
a warning too: the kernel takes the two layouts apart and the launch makes them one. (Of a stride
written `t.stride(0) if t is not None else 0`, the number is what stands where there is no tensor.)

## Why is this bad?
Each row (or head, or batch) the kernel steps to is found by the stride: with another tensor's, the
kernel reads or writes the wrong elements, and past the end of the tensor where that stride is the
larger one. It is typical of a wrapper copied from a kernel with a different argument list, or of
generated code passing the strides of the input for the output. The bounds rules (KL101, KL102) see
it only where the walked tensor's other sizes reach the kernel some other way; here the stride is
the only place the kernel could have learnt them.

Where the stride passed equals one of the walked tensor's strides for contiguous tensors, but the
tensor it is taken from may be a view the caller passes (the wrapper neither makes it nor asserts it
contiguous; `assert x.stride(1) == 1` accepts rows of a wider buffer) while the walked tensor is one
the wrapper lays out contiguously, the finding is a warning: wrong for such an input only.

## Example
```python
@triton.jit
def gather(x_ptr, idx_ptr, out_ptr, K, stride_xm, BLOCK: tl.constexpr):
    m = tl.program_id(0).to(tl.int64)
    k = tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + m * K + k, mask=k < K, other=0)
    tl.store(out_ptr + m * K + k, tl.load(x_ptr + m * stride_xm + i, mask=k < K), mask=k < K)

gather[(M,)](x, idx, out, K, idx.stride(0), BLOCK=...)  # x is [M, N]: its rows are N apart, not K
```

## Use instead
```python
gather[(M,)](x, idx, out, K, x.stride(0), BLOCK=...)
```
"""
    bad = (
        '''
import torch
import triton
import triton.language as tl

@triton.jit
def gather(x_ptr, idx_ptr, out_ptr, K, stride_xm, BLOCK: tl.constexpr):
    m = tl.program_id(0).to(tl.int64)
    k = tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + m * K + k, mask=k < K, other=0)
    v = tl.load(x_ptr + m * stride_xm + i, mask=k < K)  # expect: KL114
    tl.store(out_ptr + m * K + k, v, mask=k < K)

def take(x, idx):
    M, N = x.shape
    Mi, K = idx.shape
    assert Mi == M and x.is_contiguous() and idx.is_contiguous()
    out = torch.empty((M, K), device=x.device, dtype=x.dtype)
    gather[(M,)](x, idx, out, K, idx.stride(0), BLOCK=triton.next_power_of_2(K))
    return out
''',
        '''
import torch
import triton
import triton.language as tl

@triton.jit
def lookup(table_ptr, pos_ptr, out_ptr, D, stride_t, BLOCK: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    p = tl.load(pos_ptr + t)
    d = tl.arange(0, BLOCK)
    row = tl.load(table_ptr + p * stride_t + d, mask=d < D)  # expect: KL114
    tl.store(out_ptr + t * D + d, row, mask=d < D)

def rows_for(table, pos, q):
    P, D = table.shape
    T, H, Dq = q.shape
    assert Dq == D and pos.shape == (T,) and table.is_contiguous() and q.is_contiguous()
    out = torch.empty((T, D), device=q.device, dtype=table.dtype)
    stride = q.stride(0)  # q's tokens are H * D apart; the table's rows are D apart
    lookup[(T,)](table, pos, out, D, stride, BLOCK=triton.next_power_of_2(D))
    return out
''',
    )
    good = (
        '''
import torch
import triton
import triton.language as tl

@triton.jit
def gather(x_ptr, idx_ptr, out_ptr, K, stride_xm, BLOCK: tl.constexpr):
    m = tl.program_id(0).to(tl.int64)
    k = tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + m * K + k, mask=k < K, other=0)
    v = tl.load(x_ptr + m * stride_xm + i, mask=k < K)
    tl.store(out_ptr + m * K + k, v, mask=k < K)

def take(x, idx):
    M, N = x.shape
    Mi, K = idx.shape
    assert Mi == M and x.is_contiguous() and idx.is_contiguous()
    out = torch.empty((M, K), device=x.device, dtype=x.dtype)
    gather[(M,)](x, idx, out, K, x.stride(0), BLOCK=triton.next_power_of_2(K))
    return out
''',
        '''
import torch
import triton
import triton.language as tl

@triton.jit
def copy_rows(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    tl.store(y_ptr + r * stride + c, tl.load(x_ptr + r * stride + c, mask=c < N), mask=c < N)

def copy(x):
    R, N = x.shape
    y = torch.empty_like(x)  # made like x: one layout, x's stride walks both
    copy_rows[(R,)](x, y, N, x.stride(0), BLOCK=triton.next_power_of_2(N))
    return y
''',
        '''
import torch
import triton
import triton.language as tl

@triton.jit
def add_rows(x_ptr, y_ptr, out_ptr, N, stride_out, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r * N + c, mask=c < N) + tl.load(y_ptr + r * N + c, mask=c < N)
    tl.store(out_ptr + r * stride_out + c, v, mask=c < N)

def add(x, y):
    R, N = x.shape
    assert x.is_contiguous() and y.shape == (R, N) and y.is_contiguous()
    out = torch.empty((R, N), device=x.device, dtype=x.dtype)
    add_rows[(R,)](x, y, out, N, y.stride(0), BLOCK=triton.next_power_of_2(N))  # y's rows are out's
    return out
''',
    )

    def check(self, state):
        for f in foreign_strides(state):
            pointer, where = named(state, f.access)
            passed = f"{f.source[0]}.stride({f.source[1]})"
            head = (f"stride of another tensor{where}: `{pointer}` walks `{f.tensor}` by `{f.param}`, which "
                    f"{f.facts.label} passes as `{passed}`")
            evidence = dict(pointer=pointer, parameter=f.param, passed=passed, tensor=f.tensor)
            if f.own is not None:
                head += f", while it passes `{f.tensor}`'s own as `{f.own}`"
            if f.own is not None and f.contiguous_only:
                for finding in reported_once(self, state, f.access,
                        f"{head}: the two differ wherever the "
                        f"caller's tensors are laid out differently (a view of a wider buffer), which the wrapper "
                        f"accepts; walk `{f.tensor}` by `{f.own}`", **evidence, own=f.own):
                    finding.level = Level.WARNING  # wrong only for such an input: the input decides
                    yield finding
                continue
            if f.twin is not None:
                for finding in reported_once(self, state, f.access,
                        f"{head}, and as `{f.twin}` for `{f.source[0]}` itself: the kernel takes the two layouts "
                        f"apart, and they differ wherever the caller's tensors are laid out differently (a view of a "
                        f"wider buffer); pass a stride of `{f.tensor}`", **evidence, twin=f.twin):
                    finding.level = Level.WARNING  # wrong only for such an input: the input decides
                    yield finding
                continue
            if f.contiguous_only:
                for finding in reported_once(self, state, f.access,
                        f"{head}: it is one of `{f.tensor}`'s strides only while `{f.source[0]}` is contiguous, "
                        f"which the wrapper does not ensure (a view the caller passes, rows of a wider buffer, has "
                        f"a stride of its own); pass a stride of `{f.tensor}`", **evidence):
                    finding.level = Level.WARNING  # wrong only for a caller's view: the input decides
                    yield finding
                continue
            shown = ", ".join(f"{k}={v}" for k, v in f.witness.items())
            yield from reported_once(self, state, f.access,
                f"{head}: laid out contiguously, it is {f.passed} where `{f.tensor}`'s strides are {f.strides}; "
                f"witness: {shown}; pass a stride of `{f.tensor}`", **evidence, witness=f.witness)
