from kernlint.model import Frontend, Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule
from kernlint.source.tilelang_padding import pad_flows


class PaddedTailReduction(SourceRule):
    code = "KL203"
    name = "padded-tail-reduction"
    category = "wrong-identity"
    level = Level.WARNING
    frontends = (Frontend.TILELANG,)
    confirm = Confirmation(
        tool="differential",
        check="compare against a reference at a size that is not a multiple of the tile",
        threshold="any mismatch beyond tolerance in the last tile's rows",
        description="run the kernel at a size one element past a multiple of the tile (e.g. N = 4 * block_N + 1) "
        "and compare with a reference: the rows whose reduction sees the zero-filled tail differ",
    )
    summary = "A TileLang reduction runs over a tile tail that `T.copy` zero-filled, and zero is not its identity."
    docs = """
## What it does
Tracks, for each on-chip buffer and dimension, whether it can hold the padding TileLang puts in
place of out-of-range elements: a `T.copy` from a global tensor whose tile start moves with a block
or loop index (`X[bx * block_M, k * block_N]`) runs past the end of the tensor whenever the tensor's
size is not a provable multiple of the tile (sizes are resolved from the factory's defaults and
call sites; a size that is a parameter of the factory can be any value, so its call sites are
examples and only an `assert` makes it a multiple: `assert N % block_N == 0`, a factor that is
one, or `assert L % 2 == 0` with `(L // 2) % block_N == 0`). The padding follows `T.copy`,
`T.gemm` and element-wise `T.Parallel` statements (staying zero through `*` and `/`, becoming
non-zero through `exp`, `-` and the like). The rule reports `T.reduce_max`/`T.reduce_min` over a
padded dimension, and `T.reduce_sum` (or an `acc[i] += ...` loop) over a dimension whose padding
is no longer zero. A statement that masks with `T.if_then_else(...)` or sits under an `if` clears
the padding. A mask written into the accumulator *before* an accumulating `T.gemm` keeps the
padded columns at its fill value (`-inf + 0` stays `-inf`), when its test compares the column index
with the tensor's extent (`k * block_N + j >= seq_len`) or with the row index (a causal mask: a row
in range never reaches the key tail; this assumes the query rows do not outnumber the keys).
A tile whose start has a term read from memory that is not a multiple of the tile (a packed-sequence
offset, `K[cu_seqlens[b] + k * block_N : ...]`) is placed by the data, which the rule cannot see: it
is judged only when its loop (or grid axis, or an enclosing `if v < E`) counts tiles with
`T.ceildiv(L, block_N)` of a length `L` that is not a provable multiple of the tile. The last tile
then runs past its sequence (into the zero-filled end of the tensor for the last one); a walk in
whole tiles (`L // block_N`) stays inside its sequence whatever the offsets are.

## Why is this bad?
TileLang does not fault on the tail tile: it guards the copy and fills the missing elements with 0
(`T.copy` predicates its loads; element loads get the buffer's "safe value", 0 by default). Zero
is right for a GEMM, but `max` of a row of negative numbers padded with zeros is 0, and in a
softmax `exp(0 - row_max)` adds a spurious term per padded column to the denominator. The kernel
is correct for every size that is a multiple of the tile and silently wrong for the rest.

## Example
```python
T.copy(X[bx * block_M, 0], x)           # X is (M, N), x is (block_M, block_N); N % block_N != 0
T.reduce_max(x, row_max, dim=1)
for i, j in T.Parallel(block_M, block_N):
    x[i, j] = T.exp(x[i, j] - row_max[i])
T.reduce_sum(x, row_sum, dim=1)
```

## Use instead
```python
T.copy(X[bx * block_M, 0], x)
for i, j in T.Parallel(block_M, block_N):
    x[i, j] = T.if_then_else(j < N, x[i, j], -T.infinity("float32"))
T.reduce_max(x, row_max, dim=1)
```
or make the size a multiple of the tile (`assert N % block_N == 0` in the factory).
"""
    bad = (
        '''
import tilelang.language as T

def softmax(M, N, block_M=4, block_N=1024, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, block_N), dtype)
            row_max = T.alloc_fragment((block_M,), dtype)
            row_sum = T.alloc_fragment((block_M,), dtype)
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, row_max, dim=1)  # expect: KL203
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = T.exp(x[i, j] - row_max[i])
            T.reduce_sum(x, row_sum, dim=1)  # expect: KL203
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_M, 0])

    return main

kernel = softmax(4096, 1000)
''',
        '''
import tilelang.language as T

def row_max(M, N, block_M=64, block_N=128, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, block_N), dtype)
            m = T.alloc_fragment((block_M,), dtype)
            best = T.alloc_fragment((block_M,), dtype)
            T.fill(best, -T.infinity(dtype))
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, k * block_N], x)
                T.reduce_max(x, m, dim=1)  # expect: KL203
                for i in T.Parallel(block_M):
                    best[i] = T.max(best[i], m[i])
            T.copy(best, Y[bx * block_M])

    return main
''',
    )
    good = (
        '''
import tilelang.language as T

def softmax(M, N, block_M=4, block_N=1024, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, block_N), dtype)
            row_max = T.alloc_fragment((block_M,), dtype)
            row_sum = T.alloc_fragment((block_M,), dtype)
            T.copy(X[bx * block_M, 0], x)
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = T.if_then_else(j < N, x[i, j], -T.infinity(dtype))
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = T.exp(x[i, j] - row_max[i])
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_M, 0])

    return main

kernel = softmax(4096, 1000)
''',
        '''
import tilelang.language as T

def row_max(M, N, block_M=64, block_N=128, dtype="float32"):
    assert N % block_N == 0
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, block_N), dtype)
            m = T.alloc_fragment((block_M,), dtype)
            best = T.alloc_fragment((block_M,), dtype)
            T.fill(best, -T.infinity(dtype))
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, k * block_N], x)
                T.reduce_max(x, m, dim=1)
                for i in T.Parallel(block_M):
                    best[i] = T.max(best[i], m[i])
            T.copy(best, Y[bx * block_M])

    return main
''',
    )

    def check(self, state):
        seen = set()
        for flow in pad_flows(state):
            if flow.op.index in seen:
                continue
            seen.add(flow.op.index)
            origin = state.code(flow.origin.node)
            what = (
                f"zero padding is not the identity of {flow.reduce}"
                if flow.kind == "zero"
                else "the zero padding no longer is zero here (it went through a non-linear step)"
            )
            yield self.finding(
                state, flow.op.node,
                f"{flow.reduce} over dimension {flow.dim} of `{flow.buffer}`, whose tail `{origin[:60]}` fills with "
                f"0 when the tensor is not a multiple of the tile: {what}; mask the tail with T.if_then_else",
                buffer=flow.buffer, dim=flow.dim, padding=flow.kind, origin=origin,
            )
