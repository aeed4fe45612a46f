"""KL307: a branch whose predicate differs between the threads of one warp."""

from __future__ import annotations

from typing import Iterable

from kernlint.ir.artifacts import CompiledKernel
from kernlint.ir.divergence import divergent_branches
from kernlint.ir.rulebase import IRRule
from kernlint.model import Finding, Level
from kernlint.rule import Confirmation
from kernlint.rules.kl306_ir_divergent_barrier import _asm_example


class DivergentBranch(IRRule):
    code = "KL307"
    name = "divergent-branch"
    category = "divergence"
    level = Level.NOTE
    precision = "medium"
    confirm = Confirmation(
        "ncu", check="smsp__sass_average_branch_targets_threads_uniform.pct",
        threshold="< 100%", description="ncu's branch uniformity drops below 100% for divergent branches.",
    )
    summary = "A conditional branch in the PTX takes different directions for threads of the same warp."
    docs = """
## What it does
Evaluates each predicated branch (``@%p bra``) of the PTX for every thread of a block and reports
those whose predicate differs between the threads of a warp (thread-index-dependent control flow).
In Triton code most data-dependent conditions become predicated instructions rather than branches,
so this mostly fires on inline PTX and on TileLang/CUDA-style kernels.

## Why is this bad?
A warp executes both sides of a divergent branch one after the other with part of its threads
idle, and barriers or warp-collective instructions under such a branch are unsafe.

## Example
```ptx
mov.u32 %t, %tid.x;  setp.lt.u32 %p, %t, 16;  @%p bra SKIP;
```

## Use instead
Make the condition uniform per warp (branch on the warp index or program id) or compute both
results and select (``tl.where``).
"""
    bad = (_asm_example("%tid.x", True),)
    good = (_asm_example("%ctaid.x", False),)

    def check(self, compiled: CompiledKernel) -> Iterable[Finding]:
        if not compiled.ok or "ptx" not in compiled.asm or not compiled.ptx.functions:
            return
        func = compiled.ptx.functions[0]
        ev, _ = compiled.lane_evaluations
        seen = set()
        for d in divergent_branches(func, ev):
            inst = d.branch.inst
            line, col, chain, debug_lines = compiled.instruction_frame(inst)
            if (line, col) in seen:
                continue
            seen.add((line, col))
            yield self.finding(
                compiled, line, col,
                f"branch '{inst.text()}' diverges inside {d.divergent_warps} warp(s) per block "
                f"[{compiled.spec.label}]",
                ir="ptx", excerpt=[inst.text()], chain=chain, debug_line_range=debug_lines,
                measurements={"divergent_warps": d.divergent_warps},
            )
