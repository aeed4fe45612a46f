"""Walks over z3 terms through z3's C API, memoised per term.

z3's Python wrappers make an object (and two reference-count calls) for every child they hand out;
the engine asks the same questions (which constants does this address use? what is this mask a
conjunction of?) about terms that share most of their subterms, thousands of times per file. These
walks read the raw ASTs instead and remember each answer by the term's id; a remembered term holds
a reference of its own, so that its id is not reused while the answer is kept.
"""

from __future__ import annotations

import z3
from z3 import z3core as C
from z3.z3 import _to_expr_ref

#: (context ref) -> cached answers; one table per question
_FREE: dict[int, tuple] = {}
_PARTS: dict[int, frozenset] = {}
_TEXT: dict[int, str] = {}
_CHOICES: dict[int, tuple] = {}
_DIVISORS: dict[int, tuple] = {}
_SUMS: dict[int, tuple] = {}
_HELD: dict[int, object] = {}
#: id of a formula object -> (the object, its keyed conjuncts)
_OBJECTS: dict[int, tuple] = {}
#: leaf ast id -> its wrapper (the value of a free-variable map)
_LEAF: dict[int, z3.ExprRef] = {}
#: id of a term object -> (the object, its free variables): the evaluation hands the same wrappers to
#: the rules' questions many times, and reading a wrapper's ast id is itself several calls into z3
_FREE_OF_OBJECT: dict[int, tuple] = {}
LIMIT = 200000
#: other modules' tables of terms (keyed by ast id, or holding what they key): emptied whenever these are
CACHES: list[dict] = []

_APP = C.Z3_APP_AST
_NUMERAL = C.Z3_NUMERAL_AST
_UNINTERPRETED = z3.Z3_OP_UNINTERPRETED
_LINEAR = frozenset((z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_MUL, z3.Z3_OP_UMINUS))


def clear() -> None:
    ctx = z3.main_ctx().ref()
    for a in _HELD.values():
        C.Z3_dec_ref(ctx, a)
    for table in (_FREE, _PARTS, _TEXT, _CHOICES, _DIVISORS, _SUMS, _HELD, _LEAF, _OBJECTS, _FREE_OF_OBJECT, *CACHES):
        table.clear()


def hold(ctx, ident: int, a) -> None:
    """Keep the ast ``a`` alive (so that its id is not reused) until :func:`clear`."""
    if ident not in _HELD:
        C.Z3_inc_ref(ctx, a)
        _HELD[ident] = a


def _main(term) -> bool:
    return term.ctx is z3.main_ctx()


def free_vars(term) -> dict[str, z3.ExprRef]:
    """The uninterpreted constants of a term, in the order a left-to-right walk first meets them (a
    table the caller must not change)."""
    hit = _FREE_OF_OBJECT.get(id(term))
    if hit is not None and hit[0] is term:
        return hit[1]
    if not _main(term):
        return _free_slow(term)
    if len(_HELD) > LIMIT or len(_OBJECTS) > LIMIT or len(_FREE_OF_OBJECT) > LIMIT:
        clear()
    ctx = term.ctx.ref()
    names = _free(ctx, term.as_ast(), C.Z3_get_ast_id(ctx, term.as_ast()))
    out = {name: _LEAF[leaf] for name, leaf in names}
    _FREE_OF_OBJECT[id(term)] = (term, out)
    return out


def _finish(ctx, nid: int, node, out: tuple) -> None:
    hold(ctx, nid, node)
    _FREE[nid] = out


