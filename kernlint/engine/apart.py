"""Two programs apart at every size, shown without the solver and without a layout.

An address ``c1 * p1 + c2 * p2 + r`` (the ``c`` polynomials in the launch's sizes and strides, the
``p`` program ids, ``r`` lanes and loop iterations times such polynomials) is reached by two programs
only if the two equal addresses agree, variable by variable, wherever a variable's ``c`` exceeds
what all the others can differ by between the two programs (``c - 1`` at least that spread): such a
variable has the same value in both, and the rest of the address is equal again. Where every program
id is set aside so, the two programs meet nowhere. The facts give the spread: bounds of each variable
(``lane < n_cols``, ``pid < grid``), of a sum a mask bounds as a whole (``pid * BV + lane < V``: one
digit of the address, whose ids are then set aside inside it), and equations between sizes (``stride
== x.shape[1]``, ``n_cols == x.shape[1]``). A program id may be read through its quotient and
remainder by a size (``pid // H``, ``pid % H``): two digits of their own. ``c - 1 - spread`` is shown
non-negative when, the equations applied, it is a polynomial whose coefficients are all non-negative
over names the facts state non-negative.

The proof holds at every size, so in every layout a race question asks: it is tried once, before
them. It only proves; anything it does not show is left to the layouts and the solver.
"""

from __future__ import annotations

import itertools

import z3

from kernlint.engine.symbols import PER_PROGRAM

_ADD, _SUB, _MUL, _NEG = z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_MUL, z3.Z3_OP_UMINUS
_DIV, _MOD = z3.Z3_OP_IDIV, z3.Z3_OP_MOD
_LE, _GE, _LT, _GT, _EQ = z3.Z3_OP_LE, z3.Z3_OP_GE, z3.Z3_OP_LT, z3.Z3_OP_GT, z3.Z3_OP_EQ
#: work per question before it is left to the layouts
MAX_MONOMIALS = 64
MAX_CHOICES = 16
SECOND = "@2"


def at_every_size(atoms: list, address: tuple, programs, positive=frozenset()) -> bool:
    """Whether two programs that differ in one of ``programs`` (names of the first program's
    variables; the second's carry ``@2``) cannot both reach ``address`` (a tree, as
    :func:`kernlint.engine.races._tree` reads terms) under the comparisons ``atoms`` (trees
    ``(op, left, right)``), for every value at least 1 of the names in ``positive`` (those each
    layout gives a value). True only where shown."""
    try:
        return _shown(atoms, address, list(programs), set(positive))
    except (RecursionError, TypeError, ValueError, KeyError, ZeroDivisionError):
        return False


def agreeing(atoms: list, address: tuple, positive=frozenset()) -> frozenset:
    """The program variables that two programs reaching one ``address`` hold alike (read as
    :func:`at_every_size` reads the address and the facts): each set aside by the same proof, and a
    program id whose quotient and remainder by one size both are. A digit is named as the address's
    tree names it (:func:`digit_name`). Empty where nothing is shown."""
    try:
        return _agreeing(atoms, address, set(positive))
    except (RecursionError, TypeError, ValueError, KeyError, ZeroDivisionError):
        return frozenset()


def digit_name(op, name: str, divisor: tuple) -> str:
    """The name :func:`agreeing` gives ``name // divisor`` (``op`` is ``_DIV``) or ``name % divisor``."""
    return _digit(op, name, divisor)


def _shown(atoms: list, address: tuple, programs: list, positive: set) -> bool:
    found = _address_facts(atoms, address, positive)
    if found is None:
        return False
    coefficients, differences, defined, known = found
    if not all(_determined(coefficients, p) for p in programs):
        return False  # a program id the address leaves out: two programs differing in it meet
    ranges, lows = _ranges(coefficients, differences, defined, known)
    if _peeled(programs, coefficients, ranges, known):
        return True
    # a block's index and its lanes bounded together by a mask (``pid * BV + lane < V``) is one
    # digit of the address: the two programs' digits must agree, then the ids inside each
    grouped = _grouped(coefficients, _sum_bounds(differences, lows, known), known)
    if grouped is None:
        return False
    outer, groups = grouped
    ranges = {**ranges, **{g: [(lo, hi)] for g, (_, lo, hi) in groups.items()}}
    heads = [p for p in programs if _reads(outer, p)] + [g for g, (inner, _, _) in groups.items()
                                                           if any(_reads(inner, p) for p in programs)]
    return _peeled(heads, outer, ranges, known) and all(
        _peeled([p for p in programs if _reads(inner, p)], inner, ranges, known) for inner, _, _ in groups.values())


