from kernlint.model import Frontend, Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule
from kernlint.source.tilelang_access import overruns


class UnguardedElementAccess(SourceRule):
    code = "KL205"
    name = "unguarded-element-access"
    category = "out-of-bounds"
    level = Level.ERROR
    frontends = (Frontend.TILELANG,)
    confirm = Confirmation(
        tool="compute-sanitizer",
        check="memcheck",
        threshold="> 0 invalid global or shared accesses at the line",
        env=(("PYTORCH_NO_CUDA_MEMORY_CACHING", "1"),),
        fallback="differential",
        description="memcheck reports the invalid access at the line (global, and shared past the block's "
        "allocation); a fragment or local overrun stays in registers and shows as a wrong output, which a run "
        "at a size that is not a multiple of the tile compares against a reference",
    )
    summary = "An element access in a TileLang loop can leave its buffer where TileLang adds no bounds check."
    docs = """
## What it does
Looks at every element access `X[...]` in a TileLang kernel body (inside `T.Parallel`, `T.serial`,
`T.grid`, `T.unroll` or `range` loops; tile ops such as `T.copy` are not element accesses) that
TileLang's `LegalizeSafeMemoryAccess` pass leaves unguarded, and reports those whose index can
leave the buffer:
- shared and local (`T.alloc_local`) buffers: the pass never guards them. The index's interval is worked
  out from the loop extents in every configuration the kernel runs with (factory defaults, call
  sites), e.g. `X_shared[i + 1, j]` over `T.Parallel(block_M, block_N)` into a
  `(block_M, block_N)` buffer;
- a global store whose value is `T.if_then_else(...)`: the pass takes it for a manual bounds check
  and skips its guard, although the store itself still happens;
- every global access when the module disables the pass (`tl.disable_safe_memory_legalize`).
Fragments (`T.alloc_fragment`) are not judged: their indices are coordinates that the inferred
layout distributes over the threads' registers, so a loop wider than the fragment widens the
layout instead of reaching another buffer.
For a global tensor the index must have the form `bx * B + i` with `bx` over `T.ceildiv(S, B)`
blocks and `i` over `B`: it runs past `S` unless `S` is provably a multiple of `B` (an `assert
S % B == 0`, or sizes fixed in the module). An enclosing `if` that tests the index counts as a
guard. An access under an `if` that is false at compile time in every configuration
(`if reduce_k > 1:` with the factory's `reduce_k = 1`) is not judged: TileLang's parser drops the
branch, so the generated code has no such access.

## Why is this bad?
TileLang makes most tail accesses safe without being asked -- `T.copy` predicates its loads and
stores, and element loads/stores on global tensors get bounds checks -- so a kernel that relies on
that is correct at any size. The exceptions are silent: an on-chip overrun reads or writes another
buffer's shared memory or registers, and an `if_then_else` store writes past the end of the
output (memory corruption rather than a fault, when the allocation is larger).

## Example
```python
for i, j in T.Parallel(block_M, block_N):
    C[by * block_M + i, bx * block_N + j] = T.if_then_else(acc[i, j] > 0, acc[i, j], 0)
```

## Use instead
```python
for i, j in T.Parallel(block_M, block_N):
    if by * block_M + i < M and bx * block_N + j < N:
        C[by * block_M + i, bx * block_N + j] = T.if_then_else(acc[i, j] > 0, acc[i, j], 0)
```
or `T.max(acc[i, j], 0)`, which TileLang guards.
"""
    bad = (
        '''
import tilelang.language as T

def relu_matmul(M, N, K, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            acc = T.alloc_fragment((block_M, block_N), "float")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, acc)
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = T.if_then_else(acc[i, j] > 0, acc[i, j], 0)  # expect: KL205

    return main
''',
        '''
import tilelang.language as T

def shift_rows(M, N, block_M=64, block_N=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            x_s = T.alloc_shared((block_M, block_N), "float32")
            y_s = T.alloc_shared((block_M, block_N), "float32")
            T.copy(X[by * block_M, bx * block_N], x_s)
            for i, j in T.Parallel(block_M, block_N):
                y_s[i, j] = x_s[i + 1, j] - x_s[i, j]  # expect: KL205
            T.copy(y_s, Y[by * block_M, bx * block_N])

    return main
''',
    )
    good = (
        '''
import tilelang.language as T

def relu_matmul(M, N, K, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            acc = T.alloc_fragment((block_M, block_N), "float")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, acc)
            for i, j in T.Parallel(block_M, block_N):
                if by * block_M + i < M and bx * block_N + j < N:
                    C[by * block_M + i, bx * block_N + j] = T.if_then_else(acc[i, j] > 0, acc[i, j], 0)

    return main
''',
        '''
import tilelang.language as T

def shift_rows(M, N, block_M=64, block_N=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            x_s = T.alloc_shared((block_M + 1, block_N), "float32")
            y_s = T.alloc_shared((block_M, block_N), "float32")
            T.copy(X[by * block_M, bx * block_N], x_s)
            for i, j in T.Parallel(block_M, block_N):
                y_s[i, j] = x_s[i + 1, j] - x_s[i, j]
            T.copy(y_s, Y[by * block_M, bx * block_N])

    return main
''',
    )

    def check(self, state):
        for over in overruns(state):
            where = "stored" if over.store else "read"
            unguarded = "TileLang guards no shared or local access" if not state.buffers[
                over.buffer].is_global else "TileLang skips its bounds check for a store of `T.if_then_else` (or the " \
                "module disables it)"
            yield self.finding(
                state, over.access,
                f"`{state.code(over.access)[:60]}` is {where} out of bounds on dimension {over.dim}: {over.why}; "
                f"{unguarded} -- add an `if` on the index",
                buffer=over.buffer, dim=over.dim,
            )
