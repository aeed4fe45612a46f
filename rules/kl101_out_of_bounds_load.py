from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.engine.findings import out_of_bounds
from kernlint.source.rulebase import SourceRule


class OutOfBoundsLoad(SourceRule):
    code = "KL101"
    name = "out-of-bounds-load"
    category = "out-of-bounds"
    level = Level.ERROR
    confirm = Confirmation(
        tool="compute-sanitizer",
        check="memcheck",
        threshold="> 0 invalid global reads at the line",
        env=(("PYTORCH_NO_CUDA_MEMORY_CACHING", "1"),),
        fallback="interpreter",
        description="memcheck (caching allocator off, --padding) reports an invalid __global__ read at the "
        "line; over-reads inside the allocation granularity are confirmed by the interpreter's exact-bounds check",
    )
    summary = "A `tl.load` whose offsets can run past the tensor on an axis no mask bounds."
    docs = """
## What it does
Evaluates the kernel symbolically (program ids, `tl.arange` lanes, loop iterations, sizes; helpers
inlined) and asks a solver, for every `tl.load`, whether some program, lane and loop iteration
where the mask holds reads outside the tensor behind the pointer. The tensor's extent comes from
a launch in the module (`x.numel()`, `M, N = x.shape`, `torch.empty((M, N))`, a row's
`x[0, 0].numel()` as the count over the leading sizes, the grid, the
wrapper's asserts); where no launch gives it, only from what the kernel states itself: a mask
elsewhere in the kernel that bounds an index this address is built from (or that index shifted by
a number, `(t + 1) * stride` beside `t < T`: the next row), unless the kernel gives the lanes
past that bound values of their own (`tl.where(d < ROT, rotated, x)`: the bound splits the axis,
the rotary part of a head, and is no extent; a constant fill, `tl.where(mask, x, 0.0)`, keeps it).
Such a question keeps what every launch says of the grid even where its values cannot be read: a
grid axis the launch passes to a parameter too (`(tiles, split)` beside `SPLIT=split`, `split` from
a helper) bounds that axis's program ids by the parameter. A number a function of the module
computes (`ids, n_pad = _align(...)`) that the launch passes to runtime sizes only is one value
wherever the wrapper reads it (the grid's `cdiv(n_pad, B)`, the argument, `torch.empty((n_pad, D))`),
a size of its own; a block size or a flag a helper picks stays unread. The message carries a
witness (sizes, program ids, lanes, loop counters, the address against the extent) to check by
hand; an access the engine cannot model or prove either way is not reported. An access under an
`if` on a compile-time flag no launch fixes is not judged (the flag may encode what the author
proved); a flag `@triton.heuristics` computes from the kernel's parameters
(`"EVEN_M": lambda args: args["M"] % args["BLOCK_M"] == 0`) is no such flag: it is read as that
relation, at every launch, and so is a block size it picks (`min(triton.next_power_of_2(args["N"]),
1024)`, `4 if args["C"] > 128 else 16`). A string mode (`if MODE == "sum":`) is a compile-time value like any other:
the launch's string decides which branches are compiled. A wrapper parameter passed on as it is
(`MODE=mode`) is the caller's choice, except for its default (`mode="gather"`): a call that leaves
it out is one the wrapper accepts, so the default's branches are judged. An axis counted from the
back (`k.size(-2)`) is the one counted from the front (`k.shape[2]`) where the wrapper shows the
tensor's rank (`assert k.dim() == 4`, or a later axis it reads, `k.stride(3)`). Of a test the
wrapper passes (an `assert`, an `if` it stands in, an `if ...: raise` guard) each part the engine
reads counts on its own: `if x is None or n % 128: raise` leaves `n % 128 == 0`; a shape written out
(`assert bias.shape == (N,)`, `if s.ndim != 1 or s.size(0) != M: raise`) gives a parameter tensor its
rank and sizes; `assert v.shape == k.shape` gives `v` the sizes of `k`. An optional argument (`bias=None`) is the caller's choice: the wrapper's tests of it
(`HAS_BIAS=bias is not None`, `bias if bias is not None else x`) are read as one choice, and an
`assert` under `if bias is not None:` holds where that test does; a tensor the wrapper makes where the
caller passes none (`if scale is None: scale = torch.full((H,), ...)`) has that extent where the
caller passes none, and no known extent otherwise. A size a stated bound of a tensor's elements is compared with (`assert int(lens.max()) <=
pages_per_seq * page` of `pages_per_seq = table.shape[1]`) is related to what the kernel gathers:
with a stated rank it gives that tensor a layout, and a loaded element of a tensor with a stated
least or greatest lies within them in a witness. A mask that lets lanes through up to a value the kernel loads (`offs < end - start`
of two loads of `cu_seqlens`) keeps them inside the tensor by a contract between the host and its
metadata that the code does not state: such an access is proven where it can be, never convicted,
since its witness would rest on what memory holds. A size of the tensor the kernel sees only
inside a stride (`b.shape[1]` of a batched `b`, in `b.stride(0)`, beside `batch, M, K = a.shape; _,
_, N = b.shape`) is asked equal to a size of another tensor the mask bounds the access by (`K`): a
matmul's inner dimensions are a contract the wrapper need not state, and an access that leaves its
tensor only where a caller breaks it is no finding. A `@triton.jit`
helper another kernel of the module calls, and nothing launches, is judged inlined at each call, under
what that call passes (its block sizes are the caller's), not alone.

## Why is this bad?
The grid covers `cdiv(n, BLOCK)` programs, so the last block reads past the end whenever `n` is not a
multiple of `BLOCK`. The read is silent: it returns whatever lies behind the tensor (another tensor,
or garbage), or faults with an illegal address when it crosses into unmapped memory.

## Example
```python
offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
x = tl.load(x_ptr + offs)
```

## Use instead
```python
offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
```
Accesses the solver proves in range are not reported (a block that spans a whole dimension,
offsets wrapped with `%` or clamped with `tl.minimum`, loops that stop at the last whole block);
neither are gathers through loaded indices, unless the wrapper states the least and greatest
index (`assert int(ids.min()) >= 0 and int(ids.max()) < V`, or an `if ...: raise` guard; of the
first elements, `ids[:n].max()`, as of all): a loaded index then lies between the two, and a witness
is an index the check lets through. Without such a
statement a gather is still asked with every loaded value 0, an index any table takes: past the end
of its tensor (the stride of another, wider tensor), and before its start where the mask or a test
on the path reads the loaded value itself (`pos < window_end` before `pos - window_start`: the kernel
checks the value against a range, so values outside it are inputs it is written for); and where the
mask reads loaded lengths (`t < end - start` of `cu_seqlens`), before its start with only the
address's loaded values at 0 and the lengths free (a first sequence that starts at row 0 and is not
empty: `x[start + t - 1]` without `t >= 1`). A loaded index the kernel tests for a value (`lab !=
pad_id` of a number the launch passes) or against a bound the launch computes from a tensor's
size (`real = ids < n_real` of `n_real = T * k`, `T = x.shape[0]`) is also asked at the
first value that fails the test: the kernel expects it, so a gather that does not mask with the
test reads it (a padded slot's id); a value loaded only into the mask (a slot count read from
memory, `slots < tl.load(n_used_ptr)`) needs no stated bound then: the lanes it lets through are
asked at their first. And a gather through a scalar a program loads (`pos = tl.load(pos_ptr +
tok)`) into a tensor whose sizes the launch gives is asked with its first lane inside the tensor:
any start inside it is an input the kernel is written for, so lanes that run on past the end (a
row read `offs < D` wide from a table of `D // 2`-wide rows, at the last position) are a bug. A load through a `tl.make_block_ptr` is judged with
its `boundary_check` dimensions as the mask: a block past the tensor on an unchecked dimension,
or a `shape` larger than the tensor, is reported here (KL109 reports a moving block without
`boundary_check` even where the tensor's extent is unknown).
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # expect: KL101
    tl.store(y_ptr + offs, x, mask=offs < n)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def rows(x_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=rm[:, None] < M)  # expect: KL101

def run(x):
    M, N = x.shape
    rows[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, M, N, x.stride(0), BM=32, BN=32)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def off_by_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs <= n)  # expect: KL101

def run(x):
    off_by_one[(triton.cdiv(x.numel(), 128),)](x, x.numel(), BLOCK=128)
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def head(x_ptr, y_ptr, stride, D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, D)
    tl.store(y_ptr + row * stride + cols, tl.load(x_ptr + row * stride + cols))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def wrapped(a_ptr, M, K, stride, BM: tl.constexpr, BK: tl.constexpr):
    rm = (tl.program_id(0) * BM + tl.arange(0, BM)) % M
    rk = tl.arange(0, BK)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr + rm[:, None] * stride + (k * BK + rk)[None, :], mask=(k * BK + rk)[None, :] < K, other=0.0)
''',
    )

    def check(self, state):
        yield from out_of_bounds(self, state, ("load",))
