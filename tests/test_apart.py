"""KL103's proof that two programs meet nowhere at any size (``kernlint.engine.apart``): each form
it reads has a case it proves and a twin one step off that it leaves to the solver; a randomized
check against enumeration says it never proves what has a counter-example; and on every fixture the
race findings are the same with and without it."""

import itertools
import random

import pytest
import z3

from kernlint.engine import apart, monotone, races
from tests.helpers import assert_shortcut_changes_no_race

Int = z3.Int


def _second(term):
    names = {str(v) for v in _vars(term)}
    pairs = [(Int(n), Int(n + apart.SECOND)) for n in sorted(names) if n.startswith(("pid!", "lane!", "iter_"))]
    return z3.substitute(term, *pairs) if pairs else term


def _vars(term):
    out, todo = set(), [term]
    while todo:
        t = todo.pop()
        if z3.is_const(t) and not z3.is_int_value(t) and not z3.is_true(t) and not z3.is_false(t):
            out.add(t)
        todo.extend(t.children())
    return out


def _shown(facts, address, programs, positive=()):
    """``facts`` of the first program (the second's are made by renaming), as the race question has them."""
    both = list(facts) + [_second(f) for f in facts if any(str(v).startswith(("pid!", "lane!", "iter_"))
                                                             for v in _vars(f))]
    atoms, _ = races._atoms([races._tree(monotone.read(f)) for f in both])
    return apart.at_every_size(atoms, races._tree(monotone.read(address)), programs, frozenset(positive))


pid, lane, lane1, n, s, h, d = (Int(x) for x in ("pid!0", "lane!0", "lane!1", "n", "s", "h", "d"))


def test_a_row_per_program_masked_by_the_row_length_is_apart():
    facts = [pid >= 0, lane >= 0, lane < n, n >= 0, s >= 0, s == n]
    assert _shown(facts, pid * s + lane, ["pid!0"])
    # twin: a stride one below the row: the last lane of one row is the first of the next
    assert not _shown([pid >= 0, lane >= 0, lane < n, n >= 0, s >= 0, s == n - 1], pid * s + lane, ["pid!0"])


def test_a_stride_made_of_two_sizes_covers_two_lanes():
    # (pid * h * d) + lane1 * d + lane0, lane1 < h and lane0 < d: a [h, d] tile per program
    facts = [pid >= 0, lane >= 0, lane1 >= 0, lane < d, lane1 < h, h >= 0, d >= 0, s == h * d]
    assert _shown(facts, pid * s + lane1 * d + lane, ["pid!0"])
    # twin: the tile is one row taller than the stride (lane1 <= h)
    facts = [pid >= 0, lane >= 0, lane1 >= 0, lane < d, lane1 <= h, h >= 0, d >= 0, s == h * d]
    assert not _shown(facts, pid * s + lane1 * d + lane, ["pid!0"])


def test_a_stride_the_layouts_give_is_at_least_one():
    # stride * (64 * pid + lane), lane < 64: apart for every stride of at least 1, not at 0
    facts = [pid >= 0, lane >= 0, lane < 64, s >= 0]
    assert _shown(facts, s * (64 * pid + lane), ["pid!0"], positive=["s"])
    assert not _shown(facts, s * (64 * pid + lane), ["pid!0"])


def test_a_half_row_reads_its_quotient_as_at_most_the_row():
    # rotary halves: lane < d // 2, rows of d: (d // 2) <= d
    facts = [pid >= 0, lane >= 0, lane < d / 2, d >= 0]
    assert _shown(facts, pid * d + lane, ["pid!0"])
    # twin: the quotient of a size that may be negative says nothing
    assert not _shown([pid >= 0, lane >= 0, lane < d / 2], pid * d + lane, ["pid!0"])


def test_two_program_axes_are_peeled_in_turn():
    pid1 = Int("pid!1")
    facts = [pid >= 0, pid1 >= 0, pid1 < h, lane >= 0, lane < d, h >= 1, d >= 1, s == h * d]
    assert _shown(facts, pid * s + pid1 * d + lane, ["pid!0", "pid!1"])
    # twin: the second axis runs one program past the rows the stride leaves it
    facts = [pid >= 0, pid1 >= 0, pid1 <= h, lane >= 0, lane < d, h >= 1, d >= 1, s == h * d]
    assert not _shown(facts, pid * s + pid1 * d + lane, ["pid!0", "pid!1"])


