"""KL301: a tl.load/tl.store with a program-dependent range and no mask, seen after inlining."""

from __future__ import annotations

from typing import Iterable

from kernlint.ir.artifacts import CompiledKernel
from kernlint.ir.mlir import producers
from kernlint.ir.rulebase import IRRule
from kernlint.model import Finding, Level
from kernlint.rule import Confirmation


class UnmaskedAccessIR(IRRule):
    code = "KL301"
    name = "unmasked-access-ir"
    category = "out-of-bounds"
    level = Level.WARNING
    precision = "medium"
    #: report only accesses inside inlined helpers (direct ones are the source rules' job)
    options = {"only_inlined": True}
    confirm = Confirmation(
        "compute-sanitizer", check="memcheck", threshold="> 0 invalid __global__ accesses",
        env=(("PYTORCH_NO_CUDA_MEMORY_CACHING", "1"),),
        fallback="interpreter",
        description="memcheck reports an out-of-bounds global read or write at this line; without a GPU, or "
        "inside the allocation granularity, the interpreter's exact-bounds check (TRITON_INTERPRET=1) judges it.",
    )
    summary = ("A tl.load/tl.store whose offsets come from tl.arange over a program-id-dependent "
               "base carries no mask after inlining, so the last program can step past the tensor.")
    docs = """
## What it does
Reads the kernel's TTIR, where every ``@triton.jit`` helper is already inlined, and flags each
``tt.load``/``tt.store`` of a tensor of pointers that carries no mask while its addresses are built
from ``tl.arange`` (``tt.make_range``) *and* ``tl.program_id``. The finding is placed on the line
of the access itself, inside the helper, with the inlined call chain in its evidence. By default
only accesses inside inlined helpers are reported (option ``only_inlined``): direct accesses are
the source rules' job, which also know when an extent is provably in range.

## Why is this bad?
When the problem size is not a multiple of the block size, the last program's offsets run past the
end of the tensor: reads return garbage (or fault), writes corrupt neighbouring memory.

## Example
```python
@triton.jit
def _load(ptr, offs):
    return tl.load(ptr + offs)          # no mask, hidden in a helper

@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, _load(x_ptr, offs) * 2, mask=offs < n)
```

## Use instead
```python
@triton.jit
def _load(ptr, offs, n):
    return tl.load(ptr + offs, mask=offs < n, other=0.0)
```
"""
    bad = (
        '''import triton
import triton.language as tl


@triton.jit
def _load_block(ptr, offs):
    return tl.load(ptr + offs)  # expect: KL301


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = _load_block(x_ptr, offs)
    tl.store(y_ptr + offs, x * 2.0, mask=offs < n)
''',
    )
    good = (
        '''import triton
import triton.language as tl


@triton.jit
def _load_block(ptr, offs, n):
    return tl.load(ptr + offs, mask=offs < n, other=0.0)


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = _load_block(x_ptr, offs, n)
    tl.store(y_ptr + offs, x * 2.0, mask=offs < n)
''',
    )

    def check(self, compiled: CompiledKernel) -> Iterable[Finding]:
        if not compiled.ok or "ttir" not in compiled.asm:
            return
        module = compiled.ttir
        for op in module.find("tt.load", "tt.store"):
            if not op.operands or not op.types.startswith("tensor<") or "!tt.ptr" not in op.types:
                continue
            has_mask = len(op.operands) >= (2 if op.name == "tt.load" else 3)
            if has_mask:
                continue
            names = {p.name for p in producers(module, op.operands[0])}
            if "tt.make_range" not in names or "tt.get_program_id" not in names:
                continue
            if "tt.make_tensor_ptr" in names or "tt.make_tensor_descriptor" in names:
                continue
            if self.opts["only_inlined"] and len(op.frames) < 2:
                continue
            line, col, chain = compiled.user_frame(op.frames)
            what = "load" if op.name == "tt.load" else "store"
            via = f" (inlined at {chain[-1]})" if len(chain) > 1 else ""
            yield self.finding(
                compiled, line, col,
                f"unmasked tl.{what} of a program-dependent block{via}: the last program can access "
                f"past the end of the tensor [{compiled.spec.label}]",
                ir="ttir", excerpt=[op.raw], chain=chain,
                measurements={"masked": 0},
            )
