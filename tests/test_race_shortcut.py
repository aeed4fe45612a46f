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
