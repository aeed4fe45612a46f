"""KL103's solver-free proof of "no two programs meet" answers only what the solver answers: on
every fixture, the race findings are the same with the proof and with every question sent to z3."""

from pathlib import Path

import pytest

from kernlint.engine import races
from tests.helpers import assert_shortcut_changes_no_race, race_findings

ROOT = Path(__file__).resolve().parents[1]


def test_the_proof_changes_no_race_finding(monkeypatch):
    assert_shortcut_changes_no_race(monkeypatch, races, "_disjoint")


@pytest.mark.parametrize("name", ["sum_race_bad.py", "overlapping_blocks_race_bad.py", "splitk_race_bad.py",
                                  "chunk_digits_race_bad.py", "flat_grid_race_bad.py", "shape_stride_race_bad.py",
                                  "lock_counter_race_bad.py"])
def test_a_real_race_is_not_proven_away(name):
    assert race_findings(ROOT / "fixtures" / "triton" / name)


def _rows(*bounded):
    """Facts ``0 <= name <= high`` for each (name, high), for both programs."""
    rows = []
    for name, high in bounded:
        for copy in ("", races.SECOND):
            rows += [({name + copy: -1}, 0), ({name + copy: 1}, high)]
    return rows


def test_the_proof_reads_a_program_id_split_into_digits():
    rows = _rows(("pid!0", 1 << 20), ("lane!0", 9))
    # (pid // 16) * 1000 + (pid % 16) * 10 + lane: every digit places the element
    digits = {races._digit(races._DIV, "pid!0", 16): 1000, races._digit(races._MOD, "pid!0", 16): 10, "lane!0": 1}
    assert races._apart(digits, ["pid!0"], rows)
    # the remainder left out: programs 0 and 1 meet
    assert not races._apart({races._digit(races._DIV, "pid!0", 16): 1000, "lane!0": 1}, ["pid!0"], rows)
    # (pid % 64) // 16 is the digit (pid // 16) % 4
    assert races._digit(races._DIV, races._digit(races._MOD, "pid!0", 64), 16) == ("digit", "pid!0", 16, 4)


def test_the_proof_reads_a_program_index_flattened_over_two_axes():
    rows = _rows(("pid!0", 1 << 20), ("pid!1", 65534), ("lane!0", 99))
    rows += [({"pid!1" + copy: 1, "grid!1": -1}, -1) for copy in ("", races.SECOND)]  # pid_1 < num_programs(1)
    # (pid_0 * num_programs(1) + pid_1) * 100 + lane
    (scaled, c), = races._scaled({"pid!0": 1}, {"grid!1": 1}).items()
    assert races._apart({scaled: 100 * c, "pid!1": 100, "lane!0": 1}, ["pid!0", "pid!1"], rows)
    # pid_0 + pid_1 (the head id not scaled): programs (1, 0) and (0, 1) meet
    assert not races._apart({"pid!0": 100, "pid!1": 100, "lane!0": 1}, ["pid!0", "pid!1"], rows)


def test_a_layout_asked_with_free_sizes_keeps_them_below_the_strides(monkeypatch):
    """A heuristic flag no launch fixes (this fixture's launch cannot run) contradicts the stand-in
    size of the count it is computed from, so the layout is asked again with that size free: free,
    but not past what a launch allows a size, or it outgrows the row stride and the rows of a layout
    no tensor has overlap."""
    monkeypatch.setattr(races, "_disjoint", lambda *args: False)  # every question to the solver
    assert race_findings(ROOT / "fixtures" / "triton" / "heuristic_reads_autotuned_bad.py") == []


