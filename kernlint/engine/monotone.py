"""Refuting the common bounds queries without a solver: a certificate of non-negativity.

Every comparison among the facts is a polynomial ``D >= 0`` (``a < b`` is ``b - a - 1 >= 0``;
an equation ``v == e`` replaces ``v`` by ``e``). To refute ``offset >= extent`` it is enough to
write ``extent - 1 - offset`` as a sum ``c * m * D + ...`` of facts times non-negative monomials
and positive constants, plus a remainder whose every monomial is non-negative. For
``pid * n * d + (pid_n * B + lane0) * d + lane1`` against ``M * n * d`` with ``pid < M``,
``pid_n * B + lane0 < n`` and ``lane1 < d``, the facts times ``n * d``, ``d`` and 1 leave 0.
The certificate is sought greedily (the last facts first: the masks and loop conditions follow
the domain), each step cancelling one negative monomial, within a small budget.

Only a refutation is answered here (the conjunction has no model: the access is proven); any
other outcome goes to the solver, which alone finds witnesses. A certificate is a proof, so this
never turns a finding into a non-finding that the solver would have reported.

Terms are read once through z3's C API into plain tuples (remembered by ast id, like the walks of
:mod:`kernlint.engine.terms`); polynomials are dicts from monomials (sorted atom tuples) to
integer coefficients, so a query costs Python dict arithmetic, not z3 objects.
"""

from __future__ import annotations

from math import gcd

import z3
from z3 import z3core as C

from kernlint.engine import terms

_APP, _NUMERAL = C.Z3_APP_AST, C.Z3_NUMERAL_AST
_ADD, _SUB, _MUL, _UMINUS = z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_MUL, z3.Z3_OP_UMINUS
_DIV, _MOD = z3.Z3_OP_IDIV, z3.Z3_OP_MOD
_LT, _LE, _GT, _GE, _EQ = z3.Z3_OP_LT, z3.Z3_OP_LE, z3.Z3_OP_GT, z3.Z3_OP_GE, z3.Z3_OP_EQ
_AND, _OR, _ITE, _NOT, _DISTINCT = z3.Z3_OP_AND, z3.Z3_OP_OR, z3.Z3_OP_ITE, z3.Z3_OP_NOT, z3.Z3_OP_DISTINCT
_UNINTERPRETED = z3.Z3_OP_UNINTERPRETED
_INT_SORT = C.Z3_INT_SORT
#: node kinds of the tuples
NUM, VAR, OTHER = "num", "var", "other"
#: work per query before it is left to the solver (a product of many sums expands fast)
MAX_MONOMIALS = 2000
MAX_STEPS = 60
MAX_DEPTH = 12
MAX_BRANCH = 3
#: divisions of divisions (or of remainders) whose bounds are derived one from the other
MAX_NESTING = 3

#: ast id -> (kind, payload, child ids): kind is NUM (payload the value), VAR (the name), a z3
#: operator kind, or OTHER; payload of an operator is None
_NODES: dict[int, tuple] = {}
terms.CACHES.append(_NODES)


