"""The engine's C-API term walks agree with z3's Python wrappers."""

import z3

from kernlint.engine import terms


def _wrapper_free(term) -> dict:
    if z3.is_const(term):
        return {term.decl().name(): term} if term.decl().kind() == z3.Z3_OP_UNINTERPRETED else {}
    out = {}
    for child in term.children():
        out.update(_wrapper_free(child))
    return out


def test_free_vars_in_first_met_order():
    a, b, c = z3.Ints("a b c")
    shared = a * b + 3
    term = z3.And(c + shared > 0, shared < a, z3.If(b > 0, c, a) == 1)
    terms.clear()
    got = terms.free_vars(term)
    assert list(got) == list(_wrapper_free(term)) == ["c", "a", "b"]
    assert all(got[n].eq(v) for n, v in _wrapper_free(term).items())
    assert terms.free_vars(z3.IntVal(5) + 1) == {}


def test_components_stop_at_division():
    n, k, p = z3.Ints("n k p")
    inner = n / k
    term = p * 4 + inner - k
    ids = terms.components(term)
    assert inner.get_id() in ids and p.get_id() in ids
    assert n.get_id() not in ids  # inside the division


def test_conjuncts_conjunction_and_summands():
    x, y = z3.Ints("x y")
    parts = [x > 1, z3.And(y < x, z3.Or(x == 3, y == 2))]
    flat = terms.conjuncts(parts)
    assert sorted(f.sexpr() for f in flat) == sorted(f.sexpr() for f in [x > 1, y < x, z3.Or(x == 3, y == 2)])
    assert terms.conjunction(flat).eq(z3.And(flat))
    assert sorted(t for t, _ in terms.keyed_conjuncts(parts)) == sorted(f.sexpr() for f in flat)
    assert sorted(terms.summands(x + (y + 4) + x * y)) == ["x", "y"]


def test_divisors_lists_what_quotients_and_remainders_divide_by():
    import z3

    from kernlint.engine import terms

    a, b, c = z3.Ints("a b c")
    found = {str(d) for d in terms.divisors(a / (b + 1) + (a % c) * 2 + a)}
    assert found == {"b + 1", "c"}
    assert terms.divisors(a * b + 3) == ()