def test_a_size_the_facts_hold_within_a_few_values_is_asked_at_each():
    """A size a layout leaves free because a block is computed from it (``BV = next_power_of_2(V)``)
    but that the facts hold within a few values makes the address linear at each of them."""
    import z3

    from kernlint.engine import monotone

    v, shape, pid, lane = z3.Int("V"), z3.Int("v.shape[-1]"), z3.Int("pid!0"), z3.Int("lane!0")
    facts = [v == shape, shape >= 1, shape <= z3.Int("next_power_of_2(V)")]
    atoms, _ = races._atoms([races._tree(monotone.read(f)) for f in facts])
    cases = races._with_each_value(atoms, {"next_power_of_2(V)": 8}, {"V"}, [{}])
    assert [c["V"] for c in cases] == list(range(1, 9))
    # a size bounded only by what a launch allows stays free: the solver's question
    assert races._with_each_value(atoms, {"next_power_of_2(V)": 1 << 31}, {"V"}, [{}]) == [{}]
    # and the layout's question, one row of V per program masked by lane < V, is proven at each value
    second = {n: z3.Int(n + races.SECOND) for n in ("pid!0", "lane!0")}
    both = facts + [f for p, l in ((pid, lane), (second["pid!0"], second["lane!0"]))
                    for f in (p >= 0, p < 1000, l >= 0, l < 8, l < v)]
    trees = [races._tree(monotone.read(f)) for f in both]
    assert races._cases_apart(trees, races._tree(monotone.read(pid * v + lane)), ["pid!0"], {"next_power_of_2(V)": 8})
    # twin: rows one element shorter than the mask lets a program write
    assert not races._cases_apart(trees, races._tree(monotone.read(pid * (v - 1) + lane)), ["pid!0"],
                                  {"next_power_of_2(V)": 8})


def test_whether_the_facts_alone_hold_is_asked_in_the_question_s_own_context(monkeypatch):
    """A race layout's unsat answer is followed by "do the facts alone have a model?": asked in the
    context already made, and kept as the answer the question of the facts alone gets."""
    import z3

    from kernlint.engine import query

    made = []
    real = query._context
    monkeypatch.setattr(query, "_context", lambda: made.append(1) or real())
    x, y = z3.Int("x"), z3.Int("y")
    solving = query.Solving()
    facts = [x >= 0, y >= 0, x + y <= 10, x * y >= 1]  # no certificate: the solver's questions
    result, _ = solving.solve(facts, x + y > 10, rlimit=races.RACE_RLIMIT, certify=False, alone_rlimit=races.RACE_RLIMIT)
    assert result == z3.unsat and len(made) == 1
    assert solving.solve(facts, z3.BoolVal(True), rlimit=races.RACE_RLIMIT, tighten=False)[0] == z3.sat
    assert len(made) == 1  # answered already
    # impossible facts: the same answer as asked on their own
    bad = [x >= 0, y >= 0, x + y <= 10, x * y >= 1, x > 10]
    fresh = query.Solving().solve(bad, z3.BoolVal(True), rlimit=races.RACE_RLIMIT, tighten=False)[0]
    solving.solve(bad, y > 100, rlimit=races.RACE_RLIMIT, certify=False, alone_rlimit=races.RACE_RLIMIT)
    assert solving.solve(bad, z3.BoolVal(True), rlimit=races.RACE_RLIMIT, tighten=False)[0] == fresh == z3.unsat


def test_two_branches_of_one_compile_time_test_never_race():
    """Accesses under opposite tests of one value every program shares (``if MODE == 0`` and its
    ``else``) never run in one launch: no question is asked of them."""
    import z3

    mode, pid = z3.Int("MODE"), z3.Int("pid!0")
    assert races._opposed([mode == 0], [z3.Not(mode == 0)])
    assert races._opposed([z3.Not(mode == 0), pid >= 0], [mode == 0])
    assert not races._opposed([mode == 0], [mode == 1])  # not opposite as written: the solver's question
    # a program's own test: another program may take the other branch
    assert not races._opposed([pid == 0], [z3.Not(pid == 0)])


def test_skipping_opposite_branches_changes_no_race_finding(monkeypatch):
    assert_shortcut_changes_no_race(monkeypatch, races, "_opposed")
