"""The solver-free refutation of bounds queries: what it proves, what it leaves to the solver, and
that it never calls a satisfiable query refuted."""

import random

import z3

from kernlint.engine import monotone

pid, grid, lane, k = z3.Ints("pid!0 grid!0 lane!0 iter_k!1")
n, B, K, numel = z3.Ints("n BLOCK K x.numel()")


def _block(size):
    return [lane >= 0, lane < size]


def _program():
    return [grid >= 1, pid >= 0, pid < grid]


def test_a_masked_block_is_proven_through_the_launch_bindings():
    offs = pid * B + lane
    facts = [*_program(), *_block(B), B == 1024, n == numel, numel >= 1, grid == (numel + 1023) / 1024, offs < n]
    assert monotone.refutes(facts, z3.Or(0 + offs < 0, 0 + offs >= numel))


def test_the_same_block_without_its_mask_is_left_to_the_solver():
    offs = pid * B + lane
    facts = [*_program(), *_block(B), B == 1024, n == numel, numel >= 1, grid == (numel + 1023) / 1024]
    assert not monotone.refutes(facts, z3.Or(offs < 0, offs >= numel))


def test_rows_of_a_matrix_cancel_term_by_term():
    # pid0 * n * d + (pid1 * 64 + lane1) * d + lane0 against s0 * s1 * n * d
    pid1, lane1, d, s0, s1, s2, s3 = z3.Ints("pid!1 lane!1 d q.shape[0] q.shape[1] q.shape[2] q.shape[3]")
    offset = pid * n * d + (pid1 * B + lane1) * d + lane
    facts = [*_program(), pid1 >= 0, lane >= 0, lane < d, lane1 >= 0, lane1 < B, B == 64, n == s2, d == s3,
             grid == s0 * s1, s0 >= 1, s1 >= 1, s2 >= 1, s3 >= 1, pid1 * B + lane1 < n]
    assert monotone.refutes(facts, z3.Or(offset < 0, offset >= s0 * s1 * s2 * s3))
    # one row more than the mask allows is not
    assert not monotone.refutes(facts, z3.Or(offset < 0, offset + d >= s0 * s1 * s2 * s3))


def test_a_program_split_by_a_grid_the_simplifier_wrote_as_a_sum():
    # ``i_b, i_h = pid // H, pid % H`` on a grid of ``(n - 1) * H`` programs, with the equations in
    # the forms z3's simplifier gives them: ``grid + H - n*H == 0``, ``not (s2 != 1)``, ``not (x >= y)``
    H, BT, s2, lane1 = z3.Ints("H BT k.shape[2] lane!1")
    offset = (pid / H) * BT * K + lane1 * K + lane
    extent = (n - 1) * 64 * s2 * K
    facts = [grid >= 1, pid >= 0, z3.Not(pid >= grid), grid + H - n * H == 0, H >= 1, K >= 1, n >= 1,
             BT == 64, z3.Not(s2 != 1), lane >= 0, z3.Not(lane >= K), lane1 >= 0, z3.Not(lane1 >= BT)]
    assert monotone.refutes(facts, z3.Or(offset < 0, offset >= extent))
    # a grid of one program more per head reaches past the last row
    wider = [f for f in facts if not f.eq(grid + H - n * H == 0)] + [grid - n * H == 0]
    assert not monotone.refutes(wider, z3.Or(offset < 0, offset >= extent))
    assert z3.Solver().check(*wider, offset >= extent) == z3.sat


def test_a_program_split_by_a_product_of_sizes():
    # b, h = pid // (H * S), (pid // S) % H over a grid of B * H * S programs; each program walks S
    # rows of D: the divisor H * S is at least 1 because each factor is
    b, h, s, d, it = z3.Ints("B H S D iter_i!1")
    offset = (pid / (h * s)) * h * s * d + ((pid / s) % h) * s * d + it * d + lane
    facts = [*_program(), grid == b * h * s, b >= 1, h >= 1, s >= 1, d >= 1, lane >= 0, lane < d,
             it >= 0, it < s]
    assert monotone.refutes(facts, z3.Or(offset < 0, offset >= b * h * s * d))
    assert not monotone.refutes(facts, z3.Or(offset < 0, offset + d >= b * h * s * d))


def test_a_division_of_a_remainder():
    # b, t, c = pid // (T * C), (pid % (T * C)) // C, pid % C over B * T * C programs, addressed
    # through the strides of a contiguous [B, T, C, D]: the middle index needs the remainder's bound
    b, t, c, d = z3.Ints("B T C D")
    sb, st, sc = z3.Ints("stride_b stride_t stride_c")
    offset = (pid / (t * c)) * sb + ((pid % (t * c)) / c) * st + (pid % c) * sc + lane
    facts = [*_program(), grid == b * t * c, b >= 1, t >= 1, c >= 1, d >= 1, lane >= 0, lane < d,
             sb == t * c * d, st == c * d, sc == d]
    assert monotone.refutes(facts, z3.Or(offset < 0, offset >= b * t * c * d))
    assert not monotone.refutes(facts, z3.Or(offset < 0, offset + sc >= b * t * c * d))