def _agreeing(atoms: list, address: tuple, positive: set) -> frozenset:
    found = _address_facts(atoms, address, positive)
    if found is None:
        return frozenset()
    coefficients, differences, defined, known = found
    ranges, lows = _ranges(coefficients, differences, defined, known)
    out = set(coefficients) - set(_peel(coefficients, ranges, known))
    grouped = _grouped(coefficients, _sum_bounds(differences, lows, known), known)
    if grouped is not None:  # (each bounded sum one digit, as :func:`_shown` reads them)
        outer, groups = grouped
        ranges = {**ranges, **{g: [(lo, hi)] for g, (_, lo, hi) in groups.items()}}
        left = _peel(outer, ranges, known)
        out |= {v for v in outer if v not in left and v not in groups}
        for g, (inner, _, _) in groups.items():
            if g not in left:
                out |= set(inner) - set(_peel(inner, ranges, known))
    for v in list(out):  # an id both of whose digits by one size agree
        op, variable, divisor = _digit_of(v)
        if op == _DIV and _digit(_MOD, variable, divisor) in out:
            out.add(variable)
    return frozenset(out)


def _address_facts(atoms: list, address: tuple, positive: set) -> tuple | None:
    """(the coefficient of each program variable of the address, the facts as ``(op, difference)``
    polynomials with their equations applied, those equations, what they say of the sizes), or None
    where the address is not such a sum."""
    differences = []  # (op, left - right) of each comparison, as polynomials
    for op, left, right in atoms:
        a, b = _poly(left), _poly(right)
        if a is not None and b is not None:
            differences.append((op, _sub(a, b)))
    defined = _definitions(differences)
    differences = [(op, _substituted(d, defined)) for op, d in differences]
    nonneg, at_least_one = _non_negative(differences)
    known = _Known(defined, nonneg | positive | at_least_one, positive | at_least_one)
    start = _poly(address)
    if start is None:
        return None
    coefficients = _per_variable(_substituted(start, defined))
    if coefficients is None:
        return None
    return coefficients, differences, defined, known


def _ranges(coefficients: dict, differences: list, defined: dict, known: "_Known") -> tuple[dict, dict]:
    """(each variable's ranges, the same for both programs: a bound only one of them has is left out;
    the lower bounds of every variable, digits included)."""
    lows, highs = _bounds(differences)
    digits = _digit_bounds(coefficients, defined, known, lows, highs)
    if digits:
        lows, highs = _bounds(differences + digits)
    ranges = {}
    for v in coefficients:
        lo = [x for x in lows.get(v, ()) if x in lows.get(v + SECOND, ())]
        hi = [x for x in highs.get(v, ()) if x in highs.get(v + SECOND, ())]
        ranges[v] = [(dict(a), dict(b)) for a, b in itertools.islice(itertools.product(lo, hi), MAX_CHOICES)]
    return ranges, lows


def _peeled(programs: list, coefficients: dict, ranges: dict, known: "_Known") -> bool:
    """Whether two equal addresses have the same value of each of ``programs`` (:func:`_peel`, until
    none is left); a program id read through its digits (``pid // H``, ``pid % H``) is the same once
    they are."""
    rest = _peel(coefficients, ranges, known, lambda rest: not any(_reads(rest, p) for p in programs))
    return not any(_reads(rest, p) for p in programs)