def _node(ctx, a, ident: int) -> tuple:
    hit = _NODES.get(ident)
    if hit is not None:
        return hit
    stack = [(a, ident)]
    while stack:
        ast, nid = stack[-1]
        if nid in _NODES:
            stack.pop()
            continue
        kind = C.Z3_get_ast_kind(ctx, ast)
        if kind == _NUMERAL:
            sort = C.Z3_get_sort(ctx, ast)
            if C.Z3_get_sort_kind(ctx, sort) == _INT_SORT:
                out = (NUM, int(C.Z3_get_numeral_string(ctx, ast)), ())
            else:
                out = (OTHER, None, ())
            terms.hold(ctx, nid, ast)
            _NODES[nid] = out
            stack.pop()
            continue
        if kind != _APP:
            terms.hold(ctx, nid, ast)
            _NODES[nid] = (OTHER, None, ())
            stack.pop()
            continue
        decl = C.Z3_get_app_decl(ctx, ast)
        op = C.Z3_get_decl_kind(ctx, decl)
        n = C.Z3_get_app_num_args(ctx, ast)
        if n == 0:
            if op == _UNINTERPRETED:
                name = C.Z3_get_symbol_string(ctx, C.Z3_get_decl_name(ctx, decl))
                sort = C.Z3_get_sort(ctx, ast)
                out = (VAR, name, ()) if C.Z3_get_sort_kind(ctx, sort) == _INT_SORT else (OTHER, None, ())
            else:
                out = (OTHER, None, ())  # true, false
            terms.hold(ctx, nid, ast)
            _NODES[nid] = out
            stack.pop()
            continue
        kids = [C.Z3_get_app_arg(ctx, ast, i) for i in range(n)]
        ids = tuple(C.Z3_get_ast_id(ctx, k) for k in kids)
        missing = [(k, i) for k, i in zip(kids, ids) if i not in _NODES]
        if missing:
            stack.extend(missing)
            continue
        terms.hold(ctx, nid, ast)
        _NODES[nid] = (op, None, ids)
        stack.pop()
    return _NODES[ident]


def read(term) -> int:
    """The ast id of a main-context term, its nodes read (:func:`node` answers for each)."""
    ctx = term.ctx.ref()
    a = term.as_ast()
    ident = C.Z3_get_ast_id(ctx, a)
    _node(ctx, a, ident)
    return ident


def node(ident: int) -> tuple:
    """``(kind, payload, child ids)`` of a node :func:`read` has read: kind ``NUM`` (payload the
    value), ``VAR`` (the name), a z3 operator kind, or ``OTHER``."""
    return _NODES[ident]


def refutes(facts: list, goal) -> bool:
    """Whether ``facts`` and ``goal`` (a comparison or a disjunction of comparisons) have no model,
    shown by a certificate; False means only "not shown here"."""
    if goal.ctx is not z3.main_ctx():
        return False
    try:
        ident = read(goal)
        kind, _, kids = _NODES[ident]
        if not all(_comparison(k) is not None for k in (kids if kind == _OR else (ident,))):
            return False  # a goal of another shape (a race's conjunction) has no certificate here
        return _Certificates(facts).refutes(ident)
    except (z3.Z3Exception, RecursionError, _TooMuch):
        return False


class _TooMuch(Exception):
    pass


def _comparison(ident: int):
    """``(a, b, strict)`` for ``a < b`` (strict) or ``a <= b`` however the atom is written (a
    negated comparison among the ways: the solver's simplifier writes ``x < y`` as ``not (x >= y)``)."""
    kind, _, kids = _NODES[ident]
    negated = kind == _NOT and len(kids) == 1
    if negated:
        kind, _, kids = _NODES[kids[0]]
    if kind not in (_LT, _LE, _GT, _GE) or len(kids) != 2:
        return None
    a, b = kids
    if kind in (_GT, _GE):
        a, b = b, a
    strict = kind in (_LT, _GT)
    return (b, a, not strict) if negated else (a, b, strict)


# -- polynomials: {monomial: coefficient}, a monomial a sorted tuple of atoms (names; "#id" for a
# term kept whole, such as a division) ------------------------------------------------------------

def _const(n: int) -> dict:
    return {(): n} if n else {}


def _accumulate(out: dict, m: tuple, c: int) -> None:
    v = out.get(m, 0) + c
    if v:
        out[m] = v
    else:
        out.pop(m, None)


def _add(p: dict, q: dict, k: int = 1) -> dict:
    """``p + k * q``."""
    out = dict(p)
    for m, c in q.items():
        _accumulate(out, m, k * c)
    return out


def _mul(p: dict, q: dict) -> dict:
    if len(p) * len(q) > MAX_MONOMIALS:
        raise _TooMuch
    out: dict = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            _accumulate(out, tuple(sorted(m1 + m2)), c1 * c2)
    return out