def test_divisions_written_two_ways_and_divisors_stated_non_zero():
    # the grid counts blocks as (V + BV - 1) // BV, the kernel splits its program id by
    # (V - 1 + BV) // BV: one quantity. Neither count is known to be at least 1 except through the
    # launch's ``!= 0`` facts (the count of blocks is not negative, and not 0).
    v, bv, t, bt, h = z3.Ints("V BV T BT H")
    in_grid, in_kernel = (v + bv - 1) / bv, (v - 1 + bv) / bv
    rows = (t + bt - 1) / bt
    per_head = pid / (in_kernel * rows)
    offset = per_head * t * 64 + ((pid / in_kernel) % rows) * bt * 64 + lane
    facts = [*_program(), grid == h * in_grid * rows, h >= 1, v >= 1, t >= 1, bv >= 1, bt >= 1,
             in_grid != 0, z3.Not(rows == 0), lane >= 0, lane < 64,
             ((pid / in_kernel) % rows) * bt < t - bt + 1]
    assert monotone.refutes(facts, z3.Or(offset < 0, offset >= h * t * 64))
    assert not monotone.refutes(facts, z3.Or(offset < 0, offset + 64 >= h * t * 64))


def test_a_loop_whose_mask_bounds_what_is_left():
    offset = k * B + lane
    facts = [*_block(B), B >= 1, K >= 1, z3.And(k >= 0, k < (K + B - 1) / B), lane < K - k * B]
    assert monotone.refutes(facts, offset >= K)


def test_clamps_and_remainders():
    clamped = z3.If(pid * B + lane <= n - 1, pid * B + lane, n - 1)
    facts = [*_program(), *_block(B), B >= 1, n >= 1]
    assert monotone.refutes(facts, z3.Or(clamped >= n))
    assert monotone.refutes(facts, z3.Or((pid * B + lane) % n < 0, (pid * B + lane) % n >= n))
    assert not monotone.refutes([*_program(), *_block(B)], (pid * B + lane) % n >= n)  # n may be 0


def _random_product(rng, pool, most=2):
    out = z3.IntVal(rng.randint(1, 3))
    for v in rng.sample(pool, rng.randint(1, most)):
        out = out * v
    return out


def _refuted_only_where_unsatisfiable(seed: int, question) -> None:
    """300 random questions (``question(rng)`` gives facts and a goal): whatever the certificates
    refute, z3 finds no model for; at least 10 are refuted (the property is exercised)."""
    rng = random.Random(seed)
    refuted = 0
    for _ in range(300):
        facts, goal = question(rng)
        if monotone.refutes(facts, goal):
            refuted += 1
            solver = z3.Solver()
            solver.add(*facts, goal)
            assert solver.check() != z3.sat, (facts, goal, solver.model())
    assert refuted >= 10


def test_no_refutation_of_a_satisfiable_query():
    """Random sums of products of positions and sizes against random facts."""
    positions = [pid, lane, k, z3.Int("pid!1")]
    sizes = [n, B, K, numel]

    def question(rng):
        offset = z3.Sum([_random_product(rng, positions + sizes) for _ in range(rng.randint(1, 3))]) \
            + rng.randint(-2, 2)
        extent = _random_product(rng, sizes, 3) + rng.randint(-1, 1)
        facts = [v >= 0 for v in positions] + [v >= 1 for v in sizes]
        for _ in range(rng.randint(1, 4)):
            bounded = z3.Sum([_random_product(rng, positions + sizes, 1) for _ in range(rng.randint(1, 2))])
            facts.append(bounded < _random_product(rng, sizes, 2) + rng.randint(-1, 1))
        return facts, z3.Or(offset < 0, offset >= extent)

    _refuted_only_where_unsatisfiable(7, question)


def test_a_program_id_split_by_a_head_count_rounds_down():
    # i_b, i_h = pid // H, pid % H over a grid of B * H programs: i_b <= B - 1 needs the rounding
    b, h = z3.Ints("B H")
    offset = (pid / h) * 64 * h + pid % h + lane * h
    facts = [*_program(), *_block(64), grid == b * h, b >= 1, h >= 1, h != 0]
    assert monotone.refutes(facts, z3.Or(offset < 0, offset >= b * 64 * h))
    assert not monotone.refutes(facts, z3.Or(offset < 0, offset + 1 >= b * 64 * h))


def test_no_refutation_of_a_satisfiable_query_through_sums_and_negations():
    """As above, with facts in the simplifier's forms: negated comparisons, ``not (a != b)`` and
    equations that define a name as a sum (``g + x - y*z == 0``), counts stated non-zero, and
    program ids divided."""
    positions = [pid, lane, k]
    sizes = [n, B, K, numel]
    g = z3.Int("grid!1")

    def question(rng):
        more, less = _random_product(rng, sizes, 2), _random_product(rng, sizes, 1) + rng.randint(-1, 1)
        facts = [v >= 0 for v in positions] + [v >= 1 for v in sizes]
        facts.append(g + less - more == 0 if rng.random() < 0.5 else g == more - less)
        facts.append(z3.Not(pid >= g))
        if rng.random() < 0.5:
            facts.append(z3.Not(B != rng.choice([16, 64])))
        if rng.random() < 0.5:  # a count stated non-zero, written as the kernel writes it
            facts.append((n + rng.choice(sizes) - 1) / rng.choice(sizes) - rng.randint(0, 2) != 0)
        for _ in range(rng.randint(1, 3)):
            bounded = z3.Sum([_random_product(rng, positions + sizes, 1) for _ in range(rng.randint(1, 2))])
            facts.append(z3.Not(bounded >= _random_product(rng, sizes, 2) + rng.randint(-1, 1)))
        offset = z3.Sum([_random_product(rng, [*positions, pid / rng.choice(sizes), *sizes])
                         for _ in range(rng.randint(1, 3))])
        extent = _random_product(rng, sizes, 3) + rng.randint(-1, 1)
        return facts, z3.Or(offset < 0, offset >= extent)

    _refuted_only_where_unsatisfiable(11, question)
