"""Where TileLang's zero-filled tile tails flow in a kernel.

TileLang guards every global access it cannot prove in bounds: ``T.copy`` lowers a tile that runs
past the end of a global tensor into predicated loads that yield 0 (``CopyNode::MakePredicate``)
and the ``LegalizeSafeMemoryAccess`` pass does the same for element loads (the "safe value",
0 unless ``T.annotate_safe_value`` says otherwise). For a GEMM that zero is harmless (it is the
identity of ``+`` and absorbs ``*``), but it is not the identity of ``max``/``min``, and after
``exp`` it becomes 1. This module tracks, per on-chip buffer and dimension, whether the buffer can
hold such padding and whether it is still zero (``"zero"``) or has been transformed (``"nonzero"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from kernlint.source.tilelang import Op, TileLangState, calls_in, canonical_op, names_in, subscripts_in
from kernlint.source.tilelang_divide import free_names

_ZERO_KEEPING_CALLS = {"abs", "fabs", "Cast", "cast", "sqrt", "sin", "tanh", "erf", "round", "trunc", "floor", "ceil",
                       "float16", "float32", "bfloat16", "float"}
_MASKING_CALLS = {"if_then_else", "Select", "select", "where"}


@dataclass
class PadFlow:
    """A reduction (or accumulation) over a dimension that can hold padding it must not see."""

    op: Op
    buffer: str
    dim: int
    kind: str  # zero | nonzero
    origin: Op  # the T.copy whose tail made the padding
    reduce: str  # max | min | sum | ...


def _tail_dims(state: TileLangState, op: Op) -> list[int]:
    """Dimensions of the copy's destination tile that can run past the end of the global source."""
    src, dst = op.src, op.dst
    sbuf = state.buffers.get(src.buffer) if src else None
    dbuf = state.buffers.get(dst.buffer) if dst else None
    if sbuf is None or dbuf is None or not sbuf.is_global or dbuf.is_global or not dst.whole or src.whole:
        return []
    gshape, tile = sbuf.shape, dbuf.shape
    if len(src.dims) != len(gshape) or not tile:
        return []
    loop_vars = {v for lp in state.loops for v in lp.vars}
    varying = loop_vars | set(state.launch.block_vars if state.launch else ())
    # Which global dimension each tile dimension walks (TileLang's legalize_pairwise_extents): sliced
    # dimensions of the source pair in order with the tile's non-1 dimensions when their counts match;
    # otherwise (point indices, X[bx * bm, 0]) extents align from the right.
    tile_dims = [t for t in range(len(tile)) if state.env.value(tile[t]) != 1]
    sliced = [g for g, (_, stop) in enumerate(src.dims) if stop is not None]
    if sliced and len(sliced) == len(tile_dims):
        pairs = list(zip(tile_dims, sliced))
    else:
        pairs = [(t, len(gshape) - len(tile) + t) for t in tile_dims if len(gshape) - len(tile) + t >= 0]
        pairs = [(t, g) for t, g in pairs if src.dims[g][1] is None]
    out = []
    for t, g in pairs:
        start, stop = src.dims[g]
        extent = tile[t]
        if stop is not None and start is None and isinstance(stop, cst.Name) and stop.value == "__end__":
            continue  # X[:, ...]: the whole dimension
        if start is None:
            start = cst.Integer("0")
        if state.depends(start) & varying:
            if _placed_by_data(state, start, extent):
                # start = cu_seqlens[b] + v * B: only a walk in ceil steps over a segment runs past it
                if _ceil_walk(state, op, start, extent, varying):
                    out.append(t)
                continue
            # start = v * B for v over ceildiv(S, B): the last tile runs over unless S % B == 0
            if not state.divisible(gshape[g], extent):
                out.append(t)
            continue
        # a fixed tile (X[bx, 0] into a (block_M, block_N) tile): it overruns when start + extent > size,
        # which is unknown unless the tile spans exactly the tensor's dimension
        if state.code(extent) == state.code(gshape[g]):
            continue
        if names_in(gshape[g]) & free_names(state):
            if not state.divisible(gshape[g], extent):
                out.append(t)  # a caller's size can be smaller than the tile
            continue
        for env in state.configs:
            s0, e, d = env.value(start), env.value(extent), env.value(gshape[g])
            if not all(isinstance(x, int) for x in (s0, e, d)) or s0 + e > d:
                out.append(t)
                break
    return out


