from kernlint.model import Frontend, Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule


class UninitializedTileRead(SourceRule):
    code = "KL201"
    name = "uninitialized-tile-read"
    category = "uninitialized-read"
    level = Level.ERROR
    frontends = (Frontend.TILELANG,)
    confirm = Confirmation(
        tool="compute-sanitizer",
        check="initcheck",
        threshold="> 0 uninitialized shared reads, or outputs differing between two runs",
        fallback="differential",
        description="initcheck reports reads of uninitialized shared memory; register fragments are invisible to "
        "it, so the differential run (the kernel twice, with the allocator's memory poisoned differently in "
        "between) confirms when the outputs differ",
    )
    summary = "A TileLang fragment, local or shared buffer is read (e.g. as a `T.gemm` accumulator) before anything writes it."
    docs = """
## What it does
Follows every on-chip buffer of a TileLang kernel (`T.alloc_fragment`, `T.alloc_local`, `T.alloc_var`,
`T.alloc_shared`) in program order and reports the first read of a per-thread buffer (fragment, local,
var) that no earlier statement writes, and any read of a shared buffer that nothing in the kernel
writes at all. Reads include the accumulator of `T.gemm` (which computes `C += A @ B` unless
`clear_accum=True`; only its third argument `C` accumulates, `A` and `B` are read), the output of
`T.reduce_*(..., clear=False)`, `x[i] += ...`, `T.dp4a`'s accumulator, the inputs of
`T.tvm_thread_allreduce`, the source of `T.copy` and element reads (an alloc_var is read by its bare
name). Writes are `T.clear`, `T.fill`, `T.copy` into the buffer, element stores, a plain assignment
to an alloc_var (`m = -T.infinity(dtype)`: TileLang turns it into a store), `T.gemm(...,
clear_accum=True)` and `clear_accum=(j == 0)` inside a loop over `j` from 0 (the first pass clears),
reductions with `clear=True`, the outputs of `T.tvm_thread_allreduce`, pointers handed out for
writing (`T.access_ptr(buf, "w")`, `tvm_access_ptr` with the write bit, `T.address_of`), a T.*
intrinsic called as a statement with the buffer (`T.clc_try_cancel_multicast(result, bar)`: its
value is discarded, so it is there for its effect) and any user helper the buffer escapes to. A
`clear_accum` that is not a constant or a first-pass test is given the benefit of the doubt.

## Why is this bad?
Fragments live in registers and shared buffers in shared memory; neither is zeroed on allocation.
`T.gemm` accumulates into its `C` operand, so a missing `T.clear(C_local)` adds the previous
contents of the registers to the product: the result is garbage that often happens to be zero in a
small test and NaN on another GPU. TileLang's own `VerifyBufferInit` pass only warns, and only when
nothing writes the buffer anywhere. For per-thread buffers source order is execution order, so a
write that comes after the first read does not help.

## Example
```python
C_local = T.alloc_fragment((block_M, block_N), "float")
for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
    T.copy(A[by * block_M, k * block_K], A_shared)
    T.copy(B[k * block_K, bx * block_N], B_shared)
    T.gemm(A_shared, B_shared, C_local)
```

## Use instead
```python
C_local = T.alloc_fragment((block_M, block_N), "float")
T.clear(C_local)
for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
    ...
    T.gemm(A_shared, B_shared, C_local)
```
Shared buffers are only reported when nothing writes them at all: in a warp-specialized kernel the
producer branch can follow the consumer in source order.
"""
    bad = (
        '''
import tilelang.language as T

def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float")
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)  # expect: KL201
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
''',
        '''
import tilelang.language as T

def row_sum(M, N, block_M=64, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), dtype)
            acc = T.alloc_fragment((block_M,), dtype)
            T.copy(X[bx * block_M, 0], x)
            for i in T.Parallel(block_M):
                for j in T.serial(N):
                    acc[i] += x[i, j]  # expect: KL201
            T.copy(acc, Y[bx * block_M])

    return main
''',
    )
    good = (
        '''
import tilelang.language as T

def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
''',
        '''
import tilelang.language as T

def row_sum(M, N, block_M=64, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), dtype)
            acc = T.alloc_fragment((block_M,), dtype)
            T.copy(X[bx * block_M, 0], x)
            T.reduce_sum(x, acc, dim=1)
            T.copy(acc, Y[bx * block_M])

    return main
''',
    )

    def check(self, state):
        written: set[str] = set()
        reported: set[str] = set()
        ever_written = {w for op in state.ops for w in op.writes}
        for op in state.ops:
            for name in op.reads:
                buf = state.buffers.get(name)
                if buf is None or buf.is_global or name in reported or name in written:
                    continue
                if op.kind == "gemm" and op.clear in ("always", "first", "unknown") and name in op.writes:
                    continue  # clear_accum clears it on the first execution (or may: it is not a constant)
                if buf.scope == "local.var" and buf.initialised:
                    continue
                if buf.is_shared and name in ever_written:
                    continue
                if not (buf.per_thread or buf.is_shared):
                    continue
                reported.add(name)
                what = "accumulates into" if name in op.writes else "reads"
                yield self.finding(
                    state, op.node,
                    f"`{state.code(op.node).splitlines()[0][:60]}` {what} `{name}` ({buf.scope}) before anything "
                    f"writes it; on-chip buffers start with garbage (add `T.clear({name})` or `T.fill` first)",
                    buffer=name, scope=buf.scope,
                )
            written.update(op.writes)