def _free(ctx, a, ident: int) -> tuple:
    """((name, leaf id), ...) of the constants under ``a`` (iterative: terms can be deep)."""
    hit = _FREE.get(ident)
    if hit is not None:
        return hit
    # post-order over the DAG: a node is finished once all its children are
    stack = [(a, ident, None)]
    while stack:
        node, nid, ids = stack.pop()
        if ids is None:
            if nid in _FREE:
                continue
            if C.Z3_get_ast_kind(ctx, node) != _APP:
                _finish(ctx, nid, node, ())
                continue
            n = C.Z3_get_app_num_args(ctx, node)
            if n == 0:
                decl = C.Z3_get_app_decl(ctx, node)
                out = ()
                if C.Z3_get_decl_kind(ctx, decl) == _UNINTERPRETED:
                    if nid not in _LEAF:
                        _LEAF[nid] = _to_expr_ref(node, z3.main_ctx())
                    out = ((C.Z3_get_symbol_string(ctx, C.Z3_get_decl_name(ctx, decl)), nid),)
                _finish(ctx, nid, node, out)
                continue
            kids = [C.Z3_get_app_arg(ctx, node, i) for i in range(n)]
            ids = [C.Z3_get_ast_id(ctx, k) for k in kids]
            stack.append((node, nid, ids))
            stack.extend((k, i, None) for k, i in zip(reversed(kids), reversed(ids)) if i not in _FREE)
            continue
        if nid in _FREE:
            continue
        seen, out = set(), []
        for i in ids:
            for pair in _FREE[i]:
                if pair[0] not in seen:
                    seen.add(pair[0])
                    out.append(pair)
        _finish(ctx, nid, node, tuple(out))
    return _FREE[ident]


def _free_slow(term) -> dict[str, z3.ExprRef]:
    if z3.is_const(term):
        return {term.decl().name(): term} if term.decl().kind() == _UNINTERPRETED else {}
    out: dict = {}
    for child in term.children():
        for k, v in _free_slow(child).items():
            out.setdefault(k, v)
    return out


def merged_free(terms) -> dict[str, z3.ExprRef]:
    """``free_vars`` of several terms together, in order (as of their conjunction)."""
    out: dict = {}
    for t in terms:
        for k, v in free_vars(t).items():
            out.setdefault(k, v)
    return out


def _remembered(table: dict, term, walk):
    """``walk(ctx, ast, term)`` of ``term``, remembered in ``table`` by the term's id (main context)."""
    ctx = term.ctx.ref()
    a = term.as_ast()
    ident = C.Z3_get_ast_id(ctx, a)
    hit = table.get(ident)
    if hit is not None:
        return hit
    out = walk(ctx, a, term)
    if _main(term):
        hold(ctx, ident, a)
        table[ident] = out
    return out


def components(term) -> frozenset:
    """Ids of the terms an address is a sum or product of (not looking inside %, //, min, where)."""
    return _remembered(_PARTS, term, _components)


def _components(ctx, a, term) -> frozenset:
    out, todo = set(), [a]
    while todo:
        t = todo.pop()
        tid = C.Z3_get_ast_id(ctx, t)
        if tid in out:
            continue
        out.add(tid)
        if C.Z3_get_ast_kind(ctx, t) == _APP and C.Z3_get_decl_kind(ctx, C.Z3_get_app_decl(ctx, t)) in _LINEAR:
            todo.extend(C.Z3_get_app_arg(ctx, t, i) for i in range(C.Z3_get_app_num_args(ctx, t)))
    return frozenset(out)


def choices(term) -> tuple:
    """The conditions of the ``If`` terms under ``term`` (a mask picked by a test), each once."""
    return _remembered(_CHOICES, term, _choices)


def _applications(ctx, a, through: frozenset | None = None):
    """(ast, its operator's kind, its number of arguments) of each application under ``a`` once,
    walking into the arguments of every one (or of those whose kind is in ``through``)."""
    seen, todo = set(), [a]
    while todo:
        t = todo.pop()
        tid = C.Z3_get_ast_id(ctx, t)
        if tid in seen or C.Z3_get_ast_kind(ctx, t) != _APP:
            continue
        seen.add(tid)
        kind = C.Z3_get_decl_kind(ctx, C.Z3_get_app_decl(ctx, t))
        n = C.Z3_get_app_num_args(ctx, t)
        yield t, kind, n
        if through is None or kind in through:
            todo.extend(C.Z3_get_app_arg(ctx, t, i) for i in range(n))


