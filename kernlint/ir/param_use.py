"""What a Triton kernel's body shows about its parameters, read from the source phase's libcst tree
(no second parse): which are dereferenced as pointers, which point at integers, which strides
scale a tile's last axis or a 1-D lane index, which constexprs are dtypes. The specializer
(:mod:`kernlint.ir.specialize`) types the kernel's signature from these.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import libcst as cst

from kernlint.source import names as N

POINTER_USERS = {
    "load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
    "atomic_xor", "atomic_xchg", "atomic_cas", "make_block_ptr", "make_tensor_descriptor",
}
_INT_OPS = (cst.FloorDivide, cst.Modulo, cst.LeftShift, cst.RightShift, cst.BitAnd, cst.BitOr, cst.BitXor)
#: ``True``/``False``/``None`` are names in libcst, constants in Python: never a variable
_CONSTANT_NAMES = frozenset({"True", "False", "None"})
_ASSIGNS = (cst.Assign, cst.AugAssign, cst.AnnAssign)


@dataclass(frozen=True)
class ParamUse:
    """The kernel parameters (and local names) its body uses in each role."""

    #: names that can be the pointer of a dereferenced address
    dereferenced: frozenset[str]
    #: pointers whose loaded values are integers (indices, locks, counts)
    int_pointers: frozenset[str]
    #: stride parameters that scale the last axis of a tile (``offs_n[None, :] * stride_cn``)
    last_axis_strides: frozenset[str]
    #: stride parameters that scale a 1-D lane index (``offs_k * xk_stride``)
    lane_strides: frozenset[str]
    #: constexprs the kernel uses as a dtype (``dtype=ACC_TYPE``)
    dtype_constexprs: frozenset[str]


def param_use(fn: cst.FunctionDef, params: list[str], constexprs: set[str],
              functions: dict[str, cst.FunctionDef]) -> ParamUse:
    """The roles of ``fn``'s parameters; ``functions``: the module's functions (helpers the
    kernel calls are followed a few calls deep)."""
    dereferenced = _dereferenced(fn, functions, set())
    assigns = assignments(fn)
    int_pointers = _index_pointers(fn, set(params), dereferenced, assigns)
    for node in walk(fn):
        if not isinstance(node, cst.Call) or N.method_name(node.func) not in ("atomic_cas", "atomic_xchg"):
            continue
        args = positional(node)
        if args and any(isinstance(a, cst.Integer) for a in args[1:]):
            int_pointers |= _pointer_roots(args[0])
    lane: set[str] = set()
    last = _last_axis_scales(fn, set(params) - constexprs, assigns, lane)
    return ParamUse(frozenset(dereferenced), frozenset(int_pointers), frozenset(last), frozenset(lane),
                    frozenset(_dtype_uses(fn, constexprs, functions)))


# ------------------------------------------------------------------------------- tree helpers

_SKIPPED_FIELDS = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after",
                   "header", "footer", "colon", "equal", "dot", "operator")


@lru_cache(maxsize=None)
def _child_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if not any(s in f.name for s in _SKIPPED_FIELDS))


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (itself included, nested functions too), in no particular order;
    tokens and whitespace are left out."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        for name in _child_fields(type(n)):
            v = getattr(n, name)
            if isinstance(v, cst.CSTNode):
                stack.append(v)
            elif isinstance(v, (tuple, list)):
                stack.extend(x for x in v if isinstance(x, cst.CSTNode))


def _block(body: cst.BaseSuite) -> list[cst.CSTNode]:
    """A suite's statements, a line's small statements each on its own (as Python's ``ast`` has them)."""
    out: list[cst.CSTNode] = []
    items = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else []
    for stmt in items:
        out.extend(stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt])
    return out


def _nested(stmt: cst.CSTNode) -> list[cst.CSTNode]:
    out = []
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef, cst.For, cst.While, cst.With, cst.If, cst.Try,
                         cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler)):
        out += _block(stmt.body)
    if isinstance(stmt, (cst.Try, cst.TryStar)):
        out += list(stmt.handlers)
    orelse = getattr(stmt, "orelse", None)
    if isinstance(orelse, cst.If):
        out.append(orelse)
    elif isinstance(orelse, cst.Else):
        out += _block(orelse.body)
    final = getattr(stmt, "finalbody", None)
    if final is not None:
        out += _block(final.body)
    return out