def test_a_program_id_the_address_leaves_out_is_not_apart():
    assert not _shown([pid >= 0, lane >= 0, lane < n, s == n, n >= 0], pid * s + lane, ["pid!0", "pid!1"])


def test_a_block_and_its_lanes_masked_together_are_one_digit():
    # pid1 * T * V + (pid0 * BT + lane1) * V + lane0, rows masked by pid0 * BT + lane1 < T: the
    # program's block and its lanes are one digit of the address, however many programs run
    pid1, t, v, bt = Int("pid!1"), Int("T"), Int("V"), Int("BT")
    facts = [pid >= 0, pid1 >= 0, lane >= 0, lane1 >= 0, lane1 < bt, lane < v, t >= 0, v >= 0, bt >= 1]
    address = pid1 * t * v + (pid * bt + lane1) * v + lane
    assert _shown(facts + [pid * bt + lane1 < t], address, ["pid!0", "pid!1"])
    # twin: the mask lets the last row of one head be the first of the next
    assert not _shown(facts + [pid * bt + lane1 <= t], address, ["pid!0", "pid!1"])
    # twin: only one program's rows are masked (the sum's bound must hold for both)
    assert not _shown(facts, address, ["pid!0", "pid!1"])


def test_a_program_id_read_through_its_quotient_and_remainder_by_a_size():
    # (pid // h) * (h * d) + (pid % h) * d + lane, lane < d: program (b, i) of b * h
    b = Int("b")
    facts = [pid >= 0, pid < b * h, lane >= 0, lane < d, h >= 1, d >= 0, b >= 0]
    assert _shown(facts, (pid / h) * (h * d) + (pid % h) * d + lane, ["pid!0"])
    # twin: the remainder alone: programs i and i + h meet
    assert not _shown(facts, (pid % h) * d + lane, ["pid!0"])
    # twin: a divisor that may be 0 says nothing
    assert not _shown([pid >= 0, pid < b * h, lane >= 0, lane < d, h >= 0, d >= 0, b >= 0],
                      (pid / h) * (h * d) + (pid % h) * d + lane, ["pid!0"])


@pytest.mark.parametrize("seed", range(3))
def test_what_it_proves_of_digits_and_masked_sums_has_no_counter_example(seed):
    """Random addresses over a program id's quotient and remainder by a size, a lane and a mask on
    the sum of the remainder and the lane; each one the proof calls apart is enumerated."""
    rng = random.Random(seed)
    proven = 0
    for _ in range(120):
        a, b, c = (rng.randint(-2, 12) for _ in range(3))
        hv, grid, hi0, bound, k = rng.randint(1, 4), rng.randint(1, 9), rng.randint(1, 5), rng.randint(1, 12), rng.randint(1, 4)
        facts = [pid >= 0, pid < grid, lane >= 0, lane < hi0, h == hv, (pid % h) * k + lane < bound]
        address = a * (pid / h) + b * (pid % h) + c * lane
        if not _shown(facts, address, ["pid!0"]):
            continue
        proven += 1
        seen = {}
        for p, l0 in itertools.product(range(grid), range(hi0)):
            if (p % hv) * k + l0 >= bound:
                continue
            x = a * (p // hv) + b * (p % hv) + c * l0
            assert seen.setdefault(x, p) == p, (a, b, c, hv, grid, hi0, bound, k)
    assert proven, "nothing was proven: the check checks nothing"


@pytest.mark.parametrize("seed", range(3))
def test_what_it_proves_has_no_counter_example(seed):
    """Random addresses over one program id and two lanes with small coefficients and bounds; each
    one the proof calls apart is enumerated: no two programs meet."""
    rng = random.Random(seed)
    proven = 0
    for _ in range(150):
        a, b, c = (rng.randint(-3, 12) for _ in range(3))
        hi0, hi1, grid = rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 5)
        facts = [pid >= 0, pid < grid, lane >= 0, lane < hi0, lane1 >= 0, lane1 < hi1]
        address = a * pid + b * lane1 + c * lane
        if not _shown(facts, address, ["pid!0"]):
            continue
        proven += 1
        seen = {}
        for p, l1, l0 in itertools.product(range(grid), range(hi1), range(hi0)):
            x = a * p + b * l1 + c * l0
            assert seen.setdefault(x, p) == p, (a, b, c, hi0, hi1, grid)
    assert proven, "nothing was proven: the check checks nothing"