def _choices(ctx, a, term) -> tuple:
    return tuple(_to_expr_ref(C.Z3_get_app_arg(ctx, t, 0), term.ctx)
                 for t, kind, n in _applications(ctx, a) if n and kind == z3.Z3_OP_ITE)


def divisors(term) -> tuple:
    """The divisors of the quotients and remainders under ``term``, each once."""
    return _remembered(_DIVISORS, term, _divisors)


_DIVIDING = (z3.Z3_OP_IDIV, z3.Z3_OP_MOD, z3.Z3_OP_REM, z3.Z3_OP_DIV)


def _divisors(ctx, a, term) -> tuple:
    return tuple(_to_expr_ref(C.Z3_get_app_arg(ctx, t, 1), term.ctx)
                 for t, kind, n in _applications(ctx, a) if n == 2 and kind in _DIVIDING)


def shifted(offset, index) -> list:
    """The parts of ``offset`` (through its sums and products) that are ``index`` plus a number other
    than 0 (``(o_t + 1) * stride``: ``o_t + 1``): sums compared by their flattened summands, as z3's
    rewriter cancels them, without building ``part - index`` for each part."""
    ctx = offset.ctx.ref()
    total, rest = _sum_form(ctx, index.as_ast())
    return [_to_expr_ref(a, offset.ctx) for a, (t, r) in _remembered(_SUMS, offset, _sums)
            if r == rest and t != total]


_ARITHMETIC = frozenset((z3.Z3_OP_ADD, z3.Z3_OP_MUL))


def _sums(ctx, a, term) -> tuple:
    """(ast, its sum form) of each sum under ``a`` through sums and products."""
    return tuple((t, _sum_form(ctx, t)) for t, kind, _ in _applications(ctx, a, _ARITHMETIC) if kind == z3.Z3_OP_ADD)


def _sum_form(ctx, a) -> tuple:
    """(the numbers' total, the sorted ids of the other summands) of a sum, nested sums flattened."""
    total, rest, todo = 0, [], [a]
    while todo:
        t = todo.pop()
        kind = C.Z3_get_ast_kind(ctx, t)
        if kind == _NUMERAL:
            try:
                total += int(C.Z3_get_numeral_string(ctx, t))
                continue
            except ValueError:
                pass
        elif kind == _APP and C.Z3_get_decl_kind(ctx, C.Z3_get_app_decl(ctx, t)) == z3.Z3_OP_ADD:
            todo.extend(C.Z3_get_app_arg(ctx, t, i) for i in range(C.Z3_get_app_num_args(ctx, t)))
            continue
        rest.append(C.Z3_get_ast_id(ctx, t))
    return total, tuple(sorted(rest))


def keyed_conjuncts(formulas) -> list[tuple[str, z3.BoolRef]]:
    """(text, conjunct) of every conjunct of the formulas; remembered per formula object (the
    domain facts of a kernel are the same objects in each of its queries)."""
    out = []
    for f in formulas:
        hit = _OBJECTS.get(id(f))
        if hit is None or hit[0] is not f:
            hit = _OBJECTS[id(f)] = (f, [(text(c), c) for c in conjuncts([f])])
        out.extend(hit[1])
    return out


def conjuncts(formulas) -> list:
    """The conjuncts of the formulas, ``And`` nodes flattened (as wrappers, for the solver)."""
    stack, out = list(formulas), []
    while stack:
        f = stack.pop()
        ctx, a = f.ctx.ref(), f.as_ast()
        if C.Z3_get_ast_kind(ctx, a) == _APP and C.Z3_get_decl_kind(ctx, C.Z3_get_app_decl(ctx, a)) == z3.Z3_OP_AND:
            stack.extend(f.children())
        else:
            out.append(f)
    return out