def assignments(fn: cst.FunctionDef) -> list[cst.CSTNode]:
    """The assignments in ``fn`` (nested blocks and functions included), level by level as Python's
    ``ast.walk`` meets them: the passes that follow values through them run a fixed number of
    times, so their order is part of what they find."""
    out = []
    level: list[cst.CSTNode] = [fn]
    while level:
        out += [s for s in level if isinstance(s, _ASSIGNS)]
        level = [child for s in level for child in _nested(s)]
    return out


def targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    if isinstance(node, cst.Assign):
        return [t.target for t in node.targets]
    return [node.target]


def positional(call: cst.Call) -> list[cst.BaseExpression | None]:
    """A call's positional arguments (None for a ``*args``)."""
    return [None if a.star else a.value for a in call.args if a.keyword is None and a.star != "**"]


def keywords(call: cst.Call) -> list[tuple[str, cst.BaseExpression]]:
    return [(a.keyword.value, a.value) for a in call.args if a.keyword is not None]


def _variable(node: cst.CSTNode | None) -> str | None:
    return node.value if isinstance(node, cst.Name) and node.value not in _CONSTANT_NAMES else None


# ------------------------------------------------------------------------------- pointers


def _pointer_roots(expr: cst.CSTNode | None) -> set[str]:
    """Names that can be the pointer of a pointer expression: ``p + i * s`` -> {p} (and {i}'s
    neighbours in additions); multiplied, divided or compared operands are integers."""
    name = _variable(expr)
    if name is not None:
        return {name}
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Add):
            return _pointer_roots(expr.left) | _pointer_roots(expr.right)
        if isinstance(expr.operator, cst.Subtract):
            return _pointer_roots(expr.left)
        return set()
    if isinstance(expr, cst.Subscript):
        return _pointer_roots(expr.value)
    if isinstance(expr, cst.IfExp):
        return _pointer_roots(expr.body) | _pointer_roots(expr.orelse)
    if isinstance(expr, cst.Call):
        args = positional(expr)
        func = N.method_name(expr.func)
        if args and func in ("broadcast_to", "reshape", "view", "expand_dims", "where", "multiple_of", "max_contiguous"):
            chosen = args[1:] if func == "where" else args[:1]
            return set().union(*(_pointer_roots(a) for a in chosen))
    return set()


