from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.bounds import divisible_blocks, exact_grid_axes, rounded_extent_axes
from kernlint.source.rulebase import SourceRule
from kernlint.source.values import BlockShape, Fact, LoopCounter, ProgramAxis


class BlockPointerUnchecked(SourceRule):
    code = "KL109"
    name = "block-pointer-unchecked"
    category = "out-of-bounds"
    level = Level.ERROR
    confirm = Confirmation(
        tool="compute-sanitizer",
        check="memcheck",
        threshold="> 0 invalid global accesses at the line",
        env=(("PYTORCH_NO_CUDA_MEMORY_CACHING", "1"),),
        fallback="interpreter",
        description="memcheck reports the access past the tensor at a size that is not a multiple of the block",
    )
    summary = "A load/store through a `tl.make_block_ptr` that moves with the program id or a loop, without `boundary_check`."
    docs = """
## What it does
Follows block pointers made by `tl.make_block_ptr` and moved by `tl.advance`. When the block's
offsets depend on a program id or a loop counter with a runtime trip count, a `tl.load`/`tl.store`
through it must pass `boundary_check` for the axes that can run past the tensor's shape. Sizes the
module asserts divisible by the block (`assert K % BLOCK_K == 0`) are accepted, and so are extents the
wrapper rounds up to a multiple of every block size (`round_m = triton.cdiv(M, 128) * 128` passed as
the shape of an output allocated with it, the grid running `cdiv(M, BM)` programs with `BM` dividing
128).

## Why is this bad?
Without `boundary_check` a block pointer access is not bounds-checked at all: the last block reads
or writes past the end of the tensor whenever the shape is not a multiple of the block.

## Example
```python
a_blk = tl.make_block_ptr(a_ptr, (M, K), (stride_m, stride_k), (pid * BM, 0), (BM, BK), (1, 0))
a = tl.load(a_blk)
```

## Use instead
```python
a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
```
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def copy_rows(a_ptr, b_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(a_ptr, (M, N), (stride, 1), (pid * BM, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(b_ptr, (M, N), (stride, 1), (pid * BM, 0), (BM, BN), (1, 0))
    tile = tl.load(src)  # expect: KL109
    tl.store(dst, tile, boundary_check=(0, 1))
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def copy_rows(a_ptr, b_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(a_ptr, (M, N), (stride, 1), (pid * BM, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(b_ptr, (M, N), (stride, 1), (pid * BM, 0), (BM, BN), (1, 0))
    tile = tl.load(src, boundary_check=(0, 1), padding_option="zero")
    tl.store(dst, tile, boundary_check=(0, 1))
''',
        '''
import math
import torch
import triton
import triton.language as tl

@triton.jit
def copy_rows(a_ptr, b_ptr, M, ROUND_M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(a_ptr, (M, N), (stride, 1), (pid * BM, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(b_ptr, (ROUND_M, N), (stride, 1), (pid * BM, 0), (BM, BN), (1, 0))
    tile = tl.load(src, boundary_check=(0, 1), padding_option="zero")
    tl.store(dst, tile)  # b is padded to whole blocks: N is one block, rows a multiple of BM

def run(a):
    M, N = a.shape
    assert N == triton.next_power_of_2(N)
    round_m = triton.cdiv(M, 128) * 128
    b = torch.empty((round_m, N), device=a.device, dtype=a.dtype)
    copy_rows[(triton.cdiv(M, 64),)](a, b, M, round_m, N, a.stride(0), BM=64, BN=triton.next_power_of_2(N))
    return b
''',
    )

    def check(self, state):
        for access in state.accesses:
            ptr = access.ptr
            if not ptr.block_ptr or Fact.DESCRIPTOR in ptr.facts or access.boundary_check or access.static_guard:
                continue
            movers = {i for i in ptr.index if not (isinstance(i, LoopCounter) and i.exact)
                      and not (isinstance(i, ProgramAxis) and i.axis in exact_grid_axes(state))}
            if not movers:
                continue
            names = frozenset(shape.name for shape in ptr.facts_of(BlockShape))
            blocks = {n.lower() for n in names}
            if blocks and blocks <= divisible_blocks(state):
                continue
            if all(isinstance(i, ProgramAxis) for i in movers) and {i.axis for i in movers} <= rounded_extent_axes(
                    state, names, ptr.params):
                continue  # the block stays inside an extent the wrapper rounded up to a multiple of it
            movers = ", ".join(sorted(map(str, movers)))
            yield self.finding(
                state, access.node,
                f"block pointer {access.kind} without boundary_check: the block moves with {movers}, so the last "
                f"block runs past the tensor unless its shape is a multiple of the block",
                pointer=state.code(access.ptr_node) if access.ptr_node is not None else None,
            )
