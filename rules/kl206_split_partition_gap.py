from kernlint.model import Frontend, Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule
from kernlint.source.tilelang_split import split_gaps


class SplitPartitionGap(SourceRule):
    code = "KL206"
    name = "split-partition-gap"
    category = "out-of-bounds"
    level = Level.WARNING
    frontends = (Frontend.TILELANG,)
    confirm = Confirmation(
        tool="differential",
        check="compare against a reference at a split length that is not a multiple of the tile",
        threshold="any mismatch beyond tolerance",
        description="run the split kernel with S = P * (4 * B + 1) + 1 keys (a split length one past a multiple "
        "of the tile, and one key left over) and compare the combined result with a reference",
    )
    summary = "Split-K partitions of a TileLang kernel overlap or leave keys out when the split length is not a multiple of the tile."
    docs = """
## What it does
Finds tile copies whose start has the split-K form `(S // P) * s + k * B`: block index `s` over the
`P` splits of a grid axis, loop index `k` over `T.ceildiv(S // P, B)` tiles of `B` keys. It reports
the loop when `S // P` is not provably a multiple of `B` (the last tile of a split runs into the
next split's keys) or `S` not provably a multiple of `P` (the last `S % P` keys belong to no
split), unless a mask in the loop depends on `s` (the split's own end). Sizes that are parameters
of the kernel's factory count as any value; an `assert` makes them multiples.

## Why is this bad?
Nothing faults: the overlapping keys are real data of the neighbouring split, so they are added to
two partial results, and the dropped keys are never read. Flash-decoding and MLA-decode kernels
combine the partial results with their log-sum-exp weights, so the output is silently wrong for
context lengths that a test with powers of two never exercises.

## Example
```python
for k in T.Pipelined(T.ceildiv(seqlen_kv // num_split, block_N), num_stages=2):
    T.copy(K[bid, (seqlen_kv // num_split) * sid + k * block_N : (seqlen_kv // num_split) * sid + (k + 1) * block_N, :], K_s)
```

## Use instead
```python
assert seqlen_kv % (num_split * block_N) == 0
```
or mask each tile with the split's end, `(seqlen_kv // num_split) * (sid + 1)`, and give the last split the remainder.
"""
    bad = (
        '''
import tilelang.language as T

def split_scores(batch, seqlen_kv, dim, num_split=4, block_N=64):
    @T.prim_func
    def main(Q: T.Tensor((batch, dim), "float16"), K: T.Tensor((batch, seqlen_kv, dim), "float16"),
             Part: T.Tensor((batch, num_split, dim), "float32")):
        with T.Kernel(batch, num_split, threads=128) as (bid, sid):
            q_s = T.alloc_shared((1, dim), "float16")
            k_s = T.alloc_shared((block_N, dim), "float16")
            acc = T.alloc_fragment((1, block_N), "float32")
            total = T.alloc_fragment((1, dim), "float32")
            T.copy(Q[bid, 0], q_s)
            T.clear(total)
            for k in T.Pipelined(T.ceildiv(seqlen_kv // num_split, block_N), num_stages=2):  # expect: KL206
                T.copy(K[bid, (seqlen_kv // num_split) * sid + k * block_N, 0], k_s)
                T.gemm(q_s, k_s, acc, transpose_B=True, clear_accum=True)
                T.gemm(acc, k_s, total)
            T.copy(total, Part[bid, sid, 0])

    return main
''',
    )
    good = (
        '''
import tilelang.language as T

def split_scores(batch, seqlen_kv, dim, num_split=4, block_N=64):
    assert seqlen_kv % (num_split * block_N) == 0
    assert seqlen_kv % num_split == 0
    assert (seqlen_kv // num_split) % block_N == 0

    @T.prim_func
    def main(Q: T.Tensor((batch, dim), "float16"), K: T.Tensor((batch, seqlen_kv, dim), "float16"),
             Part: T.Tensor((batch, num_split, dim), "float32")):
        with T.Kernel(batch, num_split, threads=128) as (bid, sid):
            q_s = T.alloc_shared((1, dim), "float16")
            k_s = T.alloc_shared((block_N, dim), "float16")
            acc = T.alloc_fragment((1, block_N), "float32")
            total = T.alloc_fragment((1, dim), "float32")
            T.copy(Q[bid, 0], q_s)
            T.clear(total)
            for k in T.Pipelined(T.ceildiv(seqlen_kv // num_split, block_N), num_stages=2):
                T.copy(K[bid, (seqlen_kv // num_split) * sid + k * block_N, 0], k_s)
                T.gemm(q_s, k_s, acc, transpose_B=True, clear_accum=True)
                T.gemm(acc, k_s, total)
            T.copy(total, Part[bid, sid, 0])

    return main
''',
    )

    def check(self, state):
        for gap in split_gaps(state):
            loop = next(lp for lp in gap.op.loops if lp.extents)
            what = []
            if gap.overlap:
                what.append(f"`{state.code(gap.split_len)}` is not provably a multiple of `{state.code(gap.block)}`, "
                            "so each split's last tile reads the next split's first keys (counted twice)")
            if gap.drop:
                what.append(f"`{state.code(gap.split_len.left)}` is not provably a multiple of "
                            f"`{state.code(gap.split_len.right)}`, so the last keys belong to no split")
            yield self.finding(
                state, gap.op.loops[-1].node.iter if gap.op.loops else loop.node.iter,
                f"split-K partition `{state.code(gap.op.node)[:70]}`: {'; '.join(what)}",
                overlap=gap.overlap, drop=gap.drop,
            )
