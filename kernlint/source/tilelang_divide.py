"""Whether a TileLang tensor extent is a multiple of a tile size, by exact reasoning only.

An extent that is a parameter of the kernel's factory (or a ``T.dynamic``/``T.symbolic`` size) can
be anything its callers pass: the call sites found in the module are examples, not a contract, so
only an ``assert`` makes it a multiple. An extent fixed in the module (a literal, a module
constant, a product of such) is judged on its values in every configuration. Asserts are read as
facts ``x % d == 0`` and combined by the rules ``a * b`` (a factor is a multiple), ``x % d == 0``
with ``(x // d) % b == 0`` (then ``x % b == 0``) and ``d`` a multiple of ``b``.
"""

from __future__ import annotations

import libcst as cst

from kernlint.source.tilelang import TileLangState, calls_in, canonical_op, names_in

_SYMBOLIC = {"dynamic", "symbolic", "const", "Var", "var"}


def _facts(state: TileLangState) -> list[tuple[str, cst.BaseExpression]]:
    """``(code of x, d)`` for every asserted ``x % d == 0`` (also inside ``and`` chains)."""
    cached = state.memo.get("facts")
    if cached is not None:
        return cached
    out: list[tuple[str, cst.BaseExpression]] = []
    state.memo["facts"] = out
    stack = list(state.asserts)
    while stack:
        test = stack.pop()
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            stack += [test.left, test.right]
            continue
        if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Equal)
                and isinstance(test.left, cst.BinaryOperation) and isinstance(test.left.operator, cst.Modulo)
                and state.env.value(test.comparisons[0].comparator) == 0):
            x = test.left.left
            out.append((_code(state, x), test.left.right))
            bound = state.env.lookup(x.value) if isinstance(x, cst.Name) else None
            if isinstance(bound, cst.BinaryOperation):  # ``assert chunk % B == 0`` of ``chunk = L // P``
                out.append((_code(state, bound), test.left.right))
    return out


def _code(state: TileLangState, node: cst.BaseExpression) -> str:
    return state.code(node).replace(" ", "").strip("()")


def free_names(state: TileLangState) -> set[str]:
    """Sizes the caller chooses: factory and kernel parameters, and names bound to symbolic sizes."""
    cached = state.memo.get("free")
    if cached is not None:
        return cached
    out = set(state.params)
    state.memo["free"] = out
    for name, bound in state.env.bindings.items():
        if isinstance(bound, cst.CSTNode) and any(
                (canonical_op(state.info, c.func) or "") in _SYMBOLIC for c in calls_in(bound)):
            out.add(name)
    return out


def _multiple(state: TileLangState, d: cst.BaseExpression, block: cst.BaseExpression) -> bool:
    if _code(state, d) == _code(state, block):
        return True
    dv, bv = state.env.value(d), state.env.value(block)
    return isinstance(dv, int) and isinstance(bv, int) and bv > 0 and dv % bv == 0


def divides(state: TileLangState, total: cst.BaseExpression, block: cst.BaseExpression, depth: int = 0) -> bool:
    """True when ``total`` is provably a multiple of ``block`` for every input the kernel accepts."""
    if depth > 6:
        return False
    if _code(state, total) == _code(state, block):
        return True
    facts = _facts(state)
    key = _code(state, total)
    if any(x == key and _multiple(state, d, block) for x, d in facts):
        return True
    if isinstance(total, cst.BinaryOperation) and isinstance(total.operator, cst.Multiply):
        return divides(state, total.left, block, depth + 1) or divides(state, total.right, block, depth + 1)
    if isinstance(total, cst.Name):
        bound = state.env.lookup(total.value)
        if isinstance(bound, cst.BaseExpression) and not isinstance(bound, (cst.Integer, cst.Call)) \
                and divides(state, bound, block, depth + 1):
            return True
        # x % d == 0 and h = x // d with h a multiple of block: x = d * h is one too
        for name, expr in state.env.bindings.items():
            if (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.FloorDivide)
                    and _code(state, expr.left) == key
                    and any(x == key and _code(state, d) == _code(state, expr.right) for x, d in facts)
                    and divides(state, cst.Name(name), block, depth + 1)):
                return True
    if names_in(total) & free_names(state):
        return False
    for env in state.configs:
        t, b = env.value(total), env.value(block)
        if not isinstance(t, int) or not isinstance(b, int) or b == 0 or t % b:
            return False
    return True