def text(term) -> str:
    """``term.sexpr()``, remembered (the same domain facts are keyed in every query)."""
    if not _main(term):
        return term.sexpr()
    ctx = term.ctx.ref()
    a = term.as_ast()
    ident = C.Z3_get_ast_id(ctx, a)
    hit = _TEXT.get(ident)
    if hit is None:
        hit = _TEXT[ident] = term.sexpr()
        hold(ctx, ident, a)
    return hit


def summands(term) -> list[str]:
    """Names of the constants added at the top of a sum (``Q + offs``: ``Q`` and what ``offs``
    adds), once per occurrence."""
    ctx = term.ctx.ref()
    out, todo = [], [term.as_ast()]
    while todo:
        t = todo.pop()
        if C.Z3_get_ast_kind(ctx, t) != _APP:
            continue
        decl = C.Z3_get_app_decl(ctx, t)
        kind = C.Z3_get_decl_kind(ctx, decl)
        n = C.Z3_get_app_num_args(ctx, t)
        if kind == z3.Z3_OP_ADD:
            todo.extend(C.Z3_get_app_arg(ctx, t, i) for i in range(n))
        elif n == 0 and kind == _UNINTERPRETED:
            out.append(C.Z3_get_symbol_string(ctx, C.Z3_get_decl_name(ctx, decl)))
    return out


def _connective(make, formulas: list) -> z3.BoolRef:
    ctx = z3.main_ctx()
    arr = (z3.Ast * len(formulas))(*(f.as_ast() for f in formulas))
    return z3.BoolRef(make(ctx.ref(), len(formulas), arr), ctx)


def conjunction(formulas: list) -> z3.BoolRef:
    """``z3.And(formulas)`` for boolean terms of the main context, without the wrapper's coercions."""
    return _connective(C.Z3_mk_and, formulas)


def disjunction(formulas: list) -> z3.BoolRef:
    """``z3.Or(formulas)`` for boolean terms of the main context, without the wrapper's coercions."""
    return _connective(C.Z3_mk_or, formulas)


def negation(formula: z3.BoolRef) -> z3.BoolRef:
    """``z3.Not(formula)`` for a boolean term of the main context, without the wrapper's coercions."""
    ctx = z3.main_ctx()
    return z3.BoolRef(C.Z3_mk_not(ctx.ref(), formula.as_ast()), ctx)


def ite(cond: z3.BoolRef, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
    """``z3.If(cond, a, b)`` for terms of one sort in the main context, without the wrapper's coercions."""
    ctx = z3.main_ctx()
    return _to_expr_ref(C.Z3_mk_ite(ctx.ref(), cond.as_ast(), a.as_ast(), b.as_ast()), ctx)


_VARIADIC = {"+": C.Z3_mk_add, "-": C.Z3_mk_sub, "*": C.Z3_mk_mul}
_BINARY = {"/": C.Z3_mk_div, "%": C.Z3_mk_mod}
_COMPARISONS = {"<": C.Z3_mk_lt, "<=": C.Z3_mk_le, ">": C.Z3_mk_gt, ">=": C.Z3_mk_ge, "==": C.Z3_mk_eq}


def int_op(op: str, x: z3.ArithRef, y: z3.ArithRef) -> z3.ExprRef:
    """``x op y`` (``+ - * / % < <= > >= == !=``) for two integer terms of the main context: the term
    z3's operator makes, made through the C API (the operator first coerces both sides to a common
    sort through a dozen Python calls, a third of the cost of evaluating a kernel's arithmetic)."""
    ctx = z3.main_ctx()
    ref = ctx.ref()
    if op in _COMPARISONS:
        return z3.BoolRef(_COMPARISONS[op](ref, x.as_ast(), y.as_ast()), ctx)
    if op in _BINARY:
        return z3.ArithRef(_BINARY[op](ref, x.as_ast(), y.as_ast()), ctx)
    args = (z3.Ast * 2)(x.as_ast(), y.as_ast())
    if op == "!=":
        return z3.BoolRef(C.Z3_mk_distinct(ref, 2, args), ctx)
    return z3.ArithRef(_VARIADIC[op](ref, 2, args), ctx)
