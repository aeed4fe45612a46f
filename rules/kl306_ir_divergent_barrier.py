"""KL306: a block-wide barrier that some threads of a warp skip (barrier under divergent branch)."""

from __future__ import annotations

from typing import Iterable

from kernlint.ir.artifacts import CompiledKernel
from kernlint.ir.divergence import divergent_branches
from kernlint.ir.rulebase import IRRule
from kernlint.model import Finding, Level
from kernlint.rule import Confirmation

ASM_KERNEL = '''import triton
import triton.language as tl


@triton.jit
def half_barrier(x_ptr, y_ptr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("""{
        .reg .pred %pk;
        .reg .b32 %tk;
        mov.u32 %tk, THREAD_INDEX;
        setp.lt.u32 %pk, %tk, 16;
        @%pk bra SKIP_BAR;  // # expect: KL307
        bar.sync 0;  // # expect: KL306
        SKIP_BAR:
        mov.b32 $0, $1;
        }""", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)
'''


def _asm_example(index_register: str, divergent: bool) -> str:
    text = ASM_KERNEL.replace("THREAD_INDEX", index_register)
    if not divergent:
        text = text.replace("  // # expect: KL307", "").replace("  // # expect: KL306", "")
    return text


class DivergentBarrier(IRRule):
    code = "KL306"
    name = "divergent-barrier"
    category = "sync"
    level = Level.ERROR
    precision = "high"
    confirm = Confirmation(
        "compute-sanitizer", check="synccheck", threshold="> 0 barrier errors",
        description="synccheck reports a barrier that not all threads of the block reach.",
    )
    summary = ("A block-wide barrier (bar.sync/barrier.sync) sits under a branch whose predicate differs "
               "between threads of a warp, so some threads skip it: deadlock or undefined behaviour.")
    docs = """
## What it does
Evaluates each predicated branch of the PTX for every thread of a block; when threads of one warp
disagree, the barriers (``bar.sync``, ``barrier.sync``, ``bar.arrive``) between the branch and its
target (or inside the loop for a backward branch) are reported.

## Why is this bad?
A CTA barrier must be reached by every thread of the block (or by all non-exited threads). When
only some threads reach it the kernel hangs or silently loses synchronisation, producing races.

## Example
Inline PTX that branches on ``%tid.x`` around ``bar.sync`` (TileLang/CUDA kernels do this with
``if (threadIdx.x < 16) __syncthreads();``).

## Use instead
Hoist the barrier out of the thread-dependent branch so every thread executes it, or make the
branch condition uniform across the block.
"""
    # the marker comments sit inside the asm string; the compiler's line table maps each asm line
    # to the Python line it is written on
    bad = (_asm_example("%tid.x", True),)
    good = (_asm_example("%ctaid.x", False),)

    def check(self, compiled: CompiledKernel) -> Iterable[Finding]:
        if not compiled.ok or "ptx" not in compiled.asm or not compiled.ptx.functions:
            return
        func = compiled.ptx.functions[0]
        ev, _ = compiled.lane_evaluations
        seen = set()
        for d in divergent_branches(func, ev):
            for bar in d.barriers:
                line, col, chain, debug_lines = compiled.instruction_frame(bar)
                if (line, col) in seen:
                    continue
                seen.add((line, col))
                yield self.finding(
                    compiled, line, col,
                    f"barrier '{bar.text()}' is skipped by part of a warp: the branch "
                    f"'{d.branch.inst.text()}' depends on the thread index [{compiled.spec.label}]",
                    ir="ptx", excerpt=[d.branch.inst.text(), bar.text()], chain=chain,
                    debug_line_range=debug_lines,
                    measurements={"divergent_warps": d.divergent_warps},
                )