def _terms(state: TileLangState, expr: cst.BaseExpression, seen: frozenset = frozenset()):
    """The additive terms of an index, through kernel-local names (``clean_off = start + r * B``)."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        yield from _terms(state, expr.left, seen)
        yield from _terms(state, expr.right, seen)
    elif isinstance(expr, cst.Name) and expr.value in state.locals and expr.value not in seen:
        yield from _terms(state, state.locals[expr.value], seen | {expr.value})
    else:
        yield expr


def _same(state: TileLangState, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    va, vb = state.env.value(a), state.env.value(b)
    return state.code(a) == state.code(b) or (isinstance(va, int) and va == vb)


def _placed_by_data(state: TileLangState, start: cst.BaseExpression, extent: cst.BaseExpression) -> bool:
    """The tile's start has a term read from a global tensor that is not a multiple of the tile (a
    varlen offset ``cu_seqlens[b]``): where its tiles lie against the tensor's end is a property of
    the data, not of the sizes."""
    tensors = {name for name, b in state.buffers.items() if b.is_global}
    for term in _terms(state, start):
        if isinstance(term, cst.BinaryOperation) and isinstance(term.operator, cst.Multiply) \
                and (_same(state, term.left, extent) or _same(state, term.right, extent)):
            continue
        if state.depends(term) & tensors:
            return True
    return False


def _ceil_walk(state: TileLangState, op: Op, start: cst.BaseExpression, extent: cst.BaseExpression,
               varying: set[str]) -> bool:
    """A variable of the start counts tiles by ``T.ceildiv(L, B)`` (its loop's or grid's extent, or the
    bound an enclosing ``if v < E`` puts on it) with ``L`` not a provable multiple of the tile ``B``:
    the last tile runs past the segment of length ``L``."""
    bounds: list[cst.BaseExpression] = []
    for v in state.depends(start) & varying:
        tighter = [cmp.comparisons[0].comparator for guard in op.guards for cmp in _comparisons(guard)
                   if isinstance(cmp.left, cst.Name) and cmp.left.value == v
                   and isinstance(cmp.comparisons[0].operator, (cst.LessThan, cst.LessThanEqual))]
        if tighter:
            bounds += tighter
            continue
        bounds += [e for lp in op.loops for var, e in zip(lp.vars, lp.extents) if var == v]
        if state.launch is not None and v in state.launch.block_vars:
            axis = state.launch.block_vars.index(v)
            bounds += state.launch.grid[axis:axis + 1]
    todo, seen = list(bounds), set()
    while todo:
        node = todo.pop()
        for name in names_in(node) & set(state.locals) - seen:
            seen.add(name)
            todo.append(state.locals[name])
        for call in calls_in(node):
            if (canonical_op(state.info, call.func) or "") in ("ceildiv", "cdiv") and len(call.args) == 2 \
                    and _same(state, call.args[1].value, extent) \
                    and not state.divisible(call.args[0].value, extent):
                return True
    return False


def _comparisons(test: cst.BaseExpression):
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from _comparisons(test.left)
        yield from _comparisons(test.right)
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        yield test


def _zero_kind(state: TileLangState, expr: cst.BaseExpression, padded: set[int]) -> str | None:
    """``"zero"`` when ``expr`` stays 0 wherever the padded reads (ids of Subscript nodes) are 0,
    ``"nonzero"`` when it contains one but can be non-zero there, None when it contains none."""
    if id(expr) in padded:
        return "zero"
    if isinstance(expr, cst.BinaryOperation):
        left = _zero_kind(state, expr.left, padded)
        right = _zero_kind(state, expr.right, padded)
        if isinstance(expr.operator, cst.Multiply) and "zero" in (left, right):
            return "zero"
        if isinstance(expr.operator, (cst.Divide, cst.FloorDivide)) and left == "zero":
            return "zero"
        if isinstance(expr.operator, (cst.Add, cst.Subtract)) and left == "zero" and right == "zero":
            return "zero"
        return "nonzero" if (left or right) else None
    if isinstance(expr, cst.UnaryOperation):
        return _zero_kind(state, expr.expression, padded)
    if isinstance(expr, cst.Call):
        op = canonical_op(state.info, expr.func) or ""
        kinds = [_zero_kind(state, a.value, padded) for a in expr.args]
        if op.rsplit(".", 1)[-1] in _ZERO_KEEPING_CALLS and kinds and kinds[0] == "zero":
            return "zero"
        return "nonzero" if any(kinds) else None
    for child in expr.children:
        if isinstance(child, cst.BaseExpression) and _zero_kind(state, child, padded):
            return "nonzero"
    return None


def mask_conditions(state: TileLangState, op: Op) -> list[cst.BaseExpression] | None:
    """The conditions a store masks with (its enclosing ``if``s and the tests of ``T.if_then_else``
    and the like in its value), or None when it is not masked."""
    conds = list(op.guards)
    stack = [op.value] if op.value is not None else []
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call) and (canonical_op(state.info, n.func) or "").rsplit(".", 1)[-1] in _MASKING_CALLS:
            if n.args:
                conds.append(n.args[0].value)
        stack.extend(n.children)
    return conds or None


def _masked_dims(state: TileLangState, op: Op, conds: list[cst.BaseExpression]) -> dict[int, set[str]]:
    """Per dimension of the stored tile whose index the mask tests: every name the tests depend on."""
    names: set[str] = set()
    for cond in conds:
        names |= state.depends(cond)
    out = {}
    for t, (start, _) in enumerate(op.dst.dims if op.dst is not None else []):
        if start is not None and names_in(start) & names:
            out[t] = names
    return out


def _mask_covers(state: TileLangState, names: set[str], dim: int, acc: Op, origin: Op) -> bool:
    """A mask written into the accumulator before an accumulating T.gemm keeps the padded columns at
    its fill value (-inf + 0 stays -inf) when its test compares the column index with the tensor's
    extent (``k * block_N + j >= seq_len``) or with the row index (a causal mask: a row in range
    never reaches the tail, so the columns past it are masked too)."""
    src = state.buffers.get(origin.src.buffer) if origin.src is not None else None
    extent_names = set().union(*(names_in(d) for d in src.shape)) if src is not None and src.shape else set()
    other_dims = [start for t, (start, _) in enumerate(acc.dst.dims) if t != dim and start is not None] \
        if acc.dst is not None and not acc.dst.whole else []
    row_names = set().union(*(names_in(s) for s in other_dims)) if other_dims else set()
    return bool(names & extent_names) or bool(names & row_names)


def _dim_arg(state: TileLangState, op: Op, rank: int) -> int | None:
    node = op.kwargs.get("dim", op.args[2] if len(op.args) > 2 else None)
    d = -1 if node is None else state.env.value(node)
    if not isinstance(d, int):
        return None
    return d + rank if d < 0 else d


def pad_flows(state: TileLangState) -> list[PadFlow]:
    pads: dict[str, dict[int, tuple[str, Op]]] = {}
    #: buffer -> dimension -> (names its mask tests, the masking store)
    masks: dict[str, dict[int, tuple[set[str], Op]]] = {}
    flows: list[PadFlow] = []
    for op in state.ops:
        if op.kind != "gemm" and not (op.kind == "store" and mask_conditions(state, op)):
            for w in op.writes:
                masks.pop(w, None)
        if op.kind == "copy" and op.dst is not None:
            src_buf = state.buffers.get(op.src.buffer) if op.src else None
            if src_buf is not None and src_buf.is_global:
                tails = _tail_dims(state, op)
                pads[op.dst.buffer] = {t: ("zero", op) for t in tails}
            elif op.src is not None and op.dst.whole and op.src.whole:
                pads[op.dst.buffer] = dict(pads.get(op.src.buffer, {}))
            elif op.dst.whole:
                pads[op.dst.buffer] = {}
        elif op.kind in ("clear", "fill", "escape"):
            for w in op.writes:
                pads[w] = {}
        elif op.kind == "gemm" and op.dst is not None and op.src is not None:
            a = op.src.buffer
            b_node = op.args[1] if len(op.args) > 1 else op.kwargs.get("B")
            b = b_node.value if isinstance(b_node, cst.Name) else None
            ta = state.env.value(op.kwargs.get("transpose_A", op.args[3] if len(op.args) > 3 else None)) == 1
            tb = state.env.value(op.kwargs.get("transpose_B", op.args[4] if len(op.args) > 4 else None)) == 1
            accumulates = op.dst.buffer in op.reads
            out = dict(pads.get(op.dst.buffer, {})) if accumulates else {}
            mask = masks.get(op.dst.buffer, {}) if accumulates else {}
            if not accumulates:
                masks.pop(op.dst.buffer, None)
            for d, operand, od in ((0, a, 1 if ta else 0), (1, b, 0 if tb else 1)):
                if not operand or od not in pads.get(operand, {}):
                    continue
                origin = pads[operand][od][1]
                if d in mask and _mask_covers(state, mask[d][0], d, mask[d][1], origin):
                    continue
                out[d] = ("zero", origin)
            pads[op.dst.buffer] = out
        elif op.kind == "reduce" and op.src is not None and op.dst is not None:
            src = state.buffers.get(op.src.buffer)
            rank = len(src.shape) if src else 0
            d = _dim_arg(state, op, rank)
            src_pads = pads.get(op.src.buffer, {})
            name = (op.name or "").replace("reduce_", "")
            if d is not None and d in src_pads:
                kind, origin = src_pads[d]
                bad = name in ("max", "min") or (name in ("sum", "abssum", "absmax") and kind == "nonzero")
                if bad:
                    flows.append(PadFlow(op, op.src.buffer, d, kind, origin, name))
            if d is not None:
                pads[op.dst.buffer] = {(k if k < d else k - 1): v for k, v in src_pads.items() if k != d}
        elif op.kind in ("store", "augstore") and op.dst is not None and op.value is not None:
            target_idx = [names_in(start) if start is not None else set() for start, _ in op.dst.dims]
            new: dict[int, tuple[str, Op]] = dict(pads.get(op.dst.buffer, {})) if op.kind == "augstore" else {}
            conds = mask_conditions(state, op)
            if conds:
                pads[op.dst.buffer] = {}
                if op.kind == "store":
                    dims = _masked_dims(state, op, conds)
                    masks[op.dst.buffer] = {d: (names, op) for d, names in dims.items()}
                continue
            # every padded read subscript, with the loop variable indexing its padded dimension
            padded_reads: list[tuple[cst.Subscript, set[str], str, Op, str, int]] = []
            for sub in subscripts_in(op.value):
                if not isinstance(sub.value, cst.Name) or sub.value.value not in pads:
                    continue
                for d, (kind, origin) in pads[sub.value.value].items():
                    if d < len(sub.slice) and hasattr(sub.slice[d].slice, "value"):
                        padded_reads.append((sub, names_in(sub.slice[d].slice.value), kind, origin,
                                             sub.value.value, d))
            if not padded_reads:
                pads[op.dst.buffer] = new
                continue
            kind = _zero_kind(state, op.value, {id(r[0]) for r in padded_reads})
            for sub, idx_names, read_kind, origin, rbuf, d in padded_reads:
                eff = "nonzero" if "nonzero" in (kind, read_kind) else "zero"
                hit = [t for t, names in enumerate(target_idx) if names & idx_names]
                for t in hit:
                    new[t] = (eff, origin)
                if not hit and op.kind == "augstore":
                    # acc[i] += f(x[i, j]) over j: a sum over the padded dimension
                    if eff == "nonzero":
                        flows.append(PadFlow(op, rbuf, d, eff, origin, "sum"))
            pads[op.dst.buffer] = new
    return flows