def _peel(coefficients: dict, ranges: dict, known: "_Known", done=lambda rest: False) -> dict:
    """The variables left once, one after another, each variable whose coefficient exceeds what all
    the others left can differ by is set aside (two equal addresses have the same value of it), until
    ``done`` or none is. Setting one aside only narrows what the others differ by, so the order found
    first is as good as any."""
    rest = dict(coefficients)
    while rest and not done(rest):
        for v in sorted(rest, key=_groups_first):
            if _dominates(v, rest, ranges, known):
                del rest[v]
                break
        else:
            break
    return rest


def _groups_first(v) -> tuple:
    """A fixed order to try variables in: the bounded sums first (they are the widest digits)."""
    return (0 if isinstance(v, tuple) else 1, repr(v))


def _dominates(v, rest: dict, ranges: dict, known: "_Known") -> bool:
    """Whether ``v``'s coefficient is above what the other variables of ``rest`` can differ by."""
    step = _magnitude(rest[v], known)
    if step is None:
        return False
    widths = []
    for u, c in rest.items():
        if u == v:
            continue
        size = _magnitude(c, known) if ranges.get(u) else None
        if size is None:
            return False  # a variable without a range: its spread is unbounded
        widths.append([_mul(size, _sub(hi, lo)) for lo, hi in ranges[u]])
    for choice in itertools.islice(itertools.product(*widths), MAX_CHOICES):
        spread: dict = {}
        for w in choice:
            spread = _add(spread, w)
        if known.non_negative(_sub(_sub(step, {(): 1}), spread)):
            return True
    return False


def _determined(coefficients: dict, program: str) -> bool:
    """Whether what the address reads of ``program`` determines it: the id itself, or both its
    quotient and its remainder by one size."""
    if program in coefficients:
        return True
    digits = {(op, repr(divisor)) for op, variable, divisor in map(_digit_of, coefficients) if variable == program}
    return any((_MOD, d) in digits for op, d in digits if op == _DIV)


def _reads(coefficients: dict, program: str) -> bool:
    """Whether the address still reads ``program``: itself, or its digits."""
    return program in coefficients or any(_digit_of(v)[1] == program for v in coefficients)


def _sum_bounds(differences: list, lows: dict, known: "_Known") -> list[tuple[dict, dict, dict]]:
    """``(coefficients, low, high)`` of each sum of two or more program variables that a comparison
    bounds above (``pid * BV + lane - V < 0``), for the first program's variables where the second's
    are bounded alike; its low is what the variables' own lower bounds give (each coefficient shown
    non-negative)."""
    found = []
    for op, d in differences:
        if op not in (_LT, _LE, _GT, _GE):
            continue
        if op in (_GT, _GE):
            d, op = _scale(d, -1), (_LT if op == _GT else _LE)
        coefficients = _per_variable(d)
        if coefficients is None or len(coefficients) < 2:
            continue
        rest = {m: c for m, c in d.items() if not any(_per_program(a) for a in m)}
        high = _scale(rest, -1) if op == _LE else _add(_scale(rest, -1), {(): -1})
        found.append((coefficients, high))
    seen = {(_frozen(c), _frozen(h)) for c, h in found}
    out = []
    for coefficients, high in found:
        if any(v.endswith(SECOND) for v in coefficients):
            continue
        second = {v + SECOND: c for v, c in coefficients.items()}
        if (_frozen(second), _frozen(high)) not in seen:
            continue  # a bound of the first program's sum only
        low: dict | None = {}
        for v, c in coefficients.items():
            least = [x for x in lows.get(v, ()) if x in lows.get(v + SECOND, ())]
            term = _mul(c, dict(least[0])) if least and known.non_negative(c) else None
            if term is None:
                low = None
                break
            low = _add(low, term)
        if low is not None:
            out.append((coefficients, low, high))
    return out


def _frozen(p: dict) -> frozenset:
    return frozenset((k, frozenset(v.items()) if isinstance(v, dict) else v) for k, v in p.items())


