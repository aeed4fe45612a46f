"""Can a masked (or unmasked) access leave its tensor? Shared by the load and store rules."""

from __future__ import annotations

from dataclasses import dataclass

from kernlint.source.interpret import Access, KernelState
from kernlint.source.values import Bound, Lane


@dataclass
class BoundsProblem:
    axis: int
    kind: str  # unmasked | other-extent | inclusive | mask-not-passed
    lane: Lane
    bound: Bound | None
    message: str


def _families(lane: Lane) -> str:
    return " / ".join(sorted(lane.families)) or "?"


def _bounded_elsewhere(state: KernelState, lane: Lane) -> bool:
    """Some mask computed in this kernel bounds an axis of the same block size."""
    for mask, _node in state.masks:
        for _d, bound in mask.bounds:
            if bound.families & lane.families:
                return True
    return False


def check_access(state: KernelState, access: Access) -> list[BoundsProblem]:
    ptr = access.ptr
    if ptr.block_ptr or not ptr.lanes:
        return []
    mask_bounds: dict[int, Bound] = {}
    if access.mask is not None:
        shift = ptr.rank - access.mask.rank
        mask_bounds = {d + shift: b for d, b in access.mask.bounds}
    problems = []
    for axis, lane in ptr.lanes:
        if not lane.arange:
            continue  # wrapped with %, clamped, or a gather through loaded indices
        bound = mask_bounds.get(axis)
        if bound is not None:
            if bound.families & lane.families:
                if bound.op == "<=" and not bound.inclusive_ok:
                    problems.append(BoundsProblem(
                        axis, "inclusive", lane, bound,
                        f"mask `<= {bound.bound}` lets the lane at index {bound.bound} through: use `<`",
                    ))
                continue
            problems.append(BoundsProblem(
                axis, "other-extent", lane, bound,
                f"axis {axis} of the pointer block varies over `arange(..{_families(lane)})` but the mask "
                f"bounds a block of `{' / '.join(sorted(bound.families))}` against `{bound.bound}`",
            ))
            continue
        if access.static_guard:
            continue  # e.g. `if EVEN_K: load without mask` - the designer proved it at compile time
        if lane.shift:
            movers = ", ".join(sorted(s.replace("loop:", "loop counter ").replace("pid", "program_id axis ") for s in lane.shift))
            problems.append(BoundsProblem(
                axis, "unmasked", lane, None,
                f"axis {axis} (block `{_families(lane)}`, moved by {movers}) is not bounded by any mask: "
                f"the last block runs past the end unless the size is a multiple of the block",
            ))
        elif _bounded_elsewhere(state, lane):
            problems.append(BoundsProblem(
                axis, "mask-not-passed", lane, None,
                f"axis {axis} (block `{_families(lane)}`) is bounded by a mask elsewhere in this kernel "
                f"but not at this access",
            ))
    return problems
