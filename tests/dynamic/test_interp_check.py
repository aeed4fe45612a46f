"""The interpreter checker, run for real (TRITON_INTERPRET=1, in a subprocess) on the fixtures."""

from __future__ import annotations

import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

from kernlint.dynamic.interp_check import confirm_findings, judge, run_interpreted
from kernlint.model import Finding, Level, Phase, Span, Verdict

from .fixture_marks import RULE_OF_KIND, access_lines, expected, fixture_files

FILES = fixture_files()


@pytest.fixture(scope="module")
def results():
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(FILES, pool.map(run_interpreted, FILES)))


def test_fixtures_present():
    planted = [p for p in FILES if expected(p)]
    clean = [p for p in FILES if p.stem.endswith("_good")]
    assert len(planted) >= 5 and len(clean) >= 5


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_records_match_markers(results, path):
    result = results[path]
    assert result.failure is None, result.output_tail
    assert result.launches and all(launch["completed"] for launch in result.launches), result.output_tail
    # each record where it may be reported: its line, and for a launch's unwritten outputs the launch's
    seen = [_places(r) for r in result.records if not r.kind.startswith("atomic")]  # atomics: below
    assert all(r.path == str(path) for r in result.records)
    marks = expected(path)
    assert all(any(m in places for places in seen) for m in marks), (seen, marks, result.output_tail)
    assert all(places & marks for places in seen), (seen, marks, result.output_tail)


def _places(record) -> set[tuple[str, int]]:
    lines = {record.line}
    site_line = record.launch_site.rpartition(":")[2]
    if site_line.isdigit():
        lines.add(int(site_line))
    return {(record.kind, line) for line in lines}


def _finding(path, line, rule, kernel=None):
    return Finding(rule=rule, path=str(path), span=Span.point(line, 5), message="static", level=Level.ERROR,
                   kernel=kernel)


def _static_kinds(path):
    return {(kind, line) for kind, line in expected(path) if kind in RULE_OF_KIND}


@pytest.mark.parametrize("path", [p for p in FILES if _static_kinds(p)], ids=lambda p: p.stem)
def test_planted_findings_confirmed(results, path):
    findings = [_finding(path, line, RULE_OF_KIND[kind]) for kind, line in sorted(_static_kinds(path))]
    judged = confirm_findings(findings, results[path])
    mine = judged[: len(findings)]
    assert all(f.verdict == Verdict.CONFIRMED for f in mine)
    for f in mine:
        if f.rule in ("KL101", "KL102"):
            assert f.measurements["oob_accesses"] > 0
            assert f.measurements["max_bytes_past_end"] > 0
            assert f.measurements["tensor"].endswith("_ptr")
        else:
            assert f.measurements["racing_programs"] >= 2
    # every record is explained by some finding: nothing new
    assert [f for f in judged[len(findings):] if f.phase == Phase.DYNAMIC] == []


@pytest.mark.parametrize("path", [p for p in FILES if p.stem.endswith("_good")], ids=lambda p: p.stem)
def test_clean_twins_refuted(results, path):
    lines = access_lines(path)
    assert lines
    findings = [_finding(path, ln, "KL101" if op == "load" else "KL102") for ln, op in lines.items()]
    findings += [_finding(path, ln, "KL103") for ln, op in lines.items() if op == "store"]
    judged = confirm_findings(findings, results[path])
    assert len(judged) == len(findings)
    assert {f.verdict for f in judged} == {Verdict.REFUTED}


def test_unpredicted_violations_become_dynamic_findings(results):
    path = next(p for p in FILES if p.stem == "oob_le_mask_bad")
    new = confirm_findings([], results[path])
    assert {(f.rule, f.span.line) for f in new} == {("KL401", ln) for _, ln in expected(path)}
    for f in new:
        assert f.phase == Phase.DYNAMIC and f.verdict == Verdict.CONFIRMED
        assert f.measurements["max_bytes_past_end"] == 4  # exactly one float past the end
        assert "past the end" in f.message
    path = next(p for p in FILES if p.stem == "race_global_store_bad")
    (race,) = confirm_findings([], results[path])
    assert race.rule == "KL402" and race.measurements["racing_programs"] == 8