def _grouped(coefficients: dict, sums: list, known: "_Known") -> tuple[dict, dict] | None:
    """The address with each bounded sum it scales (``V * (pid * BT + lane)``) as one variable:
    (coefficients, {group: (its own coefficients, low, high)}); None where it scales none."""
    rest, groups = dict(coefficients), {}
    for inner, low, high in sums:
        if not set(inner) <= set(rest):
            continue
        pivot = next((v for v, c in inner.items() if set(c) == {()}), None)
        if pivot is None:
            continue
        c = inner[pivot][()]
        scale = {m: k // c for m, k in rest[pivot].items()}
        if any(k % c for k in rest[pivot].values()) or not known.non_negative(scale):
            continue
        if any(_mul(scale, inner[v]) != rest[v] for v in inner):
            continue
        name = ("sum", len(groups))
        for v in inner:
            del rest[v]
        rest[name] = scale
        groups[name] = (inner, low, high)
    return (rest, groups) if groups else None


# -- polynomials: {monomial (sorted tuple of atoms): coefficient} ------------------------------------

def _poly(t: tuple) -> dict | None:
    tag = t[0]
    if tag == "#":
        return {(): t[1]} if t[1] else {}
    if tag == "$":
        return {(t[1],): 1}
    if tag in (_ADD, _SUB, _NEG, _MUL):
        args = [_poly(x) for x in t[1:]]
        if any(a is None for a in args):
            return None
        if tag == _NEG:
            return _scale(args[0], -1)
        out = args[0]
        for a in args[1:]:
            out = _add(out, a) if tag == _ADD else _sub(out, a) if tag == _SUB else _mul(out, a)
            if out is None or len(out) > MAX_MONOMIALS:
                return None
        return out
    if tag in (_DIV, _MOD) and len(t) == 3:
        a, b = _poly(t[1]), _poly(t[2])
        if a is not None and b is not None and set(a) <= {()} and set(b) <= {()} and b.get((), 0):
            x, y = a.get((), 0), b[()]
            r = x % abs(y)  # z3's: the remainder is never negative
            value = r if tag == _MOD else (x - r) // y
            return {(): value} if value else {}
        if not any(n.startswith(PER_PROGRAM) for n in _atom_names(t)):
            return {((tag, t),): 1}  # a quotient of sizes: one quantity, however it is made
        if t[1][0] == "$" and _per_program(t[1][1]) and not any(n.startswith(PER_PROGRAM) for n in _atom_names(t[2])):
            return {(_digit(tag, t[1][1], t[2]),): 1}
    return None


#: name of a digit of a program variable -> (``_DIV`` or ``_MOD``, the variable, the divisor's tree)
_DIGITS: dict[str, tuple] = {}


def _digit(op, name: str, divisor: tuple) -> str:
    """The name of ``name // divisor`` or ``name % divisor`` (a size): a variable of the program the
    variable is of (the second program's carries its mark at the end, as its other variables do)."""
    base, mark = (name[:-len(SECOND)], SECOND) if name.endswith(SECOND) else (name, "")
    digit = f"{base}{'//' if op == _DIV else '%'}{divisor!r}{mark}"
    _DIGITS[digit] = (op, name, divisor)
    return digit


def _digit_of(v) -> tuple:
    """(``_DIV`` or ``_MOD``, the program variable, the divisor's tree) of a digit's name; (None,
    None, None) for any other variable."""
    return _DIGITS.get(v, (None, None, None)) if isinstance(v, str) else (None, None, None)


def _digit_bounds(coefficients: dict, defined: dict, known: "_Known", lows: dict, highs: dict) -> list:
    """Comparisons bounding the digits the address reads, for both programs: ``0 <= pid % S < S``
    and, where the variable's bound is a multiple of ``S`` (``pid < B * S``), ``0 <= pid // S < B``;
    ``S`` a size shown at least 1."""
    out = []
    for v in coefficients:
        op, first, divisor = _digit_of(v)
        size = _poly(divisor) if op is not None else None
        if size is None:
            continue
        size = _substituted(size, defined)
        if not known.non_negative(_sub(size, {(): 1})):
            continue
        for name, variable in ((v, first), (v + SECOND, first + SECOND)):
            if not any(known.non_negative(dict(lo)) for lo in lows.get(variable, ())):
                continue
            out.append((_GE, {(name,): 1}))
            if op == _MOD:
                out.append((_LT, _sub({(name,): 1}, size)))
                continue
            for hi in highs.get(variable, ()):
                count = _quotient(_add(dict(hi), {(): 1}), size)
                if count is not None:
                    out.append((_LT, _sub({(name,): 1}, count)))
    return out


def _quotient(p: dict, by: dict) -> dict | None:
    """``p / by`` where ``by`` is one monomial with coefficient 1 that divides every monomial of ``p``."""
    if len(by) != 1:
        return None
    (m, c), = by.items()
    if c != 1:
        return None
    out = {}
    for n, k in p.items():
        left = list(n)
        for a in m:
            if a not in left:
                return None
            left.remove(a)
        out[tuple(left)] = k
    return out


def _atom_names(t: tuple):
    if t[0] == "$":
        yield t[1]
    elif t[0] != "#":
        for x in t[1:]:
            yield from _atom_names(x)


def _add(a: dict, b: dict) -> dict:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, 0) + c
        if not out[m]:
            del out[m]
    return out


