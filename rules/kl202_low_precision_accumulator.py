import libcst as cst

from kernlint.model import Frontend, Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule
from kernlint.source.tilelang import LOW_PRECISION


#: at most this many terms accumulated in 16 bits stay within a few units of the last place
SHORT_REDUCTION = 16


def _short(state, env, loops) -> bool:
    terms = 1
    for lp in loops:
        stop = env.value(lp.extents[0]) if lp.extents else None
        if stop is None and lp.extents and isinstance(lp.extents[0], cst.Name):
            stop = max(state.tuned_values(lp.extents[0].value, env) or [None], key=lambda v: v or 0)
        if not isinstance(stop, int):
            return False
        terms *= max(stop - (lp.start or 0), 0)
    return terms <= SHORT_REDUCTION


class LowPrecisionAccumulator(SourceRule):
    code = "KL202"
    name = "low-precision-accumulator"
    category = "api-misuse"
    level = Level.WARNING
    frontends = (Frontend.TILELANG,)
    confirm = Confirmation(
        tool="differential",
        check="max relative error against a float64 reference",
        threshold="> 1e-2 at K >= 4096",
        description="run the kernel and a float64 reference on random inputs with a long reduction axis; the "
        "16-bit accumulator's error grows with K while a float32 accumulator's stays near the input rounding",
    )
    summary = "A TileLang `T.gemm` or `+=` accumulates across a loop into a float16/bfloat16/float8 buffer."
    docs = """
## What it does
Resolves the dtype of the accumulator of every `T.gemm` (its `C` operand) and of every element
accumulation `acc[...] += ...`, following the dtype through the factory's parameters, their defaults
and the arguments at its call sites. It reports those whose accumulator is float16, bfloat16 or an
8-bit float while the accumulation runs across the iterations of a loop (`T.Pipelined`,
`T.serial`, `range`), i.e. a reduction over a long axis. A reduction whose loops (from the last
reset of the accumulator inward) have known trip counts multiplying to at most 16 in every
configuration -- a split-K sum of a few partials -- is not reported.

## Why is this bad?
A float16 accumulator keeps 11 significant bits: once the running sum is large, each new partial
product is rounded away in part, and the error grows with the length of the reduction. bfloat16
keeps 8 bits. TileLang passes the accumulator dtype straight to the MMA instruction (`T.gemm`
computes `C += A @ B` in `C`'s dtype), so nothing upgrades it: a GEMM over K = 8192 in a float16
accumulator typically misses a float32 reference by several percent, and overflows to `inf` past
65504. The usual form is `accum_dtype="float"` with the inputs in float16, then a cast on the
final `T.copy` to the output.

## Example
```python
C_local = T.alloc_fragment((block_M, block_N), "float16")
T.clear(C_local)
for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
    ...
    T.gemm(A_shared, B_shared, C_local)
```

## Use instead
```python
C_local = T.alloc_fragment((block_M, block_N), "float")
T.clear(C_local)
for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
    ...
    T.gemm(A_shared, B_shared, C_local)
T.copy(C_local, C[by * block_M, bx * block_N])  # casts to C's float16 on the way out
```
"""
    bad = (
        '''
import tilelang.language as T

def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)  # expect: KL202
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
''',
    )
    good = (
        '''
import tilelang.language as T

def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
''',
    )

    def check(self, state):
        reported: set[str] = set()
        for op in state.ops:
            if op.kind not in ("gemm", "augstore") or not op.writes:
                continue
            acc = op.writes[0]
            if acc in reported or acc not in op.reads:  # clear_accum=True starts afresh
                continue
            # the accumulation must run across iterations of a sequential loop ...
            loops = [lp for lp in op.loops if lp.kind in ("pipelined", "serial", "range", "unroll")]
            if not loops:
                continue
            # ... that does not reset the accumulator before it in each iteration
            inner = loops[-1]
            if any(
                prior.kind in ("clear", "fill", "copy", "store") and acc in prior.writes and inner in prior.loops
                for prior in state.ops[: op.index]
            ):
                continue
            # a short reduction (a split-K sum of a few partials) cannot lose much: every sequential loop the
            # accumulation spans must have a known trip count, and their product stay small in every config
            spans = [lp for lp in loops if not any(
                prior.kind in ("clear", "fill", "copy", "store") and acc in prior.writes and lp in prior.loops
                for prior in state.ops[: op.index])]
            if all(_short(state, env, spans) for env in state.configs if state.reachable(op, env)):
                continue
            if op.kind == "augstore" and op.dst is not None and not op.dst.whole:
                # acc[i] += x[i, k] over k: the loop variable must not index the accumulator
                idx = {n for start, _ in op.dst.dims if start is not None for n in state.depends(start)}
                if all(set(lp.vars) & idx for lp in loops):
                    continue
            dtypes = {state.dtype_of(acc, env) for env in state.configs if state.reachable(op, env)}
            low = sorted(d for d in dtypes if d in LOW_PRECISION)
            if not low:
                continue
            reported.add(acc)
            what = "`T.gemm` accumulates" if op.kind == "gemm" else "this `+=` accumulates"
            yield self.finding(
                state, op.node,
                f"{what} across the `{state.code((spans or loops)[0].node.iter)[:40]}` loop into `{acc}` of dtype {low[0]}; "
                f"the rounding error grows with the loop's length -- accumulate in float32",
                buffer=acc, dtype=low[0],
            )
