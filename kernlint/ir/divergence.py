"""Branches whose predicate differs between the threads of one warp, and barriers they skip."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the lane evaluator and the PTX parser load with the first kernel checked
    from kernlint.ir.lanes import BranchPredicate, Evaluation
    from kernlint.ir.ptx import Instruction, PtxFunction

BARRIER_OPCODES = ("bar", "barrier")


@dataclass
class DivergentBranch:
    branch: BranchPredicate
    #: warps whose threads disagree on the predicate
    divergent_warps: int
    #: barriers between the branch and its target (forward) or inside the loop (backward)
    barriers: list[Instruction]


def _is_barrier(inst: Instruction) -> bool:
    if inst.opcode not in BARRIER_OPCODES:
        return False
    # bar.warp.sync is per-warp and fine under divergence with the right mask
    return "warp" not in inst.modifiers


def divergent_branches(func: PtxFunction, ev: Evaluation) -> list[DivergentBranch]:
    out = []
    for br in ev.branches:
        if br.values is None or "uni" in br.inst.modifiers:
            continue
        vals = br.values.astype(bool)
        warps = sum(1 for w in range(0, len(vals), 32) if vals[w:w + 32].any() and not vals[w:w + 32].all())
        if not warps:
            continue
        target = func.labels.get(br.target)
        barriers: list[Instruction] = []
        if target is not None:
            lo, hi = (br.inst.index + 1, target) if target > br.inst.index else (target, br.inst.index)
            barriers = [i for i in func.instructions[lo:hi] if _is_barrier(i)]
        out.append(DivergentBranch(br, warps, barriers))
    return out