def _scale(p: dict, k: int) -> dict:
    return {m: c * k for m, c in p.items()} if k else {}


def _key(p: dict) -> tuple:
    return tuple(sorted(p.items()))


def _divide(t: tuple, d: tuple) -> tuple | None:
    """The monomial ``t / d``, or None where ``d`` does not divide ``t``."""
    rest = list(t)
    for x in d:
        try:
            rest.remove(x)
        except ValueError:
            return None
    return tuple(rest)


def _divided(p: dict, y: dict) -> dict | None:
    """``p / y`` where ``y`` is one monomial dividing every term of ``p`` exactly, else None."""
    if len(y) != 1:
        return None
    (ym, yc), = y.items()
    out = {}
    for m, c in p.items():
        rest = _divide(m, ym)
        if rest is None or c % yc:
            return None
        out[rest] = c // yc
    return out


class _Certificates:
    def __init__(self, facts: list) -> None:
        #: variable name -> the id of the term an equation of the facts gives it
        self.binding: dict[str, int] = {}
        #: variable name -> its polynomial, from an equation in the solver's normal form (``grid +
        #: H - n*H == 0``: ``grid`` is ``n*H - H``)
        self.solved: dict[str, dict] = {}
        self._exact: dict[int, dict | None] = {}
        self._atoms: dict[str, int] = {}  # "#id" -> id, for the terms kept whole
        #: (operator, numerator, divisor) polynomials -> the atom of a division or remainder
        self._written: dict[tuple, str] = {}
        #: (atom, operator, numerator, divisor) of each division and remainder kept whole
        self._divisions: list[tuple] = []
        #: pairs of terms the facts state unequal
        self._apart: list[tuple] = []
        #: divisions and remainders whose divisor is known to be at least 1 (their facts are made)
        self._divisor_known: set[str] = set()
        #: division atom -> how many facts its floor bound has read
        self._floored: dict[str, int] = {}
        self.steps = 0
        comparisons, sums = [], []
        for _, f in terms.keyed_conjuncts(facts):
            if f.ctx is not z3.main_ctx():
                continue
            ident = read(f)
            kind, _, kids = _NODES[ident]
            if kind == _NOT and len(kids) == 1 and _NODES[kids[0]][0] == _DISTINCT:
                kind, _, kids = _NODES[kids[0]]  # ``not (a != b)``: the simplifier's ``a == b``
                kind = _EQ
            if kind == _EQ and len(kids) == 2:
                if not self._bind(*kids):
                    sums.append(kids)
            elif kind == _DISTINCT and len(kids) == 2:
                self._apart.append(kids)
            elif kind == _NOT and len(kids) == 1 and _NODES[kids[0]][0] == _EQ and len(_NODES[kids[0]][2]) == 2:
                self._apart.append(_NODES[kids[0]][2])
            else:
                comparisons.append(ident)
        for a, b in sums:
            self._solve_for_one(a, b)
        #: polynomials known to be non-negative, in the order stated
        self.facts: list[dict] = []
        self._fact_keys: set = set()
        for ident in comparisons:
            found = _comparison(ident)
            if found is not None:
                a, b, strict = found
                pa, pb = self.exact(a), self.exact(b)
                if pa is not None and pb is not None:
                    self._fact(_add(_add(pb, pa, -1), _const(-1 if strict else 0)))
        # ``k * x + c >= 0`` with ``k > 0 >= c``: x is non-negative
        self._nonneg_atoms = set()
        self._derived: set = set()
        for d in self.facts:
            rest = [m for m in d if m != ()]
            if len(rest) == 1 and len(rest[0]) == 1 and d[rest[0]] > 0 and d.get((), 0) <= 0:
                self._nonneg_atoms.add(rest[0][0])
        self._derive()

    def _fact(self, d: dict) -> None:
        if d and not (len(d) == 1 and () in d):
            key = _key(d)
            if key not in self._fact_keys:
                self._fact_keys.add(key)
                self.facts.append(d)

    # -- equations ------------------------------------------------------------------------------------
    def _bind(self, a: int, b: int) -> bool:
        for var, value in ((a, b), (b, a)):
            kind, name, _ = _NODES[var]
            if kind == VAR and name not in self.binding:
                self.binding[name] = value
                if self._cyclic(name):
                    del self.binding[name]
                    continue
                return True
        return False

    def _solve_for_one(self, a: int, b: int) -> None:
        """``a == b`` where neither side is a lone variable: a variable that occurs once in
        ``a - b``, to the first power with a coefficient of 1 or -1, equals the rest (the first such
        name in order; the others keep their own meaning)."""
        pa, pb = self.exact(a), self.exact(b)
        if pa is None or pb is None:
            return
        p = _add(pa, pb, -1)
        counts: dict[str, int] = {}
        for m in p:
            for atom in set(m):
                counts[atom] = counts.get(atom, 0) + 1
        for m in sorted(p):
            if len(m) == 1 and counts[m[0]] == 1 and abs(p[m]) == 1 and not m[0].startswith("#"):
                name = m[0]
                if name in self.binding or name in self.solved:
                    continue
                c = p[m]
                self.solved[name] = _scale(_add(p, {m: c}, -1), -c)
                self._exact.clear()  # what was read before now reads through the new name
                return

    def _cyclic(self, name: str) -> bool:
        seen, todo = set(), [self.binding[name]]
        while todo:
            ident = todo.pop()
            if ident in seen:
                continue
            seen.add(ident)
            kind, payload, kids = _NODES[ident]
            if kind == VAR:
                if payload == name:
                    return True
                if payload in self.binding:
                    todo.append(self.binding[payload])
            todo.extend(kids)
        return False

    # -- exact polynomials (equations applied) --------------------------------------------------------
    def exact(self, ident: int) -> dict | None:
        if ident in self._exact:
            return self._exact[ident]
        self._exact[ident] = None  # a cycle has no polynomial
        self._exact[ident] = out = self._exact_of(ident)
        return out

    def _exact_of(self, ident: int) -> dict | None:
        kind, payload, kids = _NODES[ident]
        if kind == NUM:
            return _const(payload)
        if kind == VAR:
            if payload in self.binding:
                bound = self.exact(self.binding[payload])
                if bound is not None:
                    return bound
            solved = self.solved.get(payload)
            return dict(solved) if solved is not None else {(payload,): 1}
        if kind == _ADD:
            out: dict = {}
            for k in kids:
                p = self.exact(k)
                if p is None:
                    return None
                out = _add(out, p)
            return out
        if kind == _SUB and len(kids) == 2:
            p, q = self.exact(kids[0]), self.exact(kids[1])
            return None if p is None or q is None else _add(p, q, -1)
        if kind == _UMINUS:
            p = self.exact(kids[0])
            return None if p is None else _scale(p, -1)
        if kind == _MUL:
            out = _const(1)
            for k in kids:
                p = self.exact(k)
                if p is None:
                    return None
                out = _mul(out, p)
            return out
        if (kind in (_DIV, _MOD) and len(kids) == 2) or (
                kind == _ITE and len(kids) == 3 and self.exact(kids[1]) is not None and self.exact(kids[2]) is not None):
            # one atom for one quantity: ``(n + b - 1) // b`` and ``(n - 1 + b) // b`` are the same term
            # kept whole, whichever way each was written (a division of equal polynomials)
            same = None
            if kind in (_DIV, _MOD):
                x, y = self.exact(kids[0]), self.exact(kids[1])
                if x is not None and y is not None:
                    same = (kind, _key(x), _key(y))
            atom = self._written.get(same) if same is not None else None
            if atom is None:
                atom = f"#{ident}"
                self._atoms[atom] = ident
                if same is not None:
                    self._written[same] = atom
            return {(atom,): 1}  # a term kept whole: what is known of it is derived below
        return None

    def _derive(self) -> None:
        """Facts about the terms kept whole: ``q = x / y`` and ``r = x % y`` with ``y >= 1`` give
        ``y*q <= x <= y*q + y - 1`` and ``0 <= r <= y - 1``; ``min``/``max`` (an ``If`` of a
        comparison of its branches) lie below (above) both branches."""
        done = self._derived
        while len(done) < len(self._atoms):
            for atom, ident in list(self._atoms.items()):
                if atom in done:
                    continue
                done.add(atom)
                kind, _, kids = _NODES[ident]
                a = {(atom,): 1}
                if kind in (_DIV, _MOD):
                    x, y = self.exact(kids[0]), self.exact(kids[1])
                    if x is not None and y is not None:
                        self._divisions.append((atom, kind, x, y))  # its facts once ``y >= 1`` is known
                    continue
                cond, x, y = kids
                found = _comparison(cond)
                px, py = self.exact(x), self.exact(y)
                if found is None or px is None or py is None:
                    continue
                ca, cb, _ = (self.exact(found[0]), self.exact(found[1]), found[2])
                if ca is None or cb is None:
                    continue
                if _key(ca) == _key(px) and _key(cb) == _key(py):  # If(x <= y, x, y): min
                    self._fact(_add(px, a, -1))
                    self._fact(_add(py, a, -1))
                elif _key(ca) == _key(py) and _key(cb) == _key(px):  # If(y <= x, x, y): max
                    self._fact(_add(a, px, -1))
                    self._fact(_add(a, py, -1))
                else:
                    continue
                if self._provably_nonneg(px) and self._provably_nonneg(py):
                    self._nonneg_atoms.add(atom)
        # once every term kept whole has its facts: a division of a remainder or of a quotient
        # (``(pid % (T * C)) // C``) is bounded by what the inner term's facts say of it, and a
        # divisor stated non-zero (``cdiv(n, b) != 0``) is at least 1 once it is known non-negative
        for _ in range(MAX_NESTING):
            before = len(self.facts)
            known = len(self._nonneg_atoms)
            self._apart_facts()
            for atom, kind, x, y in self._divisions:
                if atom not in self._divisor_known:
                    if not self._at_least_one(y):
                        continue
                    self._divisor_known.add(atom)
                    a = {(atom,): 1}
                    if kind == _MOD:
                        self._fact(a)
                        self._fact(_add(_add(y, _const(-1)), a, -1))
                        self._nonneg_atoms.add(atom)
                    else:
                        self._fact(_add(x, _mul(y, a), -1))
                        self._fact(_add(_add(_mul(y, a), y), _add(x, _const(1)), -1))
                if kind == _MOD:
                    continue
                if atom not in self._nonneg_atoms and self._provably_nonneg(x):
                    self._nonneg_atoms.add(atom)
                self._floor_bounds(atom, x, y)
            if len(self.facts) == before and len(self._nonneg_atoms) == known:
                break

    def _apart_facts(self) -> None:
        """``a != b`` where ``a - b`` is known non-negative: ``a - b >= 1`` (and the other way round)."""
        for a, b in self._apart:
            pa, pb = self.exact(a), self.exact(b)
            if pa is None or pb is None:
                continue
            d = _add(pa, pb, -1)
            for side in (d, _scale(d, -1)):
                if self._provably_nonneg(side):
                    self._fact(_add(side, _const(-1)))
                    break

    def _floor_bounds(self, atom: str, x: dict, y: dict) -> None:
        """``x <= y * w - 1`` stated (``pid < H * n``, so ``pid <= H * n - 1``) gives
        ``x / y <= w - 1``: the rounding down that a sum of facts cannot express."""
        start = self._floored.get(atom, 0)
        self._floored[atom] = len(self.facts)  # (facts are only appended: each is read once per division)
        for d in self.facts[start:]:
            upper = _add(d, x)  # d = upper - x >= 0
            if any(atom in m for m in upper):
                continue
            w = _divided(_add(upper, _const(1)), y)
            if w is not None:
                self._fact(_add(_add(w, _const(-1)), {(atom,): 1}, -1))

    def _at_least_one(self, p: dict) -> bool:
        if self._provably_nonneg(_add(p, _const(-1))):
            return True
        # a product of factors each at least 1 (``num_heads * seq_len``, a divisor of a program id)
        if len(p) != 1:
            return False
        (m, c), = p.items()
        return c >= 1 and bool(m) and all(self._provably_nonneg({(a,): 1, (): -1}) for a in set(m))

    def _provably_nonneg(self, p: dict) -> bool:
        """``p`` plainly non-negative, or above a fact (``p - d`` plainly so)."""
        return self._plainly_nonneg(p) or any(self._plainly_nonneg(_add(p, d, -1)) for d in self.facts)

    # -- the question -------------------------------------------------------------------------------
    def refutes(self, goal: int) -> bool:
        kind, _, kids = _NODES[goal]
        disjuncts = kids if kind == _OR else (goal,)
        return all(self._refutes_atom(d) for d in disjuncts)

    def _refutes_atom(self, atom: int) -> bool:
        """``a < b`` (``a <= b``) has no model where ``a - b >= 0`` (``a - b - 1 >= 0``) holds."""
        found = _comparison(atom)
        if found is None:
            return False
        a, b, strict = found
        pa, pb = self.exact(a), self.exact(b)
        if pa is None or pb is None:
            return False
        self._derive()  # the goal's own divisions and clamps
        self.steps, self._seen = 0, set()
        return self._certify(_add(_add(pa, pb, -1), _const(0 if strict else -1)))

    def _certify(self, q: dict, depth: int = 0) -> bool:
        """Whether ``q >= 0`` follows: depth first over the facts that cancel its highest negative
        monomial (the products of sizes and positions first), the rewrites that leave the fewest
        negative monomials first."""
        self.steps += 1
        if self.steps > MAX_STEPS or depth > MAX_DEPTH:
            return False
        key = _key(q)
        if key in self._seen:
            return False
        self._seen.add(key)
        bad = [m for m, c in q.items() if c < 0 or not self._monomial_nonneg(m)]
        if not bad:
            return True
        t = max(bad, key=lambda m: (len(m), m))
        ct = q[t]
        if ct > 0:
            return False  # a positive term of unknown sign: no fact makes it smaller
        options = []
        for i, d in enumerate(reversed(self.facts)):
            for dm, cd in d.items():
                if cd >= 0 or (not dm and t):
                    continue  # a fact's constant would cancel any term by growing another: no progress
                m = _divide(t, dm)
                if m is None or not self._monomial_nonneg(m):
                    continue
                # (|cd| / g) * q - (|ct| / g) * m * d cancels t; both multipliers are positive
                g = gcd(ct, cd)
                alpha, beta = -cd // g, -ct // g
                rest = _add(_scale(q, alpha) if alpha != 1 else q, _mul({m: 1}, d), -beta)
                negative = sum(1 for c in rest.values() if c < 0)
                options.append((negative, len(rest), i, rest))
        options.sort(key=lambda o: o[:3])
        return any(self._certify(rest, depth + 1) for *_, rest in options[:MAX_BRANCH])

    # -- signs ----------------------------------------------------------------------------------------
    def _monomial_nonneg(self, m: tuple) -> bool:
        """Every atom of odd power in ``m`` is stated non-negative."""
        return all(x in self._nonneg_atoms for x in m if m.count(x) % 2)

    def _plainly_nonneg(self, p: dict) -> bool:
        return all(c > 0 and self._monomial_nonneg(m) for m, c in p.items())