def _arith_names(node: cst.CSTNode | None) -> set[str]:
    """The names whose value an expression carries through arithmetic (``b + i * s``,
    ``x.to(...)``, ``x[:, None]``); calls (``tl.argmax(x)``, ``tl.sum``) and comparisons make new
    values and carry none."""
    name = _variable(node)
    if name is not None:
        return {name}
    if isinstance(node, cst.BinaryOperation):
        return _arith_names(node.left) | _arith_names(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _arith_names(node.expression)
    if isinstance(node, cst.Subscript):
        return _arith_names(node.value)
    if isinstance(node, cst.IfExp):
        return _arith_names(node.body) | _arith_names(node.orelse)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "to":
        return _arith_names(node.func.value)
    if isinstance(node, cst.Call) and N.method_name(node.func) in (
            "multiple_of", "max_contiguous", "minimum", "maximum", "where"):
        return set().union(*(_arith_names(a) for a in positional(node)))
    return set()


def _loaded_from(value: cst.CSTNode, params: set[str]) -> set[str]:
    """The parameters ``tl.load(P + ...)`` (possibly ``.to(...)``-cast) reads through."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "to":
        value = value.func.value
    if isinstance(value, cst.Call) and N.method_name(value.func) == "load" and value.args:
        args = positional(value)
        target = args[0] if args else next((v for k, v in keywords(value) if k == "pointer"), None)
        if target is not None:
            return _pointer_roots(target) & params
    return set()


def _index_pointers(fn: cst.FunctionDef, params: set[str], dereferenced: set[str],
                    assigns: list[cst.CSTNode]) -> set[str]:
    """Pointers whose loaded values are integers: a value that ends up in an address (``Out +
    dest_index * stride``, ``Q + (start + offs) * stride``) or in integer-only arithmetic
    (``//``, ``%``, shifts, bit operations) cannot be a float."""
    sources: dict[str, set[str]] = {}  # name -> pointer parameters its value was loaded through
    plain = [n for n in assigns if isinstance(n, cst.Assign)]
    for _ in range(4):
        for node in plain:
            direct = _loaded_from(node.value, params)
            derived = set().union(*(sources.get(n, set()) for n in _arith_names(node.value)))
            for t in targets(node):
                for n in N.names_in(t):
                    sources.setdefault(n, set()).update(direct | derived)
    # a parameter rebound to what it points at (``bias = tl.load(bias + rn)``) names both: skip it
    sources = {k: v for k, v in sources.items() if v and k not in params}
    if not sources:
        return set()
    used: set[str] = set()
    local = {n for node in assigns for t in targets(node) for n in N.names_in(t)}
    for node in walk(fn):
        if isinstance(node, cst.Call):
            args = positional(node)
            # ``smem.store(x)``: a method of a local object (a shared-memory buffer) takes a value, not a pointer
            if N.method_name(node.func) in POINTER_USERS and args and N.root_name(node.func) not in local:
                used |= _arith_names(args[0])
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _INT_OPS):
            used |= _arith_names(node.left) | _arith_names(node.right)
    for node in assigns:  # the offsets of pointer variables: o_ptrs = Out + dest_index * stride
        if node.value is not None and any(n in dereferenced for t in targets(node) for n in N.names_in(t)):
            used |= _arith_names(node.value)
    out: set[str] = set()
    for n in used:
        out |= sources.get(n, set())
    return out


def _parameter_names(fn: cst.FunctionDef) -> list[str]:
    return [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]


def _dereferenced(fn: cst.FunctionDef, funcs: dict[str, cst.FunctionDef], visiting: set[str]) -> set[str]:
    """Names of ``fn`` that can be the pointer of a dereferenced address: in ``tl.load``/
    ``tl.store``... directly, through assignments (``ptrs = a_ptr + offs``), and through the
    parameters of helper functions of the module that dereference them (``_inner(K_ptrs)``)."""
    dereferenced: set[str] = set()
    visiting = visiting | {fn.name.value}
    for node in walk(fn):
        if not isinstance(node, cst.Call):
            continue
        args = positional(node)
        if N.method_name(node.func) in POINTER_USERS:
            target = args[0] if args else next(
                (v for k, v in keywords(node) if k in ("pointer", "base", "ptr")), None)
            if target is not None:
                dereferenced |= _pointer_roots(target)
        elif (isinstance(node.func, cst.Name) and node.func.value in funcs and node.func.value not in visiting
              and len(visiting) < 4):
            callee = funcs[node.func.value]
            inner = _dereferenced(callee, funcs, visiting)
            for name, arg in zip(_parameter_names(callee), args):
                if name in inner and arg is not None:
                    dereferenced |= _pointer_roots(arg)
            for key, value in keywords(node):
                if key in inner:
                    dereferenced |= _pointer_roots(value)
    # names that flow into dereferenced expressions through assignments (ptrs = a_ptr + offs)
    changed = True
    assigns = assignments(fn)
    while changed:
        changed = False
        for node in assigns:
            tnames = {n for t in targets(node) for n in N.names_in(t)}
            # ``ptr += step`` / ``idx -= start``: the value is an offset, never the pointer
            if tnames & dereferenced and node.value is not None and not isinstance(node, cst.AugAssign):
                new = _pointer_roots(node.value) - dereferenced
                if new:
                    dereferenced |= new
                    changed = True
    return dereferenced


# ------------------------------------------------------------------------------- strides


def _is_none(element: cst.SubscriptElement) -> bool:
    return isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Name) \
        and element.slice.value.value == "None"


def _is_last_axis(node: cst.CSTNode) -> bool:
    """``x[None, :]``, ``x[None, None, :]``: an index broadcast along the last axis of a tile."""
    if not isinstance(node, cst.Subscript) or len(node.slice) < 2:
        return False
    last = node.slice[-1].slice
    return (isinstance(last, cst.Slice) and last.lower is None and last.upper is None
            and all(_is_none(e) for e in node.slice[:-1]))


def _is_other_axis(node: cst.CSTNode) -> bool:
    """``x[:, None]`` and the like: an index along another axis than the last."""
    return (isinstance(node, cst.Subscript) and len(node.slice) >= 2 and not _is_last_axis(node)
            and any(isinstance(e.slice, cst.Slice) for e in node.slice))


def _last_axis_expr(node: cst.CSTNode, known: set[str]) -> bool:
    if _is_last_axis(node) or (isinstance(node, cst.Name) and node.value in known):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        sides = (node.left, node.right)
        return any(_last_axis_expr(x, known) for x in sides) and not any(_is_other_axis(x) for x in sides)
    return False


