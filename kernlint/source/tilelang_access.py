"""Element accesses (``X[i, j]`` inside ``T.Parallel``/``T.serial``/``T.grid`` loops, outside tile
ops) that can leave their buffer where TileLang does not guard them.

TileLang's ``LegalizeSafeMemoryAccess`` pass guards an element access only when the buffer is
global: a load it cannot prove in bounds yields the buffer's safe value (0), a store is skipped.
It leaves alone (a) every shared and local buffer (and fragments, whose indices a layout maps) ("we assume the developers can handle
them": at most a warning, off by default), (b) a global store whose value is ``T.if_then_else``
(taken for a manual bounds check, although the store itself still happens), and (c) everything
when the pass is disabled (``tl.disable_safe_memory_legalize``). Those are the accesses judged
here, by exact reasoning only: index intervals from loop extents resolved in every configuration
(on-chip buffers), and for global tensors the ``bx * B + i`` form with ``bx`` over
``T.ceildiv(S, B)`` blocks and ``i`` over ``B``, which runs past ``S`` unless ``S`` is provably a
multiple of ``B``. An enclosing ``if`` that tests the index is taken as a guard.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from kernlint.source.tilelang import Env, Op, TileLangState, canonical_op, subscripts_in

_DISABLE_KEYS = ("TL_DISABLE_SAFE_MEMORY_ACCESS", "tl.disable_safe_memory_legalize")


@dataclass
class Overrun:
    op: Op
    access: cst.Subscript
    buffer: str
    dim: int
    why: str
    store: bool


def _ranges(op: Op, env: Env) -> dict[str, tuple[int, int] | None]:
    out: dict[str, tuple[int, int] | None] = {}
    for lp in op.loops:
        if lp.kind == "parallel":
            for v, e in zip(lp.vars, lp.extents):
                stop = env.value(e)
                out[v] = (0, stop - 1) if isinstance(stop, int) else None
        elif lp.vars:
            stop = env.value(lp.extents[0]) if lp.extents else None
            ok = isinstance(stop, int) and lp.start is not None
            out[lp.vars[0]] = (lp.start, stop - 1) if ok else None
            for v in lp.vars[1:]:
                out[v] = None
    return out


def interval(expr: cst.BaseExpression, env: Env, ranges: dict) -> tuple[int, int] | None:
    if isinstance(expr, cst.Name) and expr.value in ranges:
        return ranges[expr.value]
    if isinstance(expr, cst.BinaryOperation):
        a, b = interval(expr.left, env, ranges), interval(expr.right, env, ranges)
        if a is None or b is None:
            return None
        op = expr.operator
        if isinstance(op, cst.Add):
            return a[0] + b[0], a[1] + b[1]
        if isinstance(op, cst.Subtract):
            return a[0] - b[1], a[1] - b[0]
        if isinstance(op, cst.Multiply):
            products = [x * y for x in a for y in b]
            return min(products), max(products)
        if isinstance(op, cst.FloorDivide) and b[0] == b[1] and b[0] > 0:
            return a[0] // b[0], a[1] // b[0]
        if isinstance(op, cst.Modulo) and b[0] == b[1] and b[0] > 0 and a[0] >= 0:
            return (a[0], a[1]) if a[1] < b[0] else (0, b[0] - 1)
        return None
    v = env.value(expr)
    return (v, v) if isinstance(v, int) else None


def _terms(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _terms(expr.left) + _terms(expr.right)
    return [expr]


def _block_tail(state: TileLangState, index: cst.BaseExpression, size: cst.BaseExpression, op: Op) -> str | None:
    """``bx * B + i`` with ``bx`` over ``T.ceildiv(size, B)`` and ``i`` over ``B``: the last block's
    ``i`` runs past ``size`` unless it is a multiple of ``B``."""
    launch = state.launch
    if launch is None:
        return None
    terms = _terms(index)
    loop_extent = {v: e for lp in op.loops for v, e in zip(lp.vars, lp.extents if lp.kind == "parallel"
                                                          else lp.extents[:1])}
    for term in terms:
        if not (isinstance(term, cst.BinaryOperation) and isinstance(term.operator, cst.Multiply)):
            continue
        for bv, block in ((term.left, term.right), (term.right, term.left)):
            if not isinstance(bv, cst.Name) or bv.value not in launch.block_vars:
                continue
            axis = launch.block_vars.index(bv.value)
            grid = launch.grid[axis] if axis < len(launch.grid) else None
            if not (isinstance(grid, cst.Call) and (canonical_op(state.info, grid.func) or "") in ("ceildiv", "cdiv")
                    and len(grid.args) == 2):
                continue
            total, per = grid.args[0].value, grid.args[1].value
            if state.code(per) != state.code(block) or state.code(total) != state.code(size):
                continue
            rest = [t for t in terms if t is not term]
            if len(rest) != 1 or not isinstance(rest[0], cst.Name) or rest[0].value not in loop_extent:
                continue
            extent = loop_extent[rest[0].value]
            same = state.code(extent) == state.code(block) or all(
                env.value(extent) == env.value(block) is not None for env in state.configs)
            if same and not state.divisible(size, block):
                return (f"`{state.code(bv)}` runs over `{state.code(grid)}` blocks and `{rest[0].value}` over "
                        f"`{state.code(extent)}`: the last block reaches past `{state.code(size)}` unless it is a "
                        f"multiple of `{state.code(block)}`")
    return None


def _guarded(state: TileLangState, op: Op, index: cst.BaseExpression) -> bool:
    """An enclosing ``if`` tests the index at run time (one that is decided at compile time in every
    configuration picks a branch, it bounds nothing)."""
    idx = state.depends(index)
    return any(state.depends(g) & idx for g in op.guards
               if any(env.value(g) is None for env in state.configs))


def overruns(state: TileLangState) -> list[Overrun]:
    legalize_off = any(key in state.info.source for key in _DISABLE_KEYS)
    out: list[Overrun] = []
    for op in state.ops:
        if op.kind not in ("store", "augstore", "read", "call"):
            continue
        # a branch a compile-time condition rules out is not generated (`if reduce_k > 1:` with a fixed 1)
        live = [env for env in state.configs if state.reachable(op, env)]
        if not live:
            continue
        accesses = []
        if op.kind in ("store", "augstore") and op.dst is not None and isinstance(op.dst.node, cst.Subscript):
            accesses.append((op.dst.node, True))
        value = op.value if op.kind in ("store", "augstore") else op.node
        if value is not None:
            accesses += [(sub, False) for sub in subscripts_in(value)]
        for sub, is_store in accesses:
            if not isinstance(sub.value, cst.Name) or sub.value.value not in state.buffers:
                continue
            buf = state.buffers[sub.value.value]
            if not buf.shape or len(sub.slice) != len(buf.shape) or buf.scope == "local.fragment":
                # a fragment's indices are coordinates its inferred layout distributes over the threads'
                # registers (a loop wider than the fragment gets a wider layout), not addresses
                continue
            if buf.is_global and not legalize_off:
                value_masked = is_store and isinstance(op.value, cst.Call) and (
                    canonical_op(state.info, op.value.func) or "") == "if_then_else"
                if not value_masked:
                    continue  # TileLang guards it
            for d, el in enumerate(sub.slice):
                if not isinstance(el.slice, cst.Index):
                    continue
                index = el.slice.value
                if _guarded(state, op, index):
                    continue
                why = None
                if buf.is_global:
                    why = _block_tail(state, index, buf.shape[d], op)
                else:
                    for env in live:
                        span, size = interval(index, env, _ranges(op, env)), env.value(buf.shape[d])
                        if span is None or not isinstance(size, int):
                            continue
                        if span[1] >= size or span[0] < 0:
                            why = (f"the index `{state.code(index)}` spans [{span[0]}, {span[1]}] and dimension "
                                   f"{d} of `{buf.name}` has {size} elements")
                            break
                if why:
                    out.append(Overrun(op, sub, buf.name, d, why, is_store))
                    break
    return out
