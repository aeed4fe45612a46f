"""Split-K partitions of a key/reduction axis that overlap or leave keys out.

A split kernel gives block ``s`` (one of ``P`` along a grid axis) the keys
``[(S // P) * s, (S // P) * (s + 1))`` and walks them in tiles of ``B``:
``T.copy(X[..., (S // P) * s + k * B : ...], tile)`` for ``k`` in ``T.ceildiv(S // P, B)``. Unless
``S // P`` is a multiple of ``B`` the last tile of split ``s`` runs into split ``s + 1``'s keys, so
those keys are counted twice (zero-filled only past the tensor's end); unless ``S`` is a multiple of
``P`` the last ``S % P`` keys belong to no split. Either way nothing faults: the combined result is
silently wrong. A mask in the loop that tests the tile's index against the split's end (any masking
store or ``if`` that depends on ``s``) is taken as handling it.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from kernlint.source.tilelang import Op, TileLangState, canonical_op
from kernlint.source.tilelang_padding import mask_conditions


@dataclass
class SplitGap:
    op: Op
    split_len: cst.BaseExpression
    block: cst.BaseExpression
    overlap: bool
    drop: bool


def _split_terms(state: TileLangState, start: cst.BaseExpression):
    """``(S // P) * s + k * B`` (in either order, through local names) -> (S // P, P, s, k, B)."""
    if isinstance(start, cst.Name) and start.value in state.env.bindings:
        return None
    expr = _resolve(state, start)
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add)):
        return None
    launch = state.launch
    if launch is None:
        return None
    parts = [expr.left, expr.right]
    split = tile = None
    for part in parts:
        if not (isinstance(part, cst.BinaryOperation) and isinstance(part.operator, cst.Multiply)):
            return None
        for a, b in ((part.left, part.right), (part.right, part.left)):
            a, b = _resolve(state, a), _resolve(state, b)  # sid = bz; split_len = K // split_k
            if isinstance(b, cst.Name) and b.value in launch.block_vars and isinstance(a, cst.BinaryOperation) \
                    and isinstance(a.operator, cst.FloorDivide):
                split = (a, a.right, b.value)
            elif isinstance(a, cst.Name) and any(a.value in lp.vars for lp in state.loops):
                tile = (a.value, b)
    if split is None or tile is None:
        return None
    return split[0], split[1], split[2], tile[0], tile[1]


def _resolve(state: TileLangState, node: cst.BaseExpression) -> cst.BaseExpression:
    """A kernel-local scalar name (``kv_start = ...``), or a quotient the factory assigns
    (``split_len = K // split_k``), replaced by the expression it was assigned."""
    if isinstance(node, cst.Name) and node.value in state.locals:
        return state.locals[node.value]
    bound = state.env.bindings.get(node.value) if isinstance(node, cst.Name) else None
    if isinstance(bound, cst.BinaryOperation) and isinstance(bound.operator, cst.FloorDivide):
        return bound
    return node


def split_gaps(state: TileLangState) -> list[SplitGap]:
    out: list[SplitGap] = []
    seen: set[int] = set()
    launch = state.launch
    for op in state.ops:
        if op.kind != "copy" or op.src is None or op.src.whole:
            continue
        src = state.buffers.get(op.src.buffer)
        if src is None or not src.is_global:
            continue
        for start, _ in op.src.dims:
            if start is None:
                continue
            found = _split_terms(state, start)
            if found is None:
                continue
            split_len, parts, svar, kvar, block = found
            axis = launch.block_vars.index(svar)
            if axis >= len(launch.grid) or state.code(launch.grid[axis]) != state.code(parts):
                continue
            loop = next((lp for lp in op.loops if kvar in lp.vars), None)
            extent = loop.extents[0] if loop is not None and loop.extents else None
            if not (isinstance(extent, cst.Call) and (canonical_op(state.info, extent.func) or "") == "ceildiv"):
                extent = _resolve(state, extent) if extent is not None else None
            if isinstance(extent, cst.IfExp):  # `... if is_causal else T.ceildiv(S // P, B)`: either branch
                extent = next((e for e in (extent.body, extent.orelse) if isinstance(e, cst.Call)
                               and (canonical_op(state.info, e.func) or "") == "ceildiv"), None)
            if not (isinstance(extent, cst.Call) and (canonical_op(state.info, extent.func) or "") == "ceildiv"
                    and state.code(_resolve(state, extent.args[0].value)).strip("()") == state.code(split_len).strip("()")):
                continue
            masked = any(
                svar in set().union(*(state.depends(c) for c in conds))
                for other in state.ops if loop in other.loops and other.kind == "store"
                for conds in [mask_conditions(state, other) or []] if conds)
            if masked or id(loop) in seen:
                continue
            overlap = not state.divisible(split_len, block)
            drop = not state.divisible(split_len.left, parts)
            if overlap or drop:
                seen.add(id(loop))
                out.append(SplitGap(op, split_len, block, overlap, drop))
    return out