def _arange_1d(node: cst.CSTNode, ranges: set[str]) -> bool:
    """``tl.arange(0, B)``, ``start + tl.arange(0, B)`` or a name assigned one: a 1-D lane index."""
    if isinstance(node, cst.Name):
        return node.value in ranges
    if isinstance(node, cst.Call):
        return N.method_name(node.func) == "arange"
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        return _arange_1d(node.left, ranges) or _arange_1d(node.right, ranges)
    return False


def _addends(node: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _addends(node.left) + _addends(node.right)
    return [node]


def _last_axis_scales(fn: cst.FunctionDef, candidates: set[str], assigns: list[cst.CSTNode],
                      one_d: set[str]) -> set[str]:
    """Parameters multiplying an index broadcast along a tile's last axis (directly or through a
    variable assigned one: ``offs = tl.arange(0, BLOCK)[None, :]``); those multiplying a 1-D lane
    index (``offs_k * stride``) are added to ``one_d``."""
    single = [n for n in assigns if isinstance(n, cst.Assign) and len(n.targets) == 1
              and isinstance(n.targets[0].target, cst.Name)]
    ranges: set[str] = set()
    for _ in range(2):
        for n in single:
            if _arange_1d(n.value, ranges):
                ranges.add(n.targets[0].target.value)
    known: set[str] = set()
    for _ in range(3):
        for n in single:
            if n.targets[0].target.value not in known and _last_axis_expr(n.value, known):
                known.add(n.targets[0].target.value)
    out: set[str] = set()
    vetoed: set[str] = set()
    nodes = list(walk(fn))
    # ``(start + offs) * stride`` expanded along another axis (``[:, None]``) is not a 1-D index
    expanded = {id(n.value) for n in nodes if isinstance(n, cst.Subscript) and _is_other_axis(n)}
    for node in nodes:
        if not isinstance(node, cst.BinaryOperation):
            continue
        if isinstance(node.operator, cst.Multiply) and id(node) not in expanded:
            for a, b in ((node.left, node.right), (node.right, node.left)):
                if isinstance(a, cst.Name) and a.value in candidates and _last_axis_expr(b, known):
                    out.add(a.value)
                elif isinstance(a, cst.Name) and a.value in candidates and _arange_1d(b, ranges):
                    one_d.add(a.value)
        if isinstance(node.operator, cst.Add):
            # ``K + offs_n[None, :] * stride_kn + offs_d[:, None]``: another axis is added without a
            # stride, so that one is the contiguous axis and the last axis' stride is not 1
            terms = _addends(node)
            if any(_is_other_axis(t) for t in terms):
                for t in terms:
                    if isinstance(t, cst.BinaryOperation) and isinstance(t.operator, cst.Multiply):
                        vetoed |= {x.value for x in (t.left, t.right)
                                   if isinstance(x, cst.Name) and x.value in candidates}
    return out - vetoed


# ------------------------------------------------------------------------------- dtypes


def _dtype_uses(fn: cst.FunctionDef, wanted: set[str], funcs: dict[str, cst.FunctionDef] | None = None,
                depth: int = 0) -> set[str]:
    """Constexprs used as a dtype: ``dtype=NAME``, ``x.to(NAME)``, ``tl.zeros(shape, NAME)``, here
    or in a helper function of the module they are passed to."""
    out = set()
    for node in walk(fn):
        if not isinstance(node, cst.Call):
            continue
        args = positional(node)
        kws = keywords(node)
        for key, value in kws:
            if key == "dtype" and isinstance(value, cst.Name) and value.value in wanted:
                out.add(value.value)
        if funcs and depth < 3 and isinstance(node.func, cst.Name) and node.func.value in funcs \
                and node.func.value != fn.name.value:
            callee = funcs[node.func.value]
            passed = {p: a.value for p, a in zip(_parameter_names(callee), args)
                      if isinstance(a, cst.Name) and a.value in wanted}
            passed.update({k: v.value for k, v in kws if isinstance(v, cst.Name) and v.value in wanted})
            if passed:
                inner = _dtype_uses(callee, set(passed), funcs, depth + 1)
                out |= {passed[p] for p in inner}
        attr = N.method_name(node.func)
        if attr in ("to", "zeros", "full", "cast") and args:
            cand = args[0] if attr in ("to", "cast") else args[-1]
            if isinstance(cand, cst.Name) and cand.value in wanted and (attr != "cast" or len(args) > 1):
                out.add(cand.value)
    return out