def test_the_proof_changes_no_race_finding(monkeypatch):
    assert_shortcut_changes_no_race(monkeypatch, races, "_apart_at_every_size")


def _agreeing(facts, address, positive=()):
    both = list(facts) + [_second(f) for f in facts if any(str(v).startswith(("pid!", "lane!", "iter_"))
                                                             for v in _vars(f))]
    atoms, _ = races._atoms([races._tree(monotone.read(f)) for f in both])
    return apart.agreeing(atoms, races._tree(monotone.read(address)), frozenset(positive))


def test_what_two_equal_addresses_hold_alike():
    # (bh + B * (kv // nv)) * t + c * bt + lane, lane < bt, c * bt + lane < t: the row, the chunk, the
    # lane and kv's quotient by nv agree; kv's remainder (a split the address leaves out) does not
    bh, kv, c, t, bt, nv, B = (Int(x) for x in ("pid!2", "pid!0", "pid!1", "t", "bt", "nv", "B"))
    facts = [kv >= 0, c >= 0, bh >= 0, bh < B, lane >= 0, lane < bt, c * bt + lane < t, t >= 1, bt >= 1,
             nv >= 1, B >= 1]
    alike = _agreeing(facts, (bh + B * (kv / nv)) * t + c * bt + lane)
    digit = apart.digit_name(apart._DIV, "pid!0", races._tree(monotone.read(nv)))
    assert {"pid!2", "pid!1", "lane!0", digit} <= alike
    assert "pid!0" not in alike
    # twin: the chunk's lanes not bounded by the row length: a lane can reach the next row
    loose = _agreeing([f for f in facts if not f.eq(c * bt + lane < t)], (bh + B * (kv / nv)) * t + c * bt + lane)
    assert "pid!2" not in loose
    # the remainder too: then the id itself agrees
    both = _agreeing(facts + [kv < nv * B], (bh + B * (kv / nv)) * t * nv + (kv % nv) * t + c * bt + lane)
    assert "pid!0" in both


@pytest.mark.parametrize("seed", range(3))
def test_what_it_holds_alike_has_no_counter_example(seed):
    """Random addresses over a program id's quotient and remainder by a size, a second id, a lane and
    a mask on a sum; for each variable (or digit) it says two equal addresses hold alike, every two
    enumerated points with one address agree on it."""
    rng = random.Random(seed)
    pid1 = Int("pid!1")
    held = 0
    for _ in range(120):
        a, b, c, e = (rng.randint(-2, 12) for _ in range(4))
        hv, grid, grid1, hi0, bound, k = (rng.randint(1, 4), rng.randint(1, 8), rng.randint(1, 3), rng.randint(1, 5),
                                          rng.randint(1, 12), rng.randint(1, 4))
        facts = [pid >= 0, pid < grid, pid1 >= 0, pid1 < grid1, lane >= 0, lane < hi0, h == hv,
                 pid1 * k + lane < bound]
        address = a * (pid / h) + b * (pid % h) + c * lane + e * pid1
        alike = _agreeing(facts, address)
        quotient = apart.digit_name(apart._DIV, "pid!0", races._tree(monotone.read(h)))
        remainder = apart.digit_name(apart._MOD, "pid!0", races._tree(monotone.read(h)))
        value = {"pid!0": lambda p, q, l0: p, "pid!1": lambda p, q, l0: q, "lane!0": lambda p, q, l0: l0,
                 quotient: lambda p, q, l0: p // hv, remainder: lambda p, q, l0: p % hv}
        checked = [v for v in alike if v in value]
        if not checked:
            continue
        held += 1
        seen: dict = {}
        for p, q, l0 in itertools.product(range(grid), range(grid1), range(hi0)):
            if q * k + l0 >= bound:
                continue
            x = a * (p // hv) + b * (p % hv) + c * l0 + e * q
            point = tuple(value[v](p, q, l0) for v in checked)
            assert seen.setdefault(x, point) == point, (a, b, c, e, hv, grid, grid1, hi0, bound, k, checked)
    assert held, "nothing was held alike: the check checks nothing"