def _scale(a: dict, k: int) -> dict:
    return {m: c * k for m, c in a.items()} if k else {}


def _sub(a: dict, b: dict) -> dict:
    return _add(a, _scale(b, -1))


def _mul(a: dict, b: dict) -> dict | None:
    out: dict = {}
    for (m, c), (n, d) in itertools.product(a.items(), b.items()):
        key = tuple(sorted(m + n, key=repr))
        out[key] = out.get(key, 0) + c * d
        if not out[key]:
            del out[key]
    return out if len(out) <= MAX_MONOMIALS else None


def coefficients(tree: tuple) -> dict | None:
    """The coefficient (a polynomial in sizes) of each program variable of an integer term (as a
    tree); None where the term is not such a sum."""
    p = _poly(tree)
    return None if p is None else _per_variable(p)


def divides(p: dict, q: dict) -> bool:
    """Whether the polynomial ``p``, one monomial with coefficient 1, divides every monomial of ``q``."""
    return _quotient(q, p) is not None


def _per_program(atom) -> bool:
    return isinstance(atom, str) and atom.startswith(PER_PROGRAM)


def _per_variable(p: dict) -> dict | None:
    """The coefficient (a polynomial in sizes) of each program variable of ``p``; the terms without
    one are the same for both programs and drop out. None where two such variables multiply."""
    out: dict = {}
    for m, c in p.items():
        own = [a for a in m if _per_program(a)]
        if len(own) > 1:
            return None
        if own:
            rest = list(m)
            rest.remove(own[0])
            out[own[0]] = _add(out.get(own[0], {}), {tuple(rest): c})
    return out


def _definitions(differences: list) -> dict:
    """Names the equations define in terms of others (``stride - x.shape[1] == 0``), each once and
    never through itself: the later name (in a fixed order) is the one defined where both are names."""
    defined: dict = {}
    for op, d in differences:
        if op != _EQ:
            continue
        d = _substituted(d, defined)
        if any(_per_program(a) for m in d for a in m):
            continue
        names = sorted((m[0] for m, c in d.items() if len(m) == 1 and isinstance(m[0], str) and c in (1, -1)
                        and sum(m[0] in n for n in d) == 1), reverse=True)
        if not names:
            continue
        name = names[0]
        c = d[(name,)]
        value = _scale({m: k for m, k in d.items() if m != (name,)}, -c)  # name == -(d - c * name) / c
        defined = {n: _substituted(v, {name: value}) for n, v in defined.items()}
        defined[name] = value
    return defined


def _substituted(p: dict, defined: dict) -> dict:
    if not defined or not any(a in defined for m in p for a in m):
        return p
    out: dict = {}
    for m, c in p.items():
        term = {(): c}
        for a in m:
            term = _mul(term, defined.get(a, {(a,): 1}))
            if term is None:
                raise ValueError("too large")
        out = _add(out, term)
    return out


