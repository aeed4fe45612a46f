from kernlint.engine.findings import block_overruns
from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule


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
    summary = "A load/store through a `tl.make_block_ptr` whose block can leave the shape it declares, without `boundary_check`."
    docs = """
## What it does
Asks the bounds engine, for each `tl.load`/`tl.store` through a block pointer (made by
`tl.make_block_ptr`, moved by `tl.advance`) and each dimension its `boundary_check` leaves out:
is there a program, loop trip and lane, for sizes the module's launches allow (their grid,
constexprs and the wrapper's asserts), where the block's index on that dimension falls outside
the shape the block pointer declares? Satisfiable: a finding with a witness (the sizes, program
id, trip and lane). A block that moves with a program id no launch bounds is taken to start
inside the shape, as a `cdiv(shape, block)` grid makes it; a block that does not move is judged
only under a launch that fixes every size it mentions (a block wider than a size nothing fixes is
no finding). With no launch in the module only what the kernel states counts: the block's loop
runs to a bound made of that shape (`range(0, T, BT)`, `range(tl.cdiv(T, BT))`), the program id picks
the block among the kernel's own count of them rounded up (`pid % tl.cdiv(T, BT)`; not where the
module hands the kernel to a launcher it cannot read, whose own test may launch whole blocks only), or another access
bounds an index by that shape (a mask, a `boundary_check`); a kernel that states neither leaves the
shape's divisibility to its caller, and is not reported. An access whose block stays inside its declared shape while that shape lies past the
tensor is KL101/KL102's (the tensor's extent), so one access gets one finding.

Not modelled: block pointers carried through nested loops that reset them with `tl.advance` (no
finding), tensor descriptors (the copy engine bounds them).

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
        yield from block_overruns(self, state)
