"""Can a masked (or unmasked) access leave its tensor? Shared by the load and store rules."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

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


_DIVISIBLE = re.compile(
    r"^[ \t]*(?:assert[^#\n]*%[ \t]*(?:\w+\.)*(\w+)\)?[ \t]*==[ \t]*0"
    r"|if[^#\n]*%[ \t]*(?:\w+\.)*(\w+)\)?[ \t]*!=[ \t]*0)",
    re.M,
)


def divisible_blocks(state: KernelState) -> set[str]:
    """Block names the module asserts sizes are multiples of (``assert K % BLOCK_K == 0``)."""
    cached = getattr(state.info, "_divisible", None)
    if cached is None:
        cached = {(a or b).lower() for a, b in _DIVISIBLE.findall(state.info.source)}
        state.info._divisible = cached  # type: ignore[attr-defined]
    return cached


def _floor_div_grid_axes(state: KernelState) -> set[int]:
    """Grid axes every launch of the kernel sizes with ``//`` (so no program starts a partial block)."""
    launches = state.info.launches_of(state.name)
    if not launches:
        return set()
    common: set[int] | None = None
    for launch in launches:
        grid = launch.grid
        if isinstance(grid, cst.Lambda):
            grid = grid.body
        elements = grid.elements if isinstance(grid, (cst.Tuple, cst.List)) else []
        axes = {
            i for i, e in enumerate(elements)
            if isinstance(e.value, cst.BinaryOperation) and isinstance(e.value.operator, cst.FloorDivide)
        }
        common = axes if common is None else common & axes
    return common or set()


def _exact(state: KernelState, lane: Lane) -> bool:
    """Every source that moves the axis provably stays inside the tensor."""
    if {f.lower() for f in lane.families} & divisible_blocks(state):
        return True
    pid_sources = {s for s in lane.shift if s.startswith("pid")}
    if pid_sources and pid_sources == lane.shift:
        return {int(s[3:]) for s in pid_sources} <= _floor_div_grid_axes(state)
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
        if lane.shift and not _exact(state, lane):
            movers = ", ".join(sorted(s.replace("loop:", "loop counter ").replace("pid", "program_id axis ") for s in lane.shift))
            problems.append(BoundsProblem(
                axis, "unmasked", lane, None,
                f"axis {axis} (block `{_families(lane)}`, moved by {movers}) is not bounded by any mask: "
                f"the last block runs past the end unless the size is a multiple of the block",
            ))
        elif not lane.shift and _bounded_elsewhere(state, lane):
            problems.append(BoundsProblem(
                axis, "mask-not-passed", lane, None,
                f"axis {axis} (block `{_families(lane)}`) is bounded by a mask elsewhere in this kernel "
                f"but not at this access",
            ))
    order = {"other-extent": 0, "inclusive": 1, "mask-not-passed": 2, "unmasked": 3}
    return sorted(problems, key=lambda p: order[p.kind])