def _bounds(differences: list) -> tuple[dict, dict]:
    """The lower and upper bounds (polynomials without program variables, as item tuples) of each
    program variable that a comparison bounds alone (``lane - n_cols < 0``)."""
    lows: dict = {}
    highs: dict = {}
    for op, d in differences:
        own = [m for m in d if any(_per_program(a) for a in m)]
        if len(own) != 1 or len(own[0]) != 1 or d[own[0]] not in (1, -1):
            continue
        v, c = own[0][0], d[own[0]]
        rest = {m: k for m, k in d.items() if m != own[0]}
        if c == -1:  # -v + rest op 0: v op' rest
            op = {_LT: _GT, _LE: _GE, _GT: _LT, _GE: _LE, _EQ: _EQ}[op]
            value = rest
        else:  # v + rest op 0: v op -rest
            value = _scale(rest, -1)
        if op in (_LT, _LE, _EQ):
            bound = _add(value, {(): -1}) if op == _LT else value
            highs.setdefault(v, []).append(tuple(sorted(bound.items(), key=repr)))
        if op in (_GT, _GE, _EQ):
            bound = _add(value, {(): 1}) if op == _GT else value
            lows.setdefault(v, []).append(tuple(sorted(bound.items(), key=repr)))
    return lows, highs


def _non_negative(differences: list) -> tuple[set, set]:
    """The atoms a comparison states at least 0 (``n_cols >= 0``), and those it states at least 1
    (``grid >= 1``)."""
    nonneg, positive = set(), set()
    for op, d in differences:
        atoms = [m for m in d if m]
        if len(atoms) != 1 or len(atoms[0]) != 1:
            continue
        (atom,), c, k = atoms[0], d[atoms[0]], d.get((), 0)
        if c not in (1, -1):
            continue
        # the least value ``c * atom + k op 0`` leaves the atom (None: no lower bound)
        if c == 1:
            least = -k if op in (_GE, _EQ) else -k + 1 if op == _GT else None
        else:
            least = k if op in (_LE, _EQ) else k + 1 if op == _LT else None
        if least is not None and least >= 0:
            nonneg.add(atom)
            if least >= 1:
                positive.add(atom)
    return nonneg, positive


class _Known:
    """What the facts say of the sizes: the equations applied, the atoms at least 0 and at least 1."""

    def __init__(self, defined: dict, nonneg: set, positive: set):
        self.defined, self.nonneg, self.positive = defined, nonneg, positive

    def non_negative(self, p: dict) -> bool:
        """Whether ``p`` is shown at least 0: each name at least 1 written ``1 + n`` (n at least 0),
        each quotient ``x // k`` of a non-negative ``x`` by a positive number at least 0 and (where
        it is subtracted) at most ``x``; then every coefficient is non-negative over atoms that are."""
        shifted = _substituted(p, {a: {(a,): 1, (): 1} for m in p for a in m if a in self.positive})
        out: dict = {}
        for m, c in shifted.items():
            quotient = self._quotient(m[0]) if len(m) == 1 else None
            if c < 0 and quotient is not None:
                out = _add(out, _scale(quotient, c))  # -x // k >= -x
            else:
                out = _add(out, {m: c})
        return _plainly_non_negative(out, lambda a: a in self.nonneg or self._quotient(a) is not None)

    def _quotient(self, atom) -> dict | None:
        """``x`` of a quotient atom ``x // k`` (k a positive number) whose ``x`` is shown at least 0."""
        if not (isinstance(atom, tuple) and atom[0] == _DIV):
            return None
        t = atom[1]
        x, k = _poly(t[1]), _poly(t[2])
        if x is None or k is None or set(k) != {()} or k[()] < 1:
            return None
        x = _substituted(x, self.defined)
        return x if _plainly_non_negative(x, self.nonneg.__contains__) else None


def _plainly_non_negative(p: dict, non_negative_atom) -> bool:
    """Whether every coefficient of ``p`` is non-negative and every atom it multiplies is."""
    return all(c >= 0 and all(non_negative_atom(a) for a in m) for m, c in p.items())


def _magnitude(p: dict, known: _Known) -> dict | None:
    """``|p|``: ``p`` or ``-p``, whichever is shown non-negative; None where neither is."""
    q = _scale(p, -1) if any(c < 0 for c in p.values()) else p
    return q if known.non_negative(q) else None