def test_line_not_executed_or_kernel_not_run_is_inconclusive(results, tmp_path):
    path = next(p for p in FILES if p.stem == "oob_no_mask_bad")
    other = tmp_path / "elsewhere.py"
    findings = [
        _finding(path, 3, "KL101", kernel="add_kernel"),  # the kernel ran, this line holds no access
        _finding(other, 10, "KL102", kernel="never_launched"),
    ]
    judged, new, _ = judge(findings, results[path])
    assert [f.verdict for f in judged] == [Verdict.INCONCLUSIVE, Verdict.INCONCLUSIVE]
    assert "never executed" in judged[0].evidence["dynamic"][-1]["note"]
    assert "never ran" in judged[1].evidence["dynamic"][-1]["note"]


def test_other_categories_pass_through(results):
    path = next(p for p in FILES if p.stem == "oob_no_mask_bad")
    f = _finding(path, 14, "KL501")
    judged, _, _ = judge([f], results[path])
    assert judged[0].verdict == Verdict.SUSPECTED


def test_failed_run_is_inconclusive(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("def run():\n    raise SystemExit(3)\n")
    result = run_interpreted(script)
    assert result.failure and "exited with 3" in result.failure
    (f,) = confirm_findings([_finding(script, 2, "KL101")], result)
    assert f.verdict == Verdict.INCONCLUSIVE


KERNEL_BEFORE_START = '''
import torch, triton, triton.language as tl

@triton.jit
def shifted(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs - 4, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)

def run():
    x = torch.arange(16, dtype=torch.float32)
    out = torch.empty(16)
    shifted[(1,)](x, out, 16, BLOCK=16)
'''


def test_reads_before_the_start_measured(tmp_path):
    script = tmp_path / "before.py"
    script.write_text(textwrap.dedent(KERNEL_BEFORE_START))
    result = run_interpreted(script)
    (rec,) = result.records
    assert (rec.kind, rec.line, rec.tensor) == ("oob-read", 7, "x_ptr")
    assert rec.lanes == 4 and rec.bytes_before_start == 16 and rec.bytes_past_end == 0


def test_command_and_module_targets(results):
    path = next(p for p in FILES if p.stem == "race_load_modify_store_bad")
    by_command = run_interpreted([sys.executable, str(path)])
    assert {(r.kind, r.line) for r in by_command.records} == expected(path)
    by_module = run_interpreted(f"{path.stem}:run", cwd=str(path.parent))
    assert {(r.kind, r.line) for r in by_module.records} == expected(path)


def test_a_launch_the_interpreter_could_not_finish_is_inconclusive(tmp_path):
    from kernlint.dynamic.interp_check import InterpResult

    path = tmp_path / "k.py"
    launch = {"kernel": "k", "kernel_path": str(path), "completed": False, "error": "TypeError('boom')", "sites": []}
    result = InterpResult(["python"], 1, 0.1, launches=[launch])
    findings, new, notices = judge([_finding(path, 3, "KL101", kernel="k")], result)
    assert findings[0].verdict == Verdict.INCONCLUSIVE
    assert "interpreter failed" in findings[0].evidence["dynamic"][-1]["note"]
    assert new == [] and any("boom" in n for n in notices)


def test_an_atomic_only_its_own_program_updates_confirms_kl110():
    root = FILES[0].parents[1]
    bad = root / "triton" / "needless_atomic_bad.py"
    result = run_interpreted(str(bad))
    (atomic,) = [r for r in result.records if r.kind.startswith("atomic")]
    assert (atomic.kind, atomic.line, atomic.shared_bytes) == ("atomic-exclusive", 12, 0)
    assert atomic.program_count == 4  # cdiv(1000, 256) programs, each updating its own 256 floats
    (judged,) = confirm_findings([_finding(bad, 12, "KL110", kernel="add_into_kernel")], result)
    assert judged.verdict is Verdict.CONFIRMED and judged.measurements["shared_bytes"] == 0


def test_an_atomic_programs_share_refutes_kl110(results):
    # race_global_store_good.py: every program adds its partial sum into one float
    path = next(p for p in FILES if p.stem == "race_global_store_good")
    (atomic,) = [r for r in results[path].records if r.kind.startswith("atomic")]
    assert atomic.kind == "atomic-shared" and atomic.shared_bytes == 4 and atomic.program_count > 1
    judged = confirm_findings([_finding(path, atomic.line, "KL110")], results[path])
    assert judged[0].verdict is Verdict.REFUTED
    assert len(judged) == 1  # a needed atomic is no new finding


def test_lock_traffic_is_not_judged_as_an_atomic_update(results):
    path = next(p for p in FILES if p.stem == "race_spinlock_good")
    kinds = {(r.kind, r.op) for r in results[path].records}
    assert ("atomic-exclusive", "atomic_cas") not in kinds and all(not k.endswith("exclusive") for k, _ in kinds)


@pytest.mark.parametrize("path", [p for p in FILES if any(k == "unwritten-output" for k, _ in expected(p))
                                  and "autotune" not in p.read_text()], ids=lambda p: p.stem)
def test_unwritten_outputs_become_kl403(results, path):
    """With no static finding to confirm, a launch's unwritten outputs are a KL403 at the store that
    wrote most of the tensor."""
    new = confirm_findings([], results[path])
    records = [r for r in results[path].records if r.kind == "unwritten-output"]
    assert {(f.rule, f.span.line) for f in new} == {("KL403", r.line) for r in records}
    (f,) = new
    assert 0 < f.measurements["unwritten_elements"] < f.measurements["output_elements"]
    assert f.measurements["tensor"] == "out_ptr" and "never written" in f.message


def test_unwritten_outputs_confirm_the_grid_finding_at_their_launch(results):
    """KL108 (a grid that stops short of the mask's last element) is at the launch: the launch's
    unwritten outputs confirm it, and are not reported again as a KL403."""
    path = next(p for p in FILES if p.stem == "unwritten_floor_grid_bad")
    (record,) = [r for r in results[path].records if r.kind == "unwritten-output"]
    launch_line = int(record.launch_site.rpartition(":")[2])
    assert launch_line != record.line
    grid = _finding(path, launch_line, "KL108")
    judged = confirm_findings([grid, _finding(path, record.line + 1, "KL108")], results[path])
    assert [(f.rule, f.span.line, f.verdict) for f in judged] == [
        ("KL108", launch_line, Verdict.CONFIRMED), ("KL108", record.line + 1, Verdict.INCONCLUSIVE)]


def test_each_config_of_an_autotuned_launch_is_judged_for_what_it_writes(results):
    """The config that the tuner keeps (the first: the interpreter times them alike) writes every
    element; the run of the 128-element config leaves the tail unwritten. That run is the record, at
    the launch, naming its config; it confirms KL108 there, and alone is a notice, not a KL403 (a
    workspace sized for the largest config is written in part by the others)."""
    path = next(p for p in FILES if p.stem == "unwritten_config_bad")
    (record,) = [r for r in results[path].records if r.kind == "unwritten-output"]
    assert (record.config, record.elements, record.total_elements, record.first_element) == ("BLOCK=128", 1000 % 128, 1000, 896)
    launch_line = int(record.launch_site.rpartition(":")[2])
    (judged,) = confirm_findings([_finding(path, launch_line, "KL108")], results[path])
    assert judged.verdict == Verdict.CONFIRMED
    new, notices = judge([], results[path])[1:]
    assert new == [] and any("BLOCK=128" in n and "another config" in n for n in notices)
    twin = next(p for p in FILES if p.stem == "unwritten_config_good")
    assert not [r for r in results[twin].records if r.kind == "unwritten-output"]


def test_a_block_pointer_runs_on_a_triton_without_them(results):
    path = next(p for p in FILES if p.stem == "block_ptr_overrun_bad")
    (rec,) = results[path].records
    # 80 rows in tiles of 32: the third tile's last 16 rows of 32 floats are past the end
    assert (rec.kind, rec.tensor, rec.lanes, rec.bytes_past_end) == ("oob-read", "a_ptr", 16 * 32, 16 * 32 * 4)


SCALAR_MASKS = """
import torch, triton, triton.language as tl

@triton.jit
def first_program_only(x_ptr, out_ptr, flag_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=pid == 0, other=0.0)
    f = tl.load(flag_ptr)
    tl.store(out_ptr + offs, x, mask=(f != 0) & (pid == 0))

def run():
    out = torch.zeros(8)
    first_program_only[(4,)](torch.ones(8), out, torch.ones(1, dtype=torch.int32), BLOCK=8)
    assert out.sum() == 8
"""


def test_scalar_boolean_masks(tmp_path):
    script = tmp_path / "scalar_mask.py"
    script.write_text(SCALAR_MASKS)
    result = run_interpreted(script)
    assert result.returncode == 0 and result.launches[0]["completed"], result.output_tail
    assert result.records == []


SPIN = """
import torch, triton, triton.language as tl

@triton.jit
def handoff(flag_ptr, out_ptr):
    if tl.program_id(0) == 0:
        while tl.atomic_cas(flag_ptr, 1, 1) == 0:  # waits for program 1, which runs after it
            pass
        tl.store(out_ptr, 1.0)
    else:
        tl.atomic_xchg(flag_ptr, 1)

def run():
    handoff[(2,)](torch.zeros(1, dtype=torch.int32), torch.zeros(1))
"""


def test_programs_that_wait_on_each_other_stop_within_seconds(tmp_path):
    script = tmp_path / "spin.py"
    script.write_text(SPIN)
    result = run_interpreted(script, timeout=120)  # without the watchdog: a hang until this timeout
    assert result.failure is None, result.failure
    (f,) = confirm_findings([_finding(script, 11, "KL103", kernel="handoff")], result)[:1]
    assert f.verdict == Verdict.INCONCLUSIVE
    assert f.evidence["dynamic"][-1]["note"].startswith("programs wait on each other")


WRAP = """
import torch, triton, triton.language as tl

@triton.jit
def gather_rows(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = row * stride
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + start + cols)
    tl.store(out_ptr + row * BLOCK + cols, v)

def run():
    gather_rows[(16,)](torch.randn(256), torch.zeros(16 * 64), 2**28, BLOCK=64)
"""


def test_an_int32_wrap_confirms_kl104_instead_of_a_new_kl401(tmp_path):
    script = tmp_path / "wrap.py"
    script.write_text(WRAP)
    result = run_interpreted(script)
    kl104 = Finding(rule="KL104", path=str(script), span=Span.point(7, 13), message="static", level=Level.WARNING,
                    kernel="gather_rows")
    judged, new, _ = judge([kl104], result)
    assert judged[0].verdict == Verdict.CONFIRMED and judged[0].measurements["max_bytes_before_start"] > 0
    assert new == []
    assert [f.rule for f in confirm_findings([], result)] == ["KL401"]  # without the KL104: a new finding


TICKET = """
import torch, triton, triton.language as tl

@triton.jit
def last_sums(x_ptr, part_ptr, count_ptr, out_ptr, SEM: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(part_ptr + pid, tl.load(x_ptr + pid) * 2)
    ticket = tl.atomic_add(count_ptr, 1, sem=SEM)
    if ticket == tl.num_programs(0) - 1:
        offs = tl.arange(0, 4)
        tl.store(out_ptr, tl.sum(tl.load(part_ptr + offs), axis=0))

def run():
    for sem in ("acq_rel", "relaxed"):
        last_sums[(4,)](torch.ones(4), torch.zeros(4), torch.zeros(1, dtype=torch.int32), torch.zeros(1), SEM=sem)
"""


def test_a_ticket_orders_the_last_programs_reads_unless_it_is_relaxed(tmp_path):
    """The last arriver reads every program's part: an acq_rel ticket orders each store before that
    read; a relaxed one orders nothing, and the read is a race."""
    script = tmp_path / "ticket.py"
    script.write_text(TICKET)
    result = run_interpreted(script)
    assert result.failure is None and len(result.launches) == 2, result.output_tail
    races = [(launch["index"], r["kind"], r["line"]) for launch in result.launches for r in launch["records"]
             if r["kind"].startswith("race")]
    assert races == [(1, "race-read", 11)]
